//! Helpers of the hand-derived kernel tests (kernels_hand.rs,
//! kernels2_hand.rs): records run on the CPU and, when an adapter exists,
//! the GPU; bytes put and read in SBUF.

use crate::common;
use tpb_emu::device::DeviceMemory;
use tpb_emu::isa::record::Record;
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

pub fn sbuf(p: u32, off: u32) -> Addr4 {
    Addr4::new(Region::Sbuf, p, off)
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

pub fn le32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn le16(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
