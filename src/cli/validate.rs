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

/// `validate --lower`: lowers the stream in `path` (SPEC §8, EC-29) and
/// validates the lowered records for `target`. A rejected pseudo-record gives
/// its input offset; an invalid lowered record gives its offset in the
/// lowered stream and in the input. With `json`: one object per lowered
/// record, with `original_offset`.
pub fn run_lowered(
    path: &Path,
    target: Target,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    use crate::runtime::lower::{LowerError, lower};
    let bytes = read_stream(path)?;
    let io = |e: std::io::Error| CliError::Exec(format!("stdout: {e}"));
    let l = lower(&bytes).map_err(|e| match e {
        LowerError::Malformed(source) => CliError::Stream {
            path: path.to_owned(),
            source,
        },
        LowerError::Rejected(r) => CliError::InvalidProgram(r.to_string()),
    })?;
    let mut first_invalid = None;
    for (offset, r) in records(l.bytes()).expect("whole records") {
        let original = l.original_offset(offset).unwrap_or(offset);
        let res = check(&r, target);
        if json {
            let line = serde_json::json!({
                "offset": offset,
                "original_offset": original,
                "opcode": r.0[0],
                "valid": res.is_ok(),
                "predicate": res.as_ref().err().map(|f| f.predicate()),
                "detail": res.as_ref().err().map(|f| f.detail()),
            });
            writeln!(out, "{line}").map_err(io)?;
        }
        if let Err(fail) = res {
            let inv = crate::runtime::lower::LoweredInvalid {
                record: InvalidRecord {
                    offset,
                    opcode: r.0[0],
                    fail,
                },
                original,
            };
            if !json {
                return Err(CliError::InvalidProgram(inv.to_string()));
            }
            first_invalid.get_or_insert(inv);
        }
    }
    if let Some(inv) = first_invalid {
        return Err(CliError::InvalidProgram(inv.to_string()));
    }
    if !json {
        writeln!(
            out,
            "ok: {} records lowered to {} ({} blocks, exit points {:?}), all valid on the {} engine ({})",
            l.records_in(),
            l.records_out(),
            l.blocks().len(),
            l.exits(),
            target.engine,
            target.arch.name()
        )
        .map_err(io)?;
    }
    Ok(())
}
