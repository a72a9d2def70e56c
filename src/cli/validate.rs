//! `tpb-emu validate FILE.bin [--engine E] [--arch A] [--json]`.

use super::{CliError, read_stream};
use crate::isa::stream::records;
use crate::isa::validate::{InvalidRecord, Target, check};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// One line of `--json` output.
#[derive(Serialize)]
struct JsonRecord<'a> {
    offset: usize,
    opcode: u8,
    valid: bool,
    predicate: Option<&'a str>,
    detail: Option<String>,
}

/// Validates every record of the stream in `path` for `target`.
///
/// Without `json`: stops at the first invalid record (exit 3). With `json`:
/// prints one object per record to `out`, goes on past invalid records, and
/// still reports the first invalid one as the error.
pub fn run(path: &Path, target: Target, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let bytes = read_stream(path)?;
    let mut first_invalid = None;
    let mut n = 0usize;
    for (offset, r) in records(&bytes).expect("length checked") {
        n += 1;
        let res = check(&r, target);
        if json {
            let line = JsonRecord {
                offset,
                opcode: r.0[0],
                valid: res.is_ok(),
                predicate: res.as_ref().err().map(|f| f.predicate()),
                detail: res.as_ref().err().map(|f| f.detail()),
            };
            let s = serde_json::to_string(&line).expect("plain struct serialises");
            writeln!(out, "{s}").map_err(|e| CliError::Exec(format!("stdout: {e}")))?;
        }
        if let Err(fail) = res {
            let inv = InvalidRecord {
                offset,
                opcode: r.0[0],
                fail,
            };
            if !json {
                return Err(inv.into());
            }
            first_invalid.get_or_insert(inv);
        }
    }
    if let Some(inv) = first_invalid {
        return Err(inv.into());
    }
    if !json {
        writeln!(
            out,
            "ok: {n} records valid on the {} engine ({})",
            target.engine,
            target.arch.name()
        )
        .map_err(|e| CliError::Exec(format!("stdout: {e}")))?;
    }
    Ok(())
}
