//! The CLI's one error type and its exit-code contract (README "Exit
//! codes"): every layer's error enters [`CliError`] through a `From` impl
//! here, and [`CliError::exit`] is the one place where an error kind is
//! given its exit code.

use crate::device::gpu::DeviceError;
use crate::files::FileError;
use crate::isa::stream::StreamError;
use crate::isa::validate::InvalidRecord;
use crate::model::ModelError;
use crate::model::exec::HostError;
use crate::npy::NpyError;
use crate::runtime::RunError;
use std::path::PathBuf;
use std::process::ExitCode;

/// The exit-code contract of every subcommand (README "Exit codes").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Success.
    Ok = 0,
    /// Execution or internal error.
    Exec = 1,
    /// Usage error: unknown flags, malformed flag values, an output path that
    /// is an input path or another output path.
    Usage = 2,
    /// An invalid record.
    Invalid = 3,
    /// Bad input file or unwritable output file: unreadable or too large a
    /// file, stream length, parse error, bad .npy or manifest.
    BadInput = 4,
    /// No GPU adapter when one was required.
    NoAdapter = 5,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

/// Every error a subcommand reports; each maps to one exit code
/// ([`CliError::exit`]).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A record failed validation.
    #[error("{0}")]
    Invalid(#[from] InvalidRecord),
    /// A program was rejected before it ran: an invalid record in one of its
    /// streams, or a DMA footprint (`tpb-emu run`; the message names the engine).
    #[error("{0}")]
    InvalidProgram(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A file could not be read within the input limit, or an output not written.
    #[error(transparent)]
    File(#[from] FileError),
    /// A usage error found after parsing: a malformed flag value, a bad
    /// `--input` name of `run MODEL.neff`.
    #[error("{0}")]
    Usage(String),
    /// An output path is an input path or another output path.
    #[error(transparent)]
    Collision(#[from] crate::files::Collision),
    /// A file is not a record stream.
    #[error("{path}: {source}")]
    Stream {
        /// The file.
        path: PathBuf,
        /// Why.
        source: StreamError,
    },
    /// Any other bad input (parse errors, bad arguments found after parsing).
    #[error("{0}")]
    BadInput(String),
    /// Execution failed.
    #[error("{0}")]
    Exec(String),
    /// The standard output could not be written.
    #[error("stdout: {0}")]
    Stdout(#[source] std::io::Error),
    /// A GPU failure: no adapter, or the device failing.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The model API's errors ([`crate::model::Model`]).
    #[error(transparent)]
    Model(Box<ModelError>),
    /// An `.npy` that could not be read.
    #[error(transparent)]
    Npy(#[from] NpyError),
    /// One stream run on the host's memory (`exec`).
    #[error(transparent)]
    Host(#[from] HostError),
    /// A run stopped.
    #[error(transparent)]
    Run(Box<RunError>),
    /// A NEFF trigger (an instruction of a NEFF engine stream) the lowering
    /// refuses.
    #[error(transparent)]
    Trigger(#[from] crate::neff::lower::TriggerRejected),
    /// A manifest that does not describe a runnable program.
    #[error(transparent)]
    Manifest(#[from] crate::runtime::ManifestError),
    /// A program that cannot be packed as a NEFF.
    #[error(transparent)]
    Pack(#[from] crate::neff::pack::PackError),
    /// A file that is not a NEFF this emulator reads.
    #[error("{path}: {source}")]
    Neff {
        /// The file.
        path: PathBuf,
        /// Why.
        source: crate::neff::NeffError,
    },
    /// The frontend failed on a program it generated, or its run stopped.
    #[error(transparent)]
    Frontend(Box<crate::frontend::FrontendError>),
    /// A program the CLI generated (`pool`, `bench`) was rejected: an
    /// internal error.
    #[error(transparent)]
    Generated(Box<crate::runtime::StageError>),
    /// A picture of a run's tensors that could not be drawn.
    #[error(transparent)]
    Draw(crate::viz::VizError),
    /// A picture that could not be drawn: the flag and what it pictures
    /// (`--png y.npy`, `--report: x`), and why.
    #[error("{what}: {source}")]
    Picture {
        /// The flag and what it pictures.
        what: String,
        /// Why.
        source: crate::viz::VizError,
    },
    /// An assembly file that does not parse.
    #[error("{path}: {source}")]
    Asm {
        /// The file.
        path: PathBuf,
        /// Where and why.
        source: crate::isa::text::ParseError,
    },
    /// A text file that is not UTF-8.
    #[error("{path}: not UTF-8 text (byte {valid_up_to})")]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// The length of its valid UTF-8 prefix.
        valid_up_to: usize,
    },
    /// A JSON line that could not be made.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// An `.npy` header that could not be made for an output.
    #[error("{path}: {source}")]
    Encode {
        /// The output.
        path: PathBuf,
        /// What the encoder said.
        source: crate::npy::EncodeError,
    },
    /// A PNG that could not be encoded for an output.
    #[error("{path}: {source}")]
    Png {
        /// The output.
        path: PathBuf,
        /// What the encoder said.
        source: image::ImageError,
    },
    /// An engine stream that is not whole records (`lower`, `neff lower`),
    /// with the manifest that names it, if any.
    #[error(
        "{}{engine} stream: {source}",
        .manifest.as_ref().map(|m| format!("{}: ", m.display())).unwrap_or_default()
    )]
    EngineStream {
        /// The manifest.
        manifest: Option<PathBuf>,
        /// The engine.
        engine: crate::isa::enums::Engine,
        /// Why.
        source: StreamError,
    },
    /// An array of `exec --load`/`--dump` that does not fit where it goes.
    #[error("{flag} {}: {source}", .path.display())]
    HostArray {
        /// `--load` or `--dump`.
        flag: &'static str,
        /// The `.npy`.
        path: PathBuf,
        /// Why.
        source: crate::device::MemError,
    },
    /// `pool --dtype` other than the `.npy`'s element type.
    #[error("{}: --dtype {asked} but the .npy holds {holds}", .path.display())]
    InputDtype {
        /// The `.npy`.
        path: PathBuf,
        /// The `--dtype`.
        asked: crate::isa::enums::Dtype,
        /// The file's element type.
        holds: crate::isa::enums::Dtype,
    },
    /// An input the front end cannot pool (`pool`).
    #[error("{}: {source}", .path.display())]
    Pooling {
        /// The `.npy`.
        path: PathBuf,
        /// Why.
        source: Box<crate::frontend::FrontendError>,
    },
    /// A tensor `viz` cannot draw, with its file when the file is known.
    #[error(
        "{}{source}",
        .path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default()
    )]
    Tensor {
        /// The `.npy`.
        path: Option<PathBuf>,
        /// Why.
        source: crate::viz::VizError,
    },
    /// `viz --footprint STREAM --record N` past the stream's end.
    #[error("{}: no record {n} (the stream holds {count})", .path.display())]
    NoRecord {
        /// The stream.
        path: PathBuf,
        /// The record asked for.
        n: usize,
        /// The records it holds.
        count: usize,
    },
    /// A record whose footprint `viz --footprint` cannot draw.
    #[error("{} record {n} (offset {offset}): {source}", .path.display())]
    Footprint {
        /// The stream.
        path: PathBuf,
        /// The record's index.
        n: usize,
        /// Its byte offset.
        offset: usize,
        /// Why.
        source: crate::viz::VizError,
    },
    /// `run --snapshot` of a record the run never executed.
    #[error("--snapshot {0}: the run ended without executing that record (no snapshot written)")]
    SnapshotNotReached(
        /// The `--snapshot` argument.
        String,
    ),
    /// A record `bench` generated that fails validation (bad input, as
    /// README's table has it for any invalid record `bench` is given).
    #[error("benchmark record: {0}")]
    BenchRecord(InvalidRecord),
    /// A backend failure outside a run (`bench`'s kernels).
    #[error(transparent)]
    Backend(#[from] crate::device::BackendError),
    /// The program `bench program` generated was rejected: an internal error.
    #[error("bench program: generated program rejected: {0}")]
    BenchProgram(Box<crate::runtime::StageError>),
    /// A `bench` flag value the benchmark cannot use.
    #[error(transparent)]
    BenchFlag(BenchFlag),
    /// A record `bench` generated that is not the op it needs: an internal
    /// error.
    #[error("{}", if *.pool { "not a pool record" } else { "no device op" })]
    BenchNotOp {
        /// True where a POOL datapath op was needed, false for any device op.
        pool: bool,
    },
    /// `demo` configurations whose output differs from the reference.
    #[error("demo checks failed: {}", .0.join(", "))]
    DemoFailed(
        /// Their names.
        Vec<&'static str>,
    ),
}

/// A `bench` flag value the benchmark cannot use ([`CliError::BenchFlag`]).
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum BenchFlag {
    /// `--nonzero-fraction` outside 0..=1.
    #[error("--nonzero-fraction {0}: must be between 0 and 1")]
    NonzeroFraction(
        /// The value given.
        f64,
    ),
    /// `--rows-runs` with the CPU backend.
    #[error("--rows-runs applies to the GPU backend; this run uses the CPU backend")]
    RowsRunsOnCpu,
}

impl CliError {
    /// The exit code of this error: the one place an error kind is given
    /// its code.
    pub fn exit(&self) -> Exit {
        match self {
            CliError::Invalid(_) | CliError::InvalidProgram(_) | CliError::Trigger(_) => {
                Exit::Invalid
            }
            CliError::File(f) => file_exit(f),
            CliError::Io { .. }
            | CliError::Stream { .. }
            | CliError::BadInput(_)
            | CliError::Manifest(_)
            | CliError::Pack(_)
            | CliError::Neff { .. }
            | CliError::Asm { .. }
            | CliError::NotUtf8 { .. }
            | CliError::EngineStream { .. }
            | CliError::HostArray { .. }
            | CliError::InputDtype { .. }
            | CliError::Pooling { .. }
            | CliError::Tensor { .. }
            | CliError::NoRecord { .. }
            | CliError::Footprint { .. }
            | CliError::BenchRecord(_)
            | CliError::BenchFlag(_) => Exit::BadInput,
            CliError::Usage(_) | CliError::Collision(_) => Exit::Usage,
            CliError::Exec(_)
            | CliError::Stdout(_)
            | CliError::Run(_)
            | CliError::Frontend(_)
            | CliError::Generated(_)
            | CliError::Draw(_)
            | CliError::Picture { .. }
            | CliError::Json(_)
            | CliError::Encode { .. }
            | CliError::Png { .. }
            | CliError::SnapshotNotReached(_)
            | CliError::Backend(_)
            | CliError::BenchProgram(_)
            | CliError::BenchNotOp { .. }
            | CliError::DemoFailed(_) => Exit::Exec,
            CliError::Device(d) => device_exit(d),
            CliError::Model(m) => model_exit(m),
            CliError::Npy(n) => npy_exit(n),
            CliError::Host(h) => host_exit(h),
        }
    }
}

impl From<RunError> for CliError {
    fn from(e: RunError) -> CliError {
        CliError::Run(Box::new(e))
    }
}

impl From<ModelError> for CliError {
    fn from(e: ModelError) -> CliError {
        CliError::Model(Box::new(e))
    }
}

impl From<crate::frontend::FrontendError> for CliError {
    fn from(e: crate::frontend::FrontendError) -> CliError {
        CliError::Frontend(Box::new(e))
    }
}

/// A program the CLI generated was rejected ([`CliError::Generated`]).
pub fn generated(e: crate::runtime::StageError) -> CliError {
    CliError::Generated(Box::new(e))
}

impl From<&CliError> for Exit {
    fn from(e: &CliError) -> Exit {
        e.exit()
    }
}

/// The output policy's refusals are usage errors, found before anything
/// runs; any other file error is bad input.
fn file_exit(e: &FileError) -> Exit {
    match e {
        FileError::Refused { .. } => Exit::Usage,
        _ => Exit::BadInput,
    }
}

/// No adapter is 5, any other GPU failure 1.
fn device_exit(e: &DeviceError) -> Exit {
    match e {
        DeviceError::NoAdapter(_) => Exit::NoAdapter,
        _ => Exit::Exec,
    }
}

/// The model API's errors, each on its exit code.
fn model_exit(e: &ModelError) -> Exit {
    match e {
        ModelError::File(f) => file_exit(f),
        ModelError::Load(_) | ModelError::Input(_) => Exit::BadInput,
        ModelError::Name(_) => Exit::Usage,
        ModelError::Invalid(_) => Exit::Invalid,
        ModelError::Run(_) | ModelError::Disagrees { .. } => Exit::Exec,
    }
}

/// An unreadable or malformed `.npy` is bad input (a refused file a usage
/// error, as for any file).
fn npy_exit(e: &NpyError) -> Exit {
    match e {
        NpyError::File(f) => file_exit(f),
        NpyError::Io { .. } | NpyError::Bad { .. } | NpyError::Encode { .. } => Exit::BadInput,
    }
}

/// The host runner's errors ([`HostError`] documents each code).
fn host_exit(e: &HostError) -> Exit {
    match e {
        HostError::Usage(_) => Exit::Usage,
        HostError::Stream(_) => Exit::BadInput,
        HostError::Invalid(_) => Exit::Invalid,
        HostError::Exec(_) | HostError::WorkBudget { .. } => Exit::Exec,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::validate::Fail;
    use std::path::Path;

    /// The codes of README's "Exit codes" table, with what each means.
    fn readme_codes() -> Vec<(u8, String)> {
        let readme = include_str!("../../README.md");
        let table = &readme[readme.find("### Exit codes").expect("README: Exit codes")..];
        table
            .lines()
            .skip_while(|l| !l.starts_with("| code"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                let mut cells = l.split('|').map(str::trim).skip(1);
                let code = cells.next().unwrap().parse().unwrap();
                (code, cells.next().unwrap().to_string())
            })
            .collect()
    }

    fn io() -> std::io::Error {
        std::io::Error::other("broken pipe")
    }

    fn file(refused: bool) -> FileError {
        if refused {
            FileError::Refused {
                path: "out".into(),
                why: crate::files::Unwritable::Folder,
            }
        } else {
            FileError::Io {
                path: "in".into(),
                source: io(),
            }
        }
    }

    fn invalid() -> InvalidRecord {
        InvalidRecord {
            offset: 0,
            opcode: 0,
            fail: Fail::IsValidEnum {
                opcode: crate::isa::Opcode(0),
            },
        }
    }

    /// Every error kind, with the exit code README's contract gives it.
    /// A stream of three bytes ([`CliError::EngineStream`]).
    fn engine_stream(manifest: Option<&str>) -> CliError {
        CliError::EngineStream {
            manifest: manifest.map(PathBuf::from),
            engine: crate::isa::enums::Engine::Pool,
            source: crate::isa::stream::records(&[0; 3])
                .map(|_| ())
                .unwrap_err(),
        }
    }

    /// Data of the wrong length for its lanes.
    fn mem_error() -> crate::device::MemError {
        crate::device::MemError::LengthMismatch {
            lanes: 2,
            len: 4,
            got: 3,
        }
    }

    fn kinds() -> Vec<(CliError, Exit)> {
        let run = || RunError::RecordBudget { limit: 1 };
        vec![
            (CliError::Invalid(invalid()), Exit::Invalid),
            (CliError::InvalidProgram("x".into()), Exit::Invalid),
            (
                CliError::Io {
                    path: "in".into(),
                    source: io(),
                },
                Exit::BadInput,
            ),
            (CliError::File(file(false)), Exit::BadInput),
            (CliError::File(file(true)), Exit::Usage),
            (CliError::Usage("x".into()), Exit::Usage),
            (
                crate::files::check_distinct(
                    &[("in".into(), "a".into())],
                    &[("out".into(), "a".into())],
                )
                .unwrap_err()
                .into(),
                Exit::Usage,
            ),
            (
                CliError::Stream {
                    path: "s".into(),
                    source: crate::isa::stream::records(&[0; 3])
                        .map(|_| ())
                        .unwrap_err(),
                },
                Exit::BadInput,
            ),
            (CliError::BadInput("x".into()), Exit::BadInput),
            (CliError::Exec("x".into()), Exit::Exec),
            (CliError::Stdout(io()), Exit::Exec),
            (engine_stream(None), Exit::BadInput),
            (
                CliError::HostArray {
                    flag: "--load",
                    path: "x.npy".into(),
                    source: mem_error(),
                },
                Exit::BadInput,
            ),
            (
                CliError::InputDtype {
                    path: "x.npy".into(),
                    asked: crate::isa::enums::Dtype::FP16,
                    holds: crate::isa::enums::Dtype::FP32,
                },
                Exit::BadInput,
            ),
            (
                CliError::Pooling {
                    path: "x.npy".into(),
                    source: Box::new(crate::frontend::FrontendError::Bad(
                        crate::frontend::Unsupported::Dtype {
                            dtype: crate::isa::enums::Dtype::INT8,
                        },
                    )),
                },
                Exit::BadInput,
            ),
            (
                CliError::Tensor {
                    path: None,
                    source: crate::viz::VizError::Shape(crate::viz::ShapeFault::WalkTooLong(9)),
                },
                Exit::BadInput,
            ),
            (
                CliError::NoRecord {
                    path: "s.bin".into(),
                    n: 3,
                    count: 2,
                },
                Exit::BadInput,
            ),
            (
                CliError::Footprint {
                    path: "s.bin".into(),
                    n: 0,
                    offset: 0,
                    source: crate::viz::VizError::Shape(crate::viz::ShapeFault::WalkTooLong(9)),
                },
                Exit::BadInput,
            ),
            (CliError::SnapshotNotReached("pool:3".into()), Exit::Exec),
            (
                CliError::BenchProgram(Box::new(crate::runtime::StageError::OutOfMemory {
                    bytes: 1,
                    dram: 1,
                })),
                Exit::Exec,
            ),
            (CliError::DemoFailed(vec!["max_2x2"]), Exit::Exec),
            (CliError::BenchNotOp { pool: true }, Exit::Exec),
            (
                CliError::BenchFlag(BenchFlag::NonzeroFraction(1.5)),
                Exit::BadInput,
            ),
            (
                CliError::BenchFlag(BenchFlag::RowsRunsOnCpu),
                Exit::BadInput,
            ),
            (CliError::BenchRecord(invalid()), Exit::BadInput),
            (
                crate::device::BackendError::contract(
                    "gpu",
                    crate::device::ContractFault::HoldsNoDram,
                )
                .into(),
                Exit::Exec,
            ),
            (
                DeviceError::NoAdapter(String::new()).into(),
                Exit::NoAdapter,
            ),
            (DeviceError::Lost("x".into()).into(), Exit::Exec),
            (DeviceError::Validation("x".into()).into(), Exit::Exec),
            (ModelError::File(file(false)).into(), Exit::BadInput),
            (ModelError::File(file(true)).into(), Exit::Usage),
            (
                ModelError::from(crate::model::LoadError::Neff {
                    name: "x.neff".into(),
                    source: crate::neff::NeffError::Md5Mismatch,
                })
                .into(),
                Exit::BadInput,
            ),
            (
                ModelError::from(crate::model::InputFault::Size {
                    name: "x".into(),
                    got: 1,
                    bytes: 4,
                    dtype: crate::isa::enums::Dtype::FP32,
                    shape: vec![1],
                })
                .into(),
                Exit::BadInput,
            ),
            (
                ModelError::from(crate::model::NameFault::MissingInput("x".into())).into(),
                Exit::Usage,
            ),
            (
                ModelError::from(crate::model::Rejection::Trigger(
                    crate::neff::lower::TriggerRejected {
                        engine: crate::isa::enums::Engine::Pool,
                        offset: 0,
                        opcode: 0xC1,
                        predicate: "emu_opcode_supported",
                        why: crate::neff::lower::TriggerFault::EmptyQueue,
                    },
                ))
                .into(),
                Exit::Invalid,
            ),
            (ModelError::Run(run()).into(), Exit::Exec),
            (
                ModelError::Disagrees {
                    output: "y".into(),
                    backend: "gpu",
                }
                .into(),
                Exit::Exec,
            ),
            (NpyError::File(file(false)).into(), Exit::BadInput),
            (NpyError::File(file(true)).into(), Exit::Usage),
            (
                NpyError::Io {
                    path: "a.npy".into(),
                    source: io(),
                }
                .into(),
                Exit::BadInput,
            ),
            (
                NpyError::Bad {
                    path: "a.npy".into(),
                    why: crate::npy::NpyFault::Magic,
                }
                .into(),
                Exit::BadInput,
            ),
            (
                HostError::Usage(crate::model::exec::Syntax::Shape { text: "x".into() }).into(),
                Exit::Usage,
            ),
            (
                HostError::Stream(
                    crate::isa::stream::records(&[0; 3])
                        .map(|_| ())
                        .unwrap_err(),
                )
                .into(),
                Exit::BadInput,
            ),
            (HostError::Invalid(invalid()).into(), Exit::Invalid),
            (
                HostError::Exec(crate::device::ExecError::ArchMismatch {
                    program: "x",
                    memory: "y",
                })
                .into(),
                Exit::Exec,
            ),
            (
                HostError::WorkBudget {
                    offset: 0,
                    limit: 1,
                    done: 0,
                    cost: 2,
                }
                .into(),
                Exit::Exec,
            ),
            (run().into(), Exit::Exec),
            (
                crate::frontend::FrontendError::Run(run()).into(),
                Exit::Exec,
            ),
            (
                generated(crate::runtime::StageError::OutOfMemory { bytes: 1, dram: 0 }),
                Exit::Exec,
            ),
            (
                CliError::Draw(crate::viz::VizError::NotDrawable(
                    crate::viz::Undrawable::Address("src"),
                )),
                Exit::Exec,
            ),
            (
                crate::neff::pack::PackError::Program(crate::neff::pack::ProgramFault::NoOutput)
                    .into(),
                Exit::BadInput,
            ),
            (
                CliError::Neff {
                    path: "m.neff".into(),
                    source: crate::neff::NeffError::NothingToVerify,
                },
                Exit::BadInput,
            ),
            (
                serde_json::from_str::<u8>("x").unwrap_err().into(),
                Exit::Exec,
            ),
            (
                CliError::Picture {
                    what: "--png y".into(),
                    source: crate::viz::VizError::NotDrawable(crate::viz::Undrawable::Address(
                        "dst",
                    )),
                },
                Exit::Exec,
            ),
            (
                CliError::Asm {
                    path: "a.s".into(),
                    source: crate::isa::text::asm("nonsense").unwrap_err(),
                },
                Exit::BadInput,
            ),
            (
                CliError::NotUtf8 {
                    path: "a.s".into(),
                    valid_up_to: 3,
                },
                Exit::BadInput,
            ),
            (
                CliError::Encode {
                    path: "y.npy".into(),
                    source: crate::npy::EncodeError::Header(io()),
                },
                Exit::Exec,
            ),
        ]
    }

    #[test]
    fn each_error_kind_maps_to_its_documented_exit_code() {
        let readme = readme_codes();
        let documented: Vec<u8> = readme.iter().map(|(c, _)| *c).collect();
        // 130 (a signal) is main's, not an error kind's.
        assert_eq!(documented, [0, 1, 2, 3, 4, 5, 130], "{readme:?}");
        for (e, want) in kinds() {
            assert_eq!(e.exit(), want, "{e:?}");
            assert_eq!(Exit::from(&e), want, "{e:?}");
            assert!(documented.contains(&(want as u8)), "{e:?}");
        }
        // The README's words for each code.
        let says = |code: Exit, word: &str| {
            let (_, m) = readme.iter().find(|(c, _)| *c == code as u8).unwrap();
            assert!(m.contains(word), "exit {}: {m}", code as u8);
        };
        says(Exit::Ok, "ok");
        says(Exit::Exec, "execution");
        says(Exit::Usage, "usage");
        says(Exit::Invalid, "invalid record");
        says(Exit::BadInput, "bad input");
        says(Exit::NoAdapter, "no GPU adapter");
    }

    #[test]
    fn typed_kinds_keep_their_messages() {
        let p = Path::new("out.png");
        assert_eq!(
            CliError::Stdout(std::io::Error::other("broken pipe")).to_string(),
            "stdout: broken pipe"
        );
        let d = DeviceError::Lost("gone".into());
        assert_eq!(CliError::from(d.clone()).to_string(), d.to_string());
        let m = ModelError::from(crate::model::NameFault::MissingInput("x".into()));
        assert_eq!(CliError::from(m).to_string(), "missing --input x=FILE.npy");
        let e = CliError::Encode {
            path: p.to_owned(),
            source: crate::npy::EncodeError::Header(std::io::Error::other("x")),
        };
        assert_eq!(e.to_string(), "out.png: npy header: x");
    }

    /// The kinds that replaced formatted `BadInput`/`Exec` messages print
    /// what those messages said.
    #[test]
    fn kinds_that_were_messages_print_the_same_text() {
        let stream = crate::isa::stream::records(&[0; 3])
            .map(|_| ())
            .unwrap_err();
        assert_eq!(
            engine_stream(None).to_string(),
            format!("{} stream: {stream}", crate::isa::enums::Engine::Pool)
        );
        assert_eq!(
            engine_stream(Some("p.toml")).to_string(),
            format!(
                "p.toml: {} stream: {stream}",
                crate::isa::enums::Engine::Pool
            )
        );
        let host = CliError::HostArray {
            flag: "--dump",
            path: "y.npy".into(),
            source: mem_error(),
        };
        assert_eq!(host.to_string(), format!("--dump y.npy: {}", mem_error()));
        let dtype = CliError::InputDtype {
            path: "x.npy".into(),
            asked: crate::isa::enums::Dtype::FP16,
            holds: crate::isa::enums::Dtype::FP32,
        };
        assert_eq!(
            dtype.to_string(),
            format!(
                "x.npy: --dtype {} but the .npy holds {}",
                crate::isa::enums::Dtype::FP16,
                crate::isa::enums::Dtype::FP32
            )
        );
        let shape = || crate::viz::VizError::Shape(crate::viz::ShapeFault::WalkTooLong(9));
        let t = |path: Option<&str>| CliError::Tensor {
            path: path.map(PathBuf::from),
            source: shape(),
        };
        let bad = "a walk of 9 elements is too long to draw";
        assert_eq!(t(None).to_string(), bad);
        assert_eq!(t(Some("x.npy")).to_string(), format!("x.npy: {bad}"));
        let none = CliError::NoRecord {
            path: "s.bin".into(),
            n: 3,
            count: 2,
        };
        assert_eq!(none.to_string(), "s.bin: no record 3 (the stream holds 2)");
        let fp = CliError::Footprint {
            path: "s.bin".into(),
            n: 1,
            offset: 64,
            source: shape(),
        };
        assert_eq!(fp.to_string(), format!("s.bin record 1 (offset 64): {bad}"));
        assert_eq!(
            CliError::SnapshotNotReached("pool:3".into()).to_string(),
            "--snapshot pool:3: the run ended without executing that record (no snapshot written)"
        );
        assert_eq!(
            CliError::BenchRecord(invalid()).to_string(),
            format!("benchmark record: {}", invalid())
        );
        assert_eq!(
            CliError::DemoFailed(vec!["a", "b"]).to_string(),
            "demo checks failed: a, b"
        );
        assert_eq!(
            CliError::BenchNotOp { pool: true }.to_string(),
            "not a pool record"
        );
        assert_eq!(
            CliError::BenchNotOp { pool: false }.to_string(),
            "no device op"
        );
        assert_eq!(
            CliError::BenchFlag(BenchFlag::NonzeroFraction(1.5)).to_string(),
            "--nonzero-fraction 1.5: must be between 0 and 1"
        );
    }
}
