//! Staging: everything that can reject a program before a record runs.
//!
//! For each engine in order (PE, ACT, POOL, DVE, SP) and each record in
//! stream order: validate it for its engine and generation (SPEC §5 order,
//! [`crate::device::Validated::new`]); for a DMA_MEMCPY, resolve its ADDR8s
//! (EC-22: a VAR_ID naming no variable is rejected) and check its footprint
//! (EC-23, `emu_footprint_in_bounds`). The first failure stops staging. The
//! variables are laid out in DRAM (EC-18) and each record is decoded once
//! into the [`Op`] the scheduler runs. What it writes, the [`Staged`]
//! program, is data only (`staged.rs`), read by the scheduler, the held-DRAM
//! plan and the timeline.

use super::dma::{self, FootprintFault};
use super::image::DramImage;
use super::lower::{Block, LowerError, Rejected, lower};
use super::program::{Dram, Program, Slot, VariableError};
use super::staged::{Cond, Op, Staged, Step, To, Update, Wait};
use crate::device::Validated;
use crate::files::HostBytes;
use crate::isa::control::{Control, alu, cmp, target};
use crate::isa::enums::Engine;
use crate::isa::inst::Inst;
use crate::isa::opcode::Opcode;
use crate::isa::stream::{StreamError, records};
use crate::isa::validate::{InvalidRecord, Target};
use crate::limits::{Arch, RECORD_BYTES};
use std::borrow::Cow;
use std::fmt;

/// Why a program was rejected before anything ran.
#[derive(Debug)]
pub enum StageError {
    /// A variable cannot be laid out (bad input).
    Variable(VariableError),
    /// A stream is not whole records (bad input).
    Malformed {
        /// The engine.
        engine: Engine,
        /// Why.
        source: StreamError,
    },
    /// A record failed a SPEC §5 predicate.
    Invalid {
        /// The engine whose stream holds it.
        engine: Engine,
        /// Where and which predicate.
        record: InvalidRecord,
    },
    /// A DMA_MEMCPY's footprint or VAR_ID (EC-22, EC-23).
    Footprint {
        /// The engine whose stream holds it.
        engine: Engine,
        /// The record's byte offset.
        offset: usize,
        /// Why.
        fault: FootprintFault,
    },
    /// Lowering rejected a pseudo-record (EC-29: `emu_opcode_supported`).
    Lower {
        /// The engine whose stream holds it.
        engine: Engine,
        /// Where (input offset) and why.
        rejected: Rejected,
    },
    /// Host memory ran out for the DRAM image (bad input: the variables ask
    /// for more than this process can hold).
    OutOfMemory {
        /// The bytes asked for at once.
        bytes: u64,
        /// Device DRAM in all.
        dram: u64,
    },
    /// [`StageError::Invalid`] or [`StageError::Footprint`] of a stream that
    /// lowering changed: the inner error gives the lowered offset, `original`
    /// the input offset of the record it was lowered from.
    InLowered {
        /// Input byte offset.
        original: usize,
        /// The error, at the lowered offset.
        source: Box<StageError>,
    },
}

impl StageError {
    /// True for bad input (a variable or a stream's length), false for an invalid record.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            StageError::Variable(_) | StageError::Malformed { .. } | StageError::OutOfMemory { .. }
        )
    }

    /// The failing predicate, for an invalid record.
    pub fn predicate(&self) -> Option<&'static str> {
        match self {
            StageError::Invalid { record, .. } => Some(record.fail.predicate()),
            StageError::Footprint { fault, .. } => Some(fault.predicate()),
            StageError::Lower { rejected, .. } => Some(rejected.predicate()),
            StageError::InLowered { source, .. } => source.predicate(),
            _ => None,
        }
    }
}

impl fmt::Display for StageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StageError::Variable(e) => e.fmt(f),
            StageError::Malformed { engine, source } => write!(f, "{engine} stream: {source}"),
            StageError::OutOfMemory { bytes, dram } => write!(
                f,
                "out of host memory for the program's device DRAM ({bytes} bytes at once, {dram} \
                 in all)"
            ),
            StageError::Invalid { engine, record } => write!(
                f,
                "{engine} stream, {} at byte offset {}: {record}",
                Opcode(record.opcode),
                record.offset
            ),
            StageError::Footprint {
                engine,
                offset,
                fault,
            } => write!(
                f,
                "{engine} stream, DMA_MEMCPY at byte offset {offset}: Found invalid instruction! \
                 opcode={}, offset={offset}: {} ({fault})",
                Opcode::DMA_MEMCPY.0,
                fault.predicate()
            ),
            StageError::Lower { engine, rejected } => write!(
                f,
                "{engine} stream, {} at byte offset {}: {rejected}",
                Opcode(rejected.opcode),
                rejected.offset
            ),
            StageError::InLowered { original, source } => {
                write!(f, "{source} [lowered stream; input byte offset {original}]")
            }
        }
    }
}

impl std::error::Error for StageError {}

/// Stages `program`: lays out DRAM, validates every record, plans every DMA.
/// Initial bytes are copied into the image once; shared ones (a mapped
/// `.npy`) are shared by it, not copied.
pub fn stage(program: &Program) -> Result<Staged, StageError> {
    stage_with(program, |bases, size| {
        let inits = program.variables.iter().zip(bases);
        DramImage::build(
            size,
            inits.filter_map(|(v, &base)| Some((base, Cow::Borrowed(v.init.as_ref()?)))),
        )
    })
}

/// [`stage`] taking the program by value: the variables' initial bytes move
/// into the DRAM image instead of being copied. When the first variable has
/// owned initial bytes (it sits at DRAM address 0), its buffer becomes the
/// image itself, grown in place, so a large input costs no copy at all.
pub fn stage_owned(mut program: Program) -> Result<Staged, StageError> {
    // Checks the initial bytes' lengths before they leave the variables.
    program.layout().map_err(StageError::Variable)?;
    let inits: Vec<Option<HostBytes>> = program
        .variables
        .iter_mut()
        .map(|v| v.init.take())
        .collect();
    stage_with(&program, move |bases, size| {
        let inits = inits.into_iter().zip(bases);
        DramImage::build(
            size,
            inits.filter_map(|(init, &base)| Some((base, Cow::Owned(init?)))),
        )
    })
}

/// [`stage`] with the DRAM image made by `image(bases, size)`.
fn stage_with(
    program: &Program,
    image: impl FnOnce(&[u64], u64) -> Result<DramImage, u64>,
) -> Result<Staged, StageError> {
    let (bases, size) = program.layout().map_err(StageError::Variable)?;
    let slots: Vec<Slot> = program
        .variables
        .iter()
        .zip(&bases)
        .map(|(v, &base)| Slot {
            name: v.name.clone(),
            id: v.id,
            role: v.role,
            base,
            len: v.bytes().unwrap_or(0),
        })
        .collect();
    let dram = Dram::new(slots, size);
    let mut steps: [Vec<Step>; 5] = Default::default();
    let mut blocks: [Vec<Block>; 5] = Default::default();
    let mut exits: [Vec<usize>; 5] = Default::default();
    // EC-30: one instruction address space; engines' blocks back to back.
    let mut next_addr = 0u64;
    for engine in Engine::ALL {
        let target = Target {
            engine,
            arch: program.arch,
        };
        // Seed 004 / SPEC §8: lower, then validate the lowered records.
        let mut lowered = lower(program.stream(engine)).map_err(|e| match e {
            LowerError::Malformed(source) => StageError::Malformed { engine, source },
            LowerError::Rejected(rejected) => StageError::Lower { engine, rejected },
        })?;
        next_addr = lowered.place(next_addr);
        let changed = lowered.pseudo_in() > 0;
        let at_input = |offset: usize, e: StageError| {
            if changed {
                StageError::InLowered {
                    original: lowered.original_offset(offset).unwrap_or(offset),
                    source: Box::new(e),
                }
            } else {
                e
            }
        };
        let bytes = lowered.bytes();
        let recs = records(bytes).map_err(|source| StageError::Malformed { engine, source })?;
        let list = &mut steps[engine as usize];
        list.reserve(bytes.len() / RECORD_BYTES);
        for (offset, r) in recs {
            let v = Validated::new(offset, r, target)
                .map_err(|record| at_input(offset, StageError::Invalid { engine, record }))?;
            let op = decode(&v, &dram, program.arch).map_err(|fault| {
                at_input(
                    offset,
                    StageError::Footprint {
                        engine,
                        offset,
                        fault,
                    },
                )
            })?;
            let ev = r.events();
            list.push(Step {
                offset,
                record: r,
                wait: Wait::from_events(&ev),
                update: Update::from_events(&ev),
                op,
                exit: false,
            });
        }
        // EC-29: the exit points lowering found, and those the program declares.
        let mut all = lowered.exits().to_vec();
        all.extend_from_slice(&program.exits[engine as usize]);
        all.sort_unstable();
        all.dedup();
        for &x in &all {
            if let Some(s) = list.get_mut(x / RECORD_BYTES) {
                s.exit = true;
            }
        }
        exits[engine as usize] = all;
        blocks[engine as usize] = lowered.blocks().to_vec();
    }
    let dram_init =
        image(&bases, size).map_err(|bytes| StageError::OutOfMemory { bytes, dram: size })?;
    Ok(Staged {
        arch: program.arch,
        steps,
        blocks,
        exits,
        dram,
        dram_init,
    })
}

/// Decodes a validated record into its [`Op`] (and plans a DMA): an
/// exhaustive match on the decoded record, so no record can be skipped.
fn decode(v: &Validated, dram: &Dram, arch: Arch) -> Result<Op, FootprintFault> {
    Ok(match v.inst() {
        // Every kernel-table record goes through the POOL dispatch, which
        // runs it or refuses it by name (never a silent skip).
        Inst::Kernel(_) => Op::Pool(*v),
        Inst::Control(Control::Mov32(m)) => Op::Mov32 {
            reg: m.reg,
            value: m.value,
        },
        Inst::Control(Control::CtrlAl(c)) => {
            // Validation: ADD or SUB, the immediate fits i32.
            let imm = c.imm as i32;
            Op::CtrlAl {
                dst: c.dst,
                src: c.src,
                imm: if c.op == alu::SUB {
                    imm.wrapping_neg()
                } else {
                    imm
                },
            }
        }
        Inst::Control(Control::CompareBranch(b)) => {
            let (reg, imm) = (b.reg, b.imm);
            let cond = match b.cmp {
                cmp::EQIMM => Cond::Eq { reg, imm },
                cmp::GTIMM => Cond::Gt {
                    reg,
                    imm: imm as i32,
                },
                _ => Cond::Always,
            };
            let to = if b.target_mode == target::REGISTER {
                To::Registers {
                    lo: b.target_lo,
                    hi: b.target_hi,
                }
            } else {
                To::Offset(v.offset() as i64 + b.rel)
            };
            Op::Branch { cond, to }
        }
        Inst::Control(Control::DmaMemcpy(d)) => Op::Dma(Box::new(dma::plan(&d, dram, arch)?)),
        Inst::Control(Control::EventSemaphore(_) | Control::Drain(_)) => Op::Events,
        Inst::Invalid(_) => unreachable!("validation rejects pseudo and unknown opcodes"),
    })
}
