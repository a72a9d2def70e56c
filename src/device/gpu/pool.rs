//! The Pool/MaxPoolSelect kernel family on the GPU: a [`PoolOp`] encoded as
//! a dispatch of `shaders/pool.wgsl` (parameters: [`super::params`]).

use super::params::{DstRun, MAX_UNROLLED_ROWS, OP_AVG, OP_MAX, OP_SELECT, PoolParams, Variant};
use super::shaders::{Layout, wgsl};
use super::types::EncodeCx;
use super::types::{Dispatch, GpuKernel, PipelineKey, Shader, grid};
use crate::device::convert::{InType, OutType};
use crate::device::ops::pool::PoolOp;

/// The composed source of Pool and MaxPoolSelect's program.
pub const POOL_WGSL: &str = wgsl![
    "memory.wgsl",
    "convert.wgsl",
    "arith.wgsl",
    "walk.wgsl",
    "pool.wgsl"
];

/// Pool and MaxPoolSelect.
pub(crate) const POOL: Shader = Shader::new("pool.wgsl", POOL_WGSL, Layout::Memory);

/// The parameter block of `op` on the device of `cx` (`groups_x` filled in).
pub(crate) fn params(op: &PoolOp, cx: &EncodeCx) -> (PoolParams, (u32, u32)) {
    let mut p = PoolParams::new(op, cx.arch, cx.rows_max_chunks);
    let g = grid(p.invocations(), cx.max_x);
    p.groups_x = g.0;
    (p, g)
}

/// The pipeline of a variant; AVG's adds by bits or not (`ADD_BY_BITS`;
/// the other folds never add, so they have one pipeline).
pub(crate) fn key(v: Variant, add_by_bits: bool) -> PipelineKey {
    let mut constants = vec![
        ("OP", v.op),
        ("IN_DTYPE", v.in_dtype),
        ("OUT_DTYPE", v.out_dtype),
        ("DST_RUN", v.dst_run),
        ("WIN_ROWS", v.win_rows),
    ];
    if v.op == OP_AVG {
        constants.push(("ADD_BY_BITS", add_by_bits as u32));
    }
    PipelineKey {
        shader: POOL,
        entry: v.entry_point(),
        constants,
    }
}

/// `op` as one dispatch.
pub(crate) fn dispatch(op: &PoolOp, cx: &EncodeCx) -> Dispatch {
    let (p, grid) = params(op, cx);
    Dispatch {
        key: key(p.variant(), cx.add_by_bits),
        params: bytemuck::bytes_of(&p).to_vec(),
        grid,
    }
}

/// Every pipeline this family can ask for: each variant [`PoolParams`] can
/// produce (both entry points, every dtype pair and fold, `pool_rows`' store
/// paths and unrolled rows), AVG with either sum. A superset of what
/// validation lets through; the portability test translates each one.
pub(crate) fn variants() -> Vec<PipelineKey> {
    let mut out = Vec::new();
    for op in [OP_MAX, OP_AVG, OP_SELECT] {
        for i in InType::ALL {
            for o in OutType::ALL {
                let base = Variant {
                    op,
                    in_dtype: i.dtype().0 as u32,
                    out_dtype: o.dtype().0 as u32,
                    rows: false,
                    dst_run: DstRun::EachOutput as u32,
                    win_rows: 0,
                };
                let mut vs = vec![base];
                if matches!(i.size(), 2 | 4) {
                    let mut runs = vec![DstRun::EachOutput];
                    if op != OP_SELECT && matches!(o, OutType::F32 | OutType::F32r) {
                        runs.push(DstRun::Vec4);
                    }
                    if matches!(o.size(), 1 | 2) {
                        runs.push(DstRun::Words);
                    }
                    for run in runs {
                        for win_rows in 0..=MAX_UNROLLED_ROWS {
                            vs.push(Variant {
                                rows: true,
                                dst_run: run as u32,
                                win_rows,
                                ..base
                            });
                        }
                    }
                }
                for v in vs {
                    out.push(key(v, true));
                    if op == OP_AVG {
                        out.push(key(v, false));
                    }
                }
            }
        }
    }
    out
}

impl GpuKernel for PoolOp {
    const SHADERS: &'static [Shader] = &[POOL];
    fn encode(&self, cx: &EncodeCx) -> Dispatch {
        dispatch(self, cx)
    }
    fn variants() -> Vec<PipelineKey> {
        variants()
    }
}
