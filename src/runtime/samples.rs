//! The example program of `examples/program/` (written by
//! `cargo run --example make_program`), used by the docs, tests and benchmark.
//!
//! Three engines pool a 4×4 map per lane over 128 lanes:
//!
//! - **SP** DMAs the input `x` (DRAM, fp32 `[128, 16]`) into SBUF, one lane
//!   per partition, and on completion adds 1 to `sem[0]` (EC-23).
//! - **POOL** waits for `sem[0] >= 1`, runs the seed's 2×2 AVG pooling
//!   (→ SBUF 0x100) and MAX pooling (→ SBUF 0x200); each adds 1 to `sem[1]`.
//! - **ACT** waits for `sem[1] >= 2`, DMAs the averages to `y_avg` (fp32
//!   `[128, 4]`) and the maxima to `y_max`, converting fp32 to bf16 on the way.

use super::build::{dma_memcpy, ev_update, ev_wait, on_chip, var, walk, with_events};
use super::program::{Program, Variable};
use crate::isa::enums::{Dtype, Engine, PoolFunc, UpdateMode, WaitMode};
use crate::isa::record::Record;
use crate::isa::samples::seed_pool;
use crate::isa::tensor::{Addr4, Region};
use crate::limits::{Arch, SBUF_PARTITION_SHIFT};

/// Lanes (partitions) of the example.
pub const LANES: u16 = 128;
/// Elements per lane of `x`: a row-major 4×4 map.
pub const MAP: u16 = 16;
/// Outputs per lane: 2×2.
pub const OUT: u16 = 4;
/// Variable ids.
pub const X_ID: u32 = 1;
/// `y_avg`'s id.
pub const Y_AVG_ID: u32 = 2;
/// `y_max`'s id.
pub const Y_MAX_ID: u32 = 3;
/// SBUF offset of the MAX output in each partition (AVG uses the seed's 0x100).
pub const MAX_DST_OFFSET: u32 = 0x200;

/// Elements between partitions for a 4-byte dtype: one SBUF partition stride.
const LANE_STEP_F32: i32 = (1 << SBUF_PARTITION_SHIFT) / 4;

/// `x[l][k]`: arbitrary f32 values (not all exact in bf16).
pub fn input() -> Vec<f32> {
    (0..LANES as u32)
        .flat_map(|l| (0..MAP as u32).map(move |k| ((l * 37 + k * 11) % 101) as f32 * 0.37 - 15.0))
        .collect()
}

/// The three streams.
pub fn streams() -> [(Engine, Vec<Record>); 3] {
    let x_in = dma_memcpy(
        walk(var(X_ID, 0), [1, MAP as i32], [MAP, LANES], 4),
        walk(on_chip(0), [1, LANE_STEP_F32], [MAP, LANES], 4),
        Dtype::FP32,
        Dtype::FP32,
        0,
        1,
    );
    let avg = with_events(
        seed_pool(PoolFunc::AVG_POOL, LANES as u8).encode(),
        crate::isa::record::Events {
            update_mode: UpdateMode::SEM_INC,
            update_idx: 1,
            ..ev_wait(WaitMode::SEM_GE, 0, 1)
        },
    );
    let mut max = seed_pool(PoolFunc::MAX_POOL, LANES as u8);
    max.dst.addr = Addr4::new(Region::Sbuf, 0, MAX_DST_OFFSET);
    let max = with_events(max.encode(), ev_update(UpdateMode::SEM_INC, 1, 0));
    let avg_out = with_events(
        dma_memcpy(
            walk(
                on_chip(crate::isa::samples::SEED_DST_OFFSET),
                [1, LANE_STEP_F32],
                [OUT, LANES],
                4,
            ),
            walk(var(Y_AVG_ID, 0), [1, OUT as i32], [OUT, LANES], 4),
            Dtype::FP32,
            Dtype::FP32,
            2,
            1,
        ),
        ev_wait(WaitMode::SEM_GE, 1, 2),
    );
    let max_out = dma_memcpy(
        walk(on_chip(MAX_DST_OFFSET), [1, LANE_STEP_F32], [OUT, LANES], 4),
        walk(var(Y_MAX_ID, 0), [1, OUT as i32], [OUT, LANES], 2),
        Dtype::FP32,
        Dtype::BFLOAT16,
        2,
        1,
    );
    [
        (Engine::Act, vec![avg_out, max_out]),
        (Engine::Pool, vec![avg, max]),
        (Engine::Sp, vec![x_in]),
    ]
}

/// The whole example program, input included.
pub fn program() -> Program {
    let mut p = Program::new(Arch::Cayman);
    for (e, recs) in streams() {
        p.set_stream(e, &recs);
    }
    let x: Vec<u8> = input().iter().flat_map(|v| v.to_le_bytes()).collect();
    p.add(Variable::input(
        "x",
        X_ID,
        Dtype::FP32,
        &[LANES as u64, MAP as u64],
        x,
    ))
    .add(Variable::output(
        "y_avg",
        Y_AVG_ID,
        Dtype::FP32,
        &[LANES as u64, OUT as u64],
    ))
    .add(Variable::output(
        "y_max",
        Y_MAX_ID,
        Dtype::BFLOAT16,
        &[LANES as u64, OUT as u64],
    ));
    p
}
