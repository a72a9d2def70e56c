//! `import tpb_emu`: the Python bindings of the tpb-emu library (issue #34).
//!
//! The module holds no emulator logic of its own: every check, conversion
//! and message is the library's, the same the `tpb-emu` CLI uses
//! (`tpb_emu::model` for models, `tpb_emu::check` for streams,
//! `tpb_emu::frontend` for pooling, `tpb_emu::model::backend` for backends,
//! `tpb_emu::model::exec` for `Device`, `tpb_emu::viz` for pictures). This
//! crate only converts Python objects and NumPy arrays to the library's
//! types and back, releases the GIL around the work, and maps each error
//! to the exception of its exit-code family.

mod arrays;
mod backend;
mod device;
mod errors;
mod model;
mod pool;
mod stream;
mod viz;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn tpb_emu(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(stream::validate, m)?)?;
    m.add_function(wrap_pyfunction!(stream::check, m)?)?;
    m.add_function(wrap_pyfunction!(stream::disasm, m)?)?;
    m.add_function(wrap_pyfunction!(stream::asm, m)?)?;
    m.add_class::<model::Neff>()?;
    m.add_class::<model::Program>()?;
    m.add_class::<device::Device>()?;
    m.add_function(wrap_pyfunction!(pool::pool, m)?)?;
    m.add_function(wrap_pyfunction!(pool::max_pool1d, m)?)?;
    m.add_function(wrap_pyfunction!(pool::max_pool2d, m)?)?;
    m.add_function(wrap_pyfunction!(pool::max_pool3d, m)?)?;
    m.add_function(wrap_pyfunction!(pool::avg_pool1d, m)?)?;
    m.add_function(wrap_pyfunction!(pool::avg_pool2d, m)?)?;
    m.add_function(wrap_pyfunction!(pool::avg_pool3d, m)?)?;
    m.add_function(wrap_pyfunction!(viz::to_png, m)?)?;
    Ok(())
}
