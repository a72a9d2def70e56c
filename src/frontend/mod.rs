//! A framework-style pooling front end: PyTorch's `max_pool1d/2d/3d` /
//! `avg_pool1d/2d/3d` and ONNX's `MaxPool` / `AveragePool` over N×C×L,
//! N×C×H×W and N×C×D×H×W maps, compiled to TPB programs and run on the
//! emulator.
//!
//! [`compile`] builds a [`crate::runtime::Program`] the way a compiler for
//! this engine would (the full story, with a parity table against PyTorch, is
//! in `docs/frontend.md`):
//!
//! - the N×C planes go on the 128 SBUF partitions, one plane per partition,
//!   in groups of 128 when there are more;
//! - each group is cut into bands of output rows sized so that the input
//!   rows a band needs, its outputs and its indices fit one partition's SBUF;
//! - **SP** DMAs each band's input rows from DRAM into SBUF, laid out as the
//!   padded plane (`W + left + right` elements a row); where the padding's
//!   fill gives the framework's answer (−inf for max, 0 for average with
//!   `count_include_pad`) a fill DMA writes it first;
//! - **POOL** runs one Pool record per window class: output windows are
//!   grouped per axis by which kernel taps they walk (clipped by padding or by
//!   `ceil_mode`), and each (row group × column group) rectangle is one record
//!   whose TENSOR4D walks every window (x: kernel columns, step `dilation_w`;
//!   y: kernel rows, step `dilation_h·Wp`; z: output columns, step
//!   `stride_w`; w: output rows, step `stride_h·Wp`), with its own
//!   `pool_scale` = fp32(1/taps). With `return_indices`, windows walk only
//!   their in-bounds taps and a MaxPoolSelect record follows each Pool record;
//!   a 3-D window whose depth class walks more than one depth tap folds
//!   three dims (`dim=xyz`, z: kernel depths, step `dilation_d·rows·Wp`)
//!   and walks one output row per record (w: output columns); bands then
//!   cover whole output depths (or rows of one depth, or a column tile);
//! - **ACT** DMAs the outputs (and window-local argmax positions) back to DRAM.
//!
//! Bands are synchronised with three semaphores (loaded, pooled, stored).
//! [`run`] stages the program, runs it on any [`Executor`] and converts the
//! window-local argmax positions to PyTorch's flat indices (`h·W + w` within
//! each plane, int64) on the host. [`reference()`] computes the same answer
//! directly on the array, without the emulator.

mod build;
pub mod demo;
pub mod emit;
mod options;
mod plan;
mod reference;
mod tensor;

pub use crate::npy::NotPooled;
pub use build::{Compiled, compile, compile_owned};
pub use options::{OptionError, PoolOptions};
pub use plan::{AxisGroup, Plan};
pub use reference::reference;
pub use tensor::{Tensor, read_tensor};

use crate::device::Executor;
use crate::isa::enums::Dtype;
use std::fmt;

/// Max or average pooling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PoolMode {
    /// `max_pool2d`.
    Max,
    /// `avg_pool2d`.
    Avg,
}

impl PoolMode {
    /// `max` or `avg`.
    pub const fn name(self) -> &'static str {
        match self {
            PoolMode::Max => "max",
            PoolMode::Avg => "avg",
        }
    }
}

/// Which rule the pads must keep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PadRule {
    /// PyTorch's, for its symmetric `padding`: each pad at most half the
    /// effective kernel (`(k - 1)·d + 1`) along its axis.
    #[default]
    Torch,
    /// ONNX Runtime's, for ONNX's explicit `pads`: each pad smaller than the
    /// kernel along its axis (so every window still touches the input).
    Onnx,
}

/// The depth axis of a 3-D pooling (N×C×D×H×W); [`Depth::NONE`] for 1-D
/// and 2-D inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Depth {
    /// Kernel depth KD, >= 1.
    pub kernel: u32,
    /// Stride SD, >= 1.
    pub stride: u32,
    /// Padding: front, back.
    pub pads: [u32; 2],
    /// Dilation DD, >= 1.
    pub dilation: u32,
}

impl Depth {
    /// No depth axis: one tap, stride 1, no padding.
    pub const NONE: Depth = Depth {
        kernel: 1,
        stride: 1,
        pads: [0, 0],
        dilation: 1,
    };
}

/// The parameters of one pooling, in PyTorch's terms. Pairs are (height,
/// width); a 1-D input (N×C×L) uses `kernel[0] = stride[0] = dilation[0] = 1`
/// and no top/bottom padding; a 3-D input (N×C×D×H×W) adds [`Pool2d::depth`].
/// (The name is the 2-D one it began with; [`Pool`] names it for every rank.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pool2d {
    /// Max or average.
    pub mode: PoolMode,
    /// Kernel (KH, KW), each >= 1.
    pub kernel: [u32; 2],
    /// Stride (SH, SW), each >= 1 (PyTorch's default is the kernel).
    pub stride: [u32; 2],
    /// Padding: top, left, bottom, right.
    pub pads: [u32; 4],
    /// Dilation (DH, DW), each >= 1.
    pub dilation: [u32; 2],
    /// Output size rounds up; the last window must start inside the input or the leading padding.
    pub ceil_mode: bool,
    /// Average: padding counts in the divisor.
    pub count_include_pad: bool,
    /// Max: also return the argmax (PyTorch's `return_indices`).
    pub return_indices: bool,
    /// The depth axis of a 3-D input ([`Depth::NONE`] otherwise).
    pub depth: Depth,
    /// The rule the pads keep: PyTorch's (`padding`) or ONNX's (`pads`).
    pub pad_rule: PadRule,
}

/// The pooling parameters of any rank (the same type as [`Pool2d`]).
pub type Pool = Pool2d;

impl Pool2d {
    /// `mode` pooling with kernel = stride = (kh, kw), no padding, dilation 1,
    /// `count_include_pad` true (PyTorch's defaults).
    pub const fn new(mode: PoolMode, kh: u32, kw: u32) -> Pool2d {
        Pool2d {
            mode,
            kernel: [kh, kw],
            stride: [kh, kw],
            pads: [0; 4],
            dilation: [1, 1],
            ceil_mode: false,
            count_include_pad: true,
            return_indices: false,
            depth: Depth::NONE,
            pad_rule: PadRule::Torch,
        }
    }

    /// `mode` pooling of a 3-D map with kernel = stride = (kd, kh, kw).
    pub const fn new_3d(mode: PoolMode, kd: u32, kh: u32, kw: u32) -> Pool2d {
        let mut p = Pool2d::new(mode, kh, kw);
        p.depth.kernel = kd;
        p.depth.stride = kd;
        p
    }

    /// The depth axis.
    pub const fn with_depth(mut self, depth: Depth) -> Pool2d {
        self.depth = depth;
        self
    }

    /// The pad rule.
    pub const fn rule(mut self, rule: PadRule) -> Pool2d {
        self.pad_rule = rule;
        self
    }

    /// Symmetric padding (PyTorch's `padding=(ph, pw)`).
    pub const fn padding(mut self, ph: u32, pw: u32) -> Pool2d {
        self.pads = [ph, pw, ph, pw];
        self
    }

    /// Stride.
    pub const fn stride(mut self, sh: u32, sw: u32) -> Pool2d {
        self.stride = [sh, sw];
        self
    }

    /// Dilation.
    pub const fn dilation(mut self, dh: u32, dw: u32) -> Pool2d {
        self.dilation = [dh, dw];
        self
    }

    /// `ceil_mode`.
    pub const fn ceil(mut self, on: bool) -> Pool2d {
        self.ceil_mode = on;
        self
    }

    /// `count_include_pad`.
    pub const fn include_pad(mut self, on: bool) -> Pool2d {
        self.count_include_pad = on;
        self
    }

    /// `return_indices`.
    pub const fn indices(mut self, on: bool) -> Pool2d {
        self.return_indices = on;
        self
    }
}

impl fmt::Display for Pool2d {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [kh, kw] = self.kernel;
        let [sh, sw] = self.stride;
        let [t, l, b, r] = self.pads;
        let [dh, dw] = self.dilation;
        let z = self.depth;
        if z != Depth::NONE {
            let [front, back] = z.pads;
            write!(
                f,
                "{} k={}x{kh}x{kw} s={},{sh},{sw} pads={front},{t},{l},{back},{b},{r} d={},{dh},{dw}",
                self.mode.name(),
                z.kernel,
                z.stride,
                z.dilation
            )?;
        } else {
            write!(
                f,
                "{} k={kh}x{kw} s={sh},{sw} pads={t},{l},{b},{r} d={dh},{dw}",
                self.mode.name()
            )?;
        }
        if self.ceil_mode {
            f.write_str(" ceil")?;
        }
        if self.mode == PoolMode::Avg && !self.count_include_pad {
            f.write_str(" exclude_pad")?;
        }
        if self.return_indices {
            f.write_str(" indices")?;
        }
        Ok(())
    }
}

/// The dtypes the front end pools (the output has the input's dtype).
pub const DTYPES: [Dtype; 4] = [Dtype::FP32, Dtype::FP16, Dtype::BFLOAT16, Dtype::UINT8];

/// Why a pooling cannot be compiled or run.
#[derive(Debug, thiserror::Error)]
pub enum FrontendError {
    /// The parameters or the input's shape or dtype are not accepted.
    #[error(transparent)]
    Bad(Unsupported),
    /// The generated program was rejected by staging (a front-end bug).
    #[error("generated program rejected: {0}")]
    Stage(#[from] crate::runtime::StageError),
    /// The run stopped.
    #[error("run failed: {0}")]
    Run(#[from] crate::runtime::RunError),
}

/// Why a pooling's parameters, input shape or dtype are not accepted
/// ([`FrontendError::Bad`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unsupported {
    /// A dtype outside [`DTYPES`].
    #[error("dtype {dtype} is not supported (fp32, fp16, bf16 or uint8)")]
    Dtype {
        /// The dtype.
        dtype: Dtype,
    },
    /// Bytes that do not hold the shape's elements.
    #[error("{len} bytes for shape {shape:?} of {dtype}")]
    Bytes {
        /// The byte count.
        len: usize,
        /// The shape.
        shape: Vec<u64>,
        /// The dtype.
        dtype: Dtype,
    },
    /// An input of another rank than N×C×L, N×C×H×W or N×C×D×H×W.
    #[error("input shape {shape:?}: expected N×C×L, N×C×H×W or N×C×D×H×W")]
    Rank {
        /// The shape.
        shape: Vec<u64>,
    },
    /// An input with an axis of 0.
    #[error("input shape {shape:?} has an empty axis")]
    EmptyAxis {
        /// The shape.
        shape: Vec<u64>,
    },
    /// A kernel, stride or dilation of 0.
    #[error("kernel, stride and dilation must be >= 1")]
    ZeroParameter,
    /// A 1-D input with a row kernel, stride or padding.
    #[error("a 1-D input (N×C×L) takes KH = 1, SH = 1 and no top/bottom padding (got {params})")]
    OneD {
        /// The parameters.
        params: Pool2d,
    },
    /// Depth parameters for an input without a depth.
    #[error(
        "a depth kernel, stride, padding or dilation needs an N×C×D×H×W input (got {params} \
         for shape {shape:?})"
    )]
    DepthNeeds3d {
        /// The parameters.
        params: Pool2d,
        /// The input's shape.
        shape: Vec<u64>,
    },
    /// `return_indices` with average pooling.
    #[error("indices are returned by max pooling only")]
    IndicesNeedMax,
    /// A pad past half the effective kernel (PyTorch's rule and message).
    #[error(
        "pad should be at most half of effective kernel size, but got pad={pad}, \
         kernel_size={kernel} and dilation={dilation}"
    )]
    TorchPad {
        /// The pad.
        pad: u32,
        /// The kernel along its axis.
        kernel: u32,
        /// The dilation along its axis.
        dilation: u32,
    },
    /// A pad not smaller than the kernel (ONNX Runtime's rule).
    #[error(
        "--pads: the {side} pad of axis {axis} is {pad}, not smaller than the kernel's {kernel} \
         along it (ONNX: pads must be smaller than the kernel)"
    )]
    OnnxPad {
        /// `begin` or `end`.
        side: &'static str,
        /// The axis (`D`, `H`, `W`, `L`).
        axis: &'static str,
        /// The pad.
        pad: u32,
        /// The kernel along the axis.
        kernel: u32,
    },
    /// A size or parameter past 65535 (an axis past `u32::MAX`).
    #[error("a size or parameter is larger than 65535")]
    TooLarge,
    /// A window larger than the padded input.
    #[error("{}", window_text(.depth, .kernel, .dilation, .padded))]
    WindowTooLarge {
        /// The depth kernel, dilation and padded depth of a 3-D input.
        depth: Option<(u32, u32, usize)>,
        /// The kernel (rows, columns).
        kernel: [u32; 2],
        /// The dilation (rows, columns).
        dilation: [u32; 2],
        /// The padded input's height and width.
        padded: [usize; 2],
    },
    /// An output whose window reads no input element.
    #[error(
        "output {axis} {output}'s window reads no input element: its {taps} taps, dilation \
         {dilation}, fall on {axis}s {first} to {last} in steps of {dilation}, in the padding on \
         both sides of the input's {axis}s 0 to {end}; the pads are within {limit}, but the \
         emulator needs every window to read an input element",
        limit = pad_limit(.rule)
    )]
    EmptyWindow {
        /// `depth`, `row` or `column`.
        axis: &'static str,
        /// The output's index along the axis.
        output: usize,
        /// The window's taps along the axis.
        taps: usize,
        /// Its dilation.
        dilation: usize,
        /// The input index of its first tap.
        first: i64,
        /// The input index of its last tap.
        last: i64,
        /// The input's last index along the axis.
        end: usize,
        /// The rule the pads kept.
        rule: PadRule,
    },
    /// A column stride or dilation past a TENSOR4D step.
    #[error(
        "a column stride or dilation over {} does not fit a TENSOR4D step (i16)",
        i16::MAX
    )]
    StepTooLarge,
    /// A plane past what a DMA step can stride over.
    #[error("a plane is larger than a DMA step can stride over (2^31 elements)")]
    PlaneTooLarge,
    /// One output's input rows do not fit a partition of SBUF.
    #[error(
        "one output (input rows {kh}x{kw} of {width}) does not fit a partition's {kib} KiB of SBUF"
    )]
    NoFit {
        /// The kernel's rows.
        kh: u32,
        /// The kernel's columns.
        kw: u32,
        /// The padded input's width.
        width: u64,
        /// A partition's SBUF, in KiB.
        kib: u64,
    },
    /// No band layout fits.
    #[error("no band layout fits")]
    NoLayout,
    /// The input and outputs past 4 GiB of device DRAM.
    #[error("the input and outputs need more than 4 GiB of device DRAM")]
    DramTooLarge,
}

/// The limit the pads kept, for [`Unsupported::EmptyWindow`]'s message.
fn pad_limit(rule: &PadRule) -> &'static str {
    match rule {
        PadRule::Torch => "PyTorch's limit (half the effective kernel)",
        PadRule::Onnx => "ONNX's limit (smaller than the kernel)",
    }
}

/// [`Unsupported::WindowTooLarge`]'s message.
fn window_text(
    depth: &Option<(u32, u32, usize)>,
    kernel: &[u32; 2],
    dilation: &[u32; 2],
    padded: &[usize; 2],
) -> String {
    match depth {
        Some((dk, dd, dp)) => format!(
            "the window ({dk}x{}x{} dilated {dd}x{}x{}) is larger than the padded input \
             ({dp}x{}x{})",
            kernel[0], kernel[1], dilation[0], dilation[1], padded[0], padded[1]
        ),
        None => format!(
            "the window ({}x{} dilated {}x{}) is larger than the padded input ({}x{})",
            kernel[0], kernel[1], dilation[0], dilation[1], padded[0], padded[1]
        ),
    }
}

/// The result of a pooling: the output and, with `return_indices`, PyTorch's
/// int64 indices (flat `h·W + w` within each input plane; `(d·H + h)·W + w`
/// within each D×H×W volume), shaped like the output.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolOutput {
    /// N×C×Ho×Wo (or N×C×Lo, or N×C×Do×Ho×Wo), the input's dtype.
    pub output: Tensor,
    /// Same shape as the output.
    pub indices: Option<Vec<i64>>,
}

/// Compiles `params` for `input`, runs the program on `exec` and returns the
/// output (and indices).
pub fn run(
    params: &Pool2d,
    input: &Tensor,
    exec: &mut dyn Executor,
) -> Result<PoolOutput, FrontendError> {
    let compiled = compile(params, input)?;
    compiled.run(exec)
}

/// `run` on the CPU reference executor.
pub fn run_cpu(params: &Pool2d, input: &Tensor) -> Result<PoolOutput, FrontendError> {
    run(params, input, &mut crate::device::CpuExecutor::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each reason prints what the message string it replaced printed.
    #[test]
    fn unsupported_reasons_keep_their_messages() {
        let p = Pool2d::new(PoolMode::Max, 2, 3);
        let shape = vec![1u64, 2, 3];
        let dt = Dtype::INT32;
        let i16max = i16::MAX;
        let cases: Vec<(Unsupported, String)> = vec![
            (
                Unsupported::Dtype { dtype: dt },
                format!("dtype {dt} is not supported (fp32, fp16, bf16 or uint8)"),
            ),
            (
                Unsupported::Bytes {
                    len: 5,
                    shape: shape.clone(),
                    dtype: dt,
                },
                format!("{} bytes for shape {:?} of {}", 5, shape, dt),
            ),
            (
                Unsupported::Rank {
                    shape: shape.clone(),
                },
                format!("input shape {shape:?}: expected N×C×L, N×C×H×W or N×C×D×H×W"),
            ),
            (
                Unsupported::EmptyAxis {
                    shape: shape.clone(),
                },
                format!("input shape {shape:?} has an empty axis"),
            ),
            (
                Unsupported::ZeroParameter,
                "kernel, stride and dilation must be >= 1".into(),
            ),
            (
                Unsupported::OneD { params: p },
                format!(
                    "a 1-D input (N×C×L) takes KH = 1, SH = 1 and no top/bottom padding (got {p})"
                ),
            ),
            (
                Unsupported::DepthNeeds3d {
                    params: p,
                    shape: shape.clone(),
                },
                format!(
                    "a depth kernel, stride, padding or dilation needs an N×C×D×H×W input (got {p} \
                     for shape {:?})",
                    shape
                ),
            ),
            (
                Unsupported::IndicesNeedMax,
                "indices are returned by max pooling only".into(),
            ),
            (
                Unsupported::TorchPad {
                    pad: 2,
                    kernel: 3,
                    dilation: 1,
                },
                "pad should be at most half of effective kernel size, but got pad=2, \
                 kernel_size=3 and dilation=1"
                    .into(),
            ),
            (
                Unsupported::OnnxPad {
                    side: "end",
                    axis: "W",
                    pad: 3,
                    kernel: 3,
                },
                "--pads: the end pad of axis W is 3, not smaller than the kernel's 3 along it \
                 (ONNX: pads must be smaller than the kernel)"
                    .into(),
            ),
            (
                Unsupported::TooLarge,
                "a size or parameter is larger than 65535".into(),
            ),
            (
                Unsupported::WindowTooLarge {
                    depth: Some((2, 1, 3)),
                    kernel: [4, 5],
                    dilation: [1, 2],
                    padded: [6, 7],
                },
                "the window (2x4x5 dilated 1x1x2) is larger than the padded input (3x6x7)".into(),
            ),
            (
                Unsupported::WindowTooLarge {
                    depth: None,
                    kernel: [4, 5],
                    dilation: [1, 2],
                    padded: [6, 7],
                },
                "the window (4x5 dilated 1x2) is larger than the padded input (6x7)".into(),
            ),
            (
                Unsupported::EmptyWindow {
                    axis: "row",
                    output: 1,
                    taps: 2,
                    dilation: 5,
                    first: -1,
                    last: 4,
                    end: 2,
                    rule: PadRule::Torch,
                },
                "output row 1's window reads no input element: its 2 taps, dilation 5, fall on \
                 rows -1 to 4 in steps of 5, in the padding on both sides of the input's rows 0 \
                 to 2; the pads are within PyTorch's limit (half the effective kernel), but the \
                 emulator needs every window to read an input element"
                    .into(),
            ),
            (
                Unsupported::EmptyWindow {
                    axis: "column",
                    output: 0,
                    taps: 2,
                    dilation: 5,
                    first: -1,
                    last: 4,
                    end: 2,
                    rule: PadRule::Onnx,
                },
                "output column 0's window reads no input element: its 2 taps, dilation 5, fall \
                 on columns -1 to 4 in steps of 5, in the padding on both sides of the input's \
                 columns 0 to 2; the pads are within ONNX's limit (smaller than the kernel), but \
                 the emulator needs every window to read an input element"
                    .into(),
            ),
            (
                Unsupported::StepTooLarge,
                format!(
                    "a column stride or dilation over {i16max} does not fit a TENSOR4D step (i16)"
                ),
            ),
            (
                Unsupported::PlaneTooLarge,
                "a plane is larger than a DMA step can stride over (2^31 elements)".into(),
            ),
            (
                Unsupported::NoFit {
                    kh: 2,
                    kw: 3,
                    width: 70000,
                    kib: 192,
                },
                "one output (input rows 2x3 of 70000) does not fit a partition's 192 KiB of SBUF"
                    .into(),
            ),
            (Unsupported::NoLayout, "no band layout fits".into()),
            (
                Unsupported::DramTooLarge,
                "the input and outputs need more than 4 GiB of device DRAM".into(),
            ),
        ];
        for (why, want) in cases {
            assert_eq!(why.to_string(), want);
            assert_eq!(FrontendError::Bad(why).to_string(), want);
        }
    }
}
