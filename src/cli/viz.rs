//! `tpb-emu viz TENSOR.npy -o out.png [--cmap viridis|magma|diverging | --argmax] [--normalize channel|global]`:
//! a montage of a tensor's channel planes (see [`crate::viz`]). Every dtype,
//! integers included, is drawn by value on a colormap; `--argmax` draws the
//! values as window positions (MaxPoolSelect's output) in categorical
//! colours instead. At most [`viz::MAX_PLANES`] planes are drawn: past that,
//! a line on stdout and the picture's legend say how many were.
//!
//! `tpb-emu viz --footprint STREAM.bin --record N -o out.png [--arch A]`:
//! the bytes of one partition that record N (0-based) of a raw stream reads
//! and writes (see [`crate::viz::footprint`]). Only valid Pool and
//! MaxPoolSelect records are drawable: an unreadable or malformed stream, an
//! N past its end or another kind of record is bad input (exit 4); a record
//! failing validation for the POOL engine on `--arch` is exit 3.

use super::{CliError, check_paths, named, png_bytes, read_stream};
use crate::files::Outputs;
use crate::isa::stream::records;
use crate::isa::validate::InvalidRecord;
use crate::limits::{Arch, RECORD_BYTES};
use crate::viz::{self, Cmap, Normalize, Options, Planes, VizError};
use clap::ValueEnum;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `--cmap`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum CmapOpt {
    /// Perceptual, dark blue to yellow (default for non-negative data).
    Viridis,
    /// Perceptual, black to light yellow.
    Magma,
    /// Red-blue centred on zero (default for data with negative values).
    Diverging,
}

/// `--normalize`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum NormalizeOpt {
    /// Each plane on its own range.
    Channel,
    /// Every plane on the tensor's range.
    Global,
}

/// `--arch`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ArchOpt {
    /// Sunda.
    Sunda,
    /// Cayman.
    Cayman,
    /// Mariana.
    Mariana,
}

impl From<ArchOpt> for Arch {
    fn from(a: ArchOpt) -> Arch {
        match a {
            ArchOpt::Sunda => Arch::Sunda,
            ArchOpt::Cayman => Arch::Cayman,
            ArchOpt::Mariana => Arch::Mariana,
        }
    }
}

/// The arguments of `viz`.
#[derive(Clone, Debug, clap::Args)]
pub struct VizArgs {
    /// The tensor: H×W, C×H×W or N×C×H×W .npy (not with --footprint).
    #[arg(required_unless_present = "footprint", conflicts_with = "footprint")]
    pub tensor: Option<PathBuf>,
    /// Draw the bytes a record of this stream (raw 64-byte records) reads and writes.
    #[arg(long, value_name = "STREAM.bin", requires = "record")]
    pub footprint: Option<PathBuf>,
    /// The record to draw with --footprint: a 0-based index into the stream.
    #[arg(long, value_name = "N", requires = "footprint")]
    pub record: Option<usize>,
    /// The generation the record is validated for (--footprint).
    #[arg(long, value_enum, default_value = "cayman")]
    pub arch: ArchOpt,
    /// The PNG to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// The colormap (default: diverging for data with negative values, else viridis).
    #[arg(long, value_enum)]
    pub cmap: Option<CmapOpt>,
    /// Draw the values as window positions (MaxPoolSelect's 0..KH·KW) in categorical colours:
    /// an argmax map.
    #[arg(long, conflicts_with_all = ["cmap", "footprint"])]
    pub argmax: bool,
    /// Normalise per channel plane or over the whole tensor.
    #[arg(long, value_enum, default_value = "channel")]
    pub normalize: NormalizeOpt,
}

/// Runs `viz`.
pub fn run(a: &VizArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if let Some(stream) = &a.footprint {
        let n = a
            .record
            .ok_or_else(|| CliError::Usage("--footprint needs --record N".into()))?;
        return run_footprint(stream, n, a.arch.into(), &a.output, out);
    }
    let Some(tensor) = &a.tensor else {
        return Err(CliError::Usage(
            "give a TENSOR.npy or --footprint STREAM.bin".into(),
        ));
    };
    check_paths(&[named("the tensor", tensor)], &[named("-o", &a.output)])?;
    let (shape, values, _) = viz::read_values(tensor).map_err(|e| match e {
        viz::VizError::Npy(n) => CliError::from(n),
        source => CliError::Tensor { path: None, source },
    })?;
    let planes = Planes::new(&shape, values).map_err(|source| CliError::Tensor {
        path: Some(tensor.to_owned()),
        source,
    })?;
    let opts = Options {
        cmap: a.cmap.map(|c| match c {
            CmapOpt::Viridis => Cmap::Viridis,
            CmapOpt::Magma => Cmap::Magma,
            CmapOpt::Diverging => Cmap::Diverging,
        }),
        normalize: match a.normalize {
            NormalizeOpt::Channel => Normalize::Channel,
            NormalizeOpt::Global => Normalize::Global,
        },
    };
    let (img, kind) = if a.argmax {
        (viz::argmax_map(&planes), "argmax map".to_string())
    } else {
        let cmap = viz::pick_cmap(&planes, &opts);
        (
            viz::montage(&planes, &opts),
            format!("{cmap:?}").to_lowercase(),
        )
    };
    let mut outs = Outputs::new();
    outs.write(&a.output, &png_bytes(&img, &a.output)?)?;
    outs.commit()?;
    writeln!(
        out,
        "wrote {} ({}x{} px, {} planes of {}x{}, {kind})",
        a.output.display(),
        img.width(),
        img.height(),
        planes.count.min(viz::MAX_PLANES),
        planes.h,
        planes.w
    )
    .map_err(CliError::Stdout)?;
    if let Some(note) = viz::planes_note(planes.count) {
        writeln!(out, "{note}").map_err(CliError::Stdout)?;
    }
    Ok(())
}

/// `viz --footprint STREAM --record N`.
fn run_footprint(
    stream: &Path,
    n: usize,
    arch: Arch,
    output: &Path,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    check_paths(&[named("--footprint", stream)], &[named("-o", output)])?;
    let bytes = read_stream(stream)?;
    let count = bytes.len() / RECORD_BYTES;
    let Some((offset, rec)) = records(&bytes)
        .map_err(|source| CliError::Stream {
            path: stream.to_owned(),
            source,
        })?
        .nth(n)
    else {
        return Err(CliError::NoRecord {
            path: stream.to_owned(),
            n,
            count,
        });
    };
    let fp = viz::footprint(&rec, arch).map_err(|e| match e {
        VizError::Invalid(fail) => CliError::Invalid(InvalidRecord {
            offset,
            opcode: rec.0[0],
            fail,
        }),
        source => CliError::Footprint {
            path: stream.to_owned(),
            n,
            offset,
            source,
        },
    })?;
    let title = format!(
        "record {n} @{offset}: {}",
        crate::isa::text::disasm_record(&rec)
    );
    let pic = viz::draw_footprint(&fp, &title);
    let mut outs = Outputs::new();
    outs.write(output, &png_bytes(&pic.image, output)?)?;
    outs.commit()?;
    writeln!(
        out,
        "wrote {} ({}x{} px, footprint of record {n}: {})",
        output.display(),
        pic.image.width(),
        pic.image.height(),
        fp.panels
            .iter()
            .map(|p| p.label.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    )
    .map_err(CliError::Stdout)
}
