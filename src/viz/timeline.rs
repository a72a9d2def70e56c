//! A picture of a run's timeline ([`crate::runtime::timeline`]): one row per
//! engine and per DMA queue, each slice a bar (records in a colour per
//! opcode, waits grey, DMA transfers blue), the opcode written inside a bar
//! wide enough, and the release flows drawn as yellow lines from the
//! releasing slice's end to the end of the wait. A time axis in virtual
//! cycles runs along the bottom. It is what `docs/timeline.md` shows, for
//! readers without a trace viewer; ui.perfetto.dev shows the same file
//! interactively.

use super::{BACKGROUND, TEXT, category, text_at};
use crate::runtime::Staged;
use crate::runtime::timeline::{Cycles, SliceKind, Timeline, Track};
use image::{Rgb, RgbImage};

/// Height of one track's row, in pixels.
pub const ROW_H: u32 = 22;
/// Width of the track-name column, in pixels.
pub const NAMES_W: u32 = 136;
/// Height of the time axis, in pixels.
pub const AXIS_H: u32 = 20;
/// The colour of wait slices.
pub const WAIT: Rgb<u8> = Rgb([90, 90, 90]);
/// The colour of DMA transfers.
pub const DMA: Rgb<u8> = Rgb([60, 120, 220]);
/// The colour of release flows.
pub const FLOW: Rgb<u8> = Rgb([250, 210, 60]);
/// The most pixels wide a picture may be.
pub const MAX_WIDTH: u32 = 8192;

/// Draws `t` (recorded from `staged`, with its slices kept), `width` pixels
/// wide (clamped to `NAMES_W + 64 ..= MAX_WIDTH`). The rows are the five
/// engines in order, then the DMA queues that carried transfers.
pub fn draw_timeline(t: &Timeline, staged: &Staged, width: u32) -> RgbImage {
    let width = width.clamp(NAMES_W + 64, MAX_WIDTH);
    let mut rows: Vec<Track> = crate::isa::Engine::ALL
        .iter()
        .map(|&e| Track::Engine(e))
        .collect();
    for e in crate::isa::Engine::ALL {
        if t.slices().iter().any(|s| s.track == Track::Dma(e)) {
            rows.push(Track::Dma(e));
        }
    }
    let height = rows.len() as u32 * ROW_H + AXIS_H;
    let mut img = RgbImage::from_pixel(width, height, BACKGROUND);
    let row_of = |track: Track| rows.iter().position(|&r| r == track).unwrap_or(0) as u32;
    let end = t.end().max(1);
    let plot_w = (width - NAMES_W - 8) as u64;
    let x_of = |c: Cycles| NAMES_W + (c.min(end) as u128 * plot_w as u128 / end as u128) as u32;
    for (i, track) in rows.iter().enumerate() {
        let name = match track {
            Track::Engine(e) => e.name().to_ascii_uppercase(),
            Track::Dma(e) => format!("DMA {}", e.name().to_ascii_uppercase()),
        };
        let y = i as u32 * ROW_H;
        text_at(&mut img, 4, y + (ROW_H - 8) / 2, &name);
        fill(
            &mut img,
            NAMES_W,
            y + ROW_H - 1,
            width - NAMES_W,
            1,
            Rgb([48, 48, 48]),
        );
    }
    for s in t.slices() {
        let y = row_of(s.track) * ROW_H + 3;
        // At least 2 pixels wide; a 1-pixel gap before the next slice.
        let x0 = x_of(s.start);
        let x1 = x_of(s.end()).saturating_sub(1).max(x0 + 2);
        let (colour, label) = match s.kind {
            SliceKind::Record { index } => {
                let Track::Engine(e) = s.track else { continue };
                let r = &staged.steps[e as usize][index].record;
                (category(r.opcode().0 as usize), r.opcode().to_string())
            }
            SliceKind::Wait { .. } => (WAIT, "wait".to_string()),
            SliceKind::Dma { .. } => (DMA, "DMA".to_string()),
        };
        fill(&mut img, x0, y, x1 - x0, ROW_H - 7, colour);
        let room = (x1 - x0).saturating_sub(4) / 8;
        if room as usize >= label.len().min(4) {
            let text: String = label.chars().take(room as usize).collect();
            text_at(&mut img, x0 + 2, y + (ROW_H - 7 - 8) / 2, &text);
        }
    }
    for s in t.slices() {
        if let SliceKind::Wait {
            released_by: Some(b),
            ..
        } = s.kind
            && let Some(from) = t.slices().get(b)
        {
            let yc = |track| row_of(track) * ROW_H + ROW_H / 2;
            let (x0, y0) = (x_of(from.end()).saturating_sub(1), yc(from.track));
            let (x1, y1) = (x_of(s.end()).saturating_sub(1), yc(s.track));
            line(&mut img, (x0, y0), (x1, y1), FLOW);
            line(&mut img, (x0 + 1, y0), (x1 + 1, y1), FLOW);
            fill(
                &mut img,
                x0.saturating_sub(1),
                y0.saturating_sub(1),
                3,
                3,
                FLOW,
            );
            fill(
                &mut img,
                x1.saturating_sub(2),
                y1.saturating_sub(2),
                5,
                5,
                FLOW,
            );
        }
    }
    // The time axis: 0, the middle and the end, in cycles.
    let y = rows.len() as u32 * ROW_H + 6;
    for c in [0, end / 2, end] {
        let label = format!("{c}");
        let x = x_of(c).min(width.saturating_sub(label.len() as u32 * 8 + 2));
        fill(&mut img, x_of(c).min(width - 1), y - 6, 1, 4, TEXT);
        text_at(&mut img, x, y, &label);
    }
    text_at(&mut img, 4, y, "cycles (TL-1)");
    img
}

fn fill(img: &mut RgbImage, x: u32, y: u32, w: u32, h: u32, c: Rgb<u8>) {
    for py in y..(y + h).min(img.height()) {
        for px in x..(x + w).min(img.width()) {
            img.put_pixel(px, py, c);
        }
    }
}

/// A straight line (Bresenham), clipped to the image.
fn line(img: &mut RgbImage, (x0, y0): (u32, u32), (x1, y1): (u32, u32), c: Rgb<u8>) {
    let (mut x, mut y) = (x0 as i64, y0 as i64);
    let (x1, y1) = (x1 as i64, y1 as i64);
    let (dx, dy) = ((x1 - x).abs(), -(y1 - y).abs());
    let (sx, sy) = (if x < x1 { 1 } else { -1 }, if y < y1 { 1 } else { -1 });
    let mut err = dx + dy;
    loop {
        if (0..img.width() as i64).contains(&x) && (0..img.height() as i64).contains(&y) {
            img.put_pixel(x as u32, y as u32, c);
        }
        if x == x1 && y == y1 {
            break;
        }
        let e2 = 2 * err;
        if e2 >= dy {
            err += dy;
            x += sx;
        }
        if e2 <= dx {
            err += dx;
            y += sy;
        }
    }
}
