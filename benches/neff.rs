//! Loading and validating a NEFF: five engine streams of 1M records each,
//! packed as a NEFF, read (SPEC-NEFF §6 steps 1–13), expanded, lowered and
//! validated, as records/s, beside `validate` on the same raw streams in the
//! same run (the target: at least 0.5× of it). Each load starts from a
//! file in the page cache, mapped as `tpb-emu validate MODEL.neff` maps it.
//!
//! The raw `validate` runs on one thread, as that command does; the loads use
//! every core, as `validate MODEL.neff` does (the digest beside the rest,
//! inflate beside its page faults, engines validated in parallel).
//!
//! Run: `cargo bench --bench neff`. `NEFF_BENCH_RECORDS=N`
//! changes the records per engine.

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};
use tpb_emu::isa::enums::{Dtype, Engine, PoolFunc, UpdateMode};
use tpb_emu::isa::samples::seed_pool;
use tpb_emu::isa::validate::{Target, validate_stream};
use tpb_emu::isa::{Addr4, Region};
use tpb_emu::limits::Arch;
use tpb_emu::neff::{self, Options};
use tpb_emu::runtime::build::{ev_update, event_semaphore};
use tpb_emu::runtime::lower::{lower, validate_lowered};
use tpb_emu::runtime::{Program, Variable};

/// Timed passes per measurement; the best is the figure of merit.
const REPS: usize = 5;

/// Best and median of `REPS` timings of `f`.
fn time(f: impl FnMut()) -> (Duration, Duration) {
    common::best_and_median(REPS, f)
}

/// `validate MODEL.neff`'s work, as the command does it: map the file, read
/// it, then expand, lower and validate the engines (in parallel, while the
/// digest may still be computing).
fn load_and_validate(path: &std::path::Path, opts: &Options) -> usize {
    let bytes = tpb_emu::files::map_input(path).expect("maps");
    let (_, results) = neff::read_owned_then(bytes, opts, |n| {
        neff::lower::validate_engines(n, &Engine::ALL)
    })
    .expect("the NEFF loads");
    results.into_iter().map(|r| r.expect("valid")).sum()
}

fn main() {
    let per: usize = std::env::var("NEFF_BENCH_RECORDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let mut p = Program::new(Arch::Cayman);
    for e in Engine::ALL {
        let mut s = Vec::with_capacity(per * 64);
        for i in 0..per {
            let r = if e == Engine::Pool {
                let func = if i % 2 == 0 {
                    PoolFunc::MAX_POOL
                } else {
                    PoolFunc::AVG_POOL
                };
                let mut q = seed_pool(func, 1 + (i % 64) as u8);
                let off = 0x200 * (i % 100) as u32;
                q.src.addr = Addr4::new(Region::Sbuf, (i % 64) as u32, off);
                q.dst.addr = Addr4::new(Region::Sbuf, (i % 64) as u32, off + 0x100);
                q.encode()
            } else {
                event_semaphore(ev_update(UpdateMode::SEM_INC, (i % 256) as u8, 0))
            };
            s.extend_from_slice(&r.0);
        }
        p.streams[e as usize] = s;
    }
    p.add(Variable::output("y", 0, Dtype::FP32, &[32]));
    let total = 5 * per;
    let raw = time(|| {
        for e in Engine::ALL {
            let t = Target {
                engine: e,
                arch: Arch::Cayman,
            };
            black_box(validate_stream(black_box(p.stream(e)), t).expect("valid"));
        }
    });
    let packed = neff::pack::pack(&p, "bench").expect("packs");
    let n = neff::read(&packed, &Options::default()).unwrap();
    let tar = n.container.tar().to_vec();
    drop(n);
    let mut pkg1 = packed[..1024].to_vec();
    pkg1[0] = 1;
    pkg1[16..24].copy_from_slice(&(tar.len() as u64).to_le_bytes());
    pkg1[0xAC..0xCC].copy_from_slice(&neff::sha256(&tar));
    pkg1.extend_from_slice(&tar);
    let dir = tempfile::tempdir().expect("temp dir");
    let packed_file = dir.path().join("pkg2.neff");
    let pkg1_file = dir.path().join("pkg1.neff");
    std::fs::write(&packed_file, &packed).expect("write");
    std::fs::write(&pkg1_file, &pkg1).expect("write");
    assert_eq!(load_and_validate(&packed_file, &Options::default()), total);
    let no_verify = Options {
        verify: false,
        ..Options::default()
    };
    let cases: [(&str, &std::path::Path, &Options); 4] = [
        ("pkg2 gzip+MD5", &packed_file, &Options::default()),
        ("pkg2, no-verify", &packed_file, &no_verify),
        ("pkg1 tar+SHA256", &pkg1_file, &Options::default()),
        ("pkg1, no-verify", &pkg1_file, &no_verify),
    ];
    println!(
        "neff: {per} records per engine ({total} in all; NEFF {:.1} MB gzip, {:.0} MB tar), best and median of {REPS}, raw on one thread, loads on {} threads",
        packed.len() as f64 / 1e6,
        tar.len() as f64 / 1e6,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "{:<28} {:>10} {:>10} {:>14} {:>9}",
        "what", "best ms", "median ms", "records/s", "x raw"
    );
    let rate = |d: Duration| total as f64 / d.as_secs_f64();
    let row = |what: &str, t: (Duration, Duration)| {
        println!(
            "{what:<28} {:>10.1} {:>10.1} {:>14.3e} {:>9.2}",
            t.0.as_secs_f64() * 1e3,
            t.1.as_secs_f64() * 1e3,
            rate(t.0),
            rate(t.0) / rate(raw.0)
        );
    };
    row("validate raw streams", raw);
    // Where one pkg-2 load goes.
    let t = Instant::now();
    let n = neff::read(&packed, &Options::default()).unwrap();
    let read_s = t.elapsed();
    let t = Instant::now();
    black_box(neff::lower::validate_engines(&n, &Engine::ALL));
    let va = t.elapsed();
    drop(n);
    let t = Instant::now();
    for e in Engine::ALL {
        let l = lower(p.stream(e)).unwrap();
        black_box(
            validate_lowered(
                &l,
                Target {
                    engine: e,
                    arch: Arch::Cayman,
                },
            )
            .unwrap(),
        );
    }
    let lo = t.elapsed();
    println!(
        "phases of one pkg2 load: read {:.1} ms (digest, gunzip, tar, json), expand+validate {:.1} ms; \
         (the runtime's lowering + validation of the same streams, not needed without pseudo-opcodes: {:.1} ms)",
        read_s.as_secs_f64() * 1e3,
        va.as_secs_f64() * 1e3,
        lo.as_secs_f64() * 1e3
    );
    for (what, path, opts) in cases {
        let t = time(|| {
            black_box(load_and_validate(black_box(path), opts));
        });
        row(&format!("load+validate {what}"), t);
    }
}
