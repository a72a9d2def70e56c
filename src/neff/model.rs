//! The manifest chain (SPEC-NEFF §1.7–§1.11; §6 steps 11–13): neff.json →
//! kelf json → def.json → engine jsons → streams, the variable table, DMA
//! queues and blocks.

use super::fault::{JsonError, NeffFault, Side, VarFault};
use super::{Container, NeffError, Options};
use crate::isa::enums::{Dtype, Engine};
use crate::limits::{Arch, RECORD_BYTES};
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::ops::Range;

/// A public input or output tensor of neff.json (§1.8, NEFF-EC-7).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct IoTensor {
    /// Its name (also the def.json variable it binds to).
    pub name: String,
    /// The neff.json dtype string.
    pub dltype: String,
    /// The neff.json shape.
    pub shape: Vec<u64>,
}

/// What a def.json variable is (NEFF-EC-9).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// Filled from the user's input of the same name.
    Input,
    /// Returned to the user.
    Output,
    /// DRAM scratch, zero at start.
    TmpBuf,
    /// Constant bytes from a weight member (NEFF-EC-10).
    File,
    /// A view of `size` bytes at `offset` inside the DRAM variable `backing`.
    Virtual {
        /// The backing variable's name.
        backing: String,
        /// Byte offset in it.
        offset: u64,
    },
    /// The on-chip state buffer (no DRAM range).
    StateBuffer,
}

impl VarKind {
    /// The def.json `type` string.
    pub fn name(&self) -> &'static str {
        match self {
            VarKind::Input => "input",
            VarKind::Output => "output",
            VarKind::TmpBuf => "tmp-buf",
            VarKind::File => "file",
            VarKind::Virtual { .. } => "virtual",
            VarKind::StateBuffer => "state-buffer",
        }
    }

    /// True for the kinds that own a DRAM range (input, output, tmp-buf, file).
    pub fn is_dram(&self) -> bool {
        matches!(
            self,
            VarKind::Input | VarKind::Output | VarKind::TmpBuf | VarKind::File
        )
    }
}

/// One def.json variable after the §5 dtype/shape rule (NEFF-EC-18).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeffVar {
    /// Its name (the `var` key).
    pub name: String,
    /// Its dense id.
    pub id: u32,
    /// Its kind.
    pub kind: VarKind,
    /// Bytes (`None` for a state-buffer variable).
    pub size: Option<u64>,
    /// Element type (NEFF-EC-18).
    pub dtype: Dtype,
    /// Shape (NEFF-EC-18).
    pub shape: Vec<u64>,
    /// A `file` variable's payload in the tar (NEFF-EC-10).
    pub weight: Option<Range<usize>>,
}

/// One `dma` descriptor block (§1.10.3).
#[derive(Clone, Debug, PartialEq)]
pub struct DmaBlock {
    /// The queue it belongs to.
    pub queue: String,
    /// Its id (what a trigger's `block_id` selects).
    pub id: u64,
    /// Its descriptors, as written.
    pub desc: Vec<Value>,
    /// The member that holds it.
    pub member: String,
}

/// One engine's stream (§1.11, §1.12).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineStream {
    /// The engine json member, when def.json names one.
    pub json: Option<String>,
    /// The `.bin` member, when the engine json names one.
    pub bin: Option<String>,
    /// The records' range in the tar.
    pub range: Range<usize>,
}

/// A NEFF after SPEC-NEFF §6 steps 1–13.
#[derive(Clone, Debug)]
pub struct Neff {
    /// Header, tar and members.
    pub container: Container,
    /// The kelf member's name.
    pub kelf: String,
    /// The kelf `version`.
    pub kelf_version: String,
    /// The kelf `target` as written.
    pub target: String,
    /// The generation (NEFF-EC-17).
    pub arch: Arch,
    /// The graph's `name`.
    pub graph: String,
    /// The graph's `definition` member.
    pub definition: String,
    /// Public inputs, `arg_nodes` order.
    pub inputs: Vec<IoTensor>,
    /// Public outputs, `heads` order.
    pub outputs: Vec<IoTensor>,
    /// Variables in `var_id` order (dense).
    pub vars: Vec<NeffVar>,
    /// `dma_queue` entries in file order.
    pub queues: Vec<(String, Value)>,
    /// Every `dma` block of def.json and the engine jsons.
    pub blocks: Vec<DmaBlock>,
    /// def.json `replica_groups`, when present.
    pub replica_groups: Option<Value>,
    /// Engine streams, indexed by [`Engine`].
    pub engines: [EngineStream; 5],
    /// Warnings (tar walk, missing engines, unknown dtypes), in order.
    pub warnings: Vec<String>,
    /// The first variable of each name: an index into `vars`.
    by_name: HashMap<String, usize>,
}

impl Neff {
    /// `engine`'s raw stream (empty when it has none).
    pub fn stream(&self, engine: Engine) -> &[u8] {
        &self.container.tar()[self.engines[engine as usize].range.clone()]
    }

    /// A variable by name (the first of that name).
    pub fn var(&self, name: &str) -> Option<&NeffVar> {
        // The index is built at load; `vars` is public, so a changed list
        // falls back to the scan.
        self.by_name
            .get(name)
            .and_then(|&i| self.vars.get(i))
            .filter(|v| v.name == name)
            .or_else(|| self.vars.iter().find(|v| v.name == name))
    }

    /// A `file` variable's payload.
    pub fn weight(&self, v: &NeffVar) -> Option<&[u8]> {
        v.weight.clone().map(|r| &self.container.tar()[r])
    }
}

/// NEFF-EC-18: the canonical def.json dtype strings. The first
/// [`DLTYPES`] of them are also §1.8's neff.json dltypes; one table keeps
/// the readers and the writers (`pack`) in step.
const DEF_DTYPES: [(&str, Dtype); 15] = [
    ("uint8", Dtype::UINT8),
    ("int8", Dtype::INT8),
    ("uint16", Dtype::UINT16),
    ("int16", Dtype::INT16),
    ("uint32", Dtype::UINT32),
    ("int32", Dtype::INT32),
    ("uint64", Dtype::UINT64),
    ("int64", Dtype::INT64),
    ("float16", Dtype::FP16),
    ("bfloat16", Dtype::BFLOAT16),
    ("float32", Dtype::FP32),
    ("float32r", Dtype::FP32R),
    ("float8e3", Dtype::FP8_EXP3),
    ("float8e4", Dtype::FP8_EXP4),
    ("float8e5", Dtype::FP8_EXP5),
];

/// How many of [`DEF_DTYPES`] are neff.json dltypes (§1.8's 11 strings).
const DLTYPES: usize = 11;

/// NEFF-EC-18: a def.json dtype string (§1.10.1's 19) as an emulator dtype.
pub fn def_dtype(s: &str) -> Option<Dtype> {
    // The packed types §1.10.1 names besides the canonical strings.
    let alias = match s {
        "float4_e2m1fn_x4" => Some(Dtype::UINT16),
        "float8_e4m3fn_x4" | "float8_e5m2_x4" => Some(Dtype::UINT32),
        "float8_e4m3fn" => Some(Dtype::FP8_EXP4),
        _ => None,
    };
    alias.or_else(|| by_name(&DEF_DTYPES, s))
}

/// NEFF-EC-18: the def.json dtype string `pack` writes for an emulator dtype.
pub fn def_dtype_name(d: Dtype) -> Option<&'static str> {
    DEF_DTYPES.iter().find(|e| e.1 == d).map(|e| e.0)
}

/// NEFF-EC-18: a neff.json dltype (§1.8's 11 strings) as an emulator dtype.
pub fn dltype(s: &str) -> Option<Dtype> {
    by_name(&DEF_DTYPES[..DLTYPES], s)
}

fn by_name(table: &[(&str, Dtype)], s: &str) -> Option<Dtype> {
    table.iter().find(|e| e.0 == s).map(|e| e.1)
}

/// NEFF-EC-18: the neff.json dltype `pack` writes (fp32r → float32, fp8 → uint8).
pub fn dltype_name(d: Dtype) -> Option<&'static str> {
    Some(match d {
        Dtype::FP32R => "float32",
        Dtype::FP8_EXP3 | Dtype::FP8_EXP4 | Dtype::FP8_EXP5 => "uint8",
        d => def_dtype_name(d)?,
    })
}

/// A JSON object with its keys in file order.
struct Ordered<T>(Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ordered<T>, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object keyed by name")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Ordered<T>, A::Error> {
                let mut v = Vec::new();
                while let Some(e) = m.next_entry::<String, T>()? {
                    v.push(e);
                }
                Ok(Ordered(v))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// The keys of a def.json variable that the reader reads, each as written
/// (the last of a repeated key, as a JSON object keeps it). Read straight
/// from the text: a NEFF may hold hundreds of thousands of variables, and a
/// map per variable cost most of their load. A variable that is not an
/// object has none of them.
#[derive(Default)]
struct VarFields {
    ty: Option<Value>,
    var_id: Option<Value>,
    size: Option<Value>,
    dtype: Option<Value>,
    shape: Option<Value>,
    file_name: Option<Value>,
    backing_buf: Option<Value>,
    backing_variable_off: Option<Value>,
}

impl VarFields {
    fn str(v: &Option<Value>) -> Option<&str> {
        v.as_ref().and_then(Value::as_str)
    }

    fn uint(v: &Option<Value>) -> Option<u64> {
        v.as_ref().and_then(uint)
    }
}

impl<'de> Deserialize<'de> for VarFields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<VarFields, D::Error> {
        #[derive(Deserialize)]
        #[serde(field_identifier, rename_all = "snake_case")]
        enum Key {
            #[serde(rename = "type")]
            Ty,
            VarId,
            Size,
            Dtype,
            Shape,
            FileName,
            BackingBuf,
            BackingVariableOff,
            #[serde(other)]
            Other,
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = VarFields;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<VarFields, A::Error> {
                let mut f = VarFields::default();
                while let Some(k) = m.next_key::<Key>()? {
                    let slot = match k {
                        Key::Ty => &mut f.ty,
                        Key::VarId => &mut f.var_id,
                        Key::Size => &mut f.size,
                        Key::Dtype => &mut f.dtype,
                        Key::Shape => &mut f.shape,
                        Key::FileName => &mut f.file_name,
                        Key::BackingBuf => &mut f.backing_buf,
                        Key::BackingVariableOff => &mut f.backing_variable_off,
                        Key::Other => {
                            // Parsed as a value is, so that what the JSON
                            // may hold (its depth) is checked as before.
                            m.next_value::<Value>()?;
                            continue;
                        }
                    };
                    *slot = Some(m.next_value()?);
                }
                Ok(f)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<VarFields, A::Error> {
                while s.next_element::<Value>()?.is_some() {}
                Ok(VarFields::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<VarFields, E> {
                Ok(VarFields::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<VarFields, E> {
                Ok(VarFields::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<VarFields, E> {
                Ok(VarFields::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<VarFields, E> {
                Ok(VarFields::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<VarFields, E> {
                Ok(VarFields::default())
            }
            fn visit_unit<E>(self) -> Result<VarFields, E> {
                Ok(VarFields::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// def.json: `var` and `dma_queue` in file order, the rest by key.
#[derive(Deserialize)]
struct DefJson {
    var: Option<Ordered<VarFields>>,
    dma_queue: Option<Ordered<Value>>,
    #[serde(flatten)]
    rest: serde_json::Map<String, Value>,
}

fn err<T>(f: NeffFault) -> Result<T, NeffError> {
    Err(NeffError::Load(f))
}

fn member<'c>(c: &'c Container, name: &str) -> Result<&'c [u8], NeffError> {
    c.get(name)
        .ok_or_else(|| NeffError::Load(NeffFault::MissingMember(name.to_string())))
}

fn member_range(c: &Container, name: &str) -> Result<Range<usize>, NeffError> {
    c.member(name)
        .map(|m| m.data.clone())
        .ok_or_else(|| NeffError::Load(NeffFault::MissingMember(name.to_string())))
}

fn parse<'a, T: Deserialize<'a>>(bytes: &'a [u8], name: &str) -> Result<T, NeffError> {
    serde_json::from_slice(bytes).map_err(|e| {
        NeffError::Load(NeffFault::Json {
            member: name.to_string(),
            source: JsonError(std::sync::Arc::new(e)),
        })
    })
}

fn uint(v: &Value) -> Option<u64> {
    v.as_u64()
}

/// A shape: an array of unsigned integers.
fn shape_of(v: &Value) -> Option<Vec<u64>> {
    v.as_array()?.iter().map(uint).collect()
}

/// NEFF-EC-7: a name usable as `DIR/<name>.npy`.
fn name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && !s.starts_with(['.', '-'])
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// The joined path of a name inside the subgraph directory (§6 step 13).
fn in_dir(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// neff.json (§1.8, §6 step 11; NEFF-EC-7): inputs, outputs, the kelf member.
fn neff_json(
    c: &Container,
    warnings: &mut Vec<String>,
) -> Result<(Vec<IoTensor>, Vec<IoTensor>, String), NeffError> {
    let (name, bytes) = match (c.get("neff.json"), c.get("kelp.json")) {
        (Some(b), _) => ("neff.json", b),
        (None, Some(b)) => ("kelp.json", b),
        (None, None) => {
            return err(NeffFault::NoNeffJson(c.header.name()));
        }
    };
    let j: Value = parse(bytes, name)?;
    let req = ["nodes", "arg_nodes", "heads", "node_row_ptr", "attrs"];
    if req.iter().any(|k| j.get(k).is_none()) {
        return err(NeffFault::MissingFields);
    }
    let missing = || NeffError::Load(NeffFault::MissingFields);
    let nodes = j["nodes"].as_array().ok_or_else(missing)?;
    let args = j["arg_nodes"].as_array().ok_or_else(missing)?;
    let heads = j["heads"].as_array().ok_or_else(missing)?;
    let rows = j["node_row_ptr"].as_array().ok_or_else(missing)?;
    let attrs = &j["attrs"];
    let (Some(dl), Some(sh)) = (attrs.get("dltype"), attrs.get("shape")) else {
        return err(NeffFault::MissingDltypeOrShape);
    };
    let inner = |v: &Value| {
        v.as_array()
            .filter(|a| a.len() == 2)
            .and_then(|a| a[1].as_array().cloned())
    };
    let dls = inner(dl).ok_or(NeffError::Load(NeffFault::DltypeFormat))?;
    let shs = inner(sh).ok_or(NeffError::Load(NeffFault::ShapeFormat))?;
    let mut tensor = |eid: u64, name: String| -> Result<IoTensor, NeffError> {
        let e = eid as usize;
        if eid >= dls.len() as u64 || eid >= shs.len() as u64 {
            return err(NeffFault::EidOutOfBounds(eid));
        }
        let dt = dls[e].as_str().unwrap_or("").to_string();
        if dltype(&dt).is_none() {
            warnings.push(format!("Unknown dtype: {dt}, defaulting to UNKNOWN"));
        }
        let shape = shape_of(&shs[e]).ok_or(NeffError::Load(NeffFault::EidShape(eid)))?;
        if !name_ok(&name) {
            return err(NeffFault::TensorName(name));
        }
        Ok(IoTensor {
            name,
            dltype: dt,
            shape,
        })
    };
    let row = |id: u64, side: Side| -> Result<(usize, u64), NeffError> {
        if id >= nodes.len() as u64 || id >= rows.len() as u64 {
            return err(NeffFault::NodeOutOfBounds { side, id });
        }
        let base = uint(&rows[id as usize]).ok_or_else(missing)?;
        Ok((id as usize, base))
    };
    let mut inputs = Vec::with_capacity(args.len().min(1024));
    for a in args {
        let id = uint(a).ok_or_else(missing)?;
        let (node, eid) = row(id, Side::Input)?;
        let name = nodes[node]["name"].as_str().unwrap_or("").to_string();
        inputs.push(tensor(eid, name)?);
    }
    let names = match attrs.get("output_names") {
        None => None,
        Some(v) => {
            let a = v
                .as_array()
                .filter(|a| a.len() == heads.len())
                .and_then(|a| {
                    a.iter()
                        .map(|s| s.as_str().map(String::from))
                        .collect::<Option<Vec<_>>>()
                })
                .ok_or(NeffError::Load(NeffFault::OutputNames))?;
            Some(a)
        }
    };
    let head_node = |h: &Value| h.as_array().and_then(|a| a.first()).and_then(uint);
    // How many heads name each node (one pass: there may be many heads).
    let mut heads_of: HashMap<u64, usize> = HashMap::new();
    for n in heads.iter().filter_map(head_node) {
        *heads_of.entry(n).or_default() += 1;
    }
    let mut outputs = Vec::with_capacity(heads.len().min(1024));
    for (k, h) in heads.iter().enumerate() {
        let id = head_node(h).ok_or_else(missing)?;
        let (node, base) = row(id, Side::Output)?;
        let idx = h
            .as_array()
            .and_then(|a| a.get(1))
            .and_then(uint)
            .unwrap_or(0);
        let eid = base.saturating_add(idx);
        let name = if let Some(n) = &names {
            n[k].clone()
        } else if let Some(o) = nodes[node].get("output").and_then(Value::as_str)
            && heads_of.get(&id) == Some(&1)
        {
            o.to_string()
        } else {
            nodes[node]["name"].as_str().unwrap_or("").to_string()
        };
        outputs.push(tensor(eid, name)?);
    }
    let kelf = nodes
        .iter()
        .find(|n| n["attrs"]["func_name"].as_str() == Some("__kelf"))
        .ok_or(NeffError::Load(NeffFault::NoKelfNode))?;
    let kelf = match kelf["attrs"].get("kelf") {
        None => return err(NeffFault::KelfAttrMissing),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return err(NeffFault::KelfAttrType),
    };
    Ok((inputs, outputs, kelf))
}

/// NEFF-EC-17: the generation of a kelf `target`, given `--arch`.
pub(crate) fn generation(target: &str, arch: Option<Arch>) -> Result<Arch, NeffError> {
    let t = match target {
        "*" => return Ok(arch.unwrap_or(Arch::Cayman)),
        "" | "sunda" | "v2" => Arch::Sunda,
        "cayman" | "v3" => Arch::Cayman,
        "mariana" | "v4" => Arch::Mariana,
        _ => return err(NeffFault::Target(target.to_string())),
    };
    match arch {
        Some(a) if a != t => err(NeffFault::ArchMismatch {
            neff: t,
            instance: a,
        }),
        _ => Ok(t),
    }
}

/// One raw def.json variable, before the dtype rule.
struct RawVar {
    name: String,
    id: u64,
    kind: VarKind,
    size: Option<u64>,
    dtype: Option<String>,
    shape: Option<Value>,
    file_name: Option<String>,
}

/// NEFF-EC-10: a weight's payload: a NumPy v1 `.npy` header skipped, else raw.
fn weight(c: &Container, member: &str, range: Range<usize>) -> Result<Range<usize>, NeffError> {
    if !member.ends_with(".npy") {
        return Ok(range);
    }
    let b = &c.tar()[range.clone()];
    let magic = b
        .get(..2)
        .map(|m| u16::from_le_bytes([m[0], m[1]]))
        .unwrap_or(0);
    if magic != 0x4E93 {
        return err(NeffFault::NumpyMagic {
            member: member.to_string(),
            magic,
        });
    }
    let hl = b
        .get(8..10)
        .map(|m| u16::from_le_bytes([m[0], m[1]]))
        .unwrap_or(0) as usize;
    if b.len() < 10 || hl + 10 > b.len() {
        return err(NeffFault::WeightContent(member.to_string()));
    }
    Ok(range.start + hl + 10..range.end)
}

/// Steps 11–13.
pub(crate) fn load(c: Container, opts: &Options) -> Result<Neff, NeffError> {
    let mut warnings = c.warnings.clone();
    // Step 11.
    let (inputs, outputs, kelf) = neff_json(&c, &mut warnings)?;
    // Step 12.
    let k: Value = parse(member(&c, &kelf)?, &kelf)?;
    let missing = |key: &'static str| NeffFault::MissingKey {
        key,
        within: kelf.clone(),
    };
    let key = |name: &'static str, want_str: bool| -> Result<&Value, NeffError> {
        match k.get(name) {
            Some(v) if (want_str && v.is_string()) || (!want_str && v.is_array()) => Ok(v),
            _ => err(missing(name)),
        }
    };
    let version = key("version", true)?.as_str().unwrap_or("").to_string();
    let target = key("target", true)?.as_str().unwrap_or("").to_string();
    let graphs = key("graphs", false)?
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !version.contains('.') {
        return err(NeffFault::KelfVersion(version));
    }
    let arch = generation(&target, opts.arch)?;
    if graphs.len() != 1 {
        return err(NeffFault::Graphs {
            count: graphs.len(),
            kelf,
        });
    }
    let gstr = |name: &'static str| {
        graphs[0]
            .get(name)
            .and_then(Value::as_str)
            .map(String::from)
            .ok_or_else(|| NeffError::Load(missing(name)))
    };
    let graph = gstr("name")?;
    let definition = gstr("definition")?;
    // Step 13 (NEFF-EC-15).
    let sg_dir = definition
        .rsplit_once('/')
        .map(|(d, _)| d)
        .unwrap_or("")
        .to_string();
    // NEFF-EC-14: keys are looked up by name, so `#` keys, unknown keys and
    // the sections read past (act_info, ucode_lib, …) have no effect.
    let mut def: DefJson = parse(member(&c, &definition)?, &definition)?;
    let mut raw: Vec<RawVar> = Vec::new();
    for (name, v) in def.var.map(|o| o.0).unwrap_or_default() {
        let Some(ty) = VarFields::str(&v.ty) else {
            return err(NeffFault::VarType);
        };
        let Some(id) = VarFields::uint(&v.var_id) else {
            return err(NeffFault::VarId);
        };
        let size = VarFields::uint(&v.size);
        if matches!(ty, "input" | "output" | "tmp-buf" | "virtual") && size.is_none() {
            return err(NeffFault::VarSize);
        }
        // NEFF-EC-9: the accepted kinds.
        let kind = match ty {
            "input" => VarKind::Input,
            "output" => VarKind::Output,
            "tmp-buf" => VarKind::TmpBuf,
            "file" => VarKind::File,
            "state-buffer" => VarKind::StateBuffer,
            "virtual" => VarKind::Virtual {
                backing: VarFields::str(&v.backing_buf).unwrap_or("").to_string(),
                offset: VarFields::uint(&v.backing_variable_off).unwrap_or(0),
            },
            _ => {
                return err(NeffFault::UnsupportedVarType {
                    ty: ty.to_string(),
                    name,
                });
            }
        };
        raw.push(RawVar {
            dtype: VarFields::str(&v.dtype).map(String::from),
            file_name: VarFields::str(&v.file_name).map(String::from),
            shape: v.shape,
            name,
            id,
            kind,
            size,
        });
    }
    // Each id's first variable: the first repeat is reported with it.
    let mut first: HashMap<u64, usize> = HashMap::new();
    for (i, a) in raw.iter().enumerate() {
        if let Some(&b) = first.get(&a.id) {
            return err(NeffFault::DuplicateVarId {
                id: a.id,
                first: raw[b].name.clone(),
                repeat: a.name.clone(),
            });
        }
        first.insert(a.id, i);
    }
    drop(first);
    let max = raw.iter().map(|v| v.id).max();
    if let Some(max) = max
        && max.checked_add(1) != Some(raw.len() as u64)
    {
        return err(NeffFault::VarIds {
            max,
            count: raw.len(),
        });
    }
    if !raw.iter().any(|v| v.kind == VarKind::Output) {
        return err(NeffFault::NoOutputs(graph));
    }
    raw.sort_by_key(|v| v.id);
    // The I/O binding (§1.8, NEFF-EC-7).
    for (ts, kind, side) in [
        (&inputs, VarKind::Input, Side::Input),
        (&outputs, VarKind::Output, Side::Output),
    ] {
        let of_kind: HashSet<&str> = raw
            .iter()
            .filter(|v| v.kind == kind)
            .map(|v| v.name.as_str())
            .collect();
        let mut named: HashMap<&str, usize> = HashMap::new();
        for t in ts {
            if !of_kind.contains(t.name.as_str()) {
                return err(NeffFault::NotAVariable {
                    side,
                    name: t.name.clone(),
                });
            }
            *named.entry(t.name.as_str()).or_default() += 1;
        }
        for v in raw.iter().filter(|v| v.kind == kind) {
            match named.get(v.name.as_str()).copied().unwrap_or(0) {
                1 => {}
                0 => {
                    return err(NeffFault::NotNamed {
                        side,
                        name: v.name.clone(),
                    });
                }
                _ => {
                    return err(NeffFault::NamedTwice {
                        side,
                        name: v.name.clone(),
                    });
                }
            }
        }
    }
    // Variable dtypes and shapes (§5, NEFF-EC-18), weights (NEFF-EC-10), views (NEFF-EC-9).
    // The first public tensor of each name, inputs before outputs.
    let mut tensors: HashMap<&str, &IoTensor> = HashMap::new();
    for t in inputs.iter().chain(&outputs) {
        tensors.entry(t.name.as_str()).or_insert(t);
    }
    let mut vars = Vec::with_capacity(raw.len());
    for r in &raw {
        let bad = |fault: VarFault| {
            NeffError::Load(NeffFault::Variable {
                name: r.name.clone(),
                fault,
            })
        };
        let mut size = r.size;
        let mut weight_range = None;
        if r.kind == VarKind::File {
            let Some(f) = &r.file_name else {
                return Err(bad(VarFault::NoFileName));
            };
            let m = in_dir(&sg_dir, f);
            let range = weight(&c, &m, member_range(&c, &m)?)?;
            let len = (range.end - range.start) as u64;
            if size.is_some_and(|s| s != len) {
                return Err(bad(VarFault::WeightSize {
                    member: m,
                    len,
                    size: size.unwrap_or(0),
                }));
            }
            size = Some(len);
            weight_range = Some(range);
        }
        let (dtype, shape) = if r.kind == VarKind::StateBuffer {
            (Dtype::UINT8, Vec::new())
        } else if let Some(d) = &r.dtype {
            let dt = def_dtype(d).ok_or_else(|| bad(VarFault::Dtype(d.clone())))?;
            let es = dt.size().unwrap_or(1) as u64;
            let shape = match &r.shape {
                Some(s) => shape_of(s).ok_or_else(|| bad(VarFault::Shape))?,
                None => {
                    let s = size.unwrap_or(0);
                    if s % es != 0 {
                        return Err(bad(VarFault::SizeElements {
                            size: s,
                            dtype: d.clone(),
                            elem: es,
                        }));
                    }
                    vec![s / es]
                }
            };
            (dt, shape)
        } else if let Some(t) = tensors
            .get(r.name.as_str())
            .filter(|_| matches!(r.kind, VarKind::Input | VarKind::Output))
        {
            (dltype(&t.dltype).unwrap_or(Dtype::UINT8), t.shape.clone())
        } else {
            (Dtype::UINT8, vec![size.unwrap_or(0)])
        };
        if let Some(s) = size
            && r.kind != VarKind::StateBuffer
        {
            let es = dtype.size().unwrap_or(1) as u64;
            let n = shape.iter().try_fold(es, |a, &d| a.checked_mul(d));
            if n != Some(s) {
                return Err(bad(VarFault::SizeShape {
                    size: s,
                    shape,
                    elem: es,
                }));
            }
        }
        vars.push(NeffVar {
            name: r.name.clone(),
            id: r.id as u32,
            kind: r.kind.clone(),
            size,
            dtype,
            shape,
            weight: weight_range,
        });
    }
    drop(tensors);
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for (i, v) in vars.iter().enumerate() {
        by_name.entry(v.name.clone()).or_insert(i);
    }
    for v in &vars {
        if let VarKind::Virtual { backing, offset } = &v.kind {
            let b = by_name.get(backing.as_str()).map(|&i| &vars[i]);
            let size = v.size.unwrap_or(0);
            match b {
                Some(b) if b.kind.is_dram() => {
                    if offset
                        .checked_add(size)
                        .is_none_or(|e| e > b.size.unwrap_or(0))
                    {
                        return err(NeffFault::Variable {
                            name: v.name.clone(),
                            fault: VarFault::ViewOutside {
                                offset: *offset,
                                size,
                                backing: backing.clone(),
                                backing_size: b.size.unwrap_or(0),
                            },
                        });
                    }
                }
                _ => {
                    return err(NeffFault::Variable {
                        name: v.name.clone(),
                        fault: VarFault::Backing(backing.clone()),
                    });
                }
            }
        }
    }
    // dma_queue.
    let queues = def.dma_queue.map(|o| o.0).unwrap_or_default();
    for (name, q) in &queues {
        if q.get("type").and_then(Value::as_str).is_none() {
            return err(NeffFault::MissingKey {
                key: "type",
                within: name.clone(),
            });
        }
    }
    // NEFF-EC-12: the CAYMAN state-buffer reservation rule, only with --strict.
    if opts.strict {
        strict_reservation(&def.rest, arch)?;
    }
    // Engines, in the runtime's order.
    let mut blocks = Vec::new();
    dma_blocks(def.rest.remove("dma"), &definition, &mut blocks)?;
    let mut engines: [EngineStream; 5] = Default::default();
    for e in Engine::ALL {
        let key = e.name().to_ascii_lowercase();
        let Some(j) = def.rest.get(&key) else {
            warnings.push(format!(
                "Engine {key} not found in NEFF {}, using empty placeholder",
                c.header.name()
            ));
            continue;
        };
        let Some(jname) = j.as_str() else {
            return err(NeffFault::EngineKey(key));
        };
        let jm = in_dir(&sg_dir, jname);
        let mut ej: Value = parse(member(&c, &jm)?, &jm)?;
        dma_blocks(ej.get_mut("dma").map(Value::take), &jm, &mut blocks)?;
        let mut s = EngineStream {
            json: Some(jm.clone()),
            ..EngineStream::default()
        };
        if let Some(instr) = ej.get("instr").and_then(Value::as_str) {
            let bm = in_dir(&sg_dir, instr);
            let r = member_range(&c, &bm)?;
            let len = r.end - r.start;
            // NEFF-EC-6: every engine's .bin, sp.bin included, is 64-byte records.
            if !len.is_multiple_of(RECORD_BYTES) {
                return err(NeffFault::StreamLength { member: bm, len });
            }
            s.bin = Some(bm);
            s.range = r;
        }
        engines[e as usize] = s;
    }
    let mut seen: HashSet<(&str, u64)> = HashSet::with_capacity(blocks.len());
    for b in &blocks {
        if !seen.insert((b.queue.as_str(), b.id)) {
            return err(NeffFault::DmaBlockTwice {
                queue: b.queue.clone(),
                id: b.id,
                graph,
            });
        }
    }
    let replica_groups = def.rest.get("replica_groups").cloned();
    Ok(Neff {
        container: c,
        kelf,
        kelf_version: version,
        target,
        arch,
        graph,
        definition,
        inputs,
        outputs,
        vars,
        queues,
        blocks,
        replica_groups,
        engines,
        warnings,
        by_name,
    })
}

/// The `dma` blocks of one member (§1.10.3).
/// Takes the descriptors out of `v` (no copy: there may be many).
fn dma_blocks(v: Option<Value>, member: &str, out: &mut Vec<DmaBlock>) -> Result<(), NeffError> {
    let Some(v) = v else { return Ok(()) };
    let Value::Array(a) = v else {
        return err(NeffFault::DmaNotArray(member.to_string()));
    };
    for (i, mut b) in a.into_iter().enumerate() {
        let (Some(queue), Some(id)) = (
            b.get("queue").and_then(Value::as_str),
            b.get("id").and_then(uint),
        ) else {
            return err(NeffFault::DmaBlockKeys {
                member: member.to_string(),
                block: i,
            });
        };
        let queue = queue.to_string();
        let desc = match b.get_mut("desc").map(Value::take) {
            None => Vec::new(),
            Some(Value::Array(d)) => d,
            Some(_) => {
                return err(NeffFault::DescNotArray {
                    member: member.to_string(),
                    block: i,
                });
            }
        };
        // NEFF-EC-3: a side moves the product of its sizes in bytes; one
        // past 64 bits is no size (the other checks wait for a trigger).
        for (k, d) in desc.iter().enumerate() {
            for p in ["from_sizes", "to_sizes"] {
                let Some(sizes) = d.get(p).and_then(Value::as_array) else {
                    continue;
                };
                // Entries other than integers >= 1 are the trigger's to refuse.
                let counts = sizes.iter().all(|x| x.as_u64().is_some_and(|x| x >= 1));
                let product = sizes
                    .iter()
                    .try_fold(1u64, |a, x| a.checked_mul(x.as_u64()?));
                if counts && product.is_none() {
                    return err(NeffFault::SizesOverflow {
                        member: member.to_string(),
                        block: i,
                        queue,
                        id,
                        desc: k,
                        count: sizes.len(),
                        key: p,
                    });
                }
            }
        }
        out.push(DmaBlock {
            queue,
            id,
            desc,
            member: member.to_string(),
        });
    }
    Ok(())
}

/// NEFF-EC-12 (`--strict`): §1.10.4's `runtime_statebuffer_reservation` rule.
fn strict_reservation(def: &serde_json::Map<String, Value>, arch: Arch) -> Result<(), NeffError> {
    let Some(r) = def.get("runtime_statebuffer_reservation") else {
        if arch == Arch::Cayman {
            return err(NeffFault::ReservationMissing);
        }
        return Ok(());
    };
    let Some(entries) = r.as_array() else {
        return err(NeffFault::ReservationCorrupted);
    };
    for (i, e) in entries.iter().enumerate() {
        let ty = e.get("type").and_then(Value::as_str).unwrap_or("");
        if ty != "evtaccel" {
            return err(NeffFault::ReservationType(ty.to_string()));
        }
        let field = |k: &str| e.get(k).and_then(uint);
        if arch == Arch::Cayman
            && (field("base_partition") != Some(0)
                || field("partitions") != Some(128)
                || field("size") != Some(8))
        {
            return err(NeffFault::ReservationEntry(i));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::neff::testing::{model, read, trigger};

    /// `n` tmp-buf variables `t0`.. with ids from 2, as def.json entries.
    fn tmp_bufs(n: usize) -> String {
        (0..n)
            .map(|i| {
                format!(
                    r#","t{i}":{{"type":"tmp-buf","var_id":{},"size":4}}"#,
                    i + 2
                )
            })
            .collect()
    }

    const COPY: &str = r#"[{"id":0,"queue":"q","desc":[{"from":"x","to":"y",
        "from_sizes":[16,1],"from_steps":[1,16],"to_sizes":[16,1],"to_steps":[1,16]}]}]"#;

    #[test]
    fn a_repeated_var_id_is_found_in_one_pass() {
        // 200,000 variables: the search through the earlier ones each took
        // a minute and a half in all.
        let n = 200_000;
        let ok = model(&tmp_bufs(n), COPY, trigger("q", 0));
        let t = std::time::Instant::now();
        let m = read(&ok).unwrap();
        assert_eq!(m.vars.len(), n + 2);
        assert_eq!(m.var("t123").unwrap().id, 125);
        // A repeat names the first variable of its id, then itself.
        let vars = tmp_bufs(n) + r#","dup":{"type":"tmp-buf","var_id":9,"size":4}"#;
        let e = read(&model(&vars, COPY, trigger("q", 0))).unwrap_err();
        assert_eq!(e.to_string(), "duplicate var_id 9 (t7, dup)");
        let secs = t.elapsed().as_secs_f64();
        assert!(secs < 10.0, "{secs} s");
        // The first repeat in file order is the one reported.
        let vars = r#","a":{"type":"tmp-buf","var_id":2,"size":4},"b":{"type":"tmp-buf","var_id":1,"size":4},"c":{"type":"tmp-buf","var_id":2,"size":4}"#;
        let e = read(&model(vars, COPY, trigger("q", 0))).unwrap_err();
        assert_eq!(e.to_string(), "duplicate var_id 1 (y, b)");
    }

    #[test]
    fn a_descriptor_whose_sizes_overflow_is_a_load_error() {
        // 32768^5 is 2^75: it used to wrap to zero records.
        let dma = r#"[{"id":0,"queue":"q","desc":[{"from":"x","to":"y",
            "from_sizes":[1,1,32768,32768,32768,32768,32768],"from_steps":[0,0,0,0,0,0,0],
            "to_sizes":[1,1,32768,32768,32768,32768,32768],"to_steps":[0,0,0,0,0,0,0]}]}]"#;
        let e = read(&model("", dma, trigger("q", 0))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "sg00/pool.json: dma block 0 (queue \"q\", id 0), descriptor 0: the product of its 7 from_sizes overflows 64 bits"
        );
        // Sizes that are not counts are left to the trigger (exit 3).
        let dma = dma.replace("[1,1,32768,", "[1,1,-1,");
        assert!(read(&model("", &dma, trigger("q", 0))).is_ok());
        assert!(read(&model("", COPY, trigger("q", 0))).is_ok());
    }
}
