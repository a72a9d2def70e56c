//! Validation: one predicate tree (SPEC §5) with two faces.
//!
//! [`check`] walks the tree and returns the first failing predicate as a
//! [`Fail`] carrying the offending values; [`is_valid`] is `check(..).is_ok()`.
//! There is no second copy of the tree, so the fast face and the diagnostic
//! face cannot disagree.

mod control;

pub use crate::isa::layout::FieldRef;
pub use crate::isa::predicates::Target;
pub use crate::isa::predicates::fail::{
    EventField, Fail, Operand, OverlapFault, Pred, PredDef, ShapeFault, TensorFault, Unsupported,
    Why,
};

use super::kernels::{Kernel, s4d4_pl};
use super::opcode::OpcodeClass;
use super::record::Record;
use super::stream::{StreamError, records};
use crate::limits::{INST_WORD_LEN, RECORD_BYTES};
use std::fmt;

/// The diagnostic face: the first failing predicate, in SPEC §5 order.
pub fn check(r: &Record, t: Target) -> Result<(), Fail> {
    tree(r, t)
}

/// The predicate tree itself, behind both [`check`] and [`validate_stream`]
/// (always inlined, so the stream loop holds the whole Pool path and calls
/// nothing per record).
#[inline(always)]
fn tree(r: &Record, t: Target) -> Result<(), Fail> {
    let h = r.header();
    let class = h.opcode.class();
    // 1. is_valid_enum (EC-33: before the engine check).
    if matches!(class, OpcodeClass::Pseudo | OpcodeClass::Unknown) {
        return Err(Fail::IsValidEnum { opcode: h.opcode });
    }
    // 2. instruction_engine_check (EC-25).
    if !h.opcode.legal_on(t.engine) {
        return Err(Fail::InstructionEngineCheck {
            opcode: h.opcode,
            engine: t.engine,
        });
    }
    // 3. has_valid_inst_len (EC-37: the debug bytes are not checked).
    if h.inst_word_len != INST_WORD_LEN {
        return Err(Fail::HasValidInstLen {
            len: h.inst_word_len,
        });
    }
    // 4. valid_event_modes.
    let ev = r.events();
    if !ev.wait_mode.is_valid() {
        return Err(Fail::ValidEventModes {
            field: EventField::Wait,
            mode: ev.wait_mode.0,
        });
    }
    if !ev.update_mode.is_valid() {
        return Err(Fail::ValidEventModes {
            field: EventField::Update,
            mode: ev.update_mode.0,
        });
    }
    // 5./6./7. per class.
    match class {
        // The hot path: Pool's predicates read the fields in place.
        OpcodeClass::S4d4Pl => s4d4_pl::check(r, t),
        OpcodeClass::Control | OpcodeClass::Dma => control::check(r, t),
        OpcodeClass::Pseudo | OpcodeClass::Unknown => unreachable!("rejected above"),
        // Every other kernel class: its decoded operand's predicates, in
        // its file under `isa/kernels/` (SPEC-KERNELS §13).
        _ => match Kernel::decode(r) {
            Some(k) => k.check(r, t),
            None => unreachable!("every other class is a kernel-table class"),
        },
    }
}

/// The fast face: the same tree as [`check`].
#[inline]
pub fn is_valid(r: &Record, t: Target) -> bool {
    check(r, t).is_ok()
}

/// An invalid record in a stream: where it is and which predicate failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidRecord {
    /// Byte offset of the record in its stream.
    pub offset: usize,
    /// The record's opcode byte.
    pub opcode: u8,
    /// The failing predicate.
    pub fail: Fail,
}

/// The runtime's message (seed 004): `Found invalid instruction! opcode=<u>, offset=<u>: <predicate> (<detail>)`.
impl fmt::Display for InvalidRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Found invalid instruction! opcode={}, offset={}: {} ({})",
            self.opcode,
            self.offset,
            self.fail.predicate(),
            self.fail
        )
    }
}

impl std::error::Error for InvalidRecord {}

/// Why a stream did not validate.
#[derive(Debug, thiserror::Error)]
pub enum StreamInvalid {
    /// The bytes are not a stream (input error).
    #[error(transparent)]
    Malformed(#[from] StreamError),
    /// A record failed a predicate.
    #[error(transparent)]
    Invalid(#[from] InvalidRecord),
}

/// The error for the invalid record at `offset` (out of line: the stream
/// loop's hot path only tests the result).
#[cold]
#[inline(never)]
fn invalid(offset: usize, r: &Record, fail: Fail) -> StreamInvalid {
    StreamInvalid::Invalid(InvalidRecord {
        offset,
        opcode: r.0[0],
        fail,
    })
}

/// Validates every record of a stream; stops at the first invalid one.
pub fn validate_stream(bytes: &[u8], t: Target) -> Result<usize, StreamInvalid> {
    // The length rule lives in `records`; the loop then borrows each record
    // in place instead of copying it out of the stream.
    let _ = records(bytes)?;
    let mut rest = bytes;
    while let Some((r, tail)) = rest.split_first_chunk::<RECORD_BYTES>() {
        let r = Record::from_array_ref(r);
        if let Err(fail) = tree(r, t) {
            return Err(invalid(bytes.len() - rest.len(), r, fail));
        }
        rest = tail;
    }
    Ok(bytes.len() / RECORD_BYTES)
}
