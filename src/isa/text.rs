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
//! A record takes one of three forms ([`Form`]); the disassembler picks the
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
//! ## 2. Events only (every other named opcode)
//!
//! Used for a record whose opcode has a name ([`Opcode::name`]), whose byte
//! 1 is 16 and whose bytes 12..64 are all zero:
//!
//! ```text
//! DRAIN
//! EVENT_SEMAPHORE wait=sem_ge[3] update=sem_inc[4] value=5
//! ```
//!
//! ## Event and debug keys (forms 1 and 2)
//!
//! | key | bytes | printed when |
//! |---|---|---|
//! | `wait=<mode>[<idx>]` | wait_mode (4), wait_idx (5) | either is non-zero |
//! | `update=<mode>[<idx>]` | update_mode (6), update_idx (7) | either is non-zero |
//! | `value=<u32>` | semaphore_value (8..12), decimal | non-zero |
//! | `debug=0xCC:0xHH` | debug_cmd (2), debug_hint (3) | either is non-zero |
//!
//! Modes print their name (`sem_ge`, `evt_set_then_clear`, `sem_inc_done`,
//! …, see [`WaitMode`] and [`UpdateMode`]) or `0xNN` when the byte has none;
//! input takes a name or any byte. An absent key means zero.
//!
//! ## 3. Raw
//!
//! Everything else: `.raw` and exactly 128 hex digits (printed lower-case,
//! read in either case), followed by a comment naming the opcode
//! (`; IOTA`, `; 0x13`).
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
//!                 IOTA\n").unwrap();
//! assert_eq!(disasm_record(&recs[0]), "DRAIN update=evt_set[9] debug=0x01:0x2A");
//! assert_eq!(disasm_record(&recs[1]), "IOTA");
//! let mut odd = recs[1];
//! odd.0[63] = 0xAB; // IOTA's operands are not modelled: printed raw
//! assert_eq!(disasm_record(&odd), format!(".raw 7e10{}ab ; IOTA", "0".repeat(122)));
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
//! let recs = asm("DRAIN\nIOTA wait=evt_set[1]").unwrap();
//! let text = disasm_stream(&stream::to_bytes(&recs)).unwrap();
//! assert_eq!(text, "DRAIN  ; @0\nIOTA wait=evt_set[1]  ; @64\n");
//! assert_eq!(asm(&text).unwrap(), recs);
//! ```

use super::enums::{Dtype, PoolDim, PoolFunc, UpdateMode, WaitMode};
use super::opcode::{Opcode, OpcodeClass};
use super::record::{Events, Header, Record, hex};
use super::s4d4_pl::S4d4Pl;
use super::stream::{StreamError, records};
use super::tensor::{Addr4, Region, Tensor4d};
use crate::limits::{INST_WORD_LEN, PARTITIONS, RECORD_BYTES};
use std::fmt::Write;

/// Which of the three text forms a record takes (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// Form 1: POOL or MAX_POOL_SELECT, field by field.
    S4d4Pl,
    /// Form 2: a named opcode with nothing but its events and debug bytes.
    EventsOnly,
    /// Form 3: `.raw` hex.
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
    } else if r.first_nonzero(EVENTS_END..RECORD_BYTES).is_none() {
        Form::EventsOnly
    } else {
        Form::Raw
    }
}

/// First byte after the header and events band (SPEC §1).
const EVENTS_END: usize = 12;

// ---------------------------------------------------------------------------
// Disassembler
// ---------------------------------------------------------------------------

/// Prints one record as one line of text (no trailing newline). Never fails:
/// any 64 bytes print, and [`asm`] reads them back exactly.
pub fn disasm_record(r: &Record) -> String {
    let mut s = String::new();
    match form(r) {
        Form::S4d4Pl => {
            let p = S4d4Pl::decode(r);
            let _ = write!(
                s,
                "{} func={} dim={} in={} out={} ch={} scale={} src={} dst={}",
                p.opcode(),
                p.pool_func,
                p.pool_dim,
                p.in_dtype,
                p.out_dtype,
                p.num_active_channels,
                fmt_scale(p.pool_scale_bits),
                fmt_tensor(&p.src),
                fmt_tensor(&p.dst),
            );
            push_events(&mut s, &p.header, &p.events);
        }
        Form::EventsOnly => {
            let _ = write!(s, "{}", r.opcode());
            push_events(&mut s, &r.header(), &r.events());
        }
        Form::Raw => {
            let _ = write!(s, ".raw {} ; {}", hex(r.bytes()), r.opcode());
        }
    }
    s
}

/// Prints a record stream: one line per record, each ending in its decimal
/// byte offset (`DRAIN  ; @64`; a `.raw` line extends its comment:
/// `.raw … ; IOTA @128`). Every line ends with a newline; an empty stream
/// prints as the empty string. Fails only when the length is not a multiple
/// of 64.
pub fn disasm_stream(bytes: &[u8]) -> Result<String, StreamError> {
    let mut out = String::new();
    for (offset, r) in records(bytes)? {
        let line = disasm_record(&r);
        let sep = if form(&r) == Form::Raw { " " } else { "  ; " };
        let _ = writeln!(out, "{line}{sep}@{offset}");
    }
    Ok(out)
}

/// The optional `wait=`, `update=`, `value=` and `debug=` tokens, each only when non-zero.
fn push_events(s: &mut String, h: &Header, e: &Events) {
    if e.wait_mode.0 != 0 || e.wait_idx != 0 {
        let _ = write!(s, " wait={}[{}]", e.wait_mode, e.wait_idx);
    }
    if e.update_mode.0 != 0 || e.update_idx != 0 {
        let _ = write!(s, " update={}[{}]", e.update_mode, e.update_idx);
    }
    if e.semaphore_value != 0 {
        let _ = write!(s, " value={}", e.semaphore_value);
    }
    if h.debug_cmd != 0 || h.debug_hint != 0 {
        let _ = write!(s, " debug=0x{:02X}:0x{:02X}", h.debug_cmd, h.debug_hint);
    }
}

/// Shortest round-trip decimal, or the exact bits of a NaN.
fn fmt_scale(bits: u32) -> String {
    let v = f32::from_bits(bits);
    if v.is_nan() {
        format!("bits:0x{bits:08X}")
    } else {
        format!("{v}")
    }
}

fn fmt_addr(a: Addr4) -> String {
    match a.location() {
        Some(l) if !a.has_mode_bits() => {
            format!("{}[{}]+0x{:x}", l.region.name(), l.partition, l.offset)
        }
        _ => format!("@0x{:08X}", a.0),
    }
}

fn fmt_tensor(t: &Tensor4d) -> String {
    let mut s = fmt_addr(t.addr);
    for d in 0..4 {
        let sep = if d == 0 { '{' } else { ' ' };
        let _ = write!(s, "{sep}{}:{}", t.num[d], t.step[d]);
    }
    s.push('}');
    s
}

// ---------------------------------------------------------------------------
// Assembler
// ---------------------------------------------------------------------------

/// A line of text that is not a record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParseError {
    /// 1-based line number ([`asm_line`] reports line 1).
    pub line: usize,
    /// 1-based column, in characters, of the first character of the offending
    /// token (for a missing key: the mnemonic).
    pub column: usize,
    /// What was expected and what was found.
    pub message: String,
}

/// Assembles text: one record per non-blank, non-comment line, in order.
/// Stops at the first line that does not parse.
pub fn asm(text: &str) -> Result<Vec<Record>, ParseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        match asm_line(line) {
            Ok(Some(r)) => out.push(r),
            Ok(None) => {}
            Err(e) => return Err(ParseError { line: i + 1, ..e }),
        }
    }
    Ok(out)
}

/// Assembles one line: `Ok(None)` for a blank or comment-only line. Errors
/// report line 1.
pub fn asm_line(line: &str) -> Result<Option<Record>, ParseError> {
    let code = match line.find([';', '#']) {
        Some(i) => &line[..i],
        None => line,
    };
    let toks = tokenize(code, 0);
    if toks.is_empty() {
        return Ok(None);
    }
    parse_record(&toks).map(Some).map_err(|e| ParseError {
        line: 1,
        column: line.char_indices().take_while(|&(i, _)| i < e.at).count() + 1,
        message: e.msg,
    })
}

/// An error at a byte offset of the line.
struct Err0 {
    at: usize,
    msg: String,
}

type PResult<T> = Result<T, Err0>;

fn err<T>(at: usize, msg: impl Into<String>) -> PResult<T> {
    Err(Err0 {
        at,
        msg: msg.into(),
    })
}

/// A piece of the line and the byte offset where it starts.
#[derive(Clone, Copy)]
struct Tok<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Tok<'a> {
    /// The piece from byte `i` on (i on a char boundary).
    fn from(self, i: usize) -> Tok<'a> {
        Tok {
            text: &self.text[i..],
            at: self.at + i,
        }
    }
    /// The bytes `a..b` (on char boundaries).
    fn sub(self, a: usize, b: usize) -> Tok<'a> {
        Tok {
            text: &self.text[a..b],
            at: self.at + a,
        }
    }
}

/// `s` quoted for a message, cut short when long.
fn shown(s: &str) -> String {
    const MAX: usize = 40;
    if s.chars().count() > MAX {
        let cut: String = s.chars().take(MAX).collect();
        format!("{:?}…", cut)
    } else {
        format!("{s:?}")
    }
}

/// Splits on whitespace, keeping whitespace inside `{…}` in the token.
fn tokenize(s: &str, base: usize) -> Vec<Tok<'_>> {
    let mut toks = Vec::new();
    let mut start: Option<usize> = None;
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match start {
            None if c.is_whitespace() => continue,
            None => {
                start = Some(i);
                depth = 0;
            }
            Some(st) if c.is_whitespace() && depth == 0 => {
                toks.push(Tok {
                    text: &s[st..i],
                    at: base + st,
                });
                start = None;
                continue;
            }
            Some(_) => {}
        }
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if let Some(st) = start {
        toks.push(Tok {
            text: &s[st..],
            at: base + st,
        });
    }
    toks
}

fn parse_record(toks: &[Tok]) -> PResult<Record> {
    let head = toks[0];
    if head.text == ".raw" {
        return parse_raw(toks);
    }
    let Some(op) = Opcode::from_name(head.text) else {
        return err(
            head.at,
            format!(
                "expected an opcode name (POOL, DRAIN, …) or .raw, found {}",
                shown(head.text)
            ),
        );
    };
    let s4d4 = op.class() == OpcodeClass::S4d4Pl;
    let f = parse_fields(op, &toks[1..], if s4d4 { S4D4_KEYS } else { EVENT_KEYS })?;
    if s4d4 {
        build_s4d4(op, head, &f)
    } else {
        let mut r = Record::default();
        r.0[..4].copy_from_slice(&header_bytes(op, f.debug));
        r.set_events(f.events);
        Ok(r)
    }
}

/// Header word bytes 0..4 (SPEC §1) with `inst_word_len` 16.
fn header_bytes(op: Opcode, (cmd, hint): (u8, u8)) -> [u8; 4] {
    [op.0, INST_WORD_LEN, cmd, hint]
}

fn parse_raw(toks: &[Tok]) -> PResult<Record> {
    let Some(&digits) = toks.get(1) else {
        return err(toks[0].at, ".raw needs 128 hex digits, found 0");
    };
    if let Some((i, c)) = digits
        .text
        .char_indices()
        .find(|c| !c.1.is_ascii_hexdigit())
    {
        return err(
            digits.at + i,
            format!(".raw needs 128 hex digits, found non-hex character {c:?}"),
        );
    }
    let n = digits.text.len();
    if n != 2 * RECORD_BYTES {
        return err(
            digits.at,
            format!(".raw needs {} hex digits, found {n}", 2 * RECORD_BYTES),
        );
    }
    if let Some(extra) = toks.get(2) {
        return err(
            extra.at,
            format!(
                "unexpected {} after the .raw hex (comments start with ; or #)",
                shown(extra.text)
            ),
        );
    }
    let mut r = Record::default();
    for (i, b) in r.0.iter_mut().enumerate() {
        *b = u8::from_str_radix(&digits.text[2 * i..2 * i + 2], 16).expect("checked hex digits");
    }
    Ok(r)
}

/// Keys of form 2 (and the optional keys of form 1).
const EVENT_KEYS: &[&str] = &["wait", "update", "value", "debug"];
/// Keys of form 1; the first [`S4D4_REQUIRED`] are required.
const S4D4_KEYS: &[&str] = &[
    "func", "dim", "in", "out", "ch", "scale", "src", "dst", "wait", "update", "value", "debug",
];
const S4D4_REQUIRED: usize = 8;

/// The values of a record's `key=value` tokens (absent keys: `None`, or zero for events).
#[derive(Default)]
struct Fields {
    func: Option<PoolFunc>,
    dim: Option<PoolDim>,
    in_dtype: Option<Dtype>,
    out_dtype: Option<Dtype>,
    ch: Option<u8>,
    scale_bits: Option<u32>,
    src: Option<Tensor4d>,
    dst: Option<Tensor4d>,
    events: Events,
    debug: (u8, u8),
    /// Which of the record's keys were given.
    seen: Vec<String>,
}

/// Reads `key=value` tokens left to right, so the first error on the line is
/// the one reported. Only `keys` are allowed, each at most once.
fn parse_fields(op: Opcode, toks: &[Tok], keys: &[&str]) -> PResult<Fields> {
    let mut f = Fields::default();
    for &t in toks {
        let Some(eq) = t.text.find('=') else {
            return err(t.at, format!("expected key=value, found {}", shown(t.text)));
        };
        let key = &t.text[..eq];
        if !keys.contains(&key) {
            return err(
                t.at,
                format!(
                    "unknown key {} for {op} (expected {})",
                    shown(key),
                    keys.join(", ")
                ),
            );
        }
        if f.seen.iter().any(|k| k == key) {
            return err(t.at, format!("duplicate key {key}"));
        }
        f.seen.push(key.to_string());
        let v = t.from(eq + 1);
        let dtype = |v| parse_named(v, "a dtype name", |s| Dtype::from_name(s).map(|x| x.0));
        match key {
            "func" => {
                let b = parse_named(v, "a pool func name", |s| {
                    PoolFunc::from_name(s).map(|x| x.0)
                });
                f.func = Some(PoolFunc(b?));
            }
            "dim" => {
                let b = parse_named(v, "a pool dim name", |s| PoolDim::from_name(s).map(|x| x.0));
                f.dim = Some(PoolDim(b?));
            }
            "in" => f.in_dtype = Some(Dtype(dtype(v)?)),
            "out" => f.out_dtype = Some(Dtype(dtype(v)?)),
            "ch" => f.ch = Some(parse_uint(v, 255, "a channel count byte")? as u8),
            "scale" => f.scale_bits = Some(parse_scale(v)?),
            "src" => f.src = Some(parse_tensor(v)?),
            "dst" => f.dst = Some(parse_tensor(v)?),
            "wait" => {
                let (m, i) = parse_mode(v, "a wait mode name", |s| {
                    WaitMode::from_name(s).map(|m| m.0)
                })?;
                f.events.wait_mode = WaitMode(m);
                f.events.wait_idx = i;
            }
            "update" => {
                let (m, i) = parse_mode(v, "an update mode name", |s| {
                    UpdateMode::from_name(s).map(|m| m.0)
                })?;
                f.events.update_mode = UpdateMode(m);
                f.events.update_idx = i;
            }
            "value" => {
                f.events.semaphore_value = parse_uint(v, u32::MAX as u64, "a u32 value")? as u32
            }
            "debug" => f.debug = parse_debug(v)?,
            _ => unreachable!("every key of S4D4_KEYS is handled"),
        }
    }
    Ok(f)
}

/// `<cmd byte>:<hint byte>`.
fn parse_debug(t: Tok) -> PResult<(u8, u8)> {
    let Some(c) = t.text.find(':') else {
        return err(
            t.at,
            format!(
                "expected debug=<cmd byte>:<hint byte>, found {}",
                shown(t.text)
            ),
        );
    };
    Ok((
        parse_uint(t.sub(0, c), 255, "a debug_cmd byte")? as u8,
        parse_uint(t.from(c + 1), 255, "a debug_hint byte")? as u8,
    ))
}

/// `<mode>[<idx>]`.
fn parse_mode(t: Tok, what: &str, by_name: impl Fn(&str) -> Option<u8>) -> PResult<(u8, u8)> {
    let (Some(open), true) = (t.text.find('['), t.text.ends_with(']')) else {
        return err(
            t.at,
            format!("expected <mode>[<index>], found {}", shown(t.text)),
        );
    };
    let mode = parse_named(t.sub(0, open), what, by_name)?;
    let idx = parse_uint(t.sub(open + 1, t.text.len() - 1), 255, "an index byte")? as u8;
    Ok((mode, idx))
}

/// Form 1: every required key present, then one [`S4d4Pl`] encoded.
fn build_s4d4(op: Opcode, head: Tok, f: &Fields) -> PResult<Record> {
    let missing = |k: usize| err(head.at, format!("missing key {}", S4D4_KEYS[k]));
    let (
        Some(pool_func),
        Some(pool_dim),
        Some(in_dtype),
        Some(out_dtype),
        Some(num_active_channels),
        Some(pool_scale_bits),
        Some(src),
        Some(dst),
    ) = (
        f.func,
        f.dim,
        f.in_dtype,
        f.out_dtype,
        f.ch,
        f.scale_bits,
        f.src,
        f.dst,
    )
    else {
        let k = (0..S4D4_REQUIRED)
            .find(|&k| !f.seen.iter().any(|s| s == S4D4_KEYS[k]))
            .expect("a required key is absent");
        return missing(k);
    };
    let p = S4d4Pl {
        header: Header {
            opcode: op,
            inst_word_len: INST_WORD_LEN,
            debug_cmd: f.debug.0,
            debug_hint: f.debug.1,
        },
        events: f.events,
        src,
        in_dtype,
        out_dtype,
        num_active_channels,
        reserved0: 0,
        pool_func,
        pool_dim,
        reserved1: [0; 2],
        pool_scale_bits,
        dst,
    };
    Ok(p.encode())
}

/// An unsigned number, decimal or `0x` hex, at most `max`. No signs, no `_`.
fn parse_uint(t: Tok, max: u64, what: &str) -> PResult<u64> {
    let s = t.text;
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (s, 10),
    };
    let ok = !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix));
    if !ok {
        return err(t.at, format!("expected {what}, found {}", shown(s)));
    }
    match u64::from_str_radix(digits, radix) {
        Ok(v) if v <= max => Ok(v),
        _ => err(
            t.at,
            format!(
                "expected {what}, found {} (out of range 0..={max})",
                shown(s)
            ),
        ),
    }
}

/// An enum byte: a name, or any byte as a number.
fn parse_named(t: Tok, what: &str, by_name: impl Fn(&str) -> Option<u8>) -> PResult<u8> {
    if let Some(b) = by_name(t.text) {
        return Ok(b);
    }
    let numeric = t.text.starts_with(|c: char| c.is_ascii_digit());
    match parse_uint(t, 255, "") {
        Ok(b) => Ok(b as u8),
        Err(_) if numeric => err(
            t.at,
            format!(
                "expected {what} or byte, found {} (not a byte)",
                shown(t.text)
            ),
        ),
        Err(_) => err(
            t.at,
            format!("expected {what} or byte, found {}", shown(t.text)),
        ),
    }
}

/// `bits:0x…` or a decimal float; NaN only as bits (a NaN's payload matters).
fn parse_scale(t: Tok) -> PResult<u32> {
    if t.text.starts_with("bits:") {
        return Ok(parse_uint(t.from(5), u32::MAX as u64, "f32 bits (a u32)")? as u32);
    }
    match t.text.parse::<f32>() {
        Ok(v) if v.is_nan() => err(
            t.at,
            "a NaN scale must be written as bits:0xXXXXXXXX (its exact bits)",
        ),
        Ok(v) if v.is_infinite() && !is_inf_word(t.text) => {
            err(t.at, format!("scale {} overflows f32", shown(t.text)))
        }
        Ok(v) => Ok(v.to_bits()),
        Err(_) => err(
            t.at,
            format!(
                "expected a scale (decimal float, inf, or bits:0xXXXXXXXX), found {}",
                shown(t.text)
            ),
        ),
    }
}

/// `inf` / `infinity` with an optional sign, as Rust's float parser accepts them.
fn is_inf_word(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    s.eq_ignore_ascii_case("inf") || s.eq_ignore_ascii_case("infinity")
}

/// `<addr>{n0:s0 n1:s1 n2:s2 n3:s3}`.
fn parse_tensor(t: Tok) -> PResult<Tensor4d> {
    let Some(open) = t.text.find('{') else {
        return err(
            t.at,
            format!(
                "expected a tensor <addr>{{n:s n:s n:s n:s}}, found {}",
                shown(t.text)
            ),
        );
    };
    let addr = parse_addr(t.sub(0, open))?;
    let body = t.from(open + 1);
    let Some(close) = body.text.find('}') else {
        return err(t.at + open, "unclosed { in tensor");
    };
    if close + 1 != body.text.len() {
        let rest = body.from(close + 1);
        return err(
            rest.at,
            format!("unexpected {} after the tensor", shown(rest.text)),
        );
    }
    let inner = body.sub(0, close);
    if let Some(i) = inner.text.find('{') {
        return err(inner.at + i, "unexpected { inside a tensor");
    }
    let dims = tokenize(inner.text, inner.at);
    if let Some(extra) = dims.get(4) {
        return err(
            extra.at,
            format!("a tensor has 4 dims, found extra {}", shown(extra.text)),
        );
    }
    if dims.len() < 4 {
        return err(
            t.at + open,
            format!(
                "a tensor needs 4 dims num:step separated by spaces, found {}",
                dims.len()
            ),
        );
    }
    let mut ten = Tensor4d {
        addr,
        ..Tensor4d::default()
    };
    for (d, &dim) in dims.iter().enumerate() {
        let Some(c) = dim.text.find(':') else {
            return err(
                dim.at,
                format!("expected a dim num:step, found {}", shown(dim.text)),
            );
        };
        ten.num[d] = parse_uint(dim.sub(0, c), u16::MAX as u64, "a num (u16)")? as u16;
        ten.step[d] = parse_step(dim.from(c + 1))?;
    }
    Ok(ten)
}

/// A signed i16: an optional `-`, then a number.
fn parse_step(t: Tok) -> PResult<i16> {
    const WHAT: &str = "a step (i16)";
    let (neg, mag) = match t.text.strip_prefix('-') {
        Some(_) => (true, t.from(1)),
        None => (false, t),
    };
    let bad = || {
        err(
            t.at,
            format!("expected {WHAT}, found {} (out of range)", shown(t.text)),
        )
    };
    let m = parse_uint(mag, u64::MAX, WHAT).map_err(|_| Err0 {
        at: t.at,
        msg: format!("expected {WHAT}, found {}", shown(t.text)),
    })?;
    let v = if neg { -(m as i128) } else { m as i128 };
    match i16::try_from(v) {
        Ok(v) => Ok(v),
        Err(_) => bad(),
    }
}

/// `sbuf[P]+OFF`, `psum[P]+OFF` or `@ADDR4`.
fn parse_addr(t: Tok) -> PResult<Addr4> {
    if t.text.starts_with('@') {
        return Ok(Addr4(
            parse_uint(t.from(1), u32::MAX as u64, "a u32 address")? as u32,
        ));
    }
    let region = if t.text.starts_with("sbuf[") {
        Region::Sbuf
    } else if t.text.starts_with("psum[") {
        Region::Psum
    } else {
        return err(
            t.at,
            format!(
                "expected an address sbuf[P]+0xOFF, psum[P]+0xOFF or @0xXXXXXXXX, found {}",
                shown(t.text)
            ),
        );
    };
    let rest = t.from(5);
    let Some(close) = rest.text.find("]+") else {
        return err(
            t.at,
            format!("expected {}[P]+OFF, found {}", region.name(), shown(t.text)),
        );
    };
    let pt = rest.sub(0, close);
    let partition = parse_uint(pt, u64::MAX, "a partition")?;
    if partition >= PARTITIONS as u64 {
        return err(
            pt.at,
            format!("partition {partition} out of range 0..{PARTITIONS}"),
        );
    }
    let ot = rest.from(close + 2);
    let stride = 1u64 << region.partition_shift();
    let offset = parse_uint(ot, u64::MAX, "a byte offset")?;
    if offset >= stride {
        return err(
            ot.at,
            format!(
                "offset 0x{offset:x} is beyond the {} partition stride 0x{stride:x}",
                region.name()
            ),
        );
    }
    Ok(Addr4(region.addr(partition as u32, offset as u32)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Location;

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
        assert_eq!(disasm_record(&one("  IOTA   ")), "IOTA");
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
        let mut iota = one("IOTA");
        iota.0[12] = 1;
        assert_eq!(form(&iota), Form::Raw);
        assert!(disasm_record(&iota).ends_with(" ; IOTA"));
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
