//! Lowering of one engine stream (seed 004; SPEC §8, EC-17, EC-29, EC-30).
//!
//! The compiler's streams hold host-only pseudo-opcodes (the band
//! `0xC1..=0xDF`). [`lower`] rewrites one engine's stream into real records in
//! the seed's passes:
//!
//! 1. **identify functions**: every PSEUDO_FUNCTION_BEGIN (0xD1) opens a named
//!    function (name, reset-semaphores flag, return-address registers);
//! 2. **lower** every record, in stream order, through one append primitive
//!    (`Out::add`, seed 004's `add_ins`), which closes a block when the next
//!    record would make it exceed [`BLOCK_MAX_BYTES`] (EC-30); blocks also
//!    split at 0xD1 and at PSEUDO_BRANCH_LABEL (0xCC);
//! 3. **patch branch targets** in a post-pass: the COMPARE_BRANCH of every
//!    FUNCTION_CALL gets its callee's entry, and every REL_IMM branch already
//!    in the input is retargeted (EC-29).
//!
//! The recipes (EC-29):
//!
//! | input | lowered to |
//! |---|---|
//! | real record (not a REL_IMM branch) | itself, byte for byte |
//! | COMPARE_BRANCH REL_IMM | itself, its target retargeted in the post-pass |
//! | FUNCTION_BEGIN 0xD1 | nothing; the first one's lowered offset is an exit point |
//! | FUNCTION_CALL 0xD3 | MOV32 `reg[lo]` = low half of the return offset, MOV32 `reg[hi]` = high half, COMPARE_BRANCH ALWAYS REL_IMM to the callee's entry |
//! | FUNCTION_RETURN 0xD2 | DRAIN, COMPARE_BRANCH ALWAYS REGISTER `lo`/`hi` |
//! | PSEUDO_INST 0xDF EXIT | nothing; its lowered offset is an exit point |
//! | BRANCH_LABEL 0xCC, PREFETCH_HINT 0xDD | nothing |
//! | DMA_DIRECT2D 0xD4, dge_op 0 | the same bytes with opcode 0xB8 and byte 15 = 0 |
//!
//! Everything else in the pseudo band is rejected by name and offset with
//! `emu_opcode_supported` ([`Rejected`]): JPEG decode (EC-4), DMA_DIRECT2D with
//! dge_op 1..3 (EC-17), PSEUDO_INST sub-ops other than EXIT, an unknown
//! callee, a non-zero reset-semaphores flag, and the unnamed pseudo-opcodes.
//!
//! Emulator choices where EC-29 is silent (each documented in
//! `docs/lowering.md`):
//! - the events band of a CALL goes on its first MOV32, that of a RETURN on
//!   its DRAIN; a record that lowers to nothing must have an empty events band
//!   (a wait or update there would be lost), else it is rejected;
//! - a FUNCTION_RETURN outside any function, and a second function of the same
//!   name, are rejected;
//! - a REL_IMM branch whose input target is not a record boundary of the input
//!   (`0..=len`) keeps its relative immediate (a run-time error if taken);
//!   REGISTER-mode branches already in the input are not retargeted;
//! - the args-table var id of a CALL (@48) is not used.
//!
//! A stream without pseudo-opcodes lowers to itself, byte for byte.

use super::build::{BranchTarget, drain, jump, mov32};
use crate::isa::control::{off, target};
use crate::isa::opcode::Opcode;
use crate::isa::record::Record;
use crate::isa::stream::StreamError;
use crate::isa::validate::{Fail, InvalidRecord, Target, check};
use crate::limits::{BLOCK_MAX_BYTES, BLOCK_MIN_ALIGN, RECORD_BYTES};
use std::collections::HashMap;
use std::fmt;

/// Byte offsets of the pseudo-record fields (lead; SPEC §8).
pub mod pseudo {
    /// FUNCTION_BEGIN / FUNCTION_CALL: the function name, `[u8; 36]`, NUL-padded.
    pub const NAME: usize = 12;
    /// Length of a function name field.
    pub const NAME_LEN: usize = 36;
    /// FUNCTION_BEGIN: the reset-semaphores flag (u8).
    pub const RESET_SEMAPHORES: usize = 48;
    /// FUNCTION_BEGIN: the register that receives the low 32 bits of the return offset.
    pub const RET_LO: usize = 49;
    /// FUNCTION_BEGIN: the register that receives the high 32 bits of the return offset.
    pub const RET_HI: usize = 50;
    /// FUNCTION_CALL: the args-table var id (u32; not used by the emulator).
    pub const CALL_ARGS: usize = 48;
    /// PSEUDO_INST: the sub-op (u8).
    pub const INST_SUBOP: usize = 12;
    /// PSEUDO_INST sub-op: EXIT.
    pub const EXIT: u8 = 1;
    /// PSEUDO_INST sub-op: LIBRARY_RELOAD_INDEX (rejected).
    pub const LIBRARY_RELOAD_INDEX: u8 = 2;
    /// DMA_DIRECT2D: the DGE op (u8; the byte DMA_MEMCPY calls compute_op).
    pub const DGE_OP: usize = 15;
}

/// One block of a lowered stream (EC-30): a run of records staged at `addr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Block {
    /// Byte offset of its first record in the logical (concatenated) stream.
    pub start: usize,
    /// Its size in bytes (at most [`BLOCK_MAX_BYTES`]).
    pub len: usize,
    /// Its staging address in the emulated instruction memory, a multiple of
    /// [`Block::alignment`].
    pub addr: u64,
}

impl Block {
    /// EC-30: the staging alignment, `max(0x8000, block size)`.
    pub fn alignment(&self) -> u64 {
        BLOCK_MIN_ALIGN.max(self.len) as u64
    }
}

/// One engine stream after lowering: real records only, plus what lowering
/// keeps as metadata (exit points, the map back to the input, the blocks).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lowered {
    bytes: Vec<u8>,
    /// Input byte offset of the record each lowered record came from.
    origin: Vec<u32>,
    exits: Vec<usize>,
    blocks: Vec<Block>,
    records_in: usize,
    functions: usize,
    pseudo: usize,
}

impl Lowered {
    /// The logical stream: the blocks concatenated.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The logical stream, by value.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Records after lowering.
    pub fn records_out(&self) -> usize {
        self.origin.len()
    }

    /// Records before lowering.
    pub fn records_in(&self) -> usize {
        self.records_in
    }

    /// Pseudo-opcodes the input held.
    pub fn pseudo_in(&self) -> usize {
        self.pseudo
    }

    /// Functions (FUNCTION_BEGIN records) the input held.
    pub fn functions(&self) -> usize {
        self.functions
    }

    /// EC-29: the lowered byte offsets where the engine's program ends when
    /// execution reaches them (sorted, distinct; may include the stream's end).
    pub fn exits(&self) -> &[usize] {
        &self.exits
    }

    /// EC-30: the blocks, in stream order, with their staging addresses.
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// The input byte offset that the lowered record at byte `lowered` came
    /// from (`None` past the end or off a record boundary).
    pub fn original_offset(&self, lowered: usize) -> Option<usize> {
        if !lowered.is_multiple_of(RECORD_BYTES) {
            return None;
        }
        self.origin.get(lowered / RECORD_BYTES).map(|&o| o as usize)
    }

    /// EC-30: stages the blocks back to back from `base`, each at the next
    /// address that is a multiple of its [`Block::alignment`]. Returns the
    /// address just past the last block.
    pub fn place(&mut self, base: u64) -> u64 {
        let mut at = base;
        for b in &mut self.blocks {
            b.addr = at.next_multiple_of(b.alignment());
            at = b.addr + b.len as u64;
        }
        at
    }
}

/// Why lowering rejected a pseudo-record (all `emu_opcode_supported`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LowerFault {
    /// A pseudo-opcode the emulator has no recipe for (JPEG decode: EC-4).
    NoRecipe,
    /// DMA_DIRECT2D with dge_op 1..=255 (EC-17: extension records not modelled).
    DgeOp(u8),
    /// A PSEUDO_INST sub-op other than EXIT.
    InstSubOp(u8),
    /// A FUNCTION_CALL naming no FUNCTION_BEGIN of the stream.
    UnknownCallee(String),
    /// A FUNCTION_BEGIN with a non-zero reset-semaphores flag (EC-29).
    ResetSemaphores(u8),
    /// A second FUNCTION_BEGIN with the name of an earlier one.
    DuplicateFunction {
        /// The name.
        name: String,
        /// Input byte offset of the first.
        first: usize,
    },
    /// A FUNCTION_RETURN before any FUNCTION_BEGIN (in the main program).
    ReturnOutsideFunction,
    /// A record that lowers to nothing carries a wait or an update.
    EventsDropped,
}

impl fmt::Display for LowerFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LowerFault::NoRecipe => f.write_str("no lowering recipe (EC-4, EC-29)"),
            LowerFault::DgeOp(d) => write!(
                f,
                "dge_op byte 15 = {d}: only dge_op 0 lowers to DMA_MEMCPY (EC-17)"
            ),
            LowerFault::InstSubOp(s) => {
                let name = match *s {
                    pseudo::LIBRARY_RELOAD_INDEX => "LIBRARY_RELOAD_INDEX",
                    _ => "unknown",
                };
                write!(
                    f,
                    "sub-op byte 12 = {s} ({name}): only EXIT 1 is lowered (EC-29)"
                )
            }
            LowerFault::UnknownCallee(n) => {
                write!(f, "unknown callee {n:?}: no FUNCTION_BEGIN of that name")
            }
            LowerFault::ResetSemaphores(v) => write!(
                f,
                "reset-semaphores flag byte 48 = {v}: not emulated (EC-29)"
            ),
            LowerFault::DuplicateFunction { name, first } => write!(
                f,
                "function {name:?} is already defined at byte offset {first}"
            ),
            LowerFault::ReturnOutsideFunction => {
                f.write_str("FUNCTION_RETURN in the main program (before any FUNCTION_BEGIN)")
            }
            LowerFault::EventsDropped => {
                f.write_str("a record that lowers to nothing has a wait or an update (bytes 4..12)")
            }
        }
    }
}

/// A pseudo-record that lowering rejected: where, which opcode, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    /// Byte offset of the record in the input stream.
    pub offset: usize,
    /// Its opcode byte.
    pub opcode: u8,
    /// Why.
    pub fault: LowerFault,
}

impl Rejected {
    /// The predicate (EC-29: always `emu_opcode_supported`).
    pub const fn predicate(&self) -> &'static str {
        "emu_opcode_supported"
    }
}

/// `Found invalid instruction! opcode=<u>, offset=<u>: emu_opcode_supported (<name>: <why>)`,
/// the offset being the input's.
impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Found invalid instruction! opcode={}, offset={}: {} ({} at input byte offset {}: {})",
            self.opcode,
            self.offset,
            self.predicate(),
            Opcode(self.opcode),
            self.offset,
            self.fault
        )
    }
}

impl std::error::Error for Rejected {}

/// Why a stream did not lower.
#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    /// The bytes are not whole records (bad input).
    #[error(transparent)]
    Malformed(#[from] StreamError),
    /// A pseudo-record was rejected.
    #[error(transparent)]
    Rejected(#[from] Rejected),
}

/// A record of a lowered stream that failed validation: the offset in the
/// lowered stream (in `record`) and in the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoweredInvalid {
    /// The failure, at its lowered byte offset.
    pub record: InvalidRecord,
    /// Byte offset in the input of the record it was lowered from.
    pub original: usize,
}

impl fmt::Display for LoweredInvalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} [lowered offset {}, input offset {}]",
            self.record, self.record.offset, self.original
        )
    }
}

impl std::error::Error for LoweredInvalid {}

/// Why a stream did not lower and validate.
#[derive(Debug, thiserror::Error)]
pub enum LowerValidateError {
    /// Lowering failed.
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// A lowered record failed a SPEC §5 predicate.
    #[error(transparent)]
    Invalid(#[from] LoweredInvalid),
}

impl LowerValidateError {
    /// The failing predicate (`None` for bad input).
    pub fn predicate(&self) -> Option<&'static str> {
        match self {
            LowerValidateError::Lower(LowerError::Malformed(_)) => None,
            LowerValidateError::Lower(LowerError::Rejected(r)) => Some(r.predicate()),
            LowerValidateError::Invalid(i) => Some(i.record.fail.predicate()),
        }
    }
}

/// A function found by the first pass.
struct Function<'a> {
    name: &'a [u8],
    /// Input record index of its FUNCTION_BEGIN.
    begin: usize,
    lo: u8,
    hi: u8,
}

/// A branch the post-pass patches: the lowered record index and where it goes.
enum Fix {
    /// The entry of function `k` (a CALL).
    Call { at: u32, k: u32 },
    /// Input record `to` (a REL_IMM branch of the input).
    Rel { at: u32, to: u32 },
}

/// The lowered stream under construction and its one append primitive.
struct Out {
    bytes: Vec<u8>,
    origin: Vec<u32>,
    blocks: Vec<Block>,
    /// Byte offset where the open block starts.
    block_start: usize,
}

impl Out {
    /// Seed 004's `add_ins`: appends one 64-byte record that came from input
    /// byte `from`. EC-30: closes the open block first when this record would
    /// make it exceed [`BLOCK_MAX_BYTES`].
    #[inline]
    fn add(&mut self, rec: &[u8], from: u32) {
        if self.bytes.len() + RECORD_BYTES - self.block_start > BLOCK_MAX_BYTES {
            self.split();
        }
        self.bytes.extend_from_slice(&rec[..RECORD_BYTES]);
        self.origin.push(from);
    }

    /// Closes the open block, if it holds anything.
    fn split(&mut self) {
        let len = self.bytes.len() - self.block_start;
        if len > 0 {
            self.blocks.push(Block {
                start: self.block_start,
                len,
                addr: 0,
            });
            self.block_start = self.bytes.len();
        }
    }

    /// Records so far.
    fn n(&self) -> usize {
        self.origin.len()
    }
}

/// The name field: bytes up to the first NUL.
fn name_of(rec: &[u8]) -> &[u8] {
    let field = &rec[pseudo::NAME..pseudo::NAME + pseudo::NAME_LEN];
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    &field[..end]
}

fn show(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

/// True when the events band (bytes 4..12) is all zero.
fn no_events(rec: &[u8]) -> bool {
    rec[4..12].iter().all(|&b| b == 0)
}

/// Lowers one engine stream (see the module documentation).
pub fn lower(bytes: &[u8]) -> Result<Lowered, LowerError> {
    let mut l = Lowered::default();
    lower_into(bytes, &mut l)?;
    Ok(l)
}

/// [`lower`] into `dst`, reusing its buffers (no page faults on a second
/// stream of similar size). On an error `dst` is left empty.
pub fn lower_into(bytes: &[u8], dst: &mut Lowered) -> Result<(), LowerError> {
    let mut out = Out {
        bytes: std::mem::take(&mut dst.bytes),
        origin: std::mem::take(&mut dst.origin),
        blocks: std::mem::take(&mut dst.blocks),
        block_start: 0,
    };
    let mut exits = std::mem::take(&mut dst.exits);
    out.bytes.clear();
    out.origin.clear();
    out.blocks.clear();
    exits.clear();
    *dst = Lowered::default();
    if !bytes.len().is_multiple_of(RECORD_BYTES) {
        return Err(StreamError::Length { len: bytes.len() }.into());
    }
    let n = bytes.len() / RECORD_BYTES;
    let rec = |i: usize| &bytes[i * RECORD_BYTES..(i + 1) * RECORD_BYTES];

    // Pass 1: identify functions (seed 004's itf_identify_functions). Only
    // the first of a name is kept; a duplicate is rejected in stream order.
    let mut functions: Vec<Function> = Vec::new();
    let mut by_name: HashMap<&[u8], u32> = HashMap::new();
    let mut pseudo_count = 0usize;
    let mut function_count = 0usize;
    for i in 0..n {
        let r = rec(i);
        if Opcode(r[0]).is_pseudo() {
            pseudo_count += 1;
        }
        if r[0] == Opcode::PSEUDO_FUNCTION_BEGIN.0 {
            function_count += 1;
            let name = name_of(r);
            by_name.entry(name).or_insert_with(|| {
                functions.push(Function {
                    name,
                    begin: i,
                    lo: r[pseudo::RET_LO],
                    hi: r[pseudo::RET_HI],
                });
                functions.len() as u32 - 1
            });
        }
    }

    // Pass 2: lower every record through the append primitive.
    out.bytes.reserve(bytes.len() + bytes.len() / 8);
    out.origin.reserve(n + n / 8);
    // first[i]: lowered record index where input record i's lowering starts;
    // for a record that lowers to nothing, that of the next one that does.
    let mut first: Vec<u32> = Vec::with_capacity(n + 1);
    let mut fixes: Vec<Fix> = Vec::new();
    let mut current: Option<&Function> = None;
    let mut seen_function = false;
    for i in 0..n {
        let r = rec(i);
        let from = (i * RECORD_BYTES) as u32;
        first.push(out.n() as u32);
        let op = Opcode(r[0]);
        let reject = |fault| Rejected {
            offset: i * RECORD_BYTES,
            opcode: op.0,
            fault,
        };
        if !op.is_pseudo() {
            if op == Opcode::COMPARE_BRANCH && r[off::BR_TARGET_MODE] == target::REL_IMM {
                let rel = i64::from_le_bytes(r[off::BR_REL..off::BR_REL + 8].try_into().unwrap());
                let to = (i * RECORD_BYTES) as i128 + rel as i128;
                if (0..=bytes.len() as i128).contains(&to) && to % RECORD_BYTES as i128 == 0 {
                    fixes.push(Fix::Rel {
                        at: out.n() as u32,
                        to: (to / RECORD_BYTES as i128) as u32,
                    });
                }
            }
            out.add(r, from);
            continue;
        }
        // A record that lowers to nothing must not carry events (they would be lost).
        let consumed = matches!(
            op,
            Opcode::PSEUDO_FUNCTION_BEGIN
                | Opcode::PSEUDO_BRANCH_LABEL
                | Opcode::PSEUDO_BRANCH_PREFETCH_HINT
        ) || (op == Opcode::PSEUDO_INST && r[pseudo::INST_SUBOP] == pseudo::EXIT);
        if consumed && !no_events(r) {
            return Err(reject(LowerFault::EventsDropped).into());
        }
        match op {
            Opcode::PSEUDO_FUNCTION_BEGIN => {
                let flag = r[pseudo::RESET_SEMAPHORES];
                if flag != 0 {
                    return Err(reject(LowerFault::ResetSemaphores(flag)).into());
                }
                let f = &functions[by_name[name_of(r)] as usize];
                if f.begin != i {
                    return Err(reject(LowerFault::DuplicateFunction {
                        name: show(f.name),
                        first: f.begin * RECORD_BYTES,
                    })
                    .into());
                }
                if !seen_function {
                    // EC-29: the main program ends where the first function starts.
                    seen_function = true;
                    if exits.last() != Some(&out.bytes.len()) {
                        exits.push(out.bytes.len());
                    }
                }
                current = Some(f);
                out.split();
            }
            Opcode::PSEUDO_FUNCTION_CALL => {
                let name = name_of(r);
                let Some(&k) = by_name.get(name) else {
                    return Err(reject(LowerFault::UnknownCallee(show(name))).into());
                };
                let f = &functions[k as usize];
                // The return offset: just after the branch (this CALL lowers to three records).
                let ret = ((out.n() + 3) * RECORD_BYTES) as u64;
                let mut lo = mov32(f.lo, ret as u32);
                lo.0[4..12].copy_from_slice(&r[4..12]);
                out.add(&lo.0, from);
                out.add(&mov32(f.hi, (ret >> 32) as u32).0, from);
                fixes.push(Fix::Call {
                    at: out.n() as u32,
                    k,
                });
                out.add(&jump(BranchTarget::Rel(0)).0, from);
            }
            Opcode::PSEUDO_FUNCTION_RETURN => {
                let Some(f) = current else {
                    return Err(reject(LowerFault::ReturnOutsideFunction).into());
                };
                let mut d: Record = drain();
                d.0[4..12].copy_from_slice(&r[4..12]);
                out.add(&d.0, from);
                out.add(&jump(BranchTarget::Register { lo: f.lo, hi: f.hi }).0, from);
            }
            Opcode::PSEUDO_DMA_DIRECT2D => {
                let dge = r[pseudo::DGE_OP];
                if dge != 0 {
                    return Err(reject(LowerFault::DgeOp(dge)).into());
                }
                let mut d = [0u8; RECORD_BYTES];
                d.copy_from_slice(r);
                d[0] = Opcode::DMA_MEMCPY.0;
                out.add(&d, from);
            }
            Opcode::PSEUDO_BRANCH_LABEL => out.split(),
            Opcode::PSEUDO_BRANCH_PREFETCH_HINT => {}
            Opcode::PSEUDO_INST => {
                let sub = r[pseudo::INST_SUBOP];
                if sub != pseudo::EXIT {
                    return Err(reject(LowerFault::InstSubOp(sub)).into());
                }
                // EC-29: execution that reaches this point ends the engine's program.
                if exits.last() != Some(&out.bytes.len()) {
                    exits.push(out.bytes.len());
                }
            }
            // JPEG decode (EC-4) and every unnamed pseudo-opcode.
            _ => return Err(reject(LowerFault::NoRecipe).into()),
        }
    }
    first.push(out.n() as u32);
    out.split();

    // Pass 3: patch every branch target (seed 004's ipb_postprocess_instrs).
    for fix in fixes {
        let (at, to) = match fix {
            Fix::Call { at, k } => (at, first[functions[k as usize].begin + 1]),
            Fix::Rel { at, to } => (at, first[to as usize]),
        };
        let rel = (to as i64 - at as i64) * RECORD_BYTES as i64;
        let b = at as usize * RECORD_BYTES + off::BR_REL;
        out.bytes[b..b + 8].copy_from_slice(&rel.to_le_bytes());
    }

    *dst = Lowered {
        bytes: out.bytes,
        origin: out.origin,
        exits,
        blocks: out.blocks,
        records_in: n,
        functions: function_count,
        pseudo: pseudo_count,
    };
    dst.place(0);
    Ok(())
}

/// Validates every record of a lowered stream for `t` (SPEC §5 order);
/// stops at the first invalid one, naming its lowered and input offsets.
pub fn validate_lowered(l: &Lowered, t: Target) -> Result<usize, LoweredInvalid> {
    for (i, (c, &from)) in l
        .bytes
        .chunks_exact(RECORD_BYTES)
        .zip(&l.origin)
        .enumerate()
    {
        let r = Record(c.try_into().expect("64-byte chunk"));
        if let Err(fail) = check(&r, t) {
            return Err(invalid(i * RECORD_BYTES, r.0[0], fail, from as usize));
        }
    }
    Ok(l.origin.len())
}

fn invalid(offset: usize, opcode: u8, fail: Fail, original: usize) -> LoweredInvalid {
    LoweredInvalid {
        record: InvalidRecord {
            offset,
            opcode,
            fail,
        },
        original,
    }
}

/// [`lower_and_validate`] into `dst`, reusing its buffers.
pub fn lower_and_validate_into(
    bytes: &[u8],
    t: Target,
    dst: &mut Lowered,
) -> Result<usize, LowerValidateError> {
    lower_into(bytes, dst)?;
    Ok(validate_lowered(dst, t)?)
}

/// Lowers `bytes` and validates the result for `t`: what the runtime does
/// with each engine stream before staging it.
pub fn lower_and_validate(bytes: &[u8], t: Target) -> Result<Lowered, LowerValidateError> {
    let l = lower(bytes)?;
    validate_lowered(&l, t)?;
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::enums::UpdateMode;
    use crate::isa::stream::to_bytes;
    use crate::runtime::build::{ev_update, event_semaphore, header};

    fn label() -> Record {
        header(Opcode::PSEUDO_BRANCH_LABEL)
    }

    #[test]
    fn identity_without_pseudo_opcodes() {
        let recs: Vec<Record> = (0..2100)
            .map(|i| {
                if i % 7 == 0 {
                    jump(BranchTarget::Rel(-64 * (i % 5)))
                } else {
                    event_semaphore(ev_update(UpdateMode::SEM_INC, (i % 200) as u8, 0))
                }
            })
            .collect();
        let b = to_bytes(&recs);
        let l = lower(&b).unwrap();
        assert_eq!(l.bytes(), &b[..]);
        assert_eq!(l.exits(), &[] as &[usize]);
        // 2100 records = 131 200 bytes: blocks of 1024, 1024, 52 records.
        let lens: Vec<usize> = l.blocks().iter().map(|b| b.len).collect();
        assert_eq!(lens, [0x10000, 0x10000, 52 * 64]);
        let addrs: Vec<u64> = l.blocks().iter().map(|b| b.addr).collect();
        assert_eq!(addrs, [0, 0x10000, 0x20000]);
        assert_eq!(l.original_offset(64 * 2000), Some(64 * 2000));
    }

    #[test]
    fn labels_split_blocks_and_placement_aligns() {
        let mut recs = vec![header(Opcode::DRAIN); 3];
        recs.push(label());
        recs.extend(vec![header(Opcode::DRAIN); 2]);
        let l = lower(&to_bytes(&recs)).unwrap();
        let got: Vec<(usize, usize, u64)> = l
            .blocks()
            .iter()
            .map(|b| (b.start, b.len, b.addr))
            .collect();
        assert_eq!(got, [(0, 192, 0), (192, 128, 0x8000)]);
    }
}
