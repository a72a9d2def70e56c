//! The Pool/MaxPoolSelect kernel family on the GPU: a [`PoolOp`] encoded as
//! a dispatch of `shaders/pool.wgsl` (parameters: [`super::params`]).

use super::batch::{Dispatch, EncodeCx};
use super::kernels::{PipelineKey, Shader, grid};
use super::params::{OP_AVG, PoolParams, Variant};
use crate::device::ops::pool::PoolOp;

/// The parameter block of `op` on the device of `cx` (`groups_x` filled in).
pub fn params(op: &PoolOp, cx: &EncodeCx) -> (PoolParams, (u32, u32)) {
    let mut p = PoolParams::new(op, cx.arch, cx.rows_max_chunks);
    let g = grid(p.invocations(), cx.max_x);
    p.groups_x = g.0;
    (p, g)
}

/// The pipeline of a variant; AVG's adds by bits or not (`ADD_BY_BITS`;
/// the other folds never add, so they have one pipeline).
pub fn key(v: Variant, add_by_bits: bool) -> PipelineKey {
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
        shader: Shader::Pool,
        entry: v.entry_point(),
        constants,
    }
}

/// `op` as one dispatch.
pub fn dispatch(op: &PoolOp, cx: &EncodeCx) -> Dispatch {
    let (p, grid) = params(op, cx);
    Dispatch {
        key: key(p.variant(), cx.add_by_bits),
        params: bytemuck::bytes_of(&p).to_vec(),
        grid,
    }
}
