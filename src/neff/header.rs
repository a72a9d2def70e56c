//! The 1024-byte NEFF header (SPEC-NEFF §1.2) and the runtime's gates on it
//! (§1.3, §1.4; §6 steps 1–7).

use super::NeffError;

/// Size of the fixed header; the payload always starts here (SPEC-NEFF §1.1).
pub const HEADER_BYTES: usize = 0x400;
/// The highest accepted `neff_version_major` (§1.4).
pub const MAX_MAJOR: u64 = 2;
/// Feature bits the runtime understands: bits 0..26 (§1.4).
pub const FEATURES_SUPPORTED: u64 = 0x7FF_FFFF;
/// Feature bits that make the runtime refuse a major-2 NEFF: bits 27..62 (§1.4).
pub const FEATURES_REFUSED: u64 = 0x7FFF_FFFF_F800_0000;

/// Field offsets (§1.2).
mod off {
    pub const PKG_VERSION: usize = 0x000;
    pub const HEADER_SIZE: usize = 0x008;
    pub const DATA_SIZE: usize = 0x010;
    pub const MAJOR: usize = 0x018;
    pub const MINOR: usize = 0x020;
    pub const BUILD: usize = 0x028;
    pub const NUM_TPB: usize = 0x0A8;
    pub const HASH: usize = 0x0AC;
    pub const UUID: usize = 0x0CC;
    pub const NAME: usize = 0x0DC;
    pub const REQUESTED_TPB: usize = 0x1DC;
    pub const TPB_PER_NODE: usize = 0x1E0;
    pub const FEATURE_BITS: usize = 0x220;
    pub const VNC_SIZE: usize = 0x228;
}

/// The header's fields, decoded little-endian (SPEC-NEFF §1.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// 1 = raw tar + SHA-256, 2 = gzip tar + MD5.
    pub pkg_version: u64,
    /// Must be below the file size; 0x400 in practice.
    pub header_size: u64,
    /// Stored payload length (compressed size for pkg 2).
    pub data_size: u64,
    /// Accepted 0..=2.
    pub major: u64,
    /// Never gated.
    pub minor: u64,
    /// Free ASCII build label, NUL-padded.
    pub build_version: [u8; 128],
    /// `unused_0` / `num_tpb`: not read by the loader.
    pub num_tpb: u32,
    /// pkg 1: SHA-256; pkg 2: MD5 in bytes 0..16.
    pub hash: [u8; 32],
    /// The model's RFC-4122 UUID.
    pub uuid: [u8; 16],
    /// The model name, NUL-padded.
    pub name: [u8; 256],
    /// Requested NeuronCore count.
    pub requested_tpb_count: u32,
    /// Per-node TPB counts.
    pub tpb_per_node: [u8; 64],
    /// Forward-compatibility capability mask (§1.4).
    pub feature_bits: u64,
    /// Logical NeuronCore size.
    pub vnc_size: u32,
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}

fn arr<const N: usize>(b: &[u8], o: usize) -> [u8; N] {
    b[o..o + N].try_into().expect("N bytes")
}

/// The bytes of a NUL-padded field up to its first NUL, as text (lossy).
pub fn c_str(field: &[u8]) -> String {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

impl Header {
    /// Decodes the first [`HEADER_BYTES`] of `b` (which must hold them).
    pub fn parse(b: &[u8; HEADER_BYTES]) -> Header {
        Header {
            pkg_version: u64_at(b, off::PKG_VERSION),
            header_size: u64_at(b, off::HEADER_SIZE),
            data_size: u64_at(b, off::DATA_SIZE),
            major: u64_at(b, off::MAJOR),
            minor: u64_at(b, off::MINOR),
            build_version: arr(b, off::BUILD),
            num_tpb: u32_at(b, off::NUM_TPB),
            hash: arr(b, off::HASH),
            uuid: arr(b, off::UUID),
            name: arr(b, off::NAME),
            requested_tpb_count: u32_at(b, off::REQUESTED_TPB),
            tpb_per_node: arr(b, off::TPB_PER_NODE),
            feature_bits: u64_at(b, off::FEATURE_BITS),
            vnc_size: u32_at(b, off::VNC_SIZE),
        }
    }

    /// Encodes the header; every byte not named by a field (the pad) is zero.
    pub fn to_bytes(&self) -> [u8; HEADER_BYTES] {
        let mut b = [0u8; HEADER_BYTES];
        b[off::PKG_VERSION..][..8].copy_from_slice(&self.pkg_version.to_le_bytes());
        b[off::HEADER_SIZE..][..8].copy_from_slice(&self.header_size.to_le_bytes());
        b[off::DATA_SIZE..][..8].copy_from_slice(&self.data_size.to_le_bytes());
        b[off::MAJOR..][..8].copy_from_slice(&self.major.to_le_bytes());
        b[off::MINOR..][..8].copy_from_slice(&self.minor.to_le_bytes());
        b[off::BUILD..][..128].copy_from_slice(&self.build_version);
        b[off::NUM_TPB..][..4].copy_from_slice(&self.num_tpb.to_le_bytes());
        b[off::HASH..][..32].copy_from_slice(&self.hash);
        b[off::UUID..][..16].copy_from_slice(&self.uuid);
        b[off::NAME..][..256].copy_from_slice(&self.name);
        b[off::REQUESTED_TPB..][..4].copy_from_slice(&self.requested_tpb_count.to_le_bytes());
        b[off::TPB_PER_NODE..][..64].copy_from_slice(&self.tpb_per_node);
        b[off::FEATURE_BITS..][..8].copy_from_slice(&self.feature_bits.to_le_bytes());
        b[off::VNC_SIZE..][..4].copy_from_slice(&self.vnc_size.to_le_bytes());
        b
    }

    /// The model name up to its first NUL.
    pub fn name(&self) -> String {
        c_str(&self.name)
    }

    /// The build label up to its first NUL.
    pub fn build_version(&self) -> String {
        c_str(&self.build_version)
    }

    /// The UUID in its canonical 8-4-4-4-12 lowercase form.
    pub fn uuid_string(&self) -> String {
        uuid::Uuid::from_bytes(self.uuid).hyphenated().to_string()
    }

    /// The stored digest as lowercase hex: 16 bytes for pkg 2, 32 otherwise.
    pub fn hash_hex(&self) -> String {
        let n = if self.pkg_version == 2 { 16 } else { 32 };
        self.hash[..n].iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// SPEC-NEFF §6 steps 1–7: the header gates in the runtime's order, with its
/// messages. Returns the header and the stored payload window.
pub fn check(bytes: &[u8]) -> Result<(Header, &[u8]), NeffError> {
    let len = bytes.len() as u64;
    // Step 1 (§1.3 row 2).
    let Some(head) = bytes.first_chunk::<HEADER_BYTES>() else {
        return Err(NeffError::ShortFile { len });
    };
    // Step 2.
    let h = Header::parse(head);
    // Step 3.
    if h.header_size >= len {
        return Err(NeffError::HeaderSize {
            header_size: h.header_size,
            len,
        });
    }
    // Step 4.
    if h.major > MAX_MAJOR {
        return Err(NeffError::Version {
            major: h.major,
            minor: h.minor,
        });
    }
    // Step 5.
    if h.major == 2 && h.feature_bits & FEATURES_REFUSED != 0 {
        return Err(NeffError::Features {
            minor: h.minor,
            bits: h.feature_bits & FEATURES_REFUSED,
        });
    }
    // Step 6.
    if len - (HEADER_BYTES as u64) < h.data_size {
        return Err(NeffError::DataSize {
            data_size: h.data_size,
            len,
        });
    }
    // Step 7.
    if !matches!(h.pkg_version, 1 | 2) {
        return Err(NeffError::Packager(h.pkg_version));
    }
    let data = &bytes[HEADER_BYTES..HEADER_BYTES + h.data_size as usize];
    Ok((h, data))
}
