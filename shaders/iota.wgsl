// Iota (0x7E), EC-47 and EC-48: the family function of elementwise.wgsl
// (no sources; the generator walk gives `g` = Σ coord·step). Mirrors
// `iota_value` and `iota_store` in src/device/ops/iota.rs.

override OUT_DTYPE: u32 = 8u;

fn element(lane_base: u32, g: i32, a: u32, b: u32) -> u32 {
    let v = lane_base + bitcast<u32>(g); // EC-47: modulo 2^32
    // EC-48: integer outputs keep the low bits (store_bits masks them);
    // float outputs read v as a signed int32, round to f32, store by EC-13.
    switch OUT_DTYPE {
        case 2u, 3u, 4u, 5u, 8u, 9u: {
            return v;
        }
        default: {
            return out_bits(i32_to_f32_bits(v), OUT_DTYPE);
        }
    }
}
