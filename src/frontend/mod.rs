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
    #[error("{0}")]
    Bad(String),
    /// The generated program was rejected by staging (a front-end bug).
    #[error("generated program rejected: {0}")]
    Stage(#[from] crate::runtime::StageError),
    /// The run stopped.
    #[error("run failed: {0}")]
    Run(#[from] crate::runtime::RunError),
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
