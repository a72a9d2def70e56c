//! `tpb-emu run PROGRAM.toml|MODEL.neff [--input NAME=FILE.npy]... [--backend B] [--out DIR] [--png DIR] [--trace] [--json] [--max-records N] [--max-work N] [--timeline FILE] [--report FILE] [--snapshot ENGINE:N=DIR]...`
//!
//! One path for both sources, the library's model API ([`crate::model`]):
//! a NEFF or a manifest is loaded, its inputs given by name (a NEFF needs
//! every one; `--input` replaces a manifest's), and every option, budget,
//! check and output is the same code.
//!
//! Loads the manifest (any problem with it or the files it names: exit 4),
//! refuses an output that would overwrite a file the program reads or
//! another output (exit 2), stages the program (the first invalid record or
//! DMA footprint: exit 3), runs it with the EC-31 scheduler (a deadlock, a
//! bad branch target, a spent record or work budget: exit 1), writes every
//! output variable as `DIR/<name>.npy` (default `DIR`: `tpb-emu-out` in the
//! current folder, created if missing), and prints a summary: records
//! executed per engine and wall time; with `--json` the same as one JSON
//! object on the last line. The outputs appear only when the whole command
//! has succeeded: a failing run leaves the output folders as they were.
//! `--backend auto` opens no GPU adapter for a program without Pool records.
//! `--png DIR` also draws every output variable as `DIR/<name>.png`, a
//! montage of its planes ([`crate::viz::raw_montage`]).
//! `--trace` prints one line per record (engine, byte offset, disassembly,
//! wait satisfied), one per blocked wait, and the POOL engine's dispatch
//! lines. On a terminal, a progress bar appears on stderr once a run has
//! lasted a second (not with `--trace`).
//! `--timeline FILE.json` also writes the run's timeline, a Chrome
//! trace-event file ([`crate::runtime::timeline`], docs/timeline.md); with
//! `--json` the summary's `engines` gives each engine's records and virtual
//! busy and waiting cycles (TL-1), with or without it (the recorder is
//! attached only for `--json` or `--timeline`).
//! `--report FILE.html` also writes the run report, one self-contained HTML
//! page ([`crate::viz::report`], docs/debugging.md); for a small run it holds
//! every output element's `why` chain (two more CPU runs,
//! [`crate::model::why::why_many`]). Like every output it is
//! written only when the whole command succeeds: a run that fails (exit 1,
//! 3, 4, …) leaves no report, so the report's exit status is always 0.
//! `--snapshot ENGINE:N=DIR` (repeatable) writes SBUF, PSUM and every DRAM
//! variable after record N of ENGINE's stream ([`Snapshot`],
//! docs/debugging.md), through the same output policy.

use super::backend::Backend;
use super::neff::NeffFlags;
use super::{CliError, check_paths, named, png_bytes, write_npy};
use crate::device::Trace;
use crate::device::gpu::BackendChoice;
use crate::files::Outputs;
use crate::isa::enums::Engine;
use crate::limits::Arch;
use crate::model::{Finished, LoadOptions, Model, RunOptions, is_neff};
use crate::npy::read_npy;
use crate::runtime::timeline::EngineTotals;
use crate::runtime::{DEFAULT_MAX_RECORDS, Executed, Machine};
use crate::viz;
use serde::Serialize;
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The default output folder.
pub const DEFAULT_OUT: &str = "tpb-emu-out";

/// The arguments of `run`.
#[derive(Clone, Debug)]
pub struct RunArgs {
    /// The manifest, or a `.neff` ([`super::neff::is_neff`]).
    pub manifest: PathBuf,
    /// NEFF only: `NAME=FILE.npy`, one per public input.
    pub inputs: Vec<String>,
    /// NEFF only: `--arch` (NEFF-EC-17).
    pub arch: Option<Arch>,
    /// NEFF only: `--no-verify`, `--strict`.
    pub flags: NeffFlags,
    /// Which backend executes Pool records.
    pub backend: BackendChoice,
    /// Where the outputs go.
    pub out: PathBuf,
    /// Print the per-engine trace.
    pub trace: bool,
    /// Print the summary as one JSON object.
    pub json: bool,
    /// The record budget.
    pub max_records: u64,
    /// The work budget: elements moved or folded.
    pub max_work: u64,
    /// Where each output variable is also drawn as `<name>.png`.
    pub png: Option<PathBuf>,
    /// Where the run's timeline is written (Chrome trace-event JSON).
    pub timeline: Option<PathBuf>,
    /// Where the run report is written (self-contained HTML).
    pub report: Option<PathBuf>,
    /// `ENGINE:N=DIR`: memory after record N of ENGINE's stream.
    pub snapshots: Vec<String>,
}

impl Default for RunArgs {
    fn default() -> RunArgs {
        RunArgs {
            manifest: PathBuf::new(),
            inputs: Vec::new(),
            arch: None,
            flags: NeffFlags::default(),
            backend: BackendChoice::Auto,
            out: DEFAULT_OUT.into(),
            trace: false,
            json: false,
            max_records: DEFAULT_MAX_RECORDS,
            max_work: crate::limits::DEFAULT_MAX_WORK,
            png: None,
            timeline: None,
            report: None,
            snapshots: Vec::new(),
        }
    }
}

/// The summary, printed as text or JSON.
#[derive(Serialize, Debug)]
pub struct Summary {
    /// The manifest (a manifest run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
    /// The NEFF (a NEFF run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The generation.
    pub arch: &'static str,
    /// The backend that ran Pool records.
    pub backend: String,
    /// Records executed per engine, in engine order.
    pub records: Records,
    /// All records executed.
    pub total_records: u64,
    /// Per engine on the virtual clock of the timeline's cost model (TL-1).
    pub engines: Engines,
    /// Virtual cycles until the last engine or DMA queue went idle (TL-1).
    pub virtual_cycles: u64,
    /// Seconds spent loading and staging.
    pub stage_s: f64,
    /// Seconds spent running (scheduler and backend).
    pub run_s: f64,
    /// Seconds from start to the last output written.
    pub wall_s: f64,
    /// The files written.
    pub outputs: Vec<Output>,
    /// The timeline written with `--timeline`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline: Option<String>,
    /// The report written with `--report`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
    /// The folders written with `--snapshot`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub snapshots: Vec<String>,
}

/// Records executed per engine.
#[derive(Serialize, Debug)]
pub struct Records {
    /// PE.
    pub pe: u64,
    /// ACT.
    pub act: u64,
    /// POOL.
    pub pool: u64,
    /// DVE.
    pub dve: u64,
    /// SP.
    pub sp: u64,
}

/// Per-engine totals on the virtual clock (TL-1), in engine order.
#[derive(Serialize, Debug)]
pub struct Engines {
    /// PE.
    pub pe: EngineTotals,
    /// ACT.
    pub act: EngineTotals,
    /// POOL.
    pub pool: EngineTotals,
    /// DVE.
    pub dve: EngineTotals,
    /// SP.
    pub sp: EngineTotals,
}

impl Engines {
    /// The totals of `machine`'s timeline (zeros without one).
    pub fn of(machine: &Machine) -> Engines {
        let t = machine.timeline().map(|t| t.totals()).unwrap_or_default();
        Engines {
            pe: t[Engine::Pe as usize],
            act: t[Engine::Act as usize],
            pool: t[Engine::Pool as usize],
            dve: t[Engine::Dve as usize],
            sp: t[Engine::Sp as usize],
        }
    }
}

/// Writes `machine`'s timeline (when it recorded slices) into `outs` at `path`.
pub fn write_timeline(
    machine: &Machine,
    path: Option<&std::path::Path>,
    outs: &mut Outputs,
) -> Result<(), CliError> {
    if let (Some(path), Some(t)) = (path, machine.timeline()) {
        outs.write_with(path, &mut |w| t.write_json(machine.staged(), w))?;
    }
    Ok(())
}

/// One output file.
#[derive(Serialize, Debug)]
pub struct Output {
    /// The variable.
    pub name: String,
    /// Its dtype's text name.
    pub dtype: String,
    /// Its shape.
    pub shape: Vec<u64>,
    /// The file written.
    pub path: String,
    /// The picture written with `--png`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub png: Option<String>,
}

/// Runs `run`.
pub fn run(args: &RunArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let start = Instant::now();
    if args.arch.is_some() && !is_neff(&args.manifest) {
        return Err(CliError::Usage(
            "--arch is for a .neff; a manifest names its arch".into(),
        ));
    }
    let opts = LoadOptions {
        verify: !args.flags.no_verify,
        strict: args.flags.strict,
        arch: args.arch,
    };
    let snaps = args
        .snapshots
        .iter()
        .map(|s| Snapshot::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let model = Model::open(&args.manifest, &opts)?;
    for w in model.warnings() {
        eprintln!("tpb-emu: warning: {}: {w}", args.manifest.display());
    }
    let pairs = input_pairs(&args.inputs, &model)?;
    let what = if model.is_neff() {
        "the model"
    } else {
        "a program file"
    };
    let mut read: Vec<_> = model.files().iter().map(|p| named(what, p)).collect();
    read.extend(
        pairs
            .iter()
            .map(|(name, f)| named(format!("--input {name}"), f)),
    );
    let mut planned = planned_outputs(&model, args);
    for sn in &snaps {
        planned.extend(sn.files(&model));
    }
    check_paths(&read, &planned)?;
    let mut data = HashMap::new();
    for (name, file) in &pairs {
        let npy = read_npy(file)?;
        model.check_array(name, file, &npy)?;
        data.insert(name.clone(), npy.data);
    }
    let prepared = model.prepare(&data)?;
    // Kept for the report's provenance runs only.
    let why_inputs = args.report.is_some().then_some(data);
    for sn in &snaps {
        let n = prepared.staged().records(sn.engine);
        if sn.index >= n {
            return Err(CliError::Usage(format!(
                "--snapshot {}: the {} stream has {n} records (after lowering)",
                sn.arg, sn.engine
            )));
        }
    }
    let variables = model.variables();
    // The inputs' pictures, as the run starts (the run may change DRAM).
    let mut value_budget = viz::report::VALUE_BUDGET;
    let mut pictures = Vec::new();
    if args.report.is_some() {
        for t in model.inputs() {
            if let Some(bytes) = prepared.initial(&t.name) {
                pictures.push(report_picture(
                    &t,
                    viz::report::Role::Input,
                    bytes,
                    &mut value_budget,
                )?);
            }
        }
    }
    let stage_s = start.elapsed();
    let backend = Backend::open_for(args.backend, model.needs_device())?;
    let mut exec = backend.executor(model.arch())?;
    let mut trace = LineTrace {
        out: &mut *out,
        on: args.trace,
        err: None,
    };
    let opts = RunOptions {
        max_records: args.max_records,
        max_work: args.max_work,
        totals: args.json || args.timeline.is_some() || args.report.is_some(),
        slices: args.timeline.is_some() || args.report.is_some(),
    };
    let run_start = Instant::now();
    let mut bar = Progress::new(!args.trace);
    let mut outs = Outputs::new();
    let result = if snaps.is_empty() {
        prepared.run(exec.as_mut(), &opts, &mut trace, &mut |n| bar.update(n))
    } else {
        let mut taken = vec![false; snaps.len()];
        let mut failed = None;
        let r = prepared.run_watched(
            exec.as_mut(),
            &opts,
            &mut trace,
            &mut |n| bar.update(n),
            &mut |m: &mut Machine, ex: &mut dyn crate::device::Executor, at: Executed| {
                for (k, sn) in snaps.iter().enumerate() {
                    if taken[k] || sn.engine != at.engine || sn.index != at.index {
                        continue;
                    }
                    taken[k] = true;
                    m.sync(ex)?;
                    if let Err(e) = sn.write(m, &variables, &mut outs) {
                        failed = Some(e);
                        return Ok(std::ops::ControlFlow::Break(()));
                    }
                }
                Ok(std::ops::ControlFlow::Continue(()))
            },
        );
        if let Some(e) = failed {
            return Err(e);
        }
        if r.is_ok()
            && let Some(k) = taken.iter().position(|t| !t)
        {
            return Err(CliError::SnapshotNotReached(snaps[k].arg.clone()));
        }
        r
    };
    bar.finish();
    let run_s = run_start.elapsed();
    if let Some(e) = trace.err {
        return Err(CliError::Stdout(e));
    }
    let finished = result?;
    let machine = finished.machine();
    let outputs = write_outputs(&finished, args, &mut outs)?;
    write_timeline(machine, args.timeline.as_deref(), &mut outs)?;
    if let Some(path) = &args.report {
        for (t, data) in finished.outputs() {
            pictures.push(report_picture(
                t,
                viz::report::Role::Output,
                data,
                &mut value_budget,
            )?);
        }
        let (provenance, provenance_note) = report_provenance(
            &model,
            why_inputs.as_ref().unwrap_or(&HashMap::new()),
            &finished,
            exec.name(),
            &opts,
        );
        let summary = viz::report::Summary {
            provenance,
            provenance_note,
            source: args.manifest.display().to_string(),
            command: command_line(),
            backend: backend.describe(),
            stage_s: stage_s.as_secs_f64(),
            run_s: run_s.as_secs_f64(),
            wall_s: start.elapsed().as_secs_f64(),
            exit: 0,
            message: "ok (a failing run writes no report: README, output policy)".into(),
            warnings: model.warnings().to_vec(),
            output_files: outputs
                .iter()
                .map(|o| (o.name.clone(), o.path.clone()))
                .collect(),
            why_source: Some(
                std::iter::once(viz::report::shell_word(
                    &args.manifest.display().to_string(),
                ))
                .chain(
                    args.inputs
                        .iter()
                        .map(|i| format!("--input {}", viz::report::shell_word(i))),
                )
                .collect::<Vec<_>>()
                .join(" "),
            ),
        };
        outs.write_with(path, &mut |w| {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, w);
            viz::report::write_report(&summary, machine, &pictures, &mut w)?;
            w.flush()
        })?;
    }
    outs.commit()?;
    let ex = machine.executed();
    let source = args.manifest.display().to_string();
    let summary = Summary {
        manifest: (!model.is_neff()).then(|| source.clone()),
        model: model.is_neff().then_some(source),
        arch: model.arch().name(),
        backend: backend.describe(),
        records: Records {
            pe: ex[Engine::Pe as usize],
            act: ex[Engine::Act as usize],
            pool: ex[Engine::Pool as usize],
            dve: ex[Engine::Dve as usize],
            sp: ex[Engine::Sp as usize],
        },
        total_records: machine.total_executed(),
        engines: Engines::of(machine),
        virtual_cycles: machine.timeline().map_or(0, |t| t.end()),
        stage_s: stage_s.as_secs_f64(),
        run_s: run_s.as_secs_f64(),
        wall_s: start.elapsed().as_secs_f64(),
        outputs,
        timeline: args.timeline.as_ref().map(|p| p.display().to_string()),
        report: args.report.as_ref().map(|p| p.display().to_string()),
        snapshots: snaps.iter().map(|s| s.dir.display().to_string()).collect(),
    };
    print_summary(&summary, args.json, out).map_err(CliError::Stdout)
}

/// NEFF-EC-18: the `--input NAME=FILE.npy` pairs, checked against the
/// model's inputs (a malformed pair, an unknown or repeated name: exit 2).
/// A NEFF needs every public input (the model refuses a missing one); a
/// manifest's inputs come from its own files unless replaced here.
pub fn input_pairs(given: &[String], model: &Model) -> Result<Vec<(String, PathBuf)>, CliError> {
    let mut pairs: Vec<(String, PathBuf)> = Vec::new();
    for g in given {
        let Some((name, file)) = g.split_once('=') else {
            return Err(CliError::Usage(format!(
                "--input {g}: expected NAME=FILE.npy"
            )));
        };
        if pairs.iter().any(|p| p.0 == name) {
            return Err(CliError::Usage(format!("--input {name} is given twice")));
        }
        pairs.push((name.to_string(), PathBuf::from(file)));
    }
    let names: Vec<&str> = pairs.iter().map(|p| p.0.as_str()).collect();
    model.check_names(&names)?;
    Ok(pairs)
}

/// Every file `run` writes, named for the collision check.
fn planned_outputs(model: &Model, args: &RunArgs) -> Vec<(String, PathBuf)> {
    let mut outputs = Vec::new();
    for t in model.outputs() {
        let npy = args.out.join(format!("{}.npy", t.name));
        outputs.push(named(format!("output `{}`", t.name), &npy));
        if let Some(dir) = &args.png {
            let png = dir.join(format!("{}.png", t.name));
            outputs.push(named(format!("--png of `{}`", t.name), &png));
        }
    }
    if let Some(t) = &args.timeline {
        outputs.push(named("--timeline", t));
    }
    if let Some(r) = &args.report {
        outputs.push(named("--report", r));
    }
    outputs
}

/// The provenance chains of every output element of a small run
/// (`tpb-emu why`'s text, from the same library code: [`crate::model::why::why_many`]),
/// or why not (the page's note).
fn report_provenance(
    model: &Model,
    inputs: &HashMap<String, crate::files::HostBytes>,
    finished: &crate::model::Finished,
    backend: &'static str,
    opts: &RunOptions,
) -> (Option<viz::report::Provenance>, String) {
    let elements: u64 = finished
        .outputs()
        .map(|(t, _)| t.shape.iter().product::<u64>())
        .sum();
    let records = finished.machine().total_executed();
    if elements > viz::report::MAX_WHY_ELEMENTS {
        return (
            None,
            format!(
                "the outputs have {elements} elements; the report precomputes chains for at most {}",
                viz::report::MAX_WHY_ELEMENTS
            ),
        );
    }
    if records > viz::report::MAX_WHY_RECORDS {
        return (
            None,
            format!(
                "the run executed {records} records; the report precomputes chains for at most {}",
                viz::report::MAX_WHY_RECORDS
            ),
        );
    }
    let mut asked = Vec::new();
    for (t, _) in finished.outputs() {
        let n: u64 = t.shape.iter().product();
        for flat in 0..n {
            let mut index = vec![0; t.shape.len()];
            let mut rest = flat;
            for (a, &d) in t.shape.iter().enumerate().rev() {
                index[a] = rest % d;
                rest /= d;
            }
            asked.push((t.name.clone(), index));
        }
    }
    let outputs: Option<Vec<(String, Vec<u8>)>> = (backend != "cpu").then(|| {
        finished
            .outputs()
            .map(|(t, b)| (t.name.clone(), b.to_vec()))
            .collect()
    });
    let why_opts = RunOptions {
        max_records: opts.max_records,
        max_work: opts.max_work,
        ..RunOptions::default()
    };
    match crate::model::why::why_many(
        model,
        inputs,
        &asked,
        backend,
        outputs.as_deref(),
        &why_opts,
    ) {
        Ok(all) => {
            let mut p = viz::report::Provenance::default();
            for ((name, _), w) in asked.iter().zip(&all) {
                p.push(name, &w.text());
            }
            (Some(p), String::new())
        }
        Err(e) => (None, format!("precomputing the chains failed: {e}")),
    }
}

/// A variable's picture for the report.
pub fn report_picture(
    t: &crate::model::TensorInfo,
    role: viz::report::Role,
    bytes: &[u8],
    budget: &mut usize,
) -> Result<viz::report::Picture, CliError> {
    viz::report::Picture::new(&t.name, role, t.dtype, &t.shape, bytes, budget).map_err(|source| {
        CliError::Picture {
            what: format!("--report: {}", t.name),
            source,
        }
    })
}

/// The command line as typed (for the report's summary).
pub fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// Writes every output as `<out>/<name>.npy` (and its picture) into `outs`.
fn write_outputs(
    finished: &Finished,
    args: &RunArgs,
    outs: &mut Outputs,
) -> Result<Vec<Output>, CliError> {
    outs.create_dir(&args.out)?;
    let mut outputs = Vec::new();
    for (t, data) in finished.outputs() {
        let path = args.out.join(format!("{}.npy", t.name));
        write_npy(outs, &path, t.dtype, &t.shape, data)?;
        let png = match &args.png {
            Some(dir) => {
                let png = dir.join(format!("{}.png", t.name));
                let img = viz::raw_montage(t.dtype, &t.shape, data, &viz::Options::default())
                    .map_err(|source| CliError::Picture {
                        what: format!("--png {}", t.name),
                        source,
                    })?;
                outs.write(&png, &png_bytes(&img, &png)?)?;
                Some(png.display().to_string())
            }
            None => None,
        };
        outputs.push(Output {
            name: t.name.clone(),
            dtype: t.dtype.to_string(),
            shape: t.shape.clone(),
            path: path.display().to_string(),
            png,
        });
    }
    Ok(outputs)
}

fn print_summary(s: &Summary, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    if json {
        let line = serde_json::to_string(s).map_err(std::io::Error::other)?;
        return writeln!(out, "{line}");
    }
    let r = &s.records;
    let source = s.manifest.as_ref().or(s.model.as_ref());
    writeln!(
        out,
        "ok: {} ({}, {})",
        source.map_or("", String::as_str),
        s.arch,
        s.backend
    )?;
    writeln!(
        out,
        "records executed: pe {}, act {}, pool {}, dve {}, sp {} (total {})",
        r.pe, r.act, r.pool, r.dve, r.sp, s.total_records
    )?;
    writeln!(
        out,
        "wall time: {} (staging {}, run {})",
        secs(s.wall_s),
        secs(s.stage_s),
        secs(s.run_s)
    )?;
    for o in &s.outputs {
        writeln!(out, "wrote {} ({} {:?})", o.path, o.dtype, o.shape)?;
        if let Some(png) = &o.png {
            writeln!(out, "wrote {png}")?;
        }
    }
    if let Some(t) = &s.timeline {
        writeln!(
            out,
            "wrote {t} (timeline: {} virtual cycles, an estimate: TL-1)",
            s.virtual_cycles
        )?;
    }
    if let Some(r) = &s.report {
        writeln!(out, "wrote {r} (report)")?;
    }
    for d in &s.snapshots {
        writeln!(out, "wrote {d} (snapshot)")?;
    }
    Ok(())
}

/// `--snapshot ENGINE:N=DIR`: device memory after record `N` of
/// `ENGINE`'s lowered stream has executed (the first time it does, in the
/// scheduler's order): `DIR/sbuf.npy` and `DIR/psum.npy` (uint8, one row
/// per partition: the partition's active bytes) and `DIR/<name>.npy` for
/// every DRAM variable. Written through the output policy
/// ([`crate::files::Outputs`]): the files appear only when the whole
/// command succeeds. On a backend that keeps its own memory the machine
/// reads back the bytes its ops made newer ([`Machine::sync`]), and holds
/// no DRAM variable for the run, so every backend writes the same files.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The argument as given.
    pub arg: String,
    /// The engine.
    pub engine: Engine,
    /// The record's index in the engine's lowered stream (byte offset / 64).
    pub index: usize,
    /// The folder.
    pub dir: PathBuf,
}

impl Snapshot {
    /// Parses `ENGINE:N=DIR` (a malformed one: exit 2).
    pub fn parse(s: &str) -> Result<Snapshot, CliError> {
        let bad = || {
            CliError::Usage(format!(
                "--snapshot {s}: expected ENGINE:N=DIR (ENGINE one of pe, act, pool, dve, sp; N a \
                 record index of its stream)"
            ))
        };
        let (at, dir) = s.split_once('=').ok_or_else(bad)?;
        let (engine, n) = at.split_once(':').ok_or_else(bad)?;
        let engine = Engine::ALL
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(engine.trim()))
            .ok_or_else(bad)?;
        let index = n.trim().parse::<usize>().map_err(|_| bad())?;
        if dir.is_empty() {
            return Err(bad());
        }
        Ok(Snapshot {
            arg: s.to_string(),
            engine,
            index,
            dir: PathBuf::from(dir),
        })
    }

    /// Every file it writes, named for the collision check.
    fn files(&self, model: &Model) -> Vec<(String, PathBuf)> {
        let mut v = vec![
            named(
                format!("--snapshot {}", self.arg),
                &self.dir.join("sbuf.npy"),
            ),
            named(
                format!("--snapshot {}", self.arg),
                &self.dir.join("psum.npy"),
            ),
        ];
        for t in model.variables() {
            v.push(named(
                format!("--snapshot {}", self.arg),
                &self.dir.join(format!("{}.npy", t.name)),
            ));
        }
        v
    }

    /// Writes the machine's memory now into `outs`.
    fn write(
        &self,
        m: &Machine,
        variables: &[crate::model::TensorInfo],
        outs: &mut Outputs,
    ) -> Result<(), CliError> {
        use crate::isa::tensor::Region;
        outs.create_dir(&self.dir)?;
        for (name, region) in [("sbuf.npy", Region::Sbuf), ("psum.npy", Region::Psum)] {
            let bytes = m.memory().region_bytes(region);
            let per = m.memory().active_bytes(region) as u64;
            let shape = [crate::limits::PARTITIONS as u64, per];
            write_npy(
                outs,
                &self.dir.join(name),
                crate::isa::Dtype::UINT8,
                &shape,
                bytes,
            )?;
        }
        let dram = m.dram();
        for (name, base, len) in m.staged().layout() {
            let bytes = &dram[base as usize..(base + len) as usize];
            let path = self.dir.join(format!("{name}.npy"));
            match variables.iter().find(|t| t.name == name && t.bytes == len) {
                Some(t) => write_npy(outs, &path, t.dtype, &t.shape, bytes)?,
                None => write_npy(outs, &path, crate::isa::Dtype::UINT8, &[len], bytes)?,
            }
        }
        Ok(())
    }
}

fn secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else {
        format!("{:.3} ms", s * 1e3)
    }
}

/// Trace lines straight to the output; the first write error is kept.
struct LineTrace<'a> {
    out: &'a mut dyn Write,
    on: bool,
    err: Option<std::io::Error>,
}

impl Trace for LineTrace<'_> {
    fn enabled(&self) -> bool {
        self.on && self.err.is_none()
    }
    fn line(&mut self, line: &str) {
        if self.err.is_none() {
            self.err = writeln!(self.out, "{line}").err();
        }
    }
}

/// The progress bar: on stderr, only on a terminal, only after a second.
struct Progress {
    allowed: bool,
    start: Instant,
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    /// How long a run goes before the bar appears.
    const DELAY: Duration = Duration::from_secs(1);

    fn new(allowed: bool) -> Progress {
        Progress {
            allowed: allowed && std::io::stderr().is_terminal(),
            start: Instant::now(),
            bar: None,
        }
    }

    fn update(&mut self, executed: u64) {
        if !self.allowed {
            return;
        }
        if self.bar.is_none() && self.start.elapsed() >= Self::DELAY {
            let bar = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::stderr(),
            );
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} {elapsed} {human_pos} records ({per_sec})",
                )
                .expect("a valid template"),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(executed);
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
