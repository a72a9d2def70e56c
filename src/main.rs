//! The `tpb-emu` command line. Exit codes: see [`cli::Exit`].
//!
//! The CLI lives in the binary, not in the library: `cli/` is this crate's
//! module, and the library's modules are imported at its root so that
//! `crate::device`, `crate::isa`, … name them there.

mod cli;

#[allow(unused_imports)]
use tpb_emu::{device, files, frontend, isa, limits, model, neff, npy, runtime, viz};

use clap::builder::TypedValueParser as _;
use clap::{Parser, Subcommand, ValueEnum};
use cli::{CliError, Exit};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use tpb_emu::device::gpu::BackendChoice;
use tpb_emu::isa::Engine;
use tpb_emu::isa::validate::Target;
use tpb_emu::limits::Arch;

#[derive(Parser)]
#[command(
    name = "tpb-emu",
    version,
    about = "Emulator of the AWS Neuron TPB POOL engine"
)]
struct Args {
    /// Refuse any input file (stream, .npy, manifest) larger than this many bytes
    /// (e.g. 4096, 64M, 4G; default 4G, or TPB_EMU_MAX_INPUT_BYTES).
    #[arg(long, global = true, value_name = "BYTES", value_parser = parse_bytes)]
    max_input_bytes: Option<u64>,
    #[command(subcommand)]
    command: Command,
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    tpb_emu::files::parse_bytes(s)
        .ok_or_else(|| format!("`{s}` is not a byte count such as 4096 or 4G"))
}

#[derive(Clone, Copy, ValueEnum)]
enum EngineArg {
    Pe,
    Act,
    Pool,
    Dve,
    Sp,
}

impl From<EngineArg> for Engine {
    fn from(e: EngineArg) -> Engine {
        match e {
            EngineArg::Pe => Engine::Pe,
            EngineArg::Act => Engine::Act,
            EngineArg::Pool => Engine::Pool,
            EngineArg::Dve => Engine::Dve,
            EngineArg::Sp => Engine::Sp,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum ArchArg {
    Sunda,
    Cayman,
    Mariana,
}

impl From<ArchArg> for Arch {
    fn from(a: ArchArg) -> Arch {
        match a {
            ArchArg::Sunda => Arch::Sunda,
            ArchArg::Cayman => Arch::Cayman,
            ArchArg::Mariana => Arch::Mariana,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum BackendArg {
    /// Any GPU adapter, software ones included; exit 5 without one.
    Gpu,
    /// The CPU reference executor.
    Cpu,
    /// The first hardware GPU, else the CPU backend.
    Auto,
}

impl From<BackendArg> for BackendChoice {
    fn from(b: BackendArg) -> BackendChoice {
        match b {
            BackendArg::Gpu => BackendChoice::Gpu,
            BackendArg::Cpu => BackendChoice::Cpu,
            BackendArg::Auto => BackendChoice::Auto,
        }
    }
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Pool throughput beside the same backend's copy (GB/s), and small-record rate.
    Pool {
        /// The backend to measure.
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Input bytes of the large record over all 128 lanes.
        #[arg(long, default_value_t = cli::bench::DEFAULT_BYTES)]
        bytes: u64,
        /// Timed repetitions; the best is reported.
        #[arg(long, default_value_t = 5)]
        repeat: u32,
        /// Records in the small-record stream.
        #[arg(long, default_value_t = 10_000)]
        records: u32,
        /// GPU only: runs of 4 outputs per invocation of the fast path (default: 4 on a
        /// software adapter, 1 on hardware), to compare the choices on one adapter.
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(["1", "2", "4"]).map(|s| s.parse::<u32>().expect("listed")))]
        rows_runs: Option<u32>,
        /// The fraction of the sources' 4-byte words left nonzero, 0 to 1 (default 1: random
        /// bytes, next to no zero word). NonzeroWithCount's speed depends on it.
        #[arg(long, default_value_t = 1.0)]
        nonzero_fraction: f64,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// A DMA-in -> Pool 2x2 -> DMA-out program beside the same backend's copy of its bytes.
    Program {
        /// The backend to measure.
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Input bytes over all 128 lanes.
        #[arg(long, default_value_t = cli::bench::DEFAULT_BYTES)]
        bytes: u64,
        /// Timed repetitions; the best is reported.
        #[arg(long, default_value_t = 5)]
        repeat: u32,
        /// Also print one JSON object on the last line.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum Command {
    /// Validate every record of a raw stream (exit 3 on the first invalid one).
    Validate {
        /// The stream: raw 64-byte records.
        file: PathBuf,
        /// The engine whose stream this is [default: pool; for a .neff: every engine].
        #[arg(long, value_enum)]
        engine: Option<EngineArg>,
        /// The silicon generation [default: cayman; for a .neff: its target, NEFF-EC-17].
        #[arg(long, value_enum)]
        arch: Option<ArchArg>,
        /// One JSON object per record; goes on past invalid records.
        #[arg(long)]
        json: bool,
        /// Lower the stream's pseudo-instructions first (SPEC §8); errors give both offsets.
        #[arg(long)]
        lower: bool,
        #[command(flatten)]
        neff: cli::neff::NeffFlags,
    },
    /// Lower every engine stream of a program and write DIR/<engine>.bin (for a manifest, also
    /// its inputs and DIR/program.toml).
    Lower {
        /// The manifest (see docs/programs.md), or a .neff.
        manifest: PathBuf,
        /// Where the lowered streams are written.
        #[arg(long)]
        out: PathBuf,
        /// NEFF only: the generation for a target written as `*` (NEFF-EC-17).
        #[arg(long, value_enum)]
        arch: Option<ArchArg>,
        #[command(flatten)]
        neff: cli::neff::NeffFlags,
    },
    /// Print a stream as text, one line per record.
    Disasm {
        /// The stream: raw 64-byte records, or a .neff.
        file: PathBuf,
        /// NEFF only: the engine whose stream is printed [default: every engine].
        #[arg(long, value_enum)]
        engine: Option<EngineArg>,
        /// NEFF only: the generation for a target written as `*` (NEFF-EC-17).
        #[arg(long, value_enum)]
        arch: Option<ArchArg>,
        #[command(flatten)]
        neff: cli::neff::NeffFlags,
    },
    /// Show what a NEFF holds: header, members, engines, opcodes, variables, I/O.
    Inspect {
        /// The NEFF.
        model: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// The generation for a target written as `*` (NEFF-EC-17).
        #[arg(long, value_enum)]
        arch: Option<ArchArg>,
        #[command(flatten)]
        neff: cli::neff::NeffFlags,
    },
    /// Write a program (a TOML manifest) as a NEFF (SPEC-NEFF §2.5, NEFF-EC-13).
    Pack {
        /// The manifest (see docs/programs.md).
        manifest: PathBuf,
        /// The NEFF to write.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Assemble text into a raw stream.
    Asm {
        /// The text (.tpbs).
        file: PathBuf,
        /// Where to write the records.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Run the built-in example end to end: pooling programs, checks, PNGs.
    Demo(cli::demo::DemoArgs),
    /// Framework-style max/avg pooling of an N×C×L, N×C×H×W or N×C×D×H×W .npy, compiled to
    /// a TPB program and run (`pool2d` is the same command).
    #[command(visible_alias = "pool2d")]
    Pool(Box<cli::pool::PoolArgs>),
    /// Draw a tensor's channel planes as a PNG montage.
    Viz(cli::viz::VizArgs),
    /// List the GPU adapters and what --backend auto would use.
    Info,
    /// Benchmarks.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Run a POOL-engine stream on a backend: load inputs, execute, dump outputs.
    Exec {
        /// The stream: raw 64-byte records.
        file: PathBuf,
        /// The silicon generation.
        #[arg(long, value_enum, default_value = "cayman")]
        arch: ArchArg,
        /// Print the dispatch trace (one line per record, then the pool cores' lines).
        #[arg(long)]
        trace: bool,
        /// ADDR=in.npy: write the array's bytes at ADDR (sbuf:P:OFF, psum:P:OFF or a hex ADDR4).
        #[arg(long, value_name = "ADDR=NPY")]
        load: Vec<String>,
        /// ADDR:DTYPE:SHAPE=out.npy: after the run, write memory at ADDR as an array
        /// (SHAPE: axes joined by `x`, lanes first, e.g. 128x4x4).
        #[arg(long, value_name = "ADDR:DTYPE:SHAPE=NPY")]
        dump: Vec<String>,
        /// Which backend executes.
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Also draw every dump as DIR/<stem>.png (a montage of its planes).
        #[arg(long, value_name = "DIR")]
        png: Option<PathBuf>,
        /// Refuse (exit 1) a stream whose records would fold more elements than this.
        #[arg(long, default_value_t = tpb_emu::limits::DEFAULT_MAX_WORK)]
        max_work: u64,
    },
    /// Run a whole program (a TOML manifest of engine streams and DRAM variables, or a .neff).
    Run {
        /// The manifest (see docs/programs.md), or a .neff.
        manifest: PathBuf,
        /// NEFF only: NAME=FILE.npy for each public input.
        #[arg(long, value_name = "NAME=NPY")]
        input: Vec<String>,
        /// NEFF only: the generation for a target written as `*` (NEFF-EC-17).
        #[arg(long, value_enum)]
        arch: Option<ArchArg>,
        #[command(flatten)]
        neff: cli::neff::NeffFlags,
        /// Which backend executes Pool records.
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Where each output variable is written as <name>.npy.
        #[arg(long, default_value = cli::run::DEFAULT_OUT)]
        out: PathBuf,
        /// Print a line per record (engine, offset, disassembly, wait) and the dispatch trace.
        #[arg(long)]
        trace: bool,
        /// Print the summary as one JSON object.
        #[arg(long)]
        json: bool,
        /// Stop with an error after this many records (a program that never ends).
        #[arg(long, default_value_t = tpb_emu::runtime::DEFAULT_MAX_RECORDS)]
        max_records: u64,
        /// Also draw every output variable as DIR/<name>.png (a montage of its planes).
        #[arg(long, value_name = "DIR")]
        png: Option<PathBuf>,
        /// Stop with an error once the program would move (DMA) or fold (Pool) more
        /// elements than this.
        #[arg(long, default_value_t = tpb_emu::limits::DEFAULT_MAX_WORK)]
        max_work: u64,
        /// Also write the run's timeline as a Chrome trace-event / Perfetto JSON file
        /// (see docs/timeline.md).
        #[arg(long, value_name = "FILE.json")]
        timeline: Option<PathBuf>,
        /// Also write a self-contained HTML report of the run (summary, timeline, records,
        /// pictures; see docs/debugging.md).
        #[arg(long, value_name = "FILE.html")]
        report: Option<PathBuf>,
        /// After record N of ENGINE's (lowered) stream has executed, write SBUF and PSUM
        /// (sbuf.npy, psum.npy: one row per partition) and every DRAM variable to DIR
        /// (repeatable; see docs/debugging.md).
        #[arg(long, value_name = "ENGINE:N=DIR")]
        snapshot: Vec<String>,
    },
    /// Explain one output element: the chain of records (and their source elements) that
    /// made it, back to inputs, constants or "never written" (see docs/debugging.md).
    Why {
        /// The manifest (see docs/programs.md), or a .neff.
        source: PathBuf,
        /// The element: OUTPUT[I,J,...], NumPy order (e.g. y[0,3,5,7]).
        element: String,
        /// NAME=FILE.npy for an input (as `run` takes them).
        #[arg(long, value_name = "NAME=NPY")]
        input: Vec<String>,
        /// NEFF only: the generation for a target written as `*` (NEFF-EC-17).
        #[arg(long, value_enum)]
        arch: Option<ArchArg>,
        #[command(flatten)]
        neff: cli::neff::NeffFlags,
        /// Which backend's outputs to explain (tracking runs on the CPU reference; another
        /// backend's outputs must equal it).
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Print the chain as one JSON object.
        #[arg(long)]
        json: bool,
        /// Stop with an error after this many records.
        #[arg(long, default_value_t = tpb_emu::runtime::DEFAULT_MAX_RECORDS)]
        max_records: u64,
        /// Stop with an error once the program would move or fold more elements than this.
        #[arg(long, default_value_t = tpb_emu::limits::DEFAULT_MAX_WORK)]
        max_work: u64,
    },
}

impl Command {
    /// Whether the command may open a GPU adapter.
    fn may_open_gpu(&self) -> bool {
        match self {
            Command::Info | Command::Bench(_) => true,
            Command::Exec { backend, .. }
            | Command::Run { backend, .. }
            | Command::Why { backend, .. } => !matches!(backend, BackendArg::Cpu),
            Command::Pool(a) => !matches!(a.backend, cli::pool::BackendOpt::Cpu),
            Command::Demo(a) => !matches!(a.backend, cli::pool::BackendOpt::Cpu),
            _ => false,
        }
    }

    /// Whether an output of the command is the standard output (`-`): its
    /// report then goes to stderr, so that stdout carries the output alone.
    fn writes_stdout(&self) -> bool {
        let std = |p: &PathBuf| tpb_emu::files::is_stdout(p);
        match self {
            Command::Asm { output, .. } | Command::Pack { output, .. } => std(output),
            Command::Viz(a) => std(&a.output),
            Command::Pool(a) => {
                std(&a.output)
                    || a.indices.as_ref().is_some_and(std)
                    || a.emit_neff.as_ref().is_some_and(std)
                    || a.report.as_ref().is_some_and(std)
            }
            Command::Run {
                timeline, report, ..
            } => timeline.as_ref().is_some_and(std) || report.as_ref().is_some_and(std),
            Command::Exec { dump, .. } => dump.iter().any(|d| {
                d.rsplit_once('=')
                    .is_some_and(|(_, f)| std(&PathBuf::from(f)))
            }),
            _ => false,
        }
    }

    /// Whether the command prints JSON (its errors are then a JSON object too).
    fn json(&self) -> bool {
        match self {
            Command::Validate { json, .. }
            | Command::Run { json, .. }
            | Command::Why { json, .. } => *json,
            Command::Bench(BenchCommand::Pool { json, .. })
            | Command::Bench(BenchCommand::Program { json, .. }) => *json,
            _ => false,
        }
    }
}

fn run(args: Args) -> Result<(), CliError> {
    if args.command.writes_stdout() {
        // Not locked for the whole command: the signal handler's thread never waits on it.
        run_into(args, &mut std::io::stderr())
    } else {
        run_into(args, &mut std::io::stdout().lock())
    }
}

/// Runs the command, its report going to `out`.
fn run_into(args: Args, out: &mut dyn Write) -> Result<(), CliError> {
    let mut out = out;
    match args.command {
        Command::Validate {
            file,
            engine,
            arch,
            json,
            lower,
            neff,
        } => {
            if cli::neff::is_neff(&file) {
                let (e, a) = (engine.map(Engine::from), arch.map(Arch::from));
                return cli::neff::validate(&file, e, a, &neff, &mut out);
            }
            let target = Target {
                engine: engine.map_or(Engine::Pool, Engine::from),
                arch: arch.map_or(Arch::Cayman, Arch::from),
            };
            if lower {
                cli::validate::run_lowered(&file, target, json, &mut out)
            } else {
                cli::validate::run(&file, target, json, &mut out)
            }
        }
        Command::Lower {
            manifest,
            out: dir,
            arch,
            neff,
        } => {
            if cli::neff::is_neff(&manifest) {
                let a = arch.map(Arch::from);
                return cli::neff::lower_cmd(&manifest, &dir, a, &neff, &mut out);
            }
            cli::lower::run(&manifest, &dir, &mut out)
        }
        Command::Disasm {
            file,
            engine,
            arch,
            neff,
        } => {
            if cli::neff::is_neff(&file) {
                let (e, a) = (engine.map(Engine::from), arch.map(Arch::from));
                return cli::neff::disasm(&file, e, a, &neff, &mut out);
            }
            cli::disasm::run(&file, &mut out)
        }
        Command::Inspect {
            model,
            json,
            arch,
            neff,
        } => cli::inspect::run(&model, json, arch.map(Arch::from), &neff, &mut out),
        Command::Pack { manifest, output } => cli::pack::run(&manifest, &output, &mut out),
        Command::Asm { file, output } => {
            let n = cli::asm::run(&file, &output)?;
            writeln!(out, "{n} records written to {}", output.display()).map_err(CliError::Stdout)
        }
        Command::Demo(a) => cli::demo::run(&a, &mut out),
        Command::Pool(a) => cli::pool::run(&a, &mut out),
        Command::Viz(a) => cli::viz::run(&a, &mut out),
        Command::Info => cli::info::run(&mut out),
        Command::Bench(BenchCommand::Pool {
            backend,
            bytes,
            repeat,
            records,
            rows_runs,
            nonzero_fraction,
            json,
        }) => {
            let args = cli::bench::BenchArgs {
                backend: backend.into(),
                bytes,
                repeat,
                small_records: records,
                rows_runs,
                nonzero_fraction,
                json,
            };
            cli::bench::run(&args, &mut out).map(|_| ())
        }
        Command::Bench(BenchCommand::Program {
            backend,
            bytes,
            repeat,
            json,
        }) => {
            let args = cli::bench_program::ProgramArgs {
                backend: backend.into(),
                bytes,
                repeat,
                json,
            };
            cli::bench_program::run(&args, &mut out).map(|_| ())
        }
        Command::Exec {
            file,
            arch,
            trace,
            load,
            dump,
            backend,
            png,
            max_work,
        } => {
            let args = cli::exec::ExecArgs {
                file,
                arch: arch.into(),
                trace,
                loads: load,
                dumps: dump,
                backend: backend.into(),
                png,
                max_work: Some(max_work),
            };
            cli::exec::run(&args, &mut out)
        }
        Command::Run {
            manifest,
            input,
            arch,
            neff,
            backend,
            out: dir,
            trace,
            json,
            max_records,
            png,
            max_work,
            timeline,
            report,
            snapshot,
        } => {
            let args = cli::run::RunArgs {
                manifest,
                inputs: input,
                arch: arch.map(Arch::from),
                flags: neff,
                backend: backend.into(),
                out: dir,
                trace,
                json,
                max_records,
                max_work,
                png,
                timeline,
                report,
                snapshots: snapshot,
            };
            cli::run::run(&args, &mut out)
        }
        Command::Why {
            source,
            element,
            input,
            arch,
            neff,
            backend,
            json,
            max_records,
            max_work,
        } => {
            let args = cli::why::WhyArgs {
                source,
                element,
                inputs: input,
                arch: arch.map(Arch::from),
                flags: neff,
                backend: backend.into(),
                json,
                max_records,
                max_work,
            };
            cli::why::run(&args, &mut out)
        }
    }
}

/// Quiet Vulkan on headless machines. Mesa's device-select Vulkan layer (an
/// implicit layer every Mesa install enables) connects to Wayland while
/// devices are enumerated, and libwayland prints `error: XDG_RUNTIME_DIR is
/// invalid or not set in the environment.` when that variable is missing,
/// once per enumeration. The layer's only switch is the environment variable
/// `NODEVICE_SELECT`, set here for a command that may open a GPU. The layer
/// only reorders devices; wgpu enumerates every adapter and chooses itself,
/// so nothing else changes. (This replaced a re-run of the whole process with
/// the variable set: a signal sent to the parent alone left the child
/// running and writing.)
fn quiet_device_select() {
    let headless =
        std::env::var_os("XDG_RUNTIME_DIR").is_none_or(|d| !std::path::Path::new(&d).is_absolute());
    if headless && std::env::var_os("NODEVICE_SELECT").is_none() {
        // SAFETY: called first thing in `main`, before this process starts
        // any thread, so nothing reads or writes the environment meanwhile.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var("NODEVICE_SELECT", "1")
        };
    }
}

/// The exit code of a command stopped by SIGINT, SIGTERM or SIGHUP (the
/// shells' 128 + SIGINT).
const INTERRUPTED: i32 = 130;

/// On SIGINT, SIGTERM or SIGHUP: remove every temporary output file, then
/// exit with [`INTERRUPTED`] (README "Usage"). The list stays locked until
/// the process has gone, so no new temporary file appears meanwhile.
fn remove_temporaries_on_signals() {
    let installed = ctrlc::set_handler(|| {
        // Nothing is printed: the command's thread may hold stderr's lock.
        let _held = tpb_emu::files::remove_temporaries();
        std::process::exit(INTERRUPTED);
    });
    if let Err(e) = installed {
        eprintln!(
            "tpb-emu: warning: no signal handler ({e}); an interrupted command may leave temporary files"
        );
    }
}

fn main() -> ExitCode {
    // A bug must still honour the exit-code contract: report it as an internal error (1), not 101.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("tpb-emu: internal error: {info}");
        std::process::exit(Exit::Exec as i32);
    }));
    let args = Args::parse();
    if args.command.may_open_gpu() {
        quiet_device_select();
    }
    remove_temporaries_on_signals();
    let json = args.command.json();
    // `validate --json` already reports an invalid record as one of its lines.
    let validate = matches!(args.command, Command::Validate { .. });
    let limit = match args.max_input_bytes {
        Some(n) => Ok(n),
        None => tpb_emu::files::input_limit(),
    };
    let result = match limit {
        Ok(n) => {
            tpb_emu::files::set_input_limit(n);
            run(args)
        }
        Err(msg) => Err(CliError::Usage(msg)),
    };
    match result {
        Ok(()) => Exit::Ok.into(),
        Err(e) => {
            let code = e.exit();
            if json && !(validate && code == Exit::Invalid) {
                // The JSON modes answer in JSON on failure too (stdout), beside stderr's line.
                let obj = serde_json::json!({ "error": e.to_string(), "exit": code as u8 });
                println!("{obj}");
            }
            eprintln!("tpb-emu: {e}");
            code.into()
        }
    }
}
