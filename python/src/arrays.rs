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
use std::sync::Arc;
use tpb_emu::files::{HostBytes, Input};
use tpb_emu::isa::enums::Dtype;
use tpb_emu::npy::{ElemKind, Npy, check_elements, npy_descr};

/// Arrays of at least this many bytes are lent to the library instead of
/// copied (a copy of a small array costs less than the bookkeeping).
const BORROW_FROM: usize = 1 << 16;

/// A C-contiguous little-endian array's bytes, lent to the library: the
/// Python object that owns them and where they are. The library reads them
/// with the GIL released; the caller's array is never written.
struct Lent {
    _owner: Py<PyAny>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: the bytes are only read, and `_owner` keeps them alive and in place
// for as long as the `Lent` exists (dropping a `Py` without the GIL defers its
// decref to pyo3's pool). A Python thread writing into the array during a run
// races with the read, as it would with any C extension that releases the GIL.
#[allow(unsafe_code)]
unsafe impl Send for Lent {}
// SAFETY: as for Send: shared access is read-only.
#[allow(unsafe_code)]
unsafe impl Sync for Lent {}

impl AsRef<[u8]> for Lent {
    #[allow(unsafe_code)]
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `ptr..ptr + len` is the owner's buffer, alive while `_owner` is.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

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
/// its bytes in little-endian C order, copied once only when the array is
/// not already so laid out (or is small); a large C-contiguous little-endian
/// array is lent without a copy. The array is never modified. An element type the CLI does not read from an
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
    let bytes = flat
        .as_slice()
        .map_err(|e| errors::input(format!("{what}: {e}")))?;
    let data = if bytes.len() >= BORROW_FROM {
        // Lent, not copied: the flat view keeps the array's buffer alive (and NumPy cannot
        // resize a buffer another array views); the library only reads it.
        let (ptr, len) = (bytes.as_ptr(), bytes.len());
        let lent = Lent {
            _owner: flat.as_any().clone().unbind(),
            ptr,
            len,
        };
        HostBytes::shared(Arc::new(Input::Borrowed(Box::new(lent))), 0..len)
            .ok_or_else(|| errors::input(format!("{what}: cannot lend the array")))?
    } else {
        bytes.to_vec().into()
    };
    Ok(Array {
        npy: Npy {
            shape,
            elem,
            kind: kind.unwrap_or(ElemKind::Uint),
            descr,
            data,
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
