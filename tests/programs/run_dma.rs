//! Staging and DMA_MEMCPY: every stream validated for its engine before
//! anything runs (reported with the engine), VAR_ID resolution (EC-22),
//! footprints (EC-23, `emu_footprint_in_bounds`), and the copies themselves:
//! 2-D strides, dtype conversion, DRAM/SBUF/PSUM, overlapping walks.

use crate::common::le32;
use tpb_emu::isa::control::{Addr8, DmaWalk};
use tpb_emu::isa::enums::{Dtype, PoolFunc, UpdateMode};
use tpb_emu::isa::samples::seed_pool;
use tpb_emu::isa::{Engine, Opcode, Record, Region};
use tpb_emu::limits::{Arch, DRAM_BASE};
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::{Error, FootprintFault, Program, StageError, Variable, run_cpu, stage};

fn stage_err(p: &Program) -> StageError {
    match stage(p) {
        Err(e) => e,
        Ok(_) => panic!("staged"),
    }
}

/// A program with `recs` on SP and variables a (input, 16 u32 = 0..16) and b (output, 16 u32).
fn with_ab(recs: &[Record]) -> Program {
    let mut p = Program::default();
    p.set_stream(Engine::Sp, recs)
        .add(Variable::input(
            "a",
            1,
            Dtype::UINT32,
            &[16],
            le32(&(0..16).collect::<Vec<_>>()),
        ))
        .add(Variable::output("b", 2, Dtype::UINT32, &[16]));
    p
}

fn copy(src: DmaWalk, dst: DmaWalk, es_dtype: Dtype) -> Record {
    dma_memcpy(src, dst, es_dtype, es_dtype, 0, 0)
}

#[test]
fn a_dma_leaving_its_variable_is_rejected() {
    // b holds 16 u32 = 64 bytes; writing 17 from offset 0, or 16 from offset 4, leaves it.
    let cases = [
        (contiguous(var(2, 0), 17, 4), 0, 68),
        (contiguous(var(2, 4), 16, 4), 4, 68),
        (walk(var(2, 0), [-1, 0], [2, 1], 4), -4, 4), // a negative step before its start
        (walk(var(2, 60), [1, 2], [1, 2], 4), 60, 72),
    ];
    for (dst, lo, hi) in cases {
        let n = dst.elements() as u16;
        let p = with_ab(&[
            drain(),
            copy(contiguous(on_chip(0), n, 4), dst, Dtype::UINT32),
        ]);
        let e = stage_err(&p);
        assert_eq!(e.predicate(), Some("emu_footprint_in_bounds"));
        let StageError::Footprint {
            engine,
            offset,
            fault,
        } = &e
        else {
            panic!("{e}")
        };
        assert_eq!((*engine, *offset), (Engine::Sp, 64));
        assert_eq!(
            *fault,
            FootprintFault::Variable {
                operand: tpb_emu::isa::validate::Operand::Dst,
                name: "b".into(),
                id: 2,
                lo,
                hi,
                len: 64
            }
        );
        assert_eq!(
            e.to_string(),
            format!(
                "sp stream, DMA_MEMCPY at byte offset 64: Found invalid instruction! opcode=184, \
                 offset=64: emu_footprint_in_bounds (dst walk touches bytes {lo}..{hi} of \
                 variable `b` (id 2), which holds 64 bytes (EC-23))"
            )
        );
    }
    // Exactly filling it is fine.
    let p = with_ab(&[copy(
        contiguous(var(1, 0), 16, 4),
        contiguous(var(2, 0), 16, 4),
        Dtype::UINT32,
    )]);
    assert_eq!(
        run_cpu(&p).unwrap().variable("b").unwrap(),
        le32(&(0..16).collect::<Vec<_>>())
    );
}

#[test]
fn a_var_id_naming_no_variable_is_rejected_before_anything_runs() {
    let p = with_ab(&[copy(
        contiguous(var(1, 0), 4, 4),
        contiguous(var(77, 0), 4, 4),
        Dtype::UINT32,
    )]);
    let e = stage_err(&p);
    assert!(matches!(
        &e,
        StageError::Footprint {
            fault: FootprintFault::UnknownVariable { id: 77, .. },
            ..
        }
    ));
    assert!(
        e.to_string()
            .contains("dst ADDR8 names variable id 77, which the program does not declare"),
        "{e}"
    );
    // Even an empty walk must name a variable.
    let p = with_ab(&[copy(
        walk(var(5, 0), [1, 1], [0, 1], 4),
        walk(var(1, 0), [1, 1], [0, 1], 4),
        Dtype::UINT32,
    )]);
    assert!(matches!(
        stage_err(&p),
        StageError::Footprint {
            fault: FootprintFault::UnknownVariable { id: 5, .. },
            ..
        }
    ));
}

#[test]
fn on_chip_footprints_stay_in_active_memory() {
    let sbuf_active = Arch::Cayman.sbuf_active_bytes(); // 224 KiB of the 256 KiB stride
    let lane = (1 << 18) / 4;
    let cases: Vec<(DmaWalk, Region, u32)> = vec![
        // The last 4 bytes of partition 0 and one more.
        (
            contiguous(on_chip(sbuf_active - 4), 2, 4),
            Region::Sbuf,
            sbuf_active,
        ),
        // Partition 127 and a row past it (into PSUM's addresses).
        (
            walk(on_chip(Region::Sbuf.addr(127, 0)), [1, lane], [1, 2], 4),
            Region::Sbuf,
            Region::Sbuf.addr(128, 0),
        ),
        // PSUM: 16 KiB active of the 32 KiB stride.
        (
            contiguous(on_chip(Region::Psum.addr(3, 16 * 1024 - 8)), 3, 4),
            Region::Psum,
            Region::Psum.addr(3, 16 * 1024),
        ),
        // Backwards out of SBUF.
        (walk(on_chip(4), [-2, 0], [2, 1], 4), Region::Sbuf, u32::MAX),
        // A row one partition per element (a transpose's), past partition 127.
        (
            walk(on_chip(Region::Sbuf.addr(126, 8)), [lane, 1], [3, 1], 4),
            Region::Sbuf,
            Region::Sbuf.addr(128, 8),
        ),
        // The same, past the active bytes of every partition it visits.
        (
            walk(
                on_chip(Region::Sbuf.addr(5, sbuf_active)),
                [lane, 1],
                [4, 2],
                4,
            ),
            Region::Sbuf,
            Region::Sbuf.addr(5, sbuf_active),
        ),
    ];
    for (w, region, first_bad) in cases {
        let n = w.elements() as u16;
        let p = with_ab(&[copy(contiguous(var(1, 0), n, 4), w, Dtype::UINT32)]);
        let e = stage_err(&p);
        let StageError::Footprint {
            fault: FootprintFault::OnChip { region: r, lo, .. },
            ..
        } = &e
        else {
            panic!("{e}")
        };
        assert_eq!(*r, region, "{e}");
        if first_bad != u32::MAX {
            assert_eq!(*lo, first_bad as i128, "{e}");
        } else {
            assert_eq!(*lo, -4, "{e}");
        }
        assert_eq!(e.predicate(), Some("emu_footprint_in_bounds"));
    }
}

#[test]
fn a_row_may_cross_partitions_only_where_they_are_dense() {
    // 8 bytes straddling partitions 0 and 1: inactive bytes between them on
    // CAYMAN (224 of 256 KiB), none on MARIANA (256 of 256 KiB).
    let w = contiguous(on_chip((1 << 18) - 4), 2, 4);
    for (arch, ok) in [(Arch::Cayman, false), (Arch::Mariana, true)] {
        let mut p = with_ab(&[copy(contiguous(var(1, 0), 2, 4), w, Dtype::UINT32)]);
        p.arch = arch;
        assert_eq!(stage(&p).is_ok(), ok, "{arch:?}");
    }
}

#[test]
fn physical_dram_addresses_must_lie_in_variables() {
    // a: bytes 0..64, b: 64..128 (64-byte aligned, back to back); c: 4 bytes
    // at 128, padding 132..192, d at 192.
    let mut p = with_ab(&[]);
    p.add(Variable::output("c", 3, Dtype::UINT32, &[1]))
        .add(Variable::output("d", 4, Dtype::UINT32, &[1]));
    let st = stage(&p).unwrap();
    let layout: Vec<_> = st.layout().map(|(n, b, l)| (n.to_string(), b, l)).collect();
    assert_eq!(
        layout,
        [
            ("a".into(), 0, 64),
            ("b".into(), 64, 64),
            ("c".into(), 128, 4),
            ("d".into(), 192, 4)
        ]
    );
    let dram = |a: u64| Addr8::Dram(a);
    // One 8-byte element across a and b (adjacent, so covered) onto b[0..2].
    p.set_stream(
        Engine::Sp,
        &[copy(
            contiguous(dram(60), 1, 8),
            contiguous(dram(64), 1, 8),
            Dtype::UINT64,
        )],
    );
    let m = run_cpu(&p).unwrap();
    assert_eq!(m.variable("b").unwrap()[..8], le32(&[15, 0])[..]);
    // Touching the padding after c is outside every variable.
    p.set_stream(
        Engine::Sp,
        &[copy(
            contiguous(dram(0), 2, 4),
            contiguous(dram(128), 2, 4),
            Dtype::UINT32,
        )],
    );
    let e = stage_err(&p);
    assert!(
        matches!(
            &e,
            StageError::Footprint {
                fault: FootprintFault::Dram {
                    lo: 132,
                    hi: 136,
                    ..
                },
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("outside every declared variable"));
    // Past the end of DRAM.
    p.set_stream(
        Engine::Sp,
        &[copy(
            contiguous(dram(196), 1, 4),
            contiguous(dram(0), 1, 4),
            Dtype::UINT32,
        )],
    );
    assert!(matches!(
        stage_err(&p),
        StageError::Footprint {
            fault: FootprintFault::Dram {
                lo: 196,
                hi: 200,
                ..
            },
            ..
        }
    ));
    assert_eq!(Addr8::Dram(196).raw(), DRAM_BASE + 196);
}

#[test]
fn the_copy_moved_what_the_walk_says() {
    // A 4×4 transpose: element k of the src walk goes to element k of the dst walk.
    let p = with_ab(&[copy(
        walk(var(1, 0), [4, 1], [4, 4], 4), // column-major read
        walk(var(2, 0), [1, 4], [4, 4], 4), // row-major write
        Dtype::UINT32,
    )]);
    let m = run_cpu(&p).unwrap();
    let want: Vec<u32> = (0..4)
        .flat_map(|r| (0..4).map(move |c| c * 4 + r))
        .collect();
    assert_eq!(m.variable("b").unwrap(), le32(&want));
    // Different shapes, same count: an 8×2 walk into a 2×8 walk, reversed.
    let p = with_ab(&[copy(
        walk(var(1, 0), [1, 8], [8, 2], 4),
        walk(var(2, 60), [-1, -2], [2, 8], 4),
        Dtype::UINT32,
    )]);
    let m = run_cpu(&p).unwrap();
    let want: Vec<u32> = (0..16).rev().collect();
    assert_eq!(m.variable("b").unwrap(), le32(&want));
}

#[test]
fn dma_converts_dtypes_through_f32() {
    // (in dtype, in bits, out dtype, out bits) — SPEC §6 by hand.
    let cases: &[(Dtype, u64, Dtype, u64)] = &[
        (Dtype::FP32, 0x3F80_8000, Dtype::BFLOAT16, 0x3F80), // 1.00390625: tie to even
        (Dtype::FP32, 0x3F81_8000, Dtype::BFLOAT16, 0x3F82), // tie, odd: up
        (Dtype::FP32, 0x7FA0_0001, Dtype::BFLOAT16, 0x7FC0), // NaN: canonical (EC-20)
        (Dtype::FP32, 0x4059_999A, Dtype::INT8, 3),          // 3.4 truncates
        (Dtype::FP32, 0xC32C_0000, Dtype::INT8, 0x80),       // -172 saturates to -128
        (Dtype::FP32, 0x7FC0_0000, Dtype::UINT16, 0),        // NaN -> 0
        (Dtype::FP32, 0x0000_0001, Dtype::FP16, 0),          // subnormal f32 flushed (EC-19)
        (Dtype::INT32, 16_777_217, Dtype::FP32, 0x4B80_0000), // 2^24 + 1 rounds to even
        (Dtype::UINT8, 255, Dtype::FP16, 0x5BF8),
        (
            Dtype::INT64,
            0xFFFF_FFFF_FFFF_FFFF,
            Dtype::FP32,
            0xBF80_0000,
        ), // -1
        (Dtype::FP16, 0x3C00, Dtype::INT32, 1),
        (Dtype::BFLOAT16, 0xC0A0, Dtype::FP32R, 0xC0A0_0000), // -5
    ];
    for &(din, bits, dout, want) in cases {
        let (si, so) = (din.size().unwrap() as usize, dout.size().unwrap() as usize);
        let mut p = Program::default();
        p.set_stream(
            Engine::Act,
            &[dma_memcpy(
                contiguous(var(1, 0), 1, si as u16),
                contiguous(var(2, 0), 1, so as u16),
                din,
                dout,
                0,
                0,
            )],
        )
        .add(Variable::input(
            "x",
            1,
            din,
            &[1],
            bits.to_le_bytes()[..si].to_vec(),
        ))
        .add(Variable::output("y", 2, dout, &[1]));
        let m = run_cpu(&p).unwrap();
        assert_eq!(
            m.variable("y").unwrap(),
            &want.to_le_bytes()[..so],
            "{din} 0x{bits:X} -> {dout}"
        );
    }
}

#[test]
fn dma_between_dram_sbuf_and_psum() {
    // a -> SBUF partitions 5..9 (4 per lane) -> PSUM partition 2 (row) -> b,
    // with POOL reading nothing: the data goes round and comes back.
    let lane = (1 << 18) / 4;
    let recs = [
        copy(
            walk(var(1, 0), [1, 4], [4, 4], 4),
            walk(on_chip(Region::Sbuf.addr(5, 0x80)), [1, lane], [4, 4], 4),
            Dtype::UINT32,
        ),
        copy(
            walk(on_chip(Region::Sbuf.addr(5, 0x80)), [1, lane], [4, 4], 4),
            contiguous(on_chip(Region::Psum.addr(2, 0x10)), 16, 4),
            Dtype::UINT32,
        ),
        copy(
            contiguous(on_chip(Region::Psum.addr(2, 0x10)), 16, 4),
            contiguous(var(2, 0), 16, 4),
            Dtype::UINT32,
        ),
    ];
    let m = run_cpu(&with_ab(&recs)).unwrap();
    assert_eq!(m.variable("b").unwrap(), le32(&(0..16).collect::<Vec<_>>()));
    let sbuf = m.memory().partition(Region::Sbuf, 6).unwrap();
    assert_eq!(sbuf[0x80..0x90], le32(&[4, 5, 6, 7])[..]);
}

#[test]
fn overlapping_walks_copy_element_by_element() {
    // In one buffer, src = b[0..15], dst = b[1..16]: sequential moves smear b[0].
    let recs = [
        copy(
            contiguous(var(1, 0), 16, 4),
            contiguous(var(2, 0), 16, 4),
            Dtype::UINT32,
        ),
        copy(
            contiguous(var(2, 0), 15, 4),
            contiguous(var(2, 4), 15, 4),
            Dtype::UINT32,
        ),
    ];
    let m = run_cpu(&with_ab(&recs)).unwrap();
    assert_eq!(m.variable("b").unwrap(), le32(&[0; 16]));
    // Backwards, the same walks shift the data by one.
    let recs = [
        copy(
            contiguous(var(1, 0), 16, 4),
            contiguous(var(2, 0), 16, 4),
            Dtype::UINT32,
        ),
        copy(
            walk(var(2, 56), [-1, 0], [15, 1], 4),
            walk(var(2, 60), [-1, 0], [15, 1], 4),
            Dtype::UINT32,
        ),
    ];
    let m = run_cpu(&with_ab(&recs)).unwrap();
    let mut want: Vec<u32> = vec![0];
    want.extend(0..15);
    assert_eq!(m.variable("b").unwrap(), le32(&want));
}

#[test]
fn every_stream_is_validated_for_its_engine_first() {
    let pool = seed_pool(PoolFunc::MAX_POOL, 4).encode();
    let iota = header(Opcode::IOTA);
    // A POOL-table opcode whose operands the emulator does not model.
    let unmodelled = header(Opcode::TENSOR_REDUCE_BITVEC);
    // (engine, stream, offset, predicate, text)
    let cases: Vec<(Engine, Vec<Record>, usize, &str, &str)> = vec![
        (
            Engine::Pool,
            vec![drain(), unmodelled],
            64,
            "emu_opcode_supported",
            "TENSOR_REDUCE_BITVEC is known but not emulated",
        ),
        (
            Engine::Act,
            vec![pool],
            0,
            "instruction_engine_check",
            "POOL may not run on the act engine",
        ),
        (
            Engine::Sp,
            vec![drain(), drain(), header(Opcode(0xE0))],
            128,
            "is_valid_enum",
            "",
        ),
        (
            Engine::Dve,
            vec![mov32(64, 0)],
            0,
            "emu_opcode_supported",
            "register id",
        ),
        (
            Engine::Pe,
            vec![with_events(drain(), ev_update(UpdateMode(0x87), 0, 0))],
            0,
            "emu_event_mode_supported",
            "",
        ),
    ];
    for (engine, recs, offset, predicate, text) in cases {
        let mut p = Program::default();
        p.set_stream(engine, &recs);
        let e = stage_err(&p);
        assert_eq!(e.predicate(), Some(predicate), "{e}");
        let StageError::Invalid { engine: en, record } = &e else {
            panic!("{e}")
        };
        assert_eq!((*en, record.offset), (engine, offset));
        let msg = e.to_string();
        let op = Opcode(recs[offset / 64].0[0]);
        assert!(
            msg.starts_with(&format!("{engine} stream, {op} at byte offset {offset}: Found invalid instruction! opcode={}, offset={offset}: {predicate}", op.0)),
            "{msg}"
        );
        assert!(msg.contains(text), "{msg}");
    }
    // Engines are staged in order: PE's invalid record at 128 is reported before SP's at 0.
    let mut p = Program::default();
    p.set_stream(Engine::Sp, &[iota])
        .set_stream(Engine::Pe, &[drain(), drain(), iota]);
    let StageError::Invalid { engine, record } = stage_err(&p) else {
        panic!()
    };
    assert_eq!((engine, record.offset), (Engine::Pe, 128));
}

#[test]
fn a_stream_that_is_not_whole_records_is_bad_input() {
    let mut p = Program::default();
    p.streams[Engine::Act as usize] = vec![0; 100];
    let e = stage_err(&p);
    assert!(e.is_bad_input());
    assert!(
        e.to_string()
            .starts_with("act stream: stream length 100 bytes"),
        "{e}"
    );
}

#[test]
fn variable_rules() {
    let bad = [
        (Variable::output("", 1, Dtype::FP32, &[1]), "name"),
        (Variable::output("../x", 1, Dtype::FP32, &[1]), "name"),
        (Variable::output("x", 1 << 24, Dtype::FP32, &[1]), "id"),
        (Variable::output("x", 1, Dtype::INVALID, &[1]), "dtype"),
        (Variable::output("x", 1, Dtype::FP32, &[]), "shape"),
        (Variable::output("x", 1, Dtype::FP32, &[4, 0]), "shape"),
        (
            Variable::output("x", 1, Dtype::FP32, &[1 << 31, 4]),
            "shape",
        ),
        (
            Variable::input("x", 1, Dtype::FP32, &[2], vec![0; 4]),
            "file",
        ),
    ];
    for (v, key) in bad {
        let mut p = Program::default();
        p.add(v.clone());
        let Err(Error::Stage(StageError::Variable(e))) = run_cpu(&p) else {
            panic!("{v:?} accepted")
        };
        assert_eq!(e.fault.key(), key, "{e}");
    }
    let mut p = Program::default();
    p.add(Variable::output("x", 1, Dtype::FP32, &[1]))
        .add(Variable::output("y", 1, Dtype::FP32, &[1]));
    let e = stage_err(&p).to_string();
    assert_eq!(
        e,
        "variable #2 (`y`): id: id 1 is already used by variable #1"
    );
}
