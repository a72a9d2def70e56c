//! Synchronisation (SPEC §1, EC-1, EC-3, EC-24, EC-31): every wait mode and
//! every update mode as a table, the scheduler's order, DMA completion order
//! (EC-23) and the deadlock report.

use tpb_emu::device::{CpuExecutor, NoTrace};
use tpb_emu::isa::enums::{Dtype, UpdateMode, WaitMode};
use tpb_emu::isa::{Engine, Record};
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::{Error, Machine, Program, RunError, Variable, run_cpu, stage};

fn write_sem(idx: u8, v: i32) -> Record {
    event_semaphore(ev_update(UpdateMode::SEM_WR_IMM, idx, v as u32))
}

fn set_event(idx: u8) -> Record {
    event_semaphore(ev_update(UpdateMode::EVT_SET, idx, 0))
}

/// The state every wait case starts from: sem[3] = -5, sem[4] = 7, event[9] set, event[10] clear.
fn setup() -> Vec<Record> {
    vec![write_sem(3, -5), write_sem(4, 7), set_event(9)]
}

#[test]
fn every_wait_mode() {
    use WaitMode as W;
    // (mode, idx, value, holds?, event 9 and 10 afterwards when it ran)
    let cases: &[(WaitMode, u8, i32, bool)] = &[
        (W::NONE, 0, 0, true),
        (W::SEM_EQ, 4, 7, true),
        (W::SEM_EQ, 4, 6, false),
        (W::SEM_LT, 3, 0, true), // -5 < 0: signed
        (W::SEM_LT, 3, -5, false),
        (W::SEM_LT, 3, -6, false),
        (W::SEM_LE, 3, -5, true),
        (W::SEM_LE, 3, -6, false),
        (W::SEM_GT, 4, 6, true),
        (W::SEM_GT, 4, 7, false),
        (W::SEM_GT, 3, 0, false), // -5 > 0 is false (0xFFFFFFFB unsigned would hold)
        (W::SEM_GE, 4, 7, true),
        (W::SEM_GE, 4, 8, false),
        (W::SEM_GE, 3, i32::MIN, true),
        (W::EVT_SET, 9, 0, true),
        (W::EVT_SET, 10, 0, false),
        (W::EVT_SET_THEN_CLEAR, 9, 0, true),
        (W::EVT_SET_THEN_CLEAR, 10, 0, false),
        (W::EVT_CLEAR, 10, 0, true),
        (W::EVT_CLEAR, 9, 0, false),
        (W::EVT_CLEAR_THEN_SET, 10, 0, true),
        (W::EVT_CLEAR_THEN_SET, 9, 0, false),
    ];
    for &(mode, idx, value, holds) in cases {
        let mut recs = setup();
        recs.push(event_semaphore(ev_wait(mode, idx, value as u32)));
        let mut p = Program::default();
        p.set_stream(Engine::Dve, &recs);
        let what = format!("{mode} [{idx}] {value}");
        match run_cpu(&p) {
            Ok(m) => {
                assert!(holds, "{what}: ran but should block");
                // Only the *_THEN_* modes change state.
                let (e9, e10) = match mode {
                    W::EVT_SET_THEN_CLEAR => (false, false),
                    W::EVT_CLEAR_THEN_SET => (true, true),
                    _ => (true, false),
                };
                assert_eq!((m.event(9), m.event(10)), (e9, e10), "{what}");
                assert_eq!((m.semaphore(3), m.semaphore(4)), (-5, 7), "{what}");
            }
            Err(Error::Run(RunError::Deadlock(d))) => {
                assert!(!holds, "{what}: blocked but should run");
                assert_eq!(d.blocked.len(), 1, "{what}");
                assert_eq!(
                    (d.blocked[0].engine, d.blocked[0].offset),
                    (Engine::Dve, 192)
                );
            }
            Err(e) => panic!("{what}: {e}"),
        }
    }
}

#[test]
fn every_update_mode() {
    use UpdateMode as U;
    // (mode, value, sem[2] before, sem[2] after) — the 0x1N forms act like 0x0N (EC-3).
    let sem_cases: &[(UpdateMode, u32, i32, i32)] = &[
        (U::NONE, 9, 4, 4),
        (U::SEM_INC, 9, 4, 5),
        (U::SEM_INC, 0, i32::MAX, i32::MIN), // wrapping
        (U::SEM_DEC, 0, 4, 3),
        (U::SEM_DEC, 0, i32::MIN, i32::MAX),
        (U::SEM_ADD_IMM, 10, 4, 14),
        (U::SEM_ADD_IMM, 0xFFFF_FFFF, 4, 3), // + (-1)
        (U::SEM_ADD_IMM, 1, i32::MAX, i32::MIN),
        (U::SEM_SUB_IMM, 10, 4, -6),
        (U::SEM_SUB_IMM, 0x8000_0000, 0, i32::MIN), // 0 - MIN wraps to MIN
        (U::SEM_WR_IMM, 0xFFFF_FFF0, 4, -16),
        (U::SEM_INC_DONE, 0, 4, 5),
        (U::SEM_DEC_DONE, 0, 4, 3),
        (U::SEM_ADD_IMM_DONE, 10, 4, 14),
        (U::SEM_SUB_IMM_DONE, 10, 4, -6),
        (U::SEM_WR_IMM_DONE, 77, 4, 77),
    ];
    for &(mode, value, before, after) in sem_cases {
        let recs = [
            write_sem(2, before),
            event_semaphore(ev_update(mode, 2, value)),
        ];
        let mut p = Program::default();
        p.set_stream(Engine::Act, &recs);
        let m = run_cpu(&p).unwrap();
        assert_eq!(m.semaphore(2), after, "{mode} {value} from {before}");
        assert_eq!(m.semaphore(0), 0);
    }
    // (mode, event 6 before, after)
    let evt_cases: &[(UpdateMode, bool, bool)] = &[
        (U::EVT_SET, false, true),
        (U::EVT_SET, true, true), // setting a set event changes nothing
        (U::EVT_CLR, true, false),
        (U::EVT_CLR, false, false),
        (U::EVT_SET_DONE, false, true),
        (U::EVT_CLR_DONE, true, false),
    ];
    for &(mode, before, after) in evt_cases {
        let mut recs = vec![];
        if before {
            recs.push(set_event(6));
        }
        recs.push(drain());
        recs.push(with_events(drain(), ev_update(mode, 6, 0)));
        let mut p = Program::default();
        p.set_stream(Engine::Sp, &recs);
        let m = run_cpu(&p).unwrap();
        assert_eq!(m.event(6), after, "{mode} from {before}");
        assert!(!m.event(7) && !m.event(5));
    }
}

#[test]
fn a_wait_stalls_until_another_engine_releases_it() {
    // PE waits for sem[1] >= 3; SP increments it three times, then waits for
    // event[2], which PE sets after its wait. Lower engines go first (EC-31).
    let pe = [
        with_events(drain(), ev_wait(WaitMode::SEM_GE, 1, 3)),
        set_event(2),
    ];
    let sp = [
        event_semaphore(ev_update(UpdateMode::SEM_INC, 1, 0)),
        event_semaphore(ev_update(UpdateMode::SEM_INC, 1, 0)),
        event_semaphore(ev_update(UpdateMode::SEM_INC, 1, 0)),
        event_semaphore(ev_wait(WaitMode::EVT_SET_THEN_CLEAR, 2, 0)),
        write_sem(1, 100),
    ];
    let mut p = Program::default();
    p.set_stream(Engine::Pe, &pe).set_stream(Engine::Sp, &sp);
    let mut lines: Vec<String> = Vec::new();
    let mut m = Machine::new(stage(&p).unwrap());
    m.run(&mut CpuExecutor::default(), &mut lines).unwrap();
    let order: Vec<&str> = lines
        .iter()
        .filter(|l| !l.contains("blocked") && !l.contains("end of program"))
        .map(|l| &l[..l.find(':').unwrap()])
        .collect();
    assert_eq!(
        order,
        [
            "sp   0", "sp   64", "sp   128", "pe   0", "pe   64", "sp   192", "sp   256"
        ]
    );
    assert!(lines.contains(&"pe   0: blocked: waits for sem[1] >= 3 (sem[1] = 0)".to_string()));
    assert_eq!(m.semaphore(1), 100);
    assert!(!m.event(2));
}

#[test]
fn then_clear_lets_one_waiter_through() {
    // ACT and DVE both wait for event[0] with EVT_SET_THEN_CLEAR; SP sets it
    // once: ACT (lower) takes it and DVE deadlocks.
    let waiter = [event_semaphore(ev_wait(WaitMode::EVT_SET_THEN_CLEAR, 0, 0))];
    let mut p = Program::default();
    p.set_stream(Engine::Act, &waiter)
        .set_stream(Engine::Dve, &waiter)
        .set_stream(Engine::Sp, &[set_event(0)]);
    let Err(Error::Run(RunError::Deadlock(d))) = run_cpu(&p) else {
        panic!("expected a deadlock");
    };
    assert_eq!(d.executed, 2);
    assert_eq!(d.blocked.len(), 1);
    assert_eq!(d.blocked[0].engine, Engine::Dve);
}

#[test]
fn dma_completion_increment_comes_before_the_update() {
    // EC-23: sem[byte 13] += byte 14, then the events band's update.
    let dma = |update: UpdateMode, value: u32| {
        with_events(
            dma_memcpy(
                contiguous(var(1, 0), 2, 4),
                contiguous(var(2, 0), 2, 4),
                Dtype::FP32,
                Dtype::FP32,
                4,
                2,
            ),
            ev_update(update, 4, value),
        )
    };
    for (update, value, want) in [
        (UpdateMode::SEM_WR_IMM, 10, 10), // the write comes last
        (UpdateMode::SEM_ADD_IMM, 5, 7),
        (UpdateMode::NONE, 0, 2),
    ] {
        let mut p = Program::default();
        p.set_stream(Engine::Pool, &[dma(update, value)])
            .add(Variable::input("a", 1, Dtype::FP32, &[2], vec![1; 8]))
            .add(Variable::output("b", 2, Dtype::FP32, &[2]));
        let m = run_cpu(&p).unwrap();
        assert_eq!(m.semaphore(4), want, "{update}");
        assert_eq!(m.variable("b").unwrap(), [1; 8]);
    }
}

#[test]
fn a_deadlock_is_reported_with_every_blocked_engine() {
    let mut p = Program::default();
    p.set_stream(Engine::Pe, &[drain(), drain()]) // finishes
        .set_stream(
            Engine::Act,
            &[
                inc_then(),
                with_events(drain(), ev_wait(WaitMode::SEM_GE, 1, 2)),
            ],
        )
        .set_stream(
            Engine::Sp,
            &[event_semaphore(ev_wait(WaitMode::EVT_SET, 4, 0))],
        );
    let err = run_cpu(&p).unwrap_err();
    let Error::Run(RunError::Deadlock(d)) = &err else {
        panic!("{err}");
    };
    assert_eq!(d.executed, 3);
    let who: Vec<_> = d.blocked.iter().map(|b| (b.engine, b.offset)).collect();
    assert_eq!(who, [(Engine::Act, 64), (Engine::Sp, 0)]);
    assert_eq!(
        err.to_string(),
        "deadlock after 3 records: no engine can run (EC-31)\n  \
         act engine at byte offset 64 (DRAIN) waits for sem[1] >= 2 (sem[1] = 1)\n  \
         sp engine at byte offset 0 (EVENT_SEMAPHORE) waits for event[4] set (event[4] is clear)"
    );
}

fn inc_then() -> Record {
    event_semaphore(ev_update(UpdateMode::SEM_INC, 1, 0))
}

#[test]
fn then_modes_are_named_in_deadlocks() {
    let mut p = Program::default();
    p.set_stream(Engine::Pool, &[set_event(3)]).set_stream(
        Engine::Pe,
        &[event_semaphore(ev_wait(WaitMode::EVT_CLEAR_THEN_SET, 3, 0))],
    );
    // PE runs first (event 3 clear, then set by PE), so POOL's set is harmless: no deadlock.
    let m = run_cpu(&p).unwrap();
    assert!(m.event(3));
    // The other way round: PE waits for a clear event that POOL set.
    let mut q = Program::default();
    q.set_stream(Engine::Pe, &[set_event(3)]).set_stream(
        Engine::Pool,
        &[event_semaphore(ev_wait(WaitMode::EVT_CLEAR_THEN_SET, 3, 0))],
    );
    let e = run_cpu(&q).unwrap_err().to_string();
    assert!(
        e.contains("pool engine at byte offset 0 (EVENT_SEMAPHORE) waits for event[3] clear (then set it) (event[3] is set)"),
        "{e}"
    );
}

#[test]
fn runs_are_deterministic() {
    let p = tpb_emu::runtime::samples::program();
    let trace = || {
        let mut lines: Vec<String> = Vec::new();
        let mut m = Machine::new(stage(&p).unwrap());
        m.run(&mut CpuExecutor::default(), &mut lines).unwrap();
        (lines, m.dram().to_vec())
    };
    assert_eq!(trace(), trace());
    let mut m = Machine::new(stage(&p).unwrap());
    m.run(&mut CpuExecutor::default(), &mut NoTrace).unwrap();
    assert_eq!(m.dram(), trace().1);
}
