//! NumPy arrays in and out: an array becomes the library's [`Npy`] (its
//! element kind and size, dtype string, shape, little-endian C-order
//! bytes), exactly what the CLI has after reading an `.npy`, with the same
//! dtype rule ([`tpb_emu::npy::check_elements`]); outputs become arrays of
//! the dtype the CLI writes.
//!
//! bfloat16: an `ml_dtypes.bfloat16` array is taken as its bits (a uint16
//! `.npy` with `--dtype bf16` for the CLI), and a bf16 output is returned as
//! `ml_dtypes.bfloat16` when `ml_dtypes` can be imported, else as uint16
//! bits.

use crate::errors;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;
use tpb_emu::isa::enums::Dtype;
use tpb_emu::npy::{ElemKind, Npy, check_elements, npy_descr};

/// An array as the library takes it, and whether it held bfloat16.
pub struct Array {
    /// Shape, element kind and size, bytes (a bfloat16 array's as uint16).
    pub npy: Npy,
    /// The array was `ml_dtypes.bfloat16`.
    pub bf16: bool,
}

/// `ml_dtypes.bfloat16`, or None when `ml_dtypes` cannot be imported
/// (looked up once).
fn bfloat16(py: Python<'_>) -> Option<&Bound<'_, PyAny>> {
    static BF16: PyOnceLock<Option<Py<PyAny>>> = PyOnceLock::new();
    BF16.get_or_init(py, || {
        py.import("ml_dtypes")
            .and_then(|m| m.getattr("bfloat16"))
            .map(Bound::unbind)
            .ok()
    })
    .as_ref()
    .map(|t| t.bind(py))
}

/// `obj` (a NumPy array, or anything `numpy.asarray` takes) as an [`Array`]:
/// copied once into little-endian C order (only the copy is touched; the
/// array is never modified). An element type the CLI does not read from an
/// `.npy` (float64, uint64, complex, strings, …) or a 0-d array is an
/// `InputError` naming `what`.
pub fn to_array(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Array> {
    let py = obj.py();
    let np = py.import("numpy")?;
    let mut arr = np.call_method1("asarray", (obj,))?;
    let mut dtype = arr.getattr("dtype")?;
    let bf16 = match bfloat16(py) {
        Some(t) => dtype.eq(t)?,
        None => false,
    };
    if bf16 {
        arr = arr.call_method1("view", ("<u2",))?;
        dtype = arr.getattr("dtype")?;
    }
    let descr: String = if bf16 {
        "bfloat16".into()
    } else {
        dtype.getattr("str")?.extract()?
    };
    let kind = match dtype.getattr("kind")?.extract::<String>()?.as_str() {
        "f" => Some(ElemKind::Float),
        "i" => Some(ElemKind::Int),
        "u" => Some(ElemKind::Uint),
        _ => None,
    };
    let elem: usize = dtype.getattr("itemsize")?.extract()?;
    let shape: Vec<u64> = arr.getattr("shape")?.extract()?;
    check_elements(&descr, kind, elem, &shape)
        .map_err(|e| errors::input(format!("{what}: {e}")))?;
    let little = dtype.call_method1("newbyteorder", ("<",))?;
    let c = np.call_method1("ascontiguousarray", (arr, little))?;
    let flat = c
        .call_method1("reshape", (-1,))?
        .call_method1("view", ("u1",))?;
    let flat: PyReadonlyArray1<'_, u8> = flat.extract()?;
    let data = flat
        .as_slice()
        .map_err(|e| errors::input(format!("{what}: {e}")))?
        .to_vec();
    Ok(Array {
        npy: Npy {
            shape,
            elem,
            kind: kind.unwrap_or(ElemKind::Uint),
            descr,
            data: data.into(),
        },
        bf16,
    })
}

/// A new array of `dtype` and `shape` holding `data` (little-endian, C
/// order): the dtype `tpb-emu` writes to an `.npy`, but bf16 as
/// `ml_dtypes.bfloat16` when it can be imported.
pub fn from_bytes<'py>(
    py: Python<'py>,
    dtype: Dtype,
    shape: &[u64],
    data: Vec<u8>,
) -> PyResult<Bound<'py, PyAny>> {
    let shape = PyTuple::new(py, shape)?;
    let flat = PyArray1::from_vec(py, data);
    let typed = match (dtype, bfloat16(py)) {
        (Dtype::BFLOAT16, Some(t)) => flat.call_method1("view", (t,))?,
        _ => flat.call_method1("view", (npy_descr(dtype),))?,
    };
    typed.call_method1("reshape", (shape,))
}
