//! SPEC-NEFF §3's carved NEFF, rebuilt from the spec's facts with a tar
//! writer that takes members in a given order (not `pack`): the 19 entries in
//! archive order, the `sg00/` directory entry, the empty `.asm` members, the
//! §1.2 header values, the four records byte for byte, the def.json
//! variables, queues and pool.json blocks.
#![allow(dead_code)]

/// The fixture's tar entries, archive order (§3 table).
pub const MEMBER_ORDER: [&str; 19] = [
    "kelf-a.json",
    "neff.json",
    "sg00/",
    "sg00/pe.json",
    "sg00/def.json",
    "sg00/pool.bin",
    "sg00/sp.asm",
    "sg00/pe.bin",
    "sg00/dve.json",
    "sg00/act.json",
    "sg00/dve.bin",
    "sg00/dve.asm",
    "sg00/act.bin",
    "sg00/sp.bin",
    "sg00/sp.json",
    "sg00/pool.asm",
    "sg00/pe.asm",
    "sg00/pool.json",
    "sg00/act.asm",
];

/// §1.9, verbatim.
pub const KELF: &str =
    r#"{"graphs":[{"definition":"sg00/def.json","name":"sg00"}],"version":"0.5","target":"*"}"#;

/// §1.8's summary; node 1 carries `"output": "output"` (rule 2).
pub const NEFF_JSON: &str = r#"{
  "nodes": [
    {"op": "null", "name": "input", "inputs": []},
    {"op": "tvm_op", "name": "sg_tonga0", "inputs": [[0, 0, 0]],
     "attrs": {"func_name": "__kelf", "kelf": "kelf-a.json", "num_inputs": "1", "num_outputs": "1"},
     "output": "output"}
  ],
  "arg_nodes": [0],
  "heads": [[1, 0, 0]],
  "node_row_ptr": [0, 1, 2],
  "attrs": {
    "shape": ["list_shape", [[32], [32]]],
    "storage_id": ["list_int", [0, 1]],
    "dltype": ["list_str", ["float32", "float32"]]
  }
}"#;

/// §1.10's fixture def.json (no `sp` key, as the carve lists it).
pub const DEF_JSON: &str = r##"{
  "name": "definition", "version": "0.6-", "git_version": "",
  "debug_info": {"wavegraph": "wavegraph-bin.json"},
  "var": {
    "input": {"#transfer-type": "input", "type": "input", "var_id": 0, "size": 128,
              "element_size": 4, "internal_shape": [1, 1, 1, 32]},
    "SB": {"type": "state-buffer", "var_id": 1},
    "output": {"#transfer-type": "output", "type": "output", "var_id": 2, "size": 128,
               "element_size": 4, "internal_shape": [1, 1, 1, 32],
               "#file-name": "value_nn__output:0-simout.npy"},
    "gradient_in": {"#transfer-type": "tmp-buf", "type": "tmp-buf", "var_id": 3, "size": 128},
    "gradient_out": {"#transfer-type": "tmp-buf", "type": "tmp-buf", "var_id": 4, "size": 128}
  },
  "dma_queue": {
    "q_gradient_in": {"owner": "pool", "semaphore": 10, "type": "in"},
    "q_gradient_out": {"owner": "pool", "semaphore": 11, "type": "out"}
  },
  "replica_groups": [[]],
  "runtime_statebuffer_reservation": [],
  "act": "act.json", "dve": "dve.json", "pe": "pe.json", "pool": "pool.json"
}"##;

/// §1.10.3's pool.json.
pub const POOL_JSON: &str = r#"{"dma": [
  {"id": 0, "queue": "q_gradient_in", "desc": [{"from": "input", "to": "gradient_in",
    "from_sizes": [128, 1], "from_steps": [1, 128], "to_sizes": [128, 1], "to_steps": [1, 128]}]},
  {"id": 0, "queue": "q_gradient_out", "desc": [{"from": "gradient_out", "to": "output",
    "from_sizes": [128, 1], "from_steps": [1, 128], "to_sizes": [128, 1], "to_steps": [1, 128]}]}
], "instr": "pool.bin", "name": "pool_array_json"}"#;

/// §3: pe.bin, one PSEUDO_TRIGGER_COLLECTIVE.
pub fn pe_bin() -> Vec<u8> {
    let mut r = vec![0u8; 64];
    r[..16].copy_from_slice(&[
        0xc8, 0x10, 0, 0, 0x04, 0x0a, 0x13, 0x16, 0, 0, 0, 0, 0x04, 0x0a, 0, 0,
    ]);
    r[0x10..0x18].copy_from_slice(&[3, 0, 0, 0, 4, 0, 0, 0]);
    r[0x18] = 0x20;
    r[0x20] = 1;
    r
}

/// §3: pool.bin, two PSEUDO_DMA_TRIGGERs and an EVENT_SEMAPHORE.
pub fn pool_bin() -> Vec<u8> {
    let mut b = vec![0u8; 192];
    b[..4].copy_from_slice(&[0xc1, 0x10, 0, 0]);
    b[12..12 + 13].copy_from_slice(b"q_gradient_in");
    b[64..72].copy_from_slice(&[0xc1, 0x10, 0, 0, 0x04, 0x16, 0, 0]);
    b[64 + 12..64 + 12 + 14].copy_from_slice(b"q_gradient_out");
    b[128..136].copy_from_slice(&[0xa0, 0x10, 0, 0, 0x04, 0x0b, 0, 0]);
    b
}

/// Overrides of the fixture's parts.
#[derive(Default, Clone)]
pub struct Parts {
    pub neff_json: Option<String>,
    pub def_json: Option<String>,
    pub kelf: Option<String>,
    pub pool_bin: Option<Vec<u8>>,
    pub pe_bin: Option<Vec<u8>>,
    pub pool_json: Option<String>,
    /// Members left out.
    pub drop: Vec<&'static str>,
    /// Every name written with a leading "./".
    pub dot_slash: bool,
    /// pool.bin named through a pax `x` record, pe.bin through a GNU `L` record.
    pub pax_pool_bin: bool,
    /// pe.bin written with POSIX ustar magic, prefix "sg00" and name "pe.bin".
    pub posix_pe_bin: bool,
    /// Members appended at the end.
    pub extra: Vec<(String, Vec<u8>)>,
}

fn octal(f: &mut [u8], v: u64) {
    let w = f.len() - 1;
    let s = format!("{v:0w$o}");
    f[..w].copy_from_slice(s.as_bytes());
}

/// One GNU ustar header block, as the fixture's.
fn header(name: &str, size: usize, flag: u8) -> [u8; 512] {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    octal(&mut h[100..108], 0o644);
    // Base-256 uid (the fixture has base-256 uid/gid).
    h[108] = 0x80;
    h[115] = 0x01;
    octal(&mut h[116..124], 1000);
    octal(&mut h[124..136], size as u64);
    octal(&mut h[136..148], 0o14_000_000_000);
    h[156] = flag;
    h[257..263].copy_from_slice(b"ustar ");
    h[263..265].copy_from_slice(b" \0");
    let sum: u32 = h
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                b as u32
            }
        })
        .sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    h
}

fn push(out: &mut Vec<u8>, name: &str, data: &[u8], flag: u8) {
    out.extend_from_slice(&header(name, data.len(), flag));
    out.extend_from_slice(data);
    out.resize(out.len().next_multiple_of(512), 0);
}

/// The fixture's tar (20480 bytes when nothing is overridden).
pub fn fixture_tar(p: &Parts) -> Vec<u8> {
    let mut out = Vec::new();
    for &m in MEMBER_ORDER.iter() {
        if p.drop.contains(&m) {
            continue;
        }
        let data: Vec<u8> = match m {
            "kelf-a.json" => p.kelf.clone().unwrap_or(KELF.into()).into_bytes(),
            "neff.json" => p.neff_json.clone().unwrap_or(NEFF_JSON.into()).into_bytes(),
            "sg00/def.json" => p.def_json.clone().unwrap_or(DEF_JSON.into()).into_bytes(),
            "sg00/pool.json" => p.pool_json.clone().unwrap_or(POOL_JSON.into()).into_bytes(),
            "sg00/act.json" => br#"{"act_info":"act_info.json","act_semaphore":9,"dma":[],"instr":"act.bin","name":"act_array_json"}"#.to_vec(),
            "sg00/pe.json" | "sg00/dve.json" | "sg00/sp.json" => {
                let e = &m[5..m.len() - 5];
                format!(r#"{{"dma":[], "instr":"{e}.bin", "name":"{e}_array_json"}}"#).into_bytes()
            }
            "sg00/pool.bin" => p.pool_bin.clone().unwrap_or_else(pool_bin),
            "sg00/pe.bin" => p.pe_bin.clone().unwrap_or_else(pe_bin),
            "sg00/pool.asm" => b"PSEUDO_DMA_TRIGGER q_gradient_in block_id=0;\nPSEUDO_DMA_TRIGGER $S[22]>0 q_gradient_out block_id=0;\nEVENT_SEMAPHORE $S[11]>0;\n".to_vec(),
            _ => Vec::new(),
        };
        let name = if p.dot_slash {
            format!("./{m}")
        } else {
            m.to_string()
        };
        if m == "sg00/" {
            push(&mut out, &name, &[], b'5');
        } else if p.pax_pool_bin && m == "sg00/pool.bin" {
            let rec = format!("path={name}\n");
            let len = rec.len() + 3;
            let rec = format!("{len} {rec}");
            assert_eq!(rec.len(), len);
            push(&mut out, "PaxHeaders/pool.bin", rec.as_bytes(), b'x');
            push(&mut out, "bogus-name", &data, b'0');
        } else if p.posix_pe_bin && m == "sg00/pe.bin" {
            let mut h = header("pe.bin", data.len(), b'0');
            h[257..265].copy_from_slice(b"ustar\x0000");
            h[345..349].copy_from_slice(b"sg00");
            h[148..156].fill(b' ');
            let sum: u32 = h.iter().map(|&b| b as u32).sum();
            h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
            out.extend_from_slice(&h);
            out.extend_from_slice(&data);
            out.resize(out.len().next_multiple_of(512), 0);
        } else if p.pax_pool_bin && m == "sg00/pe.bin" {
            push(
                &mut out,
                "././@LongLink",
                format!("{name}\0").as_bytes(),
                b'L',
            );
            push(&mut out, "bogus-pe", &data, b'0');
        } else {
            push(&mut out, &name, &data, b'0');
        }
    }
    for (n, d) in &p.extra {
        push(&mut out, n, d, b'0');
    }
    out.resize(out.len() + 1024, 0);
    out.resize(out.len().next_multiple_of(10240), 0);
    out
}

/// The §1.2 header over `payload` with the given packager and digest.
fn wrap(payload: &[u8], pkg: u64, hash: &[u8]) -> Vec<u8> {
    let mut h = vec![0u8; 1024];
    h[0..8].copy_from_slice(&pkg.to_le_bytes());
    h[8..16].copy_from_slice(&0x400u64.to_le_bytes());
    h[16..24].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    h[24..32].copy_from_slice(&2u64.to_le_bytes());
    let b = b"2.0.21884.0%kaena-tools/develop@6c66f4b";
    h[0x28..0x28 + b.len()].copy_from_slice(b);
    h[0xA8..0xAC].copy_from_slice(&1u32.to_le_bytes());
    h[0xAC..0xCC].copy_from_slice(&[b'0'; 32]);
    h[0xAC..0xAC + hash.len()].copy_from_slice(hash);
    h[0xCC..0xDC].copy_from_slice(&[
        0x56, 0x18, 0x26, 0xfb, 0x12, 0x5f, 0x4b, 0xb8, 0x99, 0x1c, 0x29, 0xe0, 0x85, 0xc8, 0x94,
        0x9a,
    ]);
    h[0xDC] = b'x';
    h[0x1DC..0x1E0].copy_from_slice(&1u32.to_le_bytes());
    h[0x228..0x22C].copy_from_slice(&1u32.to_le_bytes());
    h.extend_from_slice(payload);
    h
}

/// A pkg-2 NEFF of `tar`: gzip, MD5 in hash[0..16], 16 × '0' after.
pub fn pkg2(tar: &[u8]) -> Vec<u8> {
    let gz = tpb_emu::neff::gzip(tar);
    wrap(&gz, 2, &tpb_emu::neff::md5(&gz))
}

/// A pkg-1 NEFF of `payload`: stored raw, SHA-256 over it.
pub fn pkg1(payload: &[u8]) -> Vec<u8> {
    wrap(payload, 1, &tpb_emu::neff::sha256(payload))
}

/// A pkg-2 NEFF around an already-compressed payload.
pub fn pkg2_raw(gz: &[u8]) -> Vec<u8> {
    wrap(gz, 2, &tpb_emu::neff::md5(gz))
}

/// The fixture, pkg 2.
pub fn fixture() -> Vec<u8> {
    pkg2(&fixture_tar(&Parts::default()))
}

/// `f` with the u64 at `at` replaced.
pub fn with_u64(f: &[u8], at: usize, v: u64) -> Vec<u8> {
    let mut g = f.to_vec();
    g[at..at + 8].copy_from_slice(&v.to_le_bytes());
    g
}
