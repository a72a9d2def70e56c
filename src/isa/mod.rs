//! The instruction-record layer: types, decode/encode, validation, text form.
//!
//! Decoding never fails: any 64 bytes is a [`Record`], and every enum is an
//! open newtype. [`validate`] decides whether a record may run; [`text`]
//! prints and parses the assembly form.

pub mod build;
pub mod control;
pub mod d4_iota;
pub mod enums;
pub mod extended;
pub mod layout;
pub mod opcode;
pub mod record;
pub mod s3d3_nonzero;
pub mod s3d3_seq_bounds;
pub mod s3s3d3_tt;
pub mod s4d4_cr;
pub mod s4d4_pl;
pub mod s4d4_tr;
pub mod samples;
pub mod stream;
pub mod tensor;
pub mod text;
pub mod validate;

pub use d4_iota::D4Iota;
pub use enums::{
    AluOp, Dtype, DtypePair, Engine, ImmSrc, PoolDim, PoolFunc, ReduceAxis, ReduceOp, UpdateMode,
    WaitMode,
};
pub use extended::{EngineNop, ExtTta};
pub use opcode::{Opcode, OpcodeClass};
pub use record::{Events, Header, Record};
pub use s3d3_nonzero::S3d3NonzeroWithCount;
pub use s3d3_seq_bounds::S3d3SeqBounds;
pub use s3s3d3_tt::S3s3d3Tt;
pub use s4d4_cr::S4d4Cr;
pub use s4d4_pl::S4d4Pl;
pub use s4d4_tr::S4d4Tr;
pub use tensor::{Addr4, Data4d, Location, Region, Tensor2d, Tensor3d, Tensor4d};

/// A record decoded by its opcode: the one type the disassembler, validator
/// and executors consume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Inst {
    /// Pool (0x45) or MaxPoolSelect (0x58).
    S4d4Pl(S4d4Pl),
    /// Copy (0x46) or Cast (0x47).
    S4d4Tr(S4d4Tr),
    /// Iota (0x7E).
    D4Iota(D4Iota),
    /// Tensor-tensor arith (0x41) or bitvec (0x51).
    S3s3d3Tt(S3s3d3Tt),
    /// CrossLaneReduce (0x7C, 0x7D).
    S4d4Cr(S4d4Cr),
    /// GetSequenceBounds (0xBE).
    SeqBounds(S3d3SeqBounds),
    /// NonzeroWithCount (0xF2).
    NonzeroWithCount(S3d3NonzeroWithCount),
    /// 0xF0 spec 0.
    EngineNop(EngineNop),
    /// 0xF0 spec 2.
    ExtTta(ExtTta),
    /// Any other record, kept as bytes.
    Other(Record),
}

impl Inst {
    /// Decodes any record (never fails).
    pub fn decode(r: &Record) -> Inst {
        match r.opcode().class() {
            OpcodeClass::S4d4Pl => Inst::S4d4Pl(S4d4Pl::decode(r)),
            OpcodeClass::S4d4Tr => Inst::S4d4Tr(S4d4Tr::decode(r)),
            OpcodeClass::D4Iota => Inst::D4Iota(D4Iota::decode(r)),
            OpcodeClass::S3s3d3Tt => Inst::S3s3d3Tt(S3s3d3Tt::decode(r)),
            OpcodeClass::S4d4Cr => Inst::S4d4Cr(S4d4Cr::decode(r)),
            OpcodeClass::SeqBounds => Inst::SeqBounds(S3d3SeqBounds::decode(r)),
            OpcodeClass::NonzeroWithCount => {
                Inst::NonzeroWithCount(S3d3NonzeroWithCount::decode(r))
            }
            OpcodeClass::Extended => match extended::spec_of(r) {
                extended::spec::ENGINE_NOP => Inst::EngineNop(EngineNop::decode(r)),
                extended::spec::TENSOR_TENSOR_ARITH => Inst::ExtTta(ExtTta::decode(r)),
                _ => Inst::Other(*r),
            },
            _ => Inst::Other(*r),
        }
    }

    /// Encodes back to the same 64 bytes.
    pub fn encode(&self) -> Record {
        match self {
            Inst::S4d4Pl(p) => p.encode(),
            Inst::S4d4Tr(p) => p.encode(),
            Inst::D4Iota(p) => p.encode(),
            Inst::S3s3d3Tt(p) => p.encode(),
            Inst::S4d4Cr(p) => p.encode(),
            Inst::SeqBounds(p) => p.encode(),
            Inst::NonzeroWithCount(p) => p.encode(),
            Inst::EngineNop(p) => p.encode(),
            Inst::ExtTta(p) => p.encode(),
            Inst::Other(r) => *r,
        }
    }
}
