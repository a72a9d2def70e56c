//! The POOL engine dispatch loop (seeds 001 and 002, SPEC §7).
//!
//! Per record, each of the eight pool cores that has lanes (EC-16) enters
//! dispatch, builds the packed key `(opcode << 24) | (spec << 16)` (EC-15),
//! scans the kernel table linearly (bounded by its row count, no sentinel) and
//! calls the row's handler: `decode_pool` switches on `pool_func`; the 0xF0
//! rows go through `dispatch_extended_inst`, selected by spec; Iota, Copy,
//! Cast, Tensor-Tensor and the other kernels with a device op run it with
//! EC-59's kernel lines (the op's, `ops::KernelOp::ROWS`).
//! MaxPoolSelect, and Pool on SUNDA, bypass the table (EC-14). Every other
//! row is an error naming its kernel, never a skip.
//!
//! The loop accepts records validation has not seen ([`dispatch_unvalidated`])
//! so the seed's three errors can be exercised: such a record is validated at
//! the point where it would touch memory, and never runs unless it passes.

use super::ops::Op;
use super::ops::pool::{Func, PoolOp};
use super::{BackendError, ContractFault, DeviceMemory, Executor, Trace, Validated};
use crate::isa::enums::PoolFunc;
use crate::isa::inst::Inst;
use crate::isa::opcode::Opcode;
use crate::isa::record::Record;
use crate::isa::s4d4_pl::off;
use crate::isa::validate::{InvalidRecord, Target};
use crate::limits::{Arch, LANES_PER_POOL_CORE, POOL_CORES};
use std::ops::Range;

/// What a kernel-table row calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handler {
    /// `decode_pool` (seed 001): the Pool kernel, switching on `pool_func`.
    DecodePool,
    /// `dispatch_extended_inst` (seed 002 §7): the 0xF0 band, selected by spec.
    Extended,
    /// A kernel, by name. It runs when a device op claims its opcode
    /// ([`Op::trace_lines`]: the op's `KernelOp::ROWS` give its EC-59 kernel
    /// lines), and is otherwise known but not emulated: an error naming it.
    Kernel(&'static str),
}

/// One kernel-table row with the seed's 8-byte semantics
/// `{u8 0, u8 0, u8 spec, u8 opcode, handler}` (seed 002 §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelRow {
    /// Bytes +0 and +1: always zero.
    pub zero: [u8; 2],
    /// Byte +2: the spec (non-zero only on 0xF0 rows).
    pub spec: u8,
    /// Byte +3: the opcode.
    pub opcode: u8,
    /// Bytes +4..8: the kernel entry.
    pub handler: Handler,
}

impl KernelRow {
    const fn new(opcode: u8, spec: u8, handler: Handler) -> KernelRow {
        KernelRow {
            zero: [0, 0],
            spec,
            opcode,
            handler,
        }
    }

    /// The row's key: the little-endian u32 of its first four bytes.
    pub const fn key(&self) -> u32 {
        u32::from_le_bytes([self.zero[0], self.zero[1], self.spec, self.opcode])
    }
}

/// The packed dispatch key `(opcode << 24) | (spec << 16)` (seed 002 §4).
pub const fn key(opcode: u8, spec: u8) -> u32 {
    ((opcode as u32) << 24) | ((spec as u32) << 16)
}

/// EC-15: the key's spec is record byte 12 for 0xF0 and 0 for every other opcode.
pub const fn spec_of(r: &Record) -> u8 {
    if r.0[0] == Opcode::EXTENDED_INST.0 {
        r.0[12]
    } else {
        0
    }
}

use Handler::{DecodePool, Extended, Kernel};

/// The CAYMAN/MARIANA kernel table, in registration order (seed 002 §6, SPEC §7).
pub const KERNEL_TABLE: [KernelRow; 17] = [
    // Whether a `Kernel` row runs, and its EC-59 lines, is the op registry's
    // (`ops::KernelOp::ROWS`); the table holds the seed's facts only.
    KernelRow::new(0x7E, 0, Kernel("Iota")),
    KernelRow::new(0x7C, 0, Kernel("CrossLaneReduce (arith)")),
    KernelRow::new(0x7D, 0, Kernel("CrossLaneReduce (bitvec)")),
    KernelRow::new(0x45, 0, DecodePool),
    KernelRow::new(0x51, 0, Kernel("TensorTensor (bitvec)")),
    KernelRow::new(0x41, 0, Kernel("TensorTensor (arith)")),
    KernelRow::new(0xF0, 0, Extended),
    KernelRow::new(0xF0, 1, Extended),
    KernelRow::new(0xF0, 2, Extended),
    KernelRow::new(0xF0, 4, Extended),
    KernelRow::new(0xF0, 3, Extended),
    KernelRow::new(0x52, 0, Kernel("TensorReduce (bitvec)")),
    KernelRow::new(0x46, 0, Kernel("Copy")),
    KernelRow::new(0x47, 0, Kernel("Cast")),
    KernelRow::new(0xBE, 0, Kernel("GetSequenceBounds")),
    KernelRow::new(0xF2, 0, Kernel("NonzeroWithCount")),
    KernelRow::new(0x7B, 0, Kernel("decode_tensor_dequantize")),
];

/// EC-14: SUNDA's table is the same without the 0x45 row (seed 001 §8 says
/// only that it has none; the emulator keeps the other rows in order).
const SUNDA_KERNEL_TABLE: [KernelRow; 16] = {
    let mut t = [KERNEL_TABLE[0]; 16];
    let mut i = 0;
    let mut j = 0;
    while i < KERNEL_TABLE.len() {
        if KERNEL_TABLE[i].opcode != 0x45 {
            t[j] = KERNEL_TABLE[i];
            j += 1;
        }
        i += 1;
    }
    t
};

/// The kernel table of a generation.
pub fn kernel_table(arch: Arch) -> &'static [KernelRow] {
    match arch {
        Arch::Sunda => &SUNDA_KERNEL_TABLE,
        Arch::Cayman | Arch::Mariana => &KERNEL_TABLE,
    }
}

/// The linear scan: the first row whose key matches, bounded by the row count.
pub fn lookup(table: &[KernelRow], key: u32) -> Option<(usize, &KernelRow)> {
    (0..table.len())
        .map(|i| (i, &table[i]))
        .find(|(_, row)| row.key() == key)
}

/// `dispatch_extended_inst`: the kernel of an 0xF0 row, by spec (SPEC §7).
pub fn extended_kernel(spec: u8) -> Option<&'static str> {
    Some(match spec {
        0 => "ExtendedInst(0): EngineNop/Rand band",
        1 => "ExtendedInstCopy",
        2 => "ExtendedInstTensorTensorArith",
        3 => "ExtendedInst(3): Rand/Cptc band",
        4 => "ExtendedInst(4): Rand/Cptc band",
        _ => return None,
    })
}

/// EC-59: the lines of an executed 0xF0 spec on one core of `lanes` lanes
/// (`dispatch_extended_inst` first); `None` for the specs that do not run.
fn extended_lines(record: &Record, spec: u8, lanes: usize) -> Option<Vec<String>> {
    use crate::isa::extended::{ExtTta, spec as s};
    let head = format!("dispatch_extended_inst({spec}) : num_chans = {lanes}");
    match spec {
        s::ENGINE_NOP => Some(vec![
            head,
            "ExtendedInstEngineNop : processing complete".into(),
        ]),
        s::TENSOR_TENSOR_ARITH => {
            let p = ExtTta::decode(record);
            Some(vec![
                head,
                "Decode : ExtendedInstTensorTensorArith".into(),
                format!(
                    "ExtendedInstTensorTensorArith : num_tensor_elements = {} : alu_op = 0x{:x}",
                    p.src0.elements(),
                    p.op.0
                ),
            ])
        }
        _ => None,
    }
}

/// EC-14: records that run on the pool datapath without the table.
pub fn bypasses_table(arch: Arch, opcode: Opcode) -> bool {
    opcode == Opcode::MAX_POOL_SELECT || (arch == Arch::Sunda && opcode == Opcode::POOL)
}

/// EC-16: the pool cores with lanes for a record of `channels` lanes, in
/// order, with their lanes `[16i, 16i + 16) ∩ [0, channels)`.
pub fn cores(channels: u32) -> impl Iterator<Item = (u32, Range<u32>)> {
    (0..POOL_CORES).filter_map(move |i| {
        let lo = i * LANES_PER_POOL_CORE;
        let hi = (lo + LANES_PER_POOL_CORE).min(channels);
        (lo < hi).then_some((i, lo..hi))
    })
}

/// Why a record did not run. The first three carry the firmware's messages
/// exactly (seeds 001, 002).
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    /// The table scan found no row (seed 002 §9).
    #[error("P{core}: UNKNOWN OPCODE=0x{opcode:x}")]
    UnknownOpcode {
        /// The pool core.
        core: u32,
        /// The opcode.
        opcode: u8,
    },
    /// An 0xF0 record whose spec matches no row (EC-15).
    #[error("P{core}: UNKNOWN EXTENDED OPCODE={spec}")]
    UnknownExtendedOpcode {
        /// The pool core.
        core: u32,
        /// Record byte 12.
        spec: u8,
    },
    /// `decode_pool`'s default arm: `pool_func` is not MAX or AVG (seed 001 §6).
    #[error("P{core}: Error, invalid pooling function.")]
    InvalidPoolingFunction {
        /// The pool core.
        core: u32,
        /// The byte.
        pool_func: PoolFunc,
    },
    /// A table row whose kernel the emulator does not emulate.
    #[error(
        "P{core}: kernel {kernel} (opcode 0x{opcode:02x}, spec {spec}, table row {row}) is not emulated"
    )]
    NotEmulated {
        /// The pool core.
        core: u32,
        /// Row index in the table.
        row: usize,
        /// The opcode.
        opcode: u8,
        /// The key's spec.
        spec: u8,
        /// The kernel's name.
        kernel: &'static str,
    },
    /// An unvalidated record reached the datapath and failed validation.
    #[error("{0}")]
    Invalid(#[from] InvalidRecord),
    /// A validated record was given memory of another generation.
    #[error("record validated for {record} but device memory is {memory}")]
    ArchMismatch {
        /// The record's target.
        record: &'static str,
        /// The memory's generation.
        memory: &'static str,
    },
    /// The backend failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// Dispatches one validated record on `mem` (the path every run takes).
pub fn dispatch(
    v: &Validated,
    mem: &mut DeviceMemory,
    trace: &mut dyn Trace,
    exec: &mut dyn Executor,
) -> Result<(), DispatchError> {
    if v.target().arch != mem.arch() {
        return Err(DispatchError::ArchMismatch {
            record: v.target().arch.name(),
            memory: mem.arch().name(),
        });
    }
    run(v.offset(), v.record(), Some(v), mem, trace, exec)
}

/// Dispatches any 64 bytes as the POOL engine of `mem.arch()` would: the
/// table scan and `decode_pool`'s switch see the raw record, and the record
/// is validated only when it reaches the datapath; it runs only if valid.
/// Never reads or writes memory for a record that fails, never panics.
///
/// Before validation it reads only what the firmware's dispatch reads: the
/// disassembly and EC-59 lines of the trace (for 0xF0 spec 2, the element
/// count and ALU op), the lanes (EC-16), the opcode and spec byte of the
/// key (EC-15) and `pool_func`. No [`Op`] is made from it until
/// [`Validated::new`] has accepted it.
pub fn dispatch_unvalidated(
    offset: usize,
    record: &Record,
    mem: &mut DeviceMemory,
    trace: &mut dyn Trace,
    exec: &mut dyn Executor,
) -> Result<(), DispatchError> {
    run(offset, record, None, mem, trace, exec)
}

/// The trace line of a record: `<byte offset>: <disassembly>` (SPEC §7).
pub fn record_line(offset: usize, r: &Record) -> String {
    format!("{offset}: {}", crate::isa::text::disasm_record(r))
}

fn run(
    offset: usize,
    record: &Record,
    validated: Option<&Validated>,
    mem: &mut DeviceMemory,
    trace: &mut dyn Trace,
    exec: &mut dyn Executor,
) -> Result<(), DispatchError> {
    let on = trace.enabled();
    let mut tr = |s: String| {
        if on {
            trace.line(&s)
        }
    };
    tr(record_line(offset, record));
    let arch = mem.arch();
    let opcode = record.opcode();
    let spec = spec_of(record);
    // EC-16, EC-59: the lanes of a record are its channels; any other record
    // (unvalidated) is offered to all 128 lanes, so every core dispatches it.
    let channels = Inst::decode(record).lanes();
    let mut validated = validated.copied();
    let mut op = None;
    let mut elementwise: Option<Op> = None;
    let mut ran_any = false;
    for (core, lanes) in cores(channels) {
        ran_any = true;
        let c = core;
        tr(format!("P{c}: Entering Dispatch"));
        tr(format!(
            "P{c}: In dispatch, CPU ID: {c}, got opcode 0x{:x}.",
            opcode.0
        ));
        if bypasses_table(arch, opcode) {
            tr(format!("P{c}: kernel table bypassed (EC-14)"));
        } else {
            let table = kernel_table(arch);
            let Some((row, r)) = lookup(table, key(opcode.0, spec)) else {
                return Err(if opcode == Opcode::EXTENDED_INST {
                    DispatchError::UnknownExtendedOpcode { core, spec }
                } else {
                    DispatchError::UnknownOpcode {
                        core,
                        opcode: opcode.0,
                    }
                });
            };
            let n = lanes.len();
            let runs: Option<Vec<String>> = match r.handler {
                DecodePool => None,
                // EC-59: the kernel's lines in place of Pool's three.
                Kernel(_) => Op::trace_lines(opcode.0)
                    .map(|lines| lines.iter().map(|l| l.text(n, channels)).collect()),
                Extended => extended_lines(record, spec, n),
            };
            if let Some(lines) = runs {
                for l in lines {
                    tr(format!("P{c}: {l}"));
                }
                if elementwise.is_none() && !(opcode == Opcode::EXTENDED_INST && spec == 0) {
                    let v = match validated {
                        Some(v) => v,
                        None => {
                            let v = Validated::new(offset, *record, Target::pool(arch))?;
                            validated = Some(v);
                            v
                        }
                    };
                    elementwise =
                        Some(Op::from_validated(&v).ok_or_else(|| {
                            BackendError::contract("cpu", ContractFault::NoDeviceOp)
                        })?);
                } else if validated.is_none() {
                    // EC-55: ENGINE_NOP changes nothing, but is still validated.
                    validated = Some(Validated::new(offset, *record, Target::pool(arch))?);
                }
                tr(format!("P{c}: Exiting Dispatch"));
                continue;
            }
            let kernel = match r.handler {
                Extended => Some(extended_kernel(spec).unwrap_or("ExtendedInst")),
                Kernel(name) => Some(name),
                DecodePool => None,
            };
            if let Some(kernel) = kernel {
                return Err(DispatchError::NotEmulated {
                    core,
                    row,
                    opcode: opcode.0,
                    spec,
                    kernel,
                });
            }
        }
        // The pool datapath: decode_pool, or the bypass of EC-14.
        tr(format!("P{c}: Pool : num_chans = {}", lanes.len()));
        let name = if opcode == Opcode::MAX_POOL_SELECT {
            "max_pool"
        } else {
            match PoolFunc(record.u8_at(off::POOL_FUNC)) {
                PoolFunc::MAX_POOL => "max_pool",
                PoolFunc::AVG_POOL => "avg_pool",
                pool_func => {
                    return Err(DispatchError::InvalidPoolingFunction { core, pool_func });
                }
            }
        };
        let v = match validated {
            Some(v) => v,
            None => {
                let v = Validated::new(offset, *record, Target::pool(arch))?;
                validated = Some(v);
                v
            }
        };
        let p: PoolOp = match op {
            Some(p) => p,
            None => {
                let p = PoolOp::from_validated(&v)
                    .ok_or_else(|| BackendError::contract("cpu", ContractFault::NotPool))?;
                op = Some(p);
                p
            }
        };
        debug_assert_eq!(
            name == "max_pool",
            matches!(p.func(), Func::Max | Func::Select)
        );
        tr(format!(
            "P{c}: Running {name} with period = {} and num = {}.",
            p.period(),
            p.num()
        ));
        tr(format!("P{c}: Done running {name}."));
        tr(format!("P{c}: Exiting Dispatch"));
    }
    if !ran_any && validated.is_none() {
        // No core has lanes: only an unvalidated record with 0 channels gets
        // here, and validation names the failure instead of a silent skip.
        Validated::new(offset, *record, Target::pool(arch))?;
    }
    // Every core runs the same kernel on its own lanes, and lanes are
    // independent (EC-16: the result never depends on the core count), so the
    // backend runs all cores' lanes, [0, channels), in one pass.
    if let Some(p) = op {
        exec.execute(&Op::Pool(p), mem)?;
    }
    if let Some(e) = elementwise {
        exec.execute(&e, mem)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_keys_are_the_packed_key() {
        assert_eq!(KERNEL_TABLE[3].key(), 0x4500_0000);
        for row in KERNEL_TABLE {
            assert_eq!(row.key(), key(row.opcode, row.spec));
        }
        assert_eq!(kernel_table(Arch::Sunda).len(), 16);
        assert!(lookup(kernel_table(Arch::Sunda), key(0x45, 0)).is_none());
        assert_eq!(lookup(&KERNEL_TABLE, key(0xF0, 3)).map(|r| r.0), Some(10));
    }

    #[test]
    fn every_row_an_op_runs_is_a_kernel_row_of_the_table() {
        // An op's `KernelOp::ROWS` run only through a `Kernel` row of the
        // seed table (seed 002): one with no such row would never run.
        for opcode in 0..=255u8 {
            if Op::trace_lines(opcode).is_some() {
                assert!(
                    KERNEL_TABLE
                        .iter()
                        .any(|r| r.opcode == opcode && matches!(r.handler, Kernel(_))),
                    "{opcode:#x}"
                );
            }
        }
        // The two rows no op runs stay errors naming their kernel.
        assert!(Op::trace_lines(0x52).is_none() && Op::trace_lines(0x7B).is_none());
    }

    #[test]
    fn cores_share_lanes_by_sixteen() {
        let v: Vec<_> = cores(40).collect();
        assert_eq!(v, [(0, 0..16), (1, 16..32), (2, 32..40)]);
        assert_eq!(cores(128).count(), 8);
        assert_eq!(cores(0).count(), 0);
        assert_eq!(cores(255).last(), Some((7, 112..128)));
    }
}
