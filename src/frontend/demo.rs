//! The built-in example of `tpb-emu demo` (and `examples/pool2d.rs`): a
//! procedurally drawn 48×48 RGB image, a 128-channel feature map derived from
//! it (oriented colour-difference filters, some rectified), and several
//! pooling configurations run through the front end and checked against the
//! plain reference.

use super::{Compiled, FrontendError, Pool2d, PoolMode, PoolOutput, Tensor, compile, reference};
use crate::device::{CpuExecutor, Executor};
use std::time::Instant;

/// Side of the built-in image.
pub const SIDE: usize = 48;
/// Channels of the feature map.
pub const CHANNELS: usize = 128;

/// The built-in image: `SIDE×SIDE` RGB in 0..=1, row-major, drawn in code
/// (a diagonal gradient, a red disc, a blue square, a green ring, stripes).
pub fn image() -> Vec<[f32; 3]> {
    let s = SIDE as f32;
    let mut px = Vec::with_capacity(SIDE * SIDE);
    for y in 0..SIDE {
        for x in 0..SIDE {
            let (fx, fy) = (x as f32 / s, y as f32 / s);
            let mut c = [
                0.15 + 0.5 * fx * fy,
                0.2 + 0.3 * fy,
                0.35 + 0.4 * (1.0 - fx),
            ];
            let d = |cx: f32, cy: f32| ((fx - cx).powi(2) + (fy - cy).powi(2)).sqrt();
            if d(0.32, 0.35) < 0.2 {
                c = [0.95, 0.2, 0.15];
            }
            if (0.55..0.85).contains(&fx) && (0.5..0.8).contains(&fy) {
                c = [0.1, 0.25, 0.9];
            }
            if (d(0.7, 0.25) - 0.13).abs() < 0.04 {
                c = [0.2, 0.85, 0.3];
            }
            if fy > 0.86 && (x / 3) % 2 == 0 {
                c = [0.95, 0.95, 0.9];
            }
            px.push(c);
        }
    }
    px
}

/// The 128-channel feature map (`batch` copies, the odd ones mirrored left
/// to right): channel k is an oriented difference (16 orientations) of one
/// of 8 colour mixes; every other mix is rectified (ReLU).
pub fn feature_map(batch: usize) -> Tensor {
    let img = image();
    let mixes: [[f32; 3]; 8] = [
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [0.33, 0.33, 0.33],
        [1.0, -1.0, 0.0],
        [0.0, 1.0, -1.0],
        [-0.5, -0.5, 1.0],
        [0.5, 0.5, -1.0],
    ];
    let at = |x: isize, y: isize, mix: &[f32; 3], mirror: bool| {
        let x = x.clamp(0, SIDE as isize - 1) as usize;
        let y = y.clamp(0, SIDE as isize - 1) as usize;
        let x = if mirror { SIDE - 1 - x } else { x };
        let p = img[y * SIDE + x];
        mix[0] * p[0] + mix[1] * p[1] + mix[2] * p[2]
    };
    let mut v = Vec::with_capacity(batch * CHANNELS * SIDE * SIDE);
    for n in 0..batch {
        for k in 0..CHANNELS {
            let theta = (k % 16) as f32 * std::f32::consts::PI / 16.0;
            let (dx, dy) = (
                (2.0 * theta.cos()).round() as isize,
                (2.0 * theta.sin()).round() as isize,
            );
            let mix = &mixes[k / 16];
            let relu = (k / 16) % 2 == 1;
            for y in 0..SIDE as isize {
                for x in 0..SIDE as isize {
                    let d =
                        at(x + dx, y + dy, mix, n % 2 == 1) - at(x - dx, y - dy, mix, n % 2 == 1);
                    v.push(if relu { d.max(0.0) } else { d });
                }
            }
        }
    }
    Tensor::from_f32(
        &[batch as u64, CHANNELS as u64, SIDE as u64, SIDE as u64],
        &v,
    )
}

/// One demo configuration.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// File-name stem of its pictures.
    pub name: &'static str,
    /// What it shows.
    pub about: &'static str,
    /// The pooling.
    pub params: Pool2d,
    /// Batch of the feature map (2 → 256 planes: two partition groups).
    pub batch: usize,
}

/// The configurations the demo runs.
pub fn configs() -> Vec<Config> {
    vec![
        Config {
            name: "max_2x2",
            about: "max 2x2 stride 2",
            params: Pool2d::new(PoolMode::Max, 2, 2),
            batch: 1,
        },
        Config {
            name: "max_3x3_s2_p1_indices",
            about: "max 3x3 stride 2 padding 1 with indices, batch 2 (256 planes)",
            params: Pool2d::new(PoolMode::Max, 3, 3)
                .stride(2, 2)
                .padding(1, 1)
                .indices(true),
            batch: 2,
        },
        Config {
            name: "avg_3x3_s2_p1_exclude_pad",
            about: "avg 3x3 stride 2 padding 1, count_include_pad=False",
            params: Pool2d::new(PoolMode::Avg, 3, 3)
                .stride(2, 2)
                .padding(1, 1)
                .include_pad(false),
            batch: 1,
        },
        Config {
            name: "avg_3x3_s2_ceil",
            about: "avg 3x3 stride 2 ceil_mode (clipped last window)",
            params: Pool2d::new(PoolMode::Avg, 3, 3).stride(2, 2).ceil(true),
            batch: 1,
        },
        Config {
            name: "max_3x3_d2_indices",
            about: "max 3x3 stride 1 dilation 2 with indices",
            params: Pool2d::new(PoolMode::Max, 3, 3)
                .stride(1, 1)
                .dilation(2, 2)
                .indices(true),
            batch: 1,
        },
    ]
}

/// What one configuration produced and how its checks went.
#[derive(Debug)]
pub struct Outcome {
    /// The configuration.
    pub config: Config,
    /// The input.
    pub input: Tensor,
    /// The compiled program.
    pub compiled: Compiled,
    /// The emulator's result.
    pub result: PoolOutput,
    /// Bit-identical to the plain reference (values and indices).
    pub matches_reference: bool,
    /// Bit-identical to the CPU backend (when `exec` was not the CPU).
    pub matches_cpu: Option<bool>,
    /// Seconds the emulator's run took.
    pub run_s: f64,
}

impl Outcome {
    /// Every check passed.
    pub fn ok(&self) -> bool {
        self.matches_reference && self.matches_cpu != Some(false)
    }
}

/// Runs `config` on `exec` and checks it against the plain reference and,
/// with `cross_check`, against the CPU backend.
pub fn run_config(
    config: Config,
    exec: &mut dyn Executor,
    cross_check: bool,
) -> Result<Outcome, FrontendError> {
    let input = feature_map(config.batch);
    let compiled = compile(&config.params, &input)?;
    let t = Instant::now();
    let result = compiled.run(exec)?;
    let run_s = t.elapsed().as_secs_f64();
    let plain = reference(&config.params, &input)?;
    let matches_cpu = if cross_check {
        Some(compiled.run(&mut CpuExecutor::default())? == result)
    } else {
        None
    };
    Ok(Outcome {
        config,
        matches_reference: plain == result,
        input,
        compiled,
        result,
        matches_cpu,
        run_s,
    })
}
