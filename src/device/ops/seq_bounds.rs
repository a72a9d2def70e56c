//! The GetSequenceBounds device op: 0xBE GET_SEQUENCE_BOUNDS (SPEC-KERNELS
//! §8, EC-57). One lane of n ids; dst walk positions 0..n−1 get each id's
//! run start, n..2n−1 its run end (the vendor test's definition, §8.3). The
//! CPU reference is here ([`bounds`], run by its `CpuKernel` impl); the GPU
//! kernel is `shaders/seq_bounds.wgsl` (encoded in `gpu/lane_kernels.rs`).

use super::KernelOp;
use super::pool::Side;
use super::{CpuKernel, Walks};
use crate::device::CpuOptions;
use crate::device::memory::DeviceMemory;
use crate::device::Validated;
use crate::isa::enums::Dtype;
use crate::isa::inst::{Inst, Kernel};
use crate::isa::s3d3_seq_bounds::S3d3SeqBounds;

/// A GetSequenceBounds record as the executors run it. Only
/// [`SbOp::from_validated`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SbOp {
    float_in: bool,
    float_out: bool,
    count: u64,
    src: Side,
    dst: Side,
}

/// EC-57: whether two ids are equal. INT32: equal bits. FP32: neither is
/// NaN and the bits are equal or both are ±0 (subnormals compared as bits).
#[inline(always)]
pub const fn same_id(float: bool, a: u32, b: u32) -> bool {
    if !float {
        return a == b;
    }
    let nan = crate::device::convert::f32_is_nan;
    !nan(a) && !nan(b) && (a == b || (a | b) & 0x7FFF_FFFF == 0)
}

/// EC-57: an id is padding iff it is INT32 0 or FP32 ±0.
#[inline(always)]
pub const fn is_padding(float: bool, a: u32) -> bool {
    if float { a & 0x7FFF_FFFF == 0 } else { a == 0 }
}

/// EC-57: an index value (−1..=n ≤ 2^24) as the out dtype's bits, exactly.
#[inline(always)]
pub fn index_bits(float_out: bool, v: i32) -> u32 {
    if float_out {
        (v as f32).to_bits()
    } else {
        v as u32
    }
}

/// The vendor test's start/end of every id (§8.3): `start[i]` = n for
/// padding, else the first index of its run of equal ids; `end[i]` = −1 for
/// padding, else one past the last index of its run.
pub fn bounds(float: bool, ids: &[u32]) -> (Vec<i32>, Vec<i32>) {
    let n = ids.len();
    let mut start = vec![0i32; n];
    let mut end = vec![0i32; n];
    for i in 0..n {
        start[i] = if is_padding(float, ids[i]) {
            n as i32
        } else if i > 0 && same_id(float, ids[i], ids[i - 1]) {
            start[i - 1]
        } else {
            i as i32
        };
    }
    for i in (0..n).rev() {
        end[i] = if is_padding(float, ids[i]) {
            -1
        } else if i + 1 < n && same_id(float, ids[i], ids[i + 1]) {
            end[i + 1]
        } else {
            i as i32 + 1
        };
    }
    (start, end)
}

impl SbOp {
    /// The op of a validated GetSequenceBounds record; `None` for any other record.
    pub fn from_validated(v: &Validated) -> Option<SbOp> {
        match v.inst() {
            Inst::Kernel(Kernel::SeqBounds(p)) => SbOp::of(&p),
            _ => None,
        }
    }

    /// The op of a validated GetSequenceBounds record's decoded operand.
    pub(super) fn of(p: &S3d3SeqBounds) -> Option<SbOp> {
        Some(SbOp {
            float_in: p.in_dtype == Dtype::FP32,
            float_out: p.out_dtype == Dtype::FP32,
            count: p.src.elements(),
            src: Side::new(&p.src.to_4d())?,
            dst: Side::new(&p.dst.to_4d())?,
        })
    }

    /// FP32 ids (else INT32).
    pub fn float_in(&self) -> bool {
        self.float_in
    }
    /// FP32 output (else INT32).
    pub fn float_out(&self) -> bool {
        self.float_out
    }
    /// n = count(src).
    pub fn count(&self) -> u64 {
        self.count
    }
    /// The source walk.
    pub fn src(&self) -> &Side {
        &self.src
    }
}

/// The CPU reference: starts at dst walk positions 0..n, ends at n..2n (EC-57).
impl CpuKernel for SbOp {
    fn run_cpu(&self, mem: &mut DeviceMemory, _: &CpuOptions) {
        let n = self.count() as usize;
        let mut ids = vec![0u32; n];
        mem.read_walk(self.src(), 0, 4, &mut ids);
        let (start, end) = bounds(self.float_in(), &ids);
        let out: Vec<u32> = start
            .iter()
            .chain(&end)
            .map(|&v| index_bits(self.float_out(), v))
            .collect();
        mem.write_walk(self.dst(), 0, 4, &out);
    }
}

impl KernelOp for SbOp {
    const FAMILY: &'static str = "GetSequenceBounds";
    // EC-59: its kernel line, then its Decode line.
    const ROWS: &'static [(u8, &'static [super::TraceLine])] = &[(
        0xBE,
        &[
            super::TraceLine::Lanes("GetSequenceBounds : num_chans = "),
            super::TraceLine::Channels("Decode : GetSequenceBounds : active_chans = "),
        ],
    )];
    fn of_kernel(k: &Kernel) -> Option<SbOp> {
        match k {
            Kernel::SeqBounds(p) => SbOp::of(p),
            _ => None,
        }
    }
    /// Lanes: always 1.
    fn channels(&self) -> u32 {
        1
    }
    /// Elements read and written: 3n.
    fn elements(&self) -> u64 {
        3 * self.count
    }
    /// The destination walk (2n positions).
    fn dst(&self) -> &Side {
        &self.dst
    }
    /// Bytes one execution reads and writes.
    fn bytes_moved(&self) -> u64 {
        4 * self.elements()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_example_shape() {
        // ids 0 1 1 2 2 2 0 3: runs [1,3), [3,6), [7,8); padding at 0 and 6.
        let (s, e) = bounds(false, &[0, 1, 1, 2, 2, 2, 0, 3]);
        assert_eq!(s, [8, 1, 1, 3, 3, 3, 8, 7]);
        assert_eq!(e, [-1, 3, 3, 6, 6, 6, -1, 8]);
    }
}
