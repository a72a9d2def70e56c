//! `Neff` and `Program`: a NEFF model or a manifest program, loaded and run
//! through the library's model API (`tpb_emu::model`), the path
//! `tpb-emu run` takes.

use crate::arrays;
use crate::backend;
use crate::errors::{self, Failure};
use crate::stream::is_path;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use tpb_emu::files::{HostBytes, Outputs};
use tpb_emu::isa::enums::Dtype;
use tpb_emu::model::{LoadOptions, Model, ModelError, RunOptions, TensorInfo, is_neff};
use tpb_emu::{Arch, device::NoTrace};

/// `(name, dtype, shape)` of each tensor: the dtype as the CLI names it
/// (`fp32`, `bfloat16`, …).
fn describe<'py>(py: Python<'py>, ts: &[TensorInfo]) -> PyResult<Vec<Bound<'py, PyTuple>>> {
    ts.iter()
        .map(|t| {
            let shape = PyTuple::new(py, &t.shape)?;
            PyTuple::new(
                py,
                [
                    t.name.clone().into_pyobject(py)?.into_any(),
                    t.dtype.to_string().into_pyobject(py)?.into_any(),
                    shape.into_any(),
                ],
            )
        })
        .collect()
}

/// One output of a run: name, dtype, shape, bytes.
type Output = (String, Dtype, Vec<u64>, Vec<u8>);

/// Runs `model` with `inputs` (a dict) and `named` (keyword arguments):
/// every array checked by the library as `run --input` checks an `.npy`,
/// then the run on `backend` with the GIL released; with `timeline`, the
/// run's timeline written there as `run --timeline` writes it.
fn run<'py>(
    py: Python<'py>,
    model: &Model,
    inputs: Option<&Bound<'py, PyDict>>,
    named: Option<&Bound<'py, PyDict>>,
    backend_name: &str,
    max_work: Option<u64>,
    timeline: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let choice = backend::choice(backend_name)?;
    let mut data: HashMap<String, HostBytes> = HashMap::new();
    for d in [inputs, named].into_iter().flatten() {
        for (k, v) in d.iter() {
            let name: String = k.extract()?;
            let info = model.check_name(&name).map_err(fail)?;
            if data.contains_key(&name) {
                return Err(errors::usage(format!("input {name} is given twice")));
            }
            let a = arrays::to_array(&v, &format!("input {name}"))?;
            if a.bf16 && info.dtype != Dtype::BFLOAT16 {
                return Err(errors::input(format!(
                    "--input {name}: the array holds bfloat16, the input needs {} ({})",
                    tpb_emu::npy::npy_descr(info.dtype),
                    info.dtype
                )));
            }
            model
                .check_array(&name, Path::new("the array"), &a.npy)
                .map_err(fail)?;
            data.insert(name, a.npy.data);
        }
    }
    let opts = RunOptions {
        max_work: max_work.unwrap_or(tpb_emu::limits::DEFAULT_MAX_WORK),
        totals: timeline.is_some(),
        slices: timeline.is_some(),
        ..RunOptions::default()
    };
    // A Ctrl-C (any pending signal whose handler raises) seen between
    // records stops the run; the handler's exception is raised, and no
    // output is returned or written.
    let mut raised: Option<PyErr> = None;
    let outputs = py.detach(|| -> Result<Vec<Output>, Failure> {
        let prepared = model.prepare(&data)?;
        drop(data);
        let backend = backend::open(choice, model.needs_device())?;
        let mut exec = backend.executor(model.arch())?;
        let mut signals = |_| match Python::attach(|py| py.check_signals()) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                raised = Some(e);
                ControlFlow::Break(())
            }
        };
        let finished = prepared.run_controlled(exec.as_mut(), &opts, &mut NoTrace, &mut signals);
        let finished = match (finished, raised.take()) {
            (_, Some(e)) => return Err(Failure::raised(e)),
            (f, None) => f?,
        };
        if let Some(path) = &timeline {
            let machine = finished.machine();
            if let Some(t) = machine.timeline() {
                // As `run --timeline`: written whole, or not at all.
                let mut outs = Outputs::new();
                outs.write_with(path, &mut |w| t.write_json(machine.staged(), w))?;
                outs.commit()?;
            }
        }
        // Moved out of the run's memory, not copied, where the library can (one output).
        Ok(finished
            .into_outputs()
            .into_iter()
            .map(|(t, b)| (t.name, t.dtype, t.shape, b))
            .collect())
    })?;
    let out = PyDict::new(py);
    for (name, dtype, shape, bytes) in outputs {
        out.set_item(name, arrays::from_bytes(py, dtype, &shape, bytes)?)?;
    }
    Ok(out)
}

fn fail(e: ModelError) -> PyErr {
    Failure::from(e).into()
}

/// The generation named `arch` (`--arch`).
fn arch(name: Option<&str>) -> PyResult<Option<Arch>> {
    name.map(|a| {
        Arch::from_name(a).ok_or_else(|| {
            let names: Vec<&str> = Arch::ALL.iter().map(|a| a.name()).collect();
            errors::usage(format!("arch={a:?}: expected one of {}", names.join(", ")))
        })
    })
    .transpose()
}

/// A NEFF model: loaded and checked as `tpb-emu inspect` and `run` load it
/// (the digest verified unless `verify=False`; `strict=True` enforces the
/// CAYMAN state-buffer reservation; `arch` is the generation for a target
/// written as `*`). `path_or_bytes` is a path (`str` or `os.PathLike`) or
/// the file's bytes. Raises `InputError` for a file that is not a NEFF.
#[pyclass(frozen, module = "tpb_emu")]
pub struct Neff {
    model: Model,
}

#[pymethods]
impl Neff {
    #[new]
    #[pyo3(signature = (path_or_bytes, *, verify = true, strict = false, arch = None))]
    fn new(
        py: Python<'_>,
        path_or_bytes: &Bound<'_, PyAny>,
        verify: bool,
        strict: bool,
        arch: Option<&str>,
    ) -> PyResult<Neff> {
        let opts = LoadOptions {
            verify,
            strict,
            arch: self::arch(arch)?,
        };
        let model = if is_path(path_or_bytes)? {
            let path: PathBuf = path_or_bytes.extract()?;
            py.detach(|| -> Result<Model, Failure> {
                if is_neff(&path) {
                    Ok(Model::open(&path, &opts)?)
                } else {
                    // Any name: the bytes decide what the file is.
                    let bytes = tpb_emu::files::read_input(&path)?;
                    Ok(Model::from_neff_bytes(
                        bytes,
                        &path.display().to_string(),
                        &opts,
                    )?)
                }
            })?
        } else {
            let bytes: Vec<u8> = if let Ok(b) = path_or_bytes.cast::<PyBytes>() {
                b.as_bytes().to_vec()
            } else {
                crate::stream::read(path_or_bytes)?.0.to_vec()
            };
            py.detach(|| Model::from_neff_bytes(bytes, "NEFF", &opts))
                .map_err(fail)?
        };
        Ok(Neff { model })
    }

    /// The public inputs: a list of `(name, dtype, shape)`, the dtype as the
    /// CLI names it (`fp32`, `bfloat16`, …; a bf16 input takes uint16 bits).
    #[getter]
    fn inputs<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        describe(py, &self.model.inputs())
    }

    /// The public outputs, `(name, dtype, shape)`, in the order `run` returns them.
    #[getter]
    fn outputs<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        describe(py, &self.model.outputs())
    }

    /// The warnings the reader gave (what `tpb-emu run` prints to stderr).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.model.warnings().to_vec()
    }

    /// The generation the model runs on (`cayman`, …).
    #[getter]
    fn arch(&self) -> &'static str {
        self.model.arch().name()
    }

    /// What `tpb-emu inspect --json` prints for this NEFF, as a dict: the
    /// header, kelf, members, engines (records, opcode histogram with what
    /// the emulator does with each opcode), variables, inputs, outputs and
    /// warnings. `file` is the path as given (`"NEFF"` for bytes).
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let n = self.model.neff().expect("a Neff holds a NEFF model");
        let text = serde_json::to_string(&tpb_emu::neff::info::info(self.model.source(), n))
            .map_err(|e| errors::input(e.to_string()))?;
        py.import("json")?.call_method1("loads", (text,))
    }

    /// Runs the model, as `tpb-emu run MODEL.neff` does, with every public
    /// input given by name — in the dict `inputs` or as keyword arguments —
    /// as a NumPy array of the input's dtype and shape (checked as the CLI
    /// checks an `.npy`; bf16 as `ml_dtypes.bfloat16` or uint16 bits).
    /// Returns the outputs by name as new arrays (bf16 as
    /// `ml_dtypes.bfloat16` when it can be imported, else uint16 bits).
    /// `backend` is "cpu", "gpu" (any adapter, lavapipe included;
    /// `NoGpuError` without one) or "auto" (a hardware GPU, else the CPU);
    /// the GPU is opened once per process and shared. `max_work` bounds the
    /// elements moved or folded (`--max-work`); `timeline` is a path where
    /// the run's Perfetto/Chrome trace-event timeline is written, as
    /// `run --timeline` writes it. The GIL is released during the run. Raises `UsageError` for an unknown, repeated or missing
    /// name, `InputError` for a wrong dtype or shape, `InvalidProgram` for
    /// a rejected program, `ExecutionError` when the run stops.
    #[pyo3(signature = (inputs = None, /, *, backend = "auto", max_work = None, timeline = None, **named))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Option<&Bound<'py, PyDict>>,
        backend: &str,
        max_work: Option<u64>,
        timeline: Option<PathBuf>,
        named: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        run(py, &self.model, inputs, named, backend, max_work, timeline)
    }

    fn __repr__(&self) -> String {
        format!("Neff({:?})", self.model.source())
    }
}

/// A program: a TOML manifest and the streams and arrays it names, loaded
/// as `tpb-emu run PROGRAM.toml` loads it. Raises `InputError` for a
/// manifest that cannot be read, `UsageError` for a `.neff` (use `Neff`).
#[pyclass(frozen, module = "tpb_emu")]
pub struct Program {
    model: Model,
}

#[pymethods]
impl Program {
    #[new]
    fn new(py: Python<'_>, manifest_path: PathBuf) -> PyResult<Program> {
        if is_neff(&manifest_path) {
            return Err(errors::usage(format!(
                "{}: a NEFF; load it with tpb_emu.Neff",
                manifest_path.display()
            )));
        }
        let model = py
            .detach(|| Model::open(&manifest_path, &LoadOptions::default()))
            .map_err(fail)?;
        Ok(Program { model })
    }

    /// The input variables, `(name, dtype, shape)`: each holds the data the
    /// manifest names unless `run` is given an array for it.
    #[getter]
    fn inputs<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        describe(py, &self.model.inputs())
    }

    /// The output variables, `(name, dtype, shape)`, in the order `run` returns them.
    #[getter]
    fn outputs<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        describe(py, &self.model.outputs())
    }

    /// The generation the program runs on (`cayman`, …).
    #[getter]
    fn arch(&self) -> &'static str {
        self.model.arch().name()
    }

    /// Runs the program, as `tpb-emu run PROGRAM.toml` does; an input given
    /// by name (in `inputs` or as a keyword argument) replaces the data the
    /// manifest names for it. Otherwise as `Neff.run`.
    #[pyo3(signature = (inputs = None, /, *, backend = "auto", max_work = None, timeline = None, **named))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Option<&Bound<'py, PyDict>>,
        backend: &str,
        max_work: Option<u64>,
        timeline: Option<PathBuf>,
        named: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        run(py, &self.model, inputs, named, backend, max_work, timeline)
    }

    fn __repr__(&self) -> String {
        format!("Program({:?})", self.model.source())
    }
}
