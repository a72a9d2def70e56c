//! Lane memory shared by the CPU kernels: each lane's src and dst words
//! (split so that lanes run on separate threads) and the TENSOR4D walk.

use crate::device::memory::DeviceMemory;
use crate::device::ops::pool::Side;
use crate::isa::tensor::Region;

/// The memory one lane reads and writes, as `u64` words.
pub(crate) enum LaneIo<'a> {
    /// src and dst in the same partition (EC-21: their bytes are disjoint).
    Same(&'a mut [u64]),
    /// src and dst in different partitions (or a snapshot of src).
    Split { src: &'a [u64], dst: &'a mut [u64] },
}

impl LaneIo<'_> {
    #[inline(always)]
    pub(crate) fn src(&self) -> &[u64] {
        match self {
            LaneIo::Same(b) => b,
            LaneIo::Split { src, .. } => src,
        }
    }
    #[inline(always)]
    pub(crate) fn dst(&mut self) -> &mut [u64] {
        match self {
            LaneIo::Same(b) => b,
            LaneIo::Split { dst, .. } => dst,
        }
    }
}

/// Byte offsets of element (0, 0, 0, 0) of src and dst within each lane's slices.
#[derive(Clone, Copy)]
pub(crate) struct At {
    pub(crate) src: i64,
    pub(crate) dst: i64,
}

/// Splits device memory into one [`LaneIo`] per lane `p` of `0..channels`
/// for which `keep(p)`, in order. When src and dst share a region but not a
/// partition, a lane's src partition is another lane's dst partition; the
/// kept lanes' src is then copied first (EC-21 makes the copy read exactly
/// what the record would). `src_size` is the byte size of one src element.
pub(crate) fn split_lanes<'a>(
    channels: u32,
    keep: impl Fn(u32) -> bool,
    s: &Side,
    src_size: usize,
    d: &Side,
    mem: &'a mut DeviceMemory,
    snapshot: &'a mut Vec<u64>,
) -> (Vec<LaneIo<'a>>, At) {
    let ch = channels as usize;
    let spw = mem.partition_words(s.region);
    let dpw = mem.partition_words(d.region);
    let mut at = At {
        src: s.offset as i64,
        dst: d.offset as i64,
    };
    let lanes = if s.region != d.region {
        let (sbuf, psum) = mem.split_mut();
        let (src, dst): (&[u64], &mut [u64]) = match s.region {
            Region::Sbuf => (sbuf, psum),
            Region::Psum => (psum, sbuf),
        };
        (0..)
            .zip(src.chunks(spw).skip(s.partition as usize))
            .zip(dst.chunks_mut(dpw).skip(d.partition as usize))
            .take(ch)
            .map(|((p, src), dst)| (p, LaneIo::Split { src, dst }))
            .filter(|(p, _)| keep(*p))
            .map(|(_, io)| io)
            .collect()
    } else if s.partition == d.partition {
        (0..)
            .zip(mem.words_mut(s.region).chunks_mut(spw))
            .skip(s.partition as usize)
            .take(ch)
            .map(|(p, words)| (p - s.partition, LaneIo::Same(words)))
            .filter(|(p, _)| keep(*p))
            .map(|(_, io)| io)
            .collect()
    } else {
        let (lo, hi) = s.byte_range(src_size);
        let (w0, w1) = ((lo / 8) as usize, (hi as usize).div_ceil(8));
        let region = mem.words(s.region);
        for lane in (0..channels).filter(|&p| keep(p)) {
            let p = (s.partition + lane) as usize * spw;
            snapshot.extend_from_slice(&region[p + w0..p + w1]);
        }
        at.src -= (w0 * 8) as i64;
        let snap: &'a [u64] = snapshot;
        let dsts = (0..)
            .zip(
                mem.words_mut(d.region)
                    .chunks_mut(dpw)
                    .skip(d.partition as usize),
            )
            .take(ch)
            .filter(|(p, _)| keep(*p))
            .map(|(_, dst)| dst);
        snap.chunks(w1 - w0)
            .zip(dsts)
            .map(|(src, dst)| LaneIo::Split { src, dst })
            .collect()
    };
    (lanes, at)
}

/// A TENSOR4D walk: element indices relative to the start, x fastest (SPEC §4).
#[derive(Clone, Debug)]
pub(crate) struct WalkIter {
    num: [u64; 4],
    step: [i64; 4],
    idx: [u64; 4],
    pos: i64,
}

impl WalkIter {
    pub(crate) fn new(num: [u64; 4], step: [i64; 4]) -> WalkIter {
        WalkIter {
            num,
            step,
            idx: [0; 4],
            pos: 0,
        }
    }

    /// The current element index, then moves to the next one. A dim with num 1
    /// never applies its step.
    #[inline(always)]
    pub(crate) fn next_index(&mut self) -> i64 {
        let cur = self.pos;
        for d in 0..4 {
            self.idx[d] += 1;
            self.pos += self.step[d];
            if self.idx[d] < self.num[d] {
                break;
            }
            self.pos -= self.step[d] * self.num[d] as i64;
            self.idx[d] = 0;
        }
        cur
    }

    /// The step along dim 0, in elements (a run's elements are this far apart).
    #[inline(always)]
    pub(crate) fn step0(&self) -> i64 {
        self.step[0]
    }

    /// Elements left along dim 0 from the current one (at least 1).
    #[inline(always)]
    pub(crate) fn run_left(&self) -> u64 {
        self.num[0] - self.idx[0]
    }

    /// The current element index and how many elements (at most `max`, at
    /// least 1) follow it along dim 0 before another dim moves (they are
    /// `step[0]` elements apart); moves past them.
    #[inline(always)]
    pub(crate) fn next_run(&mut self, max: u64) -> (i64, u64) {
        let start = self.pos;
        let n = (self.num[0] - self.idx[0]).min(max).max(1);
        self.idx[0] += n - 1;
        self.pos += self.step[0] * (n - 1) as i64;
        self.next_index();
        (start, n)
    }
}

/// Reads `size` little-endian bytes at `at`.
pub(crate) fn read_le(bytes: &[u8], at: usize, size: usize) -> u64 {
    let mut b = [0u8; 8];
    b[..size].copy_from_slice(&bytes[at..at + size]);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_iter_matches_tensor_walk() {
        let t = crate::isa::tensor::Tensor4d::new(
            crate::isa::Addr4(0),
            [(3, -2), (1, 100), (2, 0), (2, 7)],
        );
        let mut want = vec![];
        t.for_each_index(|i| want.push(i));
        let mut it = WalkIter::new(t.num.map(|n| n as u64), t.step.map(|s| s as i64));
        let got: Vec<i64> = (0..want.len()).map(|_| it.next_index()).collect();
        assert_eq!(got, want);
        let mut it = WalkIter::new(t.num.map(|n| n as u64), t.step.map(|s| s as i64));
        let mut runs = vec![];
        while runs.len() < want.len() {
            let (start, n) = it.next_run(2);
            runs.extend((0..n as i64).map(|j| start + j * t.step[0] as i64));
        }
        assert_eq!(runs, want);
    }
}
