//! The byte footprint of one Pool/MaxPoolSelect record: which bytes of a
//! partition its src walk reads and its dst walk writes.
//!
//! Every lane walks the same byte pattern in its own partition, so one
//! partition tells the whole story. When src and dst lie in the same region
//! and their lane ranges share a partition, one panel shows that partition
//! with both walks; otherwise one panel shows src's first partition (reads)
//! and another dst's (writes). Each panel is cropped to the touched bytes
//! plus a row of margin on either side, one row per [`Footprint::row_bytes`]
//! bytes, with the row's starting offset on its left.

use super::{BACKGROUND, Undrawable, VizError, text_at};
use crate::isa::enums::Dtype;
use crate::isa::opcode::OpcodeClass;
use crate::isa::record::Record;
use crate::isa::s4d4_pl::S4d4Pl;
use crate::isa::tensor::{Location, Region, Tensor4d};
use crate::isa::validate::{Target, check};
use crate::limits::Arch;
use image::{Rgb, RgbImage};

/// A byte neither walk touches.
pub const UNTOUCHED: Rgb<u8> = Rgb([64, 64, 64]);
/// A byte the src walk reads.
pub const READ: Rgb<u8> = Rgb([66, 133, 244]);
/// A byte the dst walk writes.
pub const WRITTEN: Rgb<u8> = Rgb([255, 170, 0]);
/// A byte both read and written (EC-21 forbids it; a warning).
pub const BOTH: Rgb<u8> = Rgb([255, 0, 0]);

/// The most elements a walk may have (after dropping repeat-only dims) to be drawn.
pub const MAX_WALK: u64 = 1 << 27;

const PAD: u32 = 4;
const LINE: u32 = 12;
/// Width of the row-offset column: `0x00000 ` (8 glyphs).
const ADDR_W: u32 = 8 * 8;
/// Title characters per line before it wraps.
const TITLE_CHARS: usize = 120;

/// Byte states in a panel.
const R: u8 = 1;
const W: u8 = 2;

/// One partition's bytes, cropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Panel {
    /// The region.
    pub region: Region,
    /// The partition drawn.
    pub partition: u32,
    /// What the panel shows, e.g. `sbuf partition 0: src lane 0, dst lane 0`.
    pub label: String,
    /// Offset of the first byte drawn (a multiple of the row width).
    pub start: u32,
    /// Per byte from `start`: 0 untouched, 1 read, 2 written, 3 both.
    pub state: Vec<u8>,
}

impl Panel {
    fn new(region: Region, partition: u32, label: String, arch: Arch) -> Panel {
        Panel {
            region,
            partition,
            label,
            start: 0,
            state: vec![0; region.active_bytes(arch) as usize],
        }
    }

    /// The colour of byte `offset` of the partition (`None` outside the crop).
    pub fn color_of(&self, offset: u32) -> Option<Rgb<u8>> {
        let k = offset.checked_sub(self.start)? as usize;
        self.state.get(k).map(|&s| match s {
            0 => UNTOUCHED,
            R => READ,
            W => WRITTEN,
            _ => BOTH,
        })
    }

    fn crop(&mut self, row: u32) {
        let touched = |s: &u8| *s != 0;
        let (Some(lo), Some(hi)) = (
            self.state.iter().position(touched),
            self.state.iter().rposition(touched),
        ) else {
            self.state.truncate(row as usize);
            return;
        };
        let (lo, hi) = (lo as u32, hi as u32 + 1);
        let len = self.state.len() as u32;
        let start = (lo / row * row).saturating_sub(row);
        let end = (hi.div_ceil(row) * row + row).min(len);
        self.state.truncate(end as usize);
        self.state.drain(..start as usize);
        self.start = start;
    }
}

/// The footprint of one record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// One or two panels.
    pub panels: Vec<Panel>,
    /// Bytes per drawn row: 256, or 512 for a crop over 64 KiB.
    pub row_bytes: u32,
}

/// The walk's element indices with repeat-only dims (step 0) folded away:
/// they touch no new byte.
fn distinct_walk(t: &Tensor4d) -> Result<Tensor4d, VizError> {
    let mut t = *t;
    for d in 0..4 {
        if t.step[d] == 0 {
            t.num[d] = 1;
        }
    }
    if t.elements() > MAX_WALK {
        return Err(super::ShapeFault::WalkTooLong(t.elements()).into());
    }
    Ok(t)
}

fn mark(p: &mut Panel, t: &Tensor4d, loc: Location, dtype: Dtype, bit: u8) -> Result<(), VizError> {
    let size = dtype.size().unwrap_or(1) as i64;
    let len = p.state.len() as i64;
    distinct_walk(t)?.for_each_index(|i| {
        let b = loc.offset as i64 + i * size;
        for k in b.max(0)..(b + size).min(len) {
            p.state[k as usize] |= bit;
        }
    });
    Ok(())
}

fn location(t: &Tensor4d, what: &'static str) -> Result<Location, VizError> {
    t.addr
        .location()
        .filter(|_| !t.addr.has_mode_bits())
        .ok_or(VizError::NotDrawable(Undrawable::Address(what)))
}

/// The footprint of `r` on `arch`: only Pool and MaxPoolSelect records are
/// drawable ([`VizError::NotDrawable`]), and only valid ones
/// ([`VizError::Invalid`], from [`crate::isa::validate::check`] for the POOL engine).
pub fn footprint(r: &Record, arch: Arch) -> Result<Footprint, VizError> {
    if r.opcode().class() != OpcodeClass::S4d4Pl {
        return Err(VizError::NotDrawable(Undrawable::NotPool(r.opcode())));
    }
    check(r, Target::pool(arch)).map_err(VizError::Invalid)?;
    let p = S4d4Pl::decode(r);
    let (s, d) = (location(&p.src, "src")?, location(&p.dst, "dst")?);
    let ch = p.num_active_channels.max(1) as u32;
    let meet =
        s.region == d.region && s.partition < d.partition + ch && d.partition < s.partition + ch;
    let mut panels = Vec::new();
    if meet {
        let part = s.partition.max(d.partition);
        let label = format!(
            "{} partition {part}: src lane {}, dst lane {}",
            s.region.name(),
            part - s.partition,
            part - d.partition
        );
        let mut panel = Panel::new(s.region, part, label, arch);
        mark(&mut panel, &p.src, s, p.in_dtype, R)?;
        mark(&mut panel, &p.dst, d, p.out_dtype, W)?;
        panels.push(panel);
    } else {
        let mut src = Panel::new(
            s.region,
            s.partition,
            format!(
                "src: {} partition {} (lane 0)",
                s.region.name(),
                s.partition
            ),
            arch,
        );
        mark(&mut src, &p.src, s, p.in_dtype, R)?;
        let mut dst = Panel::new(
            d.region,
            d.partition,
            format!(
                "dst: {} partition {} (lane 0)",
                d.region.name(),
                d.partition
            ),
            arch,
        );
        mark(&mut dst, &p.dst, d, p.out_dtype, W)?;
        panels.extend([src, dst]);
    }
    let span = |p: &Panel| {
        let t = |s: &u8| *s != 0;
        match (p.state.iter().position(t), p.state.iter().rposition(t)) {
            (Some(lo), Some(hi)) => hi + 1 - lo,
            _ => 0,
        }
    };
    let row_bytes = if panels.iter().map(span).max().unwrap_or(0) > 64 << 10 {
        512
    } else {
        256
    };
    for p in &mut panels {
        p.crop(row_bytes);
    }
    Ok(Footprint { panels, row_bytes })
}

/// A drawn footprint and where its bytes are.
pub struct FootprintPicture {
    /// The picture.
    pub image: RgbImage,
    row_bytes: u32,
    cell_w: u32,
    cell_h: u32,
    x0: u32,
    /// Per panel: its first byte's top-left pixel row, its start offset and length.
    panels: Vec<(u32, u32, u32)>,
}

impl FootprintPicture {
    /// The top-left pixel of byte `offset` (within the partition) in panel
    /// `panel`; `None` outside the panel's crop.
    pub fn pixel_of(&self, panel: usize, offset: u32) -> Option<(u32, u32)> {
        let &(y0, start, len) = self.panels.get(panel)?;
        let k = offset.checked_sub(start).filter(|&k| k < len)?;
        Some((
            self.x0 + k % self.row_bytes * self.cell_w,
            y0 + k / self.row_bytes * self.cell_h,
        ))
    }
}

/// Draws `fp` under `title` (wrapped at 120 characters) and a colour legend.
pub fn draw_footprint(fp: &Footprint, title: &str) -> FootprintPicture {
    let (cell_w, cell_h) = if fp.row_bytes > 256 { (2, 4) } else { (4, 8) };
    let chars: Vec<char> = title.chars().collect();
    let title_lines: Vec<String> = chars
        .chunks(TITLE_CHARS)
        .map(|c| c.iter().collect())
        .collect();
    let legend = [
        (UNTOUCHED, "untouched"),
        (READ, "read (src)"),
        (WRITTEN, "written (dst)"),
        (BOTH, "both (EC-21!)"),
    ];
    let x0 = PAD + ADDR_W;
    let mut y = PAD + LINE * (title_lines.len() as u32 + 1) + PAD;
    let mut geo = Vec::new();
    for p in &fp.panels {
        y += LINE;
        let rows = (p.state.len() as u32).div_ceil(fp.row_bytes);
        geo.push((y, p.start, p.state.len() as u32));
        y += rows * cell_h + PAD;
    }
    let text_w = title_lines
        .iter()
        .map(|l| l.len())
        .chain(fp.panels.iter().map(|p| p.label.len()))
        .max()
        .unwrap_or(0) as u32
        * 8;
    let legend_w: u32 = legend
        .iter()
        .map(|(_, l)| 12 + l.len() as u32 * 8 + 12)
        .sum();
    let width = (x0 + fp.row_bytes * cell_w).max(text_w).max(legend_w) + PAD;
    let mut img = RgbImage::from_pixel(width, y, BACKGROUND);
    for (i, l) in title_lines.iter().enumerate() {
        text_at(&mut img, PAD, PAD + i as u32 * LINE, l);
    }
    let ly = PAD + title_lines.len() as u32 * LINE;
    let mut lx = PAD;
    for (c, l) in legend {
        fill(&mut img, lx, ly, 8, 8, c);
        text_at(&mut img, lx + 12, ly, l);
        lx += 12 + l.len() as u32 * 8 + 12;
    }
    for (p, &(py, start, len)) in fp.panels.iter().zip(&geo) {
        text_at(&mut img, PAD, py - LINE + 2, &p.label);
        for r in (0..len.div_ceil(fp.row_bytes)).step_by(8u32.div_ceil(cell_h) as usize) {
            text_at(
                &mut img,
                PAD,
                py + r * cell_h,
                &format!("{:#07x}", start + r * fp.row_bytes),
            );
        }
        for (k, _) in p.state.iter().enumerate() {
            let k = k as u32;
            let c = p.color_of(start + k).unwrap_or(UNTOUCHED);
            fill(
                &mut img,
                x0 + k % fp.row_bytes * cell_w,
                py + k / fp.row_bytes * cell_h,
                cell_w,
                cell_h,
                c,
            );
        }
    }
    FootprintPicture {
        image: img,
        row_bytes: fp.row_bytes,
        cell_w,
        cell_h,
        x0,
        panels: geo,
    }
}

fn fill(img: &mut RgbImage, x: u32, y: u32, w: u32, h: u32, c: Rgb<u8>) {
    for yy in y..(y + h).min(img.height()) {
        for xx in x..(x + w).min(img.width()) {
            img.put_pixel(xx, yy, c);
        }
    }
}
