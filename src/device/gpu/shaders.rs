//! A WGSL program of the device ([`Shader`]): its label, its layout and its
//! composition — the shared files (`memory.wgsl` the device memory bindings
//! and the grid, `convert.wgsl` SPEC §6 loads, EC-13 stores, EC-19, EC-20,
//! `arith.wgsl` f32 add and multiply in integer arithmetic, `walk.wgsl`
//! coordinates) in front of the family's files, as a `concat!` of
//! `include_str!`s, never generated text. Each program is declared with
//! [`program!`] by the file that encodes it (a kernel family's file, or
//! `copy.rs`, `dma.rs`, `batch.rs`); the list of all of them is
//! `test_support::every_shader`, made from the op registry. A leaf: it uses
//! no other file of the backend.

/// How a program's pipelines bind their buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// The shared device-memory layout (`Kernels::memory_layout`).
    Memory,
    /// Device memory as plain words, plus bindings 3 and 4
    /// (`Kernels::spans_layout`).
    Spans,
    /// Derived from the shader (buffers of its own, no device memory).
    Derived,
}

/// A WGSL program of the library. Programs are equal, and hash, by label
/// (labels are unique: tests/isa/shaders.rs checks it), so the pipeline
/// cache never hashes a source.
#[derive(Clone, Copy, Debug)]
pub struct Shader {
    label: &'static str,
    source: &'static str,
    layout: Layout,
}

impl Shader {
    /// A program: its label, composed source and layout (see [`program!`]).
    pub const fn new(label: &'static str, source: &'static str, layout: Layout) -> Shader {
        Shader {
            label,
            source,
            layout,
        }
    }

    /// The composed source.
    pub fn source(self) -> &'static str {
        self.source
    }

    /// Its name in labels and errors.
    pub fn label(self) -> &'static str {
        self.label
    }

    /// How its pipelines bind their buffers.
    pub fn layout(self) -> Layout {
        self.layout
    }

    /// Whether the program binds device memory (with the shared layout, or
    /// as the spans' plain words); otherwise its layout is derived from the
    /// shader.
    pub fn binds_device_memory(self) -> bool {
        self.layout != Layout::Derived
    }
}

impl PartialEq for Shader {
    fn eq(&self, other: &Shader) -> bool {
        self.label == other.label
    }
}

impl Eq for Shader {}

impl std::hash::Hash for Shader {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.label.hash(h)
    }
}

/// The composed source of `shaders/` files, in this order:
/// `wgsl!["memory.wgsl", "convert.wgsl", "pool.wgsl"]`.
macro_rules! wgsl {
    [$($file:literal),+ $(,)?] => {
        concat!($(include_str!(concat!("../../../shaders/", $file))),+)
    };
}
pub(crate) use wgsl;

/// A [`Shader`] constant: `program!("pool.wgsl", Memory, ["memory.wgsl",
/// …, "pool.wgsl"])`, the label, the [`Layout`] and the composition (in
/// this order). Declared by the file that encodes the program.
macro_rules! program {
    ($label:literal, $layout:ident, [$($file:literal),+ $(,)?]) => {
        $crate::device::gpu::shaders::Shader::new(
            $label,
            $crate::device::gpu::shaders::wgsl![$($file),+],
            $crate::device::gpu::shaders::Layout::$layout,
        )
    };
}
pub(crate) use program;
