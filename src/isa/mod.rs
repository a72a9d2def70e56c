//! The instruction-record layer: types, decode/encode, validation, text form.
//!
//! Decoding never fails: any 64 bytes is a [`Record`], and every enum is an
//! open newtype. [`validate`] decides whether a record may run; [`text`]
//! prints and parses the assembly form.

pub mod build;
pub mod control;
pub mod enums;
pub mod inst;
pub mod kernels;
pub mod layout;
pub mod opcode;
mod predicates;
pub mod record;
pub mod samples;
pub mod stream;
pub mod tensor;
pub mod text;
pub mod validate;

pub use control::Control;
pub use enums::{
    AluOp, Dtype, DtypePair, Engine, ImmSrc, PoolDim, PoolFunc, ReduceAxis, ReduceOp, UpdateMode,
    WaitMode,
};
pub use inst::{Inst, Kernel};
// The kernel structs and their modules (`isa::s4d4_pl::off`, …), from the
// one registry: a new kernel needs no line here.
pub use kernels::*;
pub use opcode::{Opcode, OpcodeClass};
pub use record::{Events, Header, Record};
pub use tensor::{Addr4, Data4d, Location, Region, Tensor2d, Tensor3d, Tensor4d};
