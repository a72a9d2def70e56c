//! The NEFF side of `tpb-emu run MODEL.neff --input NAME=FILE.npy …`
//! (SPEC-NEFF §5, §6; NEFF-EC-16, NEFF-EC-18): what differs from a manifest
//! run is only how the program is read. [`load_inputs`] reads the NEFF (steps
//! 1–13 and the I/O binding; exit 4), checks the `--input` names (a missing,
//! unknown or repeated name, or one without `=`: exit 2) and reads the
//! `--input` files (dtype and shape of the bound variable; exit 4); the
//! mapping onto a program and everything after it (collision checks, budgets,
//! trace, timeline, PNGs, the outputs' transaction) is `run`'s own code
//! ([`super::run`]), so the two forms cannot diverge. [`stage_error`] names
//! the NEFF stream offset of a staging error.

use super::CliError;
use super::neff::{NeffFlags, load};
use crate::files::HostBytes;
use crate::isa::enums::Engine;
use crate::limits::Arch;
use crate::neff::Neff;
use crate::neff::lower::Expanded;
use crate::npy::{ElemKind, npy_descr, read_npy};
use crate::runtime::StageError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

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

/// What `run MODEL.neff` reads: the NEFF, and its public inputs' bytes by
/// name. Also returns every file read, named for the collision check.
pub type Loaded = (Neff, HashMap<String, HostBytes>, Vec<(String, PathBuf)>);

/// Reads the NEFF (steps 1–13 and the I/O binding; exit 4), checks the
/// `--input` names (exit 2) and reads the `--input` files (dtype and shape
/// of the bound variable; exit 4).
pub fn load_inputs(
    model: &Path,
    given: &[String],
    flags: &NeffFlags,
    arch: Option<Arch>,
) -> Result<Loaded, CliError> {
    let n = load(model, flags, arch)?;
    let pairs = input_names(given, &n.inputs)?;
    let mut read = vec![super::named("the model", model)];
    read.extend(
        pairs
            .iter()
            .map(|(name, f)| super::named(format!("--input {name}"), f)),
    );
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
    Ok((n, data, read))
}
