//! The predicates the kernel structs share (SPEC-KERNELS §13, with EC-40's
//! names): dtypes, lanes, start partitions, `tensor*_valid`, element counts,
//! reserved bytes, and the emulator checks (`emu_addr_mode_supported`,
//! `emu_footprint_in_bounds`, `emu_kernel_shape`, `emu_overlap`).
//!
//! Each kernel's own predicates, and the order it runs them in, are in its
//! file under `isa/kernels/`. Every failure is a [`Fail::Kernel`] naming the
//! predicate, the field (name and byte offset, from the operand's one layout
//! table) and the offending values.

use super::Target;
use super::fail::{Fail, OverlapFault, Pred, TensorFault, Why};
use super::footprint::{Walk, disjoint_partitions, in_place, outputs_distinct};
use crate::isa::enums::{Dtype, Engine};
use crate::isa::layout::FieldRef;
use crate::isa::opcode::Opcode;
use crate::isa::tensor::{Location, Region, TENSOR4D_BYTES, Tensor4d, Tensor4dBytes};
use crate::limits::{Arch, MAX_KERNEL_ELEMENTS_PER_LANE, PARTITIONS};

#[cold]
#[inline(never)]
pub(crate) fn fail(pred: Pred, field: FieldRef, why: Why) -> Fail {
    Fail::Kernel { pred, field, why }
}

/// One tensor operand: the field it sits in, its walk (a TENSOR3D widened
/// with a dim3 of num 1), its dtype and whether the record writes it.
#[derive(Clone, Copy)]
pub(crate) struct Opnd {
    pub(crate) field: FieldRef,
    pub(crate) t: Tensor4d,
    pub(crate) dtype: Dtype,
    pub(crate) write: bool,
    /// 2, 3 or 4: which of `tensor2d_valid`, `tensor3d_valid`, `tensor4d_valid`.
    pub(crate) dims: usize,
    /// EC-41: whether the vendor's region flags admit PSUM.
    pub(crate) psum_ok: bool,
}

impl Opnd {
    pub(crate) fn four(field: FieldRef, t: Tensor4d, dtype: Dtype, write: bool) -> Opnd {
        Opnd::of_dims(4, field, t, dtype, write)
    }

    /// A `dims`-dimensional operand (widened to 4d), SBUF or PSUM.
    pub(crate) fn of_dims(
        dims: usize,
        field: FieldRef,
        t: Tensor4d,
        dtype: Dtype,
        write: bool,
    ) -> Opnd {
        Opnd {
            field,
            t,
            dtype,
            write,
            dims,
            psum_ok: true,
        }
    }

    /// The same operand, SBUF only (EC-41).
    pub(crate) fn sbuf_only(self) -> Opnd {
        Opnd {
            psum_ok: false,
            ..self
        }
    }

    /// The byte address's location (mode bits aside).
    pub(crate) fn loc(&self) -> Option<Location> {
        self.t.addr.location()
    }

    pub(crate) fn bytes(&self) -> [u8; TENSOR4D_BYTES] {
        self.t.to_bytes()
    }
}

// ---------------------------------------------------------------------------
// Shared predicates
// ---------------------------------------------------------------------------

/// EC-40's dtype mapping: INVALID (0), a byte >= 0x10, or a 64-bit type where
/// not allowed → `dtype_invalid_check`; FP32R where not allowed →
/// `dtype_fp32r_illegal_check`.
pub(crate) fn dtype_valid(
    field: FieldRef,
    d: Dtype,
    fp32r: bool,
    bits64: bool,
) -> Result<(), Fail> {
    if d == Dtype::INVALID || d.size().is_none() || (d.is_64bit() && !bits64) {
        return Err(fail(Pred::DTYPE_INVALID_CHECK, field, Why::Dtype(d)));
    }
    if d == Dtype::FP32R && !fp32r {
        return Err(fail(Pred::DTYPE_FP32R_ILLEGAL_CHECK, field, Why::Dtype(d)));
    }
    Ok(())
}

/// `has_valid_active_channel_range`: 1..=128.
pub(crate) fn channel_range(field: FieldRef, channels: u8) -> Result<(), Fail> {
    channels_in_range(Pred::HAS_VALID_ACTIVE_CHANNEL_RANGE, field, channels)
}

/// `pred` (`has_valid_active_channel_range` or `check_active_channels`,
/// EC-40: both mean 1..=128).
pub(crate) fn channels_in_range(pred: Pred, field: FieldRef, channels: u8) -> Result<(), Fail> {
    if channels == 0 || channels as u32 > PARTITIONS {
        return Err(fail(pred, field, Why::Byte(channels)));
    }
    Ok(())
}

/// EC-7: start partition + channels <= 128. Register-mode addresses pass
/// (resolved at run time, EC-5); so does an address outside SBUF/PSUM.
pub(crate) fn start_addr(o: &Opnd, channels: u8) -> Result<(), Fail> {
    if o.t.addr.is_register() {
        return Ok(());
    }
    match o.loc() {
        Some(l) if l.partition + channels as u32 > PARTITIONS => Err(fail(
            Pred::START_ADDR_ACTIVE_CHANNELS,
            o.field,
            Why::StartPartition {
                partition: l.partition,
                channels,
            },
        )),
        _ => Ok(()),
    }
}

/// `tensor4d_valid` / `tensor3d_valid` with EC-41's flags for these kernels
/// (SBUF or PSUM): register-mode rule, region, alignment, PSUM write needs a
/// 4-byte dtype, every num non-zero (SPEC §3, EC-40).
pub(crate) fn tensor_valid(o: &Opnd) -> Result<(), Fail> {
    let pred = match o.dims {
        2 => Pred::TENSOR2D_VALID,
        3 => Pred::TENSOR3D_VALID,
        _ => Pred::TENSOR4D_VALID,
    };
    let bad = |why| Err(fail(pred, o.field, Why::Tensor(why)));
    let addr = o.t.addr.0;
    let size = o.dtype.size().unwrap_or(1);
    if o.t.addr.is_register() {
        // EC-5: byte 0 < 64 and bits 8..30 zero; the rest is resolved at run time.
        if addr & 0xFF >= 64 || addr & 0x7FFF_FF00 != 0 {
            return bad(TensorFault::RegisterMode { addr });
        }
    } else {
        let Some(loc) = o.loc() else {
            return bad(TensorFault::Region { addr });
        };
        if loc.region == Region::Psum && !o.psum_ok {
            return bad(TensorFault::PsumNotAllowed { addr });
        }
        if o.t.addr.byte_addr() & (size - 1) != 0 {
            return bad(TensorFault::Alignment { addr, align: size });
        }
        if o.write && loc.region == Region::Psum && size != 4 {
            return bad(TensorFault::PsumWriteDtype { dtype: o.dtype });
        }
    }
    if let Some(dim) = (0..o.dims).find(|&d| o.t.num[d] == 0) {
        return bad(TensorFault::ZeroNum { dim: dim as u8 });
    }
    Ok(())
}

/// The why of a failure that concerns the (input, output) dtype pair.
pub(crate) fn in_out(in_dtype: Dtype, out_dtype: Dtype) -> Why {
    Why::InOut {
        in_dtype,
        out_dtype,
    }
}

/// EC-7 on every operand, then `tensor*_valid` on every operand: the
/// vendor checks all start partitions before any tensor, so a record bad in
/// both reports the start partition.
pub(crate) fn starts_then_tensors(ops: &[Opnd], channels: u8) -> Result<(), Fail> {
    for o in ops {
        start_addr(o, channels)?;
    }
    for o in ops {
        tensor_valid(o)?;
    }
    Ok(())
}

/// An exact count comparison (SPEC-KERNELS §0.3).
pub(crate) fn same_count(pred: Pred, a: (FieldRef, u64), b: (FieldRef, u64)) -> Result<(), Fail> {
    if a.1 != b.1 {
        return Err(fail(
            pred,
            a.0,
            Why::Counts {
                count: a.1,
                other: b.0,
                other_count: b.1,
            },
        ));
    }
    Ok(())
}

/// `emu_addr_mode_supported` (EC-5): no operand uses register, indirect or
/// shape-from-register addressing.
pub(crate) fn addr_modes(ops: &[Opnd]) -> Result<(), Fail> {
    for o in ops {
        if o.t.addr.has_mode_bits() {
            return Err(fail(
                Pred::EMU_ADDR_MODE_SUPPORTED,
                o.field,
                Why::Addr { addr: o.t.addr.0 },
            ));
        }
    }
    Ok(())
}

/// EC-39: these kernels execute on POOL only.
pub(crate) fn on_pool(opcode: Opcode, field: FieldRef, t: Target) -> Result<(), Fail> {
    if t.engine != Engine::Pool {
        return Err(fail(
            Pred::EMU_OPCODE_SUPPORTED,
            field,
            Why::Engine {
                opcode,
                engine: t.engine,
            },
        ));
    }
    Ok(())
}

/// `emu_footprint_in_bounds` (EC-6) for every operand, in field order.
pub(crate) fn footprints(ops: &[Opnd], arch: Arch) -> Result<(), Fail> {
    for o in ops {
        let bytes = o.bytes();
        let w = walk(o, &bytes);
        let active = w.region.active_bytes(arch);
        if w.lo < 0 || w.hi > active as i64 {
            return Err(fail(
                Pred::EMU_FOOTPRINT_IN_BOUNDS,
                o.field,
                Why::Footprint {
                    region: w.region,
                    lo: w.lo,
                    hi: w.hi,
                    active,
                },
            ));
        }
    }
    Ok(())
}

/// `emu_kernel_shape` (EC-40): at most 2^24 elements per lane in every walk.
pub(crate) fn kernel_shape(walks: &[(FieldRef, u64)]) -> Result<(), Fail> {
    for &(field, n) in walks {
        if n > MAX_KERNEL_ELEMENTS_PER_LANE {
            return Err(fail(Pred::EMU_KERNEL_SHAPE, field, Why::Elements(n)));
        }
    }
    Ok(())
}

/// The walk of an operand that passed `tensor*_valid` and
/// `emu_addr_mode_supported` (so its address lies in SBUF or PSUM).
pub(crate) fn walk<'a>(o: &Opnd, bytes: &'a [u8; TENSOR4D_BYTES]) -> Walk<'a> {
    let loc = o.loc().expect("tensor*_valid checked the region");
    Walk::new(Tensor4dBytes(bytes), loc, o.dtype)
}

/// `emu_overlap` for an elementwise record (EC-21 as amended by EC-42): no two
/// dst elements share a byte; each source shares bytes with dst only in place.
pub(crate) fn overlap(sources: &[Opnd], dst: &Opnd, channels: u8) -> Result<(), Fail> {
    let fault = |o: OverlapFault| fail(Pred::EMU_OVERLAP, dst.field, Why::Overlap(o));
    let db = dst.bytes();
    let dw = walk(dst, &db);
    outputs_distinct(&dw).map_err(fault)?;
    for s in sources {
        let sb = s.bytes();
        let sw = walk(s, &sb);
        in_place(&sw, &dw, channels as u32).map_err(fault)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Shared by the stretch kernels
// ---------------------------------------------------------------------------

/// The first non-zero byte of `bytes` (at record offset `at`) as a failure of
/// `pred`, named as byte `at + i` of `field`.
pub(crate) fn reserved(pred: Pred, field: FieldRef, at: usize, bytes: &[u8]) -> Result<(), Fail> {
    match bytes.iter().position(|&b| b != 0) {
        Some(i) => Err(fail(
            pred,
            FieldRef {
                offset: (at + i) as u8,
                ..field
            },
            Why::Byte(bytes[i]),
        )),
        None => Ok(()),
    }
}

/// A TENSOR3D operand, SBUF only (EC-41).
pub(crate) fn sbuf3(
    field: FieldRef,
    t: &crate::isa::tensor::Tensor3d,
    dtype: Dtype,
    write: bool,
) -> Opnd {
    Opnd::of_dims(3, field, t.to_4d(), dtype, write).sbuf_only()
}

/// The partitions of `lanes` lanes from the operand's start partition.
pub(crate) fn partitions(o: &Opnd, lanes: impl Iterator<Item = u32>) -> Vec<u32> {
    let start = o.loc().map_or(0, |l| l.partition);
    lanes.map(|p| start + p).collect()
}

/// `emu_overlap` for kernels whose src and dst must be disjoint (EC-21):
/// no two dst elements share a byte, and no src byte is a dst byte in a
/// partition both touch.
pub(crate) fn overlap_disjoint(
    src: &Opnd,
    src_parts: &[u32],
    dst: &Opnd,
    dst_parts: &[u32],
) -> Result<(), Fail> {
    let fault = |o: OverlapFault| fail(Pred::EMU_OVERLAP, dst.field, Why::Overlap(o));
    let (sb, db) = (src.bytes(), dst.bytes());
    let (sw, dw) = (walk(src, &sb), walk(dst, &db));
    outputs_distinct(&dw).map_err(fault)?;
    disjoint_partitions(&sw, src_parts, &dw, dst_parts).map_err(fault)
}

/// EC-58: a kernel with no row in SUNDA's table.
pub(crate) fn not_on_sunda(pred: Pred, opcode: Opcode, t: Target) -> Result<(), Fail> {
    if t.arch == Arch::Sunda {
        let field = FieldRef {
            name: "opcode",
            offset: 0,
        };
        return Err(fail(
            pred,
            field,
            Why::Arch {
                opcode,
                arch: t.arch,
            },
        ));
    }
    Ok(())
}
