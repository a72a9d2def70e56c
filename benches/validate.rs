//! Validation throughput: a stream of 1M valid Pool records, as records/s,
//! beside a memcpy of the same bytes measured in the same run; and the whole
//! command, `tpb-emu validate FILE` from a file in the page cache (process
//! start, reading, checking), beside the in-process rate.
//!
//! Run: `cargo bench --bench validate` (one thread).

mod common;

use std::hint::black_box;
use std::time::Duration;
use tpb_emu::isa::enums::PoolFunc;
use tpb_emu::isa::samples::seed_pool;
use tpb_emu::isa::validate::{Target, validate_stream};
use tpb_emu::isa::{Addr4, Region};

const RECORDS: usize = 1_000_000;

/// Timed passes per measurement. The machine is shared and noisy, so the
/// best pass is the figure of merit and the median shows the typical one.
const REPS: usize = 21;

/// Best and median of `REPS` timings of `f`.
fn time(f: impl FnMut()) -> (Duration, Duration) {
    common::best_and_median(REPS, f)
}

fn main() {
    // Valid records that differ: MAX/AVG, channel counts, partitions and offsets.
    let mut bytes = Vec::with_capacity(RECORDS * 64);
    for i in 0..RECORDS {
        let func = if i % 2 == 0 {
            PoolFunc::MAX_POOL
        } else {
            PoolFunc::AVG_POOL
        };
        let ch = 1 + (i % 64) as u8;
        let mut p = seed_pool(func, ch);
        let off = 0x200 * (i % 100) as u32;
        let part = (i % 64) as u32;
        p.src.addr = Addr4::new(Region::Sbuf, part, off);
        p.dst.addr = Addr4::new(Region::Sbuf, part, off + 0x100);
        bytes.extend_from_slice(&p.encode().0);
    }
    let target = Target::default();
    assert_eq!(validate_stream(&bytes, target).expect("all valid"), RECORDS);

    let validate = time(|| {
        black_box(validate_stream(black_box(&bytes), target).ok());
    });
    let mut copy = vec![0u8; bytes.len()];
    let memcpy = time(|| {
        copy.copy_from_slice(black_box(&bytes));
        black_box(&copy);
    });

    let gb = bytes.len() as f64 / 1e9;
    println!(
        "validate: {RECORDS} valid Pool records ({:.0} MB), best and median of {REPS}, one thread",
        gb * 1e3
    );
    println!(
        "{:<26} {:>12} {:>14} {:>10}",
        "what", "time (ms)", "records/s", "GB/s"
    );
    let row = |what: &str, d: Duration| {
        let s = d.as_secs_f64();
        println!(
            "{what:<26} {:>12.2} {:>14.3e} {:>10.2}",
            s * 1e3,
            RECORDS as f64 / s,
            gb / s
        );
    };
    // The whole command on the same stream, from a file.
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("stream.bin");
    std::fs::write(&file, &bytes).expect("write the stream");
    let cli = time(|| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tpb-emu"))
            .arg("validate")
            .arg(&file)
            .output()
            .expect("run tpb-emu");
        assert!(out.status.success(), "{out:?}");
    });
    row("validate best", validate.0);
    row("validate median", validate.1);
    row("memcpy best", memcpy.0);
    row("memcpy median", memcpy.1);
    row("`tpb-emu validate` best", cli.0);
    row("`tpb-emu validate` median", cli.1);
    println!(
        "validate/memcpy time ratio (best): {:.1}",
        validate.0.as_secs_f64() / memcpy.0.as_secs_f64()
    );
    println!(
        "end to end / in-process rate (best): {:.2}",
        validate.0.as_secs_f64() / cli.0.as_secs_f64()
    );
}
