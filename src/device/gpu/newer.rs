//! Which bytes of device memory the GPU may hold newer than the host: per
//! partition of SBUF and PSUM, one span from the first byte a queued op may
//! write to the last. The executor reads back only these bytes — the part of
//! a DMA's footprint that lies in them, and at the end of a run all of them —
//! because everywhere else the host's copy is already current.

use crate::device::memory::HostRange;
use crate::device::ops::Op;
use crate::isa::tensor::Region;
use crate::limits::{Arch, PARTITIONS};

const EMPTY: (usize, usize) = (usize::MAX, 0);

/// Per region and partition, `[lo, hi)` of partition-relative bytes (empty:
/// `lo >= hi`).
pub(crate) struct Newer {
    arch: Arch,
    spans: [[(usize, usize); PARTITIONS as usize]; 2],
}

fn slot(region: Region) -> usize {
    match region {
        Region::Sbuf => 0,
        Region::Psum => 1,
    }
}

impl Newer {
    /// Nothing newer on the GPU.
    pub(crate) fn new(arch: Arch) -> Newer {
        Newer {
            arch,
            spans: [[EMPTY; PARTITIONS as usize]; 2],
        }
    }

    /// The host is current everywhere again.
    pub(crate) fn clear(&mut self) {
        self.spans = [[EMPTY; PARTITIONS as usize]; 2];
    }

    /// Every byte may be newer on the GPU.
    pub(crate) fn set_all(&mut self) {
        for region in [Region::Sbuf, Region::Psum] {
            let all = (0, region.active_bytes(self.arch) as usize);
            self.spans[slot(region)] = [all; PARTITIONS as usize];
        }
    }

    fn add(&mut self, region: Region, partition: usize, lo: usize, hi: usize) {
        let s = &mut self.spans[slot(region)][partition];
        *s = (s.0.min(lo), s.1.max(hi));
    }

    /// The host handed the GPU the bytes of `r` without writing its own
    /// copy: they become newer on the GPU.
    pub(crate) fn add_range(&mut self, r: &HostRange) {
        if r.bytes.is_empty() {
            return;
        }
        let active = r.region.active_bytes(self.arch) as usize;
        let p = r.bytes.start / active;
        self.add(
            r.region,
            p,
            r.bytes.start - p * active,
            r.bytes.end - p * active,
        );
    }

    /// `op` is queued: the bytes it may write become newer on the GPU.
    pub(crate) fn add_op(&mut self, op: &Op) {
        let Some((dst, size)) = op.dst_walk() else {
            self.set_all();
            return;
        };
        let (lo, hi) = dst.byte_range(size);
        let active = dst.region.active_bytes(self.arch) as i64;
        if lo < 0 || hi > active {
            // Validation keeps walks inside the active bytes; be safe anyway.
            self.set_all();
            return;
        }
        let first = dst.partition as usize;
        let last = (first + op.channels() as usize).min(PARTITIONS as usize);
        for p in first..last {
            self.add(dst.region, p, lo as usize, hi as usize);
        }
    }

    /// The span of the partition `r` lies in, as region byte indices;
    /// `None` when it is empty.
    fn span_of(&self, r: &HostRange) -> Option<(usize, usize)> {
        let active = r.region.active_bytes(self.arch) as usize;
        let p = r.bytes.start / active;
        let (lo, hi) = self.spans[slot(r.region)][p];
        if lo < hi {
            Some((p * active + lo, p * active + hi))
        } else {
            None // EMPTY: no arithmetic on its usize::MAX
        }
    }

    /// The part of `r` (within one partition) that may be newer on the GPU.
    pub(crate) fn clip(&self, r: &HostRange) -> Option<HostRange> {
        let (lo, hi) = self.span_of(r)?;
        let (lo, hi) = (r.bytes.start.max(lo), r.bytes.end.min(hi));
        (lo < hi).then_some(HostRange {
            region: r.region,
            bytes: lo..hi,
        })
    }

    /// The host read `r` back (a range [`Newer::clip`] gave): a partition's
    /// span that `r` covers whole is current on the host again.
    pub(crate) fn read_back(&mut self, r: &HostRange) {
        let Some((lo, hi)) = self.span_of(r) else {
            return;
        };
        if r.bytes.start <= lo && hi <= r.bytes.end {
            let p = r.bytes.start / r.region.active_bytes(self.arch) as usize;
            self.spans[slot(r.region)][p] = EMPTY;
        }
    }

    /// Every span, as ranges of region bytes.
    pub(crate) fn ranges(&self) -> Vec<HostRange> {
        let mut v = Vec::new();
        for region in [Region::Sbuf, Region::Psum] {
            let active = region.active_bytes(self.arch) as usize;
            for (p, &(lo, hi)) in self.spans[slot(region)].iter().enumerate() {
                if lo < hi {
                    v.push(HostRange {
                        region,
                        bytes: p * active + lo..p * active + hi,
                    });
                }
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(region: Region, p: usize, lo: usize, hi: usize) -> HostRange {
        let a = region.active_bytes(Arch::Cayman) as usize;
        HostRange {
            region,
            bytes: p * a + lo..p * a + hi,
        }
    }

    #[test]
    fn clips_to_the_newer_span_of_the_same_partition() {
        let mut n = Newer::new(Arch::Cayman);
        n.add(Region::Sbuf, 3, 100, 200);
        n.add(Region::Sbuf, 3, 150, 300);
        assert_eq!(
            n.clip(&range(Region::Sbuf, 3, 0, 120)),
            Some(range(Region::Sbuf, 3, 100, 120))
        );
        assert_eq!(n.clip(&range(Region::Sbuf, 3, 300, 400)), None);
        assert_eq!(n.clip(&range(Region::Sbuf, 4, 0, 400)), None);
        assert_eq!(n.clip(&range(Region::Psum, 3, 0, 400)), None);
        assert_eq!(n.ranges(), vec![range(Region::Sbuf, 3, 100, 300)]);
        n.read_back(&range(Region::Sbuf, 3, 100, 299));
        assert_eq!(n.ranges().len(), 1, "a partial read leaves the span");
        n.read_back(&range(Region::Sbuf, 3, 100, 300));
        assert!(n.ranges().is_empty(), "a whole read clears it");
        n.add(Region::Sbuf, 3, 100, 300);
        n.set_all();
        assert_eq!(n.ranges().len(), 256);
        n.clear();
        assert!(n.ranges().is_empty());
    }
}
