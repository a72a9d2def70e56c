//! The NEFF reader on a NEFF rebuilt from SPEC-NEFF §3's facts (the carved
//! fixture), every gate of §6 steps 1–13 with its message, and mutated and
//! truncated NEFFs that must never panic.

#![allow(dead_code)]

use crate::neff_fixture;
use neff_fixture::*;
use std::collections::HashMap;
use tpb_emu::isa::enums::Engine;
use tpb_emu::limits::Arch;
use tpb_emu::neff::{self, NeffError, Options, VarKind};

fn load(bytes: &[u8]) -> Result<neff::Neff, NeffError> {
    neff::read(bytes, &Options::default())
}

fn msg(bytes: &[u8]) -> String {
    load(bytes).expect_err("must be refused").to_string()
}

#[test]
fn fixture_header_and_members() {
    let f = fixture();
    let n = load(&f).unwrap();
    let h = &n.container.header;
    // §1.2 table, fixture column.
    assert_eq!(
        (h.pkg_version, h.header_size, h.major, h.minor),
        (2, 0x400, 2, 0)
    );
    assert_eq!(h.build_version(), "2.0.21884.0%kaena-tools/develop@6c66f4b");
    assert_eq!(h.uuid_string(), "561826fb-125f-4bb8-991c-29e085c8949a");
    assert_eq!(
        (h.name(), h.num_tpb, h.requested_tpb_count, h.vnc_size),
        ("x".to_string(), 1, 1, 1)
    );
    assert_eq!(&h.hash[16..], &[b'0'; 16]);
    assert!(n.container.gzip);
    // 19 entries, the directory skipped: 18 stored members, in archive order.
    let names: Vec<&str> = n
        .container
        .members
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    let want: Vec<&str> = MEMBER_ORDER
        .iter()
        .copied()
        .filter(|m| *m != "sg00/")
        .collect();
    assert_eq!(names, want);
    assert_eq!(
        n.arch,
        Arch::Cayman,
        "target * without --arch is CAYMAN (NEFF-EC-17)"
    );
    assert_eq!(n.target, "*");
    // Streams: pe 1 record, pool 3, others empty.
    assert_eq!(n.stream(Engine::Pe), &pe_bin()[..]);
    assert_eq!(n.stream(Engine::Pool), &pool_bin()[..]);
    assert_eq!(n.stream(Engine::Sp).len(), 0);
    // def.json has no sp key: a warning and an empty placeholder.
    assert!(
        n.warnings
            .iter()
            .any(|w| w == "Engine sp not found in NEFF x, using empty placeholder"),
        "{:?}",
        n.warnings
    );
    // Variables, var_id order.
    let vars: Vec<(&str, u32, &str, Option<u64>)> = n
        .vars
        .iter()
        .map(|v| (v.name.as_str(), v.id, v.kind.name(), v.size))
        .collect();
    assert_eq!(
        vars,
        [
            ("input", 0, "input", Some(128)),
            ("SB", 1, "state-buffer", None),
            ("output", 2, "output", Some(128)),
            ("gradient_in", 3, "tmp-buf", Some(128)),
            ("gradient_out", 4, "tmp-buf", Some(128)),
        ]
    );
    // No def.json dtype: inputs/outputs take neff.json's float32 [32], tmp-bufs uint8 [128].
    assert_eq!(n.vars[0].dtype.name(), Some("fp32"));
    assert_eq!(n.vars[0].shape, [32]);
    assert_eq!(n.vars[3].dtype.name(), Some("uint8"));
    assert_eq!(n.vars[3].shape, [128]);
    assert_eq!(n.inputs[0].name, "input");
    assert_eq!(
        n.outputs[0].name, "output",
        "rule 2: the head node's \"output\" key"
    );
    assert_eq!(n.queues.len(), 2);
    assert_eq!(n.blocks.len(), 2);
    assert!(
        n.blocks
            .iter()
            .all(|b| b.member == "sg00/pool.json" && b.id == 0)
    );
}

#[test]
fn fixture_lowers_to_four_records_and_runs_to_output_eq_input() {
    let f = fixture();
    let n = load(&f).unwrap();
    let input: Vec<u8> = (0..32u32)
        .flat_map(|i| (i as f32 * 1.5 - 7.0).to_le_bytes())
        .collect();
    let mut inputs = HashMap::new();
    inputs.insert("input".to_string(), input.clone().into());
    let m = neff::lower::program(&n, &inputs).unwrap();
    // pe: one DMA_MEMCPY nums [128, 1], steps [1, 0] (NEFF-EC-5).
    let pe = &m.program.streams[Engine::Pe as usize];
    assert_eq!(pe.len(), 64);
    assert_eq!(pe[0], 0xB8);
    assert_eq!(
        &pe[4..12],
        &[4, 10, 0x13, 22, 0, 0, 0, 0],
        "wait and update of the pseudo"
    );
    assert_eq!(&pe[12..16], &[0, 0, 0, 0]);
    // src VAR_ID(3, 0), dst VAR_ID(4, 0).
    assert_eq!(
        u64::from_le_bytes(pe[16..24].try_into().unwrap()),
        0x10 << 56 | 3 << 32
    );
    assert_eq!(
        u64::from_le_bytes(pe[40..48].try_into().unwrap()),
        0x10 << 56 | 4 << 32
    );
    assert_eq!(&pe[24..38], &[1, 0, 0, 0, 0, 0, 0, 0, 128, 0, 1, 0, 1, 0]);
    assert_eq!((pe[62], pe[63]), (3, 3));
    // pool: two DMAs and the EVENT_SEMAPHORE.
    let pool = &m.program.streams[Engine::Pool as usize];
    assert_eq!(pool.len(), 3 * 64);
    assert_eq!((pool[0], pool[64], pool[128]), (0xB8, 0xB8, 0xA0));
    // The first trigger's queue has semaphore 10: byte 13 = 10, byte 14 = 1.
    assert_eq!((pool[13], pool[14]), (10, 1));
    assert_eq!((pool[64 + 13], pool[64 + 14]), (11, 1));
    assert_eq!(&pool[64 + 4..64 + 8], &[4, 22, 0, 0]);
    // NEFF-EC-3: steps copied even where the size is 1: from_steps [1, 128].
    assert_eq!(&pool[24..32], &[1, 0, 0, 0, 128, 0, 0, 0]);
    let machine = tpb_emu::runtime::run_cpu(&m.program).unwrap();
    assert_eq!(machine.variable("output").unwrap(), &input[..]);
    assert_eq!(machine.total_executed(), 4);
    for s in [10u8, 11, 22] {
        assert_eq!(machine.semaphore(s), 1, "S[{s}]");
    }
}

#[test]
fn gate_messages_in_order() {
    let f = fixture();
    // Step 1.
    assert_eq!(msg(&f[..1023]), "Invalid number of NEFF bytes received 3ff");
    // Step 3: header_size == file size.
    let len = f.len() as u64;
    let g = with_u64(&f, 0x008, len);
    assert_eq!(
        msg(&g),
        format!("Invalid NEFF file size hdr sz: {len:x}, file sz: {len:x}")
    );
    // Step 4.
    let g = with_u64(&f, 0x018, 3);
    assert_eq!(
        msg(&g),
        "NEFF version: 3.0 is not supported, accepted version range: 0.x-2.x"
    );
    let e = load(&g).unwrap_err();
    assert_eq!(e.runtime_status(), 10);
    // Step 5: bit 27 and bit 62 are refused, bit 26 and bit 63 are not.
    for bit in [27u32, 40, 62] {
        let g = with_u64(&f, 0x220, 1 << bit);
        assert_eq!(
            msg(&g),
            format!(
                "This NEFF (version: 2.0, features: 0x{:x}) has been compiled by a newer version of \
                 Neuron compiler. Features supported by this Neuron Runtime: 0x7ffffff. Please \
                 update the aws-neuronx-runtime-lib package to the latest version.",
                1u64 << bit
            )
        );
    }
    assert!(load(&with_u64(&f, 0x220, 1 << 26)).is_ok());
    assert!(load(&with_u64(&f, 0x220, 1 << 63)).is_ok());
    // Majors 0/1 skip the feature test.
    let g = with_u64(&with_u64(&f, 0x220, 1 << 40), 0x018, 1);
    assert!(load(&g).is_ok());
    // Step 6.
    let ds = len - 1024 + 1;
    assert_eq!(
        msg(&with_u64(&f, 0x010, ds)),
        format!("Invalid NEFF data size({ds:x} vs {len:x})")
    );
    // Step 7.
    assert_eq!(msg(&with_u64(&f, 0x000, 3)), "Unsupported NEFF packager: 3");
    // Step 8: MD5 over the stored payload.
    let mut g = f.clone();
    g[0x400 + 20] ^= 0x40;
    assert_eq!(msg(&g), "MD5 mismatch!");
    // --no-verify skips it (and then the damaged gzip fails later, or not).
    let e = neff::read(
        &g,
        &Options {
            verify: false,
            ..Options::default()
        },
    );
    assert!(!matches!(e, Err(NeffError::Md5Mismatch)));
    // data_size 0 with verification.
    assert_eq!(
        msg(&with_u64(&f, 0x010, 0)),
        "Invalid NEFF data size(0): nothing to verify"
    );
    let e = neff::read(
        &with_u64(&f, 0x010, 0),
        &Options {
            verify: false,
            path: "m.neff".into(),
            ..Options::default()
        },
    );
    assert_eq!(
        e.unwrap_err().to_string(),
        "failure while reading NEFF metadata m.neff: empty payload"
    );
}

#[test]
fn pkg1_raw_tar_with_sha256() {
    let tar = fixture_tar(&Parts::default());
    let f = pkg1(&tar);
    let n = load(&f).unwrap();
    assert!(!n.container.gzip);
    assert_eq!(n.stream(Engine::Pool), &pool_bin()[..]);
    let mut g = f.clone();
    g[0x400 + 600] ^= 1;
    assert_eq!(msg(&g), "SHA256 mismatch!");
    // NEFF-EC-1: a pkg-1 header over a gzip payload is inflated anyway.
    let gz = tpb_emu::neff::gzip(&tar);
    let g = pkg1(&gz);
    assert!(load(&g).unwrap().container.gzip);
}

#[test]
fn manifest_chain_gates() {
    let cases: Vec<(Parts, &str)> = vec![
        (
            Parts {
                neff_json: Some(NEFF_JSON.replace("__kelf", "__other")),
                ..Parts::default()
            },
            "No KELF node found in NEFF JSON",
        ),
        (
            Parts {
                drop: vec!["sg00/def.json"],
                ..Parts::default()
            },
            "sg00/def.json is missing",
        ),
        (
            Parts {
                drop: vec!["neff.json"],
                ..Parts::default()
            },
            "Invalid NN: x, neff.json is missing",
        ),
        (
            Parts {
                def_json: Some(DEF_JSON.replace("\"var_id\": 4", "\"var_id\": 7")),
                ..Parts::default()
            },
            "Unexpected var_ids set! max=7, size=5",
        ),
        (
            Parts {
                def_json: Some(DEF_JSON.replace("\"var_id\": 4", "\"var_id\": 3")),
                ..Parts::default()
            },
            "duplicate var_id 3 (gradient_in, gradient_out)",
        ),
        (
            Parts {
                def_json: Some(DEF_JSON.replace("\"type\": \"output\"", "\"type\": \"tmp-buf\"")),
                ..Parts::default()
            },
            "subgraph sg00 has no Outputs",
        ),
        (
            Parts {
                pool_bin: Some(vec![0u8; 100]),
                ..Parts::default()
            },
            "sg00/pool.bin: stream length 100 is not a multiple of 64",
        ),
        (
            Parts {
                def_json: Some(DEF_JSON.replace("\"state-buffer\"", "\"pointer\"")),
                ..Parts::default()
            },
            "unsupported variable type 'pointer' for SB",
        ),
        (
            Parts {
                kelf: Some(KELF.replace("\"*\"", "\"v9\"")),
                ..Parts::default()
            },
            "Invalid target 'v9'",
        ),
        (
            Parts {
                kelf: Some(KELF.replace("\"version\":\"0.5\"", "\"version\":\"05\"")),
                ..Parts::default()
            },
            "invalid string (.) in 05",
        ),
        (
            Parts {
                neff_json: Some(
                    NEFF_JSON.replace("\"output\": \"output\"", "\"output\": \"result\""),
                ),
                ..Parts::default()
            },
            "neff.json output 'result' is not a def.json output variable",
        ),
    ];
    for (parts, want) in cases {
        let f = pkg2(&fixture_tar(&parts));
        assert_eq!(msg(&f), want);
    }
}

#[test]
fn generation_rules() {
    let f = fixture();
    let o = |a| Options {
        arch: Some(a),
        ..Options::default()
    };
    assert_eq!(
        neff::read(&f, &o(Arch::Mariana)).unwrap().arch,
        Arch::Mariana
    );
    let c = pkg2(&fixture_tar(&Parts {
        kelf: Some(KELF.replace("\"*\"", "\"v2\"")),
        ..Parts::default()
    }));
    assert_eq!(load(&c).unwrap().arch, Arch::Sunda);
    assert_eq!(
        neff::read(&c, &o(Arch::Cayman)).unwrap_err().to_string(),
        "Loading a NEFF compiled for a different arch is not allowed, NEFF arch: v2, instance arch: v3"
    );
}

#[test]
fn strict_reservation_rule() {
    let f = pkg2(&fixture_tar(&Parts {
        def_json: Some(DEF_JSON.replace("\"runtime_statebuffer_reservation\": [],", "")),
        ..Parts::default()
    }));
    assert!(load(&f).is_ok(), "without --strict the key may be absent");
    let e = neff::read(
        &f,
        &Options {
            strict: true,
            ..Options::default()
        },
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Missing or corrupted runtime_statebuffer_reservation"),
        "{e}"
    );
    assert!(
        neff::read(
            &fixture(),
            &Options {
                strict: true,
                ..Options::default()
            }
        )
        .is_ok()
    );
}

#[test]
fn pax_gnu_longname_and_dot_slash() {
    // PAX path record, GNU L long name and "./" prefixes all resolve.
    let parts = Parts {
        dot_slash: true,
        pax_pool_bin: true,
        ..Parts::default()
    };
    let n = load(&pkg2(&fixture_tar(&parts))).unwrap();
    assert_eq!(n.stream(Engine::Pool), &pool_bin()[..]);
    assert!(
        n.container
            .members
            .iter()
            .all(|m| !m.name.starts_with("./"))
    );
}

#[test]
fn inflation_is_bounded() {
    let f = fixture();
    let e = neff::read(
        &f,
        &Options {
            inflate_limit: 10_000,
            path: "f.neff".into(),
            ..Options::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "failure while reading NEFF metadata f.neff: the payload inflates beyond the limit of 10000 bytes"
    );
    assert!(
        neff::read(
            &f,
            &Options {
                inflate_limit: 20480,
                ..Options::default()
            }
        )
        .is_ok()
    );
}

#[test]
fn trigger_rejections_name_offset() {
    // An unknown queue name in the second POOL trigger (input offset 64).
    let mut pool = pool_bin();
    pool[64 + 12..64 + 12 + 15].copy_from_slice(b"q_nope\0\0\0\0\0\0\0\0\0");
    let f = pkg2(&fixture_tar(&Parts {
        pool_bin: Some(pool),
        ..Parts::default()
    }));
    let n = load(&f).unwrap();
    let Err(neff::lower::MapError::Rejected(e)) = neff::lower::program(&n, &HashMap::new()) else {
        panic!("must be rejected");
    };
    assert_eq!((e.engine, e.offset, e.opcode), (Engine::Pool, 64, 0xC1));
    assert!(e.to_string().contains("emu_opcode_supported (PSEUDO_DMA_TRIGGER at input byte offset 64: unknown DMA queue \"q_nope\")"), "{e}");
    // The collective without the completion increment.
    let mut pe = pe_bin();
    pe[6] = 0x09;
    let f = pkg2(&fixture_tar(&Parts {
        pe_bin: Some(pe),
        ..Parts::default()
    }));
    let n = load(&f).unwrap();
    let Err(neff::lower::MapError::Rejected(e)) = neff::lower::program(&n, &HashMap::new()) else {
        panic!("must be rejected");
    };
    assert_eq!((e.engine, e.offset, e.opcode), (Engine::Pe, 0, 0xC8));
}

#[test]
fn mutated_and_truncated_neffs_never_panic() {
    let f = fixture();
    let tar = fixture_tar(&Parts::default());
    let raw = pkg1(&tar);
    let mut rng = fastrand::Rng::with_seed(0x5EED_0E1F);
    let opts = Options {
        verify: false,
        inflate_limit: 1 << 20,
        ..Options::default()
    };
    for round in 0..3000 {
        let base = if round % 2 == 0 { &f } else { &raw };
        let mut g = base.clone();
        match round % 5 {
            0 => g.truncate(rng.usize(0..g.len())),
            1 => {
                for _ in 0..rng.usize(1..8) {
                    let i = rng.usize(0..g.len());
                    g[i] = rng.u8(..);
                }
            }
            2 => {
                // Headers: the first 1024 bytes.
                let i = rng.usize(0..1024);
                g[i] = rng.u8(..);
            }
            3 => {
                // Tar blocks and JSON (pkg 1: the tar is stored raw).
                let i = 1024 + rng.usize(0..g.len() - 1024);
                g[i] = rng.u8(..);
                let j = 1024 + rng.usize(0..g.len() - 1024);
                g[j] = b"{}[]\",:0 9"[rng.usize(0..10)];
            }
            _ => {
                let i = rng.usize(1024..g.len());
                g.truncate(i);
                g.extend(std::iter::repeat_n(rng.u8(..), rng.usize(0..600)));
            }
        }
        for o in [&opts, &Options::default()] {
            if let Ok(n) = neff::read(&g, o) {
                let _ = neff::lower::program(&n, &HashMap::new());
            }
        }
    }
}

#[test]
fn views_and_weights() {
    // A file variable with an .npy v1 weight, a virtual view: read and checked.
    let def = DEF_JSON.replace(
        "\"gradient_out\": {",
        "\"w\": {\"type\": \"file\", \"var_id\": 5, \"size\": 8, \"file_name\": \"w.npy\"},\
         \"v\": {\"type\": \"virtual\", \"var_id\": 6, \"size\": 64, \"backing_buf\": \"gradient_in\", \"backing_variable_off\": 64},\
         \"gradient_out\": {",
    );
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    npy.extend_from_slice(&6u16.to_le_bytes());
    npy.extend_from_slice(b"{}    ");
    npy.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    let f = pkg2(&fixture_tar(&Parts {
        def_json: Some(def.clone()),
        extra: vec![("sg00/w.npy".into(), npy.clone())],
        ..Parts::default()
    }));
    let n = load(&f).unwrap();
    let w = n.var("w").unwrap();
    assert_eq!(n.weight(w).unwrap(), &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(
        n.var("v").unwrap().kind,
        VarKind::Virtual {
            backing: "gradient_in".into(),
            offset: 64
        }
    );
    // A view past the end of its backing variable.
    let bad = def.replace(
        "\"backing_variable_off\": 64",
        "\"backing_variable_off\": 65",
    );
    let f = pkg2(&fixture_tar(&Parts {
        def_json: Some(bad),
        extra: vec![("sg00/w.npy".into(), npy)],
        ..Parts::default()
    }));
    assert_eq!(
        msg(&f),
        "variable 'v': bytes 65..+64 are outside 'gradient_in' (128 bytes)"
    );
}

#[test]
fn virtual_views_run_and_bound_walks() {
    // gview: the 64 bytes at 64 of gradient_out; the second block copies
    // 64 bytes from the view to output + 64 (NEFF-EC-3 `to_off`).
    let def = DEF_JSON.replace(
        "\"gradient_out\": {",
        "\"gview\": {\"type\": \"virtual\", \"var_id\": 5, \"size\": 64, \"backing_buf\": \"gradient_out\", \"backing_variable_off\": 64},\
         \"gradient_out\": {",
    );
    let pool_json = POOL_JSON.replace(
        r#"{"from": "gradient_out", "to": "output",
    "from_sizes": [128, 1], "from_steps": [1, 128], "to_sizes": [128, 1], "to_steps": [1, 128]}"#,
        r#"{"from": "gview", "to": "output", "to_off": 64,
    "from_sizes": [64, 1], "from_steps": [1, 0], "to_sizes": [64, 1], "to_steps": [1, 0]}"#,
    );
    assert_ne!(pool_json, POOL_JSON);
    let f = pkg2(&fixture_tar(&Parts {
        def_json: Some(def.clone()),
        pool_json: Some(pool_json.clone()),
        ..Parts::default()
    }));
    let n = load(&f).unwrap();
    let input: Vec<u8> = (0..128u8).collect();
    let inputs = HashMap::from([("input".to_string(), input.clone().into())]);
    let m = neff::lower::program(&n, &inputs).unwrap();
    // The view's VAR_ID became gradient_out (4) at offset 64.
    let pool = &m.program.streams[Engine::Pool as usize];
    assert_eq!(
        u64::from_le_bytes(pool[64 + 16..64 + 24].try_into().unwrap()),
        0x10 << 56 | 4 << 32 | 64
    );
    let machine = tpb_emu::runtime::run_cpu(&m.program).unwrap();
    let out = machine.variable("output").unwrap();
    assert_eq!(&out[..64], &[0u8; 64]);
    assert_eq!(&out[64..], &input[64..]);
    // A walk of 65 bytes from a 64-byte view: emu_footprint_in_bounds.
    let bad = pool_json
        .replace("\"from_sizes\": [64, 1]", "\"from_sizes\": [65, 1]")
        .replace("\"to_sizes\": [64, 1]", "\"to_sizes\": [65, 1]");
    let f = pkg2(&fixture_tar(&Parts {
        def_json: Some(def),
        pool_json: Some(bad),
        ..Parts::default()
    }));
    let n = load(&f).unwrap();
    let Err(neff::lower::MapError::Rejected(e)) = neff::lower::program(&n, &inputs) else {
        panic!("must be rejected");
    };
    assert_eq!(
        (e.engine, e.offset, e.predicate),
        (Engine::Pool, 64, "emu_footprint_in_bounds")
    );
}

#[test]
fn a_block_defined_twice_is_a_load_error() {
    let def = DEF_JSON.replace(
        "\"replica_groups\"",
        "\"dma\": [{\"id\": 0, \"queue\": \"q_gradient_in\", \"desc\": []}], \"replica_groups\"",
    );
    let f = pkg2(&fixture_tar(&Parts {
        def_json: Some(def),
        ..Parts::default()
    }));
    assert_eq!(
        msg(&f),
        "dma block (queue q_gradient_in, id 0) is defined twice in subgraph sg00"
    );
}

#[test]
fn packed_example_members_are_the_spec_s_json() {
    let p = tpb_emu::runtime::manifest::load(std::path::Path::new("examples/program/program.toml"))
        .unwrap();
    let bytes = neff::pack::pack(&p, "program").unwrap();
    let n = load(&bytes).unwrap();
    let c = &n.container;
    let names: Vec<&str> = c.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "kelf-a.json",
            "neff.json",
            "sg00/act.bin",
            "sg00/act.json",
            "sg00/def.json",
            "sg00/dve.bin",
            "sg00/dve.json",
            "sg00/pe.bin",
            "sg00/pe.json",
            "sg00/pool.bin",
            "sg00/pool.json",
            "sg00/sp.bin",
            "sg00/sp.json",
        ]
    );
    let text = |m: &str| String::from_utf8(c.get(m).unwrap().to_vec()).unwrap();
    assert_eq!(
        text("kelf-a.json"),
        r#"{"graphs":[{"definition":"sg00/def.json","name":"sg00"}],"target":"cayman","version":"0.5"}"#
    );
    assert_eq!(
        text("sg00/def.json"),
        concat!(
            r#"{"act":"act.json","dma_queue":{},"dve":"dve.json","name":"definition","pe":"pe.json","#,
            r#""pool":"pool.json","runtime_statebuffer_reservation":[],"sp":"sp.json","var":{"#,
            r#""x":{"dtype":"float32","shape":[128,16],"size":8192,"type":"input","var_id":0},"#,
            r#""y_avg":{"dtype":"float32","shape":[128,4],"size":2048,"type":"output","var_id":1},"#,
            r#""y_max":{"dtype":"bfloat16","shape":[128,4],"size":1024,"type":"output","var_id":2}},"#,
            r#""version":"0.6-"}"#
        )
    );
    assert_eq!(
        text("neff.json"),
        concat!(
            r#"{"arg_nodes":[0],"attrs":{"dltype":["list_str",["float32","float32","bfloat16"]],"#,
            r#""output_names":["y_avg","y_max"],"shape":["list_shape",[[128,16],[128,4],[128,4]]],"#,
            r#""storage_id":["list_int",[0,1,2]]},"heads":[[1,0,0],[1,1,0]],"node_row_ptr":[0,1,3],"#,
            r#""nodes":[{"inputs":[],"name":"x","op":"null"},{"attrs":{"flatten_data":"0","#,
            r#""func_name":"__kelf","kelf":"kelf-a.json","num_inputs":"1","num_outputs":"2"},"#,
            r#""inputs":[[0,0,0]],"name":"sg00_kelf","op":"tvm_op"}]}"#
        )
    );
    assert_eq!(
        text("sg00/pool.json"),
        r#"{"dma":[],"instr":"pool.bin","name":"pool_json"}"#
    );
    // The first tar header, byte for byte where NEFF-EC-13 pins it.
    let t = c.tar();
    assert_eq!(&t[0..12], b"kelf-a.json\0");
    // mode, uid, gid, size (91 = 0o133 bytes), mtime: octal, NUL-terminated.
    let fields = [
        &b"0000644\0"[..],
        b"0000000\0",
        b"0000000\0",
        b"00000000133\0",
        b"00000000000\0",
    ];
    assert_eq!(&t[100..148], fields.concat().as_slice());
    assert_eq!(&t[156..158], b"0\0");
    assert_eq!(&t[257..273], b"ustar  \0nobody\0\0");
    assert_eq!(&t[297..304], b"nobody\0");
    assert_eq!(t.len() % 10240, 0);
}

#[test]
fn a_gzip_bomb_and_deep_json_are_refused() {
    // 64 MiB of zeros against a 16 MiB limit.
    let gz = neff::gzip(&vec![0u8; 64 << 20]);
    assert!(gz.len() < 1 << 20);
    let f = pkg2_raw(&gz);
    let e = neff::read(
        &f,
        &Options {
            inflate_limit: 16 << 20,
            path: "b.neff".into(),
            ..Options::default()
        },
    );
    assert_eq!(
        e.unwrap_err().to_string(),
        "failure while reading NEFF metadata b.neff: the payload inflates beyond the limit of 16777216 bytes"
    );
    // A neff.json nested 100 000 deep: an error, not a stack overflow.
    let deep = "[".repeat(100_000);
    let f = pkg2(&fixture_tar(&Parts {
        neff_json: Some(deep),
        ..Parts::default()
    }));
    assert!(
        msg(&f).starts_with("invalid JSON in neff.json: recursion limit exceeded"),
        "{}",
        msg(&f)
    );
}

#[test]
fn posix_ustar_prefix_joins_the_name() {
    let n = load(&pkg2(&fixture_tar(&Parts {
        posix_pe_bin: true,
        ..Parts::default()
    })))
    .unwrap();
    assert_eq!(n.stream(Engine::Pe), &pe_bin()[..]);
}

#[test]
fn a_repeated_member_keeps_the_last_with_a_warning() {
    let mut drain = vec![0u8; 64];
    drain[0] = 0xA2;
    drain[1] = 0x10;
    let f = pkg2(&fixture_tar(&Parts {
        extra: vec![("sg00/pe.bin".into(), drain.clone())],
        ..Parts::default()
    }));
    let n = load(&f).unwrap();
    assert_eq!(n.stream(Engine::Pe), &drain[..]);
    assert!(
        n.warnings
            .contains(&"duplicate NEFF member sg00/pe.bin: the last one is used".to_string())
    );
    assert_eq!(
        n.container
            .members
            .iter()
            .filter(|m| m.name == "sg00/pe.bin")
            .count(),
        1
    );
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// (nums, steps) of one side of a DMA_MEMCPY at `at` (16 src, 40 dst).
fn walk(r: &[u8], at: usize) -> ([u16; 2], [i32; 2]) {
    let i = |o: usize| i32::from_le_bytes(r[at + o..at + o + 4].try_into().unwrap());
    let n = |o: usize| u16::from_le_bytes([r[at + o], r[at + o + 1]]);
    ([n(16), n(18)], [i(8), i(12)])
}

#[test]
fn a_three_dim_descriptor_is_one_record_per_outer_index() {
    let pool_json = POOL_JSON.replacen(
        r#""from_sizes": [128, 1], "from_steps": [1, 128], "to_sizes": [128, 1], "to_steps": [1, 128]"#,
        r#""to_off": 2, "from_sizes": [4, 2, 3], "from_steps": [1, 4, 8], "to_sizes": [8, 1, 3], "to_steps": [1, 0, 16]"#,
        1,
    );
    assert_ne!(pool_json, POOL_JSON);
    let f = pkg2(&fixture_tar(&Parts {
        pool_json: Some(pool_json.clone()),
        ..Parts::default()
    }));
    let n = load(&f).unwrap();
    let x = neff::lower::expand(&n, Engine::Pool).unwrap();
    let b = &x.bytes;
    assert_eq!(
        b.len(),
        5 * 64,
        "3 records + the second trigger's 1 + EVENT_SEMAPHORE"
    );
    for k in 0..3u64 {
        let r = &b[k as usize * 64..][..64];
        assert_eq!(r[0], 0xB8);
        assert_eq!(u64_at(r, 16), (0x10 << 56) | (8 * k), "src: input + 8k");
        assert_eq!(
            u64_at(r, 40),
            0x10 << 56 | 3 << 32 | (2 + 16 * k),
            "dst: gradient_in + 2 + 16k"
        );
        assert_eq!(walk(r, 16), ([4, 2], [1, 4]));
        assert_eq!(walk(r, 40), ([8, 1], [1, 0]));
        // Only the last record of the expansion bumps the queue's semaphore 10.
        let sem = if k == 2 { (10, 1) } else { (0, 0) };
        assert_eq!((r[13], r[14]), sem);
    }
    assert_eq!(
        &b[3 * 64 + 4..3 * 64 + 6],
        &[4, 22],
        "the second trigger's wait"
    );
    assert_eq!(
        (x.original(2 * 64), x.original(3 * 64), x.original(4 * 64)),
        (0, 64, 128)
    );
    // Outer dims that differ are refused.
    let bad = pool_json.replace(
        r#""to_sizes": [8, 1, 3], "to_steps": [1, 0, 16]"#,
        r#""to_sizes": [8, 3], "to_steps": [1, 8]"#,
    );
    let f = pkg2(&fixture_tar(&Parts {
        pool_json: Some(bad),
        ..Parts::default()
    }));
    let e = neff::lower::expand(&load(&f).unwrap(), Engine::Pool).unwrap_err();
    assert_eq!((e.offset, e.opcode), (0, 0xC1));
    assert!(
        e.why
            .to_string()
            .ends_with("dims 2.. of from and to differ in count or sizes"),
        "{}",
        e.why
    );
}

#[test]
fn a_large_collective_is_rows_of_0x8000_then_the_rest() {
    let mut pe = pe_bin();
    pe[13] = 0x03; // uint8: L = num_elements bytes
    pe[0x18..0x20].copy_from_slice(&(3 * 0x8000u64 + 7).to_le_bytes());
    let f = pkg2(&fixture_tar(&Parts {
        pe_bin: Some(pe),
        ..Parts::default()
    }));
    let n = load(&f).unwrap();
    let x = neff::lower::expand(&n, Engine::Pe).unwrap();
    let b = &x.bytes;
    assert_eq!(b.len(), 128);
    let (r0, r1) = (&b[..64], &b[64..]);
    assert_eq!(
        (u64_at(r0, 16), u64_at(r0, 40)),
        (0x10 << 56 | 3 << 32, 0x10 << 56 | 4 << 32)
    );
    assert_eq!(walk(r0, 16), ([0x8000, 3], [1, 0x8000]));
    assert_eq!(walk(r0, 40), ([0x8000, 3], [1, 0x8000]));
    assert_eq!(
        (u64_at(r1, 16), u64_at(r1, 40)),
        (
            0x10 << 56 | 3 << 32 | 0x18000,
            0x10 << 56 | 4 << 32 | 0x18000
        )
    );
    assert_eq!(walk(r1, 16), ([7, 1], [1, 0]));
    // The wait on the first record, the completion update on the last.
    assert_eq!(&r0[4..8], &[4, 10, 0, 0]);
    assert_eq!(&r1[4..8], &[0, 0, 0x13, 22]);
    assert_eq!(&r0[12..16], &[0; 4]);
}

/// `n` EVENT_SEMAPHORE records, valid on every engine, with an unknown
/// opcode (0xFF) at record `bad` when given.
fn records(n: usize, bad: Option<usize>) -> Vec<u8> {
    use tpb_emu::isa::enums::UpdateMode;
    use tpb_emu::runtime::build::{ev_update, event_semaphore};
    let mut s = Vec::with_capacity(n * 64);
    for i in 0..n {
        let mut r = event_semaphore(ev_update(UpdateMode::SEM_INC, (i % 256) as u8, 0)).0;
        if bad == Some(i) {
            r[0] = 0xFF;
        }
        s.extend_from_slice(&r);
    }
    s
}

/// The fixture with ACT's and DVE's streams replaced (a repeated member
/// replaces the first) and, when `noise`, 1.5 MiB of incompressible bytes in
/// an extra member, so that the digest is computed beside the inflate.
fn with_act_dve(act: Vec<u8>, dve: Vec<u8>, noise: bool) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(5);
    let mut extra = vec![
        ("sg00/act.bin".to_string(), act),
        ("sg00/dve.bin".to_string(), dve),
    ];
    if noise {
        extra.push((
            "sg00/noise".into(),
            (0..3 << 19).map(|_| rng.u8(..)).collect(),
        ));
    }
    fixture_tar(&Parts {
        extra,
        ..Parts::default()
    })
}

fn strings(r: Vec<Result<usize, neff::lower::EngineInvalid>>) -> Vec<Result<usize, String>> {
    r.into_iter()
        .map(|r| r.map_err(|e| e.to_string()))
        .collect()
}

#[test]
fn engines_validated_in_parallel_report_as_in_engine_order() {
    // ACT fails at its last record, in the last of two pieces; DVE at its
    // first, which a parallel run meets first. PE (0xC8) and POOL (0xC1)
    // expand.
    let f = pkg2(&with_act_dve(
        records(70_000, Some(69_999)),
        records(10, Some(0)),
        false,
    ));
    let n = load(&f).unwrap();
    let all = strings(neff::lower::validate_engines(&n, &Engine::ALL));
    let one = strings(
        Engine::ALL
            .iter()
            .map(|&e| neff::lower::validate_engine(&n, e))
            .collect(),
    );
    assert_eq!(all, one);
    let first = all.iter().find_map(|r| r.as_ref().err()).unwrap();
    assert!(first.starts_with("act stream: "), "{first}");
    assert!(
        first.ends_with(&format!("[NEFF offset {}]", 69_999 * 64)),
        "{first}"
    );
    assert!(all[Engine::Pe as usize].is_ok() && all[Engine::Pool as usize].is_ok());
    assert!(
        all[Engine::Dve as usize]
            .as_ref()
            .unwrap_err()
            .starts_with("dve stream: ")
    );
    // One engine, several pieces, all valid.
    let f = pkg2(&with_act_dve(records(70_000, None), Vec::new(), false));
    let n = load(&f).unwrap();
    assert_eq!(
        strings(neff::lower::validate_engines(&n, &[Engine::Act])),
        [Ok(70_000)]
    );
    // Triggers in the last piece of a long POOL stream: the full path, valid.
    let mut pool = records(70_000, None);
    pool.extend_from_slice(&pool_bin());
    let f = pkg2(&fixture_tar(&Parts {
        pool_bin: Some(pool),
        ..Parts::default()
    }));
    let n = load(&f).unwrap();
    let all = strings(neff::lower::validate_engines(
        &n,
        &[Engine::Pool, Engine::Pe],
    ));
    assert_eq!(
        all[0],
        strings(vec![neff::lower::validate_engine(&n, Engine::Pool)])[0]
    );
    assert!(matches!(all[0], Ok(k) if k > 70_000), "{all:?}");
}

#[test]
fn a_digest_mismatch_wins_over_every_later_error() {
    let opts = |verify| Options {
        verify,
        path: "d.neff".into(),
        ..Options::default()
    };
    // Small payloads are hashed before inflating, large ones beside it.
    for noise in [false, true] {
        let invalid_record = with_act_dve(records(5, Some(2)), Vec::new(), noise);
        let mut bad_json = with_act_dve(Vec::new(), Vec::new(), noise);
        let at = bad_json.windows(7).position(|w| w == b"\"nodes\"").unwrap();
        bad_json[at] = b'{';
        for (tar, later) in [
            (invalid_record, "act stream: "),
            (bad_json, "invalid JSON in neff.json"),
        ] {
            for pkg in [1, 2] {
                let mut f = if pkg == 1 { pkg1(&tar) } else { pkg2(&tar) };
                // Without the digest the later error shows; validating
                // beside the digest (as `validate MODEL.neff` does) too.
                let validated = |f: &[u8], verify| {
                    neff::read_owned_then(f.to_vec(), &opts(verify), |n| {
                        strings(neff::lower::validate_engines(n, &Engine::ALL))
                    })
                    .map(|(_, r)| r)
                };
                let later_err = match validated(&f, false) {
                    Ok(r) => r.into_iter().find_map(Result::err).unwrap(),
                    Err(e) => e.to_string(),
                };
                assert!(later_err.starts_with(later), "{later_err}");
                // A wrong digest in the header: the digest error.
                f[0xAC] ^= 1;
                let want = if pkg == 1 {
                    NeffError::Sha256Mismatch
                } else {
                    NeffError::Md5Mismatch
                };
                assert_eq!(
                    neff::read(&f, &opts(true)).unwrap_err(),
                    want,
                    "noise {noise}"
                );
                assert_eq!(validated(&f, true).unwrap_err(), want, "noise {noise}");
            }
        }
        // A payload that also fails to inflate (or to walk): still the digest.
        let mut f = pkg2(&with_act_dve(Vec::new(), Vec::new(), noise));
        let n = f.len();
        f[n - 6] ^= 0x55;
        f[0x400 + 100] ^= 0x55;
        assert!(matches!(
            neff::read(&f, &opts(false)),
            Err(NeffError::Metadata { .. })
        ));
        assert_eq!(
            neff::read(&f, &opts(true)).unwrap_err(),
            NeffError::Md5Mismatch
        );
    }
}
