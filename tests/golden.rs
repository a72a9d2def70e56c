//! Golden corpus: the disassembly and the validation verdict of a fixed set
//! of records, compared with `tests/golden/disasm.txt`.
//!
//! To regenerate the file after an intended change, run
//! `UPDATE_GOLDEN=1 cargo test --release --test golden` and review the diff.

use tpb_emu::isa::text::{asm, disasm_record};
use tpb_emu::isa::validate::{Target, check};
use tpb_emu::isa::{
    Addr4, Dtype, Opcode, PoolDim, PoolFunc, Record, Region, S4d4Pl, Tensor4d, UpdateMode, WaitMode,
};

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/disasm.txt");

fn sbuf(partition: u32, offset: u32) -> Addr4 {
    Addr4::new(Region::Sbuf, partition, offset)
}

fn psum(partition: u32, offset: u32) -> Addr4 {
    Addr4::new(Region::Psum, partition, offset)
}

fn ten(addr: Addr4, dims: [(u16, i16); 4]) -> Tensor4d {
    Tensor4d::new(addr, dims)
}

/// Seed 000 §5.1's worked example: 2×2 windows over a row-major 4×4 fp32 map.
const SRC_DIMS: [(u16, i16); 4] = [(2, 1), (2, 4), (2, 2), (2, 8)];
/// Its four outputs.
const DST_DIMS: [(u16, i16); 4] = [(2, 1), (2, 2), (1, 1), (1, 1)];

fn s4d4(opcode: Opcode, func: PoolFunc, out: Dtype, scale: f32) -> S4d4Pl {
    S4d4Pl::new(
        opcode,
        func,
        PoolDim::XY,
        Dtype::FP32,
        out,
        16,
        scale,
        ten(sbuf(0, 0), SRC_DIMS),
        ten(sbuf(0, 0x100), DST_DIMS),
    )
}

fn max() -> S4d4Pl {
    s4d4(Opcode::POOL, PoolFunc::MAX_POOL, Dtype::FP32, 1.0)
}

fn avg() -> S4d4Pl {
    s4d4(Opcode::POOL, PoolFunc::AVG_POOL, Dtype::FP32, 0.25)
}

fn mps() -> S4d4Pl {
    s4d4(Opcode::MAX_POOL_SELECT, PoolFunc::NONE, Dtype::UINT8, 1.0)
}

/// `max()` changed by `f`.
fn max_with(f: impl FnOnce(&mut S4d4Pl)) -> Record {
    let mut p = max();
    f(&mut p);
    p.encode()
}

/// A record with only a header (inst_word_len 16).
fn bare(opcode: u8) -> Record {
    let mut r = Record::default();
    r.0[0] = opcode;
    r.0[1] = 16;
    r
}

fn with_bytes(mut r: Record, bytes: &[(usize, u8)]) -> Record {
    for &(at, v) in bytes {
        r.0[at] = v;
    }
    r
}

fn events(wait: (WaitMode, u8), update: (UpdateMode, u8), value: u32) -> tpb_emu::isa::Events {
    tpb_emu::isa::Events {
        wait_mode: wait.0,
        wait_idx: wait.1,
        update_mode: update.0,
        update_idx: update.1,
        semaphore_value: value,
    }
}

/// The corpus: a title and a record each.
fn corpus() -> Vec<(&'static str, Record)> {
    let none = (WaitMode::NONE, 0);
    let no_update = (UpdateMode::NONE, 0);
    vec![
        // Valid records.
        (
            "seed worked example: MAX over 2x2 windows of a 4x4 fp32 map, 16 channels",
            max().encode(),
        ),
        ("seed worked example: AVG, scale 1/4", avg().encode()),
        (
            "seed worked example: MAX_POOL_SELECT writing uint8 indices",
            mps().encode(),
        ),
        ("AVG from PSUM to PSUM, fp32", {
            let mut p = avg();
            p.src.addr = psum(0, 0);
            p.dst.addr = psum(0, 0x100);
            p.encode()
        }),
        ("MAX from PSUM (fp32) to SBUF (bf16), 128 channels", {
            let mut p = max();
            p.src.addr = psum(0, 0x800);
            p.out_dtype = Dtype::BFLOAT16;
            p.num_active_channels = 128;
            p.encode()
        }),
        (
            "MAX walking backwards: negative steps on src and dst",
            max_with(|p| {
                p.src = ten(sbuf(0, 0x3c), [(2, -1), (2, -4), (2, -2), (2, -8)]);
                p.dst = ten(sbuf(0, 0x10c), [(2, -1), (2, -2), (1, 1), (1, 1)]);
            }),
        ),
        ("AVG with a negative normal scale, int64 in, fp32r out", {
            let mut p = avg();
            p.pool_scale_bits = (-0.25f32).to_bits();
            p.in_dtype = Dtype::INT64;
            p.out_dtype = Dtype::FP32R;
            p.encode()
        }),
        (
            "MAX with a wait, an update and a value",
            max_with(|p| p.events = events((WaitMode::SEM_GE, 3), (UpdateMode::SEM_INC, 4), 5)),
        ),
        (
            "MAX with debug bytes (EC-37: not validated)",
            max_with(|p| {
                p.header.debug_cmd = 0x01;
                p.header.debug_hint = 0x2A;
            }),
        ),
        (
            "MAX from partition 16 to partition 32: lanes never share a partition",
            max_with(|p| {
                p.src.addr = sbuf(16, 0);
                p.dst.addr = sbuf(32, 0);
            }),
        ),
        ("DRAIN, bare", bare(0xA2)),
        ("DRAIN with events", {
            let mut r = bare(0xA2);
            r.set_events(events(
                (WaitMode::EVT_SET, 7),
                (UpdateMode::EVT_CLR_DONE, 7),
                0,
            ));
            r
        }),
        ("EVENT_SEMAPHORE", {
            let mut r = bare(0xA0);
            r.set_events(events((WaitMode::SEM_GE, 3), (UpdateMode::SEM_INC, 4), 5));
            r
        }),
        // Records printed raw, and opcodes the emulator does not run.
        ("IOTA with all-zero operands: out_dtype INVALID", bare(0x7E)),
        (
            "IOTA with an operand byte: printed raw",
            with_bytes(bare(0x7E), &[(12, 1), (63, 0xFF)]),
        ),
        ("unknown opcode 0x13", bare(0x13)),
        (
            "pseudo opcode PSEUDO_INST (EXIT) before lowering",
            with_bytes(bare(0xDF), &[(12, 1)]),
        ),
        ("INVALID", bare(0xFF)),
        (
            "EVENT_SEMAPHORE with a second wait in bytes 12..64 (EC-24)",
            with_bytes(bare(0xA0), &[(12, 5)]),
        ),
        // One validation predicate broken each, in SPEC §5 order.
        (
            "has_valid_inst_len: byte 1 = 8",
            with_bytes(max().encode(), &[(1, 8)]),
        ),
        (
            "valid_event_modes: wait byte 8",
            max_with(|p| p.events = events((WaitMode(8), 1), no_update, 0)),
        ),
        (
            "valid_event_modes: update byte 6",
            max_with(|p| p.events = events(none, (UpdateMode(6), 1), 0)),
        ),
        (
            "s4d4_pl_reserved_zero: reserved0",
            with_bytes(max().encode(), &[(35, 1)]),
        ),
        (
            "s4d4_pl_reserved_zero: reserved1[1]",
            with_bytes(max().encode(), &[(39, 0x80)]),
        ),
        (
            "dtype_invalid_check: in uint64",
            max_with(|p| p.in_dtype = Dtype::UINT64),
        ),
        (
            "dtype_invalid_check: in byte 0x10",
            max_with(|p| p.in_dtype = Dtype(0x10)),
        ),
        (
            "dtype_fp32r_illegal_check: in fp32r",
            max_with(|p| p.in_dtype = Dtype::FP32R),
        ),
        (
            "dtype_invalid_check: out int64 (EC-35)",
            max_with(|p| p.out_dtype = Dtype::INT64),
        ),
        (
            "dtype_invalid_check: out invalid",
            max_with(|p| p.out_dtype = Dtype::INVALID),
        ),
        (
            "start_addr_active_channels: src partition 120 + 16 channels",
            max_with(|p| p.src.addr = sbuf(120, 0)),
        ),
        (
            "start_addr_active_channels: dst partition 113 + 16 channels",
            max_with(|p| p.dst.addr = psum(113, 0)),
        ),
        (
            "has_valid_pooltype: POOL with func none",
            max_with(|p| p.pool_func = PoolFunc::NONE),
        ),
        ("has_valid_pooltype: MAX_POOL_SELECT with func max", {
            let mut p = mps();
            p.pool_func = PoolFunc::MAX_POOL;
            p.encode()
        }),
        (
            "is_valid_subdim: pool_dim 1 (there is no 1)",
            max_with(|p| p.pool_dim = PoolDim(1)),
        ),
        (
            "is_valid_subdim: unused",
            max_with(|p| p.pool_dim = PoolDim::UNUSED),
        ),
        (
            "has_valid_active_channel_range: 0 channels",
            max_with(|p| p.num_active_channels = 0),
        ),
        ("s4d4_pl_dtype_check: MAX_POOL_SELECT writing fp32", {
            let mut p = mps();
            p.out_dtype = Dtype::FP32;
            p.encode()
        }),
        (
            "tensor4d_valid: src address past PSUM",
            max_with(|p| p.src.addr = Addr4(0x0240_0000)),
        ),
        (
            "tensor4d_valid: register-mode src with register id 64",
            max_with(|p| p.src.addr = Addr4(0x8000_0040)),
        ),
        (
            "tensor4d_valid: register-mode dst with bit 8 set",
            max_with(|p| p.dst.addr = Addr4(0x8000_0105)),
        ),
        (
            "tensor4d_valid: fp32 src at a 2-byte offset",
            max_with(|p| p.src.addr = sbuf(0, 2)),
        ),
        (
            "tensor4d_valid: bf16 written to PSUM",
            max_with(|p| {
                p.out_dtype = Dtype::BFLOAT16;
                p.dst.addr = psum(0, 0);
            }),
        ),
        (
            "tensor4d_valid: dst num_elem[2] = 0",
            max_with(|p| p.dst.num[2] = 0),
        ),
        (
            "s4d4_pool_scale_valid: MAX with scale 0.5",
            max_with(|p| p.pool_scale_bits = 0.5f32.to_bits()),
        ),
        (
            "s4d4_pool_scale_valid: MAX with scale -0",
            max_with(|p| p.pool_scale_bits = 0x8000_0000),
        ),
        (
            "s4d4_pool_scale_valid: AVG with a NaN scale carrying a payload",
            {
                let mut p = avg();
                p.pool_scale_bits = 0xFFC0_1234;
                p.encode()
            },
        ),
        (
            "s4d4_pool_scale_valid: AVG with a subnormal scale (EC-9)",
            {
                let mut p = avg();
                p.pool_scale_bits = 0x0000_0001;
                p.encode()
            },
        ),
        ("s4d4_pool_scale_valid: AVG with scale inf", {
            let mut p = avg();
            p.pool_scale_bits = f32::INFINITY.to_bits();
            p.encode()
        }),
        (
            "emu_addr_mode_supported: indirect (bit 29) src",
            max_with(|p| p.src.addr = Addr4(0x2000_0000)),
        ),
        (
            "emu_addr_mode_supported: register-mode dst, register 5",
            max_with(|p| p.dst.addr = Addr4(0x8000_0005)),
        ),
        (
            "emu_event_mode_supported: register wait form (EC-2)",
            max_with(|p| p.events = events((WaitMode::REG_EQ, 1), no_update, 9)),
        ),
        (
            "emu_dtype_supported: fp8e4 in (EC-13b)",
            max_with(|p| p.in_dtype = Dtype::FP8_EXP4),
        ),
        (
            "emu_footprint_in_bounds: dst runs past 224 KiB of SBUF (EC-6)",
            max_with(|p| p.dst.addr = sbuf(0, 0x37ff8)),
        ),
        (
            "emu_footprint_in_bounds: src walks below its partition start",
            max_with(|p| p.src.step = [-1, 4, 2, 8]),
        ),
        (
            "emu_footprint_in_bounds: PSUM dst past 16 KiB",
            max_with(|p| p.dst.addr = psum(0, 0x3ff8)),
        ),
        (
            "emu_pool_shape: dst holds 3 elements for 4 outputs (EC-10)",
            max_with(|p| p.dst.num = [3, 1, 1, 1]),
        ),
        (
            "emu_pool_shape: MAX_POOL_SELECT window of 512 into uint8",
            {
                let mut p = mps();
                p.pool_dim = PoolDim::X;
                p.src = ten(sbuf(0, 0), [(512, 1), (1, 1), (1, 1), (1, 1)]);
                p.dst = ten(sbuf(0, 0x1000), [(1, 1), (1, 1), (1, 1), (1, 1)]);
                p.encode()
            },
        ),
        (
            "emu_overlap: dst inside src (EC-21)",
            max_with(|p| p.dst.addr = sbuf(0, 0x20)),
        ),
        (
            "emu_overlap: src partition 0 and dst partition 8 share partitions 8..16",
            max_with(|p| p.dst.addr = sbuf(8, 0x3c)),
        ),
        (
            "emu_overlap: two outputs on one element",
            max_with(|p| p.dst = ten(sbuf(0, 0x100), [(2, 0), (2, 2), (1, 1), (1, 1)])),
        ),
    ]
}

/// The golden text for the corpus.
fn render() -> String {
    let mut out = String::from(
        "# tpb-emu golden corpus: each record's disassembly, then its verdict from\n\
         # isa::validate::check(&r, Target::default()) (POOL engine, CAYMAN):\n\
         # `=> ok` or `=> <predicate>: <detail>`.\n\
         # Regenerate with: UPDATE_GOLDEN=1 cargo test --release --test golden\n",
    );
    for (i, (title, r)) in corpus().iter().enumerate() {
        let line = disasm_record(r);
        // The text form is exact: the golden line reads back as the record.
        assert_eq!(asm(&line).unwrap(), [*r], "{title}: {line}");
        let verdict = match check(r, Target::default()) {
            Ok(()) => "ok".to_string(),
            Err(f) => format!("{}: {f}", f.predicate()),
        };
        out.push_str(&format!("\n# {:02} {title}\n{line}\n=> {verdict}\n", i + 1));
    }
    out
}

#[test]
fn golden_disassembly_and_verdicts() {
    let actual = render();
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(std::path::Path::new(GOLDEN).parent().unwrap()).unwrap();
        std::fs::write(GOLDEN, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(GOLDEN).unwrap_or_else(|e| {
        panic!("cannot read {GOLDEN}: {e}; create it with UPDATE_GOLDEN=1 cargo test --release --test golden")
    });
    if expected == actual {
        return;
    }
    let (mut el, mut al) = (expected.lines(), actual.lines());
    let mut n = 1;
    loop {
        match (el.next(), al.next()) {
            (Some(e), Some(a)) if e == a => n += 1,
            (None, None) => panic!(
                "{GOLDEN} differs only in line endings; rerun with UPDATE_GOLDEN=1 cargo test --release --test golden"
            ),
            (e, a) => panic!(
                "{GOLDEN} differs at line {n}:\n  expected: {}\n  actual:   {}\n\
                 If the change is intended, rerun with UPDATE_GOLDEN=1 cargo test --release --test golden \
                 and review the diff.",
                e.unwrap_or("<end of file>"),
                a.unwrap_or("<end of output>"),
            ),
        }
    }
}
