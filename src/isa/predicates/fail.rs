//! The reasons a record fails validation: one variant per SPEC §5 predicate,
//! carrying the offending values.

use crate::isa::enums::{AluOp, Dtype, Engine, ImmSrc, PoolDim, PoolFunc, ReduceOp};
use crate::isa::layout::FieldRef;
use crate::isa::opcode::Opcode;
use crate::isa::tensor::Region;
use crate::limits::Arch;
use std::fmt;

/// Which tensor (or dtype) of an S4D4_PL or DMA record a reason is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// The input walk / in_dtype.
    Src,
    /// The output walk / out_dtype.
    Dst,
}

impl Operand {
    /// `src` or `dst`.
    pub const fn name(self) -> &'static str {
        match self {
            Operand::Src => "src",
            Operand::Dst => "dst",
        }
    }

    /// `in_dtype` or `out_dtype`.
    pub const fn dtype_field(self) -> &'static str {
        match self {
            Operand::Src => "in_dtype",
            Operand::Dst => "out_dtype",
        }
    }
}

/// The wait or the update half of the events band.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventField {
    /// `wait_mode`, byte 4.
    Wait,
    /// `update_mode`, byte 6.
    Update,
    /// EVENT_SEMAPHORE's extended second wait, bytes 12..64 (EC-24).
    ExtendedWait,
}

/// Why `tensor4d_valid` failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TensorFault {
    /// The byte address is in neither SBUF nor PSUM.
    Region {
        /// The ADDR4.
        addr: u32,
    },
    /// Register mode with a register id >= 64 or bits 8..30 set (EC-5).
    RegisterMode {
        /// The ADDR4.
        addr: u32,
    },
    /// The start address is not a multiple of the dtype's size.
    Alignment {
        /// The ADDR4.
        addr: u32,
        /// The dtype's size.
        align: u32,
    },
    /// A write into PSUM with a dtype that is not 4 bytes.
    PsumWriteDtype {
        /// The dtype.
        dtype: Dtype,
    },
    /// A PSUM address where the vendor's region flags admit SBUF only (EC-41).
    PsumNotAllowed {
        /// The ADDR4.
        addr: u32,
    },
    /// A dim with `num_elem` 0.
    ZeroNum {
        /// The dim (0 = X).
        dim: u8,
    },
}

/// Why `emu_opcode_supported` failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unsupported {
    /// A known opcode whose fields the emulator does not model (SPEC §2).
    NotEmulated,
    /// A register id >= 64 (EC-26..EC-28).
    RegisterId {
        /// Record byte of the field.
        offset: u8,
        /// The id.
        id: u8,
    },
    /// An immediate that does not fit i32 (EC-27, EC-28).
    Immediate {
        /// Record byte of the field.
        offset: u8,
        /// The value.
        value: i64,
    },
    /// A CTRL_AL ALU op other than ADD/SUB (EC-27).
    AluOp(u8),
    /// A COMPARE_BRANCH compare op other than ALWAYS/EQIMM/GTIMM (EC-28).
    CompareOp(u8),
    /// A branch target mode other than REL_IMM/REGISTER (EC-28).
    TargetMode(u8),
    /// A control record's dtype outside its form (EC-27, EC-28).
    ControlDtype(Dtype),
    /// DMA reduce-on-copy (`compute_op` @15 non-zero, EC-23).
    ComputeOp(u8),
    /// A DMA element size of 0 (EC-23).
    ElemSizeZero(Operand),
    /// A DMA dtype pair the emulator cannot convert (EC-23, EC-13b).
    DmaDtypes {
        /// in dtype @62.
        src: Dtype,
        /// out dtype @63.
        dst: Dtype,
    },
    /// DMA element sizes that do not fit the dtypes (EC-23).
    DmaElemSize {
        /// src elem size @36.
        src: u16,
        /// dst elem size @60.
        dst: u16,
    },
    /// The two DMA walks hold different element counts (EC-23).
    DmaCounts {
        /// src elements.
        src: u64,
        /// dst elements.
        dst: u64,
    },
}

/// Why `emu_pool_shape` (EC-10) failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShapeFault {
    /// The dst walk does not hold exactly `num` elements.
    DstCount {
        /// Outputs the src walk makes.
        outputs: u64,
        /// Elements the dst walk holds.
        dst: u64,
    },
    /// More than 2^24 input elements per lane.
    TooLarge {
        /// Input elements per lane.
        elements: u64,
    },
    /// MaxPoolSelect: `period - 1` does not fit out_dtype.
    IndexRange {
        /// The window size.
        period: u64,
        /// The index dtype.
        dtype: Dtype,
    },
}

/// Why `emu_overlap` (EC-21) failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OverlapFault {
    /// src and dst share a byte of one partition.
    SrcDst {
        /// The region.
        region: Region,
        /// A shared byte offset within the partition.
        offset: u32,
    },
    /// Two outputs of the record share a byte.
    Outputs {
        /// A shared byte offset within the partition.
        offset: u32,
    },
    /// EC-42: a source and dst share a byte that is not the same element at
    /// the same lane and walk position.
    NotInPlace {
        /// The region.
        region: Region,
        /// A shared byte offset within the partition.
        offset: u32,
    },
}

/// The first failing predicate of a record, with the offending values (SPEC §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fail {
    /// The opcode is not a device opcode of SPEC §2.
    IsValidEnum {
        /// The opcode.
        opcode: Opcode,
    },
    /// The opcode may not run on this engine (EC-25).
    InstructionEngineCheck {
        /// The opcode.
        opcode: Opcode,
        /// The stream's engine.
        engine: Engine,
    },
    /// Header byte 1 is not 16.
    HasValidInstLen {
        /// The byte.
        len: u8,
    },
    /// A wait or update mode outside SPEC §1's sets.
    ValidEventModes {
        /// Wait or update.
        field: EventField,
        /// The byte.
        mode: u8,
    },
    /// A control/DMA byte the layout does not define is non-zero.
    ReservedZero {
        /// Record byte.
        offset: u8,
        /// Its value.
        value: u8,
    },
    /// An ADDR8 outside EC-22's map.
    IsValidAddr8 {
        /// Which address.
        operand: Operand,
        /// The ADDR8.
        addr: u64,
    },
    /// A form the emulator does not execute.
    EmuOpcodeSupported {
        /// The opcode.
        opcode: Opcode,
        /// What is outside the supported forms.
        why: Unsupported,
    },
    /// S4D4_PL reserved0/reserved1 non-zero.
    S4d4PlReservedZero {
        /// Record byte.
        offset: u8,
        /// Its value.
        value: u8,
    },
    /// A dtype byte that is not allowed on that side.
    DtypeInvalidCheck {
        /// in or out.
        operand: Operand,
        /// The byte.
        dtype: Dtype,
    },
    /// FP32R as in_dtype.
    DtypeFp32rIllegalCheck,
    /// Start partition + channels > 128 (EC-7).
    StartAddrActiveChannels {
        /// src or dst.
        operand: Operand,
        /// Start partition.
        partition: u32,
        /// num_active_channels.
        channels: u8,
    },
    /// pool_func not legal for the opcode.
    HasValidPooltype {
        /// The opcode.
        opcode: Opcode,
        /// The byte.
        pool_func: PoolFunc,
    },
    /// pool_dim not X, XY, XYZ or XYZW (EC-8).
    IsValidSubdim {
        /// The byte.
        pool_dim: PoolDim,
    },
    /// num_active_channels not in 1..=128.
    HasValidActiveChannelRange {
        /// The byte.
        channels: u8,
    },
    /// MaxPoolSelect out_dtype not UINT8/UINT16/UINT32.
    S4d4PlDtypeCheck {
        /// out_dtype.
        out_dtype: Dtype,
    },
    /// A TENSOR4D descriptor is not valid.
    Tensor4dValid {
        /// src or dst.
        operand: Operand,
        /// Why.
        why: TensorFault,
    },
    /// pool_scale not 1.0 (MAX, MaxPoolSelect) or not finite-normal (AVG, EC-9).
    S4d4PoolScaleValid {
        /// The function.
        pool_func: PoolFunc,
        /// The f32 bits.
        bits: u32,
    },
    /// Register, indirect or shape-from-register addressing (EC-5), or an
    /// ADDR8 marker other than physical/VAR_ID (EC-22).
    EmuAddrModeSupported {
        /// src or dst.
        operand: Operand,
        /// The address.
        addr: u64,
    },
    /// Register wait/update forms (EC-2) or EVENT_SEMAPHORE's second wait (EC-24).
    EmuEventModeSupported {
        /// Which field.
        field: EventField,
        /// The byte (for ExtendedWait: the first non-zero byte's value).
        mode: u8,
    },
    /// A dtype the emulator does not execute (EC-13b).
    EmuDtypeSupported {
        /// in or out.
        operand: Operand,
        /// The dtype.
        dtype: Dtype,
    },
    /// A walk leaves the active bytes of its partition (EC-6).
    EmuFootprintInBounds {
        /// src or dst.
        operand: Operand,
        /// The region.
        region: Region,
        /// First byte touched, relative to the partition.
        lo: i64,
        /// One past the last byte touched.
        hi: i64,
        /// Active bytes per partition.
        active: u32,
    },
    /// EC-10's window/output rules.
    EmuPoolShape {
        /// Why.
        why: ShapeFault,
    },
    /// EC-21: bytes shared within one record.
    EmuOverlap {
        /// Why.
        why: OverlapFault,
    },
    /// A predicate of a kernel struct of SPEC-KERNELS §13 (IOTA, COPY, CAST,
    /// the tensor-tensor pair) failed on one field.
    Kernel {
        /// The predicate.
        pred: Pred,
        /// The field it rejects: its name and record byte offset.
        field: FieldRef,
        /// The offending values.
        why: Why,
    },
}

impl Fail {
    /// The predicate's name, exactly as SPEC §5 spells it.
    pub const fn predicate(&self) -> &'static str {
        match self {
            Fail::IsValidEnum { .. } => "is_valid_enum",
            Fail::InstructionEngineCheck { .. } => "instruction_engine_check",
            Fail::HasValidInstLen { .. } => "has_valid_inst_len",
            Fail::ValidEventModes { .. } => "valid_event_modes",
            Fail::ReservedZero { .. } => "reserved_zero",
            Fail::IsValidAddr8 { .. } => "is_valid_addr8",
            Fail::EmuOpcodeSupported { .. } => "emu_opcode_supported",
            Fail::S4d4PlReservedZero { .. } => "s4d4_pl_reserved_zero",
            Fail::DtypeInvalidCheck { .. } => "dtype_invalid_check",
            Fail::DtypeFp32rIllegalCheck => "dtype_fp32r_illegal_check",
            Fail::StartAddrActiveChannels { .. } => "start_addr_active_channels",
            Fail::HasValidPooltype { .. } => "has_valid_pooltype",
            Fail::IsValidSubdim { .. } => "is_valid_subdim",
            Fail::HasValidActiveChannelRange { .. } => "has_valid_active_channel_range",
            Fail::S4d4PlDtypeCheck { .. } => "s4d4_pl_dtype_check",
            Fail::Tensor4dValid { .. } => "tensor4d_valid",
            Fail::S4d4PoolScaleValid { .. } => "s4d4_pool_scale_valid",
            Fail::EmuAddrModeSupported { .. } => "emu_addr_mode_supported",
            Fail::EmuEventModeSupported { .. } => "emu_event_mode_supported",
            Fail::EmuDtypeSupported { .. } => "emu_dtype_supported",
            Fail::EmuFootprintInBounds { .. } => "emu_footprint_in_bounds",
            Fail::EmuPoolShape { .. } => "emu_pool_shape",
            Fail::EmuOverlap { .. } => "emu_overlap",
            Fail::Kernel { pred, .. } => pred.name(),
        }
    }

    /// The record byte offset of the field a kernel-struct failure names.
    pub const fn offset(&self) -> Option<u8> {
        match self {
            Fail::Kernel { field, .. } => Some(field.offset),
            _ => None,
        }
    }

    /// The human-readable detail: the field, its byte offset and the offending value.
    pub fn detail(&self) -> String {
        self.to_string()
    }
}

/// Writes the detail only (the predicate name is [`Fail::predicate`]).
impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Fail::IsValidEnum { opcode } => match opcode.name() {
                Some(n) if opcode.is_pseudo() => write!(
                    f,
                    "opcode byte 0 = 0x{:02X} is the pseudo-opcode {n}; lower the stream first",
                    opcode.0
                ),
                _ => write!(
                    f,
                    "opcode byte 0 = 0x{:02X} is not a device opcode",
                    opcode.0
                ),
            },
            Fail::InstructionEngineCheck { opcode, engine } => {
                write!(f, "{opcode} may not run on the {engine} engine")
            }
            Fail::HasValidInstLen { len } => write!(f, "inst_word_len byte 1 = {len}, must be 16"),
            Fail::ValidEventModes { field, mode } => match field {
                EventField::Update => write!(f, "update_mode byte 6 = 0x{mode:02X}"),
                _ => write!(f, "wait_mode byte 4 = 0x{mode:02X}"),
            },
            Fail::ReservedZero { offset, value } | Fail::S4d4PlReservedZero { offset, value } => {
                write!(f, "reserved byte {offset} = 0x{value:02X}, must be 0")
            }
            Fail::IsValidAddr8 { operand, addr } => {
                write!(
                    f,
                    "{} ADDR8 0x{addr:016X} is outside the map",
                    operand.name()
                )
            }
            Fail::EmuOpcodeSupported { opcode, why } => write_unsupported(f, opcode, why),
            Fail::DtypeInvalidCheck { operand, dtype } => write!(
                f,
                "{} byte {} = {dtype} is not allowed",
                operand.dtype_field(),
                dtype_offset(operand)
            ),
            Fail::DtypeFp32rIllegalCheck => write!(f, "in_dtype byte 32 = fp32r is output-only"),
            Fail::StartAddrActiveChannels {
                operand,
                partition,
                channels,
            } => write!(
                f,
                "{} start partition {partition} + num_active_channels {channels} > 128",
                operand.name()
            ),
            Fail::HasValidPooltype { opcode, pool_func } => match opcode {
                Opcode::MAX_POOL_SELECT => {
                    write!(
                        f,
                        "pool_func byte 36 = {pool_func}; MAX_POOL_SELECT needs none"
                    )
                }
                _ => write!(f, "pool_func byte 36 = {pool_func}; POOL needs max or avg"),
            },
            Fail::IsValidSubdim { pool_dim } => {
                write!(
                    f,
                    "pool_dim byte 37 = {pool_dim}; must be x, xy, xyz or xyzw"
                )
            }
            Fail::HasValidActiveChannelRange { channels } => {
                write!(
                    f,
                    "num_active_channels byte 34 = {channels}; must be 1..=128"
                )
            }
            Fail::S4d4PlDtypeCheck { out_dtype } => write!(
                f,
                "out_dtype byte 33 = {out_dtype}; MAX_POOL_SELECT writes uint8, uint16 or uint32"
            ),
            Fail::Tensor4dValid { operand, why } => {
                write!(f, "{} ", operand.name())?;
                match why {
                    // The Pool records' own wording; the kernels' is in
                    // `write_tensor_fault`.
                    TensorFault::PsumNotAllowed { addr } => {
                        write!(f, "address 0x{addr:08X} is in PSUM; SBUF only")
                    }
                    _ => write_tensor_fault(f, why),
                }
            }
            Fail::S4d4PoolScaleValid { pool_func, bits } => {
                let v = f32::from_bits(bits);
                if pool_func == PoolFunc::AVG_POOL {
                    write!(
                        f,
                        "pool_scale byte 40 = {v:e} (0x{bits:08X}); avg needs a finite normal scale"
                    )
                } else {
                    write!(
                        f,
                        "pool_scale byte 40 = {v:e} (0x{bits:08X}); must be exactly 1.0"
                    )
                }
            }
            Fail::EmuAddrModeSupported { operand, addr } => write!(
                f,
                "{} address 0x{addr:X} uses register, indirect or shape-from-register addressing (EC-5/EC-22)",
                operand.name()
            ),
            Fail::EmuEventModeSupported { field, mode } => match field {
                EventField::Wait => {
                    write!(f, "register wait form 0x{mode:02X} not emulated (EC-2)")
                }
                EventField::Update => {
                    write!(f, "register update form 0x{mode:02X} not emulated (EC-2)")
                }
                EventField::ExtendedWait => {
                    write!(
                        f,
                        "EVENT_SEMAPHORE second wait (bytes 12..64) not emulated (EC-24)"
                    )
                }
            },
            Fail::EmuDtypeSupported { operand, dtype } => write!(
                f,
                "{} = {dtype} is not executed by the emulator (EC-13b)",
                operand.dtype_field()
            ),
            Fail::EmuFootprintInBounds {
                operand,
                region,
                lo,
                hi,
                active,
            } => write!(
                f,
                "{} walk touches bytes [{lo}, {hi}) of each {} partition; active bytes are [0, {active}) (EC-6)",
                operand.name(),
                region.name()
            ),
            Fail::EmuPoolShape { why } => match why {
                ShapeFault::DstCount { outputs, dst } => write!(
                    f,
                    "src makes {outputs} outputs per lane but the dst walk holds {dst} (EC-10)"
                ),
                ShapeFault::TooLarge { elements } => {
                    write!(f, "{elements} input elements per lane > 2^24 (EC-10)")
                }
                ShapeFault::IndexRange { period, dtype } => write!(
                    f,
                    "window of {period} elements: index {} does not fit {dtype} (EC-10)",
                    period - 1
                ),
            },
            Fail::EmuOverlap { why } => write_overlap(f, why),
            Fail::Kernel { pred, field, why } => {
                write!(f, "{} byte {}: ", field.name, field.offset)?;
                write_kernel(f, pred, why)
            }
        }
    }
}

fn write_overlap(f: &mut fmt::Formatter<'_>, why: OverlapFault) -> fmt::Result {
    match why {
        OverlapFault::SrcDst { region, offset } => write!(
            f,
            "src and dst share {} byte offset {offset} (EC-21)",
            region.name()
        ),
        OverlapFault::Outputs { offset } => {
            write!(f, "two outputs share byte offset {offset} (EC-21)")
        }
        OverlapFault::NotInPlace { region, offset } => write!(
            f,
            "a source and dst share {} byte offset {offset} but not as the same element \
             of the same lane and position (EC-42)",
            region.name()
        ),
    }
}

fn write_tensor_fault(f: &mut fmt::Formatter<'_>, why: TensorFault) -> fmt::Result {
    match why {
        TensorFault::Region { addr } => {
            write!(f, "address 0x{addr:08X} is in neither SBUF nor PSUM")
        }
        TensorFault::RegisterMode { addr } => write!(
            f,
            "register-mode address 0x{addr:08X}: id must be < 64 and bits 8..30 zero"
        ),
        TensorFault::Alignment { addr, align } => {
            write!(f, "address 0x{addr:08X} is not {align}-byte aligned")
        }
        TensorFault::PsumWriteDtype { dtype } => {
            write!(
                f,
                "writes PSUM with {dtype}; PSUM writes need a 4-byte dtype"
            )
        }
        TensorFault::PsumNotAllowed { addr } => {
            write!(
                f,
                "address 0x{addr:08X} is in PSUM; this operand is SBUF-only (EC-41)"
            )
        }
        TensorFault::ZeroNum { dim } => write!(f, "num_elem[{dim}] = 0"),
    }
}

/// The detail of a [`Fail::Kernel`] after its `<field> byte <offset>: ` prefix.
///
/// The kinds of [`Why`] that carry plain values (a byte, a dtype, an in/out
/// pair, an op, an op with its dtypes, a number, a reduce op, an address)
/// are worded by the predicate's
/// template when it has one ([`PredDef::says`]): a kernel's wording lives with
/// its predicates, in its own file, not here.
fn write_kernel(f: &mut fmt::Formatter<'_>, pred: Pred, why: Why) -> fmt::Result {
    match why {
        Why::Byte(_)
        | Why::Dtype(_)
        | Why::InOut { .. }
        | Why::Op { .. }
        | Why::OpDtypes { .. }
        | Why::Value(_)
        | Why::Reduce { .. }
        | Why::Psum { .. }
            if pred.0.says.is_some() =>
        {
            write_template(f, pred.0.says.unwrap_or_default(), why)
        }
        Why::Value(n) => write!(f, "{n}"),
        Why::Byte(v) => write!(f, "0x{v:02X}, must be 0"),
        Why::Dtype(d) => write!(f, "{d} is not allowed"),
        Why::InOut {
            in_dtype,
            out_dtype,
        } => write!(f, "in_dtype {in_dtype}, out_dtype {out_dtype}"),
        Why::Op { opcode, op } => write!(f, "{op} is not an op of {opcode}"),
        Why::OpDtypes {
            op,
            src0,
            src1,
            out,
        } => write!(f, "{op} with src0 {src0}, src1 {src1}, out {out}"),
        Why::Tensor(t) => write_tensor_fault(f, t),
        Why::StartPartition {
            partition,
            channels,
        } => write!(
            f,
            "start partition {partition} + num_active_channels {channels} > 128"
        ),
        Why::Counts {
            count,
            other,
            other_count,
        } => write!(
            f,
            "count {count} != count of {} (byte {}) {other_count}",
            other.name, other.offset
        ),
        Why::Psum { addr } => write!(f, "address 0x{addr:08X} is not in SBUF"),
        Why::Addr { addr } => write!(
            f,
            "address 0x{addr:08X} uses register, indirect or shape-from-register addressing (EC-5)"
        ),
        Why::Engine { opcode, engine } => write!(
            f,
            "{opcode} passes the hardware predicates on {engine}, but the emulator executes it on pool only (EC-39)"
        ),
        Why::Arch { opcode, arch } => write!(
            f,
            "{opcode} has no {} kernel-table row (EC-58)",
            arch.name()
        ),
        Why::Footprint {
            region,
            lo,
            hi,
            active,
        } => write!(
            f,
            "walk touches bytes [{lo}, {hi}) of each {} partition; active bytes are [0, {active}) (EC-6)",
            region.name()
        ),
        Why::Elements(n) => write!(f, "{n} elements per lane > 2^24 (EC-40)"),
        Why::Reduce { opcode, op } => write!(f, "{opcode} does not execute reduce op {op}"),
        Why::DerivedCount {
            count,
            expected,
            rule,
        } => write!(f, "count {count} != {rule} = {expected}"),
        Why::Overlap(o) => write_overlap(f, o),
    }
}

/// A predicate of the kernel structs (SPEC-KERNELS §13) that a
/// [`Fail::Kernel`] names: its name, with EC-40's name mapping, and the
/// wording of its offending values when it has its own.
///
/// Each kernel declares its predicates as associated consts in its own file
/// (`impl Pred { preds! { MY_KERNEL_DTYPE says "…"; } }`, see `preds!`); the
/// predicates several kernels share are declared here. Two consts may share
/// a name and differ in wording (`is_valid_enum` on an ALU_OP or a
/// REDUCE_OP byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pred(pub &'static PredDef);

/// What a [`Pred`] stands for (a `&'static` one, so a [`Fail`] stays small).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PredDef {
    /// The predicate's name, exactly as SPEC-KERNELS §13 spells it.
    pub name: &'static str,
    /// The wording of its plain values (a [`Why::Byte`], [`Why::Dtype`],
    /// [`Why::InOut`], [`Why::Op`], [`Why::OpDtypes`], [`Why::Value`],
    /// [`Why::Reduce`] or [`Why::Psum`]), when it has its own: text with the
    /// slots `{v}` (the byte in decimal), `{x}` (`0xNN`), `{alu}`, `{dim}`,
    /// `{imm}` (the byte as an ALU_OP, TENSOR_SUBDIM or IMM_SRC name), `{d}`,
    /// `{in}`, `{out}`, `{op}`, `{opcode}`, `{src0}`, `{src1}` (the values of
    /// those names), `{n}` (a [`Why::Value`]) and `{addr}` (a [`Why::Psum`]'s,
    /// `0xXXXXXXXX`). `None`: the [`Why`]'s own wording.
    pub says: Option<&'static str>,
}

impl Pred {
    /// The predicate's name, exactly as SPEC-KERNELS §13 spells it.
    pub const fn name(self) -> &'static str {
        self.0.name
    }
}

/// Declares [`Pred`] consts inside an `impl Pred` block, each after its doc
/// comment: `NAME;` (no template of its own) or `NAME says "template";`
/// ([`PredDef::says`]). A const stands for the predicate its name spells in
/// lowercase: `TENSOR2D_VALID` is `tensor2d_valid`.
macro_rules! preds {
    ($($(#[$doc:meta])* $name:ident $(says $says:literal)?;)*) => {$(
        $(#[$doc])*
        pub const $name: $crate::isa::predicates::fail::Pred = {
            const BYTES: [u8; stringify!($name).len()] =
                $crate::isa::predicates::fail::lowercase(stringify!($name));
            const NAME: &str = match ::core::str::from_utf8(&BYTES) {
                Ok(name) => name,
                Err(_) => panic!("a const's name is ASCII"),
            };
            $crate::isa::predicates::fail::Pred(&$crate::isa::predicates::fail::PredDef {
                name: NAME,
                says: $crate::isa::predicates::fail::preds!(@says $($says)?),
            })
        };
    )*};
    (@says) => { None };
    (@says $says:literal) => { Some($says) };
}
pub(crate) use preds;

/// `name` in ASCII lowercase, `N` (its length) bytes: a [`preds!`] const's
/// predicate name, spelt from the const's own.
pub(crate) const fn lowercase<const N: usize>(name: &str) -> [u8; N] {
    let name = name.as_bytes();
    let mut out = [0; N];
    let mut i = 0;
    while i < N {
        out[i] = name[i].to_ascii_lowercase();
        i += 1;
    }
    out
}

/// The predicates several kernels share (EC-40's names).
impl Pred {
    preds! {
        /// `dtype_invalid_check` (EC-40's dtype mapping).
        DTYPE_INVALID_CHECK;
        /// `dtype_fp32r_illegal_check`.
        DTYPE_FP32R_ILLEGAL_CHECK says "{d} is output-only";
        /// `is_valid_enum` on an ALU_OP byte (EC-40).
        IS_VALID_ENUM says "{x} is not an ALU_OP";
        /// `has_valid_active_channel_range` (1..=128).
        HAS_VALID_ACTIVE_CHANNEL_RANGE says "{v}; must be 1..=128";
        /// `check_active_channels` (EC-40: the same 1..=128).
        CHECK_ACTIVE_CHANNELS says "{v}; must be 1..=128";
        /// `start_addr_active_channels` (EC-7).
        START_ADDR_ACTIVE_CHANNELS;
        /// `tensor2d_valid`.
        TENSOR2D_VALID;
        /// `tensor3d_valid`.
        TENSOR3D_VALID;
        /// `tensor4d_valid`.
        TENSOR4D_VALID;
        /// `reserved_zero` (0xF0 specs 0 and 2, EC-55).
        RESERVED_ZERO;
        /// `emu_addr_mode_supported` (EC-5).
        EMU_ADDR_MODE_SUPPORTED;
        /// `emu_opcode_supported` (EC-39, EC-49, EC-58).
        EMU_OPCODE_SUPPORTED;
        /// `emu_dtype_supported` (EC-44..EC-53).
        EMU_DTYPE_SUPPORTED says "{d} is not executed by the emulator (EC-44..EC-53)";
        /// `emu_footprint_in_bounds` (EC-6).
        EMU_FOOTPRINT_IN_BOUNDS;
        /// `emu_kernel_shape` (EC-40: at most 2^24 elements per lane and walk).
        EMU_KERNEL_SHAPE;
        /// `emu_overlap` (EC-21, EC-42).
        EMU_OVERLAP;
    }
}

/// Writes `template` ([`PredDef::says`]) with its slots filled from `why`; a
/// slot `why` does not carry is written as it stands (a test catches it).
fn write_template(f: &mut fmt::Formatter<'_>, template: &str, why: Why) -> fmt::Result {
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        f.write_str(&rest[..open])?;
        let Some(len) = rest[open..].find('}') else {
            break;
        };
        write_slot(f, &rest[open + 1..open + len], why)?;
        rest = &rest[open + len + 1..];
    }
    f.write_str(rest)
}

/// The slots [`PredDef::says`] may name.
#[cfg(test)]
const SLOTS: [&str; 14] = [
    "v", "x", "alu", "dim", "imm", "d", "in", "out", "op", "opcode", "src0", "src1", "n", "addr",
];

fn write_slot(f: &mut fmt::Formatter<'_>, slot: &str, why: Why) -> fmt::Result {
    match (slot, why) {
        ("v", Why::Byte(v)) => write!(f, "{v}"),
        ("x", Why::Byte(v)) => write!(f, "0x{v:02X}"),
        ("alu", Why::Byte(v)) => write!(f, "{}", AluOp(v)),
        ("dim", Why::Byte(v)) => write!(f, "{}", PoolDim(v)),
        ("imm", Why::Byte(v)) => write!(f, "{}", ImmSrc(v)),
        ("d", Why::Dtype(d)) => write!(f, "{d}"),
        ("in", Why::InOut { in_dtype, .. }) => write!(f, "{in_dtype}"),
        ("out", Why::InOut { out_dtype: d, .. }) | ("out", Why::OpDtypes { out: d, .. }) => {
            write!(f, "{d}")
        }
        ("op", Why::Op { op, .. }) | ("op", Why::OpDtypes { op, .. }) => write!(f, "{op}"),
        ("op", Why::Reduce { op, .. }) => write!(f, "{op}"),
        ("opcode", Why::Op { opcode, .. }) | ("opcode", Why::Reduce { opcode, .. }) => {
            write!(f, "{opcode}")
        }
        ("n", Why::Value(n)) => write!(f, "{n}"),
        ("addr", Why::Psum { addr }) => write!(f, "0x{addr:08X}"),
        ("src0", Why::OpDtypes { src0, .. }) => write!(f, "{src0}"),
        ("src1", Why::OpDtypes { src1, .. }) => write!(f, "{src1}"),
        _ => write!(f, "{{{slot}}}"),
    }
}

/// The offending values of a [`Fail::Kernel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Why {
    /// The field's byte.
    Byte(u8),
    /// A dtype field's (or nibble's) value.
    Dtype(Dtype),
    /// COPY's two dtypes.
    InOut {
        /// in_dtype.
        in_dtype: Dtype,
        /// out_dtype.
        out_dtype: Dtype,
    },
    /// The op byte and the opcode it was read for.
    Op {
        /// The opcode.
        opcode: Opcode,
        /// The op.
        op: AluOp,
    },
    /// A tensor-tensor op with its three dtypes.
    OpDtypes {
        /// The op.
        op: AluOp,
        /// src0's dtype (low nibble).
        src0: Dtype,
        /// src1's dtype (high nibble).
        src1: Dtype,
        /// out_dtype.
        out: Dtype,
    },
    /// Why a tensor descriptor is not valid.
    Tensor(TensorFault),
    /// Start partition + channels > 128.
    StartPartition {
        /// The start partition.
        partition: u32,
        /// num_active_channels.
        channels: u8,
    },
    /// Two element counts that must be equal.
    Counts {
        /// count() of the named field.
        count: u64,
        /// The field it is compared with.
        other: FieldRef,
        /// That field's count.
        other_count: u64,
    },
    /// An address that is not in SBUF.
    Psum {
        /// The ADDR4.
        addr: u32,
    },
    /// An address with mode bits (EC-5).
    Addr {
        /// The ADDR4.
        addr: u32,
    },
    /// A record outside POOL (EC-39).
    Engine {
        /// The opcode.
        opcode: Opcode,
        /// The stream's engine.
        engine: Engine,
    },
    /// A kernel the generation has no row for (EC-58).
    Arch {
        /// The opcode.
        opcode: Opcode,
        /// The generation.
        arch: Arch,
    },
    /// A walk outside the active bytes (EC-6).
    Footprint {
        /// The region.
        region: Region,
        /// First byte touched, relative to the partition.
        lo: i64,
        /// One past the last byte touched.
        hi: i64,
        /// Active bytes per partition.
        active: u32,
    },
    /// Elements per lane of a walk beyond 2^24 (EC-40).
    Elements(u64),
    /// A reduce op the opcode does not take (CrossLaneReduce, EC-54).
    Reduce {
        /// The opcode.
        opcode: Opcode,
        /// The reduce op.
        op: ReduceOp,
    },
    /// A count that must equal a value derived from another field's count.
    DerivedCount {
        /// count() of the named field.
        count: u64,
        /// The value it must equal.
        expected: u64,
        /// How `expected` is derived (`2 · count(src)`).
        rule: &'static str,
    },
    /// A number a predicate bounds (a count, a dim's num), worded by the
    /// predicate's template (`{n}`).
    Value(u64),
    /// Shared bytes (EC-21, EC-42).
    Overlap(OverlapFault),
}

fn dtype_offset(o: Operand) -> u8 {
    match o {
        Operand::Src => 32,
        Operand::Dst => 33,
    }
}

fn write_unsupported(f: &mut fmt::Formatter<'_>, opcode: Opcode, why: Unsupported) -> fmt::Result {
    match why {
        Unsupported::NotEmulated => write!(f, "{opcode} is known but not emulated"),
        Unsupported::RegisterId { offset, id } => {
            write!(f, "register id byte {offset} = {id}; must be < 64")
        }
        Unsupported::Immediate { offset, value } => {
            write!(f, "immediate at byte {offset} = {value} does not fit i32")
        }
        Unsupported::AluOp(op) => write!(f, "ALU op byte 12 = {op}; only ADD 4 and SUB 5 (EC-27)"),
        Unsupported::CompareOp(op) => write!(
            f,
            "compare op byte 12 = {op}; only ALWAYS 0, EQIMM 3, GTIMM 6 (EC-28)"
        ),
        Unsupported::TargetMode(m) => write!(
            f,
            "target mode byte 14 = {m}; only REGISTER 1 and REL_IMM 3 (EC-28)"
        ),
        Unsupported::ControlDtype(d) => write!(f, "dtype byte 13 = {d} not supported for {opcode}"),
        Unsupported::ComputeOp(op) => {
            write!(
                f,
                "compute_op byte 15 = {op}: reduce-on-copy not emulated (EC-23)"
            )
        }
        Unsupported::ElemSizeZero(o) => write!(f, "{} element size is 0 (EC-23)", o.name()),
        Unsupported::DmaDtypes { src, dst } => {
            write!(
                f,
                "dtype pair {src} -> {dst} not executable (EC-23, EC-13b)"
            )
        }
        Unsupported::DmaElemSize { src, dst } => write!(
            f,
            "element sizes {src}/{dst} do not match the dtypes (EC-23)"
        ),
        Unsupported::DmaCounts { src, dst } => {
            write!(f, "src walk holds {src} elements, dst walk {dst} (EC-23)")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every template written in `src/isa` (`says: Some("…")`, or `says "…"`
    /// in a `preds!` block) names only
    /// slots that `write_slot` fills: a typo would print the slot as it stands.
    #[test]
    fn every_template_names_known_slots() {
        fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).expect("read src/isa") {
                let p = e.expect("entry").path();
                if p.is_dir() {
                    files(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        let mut paths = Vec::new();
        files(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/isa"),
            &mut paths,
        );
        let mut templates = 0;
        for p in paths {
            let text = std::fs::read_to_string(&p).expect("read source");
            for open in ["says: Some(\"", "says \""] {
                for (i, _) in text.match_indices(open) {
                    let body = &text[i + open.len()..];
                    let body = &body[..body.find('"').expect("a closed literal")];
                    templates += 1;
                    for piece in body.split('{').skip(1) {
                        let slot = &piece[..piece.find('}').expect("a closed slot")];
                        assert!(SLOTS.contains(&slot), "{}: slot {{{slot}}}", p.display());
                    }
                }
            }
        }
        assert!(templates >= 20, "found {templates} templates");
    }

    /// A template's slots take the values of its `Why`.
    #[test]
    fn templates_fill_their_slots() {
        let pred = Pred(&PredDef {
            name: "p",
            says: Some("{x} ({v}) as {alu}; {n}"),
        });
        let field = FieldRef {
            name: "op",
            offset: 14,
        };
        let f = Fail::Kernel {
            pred,
            field,
            why: Why::Byte(4),
        };
        assert_eq!(f.to_string(), "op byte 14: 0x04 (4) as add; {n}");
        assert_eq!(f.predicate(), "p");
    }
}
