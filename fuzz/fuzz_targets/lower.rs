//! Lowering: any stream lowers or is rejected, never a panic; a stream
//! without pseudo-opcodes lowers to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tpb_emu::runtime::lower::lower;

fuzz_target!(|data: &[u8]| {
    let bytes = &data[..data.len() / 64 * 64];
    if let Ok(l) = lower(bytes)
        && l.pseudo_in() == 0
    {
        assert_eq!(l.bytes(), bytes);
    }
});
