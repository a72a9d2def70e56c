//! The CPU reference executor for Pool (0x45) and MaxPoolSelect (0x58): SPEC §6
//! in executable form.
//!
//! Every lane runs the same fold on its own partition: walk src in stream order
//! (x fastest), fold `period` elements into one output, store the outputs in
//! dst walk order. `lane_generic` is the definition, written as plainly as
//! the spec; a specialised path handles the common shape (each window is a set
//! of contiguous rows, x step 1) on typed slices, and must give the same bits
//! (tests compare the two on random records). Lanes are independent, so big
//! records are split over host threads by lane; small ones stay on one thread.

use super::CpuOptions;
use super::lanes::{At, LaneIo, WalkIter, read_le, split_lanes};
use crate::device::convert::{self, InType, OutType};
use crate::device::memory::DeviceMemory;
use crate::device::ops::KernelOp;
use crate::device::ops::pool::{Func, PoolOp, Side};
use bytemuck::Pod;

/// True when `op` runs on the specialised path (when not forced generic).
pub fn fast_path_applies(op: &PoolOp) -> bool {
    FastPlan::new(op).is_some()
}

/// Runs `op` on every lane of `mem`.
pub fn execute(op: &PoolOp, mem: &mut DeviceMemory, opts: &CpuOptions) {
    let plan = if opts.force_generic {
        None
    } else {
        FastPlan::new(op)
    };
    let threads = opts.threads(op.channels(), op.elements());
    let mut snapshot = Vec::new();
    let (mut lanes, at) = split_lanes(
        op.channels(),
        |_| true,
        op.src(),
        op.in_ty().size(),
        op.dst(),
        mem,
        &mut snapshot,
    );
    super::for_chunks(&mut lanes, threads, |_, chunk| {
        run_lanes(op, plan.as_ref(), chunk, at)
    });
}

fn run_lanes(op: &PoolOp, plan: Option<&FastPlan>, lanes: &mut [LaneIo], at: At) {
    match plan {
        Some(plan) => fast::run(op, plan, lanes, at),
        None => {
            for io in lanes {
                lane_generic(op, io, at);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The definition.

/// One lane of SPEC §6, element by element: the semantics every other path
/// and backend must reproduce bit for bit.
fn lane_generic(op: &PoolOp, io: &mut LaneIo, at: At) {
    let (isz, osz) = (op.in_ty().size(), op.out_ty().size());
    let mut src = WalkIter::new(op.src().num, op.src().step);
    let mut dst = WalkIter::new(op.dst().num, op.dst().step);
    for _ in 0..op.num() {
        // Fold one window, in stream order.
        let bytes: &[u8] = bytemuck::cast_slice(io.src());
        let (mut acc, mut first_max) = match op.func() {
            Func::Avg { .. } => (0.0f32, 0u32), // EC-12: +0.0
            Func::Max | Func::Select => (f32::NEG_INFINITY, 0u32), // EC-11: −inf
        };
        for e in 0..op.period() {
            let at = (at.src + src.next_index() * isz as i64) as usize;
            let x = convert::load_f32(op.in_ty(), read_le(bytes, at, isz)); // EC-13 load, EC-19
            match op.func() {
                // EC-11: only a strictly greater value replaces the accumulator.
                Func::Max | Func::Select => {
                    if x > acc {
                        acc = x;
                        first_max = e as u32;
                    }
                }
                Func::Avg { .. } => acc = convert::add(acc, x), // EC-12, EC-19
            }
        }
        let word = match op.func() {
            Func::Max => convert::store_f32(op.out_ty(), acc),
            Func::Avg { scale } => convert::store_f32(op.out_ty(), convert::mul(acc, scale)),
            Func::Select => convert::store_index(op.out_ty(), first_max),
        };
        let at = (at.dst + dst.next_index() * osz as i64) as usize;
        let out: &mut [u8] = bytemuck::cast_slice_mut(io.dst());
        out[at..at + osz].copy_from_slice(&word.to_le_bytes()[..osz]);
    }
}

// ---------------------------------------------------------------------------
// The specialised path.

/// Windows processed per batch on the specialised path.
const BATCH: usize = 512;
/// Most rows a window may have on the specialised path.
const MAX_FAST_ROWS: u64 = 4096;

/// The shape the specialised path handles: src x step 1 (or x num 1), so each
/// window is `rows` contiguous runs of `n0` elements; consecutive windows
/// along the first non-window dim ("run" dim) start `run_step > 0` elements
/// apart; the dims above it are walked one run at a time.
#[derive(Clone, Debug)]
struct FastPlan {
    n0: usize,
    /// Offset (elements) of each row of a window, in stream order.
    rows: Vec<i64>,
    run_len: usize,
    run_step: usize,
    /// Walk over the dims above the run dim (the starts of each run).
    outer_num: [u64; 4],
    outer_step: [i64; 4],
}

impl FastPlan {
    fn new(op: &PoolOp) -> Option<FastPlan> {
        let k = op.window_dims();
        let s = op.src();
        if k >= 4 || (s.num[0] > 1 && s.step[0] != 1) {
            return None;
        }
        let (run_len, run_step) = (s.num[k], s.step[k]);
        if run_len > 1 && run_step <= 0 {
            return None;
        }
        let nrows: u64 = s.num[1..k].iter().product();
        if nrows > MAX_FAST_ROWS {
            return None;
        }
        let mut rows = vec![0i64];
        for d in 1..k {
            rows = (0..s.num[d] as i64)
                .flat_map(|i| rows.iter().map(move |&r| r + i * s.step[d]))
                .collect();
        }
        let mut outer_num = [1u64; 4];
        let mut outer_step = [0i64; 4];
        for (j, d) in (k + 1..4).enumerate() {
            outer_num[j] = s.num[d];
            outer_step[j] = s.step[d];
        }
        Some(FastPlan {
            n0: s.num[0] as usize,
            rows,
            run_len: run_len as usize,
            run_step: run_step.max(1) as usize,
            outer_num,
            outer_step,
        })
    }
}

mod fast {
    //! The specialised lane kernel, monomorphised per input type and fold.

    use super::*;

    /// An input element type: its storage word and its load conversion (EC-13, EC-19).
    pub(super) trait Load: Copy + Send + Sync {
        type W: Pod + Copy;
        fn load(w: Self::W) -> f32;
    }

    macro_rules! loads {
        ($($name:ident: $w:ty => |$v:ident| $body:expr;)*) => {$(
            #[derive(Clone, Copy)]
            pub(super) struct $name;
            impl Load for $name {
                type W = $w;
                #[inline(always)]
                fn load($v: $w) -> f32 {
                    f32::from_bits($body)
                }
            }
        )*};
    }

    loads! {
        LU8: u8 => |w| convert::u32_to_f32_bits(w as u32);
        LI8: u8 => |w| convert::i32_to_f32_bits(w as i8 as i32);
        LU16: u16 => |w| convert::u32_to_f32_bits(w as u32);
        LI16: u16 => |w| convert::i32_to_f32_bits(w as i16 as i32);
        LU32: u32 => |w| convert::u32_to_f32_bits(w);
        LI32: u32 => |w| convert::i32_to_f32_bits(w as i32);
        LI64: u64 => |w| convert::i64_to_f32_bits(w as i64);
        LF16: u16 => |w| convert::f16_to_f32_bits(w);
        LBf16: u16 => |w| convert::bf16_to_f32_bits(w);
        LF32: u32 => |w| convert::f32_load_bits(w);
    }

    /// A window fold: identity, step, and what is stored.
    pub(super) trait Fold: Copy + Send + Sync {
        type Acc: Copy + Send;
        /// MaxPoolSelect stores the index, not a value.
        const SELECT: bool;
        fn init(&self) -> Self::Acc;
        /// Folds element `x`, the `e`-th of its window in stream order.
        fn step(&self, acc: Self::Acc, x: f32, e: u32) -> Self::Acc;
        /// The value stored (MAX, AVG).
        fn value(&self, acc: Self::Acc) -> f32;
        /// The index stored (MaxPoolSelect).
        fn index(&self, acc: Self::Acc) -> u32;
    }

    #[derive(Clone, Copy)]
    pub(super) struct MaxF;
    impl Fold for MaxF {
        type Acc = f32;
        const SELECT: bool = false;
        #[inline(always)]
        fn init(&self) -> f32 {
            f32::NEG_INFINITY // EC-11
        }
        #[inline(always)]
        fn step(&self, acc: f32, x: f32, _e: u32) -> f32 {
            if x > acc { x } else { acc } // EC-11: NaN never wins, first max wins
        }
        #[inline(always)]
        fn value(&self, acc: f32) -> f32 {
            acc
        }
        fn index(&self, _acc: f32) -> u32 {
            0
        }
    }

    #[derive(Clone, Copy)]
    pub(super) struct AvgF(pub f32);
    impl Fold for AvgF {
        type Acc = f32;
        const SELECT: bool = false;
        #[inline(always)]
        fn init(&self) -> f32 {
            0.0 // EC-12: +0.0
        }
        #[inline(always)]
        fn step(&self, acc: f32, x: f32, _e: u32) -> f32 {
            convert::add(acc, x) // EC-12 stream-order sum, EC-19
        }
        #[inline(always)]
        fn value(&self, acc: f32) -> f32 {
            convert::mul(acc, self.0) // EC-12: one multiply, EC-19
        }
        fn index(&self, _acc: f32) -> u32 {
            0
        }
    }

    #[derive(Clone, Copy)]
    pub(super) struct SelectF;
    impl Fold for SelectF {
        type Acc = (f32, u32);
        const SELECT: bool = true;
        #[inline(always)]
        fn init(&self) -> (f32, u32) {
            (f32::NEG_INFINITY, 0) // 0 if nothing beats −inf
        }
        #[inline(always)]
        fn step(&self, acc: (f32, u32), x: f32, e: u32) -> (f32, u32) {
            if x > acc.0 { (x, e) } else { acc }
        }
        fn value(&self, acc: (f32, u32)) -> f32 {
            acc.0
        }
        #[inline(always)]
        fn index(&self, acc: (f32, u32)) -> u32 {
            acc.1
        }
    }

    pub(super) fn run(op: &PoolOp, plan: &FastPlan, lanes: &mut [LaneIo], at: At) {
        macro_rules! by_fold {
            ($l:ty) => {
                match op.func() {
                    Func::Max => lanes_with::<$l, _>(op, plan, lanes, at, MaxF),
                    Func::Avg { scale } => lanes_with::<$l, _>(op, plan, lanes, at, AvgF(scale)),
                    Func::Select => lanes_with::<$l, _>(op, plan, lanes, at, SelectF),
                }
            };
        }
        match op.in_ty() {
            InType::U8 => by_fold!(LU8),
            InType::I8 => by_fold!(LI8),
            InType::U16 => by_fold!(LU16),
            InType::I16 => by_fold!(LI16),
            InType::U32 => by_fold!(LU32),
            InType::I32 => by_fold!(LI32),
            InType::I64 => by_fold!(LI64),
            InType::F16 => by_fold!(LF16),
            InType::Bf16 => by_fold!(LBf16),
            InType::F32 => by_fold!(LF32),
        }
    }

    fn lanes_with<L: Load, F: Fold>(
        op: &PoolOp,
        plan: &FastPlan,
        lanes: &mut [LaneIo],
        at: At,
        f: F,
    ) {
        let mut accs = vec![f.init(); BATCH];
        for io in lanes {
            lane::<L, F>(op, plan, io, at, f, &mut accs);
        }
    }

    /// Folds one batch of consecutive windows of one row into `accs`.
    /// `N` > 0 fixes the row length at compile time; 0 means `plan.n0`.
    #[inline(always)]
    fn fold_row<L: Load, F: Fold, const N: usize>(
        f: F,
        row: &[L::W],
        n0: usize,
        step: usize,
        e0: u32,
        accs: &mut [F::Acc],
    ) {
        let fold_win = |acc: &mut F::Acc, win: &[L::W]| {
            let mut a = *acc;
            for (i, &w) in win.iter().enumerate() {
                a = f.step(a, L::load(w), e0 + i as u32);
            }
            *acc = a;
        };
        if step == n0 {
            if N > 0 {
                for (acc, win) in accs.iter_mut().zip(row.chunks_exact(N)) {
                    fold_win(acc, win);
                }
            } else {
                for (acc, win) in accs.iter_mut().zip(row.chunks_exact(n0)) {
                    fold_win(acc, win);
                }
            }
        } else {
            for (acc, win) in accs.iter_mut().zip(row.windows(n0).step_by(step)) {
                fold_win(acc, win);
            }
        }
    }

    fn lane<L: Load, F: Fold>(
        op: &PoolOp,
        plan: &FastPlan,
        io: &mut LaneIo,
        at: At,
        f: F,
        accs: &mut [F::Acc],
    ) {
        let isz = op.in_ty().size() as i64;
        let src0 = at.src / isz;
        let (n0, step) = (plan.n0, plan.run_step);
        let mut dst = DstCursor::new(op.dst(), at.dst / op.out_ty().size() as i64);
        let mut outer = WalkIter::new(plan.outer_num, plan.outer_step);
        let runs: u64 = plan.outer_num.iter().product();
        for _ in 0..runs {
            let base = src0 + outer.next_index();
            let mut j0 = 0;
            while j0 < plan.run_len {
                let len = BATCH.min(plan.run_len - j0);
                let accs = &mut accs[..len];
                accs.fill(f.init());
                {
                    let src: &[L::W] = bytemuck::cast_slice(io.src());
                    let span = (len - 1) * step + n0;
                    for (r, &roff) in plan.rows.iter().enumerate() {
                        let start = (base + roff) as usize + j0 * step;
                        let row = &src[start..start + span];
                        let e0 = (r * n0) as u32;
                        match n0 {
                            2 => fold_row::<L, F, 2>(f, row, n0, step, e0, accs),
                            3 => fold_row::<L, F, 3>(f, row, n0, step, e0, accs),
                            _ => fold_row::<L, F, 0>(f, row, n0, step, e0, accs),
                        }
                    }
                }
                store::<F>(op.out_ty(), f, io.dst(), &mut dst, accs);
                j0 += len;
            }
        }
    }

    /// Stores a batch of folded windows at the dst cursor.
    fn store<F: Fold>(ty: OutType, f: F, dst: &mut [u64], cur: &mut DstCursor, accs: &[F::Acc]) {
        if F::SELECT {
            let idx = accs.iter().map(|&a| f.index(a));
            match ty.size() {
                1 => cur.put::<u8>(dst, idx.map(|i| i as u8)),
                2 => cur.put::<u16>(dst, idx.map(|i| i as u16)),
                _ => cur.put::<u32>(dst, idx),
            }
            return;
        }
        let v = accs.iter().map(|&a| f.value(a).to_bits());
        match ty {
            OutType::F32 | OutType::F32r => {
                cur.put::<u32>(dst, v.map(convert::f32_to_f32_store_bits))
            }
            OutType::F16 => cur.put::<u16>(dst, v.map(convert::f32_to_f16_bits)),
            OutType::Bf16 => cur.put::<u16>(dst, v.map(convert::f32_to_bf16_bits)),
            OutType::U8 => cur.put::<u8>(dst, v.map(|b| convert::f32_to_int_sat(b, 0, 255) as u8)),
            OutType::I8 => cur.put::<u8>(
                dst,
                v.map(|b| convert::f32_to_int_sat(b, -128, 127) as i8 as u8),
            ),
            OutType::U16 => cur.put::<u16>(
                dst,
                v.map(|b| convert::f32_to_int_sat(b, 0, u16::MAX as i64) as u16),
            ),
            OutType::I16 => cur.put::<u16>(
                dst,
                v.map(|b| convert::f32_to_int_sat(b, i16::MIN as i64, i16::MAX as i64) as u16),
            ),
            OutType::U32 => cur.put::<u32>(
                dst,
                v.map(|b| convert::f32_to_int_sat(b, 0, u32::MAX as i64) as u32),
            ),
            OutType::I32 => cur.put::<u32>(
                dst,
                v.map(|b| convert::f32_to_int_sat(b, i32::MIN as i64, i32::MAX as i64) as u32),
            ),
        }
    }

    /// Where the next output goes: the dst walk taken one x-row at a time.
    pub(super) struct DstCursor {
        /// Element index of dst element (0, 0, 0, 0) in the lane's slice.
        e0: i64,
        n0: u64,
        s0: i64,
        x: u64,
        row: i64,
        rows: WalkIter,
    }

    impl DstCursor {
        pub(super) fn new(d: &Side, e0: i64) -> DstCursor {
            let mut rows = WalkIter::new(
                [1, d.num[1], d.num[2], d.num[3]],
                [0, d.step[1], d.step[2], d.step[3]],
            );
            let row = rows.next_index();
            DstCursor {
                e0,
                n0: d.num[0],
                s0: if d.num[0] > 1 { d.step[0] } else { 1 },
                x: 0,
                row,
                rows,
            }
        }

        /// Writes `vals` in dst walk order.
        #[inline(always)]
        fn put<T: Pod>(&mut self, dst: &mut [u64], vals: impl ExactSizeIterator<Item = T>) {
            let dst: &mut [T] = bytemuck::cast_slice_mut(dst);
            let mut vals = vals;
            let mut left = vals.len() as u64;
            while left > 0 {
                let take = (self.n0 - self.x).min(left);
                let start = self.e0 + self.row + self.x as i64 * self.s0;
                if self.s0 == 1 {
                    let s = start as usize;
                    for (d, v) in dst[s..s + take as usize].iter_mut().zip(&mut vals) {
                        *d = v;
                    }
                } else {
                    for t in 0..take as i64 {
                        if let Some(v) = vals.next() {
                            dst[(start + t * self.s0) as usize] = v;
                        }
                    }
                }
                self.x += take;
                left -= take;
                if self.x == self.n0 {
                    self.x = 0;
                    self.row = self.rows.next_index();
                }
            }
        }
    }
}

impl crate::device::ops::CpuKernel for PoolOp {
    fn run_cpu(&self, mem: &mut DeviceMemory, options: &CpuOptions) {
        execute(self, mem, options)
    }
}
