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
// When the src walk visits consecutive words (position k at byte 4k of the
// lane's start, 16-byte aligned) and the dst walk consecutive words too,
// and T is a multiple of 4: chunks of whole vec4s, read as vec4s, and
// addresses from the position alone (no coordinates).
override DENSE: bool = false;

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

// After the barrier: the nonzeros of the chunks before chunk `li`, and of all.
fn counts_to(li: u32) -> vec2<u32> {
    var before = 0u;
    var total = 0u;
    for (var i = 0u; i < 64u; i++) {
        let c = counts[i];
        before += select(0u, c, i < li);
        total += c;
    }
    return vec2<u32>(before, total);
}

fn nz(x: u32) -> u32 {
    return select(0u, 1u, is_nonzero(x));
}

// The dense form of `nonzero` (see DENSE): the same chunks, positions and
// values, chunk lengths rounded up to whole vec4s.
fn nonzero_dense(p: Params, lane: u32, li: u32, z: u32) {
    let t = p.count;
    let per = (((t + 63u) >> 6u) + 3u) & ~3u;
    let a = min(li * per, t);
    let b = min(a + per, t);
    let quads = opaque((b - a) >> 2u, z);
    let sv = (p.src.base + lane * p.src.lane_stride + a * 4u) >> 4u;
    var n = 0u;
    for (var q = 0u; q < quads; q++) {
        let v = memv[sv + q];
        n += nz(v.x) + nz(v.y) + nz(v.z) + nz(v.w);
    }
    counts[li] = n;
    workgroupBarrier();
    let sums = counts_to(li);
    let before = sums.x;
    let total = sums.y;
    // Positions before..before+n get this chunk's nonzeros.
    let dw = (p.dst.base + lane * p.dst.lane_stride) >> 2u;
    var d = dw + before;
    for (var q = 0u; q < quads; q++) {
        let v = memv[sv + q];
        let k = a + 4u * q + p.index_offset;
        if is_nonzero(v.x) {
            atomicStore(&mem[d], k);
            d += 1u;
        }
        if is_nonzero(v.y) {
            atomicStore(&mem[d], k + 1u);
            d += 1u;
        }
        if is_nonzero(v.z) {
            atomicStore(&mem[d], k + 2u);
            d += 1u;
        }
        if is_nonzero(v.w) {
            atomicStore(&mem[d], k + 3u);
            d += 1u;
        }
    }
    // Padding: the positions of [a, b) at or past N.
    let pa = max(a, total);
    let np = opaque(max(b, pa) - pa, z);
    for (var j = 0u; j < np; j++) {
        atomicStore(&mem[dw + pa + j], p.padding);
    }
    if li == 0u {
        atomicStore(&mem[dw + t], total);
    }
}

@compute @workgroup_size(64)
fn nonzero(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = params;
    let lane = p.first_lane + 16u * wg.x;
    if DENSE {
        nonzero_dense(p, lane, li, wg.z);
        return;
    }
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
    let sums = counts_to(li);
    let before = sums.x;
    let total = sums.y;
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
