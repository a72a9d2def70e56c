//! `tpb-emu pack PROGRAM.toml -o MODEL.neff` (SPEC-NEFF §2.5, NEFF-EC-13):
//! writes a program as a NEFF with reproducible bytes. A manifest error or a
//! refusal of §2.5 exits 4.

use super::CliError;
use crate::neff::pack::pack;
use crate::runtime::{Program, manifest};
use std::io::Write;
use std::path::Path;

/// Writes `program` as the NEFF `output`, named `stem`, through a temporary
/// file beside it renamed into place. Returns the bytes written.
pub fn write_neff(program: &Program, stem: &str, output: &Path) -> Result<usize, CliError> {
    let bytes = pack(program, stem).map_err(|e| CliError::BadInput(e.to_string()))?;
    let mut tmp = output.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    super::write_file(&tmp, &bytes)?;
    std::fs::rename(&tmp, output).map_err(|source| CliError::Io {
        path: output.to_owned(),
        source,
    })?;
    Ok(bytes.len())
}

/// Runs `pack`.
pub fn run(manifest_path: &Path, output: &Path, out: &mut dyn Write) -> Result<(), CliError> {
    let program = manifest::load(manifest_path).map_err(|e| CliError::BadInput(e.to_string()))?;
    let stem = manifest_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = write_neff(&program, &stem, output)?;
    writeln!(out, "wrote {} ({n} bytes)", output.display())
        .map_err(|e| CliError::Exec(format!("stdout: {e}")))
}
