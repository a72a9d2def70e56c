//! NEFF model files (SPEC-NEFF): reading, checking, mapping and writing.
//!
//! A NEFF is a 1024-byte header, then a payload: a tar, gzip-compressed for
//! pkg 2. [`read`] takes the file's bytes (it never opens a file) and runs
//! SPEC-NEFF §6 steps 1–13 with the runtime's checks, in its order and with
//! its messages:
//!
//! ```text
//! bytes ─header gates─▶ payload ─digest─▶ (gunzip, bounded) ─tar walk─▶ members
//!   ─neff.json─▶ I/O tensors + kelf name ─kelf json─▶ generation, def.json
//!   ─def.json─▶ variables, DMA queues and blocks, engine streams  = Neff
//! ```
//!
//! [`lower::program`] maps the result onto a [`crate::runtime::Program`]
//! (SPEC-NEFF §5) after expanding the NEFF-only pseudo-instructions 0xC1 and
//! 0xC8 ([`lower`], NEFF-EC-4, NEFF-EC-5); [`pack`] writes a program as a NEFF
//! (NEFF-EC-13). Every failure of steps 1–13 is a [`NeffError`] (bad input,
//! exit 4, NEFF-EC-16).

mod archive;
pub mod fault;
mod header;
mod inflate;
pub mod info;
pub mod lower;
mod model;
pub mod pack;
mod par;

pub use archive::{Member, gzip, is_gzip, md5, sha256, walk, write_tar};
pub use fault::{MetadataFault, NeffFault, NumberFault, Side, VarFault};
pub use header::{FEATURES_REFUSED, FEATURES_SUPPORTED, HEADER_BYTES, Header, MAX_MAJOR};
pub use inflate::gunzip;
pub use model::{
    DmaBlock, EngineStream, IoTensor, Neff, NeffVar, VarKind, def_dtype, def_dtype_name, dltype,
    dltype_name,
};

use crate::limits::Arch;
use std::fmt;

/// The default bound on the inflated payload: 4 GiB.
pub const DEFAULT_INFLATE_LIMIT: u64 = 4 << 30;

/// How [`read`] reads (the options every NEFF-reading command takes).
#[derive(Clone, Debug)]
pub struct Options {
    /// NEFF-EC-2: verify the digest (on by default; `--no-verify` clears it).
    pub verify: bool,
    /// NEFF-EC-12: enforce the CAYMAN state-buffer reservation rule (`--strict`).
    pub strict: bool,
    /// NEFF-EC-17: the generation asked for with `--arch`, if any.
    pub arch: Option<Arch>,
    /// The most bytes the payload may inflate to.
    pub inflate_limit: u64,
    /// The file as given, for messages ("failure while reading NEFF metadata {path}: …").
    pub path: String,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            verify: true,
            strict: false,
            arch: None,
            inflate_limit: DEFAULT_INFLATE_LIMIT,
            path: String::new(),
        }
    }
}

/// Why a NEFF did not load (SPEC-NEFF §6 steps 1–13). Every variant is bad
/// input (exit 4); [`NeffError::runtime_status`] gives the runtime's status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NeffError {
    /// Step 1: fewer than 1024 bytes.
    ShortFile {
        /// The file's length.
        len: u64,
    },
    /// Step 3: `header_size >= len`.
    HeaderSize {
        /// The header's `header_size`.
        header_size: u64,
        /// The file's length.
        len: u64,
    },
    /// Step 4: major version above 2.
    Version {
        /// `neff_version_major`.
        major: u64,
        /// `neff_version_minor`.
        minor: u64,
    },
    /// Step 5: a feature bit in 27..62 (major 2).
    Features {
        /// `neff_version_minor`.
        minor: u64,
        /// The refused bits (masked).
        bits: u64,
    },
    /// Step 6: `data_size` beyond the file.
    DataSize {
        /// The header's `data_size`.
        data_size: u64,
        /// The file's length.
        len: u64,
    },
    /// Step 7: `pkg_version` not 1 or 2.
    Packager(u64),
    /// Step 8: verification asked for and `data_size == 0`.
    NothingToVerify,
    /// Step 8: pkg 2 digest mismatch.
    Md5Mismatch,
    /// Step 8: pkg 1 digest mismatch.
    Sha256Mismatch,
    /// Steps 9–10: gzip or tar failure.
    Metadata {
        /// The NEFF file as given.
        path: String,
        /// What failed.
        detail: MetadataFault,
    },
    /// Steps 11–13 and the I/O binding: which check failed, on what.
    Load(NeffFault),
}

impl NeffError {
    /// The runtime's status for this failure: `NRT_UNSUPPORTED_NEFF_VERSION`
    /// (10) for steps 4, 5 and 7, `NRT_INVALID` (2) otherwise (§1.3). Not an exit code.
    pub fn runtime_status(&self) -> u32 {
        match self {
            NeffError::Version { .. } | NeffError::Features { .. } | NeffError::Packager(_) => 10,
            _ => 2,
        }
    }
}

impl fmt::Display for NeffError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NeffError::ShortFile { len } => {
                write!(f, "Invalid number of NEFF bytes received {len:x}")
            }
            NeffError::HeaderSize { header_size, len } => write!(
                f,
                "Invalid NEFF file size hdr sz: {header_size:x}, file sz: {len:x}"
            ),
            NeffError::Version { major, minor } => write!(
                f,
                "NEFF version: {major}.{minor} is not supported, accepted version range: 0.x-{MAX_MAJOR}.x"
            ),
            NeffError::Features { minor, bits } => write!(
                f,
                "This NEFF (version: 2.{minor}, features: 0x{bits:x}) has been compiled by a newer \
                 version of Neuron compiler. Features supported by this Neuron Runtime: \
                 0x{FEATURES_SUPPORTED:x}. Please update the aws-neuronx-runtime-lib package to \
                 the latest version."
            ),
            NeffError::DataSize { data_size, len } => {
                write!(f, "Invalid NEFF data size({data_size:x} vs {len:x})")
            }
            NeffError::Packager(p) => write!(f, "Unsupported NEFF packager: {p}"),
            NeffError::NothingToVerify => {
                f.write_str("Invalid NEFF data size(0): nothing to verify")
            }
            NeffError::Md5Mismatch => f.write_str("MD5 mismatch!"),
            NeffError::Sha256Mismatch => f.write_str("SHA256 mismatch!"),
            NeffError::Metadata { path, detail } => {
                write!(f, "failure while reading NEFF metadata {path}: {detail}")
            }
            NeffError::Load(m) => m.fmt(f),
        }
    }
}

impl std::error::Error for NeffError {}

/// The payload after steps 1–10: the header, the tar, and its members.
#[derive(Clone, Debug)]
pub struct Container {
    /// The decoded header.
    pub header: Header,
    /// True when the payload was a gzip member (NEFF-EC-1).
    pub gzip: bool,
    /// The inflated tar, or the whole file when the tar is stored raw.
    buf: Kept,
    /// Where the tar's kept bytes lie in `buf`.
    tar_at: std::ops::Range<usize>,
    /// The tar's length (the inflated payload's): more than the kept bytes
    /// when the payload goes on past the archive's end ([`Container::tar`]).
    tar_len: u64,
    /// Stored members, archive order.
    pub members: Vec<Member>,
    /// Member index by name.
    index: std::collections::HashMap<String, usize>,
    /// Warnings of the tar walk.
    pub warnings: Vec<String>,
}

/// Bytes a [`Container`] keeps: the inflated tar, or the file itself (an
/// owned buffer or a mapped file, [`crate::files::Input`]) when its tar is
/// stored raw, so that a raw tar is never copied.
#[derive(Clone)]
struct Kept(std::sync::Arc<dyn AsRef<[u8]> + Send + Sync>);

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes", (*self.0).as_ref().len())
    }
}

impl Container {
    /// The tar's bytes (member ranges index into them). Of an inflated
    /// payload, those up to the archive's end and at most
    /// [`KEPT_AFTER_ARCHIVE`] after it: a bomb's tail is inflated, checked
    /// and counted, not kept ([`Container::tar_len`] is the whole length).
    pub fn tar(&self) -> &[u8] {
        &(*self.buf.0).as_ref()[self.tar_at.clone()]
    }

    /// The tar's whole length: the inflated payload's, or the stored one's.
    pub fn tar_len(&self) -> u64 {
        self.tar_len
    }

    /// A member's bytes by exact name.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.member(name).map(|m| &self.tar()[m.data.clone()])
    }

    /// A member by exact name.
    pub fn member(&self, name: &str) -> Option<&Member> {
        self.index.get(name).map(|&i| &self.members[i])
    }
}

/// SPEC-NEFF §6 steps 1–10: header gates, digest (NEFF-EC-2), gzip
/// (NEFF-EC-1, bounded by `opts.inflate_limit`) and the tar walk.
pub fn open(bytes: &[u8], opts: &Options) -> Result<Container, NeffError> {
    open_owned(copied(bytes, opts)?, opts)
}

/// A copy of the file's bytes, or an error where memory runs out.
fn copied(bytes: &[u8], opts: &Options) -> Result<Vec<u8>, NeffError> {
    let mut v = Vec::new();
    v.try_reserve_exact(bytes.len())
        .map_err(|_| NeffError::Metadata {
            path: opts.path.clone(),
            detail: MetadataFault::CopyMemory(bytes.len()),
        })?;
    v.extend_from_slice(bytes);
    Ok(v)
}

/// [`open`] on bytes the container may keep (a buffer, or a mapped file from
/// [`crate::files::map_input`]): a raw tar is then not copied.
pub fn open_owned<B>(bytes: B, opts: &Options) -> Result<Container, NeffError>
where
    B: AsRef<[u8]> + Send + Sync + 'static,
{
    open_then(bytes, opts, Ok)
}

/// Bytes of an inflated payload kept past the end of its archive (a
/// writer's padding to its record size, 10240 bytes for GNU tar, stays in
/// [`Container::tar`]); the rest is only inflated, checked and counted.
pub const KEPT_AFTER_ARCHIVE: usize = 1 << 20;

/// Payloads below this are hashed inline: a thread would cost more.
const DIGEST_THREAD_BYTES: usize = 1 << 20;

/// Steps 1–10, then `then` on the container, while step 8's digest
/// (NEFF-EC-2) is computed on another thread. The runtime checks the digest
/// first, so a mismatch is reported in preference to any error of steps 9 on
/// or of `then`.
fn open_then<B, R>(
    bytes: B,
    opts: &Options,
    then: impl FnOnce(Container) -> Result<R, NeffError>,
) -> Result<R, NeffError>
where
    B: AsRef<[u8]> + Send + Sync + 'static,
{
    let bytes = std::sync::Arc::new(bytes);
    let (header, data) = header::check((*bytes).as_ref())?;
    if opts.verify && data.is_empty() {
        return Err(NeffError::NothingToVerify);
    }
    let digest = || {
        if !opts.verify {
            Ok(())
        } else if header.pkg_version == 1 {
            (sha256(data) == header.hash)
                .then_some(())
                .ok_or(NeffError::Sha256Mismatch)
        } else {
            (md5(data)[..] == header.hash[..16])
                .then_some(())
                .ok_or(NeffError::Md5Mismatch)
        }
    };
    if data.len() < DIGEST_THREAD_BYTES {
        digest()?;
        return then(unpack(&bytes, &header, data, opts)?);
    }
    std::thread::scope(|s| {
        let digest = s.spawn(digest);
        let rest = unpack(&bytes, &header, data, opts).and_then(then);
        let digest = digest
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        digest.and(rest)
    })
}

/// Steps 9–10 on `data`, the payload of `bytes`: inflation (NEFF-EC-1,
/// bounded by `opts.inflate_limit`) and the tar walk.
fn unpack<B>(
    bytes: &std::sync::Arc<B>,
    header: &Header,
    data: &[u8],
    opts: &Options,
) -> Result<Container, NeffError>
where
    B: AsRef<[u8]> + Send + Sync + 'static,
{
    let meta = |detail: MetadataFault| NeffError::Metadata {
        path: opts.path.clone(),
        detail,
    };
    // Step 9, NEFF-EC-1, and step 10 as the tar is inflated: the walk says
    // where the archive ends, and nothing much past it is kept.
    let gz = is_gzip(data);
    let mut tar_walk = archive::TarWalk::new(opts.inflate_limit);
    let (buf, tar_at, tar_len) = if gz {
        let tar = inflate::inflate(data, opts.inflate_limit, usize::MAX, |t| {
            Ok(tar_walk
                .advance(t, false)?
                .map(|end| end.saturating_add(KEPT_AFTER_ARCHIVE)))
        })
        .map_err(meta)?;
        let (n, total) = (tar.as_ref().len(), tar.total());
        (Kept(std::sync::Arc::new(tar)), 0..n, total)
    } else {
        if data.len() as u64 > opts.inflate_limit {
            return Err(meta(MetadataFault::PayloadLimit(opts.inflate_limit)));
        }
        let at = HEADER_BYTES..HEADER_BYTES + data.len();
        (Kept(bytes.clone()), at, data.len() as u64)
    };
    // Step 10: the rest of the walk (all of it for a stored tar).
    let tar = &(*buf.0).as_ref()[tar_at.clone()];
    tar_walk.advance(tar, true).map_err(meta)?;
    let idx = tar_walk.finish(tar_len).map_err(meta)?;
    Ok(Container {
        header: header.clone(),
        gzip: gz,
        buf,
        tar_at,
        tar_len,
        index: idx
            .members
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name.clone(), i))
            .collect(),
        members: idx.members,
        warnings: idx.warnings,
    })
}

/// SPEC-NEFF §6 steps 1–13: reads a whole NEFF.
pub fn read(bytes: &[u8], opts: &Options) -> Result<Neff, NeffError> {
    read_owned(copied(bytes, opts)?, opts)
}

/// [`read`] on bytes the result may keep (a raw tar is then not copied).
pub fn read_owned<B>(bytes: B, opts: &Options) -> Result<Neff, NeffError>
where
    B: AsRef<[u8]> + Send + Sync + 'static,
{
    open_then(bytes, opts, |c| model::load(c, opts))
}

/// [`read_owned`], then `f` on the NEFF while the digest may still be
/// computing (a large raw tar's SHA-256 is the longest step of its load);
/// `f`'s result comes back only when the digest matches, so the digest's
/// error still comes first.
pub fn read_owned_then<B, R>(
    bytes: B,
    opts: &Options,
    f: impl FnOnce(&Neff) -> R,
) -> Result<(Neff, R), NeffError>
where
    B: AsRef<[u8]> + Send + Sync + 'static,
{
    open_then(bytes, opts, |c| {
        let n = model::load(c, opts)?;
        let r = f(&n);
        Ok((n, r))
    })
}

/// NEFFs made from their members, for the modules' tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{HEADER_BYTES, Neff, NeffError, Options, gzip, write_tar};

    /// A pkg-2 NEFF of `members`, its digest left out (read it with [`read`]).
    pub(crate) fn neff_of(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let members: Vec<(String, Vec<u8>)> = members
            .iter()
            .map(|(n, d)| (n.to_string(), d.clone()))
            .collect();
        let gz = gzip(&write_tar(&members));
        let mut f = vec![0u8; HEADER_BYTES];
        f[0..8].copy_from_slice(&2u64.to_le_bytes());
        f[8..16].copy_from_slice(&(HEADER_BYTES as u64).to_le_bytes());
        f[16..24].copy_from_slice(&(gz.len() as u64).to_le_bytes());
        f[24..32].copy_from_slice(&2u64.to_le_bytes());
        f.extend_from_slice(&gz);
        f
    }

    /// Reads without the digest.
    pub(crate) fn read(f: &[u8]) -> Result<Neff, NeffError> {
        super::read(
            f,
            &Options {
                verify: false,
                ..Options::default()
            },
        )
    }

    /// A trigger of block `id` of queue `q` (NEFF-EC-4).
    pub(crate) fn trigger(q: &str, id: u32) -> Vec<u8> {
        let mut r = vec![0u8; 64];
        r[0] = 0xC1;
        r[1] = 0x10;
        r[12..12 + q.len()].copy_from_slice(q.as_bytes());
        r[48..52].copy_from_slice(&id.to_le_bytes());
        r
    }

    /// A model: input `x` and output `y` (4 floats), the def.json variables
    /// `x`, `y` then `extra_vars` (JSON object entries, each after a comma),
    /// queue `q` (type in, semaphore 1), pool.json's `dma` array `dma` and
    /// the pool stream `pool_bin`.
    pub(crate) fn model(extra_vars: &str, dma: &str, pool_bin: Vec<u8>) -> Vec<u8> {
        let kelf = r#"{"graphs":[{"definition":"sg00/def.json","name":"sg00"}],"version":"0.5","target":"*"}"#;
        let neff_json = r#"{"nodes":[{"op":"null","name":"x","inputs":[]},
            {"op":"tvm_op","name":"k","inputs":[[0,0,0]],"attrs":{"func_name":"__kelf","kelf":"kelf-a.json"}}],
            "arg_nodes":[0],"heads":[[1,0,0]],"node_row_ptr":[0,1,2],
            "attrs":{"shape":["list_shape",[[4],[4]]],"dltype":["list_str",["float32","float32"]],
                     "output_names":["y"]}}"#;
        let def = format!(
            r#"{{"var":{{"x":{{"type":"input","var_id":0,"size":16}},"y":{{"type":"output","var_id":1,"size":16}}{extra_vars}}},
                "dma_queue":{{"q":{{"type":"in","semaphore":1}}}},"pool":"pool.json"}}"#
        );
        let pool = format!(r#"{{"dma":{dma},"instr":"pool.bin"}}"#);
        neff_of(&[
            ("kelf-a.json", kelf.into()),
            ("neff.json", neff_json.into()),
            ("sg00/def.json", def.into_bytes()),
            ("sg00/pool.json", pool.into_bytes()),
            ("sg00/pool.bin", pool_bin),
        ])
    }
}
