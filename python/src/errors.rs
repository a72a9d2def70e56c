//! The exceptions: one base class and one class per exit-code family of the
//! CLI's contract (README "Exit codes"), each carrying the CLI's message.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use tpb_emu::device::gpu::DeviceError;
use tpb_emu::files::FileError;
use tpb_emu::model::ModelError;

create_exception!(
    tpb_emu,
    TpbEmuError,
    PyException,
    "Every error tpb_emu raises; `exit_code` is the CLI's exit code for it."
);
create_exception!(
    tpb_emu,
    ExecutionError,
    TpbEmuError,
    "A run stopped: a deadlock, a spent budget, a backend failure (CLI exit 1)."
);
create_exception!(
    tpb_emu,
    UsageError,
    TpbEmuError,
    "Arguments that do not fit: an unknown name, a bad option value (CLI exit 2)."
);
create_exception!(
    tpb_emu,
    InvalidProgram,
    TpbEmuError,
    "A program rejected before it ran: an invalid record or DMA footprint (CLI exit 3)."
);
create_exception!(
    tpb_emu,
    InvalidRecord,
    InvalidProgram,
    "An invalid instruction record (CLI exit 3), with `offset`, `opcode`, `predicate` and `detail`."
);
create_exception!(
    tpb_emu,
    InputError,
    TpbEmuError,
    "An input that cannot be used: unreadable, malformed, of the wrong dtype or shape (CLI exit 4)."
);
create_exception!(
    tpb_emu,
    NoGpuError,
    TpbEmuError,
    "backend=\"gpu\" and no GPU adapter (CLI exit 5)."
);

/// Adds the exception classes to the module, each with its `exit_code`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    for (name, ty, code) in [
        ("TpbEmuError", py.get_type::<TpbEmuError>(), None),
        ("ExecutionError", py.get_type::<ExecutionError>(), Some(1)),
        ("UsageError", py.get_type::<UsageError>(), Some(2)),
        ("InvalidProgram", py.get_type::<InvalidProgram>(), Some(3)),
        ("InvalidRecord", py.get_type::<InvalidRecord>(), Some(3)),
        ("InputError", py.get_type::<InputError>(), Some(4)),
        ("NoGpuError", py.get_type::<NoGpuError>(), Some(5)),
    ] {
        ty.setattr("exit_code", code)?;
        m.add(name, ty)?;
    }
    Ok(())
}

/// The family of an error, decided where the error is made (possibly with
/// the GIL released) and turned into an exception once it is held again.
#[derive(Clone, Copy, Debug)]
pub enum Family {
    /// [`ExecutionError`].
    Exec,
    /// [`UsageError`].
    Usage,
    /// [`InvalidProgram`].
    Invalid,
    /// [`InputError`].
    Input,
    /// [`NoGpuError`].
    NoGpu,
}

/// An error with its family and the CLI's message, or an exception Python
/// code raised while the work ran (a signal handler's KeyboardInterrupt).
#[derive(Debug)]
pub struct Failure {
    /// Which exception.
    pub family: Family,
    /// Its message.
    pub message: String,
    /// An exception raised as it is, whatever `family` says.
    pub raised: Option<PyErr>,
}

impl Failure {
    /// The exception `e`, raised as it is.
    pub fn raised(e: PyErr) -> Failure {
        Failure {
            family: Family::Exec,
            message: String::new(),
            raised: Some(e),
        }
    }

    /// A failure of `family` saying `message`.
    pub fn new(family: Family, message: impl Into<String>) -> Failure {
        Failure {
            family,
            message: message.into(),
            raised: None,
        }
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        if let Some(e) = f.raised {
            return e;
        }
        let m = f.message;
        match f.family {
            Family::Exec => ExecutionError::new_err(m),
            Family::Usage => UsageError::new_err(m),
            Family::Invalid => InvalidProgram::new_err(m),
            Family::Input => InputError::new_err(m),
            Family::NoGpu => NoGpuError::new_err(m),
        }
    }
}

/// A file error: an output the policy refuses is a usage error, the rest
/// bad input (as the CLI maps them).
impl From<FileError> for Failure {
    fn from(e: FileError) -> Failure {
        let family = match e {
            FileError::Refused { .. } => Family::Usage,
            _ => Family::Input,
        };
        Failure::new(family, e.to_string())
    }
}

/// The model's error kinds, mapped as the CLI maps them.
impl From<ModelError> for Failure {
    fn from(e: ModelError) -> Failure {
        match e {
            ModelError::File(f) => f.into(),
            e @ (ModelError::Load(_) | ModelError::Input(_)) => {
                Failure::new(Family::Input, e.to_string())
            }
            e @ ModelError::Name(_) => Failure::new(Family::Usage, e.to_string()),
            e @ ModelError::Invalid(_) => Failure::new(Family::Invalid, e.to_string()),
            ModelError::Run(r) => Failure::new(Family::Exec, r.to_string()),
            e @ ModelError::Disagrees { .. } => Failure::new(Family::Exec, e.to_string()),
        }
    }
}

/// No adapter is [`NoGpuError`]; any other GPU failure an execution error.
impl From<DeviceError> for Failure {
    fn from(e: DeviceError) -> Failure {
        let family = match e {
            DeviceError::NoAdapter(_) => Family::NoGpu,
            _ => Family::Exec,
        };
        Failure::new(family, e.to_string())
    }
}

/// A usage error saying `m`.
pub fn usage(m: impl Into<String>) -> PyErr {
    UsageError::new_err(m.into())
}

/// An input error saying `m`.
pub fn input(m: impl Into<String>) -> PyErr {
    InputError::new_err(m.into())
}

/// The host-run errors (`Device`), mapped as the CLI's `exec` maps them;
/// an invalid record is raised by the caller with its attributes.
impl From<tpb_emu::model::exec::HostError> for Failure {
    fn from(e: tpb_emu::model::exec::HostError) -> Failure {
        use tpb_emu::model::exec::HostError as H;
        match e {
            H::Usage(m) => Failure::new(Family::Usage, m.to_string()),
            H::Stream(e) => Failure::new(Family::Input, format!("stream: {e}")),
            H::Invalid(inv) => Failure::new(Family::Invalid, inv.to_string()),
            e @ (H::Exec(_) | H::WorkBudget { .. }) => Failure::new(Family::Exec, e.to_string()),
        }
    }
}
