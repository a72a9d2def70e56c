//! Lowering (SPEC §8, EC-17, EC-29, EC-30) and running lowered programs.
//! Every expected offset and count below is derived by hand in the comments.

use crate::common::named;
use tpb_emu::isa::control::{alu, cmp, off};
use tpb_emu::isa::enums::{Dtype, UpdateMode, WaitMode};
use tpb_emu::isa::stream::to_bytes;
use tpb_emu::isa::validate::Target;
use tpb_emu::isa::{Engine, Opcode, Record};
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::lower::{LowerError, LowerFault, lower, lower_and_validate, pseudo};
use tpb_emu::runtime::{Program, StageError, Variable, run_cpu, stage};

fn begin(name: &str, lo: u8, hi: u8) -> Record {
    let mut r = named(Opcode::PSEUDO_FUNCTION_BEGIN, name);
    r.0[pseudo::RET_LO] = lo;
    r.0[pseudo::RET_HI] = hi;
    r
}

fn call(name: &str) -> Record {
    named(Opcode::PSEUDO_FUNCTION_CALL, name)
}

fn ret() -> Record {
    header(Opcode::PSEUDO_FUNCTION_RETURN)
}

fn inst(sub: u8) -> Record {
    let mut r = header(Opcode::PSEUDO_INST);
    r.0[pseudo::INST_SUBOP] = sub;
    r
}

fn exit() -> Record {
    inst(pseudo::EXIT)
}

fn label() -> Record {
    header(Opcode::PSEUDO_BRANCH_LABEL)
}

fn inc(sem: u8) -> Record {
    event_semaphore(ev_update(UpdateMode::SEM_INC, sem, 0))
}

fn one(engine: Engine, recs: &[Record]) -> Program {
    let mut p = Program::default();
    p.set_stream(engine, recs);
    p
}

fn rel_at(bytes: &[u8], off_: usize) -> i64 {
    i64::from_le_bytes(
        bytes[off_ + off::BR_REL..off_ + off::BR_REL + 8]
            .try_into()
            .unwrap(),
    )
}

#[test]
fn a_function_called_twice_returns_to_the_right_place_each_time() {
    let input = [
        call("f"), // in 0
        event_semaphore(ev(
            // in 1
            (WaitMode::SEM_EQ, 5),
            (UpdateMode::SEM_INC, 0),
            1,
        )),
        call("f"),                                                               // in 2
        event_semaphore(ev((WaitMode::SEM_EQ, 5), (UpdateMode::SEM_INC, 1), 2)), // in 3
        begin("f", 10, 11),                                                      // in 4
        inc(5),                                                                  // in 5
        ret(),                                                                   // in 6
    ];
    // Lowered: 0 MOV r10=192, 64 MOV r11=0, 128 BR->512, 192 in1,
    // 256 MOV r10=448, 320 MOV r11=0, 384 BR->512, 448 in3, [exit 512]
    // 512 inc5, 576 DRAIN, 640 BR r10|r11<<32. 11 records.
    let l = lower(&to_bytes(&input)).unwrap();
    assert_eq!(l.records_out(), 11);
    assert_eq!(l.exits(), &[512]);
    let b = l.bytes();
    assert_eq!(b[0], Opcode::MOV32.0);
    assert_eq!(b[off::MOV32_REG], 10);
    assert_eq!(u32::from_le_bytes(b[16..20].try_into().unwrap()), 192);
    assert_eq!(rel_at(b, 128), 384);
    assert_eq!(rel_at(b, 384), 128);
    assert_eq!(b[576], Opcode::DRAIN.0);
    assert_eq!(b[640], Opcode::COMPARE_BRANCH.0);
    assert_eq!(
        (b[640 + off::BR_TARGET_LO], b[640 + off::BR_TARGET_HI]),
        (10, 11)
    );
    assert_eq!(l.original_offset(640), Some(6 * 64));
    assert_eq!(l.original_offset(448), Some(3 * 64));

    let m = run_cpu(&one(Engine::Act, &input)).unwrap();
    // If either return went elsewhere, in1/in3's waits (sem5 == 1, == 2)
    // would deadlock or the counts would differ.
    assert_eq!((m.semaphore(0), m.semaphore(1), m.semaphore(5)), (1, 1, 2));
    assert_eq!(m.register(Engine::Act, 10), 448);
    // main 8 records + f's 3 records twice; the fall-through onto 512 ends it.
    assert_eq!(m.executed()[Engine::Act as usize], 14);
}

#[test]
fn branches_across_an_expanding_call_and_a_deleted_label() {
    let input = [
        mov32(0, 2),                                                  // in 0
        jump(BranchTarget::Rel(5 * 64)),                              // in 1 -> in 6 (a label)
        inc(7),                                                       // in 2: skipped
        call("g"),                                                    // in 3
        inc(7),                                                       // in 4
        label(),                                                      // in 5
        label(),                                                      // in 6
        inc(8),                                                       // in 7
        ctrl_al(alu::SUB, 0, 0, 1),                                   // in 8
        compare_branch(cmp::GTIMM, 0, 0, BranchTarget::Rel(-6 * 64)), // in 9 -> in 3 (the call)
        begin("g", 20, 21),                                           // in 10
        inc(9),                                                       // in 11
        ret(),                                                        // in 12
    ];
    // Lowered: 0 in0, 64 in1, 128 in2, 192/256/320 call (ret 384), 384 in4,
    // 448 in7 (labels in5, in6 gone), 512 in8, 576 in9, [exit 640] 640 in11,
    // 704 DRAIN, 768 BR reg.
    let l = lower(&to_bytes(&input)).unwrap();
    let b = l.bytes();
    assert_eq!(l.records_out(), 13);
    assert_eq!(rel_at(b, 64), 448 - 64); // onto the record after the deleted labels
    assert_eq!(rel_at(b, 320), 640 - 320); // the call to g's entry
    assert_eq!(rel_at(b, 576), 192 - 576); // back onto the call's first MOV32
    assert_eq!(l.exits(), &[640]);
    // Blocks: split at the label (after 384+64 = 448 bytes) and at g.
    let blocks: Vec<(usize, usize)> = l.blocks().iter().map(|b| (b.start, b.len)).collect();
    assert_eq!(blocks, [(0, 448), (448, 192), (640, 192)]);

    // Run: r0=2; jump to in7 (sem8=1), r0=1, taken to the call: g (sem9=1),
    // back to in4 (sem7=1), in7 (sem8=2), r0=0, not taken, falls onto g: exit.
    let m = run_cpu(&one(Engine::Dve, &input)).unwrap();
    assert_eq!((m.semaphore(7), m.semaphore(8), m.semaphore(9)), (1, 2, 1));
    assert_eq!(m.register(Engine::Dve, 20), 384);
    // 0,64,448,512,576 | 192,256,320,640,704,768 | 384,448,512,576 = 15.
    assert_eq!(m.executed()[Engine::Dve as usize], 15);
}

#[test]
fn a_branch_to_a_label_at_the_end_goes_to_the_end() {
    let input = [jump(BranchTarget::Rel(128)), inc(1), label()];
    let l = lower(&to_bytes(&input)).unwrap();
    assert_eq!(rel_at(l.bytes(), 0), 128); // the end of a 2-record stream
    let m = run_cpu(&one(Engine::Pe, &input)).unwrap();
    assert_eq!(m.semaphore(1), 0);
}

#[test]
fn exit_in_the_middle_of_a_stream_ends_that_engine() {
    let input = [inc(1), exit(), inc(2), inc(2)];
    let l = lower(&to_bytes(&input)).unwrap();
    assert_eq!(l.exits(), &[64]);
    assert_eq!(l.records_out(), 3);
    let mut p = one(Engine::Sp, &input);
    // Another engine keeps running after SP has ended.
    p.set_stream(
        Engine::Pe,
        &[event_semaphore(ev(
            (WaitMode::SEM_EQ, 1),
            (UpdateMode::SEM_INC, 3),
            1,
        ))],
    );
    let m = run_cpu(&p).unwrap();
    assert_eq!((m.semaphore(1), m.semaphore(2), m.semaphore(3)), (1, 0, 1));
    assert_eq!(m.executed()[Engine::Sp as usize], 1);

    // An EXIT first: the engine runs nothing.
    let m = run_cpu(&one(Engine::Sp, &[exit(), inc(2)])).unwrap();
    assert_eq!((m.semaphore(2), m.executed()[Engine::Sp as usize]), (0, 0));
}

#[test]
fn a_taken_branch_onto_an_exit_point_does_not_end_the_engine() {
    // in0 jumps to the label after EXIT: lowered, the label's target (in4, at
    // 128) is also the exit point; only falling through onto it ends the engine.
    let input = [
        jump(BranchTarget::Rel(3 * 64)),
        inc(1),
        exit(),
        label(),
        inc(2),
    ];
    let l = lower(&to_bytes(&input)).unwrap();
    assert_eq!(l.exits(), &[128]);
    assert_eq!(rel_at(l.bytes(), 0), 128);
    let m = run_cpu(&one(Engine::Act, &input)).unwrap();
    assert_eq!((m.semaphore(1), m.semaphore(2)), (0, 1));
}

#[test]
fn a_stream_of_several_blocks_runs_across_the_boundaries() {
    // 1500 increments of sem0 with a call to f at index 1000; f at the end.
    let mut input: Vec<Record> = (0..1500).map(|_| inc(0)).collect();
    input.insert(1000, call("f"));
    input.extend([begin("f", 1, 2), inc(1), ret()]);
    // Main lowers to 1503 records: blocks of 1024 and 479 records; f's
    // begin splits: a block of 3 records at 1503*64 = 96192.
    let p = one(Engine::Act, &input);
    let staged = stage(&p).unwrap();
    let blocks: Vec<(usize, usize, u64)> = staged
        .blocks(Engine::Act)
        .iter()
        .map(|b| (b.start, b.len, b.addr))
        .collect();
    // Addresses: 0; 0x10000 (a multiple of 0x10000 for the full block, of
    // 0x8000 for the 30656-byte one); 0x10000+30656 = 0x177C0 rounds up to 0x18000.
    assert_eq!(
        blocks,
        [
            (0, 0x10000, 0),
            (0x10000, 479 * 64, 0x10000),
            (96192, 192, 0x18000)
        ]
    );
    assert_eq!(staged.exits(Engine::Act), &[96192]);
    let m = run_cpu(&p).unwrap();
    assert_eq!((m.semaphore(0), m.semaphore(1)), (1500, 1));
    assert_eq!(m.executed()[Engine::Act as usize], 1503 + 3);
    // The return offset is just past the call's branch: (1000 + 3) * 64.
    assert_eq!(m.register(Engine::Act, 1), 1003 * 64);
}

#[test]
fn engines_share_one_instruction_address_space() {
    let mut p = one(Engine::Pe, &[inc(0); 3]);
    p.set_stream(Engine::Sp, &[inc(1); 2]);
    let s = stage(&p).unwrap();
    assert_eq!(s.blocks(Engine::Pe)[0].addr, 0);
    assert_eq!(s.blocks(Engine::Sp)[0].addr, 0x8000);
    assert!(s.blocks(Engine::Act).is_empty());
}

#[test]
fn dma_direct2d_dge_op_0_lowers_to_dma_memcpy_and_runs() {
    let copy = dma_memcpy(
        contiguous(var(1, 0), 4, 4),
        contiguous(var(2, 0), 4, 4),
        Dtype::INT32,
        Dtype::INT32,
        6,
        2,
    );
    let mut d2d = copy;
    d2d.0[0] = Opcode::PSEUDO_DMA_DIRECT2D.0;
    let l = lower(&d2d.0).unwrap();
    assert_eq!(l.bytes(), &copy.0[..]);
    let mut p = one(Engine::Sp, &[label(), d2d]);
    let data: Vec<u8> = [5i32, -6, 7, 8]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    p.add(Variable::input("a", 1, Dtype::INT32, &[4], data.clone()))
        .add(Variable::output("b", 2, Dtype::INT32, &[4]));
    let m = run_cpu(&p).unwrap();
    assert_eq!(m.variable("b").unwrap(), &data[..]);
    assert_eq!(m.semaphore(6), 2);
}

/// Lowers `recs` and returns the rejection (offset, opcode, fault, message).
fn rejected(recs: &[Record]) -> (usize, u8, LowerFault, String) {
    match lower(&to_bytes(recs)) {
        Err(LowerError::Rejected(r)) => (r.offset, r.opcode, r.fault.clone(), r.to_string()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn each_rejected_pseudo_opcode_gives_its_own_error() {
    let mut jpeg = header(Opcode::PSEUDO_JPEG_DECODE);
    jpeg.0[12] = 1;
    let (o, op, f, msg) = rejected(&[drain(), jpeg]);
    assert_eq!((o, op, f), (64, 0xD7, LowerFault::NoRecipe));
    assert!(
        msg.starts_with("Found invalid instruction! opcode=215, offset=64: emu_opcode_supported (PSEUDO_JPEG_DECODE"),
        "{msg}"
    );

    for dge in 1..=3u8 {
        let mut d = dma_memcpy(
            contiguous(var(1, 0), 1, 4),
            contiguous(var(2, 0), 1, 4),
            Dtype::FP32,
            Dtype::FP32,
            0,
            0,
        );
        d.0[0] = Opcode::PSEUDO_DMA_DIRECT2D.0;
        d.0[pseudo::DGE_OP] = dge;
        let (o, op, f, msg) = rejected(&[drain(), drain(), d]);
        assert_eq!((o, op, f), (128, 0xD4, LowerFault::DgeOp(dge)));
        assert!(
            msg.contains("PSEUDO_DMA_DIRECT2D") && msg.contains("EC-17"),
            "{msg}"
        );
    }

    let (o, op, f, msg) = rejected(&[inst(pseudo::LIBRARY_RELOAD_INDEX)]);
    assert_eq!((o, op, f), (0, 0xDF, LowerFault::InstSubOp(2)));
    assert!(msg.contains("LIBRARY_RELOAD_INDEX"), "{msg}");

    let (o, op, f, msg) = rejected(&[call("f"), call("nope"), begin("f", 0, 1), ret()]);
    assert_eq!(
        (o, op, f),
        (64, 0xD3, LowerFault::UnknownCallee("nope".into()))
    );
    assert!(msg.contains("unknown callee \"nope\""), "{msg}");

    let mut reset = begin("f", 0, 1);
    reset.0[pseudo::RESET_SEMAPHORES] = 1;
    let (o, op, f, msg) = rejected(&[drain(), reset, ret()]);
    assert_eq!((o, op, f), (64, 0xD1, LowerFault::ResetSemaphores(1)));
    assert!(msg.contains("reset-semaphores"), "{msg}");

    // The emulator's own choices.
    let (o, _, f, _) = rejected(&[ret()]);
    assert_eq!((o, f), (0, LowerFault::ReturnOutsideFunction));
    let (o, _, f, _) = rejected(&[begin("f", 0, 1), ret(), begin("f", 2, 3)]);
    assert_eq!(
        (o, f),
        (
            128,
            LowerFault::DuplicateFunction {
                name: "f".into(),
                first: 0
            }
        )
    );
    let (o, _, f, _) = rejected(&[with_events(label(), ev_update(UpdateMode::SEM_INC, 0, 0))]);
    assert_eq!((o, f), (0, LowerFault::EventsDropped));
    let (o, op, f, _) = rejected(&[header(Opcode(0xC5))]);
    assert_eq!((o, op, f), (0, 0xC5, LowerFault::NoRecipe));
}

#[test]
fn a_rejection_stops_staging_with_exit_3_semantics() {
    let e = stage(&one(
        Engine::Sp,
        &[drain(), header(Opcode::PSEUDO_JPEG_DECODE)],
    ))
    .unwrap_err();
    assert!(!e.is_bad_input());
    assert_eq!(e.predicate(), Some("emu_opcode_supported"));
    assert!(matches!(
        e,
        StageError::Lower {
            engine: Engine::Sp,
            ..
        }
    ));
    assert!(
        e.to_string().starts_with(
            "sp stream, PSEUDO_JPEG_DECODE at byte offset 64: Found invalid instruction! opcode=215, offset=64: emu_opcode_supported"
        ),
        "{e}"
    );
}

#[test]
fn an_invalid_lowered_record_names_both_offsets() {
    // in0, in1 are labels (gone), in2 is an invalid MOV32 (register 64): lowered offset 0.
    let input = [label(), label(), mov32(64, 0)];
    let t = Target {
        engine: Engine::Act,
        ..Target::default()
    };
    let e = lower_and_validate(&to_bytes(&input), t).unwrap_err();
    assert_eq!(e.predicate(), Some("emu_opcode_supported"));
    let msg = e.to_string();
    assert!(
        msg.starts_with("Found invalid instruction! opcode=167, offset=0: emu_opcode_supported"),
        "{msg}"
    );
    assert!(
        msg.ends_with("[lowered offset 0, input offset 128]"),
        "{msg}"
    );

    let e = stage(&one(Engine::Act, &input)).unwrap_err();
    let StageError::InLowered { original, source } = &e else {
        panic!("{e}")
    };
    assert_eq!(*original, 128);
    assert!(matches!(**source, StageError::Invalid { .. }));
    assert_eq!(e.predicate(), Some("emu_opcode_supported"));
    assert!(e.to_string().contains("input byte offset 128"), "{e}");

    // A footprint failure of a lowered DMA also names the input offset.
    let bad = dma_memcpy(
        contiguous(var(9, 0), 1, 4),
        contiguous(var(9, 0), 1, 4),
        Dtype::FP32,
        Dtype::FP32,
        0,
        0,
    );
    let e = stage(&one(Engine::Sp, &[exit(), label(), bad])).unwrap_err();
    assert_eq!(e.predicate(), Some("emu_footprint_in_bounds"));
    assert!(e.to_string().contains("input byte offset 128"), "{e}");
}

#[test]
fn a_stream_without_pseudo_opcodes_lowers_to_itself() {
    let mut rng = fastrand::Rng::with_seed(0x10_4E5);
    for _ in 0..300 {
        let n = rng.usize(0..1300);
        let mut bytes = vec![0u8; n * 64];
        rng.fill(&mut bytes);
        for i in 0..n {
            let r = &mut bytes[i * 64..(i + 1) * 64];
            while Opcode(r[0]).is_pseudo() {
                r[0] = rng.u8(..);
            }
            if rng.u8(..4) == 0 {
                // A REL_IMM branch with an in-range target: must keep its immediate.
                r[0] = Opcode::COMPARE_BRANCH.0;
                r[off::BR_TARGET_MODE] = 3;
                let to = rng.usize(0..=n) as i64 * 64;
                r[off::BR_REL..off::BR_REL + 8]
                    .copy_from_slice(&(to - i as i64 * 64).to_le_bytes());
            }
        }
        let l = lower(&bytes).unwrap();
        assert_eq!(l.bytes(), &bytes[..]);
        assert!(l.exits().is_empty());
        assert_eq!(l.records_out(), n);
        // Programs made only of real records stage as before: same records.
        let total: usize = l.blocks().iter().map(|b| b.len).sum();
        assert_eq!(total, n * 64);
    }
}

#[test]
fn a_call_as_the_main_programs_last_action_returns_onto_the_exit_point_and_ends() {
    // EC-29 (amended): the return is a REGISTER-mode branch onto the exit point.
    let input = [
        inc(0),             // in 0
        call("f"),          // in 1
        begin("f", 10, 11), // in 2
        inc(5),             // in 3
        ret(),              // in 4
    ];
    // Lowered: 0 inc0, 64 MOV r10=256, 128 MOV r11=0, 192 BR->256, [exit 256]
    // 256 inc5, 320 DRAIN, 384 BR r10|r11<<32 (back to 256, the exit point).
    let l = lower(&to_bytes(&input)).unwrap();
    assert_eq!(l.exits(), &[256]);
    let mut m = tpb_emu::runtime::Machine::new(stage(&one(Engine::Pool, &input)).unwrap());
    m.set_max_records(1000);
    m.run(
        &mut tpb_emu::device::CpuExecutor::default(),
        &mut tpb_emu::device::NoTrace,
    )
    .expect("the program ends");
    // main 4 records (inc0, MOV, MOV, BR), f's 3 once; sem5 counts f's runs.
    assert_eq!(m.executed()[Engine::Pool as usize], 7);
    assert_eq!((m.semaphore(0), m.semaphore(5)), (1, 1));
}
