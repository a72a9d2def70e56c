//! `tpb-emu lower PROGRAM.toml --out DIR`: lowers every engine stream of a
//! program (SPEC §8, EC-29, EC-30) and writes each as `DIR/<engine>.bin`
//! (disassemble it with `tpb-emu disasm`), then validates the lowered streams.
//!
//! Prints one summary line per engine that has a stream: records in and out,
//! pseudo-opcodes, functions, blocks (start, bytes, staging address) and exit
//! points. A rejected pseudo-record or an invalid lowered record exits 3
//! (the streams lowered so far are written first); a bad manifest exits 4.

use super::{CliError, write_file};
use crate::isa::enums::Engine;
use crate::isa::validate::Target;
use crate::runtime::lower::{LowerError, Lowered, lower, validate_lowered};
use crate::runtime::manifest;
use std::io::Write;
use std::path::Path;

/// One engine's summary line.
pub fn summary(engine: Engine, l: &Lowered) -> String {
    let blocks: Vec<String> = l
        .blocks()
        .iter()
        .map(|b| format!("{}+{:#x}@{:#x}", b.start, b.len, b.addr))
        .collect();
    format!(
        "{engine}: {} records in, {} out ({} pseudo, {} functions); {} blocks [{}]; exit points {:?}",
        l.records_in(),
        l.records_out(),
        l.pseudo_in(),
        l.functions(),
        l.blocks().len(),
        blocks.join(", "),
        l.exits()
    )
}

/// Runs `lower`.
pub fn run(manifest_path: &Path, dir: &Path, out: &mut dyn Write) -> Result<(), CliError> {
    let program = manifest::load(manifest_path).map_err(|e| CliError::BadInput(e.to_string()))?;
    std::fs::create_dir_all(dir).map_err(|source| CliError::Io {
        path: dir.to_owned(),
        source,
    })?;
    let io = |e: std::io::Error| CliError::Exec(format!("stdout: {e}"));
    let mut next_addr = 0u64;
    let mut first_invalid = None;
    for engine in Engine::ALL {
        let bytes = program.stream(engine);
        if bytes.is_empty() {
            continue;
        }
        let mut l = lower(bytes).map_err(|e| match e {
            LowerError::Malformed(source) => CliError::BadInput(format!(
                "{}: {engine} stream: {source}",
                manifest_path.display()
            )),
            LowerError::Rejected(r) => CliError::InvalidProgram(format!(
                "{engine} stream, {} at byte offset {}: {r}",
                crate::isa::Opcode(r.opcode),
                r.offset
            )),
        })?;
        // EC-30: one instruction address space, engines back to back (as staging does).
        next_addr = l.place(next_addr);
        write_file(&dir.join(format!("{engine}.bin")), l.bytes())?;
        writeln!(out, "{}", summary(engine, &l)).map_err(io)?;
        let target = Target {
            engine,
            arch: program.arch,
        };
        if let Err(inv) = validate_lowered(&l, target) {
            first_invalid.get_or_insert(format!(
                "{engine} stream (lowered), {} at byte offset {}: {inv}",
                crate::isa::Opcode(inv.record.opcode),
                inv.record.offset
            ));
        }
    }
    if let Some(msg) = first_invalid {
        return Err(CliError::InvalidProgram(msg));
    }
    writeln!(
        out,
        "ok: lowered streams written to {} and valid ({})",
        dir.display(),
        program.arch.name()
    )
    .map_err(io)
}
