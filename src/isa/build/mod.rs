//! Typed record builders for the SPEC-KERNELS structs (COPY, CAST, IOTA and
//! the tensor-tensor pair), for tests, the runtime and the front end; the
//! control and DMA records' builders are in [`control`].
//!
//! A [`Geometry`] holds the walks' shape and addresses; its defaults make
//! records that pass validation on POOL (CAYMAN): 16 lanes from partition 0,
//! 64 contiguous elements per lane, sources at SBUF offsets 0x0 and 0x1000,
//! dst at 0x2000.
//!
//! ```
//! use tpb_emu::isa::build::Geometry;
//! use tpb_emu::isa::validate::{Target, check};
//! use tpb_emu::isa::{AluOp, Dtype};
//! use tpb_emu::limits::Arch;
//!
//! let g = Geometry::default();
//! let t = Target::pool(Arch::Cayman);
//! assert!(check(&g.copy(Dtype::BFLOAT16).encode(), t).is_ok());
//! assert!(check(&g.cast(Dtype::FP32, Dtype::INT8).encode(), t).is_ok());
//! assert!(check(&g.iota(Dtype::INT32, 0, 1, 64).encode(), t).is_ok());
//! assert!(check(&g.arith(AluOp::ADD_INT, Dtype::INT32).encode(), t).is_ok());
//! assert!(check(&g.bitvec(AluOp::BITWISE_XOR, Dtype::UINT16).encode(), t).is_ok());
//! // In place: dst over src.
//! let g = Geometry { dst: g.src, ..g };
//! assert!(check(&g.copy(Dtype::FP32).encode(), t).is_ok());
//! // The kernels of issue (2).
//! let g = Geometry::default();
//! use tpb_emu::isa::{ReduceAxis, ReduceOp};
//! assert!(check(&g.cross_lane_reduce(ReduceOp::MAX, ReduceAxis::PARTITIONS, Dtype::FP32, Dtype::FP32, 1.0).encode(), t).is_ok());
//! assert!(check(&g.sequence_bounds(Dtype::INT32, Dtype::INT32).encode(), t).is_ok());
//! assert!(check(&g.nonzero_with_count(Dtype::FP32, 0, -1).encode(), t).is_ok());
//! assert!(check(&g.engine_nop(2).encode(), t).is_ok());
//! assert!(check(&g.ext_tta(1, AluOp::MULT, Dtype::BFLOAT16).encode(), t).is_ok());
//! ```

pub mod control;

use super::enums::{AluOp, Dtype};
use super::enums::{ReduceAxis, ReduceOp};
use super::kernels::d4_iota::D4Iota;
use super::kernels::extended::{EngineNop, ExtTta};
use super::kernels::s3d3_nonzero::S3d3NonzeroWithCount;
use super::kernels::s3d3_seq_bounds::S3d3SeqBounds;
use super::kernels::s3s3d3_tt::S3s3d3Tt;
use super::kernels::s4d4_cr::S4d4Cr;
use super::kernels::s4d4_tr::S4d4Tr;
use super::opcode::Opcode;
use super::tensor::{Addr4, Data4d, Region, Tensor2d, Tensor3d, Tensor4d};

/// `n` contiguous elements per lane from `addr`, as a TENSOR4D.
pub const fn row4(addr: Addr4, n: u16) -> Tensor4d {
    Tensor4d::new(addr, [(n, 1), (1, 1), (1, 1), (1, 1)])
}

/// `n` contiguous elements per lane from `addr`, as a TENSOR3D.
pub const fn row3(addr: Addr4, n: u16) -> Tensor3d {
    Tensor3d::new(addr, [(n, 1), (1, 1), (1, 1)])
}

/// `n` contiguous elements per lane from `addr`, as a TENSOR2D.
pub const fn row2(addr: Addr4, n: u16) -> Tensor2d {
    Tensor2d::new(addr, [(n, 1), (1, 1)])
}

/// The lanes, element count and addresses of a kernel record's walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// num_active_channels.
    pub channels: u8,
    /// Elements per lane of every walk (contiguous, step 1).
    pub elements: u16,
    /// The (first) source's start.
    pub src: Addr4,
    /// The second source's start (tensor-tensor only).
    pub src1: Addr4,
    /// The destination's start.
    pub dst: Addr4,
}

impl Default for Geometry {
    fn default() -> Self {
        Geometry {
            channels: 16,
            elements: 64,
            src: Addr4::new(Region::Sbuf, 0, 0),
            src1: Addr4::new(Region::Sbuf, 0, 0x1000),
            dst: Addr4::new(Region::Sbuf, 0, 0x2000),
        }
    }
}

impl Geometry {
    /// COPY (0x46) of `dtype` elements from `src` to `dst`.
    pub fn copy(&self, dtype: Dtype) -> S4d4Tr {
        self.s4d4_tr(Opcode::COPY, dtype, dtype)
    }

    /// CAST (0x47) from `in_dtype` to `out_dtype`.
    pub fn cast(&self, in_dtype: Dtype, out_dtype: Dtype) -> S4d4Tr {
        self.s4d4_tr(Opcode::CAST, in_dtype, out_dtype)
    }

    fn s4d4_tr(&self, opcode: Opcode, in_dtype: Dtype, out_dtype: Dtype) -> S4d4Tr {
        S4d4Tr::new(
            opcode,
            in_dtype,
            out_dtype,
            self.channels,
            row4(self.src, self.elements),
            row4(self.dst, self.elements),
        )
    }

    /// IOTA (0x7E) writing `out_dtype` to `dst`: the ramp `base + x·step` along
    /// the lane's elements, plus `channel_multiplier` per lane (EC-47).
    pub fn iota(&self, out_dtype: Dtype, base: i32, step: i16, channel_multiplier: i32) -> D4Iota {
        D4Iota::new(
            out_dtype,
            self.channels,
            Data4d::new(base, [(self.elements, step), (1, 0), (1, 0), (1, 0)]),
            channel_multiplier,
            row4(self.dst, self.elements),
        )
    }

    /// A tensor-tensor record with every field chosen: `dst = op(src, src1)`.
    pub fn tensor_tensor(
        &self,
        opcode: Opcode,
        op: AluOp,
        src0_dtype: Dtype,
        src1_dtype: Dtype,
        out_dtype: Dtype,
    ) -> S3s3d3Tt {
        S3s3d3Tt::new(
            opcode,
            op,
            src0_dtype,
            src1_dtype,
            out_dtype,
            self.channels,
            row3(self.src, self.elements),
            row3(self.src1, self.elements),
            row3(self.dst, self.elements),
        )
    }

    /// TENSOR_TENSOR_ARITH (0x41) with all three operands of `dtype`.
    pub fn arith(&self, op: AluOp, dtype: Dtype) -> S3s3d3Tt {
        self.tensor_tensor(Opcode::TENSOR_TENSOR_ARITH, op, dtype, dtype, dtype)
    }

    /// TENSOR_TENSOR_BITVEC (0x51) with all three operands of `dtype`.
    pub fn bitvec(&self, op: AluOp, dtype: Dtype) -> S3s3d3Tt {
        self.tensor_tensor(Opcode::TENSOR_TENSOR_BITVEC, op, dtype, dtype, dtype)
    }

    /// CROSS_LANE_REDUCE (0x7C for ADD/AVERAGE/MAX, 0x7D for the bitwise
    /// ops) over `channels` lanes into one lane at `dst`: along the Partitions
    /// axis dst holds `elements` values, along All one.
    pub fn cross_lane_reduce(
        &self,
        op: ReduceOp,
        axis: ReduceAxis,
        in_dtype: Dtype,
        out_dtype: Dtype,
        scale: f32,
    ) -> S4d4Cr {
        let opcode = if op.is_arith() {
            Opcode::CROSS_LANE_REDUCE_ARITH
        } else {
            Opcode::CROSS_LANE_REDUCE_BITVEC
        };
        let n = if axis == ReduceAxis::ALL {
            1
        } else {
            self.elements
        };
        S4d4Cr::new(
            opcode,
            op,
            axis,
            in_dtype,
            out_dtype,
            self.channels,
            scale,
            row4(self.src, self.elements),
            row4(self.dst, n),
        )
    }

    /// GET_SEQUENCE_BOUNDS on one lane: `elements` ids at `src`, the starts
    /// then the ends (a `{elements, 1, 2}` walk) at `dst`.
    pub fn sequence_bounds(&self, in_dtype: Dtype, out_dtype: Dtype) -> S3d3SeqBounds {
        let n = self.elements;
        S3d3SeqBounds::new(
            in_dtype,
            out_dtype,
            1,
            row3(self.src, n),
            Tensor3d::new(self.dst, [(n, 1), (1, 1), (2, n as i16)]),
        )
    }

    /// NONZERO_WITH_COUNT with inline immediates: `elements` inputs, then
    /// `elements + 1` INT32 outputs.
    pub fn nonzero_with_count(
        &self,
        in_dtype: Dtype,
        offset: i32,
        pad: i32,
    ) -> S3d3NonzeroWithCount {
        S3d3NonzeroWithCount::new(
            in_dtype,
            self.channels,
            offset,
            pad,
            row3(self.src, self.elements),
            row3(self.dst, self.elements + 1),
        )
    }

    /// 0xF0 spec 0 ENGINE_NOP on `ports` ports (0 = all eight).
    pub fn engine_nop(&self, ports: u8) -> EngineNop {
        EngineNop::new((ports & 7) << 3)
    }

    /// 0xF0 spec 2 EXTENDED_TTA (ADD or MULT) on `ports` ports (0 = all eight).
    pub fn ext_tta(&self, ports: u8, op: AluOp, dtype: Dtype) -> ExtTta {
        ExtTta::new(
            (ports & 7) << 3,
            op,
            dtype,
            dtype,
            dtype,
            row2(self.src, self.elements),
            row2(self.src1, self.elements),
            row2(self.dst, self.elements),
        )
    }
}
