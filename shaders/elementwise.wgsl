// The elementwise kernels of the POOL engine — Copy/Cast (cast.wgsl), Iota
// (iota.wgsl), Tensor-Tensor (tensor_tensor.wgsl): for each lane and walk
// position k, element k of each source walk is read, the family's
// `element` combines them, and the result goes to element k of the dst walk.
// The CPU reference (src/device/cpu/elementwise.rs) defines the semantics.
//
// Composed after memory.wgsl, convert.wgsl and walk.wgsl and before the
// family's file, which defines `element` and the override constants it
// needs (see src/device/gpu/kernels.rs). Each invocation runs `per`
// consecutive positions of one lane: coordinates are computed once, then
// stepped by an odometer — or, when the host knows every walked operand's
// row holds whole segments with x step 1 (`ROWS`), by plain increments.
// Written for llvmpipe too (docs/gpu.md): no integer division, parameters
// read once at the top, loop bounds through `opaque`, per-shape facts as
// override constants. EC-42 guarantees that a source byte the dst walk also
// writes belongs to the same lane and position, read just before it is
// written; no byte is shared across invocations except within a word of
// 1- or 2-byte outputs, which `store_bits` writes atomically.

// One operand's walk; mirrors `OperandParams` in src/device/gpu/elementwise.rs.
struct Operand {
    num: vec4<u32>,
    step: vec4<i32>,
    base: u32,        // byte offset in `mem` of lane 0's element index 0
    lane_stride: u32, // bytes between consecutive lanes (one partition)
    size: u32,        // element bytes
    pad: u32,
}

// Mirrors `ElemParams` in src/device/gpu/elementwise.rs (208 bytes; the Rust
// side asserts the size and offsets).
struct Params {
    dst: Operand,
    src0: Operand,
    src1: Operand,
    gen_num: vec4<u32>,  // Iota: the DATA4D counts
    gen_step: vec4<i32>, // Iota: the DATA4D steps
    channels: u32,
    count: u32,          // positions per lane
    groups_x: u32,       // workgroups along x of a 2-D dispatch
    segments: u32,       // invocations per lane
    per: u32,            // positions per invocation
    iota_base: u32,      // Iota: DATA4D base
    iota_mult: u32,      // Iota: channel_multiplier
    pad: u32,
}

@group(0) @binding(1) var<uniform> params: Params;

// Sources the family reads (0, 1 or 2), and whether it walks the Iota
// generator.
override SOURCES: u32 = 1u;
override GENERATOR: bool = false;
// 1 when every walked operand (and the generator) has x step 1 and an x
// count that is a multiple of `per`: a segment then never leaves a row.
override ROWS: bool = false;
// With ROWS, when the dst has 1- or 2-byte elements and every segment starts
// 4-byte aligned: the segment's outputs are assembled into the whole words
// they fill and stored without read-modify-write atomics.
override WORDS: bool = false;
// With ROWS, when every dst segment starts 16-byte aligned: the outputs are
// assembled into vec4s and stored through `memv` (any element size).
override DST_VEC: bool = false;
// With ROWS, when src0's (src1's) elements are 4 bytes and every segment
// starts 16-byte aligned: they are read as vec4s through `memv`.
override SRC0_VEC: bool = false;
override SRC1_VEC: bool = false;

// The byte of the element at coordinates `c` of operand `o` in lane `lane`.
fn element_byte(o: Operand, lane: u32, c: vec4<u32>) -> u32 {
    return o.base + lane * o.lane_stride + bitcast<u32>(dot(vec4<i32>(c), o.step) * i32(o.size));
}

// The element of `size` bytes at `byte`, in the low bits (higher bits zero).
fn load_bits(byte: u32, size: u32) -> u32 {
    let w = load_word(byte);
    let mask = select(select(0xFFFFu, 0xFFu, size == 1u), 0xFFFFFFFFu, size == 4u);
    return (w >> ((byte & 3u) * 8u)) & mask;
}

@compute @workgroup_size(64)
fn elementwise(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = params;
    let id = invocation(p.groups_x, wg, li);
    if id >= p.channels * p.segments {
        return;
    }
    let lane = udiv(id, p.segments);
    let first = (id - lane * p.segments) * p.per;
    let n = opaque(min(p.per, p.count - first), wg.z);
    var cd = coords(first, p.dst.num);
    var c0 = vec4<u32>(0u);
    var c1 = vec4<u32>(0u);
    var cg = vec4<u32>(0u);
    if SOURCES > 0u {
        c0 = coords(first, p.src0.num);
    }
    if SOURCES > 1u {
        c1 = coords(first, p.src1.num);
    }
    if GENERATOR {
        cg = coords(first, p.gen_num);
    }
    let lane_base = p.iota_base + lane * p.iota_mult; // EC-47 (wraps)
    let bd = element_byte(p.dst, lane, cd);
    let b0 = element_byte(p.src0, lane, c0);
    let b1 = element_byte(p.src1, lane, c1);
    let g0 = dot(vec4<i32>(cg), p.gen_step);
    let dmask = select(select(0xFFFFu, 0xFFu, p.dst.size == 1u), 0xFFFFFFFFu, p.dst.size == 4u);
    var word = 0u;
    // Shift registers (no dynamically indexed vectors): the vec4 being
    // assembled for the dst, and the rest of each source's last vec4 load.
    var dv = vec4<u32>(0u);
    var s0 = vec4<u32>(0u);
    var s1 = vec4<u32>(0u);
    for (var j = 0u; j < n; j++) {
        var a = 0u;
        var b = 0u;
        var g = g0;
        var dbyte = bd;
        if ROWS {
            if SOURCES > 0u {
                if SRC0_VEC {
                    if (j & 3u) == 0u {
                        s0 = memv[(b0 + j * 4u) >> 4u];
                    }
                    a = s0.x;
                    s0 = vec4<u32>(s0.y, s0.z, s0.w, 0u);
                } else {
                    a = load_bits(b0 + j * p.src0.size, p.src0.size);
                }
            }
            if SOURCES > 1u {
                if SRC1_VEC {
                    if (j & 3u) == 0u {
                        s1 = memv[(b1 + j * 4u) >> 4u];
                    }
                    b = s1.x;
                    s1 = vec4<u32>(s1.y, s1.z, s1.w, 0u);
                } else {
                    b = load_bits(b1 + j * p.src1.size, p.src1.size);
                }
            }
            g = g0 + i32(j);
            dbyte = bd + j * p.dst.size;
        } else {
            if SOURCES > 0u {
                a = load_bits(element_byte(p.src0, lane, c0), p.src0.size);
                c0 = advance(c0, p.src0.num, 1u);
            }
            if SOURCES > 1u {
                b = load_bits(element_byte(p.src1, lane, c1), p.src1.size);
                c1 = advance(c1, p.src1.num, 1u);
            }
            if GENERATOR {
                g = dot(vec4<i32>(cg), p.gen_step);
                cg = advance(cg, p.gen_num, 1u);
            }
            dbyte = element_byte(p.dst, lane, cd);
            cd = advance(cd, p.dst.num, 1u);
        }
        let v = element(lane_base, g, a, b);
        if WORDS || DST_VEC {
            // The segment is whole words (whole vec4s with DST_VEC).
            word = word | ((v & dmask) << ((dbyte & 3u) * 8u));
            let end = dbyte + p.dst.size;
            if (end & 3u) == 0u {
                if DST_VEC {
                    dv = vec4<u32>(dv.y, dv.z, dv.w, word);
                    if (end & 15u) == 0u {
                        memv[dbyte >> 4u] = dv;
                    }
                } else {
                    atomicStore(&mem[dbyte >> 2u], word);
                }
                word = 0u;
            }
        } else {
            store_bits(dbyte, p.dst.size, v);
        }
    }
}

// Dense vectors (`elementwise_dense`): every walked operand visits its
// lane's elements in order from a 16-byte aligned start (position k is
// element k), the sources have 4-byte elements and the dst 4- or 2-byte
// ones. Each invocation takes 8 positions — two vec4 loads per source, one
// or two vec4 stores (DENSE_NARROW: 2-byte dst elements, packed in pairs) —
// with no loop: on llvmpipe the per-element loop of `elementwise` is most of
// its cost.
override DENSE_NARROW: bool = false;

fn dense4(o: Operand, lane: u32, k: u32) -> vec4<u32> {
    return memv[(o.base + lane * o.lane_stride + k * 4u) >> 4u];
}

fn pack2(lo: u32, hi: u32) -> u32 {
    return (lo & 0xFFFFu) | (hi << 16u);
}

@compute @workgroup_size(64)
fn elementwise_dense(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = params;
    let id = invocation(p.groups_x, wg, li);
    if id >= p.channels * p.segments {
        return;
    }
    let lane = udiv(id, p.segments);
    let first = (id - lane * p.segments) * 8u;
    let lb = p.iota_base + lane * p.iota_mult; // EC-47 (wraps)
    let g = i32(first);
    var a = vec4<u32>(0u);
    var b = vec4<u32>(0u);
    var c = vec4<u32>(0u);
    var d = vec4<u32>(0u);
    if SOURCES > 0u {
        a = dense4(p.src0, lane, first);
        c = dense4(p.src0, lane, first + 4u);
    }
    if SOURCES > 1u {
        b = dense4(p.src1, lane, first);
        d = dense4(p.src1, lane, first + 4u);
    }
    let lo = vec4<u32>(
        element(lb, g, a.x, b.x),
        element(lb, g + 1, a.y, b.y),
        element(lb, g + 2, a.z, b.z),
        element(lb, g + 3, a.w, b.w),
    );
    let hi = vec4<u32>(
        element(lb, g + 4, c.x, d.x),
        element(lb, g + 5, c.y, d.y),
        element(lb, g + 6, c.z, d.z),
        element(lb, g + 7, c.w, d.w),
    );
    let at = (p.dst.base + lane * p.dst.lane_stride + first * p.dst.size) >> 4u;
    if DENSE_NARROW {
        memv[at] = vec4<u32>(pack2(lo.x, lo.y), pack2(lo.z, lo.w), pack2(hi.x, hi.y), pack2(hi.z, hi.w));
    } else {
        memv[at] = lo;
        memv[at + 1u] = hi;
    }
}
