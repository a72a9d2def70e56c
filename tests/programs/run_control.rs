//! Control records on the scheduler: MOV32 (EC-26), CTRL_AL (EC-27),
//! COMPARE_BRANCH (EC-28), registers per engine, program ends (EC-32), the
//! record budget, and run-time branch errors.

use tpb_emu::isa::control::{alu, cmp};
use tpb_emu::isa::enums::{Dtype, UpdateMode};
use tpb_emu::isa::{Engine, Record};
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::{Error, Machine, Program, RunError, Variable, run_cpu, stage};

fn one(engine: Engine, recs: &[Record]) -> Program {
    let mut p = Program::default();
    p.set_stream(engine, recs);
    p
}

fn inc(sem: u8) -> Record {
    event_semaphore(ev_update(UpdateMode::SEM_INC, sem, 0))
}

/// `reg[0] = n; do { sem[5] += 1; reg[0] -= 1 } while reg[0] > 0` (signed).
fn counted_loop(n: u32) -> Vec<Record> {
    vec![
        mov32(0, n),                                               // 0
        inc(5),                                                    // 64: the body
        ctrl_al(alu::SUB, 0, 0, 1),                                // 128
        compare_branch(cmp::GTIMM, 0, 0, BranchTarget::Rel(-128)), // 192 -> 64
    ]
}

#[test]
fn counted_loop_runs_n_times() {
    for n in [1u32, 2, 7, 1000] {
        let m = run_cpu(&one(Engine::Dve, &counted_loop(n))).unwrap();
        assert_eq!(m.semaphore(5), n as i32, "iterations for n = {n}");
        assert_eq!(m.register(Engine::Dve, 0), 0);
        assert_eq!(m.executed()[Engine::Dve as usize], 1 + 3 * n as u64);
    }
}

#[test]
fn counted_loop_with_a_dma_counter() {
    // The body is a DMA (int32 `one` -> fp32 `c`) whose completion adds 3 to
    // sem[9] (EC-23): the semaphore counts the iterations.
    let n = 5u32;
    let copy = dma_memcpy(
        contiguous(var(1, 0), 1, 4),
        contiguous(var(2, 0), 1, 4),
        Dtype::INT32,
        Dtype::FP32,
        9,
        3,
    );
    let recs = [
        mov32(7, n),
        copy,
        ctrl_al(alu::SUB, 7, 7, 1),
        compare_branch(cmp::GTIMM, 7, 0, BranchTarget::Rel(-128)),
    ];
    let mut p = one(Engine::Sp, &recs);
    p.add(Variable::input(
        "one",
        1,
        Dtype::INT32,
        &[1],
        41i32.to_le_bytes().to_vec(),
    ))
    .add(Variable::output("c", 2, Dtype::FP32, &[1]));
    let m = run_cpu(&p).unwrap();
    assert_eq!(m.semaphore(9), 3 * n as i32);
    assert_eq!(m.variable("c").unwrap(), 41.0f32.to_le_bytes());
}

#[test]
fn gtimm_is_signed_and_eqimm_compares_bits() {
    let recs = [
        mov32(1, 0xFFFF_FFFF),                                              // -1
        compare_branch(cmp::GTIMM, 1, 0, BranchTarget::Rel(128)),           // -1 > 0: not taken
        inc(0),                                                             // runs
        compare_branch(cmp::GTIMM, 1, 0xFFFF_FFFE, BranchTarget::Rel(128)), // -1 > -2: taken
        inc(1),                                                             // skipped
        compare_branch(cmp::EQIMM, 1, 0xFFFF_FFFF, BranchTarget::Rel(128)), // taken
        inc(2),                                                             // skipped
        compare_branch(cmp::EQIMM, 1, 7, BranchTarget::Rel(128)),           // not taken
        inc(3),                                                             // runs
    ];
    let m = run_cpu(&one(Engine::Pe, &recs)).unwrap();
    assert_eq!(
        [0, 1, 2, 3].map(|s| m.semaphore(s)),
        [1, 0, 0, 1],
        "which increments ran"
    );
    assert_eq!(m.executed()[0], 7);
}

#[test]
fn register_targets_and_branches_to_the_end() {
    // reg[2] | reg[3] << 32 = 256: skip the records at 192.
    let recs = [
        mov32(2, 256),                                 // 0
        mov32(3, 0),                                   // 64
        jump(BranchTarget::Register { lo: 2, hi: 3 }), // 128
        inc(0),                                        // 192: skipped
        inc(1),                                        // 256
        jump(BranchTarget::Rel(128)),                  // 320 -> 448 = the end
        inc(2),                                        // 384: skipped
    ];
    let m = run_cpu(&one(Engine::Act, &recs)).unwrap();
    assert_eq!([0, 1, 2].map(|s| m.semaphore(s)), [0, 1, 0]);
    assert!(m.finished());
    assert_eq!(m.executed()[1], 5);
}

#[test]
fn ctrl_al_wraps_and_registers_are_per_engine() {
    let act = [
        mov32(0, 0x7FFF_FFFF),
        ctrl_al(alu::ADD, 1, 0, 1),               // 0x80000000
        ctrl_al(alu::SUB, 2, 63, 1),              // 0 - 1 = 0xFFFFFFFF
        ctrl_al(alu::ADD, 3, 0, -0x7FFF_FFFF),    // 0x7FFFFFFF - 0x7FFFFFFF = 0
        ctrl_al(alu::SUB, 4, 1, i32::MIN as i64), // 0x80000000 - 0x80000000 = 0
        ctrl_al(alu::SUB, 5, 5, -3),              // 0 + 3
    ];
    let mut p = one(Engine::Act, &act);
    p.set_stream(Engine::Pool, &[mov32(0, 5)]);
    let m = run_cpu(&p).unwrap();
    let r = |e, i| m.register(e, i);
    assert_eq!(
        [0, 1, 2, 3, 4, 5].map(|i| r(Engine::Act, i)),
        [0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0, 0, 3]
    );
    assert_eq!(r(Engine::Pool, 0), 5);
    assert_eq!(r(Engine::Pe, 0), 0);
}

#[test]
fn a_branch_applies_its_own_update_taken_or_not() {
    let recs = [
        with_events(
            compare_branch(cmp::EQIMM, 0, 1, BranchTarget::Rel(64)),
            ev_update(UpdateMode::SEM_ADD_IMM, 4, 10),
        ),
        with_events(
            jump(BranchTarget::Rel(64)),
            ev_update(UpdateMode::SEM_ADD_IMM_DONE, 4, 5),
        ),
    ];
    let m = run_cpu(&one(Engine::Sp, &recs)).unwrap();
    assert_eq!(m.semaphore(4), 15);
}

fn run_err(p: &Program) -> RunError {
    match run_cpu(p) {
        Err(Error::Run(e)) => e,
        other => panic!("expected a run-time error, got {other:?}"),
    }
}

#[test]
fn branch_targets_off_a_record_boundary_are_run_time_errors() {
    // (stream, offset of the bad branch, its target)
    let cases: Vec<(Vec<Record>, usize, i128)> = vec![
        (vec![drain(), jump(BranchTarget::Rel(32))], 64, 96),
        (vec![jump(BranchTarget::Rel(-64))], 0, -64),
        (vec![drain(), jump(BranchTarget::Rel(128))], 64, 192), // past the end (128)
        (
            vec![
                mov32(0, 0),
                mov32(1, 1),
                jump(BranchTarget::Register { lo: 0, hi: 1 }),
            ],
            128,
            1 << 32,
        ),
    ];
    for (recs, offset, target) in cases {
        let e = run_err(&one(Engine::Pool, &recs));
        let RunError::BadBranchTarget {
            engine,
            offset: o,
            target: t,
            len,
        } = e
        else {
            panic!("{e}");
        };
        assert_eq!(
            (engine, o, t, len),
            (Engine::Pool, offset, target, recs.len() * 64)
        );
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("pool stream, COMPARE_BRANCH at byte offset {offset}: target {target} is not a record boundary")),
            "{msg}"
        );
    }
    // An untaken branch to nowhere is harmless.
    let ok = [
        mov32(0, 0),
        compare_branch(cmp::GTIMM, 0, 0, BranchTarget::Rel(3)),
    ];
    assert!(run_cpu(&one(Engine::Pool, &ok)).is_ok());
}

#[test]
fn an_endless_loop_spends_the_record_budget() {
    let mut m = Machine::new(stage(&one(Engine::Sp, &[jump(BranchTarget::Rel(0))])).unwrap());
    m.set_max_records(10_000);
    let e = m
        .run(
            &mut tpb_emu::device::CpuExecutor::default(),
            &mut tpb_emu::device::NoTrace,
        )
        .unwrap_err();
    assert!(matches!(e, RunError::RecordBudget { limit: 10_000 }), "{e}");
    assert!(e.to_string().contains("--max-records"));
    assert_eq!(m.total_executed(), 10_000);
}

#[test]
fn empty_program_finishes_at_once() {
    let m = run_cpu(&Program::default()).unwrap();
    assert_eq!(m.total_executed(), 0);
    assert!(m.finished());
}
