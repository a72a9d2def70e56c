//! The staged program: what [`super::stage`] writes and the rest of the
//! runtime reads — the scheduler ([`super::Machine`]), the held-DRAM plan
//! and the timeline. Data only: each record decoded once into a [`Step`]
//! (its wait, its update, its [`Op`]), the engines' blocks and exit points,
//! the DRAM layout and its bytes at start.

use super::dma::DmaPlan;
use super::image::DramImage;
use super::lower::Block;
use super::program::Dram;
use crate::device::Validated;
use crate::isa::enums::{Engine, UpdateMode, WaitMode};
use crate::isa::record::{Events, Record};
use crate::limits::Arch;
use std::fmt;

/// A semaphore comparison of a wait (signed, SPEC §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SemCmp {
    /// `==`.
    Eq,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

impl SemCmp {
    pub(super) fn holds(self, a: i32, b: i32) -> bool {
        match self {
            SemCmp::Eq => a == b,
            SemCmp::Lt => a < b,
            SemCmp::Le => a <= b,
            SemCmp::Gt => a > b,
            SemCmp::Ge => a >= b,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            SemCmp::Eq => "==",
            SemCmp::Lt => "<",
            SemCmp::Le => "<=",
            SemCmp::Gt => ">",
            SemCmp::Ge => ">=",
        }
    }
}

/// A record's wait condition, decoded (SPEC §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// NONE.
    None,
    /// `sem[idx] cmp value`, signed.
    Sem {
        /// The semaphore.
        idx: u8,
        /// The comparison.
        cmp: SemCmp,
        /// The threshold.
        value: i32,
    },
    /// Until `event[idx]` is `set` (or clear); with `flip`, then toggle it
    /// (EVT_SET_THEN_CLEAR, EVT_CLEAR_THEN_SET).
    Event {
        /// The event.
        idx: u8,
        /// Wait until set (true) or clear (false).
        set: bool,
        /// Change the event once the wait is satisfied.
        flip: bool,
    },
}

impl Wait {
    /// Decodes a validated events band (EC-2: no register forms reach here).
    pub fn from_events(ev: &Events) -> Wait {
        let sem = |cmp| Wait::Sem {
            idx: ev.wait_idx,
            cmp,
            value: ev.semaphore_value as i32,
        };
        let event = |set, flip| Wait::Event {
            idx: ev.wait_idx,
            set,
            flip,
        };
        match ev.wait_mode {
            WaitMode::SEM_EQ => sem(SemCmp::Eq),
            WaitMode::SEM_LT => sem(SemCmp::Lt),
            WaitMode::SEM_LE => sem(SemCmp::Le),
            WaitMode::SEM_GT => sem(SemCmp::Gt),
            WaitMode::SEM_GE => sem(SemCmp::Ge),
            WaitMode::EVT_SET => event(true, false),
            WaitMode::EVT_SET_THEN_CLEAR => event(true, true),
            WaitMode::EVT_CLEAR => event(false, false),
            WaitMode::EVT_CLEAR_THEN_SET => event(false, true),
            _ => Wait::None,
        }
    }
}

impl fmt::Display for Wait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Wait::None => f.write_str("nothing"),
            Wait::Sem { idx, cmp, value } => write!(f, "sem[{idx}] {} {value}", cmp.symbol()),
            Wait::Event { idx, set, flip } => write!(
                f,
                "event[{idx}] {}{}",
                if set { "set" } else { "clear" },
                match (flip, set) {
                    (false, _) => "",
                    (true, true) => " (then clear it)",
                    (true, false) => " (then set it)",
                }
            ),
        }
    }
}

/// A record's update, decoded (SPEC §1; EC-3: 0x0N and 0x1N alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// NONE.
    None,
    /// EVT_SET (true) or EVT_CLR (false).
    Event {
        /// The event.
        idx: u8,
        /// Set or clear.
        set: bool,
    },
    /// SEM_INC, SEM_DEC, SEM_ADD_IMM, SEM_SUB_IMM: `sem[idx] += delta`, wrapping.
    SemAdd {
        /// The semaphore.
        idx: u8,
        /// The (wrapped) addend.
        delta: i32,
    },
    /// SEM_WR_IMM: `sem[idx] = value`.
    SemWrite {
        /// The semaphore.
        idx: u8,
        /// The value.
        value: i32,
    },
}

impl Update {
    /// Decodes a validated events band (EC-2: no register forms reach here).
    pub fn from_events(ev: &Events) -> Update {
        let idx = ev.update_idx;
        let value = ev.semaphore_value as i32;
        match ev.update_mode.base() {
            UpdateMode::EVT_SET => Update::Event { idx, set: true },
            UpdateMode::EVT_CLR => Update::Event { idx, set: false },
            UpdateMode::SEM_INC => Update::SemAdd { idx, delta: 1 },
            UpdateMode::SEM_DEC => Update::SemAdd { idx, delta: -1 },
            UpdateMode::SEM_ADD_IMM => Update::SemAdd { idx, delta: value },
            UpdateMode::SEM_SUB_IMM => Update::SemAdd {
                idx,
                delta: value.wrapping_neg(),
            },
            UpdateMode::SEM_WR_IMM => Update::SemWrite { idx, value },
            _ => Update::None,
        }
    }
}

/// What a record does, decoded once at staging.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    /// EVENT_SEMAPHORE, DRAIN: only the events band (EC-24).
    Events,
    /// A kernel-table record or MaxPoolSelect (every kernel docs/kernels.md
    /// marks executed; validation has refused the others by name) through the
    /// POOL engine's dispatch.
    Pool(Validated),
    /// EC-26.
    Mov32 { reg: u8, value: u32 },
    /// EC-27: `reg[dst] = reg[src] + imm` (SUB stored as the negated immediate).
    CtrlAl { dst: u8, src: u8, imm: i32 },
    /// EC-28.
    Branch { cond: Cond, to: To },
    /// EC-23.
    Dma(Box<DmaPlan>),
}

/// A COMPARE_BRANCH condition (EC-28).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cond {
    Always,
    Eq { reg: u8, imm: u32 },
    Gt { reg: u8, imm: i32 },
}

/// A COMPARE_BRANCH target (EC-28).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum To {
    /// An absolute byte offset, from REL_IMM (may be anything; checked when taken).
    Offset(i64),
    /// `reg[lo] | reg[hi] << 32`.
    Registers { lo: u8, hi: u8 },
}

/// One staged record.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    pub offset: usize,
    pub record: Record,
    pub wait: Wait,
    pub update: Update,
    pub op: Op,
    /// EC-29: an exit point: reaching this record by falling through ends the engine.
    pub exit: bool,
}

/// A program that passed staging: what [`super::Machine`] runs.
#[derive(Clone, Debug)]
pub struct Staged {
    pub(crate) arch: Arch,
    pub(crate) steps: [Vec<Step>; 5],
    /// EC-30: each engine's blocks, staged in one instruction address space.
    pub(crate) blocks: [Vec<Block>; 5],
    /// EC-29: each engine's exit points (lowered byte offsets).
    pub(crate) exits: [Vec<usize>; 5],
    pub(crate) dram: Dram,
    /// The DRAM image at start: inputs filled, everything else zero.
    pub(crate) dram_init: DramImage,
}

impl Staged {
    /// The generation.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// Records in `engine`'s stream.
    pub fn records(&self, engine: Engine) -> usize {
        self.steps[engine as usize].len()
    }

    /// EC-30: `engine`'s blocks after lowering, with their staging addresses
    /// (engines in order PE..SP, back to back in one instruction address space).
    pub fn blocks(&self, engine: Engine) -> &[Block] {
        &self.blocks[engine as usize]
    }

    /// EC-29: `engine`'s exit points, lowered byte offsets.
    pub fn exits(&self, engine: Engine) -> &[usize] {
        &self.exits[engine as usize]
    }

    /// Bytes of DRAM the variables occupy (padding included).
    pub fn dram_bytes(&self) -> u64 {
        self.dram.size
    }

    /// `(name, base address, bytes)` of every variable, in layout order.
    pub fn layout(&self) -> impl Iterator<Item = (&str, u64, u64)> {
        self.dram
            .slots
            .iter()
            .map(|s| (s.name.as_str(), s.base, s.len))
    }
}
