//! `tpb-emu viz TENSOR.npy -o out.png [--cmap viridis|magma|diverging] [--normalize channel|global]`:
//! a montage of a tensor's channel planes (see [`crate::viz`]). Integer
//! arrays (window positions from MaxPoolSelect) are drawn as an argmax map
//! unless `--cmap` is given.

use super::CliError;
use crate::viz::{self, Cmap, Normalize, Options, Planes};
use clap::ValueEnum;
use std::io::Write;
use std::path::PathBuf;

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

/// The arguments of `viz`.
#[derive(Clone, Debug, clap::Args)]
pub struct VizArgs {
    /// The tensor: H×W, C×H×W or N×C×H×W .npy.
    pub tensor: PathBuf,
    /// The PNG to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// The colormap (default: diverging for data with negative values, else viridis).
    #[arg(long, value_enum)]
    pub cmap: Option<CmapOpt>,
    /// Normalise per channel plane or over the whole tensor.
    #[arg(long, value_enum, default_value = "channel")]
    pub normalize: NormalizeOpt,
}

/// Runs `viz`.
pub fn run(a: &VizArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (shape, values, integer) = viz::read_values(&a.tensor).map_err(|e| match e {
        viz::VizError::Npy(n) => CliError::from(n),
        e => CliError::BadInput(e.to_string()),
    })?;
    let planes = Planes::new(&shape, values)
        .map_err(|e| CliError::BadInput(format!("{}: {e}", a.tensor.display())))?;
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
    let (img, kind) = if integer && a.cmap.is_none() {
        (viz::argmax_map(&planes), "argmax map".to_string())
    } else {
        let cmap = viz::pick_cmap(&planes, &opts);
        (
            viz::montage(&planes, &opts),
            format!("{cmap:?}").to_lowercase(),
        )
    };
    viz::save_png(&img, &a.output).map_err(|e| CliError::Exec(e.to_string()))?;
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
    .map_err(|e| CliError::Exec(format!("stdout: {e}")))
}
