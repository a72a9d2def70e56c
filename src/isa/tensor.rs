//! ADDR4 (SPEC §3) and the TENSOR4D descriptor (SPEC §4), with the walk they describe.

use crate::limits::*;
use std::fmt;

/// The on-chip memories a TENSOR4D can address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Region {
    /// State buffer: 128 × 256 KiB stride.
    Sbuf,
    /// Partial-sum buffer: 128 × 32 KiB stride.
    Psum,
}

impl Region {
    /// Lower-case name used in the text form.
    pub const fn name(self) -> &'static str {
        match self {
            Region::Sbuf => "sbuf",
            Region::Psum => "psum",
        }
    }

    /// First on-chip byte address of the region.
    pub const fn base(self) -> u32 {
        match self {
            Region::Sbuf => 0,
            Region::Psum => PSUM_BASE,
        }
    }

    /// log2 of the partition stride.
    pub const fn partition_shift(self) -> u32 {
        match self {
            Region::Sbuf => SBUF_PARTITION_SHIFT,
            Region::Psum => PSUM_PARTITION_SHIFT,
        }
    }

    /// Backed bytes per partition on `arch`.
    pub const fn active_bytes(self, arch: Arch) -> u32 {
        match self {
            Region::Sbuf => arch.sbuf_active_bytes(),
            Region::Psum => arch.psum_active_bytes(),
        }
    }

    /// The on-chip address of `offset` in `partition`.
    pub const fn addr(self, partition: u32, offset: u32) -> u32 {
        self.base() + (partition << self.partition_shift()) + offset
    }
}

/// A resolved on-chip location: region, start partition and byte offset within it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// SBUF or PSUM.
    pub region: Region,
    /// The partition of the first lane.
    pub partition: u32,
    /// Byte offset within the partition.
    pub offset: u32,
}

/// ADDR4: a u32 at the start of every tensor descriptor (lead, SPEC §3).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Addr4(pub u32);

impl Addr4 {
    /// Builds an immediate address of `offset` in `partition` of `region`.
    pub const fn new(region: Region, partition: u32, offset: u32) -> Addr4 {
        Addr4(region.addr(partition, offset))
    }

    /// Bit 31: byte 0 is a register id (resolved at run time).
    pub const fn is_register(self) -> bool {
        self.0 & ADDR4_REGISTER_MODE != 0
    }

    /// Bit 29: indirect (gather).
    pub const fn is_indirect(self) -> bool {
        self.0 & ADDR4_INDIRECT != 0
    }

    /// Bit 30: shape from register.
    pub const fn shape_from_register(self) -> bool {
        self.0 & ADDR4_SHAPE_FROM_REG != 0
    }

    /// Any of the three mode bits (EC-5: not emulated).
    pub const fn has_mode_bits(self) -> bool {
        self.0 & !ADDR4_BYTE_MASK != 0
    }

    /// Bits 0..28: the byte address in the on-chip space.
    pub const fn byte_addr(self) -> u32 {
        self.0 & ADDR4_BYTE_MASK
    }

    /// The region, partition and offset of [`Addr4::byte_addr`]; `None` outside SBUF and PSUM.
    pub const fn location(self) -> Option<Location> {
        let a = self.byte_addr();
        let region = if a < SBUF_END {
            Region::Sbuf
        } else if a >= PSUM_BASE && a < PSUM_END {
            Region::Psum
        } else {
            return None;
        };
        let rel = a - region.base();
        let shift = region.partition_shift();
        Some(Location {
            region,
            partition: rel >> shift,
            offset: rel & ((1 << shift) - 1),
        })
    }
}

impl fmt::Debug for Addr4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Addr4(0x{:08X})", self.0)
    }
}

/// `NEURON_ISA_TPB_TENSOR4D` (20 bytes): the free-dim walk of one lane (SPEC §4).
/// dim0 (X) is innermost; steps are signed and counted in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Tensor4d {
    /// Start address.
    pub addr: Addr4,
    /// Per-dim step in elements.
    pub step: [i16; 4],
    /// Per-dim element count (each must be non-zero).
    pub num: [u16; 4],
}

/// Bytes in an encoded TENSOR4D.
pub const TENSOR4D_BYTES: usize = 20;

impl Tensor4d {
    /// A tensor at `addr` with `(num, step)` per dim.
    pub const fn new(addr: Addr4, dims: [(u16, i16); 4]) -> Tensor4d {
        Tensor4d {
            addr,
            step: [dims[0].1, dims[1].1, dims[2].1, dims[3].1],
            num: [dims[0].0, dims[1].0, dims[2].0, dims[3].0],
        }
    }

    /// Decodes 20 bytes.
    pub fn from_bytes(b: &[u8; TENSOR4D_BYTES]) -> Tensor4d {
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        Tensor4d {
            addr: Addr4(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            step: std::array::from_fn(|i| u16_at(4 + 2 * i) as i16),
            num: std::array::from_fn(|i| u16_at(12 + 2 * i)),
        }
    }

    /// Encodes to 20 bytes.
    pub fn to_bytes(&self) -> [u8; TENSOR4D_BYTES] {
        let mut b = [0u8; TENSOR4D_BYTES];
        b[0..4].copy_from_slice(&self.addr.0.to_le_bytes());
        for i in 0..4 {
            b[4 + 2 * i..6 + 2 * i].copy_from_slice(&self.step[i].to_le_bytes());
            b[12 + 2 * i..14 + 2 * i].copy_from_slice(&self.num[i].to_le_bytes());
        }
        b
    }

    /// Elements one lane's walk visits (product of the four nums).
    pub fn elements(&self) -> u64 {
        self.num.iter().map(|&n| n as u64).product()
    }

    /// Smallest and largest element index (relative to the start) the walk
    /// visits. A dim with num 1 never applies its step (SPEC §4). Requires
    /// every num non-zero.
    #[inline(always)]
    pub fn index_range(&self) -> (i64, i64) {
        let mut lo = 0i64;
        let mut hi = 0i64;
        for d in 0..4 {
            let span = self.step[d] as i64 * (self.num[d] as i64 - 1).max(0);
            lo += span.min(0);
            hi += span.max(0);
        }
        (lo, hi)
    }

    /// Calls `f` with each element index (relative to the start) in walk order:
    /// x fastest, then y, z, w.
    pub fn for_each_index(&self, mut f: impl FnMut(i64)) {
        let s = self.step.map(|v| v as i64);
        for w in 0..self.num[3] as i64 {
            for z in 0..self.num[2] as i64 {
                for y in 0..self.num[1] as i64 {
                    let base = w * s[3] + z * s[2] + y * s[1];
                    for x in 0..self.num[0] as i64 {
                        f(base + x * s[0]);
                    }
                }
            }
        }
    }

    /// True when no two points of the walk share an element index, decided by a
    /// sufficient test: ordering the applied dims by |step|, each step exceeds
    /// the span of the dims below it. `false` means "not proven", not "overlaps".
    #[inline(always)]
    pub fn provably_injective(&self) -> bool {
        // (|step|, num - 1) per dim; a dim with num 1 contributes (0, 0) and is skipped.
        let mut d: [(i64, i64); 4] = std::array::from_fn(|i| {
            let n = (self.num[i] as i64 - 1).max(0);
            if n == 0 {
                (0, 0)
            } else {
                ((self.step[i] as i64).abs(), n)
            }
        });
        // A 5-comparator sorting network on |step|.
        for (a, b) in [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)] {
            if d[a].0 > d[b].0 {
                d.swap(a, b);
            }
        }
        let mut span = 0i64;
        for (step, n) in d {
            if n == 0 {
                continue;
            }
            if step <= span {
                return false;
            }
            span += step * n;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_follow_the_map() {
        let l = Addr4(0x0004_0010).location().unwrap();
        assert_eq!((l.region, l.partition, l.offset), (Region::Sbuf, 1, 0x10));
        let l = Addr4(0x0200_8004).location().unwrap();
        assert_eq!((l.region, l.partition, l.offset), (Region::Psum, 1, 4));
        assert!(Addr4(0x0240_0000).location().is_none());
        assert_eq!(
            Addr4::new(Region::Psum, 127, 8).0,
            0x0200_0000 + (127 << 15) + 8
        );
    }

    #[test]
    fn walk_order_and_range() {
        let t = Tensor4d::new(Addr4(0), [(2, 1), (2, 4), (2, 2), (2, 8)]);
        let mut v = vec![];
        t.for_each_index(|i| v.push(i));
        // Seed 000 §5.1: a,b,m,n, c,d,o,p, q,r,v,w, s,t,x,y of a 4×4 row-major map.
        assert_eq!(v, [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]);
        assert_eq!(t.index_range(), (0, 15));
        assert!(t.provably_injective());
        let neg = Tensor4d::new(Addr4(0), [(3, -2), (1, 100), (1, 0), (1, 0)]);
        assert_eq!(neg.index_range(), (-4, 0));
        let rep = Tensor4d::new(Addr4(0), [(2, 0), (1, 1), (1, 1), (1, 1)]);
        assert!(!rep.provably_injective());
    }

    #[test]
    fn bytes_round_trip() {
        let t = Tensor4d::new(
            Addr4(0x8000_0005),
            [(7, -3), (1, 0), (65535, 32767), (2, -32768)],
        );
        assert_eq!(Tensor4d::from_bytes(&t.to_bytes()), t);
    }
}
