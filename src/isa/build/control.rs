//! Builders for the control and DMA records of SPEC §8.1 (EC-22..EC-28),
//! over their typed structs ([`Mov32`], [`CtrlAl`], [`CompareBranch`],
//! [`EventsOnly`], [`DmaMemcpy`]).
//!
//! Each builder fills its struct with a valid header (`inst_word_len` 16),
//! zero events and zero reserved bytes, and encodes it, so every byte the
//! layout does not define stays zero; [`crate::isa::control`] decodes them
//! back. Events are set with [`with_events`] or the `ev_*` helpers. The
//! runtime re-exports this module as `runtime::build`.
//!
//! ```
//! use tpb_emu::isa::{Engine, WaitMode, UpdateMode};
//! use tpb_emu::isa::control::{alu, cmp};
//! use tpb_emu::isa::build::control::*;
//! use tpb_emu::runtime::{Program, run_cpu};
//!
//! // reg[0] = 3; loop: sem[0] += 1 (through the events band); reg[0] -= 1; if reg[0] > 0 goto loop.
//! let mut p = Program::default();
//! p.set_stream(Engine::Act, &[
//!     mov32(0, 3),
//!     with_events(drain(), ev_update(UpdateMode::SEM_INC, 0, 0)),
//!     ctrl_al(alu::SUB, 0, 0, 1),
//!     compare_branch(cmp::GTIMM, 0, 0, BranchTarget::Rel(-128)),
//! ]);
//! let m = run_cpu(&p).unwrap();
//! assert_eq!(m.semaphore(0), 3);
//! ```

use crate::isa::control::{
    Addr8, CompareBranch, CtrlAl, DmaMemcpy, DmaWalk, EventsOnly, Mov32, cmp, target,
};
use crate::isa::enums::{Dtype, UpdateMode, WaitMode};
use crate::isa::layout;
use crate::isa::opcode::Opcode;
use crate::isa::record::{Events, Record};

/// A zeroed record with `op` and a valid `inst_word_len`.
pub fn header(op: Opcode) -> Record {
    events_only(op, Events::default())
}

/// `r` with its events band replaced by `ev`.
pub fn with_events(mut r: Record, ev: Events) -> Record {
    r.set_events(ev);
    r
}

/// A wait only: `mode` on semaphore/event `idx` with threshold `value`.
pub fn ev_wait(mode: WaitMode, idx: u8, value: u32) -> Events {
    Events {
        wait_mode: mode,
        wait_idx: idx,
        semaphore_value: value,
        ..Events::default()
    }
}

/// An update only: `mode` on semaphore/event `idx` with operand `value`.
pub fn ev_update(mode: UpdateMode, idx: u8, value: u32) -> Events {
    Events {
        update_mode: mode,
        update_idx: idx,
        semaphore_value: value,
        ..Events::default()
    }
}

/// A wait and an update sharing `value` (the band has one value field).
pub fn ev(wait: (WaitMode, u8), update: (UpdateMode, u8), value: u32) -> Events {
    Events {
        wait_mode: wait.0,
        wait_idx: wait.1,
        update_mode: update.0,
        update_idx: update.1,
        semaphore_value: value,
    }
}

/// A record of `op` with `ev` and zero bytes 12..64.
fn events_only(op: Opcode, ev: Events) -> Record {
    EventsOnly {
        header: layout::header(op),
        events: ev,
        rest: [0; 52],
    }
    .encode()
}

/// EVENT_SEMAPHORE 0xA0 (EC-24): runs only its events band.
pub fn event_semaphore(ev: Events) -> Record {
    events_only(Opcode::EVENT_SEMAPHORE, ev)
}

/// DRAIN 0xA2 (EC-24): a no-op apart from its events.
pub fn drain() -> Record {
    events_only(Opcode::DRAIN, Events::default())
}

/// MOV32 0xA7 (EC-26): `reg[reg] = value`.
pub fn mov32(reg: u8, value: u32) -> Record {
    Mov32 {
        header: layout::header(Opcode::MOV32),
        events: Events::default(),
        reg,
        reserved0: [0; 3],
        value,
        reserved1: [0; 44],
    }
    .encode()
}

/// CTRL_AL 0xA8 (EC-27): `reg[dst] = reg[src] op imm` (op [`crate::isa::control::alu`]), INT32.
pub fn ctrl_al(op: u8, dst: u8, src: u8, imm: i64) -> Record {
    CtrlAl {
        header: layout::header(Opcode::CTRL_AL),
        events: Events::default(),
        op,
        dtype: Dtype::INT32,
        reserved0: [0; 2],
        src,
        reserved1: [0; 3],
        dst,
        reserved2: [0; 3],
        imm,
        reserved3: [0; 32],
    }
    .encode()
}

/// Where a COMPARE_BRANCH goes (EC-28).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BranchTarget {
    /// REL_IMM: this record's byte offset + the i64.
    Rel(i64),
    /// REGISTER: the absolute byte offset `reg[lo] | reg[hi] << 32`.
    Register {
        /// Register of the low 32 bits.
        lo: u8,
        /// Register of the high 32 bits.
        hi: u8,
    },
}

/// COMPARE_BRANCH 0xA9 (EC-28): compare op `cmp` ([`crate::isa::control::cmp`])
/// of `reg[reg]` with `imm`, to `target`. The dtype is INT32, or 0 with ALWAYS.
pub fn compare_branch(cmp_op: u8, reg: u8, imm: u32, to: BranchTarget) -> Record {
    let (target_mode, target_lo, target_hi, rel) = match to {
        BranchTarget::Rel(rel) => (target::REL_IMM, 0, 0, rel),
        BranchTarget::Register { lo, hi } => (target::REGISTER, lo, hi, 0),
    };
    CompareBranch {
        header: layout::header(Opcode::COMPARE_BRANCH),
        events: Events::default(),
        cmp: cmp_op,
        dtype: if cmp_op == cmp::ALWAYS {
            Dtype(0)
        } else {
            Dtype::INT32
        },
        target_mode,
        reserved0: 0,
        imm,
        reserved1: [0; 12],
        reg,
        reserved2: 0,
        target_lo,
        target_hi,
        reserved3: [0; 12],
        rel,
        reserved4: [0; 8],
    }
    .encode()
}

/// An unconditional branch (ALWAYS) to `target`.
pub fn jump(target: BranchTarget) -> Record {
    compare_branch(cmp::ALWAYS, 0, 0, target)
}

/// One side of a DMA: start, steps (elements), nums, element size in bytes.
pub fn walk(addr: Addr8, step: [i32; 2], num: [u16; 2], elem_size: u16) -> DmaWalk {
    DmaWalk {
        addr,
        step,
        num,
        elem_size,
    }
}

/// A contiguous walk of `n` elements of `elem_size` bytes from `addr`.
pub fn contiguous(addr: Addr8, n: u16, elem_size: u16) -> DmaWalk {
    walk(addr, [1, 0], [n, 1], elem_size)
}

/// A VAR_ID ADDR8: byte `offset` of variable `id` (EC-22).
pub fn var(id: u32, offset: u32) -> Addr8 {
    Addr8::Var { id, offset }
}

/// An on-chip ADDR8 (SPEC §3 map).
pub fn on_chip(addr: u32) -> Addr8 {
    Addr8::OnChip(addr)
}

/// DMA_MEMCPY 0xB8 (EC-23): copies `src` to `dst` converting `in_dtype` to
/// `out_dtype`, then `sem[sem] += sem_inc`.
pub fn dma_memcpy(
    src: DmaWalk,
    dst: DmaWalk,
    in_dtype: Dtype,
    out_dtype: Dtype,
    sem: u8,
    sem_inc: u8,
) -> Record {
    DmaMemcpy {
        header: layout::header(Opcode::DMA_MEMCPY),
        events: Events::default(),
        reserved0: 0,
        reserved1: [0; 2],
        sem,
        sem_inc,
        compute_op: 0,
        src,
        dst,
        in_dtype,
        out_dtype,
    }
    .encode()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::control::off;
    use crate::isa::enums::Engine;
    use crate::isa::validate::{Target, check};
    use crate::limits::INST_WORD_LEN;

    #[test]
    fn builders_decode_back_and_validate() {
        let t = Target {
            engine: Engine::Sp,
            ..Target::default()
        };
        let src = walk(var(7, 12), [2, -3], [4, 5], 4);
        let dst = walk(on_chip(0x40000), [1, 65536], [20, 1], 2);
        let r = dma_memcpy(src, dst, Dtype::FP32, Dtype::BFLOAT16, 9, 3);
        let d = DmaMemcpy::decode(&r);
        assert_eq!((d.src, d.dst, d.sem, d.sem_inc), (src, dst, 9, 3));
        assert_eq!((d.in_dtype, d.out_dtype), (Dtype::FP32, Dtype::BFLOAT16));
        for r in [
            r,
            mov32(63, u32::MAX),
            ctrl_al(crate::isa::control::alu::SUB, 1, 2, -5),
            compare_branch(cmp::GTIMM, 4, 0, BranchTarget::Rel(-64)),
            jump(BranchTarget::Register { lo: 1, hi: 2 }),
            drain(),
            event_semaphore(ev_wait(WaitMode::SEM_GE, 1, 2)),
        ] {
            assert_eq!(check(&r, t), Ok(()), "{r:?}");
        }
        let m = mov32(5, 0xDEAD_BEEF);
        assert_eq!(
            (m.u8_at(off::MOV32_REG), m.u32_at(off::MOV32_VALUE)),
            (5, 0xDEAD_BEEF)
        );
        let b = compare_branch(cmp::EQIMM, 3, 7, BranchTarget::Rel(-128));
        assert_eq!(b.i64_at(off::BR_REL), -128);
        assert_eq!(b.u32_at(off::BR_CMP_IMM), 7);
    }

    /// The typed builders write exactly the bytes of the offset-by-offset
    /// builders they replaced.
    #[test]
    fn builders_write_the_documented_offsets_and_nothing_else() {
        let mut h = Record::default();
        h.0[0] = Opcode::MOV32.0;
        h.0[1] = INST_WORD_LEN;
        assert_eq!(header(Opcode::MOV32), h);
        let mut m = h;
        m.0[off::MOV32_REG] = 5;
        m.0[off::MOV32_VALUE..off::MOV32_VALUE + 4].copy_from_slice(&0xDEAD_BEEFu32.to_le_bytes());
        assert_eq!(mov32(5, 0xDEAD_BEEF), m);
        let mut c = h;
        c.0[0] = Opcode::CTRL_AL.0;
        c.0[off::CTRL_AL_OP] = 5;
        c.0[off::CTRL_AL_DTYPE] = Dtype::INT32.0;
        c.0[off::CTRL_AL_SRC] = 2;
        c.0[off::CTRL_AL_DST] = 1;
        c.0[off::CTRL_AL_IMM..off::CTRL_AL_IMM + 8].copy_from_slice(&(-5i64).to_le_bytes());
        assert_eq!(ctrl_al(5, 1, 2, -5), c);
        let mut b = h;
        b.0[0] = Opcode::COMPARE_BRANCH.0;
        b.0[off::BR_TARGET_MODE] = target::REGISTER;
        b.0[off::BR_TARGET_LO] = 1;
        b.0[off::BR_TARGET_HI] = 2;
        assert_eq!(jump(BranchTarget::Register { lo: 1, hi: 2 }), b);
        let mut d = h;
        d.0[0] = Opcode::DRAIN.0;
        assert_eq!(drain(), d);
    }
}
