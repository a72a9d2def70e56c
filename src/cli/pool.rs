//! `tpb-emu pool` (alias `pool2d`): framework-style max/avg pooling of an
//! N×C×L, N×C×H×W or N×C×D×H×W `.npy`, compiled to a TPB program (see
//! [`crate::frontend`]) and run on a backend.
//!
//! ```text
//! tpb-emu pool --input x.npy [--dtype bf16] --mode max|avg --kernel [KD,]KH,KW
//!              [--stride ...] [--padding P|PH,PW|PD,PH,PW | --pads BEGINS...,ENDS...]
//!              [--dilation ...] [--ceil-mode] [--count-include-pad] [--indices idx.npy]
//!              --output y.npy [--backend B] [--emit DIR] [--emit-neff F] [--png DIR]
//! ```
//!
//! `--kernel`, `--stride`, `--dilation` and `--padding` take one number per
//! spatial axis of the input (L; H,W; D,H,W), or one number for all of them
//! (a 1-D input also takes today's `1,L` pair). The stride defaults to the
//! kernel. `--padding` is PyTorch's symmetric padding and keeps PyTorch's
//! rule (each pad at most half the effective kernel); `--pads` is ONNX's
//! explicit form, the begin values then the end values of the spatial axes
//! (2, 4 or 6 numbers; a 1-D input also takes TOP,LEFT,BOTTOM,RIGHT), and
//! keeps ONNX Runtime's rule (each pad smaller than the kernel). A malformed flag value
//! (`--kernel 2,2,2`) or an output path equal to the input or to another
//! output is a usage error (exit 2); parameters that do not fit the input
//! (a padding over half the kernel, a dilated window whose taps all fall in
//! the padding) are bad input (exit 4). The outputs
//! appear only when the whole command has succeeded. `--report FILE.html`
//! also writes the run report of the compiled program ([`crate::viz::report`]).

use super::backend::Backend;
use super::{CliError, check_paths, named, npy_bytes, png_bytes, write_npy};
use crate::device::gpu::BackendChoice;
use crate::files::Outputs;
use crate::frontend::{self, OptionError, Pool, PoolMode, PoolOptions, emit, read_tensor};
use crate::isa::enums::Dtype;
use crate::viz;
use clap::ValueEnum;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `--backend` of the front-end commands.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum BackendOpt {
    /// Any GPU adapter, software ones included; exit 5 without one.
    Gpu,
    /// The CPU reference executor.
    Cpu,
    /// The first hardware GPU, else the CPU backend.
    Auto,
}

impl From<BackendOpt> for BackendChoice {
    fn from(b: BackendOpt) -> BackendChoice {
        match b {
            BackendOpt::Gpu => BackendChoice::Gpu,
            BackendOpt::Cpu => BackendChoice::Cpu,
            BackendOpt::Auto => BackendChoice::Auto,
        }
    }
}

/// `--mode`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ModeOpt {
    /// max_pool2d.
    Max,
    /// avg_pool2d.
    Avg,
}

/// `--dtype`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DtypeOpt {
    /// float32 .npy.
    Fp32,
    /// float16 .npy.
    Fp16,
    /// uint16 .npy holding bf16 bits.
    Bf16,
    /// uint8 .npy.
    Uint8,
}

/// The arguments of `pool2d`.
#[derive(Clone, Debug, clap::Args)]
pub struct PoolArgs {
    /// The input: N×C×L, N×C×H×W or N×C×D×H×W float32, float16, uint8, or uint16 bf16 bits
    /// with --dtype bf16.
    #[arg(long)]
    pub input: PathBuf,
    /// The input's element type (bf16: read a uint16 .npy as bf16 bits); by default the .npy's.
    #[arg(long, value_enum)]
    pub dtype: Option<DtypeOpt>,
    /// max or avg.
    #[arg(long, value_enum)]
    pub mode: ModeOpt,
    /// One number per spatial axis (L; KH,KW; KD,KH,KW), or one for all.
    #[arg(long)]
    pub kernel: String,
    /// As --kernel; defaults to the kernel.
    #[arg(long)]
    pub stride: Option<String>,
    /// PyTorch's symmetric padding, as --kernel (each pad at most half the effective kernel).
    #[arg(long, conflicts_with = "pads")]
    pub padding: Option<String>,
    /// ONNX's explicit pads: every axis's begin, then every axis's end (BEGIN,END;
    /// TOP,LEFT,BOTTOM,RIGHT; FRONT,TOP,LEFT,BACK,BOTTOM,RIGHT); each smaller than the kernel.
    #[arg(long)]
    pub pads: Option<String>,
    /// As --kernel.
    #[arg(long)]
    pub dilation: Option<String>,
    /// Round the output size up (PyTorch's ceil_mode).
    #[arg(long)]
    pub ceil_mode: bool,
    /// Average: count the padding in the divisor (PyTorch's default is true; here it is opt-in).
    #[arg(long)]
    pub count_include_pad: bool,
    /// Max: write PyTorch's int64 indices here.
    #[arg(long)]
    pub indices: Option<PathBuf>,
    /// Where the output goes.
    #[arg(long)]
    pub output: PathBuf,
    /// Which backend executes Pool records.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendOpt,
    /// Write the generated program (manifest, streams, input) for `tpb-emu run` and `disasm`.
    #[arg(long)]
    pub emit: Option<PathBuf>,
    /// Write the generated program as a NEFF (`tpb-emu run FILE --input x=X.npy`).
    #[arg(long, value_name = "FILE")]
    pub emit_neff: Option<PathBuf>,
    /// Write PNGs of the input, output and indices.
    #[arg(long)]
    pub png: Option<PathBuf>,
    /// Stop with exit 1 once the program would move or fold more elements than this.
    #[arg(long, default_value_t = crate::limits::DEFAULT_MAX_WORK)]
    pub max_work: u64,
    /// Also write a self-contained HTML report of the run (docs/debugging.md).
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
}

fn usage(s: String) -> CliError {
    CliError::Usage(s)
}

fn list(flag: &str, s: &str) -> Result<Vec<u32>, CliError> {
    s.split(',')
        .map(|t| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| usage(format!("--{flag} {s}: `{t}` is not a non-negative integer")))
        })
        .collect()
}

/// The pooling parameters the arguments describe, for an input of `rank`
/// axes: the flags' numbers, mapped by the library's [`PoolOptions`].
pub fn params(a: &PoolArgs, rank: usize) -> Result<Pool, CliError> {
    let mode = match a.mode {
        ModeOpt::Max => PoolMode::Max,
        ModeOpt::Avg => PoolMode::Avg,
    };
    let opt = |flag: &str, s: &Option<String>| s.as_ref().map(|s| list(flag, s)).transpose();
    let opts = PoolOptions {
        kernel: list("kernel", &a.kernel)?,
        stride: opt("stride", &a.stride)?,
        dilation: opt("dilation", &a.dilation)?,
        padding: opt("padding", &a.padding)?,
        pads: opt("pads", &a.pads)?,
        ceil_mode: a.ceil_mode,
        count_include_pad: a.count_include_pad,
        return_indices: a.indices.is_some(),
        ..PoolOptions::new(mode, Vec::new())
    };
    opts.to_pool(rank).map_err(|e| match e {
        OptionError::Count { option, expected } => {
            let given = match option {
                "kernel" => Some(&a.kernel),
                "stride" => a.stride.as_ref(),
                "dilation" => a.dilation.as_ref(),
                "padding" => a.padding.as_ref(),
                _ => a.pads.as_ref(),
            };
            usage(format!(
                "--{option} {}: {expected}",
                given.map_or("", String::as_str)
            ))
        }
        OptionError::BothPaddings => usage("--padding and --pads are exclusive".into()),
        OptionError::Mode { option, .. } => usage(match option {
            "return_indices" => "--indices needs --mode max".into(),
            _ => "--count-include-pad needs --mode avg".into(),
        }),
    })
}

fn png(
    img: &image::RgbImage,
    dir: &Path,
    name: &str,
    outs: &mut Outputs,
    written: &mut Vec<PathBuf>,
) -> Result<(), CliError> {
    let path = dir.join(name);
    outs.write(&path, &png_bytes(img, &path)?)?;
    written.push(path);
    Ok(())
}

/// Every file `pool2d` would write (for the collision check before it runs).
fn planned_outputs(a: &PoolArgs) -> Vec<(String, PathBuf)> {
    let mut o = vec![named("--output", &a.output)];
    if let Some(i) = &a.indices {
        o.push(named("--indices", i));
    }
    if let Some(f) = &a.emit_neff {
        o.push(named("--emit-neff", f));
    }
    if let Some(dir) = &a.png {
        for n in ["input.png", "output.png", "indices.png"] {
            o.push(named("--png", &dir.join(n)));
        }
    }
    if let Some(r) = &a.report {
        o.push(named("--report", r));
    }
    o
}

/// Runs `compiled` as [`frontend::Compiled::run_owned`] does, with the
/// timeline's slices recorded, and returns the machine too (for the report).
fn run_recorded(
    mut compiled: frontend::Compiled,
    exec: &mut dyn crate::device::Executor,
    max_work: u64,
) -> Result<(frontend::PoolOutput, crate::runtime::Machine), CliError> {
    let program = std::mem::take(&mut compiled.program);
    let staged = crate::runtime::stage_owned(program).map_err(super::error::generated)?;
    let mut m = crate::runtime::Machine::from_owned(staged);
    m.set_max_work(max_work);
    m.set_dram_only(true);
    m.record_timeline(true);
    m.run(exec, &mut crate::device::NoTrace)?;
    let output = frontend::Tensor {
        dtype: compiled.dtype,
        shape: compiled.plan.out_shape(),
        data: m.variable("y").unwrap_or_default().to_vec().into(),
    };
    let indices = compiled
        .plan
        .params
        .return_indices
        .then(|| compiled.indices(m.variable("argmax").unwrap_or_default()));
    Ok((frontend::PoolOutput { output, indices }, m))
}

/// Runs `pool2d`.
pub fn run(a: &PoolArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let start = Instant::now();
    check_paths(&[named("--input", &a.input)], &planned_outputs(a))?;
    let x = read_tensor(&a.input, a.dtype == Some(DtypeOpt::Bf16))?;
    let want = a.dtype.map(|d| match d {
        DtypeOpt::Fp32 => Dtype::FP32,
        DtypeOpt::Fp16 => Dtype::FP16,
        DtypeOpt::Bf16 => Dtype::BFLOAT16,
        DtypeOpt::Uint8 => Dtype::UINT8,
    });
    if let Some(d) = want.filter(|&d| d != x.dtype) {
        return Err(CliError::InputDtype {
            path: a.input.clone(),
            asked: d,
            holds: x.dtype,
        });
    }
    let p = params(a, x.shape.len())?;
    let (x_dtype, x_shape) = (x.dtype, x.shape.clone());
    // The input's bytes move into the program (and on into device DRAM);
    // only the input picture needs them afterwards.
    let x_png = a.png.as_ref().map(|_| x.clone());
    // The report's picture of the input, drawn before the input moves.
    let mut value_budget = viz::report::VALUE_BUDGET;
    let mut pictures = Vec::new();
    if a.report.is_some() {
        pictures.push(
            viz::report::Picture::new(
                "x",
                viz::report::Role::Input,
                x.dtype,
                &x.shape,
                &x.data,
                &mut value_budget,
            )
            .map_err(|source| CliError::Picture {
                what: "--report: x".into(),
                source,
            })?,
        );
    }
    let stage_s = start.elapsed().as_secs_f64();
    let compiled = frontend::compile_owned(&p, x).map_err(|e| CliError::Pooling {
        path: a.input.clone(),
        source: Box::new(e),
    })?;
    let mut written = Vec::new();
    let mut outs = Outputs::new();
    if let Some(dir) = &a.emit {
        let mut o = planned_outputs(a);
        o.extend(
            emit::program_files(&compiled.program, dir)
                .iter()
                .map(|f| named("--emit", f)),
        );
        check_paths(&[named("--input", &a.input)], &o)?;
        written.extend(emit::write_program_into(
            &compiled.program,
            dir,
            "pool --emit",
            &mut outs,
        )?);
    }
    if let Some(f) = &a.emit_neff {
        let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned());
        super::pack::write_neff(&compiled.program, &stem.unwrap_or_default(), f, &mut outs)?;
        written.push(f.clone());
    }
    let backend = Backend::open(a.backend.into())?;
    let mut exec = backend.executor(compiled.program.arch)?;
    let arch = compiled.program.arch;
    let (bands, band_depths, band_rows, pool_records) = (
        compiled.bands,
        compiled.band_depths,
        compiled.band_rows,
        compiled.pool_records,
    );
    let three_d = compiled.plan.three_d;
    let plan = compiled.plan.clone();
    let t = Instant::now();
    let (result, machine) = if a.report.is_some() {
        let (r, m) = run_recorded(compiled, exec.as_mut(), a.max_work)?;
        (r, Some(m))
    } else {
        let r = compiled.run_owned(exec.as_mut(), a.max_work)?;
        (r, None)
    };
    let run_s = t.elapsed().as_secs_f64();
    let y = &result.output;
    write_npy(&mut outs, &a.output, y.dtype, &y.shape, &y.data)?;
    written.push(a.output.clone());
    if let (Some(path), Some(idx)) = (&a.indices, &result.indices) {
        let bytes: Vec<u8> = idx.iter().flat_map(|v| v.to_le_bytes()).collect();
        outs.write(path, &npy_bytes(path, Dtype::INT64, &y.shape, &bytes)?)?;
        written.push(path.clone());
    }
    if let Some(dir) = &a.png {
        let opts = viz::Options::default();
        let pic = |t| viz::tensor_montage(t, &opts).map_err(CliError::Draw);
        if let Some(x) = &x_png {
            png(&pic(x)?, dir, "input.png", &mut outs, &mut written)?;
        }
        png(&pic(y)?, dir, "output.png", &mut outs, &mut written)?;
        if let Some(idx) = &result.indices {
            let img = viz::indices_map(&plan, idx).map_err(CliError::Draw)?;
            png(&img, dir, "indices.png", &mut outs, &mut written)?;
        }
    }
    if let (Some(path), Some(m)) = (&a.report, &machine) {
        pictures.push(
            viz::report::Picture::new(
                "y",
                viz::report::Role::Output,
                y.dtype,
                &y.shape,
                &y.data,
                &mut value_budget,
            )
            .map_err(|source| CliError::Picture {
                what: "--report: y".into(),
                source,
            })?,
        );
        let summary = viz::report::Summary {
            source: format!("tpb-emu pool --input {}", a.input.display()),
            command: super::run::command_line(),
            backend: backend.describe(),
            stage_s,
            run_s,
            wall_s: start.elapsed().as_secs_f64(),
            exit: 0,
            message: "ok (a failing run writes no report: README, output policy)".into(),
            warnings: Vec::new(),
            output_files: vec![("y".into(), a.output.display().to_string())],
            why_source: None,
            ..Default::default()
        };
        outs.write_with(path, &mut |w| {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, w);
            viz::report::write_report(&summary, m, &pictures, &mut w)?;
            w.flush()
        })?;
        written.push(path.clone());
    }
    outs.commit()?;
    let w = |out: &mut dyn Write, s: String| writeln!(out, "{s}").map_err(CliError::Stdout);
    w(
        out,
        format!(
            "ok: {p} on {} {:?} -> {:?} ({}, {})",
            x_dtype,
            x_shape,
            y.shape,
            backend.describe(),
            arch.name()
        ),
    )?;
    w(
        out,
        format!(
            "program: {} bands of up to {}{} output rows, {} Pool/MaxPoolSelect records; run {:.3} ms, total {:.3} ms",
            bands,
            if three_d {
                format!("{band_depths} output depths of ")
            } else {
                String::new()
            },
            band_rows,
            pool_records,
            run_s * 1e3,
            start.elapsed().as_secs_f64() * 1e3
        ),
    )?;
    for f in written {
        w(out, format!("wrote {}", f.display()))?;
    }
    Ok(())
}
