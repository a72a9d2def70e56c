//! What the run timeline costs (`tpb-emu run --timeline`, src/runtime/timeline.rs).
//!
//! The program of 100,000 control and DMA records from `benches/programs.rs`
//! (SP DMAs a 64-byte row into SBUF, ACT waits for it and DMAs it back, both
//! update registers and semaphores), run on the CPU in this process:
//!
//! 1. without a recorder;
//! 2. with the totals-only recorder (`run` always attaches one for `--json`'s
//!    `engines`);
//! 3. with the full recorder (every slice kept), no JSON;
//! 4. the same, then the JSON made as `--timeline` makes it (slices,
//!    disassembly, flows), in pieces of `JSON_PIECE` bytes handed to a
//!    writer that counts them (no file).
//!
//! Times are medians. The overhead of each row is given over the run alone
//! and over staging + run (what `tpb-emu run` does before writing its
//! outputs, manifest load excluded). The goal is at most 20%.
//! `cargo bench --bench timeline` (`TIMELINE_BENCH_MS` sets the time budget
//! per row, default 1500).

mod common;
use common::time;
use std::sync::Arc;
use std::time::Duration;
use tpb_emu::device::{CpuExecutor, NoTrace};
use tpb_emu::isa::control::alu;
use tpb_emu::isa::enums::{Dtype, Engine, UpdateMode, WaitMode};
use tpb_emu::isa::tensor::Region;
use tpb_emu::limits::Arch;
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::{Machine, Program, Staged, Variable, stage};

const ROWS: u32 = 12_500; // 4 records per row and engine: 100,000 records

/// 100,000 control and DMA records on SP and ACT (as in benches/programs.rs).
fn control_and_dma() -> Program {
    let lane = (1 << 18) / 4;
    let mut sp = Vec::new();
    let mut act = Vec::new();
    for k in 0..ROWS {
        let part = k % 128;
        let row = (k % 256) * 64;
        sp.push(dma_memcpy(
            contiguous(var(1, row), 16, 4),
            contiguous(on_chip(Region::Sbuf.addr(part, (k / 128 % 8) * 64)), 16, 4),
            Dtype::FP32,
            Dtype::FP32,
            0,
            1,
        ));
        sp.push(mov32(1, k));
        sp.push(ctrl_al(alu::ADD, 2, 1, 3));
        sp.push(drain());
        act.push(event_semaphore(ev_wait(WaitMode::SEM_GE, 0, k + 1)));
        act.push(dma_memcpy(
            walk(
                on_chip(Region::Sbuf.addr(part, (k / 128 % 8) * 64)),
                [1, lane],
                [16, 1],
                4,
            ),
            contiguous(var(2, row), 16, 4),
            Dtype::FP32,
            Dtype::FP32,
            1,
            1,
        ));
        act.push(mov32(3, k));
        act.push(with_events(
            ctrl_al(alu::SUB, 4, 3, 1),
            ev_update(UpdateMode::SEM_INC, 2, 0),
        ));
    }
    let mut p = Program::new(Arch::Cayman);
    p.set_stream(Engine::Sp, &sp)
        .set_stream(Engine::Act, &act)
        .add(Variable::input(
            "x",
            1,
            Dtype::FP32,
            &[256, 16],
            (0..256 * 16u32)
                .flat_map(|v| (v as f32).to_le_bytes())
                .collect(),
        ))
        .add(Variable::output("y", 2, Dtype::FP32, &[256, 16]));
    p
}

/// How much of the timeline a run makes.
#[derive(Clone, Copy, PartialEq)]
enum Recorder {
    None,
    Totals,
    Slices,
    Json,
}

/// A writer that keeps only the number of bytes written.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += std::hint::black_box(buf).len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs `staged` with `recorder`; the JSON's length, or the records run.
fn run(staged: &Arc<Staged>, recorder: Recorder) -> usize {
    let mut m = Machine::new(Arc::clone(staged));
    if recorder != Recorder::None {
        m.record_timeline(recorder != Recorder::Totals);
    }
    m.run(&mut CpuExecutor::default(), &mut NoTrace)
        .expect("runs");
    match (recorder, m.timeline()) {
        (Recorder::Json, Some(t)) => {
            // As `run --timeline` writes it, in pieces (here counted, not kept).
            let mut bytes = Counted(0);
            t.write_json(m.staged(), &mut bytes).expect("counts");
            bytes.0
        }
        _ => m.total_executed() as usize,
    }
}

fn main() {
    let budget = Duration::from_millis(
        std::env::var("TIMELINE_BENCH_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1500),
    );
    let p = control_and_dma();
    let stage_s = time(budget, || {
        std::hint::black_box(stage(&p).expect("stages"));
    });
    let staged = Arc::new(stage(&p).expect("stages"));
    let mut bytes = 0;
    let plain = time(budget, || {
        std::hint::black_box(run(&staged, Recorder::None));
    });
    let totals = time(budget, || {
        std::hint::black_box(run(&staged, Recorder::Totals));
    });
    let slices = time(budget, || {
        std::hint::black_box(run(&staged, Recorder::Slices));
    });
    let full = time(budget, || bytes = run(&staged, Recorder::Json));
    println!(
        "{:<46} {:>9} {:>12} {:>16}",
        "100,000 control + DMA records (SP, ACT), cpu", "ms", "over run", "over stage+run"
    );
    let row = |name: &str, s: f64| {
        println!(
            "{name:<46} {:>9.3} {:>11.1}% {:>15.1}%",
            s * 1e3,
            (s / plain - 1.0) * 100.0,
            (s - plain) / (stage_s + plain) * 100.0
        );
    };
    println!("{:<46} {:>9.3}", "staging (load excluded)", stage_s * 1e3);
    row("run, no recorder", plain);
    row("run, totals-only recorder (run --json)", totals);
    row("run, full recorder (slices kept, no JSON)", slices);
    row("run + timeline JSON (run --timeline)", full);
    println!("{:<46} {:>9.1} MB of JSON", "", bytes as f64 / 1e6);
}
