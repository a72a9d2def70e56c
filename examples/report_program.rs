//! Writes the 100,000-record program of `benches/programs.rs` (control and
//! DMA records on SP and ACT, semaphores between them) as a manifest with
//! its streams, for the run report's benchmark (docs/debugging.md):
//!
//! ```sh
//! cargo run --release --example report_program -- /tmp/big
//! tpb-emu run /tmp/big/program.toml --backend cpu --report /tmp/big.html
//! ```

use tpb_emu::files::Outputs;
use tpb_emu::isa::control::alu;
use tpb_emu::isa::enums::{Dtype, Engine, UpdateMode, WaitMode};
use tpb_emu::isa::tensor::Region;
use tpb_emu::limits::Arch;
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::{Program, Variable};

/// Rows of the benchmark's program: 4 records per row and engine, 100,000 records.
const ROWS: u32 = 12_500;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "report-program".into());
    let p = program(ROWS);
    let mut outs = Outputs::new();
    tpb_emu::frontend::emit::write_program_into(&p, dir.as_ref(), "report_program", &mut outs)
        .expect("writes the program");
    outs.commit().expect("writes the program");
    println!("wrote {dir}/program.toml (100,000 records on SP and ACT)");
}

/// The program of `rows` rows: `8 · rows` records, an input `x` and an output
/// `y` of 256×16 fp32 (4,096 elements). tests/commands/report.rs uses it for a
/// run over the report's record bound.
pub fn program(rows: u32) -> Program {
    let lane = (1 << 18) / 4;
    let (mut sp, mut act) = (Vec::new(), Vec::new());
    for k in 0..rows {
        let part = k % 128;
        let row = (k % 256) * 64;
        let chip = || on_chip(Region::Sbuf.addr(part, (k / 128 % 8) * 64));
        sp.push(dma_memcpy(
            contiguous(var(1, row), 16, 4),
            contiguous(chip(), 16, 4),
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
            walk(chip(), [1, lane], [16, 1], 4),
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
    let x = (0..256 * 16u32)
        .flat_map(|v| (v as f32).to_le_bytes())
        .collect();
    p.set_stream(Engine::Sp, &sp)
        .set_stream(Engine::Act, &act)
        .add(Variable::input("x", 1, Dtype::FP32, &[256, 16], x))
        .add(Variable::output("y", 2, Dtype::FP32, &[256, 16]));
    p
}
