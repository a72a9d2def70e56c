//! Shared test helpers: random valid Pool/MaxPoolSelect records in a small
//! window of memory (so later records often read what earlier ones wrote),
//! and random memory contents rich in special float values.
#![allow(dead_code)]

use tpb_emu::device::DeviceMemory;
use tpb_emu::device::convert::{InType, OutType};
use tpb_emu::isa::enums::{Dtype, PoolDim, PoolFunc};
use tpb_emu::isa::validate::{Target, check};
use tpb_emu::isa::{Addr4, Opcode, Region, S4d4Pl, Tensor4d};
use tpb_emu::limits::{Arch, PARTITIONS};

/// Runs the `tpb-emu` binary with `args`; a panic (exit 101) fails the
/// test, since every CLI failure must be an exit code.
pub fn tpb(args: &[&str]) -> std::process::Output {
    tpb_env(args, &[])
}

/// [`tpb`] with extra environment variables.
pub fn tpb_env(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tpb-emu"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("the binary runs");
    assert_ne!(
        out.status.code(),
        Some(101),
        "panic on {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A path as the `&str` an argument list takes (test paths are UTF-8).
pub fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

/// A command's stderr as text.
pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A command's exit code, -1 when a signal ended it.
pub fn code(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Little-endian bytes of `v`.
pub fn le32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Little-endian bytes of `v`.
pub fn le16(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// SBUF partition `p`, byte `off`.
pub fn sbuf(p: u32, off: u32) -> Addr4 {
    Addr4::new(Region::Sbuf, p, off)
}

/// PSUM partition `p`, byte `off`.
pub fn psum(p: u32, off: u32) -> Addr4 {
    Addr4::new(Region::Psum, p, off)
}

/// A pseudo-record `op` (seed 004) naming `name`.
pub fn named(op: Opcode, name: &str) -> tpb_emu::isa::Record {
    use tpb_emu::runtime::lower::pseudo;
    let mut r = tpb_emu::runtime::build::header(op);
    r.0[pseudo::NAME..pseudo::NAME + name.len()].copy_from_slice(name.as_bytes());
    r
}

/// A map of `shape` with values in -74..74 (multiples of 0.37) from `seed`.
pub fn ramp(shape: &[u64], seed: u64) -> tpb_emu::frontend::Tensor {
    let n: u64 = shape.iter().product();
    let mut rng = fastrand::Rng::with_seed(seed);
    let v: Vec<f32> = (0..n).map(|_| (rng.i32(-200..200) as f32) * 0.37).collect();
    tpb_emu::frontend::Tensor::from_f32(shape, &v)
}

/// Bytes at the start of each partition that random records use.
pub const WINDOW: u32 = 1024;

/// Input dtypes the emulator executes (EC-13b).
pub const IN_DTYPES: [Dtype; 10] = {
    let mut d = [Dtype::INVALID; 10];
    let mut i = 0;
    while i < 10 {
        d[i] = InType::ALL[i].dtype();
        i += 1;
    }
    d
};

/// Output dtypes the emulator executes (EC-13b).
pub const OUT_DTYPES: [Dtype; 10] = {
    let mut d = [Dtype::INVALID; 10];
    let mut i = 0;
    while i < 10 {
        d[i] = OutType::ALL[i].dtype();
        i += 1;
    }
    d
};

fn aligned_offset(rng: &mut fastrand::Rng, size: u32) -> u32 {
    rng.u32(0..WINDOW / size) * size
}

fn random_tensor(
    rng: &mut fastrand::Rng,
    region: Region,
    part: u32,
    size: u32,
    num: [u16; 4],
) -> Tensor4d {
    let step = std::array::from_fn(|_| rng.i16(-6..=6));
    Tensor4d {
        addr: Addr4::new(region, part, aligned_offset(rng, size)),
        step,
        num,
    }
}

/// One random record that validates for `t`, or `None` after many tries.
pub fn random_valid_pool(rng: &mut fastrand::Rng, t: Target) -> S4d4Pl {
    loop {
        let p = random_pool(rng);
        if check(&p.encode(), t).is_ok() {
            return p;
        }
    }
}

/// A random S4D4_PL record from the legal sets (not always valid: overlap and footprint vary).
pub fn random_pool(rng: &mut fastrand::Rng) -> S4d4Pl {
    let select = rng.u8(0..4) == 0;
    let func = if select {
        PoolFunc::NONE
    } else if rng.bool() {
        PoolFunc::MAX_POOL
    } else {
        PoolFunc::AVG_POOL
    };
    let in_dtype = IN_DTYPES[rng.usize(..IN_DTYPES.len())];
    let out_dtype = if select {
        [Dtype::UINT8, Dtype::UINT16, Dtype::UINT32][rng.usize(..3)]
    } else {
        OUT_DTYPES[rng.usize(..OUT_DTYPES.len())]
    };
    let k = rng.usize(1..=4);
    let pool_dim = PoolDim(k as u8 + 1);
    let src_num: [u16; 4] =
        std::array::from_fn(|_| if rng.u8(0..3) == 0 { 1 } else { rng.u16(1..=3) });
    let outputs: u16 = src_num[k..].iter().product();
    // The dst walk: the same count, split over random dims.
    let mut dst_num = [1u16; 4];
    let mut left = outputs;
    for n in dst_num.iter_mut().take(3) {
        let divisors: Vec<u16> = (1..=left).filter(|v| left.is_multiple_of(*v)).collect();
        let v = divisors[rng.usize(..divisors.len())];
        *n = v;
        left /= v;
    }
    dst_num[3] = left;
    let channels = rng.u32(1..=PARTITIONS);
    let pick_region = |rng: &mut fastrand::Rng, size: u32, write: bool| {
        if rng.u8(0..3) == 0 && (!write || size == 4) {
            Region::Psum
        } else {
            Region::Sbuf
        }
    };
    let in_size = in_dtype.size().unwrap();
    let out_size = out_dtype.size().unwrap();
    let src_region = pick_region(rng, in_size, false);
    let dst_region = pick_region(rng, out_size, true);
    let src_part = rng.u32(0..=PARTITIONS - channels);
    let dst_part = if rng.bool() {
        src_part
    } else {
        rng.u32(0..=PARTITIONS - channels)
    };
    let period: u32 = src_num[..k].iter().map(|&n| n as u32).product();
    let scale = match rng.u8(0..4) {
        0 => 1.0 / period as f32,
        1 => 0.1,
        2 => -3.0,
        _ => f32::from_bits(rng.u32(0x0080_0000..0x7F00_0000)),
    };
    let mut p = S4d4Pl::new(
        if select {
            Opcode::MAX_POOL_SELECT
        } else {
            Opcode::POOL
        },
        func,
        pool_dim,
        in_dtype,
        out_dtype,
        channels as u8,
        if func == PoolFunc::AVG_POOL {
            scale
        } else {
            1.0
        },
        random_tensor(rng, src_region, src_part, in_size, src_num),
        random_tensor(rng, dst_region, dst_part, out_size, dst_num),
    );
    if rng.u8(0..4) == 0 {
        p.dst.step = [
            1,
            dst_num[0] as i16,
            (dst_num[0] * dst_num[1]) as i16,
            (dst_num[0] * dst_num[1] * dst_num[2]) as i16,
        ];
    }
    p
}

/// Interesting 32-bit patterns: zeros, infinities, NaNs, subnormals, extremes.
const SPECIAL: [u32; 16] = [
    0x0000_0000,
    0x8000_0000,
    0x7F80_0000,
    0xFF80_0000,
    0x7FC0_0000,
    0xFFC0_0001,
    0x7F80_0001,
    0x0000_0001,
    0x807F_FFFF,
    0x0080_0000,
    0x7F7F_FFFF,
    0xFF7F_FFFF,
    0x4B80_0000,
    0x3F80_0000,
    0x7FFF_FFFF,
    0x8000_0001,
];

/// Fills the first [`WINDOW`] bytes of every partition of both regions with
/// random words, a quarter of them special values; the rest with `poison`.
pub fn randomize(mem: &mut DeviceMemory, rng: &mut fastrand::Rng, poison: u8) {
    mem.fill(poison);
    randomize_lanes(mem, rng, 0..WINDOW as usize);
}

/// Fills `bytes` of every partition of SBUF and PSUM (clipped to each
/// region) with random words, a quarter of them special values or subnormals.
pub fn randomize_lanes(
    mem: &mut DeviceMemory,
    rng: &mut fastrand::Rng,
    bytes: std::ops::Range<usize>,
) {
    let arch: Arch = mem.arch();
    for region in [Region::Sbuf, Region::Psum] {
        let active = region.active_bytes(arch) as usize;
        let span = bytes.start.min(active)..bytes.end.min(active);
        let data = mem.region_bytes_mut(region);
        for part in 0..PARTITIONS as usize {
            let lane = &mut data[part * active + span.start..part * active + span.end];
            for w in lane.chunks_exact_mut(4) {
                let v = match rng.u8(0..8) {
                    0 | 1 => SPECIAL[rng.usize(..SPECIAL.len())],
                    2 => rng.u32(..) & 0x807F_FFFF, // f32 subnormals and zeros
                    3 => (rng.u32(..) & 0x8000_FFFF) | ((rng.u32(0..0x20) + 0x30) << 24),
                    _ => rng.u32(..),
                };
                w.copy_from_slice(&v.to_le_bytes());
            }
        }
    }
}

/// The GPU for tests: any adapter, lavapipe included. With `CI=true` a
/// missing adapter fails the test (CI installs lavapipe); elsewhere the
/// test is skipped with a message.
pub fn gpu() -> Option<tpb_emu::device::gpu::Gpu> {
    use tpb_emu::device::gpu::{BackendChoice, Gpu};
    match Gpu::open(BackendChoice::Gpu) {
        Ok(g) => Some(g),
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true but no GPU adapter: {e}")
        }
        Err(e) => {
            eprintln!("skipping GPU test: {e}");
            None
        }
    }
}

/// Runs validated records on `exec` over a copy of `mem`; returns the result.
pub fn run_on(
    exec: &mut dyn tpb_emu::device::Executor,
    records: &[S4d4Pl],
    mem: &DeviceMemory,
) -> DeviceMemory {
    use tpb_emu::device::{NoTrace, Program, run_program};
    let bytes =
        tpb_emu::isa::stream::to_bytes(&records.iter().map(|r| r.encode()).collect::<Vec<_>>());
    let program = Program::from_stream(&bytes, Target::pool(mem.arch())).expect("valid records");
    let mut out = mem.clone();
    run_program(exec, &program, &mut out, &mut NoTrace).expect("runs");
    out
}

/// The first differing byte of two memories, as (region, byte index, a, b).
pub fn first_difference(a: &DeviceMemory, b: &DeviceMemory) -> Option<(Region, usize, u8, u8)> {
    for region in [Region::Sbuf, Region::Psum] {
        let (x, y) = (a.region_bytes(region), b.region_bytes(region));
        if x != y {
            let i = (0..x.len()).find(|&i| x[i] != y[i]).expect("differs");
            return Some((region, i, x[i], y[i]));
        }
    }
    None
}

/// Runs `records` from copies of `mem` on the CPU reference and, when an
/// adapter exists, on the GPU; returns both memories. The records must be a
/// valid Pool stream for `arch` (else a panic that names `what`).
pub fn run_cpu_and_gpu(
    records: &[tpb_emu::isa::Record],
    mem: &DeviceMemory,
    arch: Arch,
    what: &str,
) -> (DeviceMemory, Option<DeviceMemory>) {
    use tpb_emu::device::gpu::GpuExecutor;
    use tpb_emu::device::{CpuExecutor, Executor, NoTrace, Program, run_program};
    let bytes = tpb_emu::isa::stream::to_bytes(records);
    let program = match Program::from_stream(&bytes, Target::pool(arch)) {
        Ok(p) => p,
        Err(e) => panic!("{what} invalid: {e}"),
    };
    let mut cpu = mem.clone();
    run_program(
        &mut CpuExecutor::default(),
        &program,
        &mut cpu,
        &mut NoTrace,
    )
    .expect("cpu runs");
    let gpu = gpu().map(|g| {
        let mut gpu = mem.clone();
        let mut exec = GpuExecutor::new(&g, arch).expect("gpu executor");
        run_program(
            &mut exec as &mut dyn Executor,
            &program,
            &mut gpu,
            &mut NoTrace,
        )
        .expect("gpu runs");
        gpu
    });
    (cpu, gpu)
}
