//! Pictures of tensors: a montage of channel planes with a perceptual
//! colormap and channel labels, and argmax maps of MaxPoolSelect results.
//!
//! A tensor of shape H×W, C×H×W or N×C×H×W (an N×C×L tensor is drawn as
//! N×C×1×L: 1×L strips) is cut into planes (the last two axes), each drawn as one cell of a grid,
//! scaled up by an integer factor so small maps stay visible, with a label
//! (`c<C>`, or `<N>,<C>` with a batch) in a strip above it.
//!
//! Colours: `viridis` (the default for data that is never negative),
//! `magma`, or `diverging` (red–blue, centred on zero; the default for data
//! with negative values, and for differences). Values are normalised per
//! plane (`channel`, the default) or over the whole tensor (`global`); NaN is
//! drawn magenta, +inf and −inf as the map's two ends. Integer data is drawn
//! the same way, by value. An argmax map gives each window position
//! (0..KH·KW) its own colour from a categorical palette; it is drawn only
//! when asked for (`tpb-emu viz --argmax`, the indices of `pool2d --png`).
//!
//! At most [`MAX_PLANES`] planes are drawn; past that, the legend under the
//! picture says how many were ([`planes_note`]).

mod footprint;
pub mod report;
pub mod timeline;

pub use footprint::{
    BOTH, Footprint, FootprintPicture, MAX_WALK, Panel, READ, UNTOUCHED, WRITTEN, draw_footprint,
    footprint,
};

use crate::npy::{ElemKind, NpyError, read_npy};
use image::{Rgb, RgbImage};
use std::path::Path;

/// A colormap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmap {
    /// Perceptually uniform, dark blue to yellow.
    Viridis,
    /// Perceptually uniform, black to light yellow.
    Magma,
    /// Red–blue, white at zero.
    Diverging,
}

/// How values map to the colormap's range.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Normalize {
    /// Each plane from its own minimum to maximum.
    #[default]
    Channel,
    /// Every plane on the tensor's range.
    Global,
}

/// Montage options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// The colormap; `None` picks diverging for data with negative values, else viridis.
    pub cmap: Option<Cmap>,
    /// Normalisation.
    pub normalize: Normalize,
}

/// The most planes drawn; later planes are left out, and the picture's
/// legend says so ([`planes_note`]).
pub const MAX_PLANES: usize = 1024;

/// `n` with its thousands grouped by commas (`1,024`).
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// What a picture of `count` planes leaves out: `None` when every plane is
/// drawn, else "drew 1,024 of N planes (the montage's limit)".
pub fn planes_note(count: usize) -> Option<String> {
    (count > MAX_PLANES).then(|| {
        format!(
            "drew {} of {} planes (the montage's limit)",
            grouped(MAX_PLANES),
            grouped(count)
        )
    })
}
/// Height of a label strip in pixels.
pub const LABEL_H: u32 = 10;
/// Pixels between cells.
pub const GAP: u32 = 2;
/// The background.
pub const BACKGROUND: Rgb<u8> = Rgb([24, 24, 24]);
/// Label text.
pub const TEXT: Rgb<u8> = Rgb([235, 235, 235]);
/// NaN.
pub const NAN_COLOR: Rgb<u8> = Rgb([255, 0, 255]);

/// Why a picture could not be made.
#[derive(Debug, thiserror::Error)]
pub enum VizError {
    /// The shape is not one the montage draws.
    #[error(transparent)]
    Shape(#[from] ShapeFault),
    /// Reading the `.npy`.
    #[error(transparent)]
    Npy(#[from] NpyError),
    /// The record is not one that can be drawn (not Pool/MaxPoolSelect).
    #[error(transparent)]
    NotDrawable(Undrawable),
    /// The record fails validation for the POOL engine.
    #[error("invalid record: {pred} ({0})", pred = .0.predicate())]
    Invalid(crate::isa::validate::Fail),
    /// Writing the PNG.
    #[error("{path}: {source}")]
    Png {
        /// The file (or what the picture is of).
        path: String,
        /// The encoder's or the file system's error (boxed: it is large,
        /// and every error that carries a `VizError` would grow with it).
        source: Box<image::ImageError>,
    },
}

/// Why a tensor or a walk has no picture ([`VizError::Shape`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShapeFault {
    /// A rank the montage does not cut into planes.
    #[error("shape {shape:?}: expected H×W, C×H×W or N×C×H×W")]
    Rank {
        /// The shape.
        shape: Vec<usize>,
    },
    /// A shape whose element count is not the number of values given.
    #[error("shape {shape:?} does not hold {values} values")]
    Values {
        /// The shape.
        shape: Vec<usize>,
        /// The values given.
        values: usize,
    },
    /// A shape whose bytes are not the bytes given.
    #[error("shape {shape:?} does not hold {bytes} bytes of {dtype}")]
    Bytes {
        /// The shape.
        shape: Vec<u64>,
        /// The bytes given.
        bytes: usize,
        /// Their element type.
        dtype: crate::isa::enums::Dtype,
    },
    /// A dtype with no element size (a code the reader does not know).
    #[error("dtype {0} has no element size")]
    NoElementSize(crate::isa::enums::Dtype),
    /// A record's walk too long to draw.
    #[error("a walk of {0} elements is too long to draw")]
    WalkTooLong(u64),
}

/// Why a record's footprint cannot be drawn ([`VizError::NotDrawable`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Undrawable {
    /// Not a Pool or MaxPoolSelect record.
    #[error("{0} is not a Pool or MaxPoolSelect record")]
    NotPool(crate::isa::Opcode),
    /// An operand whose address is not an immediate SBUF/PSUM address.
    #[error("the {0} address is not an immediate SBUF/PSUM address")]
    Address(&'static str),
}

/// A tensor cut into planes.
#[derive(Clone, Debug, PartialEq)]
pub struct Planes {
    /// Planes.
    pub count: usize,
    /// Plane height.
    pub h: usize,
    /// Plane width.
    pub w: usize,
    /// One label per plane.
    pub labels: Vec<String>,
    /// `count·h·w` values, plane after plane.
    pub values: Vec<f32>,
}

impl Planes {
    /// Cuts `values` of `shape` (H×W, C×H×W or N×C×H×W; give an N×C×L tensor
    /// as N×C×1×L) into planes.
    pub fn new(shape: &[u64], values: Vec<f32>) -> Result<Planes, VizError> {
        let s: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        let (n, c, h, w, batch) = match s[..] {
            [h, w] => (1, 1, h, w, false),
            [c, h, w] => (1, c, h, w, false),
            [n, c, h, w] => (n, c, h, w, true),
            _ => {
                return Err(ShapeFault::Rank { shape: s }.into());
            }
        };
        if [n, c, h, w].contains(&0) || n * c * h * w != values.len() {
            return Err(ShapeFault::Values {
                shape: s,
                values: values.len(),
            }
            .into());
        }
        let labels = (0..n * c)
            .map(|p| {
                if batch && n > 1 {
                    format!("{},{}", p / c, p % c)
                } else {
                    format!("c{}", p % c)
                }
            })
            .collect();
        Ok(Planes {
            count: n * c,
            h,
            w,
            labels,
            values,
        })
    }

    fn plane(&self, i: usize) -> &[f32] {
        &self.values[i * self.h * self.w..(i + 1) * self.h * self.w]
    }
}

/// The colour of `t` in 0..=1 on `cmap`.
pub fn color(cmap: Cmap, t: f64) -> Rgb<u8> {
    let t = t.clamp(0.0, 1.0);
    let g = match cmap {
        Cmap::Viridis => colorous::VIRIDIS,
        Cmap::Magma => colorous::MAGMA,
        // RdBu runs red (0) to blue (1); flip so positive values are red.
        Cmap::Diverging => return rgb(colorous::RED_BLUE.eval_continuous(1.0 - t)),
    };
    rgb(g.eval_continuous(t))
}

fn rgb(c: colorous::Color) -> Rgb<u8> {
    Rgb([c.r, c.g, c.b])
}

/// The categorical colour of window position `k`.
pub fn category(k: usize) -> Rgb<u8> {
    rgb(colorous::TABLEAU10[k % colorous::TABLEAU10.len()])
}

fn range(v: &[f32]) -> (f32, f32) {
    v.iter()
        .filter(|x| x.is_finite())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// Grid geometry: columns, rows, scale (x, y), cell width and height.
struct Grid {
    cols: u32,
    sx: u32,
    sy: u32,
    cell_w: u32,
    cell_h: u32,
}

impl Grid {
    fn new(p: &Planes, count: usize) -> Grid {
        let longest = p.h.max(p.w).max(1) as u32;
        let sx = 48u32.div_ceil(longest).clamp(1, 16);
        let sy = sx.max(8u32.div_ceil(p.h as u32)).min(16);
        let label_w = p
            .labels
            .iter()
            .map(|l| l.len() as u32 * 8)
            .max()
            .unwrap_or(0);
        let cols = (count as f64).sqrt().ceil().max(1.0) as u32;
        Grid {
            cols,
            sx,
            sy,
            cell_w: (p.w as u32 * sx).max(label_w),
            cell_h: p.h as u32 * sy + LABEL_H,
        }
    }

    /// Top-left pixel of plane `i`'s picture (below its label).
    fn origin(&self, i: usize) -> (u32, u32) {
        let (c, r) = (i as u32 % self.cols, i as u32 / self.cols);
        (
            GAP + c * (self.cell_w + GAP),
            GAP + r * (self.cell_h + GAP) + LABEL_H,
        )
    }

    fn image(&self, count: usize) -> RgbImage {
        let rows = (count as u32).div_ceil(self.cols).max(1);
        RgbImage::from_pixel(
            GAP + self.cols * (self.cell_w + GAP),
            GAP + rows * (self.cell_h + GAP),
            BACKGROUND,
        )
    }
}

/// Where [`montage`] draws the planes of `p`: what a viewer needs to turn a
/// pixel back into a plane and an element (the run report's pictures).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MontageGeometry {
    /// Planes per row of the grid.
    pub cols: u32,
    /// Pixels per element, across and down.
    pub sx: u32,
    /// Pixels per element down.
    pub sy: u32,
    /// A cell's width and height (its label strip included).
    pub cell_w: u32,
    /// See `cell_w`.
    pub cell_h: u32,
    /// Pixels between cells ([`GAP`]) and a label strip's height ([`LABEL_H`]).
    pub gap: u32,
    /// See `gap`.
    pub label_h: u32,
    /// Planes drawn (at most [`MAX_PLANES`]).
    pub planes: usize,
}

/// The geometry of [`montage`]'s picture of `p`.
pub fn montage_geometry(p: &Planes) -> MontageGeometry {
    let planes = p.count.min(MAX_PLANES);
    let g = Grid::new(p, planes);
    MontageGeometry {
        cols: g.cols,
        sx: g.sx,
        sy: g.sy,
        cell_w: g.cell_w,
        cell_h: g.cell_h,
        gap: GAP,
        label_h: LABEL_H,
        planes,
    }
}

/// Where plane `plane`'s element (y, x) is drawn in [`montage`]'s picture of
/// `p`: the top-left pixel of its block.
pub fn pixel_of(p: &Planes, plane: usize, y: usize, x: usize) -> (u32, u32) {
    let g = Grid::new(p, p.count.min(MAX_PLANES));
    let (ox, oy) = g.origin(plane);
    (ox + x as u32 * g.sx, oy + y as u32 * g.sy)
}

/// The colormap `opts` picks for `p`.
pub fn pick_cmap(p: &Planes, opts: &Options) -> Cmap {
    opts.cmap.unwrap_or_else(|| {
        if p.values.iter().any(|&v| v < 0.0) {
            Cmap::Diverging
        } else {
            Cmap::Viridis
        }
    })
}

/// Draws every plane (up to [`MAX_PLANES`]) as a labelled cell of a grid.
pub fn montage(p: &Planes, opts: &Options) -> RgbImage {
    let count = p.count.min(MAX_PLANES);
    let cmap = pick_cmap(p, opts);
    let global = range(&p.values);
    let g = Grid::new(p, count);
    let mut img = g.image(count);
    for i in 0..count {
        let v = p.plane(i);
        let (lo, hi) = match opts.normalize {
            Normalize::Channel => range(v),
            Normalize::Global => global,
        };
        let t_of = |x: f32| -> f64 {
            if x == f32::INFINITY {
                return 1.0;
            }
            if x == f32::NEG_INFINITY {
                return 0.0;
            }
            match cmap {
                Cmap::Diverging => {
                    let m = lo.abs().max(hi.abs()) as f64;
                    if m > 0.0 && m.is_finite() {
                        0.5 + 0.5 * x as f64 / m
                    } else {
                        0.5
                    }
                }
                _ => {
                    let span = hi as f64 - lo as f64;
                    if span > 0.0 && span.is_finite() {
                        (x as f64 - lo as f64) / span
                    } else {
                        0.5
                    }
                }
            }
        };
        draw_plane(&mut img, &g, i, p.w, v, |x| {
            if x.is_nan() {
                NAN_COLOR
            } else {
                color(cmap, t_of(x))
            }
        });
        label(&mut img, &g, i, &p.labels[i]);
    }
    let (lo, hi) = match cmap {
        Cmap::Diverging => {
            let m = global.0.abs().max(global.1.abs());
            (-m, m)
        }
        _ => global,
    };
    let per = match opts.normalize {
        Normalize::Channel if count > 1 => " (each plane on its own range)",
        _ => "",
    };
    let left_out = planes_note(p.count)
        .map(|n| format!("; {n}"))
        .unwrap_or_default();
    colour_bar(
        img,
        cmap,
        &format!("{} .. {}{per}{left_out}", num(lo), num(hi)),
    )
}

/// Height of the strip under a montage that holds its colour bar or legend.
pub const LEGEND_H: u32 = 2 * GAP + COLOUR_BAR_H + 2 + 8;
/// Height of the colour bar itself.
pub const COLOUR_BAR_H: u32 = 6;

/// A value for a legend: finite values in the shortest form, else a word.
fn num(x: f32) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "no finite values".into()
    }
}

/// `img` with a strip below it (and widened to `min_w`), for a legend.
fn with_strip(img: RgbImage, min_w: u32) -> RgbImage {
    let w = img.width().max(min_w);
    let mut out = RgbImage::from_pixel(w, img.height() + LEGEND_H, BACKGROUND);
    image::imageops::replace(&mut out, &img, 0, 0);
    out
}

/// Adds the colour bar of `cmap` (low values left) and the value range `text` under `img`.
fn colour_bar(img: RgbImage, cmap: Cmap, text: &str) -> RgbImage {
    let text_w = text.len() as u32 * 8 + 2 * GAP;
    let top = img.height() + GAP;
    let mut out = with_strip(img, text_w);
    let bar_w = out.width() - 2 * GAP;
    for x in 0..bar_w {
        let c = color(cmap, x as f64 / (bar_w.max(2) - 1) as f64);
        for y in 0..COLOUR_BAR_H {
            out.put_pixel(GAP + x, top + y, c);
        }
    }
    text_at(&mut out, GAP, top + COLOUR_BAR_H + 2, text);
    out
}

/// Draws window positions (the winning tap, 0..KH·KW, x fastest) as
/// categorical colours: which element of each window held the maximum.
pub fn argmax_map(p: &Planes) -> RgbImage {
    let count = p.count.min(MAX_PLANES);
    let g = Grid::new(p, count);
    let mut img = g.image(count);
    for i in 0..count {
        draw_plane(&mut img, &g, i, p.w, p.plane(i), |x| {
            if x.is_finite() && x >= 0.0 {
                category(x as usize)
            } else {
                NAN_COLOR
            }
        });
        label(&mut img, &g, i, &p.labels[i]);
    }
    // The legend: a swatch and its window position for every position drawn
    // (the palette repeats after ten).
    let top_k = p.values[..count * p.h * p.w]
        .iter()
        .filter(|x| x.is_finite() && **x >= 0.0)
        .fold(0usize, |m, &x| m.max(x as usize));
    let shown = (top_k + 1).min(colorous::TABLEAU10.len());
    let entries: Vec<String> = (0..shown)
        .map(|k| {
            if k + 1 == shown && top_k + 1 > shown {
                format!("{k}+")
            } else {
                k.to_string()
            }
        })
        .collect();
    let widths: Vec<u32> = entries
        .iter()
        .map(|e| 8 + 2 + e.len() as u32 * 8 + 6)
        .collect();
    let note = planes_note(p.count);
    let note_w = note.as_ref().map_or(0, |n| n.len() as u32 * 8);
    let total = widths.iter().sum::<u32>() + note_w + 2 * GAP;
    let top = img.height() + GAP;
    let mut out = with_strip(img, total);
    let mut x = GAP;
    for (k, (e, w)) in entries.iter().zip(&widths).enumerate() {
        for dy in 0..8 {
            for dx in 0..8 {
                out.put_pixel(x + dx, top + dy, category(k));
            }
        }
        text_at(&mut out, x + 10, top, e);
        x += w;
    }
    if let Some(n) = note {
        text_at(&mut out, x, top, &n);
    }
    out
}

fn draw_plane(
    img: &mut RgbImage,
    g: &Grid,
    i: usize,
    w: usize,
    v: &[f32],
    f: impl Fn(f32) -> Rgb<u8>,
) {
    let (ox, oy) = g.origin(i);
    for (k, &x) in v.iter().enumerate() {
        let c = f(x);
        let (py, px) = ((k / w) as u32, (k % w) as u32);
        for dy in 0..g.sy {
            for dx in 0..g.sx {
                img.put_pixel(ox + px * g.sx + dx, oy + py * g.sy + dy, c);
            }
        }
    }
}

fn label(img: &mut RgbImage, g: &Grid, i: usize, text: &str) {
    let (ox, oy) = g.origin(i);
    text_at(img, ox, oy - LABEL_H + 1, text);
}

/// Draws `text` (ASCII, 8×8 glyphs) with its top-left corner at (x, y).
pub fn text_at(img: &mut RgbImage, x: u32, y: u32, text: &str) {
    use font8x8::UnicodeFonts;
    for (n, ch) in text.chars().enumerate() {
        let Some(glyph) = font8x8::BASIC_FONTS.get(ch) else {
            continue;
        };
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..8u32 {
                if bits & (1 << col) != 0 {
                    let (px, py) = (x + n as u32 * 8 + col, y + row as u32);
                    if px < img.width() && py < img.height() {
                        img.put_pixel(px, py, TEXT);
                    }
                }
            }
        }
    }
}

/// The bytes of `img` as a PNG file.
pub fn png_bytes(img: &RgbImage) -> Result<Vec<u8>, image::ImageError> {
    let mut buf = std::io::Cursor::new(Vec::new());
    img.write_to(&mut buf, image::ImageFormat::Png)?;
    Ok(buf.into_inner())
}

/// Writes `img` as a PNG.
pub fn save_png(img: &RgbImage, path: &Path) -> Result<(), VizError> {
    img.save_with_format(path, image::ImageFormat::Png)
        .map_err(|source| VizError::Png {
            path: path.display().to_string(),
            source: Box::new(source),
        })
}

/// An `.npy` read for drawing: shape, values as f32, and whether the
/// elements are integers (drawn by value like floats; `tpb-emu viz --argmax`
/// draws them as an argmax map).
pub fn read_values(path: &Path) -> Result<(Vec<u64>, Vec<f32>, bool), VizError> {
    Ok(values_of(&read_npy(path)?))
}

/// An array's shape, values as f32, and whether the elements are integers
/// ([`read_values`] after reading; the Python bindings' `to_png` for an
/// array in memory).
pub fn values_of(npy: &crate::npy::Npy) -> (Vec<u64>, Vec<f32>, bool) {
    let tc = npy.kind;
    let e = npy.elem;
    let values = npy
        .data
        .chunks_exact(e)
        .map(|b| {
            let mut raw = [0u8; 8];
            raw[..e].copy_from_slice(b);
            let u = u64::from_le_bytes(raw);
            match (tc, e) {
                (ElemKind::Float, 4) => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                (ElemKind::Float, 2) => half::f16::from_bits(u as u16).to_f32(),
                (ElemKind::Int, _) => ((u << (64 - 8 * e)) as i64 >> (64 - 8 * e)) as f32,
                _ => u as f32,
            }
        })
        .collect();
    (npy.shape.clone(), values, tc != ElemKind::Float)
}

/// A montage of a front-end tensor (widened to f32 by SPEC §6's load rule).
/// An N×C×L tensor is drawn as N×C×1×L.
pub fn tensor_montage(t: &crate::frontend::Tensor, opts: &Options) -> Result<RgbImage, VizError> {
    Ok(montage(&Planes::new(&as_4d(&t.shape), t.to_f32())?, opts))
}

/// A montage of raw little-endian C-order elements of `dtype` (an output
/// variable of `tpb-emu run`, a dump of `tpb-emu exec`), widened to f32 by
/// SPEC §6's load rule (types without one, the fp8s, by their bits). A 1-D
/// array is drawn as 1×L, N×C×L as N×C×1×L, and more than four axes fold
/// the leading ones into N.
pub fn raw_montage(
    dtype: crate::isa::enums::Dtype,
    shape: &[u64],
    data: &[u8],
    opts: &Options,
) -> Result<RgbImage, VizError> {
    use crate::device::convert::{InType, load_f32};
    let e = dtype.size().ok_or(ShapeFault::NoElementSize(dtype))? as usize;
    let ty = InType::from_dtype(dtype);
    let values = data
        .chunks_exact(e)
        .map(|b| {
            let raw = b.iter().rev().fold(0u64, |a, &x| (a << 8) | x as u64);
            match ty {
                Some(t) => load_f32(t, raw),
                None => raw as f32,
            }
        })
        .collect();
    let shape = match shape {
        [l] => vec![1, *l],
        s if s.len() > 4 => {
            let lead: u64 = s[..s.len() - 3].iter().product();
            let mut v = vec![lead];
            v.extend_from_slice(&s[s.len() - 3..]);
            v
        }
        s => as_4d(s),
    };
    Ok(montage(&Planes::new(&shape, values)?, opts))
}

/// N×C×L as N×C×1×L; any other shape as it is.
pub fn as_4d(shape: &[u64]) -> Vec<u64> {
    match shape {
        [n, c, l] => vec![*n, *c, 1, *l],
        // N×C×D×H×W (a 3-D pooling's maps): N·C rows of D planes.
        s if s.len() > 4 => {
            let mut v = vec![s[..s.len() - 3].iter().product()];
            v.extend_from_slice(&s[s.len() - 3..]);
            v
        }
        s => s.to_vec(),
    }
}

/// The argmax map of a pooling's PyTorch indices: each output pixel shows
/// which tap of its window (`i·KW + j`) held the maximum.
pub fn indices_map(plan: &crate::frontend::Plan, indices: &[i64]) -> Result<RgbImage, VizError> {
    let (ho, wo) = (plan.ho, plan.wo);
    let taps: Vec<f32> = indices
        .iter()
        .enumerate()
        .map(|(i, &idx)| plan.tap_of((i / wo) % ho, i % wo, idx) as f32)
        .collect();
    Ok(argmax_map(&Planes::new(&as_4d(&plan.out_shape()), taps)?))
}

/// An RGB image (values 0..=1, row-major) scaled up `scale` times.
pub fn rgb_image(px: &[[f32; 3]], w: usize, scale: u32) -> RgbImage {
    let h = px.len() / w.max(1);
    RgbImage::from_fn(w as u32 * scale, h as u32 * scale, |x, y| {
        let p = px[(y / scale) as usize * w + (x / scale) as usize];
        Rgb(p.map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8))
    })
}
