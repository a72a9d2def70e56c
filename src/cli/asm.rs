//! `tpb-emu asm FILE.tpbs -o FILE.bin`.

use super::{CliError, read_file, write_file};
use crate::isa::stream::to_bytes;
use crate::isa::text::asm;
use std::path::Path;

/// Assembles the text in `input` into a record stream written to `output`.
/// Returns the number of records.
pub fn run(input: &Path, output: &Path) -> Result<usize, CliError> {
    let bytes = read_file(input)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        CliError::BadInput(format!(
            "{}: not UTF-8 text (byte {})",
            input.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    let recs = asm(&text).map_err(|e| CliError::BadInput(format!("{}: {e}", input.display())))?;
    write_file(output, &to_bytes(&recs))?;
    Ok(recs.len())
}
