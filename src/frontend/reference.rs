//! The plain reference: the same pooling computed directly on the array, in
//! PyTorch's loop order (depth, then rows, then columns) and with SPEC §6's arithmetic (f32, subnormals
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
    let (d, h, w) = (plan.d, plan.h, plan.w);
    let (dout, ho, wo) = (plan.dout, plan.ho, plan.wo);
    let out_ty = OutType::from_dtype(input.dtype).unwrap_or(OutType::F32);
    let isz = input.elem();
    let mut data = Vec::with_capacity(plan.planes() * dout * ho * wo * isz);
    let mut indices = Vec::new();
    let z = p.depth;
    // Axis 0: height, 1: width, 2: depth.
    let (stride, dil, pad) = (
        [p.stride[0], p.stride[1], z.stride],
        [p.dilation[0], p.dilation[1], z.dilation],
        [p.pads[0], p.pads[1], z.pads[0]],
    );
    let pos = |o: usize, i: usize, a: usize| {
        (o * stride[a] as usize + i * dil[a] as usize) as i64 - pad[a] as i64
    };
    // The padded extent (for count_include_pad): positions below len + trailing pad.
    let (dp_end, hp_end, wp_end) = (
        (d + z.pads[1] as usize) as i64,
        (h + p.pads[2] as usize) as i64,
        (w + p.pads[3] as usize) as i64,
    );
    let volume = d * h * w;
    for plane in 0..plan.planes() {
        let xs = &x[plane * volume..(plane + 1) * volume];
        for od in 0..dout {
            for oh in 0..ho {
                for ow in 0..wo {
                    let mut best = f32::NEG_INFINITY;
                    let mut best_at: Option<i64> = None;
                    let mut first_at: Option<i64> = None;
                    let mut sum = 0.0f32;
                    let (mut inside, mut counted) = (0usize, 0usize);
                    for k in 0..z.kernel as usize {
                        let dd = pos(od, k, 2);
                        for i in 0..p.kernel[0] as usize {
                            let hh = pos(oh, i, 0);
                            for j in 0..p.kernel[1] as usize {
                                let ww = pos(ow, j, 1);
                                if dd < dp_end && hh < hp_end && ww < wp_end {
                                    counted += 1;
                                }
                                if !(0..d as i64).contains(&dd)
                                    || !(0..h as i64).contains(&hh)
                                    || !(0..w as i64).contains(&ww)
                                {
                                    continue;
                                }
                                inside += 1;
                                let at = (dd * h as i64 + hh) * w as i64 + ww;
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
