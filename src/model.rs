//! One model API for every front door — the CLI's `run`, and the bindings
//! to come (Python, libnrt): load a program (a NEFF or a TOML manifest),
//! describe its public inputs and outputs, and run it with inputs by name,
//! returning outputs by name. There is one path from a file to a run; the
//! commands differ only in how they read arrays and report.
//!
//! ```no_run
//! use std::collections::HashMap;
//! use tpb_emu::model::{LoadOptions, Model, RunOptions};
//!
//! let model = Model::open("examples/program/program.toml".as_ref(), &LoadOptions::default())?;
//! for t in model.outputs() {
//!     println!("{} {} {:?}", t.name, t.dtype, t.shape);
//! }
//! let mut exec = tpb_emu::CpuExecutor::default();
//! let run = model.run(&HashMap::new(), &mut exec, &RunOptions::default())?;
//! let y = run.output("y_avg").unwrap();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "gpu")]
pub mod backend;
pub mod error;
pub mod exec;
pub mod why;

pub use error::{InputFault, LoadError, ModelKind, NameFault, Rejection, Staging};

use crate::device::{Executor, NoTrace, Trace};
use crate::files::{FileError, HostBytes};
use crate::isa::enums::{Dtype, Engine};
use crate::isa::opcode::OpcodeClass;
use crate::limits::Arch;
use crate::neff::{self, Neff};
use crate::npy::{ElemKind, Npy, npy_descr};
use crate::runtime::{
    DEFAULT_MAX_RECORDS, Machine, Program, Role, RunError, StageError, manifest, stage,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How a model file is read (the options of `inspect` and `run`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// NEFF-EC-2: verify the payload's digest (`--no-verify` clears it).
    pub verify: bool,
    /// NEFF-EC-12: enforce the CAYMAN state-buffer reservation rule (`--strict`).
    pub strict: bool,
    /// NEFF-EC-17: the generation for a target written as `*` (`--arch`).
    pub arch: Option<Arch>,
}

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions {
            verify: true,
            strict: false,
            arch: None,
        }
    }
}

/// A public input or output: its name, element type and shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    /// The name inputs are given by and outputs returned by.
    pub name: String,
    /// The element type.
    pub dtype: Dtype,
    /// The shape, C order (a NEFF scalar is `[1]`).
    pub shape: Vec<u64>,
    /// Bytes: elements × the dtype's size.
    pub bytes: u64,
}

/// How a run is bounded and what it records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Stop after this many records (a program that never ends).
    pub max_records: u64,
    /// Stop once the program would move or fold more elements than this.
    pub max_work: u64,
    /// Record the timeline's per-engine totals (TL-1).
    pub totals: bool,
    /// Also keep every slice of the timeline (for its JSON file).
    pub slices: bool,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            max_records: DEFAULT_MAX_RECORDS,
            max_work: crate::limits::DEFAULT_MAX_WORK,
            totals: false,
            slices: false,
        }
    }
}

/// Why a model could not be loaded or run. Each kind is one exit code of
/// the CLI (README "Exit codes").
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The file could not be read within the input limit (exit 4).
    #[error(transparent)]
    File(#[from] FileError),
    /// The file is not a model: a NEFF gate, a manifest error (exit 4).
    /// Boxed, as is [`ModelError::Invalid`]: they hold the layers' errors
    /// whole, and every `Result` of the model API carries this enum.
    #[error(transparent)]
    Load(Box<LoadError>),
    /// An input named that the model does not have, or one it needs that
    /// was not given (NEFF-EC-18; exit 2).
    #[error(transparent)]
    Name(#[from] NameFault),
    /// An input whose element type, shape or size is not the model's (exit 4).
    #[error(transparent)]
    Input(#[from] InputFault),
    /// The program was rejected before it ran: an invalid record or DMA
    /// footprint (exit 3).
    #[error(transparent)]
    Invalid(Box<Rejection>),
    /// The run stopped: a deadlock, a spent budget, a backend failure (exit 1).
    #[error(transparent)]
    Run(#[from] RunError),
    /// `why` on another backend than the CPU reference: an output of that
    /// backend's run differs from the CPU reference's (exit 1).
    #[error(
        "output `{output}` differs from the CPU reference's on the {backend} backend; `why` \
         explains the CPU reference's bytes only (run with --backend cpu)"
    )]
    Disagrees {
        /// The output variable.
        output: String,
        /// The backend whose run differs.
        backend: &'static str,
    },
}

impl From<LoadError> for ModelError {
    fn from(e: LoadError) -> ModelError {
        ModelError::Load(Box::new(e))
    }
}

impl From<Rejection> for ModelError {
    fn from(e: Rejection) -> ModelError {
        ModelError::Invalid(Box::new(e))
    }
}

/// A program to run: a NEFF (read whole and checked, SPEC-NEFF §6) or a
/// manifest (with every file it names).
#[derive(Debug)]
pub struct Model {
    /// The file as given, for messages.
    source: String,
    kind: Kind,
    /// Every file read (for the collision check of the outputs).
    files: Vec<PathBuf>,
}

#[derive(Debug)]
enum Kind {
    Neff(Box<Neff>),
    Manifest(Box<Program>),
}

/// True when `path` names a NEFF (its extension is `.neff`, any case).
pub fn is_neff(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("neff"))
}

impl Model {
    /// Reads the model at `path`: a NEFF ([`is_neff`]) or a manifest. A
    /// NEFF's warnings are in [`Model::warnings`].
    pub fn open(path: &Path, opts: &LoadOptions) -> Result<Model, ModelError> {
        if !is_neff(path) {
            let (program, files) = manifest::load_with_files(path).map_err(LoadError::from)?;
            return Ok(Model {
                source: path.display().to_string(),
                kind: Kind::Manifest(Box::new(program)),
                files,
            });
        }
        // Mapped and bounded (crate::files): a raw tar is read in place.
        let bytes = crate::files::map_input(path)?;
        let mut model = Model::read_neff(bytes, &path.display().to_string(), opts)?;
        model.files.push(path.to_owned());
        Ok(model)
    }

    /// A NEFF from its bytes; `name` stands for the file in messages.
    pub fn from_neff_bytes(
        bytes: Vec<u8>,
        name: &str,
        opts: &LoadOptions,
    ) -> Result<Model, ModelError> {
        Model::read_neff(bytes, name, opts)
    }

    /// Maps and stages the program with every input zero: the lowering and
    /// validation a run does before its first record (SPEC-NEFF §6 step 14
    /// without the run), so that a loader (`nrt_load`) rejects a program
    /// it could never run before any input is given.
    pub fn validate(&self) -> Result<(), ModelError> {
        match &self.kind {
            Kind::Neff(n) => {
                let mapped = crate::neff::lower::program(n, &HashMap::new()).map_err(map_error)?;
                stage(&mapped.program)
                    .map(drop)
                    .map_err(|e| neff_stage_error(e, &mapped.streams))
            }
            Kind::Manifest(p) => stage(p).map(drop).map_err(|e| self.manifest_stage_error(e)),
        }
    }

    fn read_neff<B>(bytes: B, name: &str, opts: &LoadOptions) -> Result<Model, ModelError>
    where
        B: AsRef<[u8]> + Send + Sync + 'static,
    {
        let o = neff::Options {
            verify: opts.verify,
            strict: opts.strict,
            arch: opts.arch,
            path: name.to_string(),
            ..neff::Options::default()
        };
        let n = neff::read_owned(bytes, &o).map_err(|source| LoadError::Neff {
            name: name.to_string(),
            source,
        })?;
        Ok(Model {
            source: name.to_string(),
            kind: Kind::Neff(Box::new(n)),
            files: Vec::new(),
        })
    }

    /// The file as given.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// True for a NEFF, false for a manifest.
    pub fn is_neff(&self) -> bool {
        matches!(self.kind, Kind::Neff(_))
    }

    /// NEFF or manifest, for messages.
    pub fn kind(&self) -> ModelKind {
        match self.kind {
            Kind::Neff(_) => ModelKind::Neff,
            Kind::Manifest(_) => ModelKind::Manifest,
        }
    }

    /// The NEFF, for a NEFF model.
    pub fn neff(&self) -> Option<&Neff> {
        match &self.kind {
            Kind::Neff(n) => Some(n),
            Kind::Manifest(_) => None,
        }
    }

    /// What the reader warned about (a NEFF's; none for a manifest).
    pub fn warnings(&self) -> &[String] {
        self.neff().map_or(&[], |n| &n.warnings[..])
    }

    /// Every file read: the manifest and the streams and arrays it names,
    /// or the NEFF.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The generation the program runs on.
    pub fn arch(&self) -> Arch {
        match &self.kind {
            Kind::Neff(n) => n.arch,
            Kind::Manifest(p) => p.arch,
        }
    }

    /// The public inputs: a NEFF's, all required; a manifest's input
    /// variables, each of which a run may replace.
    pub fn inputs(&self) -> Vec<TensorInfo> {
        self.io(Role::Input)
    }

    /// The public outputs, in the order a run returns them.
    pub fn outputs(&self) -> Vec<TensorInfo> {
        self.io(Role::Output)
    }

    fn io(&self, role: Role) -> Vec<TensorInfo> {
        let info = tensor_info;
        match &self.kind {
            Kind::Neff(n) => {
                let ts = if role == Role::Input {
                    &n.inputs
                } else {
                    &n.outputs
                };
                ts.iter()
                    .filter_map(|t| n.var(&t.name))
                    .map(|v| info(&v.name, v.dtype, &v.shape))
                    .collect()
            }
            Kind::Manifest(p) => p
                .variables
                .iter()
                .filter(|v| v.role == role)
                .map(|v| info(&v.name, v.dtype, &v.shape))
                .collect(),
        }
    }

    /// Every DRAM variable (public or not) with its type and shape.
    pub fn variables(&self) -> Vec<TensorInfo> {
        match &self.kind {
            Kind::Neff(n) => n
                .vars
                .iter()
                .map(|v| tensor_info(&v.name, v.dtype, &v.shape))
                .collect(),
            Kind::Manifest(p) => p
                .variables
                .iter()
                .map(|v| tensor_info(&v.name, v.dtype, &v.shape))
                .collect(),
        }
    }

    /// Refuses an input name the model does not have (exit 2).
    pub fn check_name(&self, name: &str) -> Result<TensorInfo, ModelError> {
        let inputs = self.inputs();
        inputs
            .iter()
            .find(|t| t.name == name)
            .cloned()
            .ok_or_else(|| {
                NameFault::UnknownInput {
                    name: name.to_string(),
                    kind: self.kind(),
                    inputs: inputs.iter().map(|t| t.name.clone()).collect(),
                }
                .into()
            })
    }

    /// Refuses a set of input names that a run cannot take (exit 2): a name
    /// the model does not have, or, for a NEFF, a public input not named
    /// (NEFF-EC-18; a manifest's inputs default to its own files).
    pub fn check_names(&self, names: &[&str]) -> Result<(), ModelError> {
        for name in names {
            self.check_name(name)?;
        }
        if let Kind::Neff(n) = &self.kind
            && let Some(t) = n.inputs.iter().find(|t| !names.contains(&t.name.as_str()))
        {
            return Err(NameFault::MissingInput(t.name.clone()).into());
        }
        Ok(())
    }

    /// Checks that the array `npy` (read from `file`) can be the input
    /// `name`: the same kind and size of element and the same shape.
    pub fn check_array(&self, name: &str, file: &Path, npy: &Npy) -> Result<(), ModelError> {
        let t = self.check_name(name)?;
        let descr = npy_descr(t.dtype);
        let kind = match descr.as_bytes().get(1) {
            Some(b'f') => ElemKind::Float,
            Some(b'i') => ElemKind::Int,
            _ => ElemKind::Uint,
        };
        let size: usize = descr[2..].parse().unwrap_or(0);
        if npy.kind != kind || npy.elem != size {
            return Err(InputFault::Elements {
                name: name.to_string(),
                file: file.to_owned(),
                found: npy.descr.clone(),
                needs: descr,
                dtype: t.dtype,
            }
            .into());
        }
        if npy.shape != t.shape {
            return Err(InputFault::Shape {
                name: name.to_string(),
                file: file.to_owned(),
                found: npy.shape.clone(),
                shape: t.shape,
            }
            .into());
        }
        Ok(())
    }

    /// The program a run of `inputs` executes (a NEFF mapped onto a
    /// program, or the manifest with the given inputs replaced), checked
    /// and staged; a NEFF needs every public input.
    fn program(
        &self,
        inputs: &HashMap<String, HostBytes>,
    ) -> Result<crate::runtime::Staged, ModelError> {
        let names: Vec<&str> = inputs.keys().map(String::as_str).collect();
        self.check_names(&names)?;
        for (name, data) in inputs {
            let t = self.check_name(name)?;
            if data.len() as u64 != t.bytes {
                return Err(InputFault::Size {
                    name: name.clone(),
                    got: data.len(),
                    bytes: t.bytes,
                    dtype: t.dtype,
                    shape: t.shape,
                }
                .into());
            }
        }
        match &self.kind {
            Kind::Neff(n) => {
                let mapped = crate::neff::lower::program(n, inputs).map_err(map_error)?;
                stage(&mapped.program).map_err(|e| neff_stage_error(e, &mapped.streams))
            }
            Kind::Manifest(p) => {
                // The manifest as read, or a copy with the given inputs in place.
                let replaced;
                let p = if inputs.is_empty() {
                    &**p
                } else {
                    let mut q = Program::clone(p);
                    for v in q.variables.iter_mut().filter(|v| v.role == Role::Input) {
                        if let Some(data) = inputs.get(&v.name) {
                            v.init = Some(data.clone());
                        }
                    }
                    replaced = q;
                    &replaced
                };
                stage(p).map_err(|e| self.manifest_stage_error(e))
            }
        }
    }

    /// A staging error of the manifest's program: bad input names the
    /// manifest; an invalid record is the program's.
    fn manifest_stage_error(&self, e: StageError) -> ModelError {
        if e.is_bad_input() {
            LoadError::Stage {
                manifest: self.source.clone(),
                source: e,
            }
            .into()
        } else {
            Rejection::Stage(e).into()
        }
    }

    /// True when a run needs a device: some stream holds a Pool record
    /// (`--backend auto` opens no adapter otherwise).
    pub fn needs_device(&self) -> bool {
        let has_pool = |s: &[u8]| {
            crate::isa::stream::records(s)
                .is_ok_and(|mut rs| rs.any(|(_, r)| r.opcode().class() == OpcodeClass::S4d4Pl))
        };
        match &self.kind {
            Kind::Neff(n) => Engine::ALL.iter().any(|&e| has_pool(n.stream(e))),
            Kind::Manifest(p) => Engine::ALL.iter().any(|&e| has_pool(p.stream(e))),
        }
    }

    /// Checks `inputs` and stages the program they make (validation, DMA
    /// planning: everything before the first record runs).
    pub fn prepare(&self, inputs: &HashMap<String, HostBytes>) -> Result<Prepared, ModelError> {
        Ok(Prepared {
            staged: self.program(inputs)?,
            outputs: self.outputs(),
        })
    }

    /// Runs the model with `inputs` (by name, little-endian elements in C
    /// order) on `exec`: [`Model::prepare`], then [`Prepared::run`].
    pub fn run(
        &self,
        inputs: &HashMap<String, HostBytes>,
        exec: &mut dyn Executor,
        opts: &RunOptions,
    ) -> Result<Finished, ModelError> {
        self.prepare(inputs)?
            .run(exec, opts, &mut NoTrace, &mut |_| ())
    }
}

/// A tensor's description (a NEFF scalar's shape is `[1]`).
fn tensor_info(name: &str, dtype: Dtype, shape: &[u64]) -> TensorInfo {
    let shape = if shape.is_empty() {
        vec![1]
    } else {
        shape.to_vec()
    };
    let elems = shape.iter().try_fold(1u64, |a, &x| a.checked_mul(x));
    let bytes = elems
        .and_then(|e| e.checked_mul(dtype.size()? as u64))
        .unwrap_or(u64::MAX);
    TensorInfo {
        name: name.to_string(),
        dtype,
        shape,
        bytes,
    }
}

/// A model's program staged for one set of inputs, ready to run.
pub struct Prepared {
    staged: crate::runtime::Staged,
    outputs: Vec<TensorInfo>,
}

impl Prepared {
    /// The bytes variable `name` starts the run with (an input's as given;
    /// zeros for the others), or `None` when there is no such variable.
    pub fn initial(&self, name: &str) -> Option<&[u8]> {
        let (_, base, len) = self.staged.layout().find(|(n, ..)| *n == name)?;
        self.staged.dram_init.get(base, base + len)
    }

    /// Sets the bytes variable `name` starts the run with: an output's
    /// initial bytes, which the run keeps wherever the program does not
    /// write (libnrt's output tensors, SPEC-NRT §7.3). False, and nothing
    /// changed, when there is no such variable or `bytes` is not its size.
    pub fn seed(&mut self, name: &str, bytes: &[u8]) -> bool {
        let Some((_, base, len)) = self.staged.layout().find(|(n, ..)| *n == name) else {
            return false;
        };
        if bytes.len() as u64 != len {
            return false;
        }
        let (window, first) = self.staged.dram_init.window_mut(base, base + len);
        let at = (base - first) as usize;
        window[at..at + bytes.len()].copy_from_slice(bytes);
        true
    }

    /// Runs it on `exec` within `opts`' budgets, with a trace of every
    /// record and a progress callback (records executed so far).
    pub fn run(
        self,
        exec: &mut dyn Executor,
        opts: &RunOptions,
        trace: &mut dyn Trace,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Finished, ModelError> {
        self.run_controlled(exec, opts, trace, &mut |n| {
            progress(n);
            std::ops::ControlFlow::Continue(())
        })
    }

    /// [`Prepared::run`] where `progress` may stop the run by returning
    /// [`std::ops::ControlFlow::Break`]: [`RunError::Interrupted`], and no
    /// outputs (a Ctrl-C in the Python bindings).
    pub fn run_controlled(
        self,
        exec: &mut dyn Executor,
        opts: &RunOptions,
        trace: &mut dyn Trace,
        progress: &mut dyn FnMut(u64) -> std::ops::ControlFlow<()>,
    ) -> Result<Finished, ModelError> {
        self.run_inner(exec, opts, trace, progress, None)
    }

    /// [`Prepared::run`] calling `watch` after every record
    /// ([`crate::runtime::Watch`]: `run --snapshot`, `why`'s write
    /// tracking). A backend that keeps its own memory holds no DRAM
    /// variable in such a run ([`Machine::set_hold_dram`]), so that DRAM is
    /// the host's whenever `watch` looks.
    pub fn run_watched(
        self,
        exec: &mut dyn Executor,
        opts: &RunOptions,
        trace: &mut dyn Trace,
        progress: &mut dyn FnMut(u64),
        watch: &mut crate::runtime::Watch<'_>,
    ) -> Result<Finished, ModelError> {
        self.run_inner(
            exec,
            opts,
            trace,
            &mut |n| {
                progress(n);
                std::ops::ControlFlow::Continue(())
            },
            Some(watch),
        )
    }

    /// The staged program (its records and DRAM layout).
    pub fn staged(&self) -> &crate::runtime::Staged {
        &self.staged
    }

    fn run_inner(
        self,
        exec: &mut dyn Executor,
        opts: &RunOptions,
        trace: &mut dyn Trace,
        progress: &mut dyn FnMut(u64) -> std::ops::ControlFlow<()>,
        watch: Option<&mut crate::runtime::Watch<'_>>,
    ) -> Result<Finished, ModelError> {
        // The staged image becomes the DRAM itself (no copy of the inputs).
        let mut machine = Machine::from_owned(self.staged);
        machine.set_max_records(opts.max_records);
        machine.set_max_work(opts.max_work);
        // Only DRAM (the output variables) is read after the run.
        machine.set_dram_only(true);
        if opts.totals || opts.slices {
            machine.record_timeline(opts.slices);
        }
        machine.set_hold_dram(watch.is_none());
        machine.run_watched(exec, trace, progress, watch)?;
        Ok(Finished {
            machine,
            outputs: self.outputs,
        })
    }
}

/// A staging error of a NEFF's program, with the NEFF stream offset when an
/// expansion moved records.
fn neff_stage_error(e: StageError, streams: &[crate::neff::lower::Expanded]) -> ModelError {
    fn at(e: &StageError) -> Option<(Engine, usize)> {
        match e {
            StageError::Invalid { engine, record } => Some((*engine, record.offset)),
            StageError::Footprint { engine, offset, .. } => Some((*engine, *offset)),
            StageError::Lower { engine, rejected } => Some((*engine, rejected.offset)),
            StageError::InLowered { original, source } => at(source).map(|(e, _)| (e, *original)),
            _ => None,
        }
    }
    let neff = at(&e).and_then(|(engine, offset)| {
        let x = &streams[engine as usize];
        (!x.origin.is_empty()).then(|| (engine, x.original(offset)))
    });
    let bad_input = e.is_bad_input();
    let s = Staging { source: e, neff };
    if bad_input {
        LoadError::NeffStage(s).into()
    } else {
        Rejection::NeffStage(s).into()
    }
}

/// A NEFF that did not become a program: a rejected trigger (exit 3).
fn map_error(e: crate::neff::lower::MapError) -> ModelError {
    match e {
        crate::neff::lower::MapError::Rejected(r) => Rejection::Trigger(r).into(),
    }
}

/// A finished run: the outputs by name, and the machine it ran on (records
/// executed, the timeline).
pub struct Finished {
    machine: Machine,
    outputs: Vec<TensorInfo>,
}

impl std::fmt::Debug for Finished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Finished")
            .field("outputs", &self.outputs)
            .field("records", &self.machine.total_executed())
            .finish()
    }
}

impl Finished {
    /// The bytes of output `name` (little-endian elements, C order).
    pub fn output(&self, name: &str) -> Option<&[u8]> {
        self.outputs
            .iter()
            .any(|t| t.name == name)
            .then(|| self.machine.variable(name))
            .flatten()
    }

    /// Every output with its bytes, in the model's order.
    pub fn outputs(&self) -> impl Iterator<Item = (&TensorInfo, &[u8])> {
        self.outputs
            .iter()
            .filter_map(|t| Some((t, self.machine.variable(&t.name)?)))
    }

    /// The machine the run ended on.
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// Every output with its bytes, in the model's order, taken out of the
    /// run: a model's one output is moved out of DRAM without a copy when it
    /// can be ([`Machine::into_variable`]); several outputs are copied.
    pub fn into_outputs(self) -> Vec<(TensorInfo, Vec<u8>)> {
        if let [one] = &self.outputs[..] {
            let t = one.clone();
            return self
                .machine
                .into_variable(&t.name)
                .map(|b| vec![(t, b)])
                .unwrap_or_default();
        }
        self.outputs()
            .map(|(t, b)| (t.clone(), b.to_vec()))
            .collect()
    }
}
