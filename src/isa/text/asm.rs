//! The parser half of the text form (see the [module docs](super)).

use super::layout;
use crate::isa::enums::{
    AluOp, Dtype, ImmSrc, PoolDim, PoolFunc, ReduceAxis, ReduceOp, UpdateMode, WaitMode,
};
use crate::isa::kernels::s4d4_pl::S4d4Pl;
use crate::isa::layout::{Codec, FieldDef, Kind, Role};
use crate::isa::opcode::{Opcode, OpcodeClass};
use crate::isa::record::{Events, Header, Record};
use crate::isa::tensor::{Addr4, Data4d, Region, Tensor2d, Tensor3d, Tensor4d};
use crate::limits::{INST_WORD_LEN, PARTITIONS, RECORD_BYTES};

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
pub(super) struct Err0 {
    at: usize,
    msg: String,
}

pub(super) type PResult<T> = Result<T, Err0>;

fn err<T>(at: usize, msg: impl Into<String>) -> PResult<T> {
    Err(Err0 {
        at,
        msg: msg.into(),
    })
}

/// A piece of the line and the byte offset where it starts.
#[derive(Clone, Copy)]
pub(super) struct Tok<'a> {
    pub(super) text: &'a str,
    pub(super) at: usize,
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
    if op.class() == OpcodeClass::Extended {
        // EC-15: the spec byte chooses the struct, so read `spec=` first.
        let Some(t) = toks[1..].iter().find(|t| t.text.starts_with("spec=")) else {
            return err(head.at, "missing key spec");
        };
        let spec = parse_uint(t.from(5), 255, "a spec byte")? as u8;
        let Some(fields) = layout(op, spec) else {
            return err(
                t.at + 5,
                format!("EXTENDED_INST spec {spec} has no field form (write the record as .raw)"),
            );
        };
        return parse_layout(op, head, &toks[1..], fields);
    }
    if let Some(fields) = layout(op, 0) {
        return parse_layout(op, head, &toks[1..], fields);
    }
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

/// Splits a `key=value` token, checking the key is one of `keys` and not
/// yet `seen`: the errors every keyed form reports alike.
fn key_value<'a>(
    op: Opcode,
    t: Tok<'a>,
    keys: &[&str],
    seen: impl Fn(&str) -> bool,
) -> PResult<(&'a str, Tok<'a>)> {
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
    if seen(key) {
        return err(t.at, format!("duplicate key {key}"));
    }
    Ok((key, t.from(eq + 1)))
}

/// Reads `key=value` tokens left to right, so the first error on the line is
/// the one reported. Only `keys` are allowed, each at most once.
fn parse_fields(op: Opcode, toks: &[Tok], keys: &[&str]) -> PResult<Fields> {
    let mut f = Fields::default();
    for &t in toks {
        let (key, v) = key_value(op, t, keys, |k| f.seen.iter().any(|s| s == k))?;
        f.seen.push(key.to_string());
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
            _ => event_key(key, v, &mut f.events, &mut f.debug)?,
        }
    }
    Ok(f)
}

/// One of [`EVENT_KEYS`] (the caller allowed only these and its own keys).
fn event_key(key: &str, v: Tok, events: &mut Events, debug: &mut (u8, u8)) -> PResult<()> {
    match key {
        "wait" => {
            let (m, i) = parse_mode(v, "a wait mode name", |s| {
                WaitMode::from_name(s).map(|m| m.0)
            })?;
            events.wait_mode = WaitMode(m);
            events.wait_idx = i;
        }
        "update" => {
            let (m, i) = parse_mode(v, "an update mode name", |s| {
                UpdateMode::from_name(s).map(|m| m.0)
            })?;
            events.update_mode = UpdateMode(m);
            events.update_idx = i;
        }
        "value" => events.semaphore_value = parse_uint(v, u32::MAX as u64, "a u32 value")? as u32,
        "debug" => *debug = parse_debug(v)?,
        _ => return err(v.at, format!("unexpected key {}", shown(key))),
    }
    Ok(())
}

/// Form 2: the keys of the layout table `fields` (required ones present,
/// optional ones zero when absent) and the event keys, in any order.
fn parse_layout(op: Opcode, head: Tok, toks: &[Tok], fields: &[FieldDef]) -> PResult<Record> {
    let mut r = Record::default();
    let mut events = Events::default();
    let mut debug = (0, 0);
    let keys: Vec<&str> = fields
        .iter()
        .filter_map(|f| f.role.key())
        .chain(EVENT_KEYS.iter().copied())
        .collect();
    let mut seen: Vec<&str> = Vec::new();
    for &t in toks {
        let (key, v) = key_value(op, t, &keys, |k| seen.contains(&k))?;
        seen.push(key);
        match fields.iter().find(|f| f.role.key() == Some(key)) {
            Some(f) => put_field(&mut r, f, v)?,
            None => event_key(key, v, &mut events, &mut debug)?,
        }
    }
    let missing = fields.iter().find_map(|f| match f.role {
        Role::Required(k) if !seen.contains(&k) => Some(k),
        _ => None,
    });
    if let Some(k) = missing {
        return err(head.at, format!("missing key {k}"));
    }
    r.0[..4].copy_from_slice(&header_bytes(op, debug));
    r.set_events(events);
    Ok(r)
}

/// Parses the value of field `f` and writes its bytes into `r`.
fn put_field(r: &mut Record, f: &FieldDef, v: Tok) -> PResult<()> {
    let b = &mut r.0[f.offset..f.offset + f.width];
    match f.kind {
        Kind::U8 => b[0] = parse_uint(v, 255, &format!("a {} byte", f.name))? as u8,
        Kind::I32 => parse_signed(v, i32::MIN as i64, i32::MAX as i64, "an i32")?.put(b),
        Kind::U32 => (parse_uint(v, u32::MAX as u64, "a u32")? as u32).put(b),
        Kind::I64 => parse_i64(v)?.put(b),
        Kind::Dtype => b[0] = parse_named(v, "a dtype name", |s| Dtype::from_name(s).map(|x| x.0))?,
        Kind::DtypePair => {
            let Some(c) = v.text.find(':') else {
                return err(
                    v.at,
                    format!(
                        "expected <src0 dtype>:<src1 dtype>, found {}",
                        shown(v.text)
                    ),
                );
            };
            let lo = parse_nibble(v.sub(0, c))?;
            let hi = parse_nibble(v.from(c + 1))?;
            b[0] = lo | hi << 4;
        }
        Kind::AluOp => {
            b[0] = parse_named(v, "an ALU op name", |s| AluOp::from_name(s).map(|x| x.0))?
        }
        Kind::SubDim => {
            b[0] = parse_named(v, "a subdim name", |s| PoolDim::from_name(s).map(|x| x.0))?
        }
        Kind::PoolFunc => {
            b[0] = parse_named(v, "a pool func name", |s| {
                PoolFunc::from_name(s).map(|x| x.0)
            })?
        }
        Kind::ReduceOp => {
            b[0] = parse_named(v, "a reduce op name", |s| {
                ReduceOp::from_name(s).map(|x| x.0)
            })?
        }
        Kind::ReduceAxis => {
            b[0] = parse_named(v, "a reduce axis name", |s| {
                ReduceAxis::from_name(s).map(|x| x.0)
            })?
        }
        Kind::ImmSrc => {
            b[0] = parse_named(v, "an immediate source name", |s| {
                ImmSrc::from_name(s).map(|x| x.0)
            })?
        }
        Kind::F32 => b.copy_from_slice(&parse_scale(v)?.to_le_bytes()),
        Kind::Tensor2d => {
            let (addr, num, step) = parse_walk::<_, 2>(v, "a tensor <addr>", parse_addr)?;
            Tensor2d { addr, num, step }.put(b)
        }
        Kind::Tensor4d => parse_tensor(v)?.put(b),
        Kind::Tensor3d => {
            let (addr, num, step) = parse_walk::<_, 3>(v, "a tensor <addr>", parse_addr)?;
            Tensor3d { addr, num, step }.put(b)
        }
        Kind::Data4d => {
            let (base, num, step) = parse_walk::<_, 4>(v, "a pattern <base>", parse_base)?;
            Data4d { base, num, step }.put(b)
        }
        Kind::Bytes => return err(v.at, format!("{} has no text form", f.name)),
    }
    Ok(())
}

/// A DATA4D base: an i32.
fn parse_base(t: Tok) -> PResult<i32> {
    parse_signed(t, i32::MIN as i64, i32::MAX as i64, "an i32 base")
}

/// A DTYPE_PAIR nibble (EC-43): a dtype name or a number 0..=15.
fn parse_nibble(t: Tok) -> PResult<u8> {
    if let Some(d) = Dtype::from_name(t.text) {
        return Ok(d.0);
    }
    Ok(
        parse_uint(t, 15, "a dtype name or nibble").map_err(|_| Err0 {
            at: t.at,
            msg: format!(
                "expected a dtype name or nibble 0..=15, found {}",
                shown(t.text)
            ),
        })? as u8,
    )
}

/// A signed number in `min..=max`: an optional `-`, then decimal or `0x` hex.
/// A signed i64 (decimal or `0x` hex, optional `-`).
fn parse_i64(t: Tok) -> PResult<i64> {
    let (neg, mag) = match t.text.strip_prefix('-') {
        Some(_) => (true, t.from(1)),
        None => (false, t),
    };
    let m = parse_uint(mag, u64::MAX, "an i64").map_err(|_| Err0 {
        at: t.at,
        msg: format!("expected an i64, found {}", shown(t.text)),
    })? as i128;
    let v = if neg { -m } else { m };
    i64::try_from(v).or_else(|_| err(t.at, format!("expected an i64, found {}", shown(t.text))))
}

fn parse_signed(t: Tok, min: i64, max: i64, what: &str) -> PResult<i32> {
    let (neg, mag) = match t.text.strip_prefix('-') {
        Some(_) => (true, t.from(1)),
        None => (false, t),
    };
    let m = parse_uint(mag, u64::MAX, what).map_err(|_| Err0 {
        at: t.at,
        msg: format!("expected {what}, found {}", shown(t.text)),
    })?;
    let v = if neg { -(m as i128) } else { m as i128 };
    if v < min as i128 || v > max as i128 {
        return err(
            t.at,
            format!("expected {what}, found {} (out of range)", shown(t.text)),
        );
    }
    Ok(v as i32)
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
pub(super) fn parse_scale(t: Tok) -> PResult<u32> {
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
    let (addr, num, step) = parse_walk::<_, 4>(t, "a tensor <addr>", parse_addr)?;
    Ok(Tensor4d { addr, num, step })
}

/// `<head>{n0:s0 …}` with `N` dims: the head parsed by `head`, then the
/// dims (so the leftmost error is the one reported). `what` names the form
/// in messages (`a tensor <addr>`).
fn parse_walk<T, const N: usize>(
    t: Tok,
    what: &str,
    head: impl Fn(Tok) -> PResult<T>,
) -> PResult<(T, [u16; N], [i16; N])> {
    let noun = what.split(" <").next().unwrap_or(what);
    let shape = vec!["n:s"; N].join(" ");
    let Some(open) = t.text.find('{') else {
        return err(
            t.at,
            format!("expected {what}{{{shape}}}, found {}", shown(t.text)),
        );
    };
    let head = head(t.sub(0, open))?;
    let body = t.from(open + 1);
    let Some(close) = body.text.find('}') else {
        return err(t.at + open, format!("unclosed {{ in {}", &noun[2..]));
    };
    if close + 1 != body.text.len() {
        let rest = body.from(close + 1);
        return err(
            rest.at,
            format!("unexpected {} after the {}", shown(rest.text), &noun[2..]),
        );
    }
    let inner = body.sub(0, close);
    if let Some(i) = inner.text.find('{') {
        return err(inner.at + i, format!("unexpected {{ inside {noun}"));
    }
    let dims = tokenize(inner.text, inner.at);
    if let Some(extra) = dims.get(N) {
        return err(
            extra.at,
            format!("{noun} has {N} dims, found extra {}", shown(extra.text)),
        );
    }
    if dims.len() < N {
        return err(
            t.at + open,
            format!(
                "{noun} needs {N} dims num:step separated by spaces, found {}",
                dims.len()
            ),
        );
    }
    let mut num = [0u16; N];
    let mut step = [0i16; N];
    for (d, &dim) in dims.iter().enumerate() {
        let Some(c) = dim.text.find(':') else {
            return err(
                dim.at,
                format!("expected a dim num:step, found {}", shown(dim.text)),
            );
        };
        num[d] = parse_uint(dim.sub(0, c), u16::MAX as u64, "a num (u16)")? as u16;
        step[d] = parse_step(dim.from(c + 1))?;
    }
    Ok((head, num, step))
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
pub(super) fn parse_addr(t: Tok) -> PResult<Addr4> {
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
