//! `tpb-emu inspect MODEL.neff [--json] [--no-verify] [--strict] [--arch A]`:
//! what a NEFF holds (SPEC-NEFF §1): header fields, members, engines with
//! record counts and an opcode histogram saying what the emulator does with
//! each opcode, variables with kinds and sizes, public inputs and outputs.

use super::CliError;
use super::neff::{NeffFlags, load};
use crate::isa::enums::Engine;
use crate::isa::opcode::{Opcode, OpcodeClass};
use crate::limits::{Arch, RECORD_BYTES};
use crate::neff::Neff;
use crate::neff::lower::{PSEUDO_DMA_TRIGGER, PSEUDO_TRIGGER_COLLECTIVE, pseudo_name};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// One row of an engine's opcode histogram.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct OpcodeRow {
    /// The opcode byte.
    pub opcode: u8,
    /// Its name, or `?`.
    pub name: String,
    /// Records with it.
    pub count: u64,
    /// What the emulator does with it on this engine.
    pub emulator: &'static str,
}

/// One engine.
#[derive(Serialize, Debug)]
pub struct EngineRow {
    /// Its name.
    pub engine: &'static str,
    /// The `.bin` member, if any.
    pub member: Option<String>,
    /// Records in the stream.
    pub records: u64,
    /// Opcode histogram, by opcode.
    pub opcodes: Vec<OpcodeRow>,
}

/// What the emulator does with `op` in `engine`'s stream.
pub fn emulator_does(op: Opcode, engine: Engine) -> &'static str {
    match op.0 {
        PSEUDO_DMA_TRIGGER => return "lowered (NEFF-EC-4)",
        PSEUDO_TRIGGER_COLLECTIVE => return "lowered (NEFF-EC-5)",
        _ => {}
    }
    match op.class() {
        OpcodeClass::Pseudo if op.name().is_some() && op != Opcode::PSEUDO_JPEG_DECODE => {
            "lowered (EC-29)"
        }
        OpcodeClass::Pseudo => "rejected (no lowering recipe)",
        OpcodeClass::Unknown => "unknown",
        _ if !op.legal_on(engine) => "invalid on this engine",
        OpcodeClass::PoolNotEmulated => "validates only",
        // EC-55, EC-58: specs 0 and 2 run; 1, 3 and 4 are refused by name.
        OpcodeClass::Extended => "executes (spec 0, 2; other specs refused)",
        // EC-39: COPY, CAST and TENSOR_TENSOR run on POOL only.
        OpcodeClass::S4d4Tr | OpcodeClass::S3s3d3Tt if engine != Engine::Pool => "validates only",
        // The other kernel classes (OpcodeClass::is_pool_kernel), control and DMA.
        _ => "executes",
    }
}

/// An engine's histogram.
pub fn histogram(stream: &[u8], engine: Engine) -> Vec<OpcodeRow> {
    let mut counts = [0u64; 256];
    for r in stream.chunks_exact(RECORD_BYTES) {
        counts[r[0] as usize] += 1;
    }
    (0..256)
        .filter(|&b| counts[b] > 0)
        .map(|b| {
            let op = Opcode(b as u8);
            OpcodeRow {
                opcode: b as u8,
                name: op
                    .name()
                    .or_else(|| pseudo_name(b as u8))
                    .unwrap_or("?")
                    .to_string(),
                count: counts[b],
                emulator: emulator_does(op, engine),
            }
        })
        .collect()
}

#[derive(Serialize)]
struct Report<'a> {
    file: String,
    header: serde_json::Value,
    kelf: serde_json::Value,
    members: Vec<serde_json::Value>,
    engines: Vec<EngineRow>,
    variables: Vec<serde_json::Value>,
    inputs: &'a [crate::neff::IoTensor],
    outputs: &'a [crate::neff::IoTensor],
    warnings: &'a [String],
}

fn report<'a>(path: &Path, n: &'a Neff) -> Report<'a> {
    let h = &n.container.header;
    let header = serde_json::json!({
        "pkg_version": h.pkg_version,
        "gzip": n.container.gzip,
        "header_size": h.header_size,
        "data_size": h.data_size,
        "tar_bytes": n.container.tar().len(),
        "neff_version": format!("{}.{}", h.major, h.minor),
        "build_version": h.build_version(),
        "num_tpb": h.num_tpb,
        "hash": h.hash_hex(),
        "uuid": h.uuid_string(),
        "name": h.name(),
        "requested_tpb_count": h.requested_tpb_count,
        "feature_bits": format!("{:#x}", h.feature_bits),
        "vnc_size": h.vnc_size,
    });
    let kelf = serde_json::json!({
        "member": n.kelf,
        "version": n.kelf_version,
        "target": n.target,
        "arch": n.arch.name(),
        "graph": n.graph,
        "definition": n.definition,
    });
    let members = n
        .container
        .members
        .iter()
        .map(|m| serde_json::json!({"name": m.name, "bytes": m.data.len()}))
        .collect();
    let engines = Engine::ALL
        .iter()
        .map(|&e| EngineRow {
            engine: e.name(),
            member: n.engines[e as usize].bin.clone(),
            records: (n.stream(e).len() / RECORD_BYTES) as u64,
            opcodes: histogram(n.stream(e), e),
        })
        .collect();
    let variables = n
        .vars
        .iter()
        .map(|v| {
            let mut j = serde_json::json!({
                "var_id": v.id,
                "name": v.name,
                "kind": v.kind.name(),
                "size": v.size,
            });
            if v.kind != crate::neff::VarKind::StateBuffer {
                j["dtype"] = v.dtype.to_string().into();
                j["shape"] = v.shape.clone().into();
            }
            if let crate::neff::VarKind::Virtual { backing, offset } = &v.kind {
                j["backing"] = backing.clone().into();
                j["offset"] = (*offset).into();
            }
            j
        })
        .collect();
    Report {
        file: path.display().to_string(),
        header,
        kelf,
        members,
        engines,
        variables,
        inputs: &n.inputs,
        outputs: &n.outputs,
        warnings: &n.warnings,
    }
}

/// Runs `inspect`.
pub fn run(
    path: &Path,
    json: bool,
    arch: Option<Arch>,
    flags: &NeffFlags,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let n = load(path, flags, arch)?;
    let r = report(path, &n);
    let io = |e: std::io::Error| CliError::Exec(format!("stdout: {e}"));
    if json {
        let s = serde_json::to_string(&r).map_err(|e| CliError::Exec(e.to_string()))?;
        return writeln!(out, "{s}").map_err(io);
    }
    text(&r, &n, out).map_err(io)
}

fn text(r: &Report, n: &Neff, out: &mut dyn Write) -> std::io::Result<()> {
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
