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
    #[inline]
    pub const fn active_bytes(self, arch: Arch) -> u32 {
        // One load from a table built at compile time from the `Arch` methods
        // (the validator asks this twice per Pool record).
        const TABLE: [[u32; 2]; Arch::ALL.len()] = {
            let mut t = [[0; 2]; Arch::ALL.len()];
            let mut i = 0;
            while i < Arch::ALL.len() {
                let a = Arch::ALL[i];
                t[a as usize] = [a.sbuf_active_bytes(), a.psum_active_bytes()];
                i += 1;
            }
            t
        };
        TABLE[arch as usize][self as usize]
    }

    /// Splits a byte address inside this region into partition and offset.
    /// Matching on the region first gives each arm constant shifts and masks,
    /// which the validator's hot loop prefers to a variable shift.
    #[inline(always)]
    const fn locate(self, a: u32) -> Location {
        const fn split(region: Region, rel: u32, shift: u32) -> Location {
            Location {
                region,
                partition: rel >> shift,
                offset: rel & ((1 << shift) - 1),
            }
        }
        match self {
            Region::Sbuf => split(self, a - Region::Sbuf.base(), SBUF_PARTITION_SHIFT),
            Region::Psum => split(self, a - Region::Psum.base(), PSUM_PARTITION_SHIFT),
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
        Some(region.locate(a))
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
    #[inline]
    pub fn from_bytes(b: &[u8; TENSOR4D_BYTES]) -> Tensor4d {
        // Written out rather than with `array::from_fn`, which the compiler
        // left as an out-of-line call.
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        Tensor4d {
            addr: Addr4(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            step: [u16_at(4), u16_at(6), u16_at(8), u16_at(10)].map(|v| v as i16),
            num: [u16_at(12), u16_at(14), u16_at(16), u16_at(18)],
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
        Dims::elements(self)
    }

    /// Smallest and largest element index (relative to the start) the walk
    /// visits. A dim with num 1 never applies its step (SPEC §4). Requires
    /// every num non-zero.
    #[inline]
    pub fn index_range(&self) -> (i64, i64) {
        Dims::index_range(self)
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
    #[inline]
    pub fn provably_injective(&self) -> bool {
        Dims::provably_injective(self)
    }
}

/// `TENSOR3D` (16 bytes, SPEC-KERNELS §0.3): ADDR4 @0, `i16 step_elem[3]` @4,
/// `u16 num_elem[3]` @10. dim0 innermost, walked like a [`Tensor4d`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Tensor3d {
    /// Start address.
    pub addr: Addr4,
    /// Per-dim step in elements.
    pub step: [i16; 3],
    /// Per-dim element count.
    pub num: [u16; 3],
}

/// Bytes in an encoded TENSOR3D.
pub const TENSOR3D_BYTES: usize = 16;

impl Tensor3d {
    /// A tensor at `addr` with `(num, step)` per dim.
    pub const fn new(addr: Addr4, dims: [(u16, i16); 3]) -> Tensor3d {
        Tensor3d {
            addr,
            step: [dims[0].1, dims[1].1, dims[2].1],
            num: [dims[0].0, dims[1].0, dims[2].0],
        }
    }

    /// Decodes 16 bytes.
    pub fn from_bytes(b: &[u8; TENSOR3D_BYTES]) -> Tensor3d {
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        Tensor3d {
            addr: Addr4(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            step: [u16_at(4), u16_at(6), u16_at(8)].map(|v| v as i16),
            num: [u16_at(10), u16_at(12), u16_at(14)],
        }
    }

    /// Encodes to 16 bytes.
    pub fn to_bytes(&self) -> [u8; TENSOR3D_BYTES] {
        let mut b = [0u8; TENSOR3D_BYTES];
        b[0..4].copy_from_slice(&self.addr.0.to_le_bytes());
        for i in 0..3 {
            b[4 + 2 * i..6 + 2 * i].copy_from_slice(&self.step[i].to_le_bytes());
            b[10 + 2 * i..12 + 2 * i].copy_from_slice(&self.num[i].to_le_bytes());
        }
        b
    }

    /// The same walk as a TENSOR4D whose dim3 has num 1 (its step never applies).
    pub const fn to_4d(&self) -> Tensor4d {
        Tensor4d {
            addr: self.addr,
            step: [self.step[0], self.step[1], self.step[2], 0],
            num: [self.num[0], self.num[1], self.num[2], 1],
        }
    }

    /// `count(T)`: the product of the three nums, exact (SPEC-KERNELS §0.3).
    pub fn elements(&self) -> u64 {
        self.num.iter().map(|&n| n as u64).product()
    }
}

/// `TENSOR2D` (12 bytes, SPEC-KERNELS §0.3): ADDR4 @0, `i16 step[2]` @4,
/// `u16 num[2]` @8. dim0 innermost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Tensor2d {
    /// Start address.
    pub addr: Addr4,
    /// Per-dim step in elements.
    pub step: [i16; 2],
    /// Per-dim element count.
    pub num: [u16; 2],
}

/// Bytes in an encoded TENSOR2D.
pub const TENSOR2D_BYTES: usize = 12;

impl Tensor2d {
    /// A tensor at `addr` with `(num, step)` per dim.
    pub const fn new(addr: Addr4, dims: [(u16, i16); 2]) -> Tensor2d {
        Tensor2d {
            addr,
            step: [dims[0].1, dims[1].1],
            num: [dims[0].0, dims[1].0],
        }
    }

    /// Decodes 12 bytes.
    pub fn from_bytes(b: &[u8; TENSOR2D_BYTES]) -> Tensor2d {
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        Tensor2d {
            addr: Addr4(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            step: [u16_at(4) as i16, u16_at(6) as i16],
            num: [u16_at(8), u16_at(10)],
        }
    }

    /// Encodes to 12 bytes.
    pub fn to_bytes(&self) -> [u8; TENSOR2D_BYTES] {
        let mut b = [0u8; TENSOR2D_BYTES];
        b[0..4].copy_from_slice(&self.addr.0.to_le_bytes());
        for i in 0..2 {
            b[4 + 2 * i..6 + 2 * i].copy_from_slice(&self.step[i].to_le_bytes());
            b[8 + 2 * i..10 + 2 * i].copy_from_slice(&self.num[i].to_le_bytes());
        }
        b
    }

    /// The same walk as a TENSOR4D whose dims 2 and 3 have num 1.
    pub const fn to_4d(&self) -> Tensor4d {
        Tensor4d {
            addr: self.addr,
            step: [self.step[0], self.step[1], 0, 0],
            num: [self.num[0], self.num[1], 1, 1],
        }
    }

    /// `count(T)`: num0 · num1, exact.
    pub fn elements(&self) -> u64 {
        self.num[0] as u64 * self.num[1] as u64
    }
}

/// `DATA4D` (20 bytes, Iota only, SPEC-KERNELS §0.3): `i32 base` @0,
/// `i16 step_elem[4]` @4, `u16 num_elem[4]` @12. The generator pattern; it has
/// no address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Data4d {
    /// The ramp start.
    pub base: i32,
    /// Per-dim increment (signed).
    pub step: [i16; 4],
    /// Per-dim count.
    pub num: [u16; 4],
}

/// Bytes in an encoded DATA4D.
pub const DATA4D_BYTES: usize = 20;

impl Data4d {
    /// A pattern from `base` with `(num, step)` per dim.
    pub const fn new(base: i32, dims: [(u16, i16); 4]) -> Data4d {
        Data4d {
            base,
            step: [dims[0].1, dims[1].1, dims[2].1, dims[3].1],
            num: [dims[0].0, dims[1].0, dims[2].0, dims[3].0],
        }
    }

    /// Decodes 20 bytes: the same byte layout as a TENSOR4D with the base in
    /// place of the address.
    pub fn from_bytes(b: &[u8; DATA4D_BYTES]) -> Data4d {
        let t = Tensor4d::from_bytes(b);
        Data4d {
            base: t.addr.0 as i32,
            step: t.step,
            num: t.num,
        }
    }

    /// Encodes to 20 bytes.
    pub fn to_bytes(&self) -> [u8; DATA4D_BYTES] {
        Tensor4d {
            addr: Addr4(self.base as u32),
            step: self.step,
            num: self.num,
        }
        .to_bytes()
    }

    /// `count(DATA4D)`: the product of the four nums, exact.
    pub fn elements(&self) -> u64 {
        self.num.iter().map(|&n| n as u64).product()
    }
}

/// A TENSOR4D read in place from its 20 encoded bytes: each accessor decodes
/// its field when called. The validator's hot path uses it so that a
/// descriptor is never copied out of its record, and each field costs one
/// load where it is used.
#[derive(Clone, Copy, Debug)]
pub struct Tensor4dBytes<'a>(pub &'a [u8; TENSOR4D_BYTES]);

impl<'a> Tensor4dBytes<'a> {
    /// The start address.
    #[inline]
    pub fn addr(self) -> Addr4 {
        Addr4(u32::from_le_bytes(*self.bytes::<4>(0)))
    }

    /// The `N` bytes at `at` (one load where the compiler can see `at`).
    #[inline(always)]
    fn bytes<const N: usize>(self, at: usize) -> &'a [u8; N] {
        self.0[at..at + N].try_into().expect("in the descriptor")
    }

    /// The owned descriptor.
    pub fn decode(self) -> Tensor4d {
        Tensor4d::from_bytes(self.0)
    }
}

/// Read access to the four dims of a descriptor, owned ([`Tensor4d`]) or in
/// place ([`Tensor4dBytes`]). The walk arithmetic is written once, here, for
/// both.
pub trait Dims: Copy {
    /// The step of dim `d` (0 = X), in elements.
    fn step(self, d: usize) -> i16;

    /// The element count of dim `d` (0 = X).
    fn num(self, d: usize) -> u16;

    /// Elements one lane's walk visits (product of the four nums).
    #[inline(always)]
    fn elements(self) -> u64 {
        let n = |d| self.num(d) as u64;
        n(0) * n(1) * n(2) * n(3)
    }

    /// Smallest and largest element index (relative to the start) the walk
    /// visits. A dim with num 1 never applies its step (SPEC §4). Requires
    /// every num non-zero.
    #[inline(always)]
    fn index_range(self) -> (i64, i64) {
        let spans = spans(self);
        if !any_negative_step(self) {
            // Every span is >= 0: the lowest index is the start.
            return (0, spans.iter().sum());
        }
        let lo = spans.iter().map(|&s| s.min(0)).sum();
        let hi = spans.iter().map(|&s| s.max(0)).sum();
        (lo, hi)
    }

    /// True when no two points of the walk share an element index, decided by a
    /// sufficient test: ordering the applied dims by |step|, each step exceeds
    /// the span of the dims below it. `false` means "not proven", not "overlaps".
    #[inline(always)]
    fn provably_injective(self) -> bool {
        // Fast path: encoders put the smallest step innermost, so the dims
        // usually pass the test in walk order. Passing in walk order means the
        // applied |steps| strictly ascend in walk order, which is then exactly
        // the sorted order, so the result equals the general test's.
        injective_in_walk_order(self) || injective_sorted(self)
    }
}

impl Dims for &Tensor4d {
    #[inline(always)]
    fn step(self, d: usize) -> i16 {
        self.step[d]
    }

    #[inline(always)]
    fn num(self, d: usize) -> u16 {
        self.num[d]
    }
}

impl Dims for Tensor4dBytes<'_> {
    #[inline(always)]
    fn step(self, d: usize) -> i16 {
        i16::from_le_bytes(*self.bytes(4 + 2 * d))
    }

    #[inline(always)]
    fn num(self, d: usize) -> u16 {
        u16::from_le_bytes(*self.bytes(12 + 2 * d))
    }
}

/// Per dim, the distance in elements the walk covers along it:
/// `step · (num − 1)`, which is 0 for a dim whose step is never applied.
#[inline(always)]
fn spans(t: impl Dims) -> [i64; 4] {
    let span = |d: usize| t.step(d) as i64 * t.num(d).saturating_sub(1) as i64;
    [span(0), span(1), span(2), span(3)]
}

/// True when some step is negative. (The OR of the steps is negative iff one
/// of them is.) When none is, |step| = step and |span| = span, and the hot
/// paths above skip the absolute values and minima.
#[inline(always)]
fn any_negative_step(t: impl Dims) -> bool {
    (t.step(0) | t.step(1) | t.step(2) | t.step(3)) < 0
}

/// The sufficient injectivity test with the dims taken in walk order (x, y, z, w).
#[inline(always)]
fn injective_in_walk_order(t: impl Dims) -> bool {
    if any_negative_step(t) {
        injective_in_walk_order_with(t, i64::abs)
    } else {
        // No negative step: the absolute value is the identity.
        injective_in_walk_order_with(t, |v| v)
    }
}

/// The walk-order test, with `abs` the absolute value on `t`'s steps and spans.
#[inline(always)]
fn injective_in_walk_order_with(t: impl Dims, abs: impl Fn(i64) -> i64) -> bool {
    let spans = spans(t);
    // Σ |step| · (num − 1) over the dims below the current one.
    let mut below = 0i64;
    for (d, &span) in spans.iter().enumerate() {
        // A dim with num 0 or 1 never applies its step.
        if t.num(d) > 1 && abs(t.step(d) as i64) <= below {
            return false;
        }
        below += abs(span);
    }
    true
}

/// The sufficient injectivity test with the applied dims sorted by |step|
/// (out of line: the walk-order test settles the common case).
#[inline(never)]
fn injective_sorted(t: impl Dims) -> bool {
    // (|step|, num - 1) per dim; a dim with num 1 contributes (0, 0) and is skipped.
    let mut d: [(i64, i64); 4] = std::array::from_fn(|i| {
        let n = (t.num(i) as i64 - 1).max(0);
        if n == 0 {
            (0, 0)
        } else {
            ((t.step(i) as i64).abs(), n)
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
