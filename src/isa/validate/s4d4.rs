//! SPEC §5 steps 6 and 7 for the S4D4_PL opcodes (Pool, MaxPoolSelect).
//!
//! This is the validator's hot path (a stream of Pool records), so it is
//! written to compile to a short straight run of compares:
//! - fields are read in place from the record (`S4d4PlView`, `Tensor4dBytes`)
//!   where each predicate uses them, not decoded into a struct first, and
//!   each address is resolved once (`Side`);
//! - every predicate is a cheap test whose failing branch calls a `#[cold]`
//!   constructor (`cold` or a `*_fault` function), so the `Fail` values, and
//!   any search for *which* byte or dim failed, live out of line.
//!
//! The predicates, their order and their `Fail` values are SPEC §5's.

use super::fail::*;
use super::footprint::{Walk, check_overlap};
use super::{Target, check_event_modes_emulated};
use crate::isa::enums::{Dtype, PoolFunc};
use crate::isa::opcode::Opcode;
use crate::isa::record::Record;
use crate::isa::s4d4_pl::{S4d4PlView, off};
use crate::isa::tensor::{Addr4, Dims, Location, Region, Tensor4dBytes};
use crate::limits::{MAX_POOL_ELEMENTS_PER_LANE, PARTITIONS};

/// Steps 6 and 7 for one S4D4_PL record (inlined into the stream loop).
#[inline(always)]
pub(super) fn check(r: &Record, t: Target) -> Result<(), Fail> {
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
