//! `NEURON_ISA_TPB_S4D4_PL_STRUCT`: the 64-byte operand of Pool (0x45) and
//! MaxPoolSelect (0x58), byte-exact to seed 000 §3 / SPEC §5.

use super::enums::{Dtype, PoolDim, PoolFunc};
use super::layout::{Role, header, operand_layout};
use super::opcode::Opcode;
use super::record::{Events, Record};
use super::tensor::{TENSOR4D_BYTES, Tensor4d, Tensor4dBytes};

operand_layout! {
    /// The decoded S4D4_PL record (seed 000 §3 / SPEC §5). Every byte of the
    /// 64 has a field, so `S4d4Pl::decode(r).encode() == r` for every record
    /// `r`. The text form prints it in its own form 1 (`scale` as a float),
    /// with the keys below.
    S4d4Pl = "S4D4_PL", mod off {
        /// The input walk.
        src: Tensor4d = SRC @ 12, Role::Required("src");
        /// Input element type.
        in_dtype: Dtype = IN_DTYPE @ 32, Role::Required("in");
        /// Output element type.
        out_dtype: Dtype = OUT_DTYPE @ 33, Role::Required("out");
        /// Lanes (1..=128).
        num_active_channels: u8 = NUM_ACTIVE_CHANNELS @ 34, Role::Required("ch");
        /// Must be zero.
        reserved0: u8 = RESERVED0 @ 35, Role::Reserved;
        /// MAX, AVG, or NONE for MaxPoolSelect.
        pool_func: PoolFunc = POOL_FUNC @ 36, Role::Required("func");
        /// Which dims form one window.
        pool_dim: PoolDim = POOL_DIM @ 37, Role::Required("dim");
        /// Must be zero (2 bytes).
        reserved1: [u8; 2] = RESERVED1 @ 38, Role::Reserved;
        /// Bits of the f32 `pool_scale` (kept as bits so every NaN payload
        /// round-trips; little-endian).
        pool_scale_bits: u32 = POOL_SCALE @ 40, Role::Required("scale");
        /// The output walk.
        dst: Tensor4d = DST @ 44, Role::Required("dst");
    }
}

// Seed 000 §3: the hardware offsets, written out once more by hand (the
// macro asserts that the fields tile bytes 12..64, each as wide as its type).
const _: () = assert!(TENSOR4D_BYTES == 20);
const _: () = assert!(off::SRC == 12 && off::IN_DTYPE == 32 && off::OUT_DTYPE == 33);
const _: () = assert!(off::NUM_ACTIVE_CHANNELS == 34 && off::RESERVED0 == 35);
const _: () = assert!(off::POOL_FUNC == 36 && off::POOL_DIM == 37 && off::RESERVED1 == 38);
const _: () = assert!(off::POOL_SCALE == 40 && off::DST == 44);

impl S4d4Pl {
    /// A record with the given opcode and zero events/reserved bytes, `inst_word_len` 16.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        opcode: Opcode,
        pool_func: PoolFunc,
        pool_dim: PoolDim,
        in_dtype: Dtype,
        out_dtype: Dtype,
        num_active_channels: u8,
        pool_scale: f32,
        src: Tensor4d,
        dst: Tensor4d,
    ) -> S4d4Pl {
        S4d4Pl {
            header: header(opcode),
            events: Events::default(),
            src,
            in_dtype,
            out_dtype,
            num_active_channels,
            reserved0: 0,
            pool_func,
            pool_dim,
            reserved1: [0; 2],
            pool_scale_bits: pool_scale.to_bits(),
            dst,
        }
    }

    /// The opcode (Pool or MaxPoolSelect for a valid record).
    pub fn opcode(&self) -> Opcode {
        self.header.opcode
    }

    /// `pool_scale` as f32.
    pub fn pool_scale(&self) -> f32 {
        f32::from_bits(self.pool_scale_bits)
    }

    /// Elements per window: the product of the nums of the pooled dims
    /// (seed 000 §3.4's `period`). `None` when `pool_dim` is not X..XYZW.
    pub fn period(&self) -> Option<u64> {
        let k = self.pool_dim.window_dims()?;
        Some(self.src.num[..k].iter().map(|&n| n as u64).product())
    }

    /// Outputs per lane (`num` in the seed's trace): src elements / period.
    pub fn outputs(&self) -> Option<u64> {
        let p = self.period()?;
        (p != 0).then(|| self.src.elements() / p)
    }
}

/// A borrowed S4D4_PL record whose accessors read each field straight from the
/// 64 bytes. The validator's hot path uses it instead of [`S4d4Pl::decode`]: it
/// reads only the fields a predicate needs, where it needs them, instead of
/// decoding (and copying, and spilling) the whole struct first. Each accessor
/// returns exactly the corresponding field of [`S4d4Pl::decode`].
#[derive(Clone, Copy, Debug)]
pub struct S4d4PlView<'a>(pub &'a Record);

impl<'a> S4d4PlView<'a> {
    /// Byte 0.
    #[inline]
    pub fn opcode(self) -> Opcode {
        self.0.opcode()
    }

    /// The input walk, in place.
    #[inline]
    pub fn src(self) -> Tensor4dBytes<'a> {
        self.tensor(off::SRC)
    }

    /// The output walk, in place.
    #[inline]
    pub fn dst(self) -> Tensor4dBytes<'a> {
        self.tensor(off::DST)
    }

    /// Input element type.
    #[inline]
    pub fn in_dtype(self) -> Dtype {
        Dtype(self.0.u8_at(off::IN_DTYPE))
    }

    /// Output element type.
    #[inline]
    pub fn out_dtype(self) -> Dtype {
        Dtype(self.0.u8_at(off::OUT_DTYPE))
    }

    /// Lanes.
    #[inline]
    pub fn num_active_channels(self) -> u8 {
        self.0.u8_at(off::NUM_ACTIVE_CHANNELS)
    }

    /// reserved0.
    #[inline]
    pub fn reserved0(self) -> u8 {
        self.0.u8_at(off::RESERVED0)
    }

    /// reserved1.
    #[inline]
    pub fn reserved1(self) -> [u8; 2] {
        [
            self.0.u8_at(off::RESERVED1),
            self.0.u8_at(off::RESERVED1 + 1),
        ]
    }

    /// The pool function.
    #[inline]
    pub fn pool_func(self) -> PoolFunc {
        PoolFunc(self.0.u8_at(off::POOL_FUNC))
    }

    /// The window dims.
    #[inline]
    pub fn pool_dim(self) -> PoolDim {
        PoolDim(self.0.u8_at(off::POOL_DIM))
    }

    /// Bits of the f32 `pool_scale`.
    #[inline]
    pub fn pool_scale_bits(self) -> u32 {
        self.0.u32_at(off::POOL_SCALE)
    }

    #[inline]
    fn tensor(self, at: usize) -> Tensor4dBytes<'a> {
        let b = &self.0.0;
        Tensor4dBytes(b[at..at + TENSOR4D_BYTES].try_into().expect("20 bytes"))
    }
}
