//! The reasons beneath [`crate::model::ModelError`]: each kind of failure
//! holds the values it was found with (names, shapes, the typed error of the
//! layer below), and its message is written from them in one place.

use crate::isa::enums::{Dtype, Engine};
use crate::neff::NeffError;
use crate::neff::lower::TriggerRejected;
use crate::runtime::{ManifestError, StageError};
use std::fmt;
use std::path::PathBuf;

/// What a model was read from: a NEFF or a manifest ("the NEFF has no
/// input of that name", "the program has …").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelKind {
    /// A NEFF file.
    Neff,
    /// A TOML manifest.
    Manifest,
}

impl fmt::Display for ModelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ModelKind::Neff => "NEFF",
            ModelKind::Manifest => "program",
        })
    }
}

/// Why a file is not a model ([`crate::model::ModelError::Load`], exit 4).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The manifest, or a file it names, is not a program.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// A NEFF gate (SPEC-NEFF §6 steps 1–13).
    #[error("{name}: {source}")]
    Neff {
        /// The file as given (or the name the bytes stand for).
        name: String,
        /// Why.
        source: NeffError,
    },
    /// The manifest's program cannot be laid out: a variable, a stream that
    /// is not whole records, more DRAM than the host holds.
    #[error("{manifest}: {source}")]
    Stage {
        /// The manifest as given.
        manifest: String,
        /// Why.
        source: StageError,
    },
    /// The same of a NEFF's program.
    #[error(transparent)]
    NeffStage(Staging),
}

/// A staging error of a program, with the NEFF stream offset of the record
/// at fault when the NEFF's trigger expansions moved it
/// (`… [NEFF Pool stream offset 128]`).
#[derive(Debug)]
pub struct Staging {
    /// Why the program was rejected.
    pub source: StageError,
    /// The engine and the record's byte offset in the NEFF's own stream,
    /// where that differs from the offset `source` gives.
    pub neff: Option<(Engine, usize)>,
}

impl fmt::Display for Staging {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source)?;
        if let Some((engine, offset)) = self.neff {
            write!(f, " [NEFF {engine} stream offset {offset}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for Staging {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Why a program was rejected before it ran
/// ([`crate::model::ModelError::Invalid`], exit 3).
#[derive(Debug, thiserror::Error)]
pub enum Rejection {
    /// A NEFF trigger that does not lower (EC-29, NEFF-EC-9).
    #[error(transparent)]
    Trigger(#[from] TriggerRejected),
    /// An invalid record or DMA footprint of a NEFF's program.
    #[error(transparent)]
    NeffStage(Staging),
    /// The same of a manifest's program.
    #[error(transparent)]
    Stage(StageError),
}

/// A name the model does not have, or one it needs that was not given
/// ([`crate::model::ModelError::Name`], exit 2).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameFault {
    /// `--input NAME` where the model has no such input.
    #[error("--input {name}: the {kind} has no input of that name (inputs: {})", .inputs.join(", "))]
    UnknownInput {
        /// The name given.
        name: String,
        /// NEFF or manifest.
        kind: ModelKind,
        /// The model's inputs.
        inputs: Vec<String>,
    },
    /// NEFF-EC-18: a NEFF's public input not given.
    #[error("missing --input {0}=FILE.npy")]
    MissingInput(String),
    /// `why NAME[..]` where the model has no such output.
    #[error("{name}: the {kind} has no output of that name (outputs: {})", .outputs.join(", "))]
    UnknownOutput {
        /// The name given.
        name: String,
        /// NEFF or manifest.
        kind: ModelKind,
        /// The model's outputs.
        outputs: Vec<String>,
    },
    /// An element index with another number of axes than the output's.
    #[error("{name}{index:?}: {} indices for an output of shape {shape:?}", .index.len())]
    Rank {
        /// The output.
        name: String,
        /// The index given.
        index: Vec<u64>,
        /// The output's shape.
        shape: Vec<u64>,
    },
    /// An element index past an axis' end.
    #[error(
        "{name}{index:?}: index {} is out of range for axis {axis} of size {} (shape {shape:?})",
        .index[*.axis], .shape[*.axis]
    )]
    Index {
        /// The output.
        name: String,
        /// The index given.
        index: Vec<u64>,
        /// The first axis out of range.
        axis: usize,
        /// The output's shape.
        shape: Vec<u64>,
    },
    /// An output that the run's DRAM layout does not hold.
    #[error("{0}: not a DRAM variable of the run")]
    NotInDram(String),
}

/// An input whose element type, shape or size is not the model's
/// ([`crate::model::ModelError::Input`], exit 4).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InputFault {
    /// A `.npy` whose elements are of another kind or size.
    #[error("--input {name}: {} holds {found}, the input needs {needs} ({dtype})", .file.display())]
    Elements {
        /// The input.
        name: String,
        /// The `.npy` file.
        file: PathBuf,
        /// The file's dtype string (`<f4`).
        found: String,
        /// The dtype string the input's elements have in a `.npy`.
        needs: &'static str,
        /// The input's element type.
        dtype: Dtype,
    },
    /// A `.npy` of another shape.
    #[error("--input {name}: {} has shape {found:?}, the input needs {shape:?}", .file.display())]
    Shape {
        /// The input.
        name: String,
        /// The `.npy` file.
        file: PathBuf,
        /// The file's shape.
        found: Vec<u64>,
        /// The input's shape.
        shape: Vec<u64>,
    },
    /// Bytes of another length than the input's.
    #[error("input {name}: {got} bytes, the input needs {bytes} ({dtype} {shape:?})")]
    Size {
        /// The input.
        name: String,
        /// The bytes given.
        got: usize,
        /// The input's bytes.
        bytes: u64,
        /// The input's element type.
        dtype: Dtype,
        /// The input's shape.
        shape: Vec<u64>,
    },
}
