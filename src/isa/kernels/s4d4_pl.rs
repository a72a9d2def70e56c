//! `NEURON_ISA_TPB_S4D4_PL_STRUCT`: the 64-byte operand of Pool (0x45) and
//! MaxPoolSelect (0x58), byte-exact to seed 000 §3 / SPEC §5.

use super::KernelOperand;
use crate::isa::enums::{Dtype, PoolDim, PoolFunc};
use crate::isa::layout::{FieldDef, header, operand_layout};
use crate::isa::opcode::Opcode;
use crate::isa::predicates::fail::*;
use crate::isa::predicates::footprint::{Walk, check_overlap};
use crate::isa::predicates::{Target, check_event_modes_emulated};
use crate::isa::record::{Events, Record};
use crate::isa::tensor::{Addr4, Dims, Location, Region, TENSOR4D_BYTES, Tensor4d, Tensor4dBytes};
use crate::limits::{MAX_POOL_ELEMENTS_PER_LANE, PARTITIONS};

operand_layout! {
    /// The decoded S4D4_PL record (seed 000 §3 / SPEC §5). Every byte of the
    /// 64 has a field, so `S4d4Pl::decode(r).encode() == r` for every record
    /// `r`. The text form prints it in its own form 1 (`scale` as a float),
    /// with the keys below.
    S4d4Pl = "S4D4_PL", mod off {
        /// The input walk.
        src: Tensor4d = SRC @ 12, Required("src");
        /// Input element type.
        in_dtype: Dtype = IN_DTYPE @ 32, Required("in");
        /// Output element type.
        out_dtype: Dtype = OUT_DTYPE @ 33, Required("out");
        /// Lanes (1..=128).
        num_active_channels: u8 = NUM_ACTIVE_CHANNELS @ 34, Required("ch");
        /// Must be zero.
        reserved0: u8 = RESERVED0 @ 35, Reserved;
        /// MAX, AVG, or NONE for MaxPoolSelect.
        pool_func: PoolFunc = POOL_FUNC @ 36, Required("func");
        /// Which dims form one window.
        pool_dim: PoolDim = POOL_DIM @ 37, Required("dim");
        /// Must be zero (2 bytes).
        reserved1: [u8; 2] = RESERVED1 @ 38, Reserved;
        /// Bits of the f32 `pool_scale` (kept as bits so every NaN payload
        /// round-trips; little-endian).
        pool_scale_bits: u32 = POOL_SCALE @ 40, Required("scale");
        /// The output walk.
        dst: Tensor4d = DST @ 44, Required("dst");
    }
}

// Seed 000 §3: the hardware offsets, written out once more by hand (the
// macro asserts that the fields tile bytes 12..64, each as wide as its type).
const _: () = assert!(TENSOR4D_BYTES == 20);
const _: () = assert!(off::SRC == 12 && off::IN_DTYPE == 32 && off::OUT_DTYPE == 33);
const _: () = assert!(off::NUM_ACTIVE_CHANNELS == 34 && off::RESERVED0 == 35);
const _: () = assert!(off::POOL_FUNC == 36 && off::POOL_DIM == 37 && off::RESERVED1 == 38);
const _: () = assert!(off::POOL_SCALE == 40 && off::DST == 44);

impl S4d4Pl {
    /// A record with the given opcode and zero events/reserved bytes, `inst_word_len` 16.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        opcode: Opcode,
        pool_func: PoolFunc,
        pool_dim: PoolDim,
        in_dtype: Dtype,
        out_dtype: Dtype,
        num_active_channels: u8,
        pool_scale: f32,
        src: Tensor4d,
        dst: Tensor4d,
    ) -> S4d4Pl {
        S4d4Pl {
            header: header(opcode),
            events: Events::default(),
            src,
            in_dtype,
            out_dtype,
            num_active_channels,
            reserved0: 0,
            pool_func,
            pool_dim,
            reserved1: [0; 2],
            pool_scale_bits: pool_scale.to_bits(),
            dst,
        }
    }

    /// The opcode (Pool or MaxPoolSelect for a valid record).
    pub fn opcode(&self) -> Opcode {
        self.header.opcode
    }

    /// `pool_scale` as f32.
    pub fn pool_scale(&self) -> f32 {
        f32::from_bits(self.pool_scale_bits)
    }

    /// Elements per window: the product of the nums of the pooled dims
    /// (seed 000 §3.4's `period`). `None` when `pool_dim` is not X..XYZW.
    pub fn period(&self) -> Option<u64> {
        let k = self.pool_dim.window_dims()?;
        Some(self.src.num[..k].iter().map(|&n| n as u64).product())
    }

    /// Outputs per lane (`num` in the seed's trace): src elements / period.
    pub fn outputs(&self) -> Option<u64> {
        let p = self.period()?;
        (p != 0).then(|| self.src.elements() / p)
    }
}

/// A borrowed S4D4_PL record whose accessors read each field straight from the
/// 64 bytes. The validator's hot path uses it instead of [`S4d4Pl::decode`]: it
/// reads only the fields a predicate needs, where it needs them, instead of
/// decoding (and copying, and spilling) the whole struct first. Each accessor
/// returns exactly the corresponding field of [`S4d4Pl::decode`].
#[derive(Clone, Copy, Debug)]
pub struct S4d4PlView<'a>(pub &'a Record);

impl<'a> S4d4PlView<'a> {
    /// Byte 0.
    #[inline]
    pub fn opcode(self) -> Opcode {
        self.0.opcode()
    }

    /// The input walk, in place.
    #[inline]
    pub fn src(self) -> Tensor4dBytes<'a> {
        self.tensor(off::SRC)
    }

    /// The output walk, in place.
    #[inline]
    pub fn dst(self) -> Tensor4dBytes<'a> {
        self.tensor(off::DST)
    }

    /// Input element type.
    #[inline]
    pub fn in_dtype(self) -> Dtype {
        Dtype(self.0.u8_at(off::IN_DTYPE))
    }

    /// Output element type.
    #[inline]
    pub fn out_dtype(self) -> Dtype {
        Dtype(self.0.u8_at(off::OUT_DTYPE))
    }

    /// Lanes.
    #[inline]
    pub fn num_active_channels(self) -> u8 {
        self.0.u8_at(off::NUM_ACTIVE_CHANNELS)
    }

    /// reserved0.
    #[inline]
    pub fn reserved0(self) -> u8 {
        self.0.u8_at(off::RESERVED0)
    }

    /// reserved1.
    #[inline]
    pub fn reserved1(self) -> [u8; 2] {
        [
            self.0.u8_at(off::RESERVED1),
            self.0.u8_at(off::RESERVED1 + 1),
        ]
    }

    /// The pool function.
    #[inline]
    pub fn pool_func(self) -> PoolFunc {
        PoolFunc(self.0.u8_at(off::POOL_FUNC))
    }

    /// The window dims.
    #[inline]
    pub fn pool_dim(self) -> PoolDim {
        PoolDim(self.0.u8_at(off::POOL_DIM))
    }

    /// Bits of the f32 `pool_scale`.
    #[inline]
    pub fn pool_scale_bits(self) -> u32 {
        self.0.u32_at(off::POOL_SCALE)
    }

    #[inline]
    fn tensor(self, at: usize) -> Tensor4dBytes<'a> {
        let b = &self.0.0;
        Tensor4dBytes(b[at..at + TENSOR4D_BYTES].try_into().expect("20 bytes"))
    }
}

impl KernelOperand for S4d4Pl {
    /// Form 1 of the text: its own line, not the field table.
    const TEXT_FIELDS: Option<&'static [FieldDef]> = None;

    fn lanes(&self) -> u32 {
        self.num_active_channels as u32
    }

    /// The in-place predicates of [`check`], which the validator calls on
    /// the record's bytes without decoding it (the hot path).
    fn check(&self, r: &Record, t: Target) -> Result<(), Fail> {
        check(r, t)
    }
}

// ---------------------------------------------------------------------------
// Validation: SPEC §5 steps 6 and 7
// ---------------------------------------------------------------------------
//
// SPEC §5 steps 6 and 7 for the S4D4_PL opcodes (Pool, MaxPoolSelect).
//
// This is the validator's hot path (a stream of Pool records), so it is
// written to compile to a short straight run of compares:
// - fields are read in place from the record (`S4d4PlView`, `Tensor4dBytes`)
//   where each predicate uses them, not decoded into a struct first, and
//   each address is resolved once (`Side`);
// - every predicate is a cheap test whose failing branch calls a `#[cold]`
//   constructor (`cold` or a `*_fault` function), so the `Fail` values, and
//   any search for *which* byte or dim failed, live out of line.
//
// The predicates, their order and their `Fail` values are SPEC §5's.

/// Steps 6 and 7 for one S4D4_PL record (inlined into the stream loop).
#[inline(always)]
pub(crate) fn check(r: &Record, t: Target) -> Result<(), Fail> {
    let p = S4d4PlView(r);
    let src = Side::new(Operand::Src, p.src(), p.in_dtype());
    let dst = Side::new(Operand::Dst, p.dst(), p.out_dtype());
    hardware(p, &src, &dst)?;
    emulator(r, p, &src, &dst, t)
}

/// One tensor operand: its descriptor (read in place), its dtype and where
/// its address points.
#[derive(Clone, Copy)]
struct Side<'a> {
    which: Operand,
    tensor: Tensor4dBytes<'a>,
    /// The start address.
    addr: Addr4,
    dtype: Dtype,
    /// The location of the byte address (bits 0..28, mode bits aside),
    /// resolved once for the three predicates that read it.
    loc: Option<Location>,
}

impl<'a> Side<'a> {
    #[inline(always)]
    fn new(which: Operand, tensor: Tensor4dBytes<'a>, dtype: Dtype) -> Side<'a> {
        let addr = tensor.addr();
        Side {
            which,
            tensor,
            addr,
            dtype,
            loc: addr.location(),
        }
    }
}

/// Marks a failing branch cold: `return Err(cold(Fail::..))`. The compiler
/// then lays the passing path out as straight-line code and keeps the `Fail`
/// construction out of it. (It returns the `Fail` rather than a `Result` so
/// the caller still knows statically that the branch is an `Err`.)
#[cold]
#[inline(never)]
fn cold(f: Fail) -> Fail {
    f
}

/// The hardware predicates of `is_valid_s4d4_pl` (seed 000 §3.6), in SPEC §5 step 6 order.
#[inline(always)]
fn hardware(p: S4d4PlView, src: &Side, dst: &Side) -> Result<(), Fail> {
    // s4d4_pl_reserved_zero: one test of the three bytes; the cold path names the first.
    let [r1a, r1b] = p.reserved1();
    if p.reserved0() | r1a | r1b != 0 {
        return Err(reserved_fault(p));
    }
    // in_dtype: not INVALID, UINT64 or outside the enum; not FP32R.
    let (din, dout) = (src.dtype, dst.dtype);
    if matches!(din, Dtype::INVALID | Dtype::UINT64) || din.size().is_none() {
        return Err(cold(Fail::DtypeInvalidCheck {
            operand: Operand::Src,
            dtype: din,
        }));
    }
    if din == Dtype::FP32R {
        return Err(cold(Fail::DtypeFp32rIllegalCheck));
    }
    // out_dtype: EC-35 also rules out INT64 (the engine cannot write 64-bit results).
    if matches!(dout, Dtype::INVALID | Dtype::UINT64 | Dtype::INT64) || dout.size().is_none() {
        return Err(cold(Fail::DtypeInvalidCheck {
            operand: Operand::Dst,
            dtype: dout,
        }));
    }
    let channels = p.num_active_channels();
    start_addr_active_channels(src, channels)?;
    start_addr_active_channels(dst, channels)?;
    let (opcode, func) = (p.opcode(), p.pool_func());
    let pooltype_ok = match opcode {
        Opcode::POOL => matches!(func, PoolFunc::MAX_POOL | PoolFunc::AVG_POOL),
        _ => func == PoolFunc::NONE,
    };
    if !pooltype_ok {
        return Err(cold(Fail::HasValidPooltype {
            opcode,
            pool_func: func,
        }));
    }
    // EC-8: X, XY, XYZ or XYZW.
    if p.pool_dim().window_dims().is_none() {
        return Err(cold(Fail::IsValidSubdim {
            pool_dim: p.pool_dim(),
        }));
    }
    if channels == 0 || channels as u32 > PARTITIONS {
        return Err(cold(Fail::HasValidActiveChannelRange { channels }));
    }
    if opcode == Opcode::MAX_POOL_SELECT
        && !matches!(dout, Dtype::UINT8 | Dtype::UINT16 | Dtype::UINT32)
    {
        return Err(cold(Fail::S4d4PlDtypeCheck { out_dtype: dout }));
    }
    tensor4d_valid(src)?;
    tensor4d_valid(dst)?;
    pool_scale_valid(p)
}

/// `s4d4_pl_reserved_zero`'s detail: the first non-zero reserved byte, in offset order.
#[cold]
#[inline(never)]
fn reserved_fault(p: S4d4PlView) -> Fail {
    let [r1a, r1b] = p.reserved1();
    let reserved = [
        (off::RESERVED0, p.reserved0()),
        (off::RESERVED1, r1a),
        (off::RESERVED1 + 1, r1b),
    ];
    let &(offset, value) = reserved
        .iter()
        .find(|e| e.1 != 0)
        .expect("a reserved byte is non-zero");
    Fail::S4d4PlReservedZero {
        offset: offset as u8,
        value,
    }
}

/// EC-7: start partition + num_active_channels <= 128. Register-mode addresses
/// pass (resolved at run time, EC-5); so does an address outside SBUF/PSUM.
#[inline(always)]
fn start_addr_active_channels(s: &Side, channels: u8) -> Result<(), Fail> {
    if s.addr.is_register() {
        return Ok(());
    }
    match s.loc {
        Some(l) if l.partition + channels as u32 > PARTITIONS => {
            Err(cold(Fail::StartAddrActiveChannels {
                operand: s.which,
                partition: l.partition,
                channels,
            }))
        }
        _ => Ok(()),
    }
}

/// `tensor4d_valid`: region, register-mode rule, alignment, PSUM write dtype, non-zero nums.
#[inline(always)]
fn tensor4d_valid(s: &Side) -> Result<(), Fail> {
    let addr = s.addr.0;
    let fault = |why| {
        Err(cold(Fail::Tensor4dValid {
            operand: s.which,
            why,
        }))
    };
    let size = s.dtype.size().unwrap_or(1);
    if s.addr.is_register() {
        // EC-5: byte 0 < 64 and bits 8..30 zero; region/alignment are resolved at run time.
        if addr & 0xFF >= 64 || addr & 0x7FFF_FF00 != 0 {
            return fault(TensorFault::RegisterMode { addr });
        }
    } else {
        let Some(loc) = s.loc else {
            return fault(TensorFault::Region { addr });
        };
        if s.addr.byte_addr() & (size - 1) != 0 {
            return fault(TensorFault::Alignment { addr, align: size });
        }
        if s.which == Operand::Dst && loc.region == Region::Psum && size != 4 {
            return fault(TensorFault::PsumWriteDtype { dtype: s.dtype });
        }
    }
    if (0..4).any(|d| s.tensor.num(d) == 0) {
        return Err(zero_num_fault(*s));
    }
    Ok(())
}

/// `tensor4d_valid`'s detail for a zero `num_elem`: the first such dim.
/// (By value, like every out-of-line helper here: a reference would force the
/// caller to keep the operand in memory on the hot path.)
#[cold]
#[inline(never)]
fn zero_num_fault(s: Side) -> Fail {
    let dim = (0..4)
        .position(|d| s.tensor.num(d) == 0)
        .expect("a num is zero");
    Fail::Tensor4dValid {
        operand: s.which,
        why: TensorFault::ZeroNum { dim: dim as u8 },
    }
}

/// `s4d4_pool_scale_valid`: exactly 1.0 unless AVG; AVG needs finite and normal (EC-9).
#[inline(always)]
fn pool_scale_valid(p: S4d4PlView) -> Result<(), Fail> {
    let bits = p.pool_scale_bits();
    let func = p.pool_func();
    let ok = if p.opcode() == Opcode::POOL && func == PoolFunc::AVG_POOL {
        f32::from_bits(bits).is_normal()
    } else {
        bits == 1.0f32.to_bits()
    };
    if ok {
        Ok(())
    } else {
        Err(cold(Fail::S4d4PoolScaleValid {
            pool_func: func,
            bits,
        }))
    }
}

/// SPEC §5 step 7: the emulator's own checks, in order.
#[inline(always)]
fn emulator(r: &Record, p: S4d4PlView, src: &Side, dst: &Side, t: Target) -> Result<(), Fail> {
    // emu_addr_mode_supported (EC-5)
    for s in [src, dst] {
        if s.addr.has_mode_bits() {
            return Err(cold(Fail::EmuAddrModeSupported {
                operand: s.which,
                addr: s.addr.0 as u64,
            }));
        }
    }
    // emu_event_mode_supported (EC-2)
    check_event_modes_emulated(r)?;
    // emu_dtype_supported (EC-13b)
    if !src.dtype.emu_readable() {
        return Err(cold(Fail::EmuDtypeSupported {
            operand: Operand::Src,
            dtype: src.dtype,
        }));
    }
    if !dst.dtype.emu_writable() {
        return Err(cold(Fail::EmuDtypeSupported {
            operand: Operand::Dst,
            dtype: dst.dtype,
        }));
    }
    // emu_footprint_in_bounds (EC-6)
    let src_walk = walk(src);
    src_walk.check_in_bounds(Operand::Src, t.arch)?;
    let dst_walk = walk(dst);
    dst_walk.check_in_bounds(Operand::Dst, t.arch)?;
    pool_shape(p, src.tensor, dst.tensor)?;
    check_overlap(&src_walk, &dst_walk, p.num_active_channels() as u32)
}

/// The walk of an operand whose address has no mode bits (emu_addr_mode_supported)
/// and lies in SBUF or PSUM (tensor4d_valid).
#[inline(always)]
fn walk<'a>(s: &Side<'a>) -> Walk<'a> {
    let loc = s.loc.expect("tensor4d_valid checked the region");
    Walk::new(s.tensor, loc, s.dtype)
}

/// EC-10 (`emu_pool_shape`).
#[inline(always)]
fn pool_shape(p: S4d4PlView, src: Tensor4dBytes, dst: Tensor4dBytes) -> Result<(), Fail> {
    let k = p.pool_dim().window_dims().expect("pool_dim validated");
    // period divides the element count by construction: it is the product of
    // the window dims' nums, and `outputs` is the product of the others.
    // (Spelled out per window size: no slicing at `k`, no division.)
    let n = |d| src.num(d) as u64;
    let (period, outputs) = match k {
        1 => (n(0), n(1) * n(2) * n(3)),
        2 => (n(0) * n(1), n(2) * n(3)),
        3 => (n(0) * n(1) * n(2), n(3)),
        _ => (n(0) * n(1) * n(2) * n(3), 1),
    };
    let elements = period * outputs;
    let dst_elements = dst.elements();
    if dst_elements != outputs {
        return Err(shape_fault(ShapeFault::DstCount {
            outputs,
            dst: dst_elements,
        }));
    }
    if elements > MAX_POOL_ELEMENTS_PER_LANE {
        return Err(shape_fault(ShapeFault::TooLarge { elements }));
    }
    if p.opcode() == Opcode::MAX_POOL_SELECT && period - 1 > index_max(p.out_dtype()) {
        return Err(shape_fault(ShapeFault::IndexRange {
            period,
            dtype: p.out_dtype(),
        }));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn shape_fault(why: ShapeFault) -> Fail {
    Fail::EmuPoolShape { why }
}

/// The largest index a MaxPoolSelect output dtype holds.
fn index_max(d: Dtype) -> u64 {
    match d {
        Dtype::UINT8 => u8::MAX as u64,
        Dtype::UINT16 => u16::MAX as u64,
        _ => u32::MAX as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::layout::testing::rows;

    /// seed 000 §3's offsets and widths, written out independently of the layout
    /// macro (which checks that the fields tile bytes 12..64).
    #[test]
    fn layout_matches_the_spec() {
        assert_eq!(
            rows(S4d4Pl::FIELDS),
            [
                ("src", 12, 20),
                ("in_dtype", 32, 1),
                ("out_dtype", 33, 1),
                ("num_active_channels", 34, 1),
                ("reserved0", 35, 1),
                ("pool_func", 36, 1),
                ("pool_dim", 37, 1),
                ("reserved1", 38, 2),
                ("pool_scale_bits", 40, 4),
                ("dst", 44, 20),
            ]
        );
    }
}
