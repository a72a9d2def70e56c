//! The NEFF reader (SPEC-NEFF §6): any bytes are a model or an error —
//! never a panic, and never an allocation beyond the inflation limit. Both
//! paths run: with the digest checked (most mutants stop there) and without
//! (so the gzip, tar and JSON layers see the mutants too), then lowering.
//!
//! Besides the input as a NEFF, two shapes of issue #31 are built from it,
//! so that the fuzzer explores them rather than waiting to stumble on them:
//! a gzip bomb (the input as the first bytes of a tar, then up to 255 MiB of
//! zeros, a lying ISIZE when the input says so) and a model whose DMA
//! descriptor takes its sizes and steps from the input (products that
//! overflow 64 bits, outer dims of one element, counts past 0xFFFF).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tpb_emu::neff::{self, Options};

fuzz_target!(|data: &[u8]| {
    read_all(data);
    let Some((&shape, rest)) = data.split_first() else {
        return;
    };
    match shape % 4 {
        0 => read_all(&bomb(rest)),
        1 => read_all(&descriptor(rest)),
        _ => {}
    }
});

fn read_all(data: &[u8]) {
    for verify in [true, false] {
        let opts = Options {
            verify,
            // Small enough that a fuzzer-made gzip bomb stops quickly.
            inflate_limit: 64 << 20,
            ..Options::default()
        };
        if let Ok(model) = neff::read(data, &opts) {
            let _ = neff::lower::program(&model, &Default::default());
        }
    }
}

/// The 1024-byte header (§1.2) of a pkg-2 NEFF around `gz`, its MD5 right.
fn pkg2(gz: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; 1024];
    f[0..8].copy_from_slice(&2u64.to_le_bytes());
    f[8..16].copy_from_slice(&1024u64.to_le_bytes());
    f[16..24].copy_from_slice(&(gz.len() as u64).to_le_bytes());
    f[24..32].copy_from_slice(&2u64.to_le_bytes());
    f[0xAC..0xBC].copy_from_slice(&neff::md5(gz));
    f.extend_from_slice(gz);
    f
}

/// `rest[2..]` then `rest[0]` MiB of zeros (up to 255: past the 64 MiB
/// limit from 64), gzipped; ISIZE lies when `rest[1]` is odd. The zeros are
/// not deflated each time: one MiB of them, deflated after a full flush (no
/// reference before it), is repeated, and the CRC combined.
fn bomb(rest: &[u8]) -> Vec<u8> {
    use flate2::{Compress, Compression, Crc, FlushCompress};
    use std::sync::OnceLock;
    fn flushed(data: &[u8]) -> Vec<u8> {
        let mut c = Compress::new(Compression::best(), false);
        let mut out = Vec::new();
        loop {
            out.reserve(64 << 10);
            let at = c.total_in() as usize;
            c.compress_vec(&data[at..], &mut out, FlushCompress::Full)
                .expect("deflate");
            if c.total_in() as usize == data.len() && out.len() < out.capacity() {
                return out;
            }
        }
    }
    static MIB: OnceLock<(Vec<u8>, Crc)> = OnceLock::new();
    let (block, mib_crc) = MIB.get_or_init(|| {
        let zeros = vec![0u8; 1 << 20];
        let mut crc = Crc::new();
        crc.update(&zeros);
        (flushed(&zeros), crc)
    });
    let (mib, lie, head) = match rest {
        [m, l, head @ ..] => (*m as u64, l & 1 == 1, head),
        _ => (0, false, rest),
    };
    let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    gz.extend(flushed(head));
    let mut crc = Crc::new();
    crc.update(head);
    for _ in 0..mib {
        gz.extend_from_slice(block);
        crc.combine(mib_crc);
    }
    // The final block: fixed Huffman, end of block only.
    gz.extend_from_slice(&[0x03, 0x00]);
    gz.extend_from_slice(&crc.sum().to_le_bytes());
    let isize = if lie {
        0xFEFF_FFFF
    } else {
        (head.len() as u64 + (mib << 20)) as u32
    };
    gz.extend_from_slice(&isize.to_le_bytes());
    pkg2(&gz)
}

/// A model whose one descriptor copies `x` to `y` with sizes and steps
/// taken from `rest`: pairs of bytes as u16 sizes, one dim per pair, the
/// same on both sides.
fn descriptor(rest: &[u8]) -> Vec<u8> {
    let sizes: Vec<u64> = rest
        .chunks_exact(2)
        .take(12)
        .map(|p| u16::from_le_bytes([p[0], p[1]]) as u64 + 1)
        .collect();
    let dims = sizes.len().max(1);
    let sizes = if sizes.is_empty() { vec![16] } else { sizes };
    let steps = vec![1i64; dims];
    let list = |v: &[u64]| format!("{v:?}");
    let kelf = r#"{"graphs":[{"definition":"sg00/def.json","name":"sg00"}],"version":"0.5","target":"*"}"#;
    let neff_json = r#"{"nodes":[{"op":"null","name":"x","inputs":[]},
        {"op":"tvm_op","name":"k","inputs":[[0,0,0]],"attrs":{"func_name":"__kelf","kelf":"kelf-a.json"}}],
        "arg_nodes":[0],"heads":[[1,0,0]],"node_row_ptr":[0,1,2],
        "attrs":{"shape":["list_shape",[[4],[4]]],"dltype":["list_str",["float32","float32"]],
                 "output_names":["y"]}}"#;
    let def = r#"{"var":{"x":{"type":"input","var_id":0,"size":16},"y":{"type":"output","var_id":1,"size":16}},
        "dma_queue":{"q":{"type":"in","semaphore":1}},"pool":"pool.json"}"#;
    let pool = format!(
        r#"{{"dma":[{{"id":0,"queue":"q","desc":[{{"from":"x","to":"y","from_sizes":{s},"from_steps":{t:?},"to_sizes":{s},"to_steps":{t:?}}}]}}],"instr":"pool.bin"}}"#,
        s = list(&sizes),
        t = steps
    );
    let mut trigger = vec![0u8; 64];
    trigger[0] = 0xC1;
    trigger[1] = 0x10;
    trigger[12] = b'q';
    let members: Vec<(String, Vec<u8>)> = [
        ("kelf-a.json", kelf.as_bytes().to_vec()),
        ("neff.json", neff_json.as_bytes().to_vec()),
        ("sg00/def.json", def.as_bytes().to_vec()),
        ("sg00/pool.json", pool.into_bytes()),
        ("sg00/pool.bin", trigger),
    ]
    .into_iter()
    .map(|(n, d)| (n.to_string(), d))
    .collect();
    pkg2(&neff::gzip(&neff::write_tar(&members)))
}
