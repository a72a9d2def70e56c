//! Provenance (`tpb-emu why`): which record wrote an element, and from what.
//!
//! **Write tracking.** [`Writes`] is the run's log of executed records in
//! the scheduler's order (engine, record index), filled by a
//! [`super::Watch`] on the CPU reference; nothing is recorded in a run
//! without one. It answers the last-writer question for any byte *at any
//! point of the run* ([`Writes::last_writer`]): walking the log backwards,
//! a record's write span rules it out cheaply, and the record's exact walk
//! decides. A map of final last writers alone could not say who wrote a
//! window's bytes before a later tile reused them; the log can, for about 8
//! bytes per executed record.
//!
//! **The chain.** [`trace`] starts at one element at the end of the run and
//! asks who wrote it last; for that record it lists the source elements
//! that made the value (a DMA: the element its walk moved; Pool: the window;
//! Copy/Cast and Tensor-Tensor: the operand elements at the same walk
//! position; CrossLaneReduce: the lanes folded; Iota: none, a constant), each
//! read just before the record ran, and asks the same of each source, up to
//! [`MAX_NODES`] elements. A DRAM byte no record wrote is an input's element
//! or the initial zeros; an on-chip one is SBUF/PSUM's initial zeros.
//! [`Tree::captures`] lists the (point, bytes) pairs whose values a second
//! CPU run reads ([`Tree::fill`]), and [`Tree::chain`] then follows the
//! value: for max (and MaxPoolSelect) the window element that won (EC-11's
//! first maximum), otherwise the first source.

use super::sched::Executed;
use super::staged::{Op as StepOp, Staged};
use crate::device::convert::{InType, load_f32};
use crate::device::ops::KernelOp;
use crate::device::ops::pool::{Func, Side};
use crate::device::ops::{Op, cross_lane};
use crate::isa::enums::{Dtype, Engine};
use crate::isa::tensor::Region;
use crate::isa::text::disasm_record;
use serde::Serialize;

/// Most elements one [`trace`] visits (the chain and every listed source).
pub const MAX_NODES: usize = 512;
/// Most sources listed for one record (a CrossLaneReduce over the All axis
/// folds every element of every lane).
pub const MAX_SOURCES: usize = 64;

/// Where bytes live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mem {
    /// Device DRAM (EC-18): byte addresses.
    Dram,
    /// SBUF: partition · active bytes + offset.
    Sbuf,
    /// PSUM: partition · active bytes + offset.
    Psum,
}

impl Mem {
    fn of_index(i: usize) -> Mem {
        match i {
            0 => Mem::Dram,
            1 => Mem::Sbuf,
            _ => Mem::Psum,
        }
    }
    fn index(self) -> usize {
        self as usize
    }
    fn region(self) -> Option<Region> {
        match self {
            Mem::Dram => None,
            Mem::Sbuf => Some(Region::Sbuf),
            Mem::Psum => Some(Region::Psum),
        }
    }
}

/// Bytes `[at, at + len)` of one memory (indices as in [`Mem`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Place {
    /// The memory.
    pub mem: u8,
    /// First byte.
    pub at: u64,
    /// Bytes.
    pub len: u64,
}

/// A DRAM variable as `why` names its elements.
#[derive(Clone, Debug)]
pub struct VarInfo {
    /// Its name.
    pub name: String,
    /// Element type.
    pub dtype: Dtype,
    /// Shape, C order.
    pub shape: Vec<u64>,
    /// First DRAM byte.
    pub base: u64,
    /// Bytes.
    pub len: u64,
    /// An input (its bytes at start are the caller's).
    pub input: bool,
}

/// The run's executed records in order ([`Writes::record`] from a watch).
#[derive(Clone, Debug, Default)]
pub struct Writes {
    log: Vec<(u8, u32)>,
}

impl Writes {
    /// Notes one executed record (call from a [`super::Watch`], in order).
    pub fn record(&mut self, e: Executed) {
        self.log.push((e.engine as u8, e.index as u32));
    }

    /// Records executed.
    pub fn len(&self) -> u64 {
        self.log.len() as u64
    }

    /// True when nothing ran.
    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    /// The last record among the first `before` executed that wrote any
    /// byte of `place`: its position in the run and what it wrote there.
    pub fn last_writer(&self, staged: &Staged, place: Place, before: u64) -> Option<(u64, Hit)> {
        let end = (before as usize).min(self.log.len());
        for seq in (0..end).rev() {
            let (e, i) = self.log[seq];
            let step = &staged.steps[e as usize][i as usize];
            for b in place.at..place.at + place.len {
                if let Some(hit) = writes(staged, &step.op, place.mem, b) {
                    return Some((seq as u64, hit));
                }
            }
        }
        None
    }
}

/// What one record wrote at a byte: the element it wrote there and the
/// elements its value came from.
#[derive(Clone, Debug)]
pub struct Hit {
    /// What kind of record (`DMA`, `Pool max`, …).
    pub kind: String,
    /// The element written (its bytes) and its type when known.
    pub dst: (Place, Option<Dtype>),
    /// The source elements, each with a label and its type when known.
    pub sources: Vec<(String, Place, Option<Dtype>)>,
    /// Sources left out ([`MAX_SOURCES`]).
    pub more: u64,
    /// How the value follows from the sources (`max`, `select`, …).
    pub rule: Rule,
    /// A note (the walk position, a conversion, a constant's formula).
    pub note: String,
}

/// How a record's value follows from its sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rule {
    /// A copy of the first source (maybe converted).
    Copy,
    /// The first maximum of the sources (EC-11).
    Max,
    /// A fold of every source.
    Fold,
    /// No sources: a constant.
    Constant,
    /// The record's sources are not traced (a kernel `why` does not follow).
    Untraced,
}

/// The element index of walk position `pos` (x fastest).
fn walk_index(num: [u64; 4], step: [i64; 4], mut pos: u64) -> i64 {
    let mut idx = 0;
    for d in 0..4 {
        let n = num[d].max(1);
        idx += (pos % n) as i64 * step[d];
        pos /= n;
    }
    idx
}

fn active(staged: &Staged, r: Region) -> u64 {
    r.active_bytes(staged.arch) as u64
}

/// Byte index (in its memory) of walk position `pos` of lane `lane` of `s`.
fn side_at(staged: &Staged, s: &Side, lane: u32, pos: u64, size: usize) -> Place {
    let a = active(staged, s.region);
    let off = s.offset as i64 + walk_index(s.num, s.step, pos) * size as i64;
    Place {
        mem: match s.region {
            Region::Sbuf => Mem::Sbuf,
            Region::Psum => Mem::Psum,
        }
        .index() as u8,
        at: (s.partition + lane) as u64 * a + off as u64,
        len: size as u64,
    }
}

/// The walk position `k < count` of lane `lane` of `s` whose element covers
/// byte `at`, when `at` lies in that lane's span.
fn find_pos(
    staged: &Staged,
    s: &Side,
    lanes: std::ops::Range<u32>,
    count: u64,
    size: usize,
    mem: u8,
    at: u64,
) -> Option<(u32, u64)> {
    let region_mem = match s.region {
        Region::Sbuf => Mem::Sbuf,
        Region::Psum => Mem::Psum,
    };
    if mem != region_mem.index() as u8 {
        return None;
    }
    let a = active(staged, s.region);
    let (p, off) = ((at / a) as u32, (at % a) as i64);
    let lane = p.checked_sub(s.partition)?;
    if !lanes.contains(&lane) {
        return None;
    }
    let (lo, hi) = s.byte_range(size);
    if off < lo || off >= hi {
        return None;
    }
    (0..count).find_map(|k| {
        let e = s.offset as i64 + walk_index(s.num, s.step, k) * size as i64;
        (e <= off && off < e + size as i64).then_some((lane, k))
    })
}

fn in_dtype(t: InType) -> Dtype {
    t.dtype()
}

/// What the step `op` wrote at byte `at` of memory `mem`, if it wrote it.
fn writes(staged: &Staged, op: &StepOp, mem: u8, at: u64) -> Option<Hit> {
    match op {
        StepOp::Dma(plan) => {
            let k = plan.dst_position(mem as usize, at as usize)?;
            let (dm, di, dn) = plan.element(true, k);
            let (sm, si, sn) = plan.element(false, k);
            let (sd, dd, note) = match plan.conversion() {
                Some((i, o)) => (
                    Some(in_dtype(i)),
                    Some(o.dtype()),
                    format!(
                        "element {k} of its walk, converted {} -> {} (SPEC §6)",
                        in_dtype(i),
                        o.dtype()
                    ),
                ),
                None => (
                    None,
                    None,
                    format!("element {k} of its walk, bytes as they are"),
                ),
            };
            let note = format!("{plan}; {note}");
            Some(Hit {
                kind: "DMA".into(),
                dst: (place(dm, di, dn), dd),
                sources: vec![("src".into(), place(sm, si, sn), sd)],
                more: 0,
                rule: Rule::Copy,
                note,
            })
        }
        StepOp::Pool(v) => datapath(staged, &Op::from_validated(v)?, mem, at),
        _ => None,
    }
}

fn place(mem: usize, at: usize, len: usize) -> Place {
    Place {
        mem: mem as u8,
        at: at as u64,
        len: len as u64,
    }
}

/// What a datapath op wrote at byte `at` of memory `mem`, if it wrote it.
fn datapath(staged: &Staged, op: &Op, mem: u8, at: u64) -> Option<Hit> {
    let lanes = 0..op.channels();
    match op {
        Op::Pool(p) => {
            let (isz, osz) = (p.in_ty().size(), p.out_ty().size());
            let (lane, k) = find_pos(staged, p.dst(), lanes, p.num(), osz, mem, at)?;
            let period = p.period();
            let sources: Vec<_> = (0..period.min(MAX_SOURCES as u64))
                .map(|e| {
                    let pos = k * period + e;
                    (
                        format!("window element {e}"),
                        side_at(staged, p.src(), lane, pos, isz),
                        Some(in_dtype(p.in_ty())),
                    )
                })
                .collect();
            let (kind, rule, note) = match p.func() {
                Func::Max => (
                    "Pool max",
                    Rule::Max,
                    "the first maximum wins (EC-11)".into(),
                ),
                Func::Avg { scale } => (
                    "Pool avg",
                    Rule::Fold,
                    format!("sum in window order from +0.0, times scale {scale} (EC-12)"),
                ),
                Func::Select => (
                    "MaxPoolSelect",
                    Rule::Max,
                    "the 0-based position of the first maximum (EC-11)".into(),
                ),
            };
            Some(Hit {
                kind: kind.into(),
                dst: (
                    side_at(staged, p.dst(), lane, k, osz),
                    Some(p.out_ty().dtype()),
                ),
                sources,
                more: period.saturating_sub(MAX_SOURCES as u64),
                rule,
                note: format!("lane {lane}, output {k} of {}; {note}", p.num()),
            })
        }
        Op::Copy(c) => {
            let (ssz, dsz) = (c.conversion().src_size(), c.conversion().dst_size());
            let (lane, k) = find_pos(staged, c.dst(), lanes, c.count(), dsz, mem, at)?;
            let (sd, dd) = match c.conversion() {
                crate::device::ops::copy::Conversion::Convert { from, to } => {
                    (Some(from.dtype()), Some(to.dtype()))
                }
                crate::device::ops::copy::Conversion::Bits { .. } => (None, None),
            };
            Some(Hit {
                kind: c.opcode().to_string(),
                dst: (side_at(staged, c.dst(), lane, k, dsz), dd),
                sources: vec![("src".into(), side_at(staged, c.src(), lane, k, ssz), sd)],
                more: 0,
                rule: Rule::Copy,
                note: format!("lane {lane}, element {k}"),
            })
        }
        Op::Iota(i) => {
            let osz = i.out_ty().size();
            let (lane, k) = find_pos(staged, i.dst(), lanes, i.count(), osz, mem, at)?;
            Some(Hit {
                kind: "Iota".into(),
                dst: (
                    side_at(staged, i.dst(), lane, k, osz),
                    Some(i.out_ty().dtype()),
                ),
                sources: Vec::new(),
                more: 0,
                rule: Rule::Constant,
                note: format!(
                    "a constant: lane {lane}, element {k}: base {} + {} · lane + the data walk's index",
                    i.base(),
                    i.channel_multiplier()
                ),
            })
        }
        Op::TensorTensor(t) => {
            let [s0, s1, d] = t.sizes();
            let (lane, k) = find_pos(staged, t.dst(), lanes, t.count(), d, mem, at)?;
            let [t0, t1] = t.src_dtype();
            Some(Hit {
                kind: format!("{} {:?}", t.opcode(), t.alu()),
                dst: (side_at(staged, t.dst(), lane, k, d), Some(t.out_dtype())),
                sources: vec![
                    (
                        "in0".into(),
                        side_at(staged, &t.src()[0], lane, k, s0),
                        Some(t0),
                    ),
                    (
                        "in1".into(),
                        side_at(staged, &t.src()[1], lane, k, s1),
                        Some(t1),
                    ),
                ],
                more: 0,
                rule: Rule::Fold,
                note: format!("lane {lane}, element {k}"),
            })
        }
        Op::CrossLane(c) => {
            let [ssz, dsz] = c.sizes();
            let m = c.count();
            let count = if c.all_axis() { 1 } else { m };
            let (_, k) = find_pos(staged, c.dst(), 0..1, count, dsz, mem, at)?;
            let ch = c.channels() as u64;
            let positions: Box<dyn Iterator<Item = (u32, u64)>> = if c.all_axis() {
                Box::new((0..c.channels()).flat_map(move |p| (0..m).map(move |j| (p, j))))
            } else {
                Box::new((0..c.channels()).map(move |p| (p, k)))
            };
            let total = if c.all_axis() { ch * m } else { ch };
            let sources = positions
                .take(MAX_SOURCES)
                .map(|(p, j)| {
                    (
                        format!("lane {p}, element {j}"),
                        side_at(staged, c.src(), p, j, ssz),
                        Some(c.in_dtype()),
                    )
                })
                .collect();
            let fold = match c.fold() {
                cross_lane::Fold::Max => Rule::Max,
                _ => Rule::Fold,
            };
            Some(Hit {
                kind: format!("{} {:?}", c.opcode(), c.fold()),
                dst: (side_at(staged, c.dst(), 0, k, dsz), Some(c.out_dtype())),
                sources,
                more: total.saturating_sub(MAX_SOURCES as u64),
                rule: fold,
                note: format!(
                    "{} lanes folded in increasing order (EC-54), element {k}",
                    c.channels()
                ),
            })
        }
        // Every other kernel (NonzeroWithCount, GetSequenceBounds, and a
        // kernel added later until it gets a tracer of its own) writes along
        // its own layout: any byte of its dst side's lanes is counted as its
        // write, and its sources are not traced. No op is skipped.
        _ => {
            let s = *op.dst();
            let size = 4;
            let region_mem = match s.region {
                Region::Sbuf => Mem::Sbuf,
                Region::Psum => Mem::Psum,
            };
            if mem != region_mem.index() as u8 {
                return None;
            }
            let a = active(staged, s.region);
            let lane = ((at / a) as u32).checked_sub(s.partition)?;
            let (lo, hi) = s.byte_range(size);
            let off = (at % a) as i64;
            if !lanes.contains(&lane) || off < lo || off >= hi {
                return None;
            }
            Some(Hit {
                kind: format!("{op:?}")
                    .split('(')
                    .next()
                    .unwrap_or("kernel")
                    .into(),
                dst: (
                    Place {
                        mem,
                        at: at - at % 4,
                        len: 4,
                    },
                    None,
                ),
                sources: Vec::new(),
                more: 0,
                rule: Rule::Untraced,
                note: "a kernel whose sources `why` does not trace".into(),
            })
        }
    }
}

/// One element of the tree.
#[derive(Clone, Debug)]
struct Node {
    place: Place,
    dtype: Option<Dtype>,
    /// Read after this many records.
    time: u64,
    origin: Origin,
    /// Its bytes at `time` ([`Tree::fill`]).
    bytes: Vec<u8>,
}

#[derive(Clone, Debug)]
enum Origin {
    Record {
        seq: u64,
        engine: Engine,
        index: usize,
        hit: Hit,
        /// Node ids of the sources (in `hit.sources` order).
        sources: Vec<usize>,
    },
    Input(usize),
    Never,
    /// Not followed: the node limit.
    Limit,
}

/// The provenance tree of one element ([`trace`]).
#[derive(Clone, Debug)]
pub struct Tree {
    nodes: Vec<Node>,
    vars: Vec<VarInfo>,
    arch: crate::limits::Arch,
}

/// Builds the tree of `root` (bytes of an output element, read at the end
/// of the run: after `writes.len()` records) from the write log.
pub fn trace(
    staged: &Staged,
    writes: &Writes,
    vars: Vec<VarInfo>,
    root: Place,
    dtype: Dtype,
) -> Tree {
    let mut nodes = vec![Node {
        place: root,
        dtype: Some(dtype),
        time: writes.len(),
        origin: Origin::Limit,
        bytes: Vec::new(),
    }];
    let mut next = 0;
    while next < nodes.len() {
        let (place, time) = (nodes[next].place, nodes[next].time);
        let origin = match writes.last_writer(staged, place, time) {
            Some((seq, hit)) => {
                let (e, i) = writes.log[seq as usize];
                let mut ids = Vec::new();
                for (_, p, d) in &hit.sources {
                    if nodes.len() >= MAX_NODES {
                        break;
                    }
                    ids.push(nodes.len());
                    nodes.push(Node {
                        place: *p,
                        dtype: *d,
                        time: seq,
                        origin: Origin::Limit,
                        bytes: Vec::new(),
                    });
                }
                Origin::Record {
                    seq,
                    engine: Engine::ALL[e as usize],
                    index: i as usize,
                    hit,
                    sources: ids,
                }
            }
            None => match var_of(&vars, place) {
                Some(v) if vars[v].input => Origin::Input(v),
                _ => Origin::Never,
            },
        };
        // A source's type is its writer's dst type when the reader did
        // not know it (a DMA copying bytes as they are), else its variable's.
        if nodes[next].dtype.is_none() {
            nodes[next].dtype = match &origin {
                Origin::Record { hit, .. } => hit.dst.1,
                _ => None,
            }
            .or_else(|| var_of(&vars, place).map(|v| vars[v].dtype));
        }
        nodes[next].origin = origin;
        next += 1;
    }
    // Types still unknown: a DMA's sides take each other's.
    for n in 0..nodes.len() {
        if let Origin::Record { hit, sources, .. } = &nodes[n].origin
            && hit.rule == Rule::Copy
            && let Some(&s) = sources.first()
        {
            let (a, b) = (nodes[n].dtype, nodes[s].dtype);
            nodes[n].dtype = a.or(b);
            nodes[s].dtype = b.or(a);
        }
    }
    Tree {
        nodes,
        vars,
        arch: staged.arch,
    }
}

fn var_of(vars: &[VarInfo], p: Place) -> Option<usize> {
    if p.mem != Mem::Dram.index() as u8 {
        return None;
    }
    vars.iter()
        .position(|v| v.base <= p.at && p.at < v.base + v.len)
}

impl Tree {
    /// Every (point, bytes) whose value the tree needs, sorted by point:
    /// the bytes as they are after that many records.
    pub fn captures(&self) -> Vec<(u64, Place)> {
        let mut c: Vec<_> = self.nodes.iter().map(|n| (n.time, n.place)).collect();
        c.sort();
        c.dedup();
        c
    }

    /// Stores the bytes `read` gives for each node (the same run, replayed
    /// on the CPU reference: `read(time, place)`).
    pub fn fill(&mut self, read: &dyn Fn(u64, Place) -> Vec<u8>) {
        for n in &mut self.nodes {
            n.bytes = read(n.time, n.place);
        }
    }

    /// The chain from the root: each element and who made it, following
    /// the value (the winner of a max, else the first source).
    pub fn chain(&self, staged: &Staged) -> Vec<Link> {
        let mut out = Vec::new();
        let mut at = Some(0usize);
        while let Some(n) = at {
            let node = &self.nodes[n];
            at = None;
            let writer = match &node.origin {
                Origin::Record {
                    seq,
                    engine,
                    index,
                    hit,
                    sources,
                } => {
                    let step = &staged.steps[*engine as usize][*index];
                    let srcs: Vec<Source> = sources
                        .iter()
                        .zip(&hit.sources)
                        .map(|(&s, (label, ..))| Source {
                            label: label.clone(),
                            element: self.element(s),
                            written_by: self.written_by(s),
                        })
                        .collect();
                    let winner = (hit.rule == Rule::Max)
                        .then(|| self.first_max(sources))
                        .flatten();
                    let follow = match hit.rule {
                        Rule::Max => winner,
                        Rule::Constant | Rule::Untraced => None,
                        _ => (!sources.is_empty()).then_some(0),
                    };
                    at = follow.map(|f| sources[f]);
                    Writer::Record {
                        engine: engine.name().to_string(),
                        index: *index,
                        offset: step.offset,
                        seq: *seq,
                        disasm: disasm_record(&step.record),
                        op: hit.kind.clone(),
                        rule: hit.rule,
                        note: hit.note.clone(),
                        sources: srcs,
                        more_sources: hit.more,
                        winner,
                        followed: follow,
                    }
                }
                Origin::Input(v) => Writer::Input {
                    variable: self.vars[*v].name.clone(),
                },
                Origin::Never => Writer::Never {
                    what: match node.place.mem {
                        0 => match var_of(&self.vars, node.place) {
                            Some(v) => {
                                format!("never written: `{}`'s initial zeros", self.vars[v].name)
                            }
                            None => "never written: DRAM's initial zeros".into(),
                        },
                        _ => "never written: on-chip memory starts zero (SPEC §3)".into(),
                    },
                },
                Origin::Limit => Writer::Limit {
                    what: format!("not followed: more than {MAX_NODES} elements traced"),
                },
            };
            out.push(Link {
                element: self.element(n),
                writer,
            });
        }
        out
    }

    /// The source (index into `sources`) that is the first maximum, EC-11.
    fn first_max(&self, sources: &[usize]) -> Option<usize> {
        let mut best = f32::NEG_INFINITY;
        let mut won = None;
        for (i, &s) in sources.iter().enumerate() {
            let n = &self.nodes[s];
            // A source of unknown type: the first source is followed.
            let Some(x) = n
                .dtype
                .and_then(InType::from_dtype)
                .map(|t| load_f32(t, raw(&n.bytes)))
            else {
                return Some(0);
            };
            if x > best {
                best = x;
                won = Some(i);
            }
        }
        won.or((!sources.is_empty()).then_some(0))
    }

    fn written_by(&self, n: usize) -> String {
        match &self.nodes[n].origin {
            Origin::Record { engine, index, .. } => {
                format!("{} record {index}", engine.name())
            }
            Origin::Input(v) => format!("input `{}`", self.vars[*v].name),
            Origin::Never => "never written".into(),
            Origin::Limit => "not followed".into(),
        }
    }

    fn element(&self, n: usize) -> Element {
        let node = &self.nodes[n];
        let p = node.place;
        let name = match var_of(&self.vars, p) {
            Some(v) => {
                let var = &self.vars[v];
                let size = var.dtype.size().unwrap_or(1) as u64;
                let mut flat = (p.at - var.base) / size;
                let mut idx = vec![0u64; var.shape.len()];
                for d in (0..var.shape.len()).rev() {
                    let n = var.shape[d].max(1);
                    idx[d] = flat % n;
                    flat /= n;
                }
                let idx: Vec<String> = idx.iter().map(u64::to_string).collect();
                format!("{}[{}]", var.name, idx.join(","))
            }
            None => match Mem::of_index(p.mem as usize).region() {
                None => format!("dram[{:#x}]", p.at),
                Some(r) => {
                    let a = r.active_bytes(self.arch_of()) as u64;
                    format!(
                        "{}[{}]+{:#x}",
                        if r == Region::Sbuf { "sbuf" } else { "psum" },
                        p.at / a,
                        p.at % a
                    )
                }
            },
        };
        Element {
            name,
            memory: Mem::of_index(p.mem as usize),
            address: p.at,
            dtype: node.dtype.map(|d| d.to_string()),
            value: value_text(node.dtype, &node.bytes),
            bits: format!("{:#0w$x}", raw(&node.bytes), w = 2 + 2 * node.bytes.len()),
            after_records: node.time,
        }
    }

    fn arch_of(&self) -> crate::limits::Arch {
        self.arch
    }
}

/// Little-endian bits of up to 8 bytes.
fn raw(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let n = b.len().min(8);
    w[..n].copy_from_slice(&b[..n]);
    u64::from_le_bytes(w)
}

/// An element's value as text, by its type.
pub fn value_text(d: Option<Dtype>, b: &[u8]) -> String {
    let r = raw(b);
    match d {
        Some(Dtype::FP32) | Some(Dtype::FP16) | Some(Dtype::BFLOAT16) => {
            let t = InType::from_dtype(d.unwrap_or(Dtype::FP32)).unwrap_or(InType::F32);
            format!("{}", load_f32(t, r))
        }
        Some(Dtype::UINT8) | Some(Dtype::UINT16) | Some(Dtype::UINT32) => r.to_string(),
        Some(Dtype::INT8) => (r as u8 as i8).to_string(),
        Some(Dtype::INT16) => (r as u16 as i16).to_string(),
        Some(Dtype::INT32) => (r as u32 as i32).to_string(),
        Some(Dtype::INT64) => (r as i64).to_string(),
        _ => format!("{r:#x}"),
    }
}

/// One element of a chain.
#[derive(Clone, Debug, Serialize)]
pub struct Element {
    /// `x[0,3,10,14]`, `sbuf[3]+0x40`, `dram[0x1000]`.
    pub name: String,
    /// Its memory.
    pub memory: Mem,
    /// Its first byte in that memory (on chip: partition · active bytes + offset).
    pub address: u64,
    /// Its element type when known.
    pub dtype: Option<String>,
    /// Its value, by that type (hex bits when unknown).
    pub value: String,
    /// Its bits, little-endian, as hex.
    pub bits: String,
    /// The value as it was after this many records of the run.
    pub after_records: u64,
}

/// One source of a record.
#[derive(Clone, Debug, Serialize)]
pub struct Source {
    /// Its role (`src`, `window element 2`, `lane 5, element 0`, `in1`).
    pub label: String,
    /// The element and its value when the record ran.
    pub element: Element,
    /// Who wrote it before (`SP record 0`, `input \`x\``, `never written`).
    pub written_by: String,
}

/// Who made an element.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Writer {
    /// A record.
    Record {
        /// Its engine.
        engine: String,
        /// Its index in the engine's lowered stream.
        index: usize,
        /// Its byte offset in that stream.
        offset: usize,
        /// Records executed before it (the scheduler's order).
        seq: u64,
        /// Its disassembly.
        disasm: String,
        /// What it is (`DMA`, `Pool max`, …).
        op: String,
        /// How the value follows from the sources.
        rule: Rule,
        /// The walk position, conversion or formula.
        note: String,
        /// The source elements with their values when it ran.
        sources: Vec<Source>,
        /// Sources not listed.
        more_sources: u64,
        /// For max: the source that won.
        winner: Option<usize>,
        /// The source the chain goes on with.
        followed: Option<usize>,
    },
    /// An input variable's element, as the run started.
    Input {
        /// The variable.
        variable: String,
    },
    /// No record wrote it.
    Never {
        /// What it holds instead.
        what: String,
    },
    /// The trace stopped ([`MAX_NODES`]).
    Limit {
        /// Why.
        what: String,
    },
}

/// One step of the chain: an element and who made it.
#[derive(Clone, Debug, Serialize)]
pub struct Link {
    /// The element.
    pub element: Element,
    /// Who made it.
    pub writer: Writer,
}
