//! The ISA's small enums as open newtypes over their byte (any byte is
//! representable and printable), plus the engine roster.

use std::fmt;

/// Declares an open newtype over `u8` with named constants and one name table.
macro_rules! open_enum {
    ($(#[$doc:meta])* $ty:ident { $($(#[$cdoc:meta])* $konst:ident = $val:expr, $name:expr;)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $ty(pub u8);

        impl $ty {
            $($(#[$cdoc])* pub const $konst: $ty = $ty($val);)*
            /// Every named value with its text name.
            pub const NAMES: &'static [($ty, &'static str)] = &[$(($ty($val), $name),)*];

            /// Which bytes are named values: a table built at compile time so
            /// the validator's membership tests are one load.
            const NAMED: [bool; 256] = {
                let mut t = [false; 256];
                let mut i = 0;
                while i < Self::NAMES.len() {
                    t[Self::NAMES[i].0.0 as usize] = true;
                    i += 1;
                }
                t
            };

            /// True when the byte is one of the named values.
            #[inline]
            pub const fn is_named(self) -> bool {
                Self::NAMED[self.0 as usize]
            }

            /// The text name, if the byte is a named value.
            pub fn name(self) -> Option<&'static str> {
                Self::NAMES.iter().find(|e| e.0 == self).map(|e| e.1)
            }

            /// Parses a text name (as returned by `name`).
            pub fn from_name(s: &str) -> Option<$ty> {
                Self::NAMES.iter().find(|e| e.1 == s).map(|e| e.0)
            }
        }

        /// Prints the name when the byte has one, else `0xNN`.
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.name() {
                    Some(n) => f.write_str(n),
                    None => write!(f, "0x{:02X}", self.0),
                }
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(self, f)
            }
        }
    };
}

open_enum! {
    /// `NEURON_ISA_TPB_DTYPE` (seed 000 §3.5). EC-34: the whole byte is the dtype,
    /// so any byte >= 0x10 is simply not in the enum. Text names from SPEC §5.
    Dtype {
        /// Not a dtype.
        INVALID = 0x0, "invalid";
        /// Unsigned 64-bit.
        UINT64 = 0x1, "uint64";
        /// Signed 8-bit.
        INT8 = 0x2, "int8";
        /// Unsigned 8-bit.
        UINT8 = 0x3, "uint8";
        /// Signed 16-bit.
        INT16 = 0x4, "int16";
        /// Unsigned 16-bit.
        UINT16 = 0x5, "uint16";
        /// bfloat16.
        BFLOAT16 = 0x6, "bf16";
        /// IEEE binary16.
        FP16 = 0x7, "fp16";
        /// Signed 32-bit.
        INT32 = 0x8, "int32";
        /// Unsigned 32-bit.
        UINT32 = 0x9, "uint32";
        /// IEEE binary32.
        FP32 = 0xA, "fp32";
        /// binary32 with the hardware's round mode (output only).
        FP32R = 0xB, "fp32r";
        /// Signed 64-bit.
        INT64 = 0xC, "int64";
        /// fp8 with 3 exponent bits.
        FP8_EXP3 = 0xD, "fp8e3";
        /// fp8 with 4 exponent bits.
        FP8_EXP4 = 0xE, "fp8e4";
        /// fp8 with 5 exponent bits.
        FP8_EXP5 = 0xF, "fp8e5";
    }
}

impl Dtype {
    /// Element size in bytes, for the values of the enum (INVALID and bytes >= 0x10 have none).
    #[inline]
    pub const fn size(self) -> Option<u32> {
        // Indexed by the dtype byte; 0 = no size. A table keeps the validator branch-free.
        const SIZES: [u8; 16] = [0, 8, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 8, 1, 1, 1];
        if self.0 < 16 && SIZES[self.0 as usize] != 0 {
            Some(SIZES[self.0 as usize] as u32)
        } else {
            None
        }
    }

    /// True for the floating-point dtypes (fp8 included).
    pub const fn is_float(self) -> bool {
        matches!(self.0, 0x6 | 0x7 | 0xA | 0xB | 0xD..=0xF)
    }

    /// True for the integer dtypes (INT8..UINT32, INT64, UINT64).
    pub const fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }

    /// `is_signed_int`: INT8, INT16, INT32, INT64.
    pub const fn is_signed_int(self) -> bool {
        matches!(self.0, 0x2 | 0x4 | 0x8 | 0xC)
    }

    /// `is_unsigned_int`: UINT8, UINT16, UINT32, UINT64.
    pub const fn is_unsigned_int(self) -> bool {
        matches!(self.0, 0x1 | 0x3 | 0x5 | 0x9)
    }

    /// INT64 or UINT64.
    pub const fn is_64bit(self) -> bool {
        matches!(self.0, 0x1 | 0xC)
    }

    /// True for the fp8 dtypes.
    pub const fn is_fp8(self) -> bool {
        matches!(self.0, 0xD..=0xF)
    }

    /// EC-13b: dtypes the emulator executes on the input side.
    pub const fn emu_readable(self) -> bool {
        matches!(self.0, 0x2..=0xA | 0xC)
    }

    /// EC-13b: dtypes the emulator executes on the output side.
    pub const fn emu_writable(self) -> bool {
        matches!(self.0, 0x2..=0xB)
    }
}

open_enum! {
    /// `NEURON_ISA_TPB_POOL_TYPE`, the `pool_func` byte (seed 000 §3.3).
    PoolFunc {
        /// No function: required by MaxPoolSelect.
        NONE = 0, "none";
        /// Windowed maximum.
        MAX_POOL = 1, "max";
        /// Windowed average: sum, then one multiply by pool_scale.
        AVG_POOL = 2, "avg";
    }
}

open_enum! {
    /// `NEURON_ISA_TPB_TENSOR_SUBDIM`, the `pool_dim` byte (seed 000 §3.4). There is no 1.
    PoolDim {
        /// Unused.
        UNUSED = 0, "unused";
        /// Window = dim0.
        X = 2, "x";
        /// Window = dims 0..=1.
        XY = 3, "xy";
        /// Window = dims 0..=2.
        XYZ = 4, "xyz";
        /// Window = all four dims.
        XYZW = 5, "xyzw";
    }
}

impl PoolDim {
    /// How many of the innermost dims form one window, for the four legal values (EC-8).
    pub const fn window_dims(self) -> Option<usize> {
        match self.0 {
            2..=5 => Some(self.0 as usize - 1),
            _ => None,
        }
    }
}

open_enum! {
    /// `ALU_OP` (SPEC-KERNELS §4.3, the ISA header's 60 values): the selector of
    /// the tensor-tensor kernels (and S4D4_TR's `op`). Any other byte is not in
    /// the enum (`is_valid_enum`). Text names are the header names in lower case.
    AluOp {
        /// Base band: pass src0 through.
        BYPASS = 0x00, "bypass";
        /// `~a`.
        BITWISE_NOT = 0x01, "bitwise_not";
        /// Arithmetic shift left.
        ARITH_SHIFT_LEFT = 0x02, "arith_shift_left";
        /// Arithmetic shift right.
        ARITH_SHIFT_RIGHT = 0x03, "arith_shift_right";
        /// `a + b`.
        ADD = 0x04, "add";
        /// `a - b`.
        SUBTRACT = 0x05, "subtract";
        /// `a * b`.
        MULT = 0x06, "mult";
        /// `a / b`.
        DIVIDE = 0x07, "divide";
        /// Maximum.
        MAX = 0x08, "max";
        /// Minimum.
        MIN = 0x09, "min";
        /// `a & b`.
        BITWISE_AND = 0x0A, "bitwise_and";
        /// `a | b`.
        BITWISE_OR = 0x0B, "bitwise_or";
        /// `a ^ b`.
        BITWISE_XOR = 0x0C, "bitwise_xor";
        /// Logical and.
        LOGICAL_AND = 0x0D, "logical_and";
        /// Logical or.
        LOGICAL_OR = 0x0E, "logical_or";
        /// Logical xor.
        LOGICAL_XOR = 0x0F, "logical_xor";
        /// Logical shift left.
        LOGICAL_SHIFT_LEFT = 0x10, "logical_shift_left";
        /// Logical shift right.
        LOGICAL_SHIFT_RIGHT = 0x11, "logical_shift_right";
        /// `a == b`.
        IS_EQ = 0x12, "is_eq";
        /// `a > b`.
        IS_GT = 0x13, "is_gt";
        /// `a >= b`.
        IS_GE = 0x14, "is_ge";
        /// `a <= b`.
        IS_LE = 0x15, "is_le";
        /// `a < b`.
        IS_LT = 0x16, "is_lt";
        /// `|a - b|`.
        ABSOLUTE_DIFF = 0x17, "absolute_diff";
        /// `a != b`.
        IS_NE = 0x18, "is_ne";
        /// `|a|`.
        ABSOLUTE_VALUE = 0x19, "absolute_value";
        /// `a ** b` (Pool only).
        POW = 0x1A, "pow";
        /// `a mod b`.
        MOD = 0x1B, "mod";
        /// CRC32 (Pool only).
        CRC32 = 0x1C, "crc32";
        /// `1 / sqrt(a)` (Pool only).
        RSQRT = 0x1D, "rsqrt";
        /// Integer band: add (signed or unsigned).
        ADD_INT = 0xC4, "add_int";
        /// Integer multiply (signed or unsigned).
        MULT_INT = 0xC5, "mult_int";
        /// Integer subtract (signed or unsigned).
        SUBTRACT_INT = 0xC6, "subtract_int";
        /// Integer divide.
        DIVIDE_INT = 0xC7, "divide_int";
        /// Integer modulo.
        MOD_INT = 0xC8, "mod_int";
        /// Integer equality.
        IS_EQUAL_INT = 0xC9, "is_equal_int";
        /// Integer inequality.
        IS_NE_INT = 0xCA, "is_ne_int";
        /// Signed absolute maximum.
        ABS_MAX_INT = 0xCB, "abs_max_int";
        /// Signed absolute minimum.
        ABS_MIN_INT = 0xCC, "abs_min_int";
        /// Signed absolute difference.
        ABS_DIFF_INT = 0xCD, "abs_diff_int";
        /// Signed absolute value.
        ABS_VALUE_INT = 0xCE, "abs_value_int";
        /// Signed maximum.
        MAX_INT = 0xCF, "max_int";
        /// Signed minimum.
        MIN_INT = 0xD0, "min_int";
        /// Signed `a > b`.
        IS_GT_INT = 0xD1, "is_gt_int";
        /// Signed `a >= b`.
        IS_GE_INT = 0xD2, "is_ge_int";
        /// Signed `a <= b`.
        IS_LE_INT = 0xD3, "is_le_int";
        /// Signed `a < b`.
        IS_LT_INT = 0xD4, "is_lt_int";
        /// Unsigned maximum.
        MAX_UINT = 0xD5, "max_uint";
        /// Unsigned minimum.
        MIN_UINT = 0xD6, "min_uint";
        /// Unsigned `a > b`.
        IS_GT_UINT = 0xD7, "is_gt_uint";
        /// Unsigned `a >= b`.
        IS_GE_UINT = 0xD8, "is_ge_uint";
        /// Unsigned `a <= b`.
        IS_LE_UINT = 0xD9, "is_le_uint";
        /// Unsigned `a < b`.
        IS_LT_UINT = 0xDA, "is_lt_uint";
        /// Unsigned multiply.
        MULT_UINT = 0xDB, "mult_uint";
        /// Unsigned divide.
        DIVIDE_UINT = 0xDC, "divide_uint";
        /// Unsigned modulo.
        MOD_UINT = 0xDD, "mod_uint";
        /// Signed argmax (writes u32).
        AMAX_INT = 0xDE, "amax_int";
        /// Signed argmin (writes u32).
        AMIN_INT = 0xDF, "amin_int";
        /// Unsigned argmax (writes u32).
        AMAX_UINT = 0xE0, "amax_uint";
        /// Unsigned argmin (writes u32).
        AMIN_UINT = 0xE1, "amin_uint";
    }
}

/// The op classes of the ISA header's predicate bodies (SPEC-KERNELS §4.3).
impl AluOp {
    /// `is_bitvec_op`: BYPASS, NOT, the four shifts, AND, OR, XOR, CRC32.
    pub const fn is_bitvec_op(self) -> bool {
        self.is_general_bitvec_op() || self.0 == Self::CRC32.0
    }

    /// `is_general_bitvec_op`: [`AluOp::is_bitvec_op`] minus CRC32 (9 ops).
    pub const fn is_general_bitvec_op(self) -> bool {
        matches!(self.0, 0x00..=0x03 | 0x0A..=0x0C | 0x10 | 0x11)
    }

    /// `is_shift_op`: the four shifts.
    pub const fn is_shift_op(self) -> bool {
        matches!(self.0, 0x02 | 0x03 | 0x10 | 0x11)
    }

    /// `is_arith_op`.
    pub const fn is_arith_op(self) -> bool {
        matches!(self.0, 0x00 | 0x04..=0x09 | 0x0D..=0x0F | 0x12..=0x1B | 0x1D | 0xC4..=0xC8)
    }

    /// `is_general_arith_op`: [`AluOp::is_arith_op`] minus DIVIDE, POW, MOD,
    /// RSQRT and the int ops.
    pub const fn is_general_arith_op(self) -> bool {
        matches!(self.0, 0x00 | 0x04..=0x06 | 0x08 | 0x09 | 0x0D..=0x0F | 0x12..=0x19)
    }

    /// `is_valid_int_aluop`: 0xC4..=0xDD except ABS_VALUE_INT, plus MOD (26
    /// ops; the explicit list wins over TT §3.2's prose, C-20).
    pub const fn is_valid_int_aluop(self) -> bool {
        matches!(self.0, 0x1B | 0xC4..=0xCD | 0xCF..=0xDD)
    }

    /// `is_signed_alu_op`: the shared ops and the `_INT` signed-only ops.
    pub const fn is_signed_alu_op(self) -> bool {
        matches!(self.0, 0x1B | 0xC4..=0xCD | 0xCF..=0xD4)
    }

    /// `is_unsigned_alu_op`: the shared ops and the `_UINT` ops.
    pub const fn is_unsigned_alu_op(self) -> bool {
        matches!(self.0, 0x1B | 0xC4..=0xCA | 0xD5..=0xDD)
    }
}

open_enum! {
    /// `REDUCE_OP` (SPEC-KERNELS §5.1): CrossLaneReduce's fold; 0x7C takes the
    /// arith ops, 0x7D the bitwise ones (EC-54).
    ReduceOp {
        /// Sum.
        ADD = 0, "add";
        /// Scale each element, then sum.
        AVERAGE = 1, "average";
        /// Maximum.
        MAX = 2, "max";
        /// Bitwise or.
        BITWISE_OR = 3, "bitwise_or";
        /// Bitwise and.
        BITWISE_AND = 4, "bitwise_and";
        /// Bitwise xor.
        BITWISE_XOR = 5, "bitwise_xor";
    }
}

impl ReduceOp {
    /// ADD, AVERAGE or MAX: the ops 0x7C executes (EC-54).
    pub const fn is_arith(self) -> bool {
        self.0 <= 2
    }
}

open_enum! {
    /// `REDUCE_AXIS` (SPEC-KERNELS §5.1).
    ReduceAxis {
        /// One fold over every element of every lane.
        ALL = 0, "all";
        /// One fold across the lanes per walk position.
        PARTITIONS = 1, "partitions";
    }
}

open_enum! {
    /// `IMM_SRC` (SPEC-KERNELS §0.3): where an IMM_VAL comes from.
    ImmSrc {
        /// The inline 32-bit value (the only one executed, EC-60).
        INLINE = 0, "inline";
        /// A pointer (EC-60: not emulated).
        POINTER = 1, "pointer";
        /// A register pointer (EC-60: not emulated).
        REGISTER = 2, "register";
    }
}

/// `DTYPE_PAIR` (EC-43): one byte holding src0's dtype in the low nibble and
/// src1's in the high nibble, each a SPEC §5 DTYPE code.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct DtypePair(pub u8);

impl DtypePair {
    /// The pair `(src0, src1)`.
    pub const fn new(src0: Dtype, src1: Dtype) -> DtypePair {
        DtypePair((src0.0 & 0xF) | (src1.0 << 4))
    }

    /// src0's dtype: the low nibble (EC-43).
    pub const fn src0(self) -> Dtype {
        Dtype(self.0 & 0xF)
    }

    /// src1's dtype: the high nibble (EC-43).
    pub const fn src1(self) -> Dtype {
        Dtype(self.0 >> 4)
    }
}

open_enum! {
    /// The events band's wait mode (lead, SPEC §1).
    WaitMode {
        /// No wait.
        NONE = 0, "none";
        /// `sem[idx] == value`.
        SEM_EQ = 1, "sem_eq";
        /// `sem[idx] < value` (signed).
        SEM_LT = 2, "sem_lt";
        /// `sem[idx] <= value` (signed).
        SEM_LE = 3, "sem_le";
        /// `sem[idx] > value` (signed).
        SEM_GT = 4, "sem_gt";
        /// `sem[idx] >= value` (signed).
        SEM_GE = 5, "sem_ge";
        /// Until `event[idx]` is set.
        EVT_SET = 6, "evt_set";
        /// Until `event[idx]` is set, then clear it.
        EVT_SET_THEN_CLEAR = 7, "evt_set_then_clear";
        /// Until `event[idx]` is clear.
        EVT_CLEAR = 14, "evt_clear";
        /// Until `event[idx]` is clear, then set it.
        EVT_CLEAR_THEN_SET = 15, "evt_clear_then_set";
        /// Register form (EC-2: valid, not emulated).
        REG_EQ = 0x81, "reg_eq";
        /// Register form (EC-2).
        REG_LT = 0x82, "reg_lt";
        /// Register form (EC-2).
        REG_LE = 0x83, "reg_le";
        /// Register form (EC-2).
        REG_GT = 0x84, "reg_gt";
        /// Register form (EC-2).
        REG_GE = 0x85, "reg_ge";
    }
}

impl WaitMode {
    /// In SPEC §1's set of valid wait modes (`valid_event_modes`).
    #[inline]
    pub const fn is_valid(self) -> bool {
        self.is_named()
    }
    /// EC-2: the register forms are valid encodings the emulator does not run.
    pub const fn emu_supported(self) -> bool {
        self.0 < 0x80
    }
}

open_enum! {
    /// The events band's update mode (lead, SPEC §1). The `_done` forms (+0x10)
    /// apply on completion; EC-3 treats them like the plain forms.
    UpdateMode {
        /// No update.
        NONE = 0, "none";
        /// Set `event[idx]`.
        EVT_SET = 1, "evt_set";
        /// Clear `event[idx]`.
        EVT_CLR = 2, "evt_clr";
        /// `sem[idx] += 1`.
        SEM_INC = 3, "sem_inc";
        /// `sem[idx] -= 1`.
        SEM_DEC = 4, "sem_dec";
        /// `sem[idx] += value`.
        SEM_ADD_IMM = 5, "sem_add";
        /// `sem[idx] -= value`.
        SEM_SUB_IMM = 7, "sem_sub";
        /// `sem[idx] = value`.
        SEM_WR_IMM = 9, "sem_wr";
        /// Completion form of EVT_SET.
        EVT_SET_DONE = 0x11, "evt_set_done";
        /// Completion form of EVT_CLR.
        EVT_CLR_DONE = 0x12, "evt_clr_done";
        /// Completion form of SEM_INC.
        SEM_INC_DONE = 0x13, "sem_inc_done";
        /// Completion form of SEM_DEC.
        SEM_DEC_DONE = 0x14, "sem_dec_done";
        /// Completion form of SEM_ADD_IMM.
        SEM_ADD_IMM_DONE = 0x15, "sem_add_done";
        /// Completion form of SEM_SUB_IMM.
        SEM_SUB_IMM_DONE = 0x17, "sem_sub_done";
        /// Completion form of SEM_WR_IMM.
        SEM_WR_IMM_DONE = 0x19, "sem_wr_done";
        /// Register form (EC-2: valid, not emulated).
        REG_87 = 0x87, "reg_87";
        /// Register form (EC-2).
        REG_97 = 0x97, "reg_97";
        /// Register form (EC-2).
        REG_99 = 0x99, "reg_99";
    }
}

impl UpdateMode {
    /// In SPEC §1's set of valid update modes (`valid_event_modes`).
    #[inline]
    pub const fn is_valid(self) -> bool {
        self.is_named()
    }
    /// EC-2: the register forms are valid encodings the emulator does not run.
    pub const fn emu_supported(self) -> bool {
        self.0 < 0x80
    }
    /// EC-3: the read (0x0N) and completion (0x1N) forms act alike.
    pub const fn base(self) -> UpdateMode {
        if self.0 >= 0x10 && self.0 < 0x20 {
            UpdateMode(self.0 - 0x10)
        } else {
            self
        }
    }
}

/// The five record-executing engines (seed 004 §6). TOP_SP (5) runs no records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Engine {
    /// Tensor (matmul) engine.
    Pe = 0,
    /// Activation engine.
    Act = 1,
    /// The POOL (GPSIMD) engine, the one this emulator executes.
    #[default]
    Pool = 2,
    /// Vector engine.
    Dve = 3,
    /// Sync/DMA engine.
    Sp = 4,
}

impl Engine {
    /// The five engines in index order.
    pub const ALL: [Engine; 5] = [
        Engine::Pe,
        Engine::Act,
        Engine::Pool,
        Engine::Dve,
        Engine::Sp,
    ];

    /// Lower-case name used by the CLI and manifests.
    pub const fn name(self) -> &'static str {
        match self {
            Engine::Pe => "pe",
            Engine::Act => "act",
            Engine::Pool => "pool",
            Engine::Dve => "dve",
            Engine::Sp => "sp",
        }
    }

    /// Parses a name as written by [`Engine::name`].
    pub fn from_name(s: &str) -> Option<Engine> {
        Engine::ALL.into_iter().find(|e| e.name() == s)
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_sizes_and_names() {
        assert_eq!(Dtype::FP32.size(), Some(4));
        assert_eq!(Dtype::BFLOAT16.size(), Some(2));
        assert_eq!(Dtype::INT64.size(), Some(8));
        assert_eq!(Dtype::INVALID.size(), None);
        assert_eq!(Dtype(0x10).size(), None);
        assert_eq!(Dtype::from_name("bf16"), Some(Dtype::BFLOAT16));
        assert_eq!(Dtype(0x42).to_string(), "0x42");
        assert!(Dtype::FP32R.emu_writable() && !Dtype::FP32R.emu_readable());
        assert!(Dtype::INT64.emu_readable() && !Dtype::INT64.emu_writable());
        assert!(!Dtype::FP8_EXP4.emu_readable() && !Dtype::FP8_EXP4.emu_writable());
    }

    #[test]
    fn pool_dim_has_no_one() {
        assert_eq!(PoolDim(1).name(), None);
        assert_eq!(PoolDim(1).window_dims(), None);
        assert_eq!(PoolDim::X.window_dims(), Some(1));
        assert_eq!(PoolDim::XYZW.window_dims(), Some(4));
    }

    #[test]
    fn update_done_forms_map_to_base() {
        assert_eq!(UpdateMode::SEM_WR_IMM_DONE.base(), UpdateMode::SEM_WR_IMM);
        assert_eq!(UpdateMode::SEM_INC.base(), UpdateMode::SEM_INC);
        assert!(!UpdateMode(6).is_valid());
        assert!(!WaitMode(8).is_valid());
    }
}

#[cfg(test)]
mod alu_tests {
    use super::*;

    fn count(f: impl Fn(AluOp) -> bool) -> usize {
        (0..=255u8).map(AluOp).filter(|&o| f(o)).count()
    }

    #[test]
    fn alu_op_enum_and_classes_have_the_header_sizes() {
        assert_eq!(AluOp::NAMES.len(), 60);
        assert_eq!(count(AluOp::is_named), 60);
        assert_eq!(count(AluOp::is_general_bitvec_op), 9);
        assert_eq!(count(AluOp::is_bitvec_op), 10);
        assert_eq!(count(AluOp::is_shift_op), 4);
        assert_eq!(count(AluOp::is_valid_int_aluop), 26);
        assert!(!AluOp::ABS_VALUE_INT.is_valid_int_aluop());
        assert!(AluOp::MOD.is_valid_int_aluop());
        assert!(!AluOp::AMAX_INT.is_valid_int_aluop());
        // is_arith_op: 21 base-band entries + 5 int ops; general: minus DIVIDE,
        // POW, MOD, RSQRT and the int ops.
        assert_eq!(count(AluOp::is_arith_op), 26);
        assert_eq!(count(AluOp::is_general_arith_op), 17);
        assert!(AluOp::MULT_INT.is_signed_alu_op() && AluOp::MULT_INT.is_unsigned_alu_op());
        assert!(AluOp::MAX_INT.is_signed_alu_op() && !AluOp::MAX_INT.is_unsigned_alu_op());
        assert!(!AluOp::MULT_UINT.is_signed_alu_op() && AluOp::MULT_UINT.is_unsigned_alu_op());
        for o in (0..=255u8).map(AluOp) {
            // Every class is inside the enum.
            if o.is_arith_op() || o.is_bitvec_op() || o.is_valid_int_aluop() {
                assert!(o.is_named(), "{o}");
            }
        }
        assert_eq!(AluOp(0xC4).to_string(), "add_int");
        assert_eq!(AluOp(0x1E).to_string(), "0x1E");
    }

    #[test]
    fn dtype_pair_nibbles() {
        let p = DtypePair::new(Dtype::INT32, Dtype::UINT32);
        assert_eq!(p.0, 0x98);
        assert_eq!((p.src0(), p.src1()), (Dtype::INT32, Dtype::UINT32));
    }
}
