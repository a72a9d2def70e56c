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
    units: u32,     // pieces per element (1 when converting)
    unit: u32,      // bytes per piece: 1, 2 or 4
    groups_x: u32,
    in_dtype: u32,
    out_dtype: u32,
    pad: vec2<u32>,
}

@group(0) @binding(1) var<uniform> params: Params;

// The memory byte of element k of walk `w`. The address is exact modulo
// 2^32, and validation keeps every element's address in the region.
fn chip_byte(w: DmaWalk, k: u32) -> u32 {
    let a = w.start + (k / w.num0) * w.step1 + (k % w.num0) * w.step0;
    return w.base + (a >> w.shift) * w.part_bytes + (a & ((1u << w.shift) - 1u));
}

@compute @workgroup_size(64)
fn dma(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = params;
    let id = invocation(p.groups_x, wg, li);
    if id >= p.total {
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
