// The POOL engine's Pool and MaxPoolSelect on the GPU (SPEC §6).
//
// Each (lane, output) pair is folded in fp32, in stream order, into one
// output element. The CPU reference (src/device/cpu/pool.rs,
// src/device/convert.rs) defines the semantics; every function here mirrors
// one there and must give the same bits. Everything that GPUs may do
// differently is done with integer bit operations: integer→f32 and
// f32→fp16/bf16 rounding, NaN/inf classification, subnormal flushing (EC-19)
// and canonical NaNs (EC-20).
//
// The dtype pair and the fold are pipeline-overridable constants: each
// variant is compiled once and cached (the host keys pipelines by them), so
// the per-element `switch`es fold away instead of diverging per invocation.
// Each invocation folds a segment of consecutive outputs of one lane (SEGMENT
// in `pool`, `chunks` runs of 4 in `pool_rows`): coordinates are computed
// once per segment, and odometers step the src window base and the dst
// position from one output to the next.
//
// Written for llvmpipe too (Mesa's software Vulkan, which CI runs): it runs
// 8 invocations as one SIMD program, so a branch costs both of its sides,
// integer division and dynamically indexed vectors go one lane at a time,
// and uniforms are cheap only when read outside control flow. Hence: no
// integer division (`udiv`), no dynamic indexing, parameters read once at
// the top, and what the host knows per pipeline in override constants.
//
// Composed after memory.wgsl (the device memory bindings, the grid),
// convert.wgsl (SPEC §6 conversions), arith.wgsl (exact f32 add and
// multiply) and walk.wgsl (coordinates): see
// src/device/gpu/kernels.rs. EC-21 guarantees src never meets dst.

// Mirrors `PoolParams` in src/device/gpu/params.rs (128 bytes; the Rust side
// asserts the size and offsets).
struct Params {
    src_num: vec4<u32>,
    src_step: vec4<i32>,
    dst_num: vec4<u32>,
    dst_step: vec4<i32>,
    src_base: u32,        // byte offset in `mem` of lane 0's element index 0
    dst_base: u32,
    src_lane_stride: u32, // bytes between consecutive lanes (one partition)
    dst_lane_stride: u32,
    channels: u32,
    outputs: u32,         // outputs per lane
    win_dims: u32,        // 1..=4: dims 0..win_dims form one window
    op: u32,              // the host's copy of OP (selects the pipeline)
    in_dtype: u32,        // the host's copy of IN_DTYPE
    out_dtype: u32,       // the host's copy of OUT_DTYPE
    scale_bits: u32,      // f32 bits of pool_scale
    groups_x: u32,        // workgroups along x of a 2-D dispatch
    segments: u32,        // invocations per lane
    dst_run: u32,         // the host's copy of DST_RUN
    chunks: u32,          // pool_rows: runs of 4 outputs per invocation
    entry: u32,           // the host's choice of entry point (1: pool_rows)
}

// The pipeline variant: DTYPE bytes of input and output, and the fold.
override IN_DTYPE: u32 = 10u;
override OUT_DTYPE: u32 = 10u;
override OP: u32 = 0u;
// pool_rows: how a run of 4 outputs is stored (the host's `dst_run`): one
// output at a time (0), as one aligned vec4 of fp32 bits (1), or as the
// whole aligned words its 1- or 2-byte outputs fill (2).
override DST_RUN: u32 = 0u;
// pool_rows: the window's rows when it has 1 or 2 rows along dim 1 and no
// more dims (2x1 and 2x2 windows: the row loop unrolls, and llvmpipe pays
// dearly for loops with runtime bounds), or 0: any window, counts from
// `params`.
override WIN_ROWS: u32 = 0u;
// AVG: 1 adds in integer arithmetic (`add_f32_bits`: exact whatever the
// backend's fast-math setting), 0 with the f32 add (`add_f32_hw`), for
// software rasterizers whose adds are IEEE and which pay ~2.5x for the
// integer add (the host's `add_by_bits`, src/device/gpu/params.rs).
override ADD_BY_BITS: u32 = 1u;

// Read once, into `p`, at the top of each entry point: llvmpipe loads a
// uniform as one scalar only outside control flow, and once per invocation
// (a gather) inside it.
@group(0) @binding(1) var<uniform> params: Params;

const SEGMENT: u32 = 4u; // outputs per invocation

const OP_MAX: u32 = 0u;
const OP_AVG: u32 = 1u;
const OP_SELECT: u32 = 2u;

// An i32 whose order is the float order of non-NaN values, with -0 and +0
// equal (IEEE compares them equal): a negative value's key is minus its
// magnitude. NaN maps to the i32 minimum, below -inf's key, so a NaN never
// wins a MAX (EC-11). Branch-free: SIMD drivers run it on every lane at once.
fn order_key(b: u32) -> i32 {
    let k = select(bitcast<i32>(b), bitcast<i32>(SIGN - b), (b & SIGN) != 0u);
    return select(k, -2147483647 - 1, is_nan(b));
}


// Selects are per component throughout: a `select` of integer vectors by a
// vector condition becomes an integer `mix()` in GLSL, which desktop GL has
// only from 4.50.

// The window's extent per dim (1 outside it; dim 0 is always in the window,
// dims 0..win_dims form it): the window loops' bounds, through `opaque`.
fn window_extent(p: Params, z: u32) -> vec4<u32> {
    let n = p.src_num;
    let w = p.win_dims;
    let e = vec4<u32>(n.x, select(1u, n.y, w > 1u), select(1u, n.z, w > 2u), select(1u, n.w, w > 3u));
    return e + vec4<u32>(opaque(0u, z));
}

// The walk of windows: src counts outside the window (1 on its dims).
fn outer_extent(p: Params) -> vec4<u32> {
    let n = p.src_num;
    let w = p.win_dims;
    return vec4<u32>(1u, select(n.y, 1u, w > 1u), select(n.z, 1u, w > 2u), select(n.w, 1u, w > 3u));
}

// ---- the fold ----

// One output's running fold: the value, its order key, and its window position.
struct Fold {
    acc: u32,
    key: i32,
    arg: u32,
}

// The fold's start: MAX from -inf (EC-11), AVG from +0.0 (EC-12). The +0.0
// goes through `opaque`: once a window loop unrolls, a compiler may fold
// +0.0 + x into x, which is wrong for x = -0.
fn fold_init(z: u32) -> Fold {
    return Fold(select(NEG_INF, opaque(0u, z), OP == OP_AVG), order_key(NEG_INF), 0u);
}

// The value to store: AVG multiplies the sum once by pool_scale (EC-12).
fn finish(p: Params, acc: u32) -> u32 {
    if OP == OP_AVG {
        return mul_f32_bits(acc, p.scale_bits);
    }
    return acc;
}

// Folds element `v` (f32 bits) at window position `e`. AVG: the running
// sum, flushed (EC-12, EC-19): in integer arithmetic (`add_f32_bits`), or
// by the adapter's f32 add where the host knows it is IEEE (ADD_BY_BITS). MAX and MaxPoolSelect: strictly greater wins,
// so the first maximum stays and NaN never wins (EC-11).
fn fold(f: Fold, v: u32, e: u32) -> Fold {
    if OP == OP_AVG {
        if ADD_BY_BITS == 1u {
            return Fold(add_f32_bits(f.acc, v), f.key, f.arg);
        }
        return Fold(add_f32_hw(f.acc, v), f.key, f.arg);
    }
    let kv = order_key(v);
    let take = kv > f.key;
    return Fold(select(f.acc, v, take), select(f.key, kv, take), select(f.arg, e, take));
}

@compute @workgroup_size(64)
fn pool(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = params;
    let id = invocation(p.groups_x, wg, li);
    if id >= p.channels * p.segments {
        return;
    }
    let lane = udiv(id, p.segments);
    let first = (id - lane * p.segments) * SEGMENT;
    let count = min(SEGMENT, p.outputs - first);

    // The window extents, and the walk of windows over the other dims.
    let n = window_extent(p, wg.z);
    let win_elems = n.x * n.y * n.z * n.w;
    let outer = outer_extent(p);
    // Coordinates of output `first` in both walks (sc is 0 on window dims).
    var sc = coords(first, outer);
    var dc = coords(first, p.dst_num);
    let in_size = dtype_size(IN_DTYPE);
    let out_size = dtype_size(OUT_DTYPE);
    let lane_src = i32(p.src_base + lane * p.src_lane_stride);
    let lane_dst = i32(p.dst_base + lane * p.dst_lane_stride);

    for (var j = 0u; j < count; j++) {
        let base = dot(vec4<i32>(sc), p.src_step);
        var f = fold_init(wg.z);
        // One loop over the window's elements in stream order (x fastest),
        // its coordinates stepped by an odometer: one loop costs llvmpipe far
        // less than four nested ones.
        var wc = vec4<u32>(0u);
        for (var e = 0u; e < win_elems; e++) {
            let idx = base + dot(vec4<i32>(wc), p.src_step);
            f = fold(f, load_f32_bits(u32(lane_src + idx * i32(in_size)), IN_DTYPE), e);
            wc = advance(wc, n, 1u);
        }

        let dbyte = u32(lane_dst + dot(vec4<i32>(dc), p.dst_step) * i32(out_size));
        if OP == OP_SELECT {
            store_bits(dbyte, out_size, f.arg); // an integer, never through f32
        } else {
            store_f32(dbyte, OUT_DTYPE, finish(p, f.acc));
        }
        sc = advance(sc, outer, 1u);
        dc = advance(dc, p.dst_num, 1u);
    }
}

// EC-20: four f32 bit patterns with every NaN made canonical (per component:
// see window_extent).
fn canonical4(v: vec4<u32>) -> vec4<u32> {
    return vec4<u32>(
        select(v.x, F32_CANONICAL_NAN, is_nan(v.x)),
        select(v.y, F32_CANONICAL_NAN, is_nan(v.y)),
        select(v.z, F32_CANONICAL_NAN, is_nan(v.z)),
        select(v.w, F32_CANONICAL_NAN, is_nan(v.w)),
    );
}

// ---- the row fast path ----
//
// For the commonest shape — 4- or 2-byte input, windows two elements wide
// with x step 1, adjacent along the first dim outside the window (step 2),
// rows 16-byte aligned — an invocation folds `chunks` runs of 4 consecutive
// outputs along that dim, reading each window row of a run as vec4 loads
// (two for 4-byte input, one for 2-byte). The host picks this entry point
// only when those conditions hold (`rows_path` in src/device/gpu/params.rs);
// the fold, the conversions and the stores are the ones `pool` uses, in the
// same order.

// Folds a run's window row of 4-byte elements: output j's pair is words 2j
// and 2j+1 of lo:hi, in stream order.
fn fold_row(f: array<Fold, 4>, lo: vec4<u32>, hi: vec4<u32>, e: u32) -> array<Fold, 4> {
    return array<Fold, 4>(
        fold(fold(f[0], to_f32_bits(lo.x, IN_DTYPE), e), to_f32_bits(lo.y, IN_DTYPE), e + 1u),
        fold(fold(f[1], to_f32_bits(lo.z, IN_DTYPE), e), to_f32_bits(lo.w, IN_DTYPE), e + 1u),
        fold(fold(f[2], to_f32_bits(hi.x, IN_DTYPE), e), to_f32_bits(hi.y, IN_DTYPE), e + 1u),
        fold(fold(f[3], to_f32_bits(hi.z, IN_DTYPE), e), to_f32_bits(hi.w, IN_DTYPE), e + 1u),
    );
}

// The same for 2-byte elements: output j's pair is the low and high half of word j.
fn fold_row16(f: array<Fold, 4>, v: vec4<u32>, e: u32) -> array<Fold, 4> {
    let lo = v & vec4<u32>(0xFFFFu);
    let hi = v >> vec4<u32>(16u);
    return array<Fold, 4>(
        fold(fold(f[0], to_f32_bits(lo.x, IN_DTYPE), e), to_f32_bits(hi.x, IN_DTYPE), e + 1u),
        fold(fold(f[1], to_f32_bits(lo.y, IN_DTYPE), e), to_f32_bits(hi.y, IN_DTYPE), e + 1u),
        fold(fold(f[2], to_f32_bits(lo.z, IN_DTYPE), e), to_f32_bits(hi.z, IN_DTYPE), e + 1u),
        fold(fold(f[3], to_f32_bits(lo.w, IN_DTYPE), e), to_f32_bits(hi.w, IN_DTYPE), e + 1u),
    );
}

// Folds the window row of a run that starts at byte `row` (16-byte aligned).
fn fold_run_row(f: array<Fold, 4>, row: i32, e: u32) -> array<Fold, 4> {
    let q = u32(row) >> 4u;
    if dtype_size(IN_DTYPE) == 2u {
        return fold_row16(f, memv[q], e);
    }
    return fold_row(f, memv[q], memv[q + 1u], e);
}

@compute @workgroup_size(64)
fn pool_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = params;
    let id = invocation(p.groups_x, wg, li);
    if id >= p.channels * p.segments {
        return;
    }
    let lane = udiv(id, p.segments);
    let first = (id - lane * p.segments) * p.chunks * 4u; // never crosses the end of dim k
    let n = window_extent(p, wg.z);
    let outer = outer_extent(p);
    // Byte offset of the first run's window, and the dst coordinates of its first output.
    let in_size = i32(dtype_size(IN_DTYPE));
    var src = i32(p.src_base + lane * p.src_lane_stride) + dot(vec4<i32>(coords(first, outer)), p.src_step) * in_size;
    var dc = coords(first, p.dst_num);
    let out_size = dtype_size(OUT_DTYPE);
    let lane_dst = i32(p.dst_base + lane * p.dst_lane_stride);
    let init = fold_init(wg.z);

    for (var c = 0u; c < opaque(p.chunks, wg.z); c++) {
        var f = array<Fold, 4>(init, init, init, init);
        var e = 0u;
        if WIN_ROWS != 0u {
            for (var y = 0u; y < WIN_ROWS; y++) {
                f = fold_run_row(f, src + i32(y) * p.src_step.y * in_size, e);
                e += 2u;
            }
        } else {
            for (var w = 0u; w < n.w; w++) {
                for (var z = 0u; z < n.z; z++) {
                    for (var y = 0u; y < n.y; y++) {
                        let row = dot(vec4<i32>(vec4<u32>(0u, y, z, w)), p.src_step);
                        f = fold_run_row(f, src + row * in_size, e);
                        e += 2u;
                    }
                }
            }
        }
        let acc = vec4<u32>(finish(p, f[0].acc), finish(p, f[1].acc), finish(p, f[2].acc), finish(p, f[3].acc));
        let arg = vec4<u32>(f[0].arg, f[1].arg, f[2].arg, f[3].arg);
        let out = select(acc, arg, OP == OP_SELECT);
        let dbyte = u32(lane_dst + dot(vec4<i32>(dc), p.dst_step) * i32(out_size));
        if DST_RUN == 1u {
            // fp32/fp32r: the stored bits are the f32 bits, NaN canonical (EC-20).
            memv[dbyte >> 4u] = canonical4(out);
            dc = advance(dc, p.dst_num, 4u);
        } else if DST_RUN == 2u {
            // 1- or 2-byte outputs that fill whole words: no other output
            // shares them (EC-21), so plain word stores, no read-modify-write.
            var v = out; // MaxPoolSelect: indices, stored truncated as store_bits does
            if OP != OP_SELECT {
                v = vec4<u32>(out_bits(out.x, OUT_DTYPE), out_bits(out.y, OUT_DTYPE), out_bits(out.z, OUT_DTYPE), out_bits(out.w, OUT_DTYPE));
            }
            v &= vec4<u32>(select(0xFFFFu, 0xFFu, out_size == 1u));
            let i = dbyte >> 2u;
            if out_size == 1u {
                atomicStore(&mem[i], v.x | (v.y << 8u) | (v.z << 16u) | (v.w << 24u));
            } else {
                atomicStore(&mem[i], v.x | (v.y << 16u));
                atomicStore(&mem[i + 1u], v.z | (v.w << 16u));
            }
            dc = advance(dc, p.dst_num, 4u);
        } else {
            // Any other output: the dst walk of consecutive outputs, one store each.
            store_out(p, lane_dst, dc, out_size, out.x);
            dc = advance(dc, p.dst_num, 1u);
            store_out(p, lane_dst, dc, out_size, out.y);
            dc = advance(dc, p.dst_num, 1u);
            store_out(p, lane_dst, dc, out_size, out.z);
            dc = advance(dc, p.dst_num, 1u);
            store_out(p, lane_dst, dc, out_size, out.w);
            dc = advance(dc, p.dst_num, 1u);
        }
        src += 8 * in_size; // the next 4 windows: 8 elements on
    }
}

// Stores one finished output (or MaxPoolSelect's index) at dst coordinates `dc`.
fn store_out(p: Params, lane_dst: i32, dc: vec4<u32>, out_size: u32, v: u32) {
    let b = u32(lane_dst + dot(vec4<i32>(dc), p.dst_step) * i32(out_size));
    if OP == OP_SELECT {
        store_bits(b, out_size, v);
    } else {
        store_f32(b, OUT_DTYPE, v);
    }
}
