//! `Device`: SBUF and PSUM of one generation that the host writes, POOL
//! streams run on, and the host reads — what `tpb-emu exec --load/--dump`
//! does in one command, kept across calls. The address syntax, the checks
//! before a run and the memory ranges are the library's
//! (`tpb_emu::model::exec`), shared with the CLI.

use crate::arrays;
use crate::backend;
use crate::errors::{self, Failure};
use crate::stream::{self, invalid};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use std::sync::Mutex;
use tpb_emu::device::gpu::BackendChoice;
use tpb_emu::device::{DeviceMemory, NoTrace, Trace};
use tpb_emu::isa::tensor::{Location, Region};
use tpb_emu::model::exec::{self as host, HostError, View};
use tpb_emu::{Arch, Program};

/// The place `addr` names: `"sbuf:P:OFF"`, `"psum:P:OFF"` or a hex ADDR4
/// (as `exec --load`/`--dump` spell it), or a tuple `(region, partition,
/// offset)` with region `"sbuf"` or `"psum"`.
fn location(addr: &Bound<'_, PyAny>) -> PyResult<Location> {
    if let Ok(s) = addr.cast::<PyString>() {
        return host::parse_addr(&s.extract::<String>()?).map_err(|e| Failure::from(e).into());
    }
    let bad = || {
        errors::usage(format!(
            "addr={}: expected \"sbuf:P:OFF\", \"psum:P:OFF\", a hex ADDR4, or (region, partition, offset)",
            addr.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    };
    let t = addr.cast::<PyTuple>().map_err(|_| bad())?;
    let (region, partition, offset): (String, u32, u32) = t.extract().map_err(|_| bad())?;
    let region = match region.as_str() {
        "sbuf" => Region::Sbuf,
        "psum" => Region::Psum,
        _ => return Err(bad()),
    };
    host::location(region, partition, offset).map_err(|why| errors::usage(format!("addr: {why}")))
}

/// A shape: a tuple or list of axes, one integer, or `"AxBxC"`.
fn shape(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return host::parse_shape(&s.extract::<String>()?).map_err(|e| Failure::from(e).into());
    }
    let shape: Vec<u64> = match obj.extract::<u64>() {
        Ok(n) => vec![n],
        Err(_) => obj.extract().map_err(|_| {
            errors::usage(format!(
                "shape={}: expected a tuple of axes, each >= 1",
                obj.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?,
    };
    host::check_shape(&shape).map_err(errors::usage)?;
    Ok(shape)
}

/// The emulated device's SBUF and PSUM for `arch`, zero at start, and the
/// backend its streams run on (`"cpu"`, `"gpu"` or `"auto"`; the GPU is
/// opened on the first `exec` that needs it, once per process).
///
/// ```python
/// dev = tpb_emu.Device()
/// dev.write("sbuf:0:0", x)                 # exec --load sbuf:0:0=x.npy
/// dev.exec("pool.bin")                     # exec pool.bin
/// y = dev.read("sbuf:0:0x100", "fp32", (128, 4))  # --dump sbuf:0:0x100:fp32:128x4=y.npy
/// ```
///
/// A Device may be used from several threads; its calls take turns.
#[pyclass(frozen, module = "tpb_emu")]
pub struct Device {
    arch: Arch,
    choice: BackendChoice,
    backend_name: String,
    mem: Mutex<DeviceMemory>,
}

impl Device {
    fn mem(&self) -> std::sync::MutexGuard<'_, DeviceMemory> {
        // A panic while it was held cannot leave it half-written in a way
        // that matters more than any failed run: use it as it is.
        self.mem
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[pymethods]
impl Device {
    #[new]
    #[pyo3(signature = (arch = "cayman", backend = "auto"))]
    fn new(arch: &str, backend: &str) -> PyResult<Device> {
        let a = Arch::from_name(arch).ok_or_else(|| {
            let names: Vec<&str> = Arch::ALL.iter().map(|a| a.name()).collect();
            errors::usage(format!(
                "arch={arch:?}: expected one of {}",
                names.join(", ")
            ))
        })?;
        Ok(Device {
            arch: a,
            choice: backend::choice(backend)?,
            backend_name: backend.to_string(),
            mem: Mutex::new(DeviceMemory::new(a)),
        })
    }

    /// The generation (`cayman`, …).
    #[getter]
    fn arch(&self) -> &'static str {
        self.arch.name()
    }

    /// The backend asked for (`cpu`, `gpu` or `auto`).
    #[getter]
    fn backend(&self) -> &str {
        &self.backend_name
    }

    /// Writes `array`'s elements (little-endian, C order) at `addr`: its
    /// first axis is lanes, from the address's partition on; the other axes
    /// are row-major bytes from the offset in each lane (`exec --load`).
    /// Takes the dtypes `exec --load` reads (uint8, int8, uint16, int16,
    /// uint32, int32, int64, float16, float32; bfloat16 as its bits). Raises
    /// `UsageError` for a malformed address, `InputError` for another dtype
    /// or a range outside active memory.
    fn write(
        &self,
        py: Python<'_>,
        addr: &Bound<'_, PyAny>,
        array: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let at = location(addr)?;
        let a = arrays::to_array(array, "array")?;
        let what = addr.str()?.to_string();
        py.detach(|| host::load(&mut self.mem(), at, &a.npy.shape, &a.npy.data))
            .map_err(|e| errors::input(format!("write({what}): {e}")))
    }

    /// Reads `shape` elements of `dtype` at `addr` into a new array (`exec
    /// --dump ADDR:DTYPE:SHAPE`): `dtype` is a SPEC text name (`fp32`,
    /// `fp16`, `bf16`, `uint8`, `int32`, …; bf16 comes back as
    /// `ml_dtypes.bfloat16` or uint16 bits, fp32r as float32, the fp8 types
    /// as uint8 bits), `shape` a tuple (axis 0 is lanes) or `"128x4"`.
    /// Raises `UsageError` for a malformed address, dtype or shape,
    /// `InputError` for a range outside active memory.
    fn read<'py>(
        &self,
        py: Python<'py>,
        addr: &Bound<'py, PyAny>,
        dtype: &str,
        shape: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let view = View {
            at: location(addr)?,
            dtype: host::parse_dtype(dtype)
                .ok_or_else(|| errors::usage(format!("dtype={dtype:?}: unknown DTYPE")))?,
            shape: self::shape(shape)?,
        };
        let what = addr.str()?.to_string();
        let data = py
            .detach(|| view.read(&self.mem()))
            .map_err(|e| errors::input(format!("read({what}): {e}")))?;
        arrays::from_bytes(py, view.dtype, &view.shape, data)
    }

    /// Validates `stream` (bytes, a buffer, or a path to raw 64-byte
    /// records) for the POOL engine and runs every record in order on this
    /// device's memory, as `tpb-emu exec` does: `InvalidRecord` at the first
    /// invalid record (nothing runs), `ExecutionError` for a record with a
    /// wait or update or that is not a POOL datapath record, or a program
    /// past `max_work` elements (nothing runs), or a failure while running
    /// (the memory is then as the run left it). Returns the dispatch trace's
    /// lines with `trace=True` (what `exec --trace` prints), else `[]`.
    /// The GIL is released while it runs.
    #[pyo3(signature = (stream, *, trace = false, max_work = None))]
    fn exec(
        &self,
        py: Python<'_>,
        stream: &Bound<'_, PyAny>,
        trace: bool,
        max_work: Option<u64>,
    ) -> PyResult<Vec<String>> {
        let (bytes, _) = stream::read(stream)?;
        let budget = max_work.unwrap_or(tpb_emu::limits::DEFAULT_MAX_WORK);
        let program: Program = match py.detach(|| host::program(&bytes, self.arch, budget)) {
            Ok(p) => p,
            Err(HostError::Invalid(inv)) => return Err(invalid(py, &inv)),
            Err(e) => return Err(Failure::from(e).into()),
        };
        drop(bytes);
        let lines = py.detach(|| -> Result<Vec<String>, Failure> {
            let backend = backend::open(self.choice, !program.records().is_empty())?;
            let mut exec = backend.executor(self.arch)?;
            let (mut lines, mut none) = (Vec::new(), NoTrace);
            let sink: &mut dyn Trace = if trace { &mut lines } else { &mut none };
            host::run(exec.as_mut(), &program, &mut self.mem(), sink)?;
            Ok(lines)
        })?;
        Ok(lines)
    }

    fn __repr__(&self) -> String {
        format!(
            "Device(arch={:?}, backend={:?})",
            self.arch.name(),
            self.backend_name
        )
    }
}
