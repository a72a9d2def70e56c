//! Helpers of the hand-derived kernel tests (elementwise_hand.rs,
//! lane_kernels_hand.rs): records run on the CPU and, when an adapter exists,
//! the GPU; bytes put and read in SBUF.

use crate::common;
pub use crate::common::{le16, le32, sbuf};
use tpb_emu::device::{CpuExecutor, DeviceMemory, Validated, dispatch};
use tpb_emu::isa::record::Record;
use tpb_emu::isa::validate::Target;
use tpb_emu::isa::{Addr4, Location, Region, Tensor3d, Tensor4d};
use tpb_emu::limits::Arch;

pub const ARCH: Arch = Arch::Cayman;

/// Runs `records` on the CPU and (when an adapter exists) the GPU, from
/// `mem`; asserts both memories agree and returns the CPU's.
pub fn run(records: &[Record], mem: &DeviceMemory) -> DeviceMemory {
    let (cpu, gpu) = common::run_cpu_and_gpu(records, mem, ARCH, "case");
    if let Some(gpu) = gpu {
        assert_eq!(
            common::first_difference(&cpu, &gpu),
            None,
            "CPU and GPU differ"
        );
    }
    cpu
}

pub fn row(addr: Addr4, n: u16) -> Tensor4d {
    Tensor4d::new(addr, [(n, 1), (1, 0), (1, 0), (1, 0)])
}

pub fn row3(addr: Addr4, n: u16) -> Tensor3d {
    Tensor3d::new(addr, [(n, 1), (1, 0), (1, 0)])
}

pub fn loc(p: u32, off: u32) -> Location {
    Location {
        region: Region::Sbuf,
        partition: p,
        offset: off,
    }
}

pub fn put(mem: &mut DeviceMemory, p: u32, off: u32, bytes: &[u8]) {
    mem.write(loc(p, off), 1, bytes).expect("in range");
}

pub fn get(mem: &DeviceMemory, p: u32, off: u32, len: usize) -> Vec<u8> {
    mem.read(loc(p, off), 1, len as u64).expect("in range")
}

/// The records' dispatch trace (SPEC §7) on the CPU, from zeroed memory.
pub fn trace_of(r: &Record) -> Vec<String> {
    let v = Validated::new(0, *r, Target::pool(ARCH)).expect("valid");
    let mut mem = DeviceMemory::new(ARCH);
    let mut trace = Vec::new();
    dispatch::dispatch(&v, &mut mem, &mut trace, &mut CpuExecutor::default()).expect("runs");
    trace
}
