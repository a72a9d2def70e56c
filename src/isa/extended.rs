//! 0xF0 EXTENDED_INST (SPEC-KERNELS §6): the spec byte (12, EC-15) selects the
//! struct. Two are modelled: spec 0 ENGINE_NOP and spec 2 EXTENDED_TTA.

use super::enums::{AluOp, Dtype, DtypePair};
use super::layout::{Role, header, operand_layout};
use super::opcode::Opcode;
use super::record::{Events, Record};
use super::tensor::Tensor2d;

/// completion_info (byte 13): has_read bit 0, has_write bit 2,
/// num_active_ports bits 3..5; bits 1, 6 and 7 are reserved (SPEC-KERNELS §6.1).
pub mod completion {
    /// has_read.
    pub const HAS_READ: u8 = 1 << 0;
    /// has_write.
    pub const HAS_WRITE: u8 = 1 << 2;
    /// The reserved bits 1, 6 and 7 (EC-55: must be zero).
    pub const RESERVED: u8 = 0b1100_0010;

    /// num_active_ports: bits 3..5.
    pub const fn ports(info: u8) -> u8 {
        (info >> 3) & 7
    }

    /// EC-55: the lanes of an extended instruction: 128 when num_active_ports
    /// is 0, else 16 per port.
    pub const fn lanes(info: u8) -> u32 {
        match ports(info) {
            0 => crate::limits::PARTITIONS,
            n => n as u32 * crate::limits::LANES_PER_POOL_CORE,
        }
    }
}

/// The extended sub-opcodes (`EXAMPLE_EXTENDED_OPCODES1`, the header enum; C-10).
pub mod spec {
    /// ENGINE_NOP.
    pub const ENGINE_NOP: u8 = 0;
    /// COPY (layout unknown, EC-58).
    pub const COPY: u8 = 1;
    /// TENSOR_TENSOR_ARITH (EXTENDED_TTA).
    pub const TENSOR_TENSOR_ARITH: u8 = 2;
    /// RAND_SET_STATE (layout unknown, EC-58).
    pub const RAND_SET_STATE: u8 = 3;
    /// RAND_GET_STATE (layout unknown, EC-58).
    pub const RAND_GET_STATE: u8 = 4;
}

/// EC-58: the specs whose struct is modelled (0 and 2); every other spec is
/// `emu_opcode_supported` at SPEC §5 step 5.
pub const fn modelled(spec: u8) -> bool {
    matches!(spec, spec::ENGINE_NOP | spec::TENSOR_TENSOR_ARITH)
}

/// The spec byte of an 0xF0 record (EC-15: byte 12).
pub const fn spec_of(r: &Record) -> u8 {
    r.0[12]
}

operand_layout! {
    /// spec 0, ENGINE_NOP: nothing beyond completion_info (EC-55: bytes 14..64 reserved).
    EngineNop = "EXTENDED_INST/ENGINE_NOP", mod nop_off {
        /// The spec byte: 0.
        spec: u8 = SPEC @ 12, Role::Required("spec");
        /// completion_info.
        completion_info: u8 = COMPLETION_INFO @ 13, Role::Required("info");
        /// Must be zero (EC-55, `reserved_zero`).
        reserved: [u8; 50] = RESERVED @ 14, Role::Reserved;
    }
}

operand_layout! {
    /// spec 2, EXTENDED_TTA (SPEC-KERNELS §6.4): ADD or MULT over TENSOR2D walks.
    ExtTta = "EXTENDED_INST/EXTENDED_TTA", mod tta_off {
        /// The spec byte: 2.
        spec: u8 = SPEC @ 12, Role::Required("spec");
        /// completion_info (EC-55's lanes).
        completion_info: u8 = COMPLETION_INFO @ 13, Role::Required("info");
        /// src0's dtype (low nibble) and src1's (high nibble), EC-43.
        in_dtypes: DtypePair = IN_DTYPES @ 14, Role::Required("in");
        /// Output element type.
        out_dtype: Dtype = OUT_DTYPE @ 15, Role::Required("out");
        /// ADD or MULT.
        op: AluOp = OP @ 16, Role::Required("op");
        /// Must be zero (`reserved_zero`).
        reserved0: [u8; 3] = RESERVED0 @ 17, Role::Reserved;
        /// The first read walk (SBUF only).
        src0: Tensor2d = SRC0 @ 20, Role::Required("src0");
        /// The second read walk (SBUF only).
        src1: Tensor2d = SRC1 @ 32, Role::Required("src1");
        /// The write walk (SBUF only).
        dst: Tensor2d = DST @ 44, Role::Required("dst");
        /// Must be zero (`reserved_zero`).
        reserved1: [u8; 8] = RESERVED1 @ 56, Role::Reserved;
    }
}

impl EngineNop {
    /// An ENGINE_NOP with `completion_info` and zero events.
    pub fn new(completion_info: u8) -> EngineNop {
        EngineNop {
            header: header(Opcode::EXTENDED_INST),
            events: Events::default(),
            spec: spec::ENGINE_NOP,
            completion_info,
            reserved: [0; 50],
        }
    }
}

impl ExtTta {
    /// An EXTENDED_TTA record with zero events.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        completion_info: u8,
        op: AluOp,
        src0_dtype: Dtype,
        src1_dtype: Dtype,
        out_dtype: Dtype,
        src0: Tensor2d,
        src1: Tensor2d,
        dst: Tensor2d,
    ) -> ExtTta {
        ExtTta {
            header: header(Opcode::EXTENDED_INST),
            events: Events::default(),
            spec: spec::TENSOR_TENSOR_ARITH,
            completion_info,
            in_dtypes: DtypePair::new(src0_dtype, src1_dtype),
            out_dtype,
            op,
            reserved0: [0; 3],
            src0,
            src1,
            dst,
            reserved1: [0; 8],
        }
    }
}
