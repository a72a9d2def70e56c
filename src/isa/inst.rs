//! The one decoded record: [`Inst`], a record decoded by its opcode (and,
//! for 0xF0, its spec byte, EC-15) into the typed struct of its layout.
//!
//! Validation, the text form, the POOL dispatch, the device ops and staging
//! all read records through this type, so the mapping from an opcode to its
//! layout is written once: [`Kernel::decode`] (the registry in
//! `isa/kernels/`, an exhaustive `match` on [`OpcodeClass`]) takes the
//! kernel-table layouts, [`Inst::decode`] the control records. A
//! record is a [`Kernel`] exactly when its class
//! [`is_pool_kernel`](OpcodeClass::is_pool_kernel) (tested for every opcode
//! byte). Decoding never fails and is lossless: `Inst::decode(r).encode() == r`.

use super::control::Control;
use super::opcode::OpcodeClass;
use super::record::Record;
use crate::limits::PARTITIONS;

pub use super::kernels::Kernel;

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

impl Inst {
    /// Decodes any record (never fails).
    pub fn decode(r: &Record) -> Inst {
        if let Some(k) = Kernel::decode(r) {
            return Inst::Kernel(k);
        }
        match r.opcode().class() {
            OpcodeClass::Control | OpcodeClass::Dma => {
                Control::decode(r).map_or(Inst::Invalid(*r), Inst::Control)
            }
            // Pseudo and unknown opcodes (the kernel classes decoded above).
            _ => Inst::Invalid(*r),
        }
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
