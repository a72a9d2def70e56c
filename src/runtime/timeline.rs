//! The run timeline: each executed record placed on a virtual clock (TL-1,
//! TL-2), and its Chrome trace-event / Perfetto JSON form
//! (`tpb-emu run --timeline FILE.json`; see `docs/timeline.md`).
//!
//! The scheduler (EC-31) calls the recorder's hook once per executed
//! record, in its order of execution, which the timeline never changes. The
//! timeline then gives every record a start and a duration in virtual cycles:
//!
//! - each engine runs its records one after the other; a record starts when
//!   its engine is free and its wait is released (TL-2);
//! - a record lasts its issue cost plus, for a datapath record,
//!   [`cost::datapath_cycles`] (TL-1);
//! - a DMA_MEMCPY occupies its engine for the issue cost only; the transfer
//!   runs on the issuing engine's DMA queue ([`cost::dma_cycles`]) and its
//!   completion semaphore and events-band update land when it ends (EC-23);
//! - a wait that is not yet released when its engine is free is a wait slice
//!   on that engine, joined by a flow to the slice whose update released it.
//!
//! Engines therefore advance in parallel on the virtual clock. The numbers
//! are estimates of nothing measured (TL-1): the timeline shows a program's
//! shape (what waits for what, what overlaps), not its speed on hardware.

use super::staged::{Op, Staged, Step, Update, Wait};
use crate::isa::enums::Engine;
use crate::isa::text::disasm_record;
use crate::limits::{NUM_EVENTS, NUM_SEMAPHORES};
use serde::Serialize;
use std::fmt::Write as _;

/// Virtual time, in cycles of the cost model's clock ([`cost::CYCLES_PER_US`]).
pub type Cycles = u64;

pub mod cost {
    //! TL-1: the timeline's cost model, every constant of it in this one
    //! place. **Every number here is an estimate**, chosen to give plausible
    //! proportions (a DMA's fixed latency dwarfs a control record; a datapath
    //! record costs in proportion to its elements and bytes), not measured on
    //! hardware nor taken from a vendor document.

    use super::Cycles;
    use crate::device::Validated;

    /// Estimate: the virtual clock runs at 1 GHz, so one cycle is one
    /// nanosecond in the trace file (whose times are microseconds).
    pub const CYCLES_PER_US: u64 = 1_000;

    /// Estimate: the fixed cost of issuing any record on its engine (decode,
    /// the events band, control work). A control record (EVENT_SEMAPHORE,
    /// DRAIN, MOV32, CTRL_AL, COMPARE_BRANCH) costs this alone; so does a
    /// DMA_MEMCPY on its engine (the transfer runs on a DMA queue).
    pub const ISSUE_CYCLES: Cycles = 32;

    /// Estimate: a DMA transfer's fixed latency (descriptor processing and
    /// the first access), whatever its size.
    pub const DMA_LATENCY_CYCLES: Cycles = 1_000;

    /// Estimate: bytes one DMA queue moves per cycle (32 GB/s at 1 GHz).
    pub const DMA_BYTES_PER_CYCLE: u64 = 32;

    /// Estimate: elements a datapath engine processes per cycle for a kernel
    /// family without its own entry in [`elements_per_cycle`]: one per
    /// partition (128 lanes).
    pub const DATAPATH_ELEMENTS_PER_CYCLE: u64 = 128;

    /// Estimate: elements per cycle of a Tensor-Tensor record (two inputs
    /// read per output element: half the default rate).
    pub const TENSOR_TENSOR_ELEMENTS_PER_CYCLE: u64 = 64;

    /// Estimate: bytes a datapath record may read and write per cycle in
    /// SBUF/PSUM (4 bytes per partition), which makes wide dtypes slower.
    pub const DATAPATH_BYTES_PER_CYCLE: u64 = 512;

    /// TL-1: elements per cycle of a kernel family (the device op's kind).
    /// A family without an entry gets [`DATAPATH_ELEMENTS_PER_CYCLE`], so a
    /// new kernel is costed without an edit here.
    pub fn elements_per_cycle(op: &crate::device::Op) -> u64 {
        match op {
            crate::device::Op::TensorTensor(_) => TENSOR_TENSOR_ELEMENTS_PER_CYCLE,
            _ => DATAPATH_ELEMENTS_PER_CYCLE,
        }
    }

    /// TL-1: the cycles of a datapath record beyond its issue cost: its
    /// device op's elements at its family's rate, or its bytes (which carry
    /// the dtypes) at [`DATAPATH_BYTES_PER_CYCLE`], whichever is slower.
    /// 0 for a record the device makes no op of.
    pub fn datapath_cycles(v: &Validated) -> Cycles {
        crate::device::Op::from_validated(v).map_or(0, |op| {
            let by_elements = op.elements().div_ceil(elements_per_cycle(&op));
            let by_bytes = op.bytes_moved().div_ceil(DATAPATH_BYTES_PER_CYCLE);
            by_elements.max(by_bytes)
        })
    }

    /// TL-1: the cycles of a DMA transfer of `bytes` on its queue.
    pub fn dma_cycles(bytes: u64) -> Cycles {
        DMA_LATENCY_CYCLES.saturating_add(bytes.div_ceil(DMA_BYTES_PER_CYCLE))
    }

    /// TL-1: the bytes a DMA_MEMCPY transfer costs: the larger of the bytes
    /// it reads and the bytes it writes (a converting DMA differs).
    pub fn dma_bytes(d: &crate::isa::control::DmaMemcpy) -> u64 {
        let src = d.src.elements().saturating_mul(d.src.elem_size as u64);
        let dst = d.dst.elements().saturating_mul(d.dst.elem_size as u64);
        src.max(dst)
    }
}

/// TL-1: a record's cycles on its engine: the issue cost plus, for a
/// datapath record, [`cost::datapath_cycles`].
pub(crate) fn record_cycles(step: &Step) -> Cycles {
    match &step.op {
        Op::Pool(v) => cost::ISSUE_CYCLES.saturating_add(cost::datapath_cycles(v)),
        _ => cost::ISSUE_CYCLES,
    }
}

/// The most slices a timeline keeps (about 40 bytes each, and some 300 bytes
/// of JSON): past this, records still count in the totals but get no slice,
/// and the file says how many were dropped.
pub const MAX_SLICES: usize = 4_000_000;

/// About how many bytes of JSON [`Timeline::write_json`] makes before it
/// writes them out.
pub const JSON_PIECE: usize = 1 << 20;

/// Where a slice is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Track {
    /// An engine's records and waits.
    Engine(Engine),
    /// The DMA queue of the engine that issues the DMAs (TL-2).
    Dma(Engine),
}

impl Track {
    /// The trace-event thread id: engines 0..=4, their DMA queues 5..=9.
    pub fn tid(self) -> u32 {
        match self {
            Track::Engine(e) => e as u32,
            Track::Dma(e) => 5 + e as u32,
        }
    }
}

/// What a slice shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceKind {
    /// An executed record (index into its engine's staged records).
    Record {
        /// The record's index in its engine's (lowered) stream.
        index: usize,
    },
    /// The time an engine's next record waited for its condition.
    Wait {
        /// The waiting record's index.
        index: usize,
        /// The condition.
        wait: Wait,
        /// The slice whose update released the wait.
        released_by: Option<usize>,
    },
    /// A DMA_MEMCPY's transfer on a DMA queue.
    Dma {
        /// The DMA record's index in the issuing engine's stream.
        index: usize,
        /// The record slice that issued it.
        issued_by: usize,
        /// The bytes it costs ([`cost::dma_bytes`]).
        bytes: u64,
    },
}

/// One slice of the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    /// Where it is drawn.
    pub track: Track,
    /// When it starts.
    pub start: Cycles,
    /// How long it lasts (never 0).
    pub dur: Cycles,
    /// What it is.
    pub kind: SliceKind,
}

impl Slice {
    /// When it ends.
    pub fn end(&self) -> Cycles {
        self.start.saturating_add(self.dur)
    }
}

/// Per-engine totals of a run on the virtual clock (`run --json`'s `engines`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EngineTotals {
    /// Records the engine executed.
    pub records: u64,
    /// Cycles its records took (DMA transfers excluded: they run on its queue).
    pub busy_cycles: Cycles,
    /// Cycles it waited for a semaphore or event.
    pub wait_cycles: Cycles,
    /// Cycles its DMA queue was transferring.
    pub dma_cycles: Cycles,
}

/// The last change of a semaphore or event: when, and by which slice.
#[derive(Clone, Copy, Debug, Default)]
struct Release {
    at: Cycles,
    by: Option<usize>,
}

/// The recorder: the virtual clock of every engine and DMA queue, the last
/// change of every semaphore and event, the totals, and (when asked for)
/// the slices.
#[derive(Clone, Debug)]
pub struct Timeline {
    keep_slices: bool,
    free: [Cycles; 5],
    queue_free: [Cycles; 5],
    sems: Vec<Release>,
    events: Vec<Release>,
    totals: [EngineTotals; 5],
    slices: Vec<Slice>,
    dropped: u64,
}

impl Timeline {
    /// A recorder at time 0. With `keep_slices` false it keeps the totals
    /// only (what `run --json` reports without `--timeline`).
    pub fn new(keep_slices: bool) -> Timeline {
        Timeline {
            keep_slices,
            free: [0; 5],
            queue_free: [0; 5],
            sems: vec![Release::default(); NUM_SEMAPHORES],
            events: vec![Release::default(); NUM_EVENTS],
            totals: [EngineTotals::default(); 5],
            slices: Vec::new(),
            dropped: 0,
        }
    }

    /// The slices, in the order they were made (per track, in time order).
    pub fn slices(&self) -> &[Slice] {
        &self.slices
    }

    /// Slices not kept because of [`MAX_SLICES`].
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Per-engine totals, indexed by [`Engine`].
    pub fn totals(&self) -> [EngineTotals; 5] {
        self.totals
    }

    /// The virtual time at which the last engine or DMA queue went idle.
    pub fn end(&self) -> Cycles {
        self.free
            .iter()
            .chain(&self.queue_free)
            .copied()
            .max()
            .unwrap_or(0)
    }

    fn push(&mut self, s: Slice) -> Option<usize> {
        if !self.keep_slices {
            return None;
        }
        if self.slices.len() >= MAX_SLICES {
            self.dropped += 1;
            return None;
        }
        self.slices.push(s);
        Some(self.slices.len() - 1)
    }

    /// TL-2: the change a wait depends on: the last update, before it in
    /// execution order, of the semaphore or event it reads.
    fn release_of(&self, w: Wait) -> Option<Release> {
        match w {
            Wait::None => None,
            Wait::Sem { idx, .. } => Some(self.sems[idx as usize]),
            Wait::Event { idx, .. } => Some(self.events[idx as usize]),
        }
    }

    /// The scheduler's hook (TL-2): engine `engine` has just executed its record
    /// `index` (`step`), its wait satisfied and its update applied.
    pub(crate) fn record(&mut self, engine: Engine, index: usize, step: &Step) {
        let e = engine as usize;
        let mut t = self.free[e];
        if let Some(r) = self.release_of(step.wait)
            && r.at > t
        {
            self.push(Slice {
                track: Track::Engine(engine),
                start: t,
                dur: r.at - t,
                kind: SliceKind::Wait {
                    index,
                    wait: step.wait,
                    released_by: r.by,
                },
            });
            self.totals[e].wait_cycles += r.at - t;
            t = r.at;
        }
        let dur = record_cycles(step);
        let me = self.push(Slice {
            track: Track::Engine(engine),
            start: t,
            dur,
            kind: SliceKind::Record { index },
        });
        if let Wait::Event {
            idx, flip: true, ..
        } = step.wait
        {
            self.events[idx as usize] = Release { at: t, by: me };
        }
        let end = t.saturating_add(dur);
        self.free[e] = end;
        self.totals[e].records += 1;
        self.totals[e].busy_cycles = self.totals[e].busy_cycles.saturating_add(dur);
        let done = match &step.op {
            Op::Dma(plan) => {
                let bytes = cost::dma_bytes(&crate::isa::control::DmaMemcpy::decode(&step.record));
                let start = end.max(self.queue_free[e]);
                let dur = cost::dma_cycles(bytes);
                let by = match me {
                    Some(issued_by) => self.push(Slice {
                        track: Track::Dma(engine),
                        start,
                        dur,
                        kind: SliceKind::Dma {
                            index,
                            issued_by,
                            bytes,
                        },
                    }),
                    None => None,
                };
                let at = start.saturating_add(dur);
                self.queue_free[e] = at;
                self.totals[e].dma_cycles = self.totals[e].dma_cycles.saturating_add(dur);
                let done = Release { at, by };
                if plan.inc != 0 {
                    self.sems[plan.sem as usize] = done;
                }
                done
            }
            _ => Release { at: end, by: me },
        };
        match step.update {
            Update::None => {}
            Update::Event { idx, .. } => self.events[idx as usize] = done,
            Update::SemAdd { idx, .. } | Update::SemWrite { idx, .. } => {
                self.sems[idx as usize] = done
            }
        }
    }

    /// The timeline as a Chrome trace-event JSON document (the "JSON object
    /// format": `traceEvents`, `displayTimeUnit`, `otherData`), which
    /// ui.perfetto.dev and chrome://tracing open. `staged` must be the
    /// program the timeline was recorded from (it gives each record's
    /// disassembly and byte offset).
    pub fn to_json(&self, staged: &Staged) -> Vec<u8> {
        let mut out = Vec::with_capacity(1024 + self.slices.len() * 320);
        self.write_json(staged, &mut out)
            .expect("writing into a Vec cannot fail");
        out
    }

    /// [`Timeline::to_json`]'s document written to `out` as it is made, a
    /// piece of about [`JSON_PIECE`] bytes at a time: the memory it takes
    /// does not grow with the timeline (`run --timeline` writes its file
    /// this way).
    pub fn write_json(&self, staged: &Staged, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.write_json_in(staged, out, JSON_PIECE)
    }

    /// [`Timeline::write_json`] in pieces of `piece` bytes or a little more.
    fn write_json_in(
        &self,
        staged: &Staged,
        out: &mut dyn std::io::Write,
        piece: usize,
    ) -> std::io::Result<()> {
        let mut j = Json(Vec::with_capacity(piece + 4096));
        // Each record's escaped disassembly, made once: a record that runs
        // again (a loop) copies it from here. `(start, end)` in `made`.
        let mut made = Json(Vec::new());
        let mut disasm: [Vec<(usize, usize)>; 5] =
            std::array::from_fn(|e| vec![(0, 0); staged.steps[e].len()]);
        j.raw(
            "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"tpb-emu\",\
             \"clock\":\"virtual cycles of the TL-1 cost model, 1 cycle = 1 ns; not a measurement\",\
             \"issue_cycles\":",
        );
        j.int(cost::ISSUE_CYCLES);
        j.raw(",\"dma_latency_cycles\":");
        j.int(cost::DMA_LATENCY_CYCLES);
        j.raw(",\"dma_bytes_per_cycle\":");
        j.int(cost::DMA_BYTES_PER_CYCLE);
        j.raw(",\"slices_dropped\":");
        j.int(self.dropped);
        j.raw(
            "},\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\
             \"args\":{\"name\":\"tpb-emu run (virtual clock)\"}}",
        );
        let mut queues = [false; 5];
        for s in &self.slices {
            if let Track::Dma(e) = s.track {
                queues[e as usize] = true;
            }
        }
        let mut tracks: Vec<(Track, String)> = Engine::ALL
            .iter()
            .map(|&e| (Track::Engine(e), e.name().to_ascii_uppercase()))
            .collect();
        for e in Engine::ALL.iter().filter(|&&e| queues[e as usize]) {
            tracks.push((
                Track::Dma(*e),
                format!("DMA queue ({})", e.name().to_ascii_uppercase()),
            ));
        }
        for (t, name) in &tracks {
            j.raw(",\n{\"ph\":\"M\",\"pid\":1,\"tid\":");
            j.int(t.tid() as u64);
            j.raw(",\"name\":\"thread_name\",\"args\":{\"name\":");
            j.str(name);
            j.raw("}},\n{\"ph\":\"M\",\"pid\":1,\"tid\":");
            j.int(t.tid() as u64);
            j.raw(",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
            j.int(t.tid() as u64);
            j.raw("}}");
        }
        let mut flow = 0u64;
        // Text made for one event, reused.
        let mut text = String::new();
        for s in &self.slices {
            if j.0.len() >= piece {
                out.write_all(&j.0)?;
                j.0.clear();
            }
            match s.kind {
                SliceKind::Record { index } => {
                    let Track::Engine(e) = s.track else { continue };
                    let step = &staged.steps[e as usize][index];
                    j.slice(s, &opcode_name(&step.record), "record");
                    j.raw(",\"args\":{\"offset\":");
                    j.int(step.offset as u64);
                    j.raw(",\"disasm\":");
                    let at = &mut disasm[e as usize][index];
                    if at.1 == at.0 {
                        let start = made.0.len();
                        made.str(&disasm_record(&step.record));
                        *at = (start, made.0.len());
                    }
                    j.0.extend_from_slice(&made.0[at.0..at.1]);
                    j.raw(",\"cycles\":");
                    j.int(s.dur);
                    j.raw("}}");
                }
                SliceKind::Wait {
                    index,
                    wait,
                    released_by,
                } => {
                    let Track::Engine(e) = s.track else { continue };
                    let offset = staged.steps[e as usize][index].offset;
                    let by = released_by.and_then(|i| self.slices.get(i));
                    text.clear();
                    let _ = write!(text, "wait {wait}");
                    j.slice(s, &text, "wait");
                    j.raw(",\"args\":{\"offset\":");
                    j.int(offset as u64);
                    j.raw(",\"released_by\":");
                    text.clear();
                    if let Some(b) = by {
                        self.describe(staged, b, &mut text);
                    }
                    j.str(&text);
                    j.raw(",\"cycles\":");
                    j.int(s.dur);
                    j.raw("}}");
                    if let Some(b) = by {
                        // TL-2: the arrow leaves the releasing slice in its
                        // last cycle and lands in the wait's last cycle.
                        flow += 1;
                        j.flow(flow, "release", b, s.track, s.end().saturating_sub(1));
                    }
                }
                SliceKind::Dma {
                    index,
                    issued_by,
                    bytes,
                } => {
                    let Track::Dma(e) = s.track else { continue };
                    let step = &staged.steps[e as usize][index];
                    j.slice(s, &opcode_name(&step.record), "dma");
                    j.raw(",\"args\":{\"engine\":");
                    j.str(e.name());
                    j.raw(",\"offset\":");
                    j.int(step.offset as u64);
                    j.raw(",\"bytes\":");
                    j.int(bytes);
                    if let Op::Dma(p) = &step.op {
                        j.raw(",\"transfer\":");
                        text.clear();
                        let _ = write!(text, "{p}");
                        j.str(&text);
                    }
                    j.raw(",\"cycles\":");
                    j.int(s.dur);
                    j.raw("}}");
                    if let Some(b) = self.slices.get(issued_by) {
                        flow += 1;
                        j.flow(flow, "issue", b, s.track, s.start);
                    }
                }
            }
        }
        j.raw("\n]}\n");
        out.write_all(&j.0)
    }

    /// `sp DMA_MEMCPY at 0 (DMA transfer)`: what a releasing slice is,
    /// appended to `out`.
    fn describe(&self, staged: &Staged, s: &Slice, out: &mut String) {
        let (e, index, what) = match (s.track, s.kind) {
            (Track::Engine(e), SliceKind::Record { index }) => (e, index, ""),
            (Track::Dma(e), SliceKind::Dma { index, .. }) => (e, index, " (DMA transfer)"),
            _ => return,
        };
        let step = &staged.steps[e as usize][index];
        let _ = write!(
            out,
            "{} {} at {}{what}",
            e.name(),
            step.record.opcode(),
            step.offset
        );
    }
}

/// A record's opcode name (its text form's, allocated only for an opcode
/// without a name).
fn opcode_name(r: &crate::isa::record::Record) -> std::borrow::Cow<'static, str> {
    let op = r.opcode();
    op.name().map_or_else(|| op.to_string().into(), Into::into)
}

/// A JSON text being written: the few forms the trace file needs, without
/// `fmt` machinery (the timeline of 100,000 records is some 30 MB).
struct Json(Vec<u8>);

impl Json {
    fn raw(&mut self, s: &str) {
        self.0.extend_from_slice(s.as_bytes());
    }

    fn int(&mut self, mut n: u64) {
        let mut buf = [0u8; 20];
        let mut i = buf.len();
        loop {
            i -= 1;
            buf[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.0.extend_from_slice(&buf[i..]);
    }

    /// Cycles as microseconds ([`cost::CYCLES_PER_US`] = 1000): exact, with
    /// three decimals.
    fn us(&mut self, c: Cycles) {
        self.int(c / cost::CYCLES_PER_US);
        let f = c % cost::CYCLES_PER_US;
        self.0.extend_from_slice(&[
            b'.',
            b'0' + (f / 100) as u8,
            b'0' + (f / 10 % 10) as u8,
            b'0' + (f % 10) as u8,
        ]);
    }

    /// A JSON string that needs no escape: one of this file's fixed names
    /// (`record`, `wait`, `issue`, …).
    fn plain(&mut self, s: &str) {
        debug_assert!(!s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\'));
        self.0.push(b'"');
        self.raw(s);
        self.0.push(b'"');
    }

    /// A JSON string (quotes, backslashes and control characters escaped).
    fn str(&mut self, s: &str) {
        self.0.push(b'"');
        let plain = |b: u8| b >= 0x20 && b != b'"' && b != b'\\';
        // Whole chunks at a time, without an exit per byte (so it vectorizes).
        let all_plain = s
            .as_bytes()
            .chunks(32)
            .all(|c| c.iter().fold(true, |ok, &b| ok & plain(b)));
        if all_plain {
            self.0.extend_from_slice(s.as_bytes());
            self.0.push(b'"');
            return;
        }
        for &b in s.as_bytes() {
            match b {
                b'"' => self.0.extend_from_slice(b"\\\""),
                b'\\' => self.0.extend_from_slice(b"\\\\"),
                0..=0x1f => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    self.0.extend_from_slice(b"\\u00");
                    self.0.push(HEX[(b >> 4) as usize]);
                    self.0.push(HEX[(b & 15) as usize]);
                }
                _ => self.0.push(b),
            }
        }
        self.0.push(b'"');
    }

    /// A complete event's common keys, up to (not including) its `args`.
    fn slice(&mut self, s: &Slice, name: &str, cat: &str) {
        self.raw(",\n{\"ph\":\"X\",\"pid\":1,\"tid\":");
        self.int(s.track.tid() as u64);
        self.raw(",\"ts\":");
        self.us(s.start);
        self.raw(",\"dur\":");
        self.us(s.dur);
        self.raw(",\"name\":");
        self.str(name);
        self.raw(",\"cat\":");
        self.plain(cat);
    }

    /// A flow from the last cycle of `from` to the slice of track `to` that
    /// encloses cycle `to_at`.
    fn flow(&mut self, id: u64, cat: &str, from: &Slice, to: Track, to_at: Cycles) {
        for (ph, tid, at) in [
            ("s", from.track.tid(), from.end().saturating_sub(1)),
            ("f", to.tid(), to_at),
        ] {
            self.raw(",\n{\"ph\":\"");
            self.raw(ph);
            self.raw(if ph == "f" { "\",\"bp\":\"e" } else { "" });
            self.raw("\",\"pid\":1,\"tid\":");
            self.int(tid as u64);
            self.raw(",\"ts\":");
            self.us(at);
            self.raw(",\"id\":");
            self.int(id);
            self.raw(",\"name\":");
            self.plain(cat);
            self.raw(",\"cat\":");
            self.plain(cat);
            self.raw("}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_round_trip_through_a_parser() {
        // The last two: an escape only past the first 32-byte chunk.
        let long_quote = format!("{}\"{}", "x".repeat(40), "y".repeat(30));
        let long_control = format!("{}\u{1f}", "z".repeat(64));
        for s in [
            "",
            "plain",
            "a\"b\\c",
            "tab\tnew\nline\u{1}",
            "µs ≥ 1",
            &long_quote,
            &long_control,
        ] {
            let mut j = Json(Vec::new());
            j.str(s);
            let back: String = serde_json::from_slice(&j.0).expect("valid JSON");
            assert_eq!(back, s);
        }
    }

    #[test]
    fn cycles_are_written_as_exact_microseconds() {
        for (c, want) in [
            (0, "0.000"),
            (32, "0.032"),
            (1288, "1.288"),
            (1_000_000, "1000.000"),
            (u64::MAX, "18446744073709551.615"),
        ] {
            let mut j = Json(Vec::new());
            j.us(c);
            assert_eq!(String::from_utf8(j.0).unwrap(), want);
        }
    }

    #[test]
    fn dma_cost_is_latency_plus_bytes() {
        assert_eq!(cost::dma_cycles(0), 1_000);
        assert_eq!(cost::dma_cycles(1), 1_001);
        assert_eq!(cost::dma_cycles(64), 1_002);
        assert_eq!(cost::dma_cycles(65), 1_003);
        assert_eq!(cost::dma_cycles(u64::MAX), (1 << 59) + 1_000);
    }
}
