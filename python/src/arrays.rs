//! NumPy arrays in and out: an array becomes the library's [`Npy`] (its
//! element kind and size, dtype string, shape, little-endian C-order
//! bytes), exactly what the CLI has after reading an `.npy`; outputs become
//! arrays of the dtype the CLI writes.

use crate::errors;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use tpb_emu::isa::enums::Dtype;
use tpb_emu::npy::{ElemKind, Npy, npy_descr};

/// `obj` (a NumPy array, or anything `numpy.asarray` takes) as an [`Npy`]:
/// copied once into little-endian C order; the array is not modified.
pub fn to_npy(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Npy> {
    let np = obj.py().import("numpy")?;
    let arr = np.call_method1("asarray", (obj,))?;
    let dtype = arr.getattr("dtype")?;
    let descr: String = dtype.getattr("str")?.extract()?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    let kind = match kind.as_str() {
        "f" => ElemKind::Float,
        "i" => ElemKind::Int,
        "u" => ElemKind::Uint,
        _ => {
            return Err(errors::input(format!(
                "{what}: an array of dtype {descr} (tpb-emu reads integers and floats)"
            )));
        }
    };
    let elem: usize = dtype.getattr("itemsize")?.extract()?;
    let shape: Vec<u64> = arr.getattr("shape")?.extract()?;
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
    Ok(Npy {
        shape,
        elem,
        kind,
        descr,
        data: data.into(),
    })
}

/// A new array of `dtype` and `shape` holding `data` (little-endian, C
/// order): the dtype `tpb-emu` writes to an `.npy` (bf16 as uint16 bits).
pub fn from_bytes<'py>(
    py: Python<'py>,
    dtype: Dtype,
    shape: &[u64],
    data: Vec<u8>,
) -> PyResult<Bound<'py, PyAny>> {
    let shape = PyTuple::new(py, shape)?;
    PyArray1::from_vec(py, data)
        .call_method1("view", (npy_descr(dtype),))?
        .call_method1("reshape", (shape,))
}
