//! The command line: one module per subcommand, one error type, one exit-code contract.

pub mod asm;
pub mod backend;
pub mod bench;
pub mod demo;
pub mod disasm;
pub mod exec;
pub mod info;
pub mod inspect;
pub mod lower;
pub mod neff;
pub mod neff_run;
pub mod pack;
pub mod pool2d;
pub mod run;
pub mod validate;
pub mod viz;

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
    /// Usage error (clap).
    Usage = 2,
    /// An invalid record.
    Invalid = 3,
    /// Bad input: unreadable file, stream length, parse error, bad .npy or manifest.
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
    /// A usage error found after parsing (e.g. a bad `--input` name of `run MODEL.neff`).
    #[error("{0}")]
    Usage(String),
}

impl CliError {
    /// The exit code of this error.
    pub fn exit(&self) -> Exit {
        match self {
            CliError::Invalid(_) | CliError::InvalidProgram(_) => Exit::Invalid,
            CliError::Io { .. } | CliError::Stream { .. } | CliError::BadInput(_) => Exit::BadInput,
            CliError::Exec(_) => Exit::Exec,
            CliError::NoAdapter(_) => Exit::NoAdapter,
            CliError::Usage(_) => Exit::Usage,
        }
    }
}

/// Reads a whole file, mapping failures to [`CliError::Io`].
pub fn read_file(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|source| CliError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Reads a record stream: the file's bytes, checked to be whole records.
pub fn read_stream(path: &Path) -> Result<Vec<u8>, CliError> {
    let bytes = read_file(path)?;
    if let Err(source) = crate::isa::stream::records(&bytes).map(|_| ()) {
        return Err(CliError::Stream {
            path: path.to_owned(),
            source,
        });
    }
    Ok(bytes)
}

/// Writes a whole file, mapping failures to [`CliError::Io`].
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    std::fs::write(path, bytes).map_err(|source| CliError::Io {
        path: path.to_owned(),
        source,
    })
}

impl From<crate::npy::NpyError> for CliError {
    fn from(e: crate::npy::NpyError) -> CliError {
        match e {
            crate::npy::NpyError::Io { path, source } => CliError::Io { path, source },
            bad @ crate::npy::NpyError::Bad { .. } => CliError::BadInput(bad.to_string()),
        }
    }
}
