//! Layouts of the control and DMA records (leads; SPEC §8.1, EC-22..EC-28).

use super::enums::Dtype;
use super::opcode::Opcode;
use super::record::Record;
use crate::limits::{DRAM_BASE, PSUM_END};

/// Byte offsets of the control-record fields.
pub mod off {
    /// MOV32 register id (u8).
    pub const MOV32_REG: usize = 12;
    /// MOV32 value (u32).
    pub const MOV32_VALUE: usize = 16;
    /// CTRL_AL ALU op (u8).
    pub const CTRL_AL_OP: usize = 12;
    /// CTRL_AL dtype (u8, INT32).
    pub const CTRL_AL_DTYPE: usize = 13;
    /// CTRL_AL source register (u8).
    pub const CTRL_AL_SRC: usize = 16;
    /// CTRL_AL destination register (u8).
    pub const CTRL_AL_DST: usize = 20;
    /// CTRL_AL immediate (i64, must fit i32).
    pub const CTRL_AL_IMM: usize = 24;
    /// COMPARE_BRANCH compare op (u8).
    pub const BR_CMP: usize = 12;
    /// COMPARE_BRANCH dtype (u8).
    pub const BR_DTYPE: usize = 13;
    /// COMPARE_BRANCH target mode (u8).
    pub const BR_TARGET_MODE: usize = 14;
    /// COMPARE_BRANCH compare immediate (u32).
    pub const BR_CMP_IMM: usize = 0x10;
    /// COMPARE_BRANCH compared register (u8).
    pub const BR_CMP_REG: usize = 0x20;
    /// COMPARE_BRANCH target register, low 32 bits (u8).
    pub const BR_TARGET_LO: usize = 0x22;
    /// COMPARE_BRANCH target register, high 32 bits (u8).
    pub const BR_TARGET_HI: usize = 0x23;
    /// COMPARE_BRANCH relative target (i64, must fit i32).
    pub const BR_REL: usize = 0x30;
    /// DMA completion semaphore (u8).
    pub const DMA_SEM: usize = 13;
    /// DMA semaphore increment (u8).
    pub const DMA_SEM_INC: usize = 14;
    /// DMA compute op / DGE op (u8).
    pub const DMA_OP: usize = 15;
    /// DMA src walk (ADDR8, steps, nums, elem size).
    pub const DMA_SRC: usize = 16;
    /// DMA dst walk.
    pub const DMA_DST: usize = 40;
    /// DMA in dtype.
    pub const DMA_IN_DTYPE: usize = 62;
    /// DMA out dtype.
    pub const DMA_OUT_DTYPE: usize = 63;
}

/// CTRL_AL ALU ops the emulator runs (EC-27).
pub mod alu {
    /// `reg[dst] = reg[src] + imm`.
    pub const ADD: u8 = 4;
    /// `reg[dst] = reg[src] - imm`.
    pub const SUB: u8 = 5;
}

/// COMPARE_BRANCH compare ops the emulator runs (EC-28).
pub mod cmp {
    /// Always taken.
    pub const ALWAYS: u8 = 0;
    /// reg == imm.
    pub const EQIMM: u8 = 3;
    /// reg > imm (signed).
    pub const GTIMM: u8 = 6;
}

/// COMPARE_BRANCH target modes (EC-28).
pub mod target {
    /// Absolute byte offset from two registers.
    pub const REGISTER: u8 = 1;
    /// This record's offset + i64 @0x30.
    pub const REL_IMM: u8 = 3;
}

/// The byte ranges (after the events band) that `op`'s layout defines.
#[allow(clippy::single_range_in_vec_init)] // byte ranges, not a vec of one range
const fn defined_ranges(op: Opcode) -> &'static [std::ops::Range<usize>] {
    match op {
        // EVENT_SEMAPHORE (EC-24: its 12..64 are a second wait, reported separately) and DRAIN.
        Opcode::EVENT_SEMAPHORE | Opcode::DRAIN => &[],
        Opcode::MOV32 => &[12..13, 16..20],
        Opcode::CTRL_AL => &[12..14, 16..17, 20..21, 24..32],
        Opcode::COMPARE_BRANCH => &[12..15, 16..20, 0x20..0x21, 0x22..0x24, 0x30..0x38],
        Opcode::DMA_MEMCPY => &[13..64],
        _ => &[12..64],
    }
}

/// Record bytes (after the events band) that `op`'s layout does not define.
pub fn undefined_bytes(op: Opcode) -> impl Iterator<Item = usize> {
    let defined = defined_ranges(op);
    (12..64).filter(move |b| !defined.iter().any(|r| r.contains(b)))
}

/// [`undefined_bytes`] as eight little-endian u64 masks (0xFF per undefined
/// byte), so the validator tests a record's reserved bytes with eight ANDs.
pub const fn undefined_mask(op: Opcode) -> [u64; 8] {
    let defined = defined_ranges(op);
    let mut m = [0u64; 8];
    let mut b = 12;
    while b < 64 {
        let mut inside = false;
        let mut i = 0;
        while i < defined.len() {
            if b >= defined[i].start && b < defined[i].end {
                inside = true;
            }
            i += 1;
        }
        if !inside {
            m[b / 8] |= 0xFF << (8 * (b % 8));
        }
        b += 1;
    }
    m
}

/// EC-22: a decoded ADDR8 (u64 LE; the top byte is a marker).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Addr8 {
    /// Marker 0, below the end of PSUM: the on-chip map of SPEC §3.
    OnChip(u32),
    /// Marker 0, from 4 GiB on: device DRAM byte `addr - 0x1_0000_0000`.
    Dram(u64),
    /// Marker 0x10: a program variable id (bits 32..56) and a byte offset in it.
    Var {
        /// Variable id.
        id: u32,
        /// Byte offset in the variable.
        offset: u32,
    },
    /// Marker 0 elsewhere: fails `is_valid_addr8`.
    OutsideMap(u64),
    /// Any other marker: fails `emu_addr_mode_supported`.
    OtherMarker(u64),
}

/// The VAR_ID marker of EC-22.
pub const ADDR8_VAR_MARKER: u8 = 0x10;

impl Addr8 {
    /// Decodes a raw ADDR8.
    pub fn decode(raw: u64) -> Addr8 {
        match (raw >> 56) as u8 {
            0 if raw < PSUM_END as u64 => Addr8::OnChip(raw as u32),
            0 if raw >= DRAM_BASE => Addr8::Dram(raw - DRAM_BASE),
            0 => Addr8::OutsideMap(raw),
            ADDR8_VAR_MARKER => Addr8::Var {
                id: ((raw >> 32) & 0xFF_FFFF) as u32,
                offset: raw as u32,
            },
            _ => Addr8::OtherMarker(raw),
        }
    }

    /// The raw u64.
    pub fn raw(self) -> u64 {
        match self {
            Addr8::OnChip(a) => a as u64,
            Addr8::Dram(a) => a + DRAM_BASE,
            Addr8::Var { id, offset } => {
                (ADDR8_VAR_MARKER as u64) << 56 | (id as u64) << 32 | offset as u64
            }
            Addr8::OutsideMap(r) | Addr8::OtherMarker(r) => r,
        }
    }
}

/// One side of a DMA_MEMCPY: a 2-D strided walk (EC-23).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DmaWalk {
    /// Start address.
    pub addr: Addr8,
    /// Steps in elements, i fastest.
    pub step: [i32; 2],
    /// Counts.
    pub num: [u16; 2],
    /// Element size in bytes.
    pub elem_size: u16,
}

impl DmaWalk {
    fn decode(r: &Record, at: usize) -> DmaWalk {
        DmaWalk {
            addr: Addr8::decode(r.u64_at(at)),
            step: [r.i32_at(at + 8), r.i32_at(at + 12)],
            num: [r.u16_at(at + 16), r.u16_at(at + 18)],
            elem_size: r.u16_at(at + 20),
        }
    }

    /// Elements moved.
    pub fn elements(&self) -> u64 {
        self.num[0] as u64 * self.num[1] as u64
    }
}

/// DMA_MEMCPY 0xB8 (lead; EC-23).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DmaMemcpy {
    /// Semaphore incremented on completion.
    pub sem: u8,
    /// The increment.
    pub sem_inc: u8,
    /// Must be 0 (reduce-on-copy is not emulated).
    pub compute_op: u8,
    /// Source walk.
    pub src: DmaWalk,
    /// Destination walk.
    pub dst: DmaWalk,
    /// Source dtype.
    pub in_dtype: Dtype,
    /// Destination dtype.
    pub out_dtype: Dtype,
}

impl DmaMemcpy {
    /// Decodes the DMA fields of any record.
    pub fn decode(r: &Record) -> DmaMemcpy {
        DmaMemcpy {
            sem: r.u8_at(off::DMA_SEM),
            sem_inc: r.u8_at(off::DMA_SEM_INC),
            compute_op: r.u8_at(off::DMA_OP),
            src: DmaWalk::decode(r, off::DMA_SRC),
            dst: DmaWalk::decode(r, off::DMA_DST),
            in_dtype: Dtype(r.u8_at(off::DMA_IN_DTYPE)),
            out_dtype: Dtype(r.u8_at(off::DMA_OUT_DTYPE)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undefined_mask_matches_undefined_bytes() {
        for op in [0xA0u8, 0xA2, 0xA7, 0xA8, 0xA9, 0xB8, 0x45] {
            let op = Opcode(op);
            let m = undefined_mask(op);
            for b in 0..64 {
                let in_mask = (m[b / 8] >> (8 * (b % 8))) & 0xFF == 0xFF;
                assert_eq!(
                    in_mask,
                    undefined_bytes(op).any(|u| u == b),
                    "{op} byte {b}"
                );
            }
        }
    }
}
