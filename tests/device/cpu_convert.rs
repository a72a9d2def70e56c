//! The load/store conversions (SPEC §6, EC-13, EC-19, EC-20) against vectors
//! generated once with numpy and ml_dtypes (`scripts/gen_conversion_fixtures.py`,
//! committed under `tests/fixtures/conversions/`), both through the pure
//! functions of `device::convert` and through the executor (a MAX record with
//! one-element windows is a load followed by a store).

use std::path::PathBuf;
use tpb_emu::device::convert::{self, InType, OutType};
use tpb_emu::device::{CpuExecutor, DeviceMemory, NoTrace, Program, run_program};
use tpb_emu::isa::validate::Target;
use tpb_emu::isa::{Addr4, Dtype, Location, Opcode, PoolDim, PoolFunc, Region, S4d4Pl, Tensor4d};
use tpb_emu::limits::Arch;

struct Fixture {
    name: String,
    din: Dtype,
    dout: Dtype,
    vectors: Vec<(u64, u64)>,
}

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conversions")
}

fn load_fixture(name: &str) -> Fixture {
    let path = fixtures_dir().join(format!("{name}.txt"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (din, dout) = name.split_once("_to_").expect("<in>_to_<out>");
    let dt = |s: &str| Dtype::from_name(s).unwrap_or_else(|| panic!("dtype {s}"));
    let (din, dout) = (dt(din), dt(dout));
    let mut vectors = vec![];
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (a, b) = line
            .split_once(' ')
            .unwrap_or_else(|| panic!("{name}:{}: {line}", i + 1));
        assert_eq!(
            a.len(),
            2 * din.size().unwrap() as usize,
            "{name}:{}",
            i + 1
        );
        assert_eq!(
            b.len(),
            2 * dout.size().unwrap() as usize,
            "{name}:{}",
            i + 1
        );
        vectors.push((
            u64::from_str_radix(a, 16).unwrap(),
            u64::from_str_radix(b, 16).unwrap(),
        ));
    }
    assert!(
        vectors.len() >= 200,
        "{name}: only {} vectors",
        vectors.len()
    );
    Fixture {
        name: name.to_string(),
        din,
        dout,
        vectors,
    }
}

const NAMES: [&str; 18] = [
    "int8_to_fp32",
    "uint8_to_fp32",
    "int16_to_fp32",
    "uint16_to_fp32",
    "int32_to_fp32",
    "uint32_to_fp32",
    "int64_to_fp32",
    "fp16_to_fp32",
    "bf16_to_fp32",
    "fp32_to_fp32",
    "fp32_to_fp16",
    "fp32_to_bf16",
    "fp32_to_int8",
    "fp32_to_uint8",
    "fp32_to_int16",
    "fp32_to_uint16",
    "fp32_to_int32",
    "fp32_to_uint32",
];

#[test]
fn every_fixture_file_is_listed() {
    let mut on_disk: Vec<String> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .trim_end_matches(".txt")
                .to_string()
        })
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = NAMES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}

#[test]
fn pure_conversions_match_the_fixtures() {
    for name in NAMES {
        let f = load_fixture(name);
        let it = InType::from_dtype(f.din).unwrap();
        let ot = OutType::from_dtype(f.dout).unwrap();
        let mut bad = vec![];
        for &(a, want) in &f.vectors {
            let got = convert::store_f32_bits(ot, convert::load_f32_bits(it, a)) as u64;
            if got != want {
                bad.push(format!("{a:#x}: got {got:#x}, want {want:#x}"));
            }
        }
        assert!(
            bad.is_empty(),
            "{}: {} of {} wrong, e.g. {:?}",
            f.name,
            bad.len(),
            f.vectors.len(),
            &bad[..bad.len().min(5)]
        );
    }
}

#[test]
fn fp32r_stores_like_fp32() {
    let f = load_fixture("fp32_to_fp32");
    for &(a, want) in &f.vectors {
        let got = convert::store_f32_bits(OutType::F32r, convert::load_f32_bits(InType::F32, a));
        assert_eq!(got as u64, want, "{a:#x}");
    }
}

#[test]
fn fixtures_cover_the_cases_the_spec_names() {
    let get = |name: &str, a: u64| -> u64 {
        let f = load_fixture(name);
        f.vectors
            .iter()
            .find(|v| v.0 == a)
            .unwrap_or_else(|| panic!("{name}: no {a:#x}"))
            .1
    };
    // int32/uint32/int64 beyond 2^24 round to nearest, ties to even.
    assert_eq!(get("int32_to_fp32", 0x0100_0001), 0x4B80_0000);
    assert_eq!(get("int32_to_fp32", 0x0100_0003), 0x4B80_0002);
    assert_eq!(get("uint32_to_fp32", 0xFFFF_FFFF), 0x4F80_0000);
    assert_eq!(get("int64_to_fp32", 0x8000_0000_0000_0000), 0xDF00_0000);
    // fp16: a tie rounds to even, 65520 overflows to inf, subnormals are kept.
    assert_eq!(get("fp32_to_fp16", 0x477F_F000), 0x7C00);
    assert_eq!(get("fp32_to_fp16", 0x3380_0000), 0x0001); // 2^-24
    assert_eq!(get("fp32_to_fp16", 0x3300_0000), 0x0000); // 2^-25: tie to even 0
    // f32 subnormals flushed, sign kept; NaN canonical.
    assert_eq!(get("fp32_to_fp32", 0x8000_0001), 0x8000_0000);
    assert_eq!(get("fp32_to_fp32", 0xFFC0_0001), 0x7FC0_0000);
    assert_eq!(get("fp32_to_bf16", 0xFFC0_0001), 0x7FC0);
    assert_eq!(get("bf16_to_fp32", 0x0001), 0);
    // integers truncate and saturate; NaN is 0.
    assert_eq!(get("fp32_to_int8", (-128.5f32).to_bits() as u64), 0x80);
    assert_eq!(get("fp32_to_uint8", (-0.99f32).to_bits() as u64), 0);
    assert_eq!(get("fp32_to_int32", 0x4F00_0000), 0x7FFF_FFFF);
    assert_eq!(get("fp32_to_uint32", 0x7FC0_0000), 0);
}

/// Runs every fixture through the executor: MAX over one-element windows
/// loads each element and stores it (a NaN input never wins: the output is
/// the store of −inf, which the fp32 input fixtures also list).
#[test]
fn executor_conversions_match_the_fixtures() {
    for name in NAMES {
        let f = load_fixture(name);
        let (isz, osz) = (
            f.din.size().unwrap() as usize,
            f.dout.size().unwrap() as usize,
        );
        let n = f.vectors.len();
        let input: Vec<u8> = f
            .vectors
            .iter()
            .flat_map(|v| v.0.to_le_bytes()[..isz].to_vec())
            .collect();
        let neg_inf_out = match f.din {
            Dtype::FP32 => Some(f.vectors.iter().find(|v| v.0 == 0xFF80_0000).unwrap().1),
            Dtype::FP16 | Dtype::BFLOAT16 => Some(0xFF80_0000),
            _ => None,
        };
        let is_nan = |a: u64| match f.din {
            Dtype::FP32 => f32::from_bits(a as u32).is_nan(),
            Dtype::FP16 => half::f16::from_bits(a as u16).is_nan(),
            Dtype::BFLOAT16 => half::bf16::from_bits(a as u16).is_nan(),
            _ => false,
        };
        let mut mem = DeviceMemory::new(Arch::Cayman);
        let at = Location {
            region: Region::Sbuf,
            partition: 0,
            offset: 0,
        };
        mem.write(at, 1, &input).unwrap();
        let dst_off = 0x10000;
        let rec = S4d4Pl::new(
            Opcode::POOL,
            PoolFunc::MAX_POOL,
            PoolDim::X,
            f.din,
            f.dout,
            1,
            1.0,
            Tensor4d::new(
                Addr4::new(Region::Sbuf, 0, 0),
                [(1, 1), (n as u16, 1), (1, 1), (1, 1)],
            ),
            Tensor4d::new(
                Addr4::new(Region::Sbuf, 0, dst_off),
                [(n as u16, 1), (1, 1), (1, 1), (1, 1)],
            ),
        );
        let prog = Program::from_stream(&rec.encode().0, Target::pool(Arch::Cayman)).unwrap();
        run_program(&mut CpuExecutor::default(), &prog, &mut mem, &mut NoTrace).unwrap();
        let out = mem
            .read(
                Location {
                    offset: dst_off,
                    ..at
                },
                1,
                (n * osz) as u64,
            )
            .unwrap();
        for (i, &(a, want)) in f.vectors.iter().enumerate() {
            let mut b = [0u8; 8];
            b[..osz].copy_from_slice(&out[i * osz..(i + 1) * osz]);
            let got = u64::from_le_bytes(b);
            let want = if is_nan(a) {
                neg_inf_out.unwrap()
            } else {
                want
            };
            assert_eq!(got, want, "{name}: input {a:#x}");
        }
    }
}
