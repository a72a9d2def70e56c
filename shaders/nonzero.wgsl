// NonzeroWithCount (0xF2), EC-56: one workgroup per processed lane (the
// lanes ≡ 0 mod 16, every 16th from `first_lane`); its 64 invocations take
// contiguous chunks of the T src positions, count their nonzeros, take the
// prefix of the counts before them from workgroup memory, then write their
// nonzeros' positions (+ index_offset, mod 2^32) and the padding positions
// of their chunk; invocation 0 writes the count N at position T. The
// positions are written in walk order, as the CPU reference
// (src/device/cpu/nonzero.rs) does; `is_nonzero` mirrors
// src/device/ops/nonzero.rs.

override FLOAT_IN: bool = false;

// Mirrors `NzParams` in src/device/gpu/lane_kernels.rs.
struct Params {
    src: Walk,
    dst: Walk,
    first_lane: u32,
    count: u32,
    index_offset: u32,
    padding: u32,
}

@group(0) @binding(1) var<uniform> params: Params;

var<workgroup> counts: array<u32, 64>;

// EC-56: a bit-level zero test (FP32 ±0 is zero; NaN and subnormals are not).
fn is_nonzero(x: u32) -> bool {
    if FLOAT_IN {
        return (x & 0x7FFFFFFFu) != 0u;
    }
    return x != 0u;
}

@compute @workgroup_size(64)
fn nonzero(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = params;
    let lane = p.first_lane + 16u * wg.x;
    let t = p.count;
    let per = (t + 63u) >> 6u;
    let a = min(li * per, t);
    let b = min(a + per, t);
    let len = opaque(b - a, wg.z);
    var c = coords(a, p.src.num);
    var n = 0u;
    for (var j = 0u; j < len; j++) {
        n += select(0u, 1u, is_nonzero(load_raw(walk_byte(p.src, lane, c), 4u)));
        c = advance(c, p.src.num, 1u);
    }
    counts[li] = n;
    workgroupBarrier();
    var before = 0u;
    var total = 0u;
    for (var i = 0u; i < 64u; i++) {
        let v = counts[i];
        before += select(0u, v, i < li);
        total += v;
    }
    // Positions before..before+n get this chunk's nonzeros.
    c = coords(a, p.src.num);
    var d = coords(min(before, t), p.dst.num);
    for (var j = 0u; j < len; j++) {
        if is_nonzero(load_raw(walk_byte(p.src, lane, c), 4u)) {
            atomicStore(&mem[walk_byte(p.dst, lane, d) >> 2u], a + j + p.index_offset);
            d = advance(d, p.dst.num, 1u);
        }
        c = advance(c, p.src.num, 1u);
    }
    // Padding: the positions of [a, b) at or past N.
    let pa = max(a, total);
    if pa < b {
        var q = coords(pa, p.dst.num);
        let np = opaque(b - pa, wg.z);
        for (var j = 0u; j < np; j++) {
            atomicStore(&mem[walk_byte(p.dst, lane, q) >> 2u], p.padding);
            q = advance(q, p.dst.num, 1u);
        }
    }
    if li == 0u {
        atomicStore(&mem[walk_byte(p.dst, lane, coords(t, p.dst.num)) >> 2u], total);
    }
}
