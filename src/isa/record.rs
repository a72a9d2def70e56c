//! The 64-byte instruction record, its header word and its events band (SPEC §1).

use super::enums::{UpdateMode, WaitMode};
use super::opcode::Opcode;
use crate::limits::RECORD_BYTES;
use std::fmt;

/// One instruction record: exactly 64 bytes, any content. Decoding never fails;
/// [`Record::bytes`] gives back exactly what was read.
///
/// `repr(transparent)` over the bytes, so a record inside a stream can be
/// borrowed in place ([`Record::from_array_ref`]) rather than copied out.
#[derive(Clone, Copy, PartialEq, Eq, Hash, bytemuck::TransparentWrapper)]
#[repr(transparent)]
pub struct Record(pub [u8; RECORD_BYTES]);

impl Default for Record {
    fn default() -> Self {
        Record([0; RECORD_BYTES])
    }
}

impl fmt::Debug for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Record({})", hex(&self.0))
    }
}

/// Lower-case hex of a byte slice.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digits: Vec<u8> = bytes
        .iter()
        .flat_map(|&b| [DIGITS[(b >> 4) as usize], DIGITS[(b & 15) as usize]])
        .collect();
    String::from_utf8(digits).expect("hex digits are ASCII")
}

/// The header word, bytes 0..4 (SPEC §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Header {
    /// Byte 0: the opcode.
    pub opcode: Opcode,
    /// Byte 1: must be [`crate::limits::INST_WORD_LEN`]; never the stride.
    pub inst_word_len: u8,
    /// Byte 2: debug command (lead: trace byte; EC-37 ignored).
    pub debug_cmd: u8,
    /// Byte 3: debug hint (lead: trace byte; EC-37 ignored).
    pub debug_hint: u8,
}

/// The events band, bytes 4..12 (lead, SPEC §1; EC-1: honoured on every record).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Events {
    /// Byte 4: the wait condition, checked before the record runs.
    pub wait_mode: WaitMode,
    /// Byte 5: the semaphore or event the wait reads.
    pub wait_idx: u8,
    /// Byte 6: the update applied after the record completes.
    pub update_mode: UpdateMode,
    /// Byte 7: the semaphore or event the update writes.
    pub update_idx: u8,
    /// Bytes 8..12 (u32 LE): the wait threshold and the update operand.
    pub semaphore_value: u32,
}

impl Events {
    /// No wait and no update.
    pub fn is_none(&self) -> bool {
        self.wait_mode == WaitMode::NONE && self.update_mode == UpdateMode::NONE
    }

    pub(crate) fn from_bytes(b: &[u8; 8]) -> Events {
        Events {
            wait_mode: WaitMode(b[0]),
            wait_idx: b[1],
            update_mode: UpdateMode(b[2]),
            update_idx: b[3],
            semaphore_value: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }

    pub(crate) fn to_bytes(self) -> [u8; 8] {
        let v = self.semaphore_value.to_le_bytes();
        [
            self.wait_mode.0,
            self.wait_idx,
            self.update_mode.0,
            self.update_idx,
            v[0],
            v[1],
            v[2],
            v[3],
        ]
    }
}

impl Record {
    /// Reads a record from a slice of exactly 64 bytes; `None` for any other length.
    pub fn from_slice(bytes: &[u8]) -> Option<Record> {
        bytes.try_into().ok().map(Record)
    }

    /// Borrows 64 bytes in place as a record (no copy).
    #[inline]
    pub fn from_array_ref(bytes: &[u8; RECORD_BYTES]) -> &Record {
        bytemuck::TransparentWrapper::wrap_ref(bytes)
    }

    /// The 64 bytes.
    pub fn bytes(&self) -> &[u8; RECORD_BYTES] {
        &self.0
    }

    /// Byte 0.
    pub fn opcode(&self) -> Opcode {
        Opcode(self.0[0])
    }

    /// Bytes 0..4.
    pub fn header(&self) -> Header {
        Header {
            opcode: Opcode(self.0[0]),
            inst_word_len: self.0[1],
            debug_cmd: self.0[2],
            debug_hint: self.0[3],
        }
    }

    /// Bytes 4..12.
    pub fn events(&self) -> Events {
        Events::from_bytes(self.0[4..12].try_into().expect("8 bytes"))
    }

    /// Overwrites bytes 4..12.
    pub fn set_events(&mut self, e: Events) {
        self.0[4..12].copy_from_slice(&e.to_bytes());
    }

    /// The byte at `off`.
    pub fn u8_at(&self, off: usize) -> u8 {
        self.0[off]
    }

    /// Little-endian u16 at `off`.
    pub fn u16_at(&self, off: usize) -> u16 {
        u16::from_le_bytes([self.0[off], self.0[off + 1]])
    }

    /// Little-endian u32 at `off`.
    pub fn u32_at(&self, off: usize) -> u32 {
        u32::from_le_bytes(self.0[off..off + 4].try_into().expect("4 bytes"))
    }

    /// Little-endian i32 at `off`.
    pub fn i32_at(&self, off: usize) -> i32 {
        self.u32_at(off) as i32
    }

    /// Little-endian u64 at `off`.
    pub fn u64_at(&self, off: usize) -> u64 {
        u64::from_le_bytes(self.0[off..off + 8].try_into().expect("8 bytes"))
    }

    /// Little-endian i64 at `off`.
    pub fn i64_at(&self, off: usize) -> i64 {
        self.u64_at(off) as i64
    }

    /// The first non-zero byte among `offs`, as `(offset, value)`.
    pub fn first_nonzero(&self, offs: impl IntoIterator<Item = usize>) -> Option<(usize, u8)> {
        offs.into_iter()
            .map(|o| (o, self.0[o]))
            .find(|&(_, v)| v != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::hex;

    #[test]
    fn hex_is_two_lowercase_digits_per_byte() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0x00, 0x09, 0xab, 0xf0, 0xff]), "0009abf0ff");
    }
}
