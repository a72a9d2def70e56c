// The POOL engine's Pool and MaxPoolSelect on the GPU (SPEC §6).
//
// Each (lane, output) pair is folded in fp32, in stream order, into one
// output element. The CPU reference (src/device/pool.rs,
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
// Memory: SBUF (128 partitions × active bytes) then PSUM, as u32 words. Words
// are atomic because 1- and 2-byte outputs of different invocations can share
// a word; EC-21 guarantees no two outputs share a byte and src never meets
// dst, so a clear-then-set of one output's bytes is race-free.

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

@group(0) @binding(0) var<storage, read_write> mem: array<atomic<u32>>;
// Read once, into `p`, at the top of each entry point: llvmpipe loads a
// uniform as one scalar only outside control flow, and once per invocation
// (a gather) inside it.
@group(0) @binding(1) var<uniform> params: Params;
// The same memory as 16-byte words, for `pool_rows`' vector loads and stores
// (each entry point uses one view; the host binds the same buffer to both).
@group(0) @binding(2) var<storage, read_write> memv: array<vec4<u32>>;

const WORKGROUP: u32 = 64u;
const SEGMENT: u32 = 4u; // outputs per invocation

const OP_MAX: u32 = 0u;
const OP_AVG: u32 = 1u;
const OP_SELECT: u32 = 2u;

const INT8: u32 = 2u;
const UINT8: u32 = 3u;
const INT16: u32 = 4u;
const UINT16: u32 = 5u;
const BFLOAT16: u32 = 6u;
const FP16: u32 = 7u;
const INT32: u32 = 8u;
const UINT32: u32 = 9u;
const INT64: u32 = 12u;

const SIGN: u32 = 0x80000000u;
const NEG_INF: u32 = 0xFF800000u;
const F32_CANONICAL_NAN: u32 = 0x7FC00000u; // EC-20
const F16_CANONICAL_NAN: u32 = 0x7E00u;     // EC-20
const BF16_CANONICAL_NAN: u32 = 0x7FC0u;    // EC-20

fn dtype_size(d: u32) -> u32 {
    switch d {
        case 2u, 3u: { return 1u; }
        case 4u, 5u, 6u, 7u: { return 2u; }
        case 12u: { return 8u; }
        default: { return 4u; }
    }
}

// ---- f32 bit classification (compilers may assume no NaN/inf exist) ----

fn is_nan(b: u32) -> bool {
    return (b & 0x7FFFFFFFu) > 0x7F800000u;
}

// EC-19: an f32 subnormal becomes a zero of the same sign.
fn flush(b: u32) -> u32 {
    if (b & 0x7F800000u) == 0u {
        return b & SIGN;
    }
    return b;
}

// An i32 whose order is the float order of non-NaN values, with -0 and +0
// equal (IEEE compares them equal): a negative value's key is minus its
// magnitude. NaN maps to the i32 minimum, below -inf's key, so a NaN never
// wins a MAX (EC-11). Branch-free: SIMD drivers run it on every lane at once.
fn order_key(b: u32) -> i32 {
    let k = select(bitcast<i32>(b), bitcast<i32>(SIGN - b), (b & SIGN) != 0u);
    return select(k, -2147483647 - 1, is_nan(b));
}

// ---- integer → f32, round to nearest even, by bits ----

// Rounds the magnitude `hi:lo` (a 64-bit integer, hi != 0 or lo != 0) to f32 bits.
fn u64_to_f32_bits(hi: u32, lo: u32) -> u32 {
    if hi == 0u && lo == 0u {
        return 0u;
    }
    var top: u32; // position of the leading one, 0..=63
    if hi != 0u {
        top = 63u - countLeadingZeros(hi);
    } else {
        top = 31u - countLeadingZeros(lo);
    }
    if top <= 23u {
        // Exact: fits the 24-bit significand (so hi == 0).
        return ((top + 127u) << 23u) + ((lo << (23u - top)) & 0x7FFFFFu);
    }
    let shift = top - 23u; // 1..=40 bits to drop
    // m = value >> shift (24 bits); rest = the dropped bits compared with half.
    var m: u32;
    var above_half: bool;
    var at_half: bool;
    if shift < 32u {
        m = (lo >> shift) | select(0u, hi << (32u - shift), shift > 0u);
        let dropped = lo & ((1u << shift) - 1u);
        let half = 1u << (shift - 1u);
        above_half = dropped > half;
        at_half = dropped == half;
    } else {
        let s = shift - 32u; // 0..=8
        m = hi >> s;
        if s == 0u {
            above_half = lo > SIGN;
            at_half = lo == SIGN;
        } else {
            let dropped_hi = hi & ((1u << s) - 1u);
            let half_hi = 1u << (s - 1u);
            above_half = dropped_hi > half_hi || (dropped_hi == half_hi && lo != 0u);
            at_half = dropped_hi == half_hi && lo == 0u;
        }
    }
    let round_up = above_half || (at_half && (m & 1u) == 1u);
    // A carry out of the significand increments the exponent, as it should.
    return ((top + 127u) << 23u) + (m & 0x7FFFFFu) + select(0u, 1u, round_up);
}

fn u32_to_f32_bits(v: u32) -> u32 {
    return u64_to_f32_bits(0u, v);
}

fn i32_to_f32_bits(v: u32) -> u32 {
    if (v & SIGN) != 0u {
        return SIGN | u32_to_f32_bits(~v + 1u);
    }
    return u32_to_f32_bits(v);
}

fn i64_to_f32_bits(hi: u32, lo: u32) -> u32 {
    if (hi & SIGN) != 0u {
        // Two's-complement negate hi:lo.
        let nlo = ~lo + 1u;
        let nhi = ~hi + select(0u, 1u, nlo == 0u);
        return SIGN | u64_to_f32_bits(nhi, nlo);
    }
    return u64_to_f32_bits(hi, lo);
}

// fp16 widens exactly; fp16 subnormals are f32 normals.
fn f16_to_f32_bits(h: u32) -> u32 {
    let sign = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1Fu;
    let m = h & 0x3FFu;
    if e == 0x1Fu {
        return sign | 0x7F800000u | (m << 13u);
    }
    if e == 0u {
        if m == 0u {
            return sign;
        }
        let top = 31u - countLeadingZeros(m); // 0..=9; value = m · 2^-24
        return sign | ((top + 103u) << 23u) | ((m << (23u - top)) & 0x7FFFFFu);
    }
    return sign | ((e + 112u) << 23u) | (m << 13u);
}

// ---- memory ----

fn load_word(byte: u32) -> u32 {
    return atomicLoad(&mem[byte >> 2u]);
}

// An element of dtype `d` (its bits in the low bytes of `v`, higher bits
// zero) converted to f32 bits (SPEC §6 load conversions); not INT64.
fn to_f32_bits(v: u32, d: u32) -> u32 {
    switch d {
        case 2u: { // INT8
            return i32_to_f32_bits(bitcast<u32>(i32(v << 24u) >> 24u));
        }
        case 3u, 5u, 9u: { // UINT8, UINT16, UINT32
            return u32_to_f32_bits(v);
        }
        case 4u: { // INT16
            return i32_to_f32_bits(bitcast<u32>(i32(v << 16u) >> 16u));
        }
        case 6u: { // BFLOAT16: exact, then EC-19
            return flush(v << 16u);
        }
        case 7u: { // FP16
            return f16_to_f32_bits(v);
        }
        case 8u: { // INT32
            return i32_to_f32_bits(v);
        }
        default: { // FP32: EC-19
            return flush(v);
        }
    }
}

// The element at `byte` converted to f32 bits.
fn load_f32_bits(byte: u32, d: u32) -> u32 {
    let w = load_word(byte);
    if d == INT64 { // little-endian: low word first
        return i64_to_f32_bits(load_word(byte + 4u), w);
    }
    let size = dtype_size(d);
    let mask = select(select(0xFFFFu, 0xFFu, size == 1u), 0xFFFFFFFFu, size == 4u);
    return to_f32_bits((w >> ((byte & 3u) * 8u)) & mask, d);
}

// ---- f32 → out dtype (EC-13, EC-20) ----

fn f32_to_f16_bits(b: u32) -> u32 {
    if is_nan(b) {
        return F16_CANONICAL_NAN;
    }
    let sign = (b >> 16u) & 0x8000u;
    let a = b & 0x7FFFFFFFu;
    let e = a >> 23u;
    if e == 0xFFu {
        return sign | 0x7C00u;
    }
    if e == 0u {
        return sign; // zero (subnormals were flushed upstream)
    }
    let m = (a & 0x7FFFFFu) | 0x800000u; // 24-bit significand
    var shift: u32;
    var base: u32;
    if e >= 113u {
        // fp16 normal range (or overflow): keep 11 bits.
        if e >= 143u {
            return sign | 0x7C00u; // >= 2^16 always rounds to inf
        }
        shift = 13u;
        base = (e - 112u) << 10u; // exponent field; the implicit bit is added below
    } else {
        // fp16 subnormal: value = m · 2^(e-150), unit 2^-24.
        shift = 126u - e; // >= 14
        if shift >= 25u {
            return sign; // below half the smallest subnormal
        }
        base = 0u;
    }
    let kept = m >> shift;
    let dropped = m & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    let round_up = dropped > half || (dropped == half && (kept & 1u) == 1u);
    var r: u32;
    if base != 0u {
        // (e16 << 10) + (kept - implicit 1<<10): a carry moves into the exponent, up to inf.
        r = base + (kept & 0x3FFu) + select(0u, 1u, round_up);
    } else {
        r = kept + select(0u, 1u, round_up);
    }
    return sign | r;
}

fn f32_to_bf16_bits(b: u32) -> u32 {
    if is_nan(b) {
        return BF16_CANONICAL_NAN;
    }
    // Round to nearest even on the low 16 bits; overflow reaches inf.
    return (b + 0x7FFFu + ((b >> 16u) & 1u)) >> 16u;
}

// Truncate toward zero, saturate to [lo, hi] (as i32), NaN → 0.
fn f32_to_i32_sat(b: u32, lo: i32, hi: i32) -> i32 {
    if is_nan(b) {
        return 0;
    }
    if (b & 0x7FFFFFFFu) >= 0x4F000000u { // |x| >= 2^31, inf included
        return select(hi, lo, (b & SIGN) != 0u);
    }
    return clamp(i32(bitcast<f32>(b)), lo, hi);
}

fn f32_to_u32_sat(b: u32) -> u32 {
    if is_nan(b) || (b & SIGN) != 0u {
        return 0u; // negative values truncate to 0 or saturate to 0
    }
    if b >= 0x4F800000u { // >= 2^32, inf included
        return 0xFFFFFFFFu;
    }
    return u32(bitcast<f32>(b));
}

fn store_bits(byte: u32, size: u32, v: u32) {
    let i = byte >> 2u;
    if size == 4u {
        atomicStore(&mem[i], v);
        return;
    }
    let sh = (byte & 3u) * 8u;
    let mask = select(0xFFu, 0xFFFFu, size == 2u) << sh;
    atomicAnd(&mem[i], ~mask);
    atomicOr(&mem[i], (v << sh) & mask);
}

// f32 bits `b` as an output of dtype `d` (EC-13, EC-20), in the low bytes.
fn out_bits(b: u32, d: u32) -> u32 {
    switch d {
        case 2u: { return bitcast<u32>(f32_to_i32_sat(b, -128, 127)) & 0xFFu; }
        case 3u: { return bitcast<u32>(f32_to_i32_sat(b, 0, 255)); }
        case 4u: { return bitcast<u32>(f32_to_i32_sat(b, -32768, 32767)) & 0xFFFFu; }
        case 5u: { return bitcast<u32>(f32_to_i32_sat(b, 0, 65535)); }
        case 6u: { return f32_to_bf16_bits(b); }
        case 7u: { return f32_to_f16_bits(b); }
        case 8u: { return bitcast<u32>(f32_to_i32_sat(b, -2147483647 - 1, 2147483647)); }
        case 9u: { return f32_to_u32_sat(b); }
        default: { // FP32, FP32R: the f32 bits, NaN canonical (EC-20)
            return select(b, F32_CANONICAL_NAN, is_nan(b));
        }
    }
}

fn store_f32(byte: u32, d: u32, b: u32) {
    store_bits(byte, dtype_size(d), out_bits(b, d));
}

// ---- coordinates ----
//
// No integer division and no dynamically indexed vectors: llvmpipe (Mesa's
// software Vulkan, which CI runs) divides one lane at a time and keeps
// dynamically indexed vectors in memory, which costs more than the fold.

// floor(n / d) for n < 2^30 and 1 <= d < 2^24, exact whatever the precision
// of f32 division (WGSL allows 2.5 ULP): an estimate, one f32 correction
// step (then within one), one integer correction. Wrapping u32/i32
// arithmetic keeps the intermediate remainders exact.
fn udiv(n: u32, d: u32) -> u32 {
    let fd = f32(d);
    var q = u32(f32(n) / fd);
    q = bitcast<u32>(bitcast<i32>(q) + i32(floor(f32(bitcast<i32>(n - q * d)) / fd)));
    let r = bitcast<i32>(n - q * d);
    return q + select(0u, 1u, r >= i32(d)) - select(0u, 1u, r < 0);
}

// `o`'s coordinates in a walk over `num` (dim 0 fastest); o < the product.
fn coords(o: u32, num: vec4<u32>) -> vec4<u32> {
    let q0 = udiv(o, num.x);
    let q1 = udiv(q0, num.y);
    let q2 = udiv(q1, num.z);
    return vec4<u32>(o - q0 * num.x, q0 - q1 * num.y, q1 - q2 * num.z, q2);
}

// Steps coordinates `c` over `num` by `by` along dim 0 (`by` divides num.x,
// c.x a multiple of `by`): the odometer from one output to the next.
fn advance(c: vec4<u32>, num: vec4<u32>, by: u32) -> vec4<u32> {
    let x = c.x + by;
    let cx = x >= num.x;
    let y = c.y + select(0u, 1u, cx);
    let cy = cx && y >= num.y;
    let z = c.z + select(0u, 1u, cy);
    let cz = cy && z >= num.z;
    return vec4<u32>(select(x, 0u, cx), select(y, 0u, cy), select(z, 0u, cz), c.w + select(0u, 1u, cz));
}

// A loop bound the shader compiler cannot see through. lavapipe (Mesa's
// software Vulkan, which CI runs) specializes a shader on the uniform values
// that bound its loops and recompiles it for every dispatch whose values
// change — a millisecond per record. `z` is workgroup_id.z, always 0 (the
// host dispatches one layer), so the value is unchanged but no longer a
// pure uniform.
fn opaque(v: u32, z: u32) -> u32 {
    return v + z;
}

// Which src dims form the window (dims 0..win_dims).
fn window_mask(p: Params) -> vec4<bool> {
    return vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(p.win_dims);
}

// The window's extent per dim (1 outside it): the window loops' bounds,
// through `opaque`.
fn window_extent(p: Params, z: u32) -> vec4<u32> {
    return select(vec4<u32>(1u), p.src_num, window_mask(p)) + vec4<u32>(opaque(0u, z));
}

// The walk of windows: src counts outside the window (1 on its dims).
fn outer_extent(p: Params) -> vec4<u32> {
    return select(p.src_num, vec4<u32>(1u), window_mask(p));
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

// flush(a × b) with the product rounded to nearest even (EC-12, EC-19), in
// integer arithmetic: a GPU that flushes subnormals may decide "subnormal"
// before rounding and return 0 where IEEE rounds up to 2^-126. `a` is zero,
// normal, inf or NaN (flushed); `b` is normal (EC-9: pool_scale). NaN
// results are canonical (every store makes them so anyway).
fn mul_f32_bits(a: u32, b: u32) -> u32 {
    let sign = (a ^ b) & SIGN;
    let ea = (a >> 23u) & 0xFFu;
    let eb = (b >> 23u) & 0xFFu;
    // The 46- to 48-bit product of the significands, hi:lo, from 16-bit limbs.
    let ma = (a & 0x7FFFFFu) | 0x800000u;
    let mb = (b & 0x7FFFFFu) | 0x800000u;
    let ll = (ma & 0xFFFFu) * (mb & 0xFFFFu);
    let mid = (ma & 0xFFFFu) * (mb >> 16u) + (ma >> 16u) * (mb & 0xFFFFu); // < 2^25
    let lo = ll + (mid << 16u);
    let hi = (ma >> 16u) * (mb >> 16u) + (mid >> 16u) + select(0u, 1u, lo < ll);
    // Keep 24 bits below the leading one (bit 47 or 46), round to nearest even.
    let top47 = hi >= 0x8000u;
    let s = select(23u, 24u, top47);
    let m = (hi << (32u - s)) | (lo >> s);
    let rest = lo & ((1u << s) - 1u);
    let half = 1u << (s - 1u);
    let up = rest > half || (rest == half && (m & 1u) == 1u);
    let e = i32(ea + eb) - 127 + select(0, 1, top47); // biased exponent of m's leading one
    // A carry out of the significand moves into the exponent, up to inf.
    var r = sign | ((u32(max(e, 1)) << 23u) + (m - 0x800000u) + select(0u, 1u, up));
    // Below 2^-126 before rounding, IEEE rounds up to 2^-126 only from
    // [2^-126 - 2^-150, 2^-126), where all 24 kept bits are ones; any other
    // result is subnormal and flushes (EC-19).
    r = select(r, sign | select(0u, 0x800000u, e == 0 && m == 0xFFFFFFu), e <= 0);
    r = select(r, sign | 0x7F800000u, e >= 255);
    // Zeros, infinities and NaN (branch-free: SIMD drivers run every branch).
    let zero = ea == 0u || eb == 0u;
    let inf = ea == 0xFFu || eb == 0xFFu;
    r = select(r, sign, zero);
    r = select(r, sign | 0x7F800000u, inf);
    return select(r, F32_CANONICAL_NAN, is_nan(a) || is_nan(b) || (inf && zero)); // inf × 0 is NaN
}

// Folds element `v` (f32 bits) at window position `e`. AVG: the running
// sum, flushed (EC-12, EC-19). MAX and MaxPoolSelect: strictly greater wins,
// so the first maximum stays and NaN never wins (EC-11).
fn fold(f: Fold, v: u32, e: u32) -> Fold {
    if OP == OP_AVG {
        return Fold(flush(bitcast<u32>(bitcast<f32>(f.acc) + bitcast<f32>(v))), f.key, f.arg);
    }
    let kv = order_key(v);
    let take = kv > f.key;
    return Fold(select(f.acc, v, take), select(f.key, kv, take), select(f.arg, e, take));
}

// This invocation's number within the record: the host lays the grid out
// in rows of `groups_x` workgroups (at most 65,535 per dimension); ids at or
// past channels × segments have no work.
fn invocation(p: Params, wg: vec3<u32>, li: u32) -> u32 {
    return (wg.y * p.groups_x + wg.x) * WORKGROUP + li;
}

@compute @workgroup_size(64)
fn pool(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = params;
    let id = invocation(p, wg, li);
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
    let id = invocation(p, wg, li);
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
            memv[dbyte >> 4u] = select(out, vec4<u32>(F32_CANONICAL_NAN), (out & vec4<u32>(0x7FFFFFFFu)) > vec4<u32>(0x7F800000u));
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
