//! The words of validation and the predicates the kernels share: [`Fail`]
//! and its parts (`fail.rs`), [`Target`], EC-6/EC-21's exact footprint and
//! overlap tests (`footprint.rs`), the SPEC-KERNELS §13 predicates several
//! kernel structs run (`shared.rs`) and EC-2's event-mode check.
//!
//! It sits below both `isa/kernels/` (each kernel's own predicates) and
//! `isa/validate/` (the SPEC §5 tree, which calls the kernels), so neither
//! folder imports the other both ways. The public types are re-exported by
//! [`crate::isa::validate`].

pub(crate) mod fail;
pub(crate) mod footprint;
pub(crate) mod shared;

use crate::isa::enums::Engine;
use crate::isa::record::Record;
use crate::limits::Arch;
use fail::{EventField, Fail};

/// Where a record is validated for: the engine whose stream holds it and the generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Target {
    /// The engine (SPEC §2's legality column, EC-25).
    pub engine: Engine,
    /// The generation (SPEC §3 geometry).
    pub arch: Arch,
}

impl Target {
    /// The POOL engine on `arch`.
    pub const fn pool(arch: Arch) -> Target {
        Target {
            engine: Engine::Pool,
            arch,
        }
    }
}

/// EC-2: the register wait/update forms, checked by every record class after
/// its hardware predicates.
pub(crate) fn check_event_modes_emulated(r: &Record) -> Result<(), Fail> {
    let ev = r.events();
    if !ev.wait_mode.emu_supported() {
        return Err(Fail::EmuEventModeSupported {
            field: EventField::Wait,
            mode: ev.wait_mode.0,
        });
    }
    if !ev.update_mode.emu_supported() {
        return Err(Fail::EmuEventModeSupported {
            field: EventField::Update,
            mode: ev.update_mode.0,
        });
    }
    Ok(())
}
