//! Throughput of the CPU reference on a large 2×2 fp32 Pool (MAX and AVG) over
//! 128 lanes, beside a memcpy of the same bytes in the same run.
//!
//! Each lane holds a 128 × 192 fp32 map (96 KiB) at SBUF offset 0 and gets its
//! 64 × 96 output (24 KiB) at 96 KiB: 15 MiB moved per record. Figures are
//! GB/s (10^9 bytes/s) of input + output bytes, median of the timed runs.
//!
//! `cargo bench --bench pool_cpu`

mod common;
use common::time;
use std::hint::black_box;
use std::num::NonZeroUsize;
use std::time::Duration;
use tpb_emu::device::cpu::pool;
use tpb_emu::device::ops::KernelOp;
use tpb_emu::device::{CpuOptions, PoolOp};
use tpb_emu::device::{DeviceMemory, Validated};
use tpb_emu::isa::samples::pool_2x2_map;
use tpb_emu::isa::validate::Target;
use tpb_emu::isa::{Location, PoolFunc, Region};
use tpb_emu::limits::Arch;

const H: u16 = 128;
const W: u16 = 192;
const OUT_OFFSET: u32 = 96 * 1024;

fn record(func: PoolFunc) -> PoolOp {
    let r = pool_2x2_map(func, 128, H, W, 0, OUT_OFFSET);
    let v = Validated::new(0, r.encode(), Target::pool(Arch::Cayman)).expect("valid record");
    PoolOp::from_validated(&v).expect("a pool op")
}

fn row(name: &str, threads: usize, secs: f64, bytes: u64) {
    let gbs = bytes as f64 / secs / 1e9;
    println!(
        "{name:<28} {threads:>7} {:>10.3} {gbs:>8.2} {:>12.2}",
        secs * 1e3,
        gbs / threads as f64
    );
}

fn main() {
    let budget = Duration::from_millis(
        std::env::var("POOL_BENCH_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1500),
    );
    let mut mem = DeviceMemory::new(Arch::Cayman);
    // Deterministic, varied fp32 input in every lane.
    let mut s = 0x2545_F491u32;
    let lane_bytes = H as usize * W as usize * 4;
    let data: Vec<u8> = (0..128 * lane_bytes / 4)
        .flat_map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            ((s % 20000) as f32 / 7.0 - 1000.0).to_le_bytes()
        })
        .collect();
    let at = Location {
        region: Region::Sbuf,
        partition: 0,
        offset: 0,
    };
    mem.write(at, 128, &data).expect("input fits");

    let host = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    println!(
        "2x2 fp32 pool over 128 lanes of {H}x{W} ({} KiB in + {} KiB out per lane); host threads: {host}",
        lane_bytes / 1024,
        lane_bytes / 4 / 1024
    );
    println!(
        "{:<28} {:>7} {:>10} {:>8} {:>12}",
        "case", "threads", "ms/iter", "GB/s", "GB/s/thread"
    );
    let moved = record(PoolFunc::MAX_POOL).bytes_moved();
    for func in [PoolFunc::MAX_POOL, PoolFunc::AVG_POOL] {
        let op = record(func);
        let name = if func == PoolFunc::MAX_POOL {
            "max"
        } else {
            "avg"
        };
        for threads in [None, NonZeroUsize::new(1)] {
            let opts = CpuOptions {
                threads,
                force_generic: false,
            };
            let n = opts.threads_for(&op.into());
            let secs = time(budget, || pool::execute(black_box(&op), &mut mem, &opts));
            row(&format!("pool {name} 2x2 fp32"), n, secs, op.bytes_moved());
        }
        let opts = CpuOptions {
            threads: None,
            force_generic: true,
        };
        let n = opts.threads_for(&op.into());
        let secs = time(budget / 3, || {
            pool::execute(black_box(&op), &mut mem, &opts)
        });
        row(
            &format!("pool {name} (generic path)"),
            n,
            secs,
            op.bytes_moved(),
        );
    }
    // memcpy of the same number of bytes, one thread and the pool's thread count.
    let src = vec![1u8; moved as usize];
    let mut dst = vec![0u8; moved as usize];
    let secs = time(budget, || {
        dst.copy_from_slice(black_box(&src));
        black_box(&mut dst);
    });
    row("memcpy", 1, secs, moved);
    let n = CpuOptions::default().threads_for(&record(PoolFunc::MAX_POOL).into());
    if n > 1 {
        let per = (moved as usize).div_ceil(n);
        let secs = time(budget, || {
            std::thread::scope(|s| {
                for (d, c) in dst.chunks_mut(per).zip(src.chunks(per)) {
                    s.spawn(move || d.copy_from_slice(black_box(c)));
                }
            });
        });
        row("memcpy (threads)", n, secs, moved);
    }
}
