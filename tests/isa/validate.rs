//! One test per SPEC §5 predicate: a record that breaks only that predicate is
//! rejected with exactly that name; valid records of every class are accepted.

use tpb_emu::isa::control::{Addr8, alu, cmp, off, target};
use tpb_emu::isa::enums::{Dtype, Engine, PoolDim, PoolFunc, UpdateMode, WaitMode};
use tpb_emu::isa::samples::{seed_max_pool_select, seed_pool};
use tpb_emu::isa::validate::{Fail, Target, check, is_valid, validate_stream};
use tpb_emu::isa::{Addr4, Opcode, Record, Region, S4d4Pl, Tensor4d};
use tpb_emu::limits::Arch;

const T: Target = Target {
    engine: Engine::Pool,
    arch: Arch::Cayman,
};

fn max16() -> S4d4Pl {
    seed_pool(PoolFunc::MAX_POOL, 16)
}

/// The predicate name `check` reports, or "ok".
fn verdict_on(r: &Record, t: Target) -> &'static str {
    let res = check(r, t);
    assert_eq!(
        res.is_ok(),
        is_valid(r, t),
        "the two faces disagree on {r:?}"
    );
    match res {
        Ok(()) => "ok",
        Err(f) => f.predicate(),
    }
}

fn verdict(r: &Record) -> &'static str {
    verdict_on(r, T)
}

fn with(f: impl FnOnce(&mut S4d4Pl)) -> Record {
    let mut p = max16();
    f(&mut p);
    p.encode()
}

fn set_byte(mut r: Record, off: usize, v: u8) -> Record {
    r.0[off] = v;
    r
}

fn control(op: Opcode) -> Record {
    let mut r = Record::default();
    r.0[0] = op.0;
    r.0[1] = 16;
    r
}

#[test]
fn seed_worked_example_encodes_at_the_seed_offsets_and_validates() {
    let r = seed_pool(PoolFunc::AVG_POOL, 16).encode();
    let b = r.0;
    assert_eq!(b[0], 0x45);
    assert_eq!(b[1], 16);
    // src TENSOR4D @12: addr 0, steps x1 y4 z2 w8, nums 2,2,2,2.
    assert_eq!(&b[12..16], &[0, 0, 0, 0]);
    assert_eq!(&b[16..24], &[1, 0, 4, 0, 2, 0, 8, 0]);
    assert_eq!(&b[24..32], &[2, 0, 2, 0, 2, 0, 2, 0]);
    assert_eq!((b[32], b[33], b[34], b[35]), (0x0A, 0x0A, 16, 0));
    assert_eq!((b[36], b[37]), (2, 3), "pool_func AVG @36, pool_dim XY @37");
    assert_eq!(&b[40..44], &0.25f32.to_le_bytes());
    // dst TENSOR4D @44 at SBUF offset 0x100.
    assert_eq!(&b[44..48], &0x100u32.to_le_bytes());
    assert_eq!(verdict(&r), "ok");
    assert_eq!(S4d4Pl::decode(&r).period(), Some(4));
    assert_eq!(S4d4Pl::decode(&r).outputs(), Some(4));
}

#[test]
fn valid_records_of_every_class_are_accepted() {
    let mut ok = vec![
        seed_pool(PoolFunc::MAX_POOL, 128).encode(),
        seed_pool(PoolFunc::AVG_POOL, 1).encode(),
        seed_max_pool_select(128).encode(),
    ];
    for out in [Dtype::UINT16, Dtype::UINT32] {
        let mut p = seed_max_pool_select(8);
        p.out_dtype = out;
        ok.push(p.encode());
    }
    // Every executable dtype pair (EC-13b), in SBUF.
    for i in [0x2u8, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0xA, 0xC] {
        for o in [0x2u8, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0xA, 0xB] {
            ok.push(with(|p| {
                p.in_dtype = Dtype(i);
                p.out_dtype = Dtype(o);
                p.dst.addr = Addr4::new(Region::Sbuf, 0, 0x400);
            }));
        }
    }
    // PSUM on both sides, fp32; start partition > 0 reaching lane 127.
    ok.push(with(|p| {
        p.src.addr = Addr4::new(Region::Psum, 112, 0);
        p.dst.addr = Addr4::new(Region::Psum, 112, 0x800);
    }));
    // Negative steps: walk the map backwards from its last element.
    ok.push(with(|p| {
        p.src = Tensor4d::new(
            Addr4::new(Region::Sbuf, 0, 60),
            [(2, -1), (2, -4), (2, -2), (2, -8)],
        );
    }));
    // Every pool_dim.
    for (dim, dst_n) in [(PoolDim::X, 8u16), (PoolDim::XYZ, 2), (PoolDim::XYZW, 1)] {
        ok.push(with(|p| {
            p.pool_dim = dim;
            p.dst = Tensor4d::new(p.dst.addr, [(dst_n, 1), (1, 1), (1, 1), (1, 1)]);
        }));
    }
    // Events (EC-1) on a Pool record; completion forms (EC-3).
    ok.push(with(|p| {
        p.events.wait_mode = WaitMode::SEM_GE;
        p.events.wait_idx = 3;
        p.events.update_mode = UpdateMode::SEM_ADD_IMM_DONE;
        p.events.semaphore_value = 7;
    }));
    // Debug bytes are ignored (EC-37).
    ok.push(with(|p| {
        p.header.debug_cmd = 0xAB;
        p.header.debug_hint = 0xCD;
    }));
    // Control and DMA records.
    ok.push(control(Opcode::DRAIN));
    let mut es = control(Opcode::EVENT_SEMAPHORE);
    es.0[4] = WaitMode::EVT_SET_THEN_CLEAR.0;
    es.0[6] = UpdateMode::EVT_SET.0;
    ok.push(es);
    ok.push(mov32(63, 0xDEAD_BEEF));
    ok.push(ctrl_al(alu::SUB, 1, 2, -5));
    ok.push(branch_rel(cmp::GTIMM, 3, -128));
    ok.push(dma(Addr8::OnChip(0x40), Addr8::Dram(0)));
    ok.push(dma(
        Addr8::Var { id: 7, offset: 16 },
        Addr8::OnChip(0x200_0000),
    ));
    for r in &ok {
        assert_eq!(verdict(r), "ok", "{:?}", check(r, T));
    }
    // Control records run on every engine.
    for e in Engine::ALL {
        let t = Target {
            engine: e,
            arch: Arch::Sunda,
        };
        assert_eq!(verdict_on(&mov32(1, 2), t), "ok");
    }
}

fn mov32(reg: u8, v: u32) -> Record {
    let mut r = control(Opcode::MOV32);
    r.0[off::MOV32_REG] = reg;
    r.0[off::MOV32_VALUE..off::MOV32_VALUE + 4].copy_from_slice(&v.to_le_bytes());
    r
}

fn ctrl_al(op: u8, src: u8, dst: u8, imm: i64) -> Record {
    let mut r = control(Opcode::CTRL_AL);
    r.0[off::CTRL_AL_OP] = op;
    r.0[off::CTRL_AL_DTYPE] = Dtype::INT32.0;
    r.0[off::CTRL_AL_SRC] = src;
    r.0[off::CTRL_AL_DST] = dst;
    r.0[off::CTRL_AL_IMM..off::CTRL_AL_IMM + 8].copy_from_slice(&imm.to_le_bytes());
    r
}

fn branch_rel(c: u8, reg: u8, rel: i64) -> Record {
    let mut r = control(Opcode::COMPARE_BRANCH);
    r.0[off::BR_CMP] = c;
    r.0[off::BR_DTYPE] = Dtype::INT32.0;
    r.0[off::BR_TARGET_MODE] = target::REL_IMM;
    r.0[off::BR_CMP_REG] = reg;
    r.0[off::BR_REL..off::BR_REL + 8].copy_from_slice(&rel.to_le_bytes());
    r
}

fn dma(src: Addr8, dst: Addr8) -> Record {
    let mut r = control(Opcode::DMA_MEMCPY);
    for (at, a) in [(off::DMA_SRC, src), (off::DMA_DST, dst)] {
        r.0[at..at + 8].copy_from_slice(&a.raw().to_le_bytes());
        r.0[at + 8..at + 12].copy_from_slice(&1i32.to_le_bytes()); // step0
        r.0[at + 12..at + 16].copy_from_slice(&4i32.to_le_bytes()); // step1
        r.0[at + 16..at + 18].copy_from_slice(&4u16.to_le_bytes()); // num0
        r.0[at + 18..at + 20].copy_from_slice(&2u16.to_le_bytes()); // num1
        r.0[at + 20..at + 22].copy_from_slice(&4u16.to_le_bytes()); // elem size
    }
    r.0[off::DMA_IN_DTYPE] = Dtype::FP32.0;
    r.0[off::DMA_OUT_DTYPE] = Dtype::FP32.0;
    r
}

#[test]
fn is_valid_enum() {
    for op in [0x13u8, 0x00, 0xFF, 0xD1, 0xDD, 0xC1, 0xE0] {
        let r = set_byte(max16().encode(), 0, op);
        assert_eq!(verdict(&r), "is_valid_enum", "opcode 0x{op:02X}");
    }
    // EC-33: an unknown opcode is reported as such on every engine, before the engine check.
    let r = set_byte(max16().encode(), 0, 0x13);
    assert_eq!(
        verdict_on(
            &r,
            Target {
                engine: Engine::Pe,
                arch: Arch::Cayman
            }
        ),
        "is_valid_enum"
    );
}

#[test]
fn instruction_engine_check() {
    for e in [Engine::Pe, Engine::Act, Engine::Dve, Engine::Sp] {
        let t = Target {
            engine: e,
            arch: Arch::Cayman,
        };
        assert_eq!(verdict_on(&max16().encode(), t), "instruction_engine_check");
        assert_eq!(
            verdict_on(&seed_max_pool_select(4).encode(), t),
            "instruction_engine_check"
        );
        assert_eq!(
            verdict_on(&control(Opcode::IOTA), t),
            "instruction_engine_check"
        );
    }
}

#[test]
fn has_valid_inst_len() {
    for len in [0u8, 15, 17, 64, 255] {
        assert_eq!(
            verdict(&with(|p| p.header.inst_word_len = len)),
            "has_valid_inst_len"
        );
    }
}

#[test]
fn valid_event_modes() {
    for w in [8u8, 13, 16, 0x80, 0x86, 0xFF] {
        assert_eq!(
            verdict(&with(|p| p.events.wait_mode = WaitMode(w))),
            "valid_event_modes"
        );
    }
    for u in [6u8, 8, 0x10, 0x16, 0x18, 0x20, 0x88, 0xFF] {
        assert_eq!(
            verdict(&with(|p| p.events.update_mode = UpdateMode(u))),
            "valid_event_modes"
        );
    }
    assert_eq!(
        verdict(&set_byte(control(Opcode::DRAIN), 4, 9)),
        "valid_event_modes"
    );
}

#[test]
fn emu_opcode_supported() {
    // Known POOL-table opcodes whose operands are not modelled (SPEC §2),
    // and 0xF0 with a spec other than 0 and 2 (SPEC §5 step 5, EC-58).
    for op in [Opcode::TENSOR_REDUCE_BITVEC, Opcode::TENSOR_DEQUANTIZE] {
        assert_eq!(verdict(&control(op)), "emu_opcode_supported");
    }
    for spec in [1u8, 3, 4, 9] {
        let r = set_byte(control(Opcode::EXTENDED_INST), 12, spec);
        assert_eq!(verdict(&r), "emu_opcode_supported", "spec {spec}");
    }
    // An all-zero 0xF0 is spec 0, ENGINE_NOP: valid (EC-55).
    assert_eq!(verdict(&control(Opcode::EXTENDED_INST)), "ok");
    // IOTA, COPY, CAST and the tensor-tensor pair are modelled now: their
    // all-zero operand bytes fail a hardware predicate first (the INVALID
    // dtype; tests/isa/validate_kernels.rs covers each predicate).
    for op in [
        Opcode::IOTA,
        Opcode::COPY,
        Opcode::CAST,
        Opcode::TENSOR_TENSOR_ARITH,
        Opcode::TENSOR_TENSOR_BITVEC,
    ] {
        assert_eq!(verdict(&control(op)), "dtype_invalid_check", "{op}");
    }
    // The structs of issue (2): the first failing hardware predicate of an
    // all-zero operand (SPEC-KERNELS §13).
    assert_eq!(
        verdict(&control(Opcode::CROSS_LANE_REDUCE_ARITH)),
        "dtype_invalid_check"
    );
    assert_eq!(
        verdict(&control(Opcode::GET_SEQUENCE_BOUNDS)),
        "check_active_channels"
    );
    assert_eq!(
        verdict(&control(Opcode::NONZERO_WITH_COUNT)),
        "check_active_channels"
    );
    assert_eq!(verdict(&mov32(64, 0)), "emu_opcode_supported");
    assert_eq!(verdict(&ctrl_al(6, 1, 2, 0)), "emu_opcode_supported");
    assert_eq!(
        verdict(&ctrl_al(alu::ADD, 64, 2, 0)),
        "emu_opcode_supported"
    );
    assert_eq!(
        verdict(&ctrl_al(alu::ADD, 1, 2, 1 << 31)),
        "emu_opcode_supported"
    );
    assert_eq!(verdict(&ctrl_al(alu::ADD, 1, 2, i32::MIN as i64)), "ok");
    let mut bad_dt = ctrl_al(alu::ADD, 1, 2, 0);
    bad_dt.0[off::CTRL_AL_DTYPE] = Dtype::FP32.0;
    assert_eq!(verdict(&bad_dt), "emu_opcode_supported");
    assert_eq!(verdict(&branch_rel(1, 3, 0)), "emu_opcode_supported");
    assert_eq!(
        verdict(&branch_rel(cmp::EQIMM, 64, 0)),
        "emu_opcode_supported"
    );
    assert_eq!(
        verdict(&branch_rel(cmp::ALWAYS, 64, 0)),
        "ok",
        "ALWAYS reads no register"
    );
    assert_eq!(
        verdict(&branch_rel(cmp::ALWAYS, 0, 1 << 40)),
        "emu_opcode_supported"
    );
    let mut mode = branch_rel(cmp::ALWAYS, 0, 0);
    mode.0[off::BR_TARGET_MODE] = 2;
    assert_eq!(verdict(&mode), "emu_opcode_supported");
    let mut reg = branch_rel(cmp::ALWAYS, 0, 0);
    reg.0[off::BR_TARGET_MODE] = target::REGISTER;
    reg.0[off::BR_TARGET_HI] = 70;
    assert_eq!(verdict(&reg), "emu_opcode_supported");
    let d = dma(Addr8::OnChip(0), Addr8::Dram(64));
    assert_eq!(
        verdict(&set_byte(d, off::DMA_OP, 1)),
        "emu_opcode_supported"
    );
    assert_eq!(
        verdict(&set_byte(d, off::DMA_SRC + 20, 0)),
        "emu_opcode_supported"
    );
    assert_eq!(
        verdict(&set_byte(d, off::DMA_DST + 16, 3)),
        "emu_opcode_supported",
        "counts differ"
    );
    let fp8 = set_byte(d, off::DMA_IN_DTYPE, Dtype::FP8_EXP4.0);
    assert_eq!(verdict(&fp8), "emu_opcode_supported");
    // Equal dtypes copy bytes verbatim, even fp8.
    let fp8_both = set_byte(
        set_byte(
            set_byte(set_byte(fp8, off::DMA_OUT_DTYPE, 0xE), off::DMA_SRC + 20, 1),
            off::DMA_DST + 20,
            1,
        ),
        0,
        0xB8,
    );
    assert_eq!(verdict(&fp8_both), "ok");
}

#[test]
fn reserved_zero() {
    assert_eq!(
        verdict(&set_byte(control(Opcode::DRAIN), 20, 1)),
        "reserved_zero"
    );
    assert_eq!(verdict(&set_byte(mov32(1, 1), 13, 1)), "reserved_zero");
    assert_eq!(
        verdict(&set_byte(ctrl_al(alu::ADD, 1, 2, 3), 17, 1)),
        "reserved_zero"
    );
    assert_eq!(
        verdict(&set_byte(branch_rel(cmp::ALWAYS, 0, 0), 0x21, 1)),
        "reserved_zero"
    );
    assert_eq!(
        verdict(&set_byte(dma(Addr8::OnChip(0), Addr8::Dram(64)), 12, 1)),
        "reserved_zero"
    );
    let d = set_byte(control(Opcode::DRAIN), 63, 0x80);
    assert_eq!(
        check(&d, T).unwrap_err(),
        Fail::ReservedZero {
            offset: 63,
            value: 0x80
        }
    );
}

#[test]
fn is_valid_addr8() {
    for bad in [0x240_0000u64, 0xFFFF_FFFF] {
        let r = dma(Addr8::decode(bad), Addr8::Dram(0));
        assert_eq!(verdict(&r), "is_valid_addr8", "0x{bad:X}");
    }
}

#[test]
fn s4d4_pl_reserved_zero() {
    for off in [35usize, 38, 39] {
        assert_eq!(
            verdict(&set_byte(max16().encode(), off, 1)),
            "s4d4_pl_reserved_zero"
        );
    }
}

#[test]
fn dtype_invalid_check() {
    for d in [0u8, 1, 0x10, 0x7F, 0xFF] {
        assert_eq!(
            verdict(&with(|p| p.in_dtype = Dtype(d))),
            "dtype_invalid_check",
            "in {d}"
        );
    }
    for d in [0u8, 1, 0xC, 0x10, 0xFF] {
        assert_eq!(
            verdict(&with(|p| p.out_dtype = Dtype(d))),
            "dtype_invalid_check",
            "out {d}"
        );
    }
}

#[test]
fn dtype_fp32r_illegal_check_and_fp32r_out_allowed() {
    assert_eq!(
        verdict(&with(|p| p.in_dtype = Dtype::FP32R)),
        "dtype_fp32r_illegal_check"
    );
    assert_eq!(verdict(&with(|p| p.out_dtype = Dtype::FP32R)), "ok");
}

#[test]
fn start_addr_active_channels() {
    let r = with(|p| p.src.addr = Addr4::new(Region::Sbuf, 113, 0));
    assert_eq!(verdict(&r), "start_addr_active_channels");
    let r = with(|p| p.dst.addr = Addr4::new(Region::Psum, 120, 0));
    assert_eq!(verdict(&r), "start_addr_active_channels");
    // Exactly reaching lane 127 is fine.
    let r = with(|p| {
        p.src.addr = Addr4::new(Region::Sbuf, 112, 0);
        p.dst.addr = Addr4::new(Region::Sbuf, 112, 0x100);
    });
    assert_eq!(verdict(&r), "ok");
    // channels > 128 from partition 0 fails here first (SPEC §5 order).
    assert_eq!(
        verdict(&with(|p| p.num_active_channels = 200)),
        "start_addr_active_channels"
    );
}

#[test]
fn has_valid_pooltype() {
    assert_eq!(
        verdict(&with(|p| p.pool_func = PoolFunc::NONE)),
        "has_valid_pooltype"
    );
    assert_eq!(
        verdict(&with(|p| p.pool_func = PoolFunc(3))),
        "has_valid_pooltype"
    );
    let mut m = seed_max_pool_select(4);
    m.pool_func = PoolFunc::MAX_POOL;
    assert_eq!(verdict(&m.encode()), "has_valid_pooltype");
}

#[test]
fn is_valid_subdim_rejects_one_and_unused() {
    for d in [0u8, 1, 6, 0xFF] {
        assert_eq!(
            verdict(&with(|p| p.pool_dim = PoolDim(d))),
            "is_valid_subdim",
            "dim {d}"
        );
    }
}

#[test]
fn has_valid_active_channel_range() {
    assert_eq!(
        verdict(&with(|p| p.num_active_channels = 0)),
        "has_valid_active_channel_range"
    );
    // With register-mode addresses the start-partition test passes (EC-5), so 129 reaches this one.
    let r = with(|p| {
        p.num_active_channels = 129;
        p.src.addr = Addr4(0x8000_0001);
        p.dst.addr = Addr4(0x8000_0002);
    });
    assert_eq!(verdict(&r), "has_valid_active_channel_range");
}

#[test]
fn s4d4_pl_dtype_check() {
    for out in [Dtype::FP32, Dtype::INT32, Dtype::INT8, Dtype::BFLOAT16] {
        let mut m = seed_max_pool_select(4);
        m.out_dtype = out;
        assert_eq!(verdict(&m.encode()), "s4d4_pl_dtype_check");
    }
}

#[test]
fn tensor4d_valid() {
    use tpb_emu::isa::validate::{Operand, TensorFault};
    let fault = |r: &Record| match check(r, T) {
        Err(Fail::Tensor4dValid { operand, why }) => (operand, why),
        other => panic!("expected tensor4d_valid, got {other:?}"),
    };
    // Region: above PSUM.
    let r = with(|p| p.src.addr = Addr4(0x240_0000));
    assert_eq!(
        fault(&r),
        (Operand::Src, TensorFault::Region { addr: 0x240_0000 })
    );
    // Register mode: id >= 64, or bits 8..30 set.
    let r = with(|p| p.dst.addr = Addr4(0x8000_0040));
    assert!(matches!(
        fault(&r),
        (Operand::Dst, TensorFault::RegisterMode { .. })
    ));
    let r = with(|p| p.src.addr = Addr4(0x8000_0105));
    assert!(matches!(
        fault(&r),
        (Operand::Src, TensorFault::RegisterMode { .. })
    ));
    // Alignment to the dtype size.
    let r = with(|p| p.src.addr = Addr4::new(Region::Sbuf, 0, 2));
    assert!(matches!(
        fault(&r),
        (Operand::Src, TensorFault::Alignment { align: 4, .. })
    ));
    let r = with(|p| {
        p.out_dtype = Dtype::FP16;
        p.dst.addr = Addr4::new(Region::Sbuf, 0, 0x101);
    });
    assert!(matches!(
        fault(&r),
        (Operand::Dst, TensorFault::Alignment { align: 2, .. })
    ));
    // PSUM writes need a 4-byte dtype; PSUM reads do not.
    let r = with(|p| {
        p.out_dtype = Dtype::BFLOAT16;
        p.dst.addr = Addr4::new(Region::Psum, 0, 0);
    });
    assert!(matches!(
        fault(&r),
        (Operand::Dst, TensorFault::PsumWriteDtype { .. })
    ));
    let r = with(|p| {
        p.in_dtype = Dtype::FP16;
        p.src.addr = Addr4::new(Region::Psum, 0, 0);
    });
    assert_eq!(verdict(&r), "ok");
    // A zero num in any dim.
    for d in 0..4 {
        let r = with(|p| p.dst.num[d] = 0);
        assert_eq!(
            fault(&r),
            (Operand::Dst, TensorFault::ZeroNum { dim: d as u8 })
        );
    }
}

#[test]
fn s4d4_pool_scale_valid() {
    for s in [0.5f32, 0.0, -1.0, f32::NAN, f32::INFINITY] {
        assert_eq!(
            verdict(&with(|p| p.pool_scale_bits = s.to_bits())),
            "s4d4_pool_scale_valid"
        );
        let mut m = seed_max_pool_select(4);
        m.pool_scale_bits = s.to_bits();
        assert_eq!(verdict(&m.encode()), "s4d4_pool_scale_valid");
    }
    let avg = |s: f32| {
        let mut p = seed_pool(PoolFunc::AVG_POOL, 4);
        p.pool_scale_bits = s.to_bits();
        p.encode()
    };
    for s in [
        0.0f32,
        -0.0,
        1e-40,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ] {
        assert_eq!(verdict(&avg(s)), "s4d4_pool_scale_valid", "avg scale {s}");
    }
    for s in [0.25f32, 1.0 / 9.0, -2.0, f32::MIN_POSITIVE, f32::MAX] {
        assert_eq!(verdict(&avg(s)), "ok", "avg scale {s}");
    }
}

#[test]
fn emu_addr_mode_supported() {
    // A well-formed register-mode address passes the hardware tests, then is not emulated (EC-5).
    assert_eq!(
        verdict(&with(|p| p.src.addr = Addr4(0x8000_003F))),
        "emu_addr_mode_supported"
    );
    // Indirect and shape-from-register bits: the hardware tests use bits 0..28.
    assert_eq!(
        verdict(&with(|p| p.dst.addr = Addr4(0x2000_0100))),
        "emu_addr_mode_supported"
    );
    assert_eq!(
        verdict(&with(|p| p.src.addr = Addr4(0x4000_0000))),
        "emu_addr_mode_supported"
    );
    // An ADDR8 marker other than 0 and VAR_ID (EC-22).
    let r = dma(Addr8::decode(0x2000_0000_0000_0000), Addr8::Dram(0));
    assert_eq!(verdict(&r), "emu_addr_mode_supported");
}

#[test]
fn emu_event_mode_supported() {
    for w in [0x81u8, 0x85] {
        assert_eq!(
            verdict(&with(|p| p.events.wait_mode = WaitMode(w))),
            "emu_event_mode_supported"
        );
    }
    for u in [0x87u8, 0x97, 0x99] {
        let r = with(|p| p.events.update_mode = UpdateMode(u));
        assert_eq!(verdict(&r), "emu_event_mode_supported");
    }
    // EC-24: EVENT_SEMAPHORE's second wait.
    let r = set_byte(control(Opcode::EVENT_SEMAPHORE), 40, 1);
    assert_eq!(verdict(&r), "emu_event_mode_supported");
    assert_eq!(
        verdict(&set_byte(mov32(1, 1), 6, 0x99)),
        "emu_event_mode_supported"
    );
}

#[test]
fn emu_dtype_supported() {
    for d in [Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5] {
        assert_eq!(verdict(&with(|p| p.in_dtype = d)), "emu_dtype_supported");
        let r = with(|p| {
            p.out_dtype = d;
            p.dst.addr = Addr4::new(Region::Sbuf, 0, 0x400);
        });
        assert_eq!(verdict(&r), "emu_dtype_supported");
    }
}

#[test]
fn emu_footprint_in_bounds() {
    // Past the 224 KiB of a CAYMAN partition (and fine on MARIANA's 256 KiB).
    let r = with(|p| p.dst.addr = Addr4::new(Region::Sbuf, 0, 224 * 1024 - 8));
    assert_eq!(verdict(&r), "emu_footprint_in_bounds");
    let r = with(|p| p.dst.addr = Addr4::new(Region::Sbuf, 0, 230 * 1024));
    assert_eq!(verdict(&r), "emu_footprint_in_bounds");
    assert_eq!(verdict_on(&r, Target::pool(Arch::Mariana)), "ok");
    assert_eq!(
        verdict_on(&r, Target::pool(Arch::Sunda)),
        "emu_footprint_in_bounds"
    );
    // Negative steps below the partition start.
    let r = with(|p| p.src.step[0] = -1);
    assert_eq!(verdict(&r), "emu_footprint_in_bounds");
    // PSUM's 16 KiB.
    let r = with(|p| {
        p.src.addr = Addr4::new(Region::Psum, 0, 16 * 1024 - 32);
        p.dst.addr = Addr4::new(Region::Psum, 0, 0);
    });
    assert_eq!(verdict(&r), "emu_footprint_in_bounds");
    // The exact last byte is inside.
    let r = with(|p| p.dst.addr = Addr4::new(Region::Sbuf, 0, 224 * 1024 - 16));
    assert_eq!(verdict(&r), "ok");
}

#[test]
fn emu_pool_shape() {
    assert_eq!(verdict(&with(|p| p.dst.num[0] = 3)), "emu_pool_shape");
    // 2^25 elements per lane, read with zero steps (one element) so only the size rule fails.
    let r = with(|p| {
        p.src = Tensor4d::new(p.src.addr, [(4096, 0), (4096, 0), (2, 0), (1, 0)]);
        p.dst = Tensor4d::new(p.dst.addr, [(2, 1), (1, 1), (1, 1), (1, 1)]);
    });
    assert_eq!(verdict(&r), "emu_pool_shape");
    // MaxPoolSelect: a window of 257 elements needs index 256, which uint8 cannot hold.
    let mps = |n: u16, out: Dtype| {
        let mut m = seed_max_pool_select(4);
        m.out_dtype = out;
        m.pool_dim = PoolDim::X;
        m.src = Tensor4d::new(m.src.addr, [(n, 1), (1, 1), (1, 1), (1, 1)]);
        m.dst = Tensor4d::new(
            Addr4::new(Region::Sbuf, 0, 0x1000),
            [(1, 1), (1, 1), (1, 1), (1, 1)],
        );
        m.encode()
    };
    assert_eq!(verdict(&mps(257, Dtype::UINT8)), "emu_pool_shape");
    assert_eq!(verdict(&mps(256, Dtype::UINT8)), "ok");
    assert_eq!(verdict(&mps(257, Dtype::UINT16)), "ok");
}

#[test]
fn emu_overlap_is_exact() {
    use tpb_emu::isa::validate::OverlapFault;
    // dst on top of src.
    let r = with(|p| p.dst.addr = Addr4::new(Region::Sbuf, 0, 8));
    assert_eq!(verdict(&r), "emu_overlap");
    // Two outputs share bytes: a zero step over 2 elements.
    let r = with(|p| p.dst = Tensor4d::new(p.dst.addr, [(2, 0), (2, 2), (1, 1), (1, 1)]));
    assert!(matches!(
        check(&r, T),
        Err(Fail::EmuOverlap {
            why: OverlapFault::Outputs { offset: 0x100 }
        })
    ));
    // Interleaved but disjoint: src reads the even fp32 elements, dst writes odd ones.
    let r = with(|p| {
        p.pool_dim = PoolDim::X;
        p.src = Tensor4d::new(p.src.addr, [(2, 2), (4, 4), (1, 1), (1, 1)]);
        p.dst = Tensor4d::new(
            Addr4::new(Region::Sbuf, 0, 4),
            [(4, 2), (1, 1), (1, 1), (1, 1)],
        );
    });
    assert_eq!(verdict(&r), "ok", "{:?}", check(&r, T));
    // Interleaved and touching: dst hits an element src reads.
    let r = with(|p| {
        p.pool_dim = PoolDim::X;
        p.src = Tensor4d::new(p.src.addr, [(2, 2), (4, 4), (1, 1), (1, 1)]);
        p.dst = Tensor4d::new(
            Addr4::new(Region::Sbuf, 0, 4),
            [(4, 3), (1, 1), (1, 1), (1, 1)],
        );
    });
    assert_eq!(verdict(&r), "emu_overlap");
    // Lanes that meet: src partitions 0..16, dst partitions 8..24 at the same offsets.
    let r = with(|p| p.dst.addr = Addr4::new(Region::Sbuf, 8, 0));
    assert_eq!(verdict(&r), "emu_overlap");
    // Lanes that do not meet: dst partitions 16..32.
    let r = with(|p| p.dst.addr = Addr4::new(Region::Sbuf, 16, 0));
    assert_eq!(verdict(&r), "ok");
    // Same offset in the other region.
    let r = with(|p| p.dst.addr = Addr4::new(Region::Psum, 0, 0));
    assert_eq!(verdict(&r), "ok");
}

#[test]
fn fast_face_equals_diagnostic_face_under_single_field_mutation() {
    let mut rng = fastrand::Rng::with_seed(0x7b5_0002);
    let bases = [
        seed_pool(PoolFunc::MAX_POOL, 16).encode(),
        seed_pool(PoolFunc::AVG_POOL, 128).encode(),
        seed_max_pool_select(64).encode(),
        mov32(3, 9),
        branch_rel(cmp::EQIMM, 1, 64),
        dma(Addr8::OnChip(0), Addr8::Dram(0)),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..200_000 {
        let mut r = bases[i % bases.len()];
        // Change one field-sized run of bytes (1, 2 or 4 bytes).
        let w = [1usize, 2, 4][rng.usize(..3)];
        let at = rng.usize(..=64 - w);
        for b in &mut r.0[at..at + w] {
            *b = rng.u8(..);
        }
        let t = Target {
            engine: Engine::ALL[rng.usize(..5)],
            arch: Arch::ALL[rng.usize(..3)],
        };
        seen.insert(verdict_on(&r, t));
    }
    // The mutations reached deep into the tree, not just the first predicates.
    for p in [
        "ok",
        "tensor4d_valid",
        "emu_footprint_in_bounds",
        "emu_pool_shape",
        "emu_overlap",
        "s4d4_pool_scale_valid",
    ] {
        assert!(seen.contains(p), "no mutation reached {p}: {seen:?}");
    }
}

#[test]
fn random_bytes_never_panic_the_decoder_or_validator() {
    let mut rng = fastrand::Rng::with_seed(42);
    for _ in 0..200_000 {
        let mut r = Record::default();
        rng.fill(&mut r.0);
        if rng.bool() {
            r.0[0] = [0x45, 0x58, 0xA0, 0xA2, 0xA7, 0xA8, 0xA9, 0xB8][rng.usize(..8)];
            r.0[1] = 16;
        }
        let p = S4d4Pl::decode(&r);
        assert_eq!(p.encode(), r, "encode(decode(r)) == r");
        assert_eq!(tpb_emu::isa::Inst::decode(&r).encode(), r);
        let _ = p.period();
        let t = Target {
            engine: Engine::ALL[rng.usize(..5)],
            arch: Arch::ALL[rng.usize(..3)],
        };
        let res = check(&r, t);
        if let Err(f) = res {
            assert!(!f.detail().is_empty());
        }
    }
}

#[test]
fn stream_validation_reports_offset_and_message() {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&max16().encode().0);
    bytes.extend_from_slice(&with(|p| p.pool_dim = PoolDim(1)).0);
    let e = validate_stream(&bytes, T).unwrap_err().to_string();
    assert_eq!(
        e,
        "Found invalid instruction! opcode=69, offset=64: is_valid_subdim (pool_dim byte 37 = 0x01; must be x, xy, xyz or xyzw)"
    );
    let e = validate_stream(&bytes[..100], T).unwrap_err().to_string();
    assert!(e.contains("100 bytes is not a multiple of 64"), "{e}");
    assert_eq!(validate_stream(&bytes[..64], T).unwrap(), 1);
    assert_eq!(
        validate_stream(&[], T).unwrap(),
        0,
        "EC-32: an empty stream needs no terminator"
    );
}
