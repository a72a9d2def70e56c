//! Operand layouts written once.
//!
//! Each operand struct (S4D4_PL, the SPEC-KERNELS structs, the control
//! records) is declared by one [`operand_layout!`](crate::isa::layout)
//! invocation: a table of
//! `(field, type, offset, text key)` rows. From that one table come
//!
//! - the typed struct and its `decode` / `encode` (every byte of the 64 has a
//!   field, so `decode(r).encode() == r`),
//! - an `off` module of byte offsets, read by the validator for its messages,
//! - the const [`FieldDef`] table, read by the text form (keys, kinds) and by
//!   validation messages (names and offsets),
//! - compile-time asserts that the fields tile bytes 12..64 with no gap and no
//!   overlap, each as wide as its type.

use super::enums::{AluOp, Dtype, DtypePair, ImmSrc, PoolDim, PoolFunc, ReduceAxis, ReduceOp};
use super::tensor::{
    Addr4, DATA4D_BYTES, Data4d, TENSOR2D_BYTES, TENSOR3D_BYTES, TENSOR4D_BYTES, Tensor2d,
    Tensor3d, Tensor4d,
};
use crate::limits::RECORD_BYTES;

/// How a field's bytes are read, printed and parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A plain byte, printed in decimal.
    U8,
    /// A little-endian i32, printed in signed decimal.
    I32,
    /// A little-endian u32, printed in decimal.
    U32,
    /// A little-endian i64, printed in signed decimal.
    I64,
    /// A [`Dtype`] byte.
    Dtype,
    /// A [`DtypePair`] byte (EC-43).
    DtypePair,
    /// An [`AluOp`] byte.
    AluOp,
    /// A TENSOR_SUBDIM byte ([`PoolDim`]).
    SubDim,
    /// A [`PoolFunc`] byte.
    PoolFunc,
    /// A [`ReduceOp`] byte.
    ReduceOp,
    /// A [`ReduceAxis`] byte.
    ReduceAxis,
    /// An [`ImmSrc`] byte.
    ImmSrc,
    /// The bits of an f32 ([`F32Bits`]).
    F32,
    /// A [`Tensor2d`].
    Tensor2d,
    /// A [`Tensor4d`].
    Tensor4d,
    /// A [`Tensor3d`].
    Tensor3d,
    /// A [`Data4d`].
    Data4d,
    /// Bytes the layout reserves (must be zero).
    Bytes,
}

/// What the text form does with a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// A required `key=value`.
    Required(&'static str),
    /// A `key=value` printed only when non-zero; absent means zero.
    Optional(&'static str),
    /// Reserved: must be zero for the field form (else the record prints raw).
    Reserved,
}

impl Role {
    /// The text key, if the field has one.
    pub const fn key(self) -> Option<&'static str> {
        match self {
            Role::Required(k) | Role::Optional(k) => Some(k),
            Role::Reserved => None,
        }
    }
}

/// One row of an operand layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldDef {
    /// The header's field name (`in_dtype`, `num_active_channels`, …).
    pub name: &'static str,
    /// Record byte offset.
    pub offset: usize,
    /// Width in bytes.
    pub width: usize,
    /// How the bytes are read.
    pub kind: Kind,
    /// The text key, or reserved.
    pub role: Role,
}

impl FieldDef {
    /// The name and offset, for validation messages.
    pub const fn at(&self) -> FieldRef {
        FieldRef {
            name: self.name,
            offset: self.offset as u8,
        }
    }
}

/// A field of a record named in a validation message: its name and byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldRef {
    /// The field's name.
    pub name: &'static str,
    /// Record byte offset.
    pub offset: u8,
}

/// The field at `offset` of a table (const: a missing offset fails the build).
pub const fn field_at(fields: &[FieldDef], offset: usize) -> FieldRef {
    let mut i = 0;
    while i < fields.len() {
        if fields[i].offset == offset {
            return fields[i].at();
        }
        i += 1;
    }
    panic!("no field at this offset");
}

/// Asserts (at compile time, from a `const _` item) that `fields` tile bytes
/// 12..64 in order, each as wide as its type, and that keys are unique.
pub const fn assert_tiles(fields: &[FieldDef]) {
    let mut at = 12;
    let mut i = 0;
    while i < fields.len() {
        assert!(fields[i].offset == at, "fields must tile 12..64 in order");
        at += fields[i].width;
        i += 1;
    }
    assert!(at == RECORD_BYTES, "fields must end at byte 64");
}

/// A field type: its width and kind, and how it reads and writes its bytes.
pub trait Codec: Copy {
    /// Width in bytes.
    const WIDTH: usize;
    /// How the text form treats it.
    const KIND: Kind;
    /// Reads the field from exactly [`Codec::WIDTH`] bytes.
    fn get(b: &[u8]) -> Self;
    /// Writes the field into exactly [`Codec::WIDTH`] bytes.
    fn put(&self, b: &mut [u8]);
}

impl Codec for u8 {
    const WIDTH: usize = 1;
    const KIND: Kind = Kind::U8;
    fn get(b: &[u8]) -> Self {
        b[0]
    }
    fn put(&self, b: &mut [u8]) {
        b[0] = *self;
    }
}

impl Codec for i32 {
    const WIDTH: usize = 4;
    const KIND: Kind = Kind::I32;
    fn get(b: &[u8]) -> Self {
        i32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    fn put(&self, b: &mut [u8]) {
        b.copy_from_slice(&self.to_le_bytes());
    }
}

impl Codec for u32 {
    const WIDTH: usize = 4;
    const KIND: Kind = Kind::U32;
    fn get(b: &[u8]) -> Self {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    fn put(&self, b: &mut [u8]) {
        b.copy_from_slice(&self.to_le_bytes());
    }
}

impl Codec for i64 {
    const WIDTH: usize = 8;
    const KIND: Kind = Kind::I64;
    fn get(b: &[u8]) -> Self {
        i64::from_le_bytes(b.try_into().expect("8 bytes"))
    }
    fn put(&self, b: &mut [u8]) {
        b.copy_from_slice(&self.to_le_bytes());
    }
}

macro_rules! byte_codec {
    ($($ty:ident => $kind:ident;)*) => {$(
        impl Codec for $ty {
            const WIDTH: usize = 1;
            const KIND: Kind = Kind::$kind;
            fn get(b: &[u8]) -> Self {
                $ty(b[0])
            }
            fn put(&self, b: &mut [u8]) {
                b[0] = self.0;
            }
        }
    )*};
}

byte_codec! {
    Dtype => Dtype;
    DtypePair => DtypePair;
    AluOp => AluOp;
    PoolDim => SubDim;
    PoolFunc => PoolFunc;
    ReduceOp => ReduceOp;
    ReduceAxis => ReduceAxis;
    ImmSrc => ImmSrc;
}

/// The bits of an f32 field, kept as bits so every NaN payload round-trips.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct F32Bits(pub u32);

impl F32Bits {
    /// The value.
    pub fn value(self) -> f32 {
        f32::from_bits(self.0)
    }
}

impl Codec for F32Bits {
    const WIDTH: usize = 4;
    const KIND: Kind = Kind::F32;
    fn get(b: &[u8]) -> Self {
        F32Bits(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn put(&self, b: &mut [u8]) {
        b.copy_from_slice(&self.0.to_le_bytes());
    }
}

impl Codec for Tensor2d {
    const WIDTH: usize = TENSOR2D_BYTES;
    const KIND: Kind = Kind::Tensor2d;
    fn get(b: &[u8]) -> Self {
        Tensor2d::from_bytes(b.try_into().expect("12 bytes"))
    }
    fn put(&self, b: &mut [u8]) {
        b.copy_from_slice(&self.to_bytes());
    }
}

impl<const N: usize> Codec for [u8; N] {
    const WIDTH: usize = N;
    const KIND: Kind = Kind::Bytes;
    fn get(b: &[u8]) -> Self {
        b.try_into().expect("N bytes")
    }
    fn put(&self, b: &mut [u8]) {
        b.copy_from_slice(self);
    }
}

impl Codec for Tensor4d {
    const WIDTH: usize = TENSOR4D_BYTES;
    const KIND: Kind = Kind::Tensor4d;
    fn get(b: &[u8]) -> Self {
        Tensor4d::from_bytes(b.try_into().expect("20 bytes"))
    }
    fn put(&self, b: &mut [u8]) {
        b.copy_from_slice(&self.to_bytes());
    }
}

impl Codec for Tensor3d {
    const WIDTH: usize = TENSOR3D_BYTES;
    const KIND: Kind = Kind::Tensor3d;
    fn get(b: &[u8]) -> Self {
        Tensor3d::from_bytes(b.try_into().expect("16 bytes"))
    }
    fn put(&self, b: &mut [u8]) {
        b.copy_from_slice(&self.to_bytes());
    }
}

impl Codec for Data4d {
    const WIDTH: usize = DATA4D_BYTES;
    const KIND: Kind = Kind::Data4d;
    fn get(b: &[u8]) -> Self {
        Data4d::from_bytes(b.try_into().expect("20 bytes"))
    }
    fn put(&self, b: &mut [u8]) {
        b.copy_from_slice(&self.to_bytes());
    }
}

/// The address of a tensor field's bytes (TENSOR4D and TENSOR3D both start
/// with their ADDR4).
pub fn tensor_addr(b: &[u8]) -> Addr4 {
    Addr4(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Declares an operand struct from its one field table (see the module docs).
///
/// ```text
/// operand_layout! {
///     /// docs
///     S4d4Tr = "S4D4_TR", mod off {
///         /// field docs
///         src: Tensor4d = SRC @ 12, Required("src");
///         ...
///     }
/// }
/// ```
macro_rules! operand_layout {
    (
        $(#[$doc:meta])*
        $name:ident = $cname:literal, mod $off:ident {
            $(
                $(#[$fdoc:meta])*
                $field:ident : $ty:ty = $konst:ident @ $at:literal, $role:ident $(($key:literal))?;
            )*
        }
    ) => {
        $(#[$doc])*
        ///
        #[doc = concat!("# Layout: `", $cname, "`")]
        ///
        /// Bytes 0..4 are the header and 4..12 the events band; the rest, in
        /// byte order (the text form's keys, form 2, come from this table):
        ///
        /// | field | byte | type | text form |
        /// |---|---|---|---|
        $(
            #[doc = concat!(
                "| `", stringify!($field), "` | ", $at, " | `", stringify!($ty), "` | ",
                $crate::isa::layout::role_doc!($role $(, $key)?), " |"
            )]
        )*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $name {
            /// Bytes 0..4.
            pub header: $crate::isa::record::Header,
            /// Bytes 4..12.
            pub events: $crate::isa::record::Events,
            $($(#[$fdoc])* pub $field: $ty,)*
        }

        /// Byte offsets of the fields (from the one layout table).
        pub mod $off {
            $(
                #[doc = concat!("`", stringify!($field), "`.")]
                pub const $konst: usize = $at;
            )*
        }

        impl $name {
            /// The header's struct name.
            pub const NAME: &'static str = $cname;

            /// The layout table: every field after the events band, in offset order.
            pub const FIELDS: &'static [$crate::isa::layout::FieldDef] = &[$(
                $crate::isa::layout::FieldDef {
                    name: stringify!($field),
                    offset: $at,
                    width: <$ty as $crate::isa::layout::Codec>::WIDTH,
                    kind: <$ty as $crate::isa::layout::Codec>::KIND,
                    role: $crate::isa::layout::Role::$role $(($key))?,
                },
            )*];

            /// Decodes any 64 bytes (never fails).
            pub fn decode(r: &$crate::isa::record::Record) -> $name {
                use $crate::isa::layout::Codec;
                $name {
                    header: r.header(),
                    events: r.events(),
                    $($field: <$ty as Codec>::get(&r.0[$at..$at + <$ty as Codec>::WIDTH]),)*
                }
            }

            /// Encodes the 64 bytes.
            pub fn encode(&self) -> $crate::isa::record::Record {
                use $crate::isa::layout::Codec;
                let mut r = $crate::isa::record::Record::default();
                let h = self.header;
                r.0[..4].copy_from_slice(&[h.opcode.0, h.inst_word_len, h.debug_cmd, h.debug_hint]);
                r.set_events(self.events);
                $(self.$field.put(&mut r.0[$at..$at + <$ty as Codec>::WIDTH]);)*
                r
            }

            /// The name and offset of the field at `offset`, for messages.
            pub const fn field(offset: usize) -> $crate::isa::layout::FieldRef {
                $crate::isa::layout::field_at(Self::FIELDS, offset)
            }
        }

        // The fields tile bytes 12..64 exactly, each as wide as its type.
        const _: () = $crate::isa::layout::assert_tiles($name::FIELDS);
    };
}

pub(crate) use operand_layout;

/// The text-form cell of a layout row's role, for the generated rustdoc.
macro_rules! role_doc {
    (Required, $key:literal) => {
        concat!("`", $key, "=`, required")
    };
    (Optional, $key:literal) => {
        concat!("`", $key, "=`, optional (absent: 0)")
    };
    (Reserved) => {
        "reserved: must be 0"
    };
}

pub(crate) use role_doc;

/// A fresh header with `opcode` and `inst_word_len` 16.
pub(crate) const fn header(opcode: super::opcode::Opcode) -> super::record::Header {
    super::record::Header {
        opcode,
        inst_word_len: crate::limits::INST_WORD_LEN,
        debug_cmd: 0,
        debug_hint: 0,
    }
}

/// What the structs' spec-table tests share (each struct's file writes its
/// SPEC table out by hand and compares).
#[cfg(test)]
pub(crate) mod testing {
    use super::FieldDef;
    use crate::isa::record::Record;

    /// Each field's `(name, offset, width)`.
    pub(crate) fn rows(f: &[FieldDef]) -> Vec<(&str, usize, usize)> {
        f.iter().map(|d| (d.name, d.offset, d.width)).collect()
    }

    /// Each field's `(offset, width)`.
    pub(crate) fn spans(f: &[FieldDef]) -> Vec<(usize, usize)> {
        f.iter().map(|d| (d.offset, d.width)).collect()
    }

    /// A record whose byte `i` is `i`, so a decoded field shows the bytes it came from.
    pub(crate) fn counting_record() -> Record {
        let mut r = Record::default();
        for (i, b) in r.0.iter_mut().enumerate() {
            *b = i as u8;
        }
        r
    }
}
