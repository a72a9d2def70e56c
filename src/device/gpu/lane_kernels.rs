//! The GPU kernels of CrossLaneReduce (`shaders/cross_lane.wgsl`),
//! NonzeroWithCount (`shaders/nonzero.wgsl`) and GetSequenceBounds
//! (`shaders/seq_bounds.wgsl`), each composed after the shared files and
//! `shaders/lane_walk.wgsl` (the walk layout, [`WalkParams`]). The fold, the
//! dtypes and the zero/equality tests are override constants, so each
//! variant compiles once; each op's `GpuKernel::variants` lists every set
//! its encoder produces.

use super::shaders::program;
use super::types::{
    Dispatch, EncodeCx, GpuKernel, PipelineKey, Shader, grid, in_order, region_base,
};
use crate::device::ops::KernelOp;
use crate::device::ops::cross_lane::{ClrOp, Fold};
use crate::device::ops::nonzero::NzOp;
use crate::device::ops::pool::Side;
use crate::device::ops::seq_bounds::SbOp;
use crate::limits::Arch;
use bytemuck::{Pod, Zeroable};
use std::mem::size_of;

/// CrossLaneReduce records.
pub(crate) const CROSS_LANE: Shader = program!(
    "cross_lane.wgsl",
    Memory,
    [
        "memory.wgsl",
        "convert.wgsl",
        "arith.wgsl",
        "walk.wgsl",
        "lane_walk.wgsl",
        "cross_lane.wgsl"
    ]
);
/// NonzeroWithCount records.
pub(crate) const NONZERO: Shader = program!(
    "nonzero.wgsl",
    Memory,
    [
        "memory.wgsl",
        "convert.wgsl",
        "walk.wgsl",
        "lane_walk.wgsl",
        "nonzero.wgsl"
    ]
);
/// GetSequenceBounds records.
pub(crate) const SEQ_BOUNDS: Shader = program!(
    "seq_bounds.wgsl",
    Memory,
    [
        "memory.wgsl",
        "convert.wgsl",
        "walk.wgsl",
        "lane_walk.wgsl",
        "seq_bounds.wgsl"
    ]
);

/// `struct Walk` of shaders/lane_walk.wgsl: one operand's walk.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct WalkParams {
    /// num per dim (x first).
    pub num: [u32; 4],
    /// step per dim, in elements.
    pub step: [i32; 4],
    /// Byte offset in the memory buffer of lane 0's element index 0.
    pub base: u32,
    /// Bytes between lanes.
    pub lane_stride: u32,
    /// Element bytes.
    pub size: u32,
    /// Padding to 16 bytes.
    pub pad: u32,
}

/// `struct Params` of shaders/cross_lane.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct ClrParams {
    /// The src walk (lane p at `base + p · lane_stride`).
    pub src: WalkParams,
    /// The dst walk (one partition).
    pub dst: WalkParams,
    /// Lanes folded.
    pub channels: u32,
    /// M, elements per lane.
    pub count: u32,
    /// Workgroups along x of the 2-D dispatch.
    pub groups_x: u32,
    /// AVERAGE's scale (f32 bits, flushed).
    pub scale: u32,
    /// The dst dtype byte.
    pub out_dtype: u32,
    /// Padding to 16 bytes.
    pub pad: [u32; 3],
}

/// `struct Params` of shaders/nonzero.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct NzParams {
    /// The src walk.
    pub src: WalkParams,
    /// The dst walk.
    pub dst: WalkParams,
    /// The first processed lane (EC-56); the others follow every 16.
    pub first_lane: u32,
    /// T.
    pub count: u32,
    /// index_offset's bits.
    pub index_offset: u32,
    /// padding_val's bits.
    pub padding: u32,
}

/// `struct Params` of shaders/seq_bounds.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct SbParams {
    /// The src walk.
    pub src: WalkParams,
    /// The dst walk.
    pub dst: WalkParams,
    /// n.
    pub count: u32,
    /// Padding to 16 bytes.
    pub pad: [u32; 3],
}

const _: () = assert!(size_of::<WalkParams>() == 48);
const _: () = assert!(size_of::<ClrParams>() == 128);
const _: () = assert!(size_of::<NzParams>() == 112);
const _: () = assert!(size_of::<SbParams>() == 112);
const _: () = assert!(size_of::<ClrParams>() as u64 <= super::types::PARAMS_BYTES);

fn walk(s: &Side, size: usize, arch: Arch) -> WalkParams {
    let active = s.region.active_bytes(arch);
    // Validation bounds every count (2^24 elements per lane) and step (i16).
    WalkParams {
        num: s.num.map(|n| n as u32),
        step: s.step.map(|v| v as i32),
        base: region_base(s.region, arch) + s.partition * active + s.offset,
        lane_stride: active,
        size: size as u32,
        pad: 0,
    }
}

fn fold_code(f: Fold) -> u32 {
    match f {
        Fold::AddF32 => 0,
        Fold::Average { .. } => 1,
        Fold::Max => 2,
        Fold::AddInt => 3,
        Fold::Or => 4,
        Fold::And => 5,
        Fold::Xor => 6,
    }
}

fn key(
    shader: Shader,
    entry: &'static str,
    mut constants: Vec<(&'static str, u32)>,
) -> PipelineKey {
    constants.sort();
    PipelineKey {
        shader,
        entry,
        constants,
    }
}

fn clr_constants(
    fold: u32,
    in_d: u32,
    all: bool,
    add_by_bits: bool,
    quads: u32,
) -> Vec<(&'static str, u32)> {
    let mut c = vec![("FOLD", fold), ("IN_DTYPE", in_d), ("ALL_AXIS", all as u32)];
    if fold <= 1 {
        c.push(("ADD_BY_BITS", add_by_bits as u32));
    }
    if quads > 0 {
        c.push(("QUADS", quads));
    }
    c
}

/// The vec4s per lane a Partitions-axis fold's invocation takes (`QUADS`):
/// the largest of `max` and 1 that fits, or 0 (one position per
/// invocation). `q` fits when the src elements are 4 bytes along
/// 16-byte-aligned rows of whole vec4s in every partition, and the src and
/// dst walks both go 4·`q` positions at a time along their rows.
fn clr_quads(src: &WalkParams, dst: &WalkParams, max: u32) -> u32 {
    let aligned = src.size == 4
        && src.base.is_multiple_of(16)
        && src.lane_stride.is_multiple_of(16)
        && (1..4).all(|i| src.num[i] <= 1 || (src.step[i] * 4).rem_euclid(16) == 0);
    let rows = |w: &WalkParams, n: u32| w.num[0].is_multiple_of(n) && w.step[0] == 1;
    // The count is the product of src.num, so src rows of whole runs make
    // a count of whole runs.
    let fits = |q: u32| rows(src, 4 * q) && rows(dst, 4 * q);
    match [max, 1].into_iter().find(|&q| q >= 1 && fits(q)) {
        Some(q) if aligned => q,
        _ => 0,
    }
}

/// A CrossLaneReduce op as one dispatch of `cross_lane.wgsl`: one
/// invocation per walk position or per 4·`QUADS` of them (Partitions, see
/// [`clr_quads`]), or one invocation (All).
pub(crate) fn cross_lane(op: &ClrOp, cx: &EncodeCx) -> Dispatch {
    let [s, d] = op.sizes();
    let scale = match op.fold() {
        Fold::Average { scale } => scale,
        _ => 0,
    };
    let (src, dst) = (walk(op.src(), s, cx.arch), walk(op.dst(), d, cx.arch));
    let quads = match op.all_axis() {
        true => 0,
        false => clr_quads(&src, &dst, cx.clr_quads_max),
    };
    let invocations = match (op.all_axis(), quads) {
        (true, _) => 1,
        (false, 0) => op.count(),
        (false, q) => op.count() / (4 * q as u64),
    };
    let g = grid(invocations, cx.max_x);
    let p = ClrParams {
        src,
        dst,
        channels: op.channels(),
        count: op.count() as u32,
        groups_x: g.0,
        scale,
        out_dtype: op.out_dtype().0 as u32,
        pad: [0; 3],
    };
    let constants = clr_constants(
        fold_code(op.fold()),
        op.in_dtype().0 as u32,
        op.all_axis(),
        cx.add_by_bits,
        quads,
    );
    Dispatch {
        key: key(CROSS_LANE, "cross_lane", constants),
        params: bytemuck::bytes_of(&p).to_vec(),
        grid: g,
    }
}

/// Whether a walk visits consecutive elements (position k is element k).
fn dense(w: &WalkParams) -> bool {
    in_order(w.num, w.step)
}

/// The most positions `nonzero.wgsl`'s DENSE form takes: its workgroup
/// memory holds 32 mask words of 32 positions for each of 64 invocations
/// (`masks`). A dense src of 4-byte words in one partition has at most
/// 65,536 (MARIANA's 256 KiB), so only a walk that breaks another condition
/// goes past it.
pub(crate) const DENSE_MAX_COUNT: u32 = 64 * 32 * 32;

/// Whether NonzeroWithCount can take `nonzero.wgsl`'s DENSE form: both
/// walks dense, the src 16-byte aligned in every lane, T a multiple of 4
/// and at most [`DENSE_MAX_COUNT`].
fn nonzero_dense(p: &NzParams) -> bool {
    dense(&p.src)
        && dense(&p.dst)
        && p.count.is_multiple_of(4)
        && p.count <= DENSE_MAX_COUNT
        && p.src.base.is_multiple_of(16)
        && p.src.lane_stride.is_multiple_of(16)
}

/// A NonzeroWithCount op as one dispatch of `nonzero.wgsl`: a workgroup per
/// processed lane (EC-56); a record with none gets an empty grid (nothing
/// is read or written).
pub(crate) fn nonzero(op: &NzOp, cx: &EncodeCx) -> Dispatch {
    let lanes: Vec<u32> = op.lanes().collect();
    let p = NzParams {
        src: walk(op.src(), 4, cx.arch),
        dst: walk(op.dst(), 4, cx.arch),
        first_lane: lanes.first().copied().unwrap_or(0),
        count: op.count() as u32,
        index_offset: op.index_offset(),
        padding: op.padding(),
    };
    let mut constants = vec![("FLOAT_IN", op.float() as u32)];
    if nonzero_dense(&p) {
        constants.push(("DENSE", 1));
    }
    let groups = lanes.len() as u32;
    Dispatch {
        key: key(NONZERO, "nonzero", constants),
        params: bytemuck::bytes_of(&p).to_vec(),
        grid: (groups, 1),
    }
}

/// A GetSequenceBounds op as one dispatch of `seq_bounds.wgsl` (one workgroup).
pub(crate) fn seq_bounds(op: &SbOp, cx: &EncodeCx) -> Dispatch {
    let p = SbParams {
        src: walk(op.src(), 4, cx.arch),
        dst: walk(op.dst(), 4, cx.arch),
        count: op.count() as u32,
        pad: [0; 3],
    };
    let constants = vec![
        ("FLOAT_IN", op.float_in() as u32),
        ("FLOAT_OUT", op.float_out() as u32),
    ];
    Dispatch {
        key: key(SEQ_BOUNDS, "seq_bounds", constants),
        params: bytemuck::bytes_of(&p).to_vec(),
        grid: (1, 1),
    }
}

/// Every pipeline [`cross_lane`] can ask for.
fn cross_lane_variants() -> Vec<PipelineKey> {
    const FLOATS: [u32; 3] = [6, 7, 10];
    const INTS: [u32; 6] = [2, 3, 4, 5, 8, 9];
    let mut keys = Vec::new();
    for all in [false, true] {
        for fold in 0..=6 {
            let ins: Vec<u32> = match fold {
                0 => FLOATS.to_vec(),
                1 | 2 => FLOATS.iter().chain(&INTS).copied().collect(),
                _ => INTS.to_vec(),
            };
            let by_bits: &[bool] = if fold <= 1 { &[false, true] } else { &[false] };
            for &i in &ins {
                for &b in by_bits {
                    // QUADS: Partitions axis, 4-byte in dtypes (int32, uint32,
                    // fp32); `clr_quads_max` is 1 or 4.
                    let quads: &[u32] = if !all && (8..=10).contains(&i) {
                        &[0, 1, 4]
                    } else {
                        &[0]
                    };
                    for &v in quads {
                        keys.push(key(
                            CROSS_LANE,
                            "cross_lane",
                            clr_constants(fold, i, all, b, v),
                        ));
                    }
                }
            }
        }
    }
    keys
}

impl GpuKernel for ClrOp {
    const SHADERS: &'static [Shader] = &[CROSS_LANE];
    fn encode(&self, cx: &EncodeCx) -> Dispatch {
        cross_lane(self, cx)
    }
    fn variants() -> Vec<PipelineKey> {
        cross_lane_variants()
    }
}

impl GpuKernel for NzOp {
    const SHADERS: &'static [Shader] = &[NONZERO];
    fn encode(&self, cx: &EncodeCx) -> Dispatch {
        nonzero(self, cx)
    }
    fn variants() -> Vec<PipelineKey> {
        [0, 1]
            .into_iter()
            .flat_map(|f| {
                [
                    key(NONZERO, "nonzero", vec![("FLOAT_IN", f)]),
                    key(NONZERO, "nonzero", vec![("DENSE", 1), ("FLOAT_IN", f)]),
                ]
            })
            .collect()
    }
}

impl GpuKernel for SbOp {
    const SHADERS: &'static [Shader] = &[SEQ_BOUNDS];
    fn encode(&self, cx: &EncodeCx) -> Dispatch {
        seq_bounds(self, cx)
    }
    fn variants() -> Vec<PipelineKey> {
        let pair = |f, o| {
            key(
                SEQ_BOUNDS,
                "seq_bounds",
                vec![("FLOAT_IN", f), ("FLOAT_OUT", o)],
            )
        };
        vec![pair(0, 0), pair(0, 1), pair(1, 0), pair(1, 1)]
    }
}
