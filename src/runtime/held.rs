//! DRAM variables a backend holds for a run (issue #12): on a GPU their bytes
//! stay in device memory, the DMAs between them and SBUF/PSUM run as
//! kernels behind the queued ops, and nothing of them crosses between the
//! host and the GPU but the bytes they start with and what the host reads
//! at the end ([`crate::device::Begin::dram`], [`crate::device::Resident::end`]).
//!
//! A variable is held only when every DMA that touches it can run on the
//! backend ([`crate::device::Resident::takes`]): its other walk on
//! chip, its DRAM walk inside this one variable. A DMA from DRAM to DRAM, or
//! one whose DRAM walk spans two variables, keeps every variable it touches
//! on the host. The decision is made once per program and backend, before
//! anything runs, so a held variable is never wanted on the host mid-run.

use super::DRAM_ALIGN;
use super::dma::{self, DmaPlan};
use super::image::DramImage;
use super::program::Role;
use super::staged::{Op, Staged};
use crate::device::ChipDma;

/// Which variables a backend may hold: scratch ones (and of those, the
/// ones some DMA writes, [`HeldDram::plan`]). An input's rows reach the
/// backend as DMAs read them ([`crate::device::Write::Offer`]) and an
/// output's come back by a capture of what its DMAs read
/// ([`crate::device::When::Later`]); held, they would go through the
/// backend's DMA instead, which is slower on the GPU backend (its
/// [`crate::device::Resident::takes`] has the figures). A scratch variable
/// only read (a NEFF's `file` weights) is an input in all but name. One
/// that DMAs write, held, saves a round trip through the host and a wait
/// for the backend per DMA that reads it back.
fn may_hold(role: Role) -> bool {
    role == Role::Scratch
}

/// One held variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HeldVar {
    /// Its DRAM bytes `[lo, hi)`.
    pub lo: u64,
    pub hi: u64,
    /// Where it starts in the held window.
    pub at: u64,
}

/// The variables a backend holds, in DRAM order, and the window's length.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct HeldDram {
    pub vars: Vec<HeldVar>,
    pub len: u64,
}

impl HeldDram {
    /// The variables of `staged` that a backend holds when it `takes` the
    /// DMAs it is offered ([`crate::device::Resident::takes`]): each scratch variable
    /// that a DMA writes and no DMA keeps on the host, laid out in the
    /// window at [`DRAM_ALIGN`] (the DRAM layout's alignment, so every walk
    /// keeps its alignment).
    pub fn plan(staged: &Staged, takes: &dyn Fn(&ChipDma) -> bool) -> HeldDram {
        let slots = &staged.dram.slots;
        // Candidates until a DMA says otherwise; none, nothing to scan.
        let mut held: Vec<bool> = slots
            .iter()
            .map(|s| s.len > 0 && may_hold(s.role))
            .collect();
        if !held.contains(&true) {
            return HeldDram::default();
        }
        let mut written = vec![false; slots.len()];
        // The slots that `[lo, hi)` meets (slots are in address order).
        debug_assert!(slots.is_sorted_by_key(|s| s.base));
        let meets = |lo: i64, hi: i64| {
            let first = slots.partition_point(|s| s.base + s.len <= lo as u64);
            (first..slots.len()).take_while(move |&i| slots[i].base < hi as u64)
        };
        for step in staged.steps.iter().flatten() {
            let Op::Dma(plan) = &step.op else { continue };
            let hulls: Vec<(i64, i64)> = plan.dram_hulls().collect();
            let [(lo, hi)] = hulls[..] else {
                // DRAM to DRAM (or nothing moves): on the host.
                for &(lo, hi) in &hulls {
                    meets(lo, hi).for_each(|i| held[i] = false);
                }
                continue;
            };
            let mut touched = meets(lo, hi);
            let (Some(i), None) = (touched.next(), touched.next()) else {
                meets(lo, hi).for_each(|i| held[i] = false);
                continue;
            };
            written[i] |= plan.on_chip_to_dram();
            let s = &slots[i];
            let inside = s.base <= lo as u64 && hi as u64 <= s.base + s.len;
            // Window offsets keep DRAM_ALIGN, so the variable's own offsets
            // stand for them here.
            let runs = |d: ChipDma| takes(&d);
            if held[i] && !(inside && dma::chip_dma(plan, Some(s.base as i64)).is_some_and(runs)) {
                held[i] = false;
            }
        }
        let mut out = HeldDram::default();
        for (k, s) in slots.iter().enumerate() {
            if !(held[k] && written[k]) {
                continue;
            }
            let at = out.len.next_multiple_of(DRAM_ALIGN);
            out.vars.push(HeldVar {
                lo: s.base,
                hi: s.base + s.len,
                at,
            });
            out.len = at + s.len;
        }
        out.vars.sort_by_key(|v| v.lo);
        out
    }

    /// The held variable that a DMA's DRAM walk `[lo, hi)` lies in.
    pub fn holding(&self, (lo, hi): (i64, i64)) -> Option<&HeldVar> {
        let i = self
            .vars
            .partition_point(|v| v.lo as i64 <= lo)
            .checked_sub(1)?;
        let v = &self.vars[i];
        (hi <= v.hi as i64).then_some(v)
    }

    /// `plan` as a DMA the backend runs with held DRAM, when its DRAM walk
    /// is in a held variable.
    pub fn dma(&self, plan: &DmaPlan) -> Option<ChipDma> {
        let mut hulls = plan.dram_hulls();
        let (hull, None) = (hulls.next()?, hulls.next()) else {
            return None;
        };
        let v = self.holding(hull)?;
        dma::chip_dma(plan, Some(v.lo as i64 - v.at as i64))
    }

    /// The window's bytes that are not zero, as (window offset, bytes): those
    /// of each variable that is not all zero in `dram` (a scratch variable
    /// may start with bytes, a NEFF's `file` weights; a resumed run's hold
    /// what the run wrote).
    pub fn init<'d>(&self, dram: &'d DramImage) -> Vec<(u64, &'d [u8])> {
        self.vars
            .iter()
            .filter_map(|v| Some((v.at, dram.get(v.lo, v.hi)?)))
            .filter(|(_, bytes)| bytes.iter().any(|&b| b != 0))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::control::Addr8;
    use crate::isa::enums::{Dtype, Engine};
    use crate::isa::tensor::Region;
    use crate::limits::Arch;
    use crate::runtime::build::{contiguous, dma_memcpy, on_chip, var};
    use crate::runtime::{Program, Variable, stage};

    /// A backend that holds DRAM and takes a DMA when its dst writes no
    /// byte twice.
    fn holder(dma: &ChipDma) -> bool {
        dma.dst.distinct()
    }

    #[test]
    fn a_variable_is_held_when_every_dma_touching_it_runs_on_the_backend() {
        let mut p = Program::new(Arch::Cayman);
        for (k, name) in ["a", "b", "c", "d"].into_iter().enumerate() {
            let v = Variable::zeroed(name, k as u32 + 1, Dtype::FP32, &[64], Role::Scratch);
            p.add(v);
        }
        // In DRAM order: a, b, c, d, e, g, h.
        p.add(Variable::input("e", 5, Dtype::FP32, &[64], vec![0; 256]));
        p.add(Variable::zeroed("g", 6, Dtype::FP32, &[64], Role::Scratch));
        p.add(Variable::zeroed("h", 7, Dtype::FP32, &[64], Role::Scratch));
        let fp32 = |src, dst| dma_memcpy(src, dst, Dtype::FP32, Dtype::FP32, 0, 0);
        let sbuf = contiguous(on_chip(Region::Sbuf.addr(0, 0)), 64, 4);
        let staged = stage(&p).expect("stages");
        let base = |name: &str| {
            staged
                .dram
                .slots
                .iter()
                .find(|s| s.name == name)
                .unwrap()
                .base
        };
        // `d`'s last 32 elements and `e`'s first 32 through a physical address.
        let across = Addr8::Dram(base("d") + 128);
        p.set_stream(
            Engine::Pool,
            &[
                fp32(sbuf, contiguous(var(1, 0), 64, 4)),
                fp32(contiguous(var(1, 0), 64, 4), sbuf),
                // DRAM to DRAM.
                fp32(contiguous(var(2, 0), 8, 4), contiguous(var(3, 0), 8, 4)),
                fp32(contiguous(across, 64, 4), sbuf),
                fp32(sbuf, contiguous(var(5, 0), 64, 4)),
                fp32(sbuf, contiguous(var(6, 0), 64, 4)),
                // Only read: an input in all but name.
                fp32(contiguous(var(7, 0), 64, 4), sbuf),
            ],
        );
        let staged = stage(&p).expect("stages");
        let held = HeldDram::plan(&staged, &holder);
        let names: Vec<(&str, u64)> = held
            .vars
            .iter()
            .map(|v| {
                let s = staged.dram.slots.iter().find(|s| s.base == v.lo).unwrap();
                (s.name.as_str(), v.at)
            })
            .collect();
        // `e` is an input, `h` only read. Window offsets are DRAM_ALIGN
        // apart at least.
        assert_eq!(names, [("a", 0), ("g", 256)]);
        assert_eq!(held.len, 512);
        // A DMA whose dst writes an element twice keeps `a` on the host.
        let twice = crate::runtime::build::walk(var(1, 0), [0, 0], [2, 1], 4);
        let mut q = p.clone();
        let mut recs: Vec<_> = (0..7).map(|i| staged.steps[2][i].record).collect();
        recs.push(fp32(
            contiguous(on_chip(Region::Sbuf.addr(0, 0)), 2, 4),
            twice,
        ));
        q.set_stream(Engine::Pool, &recs);
        let held = HeldDram::plan(&stage(&q).expect("stages"), &holder);
        assert_eq!(held.vars.len(), 1, "only `g` is left");
        // `holding` finds a walk inside a held variable, not one past it.
        let a = base("a") as i64;
        let plan = HeldDram::plan(&staged, &holder);
        assert!(plan.holding((a, a + 256)).is_some());
        assert!(plan.holding((a + 4, a + 260)).is_none());
    }
}
