//! `tpb-emu asm FILE.tpbs -o FILE.bin`.

use super::{CliError, check_paths, named, read_file};
use crate::files::Outputs;
use crate::isa::stream::to_bytes;
use crate::isa::text::asm;
use std::path::Path;

/// Assembles the text in `input` into a record stream written to `output`
/// (refused, exit 2, when `output` is `input`). Returns the number of records.
pub fn run(input: &Path, output: &Path) -> Result<usize, CliError> {
    check_paths(&[named("the input", input)], &[named("-o", output)])?;
    let bytes = read_file(input)?;
    let text = String::from_utf8(bytes).map_err(|e| CliError::NotUtf8 {
        path: input.to_owned(),
        valid_up_to: e.utf8_error().valid_up_to(),
    })?;
    let recs = asm(&text).map_err(|source| CliError::Asm {
        path: input.to_owned(),
        source,
    })?;
    let mut outs = Outputs::new();
    outs.write(output, &to_bytes(&recs))?;
    outs.commit()?;
    Ok(recs.len())
}
