//! Golden corpus: the disassembly and the validation verdict of a fixed set
//! of records, compared with `tests/golden/disasm.txt`.
//!
//! To regenerate the file after an intended change, run
//! `UPDATE_GOLDEN=1 cargo test --release --test isa golden::` and review the diff.

use crate::common::{psum, sbuf};
use tpb_emu::isa::build::Geometry;
use tpb_emu::isa::text::{asm, disasm_record};
use tpb_emu::isa::validate::{Target, check};
use tpb_emu::isa::{
    Addr4, AluOp, Dtype, DtypePair, ImmSrc, Opcode, PoolDim, PoolFunc, Record, ReduceAxis,
    ReduceOp, S4d4Pl, Tensor4d, UpdateMode, WaitMode,
};

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/disasm.txt");

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
    let mut v = vec![
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
            "IOTA with a reserved byte: printed raw",
            with_bytes(bare(0x7E), &[(40, 1), (63, 0xFF)]),
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
    ];
    v.extend(kernel_corpus());
    v
}

/// The SPEC-KERNELS structs (IOTA, COPY, CAST, the tensor-tensor pair): valid
/// records, then one failure of each predicate in SPEC-KERNELS §13 order.
fn kernel_corpus() -> Vec<(&'static str, Record)> {
    let g = Geometry::default();
    let small = Geometry { elements: 8, ..g };
    let iota = || small.iota(Dtype::INT32, 0, 1, 8);
    let copy = || small.copy(Dtype::FP32);
    let cast = || small.cast(Dtype::FP32, Dtype::BFLOAT16);
    let add = || small.arith(AluOp::ADD_INT, Dtype::INT32);
    let with = |mut r: Record, at: usize, v: u8| {
        r.0[at] = v;
        r
    };
    vec![
        // Valid.
        ("IOTA int32 ramp, 8 per lane, +8 per lane", iota().encode()),
        ("IOTA fp32 into PSUM, negative steps and base", {
            let mut p = small.iota(Dtype::FP32, -100, -3, -7);
            p.dst.addr = psum(4, 0x40);
            p.encode()
        }),
        ("COPY fp32, 8 per lane", copy().encode()),
        ("COPY in place (EC-42) with a wait", {
            let mut p = Geometry {
                dst: small.src,
                ..small
            }
            .copy(Dtype::FP8_EXP4);
            p.events.wait_mode = WaitMode::SEM_GE;
            p.events.wait_idx = 2;
            p.events.semaphore_value = 1;
            p.encode()
        }),
        ("CAST fp32 -> bf16", cast().encode()),
        ("CAST with op_dim x", {
            let mut p = cast();
            p.op_dim = PoolDim::X;
            p.encode()
        }),
        ("TENSOR_TENSOR_ARITH add_int int32", add().encode()),
        (
            "TENSOR_TENSOR_ARITH add bf16 + int8 -> fp32 (EC-51's f32 path)",
            small
                .tensor_tensor(
                    Opcode::TENSOR_TENSOR_ARITH,
                    AluOp::ADD,
                    Dtype::BFLOAT16,
                    Dtype::INT8,
                    Dtype::FP32,
                )
                .encode(),
        ),
        (
            "TENSOR_TENSOR_BITVEC arith_shift_right int16",
            small
                .bitvec(AluOp::ARITH_SHIFT_RIGHT, Dtype::INT16)
                .encode(),
        ),
        // IOTA predicates.
        (
            "d4_iota_reserved_zero: byte 35",
            with(iota().encode(), 35, 1),
        ),
        ("dtype_invalid_check: IOTA out int64", {
            let mut p = iota();
            p.out_dtype = Dtype::INT64;
            p.encode()
        }),
        ("d4_iota_same_src_dst_count: 16 generated, 8 written", {
            let mut p = iota();
            p.data.num[1] = 2;
            p.encode()
        }),
        ("emu_dtype_supported: IOTA out fp8e5 (EC-48)", {
            let mut p = iota();
            p.out_dtype = Dtype::FP8_EXP5;
            p.encode()
        }),
        // COPY / CAST predicates.
        (
            "s4d4_tr_reserved_zero: byte 42 (printed raw)",
            with(copy().encode(), 42, 7),
        ),
        ("mask_enable_zero", with(copy().encode(), 38, 1)),
        ("dtype_fp32r_illegal_check: CAST in fp32r", {
            let mut p = cast();
            p.in_dtype = Dtype::FP32R;
            p.encode()
        }),
        ("is_valid_enum: op 0x30", with(copy().encode(), 36, 0x30)),
        ("is_zero_subdim: op_dim xy", with(copy().encode(), 37, 3)),
        ("tensor4d_valid: CAST writes bf16 into PSUM", {
            let mut p = cast();
            p.dst.addr = psum(0, 0);
            p.encode()
        }),
        ("s4d4_tr_same_src_dst_count", {
            let mut p = copy();
            p.dst.num[0] = 7;
            p.encode()
        }),
        ("s4d4_tr_op_bypass: op add", with(copy().encode(), 36, 4)),
        ("s4d4_tr_same_src_dst_type: COPY fp32 -> int32", {
            let mut p = copy();
            p.out_dtype = Dtype::INT32;
            p.encode()
        }),
        ("has_zero_negated_field", with(cast().encode(), 35, 1)),
        (
            "emu_dtype_supported: CAST fp8e3 -> fp32 (EC-46)",
            small.cast(Dtype::FP8_EXP3, Dtype::FP32).encode(),
        ),
        ("emu_overlap: COPY dst one element past src (EC-42)", {
            let mut p = copy();
            p.dst.addr = sbuf(0, 4);
            p.encode()
        }),
        // Tensor-tensor predicates.
        ("dtype_invalid_check: src1 nibble invalid", {
            let mut p = add();
            p.in_dtypes = DtypePair::new(Dtype::INT32, Dtype::INVALID);
            p.encode()
        }),
        (
            "s3s3d3_tt_valid_op: 0x41 divide",
            with(add().encode(), 14, 0x07),
        ),
        (
            "s3s3d3_tt_valid_op: 0x51 add",
            small.bitvec(AluOp::ADD, Dtype::INT32).encode(),
        ),
        (
            "s3s3d3_tt_dtype: 0x51 writing fp32",
            small.bitvec(AluOp::BITWISE_OR, Dtype::FP32).encode(),
        ),
        (
            "s3s3d3_tt_valid_int_signness: max_uint on int32",
            small.arith(AluOp::MAX_UINT, Dtype::INT32).encode(),
        ),
        ("s3s3d3_tt_src_element_cnt_check", {
            let mut p = add();
            p.src1.num[2] = 2;
            p.encode()
        }),
        (
            "is_valid_tensor_tensor_arith_pool: max is a DVE form",
            small.arith(AluOp::MAX, Dtype::FP32).encode(),
        ),
        ("is_valid_tensor_tensor_arith_pool: src0 in PSUM (EC-41)", {
            let mut p = add();
            p.src0.addr = psum(0, 0);
            p.encode()
        }),
        (
            "emu_opcode_supported: pow (EC-49)",
            small.arith(AluOp::POW, Dtype::FP32).encode(),
        ),
        (
            "emu_dtype_supported: add_int on int64 (EC-53)",
            small.arith(AluOp::ADD_INT, Dtype::INT64).encode(),
        ),
        ("emu_overlap: dst over src1, one element off (EC-42)", {
            let mut p = add();
            p.dst.addr = Addr4(p.src1.addr.0 + 4);
            p.encode()
        }),
        // Issue (2): valid records.
        (
            "CROSS_LANE_REDUCE_ARITH average over 16 lanes, partitions axis",
            small
                .cross_lane_reduce(
                    ReduceOp::AVERAGE,
                    ReduceAxis::PARTITIONS,
                    Dtype::BFLOAT16,
                    Dtype::FP32,
                    0.0625,
                )
                .encode(),
        ),
        (
            "CROSS_LANE_REDUCE_BITVEC xor over 16 lanes, all axis",
            small
                .cross_lane_reduce(
                    ReduceOp::BITWISE_XOR,
                    ReduceAxis::ALL,
                    Dtype::UINT16,
                    Dtype::UINT16,
                    1.0,
                )
                .encode(),
        ),
        (
            "GET_SEQUENCE_BOUNDS fp32 ids, int32 bounds",
            small.sequence_bounds(Dtype::FP32, Dtype::INT32).encode(),
        ),
        (
            "NONZERO_WITH_COUNT int32, offset 16, pad -1",
            small.nonzero_with_count(Dtype::INT32, 16, -1).encode(),
        ),
        (
            "EXTENDED_INST spec 0 ENGINE_NOP on 2 ports",
            small.engine_nop(2).encode(),
        ),
        (
            "EXTENDED_INST spec 2 EXTENDED_TTA mult bf16 on 1 port",
            small.ext_tta(1, AluOp::MULT, Dtype::BFLOAT16).encode(),
        ),
        ("EXTENDED_INST spec 1: no struct, printed raw", {
            let mut r = small.engine_nop(0).encode();
            r.0[12] = 1;
            r
        }),
        // Issue (2): one failure each.
        (
            "is_valid_enum: reduce_op 6",
            with(
                small
                    .cross_lane_reduce(
                        ReduceOp::MAX,
                        ReduceAxis::ALL,
                        Dtype::FP32,
                        Dtype::FP32,
                        1.0,
                    )
                    .encode(),
                35,
                6,
            ),
        ),
        ("valid_axis_dst_element_cnt: all axis writing 8 elements", {
            let mut p = small.cross_lane_reduce(
                ReduceOp::MAX,
                ReduceAxis::PARTITIONS,
                Dtype::FP32,
                Dtype::FP32,
                1.0,
            );
            p.reduce_axis = ReduceAxis::ALL;
            p.encode()
        }),
        ("emu_opcode_supported: bitwise_or on 0x7C (EC-54)", {
            let mut p = small.cross_lane_reduce(
                ReduceOp::BITWISE_OR,
                ReduceAxis::ALL,
                Dtype::INT32,
                Dtype::INT32,
                1.0,
            );
            p.header.opcode = Opcode::CROSS_LANE_REDUCE_ARITH;
            p.encode()
        }),
        ("has_valid_s3d3_seq_bounds_channels: 2 lanes", {
            let mut p = small.sequence_bounds(Dtype::INT32, Dtype::INT32);
            p.num_active_channels = 2;
            p.encode()
        }),
        (
            "s3d3_seq_bounds_element_count_check_t3d: dst num_elem[2] = 1",
            {
                let mut p = small.sequence_bounds(Dtype::INT32, Dtype::INT32);
                p.dst.num = [16, 1, 1];
                p.encode()
            },
        ),
        ("has_valid_immediates: padding_val_src 3", {
            let mut p = small.nonzero_with_count(Dtype::INT32, 0, 0);
            p.padding_val_src = ImmSrc(3);
            p.encode()
        }),
        (
            "emu_addr_mode_supported: index_offset_src pointer (EC-60)",
            {
                let mut p = small.nonzero_with_count(Dtype::INT32, 0, 0);
                p.index_offset_src = ImmSrc::POINTER;
                p.encode()
            },
        ),
        ("s3d3_nonzero_with_count_element_count_check_t3d", {
            let mut p = small.nonzero_with_count(Dtype::FP32, 0, 0);
            p.dst.num[0] = 8;
            p.encode()
        }),
        (
            "reserved_zero: ENGINE_NOP completion_info bit 7",
            with(small.engine_nop(0).encode(), 13, 0x80),
        ),
        (
            "ext_tta_valid_op: subtract",
            with(small.ext_tta(1, AluOp::ADD, Dtype::FP32).encode(), 16, 5),
        ),
        ("ext_tta_element_count: dst holds 4", {
            let mut p = small.ext_tta(1, AluOp::ADD, Dtype::FP32);
            p.dst.num[0] = 4;
            p.encode()
        }),
    ]
}

/// The golden text for the corpus.
fn render() -> String {
    let mut out = String::from(
        "# tpb-emu golden corpus: each record's disassembly, then its verdict from\n\
         # isa::validate::check(&r, Target::default()) (POOL engine, CAYMAN):\n\
         # `=> ok` or `=> <predicate>: <detail>`.\n\
         # Regenerate with: UPDATE_GOLDEN=1 cargo test --release --test isa golden::\n",
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
        panic!("cannot read {GOLDEN}: {e}; create it with UPDATE_GOLDEN=1 cargo test --release --test isa golden::")
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
                "{GOLDEN} differs only in line endings; rerun with UPDATE_GOLDEN=1 cargo test --release --test isa golden::"
            ),
            (e, a) => panic!(
                "{GOLDEN} differs at line {n}:\n  expected: {}\n  actual:   {}\n\
                 If the change is intended, rerun with UPDATE_GOLDEN=1 cargo test --release --test isa golden:: \
                 and review the diff.",
                e.unwrap_or("<end of file>"),
                a.unwrap_or("<end of output>"),
            ),
        }
    }
}
