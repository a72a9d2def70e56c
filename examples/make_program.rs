//! Writes the example program of `examples/program/`: the engine streams and
//! the input array that `program.toml` names (the manifest itself is written
//! by hand, with comments). Run it from the repository root:
//!
//! ```text
//! cargo run --release --example make_program
//! tpb-emu run examples/program/program.toml --out /tmp/out
//! ```

use std::path::Path;
use tpb_emu::isa::Engine;
use tpb_emu::npy::write_npy;
use tpb_emu::runtime::samples;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/program");
    std::fs::create_dir_all(&dir)?;
    let program = samples::program();
    for e in Engine::ALL {
        let bytes = program.stream(e);
        if !bytes.is_empty() {
            let path = dir.join(format!("{}.bin", e.name()));
            std::fs::write(&path, bytes)?;
            println!("wrote {} ({} records)", path.display(), bytes.len() / 64);
        }
    }
    for v in program.variables.iter().filter(|v| v.init.is_some()) {
        let path = dir.join(format!("{}.npy", v.name));
        write_npy(
            &path,
            v.dtype,
            &v.shape,
            v.init.as_deref().unwrap_or_default(),
        )?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
