//! The per-record parameter block shared with shaders/pool.wgsl.

use super::types::{EncodeCx, region_base};
use crate::device::convert::OutType;
use crate::device::ops::KernelOp;
use crate::device::ops::Op;
use crate::device::ops::pool::{Func, PoolOp, Side};
use crate::limits::Arch;
use bytemuck::{Pod, Zeroable};
use std::mem::{offset_of, size_of};

pub use super::tuning::rows_max_chunks;

/// `struct Params` of shaders/pool.wgsl, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct PoolParams {
    /// src num per dim.
    pub src_num: [u32; 4],
    /// src step per dim, in elements.
    pub src_step: [i32; 4],
    /// dst num per dim.
    pub dst_num: [u32; 4],
    /// dst step per dim, in elements.
    pub dst_step: [i32; 4],
    /// Byte offset in the memory buffer of lane 0's element index 0 (src).
    pub src_base: u32,
    /// Same for dst.
    pub dst_base: u32,
    /// Bytes between lanes (src region's active bytes per partition).
    pub src_lane_stride: u32,
    /// Same for dst.
    pub dst_lane_stride: u32,
    /// Lanes.
    pub channels: u32,
    /// Outputs per lane.
    pub outputs: u32,
    /// Dims 0..win_dims form a window.
    pub win_dims: u32,
    /// [`OP_MAX`], [`OP_AVG`] or [`OP_SELECT`].
    pub op: u32,
    /// DTYPE byte of the input.
    pub in_dtype: u32,
    /// DTYPE byte of the output.
    pub out_dtype: u32,
    /// f32 bits of pool_scale.
    pub scale_bits: u32,
    /// Workgroups along x of the 2-D dispatch.
    pub groups_x: u32,
    /// Invocations per lane: `ceil(outputs / SEGMENT)`.
    pub segments: u32,
    /// `pool_rows`: how it stores a run of 4 outputs (the host's copy of
    /// `DST_RUN`): see [`DstRun`].
    pub dst_run: u32,
    /// `pool_rows`: runs of 4 outputs per invocation (see [`rows_chunks`]).
    pub chunks: u32,
    /// 1 for `pool_rows`, 0 for `pool` (the host's choice; the shader ignores it).
    pub entry: u32,
}

// The WGSL struct's layout: four vec4s, then sixteen u32s.
const _: () = assert!(size_of::<PoolParams>() == 128);
const _: () = assert!(offset_of!(PoolParams, dst_step) == 48);
const _: () = assert!(offset_of!(PoolParams, src_base) == 64);
const _: () = assert!(offset_of!(PoolParams, groups_x) == 108);
const _: () = assert!(offset_of!(PoolParams, segments) == 112);

/// Pool MAX.
pub const OP_MAX: u32 = 0;
/// Pool AVG.
pub const OP_AVG: u32 = 1;
/// MaxPoolSelect.
pub const OP_SELECT: u32 = 2;

/// Consecutive outputs one invocation folds (`SEGMENT` in the shader).
pub const SEGMENT: u32 = 4;
/// Most window rows `pool_rows` unrolls (each distinct count is a pipeline).
pub const MAX_UNROLLED_ROWS: u32 = 2;

fn side(s: &Side, arch: Arch) -> (u32, u32) {
    let active = s.region.active_bytes(arch);
    (
        region_base(s.region, arch) + s.partition * active + s.offset,
        active,
    )
}

impl PoolParams {
    /// The parameters of one op (`groups_x` is filled in by the dispatcher);
    /// `pool_rows` folds up to `max_chunks` runs per invocation (see
    /// [`rows_max_chunks`]). Validation bounds every count (EC-10: at most
    /// 2^24 elements per lane) and step (i16), so the narrowing casts are exact.
    pub fn new(op: &PoolOp, arch: Arch, max_chunks: u32) -> PoolParams {
        let (src_base, src_lane_stride) = side(op.src(), arch);
        let (dst_base, dst_lane_stride) = side(op.dst(), arch);
        let (op_code, scale) = match op.func() {
            Func::Max => (OP_MAX, 1.0f32),
            Func::Avg { scale } => (OP_AVG, scale),
            Func::Select => (OP_SELECT, 1.0),
        };
        let rows = rows_path(op);
        let chunks = if rows { rows_chunks(op, max_chunks) } else { 1 };
        let per_invocation = if rows { 4 * chunks } else { SEGMENT };
        PoolParams {
            src_num: op.src().num.map(|n| n as u32),
            src_step: op.src().step.map(|s| s as i32),
            dst_num: op.dst().num.map(|n| n as u32),
            dst_step: op.dst().step.map(|s| s as i32),
            src_base,
            dst_base,
            src_lane_stride,
            dst_lane_stride,
            channels: op.channels(),
            outputs: op.num() as u32,
            win_dims: op.window_dims() as u32,
            op: op_code,
            in_dtype: op.in_ty().dtype().0 as u32,
            out_dtype: op.out_ty().dtype().0 as u32,
            scale_bits: scale.to_bits(),
            groups_x: 0,
            segments: (op.num() as u32).div_ceil(per_invocation),
            dst_run: if rows { DstRun::of(op) as u32 } else { 0 },
            chunks,
            entry: rows as u32,
        }
    }

    /// Invocations the record needs: one per (lane, segment of outputs).
    pub fn invocations(&self) -> u64 {
        self.channels as u64 * self.segments as u64
    }

    /// The pipeline variant this record needs (see [`Variant`]).
    pub fn variant(&self) -> Variant {
        Variant {
            op: self.op,
            in_dtype: self.in_dtype,
            out_dtype: self.out_dtype,
            rows: self.entry == 1,
            dst_run: self.dst_run,
            win_rows: if self.entry == 1 {
                self.unrolled_rows()
            } else {
                0
            },
        }
    }

    /// `WIN_ROWS` for `pool_rows`: the window's rows when they lie along
    /// dim 1 alone and number at most [`MAX_UNROLLED_ROWS`], else 0.
    fn unrolled_rows(&self) -> u32 {
        let extent = |d: usize| {
            if d < self.win_dims as usize {
                self.src_num[d]
            } else {
                1
            }
        };
        if extent(2) == 1 && extent(3) == 1 && extent(1) <= MAX_UNROLLED_ROWS {
            extent(1)
        } else {
            0
        }
    }
}

/// A pipeline variant of the Pool kernel: its entry point and the WGSL
/// override constants `OP`, `IN_DTYPE`, `OUT_DTYPE`, `DST_RUN` and `WIN_ROWS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    /// [`OP_MAX`], [`OP_AVG`] or [`OP_SELECT`].
    pub op: u32,
    /// DTYPE byte of the input.
    pub in_dtype: u32,
    /// DTYPE byte of the output.
    pub out_dtype: u32,
    /// The `pool_rows` entry point instead of `pool`.
    pub rows: bool,
    /// How `pool_rows` stores a run ([`DstRun`] as `DST_RUN`): the other
    /// store paths are compiled out, which software rasterizers that run
    /// both sides of every branch (llvmpipe) otherwise pay for.
    pub dst_run: u32,
    /// `pool_rows`' window rows as a constant (`WIN_ROWS`), so its row loop
    /// unrolls; 0 when the counts come from the parameters.
    pub win_rows: u32,
}

impl Variant {
    /// The WGSL entry point.
    pub fn entry_point(&self) -> &'static str {
        if self.rows { "pool_rows" } else { "pool" }
    }
}

/// Element steps of the dims that are walked (num > 1), except `skip`.
fn walked_steps(num: [u64; 4], step: [i64; 4], skip: usize) -> impl Iterator<Item = i64> {
    (0..4)
        .filter(move |&d| d != skip && num[d] > 1)
        .map(move |d| step[d])
}

/// Whether `pool_rows` can run `op`: 4- or 2-byte input; windows two
/// elements wide with x step 1; the first dim outside the window steps by 2
/// (adjacent windows) and holds a multiple of [`SEGMENT`] outputs, so a
/// run's window rows are 8 consecutive elements; every row starts 16-byte
/// aligned.
pub fn rows_path(op: &PoolOp) -> bool {
    let s = op.src();
    let k = op.window_dims();
    let size = op.in_ty().size() as i64;
    matches!(size, 2 | 4)
        && k < 4
        && s.num[0] == 2
        && s.step[0] == 1
        && s.step[k] == 2
        && s.num[k].is_multiple_of(SEGMENT as u64)
        && s.offset.is_multiple_of(16)
        && walked_steps(s.num, s.step, 0)
            .zip((1..4).filter(|&d| s.num[d] > 1))
            .all(|(st, d)| d == k || (st * size) % 16 == 0)
}

/// Whether `op` can run as this adapter's kernel within its loop budget
/// (`tuning::loop_budget`), its loop iterations per invocation kept to 15/16 of
/// it (llvmpipe counts a few more than the shader shows); the executor runs
/// an op that cannot on the CPU reference. Two kernels' loops grow with the
/// record: Pool folds each window in one loop (`pool`: up to [`SEGMENT`]
/// outputs, each `period` + 2 iterations; `pool_rows`: per chunk of 4
/// outputs one loop step per window row pair and per row, at most
/// 1.5·`period` + 4), and CrossLaneReduce's All axis folds all nac·M
/// elements in one invocation in EC-54's order. The others loop at most
/// over one partition's elements split 64 ways, or over 128 lanes.
pub fn fits_loop_budget(op: &Op, cx: &EncodeCx) -> bool {
    let Some(budget) = cx.loop_budget else {
        return true;
    };
    let iterations = match op {
        // The entry point and chunks `PoolParams::new` picks.
        Op::Pool(p) if rows_path(p) => {
            rows_chunks(p, cx.rows_max_chunks) as u64 * (3 * p.period() / 2 + 4) + 2
        }
        Op::Pool(p) => (SEGMENT as u64).min(p.num()) * (p.period() + 2) + 1,
        Op::CrossLane(c) if c.all_axis() => c.channels() as u64 * (c.count() + 1),
        _ => return true,
    };
    iterations <= budget - budget / 16
}

/// Runs of 4 outputs one `pool_rows` invocation folds: the largest of
/// `max` (4, 2 or 1), 2, 1 whose outputs divide the row (dim k), so a run
/// never crosses a row's end.
pub fn rows_chunks(op: &PoolOp, max: u32) -> u32 {
    let row = op.src().num[op.window_dims()];
    [max, 2, 1]
        .into_iter()
        .find(|&c| c <= max && row.is_multiple_of(4 * c as u64))
        .unwrap_or(1)
}

/// How `pool_rows` stores a run of 4 consecutive outputs (`DST_RUN`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DstRun {
    /// One output at a time, along the dst walk.
    EachOutput = 0,
    /// One aligned vec4 of f32 bits ([`dst_vec4`]).
    Vec4 = 1,
    /// The whole aligned words its 1- or 2-byte outputs fill ([`dst_words`]).
    Words = 2,
}

impl DstRun {
    /// The store `op`'s runs take.
    pub fn of(op: &PoolOp) -> DstRun {
        if dst_vec4(op) {
            DstRun::Vec4
        } else if dst_words(op) {
            DstRun::Words
        } else {
            DstRun::EachOutput
        }
    }
}

/// Whether every run of 4 consecutive dst outputs (from a multiple of 4) is
/// contiguous and starts `align`-byte aligned: x step 1, x count a multiple
/// of 4, an aligned start, other walked steps multiples of `align` bytes.
fn dst_runs_aligned(op: &PoolOp, align: i64) -> bool {
    let d = op.dst();
    let size = op.out_ty().size() as i64;
    d.step[0] == 1
        && d.num[0].is_multiple_of(4)
        && (d.offset as i64) % align == 0
        && walked_steps(d.num, d.step, 0).all(|st| (st * size) % align == 0)
}

/// Whether a run's 4 outputs fill whole words: 1- or 2-byte outputs, runs
/// 4-byte aligned.
pub fn dst_words(op: &PoolOp) -> bool {
    matches!(op.out_ty().size(), 1 | 2) && dst_runs_aligned(op, 4)
}

/// Whether a run's 4 outputs can be stored as one vec4 of f32 bits: an
/// fp32/fp32r Pool output (MaxPoolSelect writes indices, the integer
/// outputs convert), runs 16-byte aligned.
pub fn dst_vec4(op: &PoolOp) -> bool {
    op.func() != Func::Select
        && matches!(op.out_ty(), OutType::F32 | OutType::F32r)
        && dst_runs_aligned(op, 16)
}
