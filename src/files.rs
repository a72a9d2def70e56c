//! Files in and out, safely: bounded reading, the path-collision check and
//! atomic outputs. This module depends on nothing but `std` and
//! [`crate::limits`]; every reader and writer of the crate goes through it.
//!
//! - [`read_bounded`] reads a whole file, refusing one larger than a limit
//!   *before* allocating for it (regular files: by their size; anything else,
//!   such as `/dev/zero` or a FIFO: by reading at most `limit + 1` bytes), and
//!   refusing rather than aborting when memory runs out. [`input_limit`] is the
//!   limit in force: [`MAX_INPUT_BYTES`] unless the environment variable
//!   [`INPUT_LIMIT_ENV`] or [`set_input_limit`] (the CLI's `--max-input-bytes`)
//!   says otherwise.
//! - [`check_distinct`] refuses an output path that is an input path or
//!   another output path, after resolving symlinks and `..` (outputs that do
//!   not exist yet are resolved through their nearest existing ancestor).
//! - [`sink`] is the output policy, one for every writer: a regular file (or
//!   a new one) is replaced through a temporary file renamed into place; a
//!   symlink is followed and its target written that way (the link stays); a
//!   FIFO, a character device or the standard output (`-`) is written in
//!   place, streamed; anything else (a folder, a block device, a socket) is
//!   refused.
//! - [`Outputs`] is a transaction over that policy: each replaced output is
//!   written to a temporary file in its target's folder; [`Outputs::commit`]
//!   renames them all into place. Dropped without a commit, it removes its
//!   temporary files and the folders it created, so a failing command leaves
//!   no new or partial file. Every temporary file is also listed for
//!   [`remove_temporaries`], which a signal handler calls (the CLI's, on
//!   SIGINT/SIGTERM/SIGHUP), so an interrupted command leaves none behind.

use crate::limits::MAX_INPUT_BYTES;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that overrides [`MAX_INPUT_BYTES`] (a byte count).
pub const INPUT_LIMIT_ENV: &str = "TPB_EMU_MAX_INPUT_BYTES";

/// What an output the output policy refuses is ([`FileError::Refused`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unwritable {
    /// A folder.
    #[error("is a folder")]
    Folder,
    /// A block device.
    #[error("is a block device")]
    BlockDevice,
    /// A socket.
    #[error("is a socket")]
    Socket,
    /// Any other special file.
    #[error("is not a regular file, a FIFO or a character device")]
    Special,
    /// A chain of symbolic links too long to follow.
    #[error("more than {MAX_LINKS} symbolic links (a loop?)")]
    LinkLoop,
}

/// Why a file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The OS refused.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file holds more than the input limit (or more than memory can hold).
    #[error(
        "{}: {} the input limit of {limit} bytes (raise it with --max-input-bytes or {INPUT_LIMIT_ENV})",
        path.display(),
        match size { Some(s) => format!("{s} bytes exceed"), None => "more bytes than".to_string() }
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit in force.
        limit: u64,
        /// The file's size, when it is known (a regular file).
        size: Option<u64>,
    },
    /// An output path that the output policy ([`sink`]) will not write: a
    /// folder, a block device, a socket, a symlink loop.
    #[error("{}: {why}; refusing to write it", path.display())]
    Refused {
        /// The output as given.
        path: PathBuf,
        /// What it is.
        why: Unwritable,
    },
    /// Memory ran out before the file was read whole.
    #[error("{}: out of memory after reading {read} bytes (input limit {limit} bytes)", path.display())]
    OutOfMemory {
        /// The file.
        path: PathBuf,
        /// Bytes read so far.
        read: u64,
        /// The limit in force.
        limit: u64,
    },
}

/// The override set by [`set_input_limit`]; 0 means none.
static INPUT_LIMIT: AtomicU64 = AtomicU64::new(0);

/// Sets the input limit for the rest of the process (the CLI's
/// `--max-input-bytes`); it wins over [`INPUT_LIMIT_ENV`]. 0 is ignored.
pub fn set_input_limit(bytes: u64) {
    INPUT_LIMIT.store(bytes, Ordering::Relaxed);
}

/// Parses a byte count as [`INPUT_LIMIT_ENV`] takes it: a positive decimal
/// integer, optionally followed by `K`, `M`, `G` or `T` (binary multiples).
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, shift) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 10),
        (i, 'm' | 'M') => (&s[..i], 20),
        (i, 'g' | 'G') => (&s[..i], 30),
        (i, 't' | 'T') => (&s[..i], 40),
        _ => (s, 0),
    };
    let n: u64 = digits.parse().ok().filter(|&n| n > 0)?;
    n.checked_mul(1u64 << shift)
}

/// The input limit in force: [`set_input_limit`]'s value, else
/// [`INPUT_LIMIT_ENV`]'s, else [`MAX_INPUT_BYTES`]. A malformed environment
/// value is an error naming it.
pub fn input_limit() -> Result<u64, String> {
    let set = INPUT_LIMIT.load(Ordering::Relaxed);
    if set != 0 {
        return Ok(set);
    }
    match std::env::var_os(INPUT_LIMIT_ENV) {
        None => Ok(MAX_INPUT_BYTES),
        Some(v) => v.to_str().and_then(parse_bytes).ok_or_else(|| {
            format!("{INPUT_LIMIT_ENV}={v:?} is not a byte count such as 4096 or 4G")
        }),
    }
}

/// [`read_bounded`] with the limit in force ([`input_limit`]; a malformed
/// environment value falls back to [`MAX_INPUT_BYTES`], the CLI refuses it first).
pub fn read_input(path: &Path) -> Result<Vec<u8>, FileError> {
    read_bounded(path, input_limit().unwrap_or(MAX_INPUT_BYTES))
}

/// The bytes of an input file: memory-mapped when it is a regular file, so
/// that a large stream is read straight from the page cache with no copy
/// (`validate` end to end then runs at nearly its in-process rate), and read
/// into memory otherwise (a FIFO or a device). Dereferences to `[u8]`.
pub enum Input {
    /// A regular file, mapped read-only.
    Mapped(memmap2::Mmap),
    /// Anything else, read whole within the limit ([`read_bounded`]).
    Read(Vec<u8>),
    /// Bytes owned elsewhere and kept alive, unchanged, by the box: a
    /// caller's buffer lent without a copy (the Python bindings' NumPy arrays).
    Borrowed(Box<dyn AsRef<[u8]> + Send + Sync>),
}

impl AsRef<[u8]> for Input {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl std::ops::Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Input::Mapped(m) => m,
            Input::Read(v) => v,
            Input::Borrowed(b) => (**b).as_ref(),
        }
    }
}

/// Bytes in host memory: owned, or a range of an [`Input`] shared without a
/// copy (an array's data inside a mapped `.npy`). Reading never copies;
/// [`HostBytes::make_mut`] copies shared bytes once, the first time they
/// are written (copy on write). Dereferences to `[u8]`.
#[derive(Clone)]
pub struct HostBytes(Repr);

#[derive(Clone)]
enum Repr {
    Owned(Vec<u8>),
    Shared {
        input: std::sync::Arc<Input>,
        range: std::ops::Range<usize>,
    },
}

impl HostBytes {
    /// `input[range]`, shared; `None` when the range is not inside `input`.
    pub fn shared(
        input: std::sync::Arc<Input>,
        range: std::ops::Range<usize>,
    ) -> Option<HostBytes> {
        input.get(range.clone())?;
        Some(HostBytes(Repr::Shared { input, range }))
    }

    /// True when the bytes are shared with an input (not yet copied).
    pub fn is_shared(&self) -> bool {
        matches!(self.0, Repr::Shared { .. })
    }

    /// The bytes as an owned vector (a copy when they are shared).
    pub fn into_vec(self) -> Vec<u8> {
        match self.0 {
            Repr::Owned(v) => v,
            Repr::Shared { input, range } => input[range].to_vec(),
        }
    }

    /// The bytes, writable: shared bytes are copied first.
    pub fn make_mut(&mut self) -> &mut Vec<u8> {
        if let Repr::Shared { input, range } = &self.0 {
            self.0 = Repr::Owned(input[range.clone()].to_vec());
        }
        match &mut self.0 {
            Repr::Owned(v) => v,
            Repr::Shared { .. } => unreachable!("just made owned"),
        }
    }
}

impl Default for HostBytes {
    fn default() -> HostBytes {
        HostBytes(Repr::Owned(Vec::new()))
    }
}

impl std::ops::Deref for HostBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Repr::Owned(v) => v,
            Repr::Shared { input, range } => &input[range.clone()],
        }
    }
}

impl AsRef<[u8]> for HostBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl From<Vec<u8>> for HostBytes {
    fn from(v: Vec<u8>) -> HostBytes {
        HostBytes(Repr::Owned(v))
    }
}

impl FromIterator<u8> for HostBytes {
    fn from_iter<I: IntoIterator<Item = u8>>(iter: I) -> HostBytes {
        Vec::from_iter(iter).into()
    }
}

impl PartialEq for HostBytes {
    fn eq(&self, other: &HostBytes) -> bool {
        **self == **other
    }
}

impl Eq for HostBytes {}

impl PartialEq<[u8]> for HostBytes {
    fn eq(&self, other: &[u8]) -> bool {
        **self == *other
    }
}

impl PartialEq<Vec<u8>> for HostBytes {
    fn eq(&self, other: &Vec<u8>) -> bool {
        **self == other[..]
    }
}

impl std::fmt::Debug for HostBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

/// Maps the regular file at `path` (refusing one of more than `limit` bytes
/// by its size); anything else, an empty file, or a file the OS will not map
/// is read as [`read_bounded`] reads it.
///
/// A mapped file that another process truncates while it is being read
/// makes the OS raise SIGBUS; inputs are files the user hands the command,
/// so this is accepted, as in other tools that map their inputs
/// (docs/programs.md, "Large programs").
pub fn map_bounded(path: &Path, limit: u64) -> Result<Input, FileError> {
    let io = |source| FileError::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() || meta.len() == 0 {
        return read_bounded(path, limit).map(Input::Read);
    }
    if meta.len() > limit {
        return Err(FileError::TooLarge {
            path: path.to_owned(),
            limit,
            size: Some(meta.len()),
        });
    }
    // SAFETY: the map is read-only and private to this process; its bytes
    // are only ever read as `[u8]`, which has no invalid values. A
    // concurrent truncation of the file is the accepted risk named above.
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::MmapOptions::new().map(&file) };
    match map {
        Ok(m) => {
            // One pass from the first byte to the last: ask for read-ahead.
            #[cfg(unix)]
            let _ = m.advise(memmap2::Advice::Sequential);
            Ok(Input::Mapped(m))
        }
        Err(_) => read_bounded(path, limit).map(Input::Read),
    }
}

/// [`map_bounded`] with the limit in force ([`input_limit`]).
pub fn map_input(path: &Path) -> Result<Input, FileError> {
    map_bounded(path, input_limit().unwrap_or(MAX_INPUT_BYTES))
}

/// Reads the file at `path` in pieces of at most `chunk` bytes (every piece
/// but the last exactly `chunk`), handing each to `f` in order, while a
/// second thread reads the next piece: a large input is never held whole
/// and its reading overlaps the work on it. Refuses, as [`read_bounded`]
/// does, a file of more than `limit` bytes (a regular file before reading
/// anything). Returns the bytes read, or `f`'s first error (reading then
/// stops).
pub fn read_chunks<E>(
    path: &Path,
    limit: u64,
    chunk: usize,
    mut f: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<Result<u64, E>, FileError> {
    let io = |source| FileError::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_file() && meta.len() > limit {
        return Err(FileError::TooLarge {
            path: path.to_owned(),
            limit,
            size: Some(meta.len()),
        });
    }
    let chunk = chunk.max(1);
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<std::io::Result<Vec<u8>>>(2);
    let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::scope(|s| {
        s.spawn(move || {
            let mut reader = file.take(limit.saturating_add(1));
            loop {
                let mut buf = empty_rx.try_recv().unwrap_or_else(|_| vec![0u8; chunk]);
                buf.resize(chunk, 0);
                let mut got = 0;
                while got < chunk {
                    match reader.read(&mut buf[got..]) {
                        Ok(0) => break,
                        Ok(n) => got += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            let _ = full_tx.send(Err(e));
                            return;
                        }
                    }
                }
                buf.truncate(got);
                let last = got < chunk;
                if full_tx.send(Ok(buf)).is_err() || last {
                    return;
                }
            }
        });
        let mut total = 0u64;
        for piece in full_rx {
            let buf = piece.map_err(io)?;
            total += buf.len() as u64;
            if total > limit {
                return Err(FileError::TooLarge {
                    path: path.to_owned(),
                    limit,
                    size: None,
                });
            }
            if buf.is_empty() {
                break;
            }
            if let Err(e) = f(&buf) {
                return Ok(Err(e));
            }
            let _ = empty_tx.send(buf);
        }
        Ok(Ok(total))
    })
}

/// Reads the whole file at `path`, refusing one of more than `limit` bytes
/// before allocating for it. A regular file is checked by its size; anything
/// else (a device such as `/dev/zero`, a FIFO) is read up to `limit + 1`
/// bytes. Running out of memory is an error, not an abort.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let io = |source| FileError::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    let mut buf = Vec::new();
    if meta.is_file() {
        let size = meta.len();
        if size > limit {
            return Err(FileError::TooLarge {
                path: path.to_owned(),
                limit,
                size: Some(size),
            });
        }
        let want = usize::try_from(size).unwrap_or(usize::MAX);
        buf.try_reserve_exact(want)
            .map_err(|_| FileError::OutOfMemory {
                path: path.to_owned(),
                read: 0,
                limit,
            })?;
    }
    let mut reader = file.take(limit.saturating_add(1));
    if meta.is_file() {
        // The size is known and reserved; `read_to_end` grows only if the file grew.
        reader.read_to_end(&mut buf).map_err(io)?;
    } else {
        // A device or a FIFO: read in chunks, reserving memory fallibly.
        let mut chunk = vec![0u8; 1 << 16];
        loop {
            let got = match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io(e)),
            };
            buf.try_reserve(got).map_err(|_| FileError::OutOfMemory {
                path: path.to_owned(),
                read: buf.len() as u64,
                limit,
            })?;
            buf.extend_from_slice(&chunk[..got]);
        }
    }
    if buf.len() as u64 > limit {
        return Err(FileError::TooLarge {
            path: path.to_owned(),
            limit,
            size: None,
        });
    }
    Ok(buf)
}

/// `path` made absolute, with symlinks and `..` resolved: the path itself if
/// it exists, else its nearest existing ancestor's resolution joined with the
/// rest (lexically normalised).
pub fn resolve(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_owned()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_owned())
    };
    let abs = normalize(&abs);
    if let Ok(p) = abs.canonicalize() {
        return p;
    }
    let mut rest = Vec::new();
    let mut cur = abs.as_path();
    while let Some(parent) = cur.parent() {
        if let Some(name) = cur.file_name() {
            rest.push(name.to_owned());
        }
        if let Ok(p) = parent.canonicalize() {
            return rest.iter().rev().fold(p, |p, n| p.join(n));
        }
        cur = parent;
    }
    abs
}

/// Removes `.` and folds `..` lexically (used before the nearest existing
/// ancestor is resolved, so `missing/../x` means `x`).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c.as_os_str()),
        }
    }
    out
}

/// Where the bytes of an output go: the output policy of every writer
/// ([`sink`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sink {
    /// A regular file, or none yet: written to a temporary file beside it and
    /// renamed into place. The path is the one given with its symlinks
    /// followed, so a link stays a link and its target gets the new bytes.
    Replace(PathBuf),
    /// A FIFO or a character device (`/dev/null`, a terminal), or a
    /// descriptor alias under `/proc` or `/dev/fd`: opened and written in
    /// place (appending), streamed, with no temporary file. Bytes written to
    /// a stream cannot be taken back.
    Stream(PathBuf),
    /// The process's standard output: `-`, `/dev/stdout`, `/dev/fd/1` or
    /// `/proc/self/fd/1`.
    Stdout,
}

/// The most symlinks followed from one output path (Linux's own limit).
const MAX_LINKS: usize = 40;

/// True for the names of the standard output.
pub fn is_stdout(path: &Path) -> bool {
    ["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]
        .iter()
        .any(|s| path.as_os_str() == *s)
}

/// A descriptor alias: a path whose symlinks name open files rather than
/// paths (`/proc/self/fd/2` -> `pipe:[1234]`), so it is written where it is.
fn is_fd_alias(path: &Path) -> bool {
    path.starts_with("/proc") || path.starts_with("/dev/fd")
}

/// `path` with every symlink followed (each hop relative to its link's
/// folder), stopping at a descriptor alias. A missing last hop is fine (a
/// dangling link names the file to create).
fn follow_links(path: &Path) -> Result<PathBuf, FileError> {
    let mut p = path.to_owned();
    for _ in 0..MAX_LINKS {
        if is_fd_alias(&p) {
            return Ok(p);
        }
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p).map_err(|source| FileError::Io {
                    path: path.to_owned(),
                    source,
                })?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(FileError::Refused {
        path: path.to_owned(),
        why: Unwritable::LinkLoop,
    })
}

/// The output policy: where a command's output at `path` goes. A regular
/// file or a new one is replaced ([`Sink::Replace`], through any symlinks);
/// a FIFO or a character device is streamed in place ([`Sink::Stream`]); the
/// standard output is [`Sink::Stdout`]; a folder, a block device, a socket
/// or a symlink loop is refused ([`FileError::Refused`]).
pub fn sink(path: &Path) -> Result<Sink, FileError> {
    if is_stdout(path) {
        return Ok(Sink::Stdout);
    }
    let target = follow_links(path)?;
    let meta = if is_fd_alias(&target) {
        std::fs::metadata(&target)
    } else {
        std::fs::symlink_metadata(&target)
    };
    let meta = match meta {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !is_fd_alias(&target) => {
            return Ok(Sink::Replace(target));
        }
        Err(source) => {
            return Err(FileError::Io {
                path: path.to_owned(),
                source,
            });
        }
    };
    let ft = meta.file_type();
    if ft.is_file() && !is_fd_alias(&target) {
        return Ok(Sink::Replace(target));
    }
    if ft.is_file() || is_stream(&ft) {
        return Ok(Sink::Stream(target));
    }
    let why = if ft.is_dir() {
        Unwritable::Folder
    } else if is_kind(&ft, Kind::Block) {
        Unwritable::BlockDevice
    } else if is_kind(&ft, Kind::Socket) {
        Unwritable::Socket
    } else {
        Unwritable::Special
    };
    Err(FileError::Refused {
        path: path.to_owned(),
        why,
    })
}

/// Special file kinds (Unix only; elsewhere nothing is one).
enum Kind {
    Fifo,
    Char,
    Block,
    Socket,
}

#[cfg(unix)]
fn is_kind(ft: &std::fs::FileType, k: Kind) -> bool {
    use std::os::unix::fs::FileTypeExt;
    match k {
        Kind::Fifo => ft.is_fifo(),
        Kind::Char => ft.is_char_device(),
        Kind::Block => ft.is_block_device(),
        Kind::Socket => ft.is_socket(),
    }
}

#[cfg(not(unix))]
fn is_kind(_: &std::fs::FileType, _: Kind) -> bool {
    false
}

/// A FIFO or a character device: written in place.
fn is_stream(ft: &std::fs::FileType) -> bool {
    is_kind(ft, Kind::Fifo) || is_kind(ft, Kind::Char)
}

/// What two outputs must not share, or `None` for a sink any number of them
/// may share (a character device such as `/dev/null`: writing it destroys
/// nothing). A path the policy refuses is compared as resolved, so the
/// collision check still names it; [`check_sinks`] refuses it.
fn identity(path: &Path) -> Option<PathBuf> {
    match sink(path) {
        // No path holds a NUL byte: this names the standard output alone.
        Ok(Sink::Stdout) => Some(PathBuf::from("\0stdout")),
        Ok(Sink::Stream(p)) => {
            let char_device =
                std::fs::metadata(&p).is_ok_and(|m| is_kind(&m.file_type(), Kind::Char));
            (!char_device).then(|| resolve(&p))
        }
        Ok(Sink::Replace(p)) => Some(resolve(&p)),
        Err(_) => Some(resolve(path)),
    }
}

/// An output path that would overwrite an input or another output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what} {} is the same file as {other} {}; refusing to overwrite it",
    path.display(),
    other_path.display()
)]
pub struct Collision {
    /// The output that collides (e.g. `--output`).
    pub what: String,
    /// Its path as given.
    pub path: PathBuf,
    /// The input or output it collides with.
    pub other: String,
    /// That one's path as given.
    pub other_path: PathBuf,
}

/// Refuses an output that resolves ([`resolve`], through the output policy's
/// symlink following) to the same file as an input or as an earlier output.
/// Each entry is `(what, path)`, `what` naming it for the message (e.g.
/// `"--indices"`). Character devices are exempt (any number of outputs may
/// go to `/dev/null`); the standard output is one file (`-` twice collides).
pub fn check_distinct(
    inputs: &[(String, PathBuf)],
    outputs: &[(String, PathBuf)],
) -> Result<(), Collision> {
    let ins: Vec<PathBuf> = inputs.iter().map(|(_, p)| resolve(p)).collect();
    let mut outs: Vec<Option<PathBuf>> = Vec::with_capacity(outputs.len());
    for (what, path) in outputs {
        let r = identity(path);
        let hit = r.as_ref().and_then(|r| {
            ins.iter()
                .zip(inputs)
                .chain(
                    outs.iter()
                        .zip(outputs)
                        .filter_map(|(q, o)| Some((q.as_ref()?, o))),
                )
                .find(|(q, _)| *q == r)
        });
        if let Some((_, (other, other_path))) = hit {
            return Err(Collision {
                what: what.clone(),
                path: path.clone(),
                other: other.clone(),
                other_path: other_path.clone(),
            });
        }
        outs.push(r);
    }
    Ok(())
}

/// Refuses (before anything runs) an output that the output policy will not
/// write ([`sink`]): a folder, a block device, a socket, a symlink loop.
pub fn check_sinks(outputs: &[(String, PathBuf)]) -> Result<(), FileError> {
    outputs.iter().try_for_each(|(_, p)| sink(p).map(|_| ()))
}

/// The temporary files of every [`Outputs`] in this process, for
/// [`remove_temporaries`].
static TEMPORARIES: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn temporaries() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Creates the temporary file `path` (never an existing one) and lists it,
/// under one lock, so that [`remove_temporaries`] sees every file made.
fn create_temporary(path: &Path) -> std::io::Result<std::fs::File> {
    let mut list = temporaries();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    list.push(path.to_owned());
    Ok(f)
}

/// Removes the temporary file `path` from the list (it was renamed or removed).
fn unlist_temporary(path: &Path) {
    temporaries().retain(|p| p != path);
}

/// Removes every temporary file that an [`Outputs`] of this process holds,
/// and returns with the list locked, so that no new one appears: a signal
/// handler calls it, then exits the process while holding the guard.
pub fn remove_temporaries() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    let mut list = temporaries();
    for p in list.drain(..) {
        let _ = std::fs::remove_file(p);
    }
    list
}

/// A set of output files written all together or not at all.
///
/// [`Outputs::write`] applies the output policy ([`sink`]): a replaced
/// file's bytes go to a temporary file beside its target (creating missing
/// folders) and [`Outputs::commit`] renames every one into place; a stream
/// (a FIFO, a character device, the standard output) is written at once.
/// Dropped without a commit, it deletes its temporary files and the folders
/// it created.
#[derive(Debug, Default)]
pub struct Outputs {
    /// (temporary file, target), in write order.
    pending: Vec<(PathBuf, PathBuf)>,
    /// Outputs written in place (streams), in write order.
    streamed: Vec<PathBuf>,
    /// Folders created, outermost first.
    created: Vec<PathBuf>,
    committed: bool,
}

impl Outputs {
    /// An empty transaction.
    pub fn new() -> Outputs {
        Outputs::default()
    }

    /// Creates `dir` and its missing ancestors, remembering which were new
    /// (they are removed again if the transaction is dropped).
    pub fn create_dir(&mut self, dir: &Path) -> Result<(), FileError> {
        let mut missing = Vec::new();
        let mut cur = Some(dir);
        while let Some(d) = cur.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            missing.push(d.to_owned());
            cur = d.parent();
        }
        for d in missing.into_iter().rev() {
            match std::fs::create_dir(&d) {
                Ok(()) => self.created.push(d),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(source) => return Err(FileError::Io { path: d, source }),
            }
        }
        if dir.as_os_str().is_empty() || dir.is_dir() {
            Ok(())
        } else {
            Err(FileError::Io {
                path: dir.to_owned(),
                source: std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a folder"),
            })
        }
    }

    /// Writes `bytes` to `path` by the output policy ([`sink`]): a replaced
    /// file appears only on [`Outputs::commit`]. Writing one path twice
    /// replaces the first bytes.
    pub fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<(), FileError> {
        self.write_parts(path, &[bytes])
    }

    /// [`Outputs::write`] of the concatenation of `parts` (e.g. a header and
    /// a large array, without joining them in memory first).
    pub fn write_parts(&mut self, path: &Path, parts: &[&[u8]]) -> Result<(), FileError> {
        self.write_with(path, &mut |w| parts.iter().try_for_each(|p| w.write_all(p)))
    }

    /// [`Outputs::write`] of the bytes `write` writes (a document made as it
    /// is written, never held whole in memory). If `write` fails, nothing
    /// is left behind for a replaced `path`.
    pub fn write_with(
        &mut self,
        path: &Path,
        write: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<(), FileError> {
        let io = |source| FileError::Io {
            path: path.to_owned(),
            source,
        };
        let target = match sink(path)? {
            Sink::Stdout => {
                let mut o = std::io::stdout().lock();
                write(&mut o).and_then(|()| o.flush()).map_err(io)?;
                self.streamed.push(path.to_owned());
                return Ok(());
            }
            Sink::Stream(p) => {
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&p)
                    .map_err(io)?;
                write(&mut f).and_then(|()| f.flush()).map_err(io)?;
                self.streamed.push(path.to_owned());
                return Ok(());
            }
            Sink::Replace(t) => t,
        };
        let dir = target.parent().unwrap_or(Path::new(""));
        self.create_dir(dir)?;
        let name = target.file_name().ok_or_else(|| {
            io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a file name",
            ))
        })?;
        if let Some(i) = self.pending.iter().position(|(_, t)| *t == target) {
            let (tmp, _) = self.pending.remove(i);
            let _ = std::fs::remove_file(&tmp);
            unlist_temporary(&tmp);
        }
        // A replaced file keeps its permissions.
        let perms = std::fs::metadata(&target).ok().map(|m| m.permissions());
        let mut n = 0u32;
        let tmp = loop {
            let mut t = std::ffi::OsString::from(".");
            t.push(name);
            t.push(format!(".tpb-emu-{}-{n}.tmp", std::process::id()));
            let tmp = dir.join(t);
            match create_temporary(&tmp) {
                Ok(mut f) => {
                    let done = write(&mut f)
                        .and_then(|()| f.flush())
                        .and_then(|()| perms.clone().map_or(Ok(()), |p| f.set_permissions(p)));
                    if let Err(e) = done {
                        let _ = std::fs::remove_file(&tmp);
                        unlist_temporary(&tmp);
                        return Err(io(e));
                    }
                    break tmp;
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                Err(e) => return Err(io(e)),
            }
        };
        self.pending.push((tmp, target));
        Ok(())
    }

    /// The files to be renamed into place so far (symlinks followed), in order.
    pub fn targets(&self) -> impl Iterator<Item = &Path> {
        self.pending.iter().map(|(_, t)| t.as_path())
    }

    /// The outputs written in place (streams) so far, as given, in order.
    pub fn streamed(&self) -> impl Iterator<Item = &Path> {
        self.streamed.iter().map(PathBuf::as_path)
    }

    /// Renames every temporary file into place. On a failure the files not
    /// yet renamed are removed.
    pub fn commit(mut self) -> Result<(), FileError> {
        let pending = std::mem::take(&mut self.pending);
        let mut result = Ok(());
        for (tmp, target) in pending {
            if result.is_ok() {
                if let Err(source) = std::fs::rename(&tmp, &target) {
                    result = Err(FileError::Io {
                        path: target,
                        source,
                    });
                    let _ = std::fs::remove_file(&tmp);
                }
            } else {
                let _ = std::fs::remove_file(&tmp);
            }
            unlist_temporary(&tmp);
        }
        self.committed = result.is_ok();
        result
    }
}

impl Drop for Outputs {
    fn drop(&mut self) {
        for (tmp, _) in self.pending.drain(..) {
            let _ = std::fs::remove_file(&tmp);
            unlist_temporary(&tmp);
        }
        if !self.committed {
            for d in self.created.iter().rev() {
                // Only if empty: never removes anything but what this transaction made.
                let _ = std::fs::remove_dir(d);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "tpb-emu-files-{}-{}",
            std::process::id(),
            fastrand_seed()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn fastrand_seed() -> u64 {
        use std::sync::atomic::AtomicU64;
        static N: AtomicU64 = AtomicU64::new(0);
        N.fetch_add(1, Ordering::Relaxed)
    }

    #[test]
    fn bounded_read_refuses_large_files_and_devices() {
        let d = tmp();
        let f = d.join("ten");
        std::fs::write(&f, [7u8; 10]).unwrap();
        assert_eq!(read_bounded(&f, 10).unwrap(), [7u8; 10]);
        match read_bounded(&f, 9) {
            Err(FileError::TooLarge {
                limit: 9,
                size: Some(10),
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        match read_bounded(Path::new("/dev/zero"), 3 << 20) {
            Err(FileError::TooLarge {
                limit, size: None, ..
            }) => assert_eq!(limit, 3 << 20),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            read_bounded(&d.join("missing"), 10),
            Err(FileError::Io { .. })
        ));
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn byte_counts_parse() {
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes("4G"), Some(4 << 30));
        assert_eq!(parse_bytes("1k"), Some(1024));
        assert_eq!(parse_bytes("0"), None);
        assert_eq!(parse_bytes("-1"), None);
        assert_eq!(parse_bytes("G"), None);
        assert_eq!(parse_bytes("99999999999T"), None);
    }

    #[test]
    fn collisions_resolve_dots_and_symlinks() {
        let d = tmp();
        std::fs::write(d.join("in.npy"), b"x").unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        std::os::unix::fs::symlink(d.join("in.npy"), d.join("link.npy")).unwrap();
        let i = vec![("--input".to_string(), d.join("in.npy"))];
        let o = |p: PathBuf| vec![("--output".to_string(), p)];
        assert!(check_distinct(&i, &o(d.join("sub/../in.npy"))).is_err());
        assert!(check_distinct(&i, &o(d.join("link.npy"))).is_err());
        assert!(check_distinct(&i, &o(d.join("sub/out.npy"))).is_ok());
        let two = vec![
            ("a".to_string(), d.join("new/x.npy")),
            ("b".to_string(), d.join("new/../new/x.npy")),
        ];
        let e = check_distinct(&i, &two).unwrap_err();
        assert_eq!((e.what.as_str(), e.other.as_str()), ("b", "a"));
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn outputs_appear_only_on_commit() {
        let d = tmp();
        let a = d.join("new/deeper/a.bin");
        {
            let mut o = Outputs::new();
            o.write(&a, b"abc").unwrap();
            assert!(!a.exists());
        }
        assert!(!d.join("new").exists(), "the folders it made are gone");
        let mut o = Outputs::new();
        o.write(&a, b"abc").unwrap();
        o.commit().unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"abc");
        assert_eq!(std::fs::read_dir(a.parent().unwrap()).unwrap().count(), 1);
        std::fs::remove_dir_all(d).unwrap();
    }
}
