//! The payload layer (SPEC-NEFF §1.5, §1.6, §2.3; §6 steps 8 and 10): the
//! digest, the tar walk, and the writers `pack` uses (inflation is
//! [`super::inflate`]).

use super::fault::{MetadataFault, NumberFault};
use std::io::Write;
use std::ops::Range;

/// The gzip magic and deflate method byte (§6 step 9: `1f 8b 08`).
const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];
/// Tar block size.
const BLOCK: usize = 512;
/// The 18-byte suffix of members the runtime drops (§1.6, §7 C-6).
const SKIPPED_SUFFIX: &str = "wavegraph-bin.json";

/// MD5 of `data` (pkg 2's digest).
pub fn md5(data: &[u8]) -> [u8; 16] {
    use md5::Digest as _;
    md5::Md5::digest(data).into()
}

/// SHA-256 of `data` (pkg 1's digest; also the writer's UUID source, NEFF-EC-13).
pub fn sha256(data: &[u8]) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(data).into()
}

/// NEFF-EC-1: the payload is a gzip member whenever it starts with `1f 8b 08`,
/// whatever `pkg_version` says.
pub fn is_gzip(data: &[u8]) -> bool {
    data.starts_with(&GZIP_MAGIC)
}

/// One stored tar member: its name (leading `./` stripped) and its bytes'
/// range in the tar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The stored name (§1.6: one leading `./` stripped).
    pub name: String,
    /// Byte offset of its 512-byte header in the tar.
    pub header_at: usize,
    /// Its bytes in the tar.
    pub data: Range<usize>,
}

/// The tar walk's result: stored members in archive order (a repeated name
/// keeps only its last occurrence, §6 step 10) and the warnings it gave.
#[derive(Clone, Debug, Default)]
pub struct TarIndex {
    /// Stored members, archive order.
    pub members: Vec<Member>,
    /// Skipped entries and duplicates, one line each.
    pub warnings: Vec<String>,
}

fn field_str(f: &[u8]) -> &[u8] {
    let end = f.iter().position(|&b| b == 0).unwrap_or(f.len());
    &f[..end]
}

/// An octal field (leading spaces, trailing NUL/space allowed) or GNU base-256.
fn number(f: &[u8]) -> Result<u64, NumberFault> {
    if f.first().is_some_and(|&b| b & 0x80 != 0) {
        if f[0] & 0x40 != 0 {
            return Err(NumberFault::Negative);
        }
        let mut v: u64 = (f[0] & 0x3F) as u64;
        for &b in &f[1..] {
            v = v
                .checked_mul(256)
                .and_then(|v| v.checked_add(b as u64))
                .ok_or(NumberFault::TooLarge)?;
        }
        return Ok(v);
    }
    let s = field_str(f);
    let s: Vec<u8> = s
        .iter()
        .copied()
        .skip_while(|&b| b == b' ')
        .take_while(|&b| b != b' ')
        .collect();
    if s.is_empty() {
        return Ok(0);
    }
    let mut v = 0u64;
    for b in s {
        if !(b'0'..=b'7').contains(&b) {
            return Err(NumberFault::NotOctal);
        }
        v = v
            .checked_mul(8)
            .and_then(|v| v.checked_add((b - b'0') as u64))
            .ok_or(NumberFault::TooLarge)?;
    }
    Ok(v)
}

/// The standard ustar checksum: every byte, the chksum field counted as spaces.
fn checksum(h: &[u8]) -> u64 {
    h.iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                b as u64
            }
        })
        .sum()
}

/// Applies a pax extended header's `path` and `size` records.
fn pax(data: &[u8], path: &mut Option<String>, size: &mut Option<u64>) {
    let mut rest = data;
    while !rest.is_empty() {
        let Some(sp) = rest.iter().position(|&b| b == b' ') else {
            return;
        };
        let Some(n) = std::str::from_utf8(&rest[..sp])
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
        else {
            return;
        };
        if n <= sp || n > rest.len() {
            return;
        }
        let rec = &rest[sp + 1..n];
        let rec = rec.strip_suffix(b"\n").unwrap_or(rec);
        if let Some(eq) = rec.iter().position(|&b| b == b'=') {
            let (k, v) = (&rec[..eq], &rec[eq + 1..]);
            match k {
                b"path" => *path = Some(String::from_utf8_lossy(v).into_owned()),
                b"size" => {
                    *size = std::str::from_utf8(v).ok().and_then(|s| s.parse().ok());
                }
                _ => {}
            }
        }
        rest = &rest[n..];
    }
}

/// §6 step 10: walks a ustar / pax / GNU tar held in `tar`. Errors are the
/// detail of "failure while reading NEFF metadata".
pub fn walk(tar: &[u8]) -> Result<TarIndex, MetadataFault> {
    let mut w = TarWalk::new(u64::MAX);
    w.advance(tar, true)?;
    w.finish(tar.len() as u64)
}

/// §6 step 10 as the tar arrives ([`super::inflate`] hands it over a piece
/// at a time): the walk [`walk`] makes, told as soon as it is decided how
/// much of the tar it can ever read, so that the bytes past that point need
/// not be kept. Its result is [`walk`]'s on the whole tar.
#[derive(Debug)]
pub(crate) struct TarWalk {
    /// The most bytes the whole tar may have (the inflation limit).
    bound: u64,
    /// The next header's offset.
    pos: usize,
    /// A pax `path` or GNU `L` name for the next entry.
    next_path: Option<String>,
    /// A pax `size` for the next entry.
    next_size: Option<u64>,
    /// Stored members by name; a replaced one becomes None (archive order kept).
    kept: Vec<Option<Member>>,
    by_name: std::collections::HashMap<String, usize>,
    warnings: Vec<String>,
    state: WalkState,
}

#[derive(Debug)]
enum WalkState {
    /// More headers may follow.
    Walking,
    /// The end of the archive (a zero block, or the end of the bytes).
    Ended,
    /// A header's error, decided by its bytes alone.
    Failed(MetadataFault),
    /// A member whose declared end lies past `bound`: the tar either exceeds
    /// the limit (inflation fails first) or ends inside it (this error, once
    /// the tar's length is known).
    Truncated {
        name: String,
        start: usize,
        size: u64,
    },
}

/// A failed allocation while walking: an error, not an abort.
fn no_room<E>(_: E) -> MetadataFault {
    MetadataFault::TarMemory
}

impl TarWalk {
    /// A walk of a tar that has at most `bound` bytes.
    pub(crate) fn new(bound: u64) -> TarWalk {
        TarWalk {
            bound,
            pos: 0,
            next_path: None,
            next_size: None,
            kept: Vec::new(),
            by_name: std::collections::HashMap::new(),
            warnings: Vec::new(),
            state: WalkState::Walking,
        }
    }

    /// Walks on over `tar`, the first bytes of the archive (`whole`: all of
    /// it). Returns the length past which no byte can change the result, once
    /// that is decided: the offset of the end-of-archive block, or of the
    /// header that failed. An error only where memory ran out.
    pub(crate) fn advance(
        &mut self,
        tar: &[u8],
        whole: bool,
    ) -> Result<Option<usize>, MetadataFault> {
        while let WalkState::Walking = self.state {
            let pos = self.pos;
            if pos.saturating_add(BLOCK) > tar.len() {
                if whole {
                    self.state = WalkState::Ended;
                }
                break;
            }
            match self.entry(&tar[pos..], pos, whole)? {
                Some(next) => self.state = next,
                // The entry's data is still to come.
                None => break,
            }
        }
        Ok(match self.state {
            WalkState::Walking => None,
            _ => Some(self.pos.min(tar.len())),
        })
    }

    /// One entry whose header starts `rest` (at byte `pos` of the tar): the
    /// next state (Walking again once the entry is taken), or None while its
    /// data is still to come.
    fn entry(
        &mut self,
        rest: &[u8],
        pos: usize,
        whole: bool,
    ) -> Result<Option<WalkState>, MetadataFault> {
        let h = &rest[..BLOCK];
        if h.iter().all(|&b| b == 0) {
            return Ok(Some(WalkState::Ended));
        }
        match number(&h[148..156]) {
            Ok(stored) if stored == checksum(h) => {}
            _ => {
                return Ok(Some(WalkState::Failed(MetadataFault::TarChecksum(pos))));
            }
        }
        let magic = &h[257..263];
        let mut name = String::from_utf8_lossy(field_str(&h[0..100])).into_owned();
        if magic == b"ustar\0" {
            let prefix = field_str(&h[345..500]);
            if !prefix.is_empty() {
                name = format!("{}/{name}", String::from_utf8_lossy(prefix));
            }
        }
        let size = match number(&h[124..136]) {
            Ok(s) => s,
            Err(why) => {
                return Ok(Some(WalkState::Failed(MetadataFault::TarSize {
                    name,
                    at: pos,
                    why,
                })));
            }
        };
        let size = self.next_size.unwrap_or(size);
        if let Some(p) = &self.next_path {
            name.clone_from(p);
        }
        let start = pos + BLOCK;
        let avail = (rest.len() - BLOCK) as u64;
        if size > avail {
            // The data is not all here: the tar is short (an error), or the
            // data is still to come, or it would pass the bound.
            return Ok(if whole {
                Some(WalkState::Failed(MetadataFault::Truncated {
                    name,
                    avail,
                    size,
                }))
            } else if size > self.bound.saturating_sub(start as u64) {
                Some(WalkState::Truncated { name, start, size })
            } else {
                None
            });
        }
        // Taken: the pax and GNU names apply to this entry only.
        self.next_size = None;
        self.next_path = None;
        let end = start + size as usize;
        let data = &rest[BLOCK..BLOCK + size as usize];
        match h[156] {
            b'x' => pax(data, &mut self.next_path, &mut self.next_size),
            b'g' | b'K' => {}
            b'L' => self.next_path = Some(String::from_utf8_lossy(field_str(data)).into_owned()),
            b'5' => {}
            b'0' | 0 | b'7' => {
                let name = name.strip_prefix("./").unwrap_or(&name).to_string();
                if !name.ends_with(SKIPPED_SUFFIX) {
                    self.kept.try_reserve(1).map_err(no_room)?;
                    self.by_name.try_reserve(1).map_err(no_room)?;
                    if let Some(i) = self.by_name.insert(name.clone(), self.kept.len()) {
                        self.warn(format!(
                            "duplicate NEFF member {name}: the last one is used"
                        ))?;
                        self.kept[i] = None;
                    }
                    self.kept.push(Some(Member {
                        name,
                        header_at: pos,
                        data: start..end,
                    }));
                }
            }
            t => self.warn(format!(
                "skipped tar entry {name} (typeflag {:?})",
                t as char
            ))?,
        }
        // Past the tar's end when it ends inside this entry's padding: the
        // next `advance` on the whole tar then ends the walk.
        self.pos = end.next_multiple_of(BLOCK);
        Ok(Some(WalkState::Walking))
    }

    fn warn(&mut self, w: String) -> Result<(), MetadataFault> {
        self.warnings.try_reserve(1).map_err(no_room)?;
        self.warnings.push(w);
        Ok(())
    }

    /// The walk's result, once the tar's length `len` is known and the walk
    /// has had every byte it asked for ([`TarWalk::advance`] on the whole
    /// tar, or until it returned a length).
    pub(crate) fn finish(self, len: u64) -> Result<TarIndex, MetadataFault> {
        if len == 0 {
            return Err(MetadataFault::EmptyPayload);
        }
        match self.state {
            WalkState::Walking | WalkState::Ended => Ok(TarIndex {
                members: self.kept.into_iter().flatten().collect(),
                warnings: self.warnings,
            }),
            WalkState::Failed(e) => Err(e),
            WalkState::Truncated { name, start, size } => {
                let avail = len.saturating_sub(start as u64);
                Err(MetadataFault::Truncated { name, avail, size })
            }
        }
    }
}

/// Writes `v` in octal into `f`, zero-padded to fill all but the last byte,
/// which is NUL (NEFF-EC-13).
fn octal(f: &mut [u8], v: u64) {
    let w = f.len() - 1;
    let s = format!("{v:0w$o}");
    f[..w].copy_from_slice(&s.as_bytes()[s.len() - w..]);
    f[w] = 0;
}

/// NEFF-EC-13: a GNU tar of `members` in the given order: regular files,
/// mode 0000644, uid/gid 0, uname/gname "nobody", mtime 0, two zero blocks,
/// padded to a multiple of 10240 bytes. Names must be at most 100 bytes.
pub fn write_tar(members: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, data) in members {
        let mut h = [0u8; BLOCK];
        let n = name.len().min(100);
        h[..n].copy_from_slice(&name.as_bytes()[..n]);
        octal(&mut h[100..108], 0o644);
        octal(&mut h[108..116], 0);
        octal(&mut h[116..124], 0);
        octal(&mut h[124..136], data.len() as u64);
        octal(&mut h[136..148], 0);
        h[156] = b'0';
        h[257..263].copy_from_slice(b"ustar ");
        h[263..265].copy_from_slice(b" \0");
        h[265..271].copy_from_slice(b"nobody");
        h[297..303].copy_from_slice(b"nobody");
        let sum = format!("{:06o}", checksum(&h));
        h[148..154].copy_from_slice(sum.as_bytes());
        h[154] = 0;
        h[155] = b' ';
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        out.resize(out.len().next_multiple_of(BLOCK), 0);
    }
    out.resize(out.len() + 2 * BLOCK, 0);
    out.resize(out.len().next_multiple_of(10240), 0);
    out
}

/// NEFF-EC-13: one gzip member with the header `1f 8b 08 00 00000000 00 03`,
/// deflate level 6, and the CRC-32 / ISIZE trailer.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0x03];
    let mut enc = flate2::write::DeflateEncoder::new(out, flate2::Compression::new(6));
    enc.write_all(data).expect("writing to a Vec");
    out = enc.finish().expect("writing to a Vec");
    let mut crc = flate2::Crc::new();
    crc.update(data);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // The assertions below are on the messages, as the reader prints them.

    /// [`crate::neff::gunzip`], its error as text.
    fn gunzip(data: &[u8], limit: u64) -> Result<Vec<u8>, String> {
        crate::neff::gunzip(data, limit).map_err(|e| e.to_string())
    }

    /// [`super::walk`], its error as text.
    fn walk(tar: &[u8]) -> Result<TarIndex, String> {
        super::walk(tar).map_err(|e| e.to_string())
    }

    #[test]
    fn md5_of_abc() {
        // RFC 1321 test suite: MD5("abc").
        let want = "900150983cd24fb0d6963f7d28e17f72";
        let got: String = md5(b"abc").iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn sha256_of_abc() {
        // FIPS 180-2 example: SHA-256("abc").
        let want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        let got: String = sha256(b"abc").iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn gnu_header_bytes() {
        let t = write_tar(&[("a".into(), b"xyz".to_vec())]);
        assert_eq!(t.len(), 10240);
        assert_eq!(&t[100..108], b"0000644\0");
        assert_eq!(&t[124..136], b"00000000003\0");
        assert_eq!(&t[257..265], b"ustar  \0");
        assert_eq!(t[154], 0);
        assert_eq!(t[155], b' ');
        assert_eq!(&t[512..515], b"xyz");
        let idx = walk(&t).unwrap();
        assert_eq!(idx.members.len(), 1);
        assert_eq!(idx.members[0].data, 512..515);
    }

    #[test]
    fn gzip_round_trip_and_limit() {
        let data = vec![7u8; 100_000];
        let z = gzip(&data);
        assert_eq!(&z[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
        assert_eq!(gunzip(&z, 100_000).unwrap(), data);
        let e = gunzip(&z, 99_999).unwrap_err();
        assert!(e.contains("beyond the limit of 99999 bytes"), "{e}");
        let mut bad = z.clone();
        let n = bad.len();
        bad[n - 8] ^= 1;
        assert_eq!(gunzip(&bad, 1 << 20).unwrap_err(), "gzip CRC mismatch");
    }

    #[test]
    fn base256_and_negative_sizes() {
        let mut f = [0u8; 12];
        f[0] = 0x80;
        f[11] = 5;
        assert_eq!(number(&f), Ok(5));
        f[0] = 0xFF;
        assert_eq!(number(&f), Err(NumberFault::Negative));
        assert_eq!(NumberFault::Negative.to_string(), "negative");
        assert_eq!(number(b"0000644 \0"), Ok(0o644));
    }

    /// A header block for `name` of `size` bytes and type `flag`.
    fn header(name: &str, size: u64, flag: u8) -> Vec<u8> {
        let mut h = vec![0u8; BLOCK];
        h[..name.len()].copy_from_slice(name.as_bytes());
        octal(&mut h[124..136], size);
        h[156] = flag;
        h[257..263].copy_from_slice(b"ustar ");
        let sum = format!("{:06o}", checksum(&h));
        h[148..154].copy_from_slice(sum.as_bytes());
        h
    }

    /// A tar with a repeated name, a pax-named member, a GNU long name, a
    /// directory and an unknown type.
    fn sample() -> Vec<u8> {
        let rec = "path=long/name.bin\n";
        let rec = format!("{} {rec}", rec.len() + 3);
        let mut t = Vec::new();
        for (name, data, flag) in [
            ("a.json", &b"{}"[..], b'0'),
            ("b.bin", &[7; 700][..], b'0'),
            ("a.json", &[1; 1500][..], b'0'),
            ("pax", rec.as_bytes(), b'x'),
            ("x.bin", &b"pax-named"[..], b'0'),
            ("././@LongLink", &b"gnu/long.bin\0"[..], b'L'),
            ("y.bin", &b"L-named"[..], b'0'),
            ("dir/", &b""[..], b'5'),
            ("odd", &b"?"[..], b'Z'),
        ] {
            t.extend(header(name, data.len() as u64, flag));
            t.extend_from_slice(data);
            t.resize(t.len().next_multiple_of(BLOCK), 0);
        }
        t.resize(t.len() + 2 * BLOCK, 0);
        t.resize(t.len().next_multiple_of(10240), 0);
        t
    }

    /// The walk as `gunzip`'s caller makes it: prefixes `step` bytes longer
    /// each time until the walk has what it needs, then the kept bytes.
    fn in_pieces(tar: &[u8], step: usize, bound: u64) -> Result<TarIndex, String> {
        let mut w = TarWalk::new(bound);
        let mut kept = tar.len();
        let mut k = 0;
        while k < tar.len() {
            k = (k + step).min(tar.len());
            if let Some(end) = w.advance(&tar[..k], false).map_err(|e| e.to_string())? {
                kept = end.min(k);
                break;
            }
        }
        w.advance(&tar[..kept], kept == tar.len())
            .map_err(|e| e.to_string())?;
        w.finish(tar.len() as u64).map_err(|e| e.to_string())
    }

    fn same(a: &Result<TarIndex, String>, b: &Result<TarIndex, String>) -> bool {
        match (a, b) {
            (Ok(a), Ok(b)) => a.members == b.members && a.warnings == b.warnings,
            (Err(a), Err(b)) => a == b,
            _ => false,
        }
    }

    #[test]
    fn the_walk_in_pieces_is_the_walk_of_the_whole() {
        let base = sample();
        let whole = walk(&base).unwrap();
        let names: Vec<&str> = whole.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["b.bin", "a.json", "long/name.bin", "gnu/long.bin"]);
        assert_eq!(whole.warnings.len(), 2, "{:?}", whole.warnings);
        let mut rng = fastrand::Rng::with_seed(31);
        for i in 0..2000 {
            let mut t = base.clone();
            match i % 4 {
                0 => {}
                1 => {
                    let at = rng.usize(..t.len());
                    t[at] ^= 1 << rng.u8(0..8);
                }
                2 => t.truncate(rng.usize(..=t.len())),
                _ => {
                    // A size past everything, its checksum fixed: the walk
                    // stops there (at the bound, before the data comes).
                    let h = BLOCK * rng.usize(..t.len() / BLOCK);
                    octal(&mut t[h + 124..h + 136], rng.u64(1 << 20..1 << 33));
                    let sum = format!("{:06o}", checksum(&t[h..h + BLOCK]));
                    t[h + 148..h + 154].copy_from_slice(sum.as_bytes());
                }
            }
            let want = walk(&t);
            // A byte at a time on some mutants only (a walk per byte).
            let one = if i % 50 == 0 { 1 } else { 97 };
            for step in [one, 511, 512, 513, 4096, t.len().max(1)] {
                for bound in [t.len() as u64, t.len() as u64 + 1000, u64::MAX] {
                    let got = in_pieces(&t, step, bound);
                    assert!(
                        same(&got, &want),
                        "mutant {i} step {step} bound {bound}: {got:?} {want:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_member_past_the_bound_ends_the_walk_at_its_header() {
        let mut t = header("big", 5 << 30, b'0');
        t.extend(vec![0u8; 3000]);
        let mut w = TarWalk::new(4 << 30);
        // Decided by the header alone: nothing past it is needed.
        assert_eq!(w.advance(&t[..BLOCK], false), Ok(Some(0)));
        assert_eq!(
            w.finish(1 << 20).unwrap_err().to_string(),
            format!(
                "member big truncated ({} of {} bytes)",
                (1 << 20) - 512,
                5u64 << 30
            )
        );
        // Within the bound, the walk waits for the data.
        let mut w = TarWalk::new(u64::MAX);
        assert_eq!(w.advance(&t[..BLOCK], false), Ok(None));
        // The end of the archive is where the zero block starts.
        let t = write_tar(&[("a".into(), vec![1; 10])]);
        let mut w = TarWalk::new(u64::MAX);
        assert_eq!(w.advance(&t[..2048], false), Ok(Some(1024)));
        assert_eq!(walk(&[]).unwrap_err(), "empty payload");
    }
}
