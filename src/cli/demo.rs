//! `tpb-emu demo [--out DIR] [--backend B]`: the main job on a built-in example.
//!
//! It validates the seed's 4×4 → 2×2 example records, then runs the front
//! end's built-in example end to end (see [`crate::frontend::demo`]): a
//! 128-channel feature map derived from a built-in image, pooled in several
//! max/avg/indices configurations as whole TPB programs (DMA in, Pool and
//! MaxPoolSelect, DMA out). Each result is checked bit for bit against a
//! plain reference computed directly on the array, and — when a GPU ran it —
//! against the CPU backend. PNGs of the image, the feature map, every output
//! and every argmax map go to `DIR` (default `./tpb-emu-demo`). Exit 1 when a
//! check fails.

use super::CliError;
use super::backend::Backend;
use super::pool::BackendOpt;
use crate::frontend::demo as fd;
use crate::isa::enums::{Engine, PoolFunc};
use crate::isa::record::Record;
use crate::isa::samples::{seed_max_pool_select, seed_pool};
use crate::isa::stream::to_bytes;
use crate::isa::text::disasm_stream;
use crate::isa::validate::{Target, validate_stream};
use crate::viz;
use std::io::Write;
use std::path::PathBuf;

/// The default output folder.
pub const DEFAULT_OUT: &str = "tpb-emu-demo";

/// The arguments of `demo`.
#[derive(Clone, Debug, clap::Args)]
pub struct DemoArgs {
    /// Where the PNGs go.
    #[arg(long, default_value = DEFAULT_OUT)]
    pub out: PathBuf,
    /// Which backend executes Pool records.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendOpt,
}

/// The seed's example stream.
pub fn example_stream() -> Vec<Record> {
    vec![
        seed_pool(PoolFunc::MAX_POOL, 128).encode(),
        seed_pool(PoolFunc::AVG_POOL, 128).encode(),
        seed_max_pool_select(128).encode(),
    ]
}

fn exec_err(e: impl std::fmt::Display) -> CliError {
    CliError::Exec(e.to_string())
}

/// Runs the demo.
pub fn run(a: &DemoArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let mut w = |s: String| writeln!(out, "{s}").map_err(CliError::Stdout);
    let bytes = to_bytes(&example_stream());
    let target = Target::default();
    let n = validate_stream(&bytes, target).map_err(exec_err)?;
    w("tpb-emu demo\n\n1. The seed's 4x4 -> 2x2 example as records:".into())?;
    w(disasm_stream(&bytes)
        .map_err(exec_err)?
        .trim_end()
        .to_string())?;
    w(format!(
        "   {n} records valid on the {} engine ({})",
        target.engine,
        target.arch.name()
    ))?;

    // The pictures appear together, and only when the whole demo succeeded.
    let outs = std::cell::RefCell::new(crate::files::Outputs::new());
    outs.borrow_mut().create_dir(&a.out)?;
    let save = |img: &image::RgbImage, name: &str| -> Result<PathBuf, CliError> {
        let p = a.out.join(name);
        outs.borrow_mut().write(&p, &super::png_bytes(img, &p)?)?;
        Ok(p)
    };
    let backend = Backend::open(a.backend.into())?;
    let cross = !matches!(backend, Backend::Cpu);
    w(format!(
        "\n2. A built-in {s}x{s} image -> a {c}-channel feature map -> pooling programs on {}:",
        backend.describe(),
        s = fd::SIDE,
        c = fd::CHANNELS
    ))?;
    let img = viz::rgb_image(&fd::image(), fd::SIDE, 4);
    w(format!("   wrote {}", save(&img, "image.png")?.display()))?;
    let features = fd::feature_map(1);
    let pic = viz::tensor_montage(&features, &viz::Options::default()).map_err(CliError::Draw)?;
    w(format!(
        "   wrote {} (the feature map, 1x128x48x48 fp32)",
        save(&pic, "features.png")?.display()
    ))?;
    let mut failed = Vec::new();
    for cfg in fd::configs() {
        let mut exec = backend.executor(crate::limits::Arch::default())?;
        let o = fd::run_config(cfg, exec.as_mut(), cross).map_err(exec_err)?;
        let c = &o.compiled;
        w(format!(
            "\n   {}: {:?} -> {:?}",
            cfg.about, o.input.shape, o.result.output.shape
        ))?;
        w(format!(
            "     program: {} DMA-in, {} Pool/MaxPoolSelect, {} DMA-out records in {} bands; ran in {:.1} ms",
            c.program.stream(Engine::Sp).len() / 64,
            c.pool_records,
            c.program.stream(Engine::Act).len() / 64,
            c.bands,
            o.run_s * 1e3
        ))?;
        let first = disasm_stream(&c.program.stream(Engine::Pool)[..64]).map_err(exec_err)?;
        w(format!("     first record: {}", first.trim_end()))?;
        let mut check = format!(
            "     check vs plain reference: {}",
            if o.matches_reference {
                "identical"
            } else {
                "MISMATCH"
            }
        );
        if let Some(m) = o.matches_cpu {
            check += &format!(
                "; vs CPU backend: {}",
                if m { "identical" } else { "MISMATCH" }
            );
        }
        w(check)?;
        let pic = viz::tensor_montage(&o.result.output, &viz::Options::default())
            .map_err(CliError::Draw)?;
        w(format!(
            "     wrote {}",
            save(&pic, &format!("{}.png", cfg.name))?.display()
        ))?;
        if let Some(idx) = &o.result.indices {
            let map = viz::indices_map(&c.plan, idx).map_err(CliError::Draw)?;
            w(format!(
                "     wrote {} (argmax map: colour = winning tap of each window)",
                save(&map, &format!("{}_indices.png", cfg.name))?.display()
            ))?;
        }
        if !o.ok() {
            failed.push(cfg.name);
        }
    }
    if failed.is_empty() {
        outs.into_inner().commit()?;
        w(format!(
            "\nall {} configurations match the reference",
            fd::configs().len()
        ))
    } else {
        Err(CliError::DemoFailed(failed))
    }
}
