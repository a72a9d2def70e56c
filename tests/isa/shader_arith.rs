//! `add_f32_bits` of shaders/arith.wgsl: AVG's running sum (EC-12, EC-19)
//! in integer arithmetic, so that no GPU's fast-math setting can change a
//! bit. A GPU test sees only the sums random data happens to make; this
//! test runs a line-for-line Rust transcription over the cases that matter
//! (cancellation, ties, carries, overflow, zeros, infinities, NaN) and
//! millions of random pairs, against the host's IEEE addition — and first
//! checks that the shader still says what is transcribed.

use tpb_emu::device::gpu::kernels::POOL_WGSL;

/// The shader's text of `add_f32_bits`, which `add_f32_bits` below transcribes.
const WGSL_ADD: &str = "fn add_f32_bits(a: u32, b: u32) -> u32 {
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
}";

const SIGN: u32 = 0x8000_0000;
const F32_CANONICAL_NAN: u32 = 0x7FC0_0000;

/// WGSL's `select(f, t, c)`.
fn select<T>(f: T, t: T, c: bool) -> T {
    if c { t } else { f }
}

fn is_nan(b: u32) -> bool {
    (b & 0x7FFF_FFFF) > 0x7F80_0000
}

fn add_f32_bits(a: u32, b: u32) -> u32 {
    let swap = (b & 0x7FFF_FFFF) > (a & 0x7FFF_FFFF);
    let x = select(a, b, swap);
    let y = select(b, a, swap);
    let ex = (x >> 23) & 0xFF;
    let ey = (y >> 23) & 0xFF;
    let mx = select(0, ((x & 0x7F_FFFF) | 0x80_0000) << 3, ex != 0);
    let my0 = select(0, ((y & 0x7F_FFFF) | 0x80_0000) << 3, ey != 0);
    let d = (ex - ey).min(31);
    let lost = my0 & ((1u32 << d) - 1);
    let my = (my0 >> d) | select(0, 1, lost != 0);
    let sub = ((x ^ y) & SIGN) != 0;
    let mut s = select(mx.wrapping_add(my), mx.wrapping_sub(my), sub);
    let carry = s >= 0x800_0000;
    s = select(s, (s >> 1) | (s & 1), carry);
    let left = select(s.leading_zeros().wrapping_sub(5), 0, carry || s == 0);
    s <<= left;
    let mut e = ex as i32 + select(0, 1, carry) - left as i32;
    let g = s & 7;
    let mut m = s >> 3;
    m += select(0, 1, g > 4 || (g == 4 && (m & 1) == 1));
    let over = m >> 24;
    m >>= over;
    e += over as i32;
    let sign = x & SIGN;
    let mut r = sign | ((e.clamp(0, 254) as u32) << 23) | (m & 0x7F_FFFF);
    r = select(r, sign | 0x7F80_0000, e >= 255);
    r = select(r, sign, e <= 0);
    r = select(r, select(sign, 0, sub), s == 0);
    r = select(r, x, ex == 0xFF);
    select(r, F32_CANONICAL_NAN, is_nan(x) || (ey == 0xFF && sub))
}

/// EC-19 on bits: a subnormal becomes a zero of the same sign.
fn flush(b: u32) -> u32 {
    if b & 0x7F80_0000 == 0 { b & SIGN } else { b }
}

/// The CPU reference's sum (`convert::add`: IEEE binary32, then EC-19), with
/// NaN made canonical as every store does.
fn reference(a: u32, b: u32) -> u32 {
    let r = flush((f32::from_bits(a) + f32::from_bits(b)).to_bits());
    if is_nan(r) { F32_CANONICAL_NAN } else { r }
}

fn check(a: u32, b: u32) {
    let (a, b) = (flush(a), flush(b)); // inputs are loaded values: flushed
    assert_eq!(
        add_f32_bits(a, b),
        reference(a, b),
        "{a:#010x} + {b:#010x} ({} + {})",
        f32::from_bits(a),
        f32::from_bits(b)
    );
}

#[test]
fn the_shader_still_says_what_is_transcribed() {
    assert!(
        POOL_WGSL.contains(WGSL_ADD),
        "add_f32_bits changed in shaders/arith.wgsl: update this transcription"
    );
}

#[test]
fn special_values() {
    let specials = [
        0x0000_0000u32, // +0
        0x8000_0000,    // -0
        0x7F80_0000,    // +inf
        0xFF80_0000,    // -inf
        0x7FC0_0000,    // NaN
        0xFFC0_0001,    // -NaN with payload
        0x7F80_0001,    // signalling NaN
        0x0080_0000,    // min normal
        0x8080_0000,
        0x7F7F_FFFF, // max finite
        0xFF7F_FFFF,
        0x3F80_0000, // 1
        0xBF80_0000,
        0x3F7F_FFFF,
        0x3F80_0001,
    ];
    for a in specials {
        for b in specials {
            check(a, b);
        }
    }
}

#[test]
fn hand_derived_sums() {
    let f = f32::to_bits;
    // Exact cancellation is +0; -0 + -0 stays -0.
    assert_eq!(add_f32_bits(f(1.5), f(-1.5)), 0);
    assert_eq!(add_f32_bits(0x8000_0000, 0x8000_0000), 0x8000_0000);
    // A tie rounds to even: 1 + 2^-24 is 1, (1 + 2^-23) + 2^-24 is 1 + 2^-22.
    assert_eq!(add_f32_bits(f(1.0), f(2f32.powi(-24))), f(1.0));
    assert_eq!(
        add_f32_bits(f(1.0 + 2f32.powi(-23)), f(2f32.powi(-24))),
        f(1.0 + 2f32.powi(-22))
    );
    // Overflow to inf; inf - inf is NaN.
    assert_eq!(add_f32_bits(f(f32::MAX), f(f32::MAX)), 0x7F80_0000);
    assert_eq!(add_f32_bits(0x7F80_0000, 0xFF80_0000), F32_CANONICAL_NAN);
    // A difference below 2^-126 flushes to a zero of its sign (EC-19).
    assert_eq!(add_f32_bits(0x0080_0001, 0x8080_0000), 0);
    assert_eq!(add_f32_bits(0x8080_0001, 0x0080_0000), 0x8000_0000);
}

/// xorshift64*, seeded: reproducible without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
    }
}

#[test]
fn structured_pairs_cancellation_ties_and_alignment() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..400_000 {
        let a = rng.next();
        // b within a few exponents of a (alignment, guard bits, ties,
        // cancellation), either sign, mantissa random or near a's.
        let ea = (a >> 23) & 0xFF;
        let d = rng.next() % 30;
        let eb = ea.saturating_sub(d).clamp(1, 254);
        let mb = match rng.next() % 4 {
            0 => a & 0x7F_FFFF,
            1 => (a & 0x7F_FFFF) ^ (1 << (rng.next() % 23)),
            2 => 0x7F_FFFF,
            _ => rng.next() & 0x7F_FFFF,
        };
        let b = (rng.next() & SIGN) | (eb << 23) | mb;
        check(a, b);
        check(b, a);
    }
}

#[test]
fn random_pairs() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for _ in 0..2_000_000 {
        check(rng.next(), rng.next());
    }
}
