//! Framework-style pooling through the TPB front end:
//! `cargo run --release --example pool2d`.
//!
//! Pools the built-in 128-channel feature map (batch 2: 256 planes, two
//! partition groups) with PyTorch's `max_pool2d(x, 3, stride=2, padding=1,
//! return_indices=True)`, runs the generated program on the CPU reference,
//! and checks it against the plain reference computed on the array.

use tpb_emu::frontend::{self, Pool2d, PoolMode, demo};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let x = demo::feature_map(2);
    let p = Pool2d::new(PoolMode::Max, 3, 3)
        .stride(2, 2)
        .padding(1, 1)
        .indices(true);
    let compiled = frontend::compile(&p, &x)?;
    println!(
        "{p}: {:?} -> {:?}; {} bands, {} Pool/MaxPoolSelect records",
        x.shape,
        compiled.plan.out_shape(),
        compiled.bands,
        compiled.pool_records
    );
    let got = compiled.run(&mut tpb_emu::device::CpuExecutor::default())?;
    let want = frontend::reference(&p, &x)?;
    let idx = got.indices.as_deref().unwrap_or_default();
    println!("first indices of plane 0: {:?}", &idx[..6.min(idx.len())]);
    if got != want {
        return Err("the emulator and the plain reference differ".into());
    }
    println!("identical to the plain reference");
    Ok(())
}
