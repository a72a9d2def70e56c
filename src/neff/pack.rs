//! The writer (SPEC-NEFF §2.4, §2.5; NEFF-EC-13): a program as a NEFF, with
//! reproducible bytes.

use super::archive::{gzip, md5, sha256, write_tar};
use super::header::{HEADER_BYTES, Header};
use super::model::{def_dtype_name, dltype_name};
use crate::isa::enums::Engine;
use crate::isa::opcode::Opcode;
use crate::limits::RECORD_BYTES;
use crate::runtime::{Program, Role};
use serde_json::{Value, json};
use std::fmt;

/// Why `pack` refused a program (exit 4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PackError {
    /// A record `pack` cannot write (SPEC-NEFF §2.5).
    Record {
        /// The engine.
        engine: Engine,
        /// Byte offset in its stream.
        offset: usize,
        /// Why.
        why: RecordFault,
    },
    /// A stream that is not whole records, or a variable the NEFF cannot hold.
    Program(ProgramFault),
}

/// Why `pack` cannot write a record ([`PackError::Record`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordFault {
    /// A pseudo-instruction that needs queues, blocks or replica groups.
    #[error("{pseudo} needs queues, blocks or replica groups, which a manifest has none of")]
    NeedsQueues {
        /// Its name.
        pseudo: &'static str,
    },
    /// A VAR_ID ADDR8 naming no variable.
    #[error("VAR_ID {id} (byte {at}) names no variable")]
    UnknownVarId {
        /// The id.
        id: u32,
        /// The address's byte in the record.
        at: usize,
    },
    /// A marker-0 address of device DRAM.
    #[error("marker-0 DRAM address {addr:#x} (byte {at}): a NEFF has no DRAM layout")]
    DramAddress {
        /// The address.
        addr: u64,
        /// The address's byte in the record.
        at: usize,
    },
}

/// Why `pack` cannot write a program ([`PackError::Program`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProgramFault {
    /// A stream that is not whole records.
    #[error("{engine} stream: length {len} is not a multiple of {RECORD_BYTES}")]
    StreamLength {
        /// The engine.
        engine: Engine,
        /// The stream's length in bytes.
        len: usize,
    },
    /// A variable whose dtype has no NEFF name.
    #[error("variable `{variable}`: dtype {dtype} has no NEFF name")]
    Dtype {
        /// The variable's name.
        variable: String,
        /// Its dtype.
        dtype: crate::isa::Dtype,
    },
    /// No output variable.
    #[error("the program has no output variable (a NEFF needs one)")]
    NoOutput,
}

impl fmt::Display for PackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PackError::Record {
                engine,
                offset,
                why,
            } => write!(
                f,
                "pack: {engine} stream, record at byte offset {offset}: {why}"
            ),
            PackError::Program(m) => write!(f, "pack: {m}"),
        }
    }
}

impl std::error::Error for PackError {}

/// The marker byte of a VAR_ID ADDR8 (EC-22).
const VAR_MARKER: u8 = 0x10;
/// Marker-0 ADDR8s from here on address device DRAM (SPEC §3), which has no layout in a NEFF.
const DRAM_BASE: u64 = 1 << 32;
/// FUNCTION_CALL's args-table var id (u32).
const CALL_ARGS: usize = 48;

/// NEFF-EC-13 / §2.5: the id rewrite of one stream (old id → dense index).
fn rewrite(engine: Engine, s: &[u8], ids: &[u32]) -> Result<Vec<u8>, PackError> {
    if !s.len().is_multiple_of(RECORD_BYTES) {
        return Err(PackError::Program(ProgramFault::StreamLength {
            engine,
            len: s.len(),
        }));
    }
    let mut out = s.to_vec();
    for (i, r) in out.chunks_exact_mut(RECORD_BYTES).enumerate() {
        let bad = |why: RecordFault| PackError::Record {
            engine,
            offset: i * RECORD_BYTES,
            why,
        };
        match r[0] {
            0xC1 | 0xC8 => {
                return Err(bad(RecordFault::NeedsQueues {
                    pseudo: super::lower::pseudo_name(r[0]).unwrap_or("?"),
                }));
            }
            op if op == Opcode::DMA_MEMCPY.0 || op == Opcode::PSEUDO_DMA_DIRECT2D.0 => {
                for at in [16, 40] {
                    let a = u64::from_le_bytes(r[at..at + 8].try_into().expect("8 bytes"));
                    let marker = (a >> 56) as u8;
                    if marker == VAR_MARKER {
                        let id = (a >> 32 & 0xFF_FFFF) as u32;
                        let new = ids
                            .iter()
                            .position(|&x| x == id)
                            .ok_or_else(|| bad(RecordFault::UnknownVarId { id, at }))?
                            as u64;
                        let a = (a & !(0xFF_FFFF << 32)) | new << 32;
                        r[at..at + 8].copy_from_slice(&a.to_le_bytes());
                    } else if marker == 0 && a >= DRAM_BASE {
                        return Err(bad(RecordFault::DramAddress { addr: a, at }));
                    }
                }
            }
            op if op == Opcode::PSEUDO_FUNCTION_CALL.0 => {
                let id = u32::from_le_bytes(r[CALL_ARGS..CALL_ARGS + 4].try_into().expect("4"));
                if let Some(new) = ids.iter().position(|&x| x == id) {
                    r[CALL_ARGS..CALL_ARGS + 4].copy_from_slice(&(new as u32).to_le_bytes());
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

fn compact(v: &Value) -> Vec<u8> {
    // serde_json's map is a BTreeMap: keys sorted bytewise at every level.
    serde_json::to_vec(v).expect("JSON values serialize")
}

/// NEFF-EC-13: the model name, the first 255 bytes of `stem` cut at a character boundary.
fn name_field(stem: &str) -> [u8; 256] {
    let mut n = stem.len().min(255);
    while !stem.is_char_boundary(n) {
        n -= 1;
    }
    let mut f = [0u8; 256];
    f[..n].copy_from_slice(&stem.as_bytes()[..n]);
    f
}

/// NEFF-EC-13: writes `program` as a pkg-2 NEFF named `stem` (the manifest's file stem).
pub fn pack(program: &Program, stem: &str) -> Result<Vec<u8>, PackError> {
    let ids: Vec<u32> = program.variables.iter().map(|v| v.id).collect();
    let mut vars = serde_json::Map::new();
    let (mut ins, mut outs) = (Vec::new(), Vec::new());
    for (i, v) in program.variables.iter().enumerate() {
        let (Some(def), Some(dl), Some(size)) =
            (def_dtype_name(v.dtype), dltype_name(v.dtype), v.bytes())
        else {
            return Err(PackError::Program(ProgramFault::Dtype {
                variable: v.name.clone(),
                dtype: v.dtype,
            }));
        };
        let ty = match v.role {
            Role::Input => "input",
            Role::Output => "output",
            Role::Scratch => "tmp-buf",
        };
        vars.insert(
            v.name.clone(),
            json!({"dtype": def, "shape": v.shape, "size": size, "type": ty, "var_id": i}),
        );
        match v.role {
            Role::Input => ins.push((v.name.clone(), dl, v.shape.clone())),
            Role::Output => outs.push((v.name.clone(), dl, v.shape.clone())),
            Role::Scratch => {}
        }
    }
    if outs.is_empty() {
        return Err(PackError::Program(ProgramFault::NoOutput));
    }
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    let mut def = serde_json::Map::new();
    for e in Engine::ALL {
        let n = e.name();
        let bin = rewrite(e, program.stream(e), &ids)?;
        members.push((format!("sg00/{n}.bin"), bin));
        members.push((
            format!("sg00/{n}.json"),
            compact(&json!({"dma": [], "instr": format!("{n}.bin"), "name": format!("{n}_json")})),
        ));
        def.insert(n.into(), json!(format!("{n}.json")));
    }
    def.insert("var".into(), Value::Object(vars));
    def.insert("dma_queue".into(), json!({}));
    def.insert("runtime_statebuffer_reservation".into(), json!([]));
    def.insert("name".into(), json!("definition"));
    def.insert("version".into(), json!("0.6-"));
    members.push(("sg00/def.json".into(), compact(&Value::Object(def))));
    members.push((
        "kelf-a.json".into(),
        compact(&json!({
            "graphs": [{"definition": "sg00/def.json", "name": "sg00"}],
            "target": program.arch.name(),
            "version": "0.5",
        })),
    ));
    let (n, m) = (ins.len(), outs.len());
    let mut nodes: Vec<Value> = ins
        .iter()
        .map(|(name, _, _)| json!({"op": "null", "name": name, "inputs": []}))
        .collect();
    nodes.push(json!({
        "op": "tvm_op",
        "name": "sg00_kelf",
        "inputs": (0..n).map(|i| json!([i, 0, 0])).collect::<Vec<_>>(),
        "attrs": {
            "func_name": "__kelf",
            "kelf": "kelf-a.json",
            "num_inputs": n.to_string(),
            "num_outputs": m.to_string(),
            "flatten_data": "0",
        },
    }));
    let all = ins.iter().chain(&outs);
    let neff_json = json!({
        "nodes": nodes,
        "arg_nodes": (0..n).collect::<Vec<_>>(),
        "heads": (0..m).map(|j| json!([n, j, 0])).collect::<Vec<_>>(),
        "node_row_ptr": (0..=n).chain([n + m]).collect::<Vec<_>>(),
        "attrs": {
            "dltype": ["list_str", all.clone().map(|t| t.1).collect::<Vec<_>>()],
            "shape": ["list_shape", all.map(|t| t.2.clone()).collect::<Vec<_>>()],
            "storage_id": ["list_int", (0..n + m).collect::<Vec<_>>()],
            "output_names": outs.iter().map(|t| t.0.clone()).collect::<Vec<_>>(),
        },
    });
    members.push(("neff.json".into(), compact(&neff_json)));
    members.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let gz = gzip(&write_tar(&members));
    let mut hash = [b'0'; 32];
    hash[..16].copy_from_slice(&md5(&gz));
    // NEFF-EC-13: a version-4 (random-form) UUID whose bytes are the payload's SHA-256.
    let digest: [u8; 16] = sha256(&gz)[..16].try_into().expect("16 bytes");
    let uuid = uuid::Builder::from_random_bytes(digest)
        .into_uuid()
        .into_bytes();
    let mut build = [0u8; 128];
    let label = format!("tpb-emu {}", env!("CARGO_PKG_VERSION"));
    build[..label.len()].copy_from_slice(label.as_bytes());
    let h = Header {
        pkg_version: 2,
        header_size: HEADER_BYTES as u64,
        data_size: gz.len() as u64,
        major: 2,
        minor: 0,
        build_version: build,
        num_tpb: 1,
        hash,
        uuid,
        name: name_field(stem),
        requested_tpb_count: 1,
        tpb_per_node: [0; 64],
        feature_bits: 0,
        vnc_size: 1,
    };
    let mut out = h.to_bytes().to_vec();
    out.extend_from_slice(&gz);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::enums::Dtype;
    use crate::runtime::{Program, Variable};

    /// Each reason prints what the message string it replaced printed.
    #[test]
    fn reasons_keep_their_messages() {
        let rec = |why| PackError::Record {
            engine: Engine::Pool,
            offset: 64,
            why,
        };
        let cases = [
            (
                rec(RecordFault::NeedsQueues {
                    pseudo: "PSEUDO_DMA_TRIGGER",
                }),
                "pack: pool stream, record at byte offset 64: PSEUDO_DMA_TRIGGER needs queues, \
                 blocks or replica groups, which a manifest has none of",
            ),
            (
                rec(RecordFault::UnknownVarId { id: 7, at: 16 }),
                "pack: pool stream, record at byte offset 64: VAR_ID 7 (byte 16) names no variable",
            ),
            (
                rec(RecordFault::DramAddress {
                    addr: 1 << 32,
                    at: 40,
                }),
                "pack: pool stream, record at byte offset 64: marker-0 DRAM address 0x100000000 \
                 (byte 40): a NEFF has no DRAM layout",
            ),
            (
                PackError::Program(ProgramFault::StreamLength {
                    engine: Engine::Act,
                    len: 65,
                }),
                "pack: act stream: length 65 is not a multiple of 64",
            ),
            (
                PackError::Program(ProgramFault::Dtype {
                    variable: "x".into(),
                    dtype: Dtype::FP8_EXP4,
                }),
                "",
            ),
            (
                PackError::Program(ProgramFault::NoOutput),
                "pack: the program has no output variable (a NEFF needs one)",
            ),
        ];
        for (e, want) in cases {
            if let PackError::Program(ProgramFault::Dtype { variable, dtype }) = &e {
                let want = format!("pack: variable `{variable}`: dtype {dtype} has no NEFF name");
                assert_eq!(e.to_string(), want);
            } else {
                assert_eq!(e.to_string(), want);
            }
        }
    }

    fn dma(src: u64, dst: u64) -> Vec<u8> {
        let mut r = vec![0u8; RECORD_BYTES];
        r[0] = Opcode::DMA_MEMCPY.0;
        r[16..24].copy_from_slice(&src.to_le_bytes());
        r[40..48].copy_from_slice(&dst.to_le_bytes());
        r
    }

    fn program(stream: Vec<u8>) -> Program {
        let mut p = Program::default();
        p.add(Variable::input("a", 7, Dtype::FP32, &[4], vec![0; 16]));
        p.add(Variable::output("b", 3, Dtype::FP32, &[4]));
        p.streams[Engine::Sp as usize] = stream;
        p
    }

    #[test]
    fn ids_are_rewritten_densely() {
        let p = program(dma(0x10 << 56 | 7 << 32 | 5, 0x10 << 56 | 3 << 32));
        let bytes = pack(&p, "m").unwrap();
        let n = crate::neff::read(&bytes, &crate::neff::Options::default()).unwrap();
        let s = n.stream(Engine::Sp);
        // a (id 7) is var 0, b (id 3) is var 1; the offsets are kept.
        assert_eq!(
            u64::from_le_bytes(s[16..24].try_into().unwrap()),
            0x10 << 56 | 5
        );
        assert_eq!(
            u64::from_le_bytes(s[40..48].try_into().unwrap()),
            0x10 << 56 | 1 << 32
        );
        assert_eq!(pack(&p, "m").unwrap(), bytes, "reproducible");
    }

    #[test]
    fn refusals_name_engine_and_offset() {
        let mut s = dma(0x10 << 56 | 7 << 32, 0x10 << 56 | 3 << 32);
        s.extend(dma(0x10 << 56 | 9 << 32, 0));
        let e = pack(&program(s), "m").unwrap_err();
        assert_eq!(
            e.to_string(),
            "pack: sp stream, record at byte offset 64: VAR_ID 9 (byte 16) names no variable"
        );
        let e = pack(&program(dma(1 << 32, 0)), "m").unwrap_err();
        assert!(
            e.to_string().contains("marker-0 DRAM address 0x100000000"),
            "{e}"
        );
        let mut t = vec![0u8; 128];
        t[64] = 0xC1;
        let e = pack(&program(t), "m").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("pack: sp stream, record at byte offset 64: PSEUDO_DMA_TRIGGER"),
            "{e}"
        );
    }
}
