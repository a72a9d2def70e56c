//! Pictures of feature maps: `cargo run --release --example visualize [DIR]`.
//!
//! Draws the built-in image, its 128-channel feature map (diverging map,
//! centred on zero) and the 2x2 max-pooled map (viridis, global
//! normalisation) as PNGs in DIR (default: the system's temp folder).

use tpb_emu::frontend::{self, Pool2d, PoolMode, demo};
use tpb_emu::viz::{self, Cmap, Normalize, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("tpb-emu-visualize"));
    std::fs::create_dir_all(&dir)?;
    let x = demo::feature_map(1);
    let y = frontend::run_cpu(&Pool2d::new(PoolMode::Max, 2, 2), &x)?.output;
    let pictures = [
        ("image.png", viz::rgb_image(&demo::image(), demo::SIDE, 4)),
        (
            "features.png",
            viz::tensor_montage(&x, &Options::default())?,
        ),
        (
            "pooled.png",
            viz::tensor_montage(
                &y,
                &Options {
                    cmap: Some(Cmap::Viridis),
                    normalize: Normalize::Global,
                },
            )?,
        ),
    ];
    for (name, img) in pictures {
        let path = dir.join(name);
        viz::save_png(&img, &path)?;
        println!(
            "wrote {} ({}x{})",
            path.display(),
            img.width(),
            img.height()
        );
    }
    Ok(())
}
