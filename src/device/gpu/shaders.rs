//! The WGSL library, written once: each program of the device ([`Shader`])
//! with its label and its composition — the shared files (`memory.wgsl` the
//! device memory bindings and the grid, `convert.wgsl` SPEC §6 loads, EC-13
//! stores, EC-19, EC-20, `arith.wgsl` f32 add and multiply in integer
//! arithmetic, `walk.wgsl` coordinates) in front of the family's files, as a
//! `concat!` of `include_str!`s, never generated text. A new kernel's
//! program is one row here. A leaf: it uses no other file of the backend.

/// Declares [`Shader`], one composed-source constant per program, and the
/// `source` and `label` of each, from one table.
macro_rules! shaders {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $konst:ident, $label:literal, [$($file:literal),+];
    )*) => {
        /// A WGSL program of the library.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Shader {
            $($(#[$doc])* $variant,)*
        }

        $(
            #[doc = concat!("The composed source of [`Shader::", stringify!($variant), "`]: ",
                $("`", $file, "` ",)+ "in this order.")]
            pub const $konst: &str = concat!($(include_str!(concat!("../../../shaders/", $file))),+);
        )*

        impl Shader {
            /// The composed source.
            pub fn source(self) -> &'static str {
                match self {
                    $(Shader::$variant => $konst,)*
                }
            }

            /// Its name in labels and errors.
            pub fn label(self) -> &'static str {
                match self {
                    $(Shader::$variant => $label,)*
                }
            }
        }
    };
}

shaders! {
    /// Pool and MaxPoolSelect.
    Pool = POOL_WGSL, "pool.wgsl",
        ["memory.wgsl", "convert.wgsl", "arith.wgsl", "walk.wgsl", "pool.wgsl"];
    /// The benchmarks' reference copy kernel (its own buffers, no device memory).
    Copy = COPY_WGSL, "copy.wgsl", ["copy.wgsl"];
    /// Copy and Cast records.
    Cast = CAST_WGSL, "cast.wgsl",
        ["memory.wgsl", "convert.wgsl", "walk.wgsl", "elementwise.wgsl", "cast.wgsl"];
    /// Iota records.
    Iota = IOTA_WGSL, "iota.wgsl",
        ["memory.wgsl", "convert.wgsl", "walk.wgsl", "elementwise.wgsl", "iota.wgsl"];
    /// Tensor-Tensor records.
    TensorTensor = TENSOR_TENSOR_WGSL, "tensor_tensor.wgsl",
        ["memory.wgsl", "convert.wgsl", "arith.wgsl", "walk.wgsl", "elementwise.wgsl",
         "tensor_tensor.wgsl"];
    /// CrossLaneReduce records.
    CrossLane = CROSS_LANE_WGSL, "cross_lane.wgsl",
        ["memory.wgsl", "convert.wgsl", "arith.wgsl", "walk.wgsl", "lane_walk.wgsl",
         "cross_lane.wgsl"];
    /// NonzeroWithCount records.
    Nonzero = NONZERO_WGSL, "nonzero.wgsl",
        ["memory.wgsl", "convert.wgsl", "walk.wgsl", "lane_walk.wgsl", "nonzero.wgsl"];
    /// GetSequenceBounds records.
    SeqBounds = SEQ_BOUNDS_WGSL, "seq_bounds.wgsl",
        ["memory.wgsl", "convert.wgsl", "walk.wgsl", "lane_walk.wgsl", "seq_bounds.wgsl"];
    /// DMAs between on-chip places (the shared memory and conversion files only).
    Dma = DMA_WGSL, "dma.wgsl", ["memory.wgsl", "convert.wgsl", "dma.wgsl"];
    /// The host's spans (a DMA's bytes up, captures down): `spans.wgsl` alone
    /// (device memory as plain words; the memory layout plus bindings 3 and 4,
    /// `Kernels::spans_layout`).
    Spans = SPANS_WGSL, "spans.wgsl", ["spans.wgsl"];
}

impl Shader {
    /// Whether the program binds device memory with the shared layout
    /// (`Kernels::memory_layout`); otherwise its layout is derived from the
    /// shader.
    pub fn binds_device_memory(self) -> bool {
        !matches!(self, Shader::Copy)
    }
}
