//! Random operand walks for the differential tests of every kernel
//! (backends.rs, lane_kernels_backends.rs): walks in the first [`WINDOW`] bytes
//! of a partition, so later records often read what earlier ones wrote.

use crate::common::WINDOW;
use tpb_emu::device::{DeviceMemory, Executor, NoTrace, Program, run_program};
use tpb_emu::isa::record::Record;
use tpb_emu::isa::validate::Target;
use tpb_emu::isa::{Addr4, Region, Tensor2d, Tensor3d, Tensor4d};
use tpb_emu::limits::Arch;

pub fn pick<T: Copy>(rng: &mut fastrand::Rng, v: &[T]) -> T {
    v[rng.usize(..v.len())]
}

/// `count` split over 1 to `max_dims` random dims (the rest 1).
pub fn split(rng: &mut fastrand::Rng, count: u16, max_dims: usize) -> [u16; 4] {
    let dims = rng.usize(1..=max_dims);
    let mut num = [1u16; 4];
    let mut left = count;
    for n in num.iter_mut().take(dims - 1) {
        let divisors: Vec<u16> = (1..=left).filter(|v| left.is_multiple_of(*v)).collect();
        *n = pick(rng, &divisors);
        left /= *n;
    }
    num[dims - 1] = left;
    num
}

/// A random walk of `num` in the first [`WINDOW`] bytes of `part`'s partition.
pub fn walk(
    rng: &mut fastrand::Rng,
    region: Region,
    part: u32,
    size: u32,
    num: [u16; 4],
) -> Tensor4d {
    let mut step: [i16; 4] = std::array::from_fn(|_| rng.i16(-6..=6));
    match rng.u8(0..4) {
        0 => {
            step = [
                1,
                num[0] as i16,
                (num[0] * num[1]) as i16,
                (num[0] * num[1] * num[2]) as i16,
            ]
        }
        1 => step[0] = 1,
        _ => {}
    }
    Tensor4d {
        addr: Addr4::new(region, part, rng.u32(0..WINDOW / size) * size),
        step,
        num,
    }
}

/// [`walk`] of `count` elements split over 1 to `max_dims` dims.
pub fn walk_split(
    rng: &mut fastrand::Rng,
    region: Region,
    part: u32,
    size: u32,
    count: u16,
    max_dims: usize,
) -> Tensor4d {
    let num = split(rng, count, max_dims);
    walk(rng, region, part, size, num)
}

pub fn to_3d(t: Tensor4d) -> Tensor3d {
    Tensor3d {
        addr: t.addr,
        step: [t.step[0], t.step[1], t.step[2]],
        num: [t.num[0], t.num[1], t.num[2] * t.num[3]],
    }
}

pub fn to_2d(t: Tensor4d) -> Tensor2d {
    Tensor2d::new(
        t.addr,
        [
            (t.num[0], t.step[0]),
            (t.num[1] * t.num[2] * t.num[3], t.step[1]),
        ],
    )
}

/// Runs raw records (a valid POOL stream for `arch`) on `exec` over a copy of `mem`.
pub fn run_records(
    exec: &mut dyn Executor,
    records: &[Record],
    mem: &DeviceMemory,
    arch: Arch,
) -> DeviceMemory {
    let bytes = tpb_emu::isa::stream::to_bytes(records);
    let program = Program::from_stream(&bytes, Target::pool(arch)).expect("valid records");
    let mut out = mem.clone();
    run_program(exec, &program, &mut out, &mut NoTrace).expect("runs");
    out
}
