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
use crate::device::{DeviceMemory, ExecError, Program, Trace, check_runnable, run_program};
use crate::files::Outputs;
use crate::isa::enums::Dtype;
use crate::isa::tensor::{Addr4, Location, Region};
use crate::isa::validate::{StreamInvalid, Target};
use crate::limits::{Arch, PARTITIONS};
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
    /// Where lane 0's bytes come from.
    pub at: Location,
    /// The element type.
    pub dtype: Dtype,
    /// The array shape; axis 0 is lanes.
    pub shape: Vec<u64>,
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
    let program = match Program::from_stream(&bytes, Target::pool(args.arch)) {
        Ok(p) => p,
        Err(StreamInvalid::Invalid(inv)) => return Err(inv.into()),
        Err(StreamInvalid::Malformed(source)) => {
            return Err(CliError::Stream {
                path: args.file.clone(),
                source,
            });
        }
    };
    check_runnable(&program).map_err(exec_error)?;
    let budget = args.max_work.unwrap_or(crate::limits::DEFAULT_MAX_WORK);
    let mut work = 0u64;
    for v in program.records() {
        let cost = crate::runtime::datapath_work(v);
        work = work.saturating_add(cost);
        if work > budget {
            return Err(CliError::Exec(format!(
                "pool stream, record at byte offset {}: it would take the work past the work \
                 budget of {budget} elements ({} done before it, {cost} more; raise --max-work)",
                v.offset(),
                work - cost
            )));
        }
    }
    let mut mem = DeviceMemory::new(args.arch);
    for d in &dumps {
        mem.check(d.at, d.lanes(), d.lane_bytes())
            .map_err(|e| bad(format!("--dump {}: {e}", d.path.display())))?;
    }
    for l in &loads {
        let npy = read_npy(&l.path)?;
        let lanes = u32::try_from(npy.shape[0]).unwrap_or(u32::MAX);
        mem.write(l.at, lanes, &npy.data)
            .map_err(|e| bad(format!("--load {}: {e}", l.path.display())))?;
    }
    let mut trace = WriteTrace {
        out: &mut *out,
        on: args.trace,
        err: None,
    };
    let backend = Backend::open_for(args.backend, !program.records().is_empty())?;
    let mut exec = backend.executor(args.arch)?;
    run_program(exec.as_mut(), &program, &mut mem, &mut trace).map_err(exec_error)?;
    if let Some(e) = trace.err {
        return Err(CliError::Exec(format!("stdout: {e}")));
    }
    let mut outs = Outputs::new();
    let mut wrote = Vec::new();
    for d in &dumps {
        let data = mem
            .read(d.at, d.lanes(), d.lane_bytes())
            .map_err(|e| bad(format!("--dump {}: {e}", d.path.display())))?;
        write_npy(&mut outs, &d.path, d.dtype, &d.shape, &data)?;
        wrote.push(format!(
            "wrote {} ({} {:?})",
            d.path.display(),
            d.dtype,
            d.shape
        ));
        if let Some(dir) = &args.png {
            let png = png_path(dir, &d.path);
            let img =
                crate::viz::raw_montage(d.dtype, &d.shape, &data, &crate::viz::Options::default())
                    .map_err(|e| CliError::Exec(format!("--png {}: {e}", png.display())))?;
            outs.write(&png, &png_bytes(&img, &png)?)?;
            wrote.push(format!("wrote {}", png.display()));
        }
    }
    outs.commit()?;
    let io = |e: std::io::Error| CliError::Exec(format!("stdout: {e}"));
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

fn exec_error(e: ExecError) -> CliError {
    CliError::Exec(e.to_string())
}

fn bad(msg: String) -> CliError {
    CliError::BadInput(msg)
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

/// A decimal or `0x`-hex u32.
fn parse_u32(s: &str) -> Option<u32> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// `sbuf:P:OFF`, `psum:P:OFF` or a raw ADDR4 in hex.
pub fn parse_addr(s: &str) -> Result<Location, CliError> {
    let err = |why: &str| usage(format!("bad ADDR `{s}`: {why}"));
    let mut parts = s.split(':');
    let head = parts.next().unwrap_or_default();
    let region = match head {
        "sbuf" => Some(Region::Sbuf),
        "psum" => Some(Region::Psum),
        _ => None,
    };
    let Some(region) = region else {
        if s.contains(':') {
            return Err(err("expected sbuf:P:OFF, psum:P:OFF or a hex ADDR4"));
        }
        let h = s
            .strip_prefix("0x")
            .or_else(|| s.strip_prefix("0X"))
            .unwrap_or(s);
        let a = u32::from_str_radix(h, 16).map_err(|_| err("not a hex ADDR4"))?;
        let addr = Addr4(a);
        if addr.has_mode_bits() {
            return Err(err(
                "register, indirect and shape-register addresses are not host addresses",
            ));
        }
        return addr
            .location()
            .ok_or_else(|| err("in neither SBUF nor PSUM"));
    };
    let (Some(p), Some(o), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(err("expected sbuf:P:OFF or psum:P:OFF"));
    };
    let partition = parse_u32(p).ok_or_else(|| err("bad partition"))?;
    let offset = parse_u32(o).ok_or_else(|| err("bad offset"))?;
    if partition >= PARTITIONS {
        return Err(err("partition must be < 128"));
    }
    Ok(Location {
        region,
        partition,
        offset,
    })
}

/// `AxBxC` or `A,B,C`: at least one axis, every axis >= 1.
pub fn parse_shape(s: &str) -> Result<Vec<u64>, CliError> {
    let err = || {
        usage(format!(
            "bad SHAPE `{s}`: expected axes like 128x4x4, each >= 1"
        ))
    };
    let shape = s
        .split(['x', ','])
        .map(|a| a.trim().parse::<u64>().ok().filter(|&n| n >= 1))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(err)?;
    let total = shape.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n));
    if shape.is_empty() || total.is_none_or(|t| t > u32::MAX as u64) {
        return Err(err());
    }
    Ok(shape)
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
    let dtype = Dtype::from_name(dtype)
        .filter(|d| d.size().is_some())
        .ok_or_else(|| usage(format!("bad --dump `{s}`: unknown DTYPE `{dtype}`")))?;
    Ok(Dump {
        at: parse_addr(addr)?,
        dtype,
        shape: parse_shape(shape)?,
        path: path.into(),
    })
}

impl Dump {
    fn lanes(&self) -> u32 {
        u32::try_from(self.shape[0]).unwrap_or(u32::MAX)
    }
    fn lane_bytes(&self) -> u64 {
        let elems: u64 = self.shape[1..].iter().product();
        elems * self.dtype.size().unwrap_or(1) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse() {
        let l = parse_addr("psum:3:0x40").unwrap();
        assert_eq!((l.region, l.partition, l.offset), (Region::Psum, 3, 0x40));
        let l = parse_addr("0x00040010").unwrap();
        assert_eq!((l.region, l.partition, l.offset), (Region::Sbuf, 1, 0x10));
        for bad in [
            "sbuf:128:0",
            "sbuf:1",
            "dram:0:0",
            "0x80000000",
            "0x2400000",
            "sbuf:x:0",
            "",
        ] {
            assert!(parse_addr(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn dumps_parse() {
        let d = parse_dump("sbuf:0:0x100:fp32:4x2x2=o=ut.npy").unwrap();
        assert_eq!(d.shape, [4, 2, 2]);
        assert_eq!(d.dtype, Dtype::FP32);
        assert_eq!(d.path, PathBuf::from("o=ut.npy"));
        assert_eq!(d.lane_bytes(), 16);
        assert!(parse_dump("sbuf:0:0:float32:4=o.npy").is_err());
        assert!(parse_dump("sbuf:0:0:fp32:4x0=o.npy").is_err());
        assert!(parse_dump("sbuf:0:0:fp32:=o.npy").is_err());
    }
}
