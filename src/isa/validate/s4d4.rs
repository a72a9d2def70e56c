//! SPEC §5 steps 6 and 7 for the S4D4_PL opcodes (Pool, MaxPoolSelect).

use super::fail::*;
use super::footprint::{Walk, check_overlap};
use super::{Target, check_event_modes_emulated};
use crate::isa::enums::{Dtype, PoolFunc};
use crate::isa::opcode::Opcode;
use crate::isa::record::Record;
use crate::isa::s4d4_pl::{S4d4Pl, off};
use crate::isa::tensor::{Region, Tensor4d};
use crate::limits::{MAX_POOL_ELEMENTS_PER_LANE, PARTITIONS};

pub(super) fn check(r: &Record, t: Target) -> Result<(), Fail> {
    let p = S4d4Pl::decode(r);
    hardware(&p)?;
    emulator(r, &p, t)
}

/// The hardware predicates of `is_valid_s4d4_pl` (seed 000 §3.6), in SPEC §5 step 6 order.
#[inline(always)]
fn hardware(p: &S4d4Pl) -> Result<(), Fail> {
    // s4d4_pl_reserved_zero
    let reserved = [
        (off::RESERVED0, p.reserved0),
        (off::RESERVED1, p.reserved1[0]),
        (off::RESERVED1 + 1, p.reserved1[1]),
    ];
    if let Some(&(offset, value)) = reserved.iter().find(|e| e.1 != 0) {
        return Err(Fail::S4d4PlReservedZero {
            offset: offset as u8,
            value,
        });
    }
    // in_dtype: not INVALID, UINT64 or outside the enum; not FP32R.
    if matches!(p.in_dtype, Dtype::INVALID | Dtype::UINT64) || p.in_dtype.size().is_none() {
        return Err(Fail::DtypeInvalidCheck {
            operand: Operand::Src,
            dtype: p.in_dtype,
        });
    }
    if p.in_dtype == Dtype::FP32R {
        return Err(Fail::DtypeFp32rIllegalCheck);
    }
    // out_dtype: EC-35 also rules out INT64 (the engine cannot write 64-bit results).
    if matches!(p.out_dtype, Dtype::INVALID | Dtype::UINT64 | Dtype::INT64)
        || p.out_dtype.size().is_none()
    {
        return Err(Fail::DtypeInvalidCheck {
            operand: Operand::Dst,
            dtype: p.out_dtype,
        });
    }
    start_addr_active_channels(Operand::Src, &p.src, p.num_active_channels)?;
    start_addr_active_channels(Operand::Dst, &p.dst, p.num_active_channels)?;
    let pooltype_ok = match p.opcode() {
        Opcode::POOL => matches!(p.pool_func, PoolFunc::MAX_POOL | PoolFunc::AVG_POOL),
        _ => p.pool_func == PoolFunc::NONE,
    };
    if !pooltype_ok {
        return Err(Fail::HasValidPooltype {
            opcode: p.opcode(),
            pool_func: p.pool_func,
        });
    }
    // EC-8: X, XY, XYZ or XYZW.
    if p.pool_dim.window_dims().is_none() {
        return Err(Fail::IsValidSubdim {
            pool_dim: p.pool_dim,
        });
    }
    if p.num_active_channels == 0 || p.num_active_channels as u32 > PARTITIONS {
        return Err(Fail::HasValidActiveChannelRange {
            channels: p.num_active_channels,
        });
    }
    if p.opcode() == Opcode::MAX_POOL_SELECT
        && !matches!(p.out_dtype, Dtype::UINT8 | Dtype::UINT16 | Dtype::UINT32)
    {
        return Err(Fail::S4d4PlDtypeCheck {
            out_dtype: p.out_dtype,
        });
    }
    tensor4d_valid(Operand::Src, &p.src, p.in_dtype)?;
    tensor4d_valid(Operand::Dst, &p.dst, p.out_dtype)?;
    pool_scale_valid(p)
}

/// EC-7: start partition + num_active_channels <= 128. Register-mode addresses
/// pass (resolved at run time, EC-5); so does an address outside SBUF/PSUM.
#[inline(always)]
fn start_addr_active_channels(o: Operand, t: &Tensor4d, channels: u8) -> Result<(), Fail> {
    if t.addr.is_register() {
        return Ok(());
    }
    match t.addr.location() {
        Some(l) if l.partition + channels as u32 > PARTITIONS => {
            Err(Fail::StartAddrActiveChannels {
                operand: o,
                partition: l.partition,
                channels,
            })
        }
        _ => Ok(()),
    }
}

/// `tensor4d_valid`: region, register-mode rule, alignment, PSUM write dtype, non-zero nums.
#[inline(always)]
fn tensor4d_valid(o: Operand, t: &Tensor4d, dtype: Dtype) -> Result<(), Fail> {
    let addr = t.addr.0;
    let fault = |why| Err(Fail::Tensor4dValid { operand: o, why });
    let size = dtype.size().unwrap_or(1);
    if t.addr.is_register() {
        // EC-5: byte 0 < 64 and bits 8..30 zero; region/alignment are resolved at run time.
        if addr & 0xFF >= 64 || addr & 0x7FFF_FF00 != 0 {
            return fault(TensorFault::RegisterMode { addr });
        }
    } else {
        let Some(loc) = t.addr.location() else {
            return fault(TensorFault::Region { addr });
        };
        if t.addr.byte_addr() & (size - 1) != 0 {
            return fault(TensorFault::Alignment { addr, align: size });
        }
        if o == Operand::Dst && loc.region == Region::Psum && size != 4 {
            return fault(TensorFault::PsumWriteDtype { dtype });
        }
    }
    if let Some(dim) = t.num.iter().position(|&n| n == 0) {
        return fault(TensorFault::ZeroNum { dim: dim as u8 });
    }
    Ok(())
}

/// `s4d4_pool_scale_valid`: exactly 1.0 unless AVG; AVG needs finite and normal (EC-9).
#[inline(always)]
fn pool_scale_valid(p: &S4d4Pl) -> Result<(), Fail> {
    let s = p.pool_scale();
    let ok = if p.opcode() == Opcode::POOL && p.pool_func == PoolFunc::AVG_POOL {
        s.is_normal()
    } else {
        p.pool_scale_bits == 1.0f32.to_bits()
    };
    if ok {
        Ok(())
    } else {
        Err(Fail::S4d4PoolScaleValid {
            pool_func: p.pool_func,
            bits: p.pool_scale_bits,
        })
    }
}

/// SPEC §5 step 7: the emulator's own checks, in order.
#[inline(always)]
fn emulator(r: &Record, p: &S4d4Pl, t: Target) -> Result<(), Fail> {
    // emu_addr_mode_supported (EC-5)
    for (o, ten) in [(Operand::Src, &p.src), (Operand::Dst, &p.dst)] {
        if ten.addr.has_mode_bits() {
            return Err(Fail::EmuAddrModeSupported {
                operand: o,
                addr: ten.addr.0 as u64,
            });
        }
    }
    // emu_event_mode_supported (EC-2)
    check_event_modes_emulated(r)?;
    // emu_dtype_supported (EC-13b)
    if !p.in_dtype.emu_readable() {
        return Err(Fail::EmuDtypeSupported {
            operand: Operand::Src,
            dtype: p.in_dtype,
        });
    }
    if !p.out_dtype.emu_writable() {
        return Err(Fail::EmuDtypeSupported {
            operand: Operand::Dst,
            dtype: p.out_dtype,
        });
    }
    // emu_footprint_in_bounds (EC-6)
    let src = Walk::new(Operand::Src, &p.src, p.in_dtype, t.arch)?;
    let dst = Walk::new(Operand::Dst, &p.dst, p.out_dtype, t.arch)?;
    pool_shape(p)?;
    check_overlap(&src, &dst, p.num_active_channels as u32)
}

/// EC-10 (`emu_pool_shape`).
#[inline(always)]
fn pool_shape(p: &S4d4Pl) -> Result<(), Fail> {
    let k = p.pool_dim.window_dims().expect("pool_dim validated");
    // period divides the element count by construction: it is the product of
    // the window dims' nums, and `outputs` is the product of the others.
    let period: u64 = p.src.num[..k].iter().map(|&n| n as u64).product();
    let outputs: u64 = p.src.num[k..].iter().map(|&n| n as u64).product();
    let elements = period * outputs;
    let dst = p.dst.elements();
    let why = if dst != outputs {
        ShapeFault::DstCount { outputs, dst }
    } else if elements > MAX_POOL_ELEMENTS_PER_LANE {
        ShapeFault::TooLarge { elements }
    } else if p.opcode() == Opcode::MAX_POOL_SELECT && period - 1 > index_max(p.out_dtype) {
        ShapeFault::IndexRange {
            period,
            dtype: p.out_dtype,
        }
    } else {
        return Ok(());
    };
    Err(Fail::EmuPoolShape { why })
}

/// The largest index a MaxPoolSelect output dtype holds.
fn index_max(d: Dtype) -> u64 {
    match d {
        Dtype::UINT8 => u8::MAX as u64,
        Dtype::UINT16 => u16::MAX as u64,
        _ => u32::MAX as u64,
    }
}
