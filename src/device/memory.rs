//! Device memory: SBUF and PSUM of one generation (SPEC §3).
//!
//! Each region has 128 partitions, and only the active bytes of each partition
//! exist: a partition is a slice of exactly `active_bytes` bytes, so no byte
//! outside active memory can be named, read or written. Everything is zero
//! when the memory is created. Host accesses that leave active memory are
//! errors, never panics.
//!
//! The bytes are stored in `u64` words so the executors can view a partition
//! as `&[u16]`, `&[u32]` or `&[u64]` (partition sizes are multiples of 8 and
//! element starts are aligned to their size, SPEC §3).

use crate::isa::tensor::{Location, Region};
use crate::limits::{Arch, PARTITIONS};
use std::ops::Range;

/// Bytes of one partition of device memory that the host is about to read
/// or write: indices into [`DeviceMemory::region_bytes`] (partition `p` is
/// `[p · active_bytes, (p + 1) · active_bytes)`; a range never crosses into
/// the next partition).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostRange {
    /// SBUF or PSUM.
    pub region: Region,
    /// Byte indices into the region.
    pub bytes: Range<usize>,
}

/// Bytes the host writes into SBUF or PSUM ([`crate::device::Write::Offer`]):
/// `bytes` from byte index `at` of `region` (indices as in [`HostRange`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostWrite<'a> {
    /// SBUF or PSUM.
    pub region: Region,
    /// Byte index into the region of the first byte.
    pub at: usize,
    /// The bytes.
    pub bytes: &'a [u8],
}

/// A host access outside active memory, or with inconsistent sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemError {
    /// The lanes or bytes do not fit the region's active memory.
    #[error(
        "{region} partitions {partition}..{end_partition} bytes {offset}..{end} leave active memory \
         (128 partitions of {active} bytes)",
        region = region.name(),
        end_partition = *partition as u64 + *lanes as u64,
        end = *offset as u64 + *len
    )]
    OutOfRange {
        /// The region.
        region: Region,
        /// First partition.
        partition: u32,
        /// Number of lanes (partitions).
        lanes: u32,
        /// Byte offset in each partition.
        offset: u32,
        /// Bytes per lane.
        len: u64,
        /// Active bytes per partition on this generation.
        active: u32,
    },
    /// The data does not hold `lanes × bytes per lane` bytes.
    #[error("{got} bytes given for {lanes} lanes of {len} bytes")]
    LengthMismatch {
        /// Number of lanes.
        lanes: u32,
        /// Bytes per lane.
        len: u64,
        /// Bytes given.
        got: usize,
    },
}

/// SBUF and PSUM of one generation: 128 partitions each, active bytes only.
pub struct DeviceMemory {
    arch: Arch,
    sbuf: Vec<u64>,
    psum: Vec<u64>,
}

impl Clone for DeviceMemory {
    fn clone(&self) -> DeviceMemory {
        DeviceMemory {
            arch: self.arch,
            sbuf: self.sbuf.clone(),
            psum: self.psum.clone(),
        }
    }

    /// Reuses the existing buffers (no new allocation when the generations match).
    fn clone_from(&mut self, source: &DeviceMemory) {
        self.arch = source.arch;
        self.sbuf.clone_from(&source.sbuf);
        self.psum.clone_from(&source.psum);
    }
}

impl std::fmt::Debug for DeviceMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceMemory")
            .field("arch", &self.arch)
            .finish_non_exhaustive()
    }
}

impl DeviceMemory {
    /// All-zero memory for `arch` (SPEC §3: all memory is zero when a run starts).
    pub fn new(arch: Arch) -> DeviceMemory {
        let words = |r: Region| PARTITIONS as usize * r.active_bytes(arch) as usize / 8;
        DeviceMemory {
            arch,
            sbuf: vec![0; words(Region::Sbuf)],
            psum: vec![0; words(Region::Psum)],
        }
    }

    /// The generation.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// Active bytes per partition of `region`.
    pub fn active_bytes(&self, region: Region) -> u32 {
        region.active_bytes(self.arch)
    }

    /// The whole region as bytes: partition `p` is
    /// `[p · active_bytes, (p + 1) · active_bytes)`.
    pub fn region_bytes(&self, region: Region) -> &[u8] {
        bytemuck::cast_slice(self.words(region))
    }

    /// The whole region as mutable bytes (same layout as [`DeviceMemory::region_bytes`]).
    pub fn region_bytes_mut(&mut self, region: Region) -> &mut [u8] {
        bytemuck::cast_slice_mut(self.words_mut(region))
    }

    /// Sets every byte of both regions to `byte`.
    pub fn fill(&mut self, byte: u8) {
        let w = u64::from_ne_bytes([byte; 8]);
        self.sbuf.fill(w);
        self.psum.fill(w);
    }

    /// The active bytes of one partition.
    pub fn partition(&self, region: Region, partition: u32) -> Result<&[u8], MemError> {
        let r = self.lane_range(region, partition, 1, 0, 0)?;
        let per = self.active_bytes(region) as usize;
        Ok(&self.region_bytes(region)[r.start..r.start + per])
    }

    /// The active bytes of one partition, mutable.
    pub fn partition_mut(&mut self, region: Region, partition: u32) -> Result<&mut [u8], MemError> {
        let r = self.lane_range(region, partition, 1, 0, 0)?;
        let per = self.active_bytes(region) as usize;
        Ok(&mut self.region_bytes_mut(region)[r.start..r.start + per])
    }

    /// Checks that `lanes` partitions from `loc.partition`, `len` bytes each
    /// from `loc.offset`, lie in active memory.
    pub fn check(&self, loc: Location, lanes: u32, len: u64) -> Result<(), MemError> {
        self.lane_range(loc.region, loc.partition, lanes, loc.offset, len)
            .map(|_| ())
    }

    /// Reads `len` bytes at `loc.offset` from each of `lanes` partitions
    /// starting at `loc.partition`, lane after lane.
    pub fn read(&self, loc: Location, lanes: u32, len: u64) -> Result<Vec<u8>, MemError> {
        self.check(loc, lanes, len)?;
        let bytes = self.region_bytes(loc.region);
        let per = self.active_bytes(loc.region) as usize;
        let mut out = Vec::with_capacity(lanes as usize * len as usize);
        for lane in 0..lanes as usize {
            let start = (loc.partition as usize + lane) * per + loc.offset as usize;
            out.extend_from_slice(&bytes[start..start + len as usize]);
        }
        Ok(out)
    }

    /// Writes `data` (lane after lane, `data.len() / lanes` bytes each) at
    /// `loc.offset` of each of `lanes` partitions starting at `loc.partition`.
    pub fn write(&mut self, loc: Location, lanes: u32, data: &[u8]) -> Result<(), MemError> {
        let len = match data.len().checked_div(lanes as usize) {
            Some(l) if l * lanes as usize == data.len() => l as u64,
            None if data.is_empty() => 0,
            _ => {
                return Err(MemError::LengthMismatch {
                    lanes,
                    len: data.len() as u64 / lanes.max(1) as u64,
                    got: data.len(),
                });
            }
        };
        self.check(loc, lanes, len)?;
        let per = self.active_bytes(loc.region) as usize;
        let bytes = self.region_bytes_mut(loc.region);
        for (lane, chunk) in data.chunks_exact(len.max(1) as usize).enumerate() {
            let start = (loc.partition as usize + lane) * per + loc.offset as usize;
            bytes[start..start + len as usize].copy_from_slice(chunk);
        }
        Ok(())
    }

    /// The byte range of the region covering `lanes` partitions from
    /// `partition` (whole partitions), after checking the access fits.
    fn lane_range(
        &self,
        region: Region,
        partition: u32,
        lanes: u32,
        offset: u32,
        len: u64,
    ) -> Result<std::ops::Range<usize>, MemError> {
        let active = self.active_bytes(region);
        let fits = partition as u64 + lanes as u64 <= PARTITIONS as u64
            && (lanes == 0 || partition < PARTITIONS)
            && offset as u64 + len <= active as u64;
        if !fits {
            return Err(MemError::OutOfRange {
                region,
                partition,
                lanes,
                offset,
                len,
                active,
            });
        }
        let per = active as usize;
        Ok(partition as usize * per..(partition + lanes) as usize * per)
    }

    pub(crate) fn words(&self, region: Region) -> &[u64] {
        match region {
            Region::Sbuf => &self.sbuf,
            Region::Psum => &self.psum,
        }
    }

    pub(crate) fn words_mut(&mut self, region: Region) -> &mut [u64] {
        match region {
            Region::Sbuf => &mut self.sbuf,
            Region::Psum => &mut self.psum,
        }
    }

    /// Both regions at once, mutable: `(sbuf, psum)` words.
    pub(crate) fn split_mut(&mut self) -> (&mut [u64], &mut [u64]) {
        (&mut self.sbuf, &mut self.psum)
    }

    /// Words per partition of `region`.
    pub(crate) fn partition_words(&self, region: Region) -> usize {
        self.active_bytes(region) as usize / 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_table() {
        for (arch, sb) in [
            (Arch::Sunda, 192 * 1024),
            (Arch::Cayman, 224 * 1024),
            (Arch::Mariana, 256 * 1024),
        ] {
            let m = DeviceMemory::new(arch);
            assert_eq!(m.region_bytes(Region::Sbuf).len(), 128 * sb);
            assert_eq!(m.region_bytes(Region::Psum).len(), 128 * 16 * 1024);
            assert!(m.region_bytes(Region::Sbuf).iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn host_access_round_trips_and_stays_inside() {
        let mut m = DeviceMemory::new(Arch::Cayman);
        let loc = Location {
            region: Region::Psum,
            partition: 126,
            offset: 16 * 1024 - 4,
        };
        m.write(loc, 2, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        assert_eq!(m.read(loc, 2, 4).unwrap(), [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(m.partition(Region::Psum, 127).unwrap()[16 * 1024 - 1], 8);
        assert!(m.read(loc, 2, 5).is_err());
        assert!(m.read(loc, 3, 4).is_err());
        assert!(m.write(loc, 2, &[0; 7]).is_err());
        assert!(m.partition(Region::Sbuf, 128).is_err());
        let far = Location {
            region: Region::Sbuf,
            partition: 200,
            offset: 0,
        };
        assert!(m.read(far, 0, 0).is_err());
        assert!(m.read(far, 1, u64::MAX).is_err());
    }
}
