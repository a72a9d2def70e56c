//! §6 step 9: the payload's gzip member inflated, bounded (SPEC-NEFF §1.6:
//! the RFC 1952 framing read here, raw DEFLATE by flate2, then the CRC-32 and
//! ISIZE trailer).
//!
//! The output grows as it is inflated, and the limit is enforced as it
//! grows: the trailer's ISIZE (which any file may claim) is only checked at
//! the end and never sizes anything. The output lives in an anonymous
//! mapping reserved at the most it may reach (the limit, or deflate's largest
//! ratio times the input): address space only, whose pages cost memory once
//! written, so it grows without copies and a failed reservation is an error,
//! not an abort. The caller says, as the output grows, how much of it it can
//! ever read (the tar walk: up to the end of the archive); the rest is only
//! inflated, checked and counted, so a gzip bomb costs time, not memory.
//!
//! On a large payload, fresh output pages cost about as much as inflating
//! into them (the kernel zeroes each on its first write: about 100 ms for
//! 320 MB on the development machine, against 80 ms of inflating). So the
//! output is cut into chunks and a helper thread writes to each chunk's pages
//! ahead of the inflater; the inflater takes the next chunk itself when the
//! helper has not reached it, so neither waits for the other. (Transparent
//! huge pages are not asked for: a fresh process's first touch of them can
//! stall on compaction, docs/neff.md.)

use super::fault::MetadataFault;
use flate2::{Crc, Decompress, FlushDecompress, Status};
use memmap2::{MmapMut, MmapOptions};
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
/// Prefaulted chunks the helper may hold ahead of the inflater: it cannot
/// commit more than this beyond the output.
const AHEAD: usize = 4;
/// The smallest page size of the hosts we run on: one write per page faults it in.
const PAGE: usize = 4096;
/// The most output inflated between two looks of the caller at it: what
/// may be kept beyond the end the caller reads (a bomb's first window).
/// Windows start at a chunk and double up to this.
const MAX_WINDOW: usize = 16 * CHUNK;

/// The inflated payload: the bytes kept (all of them, or the first ones the
/// caller asked for) and the length of the whole output.
pub(crate) struct Inflated {
    map: MmapMut,
    len: usize,
    total: u64,
}

impl Inflated {
    /// The length of the whole output (what ISIZE was checked against).
    pub(crate) fn total(&self) -> u64 {
        self.total
    }
}

impl AsRef<[u8]> for Inflated {
    fn as_ref(&self) -> &[u8] {
        &self.map[..self.len]
    }
}

/// The error of a failed allocation of `n` bytes (exit 4 with the file's name).
fn no_memory(n: usize) -> MetadataFault {
    MetadataFault::InflateMemory(n)
}

/// §6 step 9: inflates the single gzip member at the start of `data` (bytes
/// after its trailer are ignored), checking CRC-32 and ISIZE. Refuses to
/// produce more than `limit` bytes. The error is the detail of "failure while
/// reading NEFF metadata".
pub fn gunzip(data: &[u8], limit: u64) -> Result<Vec<u8>, MetadataFault> {
    let z = inflate(data, limit, usize::MAX, |_| Ok(None))?;
    let mut out = Vec::new();
    out.try_reserve_exact(z.len).map_err(|_| no_memory(z.len))?;
    out.extend_from_slice(z.as_ref());
    Ok(out)
}

/// [`gunzip`], keeping only what the caller reads: after each window of
/// output, `keep` sees the output so far and may answer the length past
/// which it needs nothing (it is asked until it answers). Bytes past that
/// are inflated, checked and counted, not kept. `reserve` bounds the first
/// reservation (tests use it to make the output grow by copying).
pub(crate) fn inflate(
    data: &[u8],
    limit: u64,
    reserve: usize,
    mut keep: impl FnMut(&[u8]) -> Result<Option<usize>, MetadataFault>,
) -> Result<Inflated, MetadataFault> {
    let body = header_len(data)?;
    // One byte beyond the limit tells a payload that exceeds it.
    let cap = limit.saturating_add(1).min(isize::MAX as u64) as usize;
    // Deflate's ratio bounds the output (the reservation only: past it, the
    // output grows by copying).
    let ratio_bound = (data.len() as u64).saturating_mul(MAX_DEFLATE_RATIO);
    let mut out = Output::reserve((ratio_bound.min(cap as u64) as usize).min(reserve))?;
    let mut z = Inflater {
        d: Decompress::new(false),
        input: &data[body..],
        crc: Crc::new(),
        done: false,
    };
    // Bytes in the mapping, and the length past which none is needed.
    let mut n = 0;
    let mut wanted: Option<usize> = None;
    let mut window = CHUNK;
    while !z.done && n < cap && wanted.is_none_or(|w| n < w) {
        if n == out.map.len() {
            out.grow(n, cap)?;
        }
        let end = (n + window)
            .min(out.map.len())
            .min(cap)
            .min(wanted.unwrap_or(usize::MAX));
        n += fill_chunks(&mut z, &mut out.map[n..end])?;
        window = (2 * window).min(MAX_WINDOW);
        if wanted.is_none() {
            wanted = keep(&out.map[..n])?;
        }
    }
    // The rest is only inflated, checked and counted.
    let mut total = n as u64;
    if !z.done && total < cap as u64 {
        let mut scratch = vec![0u8; CHUNK];
        while !z.done && total < cap as u64 {
            let room = (cap as u64 - total).min(CHUNK as u64) as usize;
            total += z.fill(&mut scratch[..room])? as u64;
        }
    }
    if total > limit {
        return Err(MetadataFault::InflateLimit(limit));
    }
    let at = z.d.total_in() as usize;
    let trailer = z.input.get(at..at + 8).ok_or_else(eof)?;
    if trailer[..4] != z.crc.sum().to_le_bytes() {
        return Err(MetadataFault::GzipCrc);
    }
    if trailer[4..] != (total as u32).to_le_bytes() {
        return Err(MetadataFault::GzipIsize);
    }
    let len = wanted.map_or(n, |w| w.min(n));
    Ok(Inflated {
        map: out.trimmed(len),
        len,
        total,
    })
}

/// The output's mapping.
struct Output {
    map: MmapMut,
}

impl Output {
    /// A mapping of `len` bytes. Where the host refuses that much address
    /// space (`ulimit -v`), a mapping of at most [`MAX_WINDOW`] bytes (down
    /// to a chunk), which the output grows past by copying
    /// ([`Output::grow`]): the rest of the address space stays to the rest
    /// of the run.
    fn reserve(len: usize) -> Result<Output, MetadataFault> {
        let mut want = len;
        loop {
            match anon(want) {
                Ok(map) => return Ok(Output { map }),
                Err(_) if want > CHUNK => want = (want / 2).clamp(CHUNK, MAX_WINDOW),
                Err(_) => return Err(no_memory(len)),
            }
        }
    }

    /// The first `len` bytes, in a mapping of their size when this one is
    /// much larger and they are few (a copy of a few MiB gives back the
    /// rest of the reservation's address space); larger outputs keep theirs.
    fn trimmed(self, len: usize) -> MmapMut {
        if len <= MAX_WINDOW
            && len < self.map.len() / 2
            && let Ok(mut map) = anon(len)
        {
            map[..len].copy_from_slice(&self.map[..len]);
            return map;
        }
        self.map
    }

    /// A larger mapping (double, at most `cap` bytes) holding the first `n`
    /// bytes of this one.
    fn grow(&mut self, n: usize, cap: usize) -> Result<(), MetadataFault> {
        let len = self.map.len().saturating_mul(2).max(CHUNK).min(cap);
        let mut map = anon(len).map_err(|_| no_memory(len))?;
        map[..n].copy_from_slice(&self.map[..n]);
        self.map = map;
        Ok(())
    }
}

/// An anonymous mapping of `len` bytes: address space, zero pages on first
/// write, no swap reserved for pages never written.
fn anon(len: usize) -> std::io::Result<MmapMut> {
    MmapOptions::new()
        .len(len.max(1))
        .no_reserve_swap()
        .map_anon()
}

fn eof() -> MetadataFault {
    MetadataFault::GzipEof
}

/// The length of the RFC 1952 header at the start of `data` (FEXTRA, FNAME,
/// FCOMMENT skipped, FHCRC checked); errors as flate2's reader words them.
fn header_len(data: &[u8]) -> Result<usize, MetadataFault> {
    let h = data.get(..10).ok_or_else(eof)?;
    if h[..3] != [0x1f, 0x8b, 0x08] || h[3] & FRESERVED != 0 {
        return Err(MetadataFault::GzipHeader);
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
                    return Err(MetadataFault::GzipField);
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
            return Err(MetadataFault::GzipCrc);
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
    fn fill(&mut self, out: &mut [u8]) -> Result<usize, MetadataFault> {
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
                .map_err(|_| MetadataFault::GzipCorrupt)?;
            n += (self.d.total_out() - o0) as usize;
            self.done = status == Status::StreamEnd;
            if !self.done && self.d.total_in() == i0 && self.d.total_out() == o0 {
                // No progress with room to write: the input ended mid-stream.
                return Err(MetadataFault::GzipIncomplete);
            }
        }
        self.crc.update(&out[..n]);
        Ok(n)
    }
}

/// Inflates into `out` from its start, chunk by chunk, with a helper thread
/// prefaulting the chunks ahead (see the module's note); the bytes written.
fn fill_chunks(z: &mut Inflater, out: &mut [u8]) -> Result<usize, MetadataFault> {
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

    // The assertions below are on the messages, as the reader prints them.

    /// [`super::gunzip`], its error as text.
    fn gunzip(data: &[u8], limit: u64) -> Result<Vec<u8>, String> {
        super::gunzip(data, limit).map_err(|e| e.to_string())
    }

    /// [`super::inflate`], its error as text.
    fn inflate(
        data: &[u8],
        limit: u64,
        reserve: usize,
        keep: impl FnMut(&[u8]) -> Result<Option<usize>, MetadataFault>,
    ) -> Result<Inflated, String> {
        super::inflate(data, limit, reserve, keep).map_err(|e| e.to_string())
    }

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
    fn bytes_after_the_trailer_change_nothing() {
        // The last four bytes of the data, here not ISIZE, size nothing:
        // small, large or anything.
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
        let limit = 16 << 20;
        for isize in [64 << 20, u32::MAX, 7] {
            let e = inflate(&with_isize(&z, isize), limit, usize::MAX, |_| Ok(None))
                .err()
                .unwrap();
            assert!(e.ends_with("beyond the limit of 16777216 bytes"), "{e}");
        }
        // The reservation is the limit (plus the byte that tells), not ISIZE.
        let ok = inflate(&z, 64 << 20, usize::MAX, |_| Ok(None)).unwrap();
        assert_eq!(ok.map.len(), (64 << 20) + 1);
        assert_eq!((ok.len, ok.total), (64 << 20, 64 << 20));
    }

    #[test]
    fn a_lying_isize_never_sizes_the_output() {
        // Ten bytes that claim 4 GiB: the reservation follows deflate's
        // ratio on the input, and the lie is found at the end.
        let d = b"0123456789";
        let z = with_isize(&gzip(d), u32::MAX);
        let r = (z.len() as u64 * MAX_DEFLATE_RATIO) as usize;
        let mut seen = 0;
        let e = inflate(&z, u64::MAX, usize::MAX, |b| {
            seen = b.len();
            Ok(None)
        })
        .err()
        .unwrap();
        assert_eq!(e, "gzip ISIZE mismatch");
        assert_eq!(seen, 10);
        let ok = inflate(&gzip(d), u64::MAX, usize::MAX, |_| Ok(None)).unwrap();
        assert!(ok.map.len() <= r, "{} > {r}", ok.map.len());
        assert_eq!(ok.as_ref(), d);
        // A few bytes keep a mapping of their size.
        assert_eq!(ok.map.len(), 10);
    }

    #[test]
    fn the_output_grows_by_copying_past_a_short_reservation() {
        for d in payloads() {
            let z = gzip(&d);
            for reserve in [1, 4096, CHUNK + 1] {
                let got = inflate(&z, u64::MAX, reserve, |_| Ok(None)).unwrap();
                assert!(got.as_ref() == &d[..], "reserve {reserve}");
                assert_eq!(got.total(), d.len() as u64);
            }
            let e = inflate(&z, d.len() as u64 - 1, 1, |_| Ok(None))
                .err()
                .unwrap();
            assert!(e.contains("beyond the limit"), "{e}");
        }
    }

    #[test]
    fn bytes_past_what_the_caller_reads_are_counted_not_kept() {
        // A bomb: 40 MiB of zeros, of which the caller reads 1000 bytes.
        let n = 40 << 20;
        let z = gzip(&vec![0u8; n]);
        let mut looks = Vec::new();
        let got = inflate(&z, u64::MAX, usize::MAX, |b| {
            looks.push(b.len());
            Ok(Some(1000))
        })
        .unwrap();
        // One look, after the first window (a chunk): nothing more was kept.
        assert_eq!(looks, [CHUNK]);
        assert_eq!((got.as_ref().len(), got.total()), (1000, n as u64));
        // The limit, the CRC and ISIZE still hold over the whole output.
        let e = inflate(&z, n as u64 - 1, usize::MAX, |_| Ok(Some(0)))
            .err()
            .unwrap();
        assert!(
            e.ends_with(&format!("beyond the limit of {} bytes", n - 1)),
            "{e}"
        );
        let mut bad = z.clone();
        let at = bad.len() - 8;
        bad[at] ^= 1;
        let e = inflate(&bad, u64::MAX, usize::MAX, |_| Ok(Some(0)))
            .err()
            .unwrap();
        assert_eq!(e, "gzip CRC mismatch");
        let e = inflate(&with_isize(&z, 5), u64::MAX, usize::MAX, |_| Ok(Some(0)))
            .err()
            .unwrap();
        assert_eq!(e, "gzip ISIZE mismatch");
        // An answer past the output keeps what there is.
        let got = inflate(&gzip(b"abc"), u64::MAX, usize::MAX, |_| Ok(Some(1 << 20))).unwrap();
        assert_eq!(got.as_ref(), b"abc");
        // The caller's error stops the inflation.
        let e = inflate(&z, u64::MAX, usize::MAX, |_| Err(MetadataFault::TarMemory))
            .err()
            .unwrap();
        assert_eq!(e, MetadataFault::TarMemory.to_string());
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
