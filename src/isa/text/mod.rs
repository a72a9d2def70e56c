//! The text form of records: a disassembler ([`disasm_record`], [`disasm_stream`])
//! and an assembler ([`asm`], [`asm_line`]) that share one grammar.
//!
//! The text form is exact: for **every** 64-byte record `r`,
//! `asm(&disasm_record(&r)) == [r]`, byte for byte. A record whose bytes the
//! readable forms cannot carry is printed as `.raw` hex.
//!
//! # Lines
//!
//! One record per line. Blank lines are ignored, and so is everything from a
//! `;` or `#` to the end of a line (a comment). Tokens are separated by
//! whitespace, except inside `{…}`, where whitespace belongs to the token.
//! Mnemonics, keys and names are case-sensitive.
//!
//! A record takes one of four forms ([`Form`]); the disassembler picks the
//! first that fits.
//!
//! ## 1. S4D4_PL fields (POOL 0x45, MAX_POOL_SELECT 0x58)
//!
//! Used when `inst_word_len` (byte 1) is 16 and reserved0 (byte 35) and
//! reserved1 (bytes 38, 39) are zero — even when every other byte is zero.
//!
//! ```text
//! POOL func=max dim=xy in=fp32 out=fp32 ch=128 scale=1 src=sbuf[0]+0x0{2:1 2:4 2:2 2:8} dst=sbuf[0]+0x40{4:1 1:1 1:1 1:1}
//! ```
//!
//! | key | field | printed as | accepted |
//! |---|---|---|---|
//! | `func` | pool_func (36) | `none` `max` `avg`, else `0xNN` | a name or any byte |
//! | `dim` | pool_dim (37) | `unused` `x` `xy` `xyz` `xyzw`, else `0xNN` | a name or any byte |
//! | `in`, `out` | in_dtype (32), out_dtype (33) | `invalid` `uint64` `int8` `uint8` `int16` `uint16` `bf16` `fp16` `int32` `uint32` `fp32` `fp32r` `int64` `fp8e3` `fp8e4` `fp8e5`, else `0xNN` | a name or any byte |
//! | `ch` | num_active_channels (34) | decimal | any byte |
//! | `scale` | pool_scale (40) | Rust's shortest round-trip `{}` (`1`, `0.25`, `-0`, `inf`); NaN as `bits:0xXXXXXXXX` | a decimal float, `inf`, or `bits:` and a u32 |
//! | `src`, `dst` | TENSOR4D (12, 44) | `<addr>{n0:s0 n1:s1 n2:s2 n3:s3}` | the same |
//!
//! These eight keys are required, in any order. The optional event and debug
//! keys below may follow (in any order too). A repeated or unknown key is an
//! error.
//!
//! A tensor lists `num:step` for dim0 (X, innermost) to dim3, num a u16 and
//! step a signed i16, separated by whitespace (one space when printed). Its
//! `<addr>` is `sbuf[P]+0xOFF` or `psum[P]+0xOFF` (P decimal partition,
//! OFF lower-case hex byte offset in the partition) when the ADDR4 has none
//! of bits 29..31 set and lies in SBUF or PSUM; any other ADDR4 is printed
//! raw as `@0xXXXXXXXX`. On input `sbuf[P]+OFF` needs `P < 128` and OFF
//! inside the partition stride (256 KiB for SBUF, 32 KiB for PSUM); `@` takes
//! any u32.
//!
//! Every number (bytes, nums, steps, partitions, offsets, `@` addresses,
//! `value`, `bits:`) may be written in decimal or as `0x` hex (digits in
//! either case); only a step may carry a sign (`-`). A number outside its
//! field's range is an error, never truncated. `scale` refuses `nan` (write
//! the exact bits) and a decimal that overflows f32 (write `inf`).
//!
//! ## 2. Kernel fields (every modelled kernel-table struct but S4D4_PL)
//!
//! Used when byte 1 is 16 and every reserved byte of the opcode's struct is
//! zero. The keys come from the struct's one layout table
//! ([`crate::isa::layout`]) and print in byte order; required keys are always
//! printed, optional keys (S4D4_TR's `neg`, `op`, `op_dim`, `mask`, …) only
//! when non-zero, and an absent optional key means zero. Each struct's rustdoc
//! lists its table (every field, its byte, its type, its key or that it is
//! reserved): follow the operand of each variant of [`Kernel`](crate::isa::Kernel).
//!
//! ```text
//! COPY src=sbuf[0]+0x0{8:1 1:1 1:1 1:1} in=fp32 out=fp32 ch=16 dst=sbuf[0]+0x100{8:1 1:1 1:1 1:1}
//! IOTA data=0{8:1 1:0 1:0 1:0} out=int32 ch=16 mult=8 dst=sbuf[0]+0x0{8:1 1:1 1:1 1:1}
//! TENSOR_TENSOR_ARITH in=int32:int32 out=int32 op=add_int ch=16 src0=sbuf[0]+0x0{8:1 1:1 1:1} src1=sbuf[0]+0x40{8:1 1:1 1:1} dst=sbuf[0]+0x80{8:1 1:1 1:1}
//! ```
//!
//! A value prints by its field's type:
//!
//! | type | printed as |
//! |---|---|
//! | `Tensor4d` | `<addr>{n0:s0 n1:s1 n2:s2 n3:s3}`, as in form 1 |
//! | `Tensor3d`, `Tensor2d` | `<addr>{n0:s0 n1:s1 n2:s2}`, `<addr>{n0:s0 n1:s1}` |
//! | `Data4d` | `<base>{n0:s0 n1:s1 n2:s2 n3:s3}`, base a signed i32 |
//! | `Dtype` | a dtype name as in form 1, else `0xNN` |
//! | `DtypePair` | `<src0>:<src1>`, each nibble a dtype name (EC-43) |
//! | `AluOp` | `bypass` `add` … `add_int` … (the header names in lower case), else `0xNN` |
//! | `PoolDim` (TENSOR_SUBDIM) | `unused` `x` `xy` `xyz` `xyzw`, else `0xNN` |
//! | `ReduceOp` | `add` `average` `max` `bitwise_or` `bitwise_and` `bitwise_xor`, else `0xNN` |
//! | `ReduceAxis` | `all` `partitions`, else `0xNN` |
//! | `ImmSrc` | `inline` `pointer` `register`, else `0xNN` |
//! | `F32Bits` | as POOL's `scale` |
//! | `u8`, `u32` | decimal |
//! | `i32`, `i64` | signed decimal |
//!
//! For EXTENDED_INST the `spec` key chooses the struct (EC-15), so the
//! assembler reads it first; a spec other than 0 and 2 has no field form
//! (such records print as `.raw`).
//!
//! Signed numbers (an `i32` field such as `mult`, `offset` or `pad`, the
//! DATA4D base) take an optional `-`; a nibble takes a dtype name or a
//! number 0..=15.
//!
//! ## 3. Events only (every other named opcode)
//!
//! Used for a record whose opcode has a name ([`Opcode::name`](crate::isa::Opcode::name)), whose byte
//! 1 is 16 and whose bytes 12..64 are all zero:
//!
//! ```text
//! DRAIN
//! EVENT_SEMAPHORE wait=sem_ge[3] update=sem_inc[4] value=5
//! ```
//!
//! ## Event and debug keys (forms 1, 2 and 3)
//!
//! | key | bytes | printed when |
//! |---|---|---|
//! | `wait=<mode>[<idx>]` | wait_mode (4), wait_idx (5) | either is non-zero |
//! | `update=<mode>[<idx>]` | update_mode (6), update_idx (7) | either is non-zero |
//! | `value=<u32>` | semaphore_value (8..12), decimal | non-zero |
//! | `debug=0xCC:0xHH` | debug_cmd (2), debug_hint (3) | either is non-zero |
//!
//! Modes print their name (`sem_ge`, `evt_set_then_clear`, `sem_inc_done`,
//! …, see [`WaitMode`](crate::isa::WaitMode) and [`UpdateMode`](crate::isa::UpdateMode)) or `0xNN` when the byte has none;
//! input takes a name or any byte. An absent key means zero.
//!
//! ## 4. Raw
//!
//! Everything else: `.raw` and exactly 128 hex digits (printed lower-case,
//! read in either case), followed by a comment naming the opcode
//! (`; TENSOR_REDUCE_BITVEC`, `; 0x13`).
//!
//! # Errors
//!
//! [`asm`] stops at the first line that is not a record and reports a
//! [`ParseError`]: the 1-based line, the 1-based column (in characters) of the
//! first character of the offending piece — the value for a bad value, the
//! `key=` token for an unknown or repeated key, the mnemonic for a missing
//! key — and a message naming what was expected. Within a line, the leftmost
//! problem is reported.
//!
//! # Examples
//!
//! ```
//! use tpb_emu::isa::text::{asm, asm_line, disasm_record};
//!
//! let src = "POOL func=avg dim=xy in=fp32 out=fp32 ch=16 scale=0.25 \
//!            src=sbuf[0]+0x0{2:1 2:4 2:2 2:8} dst=sbuf[0]+0x100{2:1 2:2 1:1 1:1}";
//! let r = asm_line(src).unwrap().unwrap();
//! assert_eq!(r.opcode().name(), Some("POOL"));
//! assert_eq!(disasm_record(&r), src); // printed exactly as written
//!
//! // Keys in any order, events and odd bytes included; the printed form is canonical.
//! let r = asm_line("MAX_POOL_SELECT dst=psum[2]+0x80{4:-1 1:1 1:1 1:1} value=7 \
//!                   src=@0x80000005{4:1 1:1 1:1 1:1} ch=0x10 out=uint8 in=0x1F \
//!                   func=none dim=x scale=bits:0x7FC00001 wait=sem_ge[3]").unwrap().unwrap();
//! assert_eq!(
//!     disasm_record(&r),
//!     "MAX_POOL_SELECT func=none dim=x in=0x1F out=uint8 ch=16 scale=bits:0x7FC00001 \
//!      src=@0x80000005{4:1 1:1 1:1 1:1} dst=psum[2]+0x80{4:-1 1:1 1:1 1:1} wait=sem_ge[3] value=7"
//! );
//!
//! // Events only, and raw.
//! let recs = asm("DRAIN update=evt_set[9] debug=0x01:0x2A  ; a comment\n\
//!                 \n\
//!                 ; a whole-line comment\n\
//!                 TENSOR_REDUCE_BITVEC\n").unwrap();
//! assert_eq!(disasm_record(&recs[0]), "DRAIN update=evt_set[9] debug=0x01:0x2A");
//! assert_eq!(disasm_record(&recs[1]), "TENSOR_REDUCE_BITVEC");
//! let mut odd = recs[1];
//! odd.0[63] = 0xAB; // 0x52's operands are not modelled (EC-58): printed raw
//! assert_eq!(disasm_record(&odd), format!(".raw 5210{}ab ; TENSOR_REDUCE_BITVEC", "0".repeat(122)));
//! assert_eq!(asm(&disasm_record(&odd)).unwrap(), [odd]);
//! ```
//!
//! Errors say where and what was expected:
//!
//! ```
//! use tpb_emu::isa::text::asm;
//!
//! let e = asm("DRAIN\nPOOL func=max dim=xy in=fp33").unwrap_err();
//! assert_eq!((e.line, e.column), (2, 25));
//! assert_eq!(e.to_string(), r#"line 2, column 25: expected a dtype name or byte, found "fp33""#);
//! assert_eq!(asm(".raw 00").unwrap_err().message, ".raw needs 128 hex digits, found 2");
//! ```
//!
//! Streams print one record per line, each with its byte offset:
//!
//! ```
//! use tpb_emu::isa::{stream, text::{asm, disasm_stream}};
//!
//! let recs = asm("DRAIN\nTENSOR_DEQUANTIZE wait=evt_set[1]").unwrap();
//! let text = disasm_stream(&stream::to_bytes(&recs)).unwrap();
//! assert_eq!(text, "DRAIN  ; @0\nTENSOR_DEQUANTIZE wait=evt_set[1]  ; @64\n");
//! assert_eq!(asm(&text).unwrap(), recs);
//! ```

mod asm;
mod disasm;

pub use asm::{ParseError, asm, asm_line};
pub use disasm::{disasm_record, disasm_stream};

use super::inst::Inst;
use super::kernels::s4d4_pl::S4d4Pl;
use super::layout::{FieldDef, Role};
use super::opcode::Opcode;
use super::opcode::OpcodeClass;
use super::record::Record;
use crate::limits::{INST_WORD_LEN, RECORD_BYTES};

/// Which of the four text forms a record takes (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// Form 1: POOL or MAX_POOL_SELECT, field by field.
    S4d4Pl,
    /// Form 2: a kernel struct of SPEC-KERNELS (COPY, CAST, IOTA, the
    /// tensor-tensor pair), field by field from its layout table.
    Fields,
    /// Form 3: a named opcode with nothing but its events and debug bytes.
    EventsOnly,
    /// Form 4: `.raw` hex.
    Raw,
}

/// The form the disassembler prints `r` in. Each form carries every byte of
/// the records it is chosen for, which is what makes the text form exact.
pub fn form(r: &Record) -> Form {
    let h = r.header();
    if h.inst_word_len != INST_WORD_LEN || h.opcode.name().is_none() {
        return Form::Raw;
    }
    if h.opcode.class() == OpcodeClass::S4d4Pl {
        let p = S4d4Pl::decode(r);
        if p.reserved0 == 0 && p.reserved1 == [0; 2] {
            Form::S4d4Pl
        } else {
            Form::Raw
        }
    } else if let Some(fields) = layout(h.opcode, r.0[EVENTS_END]) {
        if reserved_zero(r, fields) {
            Form::Fields
        } else {
            Form::Raw
        }
    } else if r.first_nonzero(EVENTS_END..RECORD_BYTES).is_none() {
        Form::EventsOnly
    } else {
        Form::Raw
    }
}

/// First byte after the header and events band (SPEC §1).
pub(crate) const EVENTS_END: usize = 12;

/// The layout table of the kernel structs printed field by field (form 2),
/// for `opcode` and, for 0xF0, its spec byte (EC-15).
pub(crate) fn layout(opcode: Opcode, spec: u8) -> Option<&'static [FieldDef]> {
    let mut r = Record::default();
    r.0[0] = opcode.0;
    r.0[EVENTS_END] = spec;
    Inst::decode(&r).kernel()?.fields()
}

/// True when every reserved field of `fields` is zero in `r`.
fn reserved_zero(r: &Record, fields: &[FieldDef]) -> bool {
    fields
        .iter()
        .filter(|f| f.role == Role::Reserved)
        .all(|f| r.0[f.offset..f.offset + f.width].iter().all(|&b| b == 0))
}

#[cfg(test)]
mod tests {
    use super::asm::{Tok, parse_addr, parse_scale};
    use super::disasm::{fmt_addr, fmt_scale};
    use super::*;
    use crate::isa::{Addr4, Dtype, Location, PoolDim, PoolFunc, Region, UpdateMode, WaitMode};

    fn one(line: &str) -> Record {
        asm_line(line).unwrap().unwrap()
    }

    fn perr(text: &str) -> (usize, usize, String) {
        let e = asm(text).unwrap_err();
        (e.line, e.column, e.message)
    }

    fn round_trip(r: &Record) {
        let t = disasm_record(r);
        assert_eq!(asm(&t).unwrap(), [*r], "{t}");
    }

    const EX: &str = "POOL func=max dim=xy in=fp32 out=fp32 ch=128 scale=0.25 \
                      src=sbuf[0]+0x0{2:1 2:4 2:2 2:8} dst=sbuf[0]+0x40{4:1 1:1 1:1 1:1}";

    #[test]
    fn s4d4_form_prints_and_reads_back() {
        let r = one(EX);
        assert_eq!(form(&r), Form::S4d4Pl);
        assert_eq!(disasm_record(&r), EX);
        let p = S4d4Pl::decode(&r);
        assert_eq!(p.pool_func, PoolFunc::MAX_POOL);
        assert_eq!(p.pool_dim, PoolDim::XY);
        assert_eq!((p.in_dtype, p.out_dtype), (Dtype::FP32, Dtype::FP32));
        assert_eq!(p.num_active_channels, 128);
        assert_eq!(p.pool_scale(), 0.25);
        assert_eq!(p.src.num, [2; 4]);
        assert_eq!(p.src.step, [1, 4, 2, 8]);
        assert_eq!(p.dst.addr, Addr4(0x40));
        assert_eq!(r.header().inst_word_len, 16);
        assert!(r.events().is_none());
    }

    #[test]
    fn keys_in_any_order_and_optional_tokens() {
        let r = one(
            "MAX_POOL_SELECT debug=0x3:255 value=0x10 update=sem_add_done[200] wait=0x81[0] \
             dst=psum[127]+0x7ffc{1:-32768 1:32767 1:0 1:-1} src=@0xE0000000{65535:0 1:0 1:0 1:0} \
             scale=-0 ch=0 out=0x10 in=uint64 dim=0x01 func=0xFF",
        );
        assert_eq!(
            disasm_record(&r),
            "MAX_POOL_SELECT func=0xFF dim=0x01 in=uint64 out=0x10 ch=0 scale=-0 \
             src=@0xE0000000{65535:0 1:0 1:0 1:0} dst=psum[127]+0x7ffc{1:-32768 1:32767 1:0 1:-1} \
             wait=reg_eq[0] update=sem_add_done[200] value=16 debug=0x03:0xFF"
        );
        let p = S4d4Pl::decode(&r);
        assert_eq!(p.pool_scale_bits, 0x8000_0000);
        assert_eq!(
            p.dst.addr.location(),
            Some(Location {
                region: Region::Psum,
                partition: 127,
                offset: 0x7ffc
            })
        );
        round_trip(&r);
    }

    #[test]
    fn scales_print_shortest_and_nan_as_bits() {
        for (bits, text) in [
            (1.0f32.to_bits(), "1"),
            (0.25f32.to_bits(), "0.25"),
            ((1.0f32 / 9.0).to_bits(), "0.11111111"),
            (0x8000_0000, "-0"),
            (f32::INFINITY.to_bits(), "inf"),
            (f32::NEG_INFINITY.to_bits(), "-inf"),
            (0x7FC0_0000, "bits:0x7FC00000"),
            (0xFFFF_FFFF, "bits:0xFFFFFFFF"),
            (0x7F80_0001, "bits:0x7F800001"),
        ] {
            assert_eq!(fmt_scale(bits), text);
            let tok = Tok { text, at: 0 };
            assert_eq!(parse_scale(tok).ok(), Some(bits), "{text}");
        }
        for bits in [
            1u32,
            0x0000_0FFF,
            0x007F_FFFF,
            0x0080_0000,
            0x7F7F_FFFF,
            0x3EAA_AAAB,
        ] {
            let text = fmt_scale(bits);
            assert_eq!(parse_scale(Tok { text: &text, at: 0 }).ok(), Some(bits));
        }
        // Other spellings are accepted on input.
        for (text, bits) in [
            ("bits:0x3f800000", 0x3F80_0000),
            ("1e0", 0x3F80_0000),
            ("+inf", 0x7F80_0000),
        ] {
            assert_eq!(parse_scale(Tok { text, at: 0 }).ok(), Some(bits), "{text}");
        }
    }

    #[test]
    fn addresses_print_by_region_or_raw() {
        for (a, text) in [
            (0x0000_0000, "sbuf[0]+0x0"),
            (0x01FF_FFFF, "sbuf[127]+0x3ffff"),
            (0x0200_0000, "psum[0]+0x0"),
            (0x023F_FFFF, "psum[127]+0x7fff"),
            (0x0240_0000, "@0x02400000"),
            (0x2000_0040, "@0x20000040"),
            (0x4000_0040, "@0x40000040"),
            (0x8000_0003, "@0x80000003"),
        ] {
            assert_eq!(fmt_addr(Addr4(a)), text);
            assert_eq!(
                parse_addr(Tok { text, at: 0 }).ok(),
                Some(Addr4(a)),
                "{text}"
            );
        }
        // Either case of hex and decimal are accepted on input.
        assert_eq!(
            parse_addr(Tok {
                text: "sbuf[1]+16",
                at: 0
            })
            .ok(),
            Some(Addr4(0x40010))
        );
        assert_eq!(
            parse_addr(Tok {
                text: "@0XaBc",
                at: 0
            })
            .ok(),
            Some(Addr4(0xABC))
        );
    }

    #[test]
    fn kernel_fields_print_in_byte_order_and_read_back() {
        use crate::isa::{AluOp, D4Iota, S3s3d3Tt, S4d4Tr};
        let copy = "COPY src=sbuf[0]+0x0{8:1 1:1 1:1 1:1} in=fp32 out=fp32 ch=16 \
                    dst=sbuf[0]+0x100{8:1 1:1 1:1 1:1}";
        let r = one(copy);
        assert_eq!(form(&r), Form::Fields);
        assert_eq!(disasm_record(&r), copy);
        let p = S4d4Tr::decode(&r);
        assert_eq!(
            (p.in_dtype, p.out_dtype, p.num_active_channels),
            (Dtype::FP32, Dtype::FP32, 16)
        );
        assert_eq!(
            (p.op, p.op_dim, p.negated, p.mask_enable),
            (AluOp::BYPASS, PoolDim::UNUSED, 0, 0)
        );
        assert_eq!(p.dst.addr, Addr4(0x100));
        // Optional keys print when non-zero, in byte order, any order on input.
        let r = one(
            &format!("{copy} mask=1 op_dim=x op=0xFE neg=2 wait=sem_eq[1]").replace("COPY", "CAST"),
        );
        assert_eq!(
            disasm_record(&r),
            "CAST src=sbuf[0]+0x0{8:1 1:1 1:1 1:1} in=fp32 out=fp32 ch=16 neg=2 op=0xFE op_dim=x mask=1 \
             dst=sbuf[0]+0x100{8:1 1:1 1:1 1:1} wait=sem_eq[1]"
        );
        assert_eq!(&r.0[35..39], &[2, 0xFE, 2, 1]);
        let iota = "IOTA data=-7{8:1 2:-3 1:0 1:0} out=int32 ch=16 mult=-2147483648 \
                    dst=psum[3]+0x40{8:1 2:8 1:1 1:1}";
        let r = one(iota);
        assert_eq!(disasm_record(&r), iota);
        let p = D4Iota::decode(&r);
        assert_eq!((p.data.base, p.data.step[1], p.data.num[1]), (-7, -3, 2));
        assert_eq!(p.channel_multiplier, i32::MIN);
        assert_eq!(r.0[12..16], (-7i32).to_le_bytes());
        let tt = "TENSOR_TENSOR_ARITH in=int32:uint32 out=int32 op=add_int ch=16 \
                  src0=sbuf[0]+0x0{8:1 1:1 1:1} src1=sbuf[0]+0x40{8:1 1:1 1:1} \
                  dst=@0x80000001{8:1 1:1 1:1}";
        let r = one(tt);
        assert_eq!(disasm_record(&r), tt);
        assert_eq!(
            r.0[12], 0x98,
            "src0 int32 in the low nibble, src1 uint32 in the high (EC-43)"
        );
        assert_eq!((r.0[13], r.0[14], r.0[15]), (8, 0xC4, 16));
        let p = S3s3d3Tt::decode(&r);
        assert_eq!(p.src1.addr, Addr4(0x40));
        assert_eq!(p.dst.addr, Addr4(0x8000_0001));
        // All-zero operands still take the field form; a reserved byte makes it raw.
        let mut z = Record::default();
        z.0[0] = 0x7E;
        z.0[1] = 16;
        assert_eq!(
            disasm_record(&z),
            "IOTA data=0{0:0 0:0 0:0 0:0} out=invalid ch=0 mult=0 dst=sbuf[0]+0x0{0:0 0:0 0:0 0:0}"
        );
        for b in [32, 35, 40, 43] {
            let mut raw = z;
            raw.0[b] = 1;
            assert_eq!(form(&raw), Form::Raw, "byte {b}");
            round_trip(&raw);
        }
        let mut tr = one(copy);
        tr.0[41] = 9;
        assert_eq!(form(&tr), Form::Raw);
        round_trip(&tr);
    }

    #[test]
    fn issue2_fields_read_back_and_the_spec_byte_picks_the_0xf0_struct() {
        for line in [
            "CROSS_LANE_REDUCE_ARITH src=sbuf[0]+0x0{8:1 1:1 1:1 1:1} in=bf16 out=fp32 ch=16 \
             op=average axis=partitions scale=0.0625 dst=sbuf[3]+0x100{8:1 1:1 1:1 1:1}",
            "CROSS_LANE_REDUCE_BITVEC src=sbuf[0]+0x0{8:1 1:1 1:1 1:1} in=uint8 out=uint8 ch=2 \
             op=bitwise_xor axis=all scale=bits:0x7FC00001 dst=sbuf[0]+0x100{1:1 1:1 1:1 1:1}",
            "GET_SEQUENCE_BOUNDS ch=1 in=fp32 out=int32 src=sbuf[0]+0x0{8:1 1:1 1:1} \
             dst=sbuf[0]+0x40{8:1 1:1 2:8}",
            "NONZERO_WITH_COUNT ch=16 in=int32 out=int32 offset_src=pointer src=sbuf[0]+0x0{8:1 1:1 1:1} \
             offset=16 pad=-1 dst=sbuf[0]+0x40{9:1 1:1 1:1}",
            "EXTENDED_INST spec=0 info=16",
            "EXTENDED_INST spec=2 info=8 in=fp32:bf16 out=fp32 op=mult \
             src0=sbuf[0]+0x0{4:1 2:4} src1=sbuf[0]+0x40{4:1 2:4} dst=sbuf[0]+0x80{4:1 2:4}",
        ] {
            let r = one(line);
            assert_eq!(form(&r), Form::Fields, "{line}");
            assert_eq!(disasm_record(&r), line);
        }
        let r = one("EXTENDED_INST info=8 in=fp32:bf16 out=fp32 op=mult spec=2 \
                     src0=sbuf[0]+0x0{4:1 2:4} src1=sbuf[0]+0x40{4:1 2:4} dst=sbuf[0]+0x80{4:1 2:4}");
        assert_eq!((r.0[12], r.0[13], r.0[14], r.0[16]), (2, 8, 0x6A, 6));
        assert_eq!(r.0[20..24], [0, 0, 0, 0]);
        assert_eq!(
            r.0[42..44],
            2u16.to_le_bytes(),
            "src1 num[1] at byte 32 + 10"
        );
        let r = one(
            "CROSS_LANE_REDUCE_ARITH src=sbuf[0]+0x0{8:1 1:1 1:1 1:1} in=bf16 out=fp32 \
                     ch=16 op=average axis=partitions scale=0.0625 dst=sbuf[3]+0x100{8:1 1:1 1:1 1:1}",
        );
        assert_eq!((r.0[35], r.0[36]), (1, 1));
        assert_eq!(r.0[40..44], 0.0625f32.to_le_bytes());
        // Specs without a struct print raw; an all-zero 0xF0 is ENGINE_NOP.
        let mut z = Record::default();
        z.0[0] = 0xF0;
        z.0[1] = 16;
        assert_eq!(disasm_record(&z), "EXTENDED_INST spec=0 info=0");
        z.0[12] = 1;
        assert_eq!(form(&z), Form::Raw);
        round_trip(&z);
        assert_eq!(
            perr("EXTENDED_INST spec=3"),
            (
                1,
                20,
                "EXTENDED_INST spec 3 has no field form (write the record as .raw)".into()
            )
        );
        assert_eq!(
            perr("EXTENDED_INST info=1"),
            (1, 1, "missing key spec".into())
        );
    }

    #[test]
    fn kernel_field_errors() {
        let cases: &[(&str, usize, &str)] = &[
            (
                "IOTA out=int32 ch=1 mult=0 dst=sbuf[0]+0x0{1:1 1:1 1:1 1:1}",
                1,
                "missing key data",
            ),
            (
                "IOTA data=1{1:1 1:1 1:1} out=int32",
                12,
                "a pattern needs 4 dims num:step separated by spaces, found 3",
            ),
            (
                "IOTA data=2147483648{1:1 1:1 1:1 1:1}",
                11,
                r#"expected an i32 base, found "2147483648" (out of range)"#,
            ),
            (
                "IOTA mult=-2147483649",
                11,
                r#"expected an i32, found "-2147483649" (out of range)"#,
            ),
            (
                "IOTA scale=1",
                6,
                r#"unknown key "scale" for IOTA (expected data, out, ch, mult, dst, wait, update, value, debug)"#,
            ),
            (
                "TENSOR_TENSOR_BITVEC in=int32",
                25,
                r#"expected <src0 dtype>:<src1 dtype>, found "int32""#,
            ),
            (
                "TENSOR_TENSOR_BITVEC in=int32:16",
                31,
                r#"expected a dtype name or nibble 0..=15, found "16""#,
            ),
            (
                "TENSOR_TENSOR_BITVEC op=addd",
                25,
                r#"expected an ALU op name or byte, found "addd""#,
            ),
            (
                "TENSOR_TENSOR_BITVEC src0=sbuf[0]+0x0{1:1 1:1 1:1 1:1}",
                51,
                r#"a tensor has 3 dims, found extra "1:1""#,
            ),
            ("COPY neg=1 neg=1", 12, "duplicate key neg"),
        ];
        for (text, col, msg) in cases {
            assert_eq!(perr(text), (1, *col, msg.to_string()), "{text}");
        }
    }

    #[test]
    fn events_only_form() {
        let r = one("EVENT_SEMAPHORE wait=sem_ge[3] value=5 update=sem_inc[4]");
        assert_eq!(form(&r), Form::EventsOnly);
        assert_eq!(
            disasm_record(&r),
            "EVENT_SEMAPHORE wait=sem_ge[3] update=sem_inc[4] value=5"
        );
        let e = r.events();
        assert_eq!((e.wait_mode, e.wait_idx), (WaitMode::SEM_GE, 3));
        assert_eq!((e.update_mode, e.update_idx), (UpdateMode::SEM_INC, 4));
        assert_eq!(e.semaphore_value, 5);
        assert_eq!(&r.0[..4], &[0xA0, 16, 0, 0]);
        assert!(r.0[12..].iter().all(|&b| b == 0));
        assert_eq!(disasm_record(&one("DRAIN")), "DRAIN");
        assert_eq!(
            disasm_record(&one("  TENSOR_REDUCE_BITVEC   ")),
            "TENSOR_REDUCE_BITVEC"
        );
        // Bytes without names print as 0xNN, and a zero mode with an index still prints.
        let r = one("INVALID wait=0x08[0] update=none[7] debug=0:1");
        assert_eq!(
            disasm_record(&r),
            "INVALID wait=0x08[0] update=none[7] debug=0x00:0x01"
        );
        round_trip(&r);
    }

    #[test]
    fn raw_form_for_everything_else() {
        let mut r = Record::default();
        r.0[0] = 0x13;
        r.0[1] = 16;
        assert_eq!(form(&r), Form::Raw);
        assert_eq!(
            disasm_record(&r),
            format!(".raw 1310{} ; 0x13", "0".repeat(124))
        );
        round_trip(&r);
        // A named opcode with an operand byte, a bad inst_word_len, a reserved byte.
        let mut trb = one("TENSOR_REDUCE_BITVEC");
        trb.0[12] = 1;
        assert_eq!(form(&trb), Form::Raw);
        assert!(disasm_record(&trb).ends_with(" ; TENSOR_REDUCE_BITVEC"));
        let mut pool = one(EX);
        pool.0[1] = 8;
        assert_eq!(form(&pool), Form::Raw);
        for b in [35, 38, 39] {
            let mut pool = one(EX);
            pool.0[b] = 1;
            assert_eq!(form(&pool), Form::Raw);
            round_trip(&pool);
        }
        // An all-zero POOL still uses the field form.
        let mut z = Record::default();
        z.0[0] = 0x45;
        z.0[1] = 16;
        assert_eq!(
            disasm_record(&z),
            "POOL func=none dim=unused in=invalid out=invalid ch=0 scale=0 \
             src=sbuf[0]+0x0{0:0 0:0 0:0 0:0} dst=sbuf[0]+0x0{0:0 0:0 0:0 0:0}"
        );
        // Upper-case hex reads back.
        let up = format!(".RAW {}", "AB".repeat(64));
        assert!(asm_line(&up).is_err());
        let r = one(&format!(".raw {}", "AB".repeat(64)));
        assert_eq!(r.0, [0xAB; 64]);
    }

    #[test]
    fn stream_lines_carry_offsets() {
        let mut raw = Record::default();
        raw.0[0] = 0x7E;
        raw.0[40] = 1;
        let recs = [one("DRAIN"), one(EX), raw];
        let text = disasm_stream(&crate::isa::stream::to_bytes(&recs)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "DRAIN  ; @0");
        assert_eq!(lines[1], format!("{EX}  ; @64"));
        assert!(lines[2].starts_with(".raw 7e00"));
        assert!(lines[2].ends_with(" ; IOTA @128"));
        assert!(text.ends_with('\n'));
        assert_eq!(asm(&text).unwrap(), recs);
        assert_eq!(disasm_stream(&[]).unwrap(), "");
        assert!(disasm_stream(&[0; 65]).is_err());
    }

    #[test]
    fn blank_and_comment_lines() {
        assert_eq!(asm_line("").unwrap(), None);
        assert_eq!(asm_line("   \t ").unwrap(), None);
        assert_eq!(asm_line("; DRAIN").unwrap(), None);
        assert_eq!(asm_line("  # DRAIN").unwrap(), None);
        assert_eq!(asm("\n\r\n; x\nDRAIN # y\n\nDRAIN;z").unwrap().len(), 2);
    }

    #[test]
    fn error_positions_and_messages() {
        let cases: &[(&str, (usize, usize, &str))] = &[
            (
                "FOO",
                (
                    1,
                    1,
                    r#"expected an opcode name (POOL, DRAIN, …) or .raw, found "FOO""#,
                ),
            ),
            (
                "DRAIN\n\n  POOL func=max dim=xy in=fp33",
                (3, 27, r#"expected a dtype name or byte, found "fp33""#),
            ),
            (
                &EX.replace(" dst=sbuf[0]+0x40{4:1 1:1 1:1 1:1}", ""),
                (1, 1, "missing key dst"),
            ),
            (
                &format!("{EX} scale=1"),
                (1, EX.len() + 2, "duplicate key scale"),
            ),
            (
                &format!(".raw {}", "0".repeat(126)),
                (1, 6, ".raw needs 128 hex digits, found 126"),
            ),
            (".raw", (1, 1, ".raw needs 128 hex digits, found 0")),
            (
                &format!(".raw {}g{}", "0".repeat(10), "0".repeat(117)),
                (
                    1,
                    16,
                    r#".raw needs 128 hex digits, found non-hex character 'g'"#,
                ),
            ),
            (
                &format!(".raw {} 00", "0".repeat(128)),
                (
                    1,
                    135,
                    r#"unexpected "00" after the .raw hex (comments start with ; or #)"#,
                ),
            ),
            (
                "DRAIN func=max",
                (
                    1,
                    7,
                    r#"unknown key "func" for DRAIN (expected wait, update, value, debug)"#,
                ),
            ),
            ("DRAIN wait", (1, 7, r#"expected key=value, found "wait""#)),
            (
                "DRAIN wait=sem_ge",
                (1, 12, r#"expected <mode>[<index>], found "sem_ge""#),
            ),
            (
                "DRAIN wait=sem_gt[256]",
                (
                    1,
                    19,
                    r#"expected an index byte, found "256" (out of range 0..=255)"#,
                ),
            ),
            (
                "DRAIN update=sem_foo[1]",
                (
                    1,
                    14,
                    r#"expected an update mode name or byte, found "sem_foo""#,
                ),
            ),
            (
                "DRAIN value=4294967296",
                (
                    1,
                    13,
                    r#"expected a u32 value, found "4294967296" (out of range 0..=4294967295)"#,
                ),
            ),
            (
                "DRAIN value=-1",
                (1, 13, r#"expected a u32 value, found "-1""#),
            ),
            (
                "DRAIN debug=1",
                (1, 13, r#"expected debug=<cmd byte>:<hint byte>, found "1""#),
            ),
            (
                "DRAIN debug=1:0x100",
                (
                    1,
                    15,
                    r#"expected a debug_hint byte, found "0x100" (out of range 0..=255)"#,
                ),
            ),
        ];
        for (text, (l, c, m)) in cases {
            assert_eq!(perr(text), (*l, *c, m.to_string()), "{text}");
        }
    }

    /// EX with the value of `key` replaced by `val`, and the value's column.
    fn ex_with(key: &str, val: &str) -> (String, usize) {
        const FIELDS: [(&str, &str); 8] = [
            ("func", "max"),
            ("dim", "xy"),
            ("in", "fp32"),
            ("out", "fp32"),
            ("ch", "128"),
            ("scale", "0.25"),
            ("src", "sbuf[0]+0x0{2:1 2:4 2:2 2:8}"),
            ("dst", "sbuf[0]+0x40{4:1 1:1 1:1 1:1}"),
        ];
        let mut s = String::from("POOL");
        let mut col = 0;
        for (k, v) in FIELDS {
            s.push_str(&format!(" {k}="));
            if k == key {
                col = s.len() + 1;
                s.push_str(val);
            } else {
                s.push_str(v);
            }
        }
        (s, col)
    }

    #[test]
    fn field_errors_point_at_the_value() {
        assert_eq!(ex_with("", "").0, EX);
        let cases = [
            ("func", "maxx", r#"expected a pool func name or byte, found "maxx""#.to_string(), 0),
            ("dim", "300", r#"expected a pool dim name or byte, found "300" (not a byte)"#.into(), 0),
            ("ch", "129x", r#"expected a channel count byte, found "129x""#.into(), 0),
            ("scale", "nan", "a NaN scale must be written as bits:0xXXXXXXXX (its exact bits)".into(), 0),
            ("scale", "1e39", r#"scale "1e39" overflows f32"#.into(), 0),
            ("scale", "bits:0x1FFFFFFFF", r#"expected f32 bits (a u32), found "0x1FFFFFFFF" (out of range 0..=4294967295)"#.into(), 5),
            ("scale", "one", r#"expected a scale (decimal float, inf, or bits:0xXXXXXXXX), found "one""#.into(), 0),
            ("src", "sbuf[128]+0x0{1:1 1:1 1:1 1:1}", "partition 128 out of range 0..128".into(), 5),
            ("src", "sbuf[0]+0x40000{1:1 1:1 1:1 1:1}", "offset 0x40000 is beyond the sbuf partition stride 0x40000".into(), 8),
            ("src", "psum[0]+0x8000{1:1 1:1 1:1 1:1}", "offset 0x8000 is beyond the psum partition stride 0x8000".into(), 8),
            ("src", "sram[0]+0x0{1:1 1:1 1:1 1:1}", r#"expected an address sbuf[P]+0xOFF, psum[P]+0xOFF or @0xXXXXXXXX, found "sram[0]+0x0""#.into(), 0),
            ("src", "sbuf[0]{1:1 1:1 1:1 1:1}", r#"expected sbuf[P]+OFF, found "sbuf[0]""#.into(), 0),
            ("src", "@0x100000000{1:1 1:1 1:1 1:1}", r#"expected a u32 address, found "0x100000000" (out of range 0..=4294967295)"#.into(), 1),
            ("src", "sbuf[0]+0x0", r#"expected a tensor <addr>{n:s n:s n:s n:s}, found "sbuf[0]+0x0""#.into(), 0),
            ("src", "sbuf[0]+0x0{1:1 1:1 1:1}", "a tensor needs 4 dims num:step separated by spaces, found 3".into(), 11),
            ("src", "sbuf[0]+0x0{1:1 1:1 1:1 1:1 1:1}", r#"a tensor has 4 dims, found extra "1:1""#.into(), 28),
            ("src", "sbuf[0]+0x0{1:1 1:1 1:1 1:32768}", r#"expected a step (i16), found "32768" (out of range)"#.into(), 26),
            ("src", "sbuf[0]+0x0{1:1 1:1 1:-32769 1:1}", r#"expected a step (i16), found "-32769" (out of range)"#.into(), 22),
            ("src", "sbuf[0]+0x0{1:1 65536:1 1:1 1:1}", r#"expected a num (u16), found "65536" (out of range 0..=65535)"#.into(), 16),
            ("src", "sbuf[0]+0x0{1:1 1 1:1 1:1}", r#"expected a dim num:step, found "1""#.into(), 16),
            ("src", "sbuf[0]+0x0{1:1 1:1 1:1 1:1}x", r#"unexpected "x" after the tensor"#.into(), 28),
            ("dst", "sbuf[0]+0x0{1:1 1:1 1:1 1:1", "unclosed { in tensor".into(), 11),
        ];
        for (key, val, msg, off) in cases {
            let (text, col) = ex_with(key, val);
            let e = asm(&text).unwrap_err();
            assert_eq!(e.message, msg, "{text}");
            assert_eq!(e.column, col + off, "{text}: {msg}");
        }
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let e = asm("DRAIN value=\u{e9}\u{e9}").unwrap_err();
        assert_eq!(e.column, 13);
        // U+3000 is whitespace of 3 bytes: columns count it once.
        let e = asm("DRAIN\u{3000}value=x").unwrap_err();
        assert_eq!(e.column, 13);
        let e = asm("DRAIN wait=evt_set[1] value=\u{4e2d}").unwrap_err();
        assert_eq!(e.column, 29);
        let e = asm("\u{4e2d}\u{6587} DRAIN").unwrap_err();
        assert_eq!((e.line, e.column), (1, 1));
        let e = asm(&format!("DRAIN\n\u{e9}\u{e9} {EX}")).unwrap_err();
        assert_eq!((e.line, e.column), (2, 1));
        let e = asm("POOL \u{e9}=1").unwrap_err();
        assert_eq!(e.column, 6);
    }

    #[test]
    fn hostile_input_does_not_panic() {
        for s in [
            "POOL src={{{{}}}}",
            "POOL src=}{",
            "POOL src=@",
            "POOL src=sbuf[",
            "POOL src=sbuf[]+",
            "POOL src=sbuf[99999999999999999999999999]+0{",
            "POOL scale=bits:",
            "POOL scale=bits:0x",
            "POOL scale=\u{1F600}",
            "DRAIN wait=[]",
            "DRAIN wait=\u{e9}[\u{e9}]",
            "DRAIN wait=]",
            "DRAIN debug=:",
            "DRAIN =",
            "DRAIN ==",
            ".raw \u{e9}",
            "\u{0}",
        ] {
            let _ = asm(s);
        }
    }
}
