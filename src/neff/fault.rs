//! Why a NEFF's members do not make a model (SPEC-NEFF §6 steps 11–13 and
//! the I/O binding, [`super::NeffError::Load`]): one variant per check, with
//! the values it failed on. The messages are the runtime's where it has one.

use crate::limits::{Arch, RECORD_BYTES};
use std::fmt;
use std::sync::Arc;

/// An input or an output (the I/O binding's messages name the side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// A public input.
    Input,
    /// A public output.
    Output,
}

impl Side {
    /// `Input` or `Output`, as a sentence starts.
    fn title(self) -> &'static str {
        match self {
            Side::Input => "Input",
            Side::Output => "Output",
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Input => "input",
            Side::Output => "output",
        })
    }
}

/// A member that is not JSON: serde's error, shared so that a
/// [`NeffFault`] stays `Clone` and comparable (by message).
#[derive(Clone, Debug)]
pub struct JsonError(pub Arc<serde_json::Error>);

impl PartialEq for JsonError {
    fn eq(&self, other: &JsonError) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

impl Eq for JsonError {}

/// Transparent: serde's error is this one, not a cause beneath it.
impl std::error::Error for JsonError {}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The NeuronCore version number of a generation (`v3` in NEFF-EC-17's message).
fn version(a: &Arch) -> u8 {
    match a {
        Arch::Sunda => 2,
        Arch::Cayman => 3,
        Arch::Mariana => 4,
    }
}

/// Why a NEFF's JSON members do not describe a model it can run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NeffFault {
    /// Step 11: neither `neff.json` nor `kelp.json`.
    #[error("Invalid NN: {0}, neff.json is missing")]
    NoNeffJson(
        /// The header's network name.
        String,
    ),
    /// A member the model names is not in the archive.
    #[error("{0} is missing")]
    MissingMember(
        /// The member.
        String,
    ),
    /// A JSON member that does not parse.
    #[error("invalid JSON in {member}: {source}")]
    Json {
        /// The member.
        member: String,
        /// serde's error.
        source: JsonError,
    },
    /// neff.json without `nodes`, `arg_nodes`, `heads`, `node_row_ptr` or
    /// `attrs`, or one of the wrong type.
    #[error("Missing required fields in NEFF JSON")]
    MissingFields,
    /// neff.json's `attrs` without `dltype` or `shape`.
    #[error("Missing dltype or shape in attrs")]
    MissingDltypeOrShape,
    /// `attrs.dltype` is not `[_, [..]]`.
    #[error("Invalid dltype data format")]
    DltypeFormat,
    /// `attrs.shape` is not `[_, [..]]`.
    #[error("Invalid shape data format")]
    ShapeFormat,
    /// An entry id past the dtypes or shapes.
    #[error("EID {0} out of bounds for dtypes/shapes")]
    EidOutOfBounds(
        /// The entry id.
        u64,
    ),
    /// An entry whose shape is not a list of sizes.
    #[error("Invalid shape data format (EID {0})")]
    EidShape(
        /// The entry id.
        u64,
    ),
    /// NEFF-EC-7: a tensor name that cannot be a file name.
    #[error("invalid tensor name '{0}': 1 to 64 of A-Z a-z 0-9 _ - . not starting with . or -")]
    TensorName(
        /// The name.
        String,
    ),
    /// An argument or head naming a node past the node list.
    #[error("{} node ID {id} out of bounds", .side.title())]
    NodeOutOfBounds {
        /// Argument (input) or head (output).
        side: Side,
        /// The node id.
        id: u64,
    },
    /// `attrs.output_names` is not one string per head.
    #[error("output_names does not match heads")]
    OutputNames,
    /// No node with `func_name` `__kelf`.
    #[error("No KELF node found in NEFF JSON")]
    NoKelfNode,
    /// The kelf node without a `kelf` attribute.
    #[error("KELF node found but missing 'kelf' attribute")]
    KelfAttrMissing,
    /// The kelf node's `kelf` attribute is not a string.
    #[error("KELF attribute is not a string")]
    KelfAttrType,
    /// NEFF-EC-17: a kelf `target` that names no generation.
    #[error("Invalid target '{0}'")]
    Target(
        /// The target.
        String,
    ),
    /// NEFF-EC-17: a NEFF for another generation than `--arch`.
    #[error(
        "Loading a NEFF compiled for a different arch is not allowed, NEFF arch: v{}, instance arch: v{}",
        version(.neff), version(.instance)
    )]
    ArchMismatch {
        /// The NEFF's generation.
        neff: Arch,
        /// The generation asked for.
        instance: Arch,
    },
    /// NEFF-EC-10: a `.npy` weight without NumPy's magic.
    #[error("NUMPY {member} bad header {magic:x} != 0x4e93")]
    NumpyMagic {
        /// The member.
        member: String,
        /// Its first two bytes, little-endian.
        magic: u16,
    },
    /// NEFF-EC-10: a `.npy` weight shorter than its header.
    #[error("Failed to get neff weight content for {0}")]
    WeightContent(
        /// The member.
        String,
    ),
    /// A required key of a JSON member (`<version>` of the kelf, `<type>`
    /// of a DMA queue) missing or of the wrong type.
    #[error("missing <{key}> in {within}")]
    MissingKey {
        /// The key.
        key: &'static str,
        /// The member or queue it is missing from.
        within: String,
    },
    /// A kelf `version` without a dot.
    #[error("invalid string (.) in {0}")]
    KelfVersion(
        /// The version.
        String,
    ),
    /// Step 12: not one graph (one subgraph per core; the emulator has one).
    #[error("{count} graphs in {kelf}; the emulator runs one")]
    Graphs {
        /// The kelf's graphs.
        count: usize,
        /// The kelf member.
        kelf: String,
    },
    /// A def.json variable whose `type` is not a string.
    #[error("Failed to parse, key: type")]
    VarType,
    /// A def.json variable without an integer `var_id`.
    #[error("missing <var_id>")]
    VarId,
    /// A sized def.json variable kind without `size`.
    #[error("missing <size>")]
    VarSize,
    /// NEFF-EC-9: a variable kind the emulator does not accept.
    #[error("unsupported variable type '{ty}' for {name}")]
    UnsupportedVarType {
        /// The type.
        ty: String,
        /// The variable.
        name: String,
    },
    /// Two variables with one `var_id` (the first of them, then the repeat).
    #[error("duplicate var_id {id} ({first}, {repeat})")]
    DuplicateVarId {
        /// The id.
        id: u64,
        /// The first variable with it.
        first: String,
        /// The one that repeats it.
        repeat: String,
    },
    /// The ids are not 0..n.
    #[error("Unexpected var_ids set! max={max}, size={count}")]
    VarIds {
        /// The largest id.
        max: u64,
        /// The number of variables.
        count: usize,
    },
    /// A subgraph without an output variable.
    #[error("subgraph {0} has no Outputs")]
    NoOutputs(
        /// The graph.
        String,
    ),
    /// NEFF-EC-7: a public tensor that is no def.json variable of its side.
    #[error("neff.json {side} '{name}' is not a def.json {side} variable")]
    NotAVariable {
        /// Input or output.
        side: Side,
        /// The tensor.
        name: String,
    },
    /// NEFF-EC-7: a def.json input or output no public tensor names.
    #[error("def.json {side} variable '{name}' is not named by neff.json")]
    NotNamed {
        /// Input or output.
        side: Side,
        /// The variable.
        name: String,
    },
    /// NEFF-EC-7: a def.json input or output named by two public tensors.
    #[error("def.json {side} variable '{name}' is named more than once by neff.json")]
    NamedTwice {
        /// Input or output.
        side: Side,
        /// The variable.
        name: String,
    },
    /// A variable whose type, size, shape or backing is wrong.
    #[error("variable '{name}': {fault}")]
    Variable {
        /// The variable.
        name: String,
        /// What is wrong with it.
        fault: VarFault,
    },
    /// An engine key of def.json that is not a member name.
    #[error("def.json key {0} is not a member name")]
    EngineKey(
        /// The key.
        String,
    ),
    /// NEFF-EC-6: an engine stream that is not whole 64-byte records.
    #[error("{member}: stream length {len} is not a multiple of {RECORD_BYTES}")]
    StreamLength {
        /// The `.bin` member.
        member: String,
        /// Its length.
        len: usize,
    },
    /// Two DMA blocks with one queue and id.
    #[error("dma block (queue {queue}, id {id}) is defined twice in subgraph {graph}")]
    DmaBlockTwice {
        /// The queue.
        queue: String,
        /// The block id.
        id: u64,
        /// The graph.
        graph: String,
    },
    /// A member's `dma` that is not an array.
    #[error("{0}: dma is not an array")]
    DmaNotArray(
        /// The member.
        String,
    ),
    /// A DMA block without a string `queue` and an integer `id`.
    #[error("{member}: dma block {block} needs a string queue and an integer id")]
    DmaBlockKeys {
        /// The member.
        member: String,
        /// The block's index in the member's `dma`.
        block: usize,
    },
    /// A DMA block whose `desc` is not an array.
    #[error("{member}: dma block {block}: desc is not an array")]
    DescNotArray {
        /// The member.
        member: String,
        /// The block's index in the member's `dma`.
        block: usize,
    },
    /// NEFF-EC-3: a descriptor side whose sizes multiply past 64 bits.
    #[error(
        "{member}: dma block {block} (queue {queue:?}, id {id}), descriptor {desc}: \
         the product of its {count} {key} overflows 64 bits"
    )]
    SizesOverflow {
        /// The member.
        member: String,
        /// The block's index in the member's `dma`.
        block: usize,
        /// The block's queue.
        queue: String,
        /// The block's id.
        id: u64,
        /// The descriptor's index in the block.
        desc: usize,
        /// The number of sizes.
        count: usize,
        /// `from_sizes` or `to_sizes`.
        key: &'static str,
    },
    /// NEFF-EC-12 (`--strict`): a CAYMAN NEFF without the reservation.
    #[error(
        "Missing or corrupted runtime_statebuffer_reservation field in def.json and \
         NEURON_RT_ALLOW_LEGACY_NEFF=1 is not set"
    )]
    ReservationMissing,
    /// NEFF-EC-12: a reservation that is not an array.
    #[error("Missing or corrupted runtime_statebuffer_reservation field in def.json")]
    ReservationCorrupted,
    /// NEFF-EC-12: a reservation entry of a type other than `evtaccel`.
    #[error("Invalid runtime_statebuffer_reservation type {0}")]
    ReservationType(
        /// The type (empty when it is not a string).
        String,
    ),
    /// NEFF-EC-12: a CAYMAN reservation entry other than 128 partitions
    /// of 8 bytes from partition 0.
    #[error("Invalid runtime_statebuffer_reservation entry {0}")]
    ReservationEntry(
        /// The entry's index.
        usize,
    ),
}

/// What is wrong with one def.json variable ([`NeffFault::Variable`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VarFault {
    /// NEFF-EC-10: a `file` variable without `file_name`.
    #[error("a file variable without file_name")]
    NoFileName,
    /// NEFF-EC-10: a weight of another length than the variable's size.
    #[error("{member} holds {len} bytes, size is {size}")]
    WeightSize {
        /// The weight's member.
        member: String,
        /// The weight's bytes.
        len: u64,
        /// The variable's size.
        size: u64,
    },
    /// A dtype def.json does not define.
    #[error("unknown dtype '{0}'")]
    Dtype(
        /// The dtype.
        String,
    ),
    /// A shape that is not a list of sizes.
    #[error("shape is not a list of sizes")]
    Shape,
    /// A size without a shape that is not whole elements.
    #[error("size {size} is not a multiple of {dtype}'s {elem} bytes")]
    SizeElements {
        /// The size.
        size: u64,
        /// The dtype as def.json spells it.
        dtype: String,
        /// Its element size.
        elem: u64,
    },
    /// A size other than the shape's elements.
    #[error("size {size} is not the shape {shape:?} × {elem} bytes")]
    SizeShape {
        /// The size.
        size: u64,
        /// The shape.
        shape: Vec<u64>,
        /// The element size.
        elem: u64,
    },
    /// NEFF-EC-9: a view past its backing variable's end.
    #[error("bytes {offset}..+{size} are outside '{backing}' ({backing_size} bytes)")]
    ViewOutside {
        /// The view's offset in the backing variable.
        offset: u64,
        /// The view's size.
        size: u64,
        /// The backing variable.
        backing: String,
        /// Its size.
        backing_size: u64,
    },
    /// NEFF-EC-9: a view whose backing is not a DRAM variable.
    #[error("backing_buf '{0}' is not a DRAM variable")]
    Backing(
        /// The backing variable named.
        String,
    ),
}

/// Why the payload is not a readable archive (SPEC-NEFF §6 steps 9–10,
/// [`super::NeffError::Metadata`]): a gzip or tar failure, or the payload's
/// size. The gzip messages are flate2's reader's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MetadataFault {
    /// Memory for the inflated payload ran out.
    #[error("cannot allocate {0} bytes for the inflated payload")]
    InflateMemory(
        /// The bytes asked for.
        usize,
    ),
    /// Memory for a copy of the file ran out.
    #[error("cannot allocate {0} bytes for a copy of the file")]
    CopyMemory(
        /// The file's length.
        usize,
    ),
    /// A gzip payload that inflates past the limit.
    #[error("the payload inflates beyond the limit of {0} bytes")]
    InflateLimit(
        /// The limit.
        u64,
    ),
    /// A stored payload past the limit.
    #[error("the payload is beyond the limit of {0} bytes")]
    PayloadLimit(
        /// The limit.
        u64,
    ),
    /// The header's or the trailer's CRC-32 differs.
    #[error("gzip CRC mismatch")]
    GzipCrc,
    /// The trailer's ISIZE differs.
    #[error("gzip ISIZE mismatch")]
    GzipIsize,
    /// The gzip member ends early.
    #[error("gzip: unexpected end of file")]
    GzipEof,
    /// Not a gzip header.
    #[error("gzip: invalid gzip header")]
    GzipHeader,
    /// A header name or comment past the reader's bound.
    #[error("gzip: gzip header field too long")]
    GzipField,
    /// A DEFLATE stream that does not decode.
    #[error("gzip: corrupt deflate stream")]
    GzipCorrupt,
    /// A DEFLATE stream that stops before its end.
    #[error("gzip: incomplete deflate stream")]
    GzipIncomplete,
    /// A tar header whose checksum is wrong.
    #[error("tar header checksum at byte {0}")]
    TarChecksum(
        /// The header's offset.
        usize,
    ),
    /// A tar entry whose size field is not a size.
    #[error("size of tar entry {name} at byte {at} is {why}")]
    TarSize {
        /// The entry.
        name: String,
        /// Its header's offset.
        at: usize,
        /// What the field is.
        why: NumberFault,
    },
    /// A member whose data runs past the tar's end.
    #[error("member {name} truncated ({avail} of {size} bytes)")]
    Truncated {
        /// The member.
        name: String,
        /// The bytes there are.
        avail: u64,
        /// The bytes its header says.
        size: u64,
    },
    /// Memory for the tar's index ran out.
    #[error("out of memory while walking the tar")]
    TarMemory,
    /// A payload of no bytes.
    #[error("empty payload")]
    EmptyPayload,
}

/// Why a tar number field is not a number ([`MetadataFault::TarSize`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NumberFault {
    /// A negative GNU base-256 number.
    #[error("negative")]
    Negative,
    /// A number past 64 bits.
    #[error("too large")]
    TooLarge,
    /// A digit that is not octal.
    #[error("not octal")]
    NotOctal,
}
