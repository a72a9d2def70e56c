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
//! is precomputed for small runs ([`Provenance`], [`MAX_WHY_ELEMENTS`],
//! [`MAX_WHY_RECORDS`]); otherwise a clicked pixel gives the `tpb-emu why` command that
//! prints it ([`Summary::why_source`]).
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

/// The most output elements, all outputs together, whose provenance chains
/// (`tpb-emu why`'s text) a `run --report` precomputes. Each element costs
/// one provenance tree (the two CPU runs that record the writes and read the
/// values are shared by all); 4096 covers `examples/program` (two outputs of
/// 128×4×4 elements) and keeps the work and the page small (a line repeated
/// between chains is stored once). Larger outputs get the
/// `why` command instead.
pub const MAX_WHY_ELEMENTS: u64 = 4096;

/// The most records a run may have executed for its report to precompute
/// provenance: the two extra CPU runs cost about what the run itself does,
/// and a 100,000-record run's report should stay within 2× a plain run.
pub const MAX_WHY_RECORDS: u64 = 10_000;

/// Precomputed provenance: each output element's chain as `tpb-emu why`
/// prints it, its lines interned.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Provenance {
    /// Every distinct line (without its newline), once.
    lines: Vec<String>,
    /// Per output, per element (flat, C order), its lines' indices.
    chains: HashMap<String, Vec<Vec<u32>>>,
    #[serde(skip)]
    seen: HashMap<String, u32>,
}

impl Provenance {
    /// Adds the next element (in C order) of `output`: `text`, a `why`
    /// chain as printed (lines ending in newlines).
    pub fn push(&mut self, output: &str, text: &str) {
        let ids = text
            .lines()
            .map(|l| {
                if let Some(&i) = self.seen.get(l) {
                    return i;
                }
                let i = self.lines.len() as u32;
                self.lines.push(l.to_string());
                self.seen.insert(l.to_string(), i);
                i
            })
            .collect();
        self.chains.entry(output.to_string()).or_default().push(ids);
    }
}

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
    /// What `tpb-emu why` is given to rerun the source, shell-quoted (the
    /// program or model and its `--input NAME=FILE` flags: [`shell_word`]);
    /// `None` where `why` cannot rerun it (`pool`).
    pub why_source: Option<String>,
    /// The output elements' provenance chains, where precomputed.
    pub provenance: Option<Provenance>,
    /// Why provenance was not precomputed (shown with the `why` command),
    /// or empty.
    pub provenance_note: String,
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
            .ok_or(super::ShapeFault::NoElementSize(dtype))? as usize;
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
            return Err(super::ShapeFault::Bytes {
                shape: shape.to_vec(),
                bytes: data.len(),
                dtype,
            }
            .into());
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
        let png = png_bytes(&img).map_err(|source| VizError::Png {
            path: name.to_string(),
            source: Box::new(source),
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
            png: {
                let mut uri = String::from("data:image/png;base64,");
                base64_into(&mut uri, &png);
                uri
            },
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
    let mut out = String::new();
    base64_into(&mut out, bytes);
    out
}

/// [`base64`] appended to `out`: three bytes to four characters at a time.
pub fn base64_into(out: &mut String, bytes: &[u8]) {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut o = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    let mut chunks = bytes.chunks_exact(3);
    for c in &mut chunks {
        let n = (c[0] as u32) << 16 | (c[1] as u32) << 8 | c[2] as u32;
        o.extend_from_slice(&[
            A[(n >> 18) as usize],
            A[(n >> 12 & 63) as usize],
            A[(n >> 6 & 63) as usize],
            A[(n & 63) as usize],
        ]);
    }
    match *chunks.remainder() {
        [a] => {
            let n = (a as u32) << 16;
            o.extend_from_slice(&[
                A[(n >> 18) as usize],
                A[(n >> 12 & 63) as usize],
                b'=',
                b'=',
            ]);
        }
        [a, b] => {
            let n = (a as u32) << 16 | (b as u32) << 8;
            o.extend_from_slice(&[
                A[(n >> 18) as usize],
                A[(n >> 12 & 63) as usize],
                A[(n >> 6 & 63) as usize],
                b'=',
            ]);
        }
        _ => {}
    }
    out.push_str(std::str::from_utf8(&o).expect("base64 is ASCII"));
}

/// Ids filed under a hash the caller computes, the keys living in the
/// caller's list (hashbrown's `HashTable`, the table `HashMap` is built on):
/// an id and its hash a slot, sized once from the bound on entries.
struct Index(hashbrown::HashTable<(u64, u32)>);

impl Index {
    /// A table for at most `n` entries.
    fn new(n: usize) -> Index {
        Index(hashbrown::HashTable::with_capacity(n))
    }

    /// The id stored for `hash` that `eq` accepts, or `new` stored and
    /// returned where there is none.
    fn id(&mut self, hash: u64, eq: impl Fn(u32) -> bool, new: u32) -> u32 {
        match self.0.entry(hash, |&(_, id)| eq(id), |&(h, _)| h) {
            hashbrown::hash_table::Entry::Occupied(e) => e.get().1,
            hashbrown::hash_table::Entry::Vacant(v) => {
                v.insert((hash, new));
                new
            }
        }
    }
}

/// Interned strings: records repeat their disassembly and actions. The
/// strings are borrowed (from the chunks' texts), never copied, and hashed
/// on the workers that made them (FxHash, rustc-hash: SipHash's resistance
/// to chosen keys buys nothing here).
struct Strings<'a> {
    index: Index,
    list: Vec<&'a str>,
}

impl<'a> Strings<'a> {
    /// A table for at most `n` distinct strings.
    fn new(n: usize) -> Strings<'a> {
        Strings {
            index: Index::new(n),
            list: Vec::with_capacity(n),
        }
    }

    /// The index of `s`, whose hash is `hash` ([`text_hash`]).
    fn id(&mut self, s: &'a str, hash: u64) -> u32 {
        let list = &self.list;
        let id = self
            .index
            .id(hash, |id| list[id as usize] == s, list.len() as u32);
        if id as usize == self.list.len() {
            self.list.push(s);
        }
        id
    }
}

/// The hash [`Strings`] files a text under.
fn text_hash(s: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(s)
}

/// Where escaped text goes: a `String` or the page's byte buffer.
trait Sink {
    fn put(&mut self, s: &str);
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

impl Sink for Vec<u8> {
    fn put(&mut self, s: &str) {
        self.extend_from_slice(s.as_bytes());
    }
}

/// `s` escaped for a JSON string inside the page's script element (`<` as
/// `\\u003c`, so `</script>` cannot end it), appended to `out`.
fn json_escape_into(out: &mut impl Sink, s: &str) {
    let b = s.as_bytes();
    // Most texts need nothing escaped: one pass that vectorizes finds out
    // (a fold, not `any`: `any` stops early, one byte at a time).
    if !b.iter().fold(false, |f, &c| {
        f | (c < 0x20) | (c == b'"') | (c == b'\\') | (c == b'<')
    }) {
        out.put(s);
        return;
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // Every byte escaped is ASCII, so `s` is cut at character boundaries.
    let mut from = 0;
    for (i, &c) in b.iter().enumerate() {
        let esc = match c {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'<' => "\\u003c",
            b'\n' => "\\n",
            0..0x20 => {
                out.put(&s[from..i]);
                out.put("\\u00");
                let hex = [HEX[(c >> 4) as usize], HEX[(c & 15) as usize]];
                out.put(std::str::from_utf8(&hex).expect("hex digits are ASCII"));
                from = i + 1;
                continue;
            }
            _ => continue,
        };
        out.put(&s[from..i]);
        out.put(esc);
        from = i + 1;
    }
    out.put(&s[from..]);
}

/// Records that share their texts and figures: the same bytes, and both
/// an exit point or neither (a step is its record staged, and only a
/// branch's target depends on where the record is: branches share nothing).
struct Classes<'a> {
    index: Index,
    /// One step of each class.
    steps: Vec<&'a Step>,
}

impl<'a> Classes<'a> {
    /// Classes for at most `n` records.
    fn new(n: usize) -> Classes<'a> {
        Classes {
            index: Index::new(n),
            steps: Vec::with_capacity(n),
        }
    }

    fn id(&mut self, step: &'a Step) -> u32 {
        let new = self.steps.len() as u32;
        if !matches!(step.op, Op::Branch { .. }) {
            use std::hash::BuildHasher;
            let key = (step.record, step.exit);
            let hash = rustc_hash::FxBuildHasher.hash_one(key);
            let steps = &self.steps;
            let id = self.index.id(
                hash,
                |id| {
                    let s = steps[id as usize];
                    (s.record, s.exit) == key
                },
                new,
            );
            if id != new {
                return id;
            }
        }
        self.steps.push(step);
        new
    }
}

/// The classes a worker describes at a time.
const CHUNK: usize = 1024;

/// What the page says about consecutive classes of records, made on a
/// worker: the texts of each end to end, already escaped for the page's
/// JSON (disassembly, then what the emulator did), and the figures.
struct Described {
    text: String,
    /// The end of each text in `text`: two per class.
    ends: Vec<u32>,
    /// The hash of each text ([`text_hash`]).
    hashes: Vec<u64>,
    cycles: Vec<u64>,
    dma: Vec<u64>,
}

impl Described {
    /// The (escaped) texts with their hashes, in order.
    fn texts(&self) -> impl Iterator<Item = (&str, u64)> {
        let text = self.text.as_str();
        let mut from = 0;
        self.ends
            .iter()
            .zip(&self.hashes)
            .map(move |(&end, &hash)| {
                let s = &text[from..end as usize];
                from = end as usize;
                (s, hash)
            })
    }
}

fn describe(steps: &[&Step]) -> Described {
    let mut d = Described {
        text: String::with_capacity(steps.len() * 256),
        ends: Vec::with_capacity(2 * steps.len()),
        hashes: Vec::with_capacity(2 * steps.len()),
        cycles: Vec::with_capacity(steps.len()),
        dma: Vec::with_capacity(steps.len()),
    };
    let mut what = String::with_capacity(256);
    let end = |d: &mut Described, s: &str| {
        let from = d.text.len();
        json_escape_into(&mut d.text, s);
        d.hashes.push(text_hash(&d.text[from..]));
        d.ends.push(d.text.len() as u32);
    };
    for step in steps {
        end(&mut d, &disasm_record(&step.record));
        what.clear();
        did(&mut what, step);
        end(&mut d, &what);
        d.cycles.push(record_cycles(step));
        d.dma.push(match &step.op {
            Op::Dma(_) => cost::dma_cycles(cost::dma_bytes(
                &crate::isa::control::DmaMemcpy::decode(&step.record),
            )),
            _ => 0,
        });
    }
    d
}

/// What the emulator does for `step` (wait, operation, update), in words,
/// appended to `s`.
fn did(s: &mut String, step: &Step) {
    if step.wait != Wait::None {
        let _ = write!(s, "wait {}; ", step.wait);
    }
    match &step.op {
        Op::Events => s.push_str("events band only"),
        Op::Pool(v) => match DeviceOp::from_validated(v) {
            Some(op) => {
                let family = op.family();
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
            let _ = match to {
                To::Offset(o) => write!(s, "branch to offset {o}"),
                To::Registers { lo, hi } => write!(s, "branch to reg[{lo}] | reg[{hi}] << 32"),
            };
            let _ = match cond {
                Cond::Always => Ok(()),
                Cond::Eq { reg, imm } => write!(s, " if reg[{reg}] == {imm}"),
                Cond::Gt { reg, imm } => write!(s, " if reg[{reg}] > {imm}"),
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

/// The page's data as it is written: compact JSON made by hand into a
/// buffer that goes to the page in large pieces. Strings are escaped for
/// JSON and for the page's script element (`<` as `\u003c`).
struct Json<'w> {
    buf: Vec<u8>,
    out: &'w mut dyn Write,
}

impl Json<'_> {
    const FLUSH: usize = 1 << 20;

    fn spill(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= Self::FLUSH {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn raw(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// `"key":`.
    fn key(&mut self, k: &str) {
        self.buf.push(b'"');
        self.raw(k);
        self.raw("\":");
    }

    fn num(&mut self, mut n: u64) {
        // Most figures and differences are one digit: a push, not a copy.
        if n < 10 {
            self.buf.push(b'0' + n as u8);
            return;
        }
        let mut b = [0u8; 20];
        let mut i = b.len();
        loop {
            i -= 1;
            b[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.buf.extend_from_slice(&b[i..]);
    }

    fn int(&mut self, n: i64) {
        if n < 0 {
            self.buf.push(b'-');
        }
        self.num(n.unsigned_abs());
    }

    /// A column of integers as the page's delta-run string: each value
    /// minus the one before (the first minus 0), and `DxN` for N equal
    /// differences D in a row: `[0, 64, 128, 128, 7]` is `"0,64x2,0,-121"`.
    fn cols(&mut self, vs: impl IntoIterator<Item = i64>) -> std::io::Result<()> {
        self.buf.push(b'"');
        let (mut prev, mut run, mut first) = (0i64, None::<(i64, u64)>, true);
        for (k, v) in vs.into_iter().enumerate() {
            let d = v.wrapping_sub(prev);
            prev = v;
            match &mut run {
                Some((rd, n)) if *rd == d => *n += 1,
                _ => {
                    if let Some((rd, n)) = run {
                        self.delta_run(rd, n, &mut first);
                    }
                    run = Some((d, 1));
                }
            }
            if k % 4096 == 4095 {
                self.spill()?;
            }
        }
        if let Some((rd, n)) = run {
            self.delta_run(rd, n, &mut first);
        }
        self.buf.push(b'"');
        self.spill()
    }

    fn delta_run(&mut self, d: i64, n: u64, first: &mut bool) {
        if !*first {
            self.buf.push(b',');
        }
        *first = false;
        self.int(d);
        if n > 1 {
            self.buf.push(b'x');
            self.num(n);
        }
    }

    fn str(&mut self, s: &str) {
        self.buf.push(b'"');
        json_escape_into(&mut self.buf, s);
        self.buf.push(b'"');
    }

    /// `"s"` for an `s` already escaped.
    fn escaped(&mut self, s: &str) {
        self.buf.push(b'"');
        self.raw(s);
        self.buf.push(b'"');
    }

    /// `[“a”,“b”,…]`.
    fn strs<'s>(&mut self, ss: impl IntoIterator<Item = &'s str>) -> std::io::Result<()> {
        self.buf.push(b'[');
        for (k, s) in ss.into_iter().enumerate() {
            if k > 0 {
                self.buf.push(b',');
            }
            self.str(s);
            self.spill()?;
        }
        self.buf.push(b']');
        self.spill()
    }

    /// `v` through serde (the small parts: the pictures, the file names).
    fn serde(&mut self, v: &impl Serialize) -> std::io::Result<()> {
        let mut buf = std::mem::take(&mut self.buf);
        let r = serde_json::to_writer(ScriptSafe(&mut buf), v).map_err(std::io::Error::other);
        self.buf = buf;
        r?;
        self.spill()
    }

    fn finish(self) -> std::io::Result<()> {
        self.out.write_all(&self.buf)
    }
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
            None => write_data(summary, machine, pictures, &mut *out)?,
        }
        rest = tail;
    }
    out.write_all(rest.as_bytes())
}

/// The page's data (the JSON document its script reads).
fn write_data(
    summary: &Summary,
    machine: &Machine,
    pictures: &[Picture],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let staged = machine.staged();
    let arch: Arch = staged.arch();
    let empty = crate::runtime::timeline::Timeline::new(true);
    let t = machine.timeline().unwrap_or(&empty);
    // The records' classes (records that share texts and figures), then
    // each class's texts and figures, made on every core (the costly part).
    let records: usize = staged.steps.iter().map(Vec::len).sum();
    let mut classes = Classes::new(records);
    let class_of: Vec<Vec<u32>> = Engine::ALL
        .iter()
        .map(|&e| {
            staged.steps[e as usize]
                .iter()
                .map(|s| classes.id(s))
                .collect()
        })
        .collect();
    let described: Vec<Described> = {
        use rayon::prelude::*;
        classes.steps.par_chunks(CHUNK).map(describe).collect()
    };
    // Per class: its texts' indices in `text`, its figures.
    let mut text = Strings::new(2 * classes.steps.len());
    let mut disasm_id = Vec::with_capacity(classes.steps.len());
    let mut did_id = Vec::with_capacity(classes.steps.len());
    for d in &described {
        let mut texts = d.texts();
        while let (Some((a, ha)), Some((b, hb))) = (texts.next(), texts.next()) {
            disasm_id.push(text.id(a, ha));
            did_id.push(text.id(b, hb));
        }
    }
    // A class's figures, where its chunk's worker left them.
    let cycles = |c: u32| described[c as usize / CHUNK].cycles[c as usize % CHUNK];
    let dma = |c: u32| described[c as usize / CHUNK].dma[c as usize % CHUNK];
    // Executions of each record, from the record slices.
    let mut runs: [Vec<u64>; 5] = std::array::from_fn(|e| vec![0; staged.steps[e].len()]);
    for s in t.slices() {
        if let (Track::Engine(e), SliceKind::Record { index }) = (s.track, s.kind) {
            runs[e as usize][index] += 1;
        }
    }
    let mut json = Json {
        buf: Vec::with_capacity(Json::FLUSH + (64 << 10)),
        out,
    };
    let j = &mut json;
    j.raw("{");
    j.key("source");
    j.str(&summary.source);
    j.raw(",");
    j.key("arch");
    j.str(arch.name());
    j.raw(",");
    // The `tpb-emu` command a user runs to draw a footprint not precomputed
    // (`{engine}` and `{n}` filled in by the page).
    j.key("footprint_command");
    j.str(&format!(
        "tpb-emu lower {} --out LOWERED && tpb-emu viz --footprint LOWERED/{{engine}}.bin --record {{n}} --arch {} -o footprint.png",
        shell_word(&summary.source),
        arch.name()
    ));
    j.raw(",");
    // The `why` command for an element (`{elem}` filled in by the page), or
    // null where `why` cannot rerun the source.
    j.key("why_command");
    match &summary.why_source {
        Some(source) => j.str(&format!("tpb-emu why {source} '{{elem}}'")),
        None => j.raw("null"),
    }
    j.raw(",");
    // Per engine, its records column by column (each column a delta-run
    // string, Json::cols, that the page expands): byte offsets in the lowered
    // stream; the disassembly and what the emulator did, as indices into
    // `text`; virtual cycles per execution on the engine (TL-1) and of a
    // DMA transfer on its queue (0: none); times executed (counted from the
    // timeline's slices); `fp`: an index into `footprints`, or -1 (not
    // drawable), -2 (drawable, not precomputed), -3-k (drawable, but
    // drawing failed: `fp_error[k]`).
    let mut footprints = Vec::new();
    let mut fp_error = Vec::new();
    let mut drawable = 0usize;
    j.key("engines");
    j.raw("[");
    for (k, e) in Engine::ALL.into_iter().enumerate() {
        let steps = &staged.steps[e as usize];
        let class = &class_of[e as usize];
        let mut fp = Vec::with_capacity(steps.len());
        for (i, step) in steps.iter().enumerate() {
            let is_pool = step.record.opcode().class() == crate::isa::opcode::OpcodeClass::S4d4Pl;
            fp.push(if !is_pool {
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
                            png_bytes(&p.image).map_err(|source| VizError::Png {
                                path: "footprint".into(),
                                source: Box::new(source),
                            })
                        }) {
                        Ok(png) => {
                            let mut uri = String::from("data:image/png;base64,");
                            base64_into(&mut uri, &png);
                            footprints.push(uri);
                            footprints.len() as i64 - 1
                        }
                        Err(why) => {
                            fp_error.push(why.to_string());
                            -3 - (fp_error.len() as i64 - 1)
                        }
                    }
                }
            });
        }
        if k > 0 {
            j.raw(",");
        }
        j.raw("{");
        j.key("name");
        j.str(e.name());
        j.raw(",");
        j.key("offset");
        j.cols(steps.iter().map(|s| s.offset as i64))?;
        j.raw(",");
        j.key("disasm");
        j.cols(class.iter().map(|&c| disasm_id[c as usize] as i64))?;
        j.raw(",");
        j.key("did");
        j.cols(class.iter().map(|&c| did_id[c as usize] as i64))?;
        j.raw(",");
        j.key("cycles");
        j.cols(class.iter().map(|&c| cycles(c) as i64))?;
        j.raw(",");
        j.key("dma");
        j.cols(class.iter().map(|&c| dma(c) as i64))?;
        j.raw(",");
        j.key("runs");
        j.cols(runs[e as usize].iter().map(|&n| n as i64))?;
        j.raw(",");
        j.key("fp");
        j.cols(fp)?;
        j.raw("}");
        j.spill()?;
    }
    j.raw("],");
    j.key("text");
    j.raw("[");
    for (k, s) in text.list.iter().enumerate() {
        if k > 0 {
            j.raw(",");
        }
        j.escaped(s);
        if k % 1024 == 1023 {
            j.spill()?;
        }
    }
    j.raw("]");
    j.raw(",");
    // The slices, column by column (delta-run strings): the track (engines 0..=4, their DMA
    // queues 5..=9), start, duration, kind (0 record, 1 wait, 2 DMA
    // transfer), the record's index in its engine's stream; the (from, to)
    // slice indices of the release flows; the slices the timeline kept but
    // the page leaves out, and those the timeline itself dropped.
    let all = t.slices();
    let shown = &all[..all.len().min(MAX_DRAWN_SLICES)];
    let kind_index = |s: &crate::runtime::timeline::Slice| match s.kind {
        SliceKind::Record { index } => (0, index),
        SliceKind::Wait { index, .. } => (1, index),
        SliceKind::Dma { index, .. } => (2, index),
    };
    j.key("slices");
    j.raw("{");
    j.key("track");
    j.cols(shown.iter().map(|s| s.track.tid() as i64))?;
    j.raw(",");
    j.key("start");
    j.cols(shown.iter().map(|s| s.start as i64))?;
    j.raw(",");
    j.key("dur");
    j.cols(shown.iter().map(|s| s.dur as i64))?;
    j.raw(",");
    j.key("kind");
    j.cols(shown.iter().map(|s| kind_index(s).0))?;
    j.raw(",");
    j.key("index");
    j.cols(shown.iter().map(|s| kind_index(s).1 as i64))?;
    j.raw(",");
    j.key("flows");
    j.raw("[");
    let mut first = true;
    for (k, s) in shown.iter().enumerate() {
        if let SliceKind::Wait {
            released_by: Some(b),
            ..
        } = s.kind
            && b < shown.len()
        {
            if !first {
                j.raw(",");
            }
            first = false;
            j.raw("[");
            j.num(b as u64);
            j.raw(",");
            j.num(k as u64);
            j.raw("]");
        }
    }
    j.raw("],");
    j.key("left_out");
    j.num((all.len() - shown.len()) as u64);
    j.raw(",");
    j.key("dropped");
    j.num(t.dropped());
    j.raw(",");
    j.key("end");
    j.num(t.end());
    j.raw("},");
    j.key("footprints");
    j.strs(footprints.iter().map(String::as_str))?;
    j.raw(",");
    j.key("fp_error");
    j.strs(fp_error.iter().map(String::as_str))?;
    j.raw(",");
    j.key("footprints_precomputed");
    j.num(footprints.len() as u64);
    j.raw(",");
    j.key("footprints_drawable");
    j.num(drawable as u64);
    j.raw(",");
    j.key("why");
    j.serde(&summary.provenance)?;
    j.raw(",");
    j.key("why_note");
    j.str(&summary.provenance_note);
    j.raw(",");
    j.key("pictures");
    j.serde(&pictures)?;
    j.raw(",");
    j.key("output_files");
    j.serde(
        &summary
            .output_files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect::<HashMap<_, _>>(),
    )?;
    j.raw("}");
    json.finish()
}

/// `s` quoted for a POSIX shell when it needs to be.
pub fn shell_word(s: &str) -> String {
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
    fn columns_are_delta_runs_and_texts_are_escaped_for_the_script() {
        let mut out = Vec::new();
        let mut j = Json {
            buf: Vec::new(),
            out: &mut out,
        };
        j.cols([0, 64, 128, 128, 7]).unwrap();
        j.raw(" ");
        j.cols([-1, -1, -1]).unwrap();
        j.raw(" ");
        j.cols([]).unwrap();
        j.raw(" ");
        j.str("a\"b\\c</script>\n\u{1}é");
        j.finish().unwrap();
        let s = String::from_utf8(out).unwrap();
        assert_eq!(
            s,
            r#""0,64x2,0,-121" "-1,0x2" "" "a\"b\\c\u003c/script>\n\u0001é""#
        );
        let last = s.rsplit(' ').next().unwrap();
        assert_eq!(
            serde_json::from_str::<String>(last).unwrap(),
            "a\"b\\c</script>\n\u{1}é"
        );
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

    #[test]
    fn provenance_interns_repeated_lines_and_keeps_each_chain() {
        let mut p = Provenance::default();
        p.push("y", "why y[0]\nx[0] = 1\n  input `x`, as the run started\n");
        p.push("y", "why y[1]\nx[0] = 1\n  input `x`, as the run started\n");
        assert_eq!(p.lines.len(), 4, "{:?}", p.lines);
        assert_eq!(p.chains["y"], vec![vec![0, 1, 2], vec![3, 1, 2]]);
        let text: String = p.chains["y"][1]
            .iter()
            .map(|&i| format!("{}\n", p.lines[i as usize]))
            .collect();
        assert_eq!(
            text,
            "why y[1]\nx[0] = 1\n  input `x`, as the run started\n"
        );
    }
}
