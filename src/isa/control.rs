//! Layouts of the control and DMA records (leads; SPEC §8.1, EC-22..EC-28).

use super::enums::Dtype;
use super::layout::operand_layout;
use super::opcode::Opcode;
use super::record::{Events, Header, Record};
use crate::limits::{DRAM_BASE, PSUM_END};

// The typed control records. Every byte has a field (the ones the lead
// layouts leave undefined are `reserved*`, which validation requires to be
// zero), so `decode(r).encode() == r`. The offsets are those of [`off`].

operand_layout! {
    /// MOV32 0xA7 (EC-26): `reg[reg] = value`.
    Mov32 = "MOV32", mod mov32_off {
        /// The register.
        reg: u8 = REG @ 12, Required("reg");
        /// Undefined.
        reserved0: [u8; 3] = RESERVED0 @ 13, Reserved;
        /// The value.
        value: u32 = VALUE @ 16, Required("value");
        /// Undefined.
        reserved1: [u8; 44] = RESERVED1 @ 20, Reserved;
    }
}

operand_layout! {
    /// CTRL_AL 0xA8 (EC-27): `reg[dst] = reg[src] ± imm`.
    CtrlAl = "CTRL_AL", mod ctrl_al_off {
        /// The ALU op ([`alu`]).
        op: u8 = OP @ 12, Required("op");
        /// INT32.
        dtype: Dtype = DTYPE @ 13, Required("dtype");
        /// Undefined.
        reserved0: [u8; 2] = RESERVED0 @ 14, Reserved;
        /// The source register.
        src: u8 = SRC @ 16, Required("src");
        /// Undefined.
        reserved1: [u8; 3] = RESERVED1 @ 17, Reserved;
        /// The destination register.
        dst: u8 = DST @ 20, Required("dst");
        /// Undefined.
        reserved2: [u8; 3] = RESERVED2 @ 21, Reserved;
        /// The immediate (must fit i32).
        imm: i64 = IMM @ 24, Required("imm");
        /// Undefined.
        reserved3: [u8; 32] = RESERVED3 @ 32, Reserved;
    }
}

operand_layout! {
    /// COMPARE_BRANCH 0xA9 (EC-28).
    CompareBranch = "COMPARE_BRANCH", mod branch_off {
        /// The compare op ([`cmp`]).
        cmp: u8 = CMP @ 12, Required("cmp");
        /// The compared dtype.
        dtype: Dtype = DTYPE @ 13, Required("dtype");
        /// The target mode ([`target`]).
        target_mode: u8 = TARGET_MODE @ 14, Required("mode");
        /// Undefined.
        reserved0: u8 = RESERVED0 @ 15, Reserved;
        /// The compare immediate.
        imm: u32 = IMM @ 16, Required("imm");
        /// Undefined.
        reserved1: [u8; 12] = RESERVED1 @ 20, Reserved;
        /// The compared register.
        reg: u8 = REG @ 32, Required("reg");
        /// Undefined.
        reserved2: u8 = RESERVED2 @ 33, Reserved;
        /// The target register, low 32 bits.
        target_lo: u8 = TARGET_LO @ 34, Required("lo");
        /// The target register, high 32 bits.
        target_hi: u8 = TARGET_HI @ 35, Required("hi");
        /// Undefined.
        reserved3: [u8; 12] = RESERVED3 @ 36, Reserved;
        /// The relative target (must fit i32).
        rel: i64 = REL @ 48, Required("rel");
        /// Undefined.
        reserved4: [u8; 8] = RESERVED4 @ 56, Reserved;
    }
}

operand_layout! {
    /// EVENT_SEMAPHORE 0xA0 and DRAIN 0xA2 (EC-24): the events band only.
    EventsOnly = "EVENTS", mod events_off {
        /// Bytes 12..64 (EVENT_SEMAPHORE: a second wait, reported separately).
        rest: [u8; 52] = REST @ 12, Reserved;
    }
}

// The typed layouts and the `off` constants the validator reads agree.
const _: () = {
    assert!(mov32_off::REG == off::MOV32_REG && mov32_off::VALUE == off::MOV32_VALUE);
    assert!(ctrl_al_off::OP == off::CTRL_AL_OP && ctrl_al_off::DTYPE == off::CTRL_AL_DTYPE);
    assert!(ctrl_al_off::SRC == off::CTRL_AL_SRC && ctrl_al_off::DST == off::CTRL_AL_DST);
    assert!(ctrl_al_off::IMM == off::CTRL_AL_IMM);
    assert!(branch_off::CMP == off::BR_CMP && branch_off::DTYPE == off::BR_DTYPE);
    assert!(branch_off::TARGET_MODE == off::BR_TARGET_MODE && branch_off::IMM == off::BR_CMP_IMM);
    assert!(branch_off::REG == off::BR_CMP_REG && branch_off::TARGET_LO == off::BR_TARGET_LO);
    assert!(branch_off::TARGET_HI == off::BR_TARGET_HI && branch_off::REL == off::BR_REL);
};

/// A control or DMA record, decoded by its opcode (the `Control` and `Dma`
/// classes). Lossless: [`Control::encode`] gives back the same 64 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Control {
    /// EVENT_SEMAPHORE (0xA0).
    EventSemaphore(EventsOnly),
    /// DRAIN (0xA2).
    Drain(EventsOnly),
    /// MOV32 (0xA7).
    Mov32(Mov32),
    /// CTRL_AL (0xA8).
    CtrlAl(CtrlAl),
    /// COMPARE_BRANCH (0xA9).
    CompareBranch(CompareBranch),
    /// DMA_MEMCPY (0xB8).
    DmaMemcpy(DmaMemcpy),
}

impl Control {
    /// Decodes a record of the `Control` or `Dma` class; `None` for any
    /// other opcode.
    pub fn decode(r: &Record) -> Option<Control> {
        Some(match r.opcode() {
            Opcode::EVENT_SEMAPHORE => Control::EventSemaphore(EventsOnly::decode(r)),
            Opcode::DRAIN => Control::Drain(EventsOnly::decode(r)),
            Opcode::MOV32 => Control::Mov32(Mov32::decode(r)),
            Opcode::CTRL_AL => Control::CtrlAl(CtrlAl::decode(r)),
            Opcode::COMPARE_BRANCH => Control::CompareBranch(CompareBranch::decode(r)),
            Opcode::DMA_MEMCPY => Control::DmaMemcpy(DmaMemcpy::decode(r)),
            _ => return None,
        })
    }

    /// Encodes back to the same 64 bytes.
    pub fn encode(&self) -> Record {
        match self {
            Control::EventSemaphore(p) | Control::Drain(p) => p.encode(),
            Control::Mov32(p) => p.encode(),
            Control::CtrlAl(p) => p.encode(),
            Control::CompareBranch(p) => p.encode(),
            Control::DmaMemcpy(p) => p.encode(),
        }
    }
}

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

    fn put(&self, r: &mut Record, at: usize) {
        r.0[at..at + 8].copy_from_slice(&self.addr.raw().to_le_bytes());
        r.0[at + 8..at + 12].copy_from_slice(&self.step[0].to_le_bytes());
        r.0[at + 12..at + 16].copy_from_slice(&self.step[1].to_le_bytes());
        r.0[at + 16..at + 18].copy_from_slice(&self.num[0].to_le_bytes());
        r.0[at + 18..at + 20].copy_from_slice(&self.num[1].to_le_bytes());
        r.0[at + 20..at + 22].copy_from_slice(&self.elem_size.to_le_bytes());
    }

    /// Elements moved.
    pub fn elements(&self) -> u64 {
        self.num[0] as u64 * self.num[1] as u64
    }
}

/// DMA_MEMCPY 0xB8 (lead; EC-23). Every byte has a field, so
/// `DmaMemcpy::decode(r).encode() == r`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DmaMemcpy {
    /// Bytes 0..4.
    pub header: Header,
    /// Bytes 4..12.
    pub events: Events,
    /// Byte 12 (undefined).
    pub reserved0: u8,
    /// Bytes 38..40 (between the walks).
    pub reserved1: [u8; 2],
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
            header: r.header(),
            events: r.events(),
            reserved0: r.u8_at(12),
            reserved1: [r.u8_at(38), r.u8_at(39)],
            sem: r.u8_at(off::DMA_SEM),
            sem_inc: r.u8_at(off::DMA_SEM_INC),
            compute_op: r.u8_at(off::DMA_OP),
            src: DmaWalk::decode(r, off::DMA_SRC),
            dst: DmaWalk::decode(r, off::DMA_DST),
            in_dtype: Dtype(r.u8_at(off::DMA_IN_DTYPE)),
            out_dtype: Dtype(r.u8_at(off::DMA_OUT_DTYPE)),
        }
    }

    /// Encodes the 64 bytes.
    pub fn encode(&self) -> Record {
        let mut r = Record::default();
        let h = self.header;
        r.0[..4].copy_from_slice(&[h.opcode.0, h.inst_word_len, h.debug_cmd, h.debug_hint]);
        r.set_events(self.events);
        r.0[12] = self.reserved0;
        r.0[off::DMA_SEM] = self.sem;
        r.0[off::DMA_SEM_INC] = self.sem_inc;
        r.0[off::DMA_OP] = self.compute_op;
        self.src.put(&mut r, off::DMA_SRC);
        r.0[38..40].copy_from_slice(&self.reserved1);
        self.dst.put(&mut r, off::DMA_DST);
        r.0[off::DMA_IN_DTYPE] = self.in_dtype.0;
        r.0[off::DMA_OUT_DTYPE] = self.out_dtype.0;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_records_round_trip() {
        let mut rng = fastrand::Rng::with_seed(0xC0_7201);
        for _ in 0..2000 {
            let mut r = Record::default();
            rng.fill(&mut r.0);
            for op in [0xA0u8, 0xA2, 0xA7, 0xA8, 0xA9, 0xB8] {
                r.0[0] = op;
                assert_eq!(Control::decode(&r).map(|c| c.encode()), Some(r));
            }
        }
        assert!(Control::decode(&Record::default()).is_none());
    }

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
