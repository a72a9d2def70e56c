//! A picture of a program's timeline:
//! `cargo run --release --example timeline [PROGRAM.toml] [OUT.png]`
//! (defaults: `examples/program/program.toml`, `docs/timeline.png`).
//!
//! Runs the program on the CPU with the timeline recorder
//! ([`tpb_emu::runtime::timeline`]) and draws it with
//! [`tpb_emu::viz::timeline::draw_timeline`]: the picture in docs/timeline.md.

use std::path::PathBuf;
use tpb_emu::device::{CpuExecutor, NoTrace};
use tpb_emu::runtime::{Machine, manifest, stage};
use tpb_emu::viz::{png_bytes, timeline::draw_timeline};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let program = args.next().map_or_else(
        || PathBuf::from("examples/program/program.toml"),
        PathBuf::from,
    );
    let out = args
        .next()
        .map_or_else(|| PathBuf::from("docs/timeline.png"), PathBuf::from);
    let mut m = Machine::new(stage(&manifest::load(&program)?)?);
    m.record_timeline(true);
    m.run(&mut CpuExecutor::default(), &mut NoTrace)?;
    let t = m.timeline().ok_or("no timeline")?;
    let mut files = tpb_emu::files::Outputs::new();
    files.write(&out, &png_bytes(&draw_timeline(t, m.staged(), 1200))?)?;
    files.commit()?;
    println!("wrote {} ({} virtual cycles)", out.display(), t.end());
    Ok(())
}
