//! Built-in example records: the seed's worked example and friends, used by
//! `tpb-emu demo`, the docs and the tests.

use super::enums::{Dtype, PoolDim, PoolFunc};
use super::kernels::s4d4_pl::S4d4Pl;
use super::opcode::Opcode;
use super::tensor::{Addr4, Region, Tensor4d};

/// Seed 000 §5.1's src walk over a row-major 4×4 fp32 map at SBUF offset 0:
/// x 2/1, y 2/4, z 2/2, w 2/8 (num/step) — the window-major stream
/// a,b,m,n, c,d,o,p, q,r,v,w, s,t,x,y.
pub const SEED_SRC: Tensor4d = Tensor4d::new(
    Addr4::new(Region::Sbuf, 0, 0),
    [(2, 1), (2, 4), (2, 2), (2, 8)],
);

/// Byte offset of the 2×2 output in each partition.
pub const SEED_DST_OFFSET: u32 = 0x100;

/// The 2×2 output walk at [`SEED_DST_OFFSET`], written row-major.
pub const fn seed_dst() -> Tensor4d {
    Tensor4d::new(
        Addr4::new(Region::Sbuf, 0, SEED_DST_OFFSET),
        [(2, 1), (2, 2), (1, 1), (1, 1)],
    )
}

/// The seed's 4×4 → 2×2 example over `channels` lanes as one record:
/// `POOL` with `func` MAX (scale 1.0) or AVG (scale 0.25), fp32 in and out.
pub fn seed_pool(func: PoolFunc, channels: u8) -> S4d4Pl {
    fp32_pool_2x2(func, channels, SEED_SRC, seed_dst())
}

/// An fp32 → fp32 `POOL` record over XY windows of four elements: MAX with
/// scale 1.0 or AVG with scale 0.25.
fn fp32_pool_2x2(func: PoolFunc, channels: u8, src: Tensor4d, dst: Tensor4d) -> S4d4Pl {
    let scale = if func == PoolFunc::AVG_POOL {
        0.25
    } else {
        1.0
    };
    S4d4Pl::new(
        Opcode::POOL,
        func,
        PoolDim::XY,
        Dtype::FP32,
        Dtype::FP32,
        channels,
        scale,
        src,
        dst,
    )
}

/// The same window as MaxPoolSelect writing uint8 indices.
pub fn seed_max_pool_select(channels: u8) -> S4d4Pl {
    S4d4Pl::new(
        Opcode::MAX_POOL_SELECT,
        PoolFunc::NONE,
        PoolDim::XY,
        Dtype::FP32,
        Dtype::UINT8,
        channels,
        1.0,
        SEED_SRC,
        seed_dst(),
    )
}

/// 2×2 pooling of a `height`×`width` fp32 map per lane (row-major at SBUF
/// offset `src_offset`) into the `height/2`×`width/2` map at `dst_offset`:
/// the shape `bench pool` and the CPU benchmark measure. `height` and
/// `width` must be even; AVG uses scale 0.25.
pub fn pool_2x2_map(
    func: PoolFunc,
    channels: u8,
    height: u16,
    width: u16,
    src_offset: u32,
    dst_offset: u32,
) -> S4d4Pl {
    let (h, w) = (height, width);
    let src = Tensor4d::new(
        Addr4::new(Region::Sbuf, 0, src_offset),
        [(2, 1), (2, w as i16), (w / 2, 2), (h / 2, 2 * w as i16)],
    );
    let dst = Tensor4d::new(
        Addr4::new(Region::Sbuf, 0, dst_offset),
        [(w / 2, 1), (h / 2, (w / 2) as i16), (1, 1), (1, 1)],
    );
    fp32_pool_2x2(func, channels, src, dst)
}
