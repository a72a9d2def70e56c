//! `.npy` parsing: any bytes are an array or an error, never a panic or an
//! allocation the file does not back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(n) = tpb_emu::npy::parse_npy(Path::new("fuzz.npy"), data) {
        let count: u64 = n.shape.iter().product();
        assert_eq!(count * n.elem as u64, n.data.len() as u64);
    }
});
