//! The text assembler: any text is records or an error, never a panic; what
//! it assembles disassembles to text that assembles to the same records.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tpb_emu::isa::stream::to_bytes;
use tpb_emu::isa::text::{asm, disasm_stream};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(recs) = asm(text) {
        let again = disasm_stream(&to_bytes(&recs)).expect("whole records");
        assert_eq!(asm(&again).expect("disassembly assembles"), recs);
    }
});
