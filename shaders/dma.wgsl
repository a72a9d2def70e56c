// DMA_MEMCPY (0xB8) between on-chip places, EC-23, when every element can
// move at once (no dst byte written twice, no byte both read and written:
// `ChipDma::runs_at_once`): one invocation per element, or per `unit`-byte
// piece of an element copied verbatim. Addresses follow SPEC §3's map, so a
// walk may cross partitions (a transpose). A walk in held DRAM (the window
// after PSUM) is flat: shift 31, 0 bytes per partition, since its addresses
// stay below 2^31. The CPU reference is
// `runtime::dma` (`between`, `within`); the conversions are convert.wgsl's.

// EC-23: different dtypes convert in → f32 → out (elements of the dtypes'
// sizes); equal dtypes copy bytes.
override CONVERT: bool = false;
// Rows of adjacent bytes on both sides, of the same shape, every row start
// 16-byte aligned and whole 16-byte pieces long: one invocation per piece,
// moved as a vec4 (a piece never straddles partitions, whose bytes are
// multiples of 16). `units` is then the pieces per row.
override ROWS16: bool = false;

// Mirrors `DmaWalkParams` in src/device/gpu/dma.rs.
struct DmaWalk {
    start: u32,   // address of element (0, 0) from the region's base
    step0: u32,   // steps in bytes, two's complement (wrapping sums)
    step1: u32,
    num0: u32,
    base: u32,    // the region's first byte in the memory buffer
    shift: u32,   // partition shift of the region's addresses
    part_bytes: u32, // bytes per partition in the buffer
    pad: u32,
}

// Mirrors `DmaParams` in src/device/gpu/dma.rs.
struct Params {
    src: DmaWalk,
    dst: DmaWalk,
    total: u32,     // invocations with work: elements × units
    units: u32,     // pieces per element (1 when converting; ROWS16: per row)
    unit: u32,      // bytes per piece: 1, 2, 4 or 16
    groups_x: u32,
    in_dtype: u32,
    out_dtype: u32,
    pad: vec2<u32>,
}

@group(0) @binding(1) var<uniform> params: Params;

// The memory byte of address `a` of walk `w`'s place.
fn place_byte(w: DmaWalk, a: u32) -> u32 {
    return w.base + (a >> w.shift) * w.part_bytes + (a & ((1u << w.shift) - 1u));
}

// The memory byte of element k of walk `w`. The address is exact modulo
// 2^32, and validation keeps every element's address in the region.
fn chip_byte(w: DmaWalk, k: u32) -> u32 {
    return place_byte(w, w.start + (k / w.num0) * w.step1 + (k % w.num0) * w.step0);
}

@compute @workgroup_size(64)
fn dma(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = params;
    let id = invocation(p.groups_x, wg, li);
    if id >= p.total {
        return;
    }
    if ROWS16 {
        let j = id / p.units;
        let piece = (id % p.units) * 16u;
        let s = place_byte(p.src, p.src.start + j * p.src.step1 + piece);
        let d = place_byte(p.dst, p.dst.start + j * p.dst.step1 + piece);
        memv[d >> 4u] = memv[s >> 4u];
        return;
    }
    if CONVERT {
        let b = load_f32_bits(chip_byte(p.src, id), p.in_dtype);
        store_f32(chip_byte(p.dst, id), p.out_dtype, b);
        return;
    }
    let k = id / p.units;
    let piece = (id % p.units) * p.unit;
    let s = chip_byte(p.src, k) + piece;
    let w = load_word(s);
    let v = select((w >> ((s & 3u) * 8u)) & ((1u << ((8u * p.unit) & 31u)) - 1u), w, p.unit == 4u);
    store_bits(chip_byte(p.dst, k) + piece, p.unit, v);
}
