//! `tpb-emu demo`: the main job on a built-in default.
//!
//! Until execution lands it validates and disassembles the seed's worked
//! example (a 4×4 map pooled 2×2) as MAX, AVG and MaxPoolSelect records.

use super::CliError;
use crate::isa::enums::PoolFunc;
use crate::isa::record::Record;
use crate::isa::samples::{seed_max_pool_select, seed_pool};
use crate::isa::stream::to_bytes;
use crate::isa::text::disasm_stream;
use crate::isa::validate::{Target, validate_stream};
use std::io::Write;

/// The built-in example stream.
pub fn example_stream() -> Vec<Record> {
    vec![
        seed_pool(PoolFunc::MAX_POOL, 128).encode(),
        seed_pool(PoolFunc::AVG_POOL, 128).encode(),
        seed_max_pool_select(128).encode(),
    ]
}

/// Validates and disassembles the example stream.
pub fn run(out: &mut dyn Write) -> Result<(), CliError> {
    let bytes = to_bytes(&example_stream());
    let target = Target::default();
    let n = validate_stream(&bytes, target).map_err(|e| CliError::Exec(e.to_string()))?;
    let w = |out: &mut dyn Write, s: &str| {
        out.write_all(s.as_bytes())
            .map_err(|e| CliError::Exec(format!("stdout: {e}")))
    };
    w(
        out,
        "tpb-emu demo: the seed's 4x4 -> 2x2 pooling example over 128 lanes\n\n",
    )?;
    w(out, &disasm_stream(&bytes).expect("whole records"))?;
    w(
        out,
        &format!(
            "\n{n} records valid on the {} engine ({})\n",
            target.engine,
            target.arch.name()
        ),
    )
}
