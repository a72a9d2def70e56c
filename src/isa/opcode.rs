//! Opcodes: an open newtype over the opcode byte and the one table of every
//! opcode the emulator knows (SPEC §2).

use super::enums::Engine;
use std::fmt;

/// What the emulator does with an opcode (SPEC §2's last column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpcodeClass {
    /// Pool (0x45) or MaxPoolSelect (0x58): the S4D4_PL operand; validated and executed on POOL.
    S4d4Pl,
    /// COPY (0x46) and CAST (0x47): the S4D4_TR operand (SPEC-KERNELS §3).
    S4d4Tr,
    /// IOTA (0x7E): the D4_IOTA operand (SPEC-KERNELS §2).
    D4Iota,
    /// TENSOR_TENSOR_ARITH (0x41) and TENSOR_TENSOR_BITVEC (0x51): the
    /// S3S3D3_TT operand (SPEC-KERNELS §4).
    S3s3d3Tt,
    /// CROSS_LANE_REDUCE_ARITH (0x7C) and _BITVEC (0x7D): the S4D4_CR operand
    /// (SPEC-KERNELS §5).
    S4d4Cr,
    /// GET_SEQUENCE_BOUNDS (0xBE): the S3D3_SEQ_BOUNDS operand (SPEC-KERNELS §8).
    SeqBounds,
    /// NONZERO_WITH_COUNT (0xF2): the S3D3_NONZERO_WITH_COUNT operand (SPEC-KERNELS §9).
    NonzeroWithCount,
    /// EXTENDED_INST (0xF0): the struct is chosen by the spec byte (EC-15);
    /// specs 0 and 2 are modelled (SPEC-KERNELS §6).
    Extended,
    /// Another row of the POOL kernel table (SPEC §7): known by name, not emulated.
    PoolNotEmulated,
    /// EVENT_SEMAPHORE, DRAIN, MOV32, CTRL_AL, COMPARE_BRANCH: control records, any engine.
    Control,
    /// DMA_MEMCPY: 2-D strided copy, any engine (EC-23).
    Dma,
    /// The host-only pseudo band 0xC1..=0xDF (seed 004): lowered before validation.
    Pseudo,
    /// Anything else, INVALID (0xFF) included: fails `is_valid_enum`.
    Unknown,
}

/// The opcode byte (record byte 0). Any byte is representable and printable.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Opcode(pub u8);

macro_rules! opcodes {
    ($($(#[$doc:meta])* $konst:ident = $val:expr, $name:expr, $class:ident;)*) => {
        impl Opcode {
            $($(#[$doc])* pub const $konst: Opcode = Opcode($val);)*
        }
        /// The opcode table: written once, read by the decoder, validator, disassembler and assembler.
        const TABLE: &[(Opcode, &str, OpcodeClass)] = &[
            $((Opcode($val), $name, OpcodeClass::$class),)*
        ];
    };
}

opcodes! {
    /// Windowed max/avg pooling (seed 000).
    POOL = 0x45, "POOL", S4d4Pl;
    /// Argmax pooling (seed 000 §7).
    MAX_POOL_SELECT = 0x58, "MAX_POOL_SELECT", S4d4Pl;
    /// Kernel-table row 0.
    IOTA = 0x7E, "IOTA", D4Iota;
    /// Kernel-table row 1.
    CROSS_LANE_REDUCE_ARITH = 0x7C, "CROSS_LANE_REDUCE_ARITH", S4d4Cr;
    /// Kernel-table row 2.
    CROSS_LANE_REDUCE_BITVEC = 0x7D, "CROSS_LANE_REDUCE_BITVEC", S4d4Cr;
    /// Kernel-table row 5. EC-38: the ISA header's numbering (0x41 arith);
    /// seed 001's decode_tensor_tensor_arith serves 0x41 and 0x51.
    TENSOR_TENSOR_ARITH = 0x41, "TENSOR_TENSOR_ARITH", S3s3d3Tt;
    /// Kernel-table row 4 (EC-38: 0x51 bitvec).
    TENSOR_TENSOR_BITVEC = 0x51, "TENSOR_TENSOR_BITVEC", S3s3d3Tt;
    /// Kernel-table rows 6..=10, sub-dispatched by the spec byte (EC-15).
    EXTENDED_INST = 0xF0, "EXTENDED_INST", Extended;
    /// Kernel-table row 11.
    TENSOR_REDUCE_BITVEC = 0x52, "TENSOR_REDUCE_BITVEC", PoolNotEmulated;
    /// Kernel-table row 12.
    COPY = 0x46, "COPY", S4d4Tr;
    /// Kernel-table row 13.
    CAST = 0x47, "CAST", S4d4Tr;
    /// Kernel-table row 14.
    GET_SEQUENCE_BOUNDS = 0xBE, "GET_SEQUENCE_BOUNDS", SeqBounds;
    /// Kernel-table row 15.
    NONZERO_WITH_COUNT = 0xF2, "NONZERO_WITH_COUNT", NonzeroWithCount;
    /// Kernel-table row 16.
    TENSOR_DEQUANTIZE = 0x7B, "TENSOR_DEQUANTIZE", PoolNotEmulated;
    /// Wait/update only (lead; EC-24).
    EVENT_SEMAPHORE = 0xA0, "EVENT_SEMAPHORE", Control;
    /// No-op apart from its events (lead; EC-24).
    DRAIN = 0xA2, "DRAIN", Control;
    /// Register load (lead; EC-26).
    MOV32 = 0xA7, "MOV32", Control;
    /// Register ALU (lead; EC-27).
    CTRL_AL = 0xA8, "CTRL_AL", Control;
    /// Compare and branch, executed after lowering patches it (EC-28, EC-36).
    COMPARE_BRANCH = 0xA9, "COMPARE_BRANCH", Control;
    /// 2-D strided copy (lead; EC-23).
    DMA_MEMCPY = 0xB8, "DMA_MEMCPY", Dma;
    /// Block split at a branch label (seed 004).
    PSEUDO_BRANCH_LABEL = 0xCC, "PSEUDO_BRANCH_LABEL", Pseudo;
    /// Function start: splits the stream (seed 004).
    PSEUDO_FUNCTION_BEGIN = 0xD1, "PSEUDO_FUNCTION_BEGIN", Pseudo;
    /// Function return (seed 004).
    PSEUDO_FUNCTION_RETURN = 0xD2, "PSEUDO_FUNCTION_RETURN", Pseudo;
    /// Function call (seed 004).
    PSEUDO_FUNCTION_CALL = 0xD3, "PSEUDO_FUNCTION_CALL", Pseudo;
    /// DGE 2-D DMA (seed 004; EC-17, EC-29).
    PSEUDO_DMA_DIRECT2D = 0xD4, "PSEUDO_DMA_DIRECT2D", Pseudo;
    /// CC-top JPEG decode trigger (seed 004; EC-4).
    PSEUDO_JPEG_DECODE = 0xD7, "PSEUDO_JPEG_DECODE", Pseudo;
    /// Prefetch hint (seed 004).
    PSEUDO_BRANCH_PREFETCH_HINT = 0xDD, "PSEUDO_BRANCH_PREFETCH_HINT", Pseudo;
    /// EXIT and other sub-ops (seed 004).
    PSEUDO_INST = 0xDF, "PSEUDO_INST", Pseudo;
    /// The terminal sentinel; never valid.
    INVALID = 0xFF, "INVALID", Unknown;
}

/// The pseudo band (seed 004): `0xC1..=0xDF`.
const PSEUDO_BAND: std::ops::RangeInclusive<u8> = 0xC1..=0xDF;

/// The class of every byte, built at compile time from [`TABLE`] and the pseudo band.
const CLASS: [OpcodeClass; 256] = {
    let mut t = [OpcodeClass::Unknown; 256];
    let mut b = *PSEUDO_BAND.start() as usize;
    while b <= *PSEUDO_BAND.end() as usize {
        t[b] = OpcodeClass::Pseudo;
        b += 1;
    }
    let mut i = 0;
    while i < TABLE.len() {
        t[TABLE[i].0.0 as usize] = TABLE[i].2;
        i += 1;
    }
    t
};

impl Opcode {
    fn entry(self) -> Option<&'static (Opcode, &'static str, OpcodeClass)> {
        TABLE.iter().find(|e| e.0 == self)
    }

    /// The spec name, if the emulator knows this opcode.
    pub fn name(self) -> Option<&'static str> {
        self.entry().map(|e| e.1)
    }

    /// Looks up a spec name (as returned by [`Opcode::name`]).
    pub fn from_name(name: &str) -> Option<Opcode> {
        TABLE.iter().find(|e| e.1 == name).map(|e| e.0)
    }

    /// What the emulator does with this opcode.
    #[inline]
    pub const fn class(self) -> OpcodeClass {
        CLASS[self.0 as usize]
    }

    /// True for the host-only pseudo band.
    pub const fn is_pseudo(self) -> bool {
        matches!(self.class(), OpcodeClass::Pseudo)
    }

    /// EC-25 as amended by EC-39: may a record with this opcode sit in
    /// `engine`'s stream? COPY and CAST on POOL, ACT and DVE; the tensor-tensor
    /// pair on POOL and DVE; every other POOL-table opcode and the S4D4_PL pair
    /// on POOL only; control and DMA records on every engine; pseudo and
    /// unknown opcodes nowhere.
    #[inline]
    pub const fn legal_on(self, engine: Engine) -> bool {
        match self.class() {
            // EC-39
            OpcodeClass::S4d4Tr => matches!(engine, Engine::Pool | Engine::Act | Engine::Dve),
            OpcodeClass::S3s3d3Tt => matches!(engine, Engine::Pool | Engine::Dve),
            c if c.is_pool_kernel() => matches!(engine, Engine::Pool),
            OpcodeClass::Control | OpcodeClass::Dma => true,
            _ => false,
        }
    }
}

impl OpcodeClass {
    /// The one list of kernel classes: true for the classes whose records go
    /// through the POOL engine's kernel table (or its EC-14 bypass), where
    /// they run or are refused by name, never skipped. `legal_on` (so
    /// validation's engine check) and `exec`'s check ask this, and
    /// [`Inst::decode`](super::Inst::decode) makes a `Kernel` for exactly
    /// these classes (tested), which validation, the dispatch and staging
    /// read; the match has no wildcard, so a new class must be placed here.
    pub const fn is_pool_kernel(self) -> bool {
        match self {
            OpcodeClass::S4d4Pl
            | OpcodeClass::S4d4Tr
            | OpcodeClass::D4Iota
            | OpcodeClass::S3s3d3Tt
            | OpcodeClass::S4d4Cr
            | OpcodeClass::SeqBounds
            | OpcodeClass::NonzeroWithCount
            | OpcodeClass::Extended
            | OpcodeClass::PoolNotEmulated => true,
            OpcodeClass::Control
            | OpcodeClass::Dma
            | OpcodeClass::Pseudo
            | OpcodeClass::Unknown => false,
        }
    }
}

impl fmt::Debug for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Prints the name when known, else `0xNN`.
impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "0x{:02X}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_unique_bytes_and_names() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                assert_ne!(a.0, b.0, "{} and {}", a.1, b.1);
                assert_ne!(a.1, b.1);
            }
        }
    }

    #[test]
    fn classes_follow_spec_section_2() {
        assert_eq!(Opcode(0x45).class(), OpcodeClass::S4d4Pl);
        assert_eq!(Opcode(0x58).class(), OpcodeClass::S4d4Pl);
        assert_eq!(Opcode(0xC1).class(), OpcodeClass::Pseudo);
        assert_eq!(Opcode(0xC5).class(), OpcodeClass::Pseudo);
        assert_eq!(Opcode(0xDF).class(), OpcodeClass::Pseudo);
        assert_eq!(Opcode(0xE0).class(), OpcodeClass::Unknown);
        assert_eq!(Opcode(0xFF).class(), OpcodeClass::Unknown);
        assert_eq!(Opcode(0x00).class(), OpcodeClass::Unknown);
        assert_eq!(Opcode(0xA9).class(), OpcodeClass::Control);
        assert!(Opcode::POOL.legal_on(Engine::Pool));
        assert!(!Opcode::POOL.legal_on(Engine::Act));
        assert!(Opcode::DMA_MEMCPY.legal_on(Engine::Sp));
        // EC-38 names, EC-39 engines.
        assert_eq!(Opcode(0x41).name(), Some("TENSOR_TENSOR_ARITH"));
        assert_eq!(Opcode(0x51).name(), Some("TENSOR_TENSOR_BITVEC"));
        assert!(Opcode::COPY.legal_on(Engine::Act) && Opcode::CAST.legal_on(Engine::Dve));
        assert!(!Opcode::COPY.legal_on(Engine::Pe) && !Opcode::CAST.legal_on(Engine::Sp));
        assert!(Opcode(0x41).legal_on(Engine::Dve) && !Opcode(0x51).legal_on(Engine::Act));
        assert!(!Opcode::IOTA.legal_on(Engine::Dve));
        assert!(!Opcode::TENSOR_REDUCE_BITVEC.legal_on(Engine::Dve));
    }

    #[test]
    fn every_byte_prints() {
        for b in 0..=255u8 {
            let s = Opcode(b).to_string();
            assert!(!s.is_empty());
        }
        assert_eq!(Opcode(0x13).to_string(), "0x13");
        assert_eq!(Opcode::from_name("MAX_POOL_SELECT"), Some(Opcode(0x58)));
    }
}
