//! The plain reference: the same pooling computed directly on the array, in
//! PyTorch's loop order and with SPEC §6's arithmetic (f32, subnormals
//! flushed, sum then one multiply by fp32(1/count), NaN never wins a max),
//! without building or running a program. `tpb-emu demo` and the tests check
//! the emulator against it bit for bit.

use super::plan::Plan;
use super::{FrontendError, Pool2d, PoolMode, PoolOutput, Tensor};
use crate::device::convert::{OutType, add, mul, store_f32};

/// Pools `input` directly (see the module docs).
pub fn reference(params: &Pool2d, input: &Tensor) -> Result<PoolOutput, FrontendError> {
    let plan = Plan::new(params, input)?;
    let p = &plan.params;
    let x = input.to_f32();
    let (h, w, ho, wo) = (plan.h, plan.w, plan.ho, plan.wo);
    let out_ty = OutType::from_dtype(input.dtype).unwrap_or(OutType::F32);
    let isz = input.elem();
    let mut data = Vec::with_capacity(plan.planes() * ho * wo * isz);
    let mut indices = Vec::new();
    let pos = |o: usize, i: usize, a: usize| {
        (o * p.stride[a] as usize + i * p.dilation[a] as usize) as i64 - p.pads[a] as i64
    };
    // The padded extent (for count_include_pad): positions below len + trailing pad.
    let (hp_end, wp_end) = (
        (h + p.pads[2] as usize) as i64,
        (w + p.pads[3] as usize) as i64,
    );
    for plane in 0..plan.planes() {
        let xs = &x[plane * h * w..(plane + 1) * h * w];
        for oh in 0..ho {
            for ow in 0..wo {
                let mut best = f32::NEG_INFINITY;
                let mut best_at: Option<i64> = None;
                let mut first_at: Option<i64> = None;
                let mut sum = 0.0f32;
                let (mut inside, mut counted) = (0usize, 0usize);
                for i in 0..p.kernel[0] as usize {
                    let hh = pos(oh, i, 0);
                    for j in 0..p.kernel[1] as usize {
                        let ww = pos(ow, j, 1);
                        if hh < hp_end && ww < wp_end {
                            counted += 1;
                        }
                        if !(0..h as i64).contains(&hh) || !(0..w as i64).contains(&ww) {
                            continue;
                        }
                        inside += 1;
                        let at = hh * w as i64 + ww;
                        first_at.get_or_insert(at);
                        let v = xs[at as usize];
                        // EC-11: strictly greater wins, so NaN never does.
                        if v > best {
                            best = v;
                            best_at = Some(at);
                        }
                        sum = add(sum, v);
                    }
                }
                let v = match p.mode {
                    PoolMode::Max => best,
                    PoolMode::Avg => {
                        let n = if p.count_include_pad { counted } else { inside };
                        mul(sum, 1.0 / n.max(1) as f32)
                    }
                };
                let bits = store_f32(out_ty, v);
                data.extend_from_slice(&bits.to_le_bytes()[..isz]);
                if p.return_indices {
                    indices.push(best_at.or(first_at).unwrap_or(0));
                }
            }
        }
    }
    Ok(PoolOutput {
        output: Tensor {
            dtype: input.dtype,
            shape: plan.out_shape(),
            data: data.into(),
        },
        indices: p.return_indices.then_some(indices),
    })
}
