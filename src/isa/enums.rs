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
