//! `tpb-emu pack PROGRAM.toml -o MODEL.neff` (SPEC-NEFF §2.5, NEFF-EC-13):
//! writes a program as a NEFF with reproducible bytes. A manifest error or a
//! refusal of §2.5 exits 4; an output that is the manifest or a file it
//! names (a stream, an input array) is refused before anything is written
//! (exit 2).

use super::{CliError, check_paths, named};
use crate::files::Outputs;
use crate::neff::pack::pack;
use crate::runtime::{Program, manifest};
use std::io::Write;
use std::path::Path;

/// Writes `program` as the NEFF `output`, named `stem`, into the
/// transaction `outs`. Returns the bytes written.
pub fn write_neff(
    program: &Program,
    stem: &str,
    output: &Path,
    outs: &mut Outputs,
) -> Result<usize, CliError> {
    let bytes = pack(program, stem)?;
    outs.write(output, &bytes)?;
    Ok(bytes.len())
}

/// Runs `pack`.
pub fn run(manifest_path: &Path, output: &Path, out: &mut dyn Write) -> Result<(), CliError> {
    let (program, read) = manifest::load_with_files(manifest_path)?;
    let read: Vec<_> = read.iter().map(|p| named("a program file", p)).collect();
    check_paths(&read, &[named("-o", output)])?;
    let stem = manifest_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut outs = Outputs::new();
    let n = write_neff(&program, &stem, output, &mut outs)?;
    outs.commit()?;
    writeln!(out, "wrote {} ({n} bytes)", output.display()).map_err(CliError::Stdout)
}
