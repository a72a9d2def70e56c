//! `tpb-emu why SOURCE OUTPUT[INDEX] [--input NAME=FILE.npy]... [--backend B] [--json] [--max-records N] [--max-work N]`
//!
//! Runs the program (a manifest or a NEFF, through the model API like
//! `run`) with write tracking and prints the chain backwards from one
//! element of an output: the record that wrote it, the elements that record
//! read (with their values), the record that wrote those, and so on back to
//! an input's element, a constant (Iota) or "never written"
//! ([`crate::model::why`], [`crate::runtime::why`]). `--json` prints the
//! same as one object. Writes no file. An unknown output (or one a NEFF does
//! not have), an index of the wrong rank or out of range, or a malformed
//! `OUTPUT[INDEX]`: exit 2.

use super::backend::Backend;
use super::neff::NeffFlags;
use super::{CliError, check_paths, named};
use crate::device::gpu::BackendChoice;
use crate::limits::Arch;
use crate::model::why::{Why, why};
use crate::model::{LoadOptions, Model, RunOptions, is_neff};
use crate::npy::read_npy;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

/// The arguments of `why`.
#[derive(Clone, Debug)]
pub struct WhyArgs {
    /// The manifest or `.neff`.
    pub source: PathBuf,
    /// `OUTPUT[I,J,...]`.
    pub element: String,
    /// `NAME=FILE.npy` pairs, as `run` takes them.
    pub inputs: Vec<String>,
    /// NEFF only: `--arch`.
    pub arch: Option<Arch>,
    /// NEFF only: `--no-verify`, `--strict`.
    pub flags: NeffFlags,
    /// The backend whose outputs are explained.
    pub backend: BackendChoice,
    /// Print one JSON object.
    pub json: bool,
    /// The record budget.
    pub max_records: u64,
    /// The work budget.
    pub max_work: u64,
}

/// Parses `NAME[I,J,...]` (NumPy order; a scalar output is `NAME[0]`).
pub fn parse_element(s: &str) -> Result<(String, Vec<u64>), CliError> {
    let bad = || {
        CliError::Usage(format!(
            "{s:?}: expected OUTPUT[INDEX], e.g. y[0,3,5,7] (an output's name and one element's \
             index per axis, NumPy order)"
        ))
    };
    let (name, rest) = s.split_once('[').ok_or_else(bad)?;
    let inner = rest.strip_suffix(']').ok_or_else(bad)?;
    if name.is_empty() || inner.trim().is_empty() {
        return Err(bad());
    }
    let index = inner
        .split(',')
        .map(|p| p.trim().parse::<u64>().map_err(|_| bad()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((name.to_string(), index))
}

/// Runs `why`.
pub fn run(args: &WhyArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (name, index) = parse_element(&args.element)?;
    if args.arch.is_some() && !is_neff(&args.source) {
        return Err(CliError::Usage(
            "--arch is for a .neff; a manifest names its arch".into(),
        ));
    }
    let opts = LoadOptions {
        verify: !args.flags.no_verify,
        strict: args.flags.strict,
        arch: args.arch,
    };
    let model = Model::open(&args.source, &opts)?;
    for w in model.warnings() {
        eprintln!("tpb-emu: warning: {}: {w}", args.source.display());
    }
    // The element is checked before anything runs (exit 2).
    crate::model::why::element_place(&model, &name, &index)?;
    let pairs = super::run::input_pairs(&args.inputs, &model)?;
    let mut read: Vec<_> = model
        .files()
        .iter()
        .map(|p| named("a program file", p))
        .collect();
    read.extend(pairs.iter().map(|(n, f)| named(format!("--input {n}"), f)));
    check_paths(&read, &[])?;
    let mut data = HashMap::new();
    for (n, file) in &pairs {
        let npy = read_npy(file)?;
        model.check_array(n, file, &npy)?;
        data.insert(n.clone(), npy.data);
    }
    let backend = Backend::open_for(args.backend, model.needs_device())?;
    let mut exec = backend.executor(model.arch())?;
    let ropts = RunOptions {
        max_records: args.max_records,
        max_work: args.max_work,
        ..RunOptions::default()
    };
    let w = why(&model, &data, &name, &index, exec.as_mut(), &ropts)?;
    print(&w, args.json, out).map_err(CliError::Stdout)
}

fn print(w: &Why, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    if json {
        let line = serde_json::to_string(w).map_err(std::io::Error::other)?;
        return writeln!(out, "{line}");
    }
    out.write_all(w.text().as_bytes())
}
