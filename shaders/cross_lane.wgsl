// CrossLaneReduce (0x7C arith, 0x7D bitvec), EC-54: `first`, `step` and
// `store_acc` mirror `first`, `step` and `store` in
// src/device/ops/cross_lane.rs one for one. Partitions axis: one invocation
// per walk position k (or per 4·QUADS of them, below) folds the lanes
// p = 0..nac−1 in order — EC-54's sequential order, so no tree and no
// reassociation. All axis: a single
// invocation folds every element, p outer and k inner (docs/gpu.md says
// what that costs).

override FOLD: u32 = 0u; // 0 ADD f32, 1 AVERAGE, 2 MAX, 3 ADD int, 4 OR, 5 AND, 6 XOR
override ADD_BY_BITS: u32 = 1u;
override ALL_AXIS: bool = false;
override IN_DTYPE: u32 = 10u; // per element: an override, so its switch compiles out
// Partitions axis with 4-byte src elements whose walk positions go 4·QUADS
// at a time along 16-byte-aligned rows (and dst positions as many at a time
// along its rows): each invocation folds 4·QUADS consecutive positions,
// QUADS neighbouring vec4 loads per lane, each position still folded over
// the lanes in order (EC-54). 0: one position per invocation. A software
// rasterizer takes 4 (whole cache lines of each partition per SIMD row of
// invocations), a hardware GPU 1 (`clr_quads_max` in params.rs).
override QUADS: u32 = 0u;
// The most QUADS (the accumulators' array length is 4 times it).
const MAX_QUADS: u32 = 4u;

// Mirrors `ClrParams` in src/device/gpu/lane_kernels.rs.
struct Params {
    src: Walk,
    dst: Walk,
    channels: u32,
    count: u32,
    groups_x: u32,
    scale: u32, // AVERAGE: the f32 bits, already flushed (EC-19)
    out_dtype: u32,
    pad2: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(1) var<uniform> params: Params;

// The out dtype is a parameter, not an override constant (it is used once
// per output, and a software rasterizer pays a compile per pipeline).
var<private> OUT_DTYPE: u32;

// The accumulator: f32 bits in .x, or a 64-bit integer as (lo, hi), or raw bits in .x.
fn signed_in() -> bool {
    return IN_DTYPE == INT8 || IN_DTYPE == INT16 || IN_DTYPE == INT32;
}

fn int_value(raw: u32) -> vec2<u32> {
    var v = raw;
    if IN_DTYPE == INT8 {
        v = bitcast<u32>(bitcast<i32>(raw << 24u) >> 24u);
    } else if IN_DTYPE == INT16 {
        v = bitcast<u32>(bitcast<i32>(raw << 16u) >> 16u);
    }
    let neg = signed_in() && (v & SIGN) != 0u;
    return vec2<u32>(v, select(0u, 0xFFFFFFFFu, neg));
}

fn add_f32(a: u32, b: u32) -> u32 {
    if ADD_BY_BITS == 1u {
        return add_f32_bits(a, b);
    }
    return add_f32_hw(a, b);
}

fn first(raw: u32, scale: u32) -> vec2<u32> {
    switch FOLD {
        case 0u, 2u: { return vec2<u32>(to_f32_bits(raw, IN_DTYPE), 0u); }
        case 1u: { return vec2<u32>(mul_f32_bits(to_f32_bits(raw, IN_DTYPE), scale), 0u); }
        case 3u: { return int_value(raw); }
        default: { return vec2<u32>(raw, 0u); }
    }
}

// A non-NaN f32's bits as an unsigned key in the order of its value, −0
// and +0 equal: compared by bits, so no compiler assumption about NaN or
// infinities can change the answer.
fn order_key(b: u32) -> u32 {
    let c = select(b, 0u, b == SIGN);
    return select(c | SIGN, ~c, (c & SIGN) != 0u);
}

// EC-54 MAX: x replaces acc when x > acc, or acc is NaN and x is not.
fn max_f32(acc: u32, x: u32) -> u32 {
    let gt = !is_nan(x) && !is_nan(acc) && order_key(x) > order_key(acc);
    return select(acc, x, gt || (is_nan(acc) && !is_nan(x)));
}

fn step(acc: vec2<u32>, raw: u32, scale: u32) -> vec2<u32> {
    switch FOLD {
        case 0u: { return vec2<u32>(add_f32(acc.x, to_f32_bits(raw, IN_DTYPE)), 0u); }
        case 1u: { return vec2<u32>(add_f32(acc.x, mul_f32_bits(to_f32_bits(raw, IN_DTYPE), scale)), 0u); }
        case 2u: { return vec2<u32>(max_f32(acc.x, to_f32_bits(raw, IN_DTYPE)), 0u); }
        case 3u: {
            let v = int_value(raw);
            let lo = acc.x + v.x;
            return vec2<u32>(lo, acc.y + v.y + select(0u, 1u, lo < acc.x));
        }
        case 4u: { return vec2<u32>(acc.x | raw, 0u); }
        case 5u: { return vec2<u32>(acc.x & raw, 0u); }
        default: { return vec2<u32>(acc.x ^ raw, 0u); }
    }
}

// Signed 64-bit a < b on (lo, hi).
fn lt64(a: vec2<u32>, b: vec2<u32>) -> bool {
    let ah = bitcast<i32>(a.y);
    let bh = bitcast<i32>(b.y);
    return ah < bh || (ah == bh && a.x < b.x);
}

fn clamp64(v: vec2<u32>, lo: vec2<u32>, hi: vec2<u32>) -> u32 {
    if lt64(v, lo) {
        return lo.x;
    }
    if lt64(hi, v) {
        return hi.x;
    }
    return v.x;
}

// Bit i (0..63) of m.
fn bit64(m: vec2<u32>, i: u32) -> u32 {
    return select((m.x >> (i & 31u)) & 1u, (m.y >> (i & 31u)) & 1u, i >= 32u);
}

// Whether any bit below i (0..63) of m is set.
fn below64(m: vec2<u32>, i: u32) -> bool {
    let lo_mask = select((1u << (i & 31u)) - 1u, 0xFFFFFFFFu, i >= 32u);
    let hi_mask = select(0u, (1u << ((i - 32u) & 31u)) - 1u, i > 32u);
    return (m.x & lo_mask) != 0u || (m.y & hi_mask) != 0u;
}

// m >> s for 0 <= s < 64, the low 32 bits (the caller's result fits).
fn shr64(m: vec2<u32>, s: u32) -> u32 {
    if s >= 32u {
        return m.y >> (s - 32u);
    }
    if s == 0u {
        return m.x;
    }
    return (m.x >> s) | (m.y << (32u - s));
}

// EC-54: the exact sum rounded once, to nearest even, to a format with
// `mant` explicit mantissa bits, `bias` and all-ones exponent field `top`
// (overflow → ±inf); mirrors `round_int` in src/device/ops/cross_lane.rs.
fn round_int(v: vec2<u32>, mant: u32, bias: u32, top: u32, sign_bit: u32) -> u32 {
    let neg = bitcast<i32>(v.y) < 0;
    var m = v;
    if neg {
        let lo = ~v.x + 1u;
        m = vec2<u32>(lo, ~v.y + select(0u, 1u, lo == 0u));
    }
    if m.x == 0u && m.y == 0u {
        return 0u;
    }
    let sign = select(0u, 1u << sign_bit, neg);
    let p = mant + 1u;
    let n = select(32u - countLeadingZeros(m.x), 64u - countLeadingZeros(m.y), m.y != 0u);
    var kept: u32;
    var e = n - 1u;
    if n > p {
        let s = n - p;
        kept = shr64(m, s);
        let half = bit64(m, s - 1u) == 1u;
        let sticky = below64(m, s - 1u);
        if half && (sticky || (kept & 1u) == 1u) {
            kept += 1u;
            if kept == (1u << p) {
                kept = kept >> 1u;
                e += 1u;
            }
        }
    } else {
        kept = m.x << (p - n);
    }
    let biased = e + bias;
    if biased >= top {
        return sign | (top << mant);
    }
    return sign | (biased << mant) | (kept & ((1u << mant) - 1u));
}

fn store_exact_int(v: vec2<u32>) -> u32 {
    let z = vec2<u32>(0u, 0u);
    switch OUT_DTYPE {
        case 2u: { return clamp64(v, vec2<u32>(0xFFFFFF80u, 0xFFFFFFFFu), vec2<u32>(127u, 0u)) & 0xFFu; }
        case 3u: { return clamp64(v, z, vec2<u32>(255u, 0u)); }
        case 4u: { return clamp64(v, vec2<u32>(0xFFFF8000u, 0xFFFFFFFFu), vec2<u32>(32767u, 0u)) & 0xFFFFu; }
        case 5u: { return clamp64(v, z, vec2<u32>(65535u, 0u)); }
        case 8u: { return clamp64(v, vec2<u32>(0x80000000u, 0xFFFFFFFFu), vec2<u32>(0x7FFFFFFFu, 0u)); }
        case 9u: { return clamp64(v, z, vec2<u32>(0xFFFFFFFFu, 0u)); }
        case 7u: { return round_int(v, 10u, 15u, 0x1Fu, 15u); }
        case 6u: { return round_int(v, 7u, 127u, 0xFFu, 15u); }
        default: { return round_int(v, 23u, 127u, 0xFFu, 31u); }
    }
}

fn store_acc(acc: vec2<u32>) -> u32 {
    switch FOLD {
        case 0u, 1u, 2u: { return out_bits(acc.x, OUT_DTYPE); }
        case 3u: { return store_exact_int(acc); }
        default: { return acc.x; }
    }
}

@compute @workgroup_size(64)
fn cross_lane(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = params;
    OUT_DTYPE = p.out_dtype;
    let k = invocation(p.groups_x, wg, li);
    let ssize = p.src.size;
    if ALL_AXIS {
        if k != 0u {
            return;
        }
        var acc = vec2<u32>(0u);
        let lanes = opaque(p.channels, wg.z);
        let m = opaque(p.count, wg.z);
        for (var lane = 0u; lane < lanes; lane++) {
            var c = vec4<u32>(0u);
            for (var j = 0u; j < m; j++) {
                let raw = load_raw(walk_byte(p.src, lane, c), ssize);
                if lane == 0u && j == 0u {
                    acc = first(raw, p.scale);
                } else {
                    acc = step(acc, raw, p.scale);
                }
                c = advance(c, p.src.num, 1u);
            }
        }
        store_bits(walk_byte(p.dst, 0u, vec4<u32>(0u)), p.dst.size, store_acc(acc));
        return;
    }
    if QUADS > 0u {
        let k0 = k * 4u * QUADS;
        if k0 >= p.count {
            return;
        }
        let at = walk_byte(p.src, 0u, coords(k0, p.src.num)) >> 4u;
        var acc: array<vec2<u32>, 4u * MAX_QUADS>;
        for (var q = 0u; q < QUADS; q++) {
            let v = memv[at + q];
            acc[4u * q] = first(v.x, p.scale);
            acc[4u * q + 1u] = first(v.y, p.scale);
            acc[4u * q + 2u] = first(v.z, p.scale);
            acc[4u * q + 3u] = first(v.w, p.scale);
        }
        let lanes = opaque(p.channels, wg.z);
        let stride = p.src.lane_stride >> 4u;
        for (var lane = 1u; lane < lanes; lane++) {
            for (var q = 0u; q < QUADS; q++) {
                let w = memv[at + lane * stride + q];
                acc[4u * q] = step(acc[4u * q], w.x, p.scale);
                acc[4u * q + 1u] = step(acc[4u * q + 1u], w.y, p.scale);
                acc[4u * q + 2u] = step(acc[4u * q + 2u], w.z, p.scale);
                acc[4u * q + 3u] = step(acc[4u * q + 3u], w.w, p.scale);
            }
        }
        let d = walk_byte(p.dst, 0u, coords(k0, p.dst.num));
        let ds = p.dst.size;
        for (var i = 0u; i < 4u * QUADS; i++) {
            store_bits(d + i * ds, ds, store_acc(acc[i]));
        }
        return;
    }
    if k >= p.count {
        return;
    }
    let byte = walk_byte(p.src, 0u, coords(k, p.src.num));
    var acc = first(load_raw(byte, ssize), p.scale);
    let lanes = opaque(p.channels, wg.z);
    for (var lane = 1u; lane < lanes; lane++) {
        acc = step(acc, load_raw(byte + lane * p.src.lane_stride, ssize), p.scale);
    }
    store_bits(walk_byte(p.dst, 0u, coords(k, p.dst.num)), p.dst.size, store_acc(acc));
}
