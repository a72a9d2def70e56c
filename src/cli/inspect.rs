//! `tpb-emu inspect MODEL.neff [--json] [--no-verify] [--strict] [--arch A]`:
//! what a NEFF holds (SPEC-NEFF §1): header fields, members, engines with
//! record counts and an opcode histogram saying what the emulator does with
//! each opcode, variables with kinds and sizes, public inputs and outputs.
//! The report is the library's ([`crate::neff::info`]); this module prints it.

use super::CliError;
use super::neff::{NeffFlags, load};
use crate::limits::Arch;
use crate::neff::Neff;
use crate::neff::info::{Info, info};
use std::io::Write;
use std::path::Path;

/// Runs `inspect`.
pub fn run(
    path: &Path,
    json: bool,
    arch: Option<Arch>,
    flags: &NeffFlags,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let n = load(path, flags, arch)?;
    let r = info(&path.display().to_string(), &n);
    let io = CliError::Stdout;
    if json {
        let s = serde_json::to_string(&r)?;
        return writeln!(out, "{s}").map_err(io);
    }
    text(&r, &n, out).map_err(io)
}

fn text(r: &Info, n: &Neff, out: &mut dyn Write) -> std::io::Result<()> {
    let h = &n.container.header;
    writeln!(out, "NEFF {}", r.file)?;
    writeln!(
        out,
        "header: pkg_version {} ({}), NEFF version {}.{}, header_size {:#x}, data_size {:#x} ({} tar bytes)",
        h.pkg_version,
        if n.container.gzip {
            "gzip tar"
        } else {
            "raw tar"
        },
        h.major,
        h.minor,
        h.header_size,
        h.data_size,
        n.container.tar().len()
    )?;
    writeln!(
        out,
        "        name {:?}, uuid {}, build {:?}",
        h.name(),
        h.uuid_string(),
        h.build_version()
    )?;
    writeln!(
        out,
        "        hash {}, feature_bits {:#x}, num_tpb {}, requested_tpb_count {}, vnc_size {}",
        h.hash_hex(),
        h.feature_bits,
        h.num_tpb,
        h.requested_tpb_count,
        h.vnc_size
    )?;
    writeln!(
        out,
        "kelf: {} version {} target {:?} -> {}; graph {} ({})",
        n.kelf,
        n.kelf_version,
        n.target,
        n.arch.name(),
        n.graph,
        n.definition
    )?;
    writeln!(out, "members ({}):", n.container.members.len())?;
    for m in &n.container.members {
        writeln!(out, "  {:<32} {:>10} bytes", m.name, m.data.len())?;
    }
    writeln!(out, "engines:")?;
    for e in &r.engines {
        writeln!(
            out,
            "  {:<4} {:>10} records  {}",
            e.engine,
            e.records,
            e.member.as_deref().unwrap_or("(no stream)")
        )?;
        for o in &e.opcodes {
            writeln!(
                out,
                "         {:#04x} {:<28} {:>10}  {}",
                o.opcode, o.name, o.count, o.emulator
            )?;
        }
    }
    writeln!(out, "variables ({}):", n.vars.len())?;
    for v in &n.vars {
        let size = v.size.map_or("-".to_string(), |s| format!("{s} bytes"));
        let what = if v.kind == crate::neff::VarKind::StateBuffer {
            String::new()
        } else {
            format!("{} {:?}", v.dtype, v.shape)
        };
        writeln!(
            out,
            "  {:>4} {:<24} {:<12} {:>14}  {what}",
            v.id,
            v.name,
            v.kind.name(),
            size
        )?;
    }
    for (label, ts) in [("inputs", &n.inputs), ("outputs", &n.outputs)] {
        writeln!(out, "{label} ({}):", ts.len())?;
        for t in ts.iter() {
            writeln!(out, "  {:<24} {} {:?}", t.name, t.dltype, t.shape)?;
        }
    }
    Ok(())
}
