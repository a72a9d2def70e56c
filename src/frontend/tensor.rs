//! The front end's arrays: a dtype, a shape and little-endian C-order bytes.

use super::{DTYPES, FrontendError, Unsupported};
use crate::device::convert::{InType, load_f32};
use crate::files::HostBytes;
use crate::isa::enums::Dtype;
use crate::npy::{ElemKind, NotPooled, Npy, NpyError, read_npy};
use std::path::Path;

/// An array of one of the front end's dtypes ([`DTYPES`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    /// FP32, FP16, BFLOAT16 or UINT8.
    pub dtype: Dtype,
    /// C order.
    pub shape: Vec<u64>,
    /// Little-endian elements, C order (a large `.npy`'s are shared with
    /// the mapped file, [`read_tensor`]).
    pub data: HostBytes,
}

impl Tensor {
    /// An fp32 tensor.
    pub fn from_f32(shape: &[u64], values: &[f32]) -> Tensor {
        Tensor {
            dtype: Dtype::FP32,
            shape: shape.to_vec(),
            data: values
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>()
                .into(),
        }
    }

    /// Checks that the dtype is one of [`DTYPES`] and the bytes match the shape.
    pub fn check(&self) -> Result<(), FrontendError> {
        if !DTYPES.contains(&self.dtype) {
            return Err(FrontendError::Bad(Unsupported::Dtype { dtype: self.dtype }));
        }
        let n = self.elements();
        if n.checked_mul(self.elem() as u64) != Some(self.data.len() as u64) {
            return Err(FrontendError::Bad(Unsupported::Bytes {
                len: self.data.len(),
                shape: self.shape.clone(),
                dtype: self.dtype,
            }));
        }
        Ok(())
    }

    /// Bytes per element.
    pub fn elem(&self) -> usize {
        self.dtype.size().unwrap_or(1) as usize
    }

    /// Elements (saturating).
    pub fn elements(&self) -> u64 {
        self.shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .unwrap_or(u64::MAX)
    }

    /// Element `i`'s raw bits.
    pub fn raw(&self, i: usize) -> u64 {
        let e = self.elem();
        self.data[i * e..(i + 1) * e]
            .iter()
            .rev()
            .fold(0u64, |a, &b| (a << 8) | b as u64)
    }

    /// Every element widened to f32 by SPEC §6's load rule.
    pub fn to_f32(&self) -> Vec<f32> {
        let ty = InType::from_dtype(self.dtype).unwrap_or(InType::F32);
        (0..self.data.len() / self.elem())
            .map(|i| load_f32(ty, self.raw(i)))
            .collect()
    }
}

/// Reads an `.npy` as a front-end tensor: float32 → fp32, float16 → fp16,
/// uint8 → uint8, and uint16 → bf16 bits when `bf16` is set (the only way
/// to give bf16: NumPy has no such dtype).
pub fn read_tensor(path: &Path, bf16: bool) -> Result<Tensor, NpyError> {
    let npy = read_npy(path)?;
    Tensor::from_npy(npy, bf16).map_err(|why| NpyError::Bad {
        path: path.to_owned(),
        why: why.into(),
    })
}

impl Tensor {
    /// An array read as a front-end tensor ([`read_tensor`]'s rule):
    /// float32 → fp32, float16 → fp16, uint8 → uint8, and uint16 → bf16
    /// bits when `bf16` is set. `Err` says why the array is not pooled.
    pub fn from_npy(npy: Npy, bf16: bool) -> Result<Tensor, NotPooled> {
        let ts = &npy.descr;
        let dtype = match (npy.kind, npy.elem, bf16) {
            (ElemKind::Uint, 2, true) => Dtype::BFLOAT16,
            (_, _, true) => return Err(NotPooled::NotBf16Bits(ts.clone())),
            (ElemKind::Float, 4, _) => Dtype::FP32,
            (ElemKind::Float, 2, _) => Dtype::FP16,
            (ElemKind::Uint, 1, _) => Dtype::UINT8,
            (ElemKind::Uint, 2, _) => return Err(NotPooled::Uint16),
            _ => return Err(NotPooled::Dtype(ts.clone())),
        };
        Ok(Tensor {
            dtype,
            shape: npy.shape,
            data: npy.data,
        })
    }
}
