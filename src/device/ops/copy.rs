//! The Copy (0x46) and Cast (0x47) device op (SPEC-KERNELS §3, EC-45,
//! EC-46): element k of lane p's src walk becomes element k of its dst walk.
//! The CPU reference is `device::cpu::copy`; the GPU kernel is
//! `shaders/cast.wgsl`.

use super::KernelOp;
use super::pool::Side;
use crate::device::Validated;
use crate::device::convert::{InType, OutType};
use crate::isa::inst::{Inst, Kernel};
use crate::isa::opcode::Opcode;
use crate::isa::s4d4_tr::S4d4Tr;

/// What happens to each element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conversion {
    /// EC-45 / EC-46 (equal dtypes): the element's `size` bytes are copied
    /// unchanged, whatever the dtype (FP8 included), never canonicalised.
    Bits {
        /// Element size in bytes (1, 2 or 4).
        size: usize,
    },
    /// EC-46 (different dtypes): `store_EC13(load_§6(x))` through f32, with
    /// EC-19 and EC-20.
    Convert {
        /// The src dtype.
        from: InType,
        /// The dst dtype.
        to: OutType,
    },
}

impl Conversion {
    /// EC-46: Copy, and Cast between equal dtypes, move bits; a Cast between
    /// different dtypes converts (`None` for a pair the emulator does not
    /// execute, which validation has already refused).
    pub fn of(opcode: Opcode, p: &S4d4Tr) -> Option<Conversion> {
        if opcode == Opcode::COPY || p.in_dtype == p.out_dtype {
            return Some(Conversion::Bits {
                size: p.in_dtype.size()? as usize,
            });
        }
        Some(Conversion::Convert {
            from: InType::from_dtype(p.in_dtype)?,
            to: OutType::from_dtype(p.out_dtype)?,
        })
    }

    /// Bytes of one src element.
    pub fn src_size(self) -> usize {
        match self {
            Conversion::Bits { size } => size,
            Conversion::Convert { from, .. } => from.size(),
        }
    }

    /// Bytes of one dst element.
    pub fn dst_size(self) -> usize {
        match self {
            Conversion::Bits { size } => size,
            Conversion::Convert { to, .. } => to.size(),
        }
    }
}

/// A Copy or Cast record as the executors run it. Only
/// [`CopyOp::from_validated`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyOp {
    opcode: Opcode,
    conversion: Conversion,
    channels: u32,
    count: u64,
    src: Side,
    dst: Side,
}

impl CopyOp {
    /// The op of a validated Copy/Cast record; `None` for any other opcode.
    pub fn from_validated(v: &Validated) -> Option<CopyOp> {
        match v.inst() {
            Inst::Kernel(Kernel::S4d4Tr(p)) => CopyOp::of(&p),
            _ => None,
        }
    }

    /// The op of a validated Copy/Cast record's decoded operand.
    pub(super) fn of(p: &S4d4Tr) -> Option<CopyOp> {
        Some(CopyOp {
            opcode: p.opcode(),
            conversion: Conversion::of(p.opcode(), p)?,
            channels: p.num_active_channels as u32,
            count: p.src.elements(),
            src: Side::new(&p.src)?,
            dst: Side::new(&p.dst)?,
        })
    }

    /// COPY or CAST.
    pub fn opcode(&self) -> Opcode {
        self.opcode
    }
    /// What happens to each element.
    pub fn conversion(&self) -> Conversion {
        self.conversion
    }
    /// Elements per lane (count(src) = count(dst)).
    pub fn count(&self) -> u64 {
        self.count
    }
    /// The source walk.
    pub fn src(&self) -> &Side {
        &self.src
    }
}

impl KernelOp for CopyOp {
    const FAMILY: &'static str = "Copy/Cast";
    const ROWS: &'static [(u8, &'static [super::TraceLine])] = &[
        (0x46, &[super::TraceLine::Lanes("Copy : num_chans = ")]),
        (0x47, &[super::TraceLine::Lanes("Cast : num_chans = ")]),
    ];
    fn of_kernel(k: &Kernel) -> Option<CopyOp> {
        match k {
            Kernel::S4d4Tr(p) => CopyOp::of(p),
            _ => None,
        }
    }
    /// Lanes (1..=128).
    fn channels(&self) -> u32 {
        self.channels
    }
    /// Elements read and written: `channels · count`.
    fn elements(&self) -> u64 {
        self.channels as u64 * self.count
    }
    /// The destination walk.
    fn dst(&self) -> &Side {
        &self.dst
    }
    fn dst_walk(&self) -> Option<(&Side, usize)> {
        Some((self.dst(), self.conversion().dst_size()))
    }
    /// Bytes one execution reads and writes.
    fn bytes_moved(&self) -> u64 {
        self.elements() * (self.conversion.src_size() + self.conversion.dst_size()) as u64
    }
}
