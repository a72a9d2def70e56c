//! `pool`: framework-style max/avg pooling of an N×C×L, N×C×H×W or
//! N×C×D×H×W array, compiled by the library's front end and run on a
//! backend — what `tpb-emu pool` does, with arrays instead of files.

use crate::arrays;
use crate::backend;
use crate::errors::{self, Failure, Family};
use pyo3::prelude::*;
use tpb_emu::device::gpu::BackendChoice;
use tpb_emu::frontend::{self, OptionError, PoolMode, PoolOptions, Tensor};
use tpb_emu::isa::enums::Dtype;

/// A per-axis option: one integer or a sequence of them, each >= 0.
fn axes(name: &str, v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<u32>>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let values: Vec<i64> = match v.extract::<i64>() {
        Ok(one) => vec![one],
        Err(_) => v.extract().map_err(|_| {
            errors::usage(format!(
                "{name}={v}: expected an integer or a sequence of integers"
            ))
        })?,
    };
    values
        .iter()
        .map(|&x| {
            u32::try_from(x).map_err(|_| {
                errors::usage(format!("{name}={v}: `{x}` is not a non-negative integer"))
            })
        })
        .collect::<PyResult<Vec<u32>>>()
        .map(Some)
}

/// An option's name and the value it was given as, by its library name.
type Given<'a, 'py> = dyn Fn(&str) -> (String, Option<Bound<'py, PyAny>>) + 'a;

/// The output of a run: the output tensor and, with indices, the indices.
type Pooled = (Tensor, Option<Vec<i64>>);

/// Max or average pooling of `x`, an N×C×L, N×C×H×W or N×C×D×H×W NumPy
/// array of float32, float16 or uint8 (or uint16 bf16 bits with
/// `dtype="bf16"`), compiled to a TPB program and run on the emulator as
/// `tpb-emu pool` does, with the same option rules:
///
/// - `mode`: "max" or "avg".
/// - `kernel`, `stride` (default: the kernel), `dilation` (default 1),
///   `padding`: one integer per spatial axis (L; H, W; D, H, W), or one for
///   all. `padding` is PyTorch's symmetric padding (each pad at most half
///   the effective kernel).
/// - `pads`: ONNX's explicit pads instead, every axis's begin then every
///   axis's end (2, 4 or 6 integers), each smaller than the kernel.
/// - `ceil_mode`: round the output size up; `count_include_pad` (avg):
///   count the padding in the divisor (off by default, unlike PyTorch);
///   `return_indices` (max): also return PyTorch's int64 flat indices.
/// - `backend`: "cpu", "gpu" or "auto"; `max_work`: the work budget.
///
/// Returns the output array (the input's dtype), or `(output, indices)`
/// with `return_indices`. Raises `UsageError` for malformed options,
/// `InputError` for an array or parameters that do not fit, `NoGpuError`,
/// `ExecutionError`. The GIL is released while compiling and running.
#[pyfunction]
#[pyo3(signature = (
    x, *, mode, kernel, stride = None, padding = None, pads = None, dilation = None,
    ceil_mode = false, count_include_pad = false, return_indices = false, dtype = None,
    backend = "auto", max_work = None
))]
#[allow(clippy::too_many_arguments)]
pub fn pool<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    mode: &str,
    kernel: &Bound<'py, PyAny>,
    stride: Option<&Bound<'py, PyAny>>,
    padding: Option<&Bound<'py, PyAny>>,
    pads: Option<&Bound<'py, PyAny>>,
    dilation: Option<&Bound<'py, PyAny>>,
    ceil_mode: bool,
    count_include_pad: bool,
    return_indices: bool,
    dtype: Option<&str>,
    backend: &str,
    max_work: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let mode = match mode {
        "max" => PoolMode::Max,
        "avg" => PoolMode::Avg,
        _ => {
            return Err(errors::usage(format!(
                "mode={mode:?}: expected \"max\" or \"avg\""
            )));
        }
    };
    let bf16 = bf16_flag(dtype)?;
    let choice = backend::choice(backend)?;
    let opts = PoolOptions {
        stride: axes("stride", stride)?,
        padding: axes("padding", padding)?,
        pads: axes("pads", pads)?,
        dilation: axes("dilation", dilation)?,
        ceil_mode,
        count_include_pad,
        return_indices,
        ..PoolOptions::new(mode, axes("kernel", Some(kernel))?.unwrap_or_default())
    };
    let given = |option: &str| {
        let v = match option {
            "kernel" => Some(kernel),
            "stride" => stride,
            "padding" => padding,
            "pads" => pads,
            _ => dilation,
        };
        (option.to_string(), v.cloned())
    };
    let x = arrays::to_array(x, "x")?;
    let bf16 = bf16 || x.bf16;
    run(py, x.npy, bf16, &opts, &given, choice, max_work, false)
}

/// Compiles and runs the pooling `opts` describe on `npy` (bf16 bits with
/// `bf16`), with the GIL released: `tpb-emu pool`'s path. `given` is the
/// name and value an option was given as (for messages); with `unbatch`,
/// the outputs lose their first axis (a batch of one added to the input).
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    npy: tpb_emu::npy::Npy,
    bf16: bool,
    opts: &PoolOptions,
    given: &Given<'_, 'py>,
    choice: BackendChoice,
    max_work: Option<u64>,
    unbatch: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let rank = npy.shape.len();
    let params = opts.to_pool(rank).map_err(|e| match e {
        OptionError::Mode { option, mode } => {
            errors::usage(format!("{option}=True needs mode={:?}", mode.name()))
        }
        OptionError::Count { option, expected } => {
            let (name, value) = given(option);
            let value = value.map_or(Ok(String::new()), |g| g.repr().map(|r| r.to_string()));
            errors::usage(format!("{name}={}: {expected}", value.unwrap_or_default()))
        }
        e => errors::usage(e.to_string()),
    })?;
    let tensor = Tensor::from_npy(npy, bf16).map_err(|why| errors::input(format!("x: {why}")))?;
    let max_work = max_work.unwrap_or(tpb_emu::limits::DEFAULT_MAX_WORK);
    let (y, indices) = py.detach(move || -> Result<Pooled, Failure> {
        let compiled = frontend::compile_owned(&params, tensor)
            .map_err(|e| Failure::new(Family::Input, format!("x: {e}")))?;
        let backend = backend::open(choice, true)?;
        let mut exec = backend.executor(compiled.program.arch)?;
        let out = compiled
            .run_owned(exec.as_mut(), max_work)
            .map_err(|e| Failure::new(Family::Exec, e.to_string()))?;
        Ok((out.output, out.indices))
    })?;
    let shape = if unbatch {
        y.shape[1..].to_vec()
    } else {
        y.shape.clone()
    };
    let out = arrays::from_bytes(py, y.dtype, &shape, y.data.into_vec())?;
    match indices {
        None => Ok(out),
        Some(idx) => {
            let bytes: Vec<u8> = idx.iter().flat_map(|v| v.to_le_bytes()).collect();
            let idx = arrays::from_bytes(py, Dtype::INT64, &shape, bytes)?;
            Ok((out, idx).into_pyobject(py)?.into_any())
        }
    }
}

/// The `torch.nn.functional` pooling functions: one body for the six.
struct Torch<'a, 'py> {
    /// The function's name, for messages.
    name: &'static str,
    /// Spatial axes: 1, 2 or 3.
    spatial: usize,
    mode: PoolMode,
    x: &'a Bound<'py, PyAny>,
    kernel_size: &'a Bound<'py, PyAny>,
    stride: Option<&'a Bound<'py, PyAny>>,
    padding: &'a Bound<'py, PyAny>,
    dilation: Option<&'a Bound<'py, PyAny>>,
    ceil_mode: bool,
    count_include_pad: bool,
    return_indices: bool,
    dtype: Option<&'a str>,
    backend: &'a str,
    max_work: Option<u64>,
}

/// The axes' names of an input of `spatial` axes (`"N×C×H×W"`), and without N.
fn layout(spatial: usize) -> (&'static str, &'static str) {
    match spatial {
        1 => ("N×C×L", "C×L"),
        2 => ("N×C×H×W", "C×H×W"),
        _ => ("N×C×D×H×W", "C×D×H×W"),
    }
}

impl<'py> Torch<'_, 'py> {
    fn run(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let choice = backend::choice(self.backend)?;
        let bf16 = bf16_flag(self.dtype)?;
        // An empty stride is PyTorch's "the kernel", as None.
        let stride = self.stride.filter(|s| s.len().map_or(true, |n| n > 0));
        let opts = PoolOptions {
            stride: axes("stride", stride)?,
            padding: axes("padding", Some(self.padding))?,
            dilation: axes("dilation", self.dilation)?,
            ceil_mode: self.ceil_mode,
            count_include_pad: self.count_include_pad,
            return_indices: self.return_indices,
            ..PoolOptions::new(
                self.mode,
                axes("kernel_size", Some(self.kernel_size))?.unwrap_or_default(),
            )
        };
        let mut x = arrays::to_array(self.x, "x")?;
        let rank = x.npy.shape.len();
        let unbatch = rank == self.spatial + 1;
        if unbatch {
            x.npy.shape.insert(0, 1);
        } else if rank != self.spatial + 2 {
            let (batched, single) = layout(self.spatial);
            return Err(errors::input(format!(
                "x: {} takes an {batched} (or {single}) array, not one of shape {:?}",
                self.name, x.npy.shape
            )));
        }
        let given = |option: &str| {
            let (name, v) = match option {
                "kernel" => ("kernel_size", Some(self.kernel_size)),
                "stride" => ("stride", stride),
                "padding" => ("padding", Some(self.padding)),
                _ => ("dilation", self.dilation),
            };
            (name.to_string(), v.cloned())
        };
        let bf16 = bf16 || x.bf16;
        run(
            py,
            x.npy,
            bf16,
            &opts,
            &given,
            choice,
            self.max_work,
            unbatch,
        )
    }
}

/// `dtype="bf16"`: a uint16 array holding bf16 bits; None: the array's.
fn bf16_flag(dtype: Option<&str>) -> PyResult<bool> {
    match dtype {
        None => Ok(false),
        Some("bf16") => Ok(true),
        Some(d) => Err(errors::usage(format!(
            "dtype={d:?}: only \"bf16\" (a uint16 array of bf16 bits); other dtypes are the array's"
        ))),
    }
}

/// `divisor_override`: refused, with why.
fn no_divisor(name: &str, d: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match d.filter(|d| !d.is_none()) {
        None => Ok(()),
        Some(d) => Err(errors::usage(format!(
            "{name}: divisor_override={d} is not supported: the Pool engine divides a window's sum \
             by its tap count (count_include_pad=True: the whole window; False: the taps inside \
             the input)"
        ))),
    }
}

macro_rules! max_pool {
    ($fn:ident, $name:literal, $spatial:literal, $doc:literal) => {
        #[doc = $doc]
        ///
        /// `x`: float32, float16, uint8 or `ml_dtypes.bfloat16` (or uint16
        /// bf16 bits with `dtype="bf16"`), batched or not. `kernel_size`,
        /// `stride` (default: the kernel), `padding` (symmetric, each pad at
        /// most half the effective kernel) and `dilation`: one integer or one
        /// per spatial axis. Returns the output (the input's dtype), or
        /// `(output, indices)` with `return_indices` (int64, flat within each
        /// plane, as PyTorch's). `backend`: "cpu", "gpu" or "auto";
        /// `max_work`: the work budget. What `tpb-emu pool --mode max` does,
        /// bit for bit; the GIL is released while it runs.
        #[pyfunction]
        #[pyo3(signature = (
            input, kernel_size, stride = None, padding = None, dilation = None, ceil_mode = false,
            return_indices = false, *, dtype = None, backend = "auto", max_work = None
        ))]
        #[allow(clippy::too_many_arguments)]
        pub fn $fn<'py>(
            py: Python<'py>,
            input: &Bound<'py, PyAny>,
            kernel_size: &Bound<'py, PyAny>,
            stride: Option<&Bound<'py, PyAny>>,
            padding: Option<&Bound<'py, PyAny>>,
            dilation: Option<&Bound<'py, PyAny>>,
            ceil_mode: bool,
            return_indices: bool,
            dtype: Option<&str>,
            backend: &str,
            max_work: Option<u64>,
        ) -> PyResult<Bound<'py, PyAny>> {
            let zero = 0u32.into_pyobject(py)?.into_any();
            Torch {
                name: $name,
                spatial: $spatial,
                mode: PoolMode::Max,
                x: input,
                kernel_size,
                stride,
                padding: padding.unwrap_or(&zero),
                dilation,
                ceil_mode,
                count_include_pad: false,
                return_indices,
                dtype,
                backend,
                max_work,
            }
            .run(py)
        }
    };
}

macro_rules! avg_pool {
    ($fn:ident, $name:literal, $spatial:literal, $doc:literal) => {
        #[doc = $doc]
        ///
        /// `x`: float32, float16, uint8 or `ml_dtypes.bfloat16` (or uint16
        /// bf16 bits with `dtype="bf16"`), batched or not. `kernel_size`,
        /// `stride` (default: the kernel) and `padding` (symmetric, each pad
        /// at most half the kernel): one integer or one per spatial axis.
        /// `count_include_pad` (PyTorch's default, True) divides by the whole
        /// window, False by the taps inside the input; `divisor_override` is
        /// refused (`UsageError`). Returns the output (the input's dtype).
        /// What `tpb-emu pool --mode avg` does, bit for bit; the GIL is
        /// released while it runs.
        #[pyfunction]
        #[pyo3(signature = (
            input, kernel_size, stride = None, padding = None, ceil_mode = false,
            count_include_pad = true, divisor_override = None, *, dtype = None, backend = "auto",
            max_work = None
        ))]
        #[allow(clippy::too_many_arguments)]
        pub fn $fn<'py>(
            py: Python<'py>,
            input: &Bound<'py, PyAny>,
            kernel_size: &Bound<'py, PyAny>,
            stride: Option<&Bound<'py, PyAny>>,
            padding: Option<&Bound<'py, PyAny>>,
            ceil_mode: bool,
            count_include_pad: bool,
            divisor_override: Option<&Bound<'py, PyAny>>,
            dtype: Option<&str>,
            backend: &str,
            max_work: Option<u64>,
        ) -> PyResult<Bound<'py, PyAny>> {
            no_divisor($name, divisor_override)?;
            let zero = 0u32.into_pyobject(py)?.into_any();
            Torch {
                name: $name,
                spatial: $spatial,
                mode: PoolMode::Avg,
                x: input,
                kernel_size,
                stride,
                padding: padding.unwrap_or(&zero),
                dilation: None,
                ceil_mode,
                count_include_pad,
                return_indices: false,
                dtype,
                backend,
                max_work,
            }
            .run(py)
        }
    };
}

max_pool!(
    max_pool1d,
    "max_pool1d",
    1,
    "`torch.nn.functional.max_pool1d` on the emulator: an N×C×L (or C×L) array."
);
max_pool!(
    max_pool2d,
    "max_pool2d",
    2,
    "`torch.nn.functional.max_pool2d` on the emulator: an N×C×H×W (or C×H×W) array."
);
max_pool!(
    max_pool3d,
    "max_pool3d",
    3,
    "`torch.nn.functional.max_pool3d` on the emulator: an N×C×D×H×W (or C×D×H×W) array."
);
avg_pool!(
    avg_pool1d,
    "avg_pool1d",
    1,
    "`torch.nn.functional.avg_pool1d` on the emulator: an N×C×L (or C×L) array."
);
avg_pool!(
    avg_pool2d,
    "avg_pool2d",
    2,
    "`torch.nn.functional.avg_pool2d` on the emulator: an N×C×H×W (or C×H×W) array."
);
avg_pool!(
    avg_pool3d,
    "avg_pool3d",
    3,
    "`torch.nn.functional.avg_pool3d` on the emulator: an N×C×D×H×W (or C×D×H×W) array."
);
