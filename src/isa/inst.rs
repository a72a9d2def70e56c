//! The one decoded record: [`Inst`], a record decoded by its opcode (and,
//! for 0xF0, its spec byte, EC-15) into the typed struct of its layout.
//!
//! Validation, the text form, the POOL dispatch, the device ops and staging
//! all read records through this type, so the mapping from an opcode to its
//! layout is written once, here: [`Inst::decode`] is an exhaustive `match`
//! on [`OpcodeClass`], and [`Kernel`] lists the kernel-table layouts. A
//! record is a [`Kernel`] exactly when its class
//! [`is_pool_kernel`](OpcodeClass::is_pool_kernel) (tested for every opcode
//! byte). Decoding never fails and is lossless: `Inst::decode(r).encode() == r`.

use super::control::Control;
use super::extended::{self, EngineNop, ExtTta};
use super::layout::FieldDef;
use super::opcode::OpcodeClass;
use super::record::Record;
use super::{D4Iota, S3d3NonzeroWithCount, S3d3SeqBounds, S3s3d3Tt, S4d4Cr, S4d4Pl, S4d4Tr};
use crate::limits::PARTITIONS;

/// A record decoded by its opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Inst {
    /// A record of the POOL engine's kernel table (or its EC-14 bypass).
    Kernel(Kernel),
    /// A control or DMA record (any engine).
    Control(Control),
    /// A pseudo (lowered before validation) or unknown opcode, kept as
    /// bytes: it fails `is_valid_enum`.
    Invalid(Record),
}

/// A kernel-table record, by operand layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
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
    /// A row known by name whose operand is not modelled (the
    /// `PoolNotEmulated` class, 0xF0 specs other than 0 and 2), kept as
    /// bytes: validation refuses it (`emu_opcode_supported`), dispatch names
    /// its kernel.
    NotModelled(Record),
}

impl Inst {
    /// Decodes any record (never fails).
    pub fn decode(r: &Record) -> Inst {
        let k = match r.opcode().class() {
            OpcodeClass::S4d4Pl => Kernel::S4d4Pl(S4d4Pl::decode(r)),
            OpcodeClass::S4d4Tr => Kernel::S4d4Tr(S4d4Tr::decode(r)),
            OpcodeClass::D4Iota => Kernel::D4Iota(D4Iota::decode(r)),
            OpcodeClass::S3s3d3Tt => Kernel::S3s3d3Tt(S3s3d3Tt::decode(r)),
            OpcodeClass::S4d4Cr => Kernel::S4d4Cr(S4d4Cr::decode(r)),
            OpcodeClass::SeqBounds => Kernel::SeqBounds(S3d3SeqBounds::decode(r)),
            OpcodeClass::NonzeroWithCount => {
                Kernel::NonzeroWithCount(S3d3NonzeroWithCount::decode(r))
            }
            OpcodeClass::Extended => match extended::spec_of(r) {
                extended::spec::ENGINE_NOP => Kernel::EngineNop(EngineNop::decode(r)),
                extended::spec::TENSOR_TENSOR_ARITH => Kernel::ExtTta(ExtTta::decode(r)),
                _ => Kernel::NotModelled(*r),
            },
            OpcodeClass::PoolNotEmulated => Kernel::NotModelled(*r),
            OpcodeClass::Control | OpcodeClass::Dma => {
                return Control::decode(r).map_or(Inst::Invalid(*r), Inst::Control);
            }
            OpcodeClass::Pseudo | OpcodeClass::Unknown => return Inst::Invalid(*r),
        };
        Inst::Kernel(k)
    }

    /// Encodes back to the same 64 bytes.
    pub fn encode(&self) -> Record {
        match self {
            Inst::Kernel(k) => k.encode(),
            Inst::Control(c) => c.encode(),
            Inst::Invalid(r) => *r,
        }
    }

    /// The kernel, for a kernel-table record.
    pub fn kernel(&self) -> Option<&Kernel> {
        match self {
            Inst::Kernel(k) => Some(k),
            Inst::Control(_) | Inst::Invalid(_) => None,
        }
    }

    /// EC-16, EC-55, EC-59: the lanes the POOL dispatch offers the record:
    /// its channels for a modelled kernel, else all 128 (so every core
    /// dispatches it and names what it does with it).
    pub fn lanes(&self) -> u32 {
        match self {
            Inst::Kernel(k) => k.lanes(),
            Inst::Control(_) | Inst::Invalid(_) => PARTITIONS,
        }
    }
}

impl Kernel {
    /// Encodes back to the same 64 bytes.
    pub fn encode(&self) -> Record {
        match self {
            Kernel::S4d4Pl(p) => p.encode(),
            Kernel::S4d4Tr(p) => p.encode(),
            Kernel::D4Iota(p) => p.encode(),
            Kernel::S3s3d3Tt(p) => p.encode(),
            Kernel::S4d4Cr(p) => p.encode(),
            Kernel::SeqBounds(p) => p.encode(),
            Kernel::NonzeroWithCount(p) => p.encode(),
            Kernel::EngineNop(p) => p.encode(),
            Kernel::ExtTta(p) => p.encode(),
            Kernel::NotModelled(r) => *r,
        }
    }

    /// The lanes of the record: `num_active_channels`, or for the executed
    /// 0xF0 specs the lanes of completion_info (EC-55); 128 for a record
    /// whose operand is not modelled.
    pub fn lanes(&self) -> u32 {
        match self {
            Kernel::S4d4Pl(p) => p.num_active_channels as u32,
            Kernel::S4d4Tr(p) => p.num_active_channels as u32,
            Kernel::D4Iota(p) => p.num_active_channels as u32,
            Kernel::S3s3d3Tt(p) => p.num_active_channels as u32,
            Kernel::S4d4Cr(p) => p.num_active_channels as u32,
            Kernel::SeqBounds(p) => p.num_active_channels as u32,
            Kernel::NonzeroWithCount(p) => p.num_active_channels as u32,
            Kernel::EngineNop(p) => extended::completion::lanes(p.completion_info),
            Kernel::ExtTta(p) => extended::completion::lanes(p.completion_info),
            Kernel::NotModelled(_) => PARTITIONS,
        }
    }

    /// The layout table the text form prints field by field (form 2);
    /// `None` for Pool/MaxPoolSelect (form 1) and unmodelled operands.
    pub fn fields(&self) -> Option<&'static [FieldDef]> {
        match self {
            Kernel::S4d4Tr(_) => Some(S4d4Tr::FIELDS),
            Kernel::D4Iota(_) => Some(D4Iota::FIELDS),
            Kernel::S3s3d3Tt(_) => Some(S3s3d3Tt::FIELDS),
            Kernel::S4d4Cr(_) => Some(S4d4Cr::FIELDS),
            Kernel::SeqBounds(_) => Some(S3d3SeqBounds::FIELDS),
            Kernel::NonzeroWithCount(_) => Some(S3d3NonzeroWithCount::FIELDS),
            Kernel::EngineNop(_) => Some(EngineNop::FIELDS),
            Kernel::ExtTta(_) => Some(ExtTta::FIELDS),
            Kernel::S4d4Pl(_) | Kernel::NotModelled(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::opcode::Opcode;

    /// The decoded type and the one class predicate agree for every opcode.
    #[test]
    fn kernels_are_exactly_the_pool_kernel_classes() {
        for b in 0..=255u8 {
            for spec in [0u8, 1, 2, 3, 4, 9] {
                let mut r = Record::default();
                r.0[0] = b;
                r.0[12] = spec;
                let i = Inst::decode(&r);
                assert_eq!(
                    i.kernel().is_some(),
                    Opcode(b).class().is_pool_kernel(),
                    "{}",
                    Opcode(b)
                );
                assert_eq!(i.encode(), r);
            }
        }
    }
}
