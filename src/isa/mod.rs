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
pub mod inst;
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

pub use control::Control;
pub use d4_iota::D4Iota;
pub use enums::{
    AluOp, Dtype, DtypePair, Engine, ImmSrc, PoolDim, PoolFunc, ReduceAxis, ReduceOp, UpdateMode,
    WaitMode,
};
pub use extended::{EngineNop, ExtTta};
pub use inst::{Inst, Kernel};
pub use opcode::{Opcode, OpcodeClass};
pub use record::{Events, Header, Record};
pub use s3d3_nonzero::S3d3NonzeroWithCount;
pub use s3d3_seq_bounds::S3d3SeqBounds;
pub use s3s3d3_tt::S3s3d3Tt;
pub use s4d4_cr::S4d4Cr;
pub use s4d4_pl::S4d4Pl;
pub use s4d4_tr::S4d4Tr;
pub use tensor::{Addr4, Data4d, Location, Region, Tensor2d, Tensor3d, Tensor4d};
