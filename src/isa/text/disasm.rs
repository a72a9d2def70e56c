//! The printer half of the text form (see the [module docs](super)).

use super::{Form, form, layout};
use crate::isa::enums::{AluOp, Dtype, DtypePair, ImmSrc, PoolDim, PoolFunc, ReduceAxis, ReduceOp};
use crate::isa::kernels::s4d4_pl::S4d4Pl;
use crate::isa::layout::{Codec, FieldDef, Kind, Role};
use crate::isa::record::{Events, Header, Record, hex};
use crate::isa::stream::{StreamError, records};
use crate::isa::tensor::{Addr4, Data4d, Tensor2d, Tensor3d, Tensor4d};
use std::fmt::Write;

/// Prints one record as one line of text (no trailing newline). Never fails:
/// any 64 bytes print, and [`asm`](super::asm) reads them back exactly.
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
        Form::Fields => {
            let fields = layout(r.opcode(), r.0[12]).expect("form() found a layout");
            let _ = write!(s, "{}", r.opcode());
            for f in fields {
                push_field(&mut s, r, f);
            }
            push_events(&mut s, &r.header(), &r.events());
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
pub(super) fn fmt_scale(bits: u32) -> String {
    let v = f32::from_bits(bits);
    if v.is_nan() {
        format!("bits:0x{bits:08X}")
    } else {
        format!("{v}")
    }
}

pub(super) fn fmt_addr(a: Addr4) -> String {
    match a.location() {
        Some(l) if !a.has_mode_bits() => {
            format!("{}[{}]+0x{:x}", l.region.name(), l.partition, l.offset)
        }
        _ => format!("@0x{:08X}", a.0),
    }
}

pub(super) fn fmt_tensor(t: &Tensor4d) -> String {
    fmt_walk(fmt_addr(t.addr), &t.num, &t.step)
}

/// `<head>{n0:s0 n1:s1 …}`.
fn fmt_walk(mut s: String, num: &[u16], step: &[i16]) -> String {
    for d in 0..num.len() {
        let sep = if d == 0 { '{' } else { ' ' };
        let _ = write!(s, "{sep}{}:{}", num[d], step[d]);
    }
    s.push('}');
    s
}

/// ` key=value` for one field of a layout table: required fields always,
/// optional ones when non-zero, reserved ones never (form 2 needs them zero).
fn push_field(s: &mut String, r: &Record, f: &FieldDef) {
    let b = &r.0[f.offset..f.offset + f.width];
    let key = match f.role {
        Role::Required(k) => k,
        Role::Optional(k) if b.iter().any(|&x| x != 0) => k,
        Role::Optional(_) | Role::Reserved => return,
    };
    let v = match f.kind {
        Kind::U8 => b[0].to_string(),
        Kind::I32 => i32::get(b).to_string(),
        Kind::U32 => u32::get(b).to_string(),
        Kind::I64 => i64::get(b).to_string(),
        Kind::Dtype => Dtype(b[0]).to_string(),
        Kind::DtypePair => {
            let p = DtypePair(b[0]);
            format!("{}:{}", p.src0(), p.src1())
        }
        Kind::AluOp => AluOp(b[0]).to_string(),
        Kind::SubDim => PoolDim(b[0]).to_string(),
        Kind::PoolFunc => PoolFunc(b[0]).to_string(),
        Kind::ReduceOp => ReduceOp(b[0]).to_string(),
        Kind::ReduceAxis => ReduceAxis(b[0]).to_string(),
        Kind::ImmSrc => ImmSrc(b[0]).to_string(),
        Kind::F32 => fmt_scale(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Kind::Tensor2d => {
            let t = Tensor2d::get(b);
            fmt_walk(fmt_addr(t.addr), &t.num, &t.step)
        }
        Kind::Tensor4d => fmt_tensor(&Tensor4d::get(b)),
        Kind::Tensor3d => {
            let t = Tensor3d::get(b);
            fmt_walk(fmt_addr(t.addr), &t.num, &t.step)
        }
        Kind::Data4d => {
            let d = Data4d::get(b);
            fmt_walk(d.base.to_string(), &d.num, &d.step)
        }
        Kind::Bytes => hex(b),
    };
    let _ = write!(s, " {key}={v}");
}
