//! SPEC §5 step 5 for the control and DMA records of SPEC §8.1 (EC-22..EC-28).
//!
//! Order: bytes the layout does not define must be zero (`reserved_zero`),
//! ADDR8s must lie in EC-22's map (`is_valid_addr8`), then the emulator's
//! checks: supported forms (`emu_opcode_supported`), ADDR8 markers
//! (`emu_addr_mode_supported`), register event forms and EVENT_SEMAPHORE's
//! second wait (`emu_event_mode_supported`). The DMA footprint check
//! (`emu_footprint_in_bounds`) needs the program's variables and runs when a
//! program is staged.

use crate::isa::control::{self, Addr8, DmaMemcpy};
use crate::isa::enums::Dtype;
use crate::isa::opcode::Opcode;
use crate::isa::predicates::fail::*;
use crate::isa::predicates::{Target, check_event_modes_emulated};
use crate::isa::record::Record;
use crate::limits::NUM_REGISTERS;

// Out of line: control records are rare in streams and this keeps the Pool
// path of `validate::check` compact.
#[inline(never)]
pub(super) fn check(r: &Record, _t: Target) -> Result<(), Fail> {
    let op = r.opcode();
    let reserved = if has_reserved_bits(r, op) {
        r.first_nonzero(control::undefined_bytes(op))
    } else {
        None
    };
    if let Some((offset, value)) = reserved {
        // EC-24: EVENT_SEMAPHORE's bytes 12..64 hold a second wait the emulator does not model.
        if op == Opcode::EVENT_SEMAPHORE {
            check_event_modes_emulated(r)?;
            return Err(Fail::EmuEventModeSupported {
                field: EventField::ExtendedWait,
                mode: value,
            });
        }
        return Err(Fail::ReservedZero {
            offset: offset as u8,
            value,
        });
    }
    if op == Opcode::DMA_MEMCPY {
        let d = DmaMemcpy::decode(r);
        for (o, a) in [(Operand::Src, d.src.addr), (Operand::Dst, d.dst.addr)] {
            if matches!(a, Addr8::OutsideMap(_)) {
                return Err(Fail::IsValidAddr8 {
                    operand: o,
                    addr: a.raw(),
                });
            }
        }
        dma_supported(&d)?;
        for (o, a) in [(Operand::Src, d.src.addr), (Operand::Dst, d.dst.addr)] {
            if matches!(a, Addr8::OtherMarker(_)) {
                return Err(Fail::EmuAddrModeSupported {
                    operand: o,
                    addr: a.raw(),
                });
            }
        }
    } else {
        control_supported(r)?;
    }
    check_event_modes_emulated(r)
}

fn unsupported(op: Opcode, why: Unsupported) -> Result<(), Fail> {
    Err(Fail::EmuOpcodeSupported { opcode: op, why })
}

fn register(r: &Record, offset: usize) -> Result<(), Fail> {
    let id = r.u8_at(offset);
    if id as usize >= NUM_REGISTERS {
        return unsupported(
            r.opcode(),
            Unsupported::RegisterId {
                offset: offset as u8,
                id,
            },
        );
    }
    Ok(())
}

fn imm_i32(r: &Record, offset: usize) -> Result<(), Fail> {
    let value = r.i64_at(offset);
    if i32::try_from(value).is_err() {
        return unsupported(
            r.opcode(),
            Unsupported::Immediate {
                offset: offset as u8,
                value,
            },
        );
    }
    Ok(())
}

/// EC-26..EC-28: the operand forms of MOV32, CTRL_AL and COMPARE_BRANCH.
fn control_supported(r: &Record) -> Result<(), Fail> {
    use control::{alu, cmp, off, target};
    let op = r.opcode();
    match op {
        Opcode::MOV32 => register(r, off::MOV32_REG),
        Opcode::CTRL_AL => {
            let alu_op = r.u8_at(off::CTRL_AL_OP);
            if !matches!(alu_op, alu::ADD | alu::SUB) {
                return unsupported(op, Unsupported::AluOp(alu_op));
            }
            let dt = Dtype(r.u8_at(off::CTRL_AL_DTYPE));
            if dt != Dtype::INT32 {
                return unsupported(op, Unsupported::ControlDtype(dt));
            }
            register(r, off::CTRL_AL_SRC)?;
            register(r, off::CTRL_AL_DST)?;
            imm_i32(r, off::CTRL_AL_IMM)
        }
        Opcode::COMPARE_BRANCH => {
            let c = r.u8_at(off::BR_CMP);
            if !matches!(c, cmp::ALWAYS | cmp::EQIMM | cmp::GTIMM) {
                return unsupported(op, Unsupported::CompareOp(c));
            }
            let dt = Dtype(r.u8_at(off::BR_DTYPE));
            if !(dt == Dtype::INT32 || (dt == Dtype::INVALID && c == cmp::ALWAYS)) {
                return unsupported(op, Unsupported::ControlDtype(dt));
            }
            if c != cmp::ALWAYS {
                register(r, off::BR_CMP_REG)?;
            }
            match r.u8_at(off::BR_TARGET_MODE) {
                target::REL_IMM => imm_i32(r, off::BR_REL),
                target::REGISTER => {
                    register(r, off::BR_TARGET_LO)?;
                    register(r, off::BR_TARGET_HI)
                }
                m => unsupported(op, Unsupported::TargetMode(m)),
            }
        }
        // EVENT_SEMAPHORE and DRAIN have no operands beyond their events.
        _ => Ok(()),
    }
}

/// EC-23: the forms of DMA_MEMCPY the emulator executes.
fn dma_supported(d: &DmaMemcpy) -> Result<(), Fail> {
    let op = Opcode::DMA_MEMCPY;
    if d.compute_op != 0 {
        return unsupported(op, Unsupported::ComputeOp(d.compute_op));
    }
    for (o, w) in [(Operand::Src, &d.src), (Operand::Dst, &d.dst)] {
        if w.elem_size == 0 {
            return unsupported(op, Unsupported::ElemSizeZero(o));
        }
    }
    let sizes = Unsupported::DmaElemSize {
        src: d.src.elem_size,
        dst: d.dst.elem_size,
    };
    if d.in_dtype == d.out_dtype {
        if d.src.elem_size != d.dst.elem_size {
            return unsupported(op, sizes);
        }
    } else {
        if !(d.in_dtype.emu_readable() && d.out_dtype.emu_writable()) {
            return unsupported(
                op,
                Unsupported::DmaDtypes {
                    src: d.in_dtype,
                    dst: d.out_dtype,
                },
            );
        }
        if d.in_dtype.size() != Some(d.src.elem_size as u32)
            || d.out_dtype.size() != Some(d.dst.elem_size as u32)
        {
            return unsupported(op, sizes);
        }
    }
    let (s, t) = (d.src.elements(), d.dst.elements());
    if s != t {
        return unsupported(op, Unsupported::DmaCounts { src: s, dst: t });
    }
    Ok(())
}

/// Masks of the control/DMA opcodes' undefined bytes, built at compile time.
const MASKS: [[u64; 8]; 6] = [
    control::undefined_mask(Opcode::EVENT_SEMAPHORE),
    control::undefined_mask(Opcode::DRAIN),
    control::undefined_mask(Opcode::MOV32),
    control::undefined_mask(Opcode::CTRL_AL),
    control::undefined_mask(Opcode::COMPARE_BRANCH),
    control::undefined_mask(Opcode::DMA_MEMCPY),
];

/// Whether any byte `op`'s layout does not define is non-zero: eight ANDs
/// on the hot path; [`Record::first_nonzero`] finds which one when it is.
fn has_reserved_bits(r: &Record, op: Opcode) -> bool {
    let mask = match op {
        Opcode::EVENT_SEMAPHORE => &MASKS[0],
        Opcode::DRAIN => &MASKS[1],
        Opcode::MOV32 => &MASKS[2],
        Opcode::CTRL_AL => &MASKS[3],
        Opcode::COMPARE_BRANCH => &MASKS[4],
        Opcode::DMA_MEMCPY => &MASKS[5],
        _ => return true,
    };
    let words: [u64; 8] = bytemuck::cast(r.0);
    words.iter().zip(mask).any(|(w, m)| w & m != 0)
}
