//! The POOL engine dispatch loop (SPEC §7, seeds 001 and 002): the three
//! distinct errors with the firmware's messages, kernels that are not
//! emulated, the EC-14 bypasses, and the EC-16 per-core trace.

use tpb_emu::device::dispatch::{self, DispatchError};
use tpb_emu::device::{CpuExecutor, DeviceMemory, Program, Trace, Validated, run_program};
use tpb_emu::isa::record::Record;
use tpb_emu::isa::samples::{SEED_DST_OFFSET, seed_max_pool_select, seed_pool};
use tpb_emu::isa::stream::to_bytes;
use tpb_emu::isa::text::disasm_record;
use tpb_emu::isa::validate::Target;
use tpb_emu::isa::{Location, PoolFunc, Region};
use tpb_emu::limits::Arch;

/// Dispatches raw bytes on poisoned memory; returns the result and the trace,
/// and asserts memory is untouched when dispatch fails.
fn dispatch_raw(arch: Arch, offset: usize, r: &Record) -> (Result<(), DispatchError>, Vec<String>) {
    let mut mem = DeviceMemory::new(arch);
    mem.fill(0xA5);
    let before = mem.clone();
    let mut trace = Vec::new();
    let res = dispatch::dispatch_unvalidated(
        offset,
        r,
        &mut mem,
        &mut trace,
        &mut CpuExecutor::default(),
    );
    if res.is_err() {
        for region in [Region::Sbuf, Region::Psum] {
            assert!(
                mem.region_bytes(region) == before.region_bytes(region),
                "memory changed"
            );
        }
    }
    (res, trace)
}

fn record(bytes: &[(usize, u8)]) -> Record {
    let mut r = Record::default();
    r.0[1] = 16;
    for &(o, b) in bytes {
        r.0[o] = b;
    }
    r
}

#[test]
fn unknown_opcode() {
    let r = record(&[(0, 0x13)]);
    let (res, trace) = dispatch_raw(Arch::Cayman, 128, &r);
    let err = res.unwrap_err();
    assert!(matches!(
        err,
        DispatchError::UnknownOpcode {
            core: 0,
            opcode: 0x13
        }
    ));
    assert_eq!(err.to_string(), "P0: UNKNOWN OPCODE=0x13");
    assert_eq!(
        trace,
        [
            format!("128: {}", disasm_record(&r)),
            "P0: Entering Dispatch".to_string(),
            "P0: In dispatch, CPU ID: 0, got opcode 0x13.".to_string(),
        ]
    );
    // Hex without padding, lower case, as printf's %x.
    let (res, _) = dispatch_raw(Arch::Cayman, 0, &record(&[(0, 0xAB)]));
    assert_eq!(res.unwrap_err().to_string(), "P0: UNKNOWN OPCODE=0xab");
    let (res, _) = dispatch_raw(Arch::Cayman, 0, &record(&[(0, 0x05)]));
    assert_eq!(res.unwrap_err().to_string(), "P0: UNKNOWN OPCODE=0x5");
}

#[test]
fn unknown_extended_opcode() {
    // EC-15: the spec of an 0xF0 record is byte 12; 7 matches no row.
    let r = record(&[(0, 0xF0), (12, 7)]);
    let (res, _) = dispatch_raw(Arch::Cayman, 0, &r);
    let err = res.unwrap_err();
    assert!(matches!(
        err,
        DispatchError::UnknownExtendedOpcode { core: 0, spec: 7 }
    ));
    assert_eq!(err.to_string(), "P0: UNKNOWN EXTENDED OPCODE=7");
    let (res, _) = dispatch_raw(Arch::Cayman, 0, &record(&[(0, 0xF0), (12, 200)]));
    assert_eq!(
        res.unwrap_err().to_string(),
        "P0: UNKNOWN EXTENDED OPCODE=200"
    );
}

#[test]
fn invalid_pooling_function() {
    for func in [0u8, 3, 0xFF] {
        let mut p = seed_pool(PoolFunc::MAX_POOL, 40);
        p.pool_func = PoolFunc(func);
        let r = p.encode();
        for arch in [Arch::Cayman, Arch::Sunda] {
            let (res, trace) = dispatch_raw(arch, 64, &r);
            let err = res.unwrap_err();
            assert!(matches!(
                err,
                DispatchError::InvalidPoolingFunction { core: 0, .. }
            ));
            assert_eq!(err.to_string(), "P0: Error, invalid pooling function.");
            assert_eq!(trace.last().unwrap(), "P0: Pool : num_chans = 16");
        }
    }
}

#[test]
fn the_three_errors_are_distinct() {
    let a = dispatch_raw(Arch::Cayman, 0, &record(&[(0, 0x13)]))
        .0
        .unwrap_err();
    let b = dispatch_raw(Arch::Cayman, 0, &record(&[(0, 0xF0), (12, 9)]))
        .0
        .unwrap_err();
    let mut p = seed_pool(PoolFunc::MAX_POOL, 1);
    p.pool_func = PoolFunc::NONE;
    let c = dispatch_raw(Arch::Cayman, 0, &p.encode()).0.unwrap_err();
    let msgs = [a.to_string(), b.to_string(), c.to_string()];
    assert!(msgs[0] != msgs[1] && msgs[1] != msgs[2] && msgs[0] != msgs[2]);
    assert!(matches!(a, DispatchError::UnknownOpcode { .. }));
    assert!(matches!(b, DispatchError::UnknownExtendedOpcode { .. }));
    assert!(matches!(c, DispatchError::InvalidPoolingFunction { .. }));
}

#[test]
fn rows_not_emulated_name_their_kernel() {
    let cases: [(u8, u8, usize, &str); 4] = [
        (0x52, 0, 11, "TensorReduce"),
        (0xF0, 1, 7, "ExtendedInstCopy"),
        (0xF0, 3, 10, "Rand/Cptc"),
        (0x7B, 0, 16, "decode_tensor_dequantize"),
    ];
    for (opcode, spec, row, name) in cases {
        let r = record(&[(0, opcode), (12, spec)]);
        let (res, _) = dispatch_raw(Arch::Cayman, 0, &r);
        let err = res.unwrap_err();
        match &err {
            DispatchError::NotEmulated {
                row: got, kernel, ..
            } => {
                assert_eq!(*got, row);
                assert!(kernel.contains(name), "{kernel}");
            }
            other => panic!("{opcode:#x}: {other}"),
        }
        assert!(err.to_string().contains(name));
        assert!(err.to_string().contains("not emulated"));
    }
    // On SUNDA the table has 16 rows: 0x7B is row 15 there.
    let (res, _) = dispatch_raw(Arch::Sunda, 0, &record(&[(0, 0x7B)]));
    assert!(matches!(
        res.unwrap_err(),
        DispatchError::NotEmulated { row: 15, .. }
    ));
    // A non-0xF0 opcode ignores byte 12 (EC-15): 0x52 with byte 12 = 5 still finds row 11.
    let (res, _) = dispatch_raw(Arch::Cayman, 0, &record(&[(0, 0x52), (12, 5)]));
    assert!(matches!(
        res.unwrap_err(),
        DispatchError::NotEmulated { row: 11, .. }
    ));
}

#[test]
fn unvalidated_records_run_only_when_valid() {
    // A valid function but an invalid scale: validation stops it at the datapath.
    let mut p = seed_pool(PoolFunc::MAX_POOL, 4);
    p.pool_scale_bits = 0.5f32.to_bits();
    let (res, trace) = dispatch_raw(Arch::Cayman, 0, &p.encode());
    match res.unwrap_err() {
        DispatchError::Invalid(inv) => assert_eq!(inv.fail.predicate(), "s4d4_pool_scale_valid"),
        other => panic!("{other}"),
    }
    assert!(!trace.iter().any(|l| l.contains("Running")));
    // No lanes at all: validation names the failure instead of a silent skip.
    let mut p = seed_pool(PoolFunc::AVG_POOL, 4);
    p.num_active_channels = 0;
    let (res, trace) = dispatch_raw(Arch::Cayman, 0, &p.encode());
    match res.unwrap_err() {
        DispatchError::Invalid(inv) => {
            assert_eq!(inv.fail.predicate(), "has_valid_active_channel_range")
        }
        other => panic!("{other}"),
    }
    assert_eq!(trace.len(), 1);
    // A footprint outside active memory never runs.
    let mut p = seed_pool(PoolFunc::MAX_POOL, 4);
    p.dst.addr = tpb_emu::isa::Addr4::new(Region::Sbuf, 0, 224 * 1024 - 8);
    let (res, _) = dispatch_raw(Arch::Cayman, 0, &p.encode());
    assert!(matches!(res.unwrap_err(), DispatchError::Invalid(_)));
    // A valid one runs.
    let (res, _) = dispatch_raw(Arch::Cayman, 0, &seed_pool(PoolFunc::MAX_POOL, 4).encode());
    res.unwrap();
}

fn traced(arch: Arch, records: &[Record]) -> Vec<String> {
    let bytes = to_bytes(records);
    let prog = Program::from_stream(&bytes, Target::pool(arch)).unwrap();
    let mut mem = DeviceMemory::new(arch);
    let mut trace = Vec::new();
    run_program(&mut CpuExecutor::default(), &prog, &mut mem, &mut trace).unwrap();
    trace
}

fn core_lines(
    core: u32,
    lanes: u32,
    bypass: bool,
    kind: &str,
    period: u64,
    num: u64,
) -> Vec<String> {
    let mut v = vec![
        format!("P{core}: Entering Dispatch"),
        format!(
            "P{core}: In dispatch, CPU ID: {core}, got opcode 0x{}.",
            if kind == "select" { "58" } else { "45" }
        ),
    ];
    if bypass {
        v.push(format!("P{core}: kernel table bypassed (EC-14)"));
    }
    let name = if kind == "avg" {
        "avg_pool"
    } else {
        "max_pool"
    };
    v.push(format!("P{core}: Pool : num_chans = {lanes}"));
    v.push(format!(
        "P{core}: Running {name} with period = {period} and num = {num}."
    ));
    v.push(format!("P{core}: Done running {name}."));
    v.push(format!("P{core}: Exiting Dispatch"));
    v
}

#[test]
fn seed_example_trace_over_40_channels() {
    let max = seed_pool(PoolFunc::MAX_POOL, 40).encode();
    let avg = seed_pool(PoolFunc::AVG_POOL, 40).encode();
    let trace = traced(Arch::Cayman, &[max, avg]);
    let mut want = vec![format!("0: {}", disasm_record(&max))];
    for (core, lanes) in [(0, 16), (1, 16), (2, 8)] {
        want.extend(core_lines(core, lanes, false, "max", 4, 4));
    }
    want.push(format!("64: {}", disasm_record(&avg)));
    for (core, lanes) in [(0, 16), (1, 16), (2, 8)] {
        want.extend(core_lines(core, lanes, false, "avg", 4, 4));
    }
    assert_eq!(trace, want);
}

#[test]
fn max_pool_select_bypasses_the_table() {
    let sel = seed_max_pool_select(17).encode();
    for arch in Arch::ALL {
        let trace = traced(arch, &[sel]);
        let mut want = vec![format!("0: {}", disasm_record(&sel))];
        want.extend(core_lines(0, 16, true, "select", 4, 4));
        want.extend(core_lines(1, 1, true, "select", 4, 4));
        assert_eq!(trace, want, "{arch:?}");
    }
}

#[test]
fn sunda_pool_bypasses_the_table() {
    let max = seed_pool(PoolFunc::MAX_POOL, 128).encode();
    let trace = traced(Arch::Sunda, &[max]);
    assert_eq!(trace.len(), 1 + 8 * 7);
    let mut want = vec![format!("0: {}", disasm_record(&max))];
    for core in 0..8 {
        want.extend(core_lines(core, 16, true, "max", 4, 4));
    }
    assert_eq!(trace, want);
    // On CAYMAN and MARIANA the same record goes through the table.
    for arch in [Arch::Cayman, Arch::Mariana] {
        let t = traced(arch, &[max]);
        assert!(!t.iter().any(|l| l.contains("bypassed")), "{arch:?}");
        assert_eq!(t.len(), 1 + 8 * 6);
    }
}

#[test]
fn sunda_and_cayman_compute_the_same() {
    let max = seed_pool(PoolFunc::AVG_POOL, 3).encode();
    let mut outs = vec![];
    for arch in [Arch::Sunda, Arch::Cayman] {
        let mut mem = DeviceMemory::new(arch);
        let data: Vec<u8> = (0..48)
            .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
            .collect();
        let at = Location {
            region: Region::Sbuf,
            partition: 0,
            offset: 0,
        };
        mem.write(at, 3, &data).unwrap();
        let prog = Program::from_stream(&max.0, Target::pool(arch)).unwrap();
        run_program(
            &mut CpuExecutor::default(),
            &prog,
            &mut mem,
            &mut tpb_emu::device::NoTrace,
        )
        .unwrap();
        let out_at = Location {
            offset: SEED_DST_OFFSET,
            ..at
        };
        outs.push(mem.read(out_at, 3, 16).unwrap());
    }
    assert_eq!(outs[0], outs[1]);
    // Lane 0: windows {0,.5,2,2.5} → 1.25; lane 2 starts at 16: {16,16.5,18,18.5} → 17.25.
    assert_eq!(&outs[0][0..4], 1.25f32.to_le_bytes());
    assert_eq!(&outs[0][32..36], 17.25f32.to_le_bytes());
}

/// A trace sink that counts lines but says it is off: nothing may be formatted for it.
struct Off(usize);
impl Trace for Off {
    fn enabled(&self) -> bool {
        false
    }
    fn line(&mut self, _: &str) {
        self.0 += 1;
    }
}

#[test]
fn a_disabled_trace_receives_nothing() {
    let bytes = seed_pool(PoolFunc::MAX_POOL, 128).encode().0;
    let prog = Program::from_stream(&bytes, Target::pool(Arch::Cayman)).unwrap();
    let mut off = Off(0);
    run_program(
        &mut CpuExecutor::default(),
        &prog,
        &mut DeviceMemory::new(Arch::Cayman),
        &mut off,
    )
    .unwrap();
    assert_eq!(off.0, 0);
}

#[test]
fn validated_records_need_matching_memory() {
    let v = Validated::new(
        0,
        seed_pool(PoolFunc::MAX_POOL, 1).encode(),
        Target::pool(Arch::Sunda),
    )
    .unwrap();
    let mut mem = DeviceMemory::new(Arch::Cayman);
    let res = dispatch::dispatch(&v, &mut mem, &mut Vec::new(), &mut CpuExecutor::default());
    assert!(matches!(res, Err(DispatchError::ArchMismatch { .. })));
}

/// Property: any 64 bytes dispatch without a panic, and a record that fails
/// leaves memory exactly as it was.
#[test]
fn random_unvalidated_records_never_panic_or_touch_memory_on_error() {
    let mut rng = fastrand::Rng::with_seed(0xD15_0A7C);
    let arch = Arch::Sunda;
    let mut mem = DeviceMemory::new(arch);
    mem.fill(0x3C);
    let mut baseline = mem.clone();
    let (mut ok, mut err) = (0, 0);
    for i in 0..600 {
        let r = if rng.bool() {
            // A valid seed record with one byte changed.
            let mut r = match rng.u32(..3) {
                0 => seed_pool(PoolFunc::MAX_POOL, rng.u8(1..=128)),
                1 => seed_pool(PoolFunc::AVG_POOL, rng.u8(1..=128)),
                _ => seed_max_pool_select(rng.u8(1..=128)),
            }
            .encode();
            r.0[rng.usize(..64)] = rng.u8(..);
            r
        } else {
            let mut r = Record::default();
            rng.fill(&mut r.0);
            r.0[0] = [0x45, 0x58, 0xF0, 0x7E, 0x13, rng.u8(..)][rng.usize(..6)];
            r.0[1] = 16;
            r
        };
        let res = dispatch::dispatch_unvalidated(
            i * 64,
            &r,
            &mut mem,
            &mut Vec::new(),
            &mut CpuExecutor::default(),
        );
        match res {
            Ok(()) => {
                ok += 1;
                baseline.clone_from(&mem);
            }
            Err(e) => {
                err += 1;
                assert!(!e.to_string().is_empty());
                for region in [Region::Sbuf, Region::Psum] {
                    assert!(
                        mem.region_bytes(region) == baseline.region_bytes(region),
                        "{e} changed memory"
                    );
                }
            }
        }
    }
    assert!(ok >= 50 && err >= 300, "ok {ok}, err {err}");
}
