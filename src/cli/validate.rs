//! `tpb-emu validate FILE.bin [--engine E] [--arch A] [--json]`.

use super::{CliError, read_stream};
use crate::isa::stream::{StreamError, records};
use crate::isa::validate::{InvalidRecord, Target, check};
use crate::limits::RECORD_BYTES;
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
    // A regular file's length is checked before any record is looked at.
    let stream_error = |len: u64| CliError::Stream {
        path: path.to_owned(),
        source: StreamError::Length { len: len as usize },
    };
    if let Ok(meta) = std::fs::metadata(path)
        && meta.is_file()
        && !meta.len().is_multiple_of(RECORD_BYTES as u64)
    {
        return Err(stream_error(meta.len()));
    }
    let limit = crate::files::input_limit().unwrap_or(crate::limits::MAX_INPUT_BYTES);
    let mut first_invalid = None;
    let mut base = 0usize;
    let mut each = |piece: &[u8]| -> Result<(), CliError> {
        let whole = piece.len() - piece.len() % RECORD_BYTES;
        for (offset, r) in records(&piece[..whole]).expect("whole records") {
            let offset = base + offset;
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
                writeln!(out, "{s}").map_err(CliError::Stdout)?;
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
        base += whole;
        Ok(())
    };
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let read = if regular {
        // A regular file is mapped: its records are checked straight from
        // the page cache, with no copy (`validate` end to end runs at nearly
        // its in-process rate).
        let bytes = crate::files::map_bounded(path, limit)?;
        each(&bytes).map(|()| bytes.len() as u64)
    } else {
        // A FIFO or a device is read in pieces on a second thread while the
        // records are checked: it is never held whole.
        crate::files::read_chunks(path, limit, VALIDATE_CHUNK, &mut each)?
    };
    let total = read?;
    // A device or FIFO ends where it ends: a partial record is found here.
    if !total.is_multiple_of(RECORD_BYTES as u64) {
        return Err(stream_error(total));
    }
    let n = total as usize / RECORD_BYTES;
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
        .map_err(CliError::Stdout)?;
    }
    Ok(())
}

/// Bytes `validate` reads at a time from a FIFO or a device: whole records,
/// large enough that a read costs little beside checking its records, small
/// enough to stay in cache.
const VALIDATE_CHUNK: usize = 1 << 20;

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
    let io = CliError::Stdout;
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
