//! The element conversions of SPEC §6 as small pure functions over bits: the
//! one place for EC-13 (store conversions), EC-19 (f32 subnormals flushed) and
//! EC-20 (canonical NaNs).
//!
//! Every backend computes in f32: an input element is loaded to f32
//! ([`load_f32`]), folded with [`add`]/[`mul`] or compared, and stored to the
//! output dtype ([`store_f32`]). The functions work on integer bit patterns
//! with shifts, masks and leading-zero counts only, so the WGSL shader can
//! mirror them line by line (WGSL lets devices round `f32(i32)` and
//! `pack2x16float` differently, and may assume NaN, inf and subnormals away).
//! Rust's own casts (`as`) and the `half` crate are used only in the tests, as
//! independent cross-checks.

/// Sign bit of an f32.
pub const F32_SIGN: u32 = 0x8000_0000;
/// Exponent field of an f32.
pub const F32_EXP: u32 = 0x7F80_0000;
/// Mantissa field of an f32.
pub const F32_MANT: u32 = 0x007F_FFFF;
/// +inf as f32 bits.
pub const F32_INF: u32 = 0x7F80_0000;
/// −inf as f32 bits: the MAX identity (EC-11).
pub const F32_NEG_INF: u32 = 0xFF80_0000;

/// EC-20: the canonical NaN stored to FP32 and FP32R.
pub const CANONICAL_NAN_F32: u32 = 0x7FC0_0000;
/// EC-20: the canonical NaN stored to FP16.
pub const CANONICAL_NAN_F16: u16 = 0x7E00;
/// EC-20: the canonical NaN stored to BF16.
pub const CANONICAL_NAN_BF16: u16 = 0x7FC0;

/// The input dtypes the emulator executes (EC-13b), as a closed enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InType {
    /// uint8.
    U8,
    /// int8.
    I8,
    /// uint16.
    U16,
    /// int16.
    I16,
    /// uint32.
    U32,
    /// int32.
    I32,
    /// int64.
    I64,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE binary32.
    F32,
}

/// The output dtypes the emulator executes (EC-13b), as a closed enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutType {
    /// uint8.
    U8,
    /// int8.
    I8,
    /// uint16.
    U16,
    /// int16.
    I16,
    /// uint32.
    U32,
    /// int32.
    I32,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE binary32.
    F32,
    /// binary32 "with the hardware's round mode": stores the f32 bits (EC-13).
    F32r,
}

use crate::isa::Dtype;

impl InType {
    /// Every executable input dtype.
    pub const ALL: [InType; 10] = [
        InType::U8,
        InType::I8,
        InType::U16,
        InType::I16,
        InType::U32,
        InType::I32,
        InType::I64,
        InType::F16,
        InType::Bf16,
        InType::F32,
    ];

    /// EC-13b: the executable input dtypes; `None` for any other byte.
    pub const fn from_dtype(d: Dtype) -> Option<InType> {
        Some(match d {
            Dtype::UINT8 => InType::U8,
            Dtype::INT8 => InType::I8,
            Dtype::UINT16 => InType::U16,
            Dtype::INT16 => InType::I16,
            Dtype::UINT32 => InType::U32,
            Dtype::INT32 => InType::I32,
            Dtype::INT64 => InType::I64,
            Dtype::FP16 => InType::F16,
            Dtype::BFLOAT16 => InType::Bf16,
            Dtype::FP32 => InType::F32,
            _ => return None,
        })
    }

    /// The ISA dtype.
    pub const fn dtype(self) -> Dtype {
        match self {
            InType::U8 => Dtype::UINT8,
            InType::I8 => Dtype::INT8,
            InType::U16 => Dtype::UINT16,
            InType::I16 => Dtype::INT16,
            InType::U32 => Dtype::UINT32,
            InType::I32 => Dtype::INT32,
            InType::I64 => Dtype::INT64,
            InType::F16 => Dtype::FP16,
            InType::Bf16 => Dtype::BFLOAT16,
            InType::F32 => Dtype::FP32,
        }
    }

    /// Element size in bytes.
    pub const fn size(self) -> usize {
        match self {
            InType::U8 | InType::I8 => 1,
            InType::U16 | InType::I16 | InType::F16 | InType::Bf16 => 2,
            InType::U32 | InType::I32 | InType::F32 => 4,
            InType::I64 => 8,
        }
    }
}

impl OutType {
    /// Every executable output dtype.
    pub const ALL: [OutType; 10] = [
        OutType::U8,
        OutType::I8,
        OutType::U16,
        OutType::I16,
        OutType::U32,
        OutType::I32,
        OutType::F16,
        OutType::Bf16,
        OutType::F32,
        OutType::F32r,
    ];

    /// EC-13b: the executable output dtypes; `None` for any other byte.
    pub const fn from_dtype(d: Dtype) -> Option<OutType> {
        Some(match d {
            Dtype::UINT8 => OutType::U8,
            Dtype::INT8 => OutType::I8,
            Dtype::UINT16 => OutType::U16,
            Dtype::INT16 => OutType::I16,
            Dtype::UINT32 => OutType::U32,
            Dtype::INT32 => OutType::I32,
            Dtype::FP16 => OutType::F16,
            Dtype::BFLOAT16 => OutType::Bf16,
            Dtype::FP32 => OutType::F32,
            Dtype::FP32R => OutType::F32r,
            _ => return None,
        })
    }

    /// The ISA dtype.
    pub const fn dtype(self) -> Dtype {
        match self {
            OutType::U8 => Dtype::UINT8,
            OutType::I8 => Dtype::INT8,
            OutType::U16 => Dtype::UINT16,
            OutType::I16 => Dtype::INT16,
            OutType::U32 => Dtype::UINT32,
            OutType::I32 => Dtype::INT32,
            OutType::F16 => Dtype::FP16,
            OutType::Bf16 => Dtype::BFLOAT16,
            OutType::F32 => Dtype::FP32,
            OutType::F32r => Dtype::FP32R,
        }
    }

    /// Element size in bytes.
    pub const fn size(self) -> usize {
        match self {
            OutType::U8 | OutType::I8 => 1,
            OutType::U16 | OutType::I16 | OutType::F16 | OutType::Bf16 => 2,
            OutType::U32 | OutType::I32 | OutType::F32 | OutType::F32r => 4,
        }
    }

    /// `(min, max)` of an integer output type; `None` for the float types.
    pub const fn int_range(self) -> Option<(i64, i64)> {
        Some(match self {
            OutType::U8 => (0, u8::MAX as i64),
            OutType::I8 => (i8::MIN as i64, i8::MAX as i64),
            OutType::U16 => (0, u16::MAX as i64),
            OutType::I16 => (i16::MIN as i64, i16::MAX as i64),
            OutType::U32 => (0, u32::MAX as i64),
            OutType::I32 => (i32::MIN as i64, i32::MAX as i64),
            _ => return None,
        })
    }
}

// ---------------------------------------------------------------------------
// Classification and EC-19.

/// True when `bits` is an f32 NaN (exponent all ones, mantissa non-zero).
#[inline(always)]
pub const fn f32_is_nan(bits: u32) -> bool {
    bits & !F32_SIGN > F32_INF
}

/// EC-19: an f32 subnormal (exponent field zero) becomes zero of the same
/// sign; every other value is unchanged. Tests the exponent bits, never a
/// float compare.
#[inline(always)]
pub const fn flush_subnormal(bits: u32) -> u32 {
    if bits & F32_EXP == 0 {
        bits & F32_SIGN
    } else {
        bits
    }
}

/// [`flush_subnormal`] on an `f32` value.
#[inline(always)]
pub fn ftz(x: f32) -> f32 {
    f32::from_bits(flush_subnormal(x.to_bits()))
}

/// The fold's add: IEEE binary32 round-to-nearest-even, then EC-19 on the result.
#[inline(always)]
pub fn add(a: f32, b: f32) -> f32 {
    ftz(a + b)
}

/// The AVG scale multiply (EC-12: one multiply, never fused): IEEE binary32
/// round-to-nearest-even, then EC-19 on the result.
#[inline(always)]
pub fn mul(a: f32, b: f32) -> f32 {
    ftz(a * b)
}

// ---------------------------------------------------------------------------
// Loads: every executable in-dtype to f32 bits (SPEC §6 "load conversions").

/// Rounds a normalised significand to f32 bits, round to nearest, ties to even.
/// `n` has its leading one in bit 31; `sticky` says whether any bit below `n`
/// was dropped; `e` is the unbiased exponent of the leading one (0..=63).
#[inline(always)]
const fn round_normalised(n: u32, sticky: bool, e: u32) -> u32 {
    let kept = n >> 8; // 24 bits: the leading one and 23 mantissa bits
    let rest = n & 0xFF; // the first dropped bit is 0x80
    let bits = ((e + 127) << 23) + (kept & F32_MANT);
    // Round up when above half, or exactly half and the kept value is odd.
    // A carry out of the mantissa bumps the exponent, which is the right answer.
    let up = rest > 0x80 || (rest == 0x80 && (sticky || kept & 1 == 1));
    bits + up as u32
}

/// An unsigned 32-bit integer to f32 bits, round to nearest, ties to even.
#[inline(always)]
pub const fn u32_to_f32_bits(m: u32) -> u32 {
    if m == 0 {
        return 0;
    }
    let lz = m.leading_zeros();
    // Below 2^24 the low 8 bits of `m << lz` are zero: exact.
    round_normalised(m << lz, false, 31 - lz)
}

/// An unsigned 64-bit integer (given as its two 32-bit halves, as a shader
/// holds it) to f32 bits, round to nearest, ties to even.
#[inline(always)]
pub const fn u64_halves_to_f32_bits(hi: u32, lo: u32) -> u32 {
    if hi == 0 {
        return u32_to_f32_bits(lo);
    }
    let lz = hi.leading_zeros();
    let n = if lz == 0 {
        hi
    } else {
        (hi << lz) | (lo >> (32 - lz))
    };
    // The bits of `lo` that did not fit in `n`.
    let sticky = if lz == 0 { lo != 0 } else { lo << lz != 0 };
    round_normalised(n, sticky, 63 - lz)
}

/// A signed 32-bit integer to f32 bits: sign and magnitude, then [`u32_to_f32_bits`].
#[inline(always)]
pub const fn i32_to_f32_bits(v: i32) -> u32 {
    let sign = if v < 0 { F32_SIGN } else { 0 };
    sign | u32_to_f32_bits(v.unsigned_abs())
}

/// A signed 64-bit integer to f32 bits: sign and magnitude, then [`u64_halves_to_f32_bits`].
#[inline(always)]
pub const fn i64_to_f32_bits(v: i64) -> u32 {
    let sign = if v < 0 { F32_SIGN } else { 0 };
    let m = v.unsigned_abs();
    sign | u64_halves_to_f32_bits((m >> 32) as u32, m as u32)
}

/// FP16 bits to f32 bits: exact (every fp16, subnormals included, is a normal
/// f32, so EC-19 never applies). NaN stays NaN.
#[inline(always)]
pub const fn f16_to_f32_bits(h: u16) -> u32 {
    let h = h as u32;
    let sign = (h & 0x8000) << 16;
    let exp = (h >> 10) & 0x1F;
    let mant = h & 0x3FF;
    if exp == 0x1F {
        // inf or NaN
        return sign | F32_INF | (mant << 13);
    }
    if exp == 0 {
        if mant == 0 {
            return sign;
        }
        // Subnormal: mant · 2^-24. With its leading one at bit p the value is
        // 1.f · 2^(p-24), biased exponent p + 103.
        let p = 31 - mant.leading_zeros();
        return sign | ((p + 103) << 23) | ((mant << (23 - p)) & F32_MANT);
    }
    sign | ((exp + 112) << 23) | (mant << 13)
}

/// BF16 bits to f32 bits: the top half of an f32, then EC-19 (a bf16
/// subnormal widens to an f32 subnormal and is flushed).
#[inline(always)]
pub const fn bf16_to_f32_bits(b: u16) -> u32 {
    flush_subnormal((b as u32) << 16)
}

/// FP32 input bits as the fold sees them: EC-19 flushes subnormals.
#[inline(always)]
pub const fn f32_load_bits(bits: u32) -> u32 {
    flush_subnormal(bits)
}

/// Loads one element of `ty`, given as raw little-endian bits in the low bytes
/// of `raw`, to the f32 the fold uses.
#[inline(always)]
pub const fn load_f32_bits(ty: InType, raw: u64) -> u32 {
    match ty {
        InType::U8 => u32_to_f32_bits(raw as u8 as u32),
        InType::I8 => i32_to_f32_bits(raw as u8 as i8 as i32),
        InType::U16 => u32_to_f32_bits(raw as u16 as u32),
        InType::I16 => i32_to_f32_bits(raw as u16 as i16 as i32),
        InType::U32 => u32_to_f32_bits(raw as u32),
        InType::I32 => i32_to_f32_bits(raw as u32 as i32),
        InType::I64 => i64_to_f32_bits(raw as i64),
        InType::F16 => f16_to_f32_bits(raw as u16),
        InType::Bf16 => bf16_to_f32_bits(raw as u16),
        InType::F32 => f32_load_bits(raw as u32),
    }
}

/// [`load_f32_bits`] as an `f32`.
#[inline(always)]
pub fn load_f32(ty: InType, raw: u64) -> f32 {
    f32::from_bits(load_f32_bits(ty, raw))
}

// ---------------------------------------------------------------------------
// Stores: f32 to every executable out-dtype (EC-13, EC-20).

/// EC-13/EC-20: f32 to FP32 (and FP32R) bits: the bits, NaN made canonical.
#[inline(always)]
pub const fn f32_to_f32_store_bits(f: u32) -> u32 {
    if f32_is_nan(f) { CANONICAL_NAN_F32 } else { f }
}

/// EC-13/EC-20: f32 to FP16 bits, round to nearest even, overflow to ±inf,
/// fp16 subnormal results kept, NaN → 0x7E00.
#[inline(always)]
pub const fn f32_to_f16_bits(f: u32) -> u16 {
    let sign = ((f >> 16) & 0x8000) as u16;
    let exp = ((f >> 23) & 0xFF) as i32;
    let mant = f & F32_MANT;
    if exp == 0xFF {
        return if mant != 0 {
            CANONICAL_NAN_F16
        } else {
            sign | 0x7C00
        };
    }
    // The fp16 biased exponent of the value.
    let e = exp - 127 + 15;
    if e >= 0x1F {
        return sign | 0x7C00; // overflow: ±inf, never saturate
    }
    if e <= 0 {
        // fp16 subnormal range: the result is round(value / 2^-24) units.
        // value / 2^-24 = m · 2^(e - 14) with m the 24-bit significand.
        if exp == 0 || e < -10 {
            // f32 zero/subnormal, or below half the smallest fp16 subnormal:
            // rounds to zero (e = -10 is the first case that can reach 1 unit).
            return sign;
        }
        let m = mant | 0x0080_0000;
        let shift = (14 - e) as u32; // 14..=24
        let kept = m >> shift;
        let rest = m & ((1 << shift) - 1);
        let half = 1 << (shift - 1);
        let up = rest > half || (rest == half && kept & 1 == 1);
        // A carry into bit 10 yields the smallest normal: still correct bits.
        return sign | (kept + up as u32) as u16;
    }
    let kept = mant >> 13;
    let rest = mant & 0x1FFF;
    let up = rest > 0x1000 || (rest == 0x1000 && kept & 1 == 1);
    // A carry out of the mantissa bumps the exponent; out of 0x7BFF it gives inf.
    sign | ((((e as u32) << 10) | kept) + up as u32) as u16
}

/// EC-13/EC-20: f32 to BF16 bits, round to nearest even, overflow to ±inf,
/// NaN → 0x7FC0.
#[inline(always)]
pub const fn f32_to_bf16_bits(f: u32) -> u16 {
    if f32_is_nan(f) {
        return CANONICAL_NAN_BF16;
    }
    let kept = f >> 16;
    let rest = f & 0xFFFF;
    let up = rest > 0x8000 || (rest == 0x8000 && kept & 1 == 1);
    // A carry into the exponent is right, and out of the largest finite value gives inf.
    (kept + up as u32) as u16
}

/// EC-13: f32 to an integer in `[min, max]` (a 32-bit or narrower range):
/// truncate toward zero, then saturate; NaN → 0. Computed on the bits with
/// 32-bit arithmetic only.
#[inline(always)]
pub const fn f32_to_int_sat(f: u32, min: i64, max: i64) -> i64 {
    if f32_is_nan(f) {
        return 0;
    }
    let neg = f & F32_SIGN != 0;
    let exp = ((f >> 23) & 0xFF) as i32 - 127;
    // The truncated magnitude, or `None` when it is at least 2^32 (inf included),
    // which saturates every 32-bit range.
    let mag: Option<u32> = if exp < 0 {
        Some(0)
    } else if exp >= 32 {
        None
    } else {
        let m = (f & F32_MANT) | 0x0080_0000;
        Some(if exp >= 23 {
            m << (exp - 23)
        } else {
            m >> (23 - exp)
        })
    };
    match mag {
        None => {
            if neg {
                min
            } else {
                max
            }
        }
        Some(m) => {
            let v = if neg { -(m as i64) } else { m as i64 };
            if v < min {
                min
            } else if v > max {
                max
            } else {
                v
            }
        }
    }
}

/// Stores an f32 (given as bits) to `ty`: the element's little-endian bits in
/// the low bytes of the result.
#[inline(always)]
pub const fn store_f32_bits(ty: OutType, f: u32) -> u32 {
    match ty {
        OutType::F32 | OutType::F32r => f32_to_f32_store_bits(f),
        OutType::F16 => f32_to_f16_bits(f) as u32,
        OutType::Bf16 => f32_to_bf16_bits(f) as u32,
        OutType::U8 => f32_to_int_sat(f, 0, u8::MAX as i64) as u32,
        OutType::I8 => f32_to_int_sat(f, i8::MIN as i64, i8::MAX as i64) as u8 as u32,
        OutType::U16 => f32_to_int_sat(f, 0, u16::MAX as i64) as u32,
        OutType::I16 => f32_to_int_sat(f, i16::MIN as i64, i16::MAX as i64) as u16 as u32,
        OutType::U32 => f32_to_int_sat(f, 0, u32::MAX as i64) as u32,
        OutType::I32 => f32_to_int_sat(f, i32::MIN as i64, i32::MAX as i64) as u32,
    }
}

/// [`store_f32_bits`] from an `f32`.
#[inline(always)]
pub const fn store_f32(ty: OutType, f: f32) -> u32 {
    store_f32_bits(ty, f.to_bits())
}

/// MaxPoolSelect's store: the window position written as an integer, never
/// through f32 (SPEC §6). EC-10 guarantees it fits the unsigned out dtype.
#[inline(always)]
pub const fn store_index(ty: OutType, index: u32) -> u32 {
    match ty {
        OutType::U8 | OutType::I8 => index & 0xFF,
        OutType::U16 | OutType::I16 | OutType::F16 | OutType::Bf16 => index & 0xFFFF,
        _ => index,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints() -> Vec<u64> {
        let mut v: Vec<u64> = vec![0, 1, 2, 3, 255, 256, 65535, 65536];
        for b in 0..64 {
            let p = 1u64 << b;
            v.extend([p - 1, p, p + 1, p.wrapping_mul(3), p | (p >> 1) | 1]);
            // Around each rounding boundary of a 24-bit significand.
            if b >= 24 {
                let ulp = 1u64 << (b - 23);
                for k in [ulp / 2 - 1, ulp / 2, ulp / 2 + 1, ulp + ulp / 2] {
                    v.push(p.wrapping_add(k));
                    v.push(p.wrapping_add(ulp).wrapping_add(k));
                }
            }
        }
        v.push(u64::MAX);
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            v.push(s >> (s % 64));
        }
        v
    }

    #[test]
    fn integer_loads_match_rust_casts() {
        // Rust's int → float `as` rounds to nearest, ties to even (the Reference, "Numeric cast").
        for m in ints() {
            let (hi, lo) = ((m >> 32) as u32, m as u32);
            assert_eq!(u64_halves_to_f32_bits(hi, lo), (m as f32).to_bits(), "{m}");
            assert_eq!(
                i64_to_f32_bits(m as i64),
                (m as i64 as f32).to_bits(),
                "{m}"
            );
            assert_eq!(u32_to_f32_bits(lo), (lo as f32).to_bits(), "{lo}");
            assert_eq!(i32_to_f32_bits(lo as i32), (lo as i32 as f32).to_bits());
        }
    }

    #[test]
    fn f16_load_matches_half_for_every_value() {
        for h in 0..=u16::MAX {
            let want = half::f16::from_bits(h).to_f32();
            let got = f32::from_bits(f16_to_f32_bits(h));
            if want.is_nan() {
                assert!(got.is_nan(), "{h:#06x}");
            } else {
                assert_eq!(got.to_bits(), want.to_bits(), "{h:#06x}");
            }
        }
    }

    fn f32_samples() -> Vec<u32> {
        let mut v = vec![];
        for e in 0..=255u32 {
            for m in [
                0, 1, 0x1000, 0x1FFF, 0x2000, 0x3000, 0x7FFF, 0x8000, 0x8001, 0x18000, 0x7F_FFFF,
            ] {
                v.push((e << 23) | m);
                v.push(F32_SIGN | (e << 23) | m);
            }
        }
        let mut s = 0x1234_5678u32;
        for _ in 0..200_000 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            v.push(s);
        }
        v
    }

    #[test]
    fn f16_store_matches_half() {
        for f in f32_samples() {
            let x = f32::from_bits(f);
            let want = half::f16::from_f32(x).to_bits();
            let got = f32_to_f16_bits(f);
            if x.is_nan() {
                assert_eq!(got, CANONICAL_NAN_F16);
            } else {
                assert_eq!(got, want, "{f:#010x}");
            }
        }
    }

    #[test]
    fn bf16_store_matches_half() {
        for f in f32_samples() {
            let x = f32::from_bits(f);
            let got = f32_to_bf16_bits(f);
            if x.is_nan() {
                assert_eq!(got, CANONICAL_NAN_BF16);
            } else {
                assert_eq!(got, half::bf16::from_f32(x).to_bits(), "{f:#010x}");
            }
        }
    }

    #[test]
    fn int_stores_match_saturating_casts() {
        // Rust's float → int `as` truncates toward zero, saturates, and maps NaN to 0.
        for f in f32_samples() {
            let x = f32::from_bits(f);
            assert_eq!(store_f32_bits(OutType::U8, f), x as u8 as u32);
            assert_eq!(store_f32_bits(OutType::I8, f), x as i8 as u8 as u32);
            assert_eq!(store_f32_bits(OutType::U16, f), x as u16 as u32);
            assert_eq!(store_f32_bits(OutType::I16, f), x as i16 as u16 as u32);
            assert_eq!(store_f32_bits(OutType::U32, f), x as u32, "{f:#x}");
            assert_eq!(store_f32_bits(OutType::I32, f), x as i32 as u32);
        }
    }

    #[test]
    fn flush_keeps_sign_and_normals() {
        assert_eq!(flush_subnormal(0x0000_0001), 0);
        assert_eq!(flush_subnormal(0x8000_0001), 0x8000_0000);
        assert_eq!(flush_subnormal(0x807F_FFFF), 0x8000_0000);
        assert_eq!(flush_subnormal(0x0080_0000), 0x0080_0000);
        assert_eq!(flush_subnormal(0x7FC0_0001), 0x7FC0_0001);
        assert_eq!(bf16_to_f32_bits(0x0001), 0);
        assert_eq!(bf16_to_f32_bits(0x8040), 0x8000_0000);
        // The smallest normals minus a little: an add that lands on a subnormal is flushed.
        let a = f32::from_bits(0x0080_0001);
        let b = f32::from_bits(0x8080_0000);
        assert_eq!(add(a, b).to_bits(), 0);
        assert_eq!(mul(f32::MIN_POSITIVE, -0.5).to_bits(), 0x8000_0000);
    }
}
