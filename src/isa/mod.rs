//! The instruction-record layer: types, decode/encode, validation, text form.
//!
//! Decoding never fails: any 64 bytes is a [`Record`], and every enum is an
//! open newtype. [`validate`] decides whether a record may run; [`text`]
//! prints and parses the assembly form.

pub mod control;
pub mod enums;
pub mod opcode;
pub mod record;
pub mod s4d4_pl;
pub mod samples;
pub mod stream;
pub mod tensor;
pub mod text;
pub mod validate;

pub use enums::{Dtype, Engine, PoolDim, PoolFunc, UpdateMode, WaitMode};
pub use opcode::{Opcode, OpcodeClass};
pub use record::{Events, Header, Record};
pub use s4d4_pl::S4d4Pl;
pub use tensor::{Addr4, Location, Region, Tensor4d};

/// A record decoded by its opcode: the one type the disassembler, validator
/// and executors consume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Inst {
    /// Pool (0x45) or MaxPoolSelect (0x58).
    S4d4Pl(S4d4Pl),
    /// Any other record, kept as bytes.
    Other(Record),
}

impl Inst {
    /// Decodes any record (never fails).
    pub fn decode(r: &Record) -> Inst {
        match r.opcode().class() {
            OpcodeClass::S4d4Pl => Inst::S4d4Pl(S4d4Pl::decode(r)),
            _ => Inst::Other(*r),
        }
    }

    /// Encodes back to the same 64 bytes.
    pub fn encode(&self) -> Record {
        match self {
            Inst::S4d4Pl(p) => p.encode(),
            Inst::Other(r) => *r,
        }
    }
}
