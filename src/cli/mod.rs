//! The command line: one module per subcommand, one error type, one exit-code contract.

pub mod asm;
pub mod backend;
pub mod bench;
pub mod bench_program;
pub mod demo;
pub mod disasm;
pub mod error;
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

pub use error::{CliError, Exit};
use std::path::{Path, PathBuf};

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
    let header = crate::npy::npy_header(dtype, shape).map_err(|source| CliError::Encode {
        path: path.to_owned(),
        source,
    })?;
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
    crate::npy::npy_bytes(dtype, shape, data).map_err(|source| CliError::Encode {
        path: path.to_owned(),
        source,
    })
}

/// The bytes of a PNG (for [`crate::files::Outputs`]).
pub fn png_bytes(img: &image::RgbImage, path: &Path) -> Result<Vec<u8>, CliError> {
    crate::viz::png_bytes(img).map_err(|source| CliError::Png {
        path: path.to_owned(),
        source,
    })
}
