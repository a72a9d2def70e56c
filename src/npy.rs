//! `.npy` files: the arrays `exec`, `run` and the front ends load and dump.
//! Header parsing and writing are the `npyz` crate's; this module checks
//! dtypes and shapes and hands back little-endian, C-order bytes.

use crate::files::{FileError, HostBytes, Input, read_input};
use crate::isa::enums::Dtype;
use npyz::{DType, Endianness, NpyHeader, Order, TypeChar, TypeStr, WriteOptions, WriterBuilder};
use std::path::{Path, PathBuf};

/// Why an `.npy` could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    /// The file could not be read or written.
    #[error("{path}: {source}", path = path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is larger than the input limit, or memory ran out ([`crate::files`]).
    #[error(transparent)]
    File(#[from] FileError),
    /// The file is not an `.npy` of a supported dtype and shape.
    #[error("{path}: bad .npy: {why}", path = path.display())]
    Bad {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: NpyFault,
    },
    /// The header of an `.npy` to write could not be made ([`write_npy`]).
    #[error("{path}: bad .npy: {source}", path = path.display())]
    Encode {
        /// The file.
        path: PathBuf,
        /// What npyz said.
        source: EncodeError,
    },
}

/// Why an `.npy` header could not be made ([`npy_header`]): npyz's errors.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// The dtype's descr does not parse as a type string.
    #[error("npy descr: {0}")]
    Descr(npyz::ParseTypeStrError),
    /// npyz refused to write the header.
    #[error("npy header: {0}")]
    Header(std::io::Error),
}

/// npyz's refusal of a header it parsed ([`NpyFault::Header`]), shared so
/// that the fault stays `Clone` and comparable (by kind and message).
#[derive(Clone, Debug)]
pub struct HeaderError(pub std::sync::Arc<std::io::Error>);

impl PartialEq for HeaderError {
    fn eq(&self, other: &HeaderError) -> bool {
        self.0.kind() == other.0.kind() && self.0.to_string() == other.0.to_string()
    }
}

impl Eq for HeaderError {}

impl std::fmt::Display for HeaderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// What is wrong with an `.npy` ([`NpyError::Bad`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NpyFault {
    /// No `\x93NUMPY` magic.
    #[error("not an .npy file (no \\x93NUMPY magic)")]
    Magic,
    /// A format version other than 1, 2 or 3.
    #[error("unsupported .npy version {0}")]
    Version(u8),
    /// A header longer than the file.
    #[error("the header claims {claims} bytes but the file holds {holds}")]
    HeaderLength {
        /// The header's length field.
        claims: u64,
        /// The file's length.
        holds: usize,
    },
    /// Brackets nested past [`MAX_HEADER_NESTING`].
    #[error("the header nests brackets more than {MAX_HEADER_NESTING} deep")]
    Nesting,
    /// A header the parser (npyz) refuses.
    #[error("{0}")]
    Header(HeaderError),
    /// A structured dtype.
    #[error("structured dtypes are not supported")]
    Structured,
    /// Elements or axes no `.npy` read takes ([`check_elements`]).
    #[error(transparent)]
    Elements(#[from] ElementFault),
    /// Fewer data bytes than the shape needs.
    #[error("shape {shape:?} needs more than the {data} data bytes present")]
    ShortData {
        /// The shape.
        shape: Vec<u64>,
        /// The data bytes.
        data: usize,
    },
    /// More data bytes than the shape needs.
    #[error("{data} data bytes for shape {shape:?} of {size}-byte elements")]
    DataLength {
        /// The data bytes.
        data: usize,
        /// The shape.
        shape: Vec<u64>,
        /// The element size.
        size: usize,
    },
    /// An array the front end does not pool (the front end's `Tensor::from_npy`).
    #[error(transparent)]
    Pooled(#[from] NotPooled),
}

/// Why an `.npy` array is not pooled (the front end's `Tensor::from_npy`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotPooled {
    /// `--dtype bf16` for an array that is not uint16 (its descr).
    #[error("--dtype bf16 needs a uint16 .npy of bf16 bits, not `{0}`")]
    NotBf16Bits(String),
    /// uint16 without `--dtype bf16`.
    #[error("a uint16 .npy: pass --dtype bf16 if it holds bf16 bits")]
    Uint16,
    /// Another element type (its descr).
    #[error("dtype `{0}` is not pooled (float32, float16, uint8, or uint16 with --dtype bf16)")]
    Dtype(String),
}

/// Why an array is not one of the load dtypes, or has no axis
/// ([`check_elements`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ElementFault {
    /// Another element type (its descr).
    #[error(
        "dtype `{0}` is not one of uint8, int8, uint16, int16, uint32, int32, int64, float16, float32"
    )]
    Dtype(String),
    /// A 0-d array.
    #[error("a 0-d array has no lanes axis")]
    ZeroD,
}

/// The kind of number an `.npy`'s elements are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemKind {
    /// Unsigned integers.
    Uint,
    /// Signed integers.
    Int,
    /// IEEE floats.
    Float,
}

/// A loaded `.npy`: its shape and its elements' little-endian bytes in C order.
#[derive(Debug)]
pub struct Npy {
    /// The shape (at least one axis).
    pub shape: Vec<u64>,
    /// Bytes per element.
    pub elem: usize,
    /// What the elements are.
    pub kind: ElemKind,
    /// The file's dtype string (e.g. `<f4`), for messages.
    pub descr: String,
    /// The data, little-endian, C order (shared with the mapped file when
    /// it is large and needs no reordering).
    pub data: HostBytes,
}

/// The deepest bracket nesting an `.npy` header may have (a dict holding a
/// shape tuple is 2; structured dtypes, which are refused later, a few more).
pub const MAX_HEADER_NESTING: usize = 8;

/// Parses the header of the `.npy` bytes `bytes` (read from `path`, named in
/// errors): the header and the offset of the data. A header that claims more
/// bytes than the file holds is refused before anything is allocated for it.
pub fn header(path: &Path, bytes: &[u8]) -> Result<(NpyHeader, usize), NpyError> {
    let err = |why: NpyFault| NpyError::Bad {
        path: path.to_owned(),
        why,
    };
    // The format: 6 magic bytes, major and minor version, then the header
    // length as a u16 (version 1) or u32 (versions 2 and 3), little-endian.
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(err(NpyFault::Magic));
    }
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as u64, 10u64),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as u64,
            12,
        ),
        v => return Err(err(NpyFault::Version(v))),
    };
    if start + len > bytes.len() as u64 {
        return Err(err(NpyFault::HeaderLength {
            claims: len,
            holds: bytes.len(),
        }));
    }
    // The header's Python literal parser backtracks exponentially on deeply
    // nested brackets (found by fuzzing: ~100 `{` take minutes). A real
    // header is a dict holding a shape tuple (structured dtypes nest a few
    // levels more), so deeper nesting is refused before parsing.
    let text = &bytes[start as usize..(start + len) as usize];
    let mut depth = 0usize;
    for &b in text {
        match b {
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_HEADER_NESTING {
            return Err(err(NpyFault::Nesting));
        }
    }
    let mut cur = std::io::Cursor::new(bytes);
    let header = NpyHeader::from_reader(&mut cur)
        .map_err(|e| err(NpyFault::Header(HeaderError(std::sync::Arc::new(e)))))?;
    Ok((header, cur.position() as usize))
}

/// Reads an `.npy` of one of the load dtypes. The file is read whole with the
/// input limit in force ([`crate::files::read_input`]); its header must not
/// promise more data than the file holds.
///
/// A regular file's data is read straight into the array's buffer after its
/// header; anything else is read whole and the data moved down over the
/// header in place. Either way a large array costs one allocation, not two.
pub fn read_npy(path: &Path) -> Result<Npy, NpyError> {
    if let Some(npy) = read_npy_direct(path)? {
        return Ok(npy);
    }
    let bytes = read_input(path)?;
    parse_npy_owned(path, bytes)
}

/// Parses the `.npy` bytes `bytes` (read from `path`, named in errors) as
/// [`read_npy`] does.
pub fn parse_npy(path: &Path, bytes: &[u8]) -> Result<Npy, NpyError> {
    let (mut npy, start, facts) = parse_head(path, bytes)?;
    npy.data = bytes[start..].to_vec().into();
    Ok(finish(npy, facts))
}

/// [`parse_npy`] on a whole input file ([`crate::files::map_input`]): the
/// data is shared with it, not copied, unless it needs reordering.
pub fn parse_npy_input(path: &Path, input: std::sync::Arc<Input>) -> Result<Npy, NpyError> {
    let (mut npy, start, facts) = parse_head(path, &input)?;
    let end = input.len();
    npy.data = HostBytes::shared(input, start..end).expect("the data is inside the file");
    Ok(finish(npy, facts))
}

/// [`parse_npy`] taking the file's bytes by value: the data is moved to the
/// front of the same buffer (no second allocation of the array's size).
pub fn parse_npy_owned(path: &Path, mut bytes: Vec<u8>) -> Result<Npy, NpyError> {
    let (mut npy, start, facts) = parse_head(path, &bytes)?;
    bytes.copy_within(start.., 0);
    bytes.truncate(bytes.len() - start);
    npy.data = bytes.into();
    Ok(finish(npy, facts))
}

/// What [`finish`] still has to do to the raw data: swap bytes, reorder Fortran.
struct Facts {
    big: bool,
    fortran: bool,
}

/// Little-endian, C order.
fn finish(mut npy: Npy, facts: Facts) -> Npy {
    if facts.big {
        for e in npy.data.make_mut().chunks_exact_mut(npy.elem) {
            e.reverse();
        }
    }
    if facts.fortran {
        npy.data = fortran_to_c(&npy.data, &npy.shape, npy.elem).into();
    }
    npy
}

/// Checks the header and the data's length; returns the array without its
/// data, where the data starts, and what [`finish`] must do.
fn parse_head(path: &Path, bytes: &[u8]) -> Result<(Npy, usize, Facts), NpyError> {
    let (header, start) = header(path, bytes)?;
    let (npy, facts) = check_head(path, &header, bytes.len() - start)?;
    Ok((npy, start, facts))
}

/// Checks a parsed header against `data_len` data bytes.
fn check_head(path: &Path, header: &NpyHeader, data_len: usize) -> Result<(Npy, Facts), NpyError> {
    let err = |why: NpyFault| NpyError::Bad {
        path: path.to_owned(),
        why,
    };
    let data = DataLen(data_len);
    let DType::Plain(ts) = header.dtype() else {
        return Err(err(NpyFault::Structured));
    };
    let size = ts.num_bytes().unwrap_or(0);
    let kind = match ts.type_char() {
        TypeChar::Float => Some(ElemKind::Float),
        TypeChar::Int => Some(ElemKind::Int),
        TypeChar::Uint => Some(ElemKind::Uint),
        _ => None,
    };
    let shape = header.shape().to_vec();
    check_elements(&ts.to_string(), kind, size, &shape).map_err(|e| err(e.into()))?;
    let kind = kind.unwrap_or(ElemKind::Uint);
    let n = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .and_then(|n| n.checked_mul(size as u64))
        .filter(|&n| n <= data.len() as u64);
    let Some(nbytes) = n else {
        return Err(err(NpyFault::ShortData {
            shape,
            data: data.len(),
        }));
    };
    if nbytes != data.len() as u64 {
        return Err(err(NpyFault::DataLength {
            data: data.len(),
            shape,
            size,
        }));
    }
    let facts = Facts {
        big: ts.endianness() == Endianness::Big,
        fortran: header.order() == Order::Fortran && shape.len() > 1,
    };
    let npy = Npy {
        shape,
        elem: size,
        kind,
        descr: ts.to_string(),
        data: HostBytes::default(),
    };
    Ok((npy, facts))
}

/// Refuses an array that is not one of the load dtypes (uint8, int8,
/// uint16, int16, uint32, int32, int64, float16, float32; `kind` is `None`
/// for any other kind of element, `descr` names the dtype in the message)
/// or that has no axis: the rule for every `.npy` read, and for the arrays
/// the Python bindings take.
pub fn check_elements(
    descr: &str,
    kind: Option<ElemKind>,
    size: usize,
    shape: &[u64],
) -> Result<(), ElementFault> {
    let ok = matches!(
        (kind, size),
        (Some(ElemKind::Uint | ElemKind::Int), 1 | 2 | 4)
            | (Some(ElemKind::Int), 8)
            | (Some(ElemKind::Float), 2 | 4)
    );
    if !ok {
        return Err(ElementFault::Dtype(descr.to_string()));
    }
    if shape.is_empty() {
        return Err(ElementFault::ZeroD);
    }
    Ok(())
}

/// A length standing in for the data slice in [`check_head`].
struct DataLen(usize);

impl DataLen {
    fn len(&self) -> usize {
        self.0
    }
}

/// [`read_npy`] for a regular file. An array of [`MAP_BYTES`] or more is
/// mapped, and its data shared with the mapping ([`HostBytes::shared`]): a
/// run's DMAs then read it straight from the page cache, where reading it
/// into a fresh buffer would fault in every page (`pool2d` on 265 MB: most
/// of the command's time). A smaller one is read: its header first, then the
/// data straight into its own buffer. `None` when the file is not a regular
/// file or too short to hold a header; [`read_npy`] then reads it whole and
/// reports.
fn read_npy_direct(path: &Path) -> Result<Option<Npy>, NpyError> {
    use std::io::{Read, Seek};
    let io = |source| NpyError::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Ok(None);
    }
    let limit = crate::files::input_limit().unwrap_or(crate::limits::MAX_INPUT_BYTES);
    if meta.len() > limit {
        return Err(FileError::TooLarge {
            path: path.to_owned(),
            limit,
            size: Some(meta.len()),
        }
        .into());
    }
    if meta.len() >= MAP_BYTES {
        let input = crate::files::map_bounded(path, limit)?;
        return parse_npy_input(path, std::sync::Arc::new(input)).map(Some);
    }
    // Magic (6), version (2), header length (2 in version 1, else 4).
    let mut pre = Vec::with_capacity(12);
    (&mut file).take(12).read_to_end(&mut pre).map_err(io)?;
    if pre.len() < 12 || &pre[..6] != b"\x93NUMPY" {
        return Ok(None);
    }
    let start = match pre[6] {
        1 => 10 + u16::from_le_bytes([pre[8], pre[9]]) as u64,
        _ => 12 + u32::from_le_bytes([pre[8], pre[9], pre[10], pre[11]]) as u64,
    };
    if start > meta.len() {
        return Ok(None);
    }
    let mut head = Vec::with_capacity(start as usize);
    file.rewind().map_err(io)?;
    (&mut file).take(start).read_to_end(&mut head).map_err(io)?;
    let (header, at) = header(path, &head)?;
    if at as u64 != start {
        return Ok(None);
    }
    let want = (meta.len() - start) as usize;
    let (mut npy, facts) = check_head(path, &header, want)?;
    let mut data = Vec::new();
    data.try_reserve_exact(want)
        .map_err(|_| FileError::OutOfMemory {
            path: path.to_owned(),
            read: start,
            limit,
        })?;
    file.take(want as u64).read_to_end(&mut data).map_err(io)?;
    if data.len() != want {
        // The file changed under us: read it whole instead.
        return Ok(None);
    }
    npy.data = data.into();
    Ok(Some(finish(npy, facts)))
}

/// Files of this many bytes or more are mapped rather than read.
const MAP_BYTES: u64 = 1 << 20;

/// Reorders Fortran-order elements (first axis fastest) into C order.
fn fortran_to_c(data: &[u8], shape: &[u64], size: usize) -> Vec<u8> {
    let n = data.len() / size;
    let mut out = vec![0u8; data.len()];
    let mut idx = vec![0u64; shape.len()];
    // Walk C order (last axis fastest) and compute each element's Fortran position.
    for c in 0..n {
        let mut f = 0u64;
        let mut stride = 1u64;
        for (d, &i) in idx.iter().enumerate() {
            f += i * stride;
            stride *= shape[d];
        }
        let f = f as usize;
        out[c * size..(c + 1) * size].copy_from_slice(&data[f * size..(f + 1) * size]);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

/// The `.npy` descr a dump of `dtype` is written with.
pub fn npy_descr(dtype: Dtype) -> &'static str {
    match dtype {
        Dtype::UINT8 | Dtype::FP8_EXP3 | Dtype::FP8_EXP4 | Dtype::FP8_EXP5 => "|u1",
        Dtype::INT8 => "|i1",
        Dtype::UINT16 | Dtype::BFLOAT16 => "<u2",
        Dtype::INT16 => "<i2",
        Dtype::FP16 => "<f2",
        Dtype::UINT32 => "<u4",
        Dtype::INT32 => "<i4",
        Dtype::FP32 | Dtype::FP32R => "<f4",
        Dtype::INT64 => "<i8",
        _ => "<u8",
    }
}

/// The bytes of an `.npy` of `shape` holding `data` (little-endian elements
/// of `dtype`, C order), header included.
pub fn npy_bytes(dtype: Dtype, shape: &[u64], data: &[u8]) -> Result<Vec<u8>, EncodeError> {
    let mut buf = npy_header(dtype, shape)?;
    buf.extend_from_slice(data);
    Ok(buf)
}

/// The header of [`npy_bytes`] alone: write it and then the data (e.g. with
/// [`crate::files::Outputs::write_parts`]) to make the file without a copy
/// of the data.
pub fn npy_header(dtype: Dtype, shape: &[u64]) -> Result<Vec<u8>, EncodeError> {
    let ts: TypeStr = npy_descr(dtype).parse().map_err(EncodeError::Descr)?;
    let mut buf = Vec::with_capacity(128);
    WriteOptions::new_header_only()
        .dtype(DType::Plain(ts))
        .shape(shape)
        .writer(&mut buf)
        .write_header_only()
        .map_err(EncodeError::Header)?;
    Ok(buf)
}

/// Writes `data` (little-endian elements of `dtype`, C order) as an `.npy` of
/// `shape` to `path`, by the output policy ([`crate::files::sink`]: a regular
/// file is replaced whole or not at all). Commands that write several files
/// put them in one [`crate::files::Outputs`] with [`npy_header`] instead.
pub fn write_npy(path: &Path, dtype: Dtype, shape: &[u64], data: &[u8]) -> Result<(), NpyError> {
    let header = npy_header(dtype, shape).map_err(|source| NpyError::Encode {
        path: path.to_owned(),
        source,
    })?;
    let mut outs = crate::files::Outputs::new();
    outs.write_parts(path, &[&header, data])?;
    Ok(outs.commit()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deeply_nested_headers_are_refused_quickly() {
        // Found by fuzzing: nested braces made the header parser backtrack for minutes.
        let mut h = "{'descr': '<f4', 'x': ".to_string();
        h.push_str(&"{".repeat(120));
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
        b.extend_from_slice(h.as_bytes());
        let t = std::time::Instant::now();
        let e = parse_npy(Path::new("n.npy"), &b).unwrap_err().to_string();
        assert!(e.contains("nests brackets more than 8 deep"), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn large_arrays_are_mapped_and_read_whole() {
        // Past MAP_BYTES: the data is the mapped file's, from its first byte to its last.
        let n = (MAP_BYTES as usize + 4096 + 12) / 4;
        let data: Vec<u8> = (0..n as u32).flat_map(|i| i.to_le_bytes()).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.npy");
        write_npy(&path, Dtype::UINT32, &[1, n as u64], &data).unwrap();
        let npy = read_npy(&path).unwrap();
        assert_eq!(npy.shape, [1, n as u64]);
        assert!(npy.data.is_shared(), "a large array is not mapped");
        assert!(npy.data == data, "the bytes differ");
        // Below MAP_BYTES the data is read into a buffer of its own.
        write_npy(&path, Dtype::UINT32, &[2, 3], &data[..24]).unwrap();
        let small = read_npy(&path).unwrap();
        assert!(!small.data.is_shared());
        assert!(small.data == data[..24], "the bytes differ");
    }

    #[test]
    fn a_mapped_big_endian_array_is_swapped_in_its_own_copy() {
        // '>u2' data of MAP_BYTES: mapped, then copied to be swapped; the file is untouched.
        let n = MAP_BYTES as usize / 2;
        let le: Vec<u8> = (0..n).flat_map(|i| (i as u16).to_le_bytes()).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("be.npy");
        write_npy(&path, Dtype::UINT16, &[n as u64], &le).unwrap();
        // The same header saying big-endian, and the data swapped.
        let mut file = std::fs::read(&path).unwrap();
        let at = file.windows(3).position(|w| w == b"<u2").unwrap();
        file[at] = b'>';
        let data_at = file.len() - le.len();
        for e in file[data_at..].chunks_exact_mut(2) {
            e.swap(0, 1);
        }
        std::fs::write(&path, &file).unwrap();
        let npy = read_npy(&path).unwrap();
        assert!(!npy.data.is_shared());
        assert_eq!(&npy.data[..6], [0, 0, 1, 0, 2, 0]);
        assert_eq!(&npy.data[2 * n - 2..], ((n - 1) as u16).to_le_bytes());
        assert_eq!(
            std::fs::read(&path).unwrap(),
            file,
            "the input file changed"
        );
    }

    #[test]
    fn fortran_order_is_transposed() {
        // 2x3 array [[0,1,2],[3,4,5]] stored column-major: 0,3,1,4,2,5.
        let f = [0u8, 3, 1, 4, 2, 5];
        assert_eq!(fortran_to_c(&f, &[2, 3], 1), [0, 1, 2, 3, 4, 5]);
    }
}
