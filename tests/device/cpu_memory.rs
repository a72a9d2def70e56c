//! Device memory after random valid streams: every byte outside the outputs'
//! footprints is unchanged (memory is poisoned with a position-dependent
//! pattern first). Footprints are computed here, from the TENSOR4D fields,
//! independently of the executor and the validator.

use crate::common;
use common::{IN_DTYPES as IN, OUT_DTYPES as OUT};
use tpb_emu::device::{CpuExecutor, DeviceMemory, NoTrace, Program, Validated, run_program};
use tpb_emu::isa::stream::to_bytes;
use tpb_emu::isa::validate::Target;
use tpb_emu::isa::{Addr4, Dtype, Opcode, PoolDim, PoolFunc, Record, Region, S4d4Pl, Tensor4d};
use tpb_emu::limits::Arch;

fn active(region: Region, arch: Arch) -> u32 {
    match region {
        Region::Sbuf => arch.sbuf_active_bytes(),
        Region::Psum => arch.psum_active_bytes(),
    }
}

/// A random S4D4_PL record with plausible fields: any dtype pair, either
/// region, any start partition and channel count, signed steps, offsets
/// anywhere (often near the end of active memory). Many are invalid.
fn random_record(r: &mut fastrand::Rng, arch: Arch) -> S4d4Pl {
    let select = r.u32(..4) == 0;
    let din = IN[r.usize(..IN.len())];
    let dout = if select {
        [Dtype::UINT8, Dtype::UINT16, Dtype::UINT32][r.usize(..3)]
    } else {
        OUT[r.usize(..OUT.len())]
    };
    let dim = [PoolDim::X, PoolDim::XY, PoolDim::XYZ, PoolDim::XYZW][r.usize(..4)];
    let k = dim.window_dims().unwrap();
    let num: [u16; 4] = std::array::from_fn(|_| [1, 1, 2, 3, 4, 7][r.usize(..6)]);
    let step: [i16; 4] = std::array::from_fn(|_| r.i16(-9..=9));
    let period: u64 = num[..k].iter().map(|&n| n as u64).product();
    let total: u64 = num.iter().map(|&n| n as u64).product();
    let outputs = (total / period) as u16;
    let (a, b) = match outputs {
        o if o % 3 == 0 && r.bool() => (o / 3, 3),
        o if o % 2 == 0 && r.bool() => (2, o / 2),
        o => (o, 1),
    };
    let dstep = [r.i16(-3..=3), r.i16(-40..=40)];
    let ch = match r.u32(..3) {
        0 => r.u8(1..=128),
        _ => r.u8(1..=20),
    };
    let region = |r: &mut fastrand::Rng, size: u32| {
        if (size == 4 && r.u32(..3) == 0) || r.u32(..5) == 0 {
            Region::Psum
        } else {
            Region::Sbuf
        }
    };
    let place = |r: &mut fastrand::Rng, reg: Region, size: u32| {
        let act = active(reg, arch);
        let p = r.u32(0..=(128 - ch as u32));
        let off = match r.u32(..3) {
            0 => r.u32(0..512),
            1 => act.saturating_sub(r.u32(0..1024)),
            _ => r.u32(0..act),
        };
        Addr4::new(reg, p, off / size * size)
    };
    let isz = din.size().unwrap();
    let osz = dout.size().unwrap();
    let sreg = region(r, 0);
    let dreg = region(r, osz);
    let src = Tensor4d {
        addr: place(r, sreg, isz),
        step,
        num,
    };
    let dst = Tensor4d {
        addr: place(r, dreg, osz),
        step: [dstep[0], dstep[1], 0, 0],
        num: [a, b, 1, 1],
    };
    let (opcode, func, scale) = if select {
        (Opcode::MAX_POOL_SELECT, PoolFunc::NONE, 1.0)
    } else if r.bool() {
        (Opcode::POOL, PoolFunc::MAX_POOL, 1.0)
    } else {
        (
            Opcode::POOL,
            PoolFunc::AVG_POOL,
            [0.5f32, -0.25, 3.0, 1e-3][r.usize(..4)],
        )
    };
    S4d4Pl::new(opcode, func, dim, din, dout, ch, scale, src, dst)
}

/// Marks every byte each lane's dst walk writes: `mask[region][partition · active + byte]`.
fn mark_footprint(p: &S4d4Pl, arch: Arch, sbuf: &mut [bool], psum: &mut [bool]) {
    let a = p.dst.addr.0;
    let (region, base, shift) = if a < 0x200_0000 {
        (Region::Sbuf, 0, 18)
    } else {
        (Region::Psum, 0x200_0000, 15)
    };
    let rel = a - base;
    let (p0, off) = (rel >> shift, (rel & ((1 << shift) - 1)) as i64);
    let act = active(region, arch) as i64;
    let size = p.out_dtype.size().unwrap() as i64;
    let mask = if region == Region::Sbuf { sbuf } else { psum };
    let (n, s) = (p.dst.num, p.dst.step);
    for lane in 0..p.num_active_channels as i64 {
        let part = p0 as i64 + lane;
        for w in 0..n[3] as i64 {
            for z in 0..n[2] as i64 {
                for y in 0..n[1] as i64 {
                    for x in 0..n[0] as i64 {
                        let e =
                            x * s[0] as i64 + y * s[1] as i64 + z * s[2] as i64 + w * s[3] as i64;
                        let byte = off + e * size;
                        assert!(
                            byte >= 0 && byte + size <= act,
                            "validated footprint outside memory"
                        );
                        for k in 0..size {
                            mask[(part * act + byte + k) as usize] = true;
                        }
                    }
                }
            }
        }
    }
}

fn poison(mem: &mut DeviceMemory) {
    for region in [Region::Sbuf, Region::Psum] {
        for (i, b) in mem.region_bytes_mut(region).iter_mut().enumerate() {
            // NaNs, infs, subnormals and ordinary values all turn up in this pattern.
            *b = (i.wrapping_mul(131) ^ (i >> 9)) as u8 ^ 0x5A;
        }
    }
}

fn run_streams(arch: Arch, seed: u64, want_records: usize) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut mem = DeviceMemory::new(arch);
    poison(&mut mem);
    let mut ran = 0;
    let mut attempts = 0;
    let mut before = mem.clone();
    while ran < want_records {
        attempts += 1;
        assert!(attempts < 200_000, "too few valid random records ({ran})");
        // A stream of 1..=4 valid records.
        let len = rng.usize(1..=4);
        let mut recs: Vec<S4d4Pl> = vec![];
        while recs.len() < len {
            attempts += 1;
            let p = random_record(&mut rng, arch);
            if Validated::new(0, p.encode(), Target::pool(arch)).is_ok() {
                recs.push(p);
            }
        }
        before.clone_from(&mem);
        let bytes = to_bytes(&recs.iter().map(|p| p.encode()).collect::<Vec<Record>>());
        let prog = Program::from_stream(&bytes, Target::pool(arch)).unwrap();
        run_program(&mut CpuExecutor::default(), &prog, &mut mem, &mut NoTrace).unwrap();
        let mut sb = vec![false; before.region_bytes(Region::Sbuf).len()];
        let mut ps = vec![false; before.region_bytes(Region::Psum).len()];
        for p in &recs {
            mark_footprint(p, arch, &mut sb, &mut ps);
        }
        for (region, mask) in [(Region::Sbuf, &sb), (Region::Psum, &ps)] {
            let (old, new) = (before.region_bytes(region), mem.region_bytes(region));
            let act = active(region, arch) as usize;
            // Only blocks that changed need the byte-by-byte look.
            const B: usize = 4096;
            let changed = (0..old.len().div_ceil(B)).filter(|&k| {
                let r = k * B..((k + 1) * B).min(old.len());
                old[r.clone()] != new[r]
            });
            let outside = changed
                .flat_map(|k| k * B..((k + 1) * B).min(old.len()))
                .find(|&i| !mask[i] && old[i] != new[i]);
            if let Some(i) = outside {
                panic!(
                    "{region:?} partition {} byte {} changed outside every output (records {recs:?})",
                    i / act,
                    i % act
                );
            }
        }
        ran += recs.len();
    }
}

#[test]
fn random_streams_touch_only_their_outputs_cayman() {
    run_streams(Arch::Cayman, 0xC0FFEE, 300);
}

#[test]
fn random_streams_touch_only_their_outputs_sunda_and_mariana() {
    run_streams(Arch::Sunda, 17, 100);
    run_streams(Arch::Mariana, 18, 100);
}
