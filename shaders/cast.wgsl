// Copy (0x46) and Cast (0x47), EC-45 and EC-46: the family function of
// elementwise.wgsl. Mirrors src/device/cpu/copy.rs.

// 0: the element's bits, unchanged (Copy; Cast between equal dtypes).
// 1: load (SPEC §6, EC-19) then store (EC-13, EC-20) through f32.
override CONVERT: bool = false;
override IN_DTYPE: u32 = 10u;
override OUT_DTYPE: u32 = 10u;

fn element(lane_base: u32, g: i32, a: u32, b: u32) -> u32 {
    if CONVERT {
        return out_bits(to_f32_bits(a, IN_DTYPE), OUT_DTYPE); // EC-46
    }
    return a; // EC-45, EC-46 (equal dtypes)
}
