//! Record streams: flat arrays of 64-byte records, no framing (SPEC §1).

use super::record::Record;
use crate::limits::RECORD_BYTES;

/// A byte string that is not a record stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    /// The length is not a multiple of 64.
    #[error(
        "stream length {len} bytes is not a multiple of 64 ({} whole records and {} bytes left over)",
        len / RECORD_BYTES,
        len % RECORD_BYTES
    )]
    Length {
        /// The length in bytes.
        len: usize,
    },
}

/// The records of a stream with their byte offsets. EC-32: a bare stream
/// needs no terminator record; its end ends the engine's program.
pub fn records(bytes: &[u8]) -> Result<impl Iterator<Item = (usize, Record)> + '_, StreamError> {
    if !bytes.len().is_multiple_of(RECORD_BYTES) {
        return Err(StreamError::Length { len: bytes.len() });
    }
    Ok(bytes.chunks_exact(RECORD_BYTES).enumerate().map(|(i, c)| {
        (
            i * RECORD_BYTES,
            Record(c.try_into().expect("64-byte chunk")),
        )
    }))
}

/// Concatenates records into a stream.
pub fn to_bytes<'a>(recs: impl IntoIterator<Item = &'a Record>) -> Vec<u8> {
    recs.into_iter().flat_map(|r| r.0).collect()
}
