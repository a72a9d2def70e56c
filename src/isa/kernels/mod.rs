//! The POOL engine's kernel table: one file per operand struct, and the one
//! registry of them ([`Kernel`]).
//!
//! A struct's file holds everything the ISA knows of it: its
//! `operand_layout!` table (the struct, decode, encode, offsets, text keys,
//! message fields), its constructor, its own predicates ([`Pred`] consts,
//! with their names and wording) and its checks in SPEC-KERNELS §13 order,
//! reached through the `KernelOperand` trait. The `kernel_table!` below is the
//! only list of the structs: it makes the [`Kernel`] enum and every
//! dispatch over it (decode by [`OpcodeClass`], encode, lanes, the text
//! form's field table, validation).
//!
//! Adding a kernel struct: its file here, its `mod` and `pub use` lines and
//! its row in `kernel_table!` below, and its opcode's row and class in
//! `isa/opcode.rs`. The match on [`OpcodeClass`] has no wildcard arm, so a
//! new class without a row fails to build.
//!
//! [`Pred`]: crate::isa::validate::Pred

pub mod d4_iota;
pub mod extended;
pub mod s3d3_nonzero;
pub mod s3d3_seq_bounds;
pub mod s3s3d3_tt;
pub mod s4d4_cr;
pub mod s4d4_pl;
pub mod s4d4_tr;

pub use d4_iota::D4Iota;
pub use extended::{EngineNop, ExtTta};
pub use s3d3_nonzero::S3d3NonzeroWithCount;
pub use s3d3_seq_bounds::S3d3SeqBounds;
pub use s3s3d3_tt::S3s3d3Tt;
pub use s4d4_cr::S4d4Cr;
pub use s4d4_pl::S4d4Pl;
pub use s4d4_tr::S4d4Tr;

use crate::isa::layout::FieldDef;
use crate::isa::opcode::OpcodeClass;
use crate::isa::predicates::Target;
use crate::isa::predicates::fail::{Fail, Unsupported};
use crate::isa::record::Record;
use crate::limits::PARTITIONS;

/// What the registry asks of each kernel struct (beyond `operand_layout!`'s
/// `decode` and `encode`).
pub(crate) trait KernelOperand {
    /// The layout table form 2 of the text prints field by field; `None`
    /// for a struct printed in a form of its own (S4D4_PL, form 1).
    const TEXT_FIELDS: Option<&'static [FieldDef]>;

    /// EC-16, EC-55, EC-59: the lanes the POOL dispatch offers the record.
    fn lanes(&self) -> u32;

    /// The struct's predicates after SPEC §5 steps 1–4, in SPEC-KERNELS §13
    /// order (EC-40's names, then the emulator's checks): the first failure.
    fn check(&self, r: &Record, t: Target) -> Result<(), Fail>;
}

/// Makes [`Kernel`] and its dispatch from one row per struct: `Variant(Type)
/// = OpcodeClass::Class;` in `by_class`, and the 0xF0 structs by their spec
/// byte (EC-15), `Variant(Type) = extended::spec::SPEC;` in `by_spec`.
macro_rules! kernel_table {
    (
        by_class {
            $( $(#[$doc:meta])* $variant:ident($ty:ident) = OpcodeClass::$class:ident; )*
        }
        by_spec {
            $( $(#[$edoc:meta])* $evariant:ident($ety:ident) = extended::spec::$spec:ident; )*
        }
    ) => {
        /// A kernel-table record, by operand layout.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Kernel {
            $( $(#[$doc])* $variant($ty), )*
            $( $(#[$edoc])* $evariant($ety), )*
            /// A row known by name whose operand is not modelled (the
            /// `PoolNotEmulated` class, 0xF0 specs other than 0 and 2), kept
            /// as bytes: validation refuses it (`emu_opcode_supported`),
            /// dispatch names its kernel.
            NotModelled(Record),
        }

        impl Kernel {
            /// Decodes a record of the kernel table (never fails); `None`
            /// for a record of any other class.
            pub fn decode(r: &Record) -> Option<Kernel> {
                Some(match r.opcode().class() {
                    $( OpcodeClass::$class => Kernel::$variant(<$ty>::decode(r)), )*
                    OpcodeClass::Extended => match extended::spec_of(r) {
                        $( extended::spec::$spec => Kernel::$evariant(<$ety>::decode(r)), )*
                        _ => Kernel::NotModelled(*r),
                    },
                    OpcodeClass::PoolNotEmulated => Kernel::NotModelled(*r),
                    OpcodeClass::Control
                    | OpcodeClass::Dma
                    | OpcodeClass::Pseudo
                    | OpcodeClass::Unknown => return None,
                })
            }

            /// Encodes back to the same 64 bytes.
            pub fn encode(&self) -> Record {
                match self {
                    $( Kernel::$variant(p) => p.encode(), )*
                    $( Kernel::$evariant(p) => p.encode(), )*
                    Kernel::NotModelled(r) => *r,
                }
            }

            /// The lanes of the record: `num_active_channels`, or for the
            /// executed 0xF0 specs the lanes of completion_info (EC-55); 128
            /// for a record whose operand is not modelled.
            pub fn lanes(&self) -> u32 {
                match self {
                    $( Kernel::$variant(p) => p.lanes(), )*
                    $( Kernel::$evariant(p) => p.lanes(), )*
                    Kernel::NotModelled(_) => PARTITIONS,
                }
            }

            /// The layout table the text form prints field by field (form 2);
            /// `None` for Pool/MaxPoolSelect (form 1) and unmodelled operands.
            pub fn fields(&self) -> Option<&'static [FieldDef]> {
                match self {
                    $( Kernel::$variant(_) => <$ty as KernelOperand>::TEXT_FIELDS, )*
                    $( Kernel::$evariant(_) => <$ety as KernelOperand>::TEXT_FIELDS, )*
                    Kernel::NotModelled(_) => None,
                }
            }

            /// The kernel's predicates (SPEC §5 steps 5–7 after the tree's
            /// steps 1–4). A row whose operand is not modelled is refused by
            /// `emu_opcode_supported` (SPEC §5 step 5, EC-58).
            pub(crate) fn check(&self, r: &Record, t: Target) -> Result<(), Fail> {
                match self {
                    $( Kernel::$variant(p) => p.check(r, t), )*
                    $( Kernel::$evariant(p) => p.check(r, t), )*
                    Kernel::NotModelled(_) => Err(Fail::EmuOpcodeSupported {
                        opcode: r.opcode(),
                        why: Unsupported::NotEmulated,
                    }),
                }
            }
        }
    };
}

kernel_table! {
    // The structs of one opcode class each.
    by_class {
        /// Pool (0x45) or MaxPoolSelect (0x58).
        S4d4Pl(S4d4Pl) = OpcodeClass::S4d4Pl;
        /// Copy (0x46) or Cast (0x47).
        S4d4Tr(S4d4Tr) = OpcodeClass::S4d4Tr;
        /// Iota (0x7E).
        D4Iota(D4Iota) = OpcodeClass::D4Iota;
        /// Tensor-tensor arith (0x41) or bitvec (0x51).
        S3s3d3Tt(S3s3d3Tt) = OpcodeClass::S3s3d3Tt;
        /// CrossLaneReduce (0x7C, 0x7D).
        S4d4Cr(S4d4Cr) = OpcodeClass::S4d4Cr;
        /// GetSequenceBounds (0xBE).
        SeqBounds(S3d3SeqBounds) = OpcodeClass::SeqBounds;
        /// NonzeroWithCount (0xF2).
        NonzeroWithCount(S3d3NonzeroWithCount) = OpcodeClass::NonzeroWithCount;
    }
    // EXTENDED_INST (0xF0): the struct chosen by the spec byte (EC-15).
    by_spec {
        /// 0xF0 spec 0.
        EngineNop(EngineNop) = extended::spec::ENGINE_NOP;
        /// 0xF0 spec 2.
        ExtTta(ExtTta) = extended::spec::TENSOR_TENSOR_ARITH;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::enums::{AluOp, Dtype};
    use crate::isa::opcode::Opcode;
    use crate::isa::tensor::{Addr4, Data4d, Region, Tensor3d, Tensor4d};
    use crate::limits::Arch;

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
        match crate::isa::validate::check(r, t) {
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

    /// Every struct of the registry decodes any 64 bytes and encodes them
    /// back (`decode(r).encode() == r`), under each of its opcodes (and
    /// each 0xF0 spec byte).
    #[test]
    fn every_kernel_struct_round_trips_any_bytes() {
        let mut rng = fastrand::Rng::with_seed(0x1A70_0001);
        for _ in 0..500 {
            let mut r = Record::default();
            rng.fill(&mut r.0);
            for b in 0..=255u8 {
                if !Opcode(b).class().is_pool_kernel() {
                    continue;
                }
                r.0[0] = b;
                for spec in 0..=5 {
                    r.0[12] = if b == Opcode::EXTENDED_INST.0 {
                        spec
                    } else {
                        r.0[12]
                    };
                    let k = Kernel::decode(&r).expect("a kernel-table opcode");
                    assert_eq!(k.encode(), r, "{}", Opcode(b));
                }
            }
        }
    }
}
