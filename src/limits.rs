//! Every geometry constant and size limit of the emulated device, in one place.
//!
//! Each constant says where it comes from: a seed document (hardware fact), a
//! lead (public reverse-engineering notes, SPEC §3), or an emulator convention
//! (`EC-n`, SPEC §10).

/// Bytes in one instruction record; streams are walked at this stride (seed 004 `TPB_INST_NBYTES`).
pub const RECORD_BYTES: usize = 64;

/// The only legal `inst_word_len` (header byte 1): 16 four-byte words (SPEC §1).
pub const INST_WORD_LEN: u8 = 16;

/// Partitions (lanes) of SBUF and of PSUM; also the POOL SIMD width
/// (seed 000 `POOLING_NUM_CHANNELS`).
pub const PARTITIONS: u32 = 128;

/// First byte address past SBUF in the on-chip space (lead, SPEC §3).
pub const SBUF_END: u32 = 0x200_0000;
/// log2 of the SBUF partition stride: 256 KiB per partition (lead).
pub const SBUF_PARTITION_SHIFT: u32 = 18;
/// First byte address of PSUM (lead).
pub const PSUM_BASE: u32 = 0x200_0000;
/// First byte address past PSUM (lead).
pub const PSUM_END: u32 = 0x240_0000;
/// log2 of the PSUM partition stride: 32 KiB per partition (lead).
pub const PSUM_PARTITION_SHIFT: u32 = 15;
/// Bytes in one PSUM bank (lead).
pub const PSUM_BANK_BYTES: u32 = 2048;

/// Bits 0..28 of an ADDR4 hold the byte address (lead, SPEC §3).
pub const ADDR4_BYTE_MASK: u32 = 0x1FFF_FFFF;
/// ADDR4 bit 29: indirect (gather) addressing.
pub const ADDR4_INDIRECT: u32 = 1 << 29;
/// ADDR4 bit 30: the shape comes from a register.
pub const ADDR4_SHAPE_FROM_REG: u32 = 1 << 30;
/// ADDR4 bit 31: register mode (byte 0 is a register id).
pub const ADDR4_REGISTER_MODE: u32 = 1 << 31;

/// Semaphores per core (lead, SPEC §1).
pub const NUM_SEMAPHORES: usize = 256;
/// Event bits per core (lead, SPEC §1).
pub const NUM_EVENTS: usize = 256;
/// 32-bit registers per engine (EC-26).
pub const NUM_REGISTERS: usize = 64;

/// EC-16: pool cores sharing the lanes of one record.
pub const POOL_CORES: u32 = 8;
/// EC-16: lanes handled by each pool core.
pub const LANES_PER_POOL_CORE: u32 = 16;

/// EC-10: the most input elements one lane of one Pool record may fold (`period · num`).
pub const MAX_POOL_ELEMENTS_PER_LANE: u64 = 1 << 24;

/// EC-40 (`emu_kernel_shape`): the most elements per lane of any one walk of
/// a SPEC-KERNELS kernel record (DATA4D included).
pub const MAX_KERNEL_ELEMENTS_PER_LANE: u64 = 1 << 24;

/// EC-30: a block closes when the next record would make it exceed this many bytes
/// (seed 004: `ib_insert_common_postamble` asserts offset <= 0x10000).
pub const BLOCK_MAX_BYTES: usize = 0x10000;
/// EC-30 / seed 004: staging alignment is `max(BLOCK_MIN_ALIGN, block size)`.
pub const BLOCK_MIN_ALIGN: usize = 0x8000;

/// EC-22: ADDR8 physical addresses from here on are device DRAM.
pub const DRAM_BASE: u64 = 0x1_0000_0000;

/// The silicon generation: decides how many bytes of each partition are backed (SPEC §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Arch {
    /// NeuronCore v2.
    Sunda,
    /// NeuronCore v3, the default.
    #[default]
    Cayman,
    /// NeuronCore v4.
    Mariana,
}

impl Arch {
    /// Every generation, in order.
    pub const ALL: [Arch; 3] = [Arch::Sunda, Arch::Cayman, Arch::Mariana];

    /// Backed SBUF bytes per partition (lead, SPEC §3 table).
    pub const fn sbuf_active_bytes(self) -> u32 {
        match self {
            Arch::Sunda => 192 * 1024,
            Arch::Cayman => 224 * 1024,
            Arch::Mariana => 256 * 1024,
        }
    }

    /// Backed PSUM bytes per partition: 16 KiB on every generation (lead, SPEC §3 table).
    pub const fn psum_active_bytes(self) -> u32 {
        16 * 1024
    }

    /// The name used on the command line and in manifests.
    pub const fn name(self) -> &'static str {
        match self {
            Arch::Sunda => "sunda",
            Arch::Cayman => "cayman",
            Arch::Mariana => "mariana",
        }
    }

    /// Parses a name as written by [`Arch::name`].
    pub fn from_name(s: &str) -> Option<Arch> {
        Arch::ALL.into_iter().find(|a| a.name() == s)
    }
}

/// The most bytes any input file (stream, `.npy`, manifest, model) may hold unless
/// `--max-input-bytes` or `TPB_EMU_MAX_INPUT_BYTES` says otherwise: 4 GiB (an emulator
/// limit, so that a file such as `/dev/zero` cannot exhaust memory; see `crate::files`).
pub const MAX_INPUT_BYTES: u64 = 4 << 30;

/// The default work budget of `run`, `exec` and `pool2d` (`--max-work`): elements moved
/// by DMA plus elements folded by Pool-family records, 2^36 (an emulator limit).
pub const DEFAULT_MAX_WORK: u64 = 1 << 36;
