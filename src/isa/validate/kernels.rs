//! SPEC-KERNELS §13: the predicate orders of IOTA (0x7E), COPY/CAST
//! (0x46/0x47) and the tensor-tensor pair (0x41/0x51), after SPEC §5 steps
//! 1–4, with EC-40's names and the emulator checks in EC-40's order.
//!
//! Every failure is a [`Fail::Kernel`] naming the predicate, the field (name
//! and byte offset, from the operand's one layout table) and the offending
//! values. These records are not the validator's hot path: each is decoded
//! once into its typed struct.

use super::fail::{Fail, OverlapFault, Pred, PredDef, TensorFault, Unsupported, Why};
use super::footprint::{Walk, disjoint_partitions, in_place, outputs_distinct};
use super::{Target, check_event_modes_emulated};
use crate::isa::d4_iota::{self, D4Iota};
use crate::isa::enums::{AluOp, Dtype, Engine, ImmSrc, PoolDim, ReduceAxis};
use crate::isa::extended::{self, EngineNop, ExtTta, completion};
use crate::isa::inst::{Inst, Kernel};
use crate::isa::layout::FieldRef;
use crate::isa::opcode::Opcode;
use crate::isa::record::Record;
use crate::isa::s3d3_nonzero::{self, S3d3NonzeroWithCount};
use crate::isa::s3d3_seq_bounds::{self, S3d3SeqBounds};
use crate::isa::s3s3d3_tt::{self, S3s3d3Tt};
use crate::isa::s4d4_cr::{self, S4d4Cr};
use crate::isa::s4d4_tr::{self, S4d4Tr};
use crate::isa::tensor::{Addr4, Location, Region, TENSOR4D_BYTES, Tensor4d, Tensor4dBytes};
use crate::limits::{Arch, MAX_KERNEL_ELEMENTS_PER_LANE, PARTITIONS};

/// The kernel's predicates, for a kernel-table record other than Pool and
/// MaxPoolSelect (whose predicates read the bytes in place, `s4d4.rs`). A
/// row whose operand is not modelled is refused by `emu_opcode_supported`
/// (SPEC §5 step 5, EC-58).
pub(super) fn check(r: &Record, t: Target) -> Result<(), Fail> {
    match Inst::decode(r) {
        Inst::Kernel(Kernel::D4Iota(p)) => iota(r, &p, t),
        Inst::Kernel(Kernel::S4d4Tr(p)) => copy_cast(r, &p, t),
        Inst::Kernel(Kernel::S3s3d3Tt(p)) => tensor_tensor(r, &p, t),
        Inst::Kernel(Kernel::S4d4Cr(p)) => cross_lane_reduce(r, &p, t),
        Inst::Kernel(Kernel::SeqBounds(p)) => sequence_bounds(r, &p, t),
        Inst::Kernel(Kernel::NonzeroWithCount(p)) => nonzero_with_count(r, &p, t),
        Inst::Kernel(Kernel::EngineNop(p)) => engine_nop(r, &p, t),
        Inst::Kernel(Kernel::ExtTta(p)) => ext_tta(r, &p, t),
        Inst::Kernel(Kernel::NotModelled(_)) => Err(Fail::EmuOpcodeSupported {
            opcode: r.opcode(),
            why: Unsupported::NotEmulated,
        }),
        Inst::Kernel(Kernel::S4d4Pl(_)) | Inst::Control(_) | Inst::Invalid(_) => {
            unreachable!("the caller dispatches the other kernel classes only")
        }
    }
}

#[cold]
#[inline(never)]
fn fail(pred: Pred, field: FieldRef, why: Why) -> Fail {
    Fail::Kernel { pred, field, why }
}

/// One tensor operand: the field it sits in, its walk (a TENSOR3D widened
/// with a dim3 of num 1), its dtype and whether the record writes it.
#[derive(Clone, Copy)]
struct Opnd {
    field: FieldRef,
    t: Tensor4d,
    dtype: Dtype,
    write: bool,
    /// 2, 3 or 4: which of `tensor2d_valid`, `tensor3d_valid`, `tensor4d_valid`.
    dims: usize,
    /// EC-41: whether the vendor's region flags admit PSUM.
    psum_ok: bool,
}

impl Opnd {
    fn four(field: FieldRef, t: Tensor4d, dtype: Dtype, write: bool) -> Opnd {
        Opnd::of_dims(4, field, t, dtype, write)
    }

    /// A `dims`-dimensional operand (widened to 4d), SBUF or PSUM.
    fn of_dims(dims: usize, field: FieldRef, t: Tensor4d, dtype: Dtype, write: bool) -> Opnd {
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
    fn sbuf_only(self) -> Opnd {
        Opnd {
            psum_ok: false,
            ..self
        }
    }

    /// The byte address's location (mode bits aside).
    fn loc(&self) -> Option<Location> {
        self.t.addr.location()
    }

    fn bytes(&self) -> [u8; TENSOR4D_BYTES] {
        self.t.to_bytes()
    }
}

// ---------------------------------------------------------------------------
// Shared predicates
// ---------------------------------------------------------------------------

/// EC-40's dtype mapping: INVALID (0), a byte >= 0x10, or a 64-bit type where
/// not allowed → `dtype_invalid_check`; FP32R where not allowed →
/// `dtype_fp32r_illegal_check`.
fn dtype_valid(field: FieldRef, d: Dtype, fp32r: bool, bits64: bool) -> Result<(), Fail> {
    if d == Dtype::INVALID || d.size().is_none() || (d.is_64bit() && !bits64) {
        return Err(fail(Pred::DTYPE_INVALID_CHECK, field, Why::Dtype(d)));
    }
    if d == Dtype::FP32R && !fp32r {
        return Err(fail(Pred::DTYPE_FP32R_ILLEGAL_CHECK, field, Why::Dtype(d)));
    }
    Ok(())
}

/// `has_valid_active_channel_range`: 1..=128.
fn channel_range(field: FieldRef, channels: u8) -> Result<(), Fail> {
    channels_in_range(Pred::HAS_VALID_ACTIVE_CHANNEL_RANGE, field, channels)
}

/// `pred` (`has_valid_active_channel_range` or `check_active_channels`,
/// EC-40: both mean 1..=128).
fn channels_in_range(pred: Pred, field: FieldRef, channels: u8) -> Result<(), Fail> {
    if channels == 0 || channels as u32 > PARTITIONS {
        return Err(fail(pred, field, Why::Byte(channels)));
    }
    Ok(())
}

/// EC-7: start partition + channels <= 128. Register-mode addresses pass
/// (resolved at run time, EC-5); so does an address outside SBUF/PSUM.
fn start_addr(o: &Opnd, channels: u8) -> Result<(), Fail> {
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
fn tensor_valid(o: &Opnd) -> Result<(), Fail> {
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
fn in_out(in_dtype: Dtype, out_dtype: Dtype) -> Why {
    Why::InOut {
        in_dtype,
        out_dtype,
    }
}

/// EC-7 on every operand, then `tensor*_valid` on every operand: the
/// vendor checks all start partitions before any tensor, so a record bad in
/// both reports the start partition.
fn starts_then_tensors(ops: &[Opnd], channels: u8) -> Result<(), Fail> {
    for o in ops {
        start_addr(o, channels)?;
    }
    for o in ops {
        tensor_valid(o)?;
    }
    Ok(())
}

/// An exact count comparison (SPEC-KERNELS §0.3).
fn same_count(pred: Pred, a: (FieldRef, u64), b: (FieldRef, u64)) -> Result<(), Fail> {
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
fn addr_modes(ops: &[Opnd]) -> Result<(), Fail> {
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
fn on_pool(opcode: Opcode, field: FieldRef, t: Target) -> Result<(), Fail> {
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
fn footprints(ops: &[Opnd], arch: Arch) -> Result<(), Fail> {
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
fn kernel_shape(walks: &[(FieldRef, u64)]) -> Result<(), Fail> {
    for &(field, n) in walks {
        if n > MAX_KERNEL_ELEMENTS_PER_LANE {
            return Err(fail(Pred::EMU_KERNEL_SHAPE, field, Why::Elements(n)));
        }
    }
    Ok(())
}

/// The walk of an operand that passed `tensor*_valid` and
/// `emu_addr_mode_supported` (so its address lies in SBUF or PSUM).
fn walk<'a>(o: &Opnd, bytes: &'a [u8; TENSOR4D_BYTES]) -> Walk<'a> {
    let loc = o.loc().expect("tensor*_valid checked the region");
    Walk::new(Tensor4dBytes(bytes), loc, o.dtype)
}

/// `emu_overlap` for an elementwise record (EC-21 as amended by EC-42): no two
/// dst elements share a byte; each source shares bytes with dst only in place.
fn overlap(sources: &[Opnd], dst: &Opnd, channels: u8) -> Result<(), Fail> {
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
// 0x7E IOTA
// ---------------------------------------------------------------------------

/// IOTA's own predicates (SPEC-KERNELS §13).
impl Pred {
    /// `d4_iota_reserved_zero` (bytes 32, 35, 40..43).
    pub const D4_IOTA_RESERVED_ZERO: Pred = Pred(&PredDef {
        name: "d4_iota_reserved_zero",
        says: None,
    });
    /// `d4_iota_same_src_dst_count`.
    pub const D4_IOTA_SAME_SRC_DST_COUNT: Pred = Pred(&PredDef {
        name: "d4_iota_same_src_dst_count",
        says: None,
    });
}

fn iota(r: &Record, p: &D4Iota, t: Target) -> Result<(), Fail> {
    use d4_iota::off;
    let f = D4Iota::field;
    // d4_iota_reserved_zero: bytes 32, 35, 40..43.
    let reserved = [(off::RESERVED0, p.reserved0), (off::RESERVED1, p.reserved1)]
        .into_iter()
        .chain((0..4).map(|i| (off::RESERVED2 + i, p.reserved2[i])));
    for (at, v) in reserved {
        if v != 0 {
            let field = FieldRef {
                offset: at as u8,
                ..f(if at >= off::RESERVED2 {
                    off::RESERVED2
                } else {
                    at
                })
            };
            return Err(fail(Pred::D4_IOTA_RESERVED_ZERO, field, Why::Byte(v)));
        }
    }
    // EC-48: FP32R allowed; no 64-bit out.
    dtype_valid(f(off::OUT_DTYPE), p.out_dtype, true, false)?;
    let ch = p.num_active_channels;
    channel_range(f(off::NUM_ACTIVE_CHANNELS), ch)?;
    let dst = Opnd::four(f(off::DST), p.dst, p.out_dtype, true);
    start_addr(&dst, ch)?;
    tensor_valid(&dst)?;
    let data = (f(off::DATA), p.data.elements());
    let dst_count = (dst.field, p.dst.elements());
    same_count(Pred::D4_IOTA_SAME_SRC_DST_COUNT, data, dst_count)?;
    // Emulator checks (EC-40).
    addr_modes(&[dst])?;
    check_event_modes_emulated(r)?;
    if p.out_dtype.is_fp8() {
        // EC-48: FP8 out is not executed.
        return Err(fail(
            Pred::EMU_DTYPE_SUPPORTED,
            f(off::OUT_DTYPE),
            Why::Dtype(p.out_dtype),
        ));
    }
    footprints(&[dst], t.arch)?;
    kernel_shape(&[data, dst_count])?;
    overlap(&[], &dst, ch)
}

// ---------------------------------------------------------------------------
// 0x46 COPY / 0x47 CAST
// ---------------------------------------------------------------------------

/// COPY and CAST's own predicates (SPEC-KERNELS §13).
impl Pred {
    /// `s4d4_tr_reserved_zero` (bytes 39..43).
    pub const S4D4_TR_RESERVED_ZERO: Pred = Pred(&PredDef {
        name: "s4d4_tr_reserved_zero",
        says: None,
    });
    /// `mask_enable_zero` (S4D4_TR byte 38).
    pub const MASK_ENABLE_ZERO: Pred = Pred(&PredDef {
        name: "mask_enable_zero",
        says: None,
    });
    /// `is_zero_subdim` (S4D4_TR op_dim not UNUSED or X).
    pub const IS_ZERO_SUBDIM: Pred = Pred(&PredDef {
        name: "is_zero_subdim",
        says: Some("{dim}; must be unused or x"),
    });
    /// `s4d4_tr_same_src_dst_count`.
    pub const S4D4_TR_SAME_SRC_DST_COUNT: Pred = Pred(&PredDef {
        name: "s4d4_tr_same_src_dst_count",
        says: None,
    });
    /// `s4d4_tr_op_bypass`.
    pub const S4D4_TR_OP_BYPASS: Pred = Pred(&PredDef {
        name: "s4d4_tr_op_bypass",
        says: Some("{op}; {opcode} needs bypass"),
    });
    /// `s4d4_tr_same_src_dst_type` (COPY only).
    pub const S4D4_TR_SAME_SRC_DST_TYPE: Pred = Pred(&PredDef {
        name: "s4d4_tr_same_src_dst_type",
        says: Some("in_dtype {in} != out_dtype {out}; COPY moves bits between equal dtypes"),
    });
    /// `has_zero_negated_field`.
    pub const HAS_ZERO_NEGATED_FIELD: Pred = Pred(&PredDef {
        name: "has_zero_negated_field",
        says: None,
    });
}

fn copy_cast(r: &Record, p: &S4d4Tr, t: Target) -> Result<(), Fail> {
    use s4d4_tr::off;
    let f = S4d4Tr::field;
    let opcode = p.opcode();
    if let Some(i) = p.reserved1.iter().position(|&b| b != 0) {
        let field = FieldRef {
            offset: (off::RESERVED1 + i) as u8,
            ..f(off::RESERVED1)
        };
        return Err(fail(
            Pred::S4D4_TR_RESERVED_ZERO,
            field,
            Why::Byte(p.reserved1[i]),
        ));
    }
    if p.mask_enable != 0 {
        return Err(fail(
            Pred::MASK_ENABLE_ZERO,
            f(off::MASK_ENABLE),
            Why::Byte(p.mask_enable),
        ));
    }
    dtype_valid(f(off::IN_DTYPE), p.in_dtype, false, false)?;
    dtype_valid(f(off::OUT_DTYPE), p.out_dtype, true, false)?;
    if !p.op.is_named() {
        return Err(fail(Pred::IS_VALID_ENUM, f(off::OP), Why::Byte(p.op.0)));
    }
    if !matches!(p.op_dim, PoolDim::UNUSED | PoolDim::X) {
        return Err(fail(
            Pred::IS_ZERO_SUBDIM,
            f(off::OP_DIM),
            Why::Byte(p.op_dim.0),
        ));
    }
    let ch = p.num_active_channels;
    channel_range(f(off::NUM_ACTIVE_CHANNELS), ch)?;
    let src = Opnd::four(f(off::SRC), p.src, p.in_dtype, false);
    let dst = Opnd::four(f(off::DST), p.dst, p.out_dtype, true);
    starts_then_tensors(&[src, dst], ch)?;
    let src_count = (src.field, p.src.elements());
    let dst_count = (dst.field, p.dst.elements());
    same_count(Pred::S4D4_TR_SAME_SRC_DST_COUNT, src_count, dst_count)?;
    if p.op != AluOp::BYPASS {
        return Err(fail(
            Pred::S4D4_TR_OP_BYPASS,
            f(off::OP),
            Why::Op { opcode, op: p.op },
        ));
    }
    if opcode == Opcode::COPY && p.in_dtype != p.out_dtype {
        return Err(fail(
            Pred::S4D4_TR_SAME_SRC_DST_TYPE,
            f(off::OUT_DTYPE),
            in_out(p.in_dtype, p.out_dtype),
        ));
    }
    if p.negated != 0 {
        return Err(fail(
            Pred::HAS_ZERO_NEGATED_FIELD,
            f(off::NEGATED),
            Why::Byte(p.negated),
        ));
    }
    // Emulator checks (EC-40).
    addr_modes(&[src, dst])?;
    check_event_modes_emulated(r)?;
    on_pool(opcode, f(off::SRC), t)?;
    // EC-45: Copy executes every admitted dtype. EC-46: Cast between equal
    // dtypes copies bits; between different dtypes FP8 is not executed.
    if opcode == Opcode::CAST && p.in_dtype != p.out_dtype {
        for (at, d) in [(off::IN_DTYPE, p.in_dtype), (off::OUT_DTYPE, p.out_dtype)] {
            if d.is_fp8() {
                return Err(fail(Pred::EMU_DTYPE_SUPPORTED, f(at), Why::Dtype(d)));
            }
        }
    }
    footprints(&[src, dst], t.arch)?;
    kernel_shape(&[src_count, dst_count])?;
    overlap(&[src], &dst, ch)
}

// ---------------------------------------------------------------------------
// 0x41 TENSOR_TENSOR_ARITH / 0x51 TENSOR_TENSOR_BITVEC
// ---------------------------------------------------------------------------

/// src0's dtype nibble (EC-43), named for messages.
const SRC0_DTYPE: FieldRef = FieldRef {
    name: "in_dtypes (src0, low nibble)",
    offset: s3s3d3_tt::off::IN_DTYPES as u8,
};
/// src1's dtype nibble (EC-43), named for messages.
const SRC1_DTYPE: FieldRef = FieldRef {
    name: "in_dtypes (src1, high nibble)",
    offset: s3s3d3_tt::off::IN_DTYPES as u8,
};

/// EC-49: the POOL-legal 0x41 forms the emulator does not execute.
const fn tt_op_unexecuted(op: AluOp) -> bool {
    matches!(
        op,
        AluOp::POW
            | AluOp::MOD
            | AluOp::DIVIDE_INT
            | AluOp::DIVIDE_UINT
            | AluOp::MOD_INT
            | AluOp::MOD_UINT
            | AluOp::ABS_MAX_INT
            | AluOp::ABS_MIN_INT
            | AluOp::ABS_DIFF_INT
    )
}

/// `is_valid_tensor_tensor_arith_pool`'s op arm (0x41): POW, an int op on
/// all-32-bit or all-64-bit integers, or base ADD/SUBTRACT/MULT.
fn pool_arm_op(op: AluOp, d: [Dtype; 3]) -> bool {
    let all = |set: [Dtype; 2]| d.iter().all(|x| set.contains(x));
    let int = op.is_valid_int_aluop();
    op == AluOp::POW
        || (int && all([Dtype::INT32, Dtype::UINT32]))
        || matches!(op, AluOp::ADD | AluOp::SUBTRACT | AluOp::MULT)
        || (int && all([Dtype::INT64, Dtype::UINT64]))
}

/// `is_s3s3d3_tt_tensors_in_sbuf`: a register-mode address passes (resolved
/// at run time, EC-5); otherwise bits 0..28 must lie in SBUF.
fn in_sbuf(a: Addr4) -> bool {
    a.is_register() || a.byte_addr() < crate::limits::SBUF_END
}

/// The tensor-tensor pair's own predicates (SPEC-KERNELS §13).
impl Pred {
    /// `s3s3d3_tt_valid_op`.
    pub const S3S3D3_TT_VALID_OP: Pred = Pred(&PredDef {
        name: "s3s3d3_tt_valid_op",
        says: Some("{op} is not an op of {opcode}"),
    });
    /// `s3s3d3_tt_dtype` (0x51: out is an integer dtype).
    pub const S3S3D3_TT_DTYPE: Pred = Pred(&PredDef {
        name: "s3s3d3_tt_dtype",
        says: Some("{d}; TENSOR_TENSOR_BITVEC writes an integer dtype"),
    });
    /// `s3s3d3_tt_src_dst_dtype` (0x51: src0 == src1 == out, shifts aside).
    pub const S3S3D3_TT_SRC_DST_DTYPE: Pred = Pred(&PredDef {
        name: "s3s3d3_tt_src_dst_dtype",
        says: Some(
            "{op} with src0 {src0}, src1 {src1}, out {out}: bitvec needs src0 == src1 == out",
        ),
    });
    /// `s3s3d3_tt_valid_int_signness`.
    pub const S3S3D3_TT_VALID_INT_SIGNNESS: Pred = Pred(&PredDef {
        name: "s3s3d3_tt_valid_int_signness",
        says: Some(
            "{op} with src0 {src0}, src1 {src1}, out {out}: an integer op needs three \
         dtypes of one signedness that the op accepts",
        ),
    });
    /// `s3s3d3_tt_src_element_cnt_check`.
    pub const S3S3D3_TT_SRC_ELEMENT_CNT_CHECK: Pred = Pred(&PredDef {
        name: "s3s3d3_tt_src_element_cnt_check",
        says: None,
    });
    /// `s3s3d3_tt_dst_element_cnt_check`.
    pub const S3S3D3_TT_DST_ELEMENT_CNT_CHECK: Pred = Pred(&PredDef {
        name: "s3s3d3_tt_dst_element_cnt_check",
        says: None,
    });
    /// `is_valid_tensor_tensor_arith_pool` (POOL streams only; EC-41, EC-52):
    /// the op arm.
    pub const IS_VALID_TENSOR_TENSOR_ARITH_POOL: Pred = Pred(&PredDef {
        name: "is_valid_tensor_tensor_arith_pool",
        says: Some(
            "{op} with src0 {src0}, src1 {src1}, out {out} is not a POOL form \
             (POW, ADD/SUBTRACT/MULT, or an integer op on INT32/UINT32 or INT64/UINT64)",
        ),
    });
}

/// `is_valid_tensor_tensor_arith_pool`'s SBUF clause (EC-41).
const TT_POOL_SBUF_ONLY: Pred = Pred(&PredDef {
    name: "is_valid_tensor_tensor_arith_pool",
    says: Some(
        "address {addr} is not in SBUF; tensor-tensor operands on POOL are SBUF-only (EC-41)",
    ),
});
/// EC-49: a POOL-legal 0x41 op the emulator does not execute.
const TT_OP_NOT_EXECUTED: Pred = Pred(&PredDef {
    name: "emu_opcode_supported",
    says: Some("{opcode} op {op} is not executed by the emulator (EC-49)"),
});

fn tensor_tensor(r: &Record, p: &S3s3d3Tt, t: Target) -> Result<(), Fail> {
    use s3s3d3_tt::off;
    let f = S3s3d3Tt::field;
    let opcode = p.opcode();
    let bitvec = opcode == Opcode::TENSOR_TENSOR_BITVEC;
    let (s0, s1, out, op) = (p.in_dtypes.src0(), p.in_dtypes.src1(), p.out_dtype, p.op);
    // is_valid_dtype_64: FP32R only on out; UINT64/INT64 admitted (EC-53 later).
    dtype_valid(f(off::OUT_DTYPE), out, true, true)?;
    dtype_valid(SRC0_DTYPE, s0, false, true)?;
    dtype_valid(SRC1_DTYPE, s1, false, true)?;
    if !op.is_named() {
        return Err(fail(Pred::IS_VALID_ENUM, f(off::OP), Why::Byte(op.0)));
    }
    let valid_op = if bitvec {
        op.is_general_bitvec_op()
    } else {
        op.is_general_arith_op() || op == AluOp::POW || op.is_valid_int_aluop()
    };
    if !valid_op {
        return Err(fail(
            Pred::S3S3D3_TT_VALID_OP,
            f(off::OP),
            Why::Op { opcode, op },
        ));
    }
    let op_dtypes = Why::OpDtypes {
        op,
        src0: s0,
        src1: s1,
        out,
    };
    if bitvec && !out.is_int() {
        return Err(fail(
            Pred::S3S3D3_TT_DTYPE,
            f(off::OUT_DTYPE),
            Why::Dtype(out),
        ));
    }
    if bitvec {
        let equal = s0 == s1 && s1 == out;
        // A 64-bit shift takes a UINT32 count.
        let shift64 = op.is_shift_op() && s0.is_64bit() && s1 == Dtype::UINT32 && out == s0;
        if !(equal || shift64) {
            return Err(fail(
                Pred::S3S3D3_TT_SRC_DST_DTYPE,
                f(off::IN_DTYPES),
                op_dtypes,
            ));
        }
    }
    if op.is_valid_int_aluop() {
        let d = [s0, s1, out];
        let signed = d.iter().all(|x| x.is_signed_int()) && op.is_signed_alu_op();
        let unsigned = d.iter().all(|x| x.is_unsigned_int()) && op.is_unsigned_alu_op();
        if !(signed || unsigned) {
            return Err(fail(
                Pred::S3S3D3_TT_VALID_INT_SIGNNESS,
                f(off::IN_DTYPES),
                op_dtypes,
            ));
        }
    }
    let ch = p.num_active_channels;
    channel_range(f(off::NUM_ACTIVE_CHANNELS), ch)?;
    let three = |field, t: &crate::isa::tensor::Tensor3d, dtype, write| {
        Opnd::of_dims(3, field, t.to_4d(), dtype, write)
    };
    let src0 = three(f(off::SRC0), &p.src0, s0, false);
    let src1 = three(f(off::SRC1), &p.src1, s1, false);
    let dst = three(f(off::DST), &p.dst, out, true);
    let ops = [src0, src1, dst];
    starts_then_tensors(&ops, ch)?;
    let c0 = (src0.field, p.src0.elements());
    let c1 = (src1.field, p.src1.elements());
    let cd = (dst.field, p.dst.elements());
    // The shape-register exemption (ADDR4 bit 30) of the two count checks.
    let shaped = |a: Addr4, b: Addr4| a.shape_from_register() || b.shape_from_register();
    if !shaped(p.src0.addr, p.src1.addr) {
        same_count(Pred::S3S3D3_TT_SRC_ELEMENT_CNT_CHECK, c1, c0)?;
    }
    if !shaped(p.src0.addr, p.dst.addr) {
        same_count(Pred::S3S3D3_TT_DST_ELEMENT_CNT_CHECK, cd, c0)?;
    }
    if t.engine == Engine::Pool {
        // EC-49: the op arm applies to 0x41; EC-52: 0x51 takes the SBUF clause only.
        if !bitvec && !pool_arm_op(op, [s0, s1, out]) {
            return Err(fail(
                Pred::IS_VALID_TENSOR_TENSOR_ARITH_POOL,
                f(off::OP),
                op_dtypes,
            ));
        }
        // EC-41: a PSUM operand on POOL fails here.
        if let Some(o) = ops.iter().find(|o| !in_sbuf(o.t.addr)) {
            return Err(fail(
                TT_POOL_SBUF_ONLY,
                o.field,
                Why::Psum { addr: o.t.addr.0 },
            ));
        }
    }
    // Emulator checks (EC-40).
    addr_modes(&ops)?;
    check_event_modes_emulated(r)?;
    on_pool(opcode, f(off::OP), t)?;
    if bitvec && t.arch == Arch::Sunda {
        // EC-58: SUNDA's kernel table has no 0x51 row.
        return Err(fail(
            Pred::EMU_OPCODE_SUPPORTED,
            f(off::OP),
            Why::Arch {
                opcode,
                arch: t.arch,
            },
        ));
    }
    if !bitvec && tt_op_unexecuted(op) {
        // EC-49
        return Err(fail(TT_OP_NOT_EXECUTED, f(off::OP), Why::Op { opcode, op }));
    }
    // EC-44 (FP8 on these paths) and EC-53 (64-bit operands).
    for (field, d) in [(SRC0_DTYPE, s0), (SRC1_DTYPE, s1), (f(off::OUT_DTYPE), out)] {
        if d.is_fp8() || d.is_64bit() {
            return Err(fail(Pred::EMU_DTYPE_SUPPORTED, field, Why::Dtype(d)));
        }
    }
    footprints(&ops, t.arch)?;
    kernel_shape(&[c0, c1, cd])?;
    overlap(&[src0, src1], &dst, ch)
}

// ---------------------------------------------------------------------------
// Shared by the stretch kernels
// ---------------------------------------------------------------------------

/// The first non-zero byte of `bytes` (at record offset `at`) as a failure of
/// `pred`, named as byte `at + i` of `field`.
fn reserved(pred: Pred, field: FieldRef, at: usize, bytes: &[u8]) -> Result<(), Fail> {
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
fn sbuf3(field: FieldRef, t: &crate::isa::tensor::Tensor3d, dtype: Dtype, write: bool) -> Opnd {
    Opnd::of_dims(3, field, t.to_4d(), dtype, write).sbuf_only()
}

/// The partitions of `lanes` lanes from the operand's start partition.
fn partitions(o: &Opnd, lanes: impl Iterator<Item = u32>) -> Vec<u32> {
    let start = o.loc().map_or(0, |l| l.partition);
    lanes.map(|p| start + p).collect()
}

/// `emu_overlap` for kernels whose src and dst must be disjoint (EC-21):
/// no two dst elements share a byte, and no src byte is a dst byte in a
/// partition both touch.
fn overlap_disjoint(
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
fn not_on_sunda(pred: Pred, opcode: Opcode, t: Target) -> Result<(), Fail> {
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

// ---------------------------------------------------------------------------
// 0x7C / 0x7D CROSS_LANE_REDUCE
// ---------------------------------------------------------------------------

/// CROSS_LANE_REDUCE's own predicates (SPEC-KERNELS §13).
impl Pred {
    /// `s4d4_cr_reserved_zero` (bytes 37..39).
    pub const S4D4_CR_RESERVED_ZERO: Pred = Pred(&PredDef {
        name: "s4d4_cr_reserved_zero",
        says: None,
    });
    /// `valid_reduce_axis_enum` (byte 36 not All or Partitions).
    pub const VALID_REDUCE_AXIS_ENUM: Pred = Pred(&PredDef {
        name: "valid_reduce_axis_enum",
        says: Some("{v}; must be all 0 or partitions 1"),
    });
    /// `valid_axis_dst_element_cnt`.
    pub const VALID_AXIS_DST_ELEMENT_CNT: Pred = Pred(&PredDef {
        name: "valid_axis_dst_element_cnt",
        says: None,
    });
}

/// `is_valid_enum` on the REDUCE_OP byte (EC-40).
const CR_REDUCE_OP_ENUM: Pred = Pred(&PredDef {
    name: "is_valid_enum",
    says: Some("{x} is not a REDUCE_OP"),
});
/// `valid_axis_dst_element_cnt` on the All axis: one dst element.
const CR_ALL_AXIS_DST: Pred = Pred(&PredDef {
    name: "valid_axis_dst_element_cnt",
    says: Some("the All axis writes one element, but the dst walk holds {n}"),
});
/// EC-54: arith ops on 0x7C, bitwise ops on 0x7D.
const CR_OP_CLASS: Pred = Pred(&PredDef {
    name: "emu_opcode_supported",
    says: Some(
        "{opcode} does not execute reduce op {op} (arith ops on 0x7C, bitwise ops on 0x7D; EC-54)",
    ),
});
/// EC-54: a bitwise reduce's dtypes.
const CR_BITWISE_DTYPES: Pred = Pred(&PredDef {
    name: "emu_dtype_supported",
    says: Some(
        "in_dtype {in}, out_dtype {out}: a bitwise reduce needs equal \
     8/16/32-bit integer dtypes (EC-54)",
    ),
});

fn cross_lane_reduce(r: &Record, p: &S4d4Cr, t: Target) -> Result<(), Fail> {
    use s4d4_cr::off;
    let f = S4d4Cr::field;
    let opcode = p.opcode();
    reserved(
        Pred::S4D4_CR_RESERVED_ZERO,
        f(off::RESERVED0),
        off::RESERVED0,
        &p.reserved0,
    )?;
    // EC-40: a REDUCE_OP byte > 5 fails is_valid_enum right after the reserved bytes.
    if !p.reduce_op.is_named() {
        return Err(fail(
            CR_REDUCE_OP_ENUM,
            f(off::REDUCE_OP),
            Why::Byte(p.reduce_op.0),
        ));
    }
    dtype_valid(f(off::IN_DTYPE), p.in_dtype, false, false)?;
    dtype_valid(f(off::OUT_DTYPE), p.out_dtype, true, false)?;
    let ch = p.num_active_channels;
    let src = Opnd::four(f(off::SRC), p.src, p.in_dtype, false).sbuf_only();
    let dst = Opnd::four(f(off::DST), p.dst, p.out_dtype, true).sbuf_only();
    start_addr(&src, ch)?;
    start_addr(&dst, 1)?;
    channels_in_range(Pred::CHECK_ACTIVE_CHANNELS, f(off::NUM_ACTIVE_CHANNELS), ch)?;
    tensor_valid(&src)?;
    tensor_valid(&dst)?;
    if !p.reduce_axis.is_named() {
        return Err(fail(
            Pred::VALID_REDUCE_AXIS_ENUM,
            f(off::REDUCE_AXIS),
            Why::Byte(p.reduce_axis.0),
        ));
    }
    let src_count = (src.field, p.src.elements());
    let dst_count = (dst.field, p.dst.elements());
    if p.reduce_axis == ReduceAxis::ALL {
        // Every dst num is 1, unless the dst shape comes from a register.
        if !p.dst.addr.shape_from_register() && p.dst.num != [1; 4] {
            return Err(fail(CR_ALL_AXIS_DST, dst.field, Why::Value(dst_count.1)));
        }
    } else {
        same_count(Pred::VALID_AXIS_DST_ELEMENT_CNT, dst_count, src_count)?;
    }
    addr_modes(&[src, dst])?;
    check_event_modes_emulated(r)?;
    // EC-54: arith ops on 0x7C, bitwise ops on 0x7D.
    let arith = opcode == Opcode::CROSS_LANE_REDUCE_ARITH;
    if p.reduce_op.is_arith() != arith {
        return Err(fail(
            CR_OP_CLASS,
            f(off::REDUCE_OP),
            Why::Reduce {
                opcode,
                op: p.reduce_op,
            },
        ));
    }
    if arith {
        for (at, d) in [(off::IN_DTYPE, p.in_dtype), (off::OUT_DTYPE, p.out_dtype)] {
            if d.is_fp8() {
                return Err(fail(Pred::EMU_DTYPE_SUPPORTED, f(at), Why::Dtype(d)));
            }
        }
    } else {
        let int32 = matches!(p.in_dtype.size(), Some(1 | 2 | 4)) && p.in_dtype.is_int();
        if p.in_dtype != p.out_dtype || !int32 {
            return Err(fail(
                CR_BITWISE_DTYPES,
                f(off::OUT_DTYPE),
                in_out(p.in_dtype, p.out_dtype),
            ));
        }
    }
    footprints(&[src, dst], t.arch)?;
    kernel_shape(&[src_count, dst_count])?;
    let src_parts = partitions(&src, 0..ch as u32);
    let dst_parts = partitions(&dst, 0..1);
    overlap_disjoint(&src, &src_parts, &dst, &dst_parts)
}

// ---------------------------------------------------------------------------
// 0xBE GET_SEQUENCE_BOUNDS
// ---------------------------------------------------------------------------

/// GET_SEQUENCE_BOUNDS's own predicates (SPEC-KERNELS §13).
impl Pred {
    /// `has_valid_nc_get_sequence_bounds` (NeuronCore v3 and later).
    pub const HAS_VALID_NC_GET_SEQUENCE_BOUNDS: Pred = Pred(&PredDef {
        name: "has_valid_nc_get_sequence_bounds",
        says: None,
    });
    /// `has_valid_s3d3_seq_bounds_channels` (exactly one lane).
    pub const HAS_VALID_S3D3_SEQ_BOUNDS_CHANNELS: Pred = Pred(&PredDef {
        name: "has_valid_s3d3_seq_bounds_channels",
        says: Some("{v}; must be 1"),
    });
    /// `s3d3_seq_bounds_reserved_zero` (byte 13, bytes 48..63).
    pub const S3D3_SEQ_BOUNDS_RESERVED_ZERO: Pred = Pred(&PredDef {
        name: "s3d3_seq_bounds_reserved_zero",
        says: None,
    });
    /// `has_valid_seq_bounds_dtype` (INT32 or FP32 each).
    pub const HAS_VALID_SEQ_BOUNDS_DTYPE: Pred = Pred(&PredDef {
        name: "has_valid_seq_bounds_dtype",
        says: Some("in_dtype {in}, out_dtype {out}; each must be int32 or fp32"),
    });
    /// `s3d3_seq_bounds_element_count_check_t3d`.
    pub const S3D3_SEQ_BOUNDS_ELEMENT_COUNT_CHECK_T3D: Pred = Pred(&PredDef {
        name: "s3d3_seq_bounds_element_count_check_t3d",
        says: None,
    });
}

/// The element-count check's second clause: `dst.num_elem[2]` must be 2.
const SEQ_BOUNDS_DIM: Pred = Pred(&PredDef {
    name: "s3d3_seq_bounds_element_count_check_t3d",
    says: Some("num_elem[2] = {n}; must be 2 (starts, then ends)"),
});

fn sequence_bounds(r: &Record, p: &S3d3SeqBounds, t: Target) -> Result<(), Fail> {
    use s3d3_seq_bounds::off;
    let f = S3d3SeqBounds::field;
    not_on_sunda(
        Pred::HAS_VALID_NC_GET_SEQUENCE_BOUNDS,
        Opcode::GET_SEQUENCE_BOUNDS,
        t,
    )?;
    let ch = p.num_active_channels;
    channels_in_range(Pred::CHECK_ACTIVE_CHANNELS, f(off::NUM_ACTIVE_CHANNELS), ch)?;
    if ch != 1 {
        return Err(fail(
            Pred::HAS_VALID_S3D3_SEQ_BOUNDS_CHANNELS,
            f(off::NUM_ACTIVE_CHANNELS),
            Why::Byte(ch),
        ));
    }
    let rz = Pred::S3D3_SEQ_BOUNDS_RESERVED_ZERO;
    reserved(rz, f(off::RESERVED0), off::RESERVED0, &[p.reserved0])?;
    reserved(rz, f(off::RESERVED1), off::RESERVED1, &p.reserved1)?;
    dtype_valid(f(off::IN_DTYPE), p.in_dtype, false, false)?;
    dtype_valid(f(off::OUT_DTYPE), p.out_dtype, true, false)?;
    let ok = |d| matches!(d, Dtype::INT32 | Dtype::FP32);
    if !ok(p.in_dtype) || !ok(p.out_dtype) {
        let at = if ok(p.in_dtype) {
            off::OUT_DTYPE
        } else {
            off::IN_DTYPE
        };
        return Err(fail(
            Pred::HAS_VALID_SEQ_BOUNDS_DTYPE,
            f(at),
            in_out(p.in_dtype, p.out_dtype),
        ));
    }
    let src = sbuf3(f(off::SRC), &p.src, p.in_dtype, false);
    let dst = sbuf3(f(off::DST), &p.dst, p.out_dtype, true);
    starts_then_tensors(&[src, dst], ch)?;
    let (n, m) = (p.src.elements(), p.dst.elements());
    let pred = Pred::S3D3_SEQ_BOUNDS_ELEMENT_COUNT_CHECK_T3D;
    if m != 2 * n {
        let why = Why::DerivedCount {
            count: m,
            expected: 2 * n,
            rule: "2 · count(src)",
        };
        return Err(fail(pred, dst.field, why));
    }
    if p.dst.num[2] != 2 {
        let why = Why::Value(p.dst.num[2] as u64);
        return Err(fail(SEQ_BOUNDS_DIM, dst.field, why));
    }
    addr_modes(&[src, dst])?;
    check_event_modes_emulated(r)?;
    footprints(&[src, dst], t.arch)?;
    kernel_shape(&[(src.field, n), (dst.field, m)])?;
    let (sp, dp) = (partitions(&src, 0..1), partitions(&dst, 0..1));
    overlap_disjoint(&src, &sp, &dst, &dp)
}

// ---------------------------------------------------------------------------
// 0xF2 NONZERO_WITH_COUNT
// ---------------------------------------------------------------------------

/// NONZERO_WITH_COUNT's own predicates (SPEC-KERNELS §13).
impl Pred {
    /// `has_valid_nc_nonzero_with_count` (NeuronCore v3 and later).
    pub const HAS_VALID_NC_NONZERO_WITH_COUNT: Pred = Pred(&PredDef {
        name: "has_valid_nc_nonzero_with_count",
        says: None,
    });
    /// `s3d3_nonzero_with_count_reserved_zero` (bytes 37..39, 60..63).
    pub const S3D3_NONZERO_WITH_COUNT_RESERVED_ZERO: Pred = Pred(&PredDef {
        name: "s3d3_nonzero_with_count_reserved_zero",
        says: None,
    });
    /// `has_valid_immediates` (an IMM_SRC byte not 0, 1 or 2; EC-60).
    pub const HAS_VALID_IMMEDIATES: Pred = Pred(&PredDef {
        name: "has_valid_immediates",
        says: Some("{v}; IMM_SRC must be 0, 1 or 2"),
    });
    /// `has_valid_nonzero_with_count_dtype` (in INT32 or FP32, out INT32).
    pub const HAS_VALID_NONZERO_WITH_COUNT_DTYPE: Pred = Pred(&PredDef {
        name: "has_valid_nonzero_with_count_dtype",
        says: Some("in_dtype {in}, out_dtype {out}; in must be int32 or fp32, out int32"),
    });
    /// `s3d3_nonzero_with_count_element_count_check_t3d`.
    pub const S3D3_NONZERO_WITH_COUNT_ELEMENT_COUNT_CHECK_T3D: Pred = Pred(&PredDef {
        name: "s3d3_nonzero_with_count_element_count_check_t3d",
        says: None,
    });
}

/// EC-60: pointer and register immediates are not emulated.
const NZ_IMM_SRC_MODE: Pred = Pred(&PredDef {
    name: "emu_addr_mode_supported",
    says: Some("IMM_SRC {imm}: pointer and register immediates are not emulated (EC-60)"),
});

fn nonzero_with_count(r: &Record, p: &S3d3NonzeroWithCount, t: Target) -> Result<(), Fail> {
    use s3d3_nonzero::off;
    let f = S3d3NonzeroWithCount::field;
    not_on_sunda(
        Pred::HAS_VALID_NC_NONZERO_WITH_COUNT,
        Opcode::NONZERO_WITH_COUNT,
        t,
    )?;
    let ch = p.num_active_channels;
    channels_in_range(Pred::CHECK_ACTIVE_CHANNELS, f(off::NUM_ACTIVE_CHANNELS), ch)?;
    let rz = Pred::S3D3_NONZERO_WITH_COUNT_RESERVED_ZERO;
    reserved(rz, f(off::RESERVED0), off::RESERVED0, &p.reserved0)?;
    reserved(rz, f(off::RESERVED1), off::RESERVED1, &p.reserved1)?;
    // EC-60: has_valid_immediates fails iff the IMM_SRC byte is not 0, 1 or 2.
    for (at, s) in [
        (off::INDEX_OFFSET_SRC, p.index_offset_src),
        (off::PADDING_VAL_SRC, p.padding_val_src),
    ] {
        if !s.is_named() {
            return Err(fail(Pred::HAS_VALID_IMMEDIATES, f(at), Why::Byte(s.0)));
        }
    }
    dtype_valid(f(off::IN_DTYPE), p.in_dtype, false, false)?;
    dtype_valid(f(off::OUT_DTYPE), p.out_dtype, true, false)?;
    let in_ok = matches!(p.in_dtype, Dtype::INT32 | Dtype::FP32);
    if !in_ok || p.out_dtype != Dtype::INT32 {
        let at = if in_ok { off::OUT_DTYPE } else { off::IN_DTYPE };
        return Err(fail(
            Pred::HAS_VALID_NONZERO_WITH_COUNT_DTYPE,
            f(at),
            in_out(p.in_dtype, p.out_dtype),
        ));
    }
    let src = sbuf3(f(off::SRC), &p.src, p.in_dtype, false);
    let dst = sbuf3(f(off::DST), &p.dst, p.out_dtype, true);
    starts_then_tensors(&[src, dst], ch)?;
    let (n, m) = (p.src.elements(), p.dst.elements());
    if m != n + 1 {
        return Err(fail(
            Pred::S3D3_NONZERO_WITH_COUNT_ELEMENT_COUNT_CHECK_T3D,
            dst.field,
            Why::DerivedCount {
                count: m,
                expected: n + 1,
                rule: "count(src) + 1",
            },
        ));
    }
    addr_modes(&[src, dst])?;
    // EC-60: pointer and register immediates are not emulated.
    for (at, s) in [
        (off::INDEX_OFFSET_SRC, p.index_offset_src),
        (off::PADDING_VAL_SRC, p.padding_val_src),
    ] {
        if s != ImmSrc::INLINE {
            return Err(fail(NZ_IMM_SRC_MODE, f(at), Why::Byte(s.0)));
        }
    }
    check_event_modes_emulated(r)?;
    // EC-56: only lanes whose src partition is the first of a core are processed.
    let lanes: Vec<u32> = {
        let start = src.loc().map_or(0, |l| l.partition);
        (0..ch as u32)
            .filter(|q| (start + q).is_multiple_of(crate::limits::LANES_PER_POOL_CORE))
            .collect()
    };
    if lanes.is_empty() {
        // No processed lane: nothing is read or written (§16b.5).
        return kernel_shape(&[(src.field, n), (dst.field, m)]);
    }
    footprints(&[src, dst], t.arch)?;
    kernel_shape(&[(src.field, n), (dst.field, m)])?;
    let sp = partitions(&src, lanes.iter().copied());
    let dp = partitions(&dst, lanes.iter().copied());
    overlap_disjoint(&src, &sp, &dst, &dp)
}

// ---------------------------------------------------------------------------
// 0xF0 spec 0 ENGINE_NOP and spec 2 EXTENDED_TTA (EC-55)
// ---------------------------------------------------------------------------

/// EXTENDED_TTA's own predicates (EC-55).
impl Pred {
    /// `ext_tta_valid_op` (EXTENDED_TTA op not ADD or MULT, EC-55).
    pub const EXT_TTA_VALID_OP: Pred = Pred(&PredDef {
        name: "ext_tta_valid_op",
        says: Some("{alu}; EXTENDED_TTA takes add or mult"),
    });
    /// `ext_tta_element_count` (EC-55).
    pub const EXT_TTA_ELEMENT_COUNT: Pred = Pred(&PredDef {
        name: "ext_tta_element_count",
        says: None,
    });
}

/// `reserved_zero` on completion_info's reserved bits (EC-55).
const COMPLETION_RESERVED: Pred = Pred(&PredDef {
    name: "reserved_zero",
    says: Some("{x}; its reserved bits 1, 6 and 7 must be 0 (EC-55)"),
});

/// EC-55: completion_info's reserved bits 1, 6 and 7 must be zero.
fn completion_reserved(field: FieldRef, info: u8) -> Result<(), Fail> {
    if info & completion::RESERVED != 0 {
        return Err(fail(COMPLETION_RESERVED, field, Why::Byte(info)));
    }
    Ok(())
}

fn engine_nop(r: &Record, p: &EngineNop, t: Target) -> Result<(), Fail> {
    use extended::nop_off as off;
    let f = EngineNop::field;
    // EC-55
    completion_reserved(f(off::COMPLETION_INFO), p.completion_info)?;
    reserved(
        Pred::RESERVED_ZERO,
        f(off::RESERVED),
        off::RESERVED,
        &p.reserved,
    )?;
    check_event_modes_emulated(r)?;
    // EC-58: SUNDA has no 0xF0 rows.
    if t.arch == Arch::Sunda {
        let why = Why::Arch {
            opcode: Opcode::EXTENDED_INST,
            arch: t.arch,
        };
        return Err(fail(Pred::EMU_OPCODE_SUPPORTED, f(off::SPEC), why));
    }
    Ok(())
}

/// src0's dtype nibble of EXTENDED_TTA (EC-43).
const TTA_SRC0_DTYPE: FieldRef = FieldRef {
    name: "in_dtypes (src0, low nibble)",
    offset: extended::tta_off::IN_DTYPES as u8,
};
/// src1's dtype nibble of EXTENDED_TTA (EC-43).
const TTA_SRC1_DTYPE: FieldRef = FieldRef {
    name: "in_dtypes (src1, high nibble)",
    offset: extended::tta_off::IN_DTYPES as u8,
};

fn ext_tta(r: &Record, p: &ExtTta, t: Target) -> Result<(), Fail> {
    use extended::tta_off as off;
    let f = ExtTta::field;
    // EC-55, in this order.
    completion_reserved(f(off::COMPLETION_INFO), p.completion_info)?;
    reserved(
        Pred::RESERVED_ZERO,
        f(off::RESERVED0),
        off::RESERVED0,
        &p.reserved0,
    )?;
    reserved(
        Pred::RESERVED_ZERO,
        f(off::RESERVED1),
        off::RESERVED1,
        &p.reserved1,
    )?;
    if !matches!(p.op, AluOp::ADD | AluOp::MULT) {
        return Err(fail(Pred::EXT_TTA_VALID_OP, f(off::OP), Why::Byte(p.op.0)));
    }
    let (s0, s1, out) = (p.in_dtypes.src0(), p.in_dtypes.src1(), p.out_dtype);
    dtype_valid(f(off::OUT_DTYPE), out, true, false)?;
    dtype_valid(TTA_SRC0_DTYPE, s0, false, false)?;
    dtype_valid(TTA_SRC1_DTYPE, s1, false, false)?;
    // EC-55's lanes: 16 per active port, 128 for 0 ports.
    let lanes = completion::lanes(p.completion_info) as u8;
    let two = |field, t: &crate::isa::tensor::Tensor2d, dtype, write| {
        Opnd::of_dims(2, field, t.to_4d(), dtype, write).sbuf_only()
    };
    let src0 = two(f(off::SRC0), &p.src0, s0, false);
    let src1 = two(f(off::SRC1), &p.src1, s1, false);
    let dst = two(f(off::DST), &p.dst, out, true);
    let ops = [src0, src1, dst];
    starts_then_tensors(&ops, lanes)?;
    let c0 = (src0.field, p.src0.elements());
    let c1 = (src1.field, p.src1.elements());
    let cd = (dst.field, p.dst.elements());
    same_count(Pred::EXT_TTA_ELEMENT_COUNT, c1, c0)?;
    same_count(Pred::EXT_TTA_ELEMENT_COUNT, cd, c0)?;
    addr_modes(&ops)?;
    check_event_modes_emulated(r)?;
    if t.arch == Arch::Sunda {
        // EC-58
        let why = Why::Arch {
            opcode: Opcode::EXTENDED_INST,
            arch: t.arch,
        };
        return Err(fail(Pred::EMU_OPCODE_SUPPORTED, f(off::SPEC), why));
    }
    // EC-44: FP8 on the converting path.
    for (field, d) in [
        (TTA_SRC0_DTYPE, s0),
        (TTA_SRC1_DTYPE, s1),
        (f(off::OUT_DTYPE), out),
    ] {
        if d.is_fp8() {
            return Err(fail(Pred::EMU_DTYPE_SUPPORTED, field, Why::Dtype(d)));
        }
    }
    footprints(&ops, t.arch)?;
    kernel_shape(&[c0, c1, cd])?;
    // EC-42
    overlap(&[src0, src1], &dst, lanes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::tensor::{Data4d, Tensor3d};

    const T: Target = Target::pool(Arch::Cayman);

    fn sbuf(p: u32, off: u32) -> Addr4 {
        Addr4::new(Region::Sbuf, p, off)
    }

    fn row4(a: Addr4, n: u16) -> Tensor4d {
        Tensor4d::new(a, [(n, 1), (1, 1), (1, 1), (1, 1)])
    }

    fn row3(a: Addr4, n: u16) -> Tensor3d {
        Tensor3d::new(a, [(n, 1), (1, 1), (1, 1)])
    }

    fn verdict(r: &Record, t: Target) -> &'static str {
        match super::super::check(r, t) {
            Ok(()) => "ok",
            Err(f) => f.predicate(),
        }
    }

    #[test]
    fn valid_records_pass_and_in_place_is_exact() {
        let iota = D4Iota::new(
            Dtype::INT32,
            16,
            Data4d::new(0, [(8, 1), (1, 0), (1, 0), (1, 0)]),
            8,
            row4(sbuf(0, 0), 8),
        );
        assert_eq!(verdict(&iota.encode(), T), "ok");
        let copy = |src: u32, dst: u32| {
            S4d4Tr::new(
                Opcode::COPY,
                Dtype::FP32,
                Dtype::FP32,
                4,
                row4(sbuf(0, src), 8),
                row4(sbuf(0, dst), 8),
            )
            .encode()
        };
        assert_eq!(verdict(&copy(0, 64), T), "ok");
        // EC-42: exactly in place is allowed; shifted by one element is not.
        assert_eq!(verdict(&copy(0, 0), T), "ok");
        assert_eq!(verdict(&copy(0, 4), T), "emu_overlap");
        let tt = S3s3d3Tt::new(
            Opcode::TENSOR_TENSOR_ARITH,
            AluOp::ADD_INT,
            Dtype::INT32,
            Dtype::INT32,
            Dtype::INT32,
            4,
            row3(sbuf(0, 0), 8),
            row3(sbuf(0, 32), 8),
            row3(sbuf(0, 0), 8),
        );
        assert_eq!(verdict(&tt.encode(), T), "ok");
    }
}
