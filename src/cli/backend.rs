//! `--backend gpu|cpu|auto`: the library's [`Backend`]; its GPU failures
//! enter the exit-code contract as [`super::CliError::Device`].

pub use tpb_emu::model::backend::Backend;
