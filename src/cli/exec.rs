//! `tpb-emu exec STREAM.bin [--arch A] [--backend B] [--trace] [--load ADDR=in.npy]... [--dump ADDR:DTYPE:SHAPE=out.npy]... [--png DIR] [--max-work N]`
//!
//! Validates a POOL-engine stream (exit 3 on the first invalid record, as
//! `validate`), refuses records with a wait or an update (exit 1: they need
//! the scheduler of `run`), loads the inputs, runs every record in order on
//! the chosen backend, writes the dumps and says what it wrote. A dump path
//! equal to an input (the stream, a load) or to another dump is refused
//! before anything runs (exit 2); the dumps appear only when the whole
//! command has succeeded. A program whose records would move or fold more than
//! `--max-work` elements in all is refused before it runs (exit 1).
//!
//! `ADDR` is `sbuf:P:OFF` or `psum:P:OFF` (P and OFF decimal or `0x` hex) or
//! a raw ADDR4 in hex (`0x00040010`). An array's first axis is lanes, from
//! ADDR's partition on; the other axes are row-major bytes from OFF in each
//! lane. Loads take `.npy` files of uint8, int8, uint16, int16, uint32,
//! int32, int64, float16 or float32 and write their raw little-endian bytes.
//! A dump's DTYPE is a SPEC text name; `bf16` is written as uint16 bits,
//! `fp32r` as float32, the fp8 types as uint8 bits. SHAPE is `AxBxC` (or
//! `A,B,C`). A malformed ADDR, SHAPE or DTYPE is a usage error (exit 2);
//! a bad `.npy` file, or a load or dump outside active memory, is bad input
//! (exit 4). `--png DIR`
//! also draws every dump as `DIR/<stem>.png` (the `.npy` file's stem), a
//! montage of its planes ([`crate::viz::raw_montage`]).

use super::backend::Backend;
use super::{CliError, check_paths, named, png_bytes, read_stream, write_npy};
use crate::device::gpu::BackendChoice;
use crate::device::{DeviceMemory, Trace};
use crate::files::Outputs;
use crate::isa::tensor::Location;
use crate::limits::Arch;
use crate::model::exec::{self as host, HostError, View};
use crate::npy::read_npy;
use std::io::Write;
use std::path::PathBuf;

/// The arguments of `exec`.
#[derive(Clone, Debug, Default)]
pub struct ExecArgs {
    /// The stream.
    pub file: PathBuf,
    /// The generation.
    pub arch: Arch,
    /// Print the dispatch trace.
    pub trace: bool,
    /// `ADDR=in.npy`, in order.
    pub loads: Vec<String>,
    /// `ADDR:DTYPE:SHAPE=out.npy`, in order.
    pub dumps: Vec<String>,
    /// Which backend executes.
    pub backend: BackendChoice,
    /// Where each dump is also drawn as a PNG.
    pub png: Option<PathBuf>,
    /// The work budget (elements folded); `None`: [`crate::limits::DEFAULT_MAX_WORK`].
    pub max_work: Option<u64>,
}

/// A parsed `--load`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Load {
    /// Where lane 0's bytes go.
    pub at: Location,
    /// The `.npy` file.
    pub path: PathBuf,
}

/// A parsed `--dump`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dump {
    /// What is read: where, of which dtype, in which shape.
    pub view: View,
    /// The `.npy` file to write.
    pub path: PathBuf,
}

/// Runs `exec`.
pub fn run(args: &ExecArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let loads = args
        .loads
        .iter()
        .map(|s| parse_load(s))
        .collect::<Result<Vec<_>, _>>()?;
    let dumps = args
        .dumps
        .iter()
        .map(|s| parse_dump(s))
        .collect::<Result<Vec<_>, _>>()?;
    let mut inputs = vec![named("the stream", &args.file)];
    inputs.extend(loads.iter().map(|l| named("--load", &l.path)));
    let mut outputs: Vec<_> = dumps.iter().map(|d| named("--dump", &d.path)).collect();
    if let Some(dir) = &args.png {
        outputs.extend(
            dumps
                .iter()
                .map(|d| named("--png", &png_path(dir, &d.path))),
        );
    }
    check_paths(&inputs, &outputs)?;
    let bytes = read_stream(&args.file)?;
    let budget = args.max_work.unwrap_or(crate::limits::DEFAULT_MAX_WORK);
    let program = host::program(&bytes, args.arch, budget).map_err(|e| match e {
        HostError::Stream(source) => CliError::Stream {
            path: args.file.clone(),
            source,
        },
        e => CliError::Host(e),
    })?;
    let mut mem = DeviceMemory::new(args.arch);
    for d in &dumps {
        d.view.check(&mem).map_err(|source| CliError::HostArray {
            flag: "--dump",
            path: d.path.clone(),
            source,
        })?;
    }
    for l in &loads {
        let npy = read_npy(&l.path)?;
        host::load(&mut mem, l.at, &npy.shape, &npy.data).map_err(|source| {
            CliError::HostArray {
                flag: "--load",
                path: l.path.clone(),
                source,
            }
        })?;
    }
    let mut trace = WriteTrace {
        out: &mut *out,
        on: args.trace,
        err: None,
    };
    let backend = Backend::open_for(args.backend, !program.records().is_empty())?;
    let mut exec = backend.executor(args.arch)?;
    host::run(exec.as_mut(), &program, &mut mem, &mut trace).map_err(CliError::Host)?;
    if let Some(e) = trace.err {
        return Err(CliError::Stdout(e));
    }
    let mut outs = Outputs::new();
    let mut wrote = Vec::new();
    for d in &dumps {
        let v = &d.view;
        let data = v.read(&mem).map_err(|source| CliError::HostArray {
            flag: "--dump",
            path: d.path.clone(),
            source,
        })?;
        write_npy(&mut outs, &d.path, v.dtype, &v.shape, &data)?;
        wrote.push(format!(
            "wrote {} ({} {:?})",
            d.path.display(),
            v.dtype,
            v.shape
        ));
        if let Some(dir) = &args.png {
            let png = png_path(dir, &d.path);
            let img =
                crate::viz::raw_montage(v.dtype, &v.shape, &data, &crate::viz::Options::default())
                    .map_err(|source| CliError::Picture {
                        what: format!("--png {}", png.display()),
                        source,
                    })?;
            outs.write(&png, &png_bytes(&img, &png)?)?;
            wrote.push(format!("wrote {}", png.display()));
        }
    }
    outs.commit()?;
    let io = CliError::Stdout;
    writeln!(
        out,
        "ok: {} records executed on the pool engine ({}, {})",
        program.records().len(),
        args.arch.name(),
        backend.describe()
    )
    .map_err(io)?;
    for line in wrote {
        writeln!(out, "{line}").map_err(io)?;
    }
    Ok(())
}

/// `DIR/<stem>.png` for a dump written to `npy`.
fn png_path(dir: &std::path::Path, npy: &std::path::Path) -> PathBuf {
    let stem = npy.file_stem().unwrap_or(npy.as_os_str());
    dir.join(stem).with_extension("png")
}

/// The trace, straight to the output.
struct WriteTrace<'a> {
    out: &'a mut dyn Write,
    on: bool,
    err: Option<std::io::Error>,
}

impl Trace for WriteTrace<'_> {
    fn enabled(&self) -> bool {
        self.on
    }
    fn line(&mut self, line: &str) {
        if self.err.is_none() {
            self.err = writeln!(self.out, "{line}").err();
        }
    }
}

// ---------------------------------------------------------------------------
// Argument syntax.

/// A malformed flag value (exit 2).
fn usage(msg: String) -> CliError {
    CliError::Usage(msg)
}

/// `sbuf:P:OFF`, `psum:P:OFF` or a raw ADDR4 in hex ([`host::parse_addr`]).
pub fn parse_addr(s: &str) -> Result<Location, CliError> {
    host::parse_addr(s).map_err(CliError::Host)
}

/// `AxBxC` or `A,B,C` ([`host::parse_shape`]).
pub fn parse_shape(s: &str) -> Result<Vec<u64>, CliError> {
    host::parse_shape(s).map_err(CliError::Host)
}

/// `ADDR=in.npy`.
pub fn parse_load(s: &str) -> Result<Load, CliError> {
    let Some((addr, path)) = s.split_once('=') else {
        return Err(usage(format!("bad --load `{s}`: expected ADDR=in.npy")));
    };
    if path.is_empty() {
        return Err(usage(format!("bad --load `{s}`: no file")));
    }
    Ok(Load {
        at: parse_addr(addr)?,
        path: path.into(),
    })
}

/// `ADDR:DTYPE:SHAPE=out.npy`.
pub fn parse_dump(s: &str) -> Result<Dump, CliError> {
    let malformed = || {
        usage(format!(
            "bad --dump `{s}`: expected ADDR:DTYPE:SHAPE=out.npy (SHAPE like 128x4x4)"
        ))
    };
    let (spec, path) = s.split_once('=').ok_or_else(malformed)?;
    let mut it = spec.rsplitn(3, ':');
    let (Some(shape), Some(dtype), Some(addr)) = (it.next(), it.next(), it.next()) else {
        return Err(malformed());
    };
    if path.is_empty() {
        return Err(malformed());
    }
    let dtype = host::parse_dtype(dtype)
        .ok_or_else(|| usage(format!("bad --dump `{s}`: unknown DTYPE `{dtype}`")))?;
    Ok(Dump {
        view: View {
            at: parse_addr(addr)?,
            dtype,
            shape: parse_shape(shape)?,
        },
        path: path.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::enums::Dtype;

    #[test]
    fn dumps_parse() {
        let d = parse_dump("sbuf:0:0x100:fp32:4x2x2=o=ut.npy").unwrap();
        assert_eq!(d.view.shape, [4, 2, 2]);
        assert_eq!(d.view.dtype, Dtype::FP32);
        assert_eq!(d.path, PathBuf::from("o=ut.npy"));
        assert_eq!(d.view.lane_bytes(), 16);
        assert!(parse_dump("sbuf:0:0:float32:4=o.npy").is_err());
        assert!(parse_dump("sbuf:0:0:fp32:4x0=o.npy").is_err());
        assert!(parse_dump("sbuf:0:0:fp32:=o.npy").is_err());
    }
}
