//! `tpb-emu disasm FILE.bin`.

use super::{CliError, read_stream};
use crate::isa::text::disasm_stream;
use std::io::Write;
use std::path::Path;

/// Prints one line per record of the stream in `path`.
pub fn run(path: &Path, out: &mut dyn Write) -> Result<(), CliError> {
    let bytes = read_stream(path)?;
    let text = disasm_stream(&bytes).expect("length checked");
    out.write_all(text.as_bytes()).map_err(CliError::Stdout)
}
