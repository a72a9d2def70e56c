//! The run report (`tpb-emu run --report FILE.html`, `pool --report`): one
//! self-contained HTML page that explains a finished run (docs/debugging.md).
//!
//! The page opens from disk with no network: its CSS and script are inline
//! (the files under `src/viz/report/`, included here), its pictures are PNG
//! data URIs, and the run's data is one JSON document inside the page. It
//! shows:
//!
//! - a summary: the source, the backend and adapter, the generation, the
//!   records per engine, the wall time, the exit status and its message;
//! - the timeline of [`crate::runtime::timeline`] (the TL-1 cost model, the
//!   same slices as `--timeline`): one row per engine and DMA queue, waits
//!   and the flows that released them, drawn as SVG by the page's script,
//!   zoomable (wheel) and pannable (drag);
//! - per engine, every record of its (lowered) stream in a table that
//!   renders only the rows in view, so 100,000 records stay fast: byte
//!   offset, disassembly, what the emulator did (wait, operation, update),
//!   executions and virtual cycles;
//! - a picture of every input and output variable ([`super::montage`] with
//!   its colour bar); clicking a pixel shows the element's NumPy index and,
//!   for variables within [`VALUE_BUDGET`], its value;
//! - for a clicked Pool or MaxPoolSelect record, its footprint
//!   ([`super::footprint`]), precomputed for the first [`MAX_FOOTPRINTS`]
//!   drawable records; for the others the page gives the `tpb-emu` commands
//!   that draw it.
//!
//! Element provenance (which record wrote a value, issue #36's `tpb-emu why`)
//! is not available in this version; the page says so where it would be.
//!
//! A report is written only by a command that succeeds, like every other
//! output (crate::files's output policy): a run that fails leaves no report.

use super::{MontageGeometry, Planes, VizError, montage, montage_geometry, png_bytes};
use crate::device::Op as DeviceOp;
use crate::isa::enums::{Dtype, Engine};
use crate::isa::text::disasm_record;
use crate::limits::Arch;
use crate::runtime::Machine;
use crate::runtime::staged::{Cond, Op, Step, To, Update, Wait};
use crate::runtime::timeline::{SliceKind, Track, cost, record_cycles};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;

/// The page around the data (placeholders `{{TITLE}}`, `{{CSS}}`,
/// `{{SUMMARY}}`, `{{VARIABLES}}`, `{{DATA}}`, `{{JS}}`, in that order).
const PAGE: &str = include_str!("report/page.html");
/// The page's style sheet.
const CSS: &str = include_str!("report/report.css");
/// The page's script: the timeline, the tables, the pickers.
const JS: &str = include_str!("report/report.js");

/// The most elements of a variable a picture draws: more planes are left
/// out, and a single larger plane is drawn every n-th row and column (the
/// picture's note says which).
pub const DRAWN_ELEMENTS: usize = 1 << 20;

/// The most bytes of variable values the page embeds (base64) for clicked
/// pixels to show, all variables together, in the order they are drawn; a
/// variable past it shows indices only.
pub const VALUE_BUDGET: usize = 8 << 20;

/// The most footprints precomputed (drawable records, in engine and stream
/// order); the page gives the command for the others.
pub const MAX_FOOTPRINTS: usize = 256;

/// The most slices the page draws (records, waits, transfers, in time
/// order per track); past it the page says how many it left out.
pub const MAX_DRAWN_SLICES: usize = 400_000;

/// What the summary says about the run (the command's own figures).
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// The program or model, as given.
    pub source: String,
    /// The command line that made the report.
    pub command: String,
    /// The backend and adapter (`cpu`, `gpu: llvmpipe (LLVM …)`).
    pub backend: String,
    /// Seconds spent loading and staging.
    pub stage_s: f64,
    /// Seconds spent running.
    pub run_s: f64,
    /// Seconds from the command's start until the report was made.
    pub wall_s: f64,
    /// The exit status the command ends with (a report is written only on
    /// success, so 0) and its message.
    pub exit: i32,
    /// See `exit`.
    pub message: String,
    /// What the loader warned about.
    pub warnings: Vec<String>,
    /// Where the outputs were written, by variable name (for the commands
    /// the page suggests).
    pub output_files: Vec<(String, String)>,
}

/// Whether a variable was an input or an output of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Given to the run (drawn as it started).
    Input,
    /// Made by the run (drawn as it ended).
    Output,
}

/// A variable's picture and what the page needs to read it back.
#[derive(Clone, Debug, Serialize)]
pub struct Picture {
    name: String,
    role: Role,
    dtype: String,
    /// The dtype's element size in bytes (0: none).
    size: usize,
    shape: Vec<u64>,
    /// The planes of the montage: count, height, width (before sampling).
    planes: usize,
    h: usize,
    w: usize,
    /// Every `stride`-th row and column drawn.
    stride: usize,
    /// Drawn plane height and width.
    dh: usize,
    dw: usize,
    geometry: MontageGeometry,
    /// `data:image/png;base64,…`.
    png: String,
    /// The variable's bytes, base64, when within the budget.
    values: Option<String>,
    /// What the picture leaves out, if anything.
    note: String,
}

impl Picture {
    /// Draws variable `name` (`role`, `dtype`, `shape`, little-endian C-order
    /// `data`), embedding its bytes when `budget` (bytes left) allows and
    /// taking them from it.
    pub fn new(
        name: &str,
        role: Role,
        dtype: Dtype,
        shape: &[u64],
        data: &[u8],
        budget: &mut usize,
    ) -> Result<Picture, VizError> {
        let size = dtype
            .size()
            .ok_or_else(|| VizError::Shape(format!("dtype {dtype} has no element size")))?
            as usize;
        // The montage's axes (as raw_montage): planes × H × W, C order kept.
        let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        let (n, c, h, w, batch) = match dims[..] {
            [] => (1, 1, 1, 1, false),
            [l] => (1, 1, 1, l, false),
            [h, w] => (1, 1, h, w, false),
            // As raw_montage: N×C×L is drawn as N×C×1×L.
            [n, c, l] => (n, c, 1, l, true),
            [n, c, h, w] => (n, c, h, w, true),
            _ => {
                let k = dims.len();
                (
                    dims[..k - 3].iter().product(),
                    dims[k - 3],
                    dims[k - 2],
                    dims[k - 1],
                    true,
                )
            }
        };
        let planes = n * c;
        if planes * h * w * size != data.len() || planes * h * w == 0 {
            return Err(VizError::Shape(format!(
                "shape {shape:?} does not hold {} bytes of {dtype}",
                data.len()
            )));
        }
        let per_plane = h * w;
        let stride = if per_plane > DRAWN_ELEMENTS {
            (per_plane as f64 / DRAWN_ELEMENTS as f64).sqrt().ceil() as usize
        } else {
            1
        };
        let (dh, dw) = (h.div_ceil(stride), w.div_ceil(stride));
        let drawn = planes
            .min(super::MAX_PLANES)
            .min((DRAWN_ELEMENTS / (dh * dw)).max(1));
        let value = value_reader(dtype, size);
        let mut values = Vec::with_capacity(drawn * dh * dw);
        for p in 0..drawn {
            for y in (0..h).step_by(stride) {
                for x in (0..w).step_by(stride) {
                    let k = (p * per_plane + y * w + x) * size;
                    values.push(value(&data[k..k + size]));
                }
            }
        }
        let labels = (0..drawn)
            .map(|p| {
                if batch && n > 1 {
                    format!("{},{}", p / c, p % c)
                } else {
                    format!("c{}", p % c)
                }
            })
            .collect();
        let planes_drawn = Planes {
            count: drawn,
            h: dh,
            w: dw,
            labels,
            values,
        };
        let geometry = montage_geometry(&planes_drawn);
        let img = montage(&planes_drawn, &super::Options::default());
        let png = png_bytes(&img).map_err(|e| VizError::Png {
            path: name.to_string(),
            why: e.to_string(),
        })?;
        let mut note = Vec::new();
        if drawn < planes {
            note.push(format!("drew {drawn} of {planes} planes"));
        }
        if stride > 1 {
            note.push(format!("one row and column in {stride}"));
        }
        let values = (data.len() <= *budget).then(|| {
            *budget -= data.len();
            base64(data)
        });
        if values.is_none() {
            note.push("values not embedded (over the page's budget)".into());
        }
        Ok(Picture {
            name: name.to_string(),
            role,
            dtype: dtype.to_string(),
            size,
            shape: shape.to_vec(),
            planes,
            h,
            w,
            stride,
            dh,
            dw,
            geometry,
            png: format!("data:image/png;base64,{}", base64(&png)),
            values,
            note: note.join("; "),
        })
    }
}

/// SPEC §6's load rule as f32 (the montage's colours), by the raw bits for
/// types without one.
fn value_reader(dtype: Dtype, size: usize) -> impl Fn(&[u8]) -> f32 {
    use crate::device::convert::{InType, load_f32};
    let ty = InType::from_dtype(dtype);
    move |b: &[u8]| {
        let raw = b[..size]
            .iter()
            .rev()
            .fold(0u64, |a, &x| (a << 8) | x as u64);
        match ty {
            Some(t) => load_f32(t, raw),
            None => raw as f32,
        }
    }
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (c.get(1).copied().unwrap_or(0) as u32) << 8
            | c.get(2).copied().unwrap_or(0) as u32;
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= c.len() {
                out.push(A[(n >> shift & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One engine's records, column by column (compact JSON).
#[derive(Serialize)]
struct EngineRecords {
    name: &'static str,
    /// Byte offsets in the lowered stream.
    offset: Vec<usize>,
    /// Disassembly, as indices into `Data::text`.
    disasm: Vec<u32>,
    /// What the emulator did, as indices into `Data::text`.
    did: Vec<u32>,
    /// Virtual cycles per execution on the engine (TL-1).
    cycles: Vec<u64>,
    /// Virtual cycles of a DMA transfer on the engine's queue (0: none).
    dma: Vec<u64>,
    /// Times executed (counted from the timeline's slices).
    runs: Vec<u64>,
    /// Index into `Data::footprints`, or -1 (not drawable), or -2 (drawable,
    /// not precomputed), or -3 (drawable, but drawing failed: `fp_error`).
    fp: Vec<i32>,
}

#[derive(Serialize)]
struct Slices {
    /// Track: engines 0..=4, their DMA queues 5..=9.
    track: Vec<u8>,
    start: Vec<u64>,
    dur: Vec<u64>,
    /// 0 record, 1 wait, 2 DMA transfer.
    kind: Vec<u8>,
    /// The record index in its engine's stream.
    index: Vec<u32>,
    /// (from, to) slice indices of the release flows.
    flows: Vec<[u32; 2]>,
    /// Slices the timeline kept but the page leaves out, and those the
    /// timeline itself dropped.
    left_out: u64,
    dropped: u64,
    end: u64,
}

#[derive(Serialize)]
struct Data<'a> {
    source: &'a str,
    arch: &'static str,
    /// The `tpb-emu` command a user runs to draw a footprint not precomputed
    /// (`{engine}` and `{n}` filled in by the page).
    footprint_command: String,
    /// The `why` command (not in this version) for an element (`{elem}`).
    why_command: String,
    engines: Vec<EngineRecords>,
    text: Vec<String>,
    slices: Slices,
    footprints: Vec<String>,
    fp_error: Vec<String>,
    footprints_precomputed: usize,
    footprints_drawable: usize,
    pictures: &'a [Picture],
    output_files: HashMap<&'a str, &'a str>,
}

/// A word-at-a-time multiplicative hash (rustc's Fx): the interning table
/// hashes 200,000 strings for 100,000 records, where SipHash's resistance
/// to chosen keys buys nothing.
#[derive(Default)]
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            h = (h.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
        for &b in words.remainder() {
            h = (h.rotate_left(5) ^ b as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
        self.0 = h;
    }
}

/// Interned strings: records repeat their disassembly and actions. The
/// table maps a string's hash to the strings with that hash (no copy).
#[derive(Default)]
struct Strings {
    index: HashMap<u64, Vec<u32>, std::hash::BuildHasherDefault<Fnv>>,
    list: Vec<String>,
}

impl Strings {
    fn id(&mut self, s: String) -> u32 {
        use std::hash::Hasher;
        let mut h = Fnv::default();
        h.write(s.as_bytes());
        let same = self.index.entry(h.finish()).or_default();
        if let Some(&i) = same.iter().find(|&&i| self.list[i as usize] == s) {
            return i;
        }
        let i = self.list.len() as u32;
        same.push(i);
        self.list.push(s);
        i
    }
}

/// What the emulator does for `step` (wait, operation, update), in words.
fn did(step: &Step) -> String {
    let mut s = String::with_capacity(160);
    if step.wait != Wait::None {
        let _ = write!(s, "wait {}; ", step.wait);
    }
    match &step.op {
        Op::Events => s.push_str("events band only"),
        Op::Pool(v) => match DeviceOp::from_validated(v) {
            Some(op) => {
                let family = match &op {
                    DeviceOp::Pool(_) => "Pool/MaxPoolSelect",
                    DeviceOp::Copy(_) => "Copy/Cast",
                    DeviceOp::Iota(_) => "Iota",
                    DeviceOp::TensorTensor(_) => "Tensor-Tensor",
                    DeviceOp::CrossLane(_) => "CrossLaneReduce",
                    DeviceOp::Nonzero(_) => "NonzeroWithCount",
                    DeviceOp::SeqBounds(_) => "GetSequenceBounds",
                };
                let _ = write!(
                    s,
                    "{family} kernel on {} lanes: {} elements, {} bytes",
                    op.channels(),
                    op.elements(),
                    op.bytes_moved()
                );
            }
            None => s.push_str("POOL dispatch (no device op: a bypass)"),
        },
        Op::Mov32 { reg, value } => {
            let _ = write!(s, "reg[{reg}] = {value:#x}");
        }
        Op::CtrlAl { dst, src, imm } => {
            let _ = write!(s, "reg[{dst}] = reg[{src}] + {imm}");
        }
        Op::Branch { cond, to } => {
            let to = match to {
                To::Offset(o) => format!("offset {o}"),
                To::Registers { lo, hi } => format!("reg[{lo}] | reg[{hi}] << 32"),
            };
            let _ = match cond {
                Cond::Always => write!(s, "branch to {to}"),
                Cond::Eq { reg, imm } => write!(s, "branch to {to} if reg[{reg}] == {imm}"),
                Cond::Gt { reg, imm } => write!(s, "branch to {to} if reg[{reg}] > {imm}"),
            };
        }
        Op::Dma(plan) => {
            let _ = write!(s, "{plan}");
        }
    }
    match step.update {
        Update::None => {}
        Update::Event { idx, set } => {
            let _ = write!(
                s,
                "; then event[{idx}] {}",
                if set { "set" } else { "clear" }
            );
        }
        Update::SemAdd { idx, delta } => {
            let _ = write!(s, "; then sem[{idx}] += {delta}");
        }
        Update::SemWrite { idx, value } => {
            let _ = write!(s, "; then sem[{idx}] = {value}");
        }
    }
    if step.exit {
        s.push_str("; exit point (EC-29)");
    }
    s
}

/// Escapes `<` inside the page's JSON (so `</script>` cannot end it): JSON
/// has `<` only inside strings, where `\u003c` means the same.
struct ScriptSafe<'a>(&'a mut dyn Write);

impl Write for ScriptSafe<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(i) = rest.iter().position(|&b| b == b'<') {
            self.0.write_all(&rest[..i])?;
            self.0.write_all(b"\\u003c")?;
            rest = &rest[i + 1..];
        }
        self.0.write_all(rest)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// HTML-escapes `s`.
fn html(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// The summary table and the variables' section (HTML made here).
fn body(summary: &Summary, machine: &Machine, pictures: &[Picture]) -> (String, String) {
    let staged = machine.staged();
    let ex = machine.executed();
    let mut b = String::new();
    let row = |b: &mut String, k: &str, v: &str| {
        let _ = write!(b, "<tr><th>{}</th><td>{}</td></tr>", html(k), v);
    };
    b.push_str("<table class=\"kv\" id=\"summary-table\">");
    row(&mut b, "source", &html(&summary.source));
    row(
        &mut b,
        "command",
        &format!("<code>{}</code>", html(&summary.command)),
    );
    row(&mut b, "backend", &html(&summary.backend));
    row(&mut b, "generation", staged.arch().name());
    let mut per = String::new();
    for e in Engine::ALL {
        let _ = write!(
            per,
            "{}: {} executed ({} in the stream); ",
            e.name(),
            ex[e as usize],
            staged.records(e)
        );
    }
    let _ = write!(per, "total {}", machine.total_executed());
    row(&mut b, "records", &html(&per));
    row(
        &mut b,
        "wall time",
        &html(&format!(
            "{:.3} s until this report (staging {:.3} s, run {:.3} s)",
            summary.wall_s, summary.stage_s, summary.run_s
        )),
    );
    let end = machine.timeline().map_or(0, |t| t.end());
    row(
        &mut b,
        "virtual time",
        &html(&format!(
            "{end} cycles on the TL-1 cost model (an estimate, not a measurement)"
        )),
    );
    row(
        &mut b,
        "exit status",
        &format!(
            "<span id=\"exit\">{}</span>: {}",
            summary.exit,
            html(&summary.message)
        ),
    );
    for w in &summary.warnings {
        row(&mut b, "warning", &html(w));
    }
    b.push_str("</table>");
    let summary_html = std::mem::take(&mut b);
    b.push_str("<section id=\"variables\"><h2>Variables</h2><p class=\"note\">Click a pixel for the element's index and value.</p><div class=\"vars\">");
    for (i, p) in pictures.iter().enumerate() {
        let _ = write!(
            b,
            "<figure class=\"var\" data-var=\"{i}\"><figcaption><b>{}</b> ({}) {} {:?}{}</figcaption>\
             <img class=\"picture\" alt=\"{} {}\" src=\"{}\"><div class=\"pick\">click a pixel</div></figure>",
            html(&p.name),
            match p.role {
                Role::Input => "input, as the run started",
                Role::Output => "output, as the run ended",
            },
            html(&p.dtype),
            p.shape,
            if p.note.is_empty() {
                String::new()
            } else {
                format!(" <span class=\"note\">({})</span>", html(&p.note))
            },
            html(&p.name),
            match p.role {
                Role::Input => "input",
                Role::Output => "output",
            },
            p.png
        );
    }
    b.push_str("</div></section>");
    (summary_html, b)
}

/// Writes the report of the run `machine` finished (with its timeline's
/// slices recorded: [`Machine::record_timeline`]`(true)`) to `out`.
/// `pictures` are the variables' pictures ([`Picture::new`]; inputs drawn
/// before the run, outputs after it).
pub fn write_report(
    summary: &Summary,
    machine: &Machine,
    pictures: &[Picture],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let staged = machine.staged();
    let arch: Arch = staged.arch();
    let empty = crate::runtime::timeline::Timeline::new(true);
    let t = machine.timeline().unwrap_or(&empty);
    // Executions of each record, from the record slices.
    let mut runs: [Vec<u64>; 5] = std::array::from_fn(|e| vec![0; staged.steps[e].len()]);
    for s in t.slices() {
        if let (Track::Engine(e), SliceKind::Record { index }) = (s.track, s.kind) {
            runs[e as usize][index] += 1;
        }
    }
    let mut text = Strings::default();
    let mut footprints = Vec::new();
    let mut fp_error = Vec::new();
    let mut drawable = 0usize;
    let mut engines = Vec::new();
    for e in Engine::ALL {
        let steps = &staged.steps[e as usize];
        let mut r = EngineRecords {
            name: e.name(),
            offset: Vec::with_capacity(steps.len()),
            disasm: Vec::with_capacity(steps.len()),
            did: Vec::with_capacity(steps.len()),
            cycles: Vec::with_capacity(steps.len()),
            dma: Vec::with_capacity(steps.len()),
            runs: std::mem::take(&mut runs[e as usize]),
            fp: Vec::with_capacity(steps.len()),
        };
        // The two texts of each record, made on every core (the costly part).
        let texts: Vec<(String, String)> = {
            use rayon::prelude::*;
            steps
                .par_iter()
                .map(|step| (disasm_record(&step.record), did(step)))
                .collect()
        };
        for (i, (step, (disasm, what))) in steps.iter().zip(texts).enumerate() {
            r.offset.push(step.offset);
            r.disasm.push(text.id(disasm));
            r.did.push(text.id(what));
            r.cycles.push(record_cycles(step));
            r.dma.push(match &step.op {
                Op::Dma(_) => cost::dma_cycles(cost::dma_bytes(
                    &crate::isa::control::DmaMemcpy::decode(&step.record),
                )),
                _ => 0,
            });
            let is_pool = step.record.opcode().class() == crate::isa::opcode::OpcodeClass::S4d4Pl;
            r.fp.push(if !is_pool {
                -1
            } else {
                drawable += 1;
                if footprints.len() + fp_error.len() >= MAX_FOOTPRINTS {
                    -2
                } else {
                    let title = format!(
                        "{} record {i} (offset {}): {}",
                        e.name(),
                        step.offset,
                        disasm_record(&step.record)
                    );
                    match super::footprint(&step.record, arch)
                        .map(|fp| super::draw_footprint(&fp, &title))
                        .and_then(|p| {
                            png_bytes(&p.image).map_err(|e| VizError::Png {
                                path: "footprint".into(),
                                why: e.to_string(),
                            })
                        }) {
                        Ok(png) => {
                            footprints.push(format!("data:image/png;base64,{}", base64(&png)));
                            footprints.len() as i32 - 1
                        }
                        Err(why) => {
                            fp_error.push(why.to_string());
                            -3 - (fp_error.len() as i32 - 1)
                        }
                    }
                }
            });
        }
        engines.push(r);
    }
    let records: usize = engines.iter().map(|e| e.offset.len()).sum();
    let all = t.slices();
    let shown = all.len().min(MAX_DRAWN_SLICES);
    let mut slices = Slices {
        track: Vec::with_capacity(shown),
        start: Vec::with_capacity(shown),
        dur: Vec::with_capacity(shown),
        kind: Vec::with_capacity(shown),
        index: Vec::with_capacity(shown),
        flows: Vec::new(),
        left_out: (all.len() - shown) as u64,
        dropped: t.dropped(),
        end: t.end(),
    };
    for (k, s) in all[..shown].iter().enumerate() {
        slices.track.push(s.track.tid() as u8);
        slices.start.push(s.start);
        slices.dur.push(s.dur);
        let (kind, index) = match s.kind {
            SliceKind::Record { index } => (0, index),
            SliceKind::Wait {
                index, released_by, ..
            } => {
                if let Some(b) = released_by.filter(|&b| b < shown) {
                    slices.flows.push([b as u32, k as u32]);
                }
                (1, index)
            }
            SliceKind::Dma { index, .. } => (2, index),
        };
        slices.kind.push(kind);
        slices.index.push(index as u32);
    }
    let data = Data {
        source: &summary.source,
        arch: arch.name(),
        footprint_command: format!(
            "tpb-emu lower {} --out LOWERED && tpb-emu viz --footprint LOWERED/{{engine}}.bin --record {{n}} --arch {} -o footprint.png",
            shell_word(&summary.source),
            arch.name()
        ),
        why_command: format!("tpb-emu why {} '{{elem}}'", shell_word(&summary.source)),
        engines,
        text: text.list,
        slices,
        footprints_precomputed: footprints.len(),
        footprints,
        fp_error,
        footprints_drawable: drawable,
        pictures,
        output_files: summary
            .output_files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect(),
    };
    let title = html(&format!("tpb-emu report: {}", summary.source));
    let (summary_html, variables_html) = body(summary, machine, pictures);
    // The template's placeholders, in order; a value is never searched for
    // placeholders itself.
    let mut rest = PAGE;
    for (mark, value) in [
        ("{{TITLE}}", Some(title.as_str())),
        ("{{CSS}}", Some(CSS)),
        ("{{SUMMARY}}", Some(summary_html.as_str())),
        ("{{VARIABLES}}", Some(variables_html.as_str())),
        ("{{DATA}}", None),
        ("{{JS}}", Some(JS)),
    ] {
        let (head, tail) = rest
            .split_once(mark)
            .expect("the page template holds every placeholder, in order");
        out.write_all(head.as_bytes())?;
        match value {
            Some(v) => out.write_all(v.as_bytes())?,
            None => {
                // Made whole, then written with its `<`s escaped in one pass.
                let guess = data.text.iter().map(|t| t.len() + 3).sum::<usize>()
                    + 64 * (data.slices.start.len() + records)
                    + pictures
                        .iter()
                        .map(|p| p.png.len() + p.values.as_ref().map_or(0, String::len))
                        .sum::<usize>()
                    + data.footprints.iter().map(String::len).sum::<usize>();
                let mut json = Vec::with_capacity(guess + 4096);
                serde_json::to_writer(&mut json, &data).map_err(std::io::Error::other)?;
                ScriptSafe(&mut *out).write_all(&json)?
            }
        }
        rest = tail;
    }
    out.write_all(rest.as_bytes())
}

/// `s` quoted for a POSIX shell when it needs to be.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    #[test]
    fn script_safe_json_cannot_close_the_script() {
        let mut v = Vec::new();
        serde_json::to_writer(ScriptSafe(&mut v), &"</script><b>").unwrap();
        let s = String::from_utf8(v).unwrap();
        assert!(!s.contains('<'));
        assert_eq!(serde_json::from_str::<String>(&s).unwrap(), "</script><b>");
    }

    #[test]
    fn a_large_plane_is_sampled_and_planes_are_capped() {
        let mut budget = 0;
        let data = vec![0u8; 2048 * 2048 * 4];
        let p = Picture::new(
            "x",
            Role::Input,
            Dtype::FP32,
            &[2048, 2048],
            &data,
            &mut budget,
        )
        .unwrap();
        assert_eq!((p.stride, p.dh, p.dw), (2, 1024, 1024));
        assert!(p.values.is_none() && p.note.contains("one row and column in 2"));
        let data = vec![0u8; 8 * 512 * 512];
        let mut budget = usize::MAX;
        let p = Picture::new(
            "y",
            Role::Output,
            Dtype::UINT8,
            &[2, 4, 512, 512],
            &data,
            &mut budget,
        )
        .unwrap();
        assert_eq!((p.planes, p.geometry.planes, p.stride), (8, 4, 1));
        assert!(p.values.is_some());
    }
}
