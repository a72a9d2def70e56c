//! The GPU kernel of DMAs between on-chip places, or between one and held
//! DRAM (`shaders/dma.wgsl`): a [`ChipDma`] as
//! one dispatch, one invocation per element (converting) or per aligned
//! piece of an element (copying bytes). Conversion is the one override
//! constant, so the family has two pipelines.

use super::shaders::program;
use super::types::{Dispatch, EncodeCx, PipelineKey, Shader, grid, memory_bytes, region_base};
use crate::device::ops::{ChipDma, ChipWalk, Place};
use bytemuck::{Pod, Zeroable};

/// `struct DmaWalk` of shaders/dma.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct DmaWalkParams {
    /// Address of element (0, 0) from the region's base.
    pub start: u32,
    /// Steps in bytes, two's complement.
    pub step: [u32; 2],
    /// Elements along dim 0.
    pub num0: u32,
    /// The region's first byte in the memory buffer.
    pub base: u32,
    /// The region's partition shift.
    pub shift: u32,
    /// Bytes per partition.
    pub active: u32,
    /// Padding to 16 bytes.
    pub pad: u32,
}

/// `struct Params` of shaders/dma.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct DmaParams {
    /// The source walk.
    pub src: DmaWalkParams,
    /// The destination walk.
    pub dst: DmaWalkParams,
    /// Invocations with work.
    pub total: u32,
    /// Pieces per element.
    pub units: u32,
    /// Bytes per piece.
    pub unit: u32,
    /// Workgroups along x of the 2-D dispatch.
    pub groups_x: u32,
    /// The src dtype byte (converting).
    pub in_dtype: u32,
    /// The dst dtype byte (converting).
    pub out_dtype: u32,
    /// Padding to 16 bytes.
    pub pad: [u32; 2],
}

/// DMAs between on-chip places (the shared memory and conversion files only).
pub(crate) const SHADER: Shader = program!(
    "dma.wgsl",
    Memory,
    ["memory.wgsl", "convert.wgsl", "dma.wgsl"]
);

fn key(convert: bool, rows16: bool) -> PipelineKey {
    PipelineKey {
        shader: SHADER,
        entry: "dma",
        constants: vec![("CONVERT", convert as u32), ("ROWS16", rows16 as u32)],
    }
}

/// The three pipelines of the family: converting, copying pieces of
/// elements, copying 16-byte pieces of rows.
pub(crate) fn variants() -> Vec<PipelineKey> {
    vec![key(false, false), key(true, false), key(false, true)]
}

/// Pieces of 16 bytes per row when `dma` copies rows of adjacent bytes of
/// the same shape on both sides, every row start 16-byte aligned and rows
/// whole pieces long (`ROWS16` in dma.wgsl).
fn rows16(dma: &ChipDma) -> Option<u64> {
    let (s, d) = (&dma.src, &dma.dst);
    let row = s.num[0] * s.elem;
    let aligned = |w: &ChipWalk| {
        w.step[0] == w.elem as i64
            && w.start.is_multiple_of(16)
            && (w.num[1] <= 1 || w.step[1].unsigned_abs().is_multiple_of(16))
    };
    (dma.convert.is_none()
        && s.num == d.num
        && s.elem == d.elem
        && row.is_multiple_of(16)
        && aligned(s)
        && aligned(d))
    .then_some(row / 16)
}

fn walk(w: &ChipWalk, cx: &EncodeCx) -> Option<DmaWalkParams> {
    let step = |s: i64| i32::try_from(s).ok().map(|s| s as u32);
    let (base, shift, active) = match w.place {
        Place::Chip(r) => (
            region_base(r, cx.arch),
            r.partition_shift(),
            r.active_bytes(cx.arch),
        ),
        // One partition as long as the window may be: every address of
        // held DRAM is below 2^31 (MAX_HELD_DRAM), so `a >> 31` is 0.
        Place::HeldDram => (u32::try_from(memory_bytes(cx.arch)).ok()?, 31, 0),
    };
    Some(DmaWalkParams {
        start: u32::try_from(w.start).ok()?,
        step: [step(w.step[0])?, step(w.step[1])?],
        num0: u32::try_from(w.num[0]).ok()?.max(1),
        base,
        shift,
        active,
        pad: 0,
    })
}

/// `dma` as one dispatch of `dma.wgsl`, or `None` when the kernel cannot
/// run it: an element the shader's loads cannot reach whole (a converted
/// element not aligned to its size, up to 4), or numbers past 32 bits.
/// The caller has checked [`ChipDma::runs_at_once`].
pub(crate) fn dispatch(dma: &ChipDma, cx: &EncodeCx) -> Option<Dispatch> {
    let (src, dst) = (walk(&dma.src, cx)?, walk(&dma.dst, cx)?);
    let align = [dma.src.alignment(), dma.dst.alignment()];
    let pieces = rows16(dma);
    let (units, unit, dtypes) = match (pieces, dma.convert) {
        (Some(n), _) => (n, 16, (0, 0)),
        (None, Some((i, o))) => {
            if align[0] < dma.src.elem.min(4) || align[1] < dma.dst.elem.min(4) {
                return None;
            }
            (1, 0, (i.dtype().0 as u32, o.dtype().0 as u32))
        }
        (None, None) => {
            // The largest piece that divides the element and every address.
            let unit = [4, 2]
                .into_iter()
                .find(|&u| dma.src.elem.is_multiple_of(u) && align[0].min(align[1]) >= u)
                .unwrap_or(1);
            (dma.src.elem / unit, unit as u32, (0, 0))
        }
    };
    // Invocations: a piece of a row each with ROWS16, else a piece of an element.
    let work = match pieces {
        Some(n) => dma.src.num[1].checked_mul(n)?,
        None => dma.elements().checked_mul(units)?,
    };
    let total = u32::try_from(work).ok()?;
    let units = u32::try_from(units).ok()?;
    let g = grid(total as u64, cx.max_x);
    let p = DmaParams {
        src,
        dst,
        total,
        units,
        unit,
        groups_x: g.0,
        in_dtype: dtypes.0,
        out_dtype: dtypes.1,
        pad: [0; 2],
    };
    Some(Dispatch {
        key: key(dma.convert.is_some(), pieces.is_some()),
        params: bytemuck::bytes_of(&p).to_vec(),
        grid: g,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::convert::{InType, OutType};
    use crate::isa::tensor::Region;

    fn w(start: u64, step: [i64; 2], num: [u64; 2]) -> ChipWalk {
        ChipWalk {
            place: Place::Chip(Region::Sbuf),
            start,
            step,
            num,
            elem: 4,
        }
    }

    fn copy(src: ChipWalk, dst: ChipWalk) -> ChipDma {
        ChipDma {
            src,
            dst,
            convert: None,
        }
    }

    #[test]
    fn rows_of_whole_aligned_16_byte_pieces_move_as_vec4s() {
        let rows = w(0, [4, 1 << 18], [16, 128]);
        // 64-byte rows: four pieces each, whatever the other side's step.
        assert_eq!(rows16(&copy(rows, w(0x40, [4, 64], [16, 128]))), Some(4));
        // A row start 4 bytes off, a row of 20 bytes, rows 8 bytes apart.
        assert_eq!(rows16(&copy(rows, w(4, [4, 64], [16, 128]))), None);
        assert_eq!(
            rows16(&copy(w(0, [4, 32], [5, 2]), w(0, [4, 32], [5, 2]))),
            None
        );
        assert_eq!(rows16(&copy(rows, w(0, [4, 8], [16, 128]))), None);
        // Elements apart, or another shape, or a conversion.
        assert_eq!(rows16(&copy(rows, w(0, [8, 1024], [16, 128]))), None);
        assert_eq!(rows16(&copy(rows, w(0, [4, 128], [32, 64]))), None);
        let mut convert = copy(rows, rows);
        convert.convert = Some((InType::F32, OutType::F32));
        assert_eq!(rows16(&convert), None);
        // One row: its step does not matter.
        assert_eq!(
            rows16(&copy(w(16, [4, 3], [8, 1]), w(32, [4, 0], [8, 1]))),
            Some(2)
        );
    }
}
