//! Lowering then validating (and staging and running) never panics on random
//! streams of random and mutated records, pseudo-opcodes included; when
//! lowering succeeds its output keeps the invariants of SPEC §8 / EC-29 / EC-30.

use tpb_emu::device::{CpuExecutor, NoTrace};
use tpb_emu::isa::control::off;
use tpb_emu::isa::enums::{Dtype, UpdateMode};
use tpb_emu::isa::validate::Target;
use tpb_emu::isa::{Engine, Opcode, Record};
use tpb_emu::limits::{Arch, BLOCK_MAX_BYTES, BLOCK_MIN_ALIGN};
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::lower::{lower, lower_and_validate, pseudo};
use tpb_emu::runtime::{Machine, Program, Variable, stage};

const NAMES: [&str; 3] = ["f", "g", "h"];

fn random_record(rng: &mut fastrand::Rng) -> Record {
    let mut r = match rng.u8(..16) {
        0 => {
            let mut r = Record::default();
            rng.fill(&mut r.0);
            r
        }
        1 => mov32(rng.u8(..66), rng.u32(..)),
        2 => ctrl_al(rng.u8(3..7), rng.u8(..64), rng.u8(..64), rng.i64(-3..3)),
        3 => jump(BranchTarget::Rel(
            rng.i64(-8..8) * 64 + [0, 0, 0, 1][rng.usize(..4)],
        )),
        4 => compare_branch(
            rng.u8(..8),
            rng.u8(..64),
            rng.u32(..4),
            BranchTarget::Rel(rng.i64(-8..8) * 64),
        ),
        5 => jump(BranchTarget::Register {
            lo: rng.u8(..64),
            hi: rng.u8(..64),
        }),
        6 => event_semaphore(ev_update(UpdateMode::SEM_INC, rng.u8(..4), 0)),
        7 => {
            let mut r = header(Opcode::PSEUDO_FUNCTION_BEGIN);
            r.0[12] = NAMES[rng.usize(..3)].as_bytes()[0];
            r.0[pseudo::RET_LO] = rng.u8(..70);
            r.0[pseudo::RET_HI] = rng.u8(..70);
            r.0[pseudo::RESET_SEMAPHORES] = u8::from(rng.u8(..8) == 0);
            r
        }
        8 => {
            let mut r = header(Opcode::PSEUDO_FUNCTION_CALL);
            r.0[12] = b"fghz"[rng.usize(..4)];
            r
        }
        9 => header(Opcode::PSEUDO_FUNCTION_RETURN),
        10 => {
            let mut r = header(Opcode::PSEUDO_INST);
            r.0[pseudo::INST_SUBOP] = rng.u8(..4);
            r
        }
        11 => header([0xCC, 0xDD][rng.usize(..2)]),
        12 => {
            let mut r = dma_memcpy(
                contiguous(var(1, rng.u32(..8) * 4), rng.u16(..4), 4),
                contiguous(var(2, 0), rng.u16(..4), 4),
                Dtype::FP32,
                Dtype::FP32,
                rng.u8(..4),
                1,
            );
            r.0[0] = [0xD4, 0xB8][rng.usize(..2)];
            r.0[pseudo::DGE_OP] = [0, 0, 1, 2, 3][rng.usize(..5)];
            r
        }
        13 => header(Opcode(rng.u8(0xC1..=0xDF))),
        _ => drain(),
    };
    // Mutations: a byte anywhere, or the events band.
    if rng.u8(..6) == 0 {
        let at = rng.usize(..64);
        r.0[at] = rng.u8(..);
    }
    if rng.u8(..10) == 0 {
        r.0[4 + rng.usize(..8)] = rng.u8(..);
    }
    r
}

fn header(op: impl Into<OpByte>) -> Record {
    tpb_emu::runtime::build::header(Opcode(op.into().0))
}

struct OpByte(u8);
impl From<u8> for OpByte {
    fn from(b: u8) -> OpByte {
        OpByte(b)
    }
}
impl From<Opcode> for OpByte {
    fn from(o: Opcode) -> OpByte {
        OpByte(o.0)
    }
}

#[test]
fn lowering_then_validating_never_panics() {
    let mut rng = fastrand::Rng::with_seed(0x10E4_F022);
    let mut lowered_ok = 0;
    let mut valid = 0;
    let mut ran = 0;
    for case in 0..10_000 {
        let n = rng.usize(0..40);
        let recs: Vec<Record> = (0..n).map(|_| random_record(&mut rng)).collect();
        let bytes = tpb_emu::isa::stream::to_bytes(&recs);
        let engine = Engine::ALL[rng.usize(..5)];
        let t = Target {
            engine,
            arch: Arch::Cayman,
        };
        let _ = lower_and_validate(&bytes, t);
        let Ok(l) = lower(&bytes) else { continue };
        lowered_ok += 1;
        // No pseudo-opcode remains; every record maps back to an input record.
        for (i, c) in l.bytes().chunks_exact(64).enumerate() {
            assert!(
                !Opcode(c[0]).is_pseudo(),
                "case {case}: pseudo at {}",
                i * 64
            );
            let o = l.original_offset(i * 64).unwrap();
            assert!(o < bytes.len() && o % 64 == 0, "case {case}");
            // Pseudo-free real records are copied verbatim (branches aside).
            let src = &bytes[o..o + 64];
            if !Opcode(src[0]).is_pseudo() && src[0] != Opcode::COMPARE_BRANCH.0 {
                assert_eq!(c, src, "case {case}");
            }
            if src[0] == Opcode::COMPARE_BRANCH.0 {
                assert_eq!(c[..off::BR_REL], src[..off::BR_REL], "case {case}");
            }
        }
        // Blocks tile the stream, each within the limit, staged aligned and in order.
        let mut at = 0;
        let mut addr = 0;
        for b in l.blocks() {
            assert_eq!(b.start, at, "case {case}");
            assert!(b.len > 0 && b.len <= BLOCK_MAX_BYTES);
            assert_eq!(b.addr % BLOCK_MIN_ALIGN.max(b.len) as u64, 0);
            assert!(b.addr >= addr);
            at += b.len;
            addr = b.addr + b.len as u64;
        }
        assert_eq!(at, l.bytes().len(), "case {case}");
        assert!(l.exits().windows(2).all(|w| w[0] < w[1]));
        assert!(
            l.exits()
                .iter()
                .all(|&x| x <= l.bytes().len() && x % 64 == 0)
        );
        if tpb_emu::runtime::lower::validate_lowered(&l, t).is_ok() {
            valid += 1;
        }
        // Stage and run (never Pool: random records rarely are, and it keeps this fast).
        let mut p = Program::new(Arch::Cayman);
        p.set_stream(engine, &recs);
        p.add(Variable::input("a", 1, Dtype::FP32, &[16], vec![0; 64]))
            .add(Variable::output("b", 2, Dtype::FP32, &[16]));
        if let Ok(s) = stage(&p) {
            let mut m = Machine::new(s);
            m.set_max_records(2_000);
            let _ = m.run(&mut CpuExecutor::default(), &mut NoTrace);
            ran += 1;
        }
    }
    // The generator reaches every outcome.
    assert!(lowered_ok > 800, "{lowered_ok}");
    assert!(valid > 200, "{valid}");
    assert!(ran > 200, "{ran}");
    eprintln!("lowered {lowered_ok}, valid {valid}, ran {ran} of 10000");
}

#[test]
fn lowering_never_panics_on_raw_pseudo_bytes() {
    let mut rng = fastrand::Rng::with_seed(0xD1D2D3);
    for _ in 0..3000 {
        let n = rng.usize(0..24);
        let mut bytes = vec![0u8; n * 64];
        rng.fill(&mut bytes);
        for i in 0..n {
            if rng.bool() {
                bytes[i * 64] = rng.u8(0xC1..=0xDF);
            }
        }
        let _ = lower_and_validate(&bytes, Target::default());
    }
    // Lengths that are not whole records are bad input, not a panic.
    assert!(lower(&[0u8; 65]).is_err());
}
