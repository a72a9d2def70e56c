//! `tpb-emu run MODEL.neff --input NAME=FILE.npy … [--out DIR] [--backend B]`
//! (SPEC-NEFF §5, §6; NEFF-EC-16, NEFF-EC-18).
//!
//! In this order: reads the NEFF (steps 1–13 and the I/O binding; exit 4),
//! checks the `--input` names (a missing, unknown or repeated name, or one
//! without `=`: exit 2), reads the `--input` files (dtype and shape of the
//! bound variable; exit 4), expands, lowers, validates and stages (exit 3, or
//! 4 for a variable the program model cannot hold), runs (exit 1), and writes
//! every output as `DIR/<name>.npy`.

use super::CliError;
use super::backend::Backend;
use super::neff::{NeffFlags, load, map_error};
use crate::device::NoTrace;
use crate::device::gpu::BackendChoice;
use crate::isa::enums::Engine;
use crate::limits::Arch;
use crate::neff::lower::{Expanded, program};
use crate::npy::{ElemKind, npy_descr, read_npy, write_npy};
use crate::runtime::{Machine, Role, StageError, stage};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// The arguments of `run MODEL.neff`.
#[derive(Clone, Debug)]
pub struct NeffRunArgs {
    /// The NEFF.
    pub model: PathBuf,
    /// `NAME=FILE.npy`, one per public input.
    pub inputs: Vec<String>,
    /// Where outputs go.
    pub out: PathBuf,
    /// Which backend executes Pool records.
    pub backend: BackendChoice,
    /// Print the summary as one JSON object.
    pub json: bool,
    /// The record budget.
    pub max_records: u64,
    /// `--arch` (NEFF-EC-17).
    pub arch: Option<Arch>,
    /// `--no-verify`, `--strict`.
    pub flags: NeffFlags,
    /// Where the run's timeline is written (`--timeline`, as for a manifest).
    pub timeline: Option<PathBuf>,
}

/// The engine and expanded-stream offset a staging error names.
fn where_(e: &StageError) -> Option<(Engine, usize)> {
    match e {
        StageError::Invalid { engine, record } => Some((*engine, record.offset)),
        StageError::Footprint { engine, offset, .. } => Some((*engine, *offset)),
        StageError::Lower { engine, rejected } => Some((*engine, rejected.offset)),
        StageError::InLowered { original, source } => where_(source).map(|(e, _)| (e, *original)),
        _ => None,
    }
}

/// A staging error, with the NEFF stream offset when an expansion moved records.
pub fn stage_error(e: StageError, streams: &[Expanded]) -> CliError {
    let mut m = e.to_string();
    if let Some((engine, at)) = where_(&e) {
        let x = &streams[engine as usize];
        if !x.origin.is_empty() {
            m.push_str(&format!(
                " [NEFF {engine} stream offset {}]",
                x.original(at)
            ));
        }
    }
    if e.is_bad_input() {
        CliError::BadInput(m)
    } else {
        CliError::InvalidProgram(m)
    }
}

/// NEFF-EC-18: the `--input` pairs, checked against the public inputs (exit 2).
fn input_names(
    given: &[String],
    wanted: &[crate::neff::IoTensor],
) -> Result<Vec<(String, PathBuf)>, CliError> {
    let mut pairs: Vec<(String, PathBuf)> = Vec::new();
    for g in given {
        let Some((name, file)) = g.split_once('=') else {
            return Err(CliError::Usage(format!(
                "--input {g}: expected NAME=FILE.npy"
            )));
        };
        if !wanted.iter().any(|t| t.name == name) {
            let names: Vec<&str> = wanted.iter().map(|t| t.name.as_str()).collect();
            return Err(CliError::Usage(format!(
                "--input {name}: the NEFF has no input of that name (inputs: {})",
                names.join(", ")
            )));
        }
        if pairs.iter().any(|p| p.0 == name) {
            return Err(CliError::Usage(format!("--input {name} is given twice")));
        }
        pairs.push((name.to_string(), PathBuf::from(file)));
    }
    for t in wanted {
        if !pairs.iter().any(|p| p.0 == t.name) {
            return Err(CliError::Usage(format!(
                "missing --input {}=FILE.npy",
                t.name
            )));
        }
    }
    Ok(pairs)
}

/// Runs `run MODEL.neff`.
pub fn run(args: &NeffRunArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let start = Instant::now();
    let n = load(&args.model, &args.flags, args.arch)?;
    let pairs = input_names(&args.inputs, &n.inputs)?;
    if let Some(t) = &args.timeline {
        let mut inputs = vec![super::named("the model", &args.model)];
        inputs.extend(pairs.iter().map(|(_, f)| super::named("an --input", f)));
        super::check_paths(&inputs, &[super::named("--timeline", t)])?;
    }
    let mut data = HashMap::new();
    for (name, file) in &pairs {
        let v = n.var(name).expect("bound by the reader");
        let shape = if v.shape.is_empty() {
            vec![1]
        } else {
            v.shape.clone()
        };
        let npy = read_npy(file)?;
        let descr = npy_descr(v.dtype);
        let kind = match descr.as_bytes().get(1) {
            Some(b'f') => ElemKind::Float,
            Some(b'i') => ElemKind::Int,
            _ => ElemKind::Uint,
        };
        let size: usize = descr[2..].parse().unwrap_or(0);
        if npy.kind != kind || npy.elem != size {
            return Err(CliError::BadInput(format!(
                "--input {name}: {} holds {}, the input needs {descr} ({})",
                file.display(),
                npy.descr,
                v.dtype
            )));
        }
        if npy.shape != shape {
            return Err(CliError::BadInput(format!(
                "--input {name}: {} has shape {:?}, the input needs {:?}",
                file.display(),
                npy.shape,
                shape
            )));
        }
        data.insert(name.clone(), npy.data);
    }
    let mapped = program(&n, &data).map_err(map_error)?;
    let staged = stage(&mapped.program).map_err(|e| stage_error(e, &mapped.streams))?;
    let stage_s = start.elapsed().as_secs_f64();
    let backend = Backend::open(args.backend)?;
    let mut exec = backend.executor(staged.arch())?;
    let mut machine = Machine::new(staged);
    machine.set_max_records(args.max_records);
    // Only DRAM (the output variables) is read after the run.
    machine.set_dram_only(true);
    if args.json || args.timeline.is_some() {
        machine.record_timeline(args.timeline.is_some());
    }
    let run_start = Instant::now();
    machine
        .run(exec.as_mut(), &mut NoTrace)
        .map_err(|e| CliError::Exec(e.to_string()))?;
    let run_s = run_start.elapsed().as_secs_f64();
    std::fs::create_dir_all(&args.out).map_err(|source| CliError::Io {
        path: args.out.clone(),
        source,
    })?;
    let mut written = Vec::new();
    for v in mapped
        .program
        .variables
        .iter()
        .filter(|v| v.role == Role::Output)
    {
        let bytes = machine
            .variable(&v.name)
            .ok_or_else(|| CliError::Exec(format!("output `{}` was not staged", v.name)))?;
        let path = args.out.join(format!("{}.npy", v.name));
        write_npy(&path, v.dtype, &v.shape, bytes)?;
        written.push(serde_json::json!({
            "name": v.name, "dtype": v.dtype.to_string(), "shape": v.shape,
            "path": path.display().to_string(),
        }));
    }
    if let Some(t) = &args.timeline {
        let mut outs = crate::files::Outputs::new();
        super::run::write_timeline(&machine, Some(t), &mut outs)?;
        outs.commit()?;
    }
    let ex = machine.executed();
    let io = |e: std::io::Error| CliError::Exec(format!("stdout: {e}"));
    if args.json {
        let s = serde_json::json!({
            "model": args.model.display().to_string(),
            "arch": n.arch.name(),
            "backend": backend.describe(),
            "records": {"pe": ex[0], "act": ex[1], "pool": ex[2], "dve": ex[3], "sp": ex[4]},
            "total_records": machine.total_executed(),
            "engines": super::run::Engines::of(&machine),
            "virtual_cycles": machine.timeline().map_or(0, |t| t.end()),
            "stage_s": stage_s,
            "run_s": run_s,
            "wall_s": start.elapsed().as_secs_f64(),
            "outputs": written,
        });
        return writeln!(out, "{s}").map_err(io);
    }
    writeln!(
        out,
        "ok: {} ({}, {})",
        args.model.display(),
        n.arch.name(),
        backend.describe()
    )
    .map_err(io)?;
    writeln!(
        out,
        "records executed: pe {}, act {}, pool {}, dve {}, sp {} (total {})",
        ex[0],
        ex[1],
        ex[2],
        ex[3],
        ex[4],
        machine.total_executed()
    )
    .map_err(io)?;
    for w in &written {
        writeln!(
            out,
            "wrote {} ({} {})",
            w["path"].as_str().unwrap_or(""),
            w["dtype"].as_str().unwrap_or(""),
            w["shape"]
        )
        .map_err(io)?;
    }
    Ok(())
}
