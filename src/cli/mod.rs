//! The command line: one module per subcommand, one error type, one exit-code contract.

pub mod asm;
pub mod backend;
pub mod bench;
pub mod bench_program;
pub mod demo;
pub mod disasm;
pub mod exec;
pub mod info;
pub mod inspect;
pub mod lower;
pub mod neff;
pub mod pack;
pub mod pool;
pub mod run;
pub mod validate;
pub mod viz;
pub mod why;

use crate::isa::stream::StreamError;
use crate::isa::validate::InvalidRecord;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The exit-code contract of every subcommand (README "Exit codes").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Success.
    Ok = 0,
    /// Execution or internal error.
    Exec = 1,
    /// Usage error: unknown flags, malformed flag values, an output path that
    /// is an input path or another output path.
    Usage = 2,
    /// An invalid record.
    Invalid = 3,
    /// Bad input file or unwritable output file: unreadable or too large a
    /// file, stream length, parse error, bad .npy or manifest.
    BadInput = 4,
    /// No GPU adapter when one was required.
    NoAdapter = 5,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

/// Every error a subcommand reports; each maps to one exit code.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A record failed validation.
    #[error("{0}")]
    Invalid(#[from] InvalidRecord),
    /// A program was rejected before it ran: an invalid record in one of its
    /// streams, or a DMA footprint (`tpb-emu run`; the message names the engine).
    #[error("{0}")]
    InvalidProgram(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A file could not be read within the input limit, or an output not written.
    #[error(transparent)]
    File(#[from] crate::files::FileError),
    /// A usage error found after parsing: a malformed flag value, a bad
    /// `--input` name of `run MODEL.neff`.
    #[error("{0}")]
    Usage(String),
    /// An output path is an input path or another output path.
    #[error(transparent)]
    Collision(#[from] crate::files::Collision),
    /// A file is not a record stream.
    #[error("{path}: {source}")]
    Stream {
        /// The file.
        path: PathBuf,
        /// Why.
        source: StreamError,
    },
    /// Any other bad input (parse errors, bad arguments found after parsing).
    #[error("{0}")]
    BadInput(String),
    /// Execution failed.
    #[error("{0}")]
    Exec(String),
    /// No GPU adapter.
    #[error("{0}")]
    NoAdapter(String),
}

impl CliError {
    /// The exit code of this error.
    pub fn exit(&self) -> Exit {
        match self {
            CliError::Invalid(_) | CliError::InvalidProgram(_) => Exit::Invalid,
            // The output policy's refusals are usage errors, found before anything runs.
            CliError::File(crate::files::FileError::Refused { .. }) => Exit::Usage,
            CliError::Io { .. }
            | CliError::File(_)
            | CliError::Stream { .. }
            | CliError::BadInput(_) => Exit::BadInput,
            CliError::Usage(_) | CliError::Collision(_) => Exit::Usage,
            CliError::Exec(_) => Exit::Exec,
            CliError::NoAdapter(_) => Exit::NoAdapter,
        }
    }
}

/// Reads a whole file within the input limit ([`crate::files::read_input`]).
pub fn read_file(path: &Path) -> Result<Vec<u8>, CliError> {
    Ok(crate::files::read_input(path)?)
}

/// Reads a record stream: the file's bytes (mapped, [`crate::files::map_input`]),
/// checked to be whole records.
pub fn read_stream(path: &Path) -> Result<crate::files::Input, CliError> {
    let bytes = crate::files::map_input(path)?;
    if let Err(source) = crate::isa::stream::records(&bytes).map(|_| ()) {
        return Err(CliError::Stream {
            path: path.to_owned(),
            source,
        });
    }
    Ok(bytes)
}

/// Refuses (exit 2) an output that the output policy will not write (a
/// folder, a block device, a socket: [`crate::files::check_sinks`]) or that
/// is an input or another output ([`crate::files::check_distinct`]). Each
/// entry is `(what, path)`. Every command calls it with every file it reads
/// and every file it will write before it runs anything.
pub fn check_paths(
    inputs: &[(String, PathBuf)],
    outputs: &[(String, PathBuf)],
) -> Result<(), CliError> {
    crate::files::check_sinks(outputs)?;
    Ok(crate::files::check_distinct(inputs, outputs)?)
}

/// Writes an `.npy` of `data` into `outs` as a header and the data itself,
/// so that a large array is never copied to be written.
pub fn write_npy(
    outs: &mut crate::files::Outputs,
    path: &Path,
    dtype: crate::isa::Dtype,
    shape: &[u64],
    data: &[u8],
) -> Result<(), CliError> {
    let header = crate::npy::npy_header(dtype, shape)
        .map_err(|why| CliError::Exec(format!("{}: {why}", path.display())))?;
    Ok(outs.write_parts(path, &[&header, data])?)
}

/// `(what, path)` for [`check_paths`].
pub fn named(what: impl Into<String>, path: &Path) -> (String, PathBuf) {
    (what.into(), path.to_owned())
}

/// The bytes of an `.npy` (for [`crate::files::Outputs`]).
pub fn npy_bytes(
    path: &Path,
    dtype: crate::isa::Dtype,
    shape: &[u64],
    data: &[u8],
) -> Result<Vec<u8>, CliError> {
    crate::npy::npy_bytes(dtype, shape, data)
        .map_err(|why| CliError::Exec(format!("{}: {why}", path.display())))
}

/// The bytes of a PNG (for [`crate::files::Outputs`]).
pub fn png_bytes(img: &image::RgbImage, path: &Path) -> Result<Vec<u8>, CliError> {
    crate::viz::png_bytes(img).map_err(|e| CliError::Exec(format!("{}: {e}", path.display())))
}

/// The model API's errors, each on its exit code.
impl From<crate::model::ModelError> for CliError {
    fn from(e: crate::model::ModelError) -> CliError {
        use crate::model::ModelError as M;
        match e {
            M::File(f) => CliError::File(f),
            M::Load(m) | M::Input(m) => CliError::BadInput(m),
            M::Name(m) => CliError::Usage(m),
            M::Invalid(m) => CliError::InvalidProgram(m),
            M::Run(r) => CliError::Exec(r.to_string()),
        }
    }
}

impl From<crate::npy::NpyError> for CliError {
    fn from(e: crate::npy::NpyError) -> CliError {
        match e {
            crate::npy::NpyError::Io { path, source } => CliError::Io { path, source },
            crate::npy::NpyError::File(f) => CliError::File(f),
            bad @ crate::npy::NpyError::Bad { .. } => CliError::BadInput(bad.to_string()),
        }
    }
}
