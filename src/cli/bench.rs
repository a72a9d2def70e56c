//! `tpb-emu bench pool`: Pool throughput on one backend, beside a reference
//! measured in the same run (the adapter's copy kernel, or memcpy on the CPU).
//!
//! (a) A large 2×2 MAX and AVG fp32 Pool over 128 lanes, as GB/s of input +
//! output bytes, next to a copy of the same number of bytes (read + written).
//! (b) A stream of small records (16 lanes, 4 outputs of a 2×2 window each)
//! as records/s, next to the time of one empty submission.
//! (c) The kernels over 128 lanes of most of SBUF — Copy fp32, Cast
//! fp32→bf16, Tensor-Tensor ADD fp32, CrossLaneReduce ADD fp32 (128
//! partitions into one), NonzeroWithCount INT32 — as GB/s beside the same
//! copy reference (`kernels_over_copy`).

use super::CliError;
use super::backend::Backend;
use super::error::BenchFlag;
use crate::device::CpuExecutor;
use crate::device::cpu::pool::execute;
use crate::device::exec::Executor;
use crate::device::gpu::batch::{self, Dispatch, EncodeCx};
use crate::device::gpu::copy::CopyKernel;
use crate::device::gpu::executor::encode;
use crate::device::gpu::{BackendChoice, Gpu, GpuMemory, Kernels};
use crate::device::ops::KernelOp;
use crate::device::{CpuOptions, Op, PoolOp};
use crate::device::{DeviceMemory, Validated};
use crate::isa::enums::{AluOp, Dtype, PoolDim, PoolFunc};
use crate::isa::enums::{ReduceAxis, ReduceOp};
use crate::isa::opcode::Opcode;
use crate::isa::record::Record;
use crate::isa::s4d4_pl::S4d4Pl;
use crate::isa::samples::pool_2x2_map;
use crate::isa::tensor::{Addr4, Region, Tensor4d};
use crate::isa::validate::Target;
use crate::isa::{S3d3NonzeroWithCount, S3s3d3Tt, S4d4Cr, S4d4Tr, Tensor3d};
use crate::limits::{Arch, PARTITIONS};
use serde::Serialize;
use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

/// Floats per row of the benchmark's feature map (one row is 1 KiB).
const MAP_WIDTH: u32 = 256;
/// Default input bytes over all 128 lanes: 128 KiB per lane, most of SBUF
/// with the quarter-size output beside it.
pub const DEFAULT_BYTES: u64 = 128 * 128 * 1024;

/// The most records `--records` may ask for: the stream is held as decoded
/// ops (about 200 bytes each), and a million already times the rate to a
/// fraction of a percent; past it the allocation alone could abort.
pub const MAX_SMALL_RECORDS: u32 = 1 << 20;

/// Options of `bench pool`.
#[derive(Clone, Copy, Debug)]
pub struct BenchArgs {
    /// Backend.
    pub backend: BackendChoice,
    /// Input bytes of the large record, over all 128 lanes.
    pub bytes: u64,
    /// Timed repetitions (the best is reported).
    pub repeat: u32,
    /// Records in the small-record stream.
    pub small_records: u32,
    /// GPU: runs per `pool_rows` invocation instead of the adapter's default.
    pub rows_runs: Option<u32>,
    /// The fraction of the sources' 4-byte words left nonzero (1: all the
    /// random bytes). NonzeroWithCount's speed depends on it, as its second
    /// pass compacts; the zeros are in every kernel's sources (none of the
    /// others is slower or faster for them).
    pub nonzero_fraction: f64,
    /// One JSON object instead of the table.
    pub json: bool,
}

/// One row of the report.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// What was measured.
    pub name: String,
    /// Best time in seconds.
    pub seconds: f64,
    /// Bytes read + written (large cases), else 0.
    pub bytes: u64,
    /// GB/s of `bytes` (large cases).
    pub gb_per_s: Option<f64>,
    /// Records per second (stream cases).
    pub records_per_s: Option<f64>,
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// `cpu` or `gpu: <adapter>`.
    pub backend: String,
    /// How times were taken.
    pub timing: String,
    /// The rows.
    pub rows: Vec<Row>,
    /// Pool GB/s over copy GB/s, for MAX and AVG.
    pub pool_over_copy: [f64; 2],
    /// Copy, Cast fp32→bf16, Tensor-Tensor ADD, CrossLaneReduce ADD and
    /// NonzeroWithCount GB/s over copy GB/s.
    pub kernels_over_copy: [f64; 5],
    /// The share of source words left nonzero (`--nonzero-fraction`).
    pub nonzero_fraction: f64,
}

/// Names of the elementwise rows, in `kernels_over_copy` order.
const KERNEL_ROWS: [&str; 5] = [
    "copy fp32 (0x46)",
    "cast fp32->bf16 (0x47)",
    "tensor_tensor add fp32 (0x41)",
    "cross_lane_reduce add fp32, 128 lanes (0x7C)",
    "nonzero_with_count int32, 128 lanes (0xF2)",
];

/// The kernel records of (c): `n` elements per lane (a multiple of 256)
/// over 128 lanes; sources from offset 0, outputs after them. CrossLaneReduce
/// folds the 128 partitions into partition 0; NonzeroWithCount processes
/// its 8 lanes ≡ 0 mod 16 (EC-56).
pub fn kernel_records(n: u32) -> [Record; 5] {
    let dims = || [(256u16, 1i16), ((n / 256) as u16, 256), (1, 0), (1, 0)];
    let t4 = |off: u32| Tensor4d::new(Addr4::new(Region::Sbuf, 0, off), dims());
    let t3 = |off: u32| {
        let d = dims();
        Tensor3d::new(Addr4::new(Region::Sbuf, 0, off), [d[0], d[1], d[2]])
    };
    [
        S4d4Tr::new(
            Opcode::COPY,
            Dtype::FP32,
            Dtype::FP32,
            128,
            t4(0),
            t4(4 * n),
        )
        .encode(),
        S4d4Tr::new(
            Opcode::CAST,
            Dtype::FP32,
            Dtype::BFLOAT16,
            128,
            t4(0),
            t4(4 * n),
        )
        .encode(),
        S3s3d3Tt::new(
            Opcode::TENSOR_TENSOR_ARITH,
            AluOp::ADD,
            Dtype::FP32,
            Dtype::FP32,
            Dtype::FP32,
            128,
            t3(0),
            t3(4 * n),
            t3(8 * n),
        )
        .encode(),
        S4d4Cr::new(
            Opcode::CROSS_LANE_REDUCE_ARITH,
            ReduceOp::ADD,
            ReduceAxis::PARTITIONS,
            Dtype::FP32,
            Dtype::FP32,
            128,
            0.0,
            t4(0),
            t4(4 * n),
        )
        .encode(),
        S3d3NonzeroWithCount::new(
            Dtype::INT32,
            128,
            0,
            -1,
            t3(0),
            Tensor3d::new(
                Addr4::new(Region::Sbuf, 0, 4 * n),
                [(n as u16 + 1, 1), (1, 0), (1, 0)],
            ),
        )
        .encode(),
    ]
}

/// Elements per lane of (c): a quarter of the Pool input's bytes as fp32
/// elements would make Copy move as many bytes as Pool; kept to what
/// Tensor-Tensor's three fp32 operands fit in SBUF.
fn kernel_elements(lane_bytes: u64, arch: Arch) -> u32 {
    let fit = Region::Sbuf.active_bytes(arch) as u64 / 12;
    ((lane_bytes / 8).min(fit) / 256 * 256).max(256) as u32
}

fn kernel_op(r: &Record, arch: Arch) -> Result<Op, CliError> {
    let v = Validated::new(0, *r, Target::pool(arch)).map_err(CliError::BenchRecord)?;
    Op::from_validated(&v).ok_or(CliError::BenchNotOp { pool: false })
}

/// The large record: a `h`×`MAP_WIDTH` fp32 map per lane at offset 0,
/// pooled 2×2 into the quarter-size map right after it.
pub fn large_record(func: PoolFunc, lane_bytes: u64) -> S4d4Pl {
    let w = MAP_WIDTH;
    let h = ((lane_bytes / (4 * w as u64)) as u32 / 2 * 2).max(2);
    pool_2x2_map(func, 128, h as u16, w as u16, 0, 4 * w * h)
}

/// A small record: 16 lanes, a 4×4 fp32 map pooled 2×2 into 4 outputs;
/// MAX, AVG and MaxPoolSelect in turn so the stream exercises every path.
pub fn small_record(i: u32) -> S4d4Pl {
    let off = 128 * (i % 64);
    let src = Tensor4d::new(
        Addr4::new(Region::Sbuf, 0, off),
        [(2, 1), (2, 4), (2, 2), (2, 8)],
    );
    let dst = Tensor4d::new(
        Addr4::new(Region::Sbuf, 0, 0x4000 + off),
        [(2, 1), (2, 2), (1, 1), (1, 1)],
    );
    let (opcode, func, out, scale) = match i % 3 {
        0 => (Opcode::POOL, PoolFunc::MAX_POOL, Dtype::FP32, 1.0),
        1 => (Opcode::POOL, PoolFunc::AVG_POOL, Dtype::FP32, 0.25),
        _ => (Opcode::MAX_POOL_SELECT, PoolFunc::NONE, Dtype::UINT32, 1.0),
    };
    S4d4Pl::new(
        opcode,
        func,
        PoolDim::XY,
        Dtype::FP32,
        out,
        16,
        scale,
        src,
        dst,
    )
}

fn op_of(p: &S4d4Pl, arch: Arch) -> Result<PoolOp, CliError> {
    let v = Validated::new(0, p.encode(), Target::pool(arch)).map_err(CliError::BenchRecord)?;
    PoolOp::from_validated(&v).ok_or(CliError::BenchNotOp { pool: true })
}

/// The best time of each of `N` cases (`case(i)` runs case `i` once) over
/// `repeat` rounds, the cases taking turns in every round: these machines are
/// noisy, and a slow spell then slows every case alike instead of one, which
/// keeps the ratios honest.
fn best_interleaved<const N: usize>(
    repeat: u32,
    mut case: impl FnMut(usize) -> Result<Duration, CliError>,
) -> Result<[Duration; N], CliError> {
    let mut b = [Duration::MAX; N];
    for _ in 0..repeat.max(1) {
        for (i, t) in b.iter_mut().enumerate() {
            *t = (*t).min(case(i)?);
        }
    }
    Ok(b)
}

fn best(
    repeat: u32,
    mut f: impl FnMut() -> Result<Duration, CliError>,
) -> Result<Duration, CliError> {
    let mut b = Duration::MAX;
    for _ in 0..repeat.max(1) {
        b = b.min(f()?);
    }
    Ok(b)
}

fn gb_row(name: &str, t: Duration, bytes: u64) -> Row {
    Row {
        name: name.into(),
        seconds: t.as_secs_f64(),
        bytes,
        gb_per_s: Some(bytes as f64 / t.as_secs_f64() / 1e9),
        records_per_s: None,
    }
}

fn rate_row(name: &str, t: Duration, records: u32) -> Row {
    Row {
        name: name.into(),
        seconds: t.as_secs_f64(),
        bytes: 0,
        gb_per_s: None,
        records_per_s: Some(records as f64 / t.as_secs_f64()),
    }
}

/// Runs the benchmark and prints the report.
pub fn run(args: &BenchArgs, out: &mut dyn Write) -> Result<Report, CliError> {
    let arch = Arch::Cayman;
    let lane_bytes = args.bytes / PARTITIONS as u64;
    let max_lane = Region::Sbuf.active_bytes(arch) as u64 * 4 / 5;
    if lane_bytes < 4 * 4 * MAP_WIDTH as u64 || lane_bytes > max_lane {
        return Err(CliError::Usage(format!(
            "--bytes {}: input per lane must be between {} and {} bytes (input + its quarter-size output fit SBUF)",
            args.bytes,
            16 * MAP_WIDTH,
            max_lane
        )));
    }
    if args.small_records > MAX_SMALL_RECORDS {
        return Err(CliError::Usage(format!(
            "--records {}: at most {MAX_SMALL_RECORDS} (the stream is held in memory as decoded records)",
            args.small_records
        )));
    }
    if !(0.0..=1.0).contains(&args.nonzero_fraction) {
        return Err(CliError::BenchFlag(BenchFlag::NonzeroFraction(
            args.nonzero_fraction,
        )));
    }
    let backend = Backend::open(args.backend)?;
    let records = [
        large_record(PoolFunc::MAX_POOL, lane_bytes),
        large_record(PoolFunc::AVG_POOL, lane_bytes),
    ];
    let ops = [op_of(&records[0], arch)?, op_of(&records[1], arch)?];
    let moved = ops[0].bytes_moved();
    let n = kernel_elements(lane_bytes, arch);
    let kernels: Vec<Op> = kernel_records(n)
        .iter()
        .map(|r| kernel_op(r, arch))
        .collect::<Result<_, _>>()?;
    let small: Vec<PoolOp> = (0..args.small_records)
        .map(|i| op_of(&small_record(i), arch))
        .collect::<Result<_, _>>()?;
    let mut mem = DeviceMemory::new(arch);
    fill_sources(&mut mem, args.nonzero_fraction);
    if args.rows_runs.is_some() && matches!(backend, Backend::Cpu) {
        return Err(CliError::BenchFlag(BenchFlag::RowsRunsOnCpu));
    }
    let report = match &backend {
        Backend::Cpu => bench_cpu(args, &ops, &kernels, &small, &mut mem, moved)?,
        Backend::Gpu(g) => bench_gpu(args, g, &ops, &kernels, &small, &mem, moved)?,
    };
    let report = Report {
        backend: backend.describe(),
        ..report
    };
    print(&report, args.json, out)?;
    Ok(report)
}

/// SBUF as the benchmark's sources: random bytes, then each 4-byte word
/// zeroed with probability 1 − `nonzero_fraction` (xorshift32, fixed seed).
fn fill_sources(mem: &mut DeviceMemory, nonzero_fraction: f64) {
    let mut seed = 0x2545_F491u32;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let sbuf = mem.region_bytes_mut(Region::Sbuf);
    for b in sbuf.iter_mut() {
        *b = next() as u8;
    }
    if nonzero_fraction < 1.0 {
        let keep = (nonzero_fraction * 2f64.powi(32)) as u64;
        for w in sbuf.chunks_exact_mut(4) {
            if u64::from(next()) >= keep {
                w.fill(0);
            }
        }
    }
}

fn bench_cpu(
    args: &BenchArgs,
    ops: &[PoolOp; 2],
    kernels: &[Op],
    small: &[PoolOp],
    mem: &mut DeviceMemory,
    moved: u64,
) -> Result<Report, CliError> {
    let opts = CpuOptions::default();
    // The reference: memcpy of half the bytes (read + written = `moved`).
    let half = (moved / 2) as usize;
    let src = vec![1u8; half];
    let mut dst = vec![0u8; half];
    let mut exec = CpuExecutor { options: opts };
    let [max, avg, copy, k0, k1, k2, k3, k4] = best_interleaved(args.repeat, |case| {
        let t0 = Instant::now();
        match case {
            0 | 1 => execute(&ops[case], mem, &opts),
            2 => {
                dst.copy_from_slice(black_box(&src));
                black_box(&dst);
            }
            k => exec
                .execute(&kernels[k - 3], mem)
                .map_err(CliError::Backend)?,
        }
        Ok(t0.elapsed())
    })?;
    let mut rows = vec![
        gb_row("pool max 2x2 fp32", max, moved),
        gb_row("pool avg 2x2 fp32", avg, moved),
        gb_row("memcpy (reference)", copy, 2 * half as u64),
    ];
    let t = best(args.repeat, || {
        let t0 = Instant::now();
        for op in small {
            execute(op, mem, &opts);
        }
        Ok(t0.elapsed())
    })?;
    rows.push(rate_row(
        &format!("{} small records", small.len()),
        t,
        small.len() as u32,
    ));
    for (i, t) in [k0, k1, k2, k3, k4].into_iter().enumerate() {
        rows.push(gb_row(KERNEL_ROWS[i], t, kernels[i].bytes_moved()));
    }
    Ok(finish(args, "cpu", "wall clock, best of --repeat", rows))
}

fn bench_gpu(
    args: &BenchArgs,
    gpu: &Gpu,
    ops: &[PoolOp; 2],
    elementwise_ops: &[Op],
    small: &[PoolOp],
    mem: &DeviceMemory,
    moved: u64,
) -> Result<Report, CliError> {
    let arch = mem.arch();
    let memory = GpuMemory::new(gpu, arch).map_err(CliError::Device)?;
    let kernels = Kernels::new(gpu).map_err(CliError::Device)?;
    let mut cx = EncodeCx::of(gpu, arch);
    if let Some(n) = args.rows_runs {
        cx.rows_max_chunks = n;
    }
    memory.upload(mem).map_err(CliError::Device)?;
    let timing = if gpu.timestamps {
        "GPU timestamp queries around each pass, best of --repeat"
    } else {
        "wall clock of submit + wait (no timestamp queries), best of --repeat"
    };
    let timed = |dispatches: &[Dispatch]| -> Result<Duration, CliError> {
        let t0 = Instant::now();
        let g = batch::run(&kernels, &memory, dispatches).map_err(CliError::Device)?;
        Ok(g.unwrap_or_else(|| t0.elapsed()))
    };
    let [max, avg] = [0, 1].map(|i| [encode(&Op::Pool(ops[i]), &cx)]);
    let copy = CopyKernel::new(&kernels, moved / 2).map_err(CliError::Device)?;
    // Warm-up: pipeline compilation happens on first use on some drivers.
    timed(&max)?;
    timed(&avg)?;
    copy.run().map_err(CliError::Device)?;
    let elementwise: Vec<[Dispatch; 1]> =
        elementwise_ops.iter().map(|k| [encode(k, &cx)]).collect();
    for d in &elementwise {
        timed(d)?;
    }
    let [t_max, t_avg, t_copy, k0, k1, k2, k3, k4] =
        best_interleaved(args.repeat, |case| match case {
            0 => timed(&max),
            1 => timed(&avg),
            2 => copy.run().map_err(CliError::Device),
            k => timed(&elementwise[k - 3]),
        })?;
    let mut rows = vec![
        gb_row("pool max 2x2 fp32", t_max, moved),
        gb_row("pool avg 2x2 fp32", t_avg, moved),
        gb_row(
            "copy kernel vec4<u32> (reference)",
            t_copy,
            2 * copy.bytes(),
        ),
    ];
    let params: Vec<Dispatch> = small.iter().map(|o| encode(&Op::Pool(*o), &cx)).collect();
    let wall = |dispatches: &[Dispatch]| -> Result<Duration, CliError> {
        let t0 = Instant::now();
        batch::run(&kernels, &memory, dispatches).map_err(CliError::Device)?;
        Ok(t0.elapsed())
    };
    wall(&params[..params.len().min(64)])?;
    let t = best(args.repeat, || wall(&params))?;
    rows.push(rate_row(
        &format!("{} small records (wall, one submission)", small.len()),
        t,
        small.len() as u32,
    ));
    let t = best(args.repeat, || {
        CopyKernel::empty_submit(gpu).map_err(CliError::Device)
    })?;
    rows.push(rate_row("one empty submission (wall)", t, 1));
    for (i, t) in [k0, k1, k2, k3, k4].into_iter().enumerate() {
        rows.push(gb_row(KERNEL_ROWS[i], t, elementwise_ops[i].bytes_moved()));
    }
    Ok(finish(args, "gpu", timing, rows))
}

fn finish(args: &BenchArgs, backend: &str, timing: &str, rows: Vec<Row>) -> Report {
    let gb = |i: usize| rows[i].gb_per_s.unwrap_or(0.0);
    let pool_over_copy = [gb(0) / gb(2), gb(1) / gb(2)];
    let kernel = |name: &str| {
        rows.iter()
            .find(|r| r.name == name)
            .and_then(|r| r.gb_per_s)
            .unwrap_or(0.0)
            / gb(2)
    };
    let kernels_over_copy = KERNEL_ROWS.map(kernel);
    Report {
        backend: backend.into(),
        timing: timing.into(),
        rows,
        pool_over_copy,
        kernels_over_copy,
        nonzero_fraction: args.nonzero_fraction,
    }
}

fn print(r: &Report, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let io = CliError::Stdout;
    if json {
        let s = serde_json::to_string(r).expect("plain struct serialises");
        return writeln!(out, "{s}").map_err(io);
    }
    writeln!(
        out,
        "tpb-emu bench pool — backend {} ({})",
        r.backend, r.timing
    )
    .map_err(io)?;
    writeln!(
        out,
        "{:<48} {:>12} {:>10} {:>14}",
        "case", "time (ms)", "GB/s", "records/s"
    )
    .map_err(io)?;
    for row in &r.rows {
        let gb = row.gb_per_s.map_or("-".into(), |v| format!("{v:.2}"));
        let rs = row.records_per_s.map_or("-".into(), |v| format!("{v:.0}"));
        writeln!(
            out,
            "{:<48} {:>12.3} {:>10} {:>14}",
            row.name,
            row.seconds * 1e3,
            gb,
            rs
        )
        .map_err(io)?;
    }
    writeln!(
        out,
        "pool/copy ratio: max {:.2}, avg {:.2}",
        r.pool_over_copy[0], r.pool_over_copy[1]
    )
    .map_err(io)?;
    writeln!(
        out,
        "kernel/copy ratio: copy {:.2}, cast {:.2}, add {:.2}, cross_lane_reduce {:.2}, nonzero_with_count {:.2}",
        r.kernels_over_copy[0],
        r.kernels_over_copy[1],
        r.kernels_over_copy[2],
        r.kernels_over_copy[3],
        r.kernels_over_copy[4]
    )
    .map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The share of SBUF's 4-byte words that are zero after `fill_sources`.
    fn zero_share(fraction: f64) -> f64 {
        let mut mem = DeviceMemory::new(Arch::Cayman);
        fill_sources(&mut mem, fraction);
        let words = mem.region_bytes_mut(Region::Sbuf).chunks_exact(4);
        let n = words.len() as f64;
        words.filter(|w| w == &[0; 4]).count() as f64 / n
    }

    #[test]
    fn the_sources_hold_the_asked_share_of_nonzero_words() {
        assert!(zero_share(1.0) < 1e-6);
        assert!((zero_share(0.5) - 0.5).abs() < 0.01);
        assert!((zero_share(1.0 / 16.0) - 15.0 / 16.0).abs() < 0.01);
        assert_eq!(zero_share(0.0), 1.0);
    }
}
