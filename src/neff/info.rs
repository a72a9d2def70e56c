//! What a NEFF holds, as `tpb-emu inspect` reports it (SPEC-NEFF §1):
//! header fields, members, engines with record counts and an opcode
//! histogram saying what the emulator does with each opcode, variables with
//! kinds and sizes, public inputs and outputs. [`info`] is the report; the
//! CLI prints it as text or (`--json`) as one JSON object, and the Python
//! bindings' `Neff.info()` returns that object.

use super::lower::{PSEUDO_DMA_TRIGGER, PSEUDO_TRIGGER_COLLECTIVE, pseudo_name};
use super::{IoTensor, Neff, VarKind};
use crate::isa::enums::Engine;
use crate::isa::opcode::{Opcode, OpcodeClass};
use crate::limits::RECORD_BYTES;
use serde::Serialize;

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
        // Control and DMA records and every other kernel class
        // (`OpcodeClass::is_pool_kernel`, the one list; pseudo and unknown
        // opcodes are answered above).
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

/// What `tpb-emu inspect --json` prints for a NEFF: one JSON object with
/// these keys, in this order.
#[derive(Serialize, Debug)]
pub struct Info<'a> {
    /// The file as given.
    pub file: String,
    /// The header's fields.
    pub header: serde_json::Value,
    /// The kelf's fields and the generation the model runs on.
    pub kelf: serde_json::Value,
    /// Every member of the archive, with its size.
    pub members: Vec<serde_json::Value>,
    /// Every engine, with its record count and opcode histogram.
    pub engines: Vec<EngineRow>,
    /// Every variable, with its kind and size.
    pub variables: Vec<serde_json::Value>,
    /// The public inputs.
    pub inputs: &'a [IoTensor],
    /// The public outputs.
    pub outputs: &'a [IoTensor],
    /// What the reader warned about.
    pub warnings: &'a [String],
}

/// The report of `n`, read from `file` (named as given).
pub fn info<'a>(file: &str, n: &'a Neff) -> Info<'a> {
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
            if v.kind != VarKind::StateBuffer {
                j["dtype"] = v.dtype.to_string().into();
                j["shape"] = v.shape.clone().into();
            }
            if let VarKind::Virtual { backing, offset } = &v.kind {
                j["backing"] = backing.clone().into();
                j["offset"] = (*offset).into();
            }
            j
        })
        .collect();
    Info {
        file: file.to_string(),
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
