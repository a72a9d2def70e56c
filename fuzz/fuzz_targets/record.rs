//! Record decode + validate: any 64 bytes decode; `check` never panics on any
//! engine and generation; `is_valid` agrees with it; the text form round-trips.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tpb_emu::isa::validate::{Target, check, is_valid};
use tpb_emu::isa::{Engine, Record};
use tpb_emu::limits::Arch;

fuzz_target!(|data: &[u8]| {
    for chunk in data.chunks_exact(64) {
        let mut b = [0u8; 64];
        b.copy_from_slice(chunk);
        let r = Record(b);
        for engine in Engine::ALL {
            for arch in Arch::ALL {
                let t = Target { engine, arch };
                assert_eq!(check(&r, t).is_ok(), is_valid(&r, t));
            }
        }
        let text = tpb_emu::isa::text::disasm_record(&r);
        let back = tpb_emu::isa::text::asm(&text).expect("disassembly assembles");
        assert_eq!(back, [r], "{text}");
    }
});
