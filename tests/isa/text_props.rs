//! Seeded property loops for the text form (`tpb_emu::isa::text`):
//! `asm(disasm(r)) == r` for every record, the assembler never panics, and
//! streams round-trip.

use tpb_emu::isa::text::{Form, asm, asm_line, disasm_record, disasm_stream, form};
use tpb_emu::isa::{
    Addr4, AluOp, D4Iota, Data4d, Dtype, EngineNop, ExtTta, ImmSrc, Opcode, PoolDim, PoolFunc,
    Record, ReduceAxis, ReduceOp, Region, S3d3NonzeroWithCount, S3d3SeqBounds, S3s3d3Tt, S4d4Cr,
    S4d4Pl, S4d4Tr, Tensor2d, Tensor3d, Tensor4d, UpdateMode, WaitMode, stream,
};

/// Per-form tallies, so a loop cannot silently exercise only `.raw`.
#[derive(Debug, Default)]
struct Tally {
    s4d4: usize,
    fields: usize,
    events: usize,
    raw: usize,
}

impl Tally {
    fn add(&mut self, r: &Record) {
        match form(r) {
            Form::S4d4Pl => self.s4d4 += 1,
            Form::Fields => self.fields += 1,
            Form::EventsOnly => self.events += 1,
            Form::Raw => self.raw += 1,
        }
    }
}

/// `asm(disasm(r)) == [r]`, with the text in the failure message.
fn assert_round_trip(r: &Record) {
    let text = disasm_record(r);
    assert!(!text.contains('\n'), "{text}");
    match asm(&text) {
        Ok(v) => assert_eq!(v, [*r], "text: {text}"),
        Err(e) => panic!("{e}\ntext: {text}\nrecord: {r:?}"),
    }
}

fn random_record(rng: &mut fastrand::Rng) -> Record {
    let mut r = Record::default();
    rng.fill(&mut r.0);
    r
}

#[test]
fn random_records_round_trip() {
    let mut rng = fastrand::Rng::with_seed(0x7E57_0001);
    let mut tally = Tally::default();
    for _ in 0..20_000 {
        let r = random_record(&mut rng);
        tally.add(&r);
        assert_round_trip(&r);
    }
    assert!(tally.raw > 19_000, "{tally:?}");
}

/// Picks from `set` most of the time, else any byte.
fn pick(rng: &mut fastrand::Rng, set: &[u8]) -> u8 {
    if rng.u8(..) < 230 {
        set[rng.usize(..set.len())]
    } else {
        rng.u8(..)
    }
}

fn random_events(rng: &mut fastrand::Rng, r: &mut Record) {
    let mut e = r.events();
    if rng.bool() {
        let modes: Vec<u8> = WaitMode::NAMES.iter().map(|m| m.0.0).collect();
        e.wait_mode = WaitMode(pick(rng, &modes));
        e.wait_idx = rng.u8(..);
    }
    if rng.bool() {
        let modes: Vec<u8> = UpdateMode::NAMES.iter().map(|m| m.0.0).collect();
        e.update_mode = UpdateMode(pick(rng, &modes));
        e.update_idx = if rng.bool() { 0 } else { rng.u8(..) };
    }
    if rng.bool() {
        e.semaphore_value = match rng.u8(..4) {
            0 => rng.u32(..16),
            1 => u32::MAX,
            _ => rng.u32(..),
        };
    }
    r.set_events(e);
    if rng.u8(..8) == 0 {
        r.0[2] = rng.u8(..);
        r.0[3] = rng.u8(..);
    }
}

fn random_addr(rng: &mut fastrand::Rng) -> Addr4 {
    match rng.u8(..10) {
        0 => Addr4(rng.u32(..)),
        1 => Addr4(rng.u32(..) | 1 << rng.u32(29..32)),
        2 => Addr4(rng.u32(0x240_0000..0x2000_0000)),
        3..=5 => Addr4::new(Region::Psum, rng.u32(..128), rng.u32(..1 << 15)),
        _ => Addr4::new(Region::Sbuf, rng.u32(..128), rng.u32(..1 << 18)),
    }
}

fn random_tensor(rng: &mut fastrand::Rng) -> Tensor4d {
    let mut t = Tensor4d::new(random_addr(rng), [(1, 1); 4]);
    for d in 0..4 {
        t.num[d] = match rng.u8(..6) {
            0 => rng.u16(..),
            1 => 0,
            _ => rng.u16(1..9),
        };
        t.step[d] = match rng.u8(..6) {
            0 => rng.i16(..),
            1 => i16::MIN,
            2 => i16::MAX,
            _ => rng.i16(-16..17),
        };
    }
    t
}

fn random_scale(rng: &mut fastrand::Rng) -> u32 {
    match rng.u8(..12) {
        0 => 0x7FC0_0000,
        // NaNs with payloads, either sign, quiet or signalling.
        1 => 0x7F80_0000 | rng.u32(1..0x80_0000) | (rng.u32(..2) << 31),
        2 => (-0.0f32).to_bits(),
        3 => f32::INFINITY.to_bits(),
        4 => f32::NEG_INFINITY.to_bits(),
        5 => rng.u32(1..0x80_0000), // subnormal
        6 => rng.u32(..),
        7 => (1.0 / rng.u32(1..100) as f32).to_bits(),
        8 => f32::MAX.to_bits(),
        _ => 1.0f32.to_bits(),
    }
}

/// A mostly-valid POOL / MAX_POOL_SELECT record.
fn random_s4d4(rng: &mut fastrand::Rng) -> Record {
    let opcode = if rng.bool() {
        Opcode::POOL
    } else {
        Opcode::MAX_POOL_SELECT
    };
    let funcs: Vec<u8> = PoolFunc::NAMES.iter().map(|e| e.0.0).collect();
    let dims: Vec<u8> = PoolDim::NAMES.iter().map(|e| e.0.0).collect();
    let dtypes: Vec<u8> = Dtype::NAMES.iter().map(|e| e.0.0).collect();
    let mut p = S4d4Pl::new(
        opcode,
        PoolFunc(pick(rng, &funcs)),
        PoolDim(pick(rng, &dims)),
        Dtype(pick(rng, &dtypes)),
        Dtype(pick(rng, &dtypes)),
        if rng.u8(..8) == 0 {
            rng.u8(..)
        } else {
            rng.u8(1..129)
        },
        1.0,
        random_tensor(rng),
        random_tensor(rng),
    );
    p.pool_scale_bits = random_scale(rng);
    let mut r = p.encode();
    random_events(rng, &mut r);
    r
}

fn random_tensor3(rng: &mut fastrand::Rng) -> Tensor3d {
    let t = random_tensor(rng);
    Tensor3d {
        addr: t.addr,
        step: [t.step[0], t.step[1], t.step[2]],
        num: [t.num[0], t.num[1], t.num[2]],
    }
}

fn random_i32(rng: &mut fastrand::Rng) -> i32 {
    match rng.u8(..4) {
        0 => i32::MIN,
        1 => i32::MAX,
        2 => rng.i32(-9..10),
        _ => rng.i32(..),
    }
}

/// A mostly-valid COPY, CAST, IOTA or tensor-tensor record (form 2).
fn random_kernel(rng: &mut fastrand::Rng) -> Record {
    let dtypes: Vec<u8> = Dtype::NAMES.iter().map(|e| e.0.0).collect();
    let ops: Vec<u8> = AluOp::NAMES.iter().map(|e| e.0.0).collect();
    let ch = rng.u8(..);
    let mut r = match rng.u8(..8) {
        0 => {
            let op = [Opcode::COPY, Opcode::CAST][rng.usize(..2)];
            let mut p = S4d4Tr::new(
                op,
                Dtype(pick(rng, &dtypes)),
                Dtype(pick(rng, &dtypes)),
                ch,
                random_tensor(rng),
                random_tensor(rng),
            );
            if rng.u8(..4) == 0 {
                p.negated = rng.u8(..);
                p.op = AluOp(pick(rng, &ops));
                p.op_dim = PoolDim(rng.u8(..));
                p.mask_enable = rng.u8(..2);
            }
            p.encode()
        }
        1 => {
            let t = random_tensor(rng);
            let data = Data4d {
                base: random_i32(rng),
                step: t.step,
                num: t.num,
            };
            D4Iota::new(
                Dtype(pick(rng, &dtypes)),
                ch,
                data,
                random_i32(rng),
                random_tensor(rng),
            )
            .encode()
        }
        3 => {
            let op = [
                Opcode::CROSS_LANE_REDUCE_ARITH,
                Opcode::CROSS_LANE_REDUCE_BITVEC,
            ][rng.usize(..2)];
            let mut p = S4d4Cr::new(
                op,
                ReduceOp(rng.u8(..8)),
                ReduceAxis(rng.u8(..3)),
                Dtype(pick(rng, &dtypes)),
                Dtype(pick(rng, &dtypes)),
                ch,
                1.0,
                random_tensor(rng),
                random_tensor(rng),
            );
            p.scale = tpb_emu::isa::layout::F32Bits(random_scale(rng));
            p.encode()
        }
        4 => S3d3SeqBounds::new(
            Dtype(pick(rng, &dtypes)),
            Dtype(pick(rng, &dtypes)),
            ch,
            random_tensor3(rng),
            random_tensor3(rng),
        )
        .encode(),
        5 => {
            let mut p = S3d3NonzeroWithCount::new(
                Dtype(pick(rng, &dtypes)),
                ch,
                random_i32(rng),
                random_i32(rng),
                random_tensor3(rng),
                random_tensor3(rng),
            );
            p.index_offset_src = ImmSrc(rng.u8(..4));
            p.padding_val_src = ImmSrc(rng.u8(..4));
            p.encode()
        }
        6 => {
            if rng.bool() {
                EngineNop::new(rng.u8(..)).encode()
            } else {
                let t2 = |rng: &mut fastrand::Rng| {
                    let t = random_tensor(rng);
                    Tensor2d {
                        addr: t.addr,
                        step: [t.step[0], t.step[1]],
                        num: [t.num[0], t.num[1]],
                    }
                };
                ExtTta::new(
                    rng.u8(..),
                    AluOp(pick(rng, &ops)),
                    Dtype(rng.u8(..16)),
                    Dtype(rng.u8(..16)),
                    Dtype(pick(rng, &dtypes)),
                    t2(rng),
                    t2(rng),
                    t2(rng),
                )
                .encode()
            }
        }
        _ => {
            let op = [Opcode::TENSOR_TENSOR_ARITH, Opcode::TENSOR_TENSOR_BITVEC][rng.usize(..2)];
            S3s3d3Tt::new(
                op,
                AluOp(pick(rng, &ops)),
                Dtype(rng.u8(..16)),
                Dtype(rng.u8(..16)),
                Dtype(pick(rng, &dtypes)),
                ch,
                random_tensor3(rng),
                random_tensor3(rng),
                random_tensor3(rng),
            )
            .encode()
        }
    };
    random_events(rng, &mut r);
    r
}

/// A named opcode without a field form, with only events and debug bytes.
fn random_events_only(rng: &mut fastrand::Rng) -> Record {
    let named: Vec<u8> = (0..=255u8)
        .filter(|&b| Opcode(b).name().is_some())
        .filter(|&b| {
            let mut r = Record::default();
            r.0[0] = b;
            r.0[1] = 16;
            form(&r) == Form::EventsOnly
        })
        .collect();
    let mut r = Record::default();
    r.0[0] = named[rng.usize(..named.len())];
    r.0[1] = 16;
    random_events(rng, &mut r);
    r
}

/// Mostly-valid records of all four forms, with occasional single-byte damage.
fn random_structured(rng: &mut fastrand::Rng) -> Record {
    let mut r = match rng.u8(..10) {
        0..=4 => random_s4d4(rng),
        5..=7 => random_kernel(rng),
        _ => random_events_only(rng),
    };
    if rng.u8(..10) == 0 {
        // Damage one byte: inst_word_len, a reserved byte of one of the
        // layouts (S4D4_PL 35/38/39, D4_IOTA 32/35/40..43, S4D4_TR 39..43), or
        // an operand byte.
        let at = [1, 35, 38, 39, 12, 40, 63, 32, 43][rng.usize(..9)];
        r.0[at] = rng.u8(1..);
    }
    r
}

#[test]
fn structured_records_round_trip_in_every_form() {
    let mut rng = fastrand::Rng::with_seed(0x7E57_0002);
    let mut tally = Tally::default();
    for _ in 0..20_000 {
        let r = random_structured(&mut rng);
        tally.add(&r);
        assert_round_trip(&r);
    }
    assert!(tally.s4d4 > 8_000, "{tally:?}");
    assert!(tally.fields > 5_000, "{tally:?}");
    assert!(tally.events > 1_000, "{tally:?}");
    assert!(tally.raw > 500, "{tally:?}");
}

/// Characters a mutation inserts: the grammar's punctuation, digits, letters,
/// whitespace of several kinds, and non-ASCII.
const ALPHABET: &[char] = &[
    '{',
    '}',
    '[',
    ']',
    ':',
    '=',
    '+',
    '-',
    '@',
    ';',
    '#',
    '.',
    ' ',
    ' ',
    '\t',
    '0',
    '1',
    '9',
    'x',
    'X',
    'f',
    'e',
    'a',
    'z',
    '\u{e9}',
    '\u{4e2d}',
    '\u{1F600}',
    '\u{3000}',
    '\u{0}',
    '\u{FEFF}',
    '\r',
];

fn mutate(rng: &mut fastrand::Rng, line: &str) -> String {
    let mut cs: Vec<char> = line.chars().collect();
    for _ in 0..rng.usize(1..5) {
        let i = rng.usize(..=cs.len());
        match rng.u8(..7) {
            0 if i < cs.len() => {
                cs.remove(i);
            }
            1 if i < cs.len() => cs[i] = ALPHABET[rng.usize(..ALPHABET.len())],
            2 => drop(cs.splice(i..i, "99999999999999999999999999".chars())),
            3 => cs.insert(
                i,
                char::from_u32(rng.u32(..0x11_0000)).unwrap_or('\u{FFFD}'),
            ),
            4 if i < cs.len() => cs.truncate(i),
            _ => cs.insert(i, ALPHABET[rng.usize(..ALPHABET.len())]),
        }
    }
    cs.into_iter().collect()
}

#[test]
fn mutated_lines_never_panic() {
    let mut rng = fastrand::Rng::with_seed(0x7E57_0003);
    let (mut ok, mut failed) = (0, 0);
    for _ in 0..5_000 {
        let r = random_structured(&mut rng);
        let line = mutate(&mut rng, &disasm_record(&r));
        match asm(&line) {
            // Whatever it parsed to prints and reads back as itself.
            Ok(recs) => {
                ok += 1;
                for r in &recs {
                    assert_round_trip(r);
                }
            }
            Err(e) => {
                failed += 1;
                assert!(e.line >= 1 && e.column >= 1, "{e}");
                assert!(e.column <= line.chars().count() + 1, "{e}: {line:?}");
                assert!(!e.message.is_empty());
            }
        }
        let _ = asm_line(&line);
    }
    assert!(ok > 100 && failed > 2_000, "ok {ok}, failed {failed}");
}

#[test]
fn streams_round_trip() {
    let mut rng = fastrand::Rng::with_seed(0x7E57_0004);
    for _ in 0..50 {
        let n = rng.usize(..40);
        let recs: Vec<Record> = (0..n)
            .map(|_| {
                if rng.u8(..4) == 0 {
                    random_record(&mut rng)
                } else {
                    random_structured(&mut rng)
                }
            })
            .collect();
        let bytes = stream::to_bytes(&recs);
        let text = disasm_stream(&bytes).unwrap();
        assert_eq!(text.lines().count(), n);
        assert!(n == 0 || text.ends_with('\n'));
        for (i, line) in text.lines().enumerate() {
            assert!(line.ends_with(&format!("@{}", i * 64)), "{line}");
        }
        assert_eq!(asm(&text).unwrap(), recs);
    }
    assert!(disasm_stream(&[0; 100]).is_err());
}
