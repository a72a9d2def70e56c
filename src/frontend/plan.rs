//! Shapes and window classes: everything the program builder and the index
//! conversion need to agree on.

use super::{Depth, FrontendError, PadRule, Pool2d, PoolMode, Tensor, Unsupported};

/// A run of consecutive outputs along one axis whose windows walk the same
/// kernel taps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisGroup {
    /// First output.
    pub first: usize,
    /// Outputs in the run.
    pub len: usize,
    /// First kernel tap walked.
    pub tap0: usize,
    /// Taps walked (>= 1).
    pub taps: usize,
}

/// One axis: input length, padding, kernel, stride, dilation.
#[derive(Clone, Copy, Debug)]
struct Axis {
    len: usize,
    pad0: usize,
    pad1: usize,
    k: usize,
    s: usize,
    d: usize,
}

impl Axis {
    /// PyTorch's output length (`ceil_mode`: the last window must start
    /// inside the input or the leading padding).
    fn out_len(&self, ceil: bool) -> Option<usize> {
        let span = self.d * (self.k - 1) + 1;
        let padded = self.len + self.pad0 + self.pad1;
        if padded < span {
            return None;
        }
        let q = padded - span;
        let mut out = if ceil { q.div_ceil(self.s) } else { q / self.s } + 1;
        if ceil && (out - 1) * self.s >= self.len + self.pad0 {
            out -= 1;
        }
        Some(out)
    }

    /// The taps output `o` walks: in-bounds taps, or (`padded`) the taps
    /// inside the padded extent. `None` when the range is empty.
    fn taps(&self, o: usize, padded: bool) -> Option<(usize, usize)> {
        // Positions in padded coordinates: window start o·s, tap i at o·s + i·d.
        let (lo, hi) = if padded {
            (0, self.len + self.pad0 + self.pad1)
        } else {
            (self.pad0, self.pad0 + self.len)
        };
        let start = o * self.s;
        let first = (0..self.k).find(|&i| (lo..hi).contains(&(start + i * self.d)))?;
        let last = (0..self.k)
            .rev()
            .find(|&i| (lo..hi).contains(&(start + i * self.d)))?;
        Some((first, last - first + 1))
    }

    fn groups(&self, out: usize, padded: bool) -> Result<Vec<AxisGroup>, usize> {
        let mut groups: Vec<AxisGroup> = Vec::new();
        for o in 0..out {
            let (tap0, taps) = self.taps(o, padded).ok_or(o)?;
            match groups.last_mut() {
                Some(g) if g.tap0 == tap0 && g.taps == taps => g.len += 1,
                _ => groups.push(AxisGroup {
                    first: o,
                    len: 1,
                    tap0,
                    taps,
                }),
            }
        }
        Ok(groups)
    }
}

/// The shapes of one pooling and its window classes.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The parameters.
    pub params: Pool2d,
    /// Batch.
    pub n: usize,
    /// Channels.
    pub c: usize,
    /// Input depth (1 for a 1-D or 2-D input).
    pub d: usize,
    /// Input height (1 for a 1-D input).
    pub h: usize,
    /// Input width (L for a 1-D input).
    pub w: usize,
    /// Output depth (1 for a 1-D or 2-D input).
    pub dout: usize,
    /// Output height.
    pub ho: usize,
    /// Output width.
    pub wo: usize,
    /// The input was N×C×L.
    pub one_d: bool,
    /// The input was N×C×D×H×W.
    pub three_d: bool,
    /// Windows walk the padding, which holds a fill that gives the framework's
    /// answer (max without indices: −inf; avg with `count_include_pad`: 0).
    pub fill: bool,
    /// Depth classes (one of one tap for a 1-D or 2-D input).
    pub depths: Vec<AxisGroup>,
    /// Row classes.
    pub rows: Vec<AxisGroup>,
    /// Column classes.
    pub cols: Vec<AxisGroup>,
}

impl Plan {
    /// Checks `params` against `input` and classifies the windows.
    pub fn new(params: &Pool2d, input: &Tensor) -> Result<Plan, FrontendError> {
        let bad = |s: Unsupported| Err(FrontendError::Bad(s));
        input.check()?;
        let (n, c, d, h, w, one_d) = match input.shape[..] {
            [n, c, d, h, w] => (n, c, d, h, w, false),
            [n, c, h, w] => (n, c, 1, h, w, false),
            [n, c, l] => (n, c, 1, 1, l, true),
            _ => {
                return bad(Unsupported::Rank {
                    shape: input.shape.clone(),
                });
            }
        };
        let three_d = input.shape.len() == 5;
        if [n, c, d, h, w].contains(&0) {
            return bad(Unsupported::EmptyAxis {
                shape: input.shape.clone(),
            });
        }
        let p = params;
        let z = p.depth;
        if p.kernel.contains(&0)
            || p.stride.contains(&0)
            || p.dilation.contains(&0)
            || [z.kernel, z.stride, z.dilation].contains(&0)
        {
            return bad(Unsupported::ZeroParameter);
        }
        if one_d && (p.kernel[0] != 1 || p.stride[0] != 1 || p.pads[0] != 0 || p.pads[2] != 0) {
            return bad(Unsupported::OneD { params: *p });
        }
        if !three_d && z != Depth::NONE {
            return bad(Unsupported::DepthNeeds3d {
                params: *p,
                shape: input.shape.clone(),
            });
        }
        if p.return_indices && p.mode != PoolMode::Max {
            return bad(Unsupported::IndicesNeedMax);
        }
        // Each spatial axis: (name, kernel, dilation, begin pad, end pad).
        let mut axes = vec![
            ("H", p.kernel[0], p.dilation[0], p.pads[0], p.pads[2]),
            ("W", p.kernel[1], p.dilation[1], p.pads[1], p.pads[3]),
        ];
        if one_d {
            axes.remove(0);
            axes[0].0 = "L";
        }
        if three_d {
            axes.insert(0, ("D", z.kernel, z.dilation, z.pads[0], z.pads[1]));
        }
        for &(name, k, dil, begin, end) in &axes {
            for (pad, side) in [(begin, "begin"), (end, "end")] {
                match p.pad_rule {
                    // PyTorch's rule and message: each pad at most half the
                    // effective kernel ((k - 1)·d + 1) along its axis.
                    PadRule::Torch => {
                        let eff = (k as u64).saturating_sub(1) * dil as u64 + 1;
                        if pad as u64 > eff / 2 {
                            return bad(Unsupported::TorchPad {
                                pad,
                                kernel: k,
                                dilation: dil,
                            });
                        }
                    }
                    // ONNX Runtime's rule for explicit pads: smaller than the kernel.
                    PadRule::Onnx => {
                        if pad >= k {
                            return bad(Unsupported::OnnxPad {
                                side,
                                axis: name,
                                pad,
                                kernel: k,
                            });
                        }
                    }
                }
            }
        }
        let big = |v: u32| v > 65535;
        if p.kernel
            .iter()
            .chain(&p.stride)
            .chain(&p.dilation)
            .chain(&p.pads)
            .chain(&[z.kernel, z.stride, z.dilation])
            .chain(&z.pads)
            .any(|&v| big(v))
            || [n, c, d, h, w].iter().any(|&v| v > u32::MAX as u64)
        {
            return bad(Unsupported::TooLarge);
        }
        let us = |v: u32| v as usize;
        let axis = |len: u64, i: usize| Axis {
            len: len as usize,
            pad0: us(p.pads[i]),
            pad1: us(p.pads[i + 2]),
            k: us(p.kernel[i]),
            s: us(p.stride[i]),
            d: us(p.dilation[i]),
        };
        let (ah, aw) = (axis(h, 0), axis(w, 1));
        let ad = Axis {
            len: d as usize,
            pad0: us(z.pads[0]),
            pad1: us(z.pads[1]),
            k: us(z.kernel),
            s: us(z.stride),
            d: us(z.dilation),
        };
        let (Some(dout), Some(ho), Some(wo)) = (
            ad.out_len(p.ceil_mode),
            ah.out_len(p.ceil_mode),
            aw.out_len(p.ceil_mode),
        ) else {
            let padded = |a: &Axis| a.len + a.pad0 + a.pad1;
            return bad(Unsupported::WindowTooLarge {
                depth: three_d.then(|| (z.kernel, z.dilation, padded(&ad))),
                kernel: p.kernel,
                dilation: p.dilation,
                padded: [padded(&ah), padded(&aw)],
            });
        };
        let has_pad = p.pads.iter().chain(&z.pads).any(|&v| v > 0);
        let fill = has_pad
            && match p.mode {
                PoolMode::Max => !p.return_indices,
                PoolMode::Avg => p.count_include_pad,
            };
        // Every window needs an in-bounds tap, whatever it walks. The pads
        // passed PyTorch's rule above, so the window's span overlaps the
        // input; only a dilated window can miss it, its taps stepping over
        // the input rows into the padding on both sides (PyTorch gives -inf
        // there; the emulator refuses the window).
        let empty = |axis: &'static str, a: &Axis, o: usize| {
            let first = (o * a.s) as i64 - a.pad0 as i64;
            let last = first + ((a.k - 1) * a.d) as i64;
            FrontendError::Bad(Unsupported::EmptyWindow {
                axis,
                output: o,
                taps: a.k,
                dilation: a.d,
                first,
                last,
                end: a.len - 1,
                rule: p.pad_rule,
            })
        };
        ad.groups(dout, false).map_err(|o| empty("depth", &ad, o))?;
        ah.groups(ho, false).map_err(|o| empty("row", &ah, o))?;
        aw.groups(wo, false).map_err(|o| empty("column", &aw, o))?;
        let depths = ad.groups(dout, fill).map_err(|o| empty("depth", &ad, o))?;
        let rows = ah.groups(ho, fill).map_err(|o| empty("row", &ah, o))?;
        let cols = aw.groups(wo, fill).map_err(|o| empty("column", &aw, o))?;
        Ok(Plan {
            params: *p,
            n: n as usize,
            c: c as usize,
            d: d as usize,
            h: h as usize,
            w: w as usize,
            dout,
            ho,
            wo,
            one_d,
            three_d,
            fill,
            depths,
            rows,
            cols,
        })
    }

    /// Planes (N·C).
    pub fn planes(&self) -> usize {
        self.n * self.c
    }

    /// Padded width.
    pub fn wp(&self) -> usize {
        self.w + self.params.pads[1] as usize + self.params.pads[3] as usize
    }

    /// Padded height.
    pub fn hp(&self) -> usize {
        self.h + self.params.pads[0] as usize + self.params.pads[2] as usize
    }

    /// Padded depth.
    pub fn dp(&self) -> usize {
        self.d + self.params.depth.pads[0] as usize + self.params.depth.pads[1] as usize
    }

    /// The output's shape (N×C×Ho×Wo, N×C×Lo for a 1-D input, N×C×Do×Ho×Wo
    /// for a 3-D one).
    pub fn out_shape(&self) -> Vec<u64> {
        if self.three_d {
            vec![
                self.n as u64,
                self.c as u64,
                self.dout as u64,
                self.ho as u64,
                self.wo as u64,
            ]
        } else if self.one_d {
            vec![self.n as u64, self.c as u64, self.wo as u64]
        } else {
            vec![self.n as u64, self.c as u64, self.ho as u64, self.wo as u64]
        }
    }

    /// The depth class of output depth `od`.
    pub fn depth_group(&self, od: usize) -> &AxisGroup {
        group_of(&self.depths, od)
    }

    /// The row class of output row `oh`.
    pub fn row_group(&self, oh: usize) -> &AxisGroup {
        group_of(&self.rows, oh)
    }

    /// The column class of output column `ow`.
    pub fn col_group(&self, ow: usize) -> &AxisGroup {
        group_of(&self.cols, ow)
    }

    /// PyTorch's flat index (`h·W + w` in the plane) of position `pos` of
    /// output (oh, ow)'s walked window (x fastest: kernel columns, then rows).
    pub fn flat_index(&self, oh: usize, ow: usize, pos: usize) -> i64 {
        self.flat_index_3d(0, oh, ow, pos)
    }

    /// PyTorch's flat index (`(d·H + h)·W + w` in the volume) of position
    /// `pos` of output (od, oh, ow)'s walked window (x fastest: kernel
    /// columns, then rows, then depths).
    pub fn flat_index_3d(&self, od: usize, oh: usize, ow: usize, pos: usize) -> i64 {
        let (z, r, c) = (self.depth_group(od), self.row_group(oh), self.col_group(ow));
        let p = &self.params;
        let k = z.tap0 + pos / (c.taps * r.taps);
        let i = r.tap0 + (pos / c.taps) % r.taps;
        let j = c.tap0 + pos % c.taps;
        let q = p.depth;
        let dd = (od * q.stride as usize + k * q.dilation as usize) as i64 - q.pads[0] as i64;
        let hh = (oh * p.stride[0] as usize + i * p.dilation[0] as usize) as i64 - p.pads[0] as i64;
        let ww = (ow * p.stride[1] as usize + j * p.dilation[1] as usize) as i64 - p.pads[1] as i64;
        (dd * self.h as i64 + hh) * self.w as i64 + ww
    }
}

impl Plan {
    /// The kernel tap (`i·KW + j`) of output (oh, ow)'s window that flat
    /// index `idx` (`h·W + w`) points at: what an argmax map colours (for a
    /// 3-D pooling, the tap within the kernel's plane).
    pub fn tap_of(&self, oh: usize, ow: usize, idx: i64) -> usize {
        let p = &self.params;
        let idx = idx.rem_euclid((self.h * self.w) as i64);
        let (h, w) = (idx.div_euclid(self.w as i64), idx.rem_euclid(self.w as i64));
        let i = (h + p.pads[0] as i64 - (oh * p.stride[0] as usize) as i64) / p.dilation[0] as i64;
        let j = (w + p.pads[1] as i64 - (ow * p.stride[1] as usize) as i64) / p.dilation[1] as i64;
        (i.max(0) as usize) * p.kernel[1] as usize + j.max(0) as usize
    }
}

fn group_of(groups: &[AxisGroup], o: usize) -> &AxisGroup {
    let i = groups.partition_point(|g| g.first + g.len <= o);
    &groups[i.min(groups.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ax(len: usize, pad: usize, k: usize, s: usize, d: usize) -> Axis {
        Axis {
            len,
            pad0: pad,
            pad1: pad,
            k,
            s,
            d,
        }
    }

    #[test]
    fn output_lengths_follow_pytorch() {
        assert_eq!(ax(4, 0, 2, 2, 1).out_len(false), Some(2));
        assert_eq!(ax(5, 0, 2, 2, 1).out_len(false), Some(2));
        assert_eq!(ax(5, 0, 2, 2, 1).out_len(true), Some(3));
        // ceil_mode: a window starting in the trailing padding is dropped.
        assert_eq!(ax(5, 1, 3, 3, 1).out_len(true), Some(2));
        assert_eq!(ax(7, 1, 3, 2, 2).out_len(false), Some(3));
        assert_eq!(ax(2, 0, 3, 1, 1).out_len(false), None);
    }

    #[test]
    fn groups_split_edges_from_the_interior() {
        let a = ax(6, 1, 3, 1, 1);
        let g = a.groups(6, false).unwrap();
        assert_eq!(g.len(), 3);
        assert_eq!((g[0].tap0, g[0].taps, g[0].len), (1, 2, 1));
        assert_eq!((g[1].tap0, g[1].taps, g[1].len), (0, 3, 4));
        assert_eq!((g[2].tap0, g[2].taps, g[2].len), (0, 2, 1));
        // Walking the padded extent: one class.
        assert_eq!(a.groups(6, true).unwrap().len(), 1);
    }
}
