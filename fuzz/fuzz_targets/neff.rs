//! The NEFF reader (SPEC-NEFF §6): any bytes are a model or an error —
//! never a panic, and never an allocation beyond the inflation limit. Both
//! paths run: with the digest checked (most mutants stop there) and without
//! (so the gzip, tar and JSON layers see the mutants too), then lowering.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tpb_emu::neff::{self, Options};

fuzz_target!(|data: &[u8]| {
    for verify in [true, false] {
        let opts = Options {
            verify,
            // Small enough that a fuzzer-made gzip bomb stops quickly.
            inflate_limit: 64 << 20,
            ..Options::default()
        };
        if let Ok(model) = neff::read(data, &opts) {
            let _ = neff::lower::program(&model, &Default::default());
        }
    }
});
