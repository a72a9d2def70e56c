// GetSequenceBounds (0xBE), EC-57: one workgroup of 64 invocations on the
// one lane. A run boundary is a position j with j == 0, j == n, or
// id[j] ≠ id[j−1] (`same_id`, mirroring src/device/ops/seq_bounds.rs); a
// non-padding id's start is the last boundary ≤ i, its end the first
// boundary > i — the vendor test's recurrences (§8.3), unrolled. Each
// invocation takes a contiguous chunk, publishes its last and first
// boundary in workgroup memory, and takes the carries from the chunks
// before and after it.

override FLOAT_IN: bool = false;
override FLOAT_OUT: bool = false;

// Mirrors `SbParams` in src/device/gpu/lane_kernels.rs.
struct Params {
    src: Walk,
    dst: Walk,
    count: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(1) var<uniform> params: Params;

var<workgroup> lasts: array<u32, 64>;  // last boundary in [a, b), or NONE
var<workgroup> firsts: array<u32, 64>; // first boundary in (a, b], or NONE

const NONE: u32 = 0xFFFFFFFFu;

// EC-57: FP32 ids are equal iff neither is NaN and the bits are equal or both are ±0.
fn same_id(x: u32, y: u32) -> bool {
    if FLOAT_IN {
        return !is_nan(x) && !is_nan(y) && (x == y || ((x | y) & 0x7FFFFFFFu) == 0u);
    }
    return x == y;
}

fn is_padding(x: u32) -> bool {
    if FLOAT_IN {
        return (x & 0x7FFFFFFFu) == 0u;
    }
    return x == 0u;
}

fn index_bits(v: i32) -> u32 {
    if FLOAT_OUT {
        return bitcast<u32>(f32(v)); // |v| <= 2^24: exact
    }
    return bitcast<u32>(v);
}

fn id_at(j: u32) -> u32 {
    return load_raw(walk_byte(params.src, 0u, coords(j, params.src.num)), 4u);
}

@compute @workgroup_size(64)
fn seq_bounds(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = params;
    let n = p.count;
    let per = (n + 63u) >> 6u;
    let a = min(li * per, n);
    let b = min(a + per, n);
    let len = opaque(b - a, wg.z);
    // Pass 1: this chunk's last boundary in [a, b) and first in (a, b].
    var last = NONE;
    var firstb = NONE;
    var prev = 0u;
    if a > 0u && a < b {
        prev = id_at(a - 1u);
    }
    var c = coords(a, p.src.num);
    for (var j = 0u; j < len; j++) {
        let q = a + j;
        let x = load_raw(walk_byte(p.src, 0u, c), 4u);
        let boundary = q == 0u || !same_id(x, prev);
        if boundary {
            last = q;
            if q > a && firstb == NONE {
                firstb = q;
            }
        }
        prev = x;
        c = advance(c, p.src.num, 1u);
    }
    if a < b && firstb == NONE && (b == n || !same_id(id_at(b), prev)) {
        firstb = b;
    }
    lasts[li] = last;
    firsts[li] = firstb;
    workgroupBarrier();
    var start_carry = 0u;
    var end_carry = n;
    for (var i = 0u; i < 64u; i++) {
        let l = lasts[i];
        if i < li && l != NONE {
            start_carry = max(start_carry, l);
        }
        let f = firsts[i];
        if i > li && f != NONE {
            end_carry = min(end_carry, f);
        }
    }
    if a >= b {
        return;
    }
    // Pass 2, forward: starts at dst positions [a, b).
    var run = start_carry;
    prev = 0u;
    if a > 0u {
        prev = id_at(a - 1u);
    }
    c = coords(a, p.src.num);
    var d = coords(a, p.dst.num);
    for (var j = 0u; j < len; j++) {
        let q = a + j;
        let x = load_raw(walk_byte(p.src, 0u, c), 4u);
        if q == 0u || !same_id(x, prev) {
            run = q;
        }
        let v = select(i32(run), i32(n), is_padding(x));
        atomicStore(&mem[walk_byte(p.dst, 0u, d) >> 2u], index_bits(v));
        prev = x;
        c = advance(c, p.src.num, 1u);
        d = advance(d, p.dst.num, 1u);
    }
    // Pass 2, backward: ends at dst positions [n + a, n + b).
    var next = end_carry;
    if b == n || !same_id(id_at(b), id_at(b - 1u)) {
        next = b;
    }
    for (var j = 0u; j < len; j++) {
        let q = b - 1u - j;
        let x = id_at(q);
        let v = select(i32(next), -1, is_padding(x));
        atomicStore(&mem[walk_byte(p.dst, 0u, coords(n + q, p.dst.num)) >> 2u], index_bits(v));
        if q == 0u || !same_id(x, id_at(q - 1u)) {
            next = q;
        }
    }
}
