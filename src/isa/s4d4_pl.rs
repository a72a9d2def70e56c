//! `NEURON_ISA_TPB_S4D4_PL_STRUCT`: the 64-byte operand of Pool (0x45) and
//! MaxPoolSelect (0x58), byte-exact to seed 000 §3 / SPEC §5.

use super::enums::{Dtype, PoolDim, PoolFunc};
use super::opcode::Opcode;
use super::record::{Events, Header, Record};
use super::tensor::{TENSOR4D_BYTES, Tensor4d, Tensor4dBytes};
use crate::limits::{INST_WORD_LEN, RECORD_BYTES};
use bytemuck::{Pod, Zeroable};
use std::mem::{offset_of, size_of};

/// The C layout, field for field, as byte arrays (no padding, alignment 1).
/// It exists so the compiler checks the seed's offsets; decoding goes through it.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Layout {
    header: [u8; 4],
    events: [u8; 8],
    src: [u8; TENSOR4D_BYTES],
    in_dtype: u8,
    out_dtype: u8,
    num_active_channels: u8,
    reserved0: u8,
    pool_func: u8,
    pool_dim: u8,
    reserved1: [u8; 2],
    pool_scale: [u8; 4],
    dst: [u8; TENSOR4D_BYTES],
}

// Seed 000 §3: compile-verified offsets of the hardware header.
const _: () = assert!(size_of::<Layout>() == RECORD_BYTES);
const _: () = assert!(TENSOR4D_BYTES == 20);
const _: () = assert!(offset_of!(Layout, events) == 4);
const _: () = assert!(offset_of!(Layout, src) == 12);
const _: () = assert!(offset_of!(Layout, in_dtype) == 32);
const _: () = assert!(offset_of!(Layout, out_dtype) == 33);
const _: () = assert!(offset_of!(Layout, num_active_channels) == 34);
const _: () = assert!(offset_of!(Layout, reserved0) == 35);
const _: () = assert!(offset_of!(Layout, pool_func) == 36);
const _: () = assert!(offset_of!(Layout, pool_dim) == 37);
const _: () = assert!(offset_of!(Layout, reserved1) == 38);
const _: () = assert!(offset_of!(Layout, pool_scale) == 40);
const _: () = assert!(offset_of!(Layout, dst) == 44);
// The `off` constants (read by [`S4d4PlView`]) must agree with the layout.
const _: () = assert!(offset_of!(Layout, src) == off::SRC);
const _: () = assert!(offset_of!(Layout, in_dtype) == off::IN_DTYPE);
const _: () = assert!(offset_of!(Layout, out_dtype) == off::OUT_DTYPE);
const _: () = assert!(offset_of!(Layout, num_active_channels) == off::NUM_ACTIVE_CHANNELS);
const _: () = assert!(offset_of!(Layout, reserved0) == off::RESERVED0);
const _: () = assert!(offset_of!(Layout, pool_func) == off::POOL_FUNC);
const _: () = assert!(offset_of!(Layout, pool_dim) == off::POOL_DIM);
const _: () = assert!(offset_of!(Layout, reserved1) == off::RESERVED1);
const _: () = assert!(offset_of!(Layout, pool_scale) == off::POOL_SCALE);
const _: () = assert!(offset_of!(Layout, dst) == off::DST);

/// Byte offsets of the S4D4_PL fields, for error messages and the validator.
pub mod off {
    /// src TENSOR4D.
    pub const SRC: usize = 12;
    /// in_dtype.
    pub const IN_DTYPE: usize = 32;
    /// out_dtype.
    pub const OUT_DTYPE: usize = 33;
    /// num_active_channels.
    pub const NUM_ACTIVE_CHANNELS: usize = 34;
    /// reserved0.
    pub const RESERVED0: usize = 35;
    /// pool_func.
    pub const POOL_FUNC: usize = 36;
    /// pool_dim.
    pub const POOL_DIM: usize = 37;
    /// reserved1 (2 bytes).
    pub const RESERVED1: usize = 38;
    /// pool_scale (f32 LE).
    pub const POOL_SCALE: usize = 40;
    /// dst TENSOR4D.
    pub const DST: usize = 44;
}

/// The decoded S4D4_PL record. Every byte of the 64 has a field, so
/// `S4d4Pl::decode(r).encode() == r` for every record `r`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct S4d4Pl {
    /// Bytes 0..4.
    pub header: Header,
    /// Bytes 4..12.
    pub events: Events,
    /// The input walk.
    pub src: Tensor4d,
    /// Input element type.
    pub in_dtype: Dtype,
    /// Output element type.
    pub out_dtype: Dtype,
    /// Lanes (1..=128).
    pub num_active_channels: u8,
    /// Must be zero.
    pub reserved0: u8,
    /// MAX, AVG, or NONE for MaxPoolSelect.
    pub pool_func: PoolFunc,
    /// Which dims form one window.
    pub pool_dim: PoolDim,
    /// Must be zero.
    pub reserved1: [u8; 2],
    /// Bits of the f32 `pool_scale` (kept as bits so every NaN payload round-trips).
    pub pool_scale_bits: u32,
    /// The output walk.
    pub dst: Tensor4d,
}

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
            header: Header {
                opcode,
                inst_word_len: INST_WORD_LEN,
                debug_cmd: 0,
                debug_hint: 0,
            },
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

    /// Decodes any 64 bytes as S4D4_PL fields (never fails).
    pub fn decode(r: &Record) -> S4d4Pl {
        let l: Layout = bytemuck::cast(r.0);
        S4d4Pl {
            header: r.header(),
            events: r.events(),
            src: Tensor4d::from_bytes(&l.src),
            in_dtype: Dtype(l.in_dtype),
            out_dtype: Dtype(l.out_dtype),
            num_active_channels: l.num_active_channels,
            reserved0: l.reserved0,
            pool_func: PoolFunc(l.pool_func),
            pool_dim: PoolDim(l.pool_dim),
            reserved1: l.reserved1,
            pool_scale_bits: u32::from_le_bytes(l.pool_scale),
            dst: Tensor4d::from_bytes(&l.dst),
        }
    }

    /// Encodes the 64 bytes.
    pub fn encode(&self) -> Record {
        let h = self.header;
        let l = Layout {
            header: [h.opcode.0, h.inst_word_len, h.debug_cmd, h.debug_hint],
            events: self.events.to_bytes(),
            src: self.src.to_bytes(),
            in_dtype: self.in_dtype.0,
            out_dtype: self.out_dtype.0,
            num_active_channels: self.num_active_channels,
            reserved0: self.reserved0,
            pool_func: self.pool_func.0,
            pool_dim: self.pool_dim.0,
            reserved1: self.reserved1,
            pool_scale: self.pool_scale_bits.to_le_bytes(),
            dst: self.dst.to_bytes(),
        };
        Record(bytemuck::cast(l))
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
