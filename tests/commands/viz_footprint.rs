//! `tpb-emu viz --footprint`: the bytes a record reads and writes, checked
//! by colour at known bytes of the seed example, and the error contract.

use crate::common;
use common::tpb;

use tpb_emu::isa::samples::{SEED_DST_OFFSET, seed_pool};
use tpb_emu::isa::stream::to_bytes;
use tpb_emu::isa::{Addr4, PoolFunc, Record, Region};
use tpb_emu::limits::Arch;
use tpb_emu::viz;

fn overlapping() -> Record {
    let mut p = seed_pool(PoolFunc::MAX_POOL, 4);
    p.dst.addr = Addr4::new(Region::Sbuf, 0, 0x20);
    p.encode()
}

fn drain() -> Record {
    tpb_emu::isa::text::asm("DRAIN\n").unwrap()[0]
}

#[test]
fn the_seed_reads_its_map_and_writes_its_output() {
    let r = seed_pool(PoolFunc::MAX_POOL, 4).encode();
    let fp = viz::footprint(&r, Arch::Cayman).unwrap();
    assert_eq!(fp.panels.len(), 1, "src and dst share partition 0");
    let title = tpb_emu::isa::text::disasm_record(&r);
    let pic = viz::draw_footprint(&fp, &title);
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("fp.png");
    viz::save_png(&pic.image, &path).unwrap();
    let img = image::open(&path).unwrap().to_rgb8();
    let at = |off: u32| {
        let (x, y) = pic.pixel_of(0, off).expect("byte is in the crop");
        img.get_pixel(x, y).0
    };
    for off in [0, 17, 63] {
        assert_eq!(at(off), viz::READ.0, "src byte {off:#x}");
    }
    for off in [SEED_DST_OFFSET, SEED_DST_OFFSET + 0xf] {
        assert_eq!(at(off), viz::WRITTEN.0, "dst byte {off:#x}");
    }
    for off in [64, 0xff, SEED_DST_OFFSET + 0x10, 0x1ff] {
        assert_eq!(at(off), viz::UNTOUCHED.0, "untouched byte {off:#x}");
    }
    // The title is drawn.
    let text = (0..12)
        .flat_map(|y| (0..200).map(move |x| (x, y)))
        .any(|(x, y)| img.get_pixel(x, y).0 == viz::TEXT.0);
    assert!(text, "a title is drawn");
    // The crop holds the touched bytes plus a margin, not the whole partition.
    assert!(pic.pixel_of(0, 0x4000).is_none());
}

#[test]
fn only_valid_pool_records_are_drawable() {
    assert!(matches!(
        viz::footprint(&drain(), Arch::Cayman),
        Err(viz::VizError::NotDrawable(_))
    ));
    assert!(matches!(
        viz::footprint(&overlapping(), Arch::Cayman),
        Err(viz::VizError::Invalid(_))
    ));
}

#[test]
fn the_cli_draws_a_record_and_keeps_the_exit_codes() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s.bin");
    let recs = [
        drain(),
        seed_pool(PoolFunc::MAX_POOL, 128).encode(),
        overlapping(),
    ];
    std::fs::write(&s, to_bytes(&recs)).unwrap();
    let s = s.to_str().unwrap();
    let png = d.path().join("o.png");
    let o = png.to_str().unwrap();
    let run = |n: &str| tpb(&["viz", "--footprint", s, "--record", n, "-o", o]);
    let ok = run("1");
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let img = image::open(&png).unwrap().to_rgb8();
    let count = |c: image::Rgb<u8>| img.pixels().filter(|p| **p == c).count();
    // Bytes: 64 read and 16 written, 4x8 pixels each, plus an 8x8 legend swatch.
    assert_eq!(count(viz::READ), 64 * 32 + 64);
    assert_eq!(count(viz::WRITTEN), 16 * 32 + 64);
    assert_eq!(count(viz::BOTH), 64, "only the legend's swatch");
    assert_eq!(run("0").status.code(), Some(4), "not a Pool record");
    assert_eq!(run("2").status.code(), Some(3), "EC-21");
    assert_eq!(run("3").status.code(), Some(4), "past the end");
    std::fs::write(d.path().join("bad.bin"), [0u8; 65]).unwrap();
    let bad = d.path().join("bad.bin");
    let b = tpb(&[
        "viz",
        "--footprint",
        bad.to_str().unwrap(),
        "--record",
        "0",
        "-o",
        o,
    ]);
    assert_eq!(b.status.code(), Some(4), "malformed stream");
    // --record is required with --footprint (usage), and a tensor still works alone.
    assert_eq!(
        tpb(&["viz", "--footprint", s, "-o", o]).status.code(),
        Some(2)
    );
}
