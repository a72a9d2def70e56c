// f32 addition and multiplication in integer arithmetic, rounded to nearest
// even, with the EC-19 flush of the result: no GPU setting (fast math,
// flush-to-zero before rounding, reassociation) can change a bit, so every
// backend (Vulkan, Metal, DX12, GL) gives the CPU reference's bits. Inputs
// are zero, normal, inf or NaN (already flushed: no subnormals). Branch-free:
// SIMD drivers (llvmpipe) run every branch. `tests/isa/shader_arith.rs` checks a
// line-for-line transcription of both against the host's IEEE arithmetic.

// flush(a + b) (EC-12's running sum, EC-19; EC-51's ADD, and SUBTRACT with
// b's sign flipped). With no subnormal input, an
// inexact sum is always normal, and a sum below 2^-126 is exact (a
// cancellation), so flushing after rounding is the same as before it. A
// NaN result is canonical (every store makes it so anyway).
fn add_f32_bits(a: u32, b: u32) -> u32 {
    // x has the larger magnitude (a on ties), y the smaller.
    let swap = (b & 0x7FFFFFFFu) > (a & 0x7FFFFFFFu);
    let x = select(a, b, swap);
    let y = select(b, a, swap);
    let ex = (x >> 23u) & 0xFFu;
    let ey = (y >> 23u) & 0xFFu;
    // Significands with 3 guard bits (bit 26 the leading one); a zero has none.
    let mx = select(0u, ((x & 0x7FFFFFu) | 0x800000u) << 3u, ex != 0u);
    let my0 = select(0u, ((y & 0x7FFFFFu) | 0x800000u) << 3u, ey != 0u);
    // Align y to x; bits shifted out stick to the lowest bit.
    let d = min(ex - ey, 31u);
    let lost = my0 & ((1u << d) - 1u);
    let my = (my0 >> d) | select(0u, 1u, lost != 0u);
    let sub = ((x ^ y) & SIGN) != 0u;
    var s = select(mx + my, mx - my, sub); // < 2^28; mx >= my
    // Normalize the leading one to bit 26: right by one after a carry
    // (keeping the sticky bit), left after a cancellation (exact).
    let carry = s >= 0x8000000u;
    s = select(s, (s >> 1u) | (s & 1u), carry);
    let left = select(countLeadingZeros(s) - 5u, 0u, carry || s == 0u);
    s = s << left;
    var e = i32(ex) + select(0, 1, carry) - i32(left);
    // Round to nearest even on the guard bits; a carry out moves into e.
    let g = s & 7u;
    var m = s >> 3u;
    m = m + select(0u, 1u, g > 4u || (g == 4u && (m & 1u) == 1u));
    let over = m >> 24u;
    m = m >> over;
    e = e + i32(over);
    let sign = x & SIGN;
    var r = sign | (u32(clamp(e, 0, 254)) << 23u) | (m & 0x7FFFFFu);
    r = select(r, sign | 0x7F800000u, e >= 255);
    r = select(r, sign, e <= 0); // EC-19
    // An exact zero: +0, except -0 + -0 (round to nearest even).
    r = select(r, select(sign, 0u, sub), s == 0u);
    // Infinities and NaN: x is inf or NaN whenever either operand is.
    r = select(r, x, ex == 0xFFu);
    return select(r, F32_CANONICAL_NAN, is_nan(x) || (ey == 0xFFu && sub)); // inf - inf is NaN
}

// flush(a × b) with the product rounded to nearest even (EC-12, EC-19), in
// integer arithmetic: a GPU that flushes subnormals may decide "subnormal"
// before rounding and return 0 where IEEE rounds up to 2^-126. `a` is zero,
// normal, inf or NaN (flushed); so is `b` (Pool's `pool_scale` is normal, EC-9;
// Tensor-Tensor MULT's operands are flushed loads). NaN results are canonical
// (every store makes them so anyway).
fn mul_f32_bits(a: u32, b: u32) -> u32 {
    let sign = (a ^ b) & SIGN;
    let ea = (a >> 23u) & 0xFFu;
    let eb = (b >> 23u) & 0xFFu;
    // The 46- to 48-bit product of the significands, hi:lo, from 16-bit limbs.
    let ma = (a & 0x7FFFFFu) | 0x800000u;
    let mb = (b & 0x7FFFFFu) | 0x800000u;
    let ll = (ma & 0xFFFFu) * (mb & 0xFFFFu);
    let mid = (ma & 0xFFFFu) * (mb >> 16u) + (ma >> 16u) * (mb & 0xFFFFu); // < 2^25
    let lo = ll + (mid << 16u);
    let hi = (ma >> 16u) * (mb >> 16u) + (mid >> 16u) + select(0u, 1u, lo < ll);
    // Keep 24 bits below the leading one (bit 47 or 46), round to nearest even.
    let top47 = hi >= 0x8000u;
    let s = select(23u, 24u, top47);
    let m = (hi << (32u - s)) | (lo >> s);
    let rest = lo & ((1u << s) - 1u);
    let half = 1u << (s - 1u);
    let up = rest > half || (rest == half && (m & 1u) == 1u);
    let e = i32(ea + eb) - 127 + select(0, 1, top47); // biased exponent of m's leading one
    // A carry out of the significand moves into the exponent, up to inf.
    var r = sign | ((u32(max(e, 1)) << 23u) + (m - 0x800000u) + select(0u, 1u, up));
    // Below 2^-126 before rounding, IEEE rounds up to 2^-126 only from
    // [2^-126 - 2^-150, 2^-126), where all 24 kept bits are ones; any other
    // result is subnormal and flushes (EC-19).
    r = select(r, sign | select(0u, 0x800000u, e == 0 && m == 0xFFFFFFu), e <= 0);
    r = select(r, sign | 0x7F800000u, e >= 255);
    // Zeros, infinities and NaN (branch-free: SIMD drivers run every branch).
    let zero = ea == 0u || eb == 0u;
    let inf = ea == 0xFFu || eb == 0xFFu;
    r = select(r, sign, zero);
    r = select(r, sign | 0x7F800000u, inf);
    return select(r, F32_CANONICAL_NAN, is_nan(a) || is_nan(b) || (inf && zero)); // inf × 0 is NaN
}

// flush(a + b) by the adapter's f32 add, for adapters whose adds are IEEE
// (software rasterizers: `ADD_BY_BITS = 0`): WGSL makes + correctly rounded
// on finite values, and a sum of two normal numbers that lands below 2^-126
// is exact, so flushing it afterwards (EC-19) gives add_f32_bits' bits.
// Infinities and NaN, which WGSL leaves indeterminate, are settled by bits:
// NaN in, or inf - inf, gives the canonical NaN; otherwise an infinite
// operand is the result.
fn add_f32_hw(a: u32, b: u32) -> u32 {
    let sum = flush(bitcast<u32>(bitcast<f32>(a) + bitcast<f32>(b)));
    let ia = (a & 0x7FFFFFFFu) == 0x7F800000u;
    let ib = (b & 0x7FFFFFFFu) == 0x7F800000u;
    var r = select(sum, a, ia);
    r = select(r, b, ib && !ia);
    let nan = is_nan(a) || is_nan(b) || (ia && ib && a != b);
    return select(r, F32_CANONICAL_NAN, nan);
}
