//! The run timeline (`run --timeline`, src/runtime/timeline.rs): the file
//! follows the Chrome trace-event format, has one slice per executed record,
//! shows the example program's waits and the flows that release them, is
//! deterministic, and leaves the scheduler's order unchanged.

use crate::common;
use common::tpb;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use tpb_emu::device::{CpuExecutor, NoTrace, Trace};
use tpb_emu::isa::control::cmp;
use tpb_emu::isa::enums::{Dtype, Engine, UpdateMode, WaitMode};
use tpb_emu::isa::tensor::Region;
use tpb_emu::limits::Arch;
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::timeline::cost;
use tpb_emu::runtime::{Machine, Program, Variable, manifest, stage};

const EXAMPLE: &str = "examples/program/program.toml";

/// Runs `p` on the CPU with a timeline; the machine and the JSON.
fn run_timeline(p: &Program) -> (Machine, Vec<u8>) {
    let mut m = Machine::new(stage(p).expect("stages"));
    m.record_timeline(true);
    m.run(&mut CpuExecutor::default(), &mut NoTrace)
        .expect("runs");
    let json = m.timeline().expect("attached").to_json(m.staged());
    (m, json)
}

fn example() -> Program {
    manifest::load(Path::new(EXAMPLE)).expect("the example loads")
}

/// A loop on DVE (branches, so a record runs many times), DMAs on SP whose
/// completion ACT waits for, and an event POOL waits for.
fn looping() -> Program {
    let lane = Region::Sbuf.addr(0, 0);
    let mut p = Program::new(Arch::Cayman);
    p.set_stream(
        Engine::Dve,
        &[
            mov32(0, 5),
            ctrl_al(tpb_emu::isa::control::alu::SUB, 0, 0, 1),
            compare_branch(cmp::GTIMM, 0, 0, BranchTarget::Rel(-64)),
            event_semaphore(ev_update(UpdateMode::EVT_SET, 7, 0)),
        ],
    )
    .set_stream(
        Engine::Sp,
        &[
            dma_memcpy(
                contiguous(var(1, 0), 16, 4),
                contiguous(on_chip(lane), 16, 4),
                Dtype::FP32,
                Dtype::FP32,
                3,
                1,
            ),
            dma_memcpy(
                contiguous(on_chip(lane), 16, 4),
                contiguous(var(2, 0), 16, 4),
                Dtype::FP32,
                Dtype::FP32,
                3,
                1,
            ),
        ],
    )
    .set_stream(
        Engine::Act,
        &[event_semaphore(ev_wait(WaitMode::SEM_GE, 3, 2))],
    )
    .set_stream(
        Engine::Pool,
        &[with_events(
            drain(),
            ev_wait(WaitMode::EVT_SET_THEN_CLEAR, 7, 0),
        )],
    )
    .add(Variable::input(
        "x",
        1,
        Dtype::FP32,
        &[16],
        (0..16u32).flat_map(|v| (v as f32).to_le_bytes()).collect(),
    ))
    .add(Variable::output("y", 2, Dtype::FP32, &[16]));
    p
}

fn events(json: &[u8]) -> Vec<Value> {
    let doc: Value = serde_json::from_slice(json).expect("the timeline is JSON");
    assert_eq!(doc["displayTimeUnit"], "ns");
    doc["traceEvents"]
        .as_array()
        .expect("a traceEvents array")
        .clone()
}

fn num(e: &Value, key: &str) -> f64 {
    e[key]
        .as_f64()
        .unwrap_or_else(|| panic!("`{key}` is a number in {e}"))
}

/// The trace-event format's rules, checked on every event.
fn check_format(evs: &[Value]) {
    type End = Option<(u64, f64)>;
    let mut flows: HashMap<u64, (End, End)> = HashMap::new();
    let mut last_end: HashMap<u64, f64> = HashMap::new();
    let mut slices: HashMap<u64, Vec<(f64, f64)>> = HashMap::new();
    for e in evs {
        let ph = e["ph"].as_str().expect("ph is a string");
        assert!(e["name"].is_string(), "name in {e}");
        assert_eq!(e["pid"], 1, "pid in {e}");
        let tid = e["tid"].as_u64().expect("tid is an integer");
        match ph {
            "M" => assert!(e["args"].is_object(), "metadata args in {e}"),
            "X" => {
                let (ts, dur) = (num(e, "ts"), num(e, "dur"));
                assert!(ts >= 0.0 && dur > 0.0, "{e}");
                assert!(e["cat"].is_string() && e["args"].is_object(), "{e}");
                // Monotonic per track, and slices of a track never overlap.
                let prev = last_end.insert(tid, ts + dur).unwrap_or(0.0);
                assert!(ts >= prev - 1e-9, "track {tid} goes back in time at {e}");
                slices.entry(tid).or_default().push((ts, ts + dur));
            }
            "s" | "f" => {
                let id = e["id"].as_u64().expect("flow id");
                let at = (tid, num(e, "ts"));
                let f = flows.entry(id).or_default();
                if ph == "s" {
                    assert!(f.0.replace(at).is_none(), "two starts for flow {id}");
                } else {
                    assert_eq!(e["bp"], "e", "{e}");
                    assert!(f.1.replace(at).is_none(), "two ends for flow {id}");
                }
            }
            other => panic!("unexpected phase {other} in {e}"),
        }
    }
    let inside = |tid: u64, ts: f64| {
        slices[&tid]
            .iter()
            .any(|&(a, b)| a - 1e-9 <= ts && ts < b - 1e-9)
    };
    for (id, f) in &flows {
        let (Some((st, sts)), Some((ft, fts))) = f else {
            panic!("flow {id} lacks a start or an end: {f:?}");
        };
        assert!(sts <= fts, "flow {id} goes back in time");
        assert!(inside(*st, *sts), "flow {id} starts outside a slice");
        assert!(inside(*ft, *fts), "flow {id} ends outside a slice");
    }
}

fn of_cat<'a>(evs: &'a [Value], cat: &str) -> Vec<&'a Value> {
    evs.iter()
        .filter(|e| e["cat"] == cat && e["ph"] == "X")
        .collect()
}

#[test]
fn example_follows_the_trace_event_format() {
    let (_, json) = run_timeline(&example());
    let evs = events(&json);
    check_format(&evs);
    let names: Vec<_> = evs
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "PE",
            "ACT",
            "POOL",
            "DVE",
            "SP",
            "DMA queue (ACT)",
            "DMA queue (SP)"
        ]
    );
}

#[test]
fn one_slice_per_executed_record() {
    for p in [example(), looping()] {
        let (m, json) = run_timeline(&p);
        let evs = events(&json);
        check_format(&evs);
        let records = of_cat(&evs, "record");
        assert_eq!(records.len() as u64, m.total_executed());
        for e in Engine::ALL {
            let on: Vec<_> = records
                .iter()
                .filter(|r| r["tid"] == e as u64)
                .copied()
                .collect();
            assert_eq!(on.len() as u64, m.executed()[e as usize], "{e}");
            let totals = m.timeline().unwrap().totals()[e as usize];
            assert_eq!(totals.records, m.executed()[e as usize]);
            let busy: u64 = on
                .iter()
                .map(|r| r["args"]["cycles"].as_u64().unwrap())
                .sum();
            assert_eq!(busy, totals.busy_cycles, "{e}");
            for r in on {
                assert!(r["args"]["disasm"].as_str().is_some_and(|d| !d.is_empty()));
                assert!(r["args"]["offset"].as_u64().unwrap() % 64 == 0);
            }
        }
        // Every DMA record has one transfer on its engine's queue.
        let dmas = records.iter().filter(|r| r["name"] == "DMA_MEMCPY").count();
        assert_eq!(of_cat(&evs, "dma").len(), dmas);
    }
}

#[test]
fn the_loop_repeats_its_records_on_the_clock() {
    let (m, json) = run_timeline(&looping());
    let evs = events(&json);
    // DVE: MOV32, then 5 × (CTRL_AL, COMPARE_BRANCH), then EVENT_SEMAPHORE.
    assert_eq!(m.executed()[Engine::Dve as usize], 12);
    let dve: Vec<_> = of_cat(&evs, "record")
        .into_iter()
        .filter(|r| r["tid"] == Engine::Dve as u64)
        .collect();
    let offsets: Vec<u64> = dve
        .iter()
        .map(|r| r["args"]["offset"].as_u64().unwrap())
        .collect();
    assert_eq!(
        offsets,
        [0, 64, 128, 64, 128, 64, 128, 64, 128, 64, 128, 192]
    );
    // Back to back, 32 cycles each (control records cost the issue alone).
    for (k, r) in dve.iter().enumerate() {
        assert_eq!(
            num(r, "ts"),
            (k as u64 * cost::ISSUE_CYCLES) as f64 / 1000.0
        );
    }
    // POOL waits for DVE's last record (12 × 32 = 384 cycles), released by it.
    let waits = of_cat(&evs, "wait");
    let pool = waits
        .iter()
        .find(|w| w["tid"] == Engine::Pool as u64)
        .expect("POOL waits");
    assert_eq!((num(pool, "ts"), num(pool, "dur")), (0.0, 0.384));
    assert_eq!(pool["args"]["released_by"], "dve EVENT_SEMAPHORE at 192");
    // ACT waits for SP's second DMA: issue 32, transfer 1000 + 64/32 = 1002
    // (1034); the second queues behind it: 1034 + 1002 = 2036.
    let act = waits
        .iter()
        .find(|w| w["tid"] == Engine::Act as u64)
        .expect("ACT waits");
    assert_eq!((num(act, "ts"), num(act, "dur")), (0.0, 2.036));
    assert_eq!(
        act["args"]["released_by"],
        "sp DMA_MEMCPY at 64 (DMA transfer)"
    );
    assert_eq!(m.timeline().unwrap().end(), 2036 + cost::ISSUE_CYCLES);
}

/// The flow (start tid, end tid) whose end lands in `wait`'s last cycle.
fn release_flow(evs: &[Value], wait: &Value) -> (u64, u64) {
    let last = num(wait, "ts") + num(wait, "dur") - 0.001;
    let f = evs
        .iter()
        .find(|e| {
            e["ph"] == "f"
                && e["cat"] == "release"
                && e["tid"] == wait["tid"]
                && (num(e, "ts") - last).abs() < 1e-9
        })
        .expect("a release flow ends in the wait");
    let s = evs
        .iter()
        .find(|e| e["ph"] == "s" && e["id"] == f["id"])
        .expect("its start");
    (s["tid"].as_u64().unwrap(), f["tid"].as_u64().unwrap())
}

#[test]
fn example_shows_pool_waiting_for_sp_dma_and_act_for_pool() {
    let (m, json) = run_timeline(&example());
    let evs = events(&json);
    let waits = of_cat(&evs, "wait");
    assert_eq!(waits.len(), 2, "{waits:?}");
    // SP issues its DMA (32 cycles); the transfer of 128 × 16 fp32 = 8192
    // bytes takes 1000 + 8192 / 32 = 1256 cycles on SP's queue: sem[0] is
    // released at 1288. POOL waits from 0 to 1288.
    let pool = waits.iter().find(|w| w["tid"] == 2).expect("POOL waits");
    assert_eq!(pool["name"], "wait sem[0] >= 1");
    assert_eq!((num(pool, "ts"), num(pool, "dur")), (0.0, 1.288));
    assert_eq!(
        pool["args"]["released_by"],
        "sp DMA_MEMCPY at 0 (DMA transfer)"
    );
    assert_eq!(
        release_flow(&evs, pool),
        (9, 2),
        "from SP's DMA queue to POOL"
    );
    // POOL's two records then run back to back; ACT waits for the second.
    let pools: Vec<_> = of_cat(&evs, "record")
        .into_iter()
        .filter(|r| r["tid"] == 2)
        .collect();
    assert_eq!(pools.len(), 2);
    assert_eq!(num(pools[0], "ts"), 1.288);
    let pool_end = num(pools[1], "ts") + num(pools[1], "dur");
    let act = waits.iter().find(|w| w["tid"] == 1).expect("ACT waits");
    assert_eq!(act["name"], "wait sem[1] >= 2");
    assert_eq!(num(act, "ts"), 0.0);
    assert!((num(act, "dur") - pool_end).abs() < 1e-9);
    assert_eq!(act["args"]["released_by"], "pool POOL at 64");
    assert_eq!(release_flow(&evs, act), (2, 1), "from POOL to ACT");
    let t = m.timeline().unwrap().totals();
    assert_eq!(t[Engine::Pool as usize].wait_cycles, 1288);
    assert_eq!(t[Engine::Sp as usize].dma_cycles, 1256);
    assert_eq!(t[Engine::Pe as usize], Default::default());
}

/// `write_json` hands its writer pieces of about `JSON_PIECE` bytes, never
/// the whole document, and the pieces are `to_json`'s bytes: here a loop of
/// 5,000 turns (its records' disassembly copied from the first turn).
#[test]
fn the_json_is_written_in_pieces() {
    use tpb_emu::runtime::timeline::JSON_PIECE;
    struct Pieces(Vec<Vec<u8>>);
    impl std::io::Write for Pieces {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.push(buf.to_vec());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut p = Program::new(Arch::Cayman);
    p.set_stream(
        Engine::Dve,
        &[
            mov32(0, 5_000),
            ctrl_al(tpb_emu::isa::control::alu::SUB, 0, 0, 1),
            compare_branch(cmp::GTIMM, 0, 0, BranchTarget::Rel(-64)),
        ],
    );
    let (m, json) = run_timeline(&p);
    assert!(json.len() > 2 * JSON_PIECE, "only {} bytes", json.len());
    let mut out = Pieces(Vec::new());
    let t = m.timeline().expect("attached");
    t.write_json(m.staged(), &mut out).expect("writes");
    assert!(out.0.len() >= 3, "{} pieces", out.0.len());
    // One event at most past the piece size.
    assert!(out.0.iter().all(|b| b.len() < JSON_PIECE + 4096));
    assert!(out.0.concat() == json, "the pieces differ from to_json");
    assert_eq!(of_cat(&events(&json), "record").len(), 1 + 2 * 5_000);
}

#[test]
fn same_program_same_file() {
    for p in [example(), looping()] {
        let (_, a) = run_timeline(&p);
        let (_, b) = run_timeline(&p);
        assert_eq!(a, b);
    }
}

struct Lines(Vec<String>);

impl Trace for Lines {
    fn line(&mut self, line: &str) {
        self.0.push(line.to_string());
    }
}

#[test]
fn the_recorder_leaves_the_order_of_execution_unchanged() {
    for p in [example(), looping()] {
        let staged = stage(&p).expect("stages");
        let mut plain = Machine::new(staged.clone());
        let mut lines_plain = Lines(vec![]);
        plain
            .run(&mut CpuExecutor::default(), &mut lines_plain)
            .unwrap();
        let mut timed = Machine::new(staged);
        timed.record_timeline(true);
        let mut lines_timed = Lines(vec![]);
        timed
            .run(&mut CpuExecutor::default(), &mut lines_timed)
            .unwrap();
        assert!(lines_plain.0.len() > 3);
        assert_eq!(lines_plain.0, lines_timed.0);
        assert_eq!(plain.dram(), timed.dram());
        assert_eq!(plain.executed(), timed.executed());
    }
}

#[test]
fn totals_only_keeps_no_slices() {
    let mut m = Machine::new(stage(&example()).unwrap());
    m.record_timeline(false);
    m.run(&mut CpuExecutor::default(), &mut NoTrace).unwrap();
    let t = m.timeline().unwrap();
    assert!(t.slices().is_empty());
    assert_eq!(t.totals()[Engine::Pool as usize].wait_cycles, 1288);
}

#[test]
fn cli_writes_the_timeline_and_the_json_totals() {
    let dir = tempfile::tempdir().unwrap();
    let tl = dir.path().join("t.json");
    let run = |tl: &Path| {
        tpb(&[
            "run",
            EXAMPLE,
            "--backend",
            "cpu",
            "--out",
            dir.path().join("out").to_str().unwrap(),
            "--timeline",
            tl.to_str().unwrap(),
            "--json",
        ])
    };
    let out = run(&tl);
    assert!(out.status.success(), "{out:?}");
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["engines"]["pool"]["records"], 2);
    assert_eq!(summary["engines"]["pool"]["wait_cycles"], 1288);
    assert_eq!(summary["engines"]["sp"]["busy_cycles"], 32);
    assert_eq!(summary["timeline"], tl.to_str().unwrap());
    let first = std::fs::read(&tl).unwrap();
    check_format(&events(&first));
    let tl2 = dir.path().join("t2.json");
    assert!(run(&tl2).status.success());
    assert_eq!(first, std::fs::read(&tl2).unwrap(), "deterministic");
    // The same file as the library writes.
    assert_eq!(first, run_timeline(&example()).1);
    // The clock does not depend on the backend.
    if common::gpu().is_some() {
        let tl3 = dir.path().join("t3.json");
        let out = tpb(&[
            "run",
            EXAMPLE,
            "--backend",
            "gpu",
            "--out",
            dir.path().join("out-gpu").to_str().unwrap(),
            "--timeline",
            tl3.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{out:?}");
        assert_eq!(first, std::fs::read(&tl3).unwrap(), "gpu backend");
    }
}

#[test]
fn cli_refuses_a_timeline_over_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("program");
    std::fs::create_dir(&copy).unwrap();
    for f in std::fs::read_dir("examples/program").unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, copy.join(f.file_name().unwrap())).unwrap();
    }
    let manifest = copy.join("program.toml");
    let before = std::fs::read(copy.join("x.npy")).unwrap();
    let out = tpb(&[
        "run",
        manifest.to_str().unwrap(),
        "--backend",
        "cpu",
        "--out",
        dir.path().join("out").to_str().unwrap(),
        "--timeline",
        copy.join("x.npy").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(std::fs::read(copy.join("x.npy")).unwrap(), before);
    // A path that is a folder: an error, no panic, no outputs.
    let out = tpb(&[
        "run",
        manifest.to_str().unwrap(),
        "--backend",
        "cpu",
        "--out",
        dir.path().join("out").to_str().unwrap(),
        "--timeline",
        copy.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    assert!(!dir.path().join("out").exists(), "outputs only on success");
}

#[test]
fn the_picture_shows_the_waits_the_dma_and_the_flow() {
    use tpb_emu::viz::timeline::{DMA, FLOW, NAMES_W, ROW_H, WAIT, draw_timeline};
    let (m, _) = run_timeline(&example());
    let t = m.timeline().unwrap();
    let img = draw_timeline(t, m.staged(), 1200);
    // PE, ACT, POOL, DVE, SP, DMA ACT, DMA SP and the axis.
    assert_eq!(img.dimensions(), (1200, 7 * ROW_H + 20));
    assert_eq!(t.end(), 3552);
    let x = |c: u64| NAMES_W + (c * (1200 - NAMES_W as u64 - 8) / 3552) as u32;
    let mid = |row: u32| row * ROW_H + ROW_H / 2;
    // POOL (row 2) waits from 0 to 1288; SP's transfer (row 6) runs 32..1288.
    assert_eq!(*img.get_pixel(x(644), mid(2)), WAIT);
    assert_eq!(*img.get_pixel(x(660), mid(6)), DMA);
    // Nothing on PE (row 0) or DVE (row 3).
    assert!((NAMES_W..1200).all(|px| *img.get_pixel(px, mid(3)) != DMA));
    // The release flow crosses SP's row (4) at the end of the transfer.
    let at = x(1288) - 1;
    assert!(
        (at - 1..=at + 1).any(|px| *img.get_pixel(px, mid(4)) == FLOW),
        "the flow from SP's DMA to POOL"
    );
    // Degenerate inputs draw without panicking.
    let empty = tpb_emu::runtime::timeline::Timeline::new(false);
    let small = draw_timeline(&empty, m.staged(), 0);
    assert_eq!(small.height(), 5 * ROW_H + 20);
}

#[test]
fn a_neff_run_writes_the_same_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let neff = dir.path().join("m.neff");
    let o = tpb(&["pack", EXAMPLE, "-o", neff.to_str().unwrap()]);
    assert!(o.status.success(), "{o:?}");
    let tl = dir.path().join("t.json");
    let x = dir.path().join("x.npy");
    std::fs::copy("examples/program/x.npy", &x).unwrap();
    let input = format!("x={}", x.display());
    let run = |timeline: &Path| {
        tpb(&[
            "run",
            neff.to_str().unwrap(),
            "--input",
            &input,
            "--backend",
            "cpu",
            "--out",
            dir.path().join("out").to_str().unwrap(),
            "--timeline",
            timeline.to_str().unwrap(),
            "--json",
        ])
    };
    let o = run(&tl);
    assert!(o.status.success(), "{o:?}");
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["engines"]["act"]["wait_cycles"], 1392);
    assert_eq!(summary["virtual_cycles"], 3552);
    let from_neff = events(&std::fs::read(&tl).unwrap());
    check_format(&from_neff);
    // The same slices and flows as the manifest's run (pack renumbers the
    // variables, so only the DMA records' disassembly differs).
    let strip = |evs: Vec<Value>| -> Vec<Value> {
        evs.into_iter()
            .map(|mut e| {
                if let Some(a) = e["args"].as_object_mut() {
                    a.remove("disasm");
                    a.remove("transfer");
                }
                e
            })
            .collect()
    };
    assert_eq!(strip(from_neff), strip(events(&run_timeline(&example()).1)));
    // An --input file is never overwritten.
    let before = std::fs::read(&x).unwrap();
    let o = run(&x);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert_eq!(std::fs::read(&x).unwrap(), before);
}
