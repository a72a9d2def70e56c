//! `pool`: framework-style max/avg pooling of an N×C×L, N×C×H×W or
//! N×C×D×H×W array, compiled by the library's front end and run on a
//! backend — what `tpb-emu pool` does, with arrays instead of files.

use crate::arrays;
use crate::errors::{self, Failure, Family};
use pyo3::prelude::*;
use tpb_emu::frontend::{self, OptionError, PoolMode, PoolOptions, Tensor};
use tpb_emu::isa::enums::Dtype;
use tpb_emu::model::backend::{self, Backend};

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
    backend = "cpu", max_work = None
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
    let bf16 = match dtype {
        None => false,
        Some("bf16") => true,
        Some(d) => {
            return Err(errors::usage(format!(
                "dtype={d:?}: only \"bf16\" (a uint16 array of bf16 bits); other dtypes are the array's"
            )));
        }
    };
    let choice = backend::choice(backend).ok_or_else(|| {
        errors::usage(format!(
            "backend={backend:?}: expected \"cpu\", \"gpu\" or \"auto\""
        ))
    })?;
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
    let npy = arrays::to_npy(x, "x")?;
    let rank = npy.shape.len();
    let params = opts.to_pool(rank).map_err(|e| match e {
        OptionError::Mode { option, mode } => {
            errors::usage(format!("{option}=True needs mode={:?}", mode.name()))
        }
        OptionError::Count { option, expected } => {
            let given = match option {
                "kernel" => Some(kernel),
                "stride" => stride,
                "padding" => padding,
                "pads" => pads,
                _ => dilation,
            };
            let given = given.map_or(Ok(String::new()), |g| g.repr().map(|r| r.to_string()));
            errors::usage(format!(
                "{option}={}: {expected}",
                given.unwrap_or_default()
            ))
        }
        e => errors::usage(e.to_string()),
    })?;
    let tensor = Tensor::from_npy(npy, bf16).map_err(|why| errors::input(format!("x: {why}")))?;
    let max_work = max_work.unwrap_or(tpb_emu::limits::DEFAULT_MAX_WORK);
    let (y, indices) = py.detach(move || -> Result<Pooled, Failure> {
        let compiled = frontend::compile_owned(&params, tensor)
            .map_err(|e| Failure::new(Family::Input, format!("x: {e}")))?;
        let backend = Backend::open(choice)?;
        let mut exec = backend.executor(compiled.program.arch)?;
        let out = compiled
            .run_owned(exec.as_mut(), max_work)
            .map_err(|e| Failure::new(Family::Exec, e.to_string()))?;
        Ok((out.output, out.indices))
    })?;
    let shape = y.shape.clone();
    let out = arrays::from_bytes(py, y.dtype, &y.shape, y.data.into_vec())?;
    match indices {
        None => Ok(out),
        Some(idx) => {
            let bytes: Vec<u8> = idx.iter().flat_map(|v| v.to_le_bytes()).collect();
            let idx = arrays::from_bytes(py, Dtype::INT64, &shape, bytes)?;
            Ok((out, idx).into_pyobject(py)?.into_any())
        }
    }
}
