//! PNG pictures: decode what was written and check colours at known pixels
//! (a blank or uniform image fails), not only the dimensions.

use tpb_emu::viz::{self, Cmap, Normalize, Options, Planes};

use crate::common;
fn write_and_decode(img: &image::RgbImage) -> image::RgbImage {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.png");
    viz::save_png(img, &p).unwrap();
    image::open(&p).unwrap().to_rgb8()
}

fn at(img: &image::RgbImage, xy: (u32, u32)) -> [u8; 3] {
    img.get_pixel(xy.0, xy.1).0
}

#[test]
fn montage_pixels_follow_the_colormap_per_channel() {
    // Two 2x3 planes: plane 0 ramps 0..5, plane 1 is 10x plane 0 plus a NaN.
    let mut v: Vec<f32> = (0..6).map(|i| i as f32).collect();
    v.extend((0..6).map(|i| if i == 4 { f32::NAN } else { 10.0 * i as f32 }));
    let p = Planes::new(&[1, 2, 2, 3], v).unwrap();
    let opts = Options {
        cmap: Some(Cmap::Viridis),
        normalize: Normalize::Channel,
    };
    let img = write_and_decode(&viz::montage(&p, &opts));
    let lo = viz::color(Cmap::Viridis, 0.0).0;
    let hi = viz::color(Cmap::Viridis, 1.0).0;
    assert_ne!(lo, hi);
    assert_eq!(at(&img, viz::pixel_of(&p, 0, 0, 0)), lo, "plane 0 min");
    assert_eq!(at(&img, viz::pixel_of(&p, 0, 1, 2)), hi, "plane 0 max");
    assert_eq!(
        at(&img, viz::pixel_of(&p, 0, 0, 1)),
        viz::color(Cmap::Viridis, 0.2).0
    );
    // Per-channel: plane 1's own range maps to the same ends.
    assert_eq!(at(&img, viz::pixel_of(&p, 1, 0, 0)), lo, "plane 1 min");
    assert_eq!(at(&img, viz::pixel_of(&p, 1, 1, 2)), hi, "plane 1 max");
    assert_eq!(
        at(&img, viz::pixel_of(&p, 1, 1, 1)),
        viz::NAN_COLOR.0,
        "NaN"
    );
    // The label strip above plane 0 holds text pixels; the gap is background.
    let (x0, y0) = viz::pixel_of(&p, 0, 0, 0);
    let label: Vec<_> = (y0 - viz::LABEL_H..y0)
        .flat_map(|y| (x0..x0 + 16).map(move |x| (x, y)))
        .map(|xy| at(&img, xy))
        .collect();
    assert!(label.contains(&viz::TEXT.0), "a label is drawn");
    assert_eq!(at(&img, (0, 0)), viz::BACKGROUND.0);
    // Global normalisation: plane 0's max is now low on the map.
    let g = viz::montage(
        &p,
        &Options {
            cmap: Some(Cmap::Viridis),
            normalize: Normalize::Global,
        },
    );
    assert_eq!(
        at(&g, viz::pixel_of(&p, 0, 1, 2)),
        viz::color(Cmap::Viridis, 5.0 / 50.0).0
    );
}

#[test]
fn signed_data_gets_a_diverging_map_centred_on_zero() {
    let p = Planes::new(&[1, 3], vec![-2.0, 0.0, 1.0]).unwrap();
    assert_eq!(viz::pick_cmap(&p, &Options::default()), Cmap::Diverging);
    let img = write_and_decode(&viz::montage(&p, &Options::default()));
    let zero = at(&img, viz::pixel_of(&p, 0, 0, 1));
    assert_eq!(zero, viz::color(Cmap::Diverging, 0.5).0);
    assert!(
        zero.iter().all(|&c| c > 200),
        "zero is near white: {zero:?}"
    );
    let neg = at(&img, viz::pixel_of(&p, 0, 0, 0));
    let pos = at(&img, viz::pixel_of(&p, 0, 0, 2));
    assert!(neg[2] > neg[0], "negative is blue: {neg:?}");
    assert!(pos[0] > pos[2], "positive is red: {pos:?}");
    assert_eq!(pos, viz::color(Cmap::Diverging, 0.75).0);
}

#[test]
fn argmax_maps_colour_each_window_position() {
    let p = Planes::new(&[2, 2], vec![0.0, 1.0, 3.0, 0.0]).unwrap();
    let img = write_and_decode(&viz::argmax_map(&p));
    assert_eq!(at(&img, viz::pixel_of(&p, 0, 0, 0)), viz::category(0).0);
    assert_eq!(at(&img, viz::pixel_of(&p, 0, 0, 1)), viz::category(1).0);
    assert_eq!(at(&img, viz::pixel_of(&p, 0, 1, 0)), viz::category(3).0);
    assert_ne!(viz::category(0), viz::category(1));
}

#[test]
fn the_demo_runs_on_a_gpu_and_matches_the_cpu() {
    let Some(gpu) = common::gpu() else { return };
    use tpb_emu::frontend::demo;
    let mut exec = tpb_emu::device::gpu::GpuExecutor::new(&gpu, Default::default()).unwrap();
    // The indices configuration: two partition groups, padding, MaxPoolSelect.
    let cfg = demo::configs()[1];
    let o = demo::run_config(cfg, &mut exec, true).unwrap();
    assert!(o.matches_reference, "GPU vs plain reference");
    assert_eq!(o.matches_cpu, Some(true), "GPU vs CPU backend");
}

#[test]
fn value_montages_carry_a_colour_bar_and_argmax_maps_a_legend() {
    // One 2x2 plane from -1.5 to 3: diverging, so the bar spans -3 .. 3.
    let p = Planes::new(&[2, 2], vec![-1.5, 0.0, 1.0, 3.0]).unwrap();
    let img = write_and_decode(&viz::montage(&p, &Options::default()));
    let top = img.height() - viz::LEGEND_H + viz::GAP;
    let right = img.width() - viz::GAP - 1;
    assert_eq!(
        at(&img, (viz::GAP, top)),
        viz::color(Cmap::Diverging, 0.0).0
    );
    assert_eq!(at(&img, (right, top)), viz::color(Cmap::Diverging, 1.0).0);
    // "-3 .. 3": 7 characters of 8x8 text under the bar.
    assert!(img.width() >= 7 * 8 + 2 * viz::GAP);
    let text_row = top + viz::COLOUR_BAR_H + 2;
    let lit = (0..img.width())
        .flat_map(|x| (text_row..text_row + 8).map(move |y| (x, y)))
        .filter(|&xy| at(&img, xy) == viz::TEXT.0)
        .count();
    assert!(
        lit > 20,
        "the range is written under the bar ({lit} text pixels)"
    );

    // Window positions 0..=3: four swatches in the legend, in order.
    let p = Planes::new(&[2, 2], vec![0.0, 1.0, 2.0, 3.0]).unwrap();
    let img = write_and_decode(&viz::argmax_map(&p));
    let top = img.height() - viz::LEGEND_H + viz::GAP;
    // Each entry: an 8-px swatch, 2 px, one 8-px digit, 6 px = 24 px.
    for k in 0..4u32 {
        assert_eq!(
            at(&img, (viz::GAP + 24 * k + 3, top + 3)),
            viz::category(k as usize).0,
            "swatch {k}"
        );
    }
    // Four entries and no more: the legend (wider than the 52-px grid) sets the width.
    assert_eq!(img.width(), 24 * 4 + 2 * viz::GAP);
}

#[test]
fn a_picture_past_the_plane_limit_says_how_many_it_drew() {
    assert_eq!(viz::planes_note(viz::MAX_PLANES), None);
    assert_eq!(
        viz::planes_note(12_345_678).as_deref(),
        Some("drew 1,024 of 12,345,678 planes (the montage's limit)")
    );
    // The legend's text line runs further right when it carries the note.
    let text_right = |img: &image::RgbImage| {
        let y0 = img.height() - viz::LEGEND_H + viz::GAP + viz::COLOUR_BAR_H + 2;
        (0..img.width())
            .filter(|&x| (y0..y0 + 8).any(|y| at(img, (x, y)) == viz::TEXT.0))
            .max()
            .unwrap()
    };
    let all = Planes::new(&[1025, 1, 1], (0..1025).map(|i| i as f32).collect()).unwrap();
    let limit = Planes::new(&[1024, 1, 1], (1..1025).map(|i| i as f32).collect()).unwrap();
    let opts = Options::default();
    let (noted, plain) = (viz::montage(&all, &opts), viz::montage(&limit, &opts));
    assert!(
        text_right(&noted) > text_right(&plain) + 8 * 20,
        "{} vs {}",
        text_right(&noted),
        text_right(&plain)
    );
}
