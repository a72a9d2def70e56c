// Coordinates of TENSOR4D walks, shared by every kernel.
//
// No integer division and no dynamically indexed vectors: llvmpipe (Mesa's
// software Vulkan, which CI runs) divides one lane at a time and keeps
// dynamically indexed vectors in memory, which costs more than the fold.

// floor(n / d) for n < 2^30 and 1 <= d < 2^24, exact whatever the precision
// of f32 division (WGSL allows 2.5 ULP): an estimate, one f32 correction
// step (then within one), one integer correction. Wrapping u32/i32
// arithmetic keeps the intermediate remainders exact.
fn udiv(n: u32, d: u32) -> u32 {
    let fd = f32(d);
    var q = u32(f32(n) / fd);
    q = bitcast<u32>(bitcast<i32>(q) + i32(floor(f32(bitcast<i32>(n - q * d)) / fd)));
    let r = bitcast<i32>(n - q * d);
    return q + select(0u, 1u, r >= i32(d)) - select(0u, 1u, r < 0);
}

// `o`'s coordinates in a walk over `num` (dim 0 fastest); o < the product.
fn coords(o: u32, num: vec4<u32>) -> vec4<u32> {
    let q0 = udiv(o, num.x);
    let q1 = udiv(q0, num.y);
    let q2 = udiv(q1, num.z);
    return vec4<u32>(o - q0 * num.x, q0 - q1 * num.y, q1 - q2 * num.z, q2);
}

// Steps coordinates `c` over `num` by `by` along dim 0 (`by` divides num.x,
// c.x a multiple of `by`): the odometer from one output to the next.
fn advance(c: vec4<u32>, num: vec4<u32>, by: u32) -> vec4<u32> {
    let x = c.x + by;
    let cx = x >= num.x;
    let y = c.y + select(0u, 1u, cx);
    let cy = cx && y >= num.y;
    let z = c.z + select(0u, 1u, cy);
    let cz = cy && z >= num.z;
    return vec4<u32>(select(x, 0u, cx), select(y, 0u, cy), select(z, 0u, cz), c.w + select(0u, 1u, cz));
}
