//! Lowering + validation throughput (SPEC §8): a 1M-record stream of which
//! 10% are pseudo-opcodes (calls, returns, function begins, labels, prefetch
//! hints, EXIT, DMA_DIRECT2D), as records/s, beside a memcpy of the same
//! bytes measured in the same run.
//!
//! Run: `cargo bench --bench lower` (one thread).

use std::hint::black_box;
use std::time::{Duration, Instant};
use tpb_emu::isa::enums::{Dtype, Engine, UpdateMode};
use tpb_emu::isa::validate::{Target, validate_stream};
use tpb_emu::isa::{Opcode, Record};
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::lower::{
    Lowered, lower, lower_and_validate, lower_and_validate_into, lower_into, pseudo,
};

const RECORDS: usize = 1_000_000;
/// Records per function; functions fill the second half of the stream.
const FUNCTION_LEN: usize = 100;

fn best(reps: usize, mut f: impl FnMut()) -> Duration {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .expect("reps > 0")
}

fn named(op: Opcode, k: usize) -> Record {
    let mut r = header(op);
    let name = format!("fn{k}");
    r.0[pseudo::NAME..pseudo::NAME + name.len()].copy_from_slice(name.as_bytes());
    r
}

fn real(i: usize) -> Record {
    match i % 6 {
        0 => drain(),
        1 => event_semaphore(ev_update(UpdateMode::SEM_INC, (i % 256) as u8, 0)),
        2 => mov32((i % 64) as u8, i as u32),
        3 => dma_memcpy(
            contiguous(on_chip(0x40000 * (i % 64) as u32), 16, 4),
            contiguous(on_chip(0x40000 * (i % 64) as u32 + 0x1000), 16, 4),
            Dtype::FP32,
            Dtype::FP32,
            1,
            1,
        ),
        4 => jump(BranchTarget::Rel(-64 * (i % 3) as i64)),
        _ => ctrl_al(tpb_emu::isa::control::alu::ADD, 1, 1, 1),
    }
}

/// 1M records, exactly 10% pseudo-opcodes.
fn stream() -> Vec<u8> {
    let functions = RECORDS / 2 / FUNCTION_LEN;
    let mut recs: Vec<Record> = Vec::with_capacity(RECORDS);
    let mut main_pseudo = 0;
    // Main: every 10th record a pseudo-opcode.
    for i in 0..RECORDS / 2 {
        if i % 10 == 9 {
            recs.push(match (i / 10) % 5 {
                0 | 1 => named(Opcode::PSEUDO_FUNCTION_CALL, (i * 7) % functions),
                2 => header(Opcode::PSEUDO_BRANCH_LABEL),
                3 => header(Opcode::PSEUDO_BRANCH_PREFETCH_HINT),
                _ => {
                    let mut d = real(3);
                    d.0[0] = Opcode::PSEUDO_DMA_DIRECT2D.0;
                    d
                }
            });
            main_pseudo += 1;
        } else {
            recs.push(real(i));
        }
    }
    // Functions: BEGIN, body (labels and hints among it), RETURN; 10% pseudo.
    for k in 0..functions {
        let mut b = named(Opcode::PSEUDO_FUNCTION_BEGIN, k);
        b.0[pseudo::RET_LO] = 62;
        b.0[pseudo::RET_HI] = 63;
        recs.push(b);
        for j in 1..FUNCTION_LEN - 1 {
            recs.push(match j {
                20 | 30 | 60 | 90 => header(Opcode::PSEUDO_BRANCH_LABEL),
                40 | 70 | 80 => header(Opcode::PSEUDO_BRANCH_PREFETCH_HINT),
                50 => {
                    let mut r = header(Opcode::PSEUDO_INST);
                    r.0[pseudo::INST_SUBOP] = pseudo::EXIT;
                    r
                }
                _ => real(j),
            });
        }
        recs.push(header(Opcode::PSEUDO_FUNCTION_RETURN));
    }
    let pseudo_n = main_pseudo + functions * 10;
    assert_eq!(recs.len(), RECORDS);
    assert_eq!(pseudo_n * 10, RECORDS, "10% pseudo-opcodes");
    tpb_emu::isa::stream::to_bytes(&recs)
}

fn main() {
    let bytes = stream();
    let target = Target {
        engine: Engine::Sp,
        ..Target::default()
    };
    let l = lower_and_validate(&bytes, target).expect("valid");
    println!(
        "lower: {RECORDS} records ({:.0} MB), 10% pseudo -> {} records, {} blocks, {} exit points; \
         best of 5, one thread",
        bytes.len() as f64 / 1e6,
        l.records_out(),
        l.blocks().len(),
        l.exits().len()
    );
    let lowered = l.into_bytes();
    let both = best(5, || {
        black_box(lower_and_validate(black_box(&bytes), target).ok());
    });
    let mut reuse = Lowered::default();
    let both_reuse = best(5, || {
        black_box(lower_and_validate_into(black_box(&bytes), target, &mut reuse).ok());
    });
    let lower_reuse = best(5, || {
        black_box(lower_into(black_box(&bytes), &mut reuse).ok());
    });
    let lower_only = best(5, || {
        black_box(lower(black_box(&bytes)).ok());
    });
    let validate_only = best(5, || {
        black_box(validate_stream(black_box(&lowered), target).ok());
    });
    let mut copy = vec![0u8; bytes.len()];
    let memcpy = best(5, || {
        copy.copy_from_slice(black_box(&bytes));
        black_box(&copy);
    });
    println!(
        "{:<18} {:>10} {:>14} {:>8}",
        "what", "time (ms)", "records/s", "GB/s"
    );
    let gb = bytes.len() as f64 / 1e9;
    for (what, d) in [
        ("lower + validate", both),
        ("lower", lower_only),
        ("lower+val (reuse)", both_reuse),
        ("lower (reuse)", lower_reuse),
        ("validate lowered", validate_only),
        ("memcpy", memcpy),
    ] {
        let s = d.as_secs_f64();
        println!(
            "{what:<18} {:>10.2} {:>14.3e} {:>8.2}",
            s * 1e3,
            RECORDS as f64 / s,
            gb / s
        );
    }
    // Validation alone, per record kind (1M records of one kind each).
    for (what, r) in [
        ("DRAIN", real(0)),
        ("EVENT_SEMAPHORE", real(1)),
        ("MOV32", real(2)),
        ("DMA_MEMCPY", real(3)),
        ("COMPARE_BRANCH", real(4)),
        ("CTRL_AL", real(5)),
    ] {
        let one: Vec<u8> = (0..RECORDS).flat_map(|_| r.0).collect();
        let d = best(3, || {
            black_box(validate_stream(black_box(&one), target).ok());
        });
        println!(
            "validate {what:<16} {:>14.3e} records/s",
            RECORDS as f64 / d.as_secs_f64()
        );
    }
    let rate = RECORDS as f64 / both.as_secs_f64();
    println!(
        "target >= 2e7 records/s: {}",
        if rate >= 2e7 { "met" } else { "NOT met" }
    );
}
