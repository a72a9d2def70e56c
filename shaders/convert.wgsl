// The SPEC §6 load and store conversions on bits, shared by every kernel:
// dtype → f32 (integer→f32 and fp16 rounding by bits, EC-19 flush) and
// f32 → dtype (EC-13 rounding and saturation, EC-20 canonical NaNs). The CPU
// reference (src/device/convert.rs) mirrors these functions one for one.
// Everything GPUs may do differently is integer bit arithmetic here.

const INT8: u32 = 2u;
const UINT8: u32 = 3u;
const INT16: u32 = 4u;
const UINT16: u32 = 5u;
const BFLOAT16: u32 = 6u;
const FP16: u32 = 7u;
const INT32: u32 = 8u;
const UINT32: u32 = 9u;
const INT64: u32 = 12u;

const SIGN: u32 = 0x80000000u;
const NEG_INF: u32 = 0xFF800000u;
const F32_CANONICAL_NAN: u32 = 0x7FC00000u; // EC-20
const F16_CANONICAL_NAN: u32 = 0x7E00u;     // EC-20
const BF16_CANONICAL_NAN: u32 = 0x7FC0u;    // EC-20

fn dtype_size(d: u32) -> u32 {
    switch d {
        case 2u, 3u: { return 1u; }
        case 4u, 5u, 6u, 7u: { return 2u; }
        case 12u: { return 8u; }
        default: { return 4u; }
    }
}

// ---- f32 bit classification (compilers may assume no NaN/inf exist) ----

fn is_nan(b: u32) -> bool {
    return (b & 0x7FFFFFFFu) > 0x7F800000u;
}

// EC-19: an f32 subnormal becomes a zero of the same sign.
fn flush(b: u32) -> u32 {
    if (b & 0x7F800000u) == 0u {
        return b & SIGN;
    }
    return b;
}

// ---- integer → f32, round to nearest even, by bits ----

// Rounds the magnitude `hi:lo` (a 64-bit integer, hi != 0 or lo != 0) to f32 bits.
fn u64_to_f32_bits(hi: u32, lo: u32) -> u32 {
    if hi == 0u && lo == 0u {
        return 0u;
    }
    var top: u32; // position of the leading one, 0..=63
    if hi != 0u {
        top = 63u - countLeadingZeros(hi);
    } else {
        top = 31u - countLeadingZeros(lo);
    }
    if top <= 23u {
        // Exact: fits the 24-bit significand (so hi == 0).
        return ((top + 127u) << 23u) + ((lo << (23u - top)) & 0x7FFFFFu);
    }
    let shift = top - 23u; // 1..=40 bits to drop
    // m = value >> shift (24 bits); rest = the dropped bits compared with half.
    var m: u32;
    var above_half: bool;
    var at_half: bool;
    if shift < 32u {
        m = (lo >> shift) | select(0u, hi << (32u - shift), shift > 0u);
        let dropped = lo & ((1u << shift) - 1u);
        let half = 1u << (shift - 1u);
        above_half = dropped > half;
        at_half = dropped == half;
    } else {
        let s = shift - 32u; // 0..=8
        m = hi >> s;
        if s == 0u {
            above_half = lo > SIGN;
            at_half = lo == SIGN;
        } else {
            let dropped_hi = hi & ((1u << s) - 1u);
            let half_hi = 1u << (s - 1u);
            above_half = dropped_hi > half_hi || (dropped_hi == half_hi && lo != 0u);
            at_half = dropped_hi == half_hi && lo == 0u;
        }
    }
    let round_up = above_half || (at_half && (m & 1u) == 1u);
    // A carry out of the significand increments the exponent, as it should.
    return ((top + 127u) << 23u) + (m & 0x7FFFFFu) + select(0u, 1u, round_up);
}

fn u32_to_f32_bits(v: u32) -> u32 {
    return u64_to_f32_bits(0u, v);
}

fn i32_to_f32_bits(v: u32) -> u32 {
    if (v & SIGN) != 0u {
        return SIGN | u32_to_f32_bits(~v + 1u);
    }
    return u32_to_f32_bits(v);
}

fn i64_to_f32_bits(hi: u32, lo: u32) -> u32 {
    if (hi & SIGN) != 0u {
        // Two's-complement negate hi:lo.
        let nlo = ~lo + 1u;
        let nhi = ~hi + select(0u, 1u, nlo == 0u);
        return SIGN | u64_to_f32_bits(nhi, nlo);
    }
    return u64_to_f32_bits(hi, lo);
}

// fp16 widens exactly; fp16 subnormals are f32 normals.
fn f16_to_f32_bits(h: u32) -> u32 {
    let sign = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1Fu;
    let m = h & 0x3FFu;
    if e == 0x1Fu {
        return sign | 0x7F800000u | (m << 13u);
    }
    if e == 0u {
        if m == 0u {
            return sign;
        }
        let top = 31u - countLeadingZeros(m); // 0..=9; value = m · 2^-24
        return sign | ((top + 103u) << 23u) | ((m << (23u - top)) & 0x7FFFFFu);
    }
    return sign | ((e + 112u) << 23u) | (m << 13u);
}

// An element of dtype `d` (its bits in the low bytes of `v`, higher bits
// zero) converted to f32 bits (SPEC §6 load conversions); not INT64.
fn to_f32_bits(v: u32, d: u32) -> u32 {
    switch d {
        case 2u: { // INT8
            return i32_to_f32_bits(bitcast<u32>(i32(v << 24u) >> 24u));
        }
        case 3u, 5u, 9u: { // UINT8, UINT16, UINT32
            return u32_to_f32_bits(v);
        }
        case 4u: { // INT16
            return i32_to_f32_bits(bitcast<u32>(i32(v << 16u) >> 16u));
        }
        case 6u: { // BFLOAT16: exact, then EC-19
            return flush(v << 16u);
        }
        case 7u: { // FP16
            return f16_to_f32_bits(v);
        }
        case 8u: { // INT32
            return i32_to_f32_bits(v);
        }
        default: { // FP32: EC-19
            return flush(v);
        }
    }
}

// The element at `byte` converted to f32 bits.
fn load_f32_bits(byte: u32, d: u32) -> u32 {
    let w = load_word(byte);
    if d == INT64 { // little-endian: low word first
        return i64_to_f32_bits(load_word(byte + 4u), w);
    }
    let size = dtype_size(d);
    let mask = select(select(0xFFFFu, 0xFFu, size == 1u), 0xFFFFFFFFu, size == 4u);
    return to_f32_bits((w >> ((byte & 3u) * 8u)) & mask, d);
}

// ---- f32 → out dtype (EC-13, EC-20) ----

fn f32_to_f16_bits(b: u32) -> u32 {
    if is_nan(b) {
        return F16_CANONICAL_NAN;
    }
    let sign = (b >> 16u) & 0x8000u;
    let a = b & 0x7FFFFFFFu;
    let e = a >> 23u;
    if e == 0xFFu {
        return sign | 0x7C00u;
    }
    if e == 0u {
        return sign; // zero (subnormals were flushed upstream)
    }
    let m = (a & 0x7FFFFFu) | 0x800000u; // 24-bit significand
    var shift: u32;
    var base: u32;
    if e >= 113u {
        // fp16 normal range (or overflow): keep 11 bits.
        if e >= 143u {
            return sign | 0x7C00u; // >= 2^16 always rounds to inf
        }
        shift = 13u;
        base = (e - 112u) << 10u; // exponent field; the implicit bit is added below
    } else {
        // fp16 subnormal: value = m · 2^(e-150), unit 2^-24.
        shift = 126u - e; // >= 14
        if shift >= 25u {
            return sign; // below half the smallest subnormal
        }
        base = 0u;
    }
    let kept = m >> shift;
    let dropped = m & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    let round_up = dropped > half || (dropped == half && (kept & 1u) == 1u);
    var r: u32;
    if base != 0u {
        // (e16 << 10) + (kept - implicit 1<<10): a carry moves into the exponent, up to inf.
        r = base + (kept & 0x3FFu) + select(0u, 1u, round_up);
    } else {
        r = kept + select(0u, 1u, round_up);
    }
    return sign | r;
}

fn f32_to_bf16_bits(b: u32) -> u32 {
    if is_nan(b) {
        return BF16_CANONICAL_NAN;
    }
    // Round to nearest even on the low 16 bits; overflow reaches inf.
    return (b + 0x7FFFu + ((b >> 16u) & 1u)) >> 16u;
}

// Truncate toward zero, saturate to [lo, hi] (as i32), NaN → 0.
fn f32_to_i32_sat(b: u32, lo: i32, hi: i32) -> i32 {
    if is_nan(b) {
        return 0;
    }
    if (b & 0x7FFFFFFFu) >= 0x4F000000u { // |x| >= 2^31, inf included
        return select(hi, lo, (b & SIGN) != 0u);
    }
    return clamp(i32(bitcast<f32>(b)), lo, hi);
}

fn f32_to_u32_sat(b: u32) -> u32 {
    if is_nan(b) || (b & SIGN) != 0u {
        return 0u; // negative values truncate to 0 or saturate to 0
    }
    if b >= 0x4F800000u { // >= 2^32, inf included
        return 0xFFFFFFFFu;
    }
    return u32(bitcast<f32>(b));
}

// f32 bits `b` as an output of dtype `d` (EC-13, EC-20), in the low bytes.
fn out_bits(b: u32, d: u32) -> u32 {
    switch d {
        case 2u: { return bitcast<u32>(f32_to_i32_sat(b, -128, 127)) & 0xFFu; }
        case 3u: { return bitcast<u32>(f32_to_i32_sat(b, 0, 255)); }
        case 4u: { return bitcast<u32>(f32_to_i32_sat(b, -32768, 32767)) & 0xFFFFu; }
        case 5u: { return bitcast<u32>(f32_to_i32_sat(b, 0, 65535)); }
        case 6u: { return f32_to_bf16_bits(b); }
        case 7u: { return f32_to_f16_bits(b); }
        case 8u: { return bitcast<u32>(f32_to_i32_sat(b, -2147483647 - 1, 2147483647)); }
        case 9u: { return f32_to_u32_sat(b); }
        default: { // FP32, FP32R: the f32 bits, NaN canonical (EC-20)
            return select(b, F32_CANONICAL_NAN, is_nan(b));
        }
    }
}

fn store_f32(byte: u32, d: u32, b: u32) {
    store_bits(byte, dtype_size(d), out_bits(b, d));
}
