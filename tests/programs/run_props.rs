//! Seeded property loops: random DMAs that stage give exactly what a naive
//! reference (written here from EC-22/EC-23 and SPEC §3's map) gives; random
//! control/synchronisation programs never panic, whatever they do.

use std::sync::Arc;
use tpb_emu::device::convert::{InType, OutType, load_f32_bits, store_f32_bits};
use tpb_emu::device::{CpuExecutor, NoTrace};
use tpb_emu::files::{HostBytes, Input};
use tpb_emu::isa::control::{Addr8, DmaMemcpy, alu, cmp};
use tpb_emu::isa::enums::{Dtype, Engine, UpdateMode, WaitMode};
use tpb_emu::isa::{Record, Region};
use tpb_emu::limits::Arch;
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::{Machine, Program, Variable, stage};

const DTYPES: [Dtype; 8] = [
    Dtype::UINT8,
    Dtype::INT16,
    Dtype::BFLOAT16,
    Dtype::FP16,
    Dtype::INT32,
    Dtype::FP32,
    Dtype::INT64,
    Dtype::UINT32,
];

fn random_addr(rng: &mut fastrand::Rng, sizes: &[u64]) -> Addr8 {
    match rng.u8(0..5) {
        0 => on_chip(Region::Sbuf.addr(rng.u32(0..128), rng.u32(0..300))),
        1 => on_chip(Region::Psum.addr(rng.u32(0..128), rng.u32(0..300))),
        2 => Addr8::Dram(rng.u64(0..400)),
        _ => {
            let id = rng.u32(1..=sizes.len() as u32 + 1); // sometimes no such variable
            var(id, rng.u32(0..80))
        }
    }
}

fn random_walk(
    rng: &mut fastrand::Rng,
    sizes: &[u64],
    es: u16,
    n: [u16; 2],
) -> tpb_emu::isa::control::DmaWalk {
    let addr = random_addr(rng, sizes);
    let mut step = [rng.i32(-3..=4), rng.i32(-20..=20)];
    // A partition stride per row, when the element size divides it.
    if matches!(addr, Addr8::OnChip(_)) && rng.bool() && (1 << 18) % es as i32 == 0 {
        let stride = if addr.raw() >= 0x200_0000 {
            1 << 15
        } else {
            1 << 18
        };
        step[1] = stride / es as i32 * if rng.u8(0..4) == 0 { -1 } else { 1 };
    }
    walk(addr, step, n, es)
}

/// A random DMA between the variables of `sizes` (ids 1..), raw DRAM,
/// SBUF and PSUM; it may not stage (a footprint out of bounds).
pub(crate) fn random_dma(rng: &mut fastrand::Rng, sizes: &[u64]) -> Record {
    let (din, dout) = if rng.bool() {
        let d = DTYPES[rng.usize(..DTYPES.len())];
        (d, d)
    } else {
        (
            DTYPES[rng.usize(..DTYPES.len())],
            DTYPES[rng.usize(..DTYPES.len() - 2)], // never int64 out (EC-13b)
        )
    };
    let (se, de) = if din == dout {
        let es = if rng.u8(0..4) == 0 {
            rng.u16(1..=12)
        } else {
            din.size().unwrap() as u16
        };
        (es, es)
    } else {
        (din.size().unwrap() as u16, dout.size().unwrap() as u16)
    };
    let n = [rng.u16(0..=6), rng.u16(1..=4)];
    let m = if rng.u8(0..3) == 0 && n[0].is_multiple_of(2) {
        [n[0] / 2, n[1] * 2]
    } else {
        n
    };
    dma_memcpy(
        random_walk(rng, sizes, se, n),
        random_walk(rng, sizes, de, m),
        din,
        dout,
        rng.u8(0..4),
        rng.u8(0..3),
    )
}

/// The reference machine: DRAM, SBUF and PSUM as plain byte arrays.
struct Model {
    dram: Vec<u8>,
    sbuf: Vec<u8>,
    psum: Vec<u8>,
    bases: Vec<(u32, u64)>,
}

impl Model {
    /// (buffer, index) of a byte address of the walk that starts at `a`.
    fn locate(&self, start: Addr8, delta: i64) -> (usize, usize) {
        let arch = Arch::Cayman;
        match start {
            Addr8::OnChip(s) => {
                let a = s as i64 + delta;
                let (region, buf) = if s < 0x200_0000 {
                    (Region::Sbuf, 1)
                } else {
                    (Region::Psum, 2)
                };
                let rel = a - region.base() as i64;
                let shift = region.partition_shift();
                let p = rel >> shift;
                let off = rel & ((1 << shift) - 1);
                (buf, (p * region.active_bytes(arch) as i64 + off) as usize)
            }
            Addr8::Dram(s) => (0, (s as i64 + delta) as usize),
            Addr8::Var { id, offset } => {
                let base = self.bases.iter().find(|b| b.0 == id).unwrap().1;
                (0, (base as i64 + offset as i64 + delta) as usize)
            }
            _ => unreachable!(),
        }
    }

    fn buf(&mut self, b: usize) -> &mut Vec<u8> {
        match b {
            0 => &mut self.dram,
            1 => &mut self.sbuf,
            _ => &mut self.psum,
        }
    }

    fn dma(&mut self, r: &Record, sems: &mut [i32; 256]) {
        let d = DmaMemcpy::decode(r);
        let deltas = |w: &tpb_emu::isa::control::DmaWalk| {
            let mut v = vec![];
            for j in 0..w.num[1] as i64 {
                for i in 0..w.num[0] as i64 {
                    v.push((j * w.step[1] as i64 + i * w.step[0] as i64) * w.elem_size as i64);
                }
            }
            v
        };
        let (ds, dd) = (deltas(&d.src), deltas(&d.dst));
        assert_eq!(ds.len(), dd.len());
        for (a, b) in ds.into_iter().zip(dd) {
            let (sb, si) = self.locate(d.src.addr, a);
            let (db, di) = self.locate(d.dst.addr, b);
            let bytes = self.buf(sb)[si..si + d.src.elem_size as usize].to_vec();
            let out = if d.in_dtype == d.out_dtype {
                bytes
            } else {
                let mut raw = [0u8; 8];
                raw[..bytes.len()].copy_from_slice(&bytes);
                let f = load_f32_bits(
                    InType::from_dtype(d.in_dtype).unwrap(),
                    u64::from_le_bytes(raw),
                );
                let o = store_f32_bits(OutType::from_dtype(d.out_dtype).unwrap(), f);
                o.to_le_bytes()[..d.dst.elem_size as usize].to_vec()
            };
            self.buf(db)[di..di + out.len()].copy_from_slice(&out);
        }
        sems[d.sem as usize] = sems[d.sem as usize].wrapping_add(d.sem_inc as i32);
    }
}

/// A Cayman program with an int16 input variable `v{k}` (id k + 1) of
/// `sizes[k]` random elements for each k.
/// `p` with the initial bytes of a random half of its variables shared with
/// an input file's bytes (here in memory, between random other bytes), as a
/// mapped `.npy`'s are: DRAM then keeps them as parts of their own.
pub(crate) fn share_some_inits(rng: &mut fastrand::Rng, p: &Program) -> Program {
    let mut p = p.clone();
    for v in &mut p.variables {
        let Some(init) = v.init.as_ref().filter(|_| rng.bool()) else {
            continue;
        };
        let pad = rng.usize(0..9);
        let mut file: Vec<u8> = (0..pad).map(|_| rng.u8(..)).collect();
        file.extend_from_slice(init);
        file.extend((0..rng.usize(0..9)).map(|_| rng.u8(..)));
        let range = pad..pad + init.len();
        v.init = HostBytes::shared(Arc::new(Input::Read(file)), range);
    }
    p
}

pub(crate) fn with_random_variables(rng: &mut fastrand::Rng, sizes: &[u64]) -> Program {
    let mut p = Program::new(Arch::Cayman);
    for (k, &n) in sizes.iter().enumerate() {
        let data: Vec<u8> = (0..n * 2).map(|_| rng.u8(..)).collect();
        p.add(Variable::input(
            &format!("v{k}"),
            k as u32 + 1,
            Dtype::INT16,
            &[n],
            data,
        ));
    }
    p
}

#[test]
fn random_dmas_match_the_reference() {
    let mut accepted = 0;
    for seed in 0..40u64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let sizes: Vec<u64> = (0..3).map(|_| rng.u64(1..40)).collect();
        let base = with_random_variables(&mut rng, &sizes);
        // Fill some SBUF and PSUM from the variables first, so the copies move data.
        let mut recs = vec![
            dma_memcpy(
                contiguous(var(1, 0), sizes[0] as u16, 2),
                walk(on_chip(0), [1, 1 << 17], [sizes[0] as u16, 1], 2),
                Dtype::INT16,
                Dtype::INT16,
                0,
                0,
            ),
            dma_memcpy(
                contiguous(var(2, 0), sizes[1] as u16, 2),
                contiguous(on_chip(Region::Psum.addr(1, 0)), sizes[1] as u16, 2),
                Dtype::INT16,
                Dtype::INT16,
                0,
                0,
            ),
        ];
        let mut tries = 0;
        while recs.len() < 12 && tries < 3000 {
            tries += 1;
            let r = random_dma(&mut rng, &sizes);
            let mut p = base.clone();
            p.set_stream(Engine::Sp, &[r]);
            if stage(&p).is_ok() {
                recs.push(r);
            }
        }
        accepted += recs.len() - 2;
        let mut p = base.clone();
        p.set_stream(Engine::Sp, &recs);
        let st = stage(&p).expect("each record staged alone");
        let bases: Vec<(u32, u64)> = st
            .layout()
            .enumerate()
            .map(|(k, (_, b, _))| (k as u32 + 1, b))
            .collect();
        let mut m = Machine::new(st);
        m.run(&mut CpuExecutor::default(), &mut NoTrace).unwrap();
        // The same program with inputs shared with files: DRAM in parts,
        // written parts copied, walks across parts merging them.
        let shared = share_some_inits(&mut rng, &p);
        let mut s = Machine::new(stage(&shared).unwrap());
        s.run(&mut CpuExecutor::default(), &mut NoTrace).unwrap();
        let mut model = Model {
            dram: Vec::new(),
            sbuf: vec![0; 128 * Arch::Cayman.sbuf_active_bytes() as usize],
            psum: vec![0; 128 * Arch::Cayman.psum_active_bytes() as usize],
            bases,
        };
        let fresh = Machine::new(stage(&base).unwrap());
        model.dram = fresh.dram().to_vec();
        let mut sems = [0i32; 256];
        for r in &recs {
            model.dma(r, &mut sems);
        }
        assert_eq!(m.dram(), &model.dram[..], "seed {seed}: DRAM");
        assert_eq!(
            s.dram(),
            &model.dram[..],
            "seed {seed}: DRAM, shared inputs"
        );
        for r in [Region::Sbuf, Region::Psum] {
            assert!(
                s.memory().region_bytes(r) == m.memory().region_bytes(r),
                "seed {seed}: {r:?}, shared inputs"
            );
        }
        for (a, b) in shared.variables.iter().zip(&base.variables) {
            assert_eq!(a.init, b.init, "seed {seed}: a shared input changed");
        }
        assert!(
            m.memory().region_bytes(Region::Sbuf) == &model.sbuf[..],
            "seed {seed}: SBUF"
        );
        assert!(
            m.memory().region_bytes(Region::Psum) == &model.psum[..],
            "seed {seed}: PSUM"
        );
        for s in 0..4u8 {
            assert_eq!(m.semaphore(s), sems[s as usize], "seed {seed}");
        }
    }
    assert!(accepted > 100, "only {accepted} random DMAs staged");
}

fn random_control(rng: &mut fastrand::Rng, len: usize) -> Record {
    let r = match rng.u8(0..5) {
        0 => mov32(
            rng.u8(0..4),
            if rng.bool() {
                rng.u32(0..4) * 64
            } else {
                rng.u32(..)
            },
        ),
        1 => ctrl_al(
            if rng.bool() { alu::ADD } else { alu::SUB },
            rng.u8(0..4),
            rng.u8(0..4),
            rng.i32(..) as i64,
        ),
        2 => {
            let t = if rng.bool() {
                BranchTarget::Rel(
                    rng.i64(-(len as i64) * 64..=(len as i64) * 64)
                        & !if rng.u8(0..8) == 0 { 0 } else { 63 },
                )
            } else {
                BranchTarget::Register {
                    lo: rng.u8(0..4),
                    hi: rng.u8(0..4),
                }
            };
            compare_branch(
                [cmp::ALWAYS, cmp::EQIMM, cmp::GTIMM][rng.usize(..3)],
                rng.u8(0..4),
                rng.u32(0..3),
                t,
            )
        }
        3 => drain(),
        _ => event_semaphore(Default::default()),
    };
    let waits = [
        WaitMode::NONE,
        WaitMode::SEM_EQ,
        WaitMode::SEM_LT,
        WaitMode::SEM_GE,
        WaitMode::EVT_SET,
        WaitMode::EVT_SET_THEN_CLEAR,
        WaitMode::EVT_CLEAR,
        WaitMode::EVT_CLEAR_THEN_SET,
    ];
    let updates = [
        UpdateMode::NONE,
        UpdateMode::EVT_SET,
        UpdateMode::EVT_CLR,
        UpdateMode::SEM_INC,
        UpdateMode::SEM_DEC,
        UpdateMode::SEM_ADD_IMM,
        UpdateMode::SEM_SUB_IMM_DONE,
        UpdateMode::SEM_WR_IMM,
    ];
    with_events(
        r,
        ev(
            (
                if rng.u8(0..5) == 0 {
                    waits[rng.usize(..waits.len())]
                } else {
                    WaitMode::NONE
                },
                rng.u8(0..3),
            ),
            (updates[rng.usize(..updates.len())], rng.u8(0..3)),
            rng.u32(0..4),
        ),
    )
}

#[test]
fn random_control_programs_never_panic() {
    let mut outcomes = [0usize; 2];
    for seed in 0..300u64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut p = Program::new(Arch::Cayman);
        for e in Engine::ALL {
            let len = rng.usize(0..8);
            let recs: Vec<Record> = (0..len).map(|_| random_control(&mut rng, len)).collect();
            p.set_stream(e, &recs);
        }
        let mut m = Machine::new(stage(&p).expect("builders make valid records"));
        m.set_max_records(5_000);
        let mut lines: Vec<String> = Vec::new();
        let r = m.run(&mut CpuExecutor::default(), &mut lines);
        outcomes[r.is_ok() as usize] += 1;
        if let Err(e) = r {
            assert!(!e.to_string().is_empty());
        }
    }
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
}
