//! `tpb-emu lower PROGRAM.toml --out DIR`: lowers every engine stream of a
//! program (SPEC §8, EC-29, EC-30), validates the lowered streams, and writes
//! a program folder that `tpb-emu run` takes: each lowered stream as
//! `DIR/<engine>.bin` (disassemble it with `tpb-emu disasm`), every input
//! array, and `DIR/program.toml` with every variable and the streams' exit
//! points (`[exits]`), so that running it gives the same results as running
//! the source.
//!
//! Prints one summary line per engine that has a stream: records in and out,
//! pseudo-opcodes, functions, blocks (start, bytes, staging address) and exit
//! points. A `DIR` that holds a file the program reads (such as the
//! manifest's own folder) is refused before anything is written (exit 2). A
//! rejected pseudo-record or an invalid lowered record exits 3 and a bad
//! manifest exits 4; nothing is written then.

use super::CliError;
use crate::files::{Outputs, resolve};
use crate::frontend::emit::{program_files, write_program_into};
use crate::isa::enums::Engine;
use crate::isa::validate::Target;
use crate::runtime::lower::{LowerError, Lowered, lower, validate_lowered};
use crate::runtime::{Program, manifest};
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
    let (program, read) = manifest::load_with_files(manifest_path)?;
    let target_dir = resolve(dir);
    if let Some(f) = read
        .iter()
        .find(|f| resolve(f).parent() == Some(target_dir.as_path()))
    {
        return Err(CliError::Usage(format!(
            "--out {}: the folder holds {}, which the program reads; lowering into it would \
             overwrite the source (choose another folder)",
            dir.display(),
            f.display()
        )));
    }
    let io = CliError::Stdout;
    let mut next_addr = 0u64;
    let mut first_invalid = None;
    let mut lowered = Program {
        arch: program.arch,
        variables: program.variables.clone(),
        ..Program::default()
    };
    let mut lines = Vec::new();
    for engine in Engine::ALL {
        let bytes = program.stream(engine);
        if bytes.is_empty() {
            continue;
        }
        let mut l = lower(bytes).map_err(|e| match e {
            LowerError::Malformed(source) => CliError::EngineStream {
                manifest: Some(manifest_path.to_owned()),
                engine,
                source,
            },
            LowerError::Rejected(r) => CliError::InvalidProgram(format!(
                "{engine} stream, {} at byte offset {}: {r}",
                crate::isa::Opcode(r.opcode),
                r.offset
            )),
        })?;
        // EC-30: one instruction address space, engines back to back (as staging does).
        next_addr = l.place(next_addr);
        lines.push(summary(engine, &l));
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
        // EC-29: the exit points travel in the manifest. A source's declared
        // exit points keep their offsets when a stream without pseudo-records
        // lowers to itself.
        let mut exits = l.exits().to_vec();
        if l.pseudo_in() == 0 {
            exits.extend_from_slice(&program.exits[engine as usize]);
        }
        exits.sort_unstable();
        exits.dedup();
        lowered.exits[engine as usize] = exits;
        lowered.streams[engine as usize] = l.into_bytes();
    }
    for line in &lines {
        writeln!(out, "{line}").map_err(io)?;
    }
    if let Some(msg) = first_invalid {
        return Err(CliError::InvalidProgram(msg));
    }
    let read: Vec<_> = read
        .iter()
        .map(|f| super::named("a program file", f))
        .collect();
    let files: Vec<_> = program_files(&lowered, dir)
        .iter()
        .map(|f| super::named("--out", f))
        .collect();
    super::check_paths(&read, &files)?;
    let mut outs = Outputs::new();
    write_program_into(&lowered, dir, "lower", &mut outs)?;
    outs.commit()?;
    writeln!(
        out,
        "ok: lowered streams and program.toml written to {} and valid ({})",
        dir.display(),
        program.arch.name()
    )
    .map_err(io)
}
