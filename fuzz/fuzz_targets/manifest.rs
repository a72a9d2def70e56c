//! The program manifest: any text is a program or a manifest error, never a
//! panic; an accepted program stages or fails to stage without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Files resolve against a folder that does not exist: every file is an error.
    let dir = Path::new("/nonexistent-tpb-emu-fuzz");
    if let Ok(p) = tpb_emu::runtime::manifest::from_str(text, Path::new("fuzz.toml"), dir) {
        let _ = tpb_emu::runtime::stage(&p);
    }
});
