//! What every NEFF-reading command shares (SPEC-NEFF §6, NEFF-EC-16): reading
//! the file, the options `--no-verify` / `--strict` / `--arch`, and the
//! `.neff` forms of `validate`, `disasm` and `lower`.

use super::CliError;
use crate::isa::enums::Engine;
use crate::isa::validate::Target;
use crate::limits::Arch;
use crate::neff::lower::{TriggerRejected, expand};
use crate::neff::{self, Neff, Options};
use crate::runtime::lower::{LowerError, lower, validate_lowered};
use std::io::Write;
use std::path::Path;

/// The options of every command that reads a NEFF.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct NeffFlags {
    /// NEFF only: skip the MD5/SHA-256 check of the payload (NEFF-EC-2).
    #[arg(long)]
    pub no_verify: bool,
    /// NEFF only: enforce the runtime's CAYMAN state-buffer reservation rule (NEFF-EC-12).
    #[arg(long)]
    pub strict: bool,
}

pub use crate::model::is_neff;

/// Reads and checks a NEFF (SPEC-NEFF §6 steps 1–13); any failure exits 4.
/// Warnings go to stderr.
pub fn load(path: &Path, flags: &NeffFlags, arch: Option<Arch>) -> Result<Neff, CliError> {
    load_then(path, flags, arch, |_| ()).map(|(n, ())| n)
}

/// [`load`], then `f` on the NEFF while its digest may still be computing
/// (`neff::read_owned_then`).
fn load_then<R>(
    path: &Path,
    flags: &NeffFlags,
    arch: Option<Arch>,
    f: impl FnOnce(&Neff) -> R,
) -> Result<(Neff, R), CliError> {
    // Mapped and bounded (crate::files): a raw tar is read in place.
    let bytes = crate::files::map_input(path)?;
    let opts = Options {
        verify: !flags.no_verify,
        strict: flags.strict,
        arch,
        path: path.display().to_string(),
        ..Options::default()
    };
    let (n, r) = neff::read_owned_then(bytes, &opts, f).map_err(|source| CliError::Neff {
        path: path.to_owned(),
        source,
    })?;
    for w in &n.warnings {
        eprintln!("tpb-emu: warning: {}: {w}", path.display());
    }
    Ok((n, r))
}

/// A trigger rejection is an invalid program (exit 3).
pub fn rejected(e: TriggerRejected) -> CliError {
    CliError::Trigger(e)
}

fn engines(engine: Option<Engine>) -> Vec<Engine> {
    engine.map_or(Engine::ALL.to_vec(), |e| vec![e])
}

/// `validate MODEL.neff [--engine E]`: expands (NEFF-EC-4/5), lowers (SPEC §8)
/// and validates each chosen engine's stream for the NEFF's generation;
/// without `--engine`, every engine. Exit 3 on the first invalid record, in
/// engine order.
pub fn validate(
    path: &Path,
    engine: Option<Engine>,
    arch: Option<Arch>,
    flags: &NeffFlags,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let chosen = engines(engine);
    // Validated on every core, beside the digest; reported in engine order,
    // up to the first error.
    let (n, results) = load_then(path, flags, arch, |n| {
        crate::neff::lower::validate_engines(n, &chosen)
    })?;
    for (e, result) in chosen.into_iter().zip(results) {
        let count = result.map_err(|err| match err {
            crate::neff::lower::EngineInvalid::Trigger(t) => rejected(t),
            other => CliError::InvalidProgram(other.to_string()),
        })?;
        writeln!(
            out,
            "ok: {e}: {} records ({count} after lowering) valid on the {e} engine ({})",
            n.stream(e).len() / 64,
            n.arch.name()
        )
        .map_err(CliError::Stdout)?;
    }
    Ok(())
}

/// `disasm MODEL.neff [--engine E]`: the chosen engine's stream as stored
/// (before lowering); without `--engine`, every engine with records, each
/// after a `; <engine>: <member>` line.
pub fn disasm(
    path: &Path,
    engine: Option<Engine>,
    arch: Option<Arch>,
    flags: &NeffFlags,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let n = load(path, flags, arch)?;
    for e in engines(engine) {
        let s = n.stream(e);
        if engine.is_none() {
            if s.is_empty() {
                continue;
            }
            let m = n.engines[e as usize].bin.as_deref().unwrap_or("-");
            writeln!(out, "; {e}: {m}").map_err(CliError::Stdout)?;
        }
        let text = crate::isa::text::disasm_stream(s).expect("checked whole records");
        out.write_all(text.as_bytes()).map_err(CliError::Stdout)?;
    }
    Ok(())
}

/// `lower MODEL.neff --out DIR`: expands, lowers and validates every engine
/// stream, then writes each as `DIR/<engine>.bin` (only those: no
/// `program.toml` and no inputs, unlike `lower PROGRAM.toml`); an invalid lowered stream
/// (exit 3) writes nothing, and a `DIR/<engine>.bin` that is the model is
/// refused before anything runs (exit 2).
pub fn lower_cmd(
    path: &Path,
    dir: &Path,
    arch: Option<Arch>,
    flags: &NeffFlags,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let n = load(path, flags, arch)?;
    let files: Vec<_> = Engine::ALL
        .into_iter()
        .filter(|&e| !n.stream(e).is_empty())
        .map(|e| super::named("--out", &dir.join(format!("{e}.bin"))))
        .collect();
    super::check_paths(&[super::named("the model", path)], &files)?;
    let mut outs = crate::files::Outputs::new();
    outs.create_dir(dir)?;
    let mut next_addr = 0u64;
    let mut first_invalid = None;
    let mut lines = Vec::new();
    for e in Engine::ALL {
        if n.stream(e).is_empty() {
            continue;
        }
        let x = expand(&n, e).map_err(rejected)?;
        let mut l = lower(&x.bytes).map_err(|err| match err {
            LowerError::Malformed(source) => CliError::EngineStream {
                manifest: None,
                engine: e,
                source,
            },
            LowerError::Rejected(r) => CliError::InvalidProgram(format!(
                "{e} stream: {r} [NEFF offset {}]",
                x.original(r.offset)
            )),
        })?;
        next_addr = l.place(next_addr);
        outs.write(&dir.join(format!("{e}.bin")), l.bytes())?;
        lines.push(super::lower::summary(e, &l));
        if let Err(inv) = validate_lowered(
            &l,
            Target {
                engine: e,
                arch: n.arch,
            },
        ) {
            first_invalid.get_or_insert(format!(
                "{e} stream (lowered): {inv} [NEFF offset {}]",
                x.original(inv.original)
            ));
        }
    }
    for line in &lines {
        writeln!(out, "{line}").map_err(CliError::Stdout)?;
    }
    // As for a manifest: an invalid lowered stream writes nothing.
    if let Some(m) = first_invalid {
        return Err(CliError::InvalidProgram(m));
    }
    outs.commit()?;
    writeln!(
        out,
        "ok: lowered streams written to {} and valid ({})",
        dir.display(),
        n.arch.name()
    )
    .map_err(CliError::Stdout)
}
