//! The class walk (issue 32, item 3): every kernel-table class, one record
//! at a time, through decode → text → validate → `Op` → staged and run as a
//! POOL dispatch. The classes come from the opcode table itself (every byte
//! whose class `is_pool_kernel`), and [`samples`] is an exhaustive `match`
//! on `OpcodeClass`: a new class does not compile here until it has a walk.

use tpb_emu::device::{BackendError, CpuExecutor, DeviceMemory, Executor, Op, Trace, Validated};
use tpb_emu::isa::build::Geometry;
use tpb_emu::isa::samples::{seed_max_pool_select, seed_pool};
use tpb_emu::isa::text::{asm, disasm_record};
use tpb_emu::isa::validate::{Target, check};
use tpb_emu::isa::{
    AluOp, Dtype, Engine, Inst, Opcode, OpcodeClass, PoolFunc, Record, ReduceAxis, ReduceOp,
};
use tpb_emu::limits::Arch;
use tpb_emu::runtime::{Machine, Program, StageError, stage};

/// What a class's sample record does on POOL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    /// Valid, with a device op the executor receives once.
    Runs,
    /// Valid, dispatched, no datapath work (EC-55: ENGINE_NOP).
    NoOp,
    /// A row known by name whose operand is not modelled: validation refuses
    /// it (`emu_opcode_supported`), so staging does too.
    Refused,
}

/// Sample records of a class, each with its fate. No wildcard: every class
/// is placed, the non-kernel ones with no samples.
fn samples(class: OpcodeClass) -> Vec<(Record, Fate)> {
    use Fate::*;
    let g = Geometry::default();
    let raw = |op: Opcode, spec: u8| {
        let mut r = g.copy(Dtype::FP32).encode();
        r.0[0] = op.0;
        r.0[12] = spec;
        r
    };
    match class {
        OpcodeClass::S4d4Pl => vec![
            (seed_pool(PoolFunc::MAX_POOL, 16).encode(), Runs),
            (seed_pool(PoolFunc::AVG_POOL, 16).encode(), Runs),
            (seed_max_pool_select(16).encode(), Runs),
        ],
        OpcodeClass::S4d4Tr => vec![
            (g.copy(Dtype::BFLOAT16).encode(), Runs),
            (g.cast(Dtype::FP32, Dtype::INT8).encode(), Runs),
        ],
        OpcodeClass::D4Iota => vec![(g.iota(Dtype::INT32, 0, 1, 64).encode(), Runs)],
        OpcodeClass::S3s3d3Tt => vec![
            (g.arith(AluOp::ADD_INT, Dtype::INT32).encode(), Runs),
            (g.bitvec(AluOp::BITWISE_XOR, Dtype::UINT16).encode(), Runs),
        ],
        OpcodeClass::S4d4Cr => vec![(
            g.cross_lane_reduce(
                ReduceOp::MAX,
                ReduceAxis::PARTITIONS,
                Dtype::FP32,
                Dtype::FP32,
                1.0,
            )
            .encode(),
            Runs,
        )],
        OpcodeClass::SeqBounds => {
            vec![(g.sequence_bounds(Dtype::INT32, Dtype::INT32).encode(), Runs)]
        }
        OpcodeClass::NonzeroWithCount => {
            vec![(g.nonzero_with_count(Dtype::FP32, 0, -1).encode(), Runs)]
        }
        OpcodeClass::Extended => vec![
            (g.engine_nop(2).encode(), NoOp),
            (g.ext_tta(1, AluOp::MULT, Dtype::BFLOAT16).encode(), Runs),
            (raw(Opcode::EXTENDED_INST, 1), Refused),
            (raw(Opcode::EXTENDED_INST, 3), Refused),
            (raw(Opcode::EXTENDED_INST, 4), Refused),
        ],
        OpcodeClass::PoolNotEmulated => vec![
            (raw(Opcode::TENSOR_REDUCE_BITVEC, 0), Refused),
            (raw(Opcode::TENSOR_DEQUANTIZE, 0), Refused),
        ],
        OpcodeClass::Control | OpcodeClass::Dma | OpcodeClass::Pseudo | OpcodeClass::Unknown => {
            vec![]
        }
    }
}

/// Records the ops it is given, running each on the CPU reference.
#[derive(Default)]
struct Recorder {
    ops: Vec<Op>,
}

impl Executor for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn execute(&mut self, op: &Op, mem: &mut DeviceMemory) -> Result<(), BackendError> {
        self.ops.push(*op);
        CpuExecutor::default().execute(op, mem)
    }
    fn finish(&mut self, _mem: &mut DeviceMemory) -> Result<(), BackendError> {
        Ok(())
    }
}

#[derive(Default)]
struct Lines(Vec<String>);

impl Trace for Lines {
    fn line(&mut self, line: &str) {
        self.0.push(line.to_string());
    }
}

#[test]
fn every_kernel_class_walks_from_bytes_to_a_pool_dispatch() {
    let target = Target::pool(Arch::Cayman);
    let mut classes: Vec<OpcodeClass> = Vec::new();
    for b in 0..=255u8 {
        let c = Opcode(b).class();
        if !classes.contains(&c) {
            classes.push(c);
        }
    }
    let mut walked = 0;
    for class in classes {
        let samples = samples(class);
        assert_eq!(
            samples.is_empty(),
            !class.is_pool_kernel(),
            "{class:?}: a kernel class needs samples, and only a kernel class has them"
        );
        for (r, fate) in samples {
            let what = format!("{class:?} {}", disasm_record(&r));
            assert_eq!(r.opcode().class(), class, "{what}");
            // Decode: a kernel, losslessly.
            let inst = Inst::decode(&r);
            assert!(inst.kernel().is_some(), "{what}: not decoded as a kernel");
            assert_eq!(inst.encode(), r, "{what}");
            // Text: the exact round trip.
            assert_eq!(asm(&disasm_record(&r)).unwrap(), vec![r], "{what}");
            // Validate.
            let v = Validated::new(0, r, target);
            assert_eq!(v.is_ok(), check(&r, target).is_ok(), "{what}");
            let mut p = Program::default();
            p.set_stream(Engine::Pool, &[r]);
            if fate == Fate::Refused {
                let e = v.expect_err(&what);
                assert_eq!(e.fail.predicate(), "emu_opcode_supported", "{what}");
                let Err(StageError::Invalid { engine, record }) = stage(&p) else {
                    panic!("{what}: staged");
                };
                assert_eq!(
                    (engine, record.fail.predicate()),
                    (Engine::Pool, "emu_opcode_supported")
                );
                walked += 1;
                continue;
            }
            let v = v.unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(v.inst(), inst, "{what}");
            // Op.
            let op = Op::from_validated(&v);
            assert_eq!(op.is_some(), fate == Fate::Runs, "{what}: {op:?}");
            // Staged, then run: the one record goes through the POOL
            // dispatch, and the executor gets exactly its op.
            let staged = stage(&p).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(staged.records(Engine::Pool), 1, "{what}");
            let mut m = Machine::new(staged);
            let mut exec = Recorder::default();
            let mut trace = Lines::default();
            m.run(&mut exec, &mut trace)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(
                trace.0.iter().any(|l| l.ends_with("Entering Dispatch")),
                "{what}: no POOL dispatch in {:?}",
                trace.0
            );
            assert_eq!(exec.ops, op.into_iter().collect::<Vec<_>>(), "{what}");
            walked += 1;
        }
    }
    assert_eq!(walked, 18, "records walked");
}
