//! The program manifest: a TOML file naming the generation, one raw stream
//! file per engine and the DRAM variables (schema in `docs/programs.md`).
//!
//! ```toml
//! arch = "cayman"
//!
//! [streams]
//! sp = "sp.bin"
//! pool = "pool.bin"
//!
//! [[variable]]
//! name = "x"
//! id = 1
//! dtype = "fp32"
//! shape = [128, 16]
//! role = "input"
//! file = "x.npy"
//! ```
//!
//! Paths are relative to the manifest's folder. Every problem is a
//! [`ManifestError`] naming the manifest and the key at fault; nothing here
//! panics on any input.

use super::program::{Program, Role, Variable, VariableError, VariableFault};
use crate::files::{FileError, HostBytes, map_input, read_input};
use crate::isa::enums::{Dtype, Engine};
use crate::isa::stream::{StreamError, records};
use crate::limits::Arch;
use crate::npy::{npy_descr, parse_npy_input};
use npyz::TypeStr;
use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    arch: String,
    #[serde(default)]
    streams: toml::Table,
    #[serde(default, rename = "variable")]
    variables: Vec<RawVariable>,
    #[serde(default)]
    exits: toml::Table,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVariable {
    name: String,
    id: i64,
    dtype: String,
    shape: Vec<i64>,
    role: String,
    file: Option<String>,
}

/// What is wrong with an `[exits]` entry ([`ManifestFault::Exits`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExitsFault {
    /// The key is not an engine.
    UnknownEngine,
    /// The value is not a list.
    NotAList,
    /// A list item that is not the byte offset of a record of the engine's
    /// stream.
    NotARecordOffset {
        /// The item, as the manifest spells it.
        value: String,
        /// The stream's length in bytes.
        len: usize,
        /// The engine.
        engine: Engine,
    },
}

/// A manifest that does not describe a runnable program (exit 4).
#[derive(Debug)]
pub struct ManifestError {
    /// The manifest file.
    pub manifest: PathBuf,
    /// What is wrong, and where.
    pub fault: ManifestFault,
    /// The variables' names, in order (for naming the one at fault).
    names: Vec<String>,
}

/// What is wrong with a manifest. Each variant names the key at fault.
#[derive(Debug)]
#[non_exhaustive]
pub enum ManifestFault {
    /// The manifest itself cannot be read (or is larger than the input limit).
    Read(FileError),
    /// Not TOML, a missing or unknown key, or a value of the wrong type
    /// (the message carries the line and column).
    Parse(Box<toml::de::Error>),
    /// `arch` is not a generation.
    Arch(String),
    /// A `[streams]` key that is not an engine.
    UnknownEngine(String),
    /// A `[streams]` value that is not a string.
    StreamNotPath(Engine),
    /// A stream file cannot be read (or is larger than the input limit).
    StreamRead {
        /// The engine.
        engine: Engine,
        /// Why (it names the file).
        source: FileError,
    },
    /// An `[exits]` key that is not an engine, or a value that is not a list
    /// of record offsets inside that engine's stream.
    Exits {
        /// The key.
        key: String,
        /// What is wrong.
        why: ExitsFault,
    },
    /// A stream file is not whole records.
    StreamLength {
        /// The engine.
        engine: Engine,
        /// The file.
        path: PathBuf,
        /// Why.
        source: StreamError,
    },
    /// A variable's `dtype` is not a SPEC text name with a size.
    UnknownDtype {
        /// Index of the variable.
        index: usize,
        /// The value.
        value: String,
    },
    /// A variable's `role` is not input, output or scratch.
    UnknownRole {
        /// Index of the variable.
        index: usize,
        /// The value.
        value: String,
    },
    /// A variable's `id` is negative or does not fit 24 bits.
    IdRange {
        /// Index of the variable.
        index: usize,
        /// The value.
        value: i64,
    },
    /// A variable's `shape` has a negative axis.
    NegativeAxis {
        /// Index of the variable.
        index: usize,
    },
    /// An input variable has no `file`.
    MissingFile {
        /// Index of the variable.
        index: usize,
    },
    /// A `file` on a variable that is not an input.
    FileNotInput {
        /// Index of the variable.
        index: usize,
        /// Its role.
        role: Role,
    },
    /// An input's `.npy` file cannot be read or is not an array.
    Npy {
        /// Index of the variable.
        index: usize,
        /// Why.
        source: crate::npy::NpyError,
    },
    /// An input's `.npy` holds another element type than the variable's dtype.
    NpyDtype {
        /// Index of the variable.
        index: usize,
        /// The descr the file has.
        found: String,
        /// The descr the dtype needs.
        expected: &'static str,
    },
    /// An input's `.npy` has another shape than the variable.
    NpyShape {
        /// Index of the variable.
        index: usize,
        /// The file's shape.
        found: Vec<u64>,
        /// The variable's shape.
        expected: Vec<u64>,
    },
    /// Name, id, dtype, shape or size rules of [`Program::layout`].
    Variable(VariableError),
    /// No variable has `role = "output"`: the run would produce nothing.
    NoOutput,
}

impl ManifestError {
    /// The manifest key at fault (`arch`, ``streams.pool``, ``variable #2 (`y`) file``, …);
    /// empty for a parse error, whose message carries the line instead.
    pub fn key(&self) -> String {
        let var = |index: usize, field: &str| match self.names.get(index) {
            Some(n) => format!("variable #{} (`{n}`) {field}", index + 1),
            None => format!("variable #{} {field}", index + 1),
        };
        match &self.fault {
            ManifestFault::Read(_) | ManifestFault::Parse(_) => String::new(),
            ManifestFault::Arch(_) => "arch".into(),
            ManifestFault::UnknownEngine(k) => format!("streams.{k}"),
            ManifestFault::Exits { key, .. } => format!("exits.{key}"),
            ManifestFault::StreamNotPath(e)
            | ManifestFault::StreamRead { engine: e, .. }
            | ManifestFault::StreamLength { engine: e, .. } => format!("streams.{e}"),
            ManifestFault::UnknownDtype { index, .. } => var(*index, "dtype"),
            ManifestFault::UnknownRole { index, .. } => var(*index, "role"),
            ManifestFault::IdRange { index, .. } => var(*index, "id"),
            ManifestFault::NegativeAxis { index } => var(*index, "shape"),
            ManifestFault::MissingFile { index }
            | ManifestFault::FileNotInput { index, .. }
            | ManifestFault::Npy { index, .. }
            | ManifestFault::NpyDtype { index, .. }
            | ManifestFault::NpyShape { index, .. } => var(*index, "file"),
            ManifestFault::Variable(e) => var(e.index, e.fault.key()),
            ManifestFault::NoOutput => "variable".into(),
        }
    }
}

impl fmt::Display for ManifestFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManifestFault::Read(e) => write!(f, "cannot read the manifest: {e}"),
            ManifestFault::Exits { key, why } => match why {
                ExitsFault::UnknownEngine => write!(
                    f,
                    "unknown engine key `{key}` (expected pe, act, pool, dve or sp)"
                ),
                ExitsFault::NotAList => f.write_str("expected a list of byte offsets"),
                ExitsFault::NotARecordOffset { value, len, engine } => write!(
                    f,
                    "`{value}` is not the byte offset of a record of the {len}-byte {engine} stream"
                ),
            },
            ManifestFault::Parse(e) => write!(f, "{}", e.to_string().trim_end()),
            ManifestFault::Arch(a) => write!(
                f,
                "unknown generation `{a}` (expected sunda, cayman or mariana)"
            ),
            ManifestFault::UnknownEngine(k) => write!(
                f,
                "unknown engine key `{k}` (expected pe, act, pool, dve or sp)"
            ),
            ManifestFault::StreamNotPath(_) => f.write_str("expected a file name (a string)"),
            ManifestFault::StreamRead { source, .. } => source.fmt(f),
            ManifestFault::StreamLength { path, source, .. } => {
                write!(f, "{}: {source}", path.display())
            }
            ManifestFault::UnknownDtype { value, .. } => write!(
                f,
                "unknown dtype `{value}` (expected one of uint64 int8 uint8 int16 uint16 bf16 \
                 fp16 int32 uint32 fp32 fp32r int64 fp8e3 fp8e4 fp8e5)"
            ),
            ManifestFault::UnknownRole { value, .. } => write!(
                f,
                "unknown role `{value}` (expected input, output or scratch)"
            ),
            ManifestFault::IdRange { value, .. } => {
                write!(f, "id {value} is not in 0..={}", super::MAX_VARIABLE_ID)
            }
            ManifestFault::NegativeAxis { .. } => f.write_str("an axis is negative"),
            ManifestFault::MissingFile { .. } => {
                f.write_str("an input variable needs a `file` (an .npy array)")
            }
            ManifestFault::FileNotInput { role, .. } => write!(
                f,
                "only input variables take a `file`; a {} variable starts at zero",
                role.name()
            ),
            ManifestFault::Npy { source, .. } => write!(f, "{source}"),
            ManifestFault::NpyDtype {
                found, expected, ..
            } => write!(
                f,
                "the .npy holds `{found}` elements; the variable's dtype needs `{expected}`"
            ),
            ManifestFault::NpyShape {
                found, expected, ..
            } => write!(
                f,
                "the .npy has shape {found:?}; the variable's shape is {expected:?}"
            ),
            ManifestFault::Variable(e) => e.fault.fmt(f),
            ManifestFault::NoOutput => f.write_str(
                "the manifest declares no output variable (add a [[variable]] with \
                 role = \"output\"); the run would write nothing",
            ),
        }
    }
}

/// One line: `<manifest>: <key>: <what>`.
impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.manifest.display())?;
        let key = self.key();
        if !key.is_empty() {
            write!(f, "{key}: ")?;
        }
        self.fault.fmt(f)
    }
}

impl std::error::Error for ManifestError {}

/// Loads the program a manifest describes: reads and checks every stream
/// file and input array. Streams are not validated here ([`super::stage`] does).
pub fn load(manifest: &Path) -> Result<Program, ManifestError> {
    load_with_files(manifest).map(|(p, _)| p)
}

/// [`load`], also returning every file read (the manifest first, then the
/// streams and input arrays), so that a command can refuse to overwrite them.
/// Every file is read within the input limit ([`crate::files::read_input`]).
pub fn load_with_files(manifest: &Path) -> Result<(Program, Vec<PathBuf>), ManifestError> {
    let err = |fault, names| ManifestError {
        manifest: manifest.to_owned(),
        fault,
        names,
    };
    let bytes = read_input(manifest).map_err(|e| err(ManifestFault::Read(e), Vec::new()))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let io = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        );
        let fe = FileError::Io {
            path: manifest.to_owned(),
            source: io,
        };
        err(ManifestFault::Read(fe), Vec::new())
    })?;
    let dir = manifest.parent().unwrap_or(Path::new(""));
    let mut files = vec![manifest.to_owned()];
    let program = parse(&text, dir, &mut files).map_err(|(fault, names)| err(fault, names))?;
    Ok((program, files))
}

/// Parses manifest `text` as if read from `manifest`, resolving the files
/// it names against `dir` (the fuzz target's entry point: no manifest file).
pub fn from_str(text: &str, manifest: &Path, dir: &Path) -> Result<Program, ManifestError> {
    let mut files = Vec::new();
    parse(text, dir, &mut files).map_err(|(fault, names)| ManifestError {
        manifest: manifest.to_owned(),
        fault,
        names,
    })
}

/// A fault and the variables' names (to name the one at fault).
type Fault = (ManifestFault, Vec<String>);

/// Parses manifest text; paths are resolved against `dir`; every file read is
/// pushed to `files`.
fn parse(text: &str, dir: &Path, files: &mut Vec<PathBuf>) -> Result<Program, Fault> {
    let raw: RawManifest =
        toml::from_str(text).map_err(|e| (ManifestFault::Parse(Box::new(e)), vec![]))?;
    let names: Vec<String> = raw.variables.iter().map(|v| v.name.clone()).collect();
    let fail = |f: ManifestFault| (f, names.clone());
    let arch =
        Arch::from_name(&raw.arch).ok_or_else(|| fail(ManifestFault::Arch(raw.arch.clone())))?;
    let mut program = Program::new(arch);
    for (key, value) in &raw.streams {
        let engine = Engine::from_name(key)
            .ok_or_else(|| fail(ManifestFault::UnknownEngine(key.clone())))?;
        let file = value
            .as_str()
            .ok_or_else(|| fail(ManifestFault::StreamNotPath(engine)))?;
        let path = dir.join(file);
        files.push(path.clone());
        let bytes = read_input(&path)
            .map_err(|source| fail(ManifestFault::StreamRead { engine, source }))?;
        if let Err(source) = records(&bytes).map(|_| ()) {
            return Err(fail(ManifestFault::StreamLength {
                engine,
                path,
                source,
            }));
        }
        program.streams[engine as usize] = bytes;
    }
    for (index, v) in raw.variables.iter().enumerate() {
        let dtype = Dtype::from_name(&v.dtype)
            .filter(|d| d.size().is_some())
            .ok_or_else(|| {
                fail(ManifestFault::UnknownDtype {
                    index,
                    value: v.dtype.clone(),
                })
            })?;
        let role = Role::from_name(&v.role).ok_or_else(|| {
            fail(ManifestFault::UnknownRole {
                index,
                value: v.role.clone(),
            })
        })?;
        let id = u32::try_from(v.id)
            .ok()
            .filter(|&id| id <= super::MAX_VARIABLE_ID)
            .ok_or_else(|| fail(ManifestFault::IdRange { index, value: v.id }))?;
        let shape = v
            .shape
            .iter()
            .map(|&a| u64::try_from(a))
            .collect::<Result<Vec<u64>, _>>()
            .map_err(|_| fail(ManifestFault::NegativeAxis { index }))?;
        let mut var = Variable::zeroed(&v.name, id, dtype, &shape, role);
        match (role, &v.file) {
            (Role::Input, None) => return Err(fail(ManifestFault::MissingFile { index })),
            (Role::Input, Some(file)) => {
                // The shape rules first, so that a bad shape is reported as such.
                if shape.is_empty() || shape.contains(&0) {
                    return Err(fail(ManifestFault::Variable(VariableError {
                        index,
                        name: v.name.clone(),
                        fault: VariableFault::Shape,
                    })));
                }
                let path = dir.join(file);
                files.push(path.clone());
                var.init = Some(read_array(&path, &var, index).map_err(fail)?);
            }
            (role, Some(_)) => return Err(fail(ManifestFault::FileNotInput { index, role })),
            (_, None) => {}
        }
        program.variables.push(var);
    }
    for (key, value) in &raw.exits {
        let bad = |why: ExitsFault| {
            fail(ManifestFault::Exits {
                key: key.clone(),
                why,
            })
        };
        let engine = Engine::from_name(key).ok_or_else(|| bad(ExitsFault::UnknownEngine))?;
        let len = program.streams[engine as usize].len();
        let list = value.as_array().ok_or_else(|| bad(ExitsFault::NotAList))?;
        let mut exits = Vec::with_capacity(list.len());
        for v in list {
            let x = v
                .as_integer()
                .and_then(|x| usize::try_from(x).ok())
                .filter(|&x| x < len && x % crate::limits::RECORD_BYTES == 0)
                .ok_or_else(|| {
                    bad(ExitsFault::NotARecordOffset {
                        value: v.to_string(),
                        len,
                        engine,
                    })
                })?;
            exits.push(x);
        }
        exits.sort_unstable();
        exits.dedup();
        program.exits[engine as usize] = exits;
    }
    program
        .layout()
        .map_err(|e| fail(ManifestFault::Variable(e)))?;
    if !program.variables.iter().any(|v| v.role == Role::Output) {
        return Err(fail(ManifestFault::NoOutput));
    }
    Ok(program)
}

/// Reads an input's `.npy`: its element type must be the one `.npy` dumps of
/// the variable's dtype use ([`npy_descr`]: bf16 as uint16 bits, fp32r as
/// float32, fp8 as uint8 bits; either byte order), its shape the variable's.
fn read_array(path: &Path, v: &Variable, index: usize) -> Result<HostBytes, ManifestFault> {
    let npy = |source: crate::npy::NpyError| ManifestFault::Npy { index, source };
    let expected = npy_descr(v.dtype);
    let bytes = std::sync::Arc::new(map_input(path).map_err(|e| npy(e.into()))?);
    let (header, _) = crate::npy::header(path, &bytes).map_err(npy)?;
    let want: TypeStr = expected.parse().expect("npy_descr gives valid descrs");
    let (same, found) = match header.dtype() {
        npyz::DType::Plain(ts) => (
            ts.type_char() == want.type_char() && ts.num_bytes() == want.num_bytes(),
            ts.to_string(),
        ),
        other => (false, other.descr()),
    };
    if !same {
        return Err(ManifestFault::NpyDtype {
            index,
            found,
            expected,
        });
    }
    if header.shape() != v.shape.as_slice() {
        return Err(ManifestFault::NpyShape {
            index,
            found: header.shape().to_vec(),
            expected: v.shape.clone(),
        });
    }
    // The data (byte order and Fortran order handled by `exec`'s reader).
    let data = parse_npy_input(path, bytes).map_err(npy)?;
    Ok(data.data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each `[exits]` reason prints what the message string it replaced printed.
    #[test]
    fn exits_reasons_keep_their_messages() {
        let msg = |why| {
            ManifestFault::Exits {
                key: "pool".into(),
                why,
            }
            .to_string()
        };
        assert_eq!(
            msg(ExitsFault::UnknownEngine),
            "unknown engine key `pool` (expected pe, act, pool, dve or sp)"
        );
        assert_eq!(msg(ExitsFault::NotAList), "expected a list of byte offsets");
        let engine = Engine::Pool;
        assert_eq!(
            msg(ExitsFault::NotARecordOffset {
                value: "3".into(),
                len: 128,
                engine,
            }),
            format!("`3` is not the byte offset of a record of the 128-byte {engine} stream")
        );
    }
}
