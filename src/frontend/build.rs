//! The program builder: DMA in, one Pool (and MaxPoolSelect) record per
//! window class, DMA out, band after band (see the module docs of
//! [`crate::frontend`]).

use super::plan::Plan;
use super::{FrontendError, Pool2d, PoolMode, PoolOutput, Tensor, Unsupported};
use crate::device::{Executor, NoTrace};
use crate::isa::enums::{Dtype, Engine, PoolDim, PoolFunc, UpdateMode, WaitMode};
use crate::isa::opcode::Opcode;
use crate::isa::record::{Events, Record};
use crate::isa::s4d4_pl::S4d4Pl;
use crate::isa::tensor::{Addr4, Region, Tensor4d};
use crate::limits::{Arch, MAX_POOL_ELEMENTS_PER_LANE, PARTITIONS, SBUF_PARTITION_SHIFT};
use crate::runtime::build::{
    dma_memcpy, ev, ev_update, ev_wait, event_semaphore, on_chip, var, walk, with_events,
};
use crate::runtime::{Machine, Program, Variable, stage, stage_owned};

/// Variable ids of the generated program.
pub mod ids {
    /// The input `x`.
    pub const X: u32 = 1;
    /// The output `y`.
    pub const Y: u32 = 2;
    /// The window-local argmax positions `argmax` (uint32).
    pub const ARGMAX: u32 = 3;
    /// The one-element fill constant `fill`.
    pub const FILL: u32 = 4;
}

/// Semaphores: bands loaded by SP, pooled by POOL, stored by ACT.
const SEM_LOADED: u8 = 0;
const SEM_POOLED: u8 = 1;
const SEM_STORED: u8 = 2;

/// The most elements one DMA dimension moves.
const DMA_MAX: usize = u16::MAX as usize;

/// A compiled pooling: the program and how to read its results.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// Shapes and window classes.
    pub plan: Plan,
    /// The program (variables `x`, `y`, `argmax`, `fill`).
    pub program: Program,
    /// Bands (plane groups × depth bands × row bands × column tiles).
    pub bands: usize,
    /// Output depths per band (1 for a 1-D or 2-D input).
    pub band_depths: usize,
    /// Output rows per band.
    pub band_rows: usize,
    /// Output columns per band: all of them, or a tile when one row does
    /// not fit a partition (tiling along the width).
    pub band_cols: usize,
    /// Pool and MaxPoolSelect records.
    pub pool_records: usize,
    /// The input's dtype.
    pub dtype: Dtype,
}

fn align64(b: usize) -> usize {
    b.next_multiple_of(64)
}

fn fill_bits(mode: PoolMode, dtype: Dtype) -> u32 {
    match (mode, dtype) {
        (PoolMode::Avg, _) | (_, Dtype::UINT8) => 0,
        (_, Dtype::FP16) => 0xFC00,
        (_, Dtype::BFLOAT16) => 0xFF80,
        _ => 0xFF80_0000,
    }
}

/// Per-partition SBUF layout of a band: `rows` output rows of `cols`
/// output columns (a column tile; all of them when the map fits).
struct Layout {
    isz: usize,
    osz: usize,
    out_base: usize,
    idx_base: usize,
}

/// The padded input columns `[start, end)` that output columns `[ca, cb)` read.
fn in_cols(plan: &Plan, ca: usize, cb: usize) -> (usize, usize) {
    let p = &plan.params;
    let eff_kw = (p.kernel[1] as usize - 1) * p.dilation[1] as usize + 1;
    let start = ca * p.stride[1] as usize;
    (
        start,
        plan.wp().min((cb - 1) * p.stride[1] as usize + eff_kw),
    )
}

/// The padded input depth slices `[start, end)` that output depths `[da, db)` read.
fn in_depths(plan: &Plan, da: usize, db: usize) -> (usize, usize) {
    let z = &plan.params.depth;
    let eff_kd = (z.kernel as usize - 1) * z.dilation as usize + 1;
    let start = da * z.stride as usize;
    (start, plan.dp().min((db - 1) * z.stride as usize + eff_kd))
}

/// The padded input rows `[start, end)` that output rows `[oa, ob)` read.
fn in_rows(plan: &Plan, oa: usize, ob: usize) -> (usize, usize) {
    let p = &plan.params;
    let eff_kh = (p.kernel[0] as usize - 1) * p.dilation[0] as usize + 1;
    let start = oa * p.stride[0] as usize;
    (
        start,
        plan.hp().min((ob - 1) * p.stride[0] as usize + eff_kh),
    )
}

/// A TENSOR4D step, 0 for a dim walked once (SPEC §4: its step never
/// applies), so that a long single row needs no i16 step across it.
fn step(num: usize, s: usize) -> i16 {
    if num <= 1 { 0 } else { s as i16 }
}

impl Layout {
    /// The layout of `depths` output depths of `rows` output rows by `cols`
    /// output columns, and the bytes per partition it needs; `None` when a
    /// step would not fit i16.
    fn new(
        plan: &Plan,
        isz: usize,
        depths: usize,
        rows: usize,
        cols: usize,
    ) -> Option<(Layout, usize)> {
        let p = &plan.params;
        let z = &p.depth;
        // The widest tile: the first `cols` columns read at least as many input columns as any.
        let (ia, ib) = in_cols(plan, 0, cols.min(plan.wo));
        let tw = ib - ia;
        let (ra, rb) = in_rows(plan, 0, rows.min(plan.ho));
        let nrows = rb - ra;
        let (za, zb) = in_depths(plan, 0, depths.min(plan.dout));
        let i16_ok = |num: usize, s: usize| num <= 1 || s <= i16::MAX as usize;
        // A 3-D window's z dim steps over whole slices of the band.
        let steps_ok = i16_ok(z.kernel as usize, nrows * tw * z.dilation as usize)
            && i16_ok(p.kernel[0] as usize, tw * p.dilation[0] as usize)
            && i16_ok(rows, tw * p.stride[0] as usize)
            && i16_ok(rows, cols)
            && i16_ok(p.kernel[1] as usize, p.dilation[1] as usize)
            && i16_ok(cols, p.stride[1] as usize)
            && cols <= u16::MAX as usize
            && tw <= DMA_MAX;
        if !steps_ok {
            return None;
        }
        let outs = depths * rows * cols;
        let out_base = align64((zb - za) * nrows * tw * isz);
        let idx_base = align64(out_base + outs * isz);
        let end = idx_base + if p.return_indices { outs * 4 } else { 0 };
        Some((
            Layout {
                isz,
                osz: isz,
                out_base,
                idx_base,
            },
            end,
        ))
    }
}

/// Compiles `params` for `input` into a program for the default generation.
/// The program's input variable holds a copy of `input`'s bytes
/// ([`compile_owned`] moves them instead).
pub fn compile(params: &Pool2d, input: &Tensor) -> Result<Compiled, FrontendError> {
    compile_owned(params, input.clone())
}

/// [`compile`] taking the input by value: its bytes move into the program's
/// input variable `x` (no copy of the array).
pub fn compile_owned(params: &Pool2d, input: Tensor) -> Result<Compiled, FrontendError> {
    let plan = Plan::new(params, &input)?;
    let bad = |s: Unsupported| Err(FrontendError::Bad(s));
    let p = plan.params;
    let arch = Arch::default();
    let isz = input.elem();
    let (wp, wo) = (plan.wp(), plan.wo);
    if p.dilation[1] as usize > i16::MAX as usize || p.stride[1] as usize > i16::MAX as usize {
        return bad(Unsupported::StepTooLarge);
    }
    if plan.d * plan.h * plan.w > i32::MAX as usize
        || plan.dout * plan.ho * plan.wo > i32::MAX as usize
    {
        return bad(Unsupported::PlaneTooLarge);
    }
    let budget = arch.sbuf_active_bytes() as usize;
    let window = (p.depth.kernel as usize * p.kernel[0] as usize * p.kernel[1] as usize).max(1);
    let fits = |z: usize, t: usize, cols: usize| {
        Layout::new(&plan, isz, z, t, cols).is_some_and(|(_, end)| end <= budget)
            && (z * t * cols * window) as u64 <= MAX_POOL_ELEMENTS_PER_LANE
            && t <= u16::MAX as usize
    };
    // Whole output depths (whole maps in 2-D) when one fits: the largest
    // band of depths (fits is monotonic in each argument). Otherwise one
    // depth, the largest band of whole rows; otherwise one row per band,
    // tiled along the width: the widest tile that fits.
    let largest = |hi: usize, ok: &dyn Fn(usize) -> bool| {
        let (mut lo, mut hi) = (1usize, hi);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if ok(mid) { lo = mid } else { hi = mid - 1 }
        }
        lo
    };
    let (band_depths, band_rows, band_cols) = if fits(1, plan.ho, wo) {
        (largest(plan.dout, &|z| fits(z, plan.ho, wo)), plan.ho, wo)
    } else if fits(1, 1, wo) {
        (1, largest(plan.ho, &|t| fits(1, t, wo)), wo)
    } else if fits(1, 1, 1) {
        (1, 1, largest(wo, &|c| fits(1, 1, c)))
    } else {
        return bad(Unsupported::NoFit {
            kh: p.kernel[0],
            kw: p.kernel[1],
            width: wp as u64,
            kib: (budget / 1024) as u64,
        });
    };
    let Some((layout, _)) = Layout::new(&plan, isz, band_depths, band_rows, band_cols) else {
        return bad(Unsupported::NoLayout);
    };

    let dtype = input.dtype;
    let planes = plan.planes();
    let out_shape = plan.out_shape();
    let out_elems = planes * plan.dout * plan.ho * plan.wo;
    let dram = input.data.len() + out_elems * (isz + if p.return_indices { 4 } else { 0 });
    if dram as u64 >= u32::MAX as u64 {
        return bad(Unsupported::DramTooLarge);
    }

    let mut b = Builder {
        plan: &plan,
        layout: &layout,
        dtype,
        sp: Vec::new(),
        pool: Vec::new(),
        act: Vec::new(),
        band: 0,
        pool_records: 0,
    };
    for g0 in (0..planes).step_by(PARTITIONS as usize) {
        let np = (planes - g0).min(PARTITIONS as usize);
        for da in (0..plan.dout).step_by(band_depths) {
            let db = (da + band_depths).min(plan.dout);
            for oa in (0..plan.ho).step_by(band_rows) {
                let ob = (oa + band_rows).min(plan.ho);
                for ca in (0..wo).step_by(band_cols) {
                    let cb = (ca + band_cols).min(wo);
                    b.band(g0, np, [da, db], [oa, ob], [ca, cb]);
                }
            }
        }
    }
    let bands = b.band;
    let pool_records = b.pool_records;
    let mut program = Program::new(arch);
    program.set_stream(Engine::Sp, &b.sp);
    program.set_stream(Engine::Pool, &b.pool);
    program.set_stream(Engine::Act, &b.act);
    program.add(Variable::input_bytes(
        "x",
        ids::X,
        dtype,
        &input.shape,
        input.data,
    ));
    program.add(Variable::output("y", ids::Y, dtype, &out_shape));
    if p.return_indices {
        program.add(Variable::output(
            "argmax",
            ids::ARGMAX,
            Dtype::UINT32,
            &out_shape,
        ));
    }
    if plan.fill {
        let bits = fill_bits(p.mode, dtype).to_le_bytes()[..isz].to_vec();
        program.add(Variable::input("fill", ids::FILL, dtype, &[1], bits));
    }
    Ok(Compiled {
        plan,
        program,
        bands,
        band_depths,
        band_rows,
        band_cols,
        pool_records,
        dtype,
    })
}

struct Builder<'a> {
    plan: &'a Plan,
    layout: &'a Layout,
    dtype: Dtype,
    sp: Vec<Record>,
    pool: Vec<Record>,
    act: Vec<Record>,
    band: usize,
    pool_records: usize,
}

/// An SBUF address in partition 0.
fn sbuf(offset: usize) -> u32 {
    offset as u32
}

/// Elements between partitions for `size`-byte elements.
fn lane_step(size: usize) -> i32 {
    ((1usize << SBUF_PARTITION_SHIFT) / size) as i32
}

/// Marks the first and last records of one band's stream: `wait` on the
/// first, `update` on the last.
fn mark(recs: &mut [Record], wait: Option<(WaitMode, u8, u32)>, update: Option<(UpdateMode, u8)>) {
    if recs.is_empty() {
        return;
    }
    let last = recs.len() - 1;
    if let Some((m, i, v)) = wait {
        let mut e = ev_wait(m, i, v);
        if let (0, Some((um, ui))) = (last, update) {
            e = ev((m, i), (um, ui), v);
        }
        recs[0] = with_events(recs[0], e);
    }
    if let (Some((um, ui)), true) = (update, last != 0 || wait.is_none()) {
        let e = Events {
            update_mode: um,
            update_idx: ui,
            ..recs[last].events()
        };
        recs[last] = with_events(recs[last], e);
    }
}

impl Builder<'_> {
    /// One band: planes [g0, g0+np), output depths [da, db), output rows
    /// [oa, ob), output columns [ca, cb).
    fn band(
        &mut self,
        g0: usize,
        np: usize,
        [da, db]: [usize; 2],
        [oa, ob]: [usize; 2],
        [ca, cb]: [usize; 2],
    ) {
        let plan = self.plan;
        let p = &plan.params;
        let z = &p.depth;
        let l = self.layout;
        let t = self.band as u32;
        let (d, h, w, wo, ho, dout) = (plan.d, plan.h, plan.w, plan.wo, plan.ho, plan.dout);
        let (za, zb) = in_depths(plan, da, db);
        let (ra, rb) = in_rows(plan, oa, ob);
        let nrows = rb - ra;
        // The tile: padded input columns [ia, ib), `wp` of them per SBUF row;
        // `two` output columns per output row, `orows` output rows per depth.
        let (ia, ib) = in_cols(plan, ca, cb);
        let (wp, two, orows) = (ib - ia, cb - ca, ob - oa);
        let whole = ca == 0 && cb == wo && ia == 0 && ib == plan.wp();
        let (pf, pt, pl) = (z.pads[0] as usize, p.pads[0] as usize, p.pads[1] as usize);
        let isz = l.isz;
        let npu = np as u16;

        // SP: fill, then the input rows of every input slice.
        let mut sp = Vec::new();
        if plan.fill {
            let total = (zb - za) * nrows * wp;
            for k in (0..total).step_by(DMA_MAX) {
                let n = (total - k).min(DMA_MAX) as u16;
                sp.push(dma_memcpy(
                    walk(var(ids::FILL, 0), [0, 0], [n, npu], isz as u16),
                    walk(
                        on_chip(sbuf(k * isz)),
                        [1, lane_step(isz)],
                        [n, npu],
                        isz as u16,
                    ),
                    self.dtype,
                    self.dtype,
                    0,
                    0,
                ));
            }
        }
        let rows: Vec<usize> = (ra..rb).filter(|&r| (pt..pt + h).contains(&r)).collect();
        // The input columns of the tile: padded [max(ia, pl), min(ib, pl + w)).
        let (c0, c1) = (ia.max(pl), ib.min(pl + w));
        let dense = whole && wp == w;
        let per = if dense { (DMA_MAX / w).max(1) } else { 1 };
        for zs in (za..zb).filter(|&zs| (pf..pf + d).contains(&zs)) {
            for chunk in rows.chunks(per) {
                if c0 >= c1 {
                    break;
                }
                let (r0, nr) = (chunk[0], chunk.len());
                let n = if dense { nr * w } else { c1 - c0 } as u16;
                let src = (((g0 * d + (zs - pf)) * h + (r0 - pt)) * w + (c0 - pl)) * isz;
                let dst = (((zs - za) * nrows + (r0 - ra)) * wp + (c0 - ia)) * isz;
                sp.push(dma_memcpy(
                    walk(
                        var(ids::X, src as u32),
                        [1, (d * h * w) as i32],
                        [n, npu],
                        isz as u16,
                    ),
                    walk(
                        on_chip(sbuf(dst)),
                        [1, lane_step(isz)],
                        [n, npu],
                        isz as u16,
                    ),
                    self.dtype,
                    self.dtype,
                    0,
                    0,
                ));
            }
        }
        // The last load bumps `loaded` (the DMA's own completion semaphore).
        if let Some(last) = sp.last_mut() {
            last.0[crate::isa::control::off::DMA_SEM] = SEM_LOADED;
            last.0[crate::isa::control::off::DMA_SEM_INC] = 1;
        }
        if t > 0 {
            mark(&mut sp, Some((WaitMode::SEM_GE, SEM_POOLED, t)), None);
        }
        self.sp.extend(sp);

        // POOL: one record per window class (and its MaxPoolSelect twin); a
        // window that walks several depth taps folds xyz, one output row a record.
        let mut pool = Vec::new();
        let func = match p.mode {
            PoolMode::Max => PoolFunc::MAX_POOL,
            PoolMode::Avg => PoolFunc::AVG_POOL,
        };
        let slice = nrows * wp;
        let mut push =
            |src: Tensor4d, dim: PoolDim, taps: usize, dst: &dyn Fn(usize, usize) -> Tensor4d| {
                let scale = match p.mode {
                    PoolMode::Max => 1.0,
                    PoolMode::Avg => 1.0 / taps as f32,
                };
                pool.push(
                    S4d4Pl::new(
                        Opcode::POOL,
                        func,
                        dim,
                        self.dtype,
                        self.dtype,
                        np as u8,
                        scale,
                        src,
                        dst(l.out_base, l.osz),
                    )
                    .encode(),
                );
                if p.return_indices {
                    pool.push(
                        S4d4Pl::new(
                            Opcode::MAX_POOL_SELECT,
                            PoolFunc::NONE,
                            dim,
                            self.dtype,
                            Dtype::UINT32,
                            np as u8,
                            1.0,
                            src,
                            dst(l.idx_base, 4),
                        )
                        .encode(),
                    );
                }
            };
        for od in da..db {
            let dg = plan.depth_group(od);
            let z0 = od * z.stride as usize + dg.tap0 * z.dilation as usize - za;
            let out_depth = (od - da) * orows * two;
            for rg in &plan.rows {
                let oh0 = rg.first.max(oa);
                let oh1 = (rg.first + rg.len).min(ob);
                if oh0 >= oh1 {
                    continue;
                }
                for cg in &plan.cols {
                    // The class's columns inside this tile.
                    let ow0 = cg.first.max(ca);
                    let ow1 = (cg.first + cg.len).min(cb);
                    if ow0 >= ow1 {
                        continue;
                    }
                    let (ncols, nrows_out) = (ow1 - ow0, oh1 - oh0);
                    let src_row =
                        oh0 * p.stride[0] as usize + rg.tap0 * p.dilation[0] as usize - ra;
                    let src_col =
                        ow0 * p.stride[1] as usize + cg.tap0 * p.dilation[1] as usize - ia;
                    let at = |row: usize| {
                        Addr4::new(
                            Region::Sbuf,
                            0,
                            sbuf((z0 * slice + row * wp + src_col) * isz),
                        )
                    };
                    let kx = (cg.taps as u16, step(cg.taps, p.dilation[1] as usize));
                    let ky = (rg.taps as u16, step(rg.taps, p.dilation[0] as usize * wp));
                    let out_at = out_depth + (oh0 - oa) * two + (ow0 - ca);
                    if dg.taps == 1 {
                        // Every output row of the class in one record (as in 2-D).
                        let src = Tensor4d::new(
                            at(src_row),
                            [
                                kx,
                                ky,
                                (ncols as u16, step(ncols, p.stride[1] as usize)),
                                (nrows_out as u16, step(nrows_out, p.stride[0] as usize * wp)),
                            ],
                        );
                        let dst = |base: usize, size: usize| {
                            Tensor4d::new(
                                Addr4::new(Region::Sbuf, 0, sbuf(base + out_at * size)),
                                [
                                    (ncols as u16, 1),
                                    (nrows_out as u16, step(nrows_out, two)),
                                    (1, 1),
                                    (1, 1),
                                ],
                            )
                        };
                        push(src, PoolDim::XY, rg.taps * cg.taps, &dst);
                        continue;
                    }
                    let kz = (dg.taps as u16, step(dg.taps, z.dilation as usize * slice));
                    for r in 0..nrows_out {
                        let src_row = src_row + r * p.stride[0] as usize;
                        let src = Tensor4d::new(
                            at(src_row),
                            [
                                kx,
                                ky,
                                kz,
                                (ncols as u16, step(ncols, p.stride[1] as usize)),
                            ],
                        );
                        let out_at = out_at + r * two;
                        let dst = |base: usize, size: usize| {
                            Tensor4d::new(
                                Addr4::new(Region::Sbuf, 0, sbuf(base + out_at * size)),
                                [(ncols as u16, 1), (1, 1), (1, 1), (1, 1)],
                            )
                        };
                        push(src, PoolDim::XYZ, dg.taps * rg.taps * cg.taps, &dst);
                    }
                }
            }
        }
        self.pool_records += pool.len();
        if t > 0 {
            self.pool
                .push(event_semaphore(ev_wait(WaitMode::SEM_GE, SEM_STORED, t)));
        }
        mark(
            &mut pool,
            Some((WaitMode::SEM_GE, SEM_LOADED, t + 1)),
            Some((UpdateMode::SEM_INC, SEM_POOLED)),
        );
        self.pool.extend(pool);

        // ACT: the outputs (and argmax positions) back to DRAM.
        let mut act = Vec::new();
        // Whole maps: one contiguous run per band; whole rows: one run per
        // output depth; a tile: one run per output row. (sbuf offset, DRAM
        // element, elements), chunked to DMA_MAX.
        let plane0 = g0 * dout;
        let runs: Vec<(usize, usize, usize)> = if two == wo && orows == ho {
            vec![(0, (plane0 + da) * ho * wo, (db - da) * ho * wo)]
        } else if two == wo {
            (da..db)
                .map(|od| {
                    (
                        (od - da) * orows * wo,
                        ((plane0 + od) * ho + oa) * wo,
                        orows * wo,
                    )
                })
                .collect()
        } else {
            (da..db)
                .flat_map(|od| {
                    (oa..ob).map(move |r| {
                        (
                            ((od - da) * orows + (r - oa)) * two,
                            ((plane0 + od) * ho + r) * wo + ca,
                            two,
                        )
                    })
                })
                .collect()
        };
        let runs: Vec<(usize, usize, usize)> = runs
            .into_iter()
            .flat_map(|(k, at, n)| {
                (0..n)
                    .step_by(DMA_MAX)
                    .map(move |i| (k + i, at + i, (n - i).min(DMA_MAX)))
            })
            .collect();
        let mut out = |base: usize, size: usize, id: u32, dtype: Dtype| {
            for &(k, at, n) in &runs {
                let n = n as u16;
                let dram = at * size;
                act.push(dma_memcpy(
                    walk(
                        on_chip(sbuf(base + k * size)),
                        [1, lane_step(size)],
                        [n, npu],
                        size as u16,
                    ),
                    walk(
                        var(id, dram as u32),
                        [1, (dout * ho * wo) as i32],
                        [n, npu],
                        size as u16,
                    ),
                    dtype,
                    dtype,
                    0,
                    0,
                ));
            }
        };
        out(l.out_base, l.osz, ids::Y, self.dtype);
        if p.return_indices {
            out(l.idx_base, 4, ids::ARGMAX, Dtype::UINT32);
        }
        if let Some(last) = act.last_mut() {
            last.0[crate::isa::control::off::DMA_SEM] = SEM_STORED;
            last.0[crate::isa::control::off::DMA_SEM_INC] = 1;
        }
        mark(&mut act, Some((WaitMode::SEM_GE, SEM_POOLED, t + 1)), None);
        self.act.extend(act);
        let _ = ev_update;
        self.band += 1;
    }
}

impl Compiled {
    /// Stages and runs the program on `exec`; converts the argmax positions
    /// to PyTorch's flat indices.
    pub fn run(&self, exec: &mut dyn Executor) -> Result<PoolOutput, FrontendError> {
        self.run_with_budget(exec, crate::limits::DEFAULT_MAX_WORK)
    }

    /// [`Compiled::run`] with a work budget (elements moved or folded, as
    /// `--max-work` of `run`); a program that would exceed it stops with an error.
    pub fn run_with_budget(
        &self,
        exec: &mut dyn Executor,
        max_work: u64,
    ) -> Result<PoolOutput, FrontendError> {
        let m = run_machine(Machine::new(stage(&self.program)?), exec, max_work)?;
        let y = m.variable("y").unwrap_or_default().to_vec();
        Ok(self.output(&m, y))
    }

    /// [`Compiled::run_with_budget`] consuming the compiled program: the
    /// input's bytes become the device DRAM itself ([`stage_owned`],
    /// [`Machine::from_owned`]), so a run holds the input once, not three times.
    pub fn run_owned(
        mut self,
        exec: &mut dyn Executor,
        max_work: u64,
    ) -> Result<PoolOutput, FrontendError> {
        let program = std::mem::take(&mut self.program);
        let m = run_machine(Machine::from_owned(stage_owned(program)?), exec, max_work)?;
        let mut out = self.output(&m, Vec::new());
        // The output's bytes are taken out of DRAM, not copied.
        out.output.data = m.into_variable("y").unwrap_or_default().into();
        Ok(out)
    }

    /// The output (bytes `y`) and indices from a finished machine.
    fn output(&self, m: &Machine, y: Vec<u8>) -> PoolOutput {
        let output = Tensor {
            dtype: self.dtype,
            shape: self.plan.out_shape(),
            data: y.into(),
        };
        let indices = self.plan.params.return_indices.then(|| {
            let raw = m.variable("argmax").unwrap_or_default();
            self.indices(raw)
        });
        PoolOutput { output, indices }
    }

    /// PyTorch's flat indices from the window-local positions (uint32 LE,
    /// N×C×(Do×)Ho×Wo) that the MaxPoolSelect records wrote.
    pub fn indices(&self, raw: &[u8]) -> Vec<i64> {
        let (dout, ho, wo) = (self.plan.dout, self.plan.ho, self.plan.wo);
        raw.chunks_exact(4)
            .enumerate()
            .map(|(i, b)| {
                let pos = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
                let (od, oh, ow) = ((i / (wo * ho)) % dout, (i / wo) % ho, i % wo);
                self.plan.flat_index_3d(od, oh, ow, pos)
            })
            .collect()
    }
}

/// Runs `m` on `exec` within `max_work`.
fn run_machine(
    mut m: Machine,
    exec: &mut dyn Executor,
    max_work: u64,
) -> Result<Machine, FrontendError> {
    m.set_max_work(max_work);
    // Only the output variables are read.
    m.set_dram_only(true);
    m.run(exec, &mut NoTrace)?;
    Ok(m)
}
