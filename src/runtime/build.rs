//! The control and DMA record builders of SPEC §8.1 (EC-22..EC-28). They
//! live in the instruction-set layer, [`crate::isa::build::control`], over
//! the typed control records; this module re-exports them for the runtime's
//! callers (tests, examples, the front end).
//!
//! ```
//! use tpb_emu::runtime::build::{drain, mov32};
//! use tpb_emu::isa::build::control;
//! assert_eq!(mov32(1, 2), control::mov32(1, 2));
//! assert_eq!(drain(), control::drain());
//! ```

pub use crate::isa::build::control::*;
