//! The elementwise kernel families on the GPU — Copy/Cast, Iota,
//! Tensor-Tensor — encoded as dispatches of `shaders/elementwise.wgsl`
//! composed with the family's file (`cast.wgsl`, `iota.wgsl`,
//! `tensor_tensor.wgsl`). One parameter block ([`ElemParams`]) serves all
//! three; the family's dtypes and op are override constants, so each variant
//! compiles once.

use super::shaders::program;
use super::types::{
    Dispatch, EncodeCx, GpuKernel, PipelineKey, Shader, grid, in_order, region_base,
};
use crate::device::ops::KernelOp;
use crate::device::ops::copy::{Conversion, CopyOp};
use crate::device::ops::iota::IotaOp;
use crate::device::ops::pool::Side;
use crate::device::ops::tensor_tensor::{TtOp, TtPath};
use crate::limits::Arch;
use bytemuck::{Pod, Zeroable};
use std::collections::HashSet;
use std::mem::{offset_of, size_of};
use std::sync::OnceLock;

/// Copy and Cast records.
pub(crate) const CAST: Shader = program!(
    "cast.wgsl",
    Memory,
    [
        "memory.wgsl",
        "convert.wgsl",
        "walk.wgsl",
        "elementwise.wgsl",
        "cast.wgsl"
    ]
);
/// Iota records.
pub(crate) const IOTA: Shader = program!(
    "iota.wgsl",
    Memory,
    [
        "memory.wgsl",
        "convert.wgsl",
        "walk.wgsl",
        "elementwise.wgsl",
        "iota.wgsl"
    ]
);
/// Tensor-Tensor records.
pub(crate) const TENSOR_TENSOR: Shader = program!(
    "tensor_tensor.wgsl",
    Memory,
    [
        "memory.wgsl",
        "convert.wgsl",
        "arith.wgsl",
        "walk.wgsl",
        "elementwise.wgsl",
        "tensor_tensor.wgsl"
    ]
);

/// `struct Operand` of shaders/elementwise.wgsl: one operand's walk.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct OperandParams {
    /// num per dim (x first).
    pub num: [u32; 4],
    /// step per dim, in elements.
    pub step: [i32; 4],
    /// Byte offset in the memory buffer of lane 0's element index 0.
    pub base: u32,
    /// Bytes between lanes (the region's active bytes per partition).
    pub lane_stride: u32,
    /// Element bytes.
    pub size: u32,
    /// Padding to 16 bytes.
    pub pad: u32,
}

/// `struct Params` of shaders/elementwise.wgsl, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct ElemParams {
    /// The dst walk.
    pub dst: OperandParams,
    /// The first source (unused by Iota).
    pub src0: OperandParams,
    /// The second source (Tensor-Tensor only).
    pub src1: OperandParams,
    /// Iota: DATA4D's counts.
    pub gen_num: [u32; 4],
    /// Iota: DATA4D's steps.
    pub gen_step: [i32; 4],
    /// Lanes.
    pub channels: u32,
    /// Walk positions per lane.
    pub count: u32,
    /// Workgroups along x of the 2-D dispatch.
    pub groups_x: u32,
    /// Invocations per lane: `ceil(count / per)`.
    pub segments: u32,
    /// Positions per invocation.
    pub per: u32,
    /// Iota: DATA4D's base.
    pub iota_base: u32,
    /// Iota: channel_multiplier.
    pub iota_mult: u32,
    /// Padding.
    pub pad: u32,
}

// The WGSL layout: three 48-byte operands, two vec4s, eight u32s.
const _: () = assert!(size_of::<OperandParams>() == 48);
const _: () = assert!(size_of::<ElemParams>() == 208);
const _: () = assert!(size_of::<ElemParams>() as u64 <= super::types::PARAMS_BYTES);
const _: () = assert!(offset_of!(ElemParams, src1) == 96);
const _: () = assert!(offset_of!(ElemParams, gen_num) == 144);
const _: () = assert!(offset_of!(ElemParams, channels) == 176);
const _: () = assert!(offset_of!(ElemParams, iota_base) == 196);

/// Positions per invocation on the row path, largest first, up to the
/// adapter's [`super::tuning::row_per_max`].
const ROW_PER: [u32; 5] = [64, 32, 16, 8, 4];
/// Positions per invocation when some walk leaves its row within a segment.
const WALK_PER: u32 = 8;

fn operand(s: &Side, size: usize, arch: Arch) -> OperandParams {
    let active = s.region.active_bytes(arch);
    // Validation bounds every count (2^24 elements per lane) and step
    // (i16), so the narrowing casts are exact.
    OperandParams {
        num: s.num.map(|n| n as u32),
        step: s.step.map(|v| v as i32),
        base: region_base(s.region, arch) + s.partition * active + s.offset,
        lane_stride: active,
        size: size as u32,
        pad: 0,
    }
}

/// Whether a walk over `num`/`step` takes `per` positions at a time along
/// one row with x step 1.
fn rows_of(num: [u32; 4], step: [i32; 4], per: u32) -> bool {
    num[0].is_multiple_of(per) && step[0] == 1
}

/// Fills in the segment size and grid; `walks` are the walks the family
/// uses (dst first). Returns the ROWS override and the grid.
fn finish(p: &mut ElemParams, walks: &[([u32; 4], [i32; 4])], cx: &EncodeCx) -> (bool, (u32, u32)) {
    let rows = ROW_PER
        .into_iter()
        .filter(|&per| per <= cx.row_per_max)
        .find(|&per| walks.iter().all(|&(n, s)| rows_of(n, s, per)));
    (rows.is_some(), segment(p, rows.unwrap_or(WALK_PER), cx))
}

/// Cuts each lane's positions into segments of `per` for one invocation
/// each; the grid.
fn segment(p: &mut ElemParams, per: u32, cx: &EncodeCx) -> (u32, u32) {
    p.per = per;
    p.segments = p.count.div_ceil(per);
    let g = grid(p.channels as u64 * p.segments as u64, cx.max_x);
    p.groups_x = g.0;
    g
}

/// Whether, on the row path, every segment of the dst starts 4-byte aligned
/// and fills whole words: 1- or 2-byte elements, an aligned start, every
/// other walked dim stepping by whole words (`per` · size is a multiple of 4
/// since `per` ≥ 4).
fn dst_words(p: &ElemParams) -> bool {
    matches!(p.dst.size, 1 | 2) && segments_aligned(&p.dst, p.per, 4)
}

/// Whether every `per`-position segment of a row-path walk starts
/// `align`-byte aligned and covers whole `align`-byte units.
fn segments_aligned(o: &OperandParams, per: u32, align: u32) -> bool {
    let a = align as i64;
    o.base.is_multiple_of(align)
        && (per * o.size).is_multiple_of(align)
        && (1..4).all(|i| o.num[i] <= 1 || (o.step[i] as i64 * o.size as i64) % a == 0)
}

/// Whether operand `o` visits its lane's elements in order (position k is
/// element k) from a 16-byte aligned start.
fn dense(o: &OperandParams) -> bool {
    in_order(o.num, o.step) && o.base.is_multiple_of(16) && o.lane_stride.is_multiple_of(16)
}

/// Whether `elementwise_dense` can run `p` over `sources` sources, and
/// whether its dst elements are 2 bytes (else 4).
fn dense_narrow(p: &ElemParams, sources: u32) -> Option<bool> {
    let narrow = match p.dst.size {
        4 => false,
        2 => true,
        _ => return None,
    };
    let srcs = [&p.src0, &p.src1];
    let ok = sources > 0
        && dense(&p.dst)
        && srcs[..sources as usize]
            .iter()
            .all(|s| s.size == 4 && dense(s))
        && p.count.is_multiple_of(DENSE_PER);
    ok.then_some(narrow)
}

fn dispatch(
    shader: Shader,
    p: &ElemParams,
    mut constants: Vec<(&'static str, u32)>,
    rows: bool,
    grid: (u32, u32),
    cx: &EncodeCx,
) -> Dispatch {
    let sources = constants
        .iter()
        .find(|c| c.0 == "SOURCES")
        .map_or(0, |c| c.1);
    if let Some(narrow) = dense_narrow(p, sources) {
        let mut p = *p;
        let g = segment(&mut p, DENSE_PER, cx);
        return Dispatch {
            key: dense_key(shader, &constants, narrow),
            params: bytemuck::bytes_of(&p).to_vec(),
            grid: g,
        };
    }
    constants.push(("ROWS", rows as u32));
    let dst_vec = rows && segments_aligned(&p.dst, p.per, 16);
    constants.push(("WORDS", (rows && !dst_vec && dst_words(p)) as u32));
    constants.push(("DST_VEC", dst_vec as u32));
    let src_vec = |o: &OperandParams| rows && o.size == 4 && segments_aligned(o, p.per, 16);
    constants.push(("SRC0_VEC", (sources > 0 && src_vec(&p.src0)) as u32));
    constants.push(("SRC1_VEC", (sources > 1 && src_vec(&p.src1)) as u32));
    constants.sort();
    Dispatch {
        key: PipelineKey {
            shader,
            entry: "elementwise",
            constants,
        },
        params: bytemuck::bytes_of(p).to_vec(),
        grid,
    }
}

/// A Copy or Cast op as one dispatch of `cast.wgsl`.
pub(crate) fn copy(op: &CopyOp, cx: &EncodeCx) -> Dispatch {
    let c = op.conversion();
    let mut p = ElemParams {
        dst: operand(op.dst(), c.dst_size(), cx.arch),
        src0: operand(op.src(), c.src_size(), cx.arch),
        channels: op.channels(),
        count: op.count() as u32,
        ..Default::default()
    };
    let walks = [(p.dst.num, p.dst.step), (p.src0.num, p.src0.step)];
    let (rows, g) = finish(&mut p, &walks, cx);
    let constants = match c {
        Conversion::Bits { .. } => vec![("CONVERT", 0)],
        Conversion::Convert { from, to } => vec![
            ("CONVERT", 1),
            ("IN_DTYPE", from.dtype().0 as u32),
            ("OUT_DTYPE", to.dtype().0 as u32),
        ],
    };
    let mut constants = constants;
    constants.push(("SOURCES", 1));
    dispatch(CAST, &p, constants, rows, g, cx)
}

/// An Iota op as one dispatch of `iota.wgsl`.
pub(crate) fn iota(op: &IotaOp, cx: &EncodeCx) -> Dispatch {
    let mut p = ElemParams {
        dst: operand(op.dst(), op.out_ty().size(), cx.arch),
        gen_num: op.num().map(|n| n as u32),
        gen_step: op.step().map(|s| s as i32),
        channels: op.channels(),
        count: op.count() as u32,
        iota_base: op.base() as u32,
        iota_mult: op.channel_multiplier() as u32,
        ..Default::default()
    };
    let walks = [(p.dst.num, p.dst.step), (p.gen_num, p.gen_step)];
    let (rows, g) = finish(&mut p, &walks, cx);
    let constants = vec![
        ("SOURCES", 0),
        ("GENERATOR", 1),
        ("OUT_DTYPE", op.out_ty().dtype().0 as u32),
    ];
    dispatch(IOTA, &p, constants, rows, g, cx)
}

/// A Tensor-Tensor op as one dispatch of `tensor_tensor.wgsl`.
pub(crate) fn tensor_tensor(op: &TtOp, cx: &EncodeCx) -> Dispatch {
    let [s0, s1, sd] = op.sizes();
    let [a, b] = op.src();
    let mut p = ElemParams {
        dst: operand(op.dst(), sd, cx.arch),
        src0: operand(a, s0, cx.arch),
        src1: operand(b, s1, cx.arch),
        channels: op.channels(),
        count: op.count() as u32,
        ..Default::default()
    };
    let walks = [
        (p.dst.num, p.dst.step),
        (p.src0.num, p.src0.step),
        (p.src1.num, p.src1.step),
    ];
    let (rows, g) = finish(&mut p, &walks, cx);
    let [d0, d1] = op.src_dtype();
    let f32_path = matches!(op.path(), TtPath::F32 { .. });
    let mut constants = vec![
        ("SOURCES", 2),
        ("ALU", op.alu().0 as u32),
        ("F32_PATH", f32_path as u32),
        ("IN0_DTYPE", d0.0 as u32),
        ("IN1_DTYPE", d1.0 as u32),
        ("OUT_DTYPE", op.out_dtype().0 as u32),
    ];
    if f32_path {
        constants.push(("ADD_BY_BITS", cx.add_by_bits as u32));
    }
    dispatch(TENSOR_TENSOR, &p, constants, rows, g, cx)
}

/// The shape constants a dispatch can carry (`ROWS`, `WORDS`, `DST_VEC`,
/// `SRC0_VEC`, `SRC1_VEC`, as [`dispatch`] sets them for `sources`
/// sources): a walk, a row, a row of whole words, rows of vec4s.
fn shapes(sources: u32) -> Vec<[(&'static str, u32); 5]> {
    let v = |b: bool| b as u32;
    let mut out = Vec::new();
    for (rows, words, dst_vec) in [(0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 0, 1)] {
        for src_vec in [false, true] {
            if src_vec && (rows == 0 || sources == 0) {
                continue;
            }
            out.push([
                ("ROWS", rows),
                ("WORDS", words),
                ("DST_VEC", dst_vec),
                ("SRC0_VEC", v(src_vec)),
                ("SRC1_VEC", v(src_vec && sources > 1)),
            ]);
        }
    }
    out
}

/// A family configuration: (program, sources, override constants other than
/// the shape).
pub(crate) type Config = (Shader, u32, Vec<(&'static str, u32)>);

/// The shape constants ([`shapes`]).
const SHAPE: [&str; 5] = ["ROWS", "WORDS", "DST_VEC", "SRC0_VEC", "SRC1_VEC"];

/// Every family configuration the encoders above can produce (the override
/// constants other than the shape): (program, sources, constants). Cast: bit
/// copies and every dtype pair; Iota: every output dtype; Tensor-Tensor:
/// every executed ALU op over every dtype triple its path admits (EC-50,
/// EC-51), the f32 path with both adds.
pub(crate) fn configs() -> Vec<Config> {
    use crate::device::convert::{InType, OutType};
    use crate::device::ops::tensor_tensor::executes;
    use crate::isa::enums::AluOp;
    use crate::isa::opcode::Opcode;
    let mut out = Vec::new();
    let mut family = |shader: Shader, sources: u32, configs: Vec<Vec<(&'static str, u32)>>| {
        out.extend(configs.into_iter().map(|c| (shader, sources, c)));
    };
    let dt = |d: crate::isa::enums::Dtype| d.0 as u32;
    let mut cast = vec![vec![("CONVERT", 0), ("SOURCES", 1)]];
    for i in InType::ALL {
        for o in OutType::ALL {
            cast.push(vec![
                ("CONVERT", 1),
                ("IN_DTYPE", dt(i.dtype())),
                ("OUT_DTYPE", dt(o.dtype())),
                ("SOURCES", 1),
            ]);
        }
    }
    family(CAST, 1, cast);
    let iota = OutType::ALL
        .iter()
        .map(|o| {
            vec![
                ("GENERATOR", 1),
                ("OUT_DTYPE", dt(o.dtype())),
                ("SOURCES", 0),
            ]
        })
        .collect();
    family(IOTA, 0, iota);
    // EC-50/EC-51: the integer band combines 32-bit patterns of integer
    // operands; base ADD/SUBTRACT/MULT take the f32 path for any other
    // dtype triple.
    let ints = [0x2u32, 0x3, 0x4, 0x5, 0x8, 0x9];
    let ins: Vec<u32> = InType::ALL.iter().map(|t| dt(t.dtype())).collect();
    let outs: Vec<u32> = OutType::ALL.iter().map(|t| dt(t.dtype())).collect();
    let mut tt = Vec::new();
    for opcode in [Opcode::TENSOR_TENSOR_ARITH, Opcode::TENSOR_TENSOR_BITVEC] {
        for alu in (0..=255u8).map(AluOp).filter(|&a| executes(opcode, a)) {
            let base = matches!(alu.0, 0x04..=0x06) && opcode == Opcode::TENSOR_TENSOR_ARITH;
            for &d0 in &ins {
                for &d1 in &ins {
                    for &o in &outs {
                        let int = ints.contains(&d0) && ints.contains(&d1) && ints.contains(&o);
                        if !int && !base {
                            continue;
                        }
                        let c = vec![
                            ("ALU", alu.0 as u32),
                            ("F32_PATH", !int as u32),
                            ("IN0_DTYPE", d0),
                            ("IN1_DTYPE", d1),
                            ("OUT_DTYPE", o),
                            ("SOURCES", 2),
                        ];
                        if int {
                            tt.push(c);
                        } else {
                            for by_bits in [1, 0] {
                                let mut c = c.clone();
                                c.push(("ADD_BY_BITS", by_bits));
                                tt.push(c);
                            }
                        }
                    }
                }
            }
        }
    }
    family(TENSOR_TENSOR, 2, tt);
    out
}

/// The pipelines the portability test translates for these families: every
/// configuration ([`configs`]) with the plain walk, and every shape with
/// the first configuration of each program and path. The whole cross
/// product (~70,000 pipelines) is too many to translate in CI; the shape
/// code and the configuration code are separate regions of the shaders, so
/// this covers every region with every value of every constant.
pub(crate) fn variants() -> Vec<PipelineKey> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (shader, sources, c) in configs() {
        let f32_path = c.iter().any(|&(n, v)| n == "F32_PATH" && v == 1);
        let all = shapes(sources);
        let first = seen.insert((shader, f32_path));
        for shape in if first { &all[..] } else { &all[..1] } {
            out.push(key(shader, &c, shape));
        }
        if first && sources > 0 {
            out.extend([false, true].map(|narrow| dense_key(shader, &c, narrow)));
        }
    }
    out
}

/// [`variants`]' pipelines of one program.
fn variants_of(shader: Shader) -> Vec<PipelineKey> {
    variants()
        .into_iter()
        .filter(|k| k.shader == shader)
        .collect()
}

/// `elementwise_dense`'s positions per invocation.
const DENSE_PER: u32 = 8;

fn dense_key(shader: Shader, config: &[(&'static str, u32)], narrow: bool) -> PipelineKey {
    let mut constants = config.to_vec();
    constants.push(("DENSE_NARROW", narrow as u32));
    constants.sort();
    PipelineKey {
        shader,
        entry: "elementwise_dense",
        constants,
    }
}

/// Whether `k` is a pipeline the encoders can produce: a configuration of
/// [`configs`] with one of the shapes.
pub(crate) fn covers(k: &PipelineKey) -> bool {
    type Known = HashSet<(Shader, Vec<(&'static str, u32)>)>;
    static KNOWN: OnceLock<Known> = OnceLock::new();
    let known = KNOWN.get_or_init(|| {
        configs()
            .into_iter()
            .map(|(shader, _, mut c)| {
                c.sort();
                (shader, c)
            })
            .collect()
    });
    let (shape, config): (Vec<_>, Vec<_>) = k
        .constants
        .iter()
        .copied()
        .partition(|(n, _)| SHAPE.contains(n));
    let sources = config.iter().find(|c| c.0 == "SOURCES").map_or(0, |c| c.1);
    if k.entry == "elementwise_dense" {
        let (narrow, config): (Vec<_>, Vec<_>) =
            config.into_iter().partition(|c| c.0 == "DENSE_NARROW");
        return shape.is_empty()
            && sources > 0
            && matches!(narrow[..], [(_, 0 | 1)])
            && known.contains(&(k.shader, config));
    }
    let shape_ok = shapes(sources).iter().any(|s| {
        let mut s = s.to_vec();
        s.sort();
        s == shape
    });
    shape_ok && k.entry == "elementwise" && known.contains(&(k.shader, config))
}

fn key(
    shader: Shader,
    config: &[(&'static str, u32)],
    shape: &[(&'static str, u32); 5],
) -> PipelineKey {
    let mut constants = config.to_vec();
    constants.extend_from_slice(shape);
    constants.sort();
    PipelineKey {
        shader,
        entry: "elementwise",
        constants,
    }
}

impl GpuKernel for CopyOp {
    const SHADERS: &'static [Shader] = &[CAST];
    fn encode(&self, cx: &EncodeCx) -> Dispatch {
        copy(self, cx)
    }
    fn variants() -> Vec<PipelineKey> {
        variants_of(CAST)
    }
}

impl GpuKernel for IotaOp {
    const SHADERS: &'static [Shader] = &[IOTA];
    fn encode(&self, cx: &EncodeCx) -> Dispatch {
        iota(self, cx)
    }
    fn variants() -> Vec<PipelineKey> {
        variants_of(IOTA)
    }
}

impl GpuKernel for TtOp {
    const SHADERS: &'static [Shader] = &[TENSOR_TENSOR];
    fn encode(&self, cx: &EncodeCx) -> Dispatch {
        tensor_tensor(self, cx)
    }
    fn variants() -> Vec<PipelineKey> {
        variants_of(TENSOR_TENSOR)
    }
}
