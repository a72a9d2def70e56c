//! Builders for the control and DMA records of SPEC §8.1 (EC-22..EC-28).
//!
//! Each builder writes the fields at the offsets of [`crate::isa::control::off`]
//! into a zeroed record with a valid header (`inst_word_len` 16), so every
//! byte the layout does not define stays zero; [`crate::isa::control`]
//! decodes them back. Events are set with [`with_events`] or the `ev_*`
//! helpers.
//!
//! ```
//! use tpb_emu::isa::{Engine, WaitMode, UpdateMode};
//! use tpb_emu::isa::control::{alu, cmp};
//! use tpb_emu::runtime::build::*;
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

use crate::isa::control::{Addr8, DmaWalk, cmp, off};
use crate::isa::enums::{Dtype, UpdateMode, WaitMode};
use crate::isa::opcode::Opcode;
use crate::isa::record::{Events, Record};
use crate::limits::INST_WORD_LEN;

/// A zeroed record with `op` and a valid `inst_word_len`.
pub fn header(op: Opcode) -> Record {
    let mut r = Record::default();
    r.0[0] = op.0;
    r.0[1] = INST_WORD_LEN;
    r
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

fn put(r: &mut Record, at: usize, bytes: &[u8]) {
    r.0[at..at + bytes.len()].copy_from_slice(bytes);
}

/// EVENT_SEMAPHORE 0xA0 (EC-24): runs only its events band.
pub fn event_semaphore(ev: Events) -> Record {
    with_events(header(Opcode::EVENT_SEMAPHORE), ev)
}

/// DRAIN 0xA2 (EC-24): a no-op apart from its events.
pub fn drain() -> Record {
    header(Opcode::DRAIN)
}

/// MOV32 0xA7 (EC-26): `reg[reg] = value`.
pub fn mov32(reg: u8, value: u32) -> Record {
    let mut r = header(Opcode::MOV32);
    r.0[off::MOV32_REG] = reg;
    put(&mut r, off::MOV32_VALUE, &value.to_le_bytes());
    r
}

/// CTRL_AL 0xA8 (EC-27): `reg[dst] = reg[src] op imm` (op [`crate::isa::control::alu`]), INT32.
pub fn ctrl_al(op: u8, dst: u8, src: u8, imm: i64) -> Record {
    let mut r = header(Opcode::CTRL_AL);
    r.0[off::CTRL_AL_OP] = op;
    r.0[off::CTRL_AL_DTYPE] = Dtype::INT32.0;
    r.0[off::CTRL_AL_SRC] = src;
    r.0[off::CTRL_AL_DST] = dst;
    put(&mut r, off::CTRL_AL_IMM, &imm.to_le_bytes());
    r
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
pub fn compare_branch(cmp_op: u8, reg: u8, imm: u32, target: BranchTarget) -> Record {
    use crate::isa::control::target;
    let mut r = header(Opcode::COMPARE_BRANCH);
    r.0[off::BR_CMP] = cmp_op;
    r.0[off::BR_DTYPE] = if cmp_op == cmp::ALWAYS {
        0
    } else {
        Dtype::INT32.0
    };
    put(&mut r, off::BR_CMP_IMM, &imm.to_le_bytes());
    r.0[off::BR_CMP_REG] = reg;
    match target {
        BranchTarget::Rel(rel) => {
            r.0[off::BR_TARGET_MODE] = target::REL_IMM;
            put(&mut r, off::BR_REL, &rel.to_le_bytes());
        }
        BranchTarget::Register { lo, hi } => {
            r.0[off::BR_TARGET_MODE] = target::REGISTER;
            r.0[off::BR_TARGET_LO] = lo;
            r.0[off::BR_TARGET_HI] = hi;
        }
    }
    r
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

fn put_walk(r: &mut Record, at: usize, w: &DmaWalk) {
    put(r, at, &w.addr.raw().to_le_bytes());
    put(r, at + 8, &w.step[0].to_le_bytes());
    put(r, at + 12, &w.step[1].to_le_bytes());
    put(r, at + 16, &w.num[0].to_le_bytes());
    put(r, at + 18, &w.num[1].to_le_bytes());
    put(r, at + 20, &w.elem_size.to_le_bytes());
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
    let mut r = header(Opcode::DMA_MEMCPY);
    r.0[off::DMA_SEM] = sem;
    r.0[off::DMA_SEM_INC] = sem_inc;
    put_walk(&mut r, off::DMA_SRC, &src);
    put_walk(&mut r, off::DMA_DST, &dst);
    r.0[off::DMA_IN_DTYPE] = in_dtype.0;
    r.0[off::DMA_OUT_DTYPE] = out_dtype.0;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::control::DmaMemcpy;
    use crate::isa::enums::Engine;
    use crate::isa::validate::{Target, check};

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
}
