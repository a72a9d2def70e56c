//! The bytes of device DRAM during a run. Where each variable lies is
//! EC-18's layout ([`super::program::Dram`]); this module holds the bytes.
//!
//! DRAM is one owned buffer, except that an input whose bytes are shared
//! with a mapped file ([`HostBytes::shared`], a large `.npy`) stays a part
//! of its own: DMAs read it in place, so a run never copies its input into
//! a fresh buffer (`pool2d`'s largest cost before). Parts cover DRAM from
//! address 0 in order, and each holds whole variables, so a variable's bytes
//! are always one slice. A DMA that writes a shared part copies that part
//! first; one whose bytes span two parts (a walk across adjacent variables)
//! merges the image into one buffer first. Either way every address holds
//! the same bytes as in a single buffer: the parts change the cost, never
//! the result.

use crate::files::HostBytes;
use std::borrow::Cow;

/// Device DRAM's bytes: parts covering `[0, len)` in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DramImage {
    /// `(first address, bytes)`, each starting where the previous one ends.
    parts: Vec<(u64, HostBytes)>,
}

/// `n` zero bytes, or `Err(n)` when the allocator refuses them (a process
/// under `ulimit -v`, say) instead of aborting. A fallible reservation of the
/// size is tried first; the buffer itself then comes zeroed from the
/// allocator, so its pages cost memory only as they are written.
fn zeros(n: usize) -> Result<Vec<u8>, u64> {
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(n).map_err(|_| n as u64)?;
    drop(probe);
    Ok(vec![0u8; n])
}

impl DramImage {
    /// `size` bytes of zeros.
    pub fn zeroed(size: u64) -> DramImage {
        DramImage {
            parts: vec![(0, vec![0u8; size as usize].into())],
        }
    }

    /// `size` bytes holding each `(base, bytes)` of `inits` (in increasing,
    /// non-overlapping order) and zeros elsewhere. Shared bytes become parts
    /// of their own; the rest is gathered into owned parts between them,
    /// each reusing its first input's buffer when that input starts it and
    /// is given by value, and otherwise freshly zeroed (pages the OS zeroes
    /// as they are touched) with borrowed bytes copied in once.
    /// `Err(bytes)` when host memory for a part of `bytes` cannot be had.
    pub fn build<'a>(
        size: u64,
        inits: impl IntoIterator<Item = (u64, Cow<'a, HostBytes>)>,
    ) -> Result<DramImage, u64> {
        let mut inits: Vec<(u64, Cow<HostBytes>)> = inits.into_iter().collect();
        let own_part = |b: &HostBytes| b.is_shared() && !b.is_empty();
        let mut parts: Vec<(u64, HostBytes)> = Vec::new();
        let (mut at, mut i) = (0u64, 0usize);
        while i < inits.len() || at < size || parts.is_empty() {
            if i < inits.len() && own_part(&inits[i].1) {
                let base = inits[i].0;
                let bytes = std::mem::replace(&mut inits[i].1, Cow::Owned(HostBytes::default()));
                let bytes = bytes.into_owned();
                if base > at {
                    parts.push((at, vec![0u8; (base - at) as usize].into()));
                }
                at = base + bytes.len() as u64;
                parts.push((base, bytes));
                i += 1;
                continue;
            }
            // An owned part from `at` to the next shared input or the end.
            let j = (i..inits.len())
                .find(|&k| own_part(&inits[k].1))
                .unwrap_or(inits.len());
            let end = inits.get(j).map_or(size, |(b, _)| *b);
            let n = (end - at) as usize;
            // Owned bytes given by value that start the part become its buffer.
            let (mut v, mut k) = match inits.get_mut(i) {
                Some((base, Cow::Owned(b))) if i < j && *base == at && !b.is_empty() => {
                    (std::mem::take(b).into_vec(), i + 1)
                }
                _ => (Vec::new(), i),
            };
            if v.is_empty() {
                v = zeros(n)?;
            } else {
                v.try_reserve_exact(n.saturating_sub(v.len()))
                    .map_err(|_| n as u64)?;
                v.resize(n, 0);
            }
            while k < j {
                let (base, b) = &inits[k];
                let o = (base - at) as usize;
                v[o..o + b.len()].copy_from_slice(b);
                k += 1;
            }
            parts.push((at, v.into()));
            (at, i) = (end, j);
        }
        Ok(DramImage { parts })
    }

    /// Bytes in all.
    pub fn len(&self) -> u64 {
        self.parts.last().map_or(0, |(lo, b)| lo + b.len() as u64)
    }

    /// The part holding `[lo, hi)`, if one does.
    fn part_of(&self, lo: u64, hi: u64) -> Option<usize> {
        let i = self
            .parts
            .partition_point(|(b, _)| *b <= lo)
            .checked_sub(1)?;
        let (b, bytes) = &self.parts[i];
        (hi <= b + bytes.len() as u64).then_some(i)
    }

    /// `[lo, hi)` when one part holds it (a variable always is).
    pub fn get(&self, lo: u64, hi: u64) -> Option<&[u8]> {
        let (b, bytes) = &self.parts[self.part_of(lo, hi)?];
        bytes.get((lo - b) as usize..(hi - b) as usize)
    }

    /// The part holding `[lo, hi)` (after merging all parts into one when no
    /// single part does) and that part's first address.
    fn holding(&mut self, lo: u64, hi: u64) -> usize {
        match self.part_of(lo, hi) {
            Some(i) => i,
            None => {
                self.merge();
                0
            }
        }
    }

    /// A window for reading `[lo, hi)`: the bytes of the part holding it and
    /// the part's first address (indices into the slice are addresses minus it).
    pub fn window(&mut self, lo: u64, hi: u64) -> (&[u8], u64) {
        let i = self.holding(lo, hi);
        let (b, bytes) = &self.parts[i];
        (bytes, *b)
    }

    /// [`DramImage::window`] for writing: a shared part is copied first.
    pub fn window_mut(&mut self, lo: u64, hi: u64) -> (&mut [u8], u64) {
        let i = self.holding(lo, hi);
        let (b, bytes) = &mut self.parts[i];
        (bytes.make_mut(), *b)
    }

    /// Merges every part into one owned buffer.
    fn merge(&mut self) {
        if self.parts.len() > 1 {
            let whole = self.to_bytes().into_owned();
            self.parts = vec![(0, whole.into())];
        }
    }

    /// All of DRAM as one slice (a copy when it is in several parts).
    pub fn to_bytes(&self) -> Cow<'_, [u8]> {
        match &self.parts[..] {
            [] => Cow::Borrowed(&[]),
            [(_, one)] => Cow::Borrowed(one),
            parts => Cow::Owned(parts.iter().flat_map(|(_, b)| b.iter().copied()).collect()),
        }
    }

    /// `[lo, hi)` as a vector, taken from the part holding it: an owned part
    /// gives up its buffer (its bytes moved to the front when `lo` is not
    /// its first address).
    pub fn take(mut self, lo: u64, hi: u64) -> Vec<u8> {
        let i = self.holding(lo, hi);
        let (b, bytes) = self.parts.swap_remove(i);
        let mut v = bytes.into_vec();
        v.truncate((hi - b) as usize);
        v.drain(..(lo - b) as usize);
        v
    }

    /// Sets every byte to `image`'s, reusing this image's owned buffers where
    /// the parts match (a machine's restart); all zero when `image` is empty
    /// (its bytes moved into a machine).
    pub fn reset_from(&mut self, image: &DramImage) {
        if image.parts.is_empty() {
            for (_, bytes) in &mut self.parts {
                if bytes.is_shared() {
                    *bytes = vec![0u8; bytes.len()].into();
                } else {
                    bytes.make_mut().fill(0);
                }
            }
            return;
        }
        let same = self.parts.len() == image.parts.len()
            && self
                .parts
                .iter()
                .zip(&image.parts)
                .all(|(a, b)| a.0 == b.0 && a.1.len() == b.1.len());
        if !same {
            *self = image.clone();
            return;
        }
        for ((_, mine), (_, theirs)) in self.parts.iter_mut().zip(&image.parts) {
            if theirs.is_shared() || mine.is_shared() {
                *mine = theirs.clone();
            } else {
                mine.make_mut().copy_from_slice(theirs);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::Input;
    use std::sync::Arc;

    /// Bytes shared with an (in-memory) input.
    fn shared(bytes: &[u8]) -> Cow<'static, HostBytes> {
        let n = bytes.len();
        Cow::Owned(HostBytes::shared(Arc::new(Input::Read(bytes.to_vec())), 0..n).unwrap())
    }

    /// Owned bytes, given by value.
    fn own(bytes: Vec<u8>) -> Cow<'static, HostBytes> {
        Cow::Owned(bytes.into())
    }

    #[test]
    fn owned_inputs_gather_into_one_buffer_with_zeros_between() {
        let img = DramImage::build(
            12,
            [
                (0, own(vec![1u8, 2])),
                (4, own(vec![3u8])),
                (8, own(vec![4u8, 5])),
            ],
        )
        .unwrap();
        assert_eq!(img.parts.len(), 1);
        assert_eq!(&*img.to_bytes(), [1, 2, 0, 0, 3, 0, 0, 0, 4, 5, 0, 0]);
        let img = DramImage::build(6, [(2, own(vec![7u8]))]).unwrap();
        assert_eq!(&*img.to_bytes(), [0, 0, 7, 0, 0, 0]);
        assert_eq!(DramImage::build(3, []).unwrap().to_bytes().len(), 3);
    }

    #[test]
    fn a_shared_input_is_a_part_of_its_own_and_reads_in_place() {
        let img = DramImage::build(
            16,
            [
                (0, own(vec![9u8])),
                (4, shared(&[1, 2, 3, 4])),
                (12, own(vec![8u8])),
            ],
        )
        .unwrap();
        assert_eq!(img.parts.len(), 3);
        assert!(img.parts[1].1.is_shared());
        assert_eq!(
            &*img.to_bytes(),
            [9, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0, 8, 0, 0, 0]
        );
        assert_eq!(img.get(5, 7), Some(&[2u8, 3][..]));
        // Across two parts: no single slice.
        assert_eq!(img.get(3, 5), None);
        // A shared input first, and one at the very end.
        let img = DramImage::build(8, [(0, shared(&[1, 2])), (6, shared(&[3, 4]))]).unwrap();
        assert_eq!(&*img.to_bytes(), [1, 2, 0, 0, 0, 0, 3, 4]);
        assert_eq!(img.len(), 8);
    }

    #[test]
    fn writing_copies_a_shared_part_and_spanning_merges() {
        let mut img =
            DramImage::build(8, [(0, own(vec![1u8, 1])), (4, shared(&[5, 6, 7, 8]))]).unwrap();
        let (w, base) = img.window_mut(5, 6);
        assert_eq!(base, 4);
        w[1] = 60;
        assert!(!img.parts[1].1.is_shared());
        assert_eq!(&*img.to_bytes(), [1, 1, 0, 0, 5, 60, 7, 8]);
        let (r, base) = img.window(2, 6);
        assert_eq!((base, r.len()), (0, 8));
        assert_eq!(img.parts.len(), 1);
    }

    #[test]
    fn take_moves_a_range_out_and_reset_restores_the_image() {
        let image = DramImage::build(8, [(0, shared(&[1, 2, 3, 4]))]).unwrap();
        let mut m = image.clone();
        m.window_mut(4, 8).0.copy_from_slice(&[5, 6, 7, 8]);
        m.window_mut(0, 1).0[0] = 0;
        m.reset_from(&image);
        assert_eq!(&*m.to_bytes(), [1, 2, 3, 4, 0, 0, 0, 0]);
        m.window_mut(4, 8).0.copy_from_slice(&[5, 6, 7, 8]);
        assert_eq!(m.clone().take(5, 7), [6, 7]);
        m.reset_from(&DramImage::default());
        assert_eq!(&*m.to_bytes(), [0; 8]);
    }

    #[test]
    fn an_image_larger_than_the_allocator_gives_is_an_error() {
        // No allocator hands out isize::MAX bytes; the size comes back.
        let n = isize::MAX as u64;
        assert_eq!(DramImage::build(n, []).err(), Some(n));
    }
}
