//! `validate`, `check`, `disasm`, `asm`: raw streams of 64-byte records.

use crate::errors::{self, InvalidRecord};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use std::path::PathBuf;
use tpb_emu::isa::text::{asm as assemble, disasm_stream};
use tpb_emu::isa::validate::InvalidRecord as Invalid;
use tpb_emu::{Arch, Engine, Target};

/// The bytes of a stream given as `bytes`, a buffer, or a path.
pub enum Bytes {
    /// `bytes` (or a buffer's copy), held without the GIL.
    Py(PyBackedBytes),
    /// A file, mapped and bounded by the input limit as the CLI maps it.
    File(tpb_emu::files::Input),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Py(b) => b,
            Bytes::File(i) => i,
        }
    }
}

/// True for a `str` or an `os.PathLike`.
pub fn is_path(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(obj.is_instance_of::<PyString>() || obj.hasattr("__fspath__")?)
}

/// Reads `obj`: a path is read as the CLI reads a file (named in messages
/// by its path); `bytes` is used as is; any other buffer is copied.
pub fn read(obj: &Bound<'_, PyAny>) -> PyResult<(Bytes, String)> {
    if is_path(obj)? {
        let path: PathBuf = obj.extract()?;
        let input = tpb_emu::files::map_input(&path)
            .map_err(|e| PyErr::from(crate::errors::Failure::from(e)))?;
        return Ok((Bytes::File(input), path.display().to_string()));
    }
    let bytes = if obj.is_instance_of::<PyBytes>() {
        obj.extract::<PyBackedBytes>()?
    } else {
        let mv = obj
            .py()
            .import("builtins")?
            .getattr("memoryview")?
            .call1((obj,))
            .map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(
                    "stream: expected bytes, a buffer, or a path (str or os.PathLike)",
                )
            })?;
        mv.call_method0("tobytes")?.extract::<PyBackedBytes>()?
    };
    Ok((Bytes::Py(bytes), "stream".into()))
}

/// Reads a stream and checks that it is whole records (as the CLI's
/// `read_stream`): a partial record is an [`errors::InputError`].
fn read_stream(obj: &Bound<'_, PyAny>) -> PyResult<Bytes> {
    let (bytes, name) = read(obj)?;
    if let Err(e) = tpb_emu::records(&bytes) {
        return Err(errors::input(format!("{name}: {e}")));
    }
    Ok(bytes)
}

/// The target `engine` and `arch` name (as `--engine`, `--arch` spell them).
fn target(engine: &str, arch: &str) -> PyResult<Target> {
    let e = Engine::from_name(engine).ok_or_else(|| {
        let names: Vec<&str> = Engine::ALL.iter().map(|e| e.name()).collect();
        errors::usage(format!(
            "engine={engine:?}: expected one of {}",
            names.join(", ")
        ))
    })?;
    let a = Arch::from_name(arch).ok_or_else(|| {
        let names: Vec<&str> = Arch::ALL.iter().map(|a| a.name()).collect();
        errors::usage(format!(
            "arch={arch:?}: expected one of {}",
            names.join(", ")
        ))
    })?;
    Ok(Target { engine: e, arch: a })
}

/// Raises [`InvalidRecord`] for `inv`: the CLI's message, with `offset`,
/// `opcode`, `predicate` and `detail`.
pub fn invalid(py: Python<'_>, inv: &Invalid) -> PyErr {
    let err = InvalidRecord::new_err(inv.to_string());
    let v = err.value(py);
    let set = || -> PyResult<()> {
        v.setattr("offset", inv.offset)?;
        v.setattr("opcode", inv.opcode)?;
        v.setattr("predicate", inv.fail.predicate())?;
        v.setattr("detail", inv.fail.detail())?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// Validates every record of `stream` (bytes, a buffer, or a path to a raw
/// stream of 64-byte records) as the stream of `engine` ("pe", "act",
/// "pool", "dve", "sp") on `arch` ("sunda", "cayman", "mariana"), as
/// `tpb-emu validate` does. Returns the number of records; raises
/// `InvalidRecord` at the first invalid one (its message is the CLI's line,
/// `Found invalid instruction! opcode=…, offset=…: predicate (detail)`),
/// `InputError` for a partial record or an unreadable file, `UsageError`
/// for an unknown engine or arch. The GIL is released while checking.
#[pyfunction]
#[pyo3(signature = (stream, *, engine = "pool", arch = "cayman"))]
pub fn validate(
    py: Python<'_>,
    stream: &Bound<'_, PyAny>,
    engine: &str,
    arch: &str,
) -> PyResult<usize> {
    let t = target(engine, arch)?;
    let bytes = read_stream(stream)?;
    let res = py.detach(|| -> Result<usize, Invalid> {
        let mut n = 0;
        for (offset, r) in tpb_emu::records(&bytes).expect("whole records") {
            tpb_emu::check(&r, t).map_err(|fail| Invalid {
                offset,
                opcode: r.0[0],
                fail,
            })?;
            n += 1;
        }
        Ok(n)
    });
    res.map_err(|inv| invalid(py, &inv))
}

/// One record's verdict (`validate --json`'s line).
type Verdict = (usize, u8, Option<&'static str>, Option<String>);

/// Checks every record of `stream` as `validate` does, but goes on past
/// invalid records and returns one dict per record with the keys
/// `tpb-emu validate --json` prints: `offset`, `opcode`, `valid`,
/// `predicate` and `detail` (the last two None for a valid record).
#[pyfunction]
#[pyo3(signature = (stream, *, engine = "pool", arch = "cayman"))]
pub fn check<'py>(
    py: Python<'py>,
    stream: &Bound<'py, PyAny>,
    engine: &str,
    arch: &str,
) -> PyResult<Bound<'py, PyList>> {
    let t = target(engine, arch)?;
    let bytes = read_stream(stream)?;
    let verdicts: Vec<Verdict> = py.detach(|| {
        tpb_emu::records(&bytes)
            .expect("whole records")
            .map(|(offset, r)| {
                let res = tpb_emu::check(&r, t);
                (
                    offset,
                    r.0[0],
                    res.as_ref().err().map(|f| f.predicate()),
                    res.as_ref().err().map(|f| f.detail()),
                )
            })
            .collect()
    });
    let list = PyList::empty(py);
    for (offset, opcode, predicate, detail) in verdicts {
        let d = PyDict::new(py);
        d.set_item("offset", offset)?;
        d.set_item("opcode", opcode)?;
        d.set_item("valid", predicate.is_none())?;
        d.set_item("predicate", predicate)?;
        d.set_item("detail", detail)?;
        list.append(d)?;
    }
    Ok(list)
}

/// The text of `stream` (bytes, a buffer, or a path), one line per record:
/// what `tpb-emu disasm` prints, which `asm` reads back.
#[pyfunction]
pub fn disasm(py: Python<'_>, stream: &Bound<'_, PyAny>) -> PyResult<String> {
    let bytes = read_stream(stream)?;
    Ok(py.detach(|| disasm_stream(&bytes).expect("whole records")))
}

/// Assembles `text` (what `disasm` prints) into a stream of 64-byte
/// records, as `tpb-emu asm` does. Raises `InputError` naming the line for
/// text it cannot parse.
#[pyfunction]
pub fn asm<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyBytes>> {
    let recs = assemble(text).map_err(|e| errors::input(e.to_string()))?;
    Ok(PyBytes::new(py, &tpb_emu::isa::stream::to_bytes(&recs)))
}
