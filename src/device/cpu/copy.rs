//! The CPU reference of Copy (0x46) and Cast (0x47): EC-45 and EC-46 on
//! the elementwise lane engine.

use super::CpuOptions;
use super::elementwise::{self, CHUNK, Kernel, Operand, RunFn, load_chunk, map_run, store_chunk};
use crate::device::convert::{self, InType, OutType};
use crate::device::memory::DeviceMemory;
use crate::device::ops::KernelOp;
use crate::device::ops::copy::{Conversion, CopyOp};

struct Copy(Conversion);

impl Kernel for Copy {
    type Lane = ();
    fn identity(&self) -> bool {
        matches!(self.0, Conversion::Bits { .. })
    }
    fn fused(&self) -> Option<RunFn> {
        let Conversion::Convert { from, to } = self.0 else {
            return None;
        };
        // EC-46 through the same load and store as `chunk`, for the float
        // pairs compiled models cast most.
        macro_rules! pair {
            ($s:ty, $i:ident, $d:ty, $o:ident) => {
                Some(|src: &[u8], dst: &mut [u8]| {
                    map_run(src, dst, |x: $s| {
                        let f = convert::load_f32_bits(InType::$i, x as u64);
                        convert::store_f32_bits(OutType::$o, f) as $d
                    })
                })
            };
        }
        match (from, to) {
            (InType::F32, OutType::Bf16) => pair!(u32, F32, u16, Bf16),
            (InType::F32, OutType::F16) => pair!(u32, F32, u16, F16),
            (InType::Bf16, OutType::F32) => pair!(u16, Bf16, u32, F32),
            (InType::F16, OutType::F32) => pair!(u16, F16, u32, F32),
            (InType::Bf16, OutType::F16) => pair!(u16, Bf16, u16, F16),
            (InType::F16, OutType::Bf16) => pair!(u16, F16, u16, Bf16),
            _ => None,
        }
    }
    fn lane(&self, _lane: u32) {}
    #[inline]
    fn chunk(&self, _: &mut (), src: [&[u32]; 2], out: &mut [u32]) {
        match self.0 {
            // EC-45, EC-46 (equal dtypes): the bits, unchanged.
            Conversion::Bits { .. } => out.copy_from_slice(src[0]),
            // EC-46: load (SPEC §6, EC-19), then store (EC-13, EC-20).
            Conversion::Convert { from, to } => {
                let mut f = [0u32; CHUNK];
                let f = &mut f[..out.len()];
                load_chunk(from, src[0], f);
                store_chunk(to, f, out);
            }
        }
    }
}

/// Runs `op` on every lane of `mem`.
pub fn execute(op: &CopyOp, mem: &mut DeviceMemory, opts: &CpuOptions) {
    let c = op.conversion();
    elementwise::run(
        &Copy(c),
        mem,
        opts,
        op.channels(),
        op.count(),
        Operand {
            side: op.dst(),
            size: c.dst_size(),
        },
        &[Operand {
            side: op.src(),
            size: c.src_size(),
        }],
    );
}

impl crate::device::ops::CpuKernel for CopyOp {
    fn run_cpu(&self, mem: &mut DeviceMemory, options: &CpuOptions) {
        execute(self, mem, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bits that exercise every rounding and special case of the float
    /// loads and stores: zeros, subnormals, normals near each format's
    /// rounding points, infinities, NaNs, then pseudo-random patterns.
    fn patterns(size: usize) -> Vec<u32> {
        let mut v: Vec<u32> = if size == 4 {
            vec![
                0,
                0x8000_0000,
                1,
                0x807F_FFFF,
                0x0080_0000,
                0x3F80_8000,
                0x3F81_8000,
                0x3F80_8001,
                0x7F7F_FFFF,
                0x477F_F000,
                0x7F80_0000,
                0xFF80_0000,
                0x7FC0_0001,
                0xFF81_2345,
                0x3880_0000,
                0x3380_0001,
            ]
        } else {
            vec![
                0, 0x8000, 1, 0x03FF, 0x0400, 0x7BFF, 0x7C00, 0xFC00, 0x7E01, 0x7F80, 0x0080,
            ]
        };
        let mask = if size == 4 { u32::MAX } else { 0xFFFF };
        let mut x = 0x9E37_79B9u32;
        for _ in 0..1000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            v.push(x & mask);
        }
        v
    }

    #[test]
    fn the_one_pass_casts_equal_the_chunk_path() {
        let mut pairs = 0;
        for from in InType::ALL {
            for to in OutType::ALL {
                let k = Copy(Conversion::Convert { from, to });
                let Some(f) = k.fused() else { continue };
                pairs += 1;
                let (ss, ds) = (from.size(), to.size());
                let src = patterns(ss);
                let mut want = vec![0u32; src.len()];
                for (w, s) in want.chunks_mut(CHUNK).zip(src.chunks(CHUNK)) {
                    k.chunk(&mut (), [s, &[]], w);
                }
                let bytes: Vec<u8> = src
                    .iter()
                    .flat_map(|x| x.to_le_bytes()[..ss].to_vec())
                    .collect();
                // Aligned, and one byte off (the element-by-element branch).
                for off in [0, 1] {
                    let mut s = vec![0u8; off];
                    s.extend_from_slice(&bytes);
                    let mut d = vec![0u8; off + src.len() * ds];
                    f(&s[off..], &mut d[off..]);
                    for (i, w) in want.iter().enumerate() {
                        let e = &d[off + i * ds..off + (i + 1) * ds];
                        let mut got = [0u8; 4];
                        got[..ds].copy_from_slice(e);
                        assert_eq!(
                            u32::from_le_bytes(got),
                            *w,
                            "{from:?} -> {to:?}, element {i} ({:#x}), offset {off}",
                            src[i]
                        );
                    }
                }
            }
        }
        assert_eq!(pairs, 6, "one-pass pairs tested");
    }
}
