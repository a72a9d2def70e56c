//! Pooling options as a framework gives them — one value per spatial axis
//! or one for all, PyTorch's symmetric `padding` or ONNX's explicit `pads` —
//! mapped onto [`Pool`] for an input of a given rank. `tpb-emu pool` and the
//! Python bindings share this mapping.

use super::{Depth, PadRule, Pool, PoolMode};

/// The options of one pooling, per spatial axis (L; H,W; D,H,W).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolOptions {
    /// Max or average.
    pub mode: PoolMode,
    /// One value per spatial axis, or one for all (a 1-D input also takes H,W).
    pub kernel: Vec<u32>,
    /// As `kernel`; `None`: the kernel.
    pub stride: Option<Vec<u32>>,
    /// PyTorch's symmetric padding, as `kernel` (each pad at most half the
    /// effective kernel); exclusive with `pads`.
    pub padding: Option<Vec<u32>>,
    /// ONNX's explicit pads: every spatial axis's begin, then every axis's
    /// end (2, 4 or 6 values; a 1-D input also takes 4); each smaller than
    /// the kernel.
    pub pads: Option<Vec<u32>>,
    /// As `kernel`; `None`: 1.
    pub dilation: Option<Vec<u32>>,
    /// Round the output size up.
    pub ceil_mode: bool,
    /// Average: count the padding in the divisor.
    pub count_include_pad: bool,
    /// Max: also return PyTorch's indices.
    pub return_indices: bool,
}

impl PoolOptions {
    /// Options of `mode` with `kernel` and every other option at its default.
    pub fn new(mode: PoolMode, kernel: Vec<u32>) -> PoolOptions {
        PoolOptions {
            mode,
            kernel,
            stride: None,
            padding: None,
            pads: None,
            dilation: None,
            ceil_mode: false,
            count_include_pad: false,
            return_indices: false,
        }
    }
}

/// Why options do not describe a pooling (a usage error: exit 2 in the CLI).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// A per-axis option with a wrong number of values.
    #[error("{option}: {expected}")]
    Count {
        /// The option (`kernel`, `stride`, `padding`, `pads`, `dilation`).
        option: &'static str,
        /// What it needs, e.g. `expected one or two numbers (H,W)`.
        expected: &'static str,
    },
    /// Both `padding` and `pads`.
    #[error("padding and pads are exclusive: give one")]
    BothPaddings,
    /// An option of the other mode (`return_indices` needs max,
    /// `count_include_pad` needs avg).
    #[error("{option} needs mode {mode}", mode = mode.name())]
    Mode {
        /// `return_indices` or `count_include_pad`.
        option: &'static str,
        /// The mode it needs.
        mode: PoolMode,
    },
}

/// A per-axis option for an input of `spatial` axes (1, 2 or 3):
/// `((H, W), D)`. One value stands for every axis; a 1-D input's height and
/// any 1-D or 2-D input's depth are `lone`.
fn axes(
    option: &'static str,
    v: &[u32],
    spatial: usize,
    lone: u32,
) -> Result<([u32; 2], u32), OptionError> {
    match (spatial, v) {
        (1, [a]) => Ok(([lone, *a], lone)),
        (1 | 2, [a, b]) => Ok(([*a, *b], lone)),
        (2, [a]) => Ok(([*a, *a], lone)),
        (3, [a]) => Ok(([*a, *a], *a)),
        (3, [d, h, w]) => Ok(([*h, *w], *d)),
        (1 | 2, _) => Err(OptionError::Count {
            option,
            expected: "expected one or two numbers (H,W)",
        }),
        _ => Err(OptionError::Count {
            option,
            expected: "expected one or three numbers (D,H,W)",
        }),
    }
}

impl PoolOptions {
    /// The [`Pool`] these options describe for an input of `rank` axes
    /// (N×C×L, N×C×H×W, N×C×D×H×W). Whether it fits the input (pads
    /// within the rule, windows inside) is checked when it is compiled.
    pub fn to_pool(&self, rank: usize) -> Result<Pool, OptionError> {
        let spatial = rank.saturating_sub(2).clamp(1, 3);
        let (kernel, kd) = axes("kernel", &self.kernel, spatial, 1)?;
        let (stride, sd) = match &self.stride {
            Some(s) => axes("stride", s, spatial, 1)?,
            None => (kernel, kd),
        };
        let (dilation, dd) = match &self.dilation {
            Some(s) => axes("dilation", s, spatial, 1)?,
            None => ([1, 1], 1),
        };
        let (pads, pads_d, pad_rule) = match (&self.padding, &self.pads) {
            (Some(_), Some(_)) => return Err(OptionError::BothPaddings),
            (Some(s), None) => {
                let ([ph, pw], pd) = axes("padding", s, spatial, 0)?;
                ([ph, pw, ph, pw], [pd, pd], PadRule::Torch)
            }
            (None, Some(s)) => {
                let count = |expected| OptionError::Count {
                    option: "pads",
                    expected,
                };
                let p = match (spatial, &s[..]) {
                    (1, [b, e]) => ([0, *b, 0, *e], [0, 0]),
                    (1 | 2, [t, l, b, r]) => ([*t, *l, *b, *r], [0, 0]),
                    (3, [f, t, l, bk, b, r]) => ([*t, *l, *b, *r], [*f, *bk]),
                    (1, _) => return Err(count("expected BEGIN,END")),
                    (2, _) => return Err(count("expected TOP,LEFT,BOTTOM,RIGHT")),
                    _ => return Err(count("expected FRONT,TOP,LEFT,BACK,BOTTOM,RIGHT")),
                };
                (p.0, p.1, PadRule::Onnx)
            }
            (None, None) => ([0; 4], [0, 0], PadRule::Torch),
        };
        if self.return_indices && self.mode != PoolMode::Max {
            return Err(OptionError::Mode {
                option: "return_indices",
                mode: PoolMode::Max,
            });
        }
        if self.count_include_pad && self.mode != PoolMode::Avg {
            return Err(OptionError::Mode {
                option: "count_include_pad",
                mode: PoolMode::Avg,
            });
        }
        Ok(Pool {
            mode: self.mode,
            kernel,
            stride,
            pads,
            dilation,
            ceil_mode: self.ceil_mode,
            count_include_pad: self.count_include_pad,
            return_indices: self.return_indices,
            depth: Depth {
                kernel: kd,
                stride: sd,
                pads: pads_d,
                dilation: dd,
            },
            pad_rule,
        })
    }
}
