//! The NEFF-only pseudo-instructions and the mapping onto a program
//! (SPEC-NEFF §4, §5; NEFF-EC-3, NEFF-EC-4, NEFF-EC-5, NEFF-EC-9, NEFF-EC-11).
//!
//! [`expand`] rewrites an engine stream's 0xC1 PSEUDO_DMA_TRIGGER and 0xC8
//! PSEUDO_TRIGGER_COLLECTIVE records into DMA_MEMCPY (0xB8) records using the
//! subgraph's def.json metadata, and retargets the stream's REL_IMM branches
//! so that they still land on the records they named. Every other pseudo-opcode
//! is left to the runtime's lowering (SPEC §8, EC-29), which runs next in
//! [`crate::runtime::stage`]; there the rest of the pseudo band stays rejected
//! by name and offset. [`program`] builds the [`Program`] that stages and runs.

use super::model::{Neff, NeffVar, VarKind};
use crate::files::HostBytes;
use crate::isa::control::{off, target};
use crate::isa::enums::{Dtype, Engine};
use crate::isa::opcode::Opcode;
use crate::isa::validate::{Target, validate_stream};
use crate::limits::RECORD_BYTES;
use crate::runtime::{Program, Role, Variable};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

/// PSEUDO_DMA_TRIGGER (NEFF-EC-4).
pub const PSEUDO_DMA_TRIGGER: u8 = 0xC1;
/// PSEUDO_TRIGGER_COLLECTIVE (NEFF-EC-5).
pub const PSEUDO_TRIGGER_COLLECTIVE: u8 = 0xC8;
/// The VAR_ID marker byte of an ADDR8 (EC-22, NEFF-EC-8).
const VAR_MARKER: u64 = 0x10;
/// The most records one stream's expansions may add (64 MiB of records: a
/// bound on what a small NEFF can make the emulator allocate, not a device limit).
pub const MAX_EXPANDED_RECORDS: usize = 1 << 20;
/// NEFF-EC-5: a collective copy's full rows.
const COLL_ROW: u64 = 0x8000;

/// EC-29's predicate for a pseudo-record without a lowering.
const SUPPORTED: &str = "emu_opcode_supported";

/// The name of a NEFF-only pseudo-opcode, for messages.
pub fn pseudo_name(op: u8) -> Option<&'static str> {
    match op {
        PSEUDO_DMA_TRIGGER => Some("PSEUDO_DMA_TRIGGER"),
        PSEUDO_TRIGGER_COLLECTIVE => Some("PSEUDO_TRIGGER_COLLECTIVE"),
        _ => None,
    }
}

/// A trigger that did not lower: engine, input offset, opcode, why
/// (`emu_opcode_supported`, exit 3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TriggerRejected {
    /// The engine whose stream holds it.
    pub engine: Engine,
    /// Byte offset in the NEFF's stream.
    pub offset: usize,
    /// Its opcode.
    pub opcode: u8,
    /// The failing predicate: `emu_opcode_supported` (EC-29), or
    /// `emu_footprint_in_bounds` for a walk outside a virtual view (NEFF-EC-9).
    pub predicate: &'static str,
    /// Why.
    pub why: TriggerFault,
}

/// Why a 0xC1 or 0xC8 trigger does not lower ([`TriggerRejected::why`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TriggerFault {
    /// NEFF-EC-5: byte 13 names no dtype.
    #[error("dtype byte 13 = {0:#x} is not a dtype")]
    CollectiveDtype(
        /// Byte 13.
        u8,
    ),
    /// NEFF-EC-5: a collective other than ALL_REDUCE.
    #[error("ctype byte 32 = {0}: only ALL_REDUCE (1) is emulated")]
    CollectiveType(
        /// Byte 32.
        u8,
    ),
    /// NEFF-EC-5: reserved bytes set.
    #[error("bytes 33..47 are not zero")]
    CollectiveReserved,
    /// NEFF-EC-5: a completion other than SEM_INC.
    #[error("update_mode {0:#04x}: the collective needs a SEM_INC completion (0x03 or 0x13)")]
    CollectiveUpdate(
        /// Byte 6.
        u8,
    ),
    /// NEFF-EC-5: a replica group of more than one rank.
    #[error("replica_groups with more than one member: one rank only")]
    ReplicaGroups,
    /// NEFF-EC-5: a group id past the replica groups.
    #[error("group_id {group} is not below {groups} groups")]
    GroupId {
        /// The trigger's group id.
        group: usize,
        /// The replica groups.
        groups: usize,
    },
    /// NEFF-EC-5: a tensor id that is no DRAM variable.
    #[error("tensor id {id} (byte {at}) is not a DRAM variable")]
    CollectiveTensor {
        /// The id.
        id: u32,
        /// The record byte it is at.
        at: usize,
    },
    /// NEFF-EC-5: no elements.
    #[error("num_elements is 0")]
    NoElements,
    /// NEFF-EC-5: more bytes than a 32-bit offset reaches.
    #[error("the copy does not fit 32-bit offsets")]
    CopyTooLong,
    /// NEFF-EC-5: the source offset in bytes overflows.
    #[error("src offset overflows")]
    SrcOffset,
    /// NEFF-EC-5: the destination offset in bytes overflows.
    #[error("dst offset overflows")]
    DstOffset,
    /// NEFF-EC-5: a byte offset past 32 bits.
    #[error("offset {0} does not fit 32 bits")]
    Offset(
        /// The offset.
        u64,
    ),
    /// NEFF-EC-4: a trigger without a queue name.
    #[error("empty queue name")]
    EmptyQueue,
    /// NEFF-EC-4: a raw-count trigger.
    #[error("use_raw_count {0} or bytes 52..63 non-zero: only block_id triggers are emulated")]
    RawCount(
        /// `use_raw_count`.
        u32,
    ),
    /// NEFF-EC-4: a queue def.json does not define.
    #[error("unknown DMA queue {0:?}")]
    UnknownQueue(
        /// The queue.
        String,
    ),
    /// NEFF-EC-4: a queue key the emulator does not emulate.
    #[error("queue {queue:?} has `{key}` (not emulated)")]
    QueueKey {
        /// The queue.
        queue: String,
        /// The key.
        key: &'static str,
    },
    /// NEFF-EC-4: a queue type other than `in`, `out` and `data`.
    #[error("queue {queue:?} has type {ty:?}: only in, out and data")]
    QueueType {
        /// The queue.
        queue: String,
        /// Its type (empty when it is not a string).
        ty: String,
    },
    /// NEFF-EC-4: a queue semaphore past 255.
    #[error("queue {0:?}: semaphore is not 0..=255")]
    QueueSemaphore(
        /// The queue.
        String,
    ),
    /// NEFF-EC-4: a block id the queue does not have.
    #[error("no DMA block {block} in queue {queue:?}")]
    NoBlock {
        /// The block id.
        block: u64,
        /// The queue.
        queue: String,
    },
    /// NEFF-EC-4: a block without descriptors.
    #[error("DMA block {block} of queue {queue:?} has no descriptor")]
    EmptyBlock {
        /// The block id.
        block: u64,
        /// The queue.
        queue: String,
    },
    /// NEFF-EC-3: a descriptor of the block that does not lower.
    #[error("block {block} of queue {queue:?}, descriptor {desc}: {fault}")]
    Descriptor {
        /// The block id.
        block: u64,
        /// The queue.
        queue: String,
        /// The descriptor's index in the block.
        desc: usize,
        /// Why.
        fault: DescFault,
    },
    /// The stream's expansions past [`MAX_EXPANDED_RECORDS`].
    #[error("the stream's expansions exceed {MAX_EXPANDED_RECORDS} records")]
    Expansions,
    /// NEFF-EC-9: a walk outside the virtual view its VAR_ID names.
    #[error("the walk at byte {at} leaves its virtual view ({size} bytes)")]
    LeavesView {
        /// The record byte of the walk's address.
        at: usize,
        /// The view's size.
        size: u64,
    },
}

/// Why a DMA descriptor does not lower (NEFF-EC-3, [`TriggerFault::Descriptor`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DescFault {
    /// An address whose VAR_ID offset leaves 32 bits.
    #[error("VAR_ID offset {0} does not fit 32 bits")]
    VarOffset(
        /// The offset.
        i64,
    ),
    /// A state-buffer address past 32 bits.
    #[error("state-buffer address {0} does not fit 32 bits")]
    SbAddress(
        /// The address.
        i64,
    ),
    /// No `from` or `to` string.
    #[error("descriptor without a string `{0}`")]
    NoSide(
        /// `from` or `to`.
        &'static str,
    ),
    /// A side naming no variable.
    #[error("`{side}` names no def.json variable: {name:?}")]
    UnknownVariable {
        /// `from` or `to`.
        side: &'static str,
        /// The name.
        name: String,
    },
    /// No sizes or steps array.
    #[error("descriptor without `{0}`")]
    NoKey(
        /// The key.
        &'static str,
    ),
    /// Sizes and steps of different lengths, or none.
    #[error("{0}_sizes and {0}_steps need the same length >= 1")]
    Lengths(
        /// `from` or `to`.
        &'static str,
    ),
    /// A size that is not an integer >= 1.
    #[error("every {0}_sizes entry is an integer >= 1")]
    Sizes(
        /// `from` or `to`.
        &'static str,
    ),
    /// A size past a DMA count.
    #[error("a size of {0} does not fit a DMA count (0xFFFF)")]
    Count(
        /// The size.
        u64,
    ),
    /// A step that is not an i32.
    #[error("every {0}_steps entry is an i32")]
    Steps(
        /// `from` or `to`.
        &'static str,
    ),
    /// An offset past 32 bits.
    #[error("{0} does not fit 32 bits")]
    Offset(
        /// `from_off` or `to_off`.
        &'static str,
    ),
    /// An `op` other than `copy`.
    #[error("op {0} (only copies are emulated)")]
    Op(
        /// The op, as JSON.
        Value,
    ),
    /// A key of a copy the emulator does not emulate (`*_dtype` for any
    /// other dtype key).
    #[error("`{0}` (only plain copies are emulated)")]
    RefusedKey(
        /// The key.
        &'static str,
    ),
    /// Sizes whose product leaves 64 bits.
    #[error("the product of the sizes overflows 64 bits")]
    SizesOverflow,
    /// Sides that move different byte counts.
    #[error("the two sides move different byte counts")]
    ByteCounts,
    /// Outer dims that differ.
    #[error("dims 2.. of from and to differ in count or sizes")]
    OuterDims,
    /// A block past [`MAX_EXPANDED_RECORDS`].
    #[error("more than {MAX_EXPANDED_RECORDS} records")]
    TooManyRecords,
}

impl fmt::Display for TriggerRejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} stream: Found invalid instruction! opcode={}, offset={}: {} ({} at input byte offset {}: {})",
            self.engine,
            self.opcode,
            self.offset,
            self.predicate,
            pseudo_name(self.opcode)
                .or(Opcode(self.opcode).name())
                .unwrap_or("?"),
            self.offset,
            self.why
        )
    }
}

impl std::error::Error for TriggerRejected {}

/// A stream after [`expand`]: its bytes and, per record, the NEFF offset it came from.
#[derive(Clone, Debug)]
pub struct Expanded<'a> {
    /// The records (borrowed when nothing changed).
    pub bytes: Cow<'a, [u8]>,
    /// Input byte offset of each record (empty when nothing changed).
    pub origin: Vec<u32>,
}

impl Expanded<'_> {
    /// The NEFF stream offset of an offset in the expanded stream.
    pub fn original(&self, offset: usize) -> usize {
        if self.origin.is_empty() {
            offset
        } else {
            self.origin
                .get(offset / RECORD_BYTES)
                .map_or(offset, |&o| o as usize)
        }
    }
}

type Rec = [u8; RECORD_BYTES];

fn u32_at(r: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(r[o..o + 4].try_into().expect("4 bytes"))
}

fn u64_at(r: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(r[o..o + 8].try_into().expect("8 bytes"))
}

/// One side of a copy: base ADDR8, per-dim sizes and steps (bytes, innermost first).
struct Side {
    base: Base,
    sizes: Vec<u64>,
    steps: Vec<i64>,
}

#[derive(Clone, Copy)]
enum Base {
    /// A DRAM variable (or view): VAR_ID id, byte offset.
    Var(u32, i64),
    /// The state buffer: a SPEC §3 on-chip address.
    Sb(i64),
}

impl Base {
    fn at(self, delta: i64) -> Result<u64, DescFault> {
        match self {
            Base::Var(id, o) => {
                let o = o + delta;
                if !(0..=u32::MAX as i64).contains(&o) {
                    return Err(DescFault::VarOffset(o));
                }
                Ok(VAR_MARKER << 56 | (id as u64) << 32 | o as u64)
            }
            Base::Sb(o) => {
                let o = o + delta;
                if !(0..=u32::MAX as i64).contains(&o) {
                    return Err(DescFault::SbAddress(o));
                }
                Ok(o as u64)
            }
        }
    }
}

/// Writes a DMA_MEMCPY with byte-sized elements (NEFF-EC-4, NEFF-EC-5).
/// `nums` and `steps` are `[src, dst]`.
fn memcpy(src: u64, dst: u64, nums: [[u64; 2]; 2], steps: [[i64; 2]; 2]) -> Rec {
    let mut r = [0u8; RECORD_BYTES];
    r[0] = Opcode::DMA_MEMCPY.0;
    r[1] = 16;
    for (k, at, addr) in [(0, off::DMA_SRC, src), (1, off::DMA_DST, dst)] {
        let (nums, steps) = (nums[k], steps[k]);
        r[at..at + 8].copy_from_slice(&addr.to_le_bytes());
        r[at + 8..at + 12].copy_from_slice(&(steps[0] as i32).to_le_bytes());
        r[at + 12..at + 16].copy_from_slice(&(steps[1] as i32).to_le_bytes());
        r[at + 16..at + 18].copy_from_slice(&(nums[0] as u16).to_le_bytes());
        r[at + 18..at + 20].copy_from_slice(&(nums[1] as u16).to_le_bytes());
        r[at + 20..at + 22].copy_from_slice(&1u16.to_le_bytes());
    }
    r[off::DMA_IN_DTYPE] = Dtype::UINT8.0;
    r[off::DMA_OUT_DTYPE] = Dtype::UINT8.0;
    r
}

/// The trigger's wait on the first record, its update on the last, zero bands elsewhere.
fn place_events(trigger: &[u8], out: &mut [Rec]) {
    let n = out.len();
    if n == 0 {
        return;
    }
    out[0][4] = trigger[4];
    out[0][5] = trigger[5];
    out[n - 1][6] = trigger[6];
    out[n - 1][7] = trigger[7];
    if trigger[4] != 0 {
        out[0][8..12].copy_from_slice(&trigger[8..12]);
    }
    if trigger[6] != 0 {
        out[n - 1][8..12].copy_from_slice(&trigger[8..12]);
    }
}

/// NEFF-EC-3: one side of a descriptor.
fn side(neff: &Neff, d: &Value, p: &'static str) -> Result<Side, DescFault> {
    let name = d
        .get(p)
        .and_then(Value::as_str)
        .ok_or(DescFault::NoSide(p))?;
    let v: &NeffVar = neff.var(name).ok_or_else(|| DescFault::UnknownVariable {
        side: p,
        name: name.to_string(),
    })?;
    let (sizes_key, steps_key, off_key) = match p {
        "from" => ("from_sizes", "from_steps", "from_off"),
        _ => ("to_sizes", "to_steps", "to_off"),
    };
    let nums = |k: &'static str| -> Result<&Vec<Value>, DescFault> {
        d.get(k)
            .and_then(Value::as_array)
            .ok_or(DescFault::NoKey(k))
    };
    let sizes = nums(sizes_key)?;
    let steps = nums(steps_key)?;
    if sizes.is_empty() || sizes.len() != steps.len() {
        return Err(DescFault::Lengths(p));
    }
    let sizes: Vec<u64> = sizes
        .iter()
        .map(|s| s.as_u64().filter(|&s| s >= 1))
        .collect::<Option<_>>()
        .ok_or(DescFault::Sizes(p))?;
    if let Some(&s) = sizes.iter().find(|&&s| s > 0xFFFF) {
        return Err(DescFault::Count(s));
    }
    let steps: Vec<i64> = steps
        .iter()
        .map(|s| s.as_i64().filter(|s| i32::try_from(*s).is_ok()))
        .collect::<Option<_>>()
        .ok_or(DescFault::Steps(p))?;
    let o = match d.get(off_key) {
        None => 0,
        Some(x) => x
            .as_u64()
            .filter(|&o| o <= u32::MAX as u64)
            .ok_or(DescFault::Offset(off_key))? as i64,
    };
    let base = match v.kind {
        VarKind::StateBuffer => Base::Sb(o),
        _ => Base::Var(v.id, o),
    };
    Ok(Side { base, sizes, steps })
}

/// The descriptor keys NEFF-EC-3 refuses.
const REFUSED_KEYS: [&str; 13] = [
    "from_arr",
    "cast",
    "scale",
    "scale_dtype",
    "constant",
    "constant_dtype",
    "transpose_op",
    "transpose_shape",
    "transpose_element_size",
    "num_tiling_dimensions",
    "from_dtype",
    "to_dtype",
    "from_arr_dtype",
];

/// One descriptor, read (NEFF-EC-3): its two sides (dims 0 and 1 in each
/// record) and the outer dims (2..) that number its records.
struct Desc {
    from: Side,
    to: Side,
    /// The outer dims of more than one element (dim 2 first; a dim of
    /// size 1 adds nothing to an offset): size, from step, to step.
    outer: Vec<(u64, i64, i64)>,
    /// The records it makes: the product of the outer sizes.
    count: u64,
}

/// NEFF-EC-3: reads one descriptor.
fn desc(neff: &Neff, d: &Value) -> Result<Desc, DescFault> {
    if let Some(op) = d.get("op")
        && op.as_str() != Some("copy")
    {
        return Err(DescFault::Op(op.clone()));
    }
    if let Some(k) = REFUSED_KEYS
        .iter()
        .find(|k| d.get(**k).is_some())
        .or_else(|| {
            d.as_object()
                .and_then(|o| o.keys().find(|k| k.ends_with("_dtype")).map(|_| &"*_dtype"))
        })
    {
        return Err(DescFault::RefusedKey(k));
    }
    let mut from = side(neff, d, "from")?;
    let mut to = side(neff, d, "to")?;
    let prod = |s: &Side| s.sizes.iter().try_fold(1u64, |a, &x| a.checked_mul(x));
    let (Some(a), Some(b)) = (prod(&from), prod(&to)) else {
        // The reader refuses these (exit 4); a changed `Neff` meets this.
        return Err(DescFault::SizesOverflow);
    };
    if a != b {
        return Err(DescFault::ByteCounts);
    }
    for s in [&mut from, &mut to] {
        while s.sizes.len() < 2 {
            s.sizes.push(1);
            s.steps.push(0);
        }
    }
    if from.sizes[2..] != to.sizes[2..] {
        return Err(DescFault::OuterDims);
    }
    let outer: Vec<(u64, i64, i64)> = (2..from.sizes.len())
        .filter(|&k| from.sizes[k] > 1)
        .map(|k| (from.sizes[k], from.steps[k], to.steps[k]))
        .collect();
    // Bounded by the whole product, checked above.
    let count = outer.iter().map(|o| o.0).product();
    Ok(Desc {
        from,
        to,
        outer,
        count,
    })
}

/// What [`expand`]'s triggers look up, indexed once per stream: queues by
/// name and blocks by (queue, id), the first of each, as a search in file
/// order finds them; a block's descriptors are read on its first trigger.
struct Index<'a> {
    queues: HashMap<&'a str, &'a Value>,
    blocks: HashMap<(&'a str, u64), Block<'a>>,
}

type Block<'a> = (
    &'a super::model::DmaBlock,
    std::cell::OnceCell<Vec<Result<Desc, DescFault>>>,
);

impl<'a> Index<'a> {
    fn new(neff: &'a Neff) -> Index<'a> {
        let mut queues = HashMap::with_capacity(neff.queues.len());
        for (n, q) in &neff.queues {
            queues.entry(n.as_str()).or_insert(q);
        }
        let mut blocks = HashMap::with_capacity(neff.blocks.len());
        for b in &neff.blocks {
            blocks
                .entry((b.queue.as_str(), b.id))
                .or_insert((b, std::cell::OnceCell::new()));
        }
        Index { queues, blocks }
    }
}

/// NEFF-EC-4: the records of one 0xC1 trigger.
fn trigger(neff: &Neff, ix: &Index, r: &[u8], out: &mut Vec<Rec>) -> Result<(), TriggerFault> {
    let field = &r[12..44];
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    let name = String::from_utf8_lossy(&field[..end]).into_owned();
    if name.is_empty() {
        return Err(TriggerFault::EmptyQueue);
    }
    let raw = u32_at(r, 44);
    if raw != 0 || r[52..64].iter().any(|&b| b != 0) {
        return Err(TriggerFault::RawCount(raw));
    }
    let block_id = u32_at(r, 48) as u64;
    let q = *ix
        .queues
        .get(name.as_str())
        .ok_or_else(|| TriggerFault::UnknownQueue(name.clone()))?;
    for k in ["semaphore_set", "num_queues", "queue_instances"] {
        if q.get(k).is_some() {
            return Err(TriggerFault::QueueKey {
                queue: name,
                key: k,
            });
        }
    }
    let ty = q.get("type").and_then(Value::as_str).unwrap_or("");
    if !matches!(ty, "in" | "out" | "data") {
        return Err(TriggerFault::QueueType {
            queue: name,
            ty: ty.to_string(),
        });
    }
    let sem = match q.get("semaphore") {
        None => None,
        Some(s) => Some(
            s.as_u64()
                .filter(|&s| s <= 255)
                .ok_or_else(|| TriggerFault::QueueSemaphore(name.clone()))? as u8,
        ),
    };
    let (b, descs) =
        ix.blocks
            .get(&(name.as_str(), block_id))
            .ok_or_else(|| TriggerFault::NoBlock {
                block: block_id,
                queue: name.clone(),
            })?;
    if b.desc.is_empty() {
        return Err(TriggerFault::EmptyBlock {
            block: block_id,
            queue: name,
        });
    }
    let descs = descs.get_or_init(|| b.desc.iter().map(|d| desc(neff, d)).collect());
    let start = out.len();
    for (i, d) in descs.iter().enumerate() {
        let bad = |fault: DescFault| TriggerFault::Descriptor {
            block: block_id,
            queue: name.clone(),
            desc: i,
            fault,
        };
        let d = d.as_ref().map_err(|f| bad(f.clone()))?;
        if (out.len() - start) as u64 + d.count > MAX_EXPANDED_RECORDS as u64 {
            return Err(bad(DescFault::TooManyRecords));
        }
        let (from, to) = (&d.from, &d.to);
        let mut idx = vec![0u64; d.outer.len()];
        for _ in 0..d.count {
            // Each term is below 2^16 × 2^31, and at most 20 dims are
            // counted (2^20 records at most): no overflow.
            let (mut df, mut dt) = (0i64, 0i64);
            for (&i, &(_, sf, st)) in idx.iter().zip(&d.outer) {
                df += i as i64 * sf;
                dt += i as i64 * st;
            }
            let src = from.base.at(df).map_err(bad)?;
            let dst = to.base.at(dt).map_err(bad)?;
            out.push(memcpy(
                src,
                dst,
                [[from.sizes[0], from.sizes[1]], [to.sizes[0], to.sizes[1]]],
                [[from.steps[0], from.steps[1]], [to.steps[0], to.steps[1]]],
            ));
            // Dim 2 fastest.
            for (i, o) in idx.iter_mut().zip(&d.outer) {
                *i += 1;
                if *i < o.0 {
                    break;
                }
                *i = 0;
            }
        }
    }
    let recs = &mut out[start..];
    place_events(r, recs);
    if let (Some(last), Some(s)) = (recs.last_mut(), sem) {
        last[off::DMA_SEM] = s;
        last[off::DMA_SEM_INC] = 1;
    }
    Ok(())
}

/// NEFF-EC-5: the records of one single-rank 0xC8 ALL_REDUCE.
fn collective(neff: &Neff, r: &[u8], out: &mut Vec<Rec>) -> Result<(), TriggerFault> {
    let dtype = Dtype(r[13]);
    if !(0x01..=0x0F).contains(&dtype.0) {
        return Err(TriggerFault::CollectiveDtype(dtype.0));
    }
    if r[32] != 1 {
        return Err(TriggerFault::CollectiveType(r[32]));
    }
    if r[33..48].iter().any(|&b| b != 0) {
        return Err(TriggerFault::CollectiveReserved);
    }
    if !matches!(r[6], 0x03 | 0x13) {
        return Err(TriggerFault::CollectiveUpdate(r[6]));
    }
    let group = u16::from_le_bytes([r[14], r[15]]) as usize;
    if let Some(g) = &neff.replica_groups {
        let groups = g.as_array().cloned().unwrap_or_default();
        if !groups.is_empty() {
            if groups
                .iter()
                .any(|x| x.as_array().is_none_or(|m| m.len() > 1))
            {
                return Err(TriggerFault::ReplicaGroups);
            }
            if group >= groups.len() {
                return Err(TriggerFault::GroupId {
                    group,
                    groups: groups.len(),
                });
            }
        }
    }
    let tensor = |at: usize| -> Result<u32, TriggerFault> {
        let id = u32_at(r, at);
        match neff.vars.get(id as usize) {
            Some(v) if v.kind.is_dram() || matches!(v.kind, VarKind::Virtual { .. }) => Ok(id),
            _ => Err(TriggerFault::CollectiveTensor { id, at }),
        }
    };
    let (src_id, dst_id) = (tensor(16)?, tensor(20)?);
    let n = u64_at(r, 24);
    if n == 0 {
        return Err(TriggerFault::NoElements);
    }
    let s = dtype.size().unwrap_or(1) as u64;
    let len = n
        .checked_mul(s)
        .filter(|&l| l <= u32::MAX as u64)
        .ok_or(TriggerFault::CopyTooLong)?;
    let src0 = u64_at(r, 48)
        .checked_mul(s)
        .ok_or(TriggerFault::SrcOffset)?;
    let dst0 = u64_at(r, 56)
        .checked_mul(s)
        .ok_or(TriggerFault::DstOffset)?;
    let addr = |id: u32, o: u64| -> Result<u64, TriggerFault> {
        if o > u32::MAX as u64 {
            return Err(TriggerFault::Offset(o));
        }
        Ok(VAR_MARKER << 56 | (id as u64) << 32 | o)
    };
    let start = out.len();
    let mut done = 0u64;
    if len <= 0xFFFF {
        out.push(memcpy(
            addr(src_id, src0)?,
            addr(dst_id, dst0)?,
            [[len, 1]; 2],
            [[1, 0]; 2],
        ));
    } else {
        let mut rows = len / COLL_ROW;
        while rows > 0 {
            let k = rows.min(0xFFFF);
            out.push(memcpy(
                addr(src_id, src0 + done)?,
                addr(dst_id, dst0 + done)?,
                [[COLL_ROW, k]; 2],
                [[1, COLL_ROW as i64]; 2],
            ));
            done += k * COLL_ROW;
            rows -= k;
        }
        let rest = len % COLL_ROW;
        if rest != 0 {
            out.push(memcpy(
                addr(src_id, src0 + done)?,
                addr(dst_id, dst0 + done)?,
                [[rest, 1]; 2],
                [[1, 0]; 2],
            ));
        }
    }
    place_events(r, &mut out[start..]);
    Ok(())
}

/// NEFF-EC-4, NEFF-EC-5: expands `engine`'s 0xC1 and 0xC8 records and
/// retargets REL_IMM branches (EC-29) to the records they named.
pub fn expand(neff: &Neff, engine: Engine) -> Result<Expanded<'_>, TriggerRejected> {
    let bytes = neff.stream(engine);
    let triggers = bytes
        .chunks_exact(RECORD_BYTES)
        .any(|r| matches!(r[0], PSEUDO_DMA_TRIGGER | PSEUDO_TRIGGER_COLLECTIVE));
    if !triggers {
        return Ok(Expanded {
            bytes: Cow::Borrowed(bytes),
            origin: Vec::new(),
        });
    }
    let n = bytes.len() / RECORD_BYTES;
    let mut out: Vec<Rec> = Vec::with_capacity(n + 16);
    let mut origin: Vec<u32> = Vec::with_capacity(n + 16);
    let mut first: Vec<usize> = Vec::with_capacity(n + 1);
    let mut fixes: Vec<(usize, usize)> = Vec::new();
    let ix = Index::new(neff);
    for (i, r) in bytes.chunks_exact(RECORD_BYTES).enumerate() {
        let at = i * RECORD_BYTES;
        first.push(out.len());
        let before = out.len();
        let res = match r[0] {
            PSEUDO_DMA_TRIGGER => trigger(neff, &ix, r, &mut out),
            PSEUDO_TRIGGER_COLLECTIVE => collective(neff, r, &mut out),
            _ => {
                if r[0] == Opcode::COMPARE_BRANCH.0 && r[off::BR_TARGET_MODE] == target::REL_IMM {
                    let rel = u64_at(r, off::BR_REL) as i64 as i128;
                    let to = at as i128 + rel;
                    if (0..=bytes.len() as i128).contains(&to) && to % RECORD_BYTES as i128 == 0 {
                        fixes.push((out.len(), (to / RECORD_BYTES as i128) as usize));
                    }
                }
                out.push(r.try_into().expect("64 bytes"));
                Ok(())
            }
        };
        res.map_err(|why| TriggerRejected {
            engine,
            offset: at,
            opcode: r[0],
            predicate: SUPPORTED,
            why,
        })?;
        if out.len().saturating_sub(i + 1) > MAX_EXPANDED_RECORDS {
            return Err(TriggerRejected {
                engine,
                offset: at,
                opcode: r[0],
                predicate: SUPPORTED,
                why: TriggerFault::Expansions,
            });
        }
        origin.extend(std::iter::repeat_n(at as u32, out.len() - before));
    }
    first.push(out.len());
    for (at, to) in fixes {
        let rel = (first[to] as i64 - at as i64) * RECORD_BYTES as i64;
        out[at][off::BR_REL..off::BR_REL + 8].copy_from_slice(&rel.to_le_bytes());
    }
    Ok(Expanded {
        bytes: Cow::Owned(out.concat()),
        origin,
    })
}

/// Why an engine stream of a NEFF is not valid.
#[derive(Debug, thiserror::Error)]
pub enum EngineInvalid {
    /// A trigger was rejected (NEFF-EC-4, NEFF-EC-5).
    #[error(transparent)]
    Trigger(#[from] TriggerRejected),
    /// The runtime's lowering rejected a pseudo-record (EC-29); `neff_offset`
    /// is its offset in the NEFF's stream.
    #[error("{engine} stream: {rejected} [NEFF offset {neff_offset}]")]
    Lower {
        /// The engine.
        engine: Engine,
        /// The rejection (offsets in the expanded stream).
        rejected: crate::runtime::lower::Rejected,
        /// Offset in the NEFF's stream.
        neff_offset: usize,
    },
    /// A record failed a SPEC §5 predicate.
    #[error("{engine} stream: {invalid} [NEFF offset {neff_offset}]")]
    Record {
        /// The engine.
        engine: Engine,
        /// The failure (offsets in the lowered and expanded streams).
        invalid: crate::runtime::lower::LoweredInvalid,
        /// Offset in the NEFF's stream.
        neff_offset: usize,
    },
}

/// `validate MODEL.neff`'s work for one engine: expands the triggers, lowers
/// (SPEC §8) and validates every record for the NEFF's generation. A stream
/// with no pseudo-opcode after expansion lowers to itself, so it is validated
/// in place. Returns the records validated.
pub fn validate_engine(neff: &Neff, engine: Engine) -> Result<usize, EngineInvalid> {
    let t = target(neff, engine);
    // `validate_stream` refuses every pseudo-opcode, 0xC1 and 0xC8 among
    // them: a stream it accepts has nothing to expand or lower, and the
    // common case takes one pass. Otherwise the full path finds the error.
    match validate_stream(neff.stream(engine), t) {
        Ok(n) => Ok(n),
        Err(_) => expand_and_validate(neff, engine),
    }
}

/// Records per piece when [`validate_engines`] spreads streams over threads.
const PIECE_RECORDS: usize = 1 << 16;

/// [`validate_engine`] for each of `engines`, on every host thread; the
/// results in the order given, each the one [`validate_engine`] returns, so
/// the first error in that order is the one a sequential run meets first.
pub fn validate_engines(neff: &Neff, engines: &[Engine]) -> Vec<Result<usize, EngineInvalid>> {
    use std::sync::atomic::{AtomicBool, Ordering};
    // Every stream in record-aligned pieces, so that the common case (streams
    // `validate_stream` accepts in place) keeps every thread busy whatever
    // the streams' lengths. Pieces are (index in `engines`, byte range).
    let piece = PIECE_RECORDS * RECORD_BYTES;
    let pieces: Vec<(usize, std::ops::Range<usize>)> = engines
        .iter()
        .enumerate()
        .flat_map(|(k, &e)| {
            let len = neff.stream(e).len();
            (0..len)
                .step_by(piece)
                .map(move |at| (k, at..(at + piece).min(len)))
        })
        .collect();
    // Once a piece fails (a trigger, say) the engine takes the full path:
    // its pieces not yet started are skipped.
    let full_path: Vec<AtomicBool> = engines.iter().map(|_| AtomicBool::new(false)).collect();
    super::par::map(&pieces, |(k, r)| {
        let e = engines[*k];
        if !full_path[*k].load(Ordering::Relaxed)
            && validate_stream(&neff.stream(e)[r.clone()], target(neff, e)).is_err()
        {
            full_path[*k].store(true, Ordering::Relaxed);
        }
    });
    let ks: Vec<usize> = (0..engines.len()).collect();
    super::par::map(&ks, |&k| {
        let e = engines[k];
        if full_path[k].load(Ordering::Relaxed) {
            expand_and_validate(neff, e)
        } else {
            Ok(neff.stream(e).len() / RECORD_BYTES)
        }
    })
}

fn target(neff: &Neff, engine: Engine) -> Target {
    Target {
        engine,
        arch: neff.arch,
    }
}

/// [`validate_engine`]'s full path: expansion, then validation in place or
/// after the runtime's lowering.
fn expand_and_validate(neff: &Neff, engine: Engine) -> Result<usize, EngineInvalid> {
    use crate::isa::validate::StreamInvalid;
    use crate::runtime::lower::{LowerError, LoweredInvalid, lower, validate_lowered};
    let x = expand(neff, engine)?;
    let t = target(neff, engine);
    let has_pseudo = x
        .bytes
        .chunks_exact(RECORD_BYTES)
        .any(|r| Opcode(r[0]).is_pseudo());
    if !has_pseudo {
        return validate_stream(&x.bytes, t).map_err(|e| match e {
            StreamInvalid::Invalid(record) => EngineInvalid::Record {
                engine,
                neff_offset: x.original(record.offset),
                invalid: LoweredInvalid {
                    record,
                    original: record.offset,
                },
            },
            StreamInvalid::Malformed(_) => {
                unreachable!("the reader checked whole records")
            }
        });
    }
    let l = lower(&x.bytes).map_err(|e| match e {
        LowerError::Rejected(rejected) => EngineInvalid::Lower {
            engine,
            neff_offset: x.original(rejected.offset),
            rejected,
        },
        LowerError::Malformed(_) => unreachable!("the reader checked whole records"),
    })?;
    validate_lowered(&l, t).map_err(|invalid| EngineInvalid::Record {
        engine,
        neff_offset: x.original(invalid.original),
        invalid,
    })
}

/// Why a NEFF did not become a program.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    /// A trigger was rejected (exit 3).
    #[error(transparent)]
    Rejected(#[from] TriggerRejected),
}

/// A NEFF as a program: the streams after [`expand`] and each one's origin map.
pub struct Mapped<'a> {
    /// The program (generation, streams, DRAM variables in `var_id` order).
    pub program: Program,
    /// Per engine, the expansions' origin maps.
    pub streams: Vec<Expanded<'a>>,
}

/// True for a name `Program` accepts as a file stem (NEFF-EC-7's rule).
fn stem_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && !s.starts_with(['.', '-'])
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// The byte span `[lo, hi)` a DMA walk at byte `off` touches, relative to
/// its variable (EC-23's walk: steps in elements; an empty walk touches nothing).
fn walk_span(r: &[u8], at: usize, off: i64) -> Option<(i64, i64)> {
    let step = |k: usize| {
        i32::from_le_bytes(r[at + 8 + 4 * k..at + 12 + 4 * k].try_into().expect("4")) as i64
    };
    let num = |k: usize| u16::from_le_bytes([r[at + 16 + 2 * k], r[at + 17 + 2 * k]]) as i64;
    let es = u16::from_le_bytes([r[at + 20], r[at + 21]]) as i64;
    if num(0) == 0 || num(1) == 0 {
        return None;
    }
    let (mut lo, mut hi) = (off, off + es);
    for k in 0..2 {
        let d = (num(k) - 1) * step(k) * es;
        if d < 0 {
            lo += d;
        } else {
            hi += d;
        }
    }
    Some((lo, hi))
}

/// NEFF-EC-9: a VAR_ID naming a `virtual` view addresses bytes of its backing
/// variable, and its walk must stay inside the view. Rewrites every such
/// operand of DMA_MEMCPY and DMA_DIRECT2D records to the backing variable's
/// id and offset; a walk outside its view fails `emu_footprint_in_bounds` (exit 3).
fn resolve_views(neff: &Neff, engine: Engine, x: &mut Expanded) -> Result<(), MapError> {
    let views: HashMap<u32, (u32, u64, u64)> = neff
        .vars
        .iter()
        .filter_map(|v| match &v.kind {
            VarKind::Virtual { backing, offset } => {
                let b = neff.var(backing)?;
                Some((v.id, (b.id, *offset, v.size.unwrap_or(0))))
            }
            _ => None,
        })
        .collect();
    if views.is_empty() {
        return Ok(());
    }
    let mut bytes = x.bytes.to_vec();
    for (i, r) in bytes.chunks_exact_mut(RECORD_BYTES).enumerate() {
        if r[0] != Opcode::DMA_MEMCPY.0 && r[0] != Opcode::PSEUDO_DMA_DIRECT2D.0 {
            continue;
        }
        for at in [off::DMA_SRC, off::DMA_DST] {
            let a = u64_at(r, at);
            if a >> 56 != VAR_MARKER {
                continue;
            }
            let Some(&(backing, base, size)) = views.get(&((a >> 32 & 0xFF_FFFF) as u32)) else {
                continue;
            };
            let o = (a & 0xFFFF_FFFF) as i64;
            let inside = walk_span(r, at, o).is_none_or(|(lo, hi)| lo >= 0 && hi <= size as i64);
            let new = base + o as u64;
            if !inside || new > u32::MAX as u64 {
                let at_in = x.original(i * RECORD_BYTES);
                return Err(MapError::Rejected(TriggerRejected {
                    engine,
                    offset: at_in,
                    opcode: r[0],
                    predicate: "emu_footprint_in_bounds",
                    why: TriggerFault::LeavesView { at, size },
                }));
            }
            let a = VAR_MARKER << 56 | (backing as u64) << 32 | new;
            r[at..at + 8].copy_from_slice(&a.to_le_bytes());
        }
    }
    x.bytes = Cow::Owned(bytes);
    Ok(())
}

/// SPEC-NEFF §5: the program of a NEFF. DRAM variables (NEFF-EC-9) in
/// `var_id` order; `inputs` fills input variables by name (others stay zero);
/// `file` variables hold their weights (NEFF-EC-10); NEFF-EC-11: no
/// preamble, semaphores start at zero.
pub fn program<'a>(
    neff: &'a Neff,
    inputs: &HashMap<String, HostBytes>,
) -> Result<Mapped<'a>, MapError> {
    let mut p = Program::new(neff.arch);
    let mut streams = Vec::with_capacity(5);
    for e in Engine::ALL {
        let mut x = expand(neff, e)?;
        resolve_views(neff, e, &mut x)?;
        p.streams[e as usize] = x.bytes.to_vec();
        streams.push(x);
    }
    for v in &neff.vars {
        let role = match &v.kind {
            VarKind::Input => Role::Input,
            VarKind::Output => Role::Output,
            VarKind::TmpBuf | VarKind::File => Role::Scratch,
            // NEFF-EC-9: views were resolved into their backing variables.
            VarKind::StateBuffer | VarKind::Virtual { .. } => continue,
        };
        let name = if stem_ok(&v.name) {
            v.name.clone()
        } else {
            format!("var{}", v.id)
        };
        let shape = if v.shape.is_empty() {
            vec![1]
        } else {
            v.shape.clone()
        };
        let init = match &v.kind {
            VarKind::File => neff.weight(v).map(|w| w.to_vec().into()),
            VarKind::Input => inputs.get(&v.name).cloned(),
            _ => None,
        };
        p.add(Variable {
            name,
            id: v.id,
            dtype: v.dtype,
            shape,
            role,
            init,
        });
    }
    Ok(Mapped {
        program: p,
        streams,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neff::testing::{model, read, trigger};

    const COPY: &str = r#"[{"id":0,"queue":"q","desc":[{"from":"x","to":"y",
        "from_sizes":[4,1,2,1,2],"from_steps":[1,0,4,0,8],"to_sizes":[4,1,2,1,2],"to_steps":[1,0,4,0,8]}]}]"#;

    #[test]
    fn an_overflowing_product_of_outer_sizes_is_an_error_not_zero_records() {
        let mut n = read(&model("", COPY, trigger("q", 0))).unwrap();
        // Outer dims of one element add nothing: 2 × 2 records.
        let x = expand(&n, Engine::Pool).unwrap();
        assert_eq!(x.bytes.len(), 4 * RECORD_BYTES);
        let src: Vec<u64> = x
            .bytes
            .chunks(RECORD_BYTES)
            .map(|r| u64_at(r, off::DMA_SRC) & 0xFFFF_FFFF)
            .collect();
        assert_eq!(src, [0, 4, 8, 12]);
        // The reader refuses such sizes; a `Neff` changed after reading
        // meets the same check at the trigger.
        let d = &mut n.blocks[0].desc[0];
        let big = serde_json::json!([1, 1, 32768, 32768, 32768, 32768, 32768]);
        d["from_sizes"] = big.clone();
        d["to_sizes"] = big;
        d["from_steps"] = serde_json::json!([0, 0, 0, 0, 0, 0, 0]);
        d["to_steps"] = serde_json::json!([0, 0, 0, 0, 0, 0, 0]);
        let e = expand(&n, Engine::Pool).unwrap_err();
        assert_eq!(
            e.why.to_string(),
            "block 0 of queue \"q\", descriptor 0: the product of the sizes overflows 64 bits"
        );
        assert!(matches!(
            e.why,
            TriggerFault::Descriptor {
                fault: DescFault::SizesOverflow,
                ..
            }
        ));
    }
}
