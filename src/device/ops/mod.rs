//! Device ops: what a validated record asks a backend to compute, one typed
//! op per kernel family. Only [`Op::from_validated`] makes one, so every op
//! comes from a record that passed validation; the CPU reference
//! ([`crate::device::cpu`]) and the GPU kernels consume the same op.
//!
//! The op list is one table, `for_each_op!`: each row names an op type
//! that implements [`KernelOp`] (its facts: constructor, lanes, elements,
//! walks, report name, EC-59 kernel lines) and [`CpuKernel`] (the CPU
//! reference, which the CPU executor runs through [`Op::run_cpu`]). The
//! table makes the op modules, [`Op`], its forwarding methods and `From`
//! impls here, and in the GPU backend the executor's encode match and the
//! lists of every program and pipeline (`gpu/test_support.rs`; each op's
//! `GpuKernel` impl sits in its family's file): a new kernel is one row.

pub mod chip_dma;

use crate::device::memory::DeviceMemory;
use crate::device::{CpuOptions, Validated};
use crate::isa::inst::{Inst, Kernel};

pub use chip_dma::{ChipDma, ChipWalk, Place};

/// The op registry: calls `$m!` with every device op, one row each,
/// `Variant(module::Type)` (the module is `ops/<module>.rs`), under its
/// rustdoc. The one list of ops: [`Op`] and every match over it are made
/// from it, here and in the backends.
macro_rules! for_each_op {
    ($m:ident) => {
        $m! {
            /// Pool (0x45) and MaxPoolSelect (0x58).
            Pool(pool::PoolOp),
            /// Copy (0x46) and Cast (0x47).
            Copy(copy::CopyOp),
            /// Iota (0x7E).
            Iota(iota::IotaOp),
            /// Tensor-Tensor arith (0x41) and bitvec (0x51).
            TensorTensor(tensor_tensor::TtOp),
            /// CrossLaneReduce arith (0x7C) and bitvec (0x7D).
            CrossLane(cross_lane::ClrOp),
            /// NonzeroWithCount (0xF2).
            Nonzero(nonzero::NzOp),
            /// GetSequenceBounds (0xBE).
            SeqBounds(seq_bounds::SbOp),
        }
    };
}
// The GPU executor's encode match is made from it.
#[cfg_attr(not(feature = "gpu"), allow(unused_imports))]
pub(crate) use for_each_op;

/// One EC-59 kernel line of a kernel-table row that runs: its text up to a
/// count, then the count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceLine {
    /// Followed by the core's lane count (`… num_chans = 16`).
    Lanes(&'static str),
    /// Followed by the record's channels (`… active_chans = 1`).
    Channels(&'static str),
}

impl TraceLine {
    /// The line on a core of `lanes` lanes for a record of `channels` channels.
    pub fn text(self, lanes: usize, channels: u32) -> String {
        match self {
            TraceLine::Lanes(s) => format!("{s}{lanes}"),
            TraceLine::Channels(s) => format!("{s}{channels}"),
        }
    }
}

/// The facts of a device op that the dispatcher, the executors and the run
/// report ask of it: one impl per op, in its `ops/<kernel>.rs`.
pub trait KernelOp: Sized + Copy + Into<Op> {
    /// The op family's name in the run report.
    const FAMILY: &'static str;
    /// The kernel-table rows (by opcode byte; the 0xF0 band and `decode_pool`
    /// have their own handlers) that run this op, each with its EC-59 kernel
    /// lines, printed by every core with lanes before its exit line.
    const ROWS: &'static [(u8, &'static [TraceLine])];
    /// The op of a validated record's kernel operand; `None` for another
    /// op's kernel, or one this op does not run.
    fn of_kernel(k: &Kernel) -> Option<Self>;
    /// Lanes the op runs on (partitions from the start partition).
    fn channels(&self) -> u32;
    /// Elements the op reads or writes in all.
    fn elements(&self) -> u64;
    /// The dst side: where its writes go (along the walk, or in the
    /// kernel's own layout over its lanes).
    fn dst(&self) -> &pool::Side;
    /// Where the op writes, when it writes only along its dst walk (see
    /// [`Op::dst_walk`]); the default: it does not.
    fn dst_walk(&self) -> Option<(&pool::Side, usize)> {
        None
    }
    /// Bytes one execution reads and writes.
    fn bytes_moved(&self) -> u64;
}

/// The CPU reference of a device op: its definition. Implemented next to
/// the op when the fold needs only walk reads and writes ([`Walks`]), in
/// `device/cpu/<family>.rs` when it uses the CPU's shared engines.
pub trait CpuKernel {
    /// Runs the op on `mem`.
    fn run_cpu(&self, mem: &mut DeviceMemory, options: &CpuOptions);
}

/// Walk reads and writes of one lane of device memory, for the CPU folds
/// that live next to their op; implemented by the CPU reference
/// (`device/cpu/walks.rs`), so an op file needs nothing from `device/cpu`.
pub trait Walks {
    /// Reads walk positions `0..out.len()` of lane `lane` of `s` (elements
    /// of `size` bytes, raw bits in the low bytes).
    fn read_walk(&self, s: &pool::Side, lane: u32, size: usize, out: &mut [u32]);
    /// Writes `vals` at walk positions `0..vals.len()` of lane `lane` of `s`.
    fn write_walk(&mut self, s: &pool::Side, lane: u32, size: usize, vals: &[u32]);
}

/// Declares the op modules, [`Op`] and its forwarding methods from the
/// registry's rows.
macro_rules! declare_ops {
    ($($(#[$doc:meta])* $v:ident($file:ident::$t:ident),)*) => {
        $(
            pub mod $file;
            pub use $file::$t;
        )*

        /// One validated record's datapath work.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum Op {
            $($(#[$doc])* $v($t),)*
        }

        $(
            impl From<$t> for Op {
                fn from(o: $t) -> Op {
                    Op::$v(o)
                }
            }
        )*

        impl Op {
            /// The op of a validated record; `None` for records with no
            /// datapath work on this device (control and DMA records,
            /// kernels not emulated).
            pub fn from_validated(v: &Validated) -> Option<Op> {
                let Inst::Kernel(k) = v.inst() else {
                    return None;
                };
                // At most one op claims a kernel operand.
                $(
                    if let Some(o) = <$t as KernelOp>::of_kernel(&k) {
                        return Some(Op::$v(o));
                    }
                )*
                None
            }

            /// Lanes the op runs on (partitions from the start partition).
            pub fn channels(&self) -> u32 {
                match self {
                    $(Op::$v(o) => o.channels(),)*
                }
            }

            /// Elements the op reads or writes in all: the unit of the work
            /// budget and of the CPU backend's thread split.
            pub fn elements(&self) -> u64 {
                match self {
                    $(Op::$v(o) => o.elements(),)*
                }
            }

            /// Where the op writes, when it writes only along its dst walk:
            /// the dst side (lane `p` in partition `dst.partition + p`, for
            /// [`Op::channels`] lanes) and the bytes of one element. `None`
            /// for the kernels whose writes follow their own layouts (their
            /// [`KernelOp::dst_walk`] keeps the default): a backend that
            /// tracks written bytes then counts all of memory as written.
            pub fn dst_walk(&self) -> Option<(&pool::Side, usize)> {
                match self {
                    $(Op::$v(o) => KernelOp::dst_walk(o),)*
                }
            }

            /// The dst side every op has (see [`KernelOp::dst`]): what a
            /// reader of memory asks for a kernel with no walk of its own
            /// ([`Op::dst_walk`] `None`).
            pub fn dst(&self) -> &pool::Side {
                match self {
                    $(Op::$v(o) => KernelOp::dst(o),)*
                }
            }

            /// Bytes one execution reads and writes (benchmarks' GB/s).
            pub fn bytes_moved(&self) -> u64 {
                match self {
                    $(Op::$v(o) => o.bytes_moved(),)*
                }
            }

            /// The op family's name in the run report.
            pub fn family(&self) -> &'static str {
                match self {
                    $(Op::$v(_) => <$t as KernelOp>::FAMILY,)*
                }
            }

            /// EC-59: the kernel lines of the kernel-table row of `opcode`
            /// when an op runs it; `None` when none does (the row is then
            /// not emulated, or has a handler of its own).
            pub fn trace_lines(opcode: u8) -> Option<&'static [TraceLine]> {
                let rows = [$(<$t as KernelOp>::ROWS,)*];
                rows.into_iter()
                    .flatten()
                    .find(|(o, _)| *o == opcode)
                    .map(|(_, lines)| *lines)
            }

            /// Runs the op on the CPU reference.
            pub fn run_cpu(&self, mem: &mut DeviceMemory, options: &CpuOptions) {
                match self {
                    $(Op::$v(o) => o.run_cpu(mem, options),)*
                }
            }
        }
    };
}

for_each_op!(declare_ops);
