//! §6 step 9: the payload's gzip member inflated, bounded (SPEC-NEFF §1.6:
//! the RFC 1952 framing read here, raw DEFLATE by flate2, then the CRC-32 and
//! ISIZE trailer).
//!
//! On a large payload, fresh output pages cost about as much as inflating
//! into them (the kernel zeroes each on its first write: about 100 ms for
//! 320 MB on the development machine, against 80 ms of inflating). So the
//! output is cut into chunks and a helper thread writes to each chunk's pages
//! ahead of the inflater; the inflater takes the next chunk itself when the
//! helper has not reached it, so neither waits for the other.

use flate2::{Crc, Decompress, FlushDecompress, Status};
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::mpsc;

/// Deflate's largest expansion: 258 bytes from about 2 bits.
const MAX_DEFLATE_RATIO: u64 = 1032;
/// FLG bits (RFC 1952 §2.3.1).
const FHCRC: u8 = 1 << 1;
const FEXTRA: u8 = 1 << 2;
const FNAME: u8 = 1 << 3;
const FCOMMENT: u8 = 1 << 4;
const FRESERVED: u8 = 0xE0;
/// The longest FNAME or FCOMMENT accepted (flate2's reader's bound).
const MAX_HEADER_FIELD: usize = 65535;
/// Output chunk: the unit the helper prefaults and the inflater fills.
const CHUNK: usize = 4 << 20;
/// Prefaulted chunks the helper may hold ahead of the inflater: a lying
/// ISIZE trailer cannot make it commit more than this beyond the output.
const AHEAD: usize = 4;
/// The smallest page size of the hosts we run on: one write per page faults it in.
const PAGE: usize = 4096;

/// §6 step 9: inflates the single gzip member at the start of `data` (bytes
/// after its trailer are ignored), checking CRC-32 and ISIZE. Refuses to
/// produce more than `limit` bytes. The error is the detail of "failure while
/// reading NEFF metadata".
pub fn gunzip(data: &[u8], limit: u64) -> Result<Vec<u8>, String> {
    let body = header_len(data)?;
    // One byte beyond the limit tells a payload that exceeds it.
    let cap = limit.saturating_add(1).min(isize::MAX as u64) as usize;
    let mut out = vec![0u8; first_len(data, cap)];
    let mut z = Inflater {
        d: Decompress::new(false),
        input: &data[body..],
        crc: Crc::new(),
        done: false,
    };
    let mut n = fill_chunks(&mut z, &mut out)?;
    // The hint was short of the output: grow up to the cap.
    while !z.done && out.len() < cap {
        out.resize(grown(out.len(), cap), 0);
        n += z.fill(&mut out[n..])?;
    }
    if n as u64 > limit {
        return Err(format!(
            "the payload inflates beyond the limit of {limit} bytes"
        ));
    }
    out.truncate(n);
    let at = z.d.total_in() as usize;
    let trailer = z.input.get(at..at + 8).ok_or_else(eof)?;
    if trailer[..4] != z.crc.sum().to_le_bytes() {
        return Err("gzip CRC mismatch".into());
    }
    if trailer[4..] != (n as u32).to_le_bytes() {
        return Err("gzip ISIZE mismatch".into());
    }
    Ok(out)
}

/// The output buffer's first length: the ISIZE trailer of a payload that is
/// one member, plus the byte that lets the inflater see the stream's end. Only
/// a hint, so bounded by `cap` and by deflate's largest ratio. (Pages of it
/// that are never written cost nothing.)
fn first_len(data: &[u8], cap: usize) -> usize {
    let ratio_bound = (data.len() as u64).saturating_mul(MAX_DEFLATE_RATIO);
    data.last_chunk::<4>()
        .map_or(0, |t| u32::from_le_bytes(*t) as u64 + 1)
        .min(ratio_bound)
        .min(cap as u64) as usize
}

/// The next length of an output buffer of `len` bytes that filled up before
/// the stream ended: doubled, at least a chunk, at most `cap`.
fn grown(len: usize, cap: usize) -> usize {
    len.saturating_mul(2).max(CHUNK).min(cap)
}

fn eof() -> String {
    "gzip: unexpected end of file".into()
}

/// The length of the RFC 1952 header at the start of `data` (FEXTRA, FNAME,
/// FCOMMENT skipped, FHCRC checked); errors as flate2's reader words them.
fn header_len(data: &[u8]) -> Result<usize, String> {
    let h = data.get(..10).ok_or_else(eof)?;
    if h[..3] != [0x1f, 0x8b, 0x08] || h[3] & FRESERVED != 0 {
        return Err("gzip: invalid gzip header".into());
    }
    let flg = h[3];
    let mut at = 10;
    if flg & FEXTRA != 0 {
        let x = data.get(at..at + 2).ok_or_else(eof)?;
        at += 2 + u16::from_le_bytes([x[0], x[1]]) as usize;
        if at > data.len() {
            return Err(eof());
        }
    }
    for field in [FNAME, FCOMMENT] {
        if flg & field != 0 {
            let rest = &data[at..];
            match rest.iter().take(MAX_HEADER_FIELD + 1).position(|&b| b == 0) {
                Some(nul) => at += nul + 1,
                None if rest.len() > MAX_HEADER_FIELD => {
                    return Err("gzip: gzip header field too long".into());
                }
                None => return Err(eof()),
            }
        }
    }
    if flg & FHCRC != 0 {
        let c = data.get(at..at + 2).ok_or_else(eof)?;
        let mut crc = Crc::new();
        crc.update(&data[..at]);
        if u16::from_le_bytes([c[0], c[1]]) != crc.sum() as u16 {
            return Err("gzip CRC mismatch".into());
        }
        at += 2;
    }
    Ok(at)
}

/// The raw DEFLATE stream after the header, inflated piece by piece.
struct Inflater<'a> {
    d: Decompress,
    /// The bytes after the header (the trailer follows the stream in them).
    input: &'a [u8],
    /// CRC-32 of the output so far.
    crc: Crc,
    /// The stream has ended.
    done: bool,
}

impl Inflater<'_> {
    /// Inflates into `out` until it is full or the stream ends; the bytes written.
    fn fill(&mut self, out: &mut [u8]) -> Result<usize, String> {
        let mut n = 0;
        while n < out.len() && !self.done {
            let (i0, o0) = (self.d.total_in(), self.d.total_out());
            let status = self
                .d
                .decompress(
                    &self.input[i0 as usize..],
                    &mut out[n..],
                    FlushDecompress::None,
                )
                .map_err(|_| "gzip: corrupt deflate stream".to_string())?;
            n += (self.d.total_out() - o0) as usize;
            self.done = status == Status::StreamEnd;
            if !self.done && self.d.total_in() == i0 && self.d.total_out() == o0 {
                // No progress with room to write: the input ended mid-stream.
                return Err("gzip: incomplete deflate stream".into());
            }
        }
        self.crc.update(&out[..n]);
        Ok(n)
    }
}

/// Inflates into `out` from its start, chunk by chunk, with a helper thread
/// prefaulting the chunks ahead (see the module's note); the bytes written.
fn fill_chunks(z: &mut Inflater, out: &mut [u8]) -> Result<usize, String> {
    if out.len() <= CHUNK || crate::device::cpu::host_threads() < 2 {
        return z.fill(out);
    }
    let count = out.len().div_ceil(CHUNK);
    // Chunks nobody has taken yet, in order, with their index.
    let fresh: Mutex<VecDeque<(usize, &mut [u8])>> =
        Mutex::new(out.chunks_mut(CHUNK).enumerate().collect());
    let (tx, rx) = mpsc::sync_channel::<(usize, &mut [u8])>(AHEAD);
    std::thread::scope(|s| {
        let fresh = &fresh;
        s.spawn(move || {
            // Takes chunks in order, so it sends them in order.
            while let Some((i, c)) = take_front(fresh) {
                for page in c.chunks_mut(PAGE) {
                    page[0] = 0;
                }
                if tx.send((i, c)).is_err() {
                    return;
                }
            }
        });
        let mut result = Ok(0);
        for want in 0..count {
            let mine = {
                let mut q = fresh.lock().expect("no panic while held");
                match q.front() {
                    Some(&(i, _)) if i == want => q.pop_front(),
                    _ => None,
                }
            };
            // Not in the queue: the helper has taken it and sends it next.
            let (_, c) = mine.unwrap_or_else(|| rx.recv().expect("the helper sends what it takes"));
            match z.fill(c) {
                Ok(k) => result = result.map(|n| n + k),
                Err(e) => result = Err(e),
            }
            if result.is_err() || z.done {
                break;
            }
        }
        // Stop the helper: nothing left to take, nobody to send to.
        fresh.lock().expect("no panic while held").clear();
        drop(rx);
        result
    })
}

fn take_front<'a>(q: &Mutex<VecDeque<(usize, &'a mut [u8])>>) -> Option<(usize, &'a mut [u8])> {
    q.lock().expect("no panic while held").pop_front()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neff::gzip;
    use std::io::{Read, Write};

    /// Repetitive bytes (fast to deflate) with back-references across chunks.
    fn data(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i % 1000) as u8 ^ (i >> 16) as u8).collect()
    }

    /// A small payload (inflated on one thread) and one of several chunks
    /// (inflated beside the prefaulting helper).
    fn payloads() -> [Vec<u8>; 2] {
        [data(100_000), data(3 * CHUNK + 12_345)]
    }

    fn with_isize(z: &[u8], v: u32) -> Vec<u8> {
        let mut z = z.to_vec();
        let n = z.len();
        z[n - 4..].copy_from_slice(&v.to_le_bytes());
        z
    }

    #[test]
    fn round_trip_up_to_the_exact_limit() {
        for d in payloads() {
            let z = gzip(&d);
            let n = d.len() as u64;
            assert!(gunzip(&z, n).unwrap() == d);
            assert!(gunzip(&z, u64::MAX).unwrap() == d);
            let e = gunzip(&z, n - 1).unwrap_err();
            assert_eq!(
                e,
                format!("the payload inflates beyond the limit of {} bytes", n - 1)
            );
        }
    }

    #[test]
    fn a_lying_isize_trailer_is_reported_after_a_full_inflate() {
        for d in payloads() {
            let z = gzip(&d);
            let n = d.len() as u32;
            for lie in [0, 1, n / 2, n - 1, n + 1, 2 * n, u32::MAX] {
                assert_eq!(
                    gunzip(&with_isize(&z, lie), u64::MAX).unwrap_err(),
                    "gzip ISIZE mismatch",
                    "ISIZE {lie} for {n} bytes"
                );
            }
            let mut bad = z.clone();
            let at = bad.len() - 8;
            bad[at] ^= 1;
            assert_eq!(gunzip(&bad, u64::MAX).unwrap_err(), "gzip CRC mismatch");
        }
    }

    #[test]
    fn bytes_after_the_trailer_mislead_the_hint_not_the_result() {
        // The hint reads the last four bytes, here not ISIZE: too small (the
        // buffer grows), too large (it is cut), or anything.
        for d in payloads() {
            let n = d.len() as u64;
            for tail in [[0u8; 4], [0xFF; 4], [1, 0, 0, 0], [0x12, 0x34, 0x56, 0x78]] {
                let mut z = gzip(&d);
                z.extend_from_slice(&tail);
                assert!(gunzip(&z, n).unwrap() == d, "tail {tail:?}");
                assert_eq!(
                    gunzip(&z, n - 1).unwrap_err(),
                    format!("the payload inflates beyond the limit of {} bytes", n - 1)
                );
            }
        }
    }

    #[test]
    fn the_output_buffer_never_exceeds_the_limit_plus_one() {
        let z = gzip(&vec![0u8; 64 << 20]);
        let cap = (16 << 20) + 1;
        assert_eq!(first_len(&z, cap), cap);
        assert_eq!(first_len(&with_isize(&z, u32::MAX), cap), cap);
        // Deflate's ratio bounds a lying trailer on a short payload.
        assert_eq!(first_len(&[0xFF; 10], usize::MAX), 10 * 1032);
        assert_eq!(first_len(&[0xFF; 3], usize::MAX), 0);
        for len in [0, 1, CHUNK, cap - 1, cap] {
            assert!(grown(len, cap) <= cap);
            assert!(len == cap || grown(len, cap) > len);
        }
        let e = gunzip(&with_isize(&z, u32::MAX), 16 << 20).unwrap_err();
        assert!(e.ends_with("beyond the limit of 16777216 bytes"), "{e}");
        let e = gunzip(&with_isize(&z, 7), 16 << 20).unwrap_err();
        assert!(e.ends_with("beyond the limit of 16777216 bytes"), "{e}");
    }

    /// `z` with the FHCRC flag and the header's CRC-16 added.
    fn with_fhcrc(mut z: Vec<u8>) -> Vec<u8> {
        let at = header_len(&z).unwrap();
        z[3] |= FHCRC;
        let mut crc = Crc::new();
        crc.update(&z[..at]);
        z.splice(at..at, (crc.sum() as u16).to_le_bytes());
        z
    }

    fn named(d: &[u8]) -> Vec<u8> {
        let mut w = flate2::GzBuilder::new()
            .filename("model.tar")
            .comment("a comment")
            .extra(vec![1, 2, 3])
            .write(Vec::new(), flate2::Compression::fast());
        w.write_all(d).unwrap();
        w.finish().unwrap()
    }

    #[test]
    fn header_fields_are_skipped_and_checked() {
        let d = data(50_000);
        let z = named(&d);
        assert_eq!(z[3], FEXTRA | FNAME | FCOMMENT);
        assert!(gunzip(&z, u64::MAX).unwrap() == d);
        let h = with_fhcrc(z.clone());
        assert!(gunzip(&h, u64::MAX).unwrap() == d);
        let mut bad = h.clone();
        bad[12] ^= 1; // in FEXTRA: covered by the header CRC
        assert_eq!(gunzip(&bad, u64::MAX).unwrap_err(), "gzip CRC mismatch");
        let mut bad = z.clone();
        bad[3] |= 0x20;
        assert_eq!(
            gunzip(&bad, u64::MAX).unwrap_err(),
            "gzip: invalid gzip header"
        );
        for n in [0, 3, 9, 11, 14, 20] {
            assert_eq!(
                gunzip(&z[..n], u64::MAX).unwrap_err(),
                "gzip: unexpected end of file",
                "{n} bytes"
            );
        }
        let mut long = vec![0x1f, 0x8b, 8, FNAME, 0, 0, 0, 0, 0, 3];
        long.extend(std::iter::repeat_n(b'a', MAX_HEADER_FIELD + 1));
        assert_eq!(
            gunzip(&long, u64::MAX).unwrap_err(),
            "gzip: gzip header field too long"
        );
    }

    #[test]
    fn truncated_and_corrupt_streams() {
        for d in payloads() {
            let z = gzip(&d);
            let n = z.len();
            assert_eq!(
                gunzip(&z[..n / 2], u64::MAX).unwrap_err(),
                "gzip: incomplete deflate stream"
            );
            assert_eq!(
                gunzip(&z[..n - 3], u64::MAX).unwrap_err(),
                "gzip: unexpected end of file"
            );
        }
        // BTYPE 11 (reserved) in the first block.
        let z = [
            0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0x07, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        assert_eq!(
            gunzip(&z, u64::MAX).unwrap_err(),
            "gzip: corrupt deflate stream"
        );
    }

    /// flate2's own gzip reader, as the NEFF reader used it before: the
    /// reference for what inflates and for the errors' wording.
    fn reference(z: &[u8], limit: u64) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        flate2::bufread::GzDecoder::new(z)
            .take(limit.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|e| {
                let s = e.to_string();
                if s.contains("checksum") {
                    // flate2 words both trailer mismatches alike.
                    "gzip CRC or ISIZE mismatch".to_string()
                } else {
                    format!("gzip: {s}")
                }
            })?;
        if out.len() as u64 > limit {
            return Err(format!(
                "the payload inflates beyond the limit of {limit} bytes"
            ));
        }
        Ok(out)
    }

    #[test]
    fn mutants_inflate_as_flate2_s_gzip_reader_does() {
        let mut rng = fastrand::Rng::with_seed(17);
        let mut bases = vec![gzip(&[]), gzip(&data(3000)), named(&data(20_000))];
        bases.push(with_fhcrc(named(&data(700))));
        bases.push(gzip(&data(CHUNK + 5000)));
        for i in 0..3000 {
            let base = &bases[i % bases.len()];
            let mut z = base.clone();
            for _ in 0..rng.usize(1..4) {
                let n = z.len();
                match rng.usize(0..6) {
                    0 => z[rng.usize(..n.min(40))] ^= 1 << rng.u8(0..8),
                    1 => z[n - 1 - rng.usize(..8.min(n))] ^= 1 << rng.u8(0..8),
                    2 => z[rng.usize(..n)] ^= 1 << rng.u8(0..8),
                    3 => z.truncate(rng.usize(1..=n)),
                    4 => z.extend((0..rng.usize(1..9)).map(|_| rng.u8(..))),
                    _ if n > 3 => z[3] = rng.u8(..),
                    _ => {}
                }
            }
            let limit = [rng.u64(0..30_000), u64::MAX][rng.usize(0..2)];
            let got = gunzip(&z, limit).map_err(|e| match e.as_str() {
                "gzip CRC mismatch" | "gzip ISIZE mismatch" => "gzip CRC or ISIZE mismatch".into(),
                _ => e,
            });
            assert!(got == reference(&z, limit), "mutant {i}: {got:?}");
        }
    }
}
