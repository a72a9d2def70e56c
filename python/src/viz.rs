//! `to_png`: a montage of an array's channel planes, drawn by the library's
//! `viz` as `tpb-emu viz` draws an `.npy`.

use crate::arrays;
use crate::errors::{self, Failure};
use pyo3::prelude::*;
use std::path::PathBuf;
use tpb_emu::files::Outputs;
use tpb_emu::viz::{self, Cmap, Normalize, Options, Planes};

/// Draws `array` (H×W, C×H×W or N×C×H×W; any dtype `tpb-emu viz` reads,
/// bfloat16 as its float32 values) as a PNG montage of its channel planes
/// at `path`, as `tpb-emu viz ARRAY.npy -o PATH` does: `cmap` is
/// "viridis", "magma", "diverging" or None (the CLI's default: diverging
/// for data with negative values, else viridis); `normalize` is "channel"
/// (each plane on its own range) or "global"; `argmax=True` draws the
/// values as window positions in categorical colours (`--argmax`). At most
/// 1,024 planes are drawn. The file appears whole or not at all. Raises
/// `UsageError` for an unknown option, `InputError` for an array it cannot
/// draw or a path it cannot write.
#[pyfunction]
#[pyo3(signature = (array, path, *, cmap = Some("viridis"), normalize = "channel", argmax = false))]
pub fn to_png(
    py: Python<'_>,
    array: &Bound<'_, PyAny>,
    path: PathBuf,
    cmap: Option<&str>,
    normalize: &str,
    argmax: bool,
) -> PyResult<()> {
    let cmap = match cmap {
        None => None,
        Some("viridis") => Some(Cmap::Viridis),
        Some("magma") => Some(Cmap::Magma),
        Some("diverging") => Some(Cmap::Diverging),
        Some(c) => {
            return Err(errors::usage(format!(
                "cmap={c:?}: expected \"viridis\", \"magma\", \"diverging\" or None"
            )));
        }
    };
    let normalize = match normalize {
        "channel" => Normalize::Channel,
        "global" => Normalize::Global,
        n => {
            return Err(errors::usage(format!(
                "normalize={n:?}: expected \"channel\" or \"global\""
            )));
        }
    };
    let mut a = arrays::to_array(array, "array")?;
    if a.bf16 {
        // Drawn by value: bf16 bits widened to float32 exactly.
        let f32s: Vec<u8> = a
            .npy
            .data
            .chunks_exact(2)
            .flat_map(|b| [0, 0, b[0], b[1]])
            .collect();
        a.npy = tpb_emu::npy::Npy {
            elem: 4,
            kind: tpb_emu::npy::ElemKind::Float,
            descr: "<f4".into(),
            data: f32s.into(),
            ..a.npy
        };
    }
    let opts = Options { cmap, normalize };
    py.detach(|| -> Result<(), Failure> {
        let (shape, values, _) = viz::values_of(&a.npy);
        let planes = Planes::new(&shape, values)
            .map_err(|e| Failure::new(errors::Family::Input, format!("array: {e}")))?;
        let img = if argmax {
            viz::argmax_map(&planes)
        } else {
            viz::montage(&planes, &opts)
        };
        let png = viz::png_bytes(&img)
            .map_err(|e| Failure::new(errors::Family::Exec, format!("{}: {e}", path.display())))?;
        let mut outs = Outputs::new();
        outs.write(&path, &png)?;
        outs.commit()?;
        Ok(())
    })?;
    Ok(())
}
