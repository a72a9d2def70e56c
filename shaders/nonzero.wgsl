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
// addresses from the position alone (no coordinates); the second pass and
// the padding store whole vec4s where a chunk owns all four words.
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

var<workgroup> counts: array<vec4<u32>, 16>;

// EC-56: a bit-level zero test (FP32 ±0 is zero; NaN and subnormals are not).
fn is_nonzero(x: u32) -> bool {
    if FLOAT_IN {
        return (x & 0x7FFFFFFFu) != 0u;
    }
    return x != 0u;
}

// After the barrier: the nonzeros of the chunks before chunk `li`, and of all.
// The counts are read a vec4 at a time: a loop of 64 scalar reads per
// invocation cost llvmpipe as much as a pass over the chunk.
fn counts_to(li: u32) -> vec2<u32> {
    var before = vec4<u32>(0u);
    var total = vec4<u32>(0u);
    let q = li >> 2u;
    for (var i = 0u; i < 16u; i++) {
        let c = counts[i];
        before += select(vec4<u32>(0u), c, i < q);
        total += c;
    }
    let b = before + first_lanes(li & 3u, counts[q], vec4<u32>(0u));
    return vec2<u32>(b.x + b.y + b.z + b.w, total.x + total.y + total.z + total.w);
}

fn nz(x: u32) -> u32 {
    return select(0u, 1u, is_nonzero(x));
}

// Lanes below `c` from `a`, the rest from `b` (per component: a select of
// integer vectors by a vector condition has no GLSL before 4.50).
fn first_lanes(c: u32, a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    return vec4<u32>(select(b.x, a.x, 0u < c), select(b.y, a.y, 1u < c),
                     select(b.z, a.z, 2u < c), select(b.w, a.w, 3u < c));
}

// Lanes [lo, hi) of `v` to words 4·vb + lane, a word at a time (constant
// component indices keep `v` in registers).
fn store_lanes(vb: u32, v: vec4<u32>, lo: u32, hi: u32) {
    let w = 4u * vb;
    if lo <= 0u && 0u < hi {
        atomicStore(&mem[w], v.x);
    }
    if lo <= 1u && 1u < hi {
        atomicStore(&mem[w + 1u], v.y);
    }
    if lo <= 2u && 2u < hi {
        atomicStore(&mem[w + 2u], v.z);
    }
    if lo <= 3u && 3u < hi {
        atomicStore(&mem[w + 3u], v.w);
    }
}

// The dense form's nonzero masks: bit i of word g of invocation li says
// whether position 32·g + i of its chunk is nonzero; word g of every
// invocation side by side (`masks[64·g + li]`). 32 words each hold a chunk
// of 1,024 positions, so T ≤ 65,536 (`DENSE_MAX_COUNT` in
// src/device/gpu/lane_kernels.rs).
var<workgroup> masks: array<u32, 2048>;

// Word i (0..8) of a block of eight mask words held in two vectors: selects,
// not memory (llvmpipe runs each workgroup-memory load as a loop over the
// SIMD lanes, even where no lane needs it).
fn pick(m: array<vec4<u32>, 2>, i: u32) -> u32 {
    let q = select(m[0], m[1], i >= 4u);
    let j = i & 3u;
    return select(select(q.x, q.y, j == 1u), select(q.z, q.w, j == 3u), j >= 2u);
}

// A cursor over a block: (the bits of word `at` not yet taken, at). `take`
// moves it past the next set bit and returns (the bits left, at, that bit's
// position in the block); the caller knows there is one. `words` has bit i
// set where the block's word i is nonzero: the next word is found without a
// loop (a loop costs llvmpipe its body once even where no lane needs it).
fn take(c: vec2<u32>, m: array<vec4<u32>, 2>, words: u32) -> vec3<u32> {
    let empty = c.x == 0u;
    let at = select(c.y, firstTrailingBit(words & (0xFFFFFFFEu << c.y)), empty);
    let w = select(c.x, pick(m, at), empty);
    return vec3<u32>(w & (w - 1u), at, 32u * at + firstTrailingBit(w));
}

// Bit i set where word i of `q` is nonzero.
fn nonzero_words(q: vec4<u32>) -> u32 {
    return select(0u, 1u, q.x != 0u) | select(0u, 2u, q.y != 0u) | select(0u, 4u, q.z != 0u)
        | select(0u, 8u, q.w != 0u);
}

// Mask words g to g + 3 of invocation li; those at or past `words` (stale: the
// first pass wrote none) read as zero.
fn mask_quad(li: u32, g: u32, words: u32) -> vec4<u32> {
    let i = g * WORKGROUP + li;
    let w = vec4<u32>(masks[i], masks[i + WORKGROUP], masks[i + 2u * WORKGROUP],
                      masks[i + 3u * WORKGROUP]);
    return first_lanes(words - min(g, words), w, vec4<u32>(0u));
}

// The output of `compact_dense` so far: words 4·vb + [0, fill) of `v` not
// yet stored; `lo` is the first of them that the chunk owns when vb is the
// chunk's first vec4 (d0's vec4, shared with the chunk before).
struct Out {
    v: vec4<u32>,
    vb: u32,
    fill: u32,
    first: u32,
    lo: u32,
}

// Stores `o.v`'s words below `hi` that the chunk owns, a word at a time.
fn store_out(o: Out, hi: u32) {
    store_lanes(o.vb, o.v, select(0u, o.lo, o.vb == o.first), hi);
}

// The dense second pass for a chunk with zeros: the positions (+ k0) of the
// nonzeros in its first `words` mask words go to words d0.. in order, read
// from the masks of the first pass — not the src — and driven by the
// output: one branch-free step per nonzero, one vec4 store per four (the
// cost on software rasterizers is per memory access and per loop, and a
// loop over the input quads made one load and one store per quad). The
// masks come eight words at a time into registers; the first and last vec4
// may hold words of the chunks before and after: a word at a time.
fn compact_dense(li: u32, k0: u32, words: u32, d0: u32) {
    var o = Out(vec4<u32>(0u), d0 >> 2u, d0 & 3u, d0 >> 2u, d0 & 3u);
    for (var b = 0u; b < words; b += 8u) {
        let m = array<vec4<u32>, 2>(mask_quad(li, b, words), mask_quad(li, b + 4u, words));
        let ones = countOneBits(m[0]) + countOneBits(m[1]);
        let live = nonzero_words(m[0]) | (nonzero_words(m[1]) << 4u);
        var r = ones.x + ones.y + ones.z + ones.w;
        let p0 = k0 + 32u * b;
        var c = vec2<u32>(m[0].x, 0u);
        // Fill the vec4 begun before (or d0's), then store it.
        let head = min((4u - o.fill) & 3u, r);
        for (var j = 0u; j < head; j++) {
            let t = take(c, m, live);
            c = t.xy;
            o.v[o.fill + j] = p0 + t.z;
        }
        r -= head;
        o.fill += head;
        if o.fill == 4u {
            store_out(o, 4u);
            o.vb += 1u;
            o.fill = 0u;
        }
        // Whole vec4s: o.fill is 0 here unless r is.
        let whole = r >> 2u;
        for (var i = 0u; i < whole; i++) {
            let x = take(c, m, live);
            let y = take(x.xy, m, live);
            let z = take(y.xy, m, live);
            let w = take(z.xy, m, live);
            c = w.xy;
            memv[o.vb + i] = vec4<u32>(p0) + vec4<u32>(x.z, y.z, z.z, w.z);
        }
        o.vb += whole;
        let tail = r & 3u;
        for (var j = 0u; j < tail; j++) {
            let t = take(c, m, live);
            c = t.xy;
            o.v[j] = p0 + t.z;
        }
        o.fill += tail;
    }
    store_out(o, o.fill);
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
    // The first pass: the chunk's nonzero masks, eight quads to a word.
    var n = 0u;
    for (var g = 0u; 8u * g < quads; g++) {
        let q0 = sv + 8u * g;
        let qn = min(8u, quads - 8u * g);
        var m = 0u;
        for (var j = 0u; j < qn; j++) {
            let v = memv[q0 + j];
            m |= (nz(v.x) | (nz(v.y) << 1u) | (nz(v.z) << 2u) | (nz(v.w) << 3u)) << (4u * j);
        }
        masks[g * WORKGROUP + li] = m;
        n += countOneBits(m);
    }
    counts[li >> 2u][li & 3u] = n;
    workgroupBarrier();
    let sums = counts_to(li);
    let before = sums.x;
    let total = sums.y;
    let dw = (p.dst.base + lane * p.dst.lane_stride) >> 2u;
    let d0 = dw + before;
    if n == 4u * quads && (d0 & 3u) == 0u {
        // Every position of the chunk is nonzero: its positions a.. go to
        // before.. unchanged, as whole vec4s, with no second read.
        let k0 = a + p.index_offset;
        for (var q = 0u; q < quads; q++) {
            let k = k0 + 4u * q;
            memv[(d0 >> 2u) + q] = vec4<u32>(k, k + 1u, k + 2u, k + 3u);
        }
    } else if n != 0u {
        compact_dense(li, a + p.index_offset, (quads + 7u) >> 3u, d0);
    }
    // Padding: the positions of [a, b) at or past N; the whole vec4s among
    // them (which no other invocation touches) in one store each.
    let pa = max(a, total);
    let e = dw + max(b, pa);
    var j = opaque(dw + pa, z);
    let head = min(e, (j + 3u) & ~3u);
    for (; j < head; j++) {
        atomicStore(&mem[j], p.padding);
    }
    let pad4 = vec4<u32>(p.padding);
    for (; j + 4u <= e; j += 4u) {
        memv[j >> 2u] = pad4;
    }
    for (; j < e; j++) {
        atomicStore(&mem[j], p.padding);
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
    counts[li >> 2u][li & 3u] = n;
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
