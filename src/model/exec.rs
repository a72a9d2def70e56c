//! One POOL-engine stream run on device memory that the host writes before
//! and reads after: what `tpb-emu exec --load/--dump` does, and what the
//! Python bindings' `Device` does. The address and shape syntax, the checks
//! before a run (validation, runnability, the work budget) and the memory
//! ranges of a load or a dump are here, so that every front door spells
//! and checks them the same way.
//!
//! An address is `sbuf:P:OFF` or `psum:P:OFF` (P and OFF decimal or `0x`
//! hex) or a raw ADDR4 in hex (`0x00040010`). An array's first axis is
//! lanes, from the address's partition on; the other axes are row-major
//! bytes from OFF in each lane.

use crate::device::{
    DeviceMemory, ExecError, Executor, MemError, Program, Trace, check_runnable, run_program,
};
use crate::isa::enums::Dtype;
use crate::isa::stream::StreamError;
use crate::isa::tensor::{Addr4, Location, Region};
use crate::isa::validate::{InvalidRecord, StreamInvalid, Target};
use crate::limits::{Arch, PARTITIONS};

/// Why a stream could not be run on the host's memory. Each kind is one
/// exit code of the CLI (README "Exit codes").
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// A malformed address, shape or dtype name (exit 2).
    #[error(transparent)]
    Usage(Syntax),
    /// Bytes that are not whole records (exit 4).
    #[error(transparent)]
    Stream(StreamError),
    /// An invalid record (exit 3).
    #[error(transparent)]
    Invalid(InvalidRecord),
    /// A record this runner cannot run, a backend failure (exit 1).
    #[error(transparent)]
    Exec(ExecError),
    /// The program would take more work than the budget (exit 1).
    #[error(
        "pool stream, record at byte offset {offset}: it would take the work past the work \
         budget of {limit} elements ({done} done before it, {cost} more; raise --max-work)"
    )]
    WorkBudget {
        /// Byte offset of the record past the budget.
        offset: usize,
        /// The budget, in elements.
        limit: u64,
        /// The work of the records before it.
        done: u64,
        /// Its own work.
        cost: u64,
    },
}

/// A malformed address or shape ([`HostError::Usage`]): the text, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Syntax {
    /// An address that is not `sbuf:P:OFF`, `psum:P:OFF` or a host ADDR4.
    #[error("bad ADDR `{text}`: {why}")]
    Addr {
        /// The text.
        text: String,
        /// Why.
        why: AddrFault,
    },
    /// A shape that is not axes like `128x4x4`, each >= 1.
    #[error("bad SHAPE `{text}`: expected axes like 128x4x4, each >= 1")]
    Shape {
        /// The text.
        text: String,
    },
}

/// Why an address is not a host address ([`Syntax::Addr`], [`location`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AddrFault {
    /// Colons, but not `sbuf`/`psum` first.
    #[error("expected sbuf:P:OFF, psum:P:OFF or a hex ADDR4")]
    Form,
    /// No colon, and not hex.
    #[error("not a hex ADDR4")]
    NotHex,
    /// An ADDR4 with mode bits.
    #[error("register, indirect and shape-register addresses are not host addresses")]
    ModeBits,
    /// An ADDR4 outside SBUF and PSUM.
    #[error("in neither SBUF nor PSUM")]
    NotOnChip,
    /// `sbuf`/`psum` without exactly a partition and an offset.
    #[error("expected sbuf:P:OFF or psum:P:OFF")]
    Parts,
    /// A partition that is not a number.
    #[error("bad partition")]
    BadPartition,
    /// An offset that is not a number.
    #[error("bad offset")]
    BadOffset,
    /// A partition past the last.
    #[error("partition must be < {PARTITIONS}")]
    Partition,
}

/// A decimal or `0x`-hex u32.
fn parse_u32(s: &str) -> Option<u32> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// `sbuf:P:OFF`, `psum:P:OFF` or a raw ADDR4 in hex; a malformed one is
/// [`HostError::Usage`] saying why.
pub fn parse_addr(s: &str) -> Result<Location, HostError> {
    let err = |why: AddrFault| {
        HostError::Usage(Syntax::Addr {
            text: s.to_string(),
            why,
        })
    };
    let mut parts = s.split(':');
    let head = parts.next().unwrap_or_default();
    let region = match head {
        "sbuf" => Some(Region::Sbuf),
        "psum" => Some(Region::Psum),
        _ => None,
    };
    let Some(region) = region else {
        if s.contains(':') {
            return Err(err(AddrFault::Form));
        }
        let h = s
            .strip_prefix("0x")
            .or_else(|| s.strip_prefix("0X"))
            .unwrap_or(s);
        let a = u32::from_str_radix(h, 16).map_err(|_| err(AddrFault::NotHex))?;
        let addr = Addr4(a);
        if addr.has_mode_bits() {
            return Err(err(AddrFault::ModeBits));
        }
        return addr.location().ok_or_else(|| err(AddrFault::NotOnChip));
    };
    let (Some(p), Some(o), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(err(AddrFault::Parts));
    };
    let partition = parse_u32(p).ok_or_else(|| err(AddrFault::BadPartition))?;
    let offset = parse_u32(o).ok_or_else(|| err(AddrFault::BadOffset))?;
    location(region, partition, offset).map_err(err)
}

/// The place `partition`, `offset` of `region`, the partition checked
/// (`partition must be < 128`).
pub fn location(region: Region, partition: u32, offset: u32) -> Result<Location, AddrFault> {
    if partition >= PARTITIONS {
        return Err(AddrFault::Partition);
    }
    Ok(Location {
        region,
        partition,
        offset,
    })
}

/// `AxBxC` or `A,B,C`: at least one axis, every axis >= 1, at most
/// `u32::MAX` elements.
pub fn parse_shape(s: &str) -> Result<Vec<u64>, HostError> {
    let shape = s
        .split(['x', ','])
        .map(|a| a.trim().parse::<u64>().ok())
        .collect::<Option<Vec<_>>>();
    shape.filter(|s| check_shape(s).is_ok()).ok_or_else(|| {
        HostError::Usage(Syntax::Shape {
            text: s.to_string(),
        })
    })
}

/// Refuses a shape a dump cannot have: no axis, an axis of 0, more than
/// `u32::MAX` elements.
pub fn check_shape(shape: &[u64]) -> Result<(), String> {
    let total = shape.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n));
    if shape.is_empty() || shape.contains(&0) || total.is_none_or(|t| t > u32::MAX as u64) {
        return Err(format!(
            "shape {shape:?}: expected at least one axis, each >= 1, at most {} elements",
            u32::MAX
        ));
    }
    Ok(())
}

/// The element type a dump names: a SPEC text name (`fp32`, `bf16`,
/// `uint8`, …) of a type with a size.
pub fn parse_dtype(name: &str) -> Option<Dtype> {
    Dtype::from_name(name).filter(|d| d.size().is_some())
}

/// A range of device memory read as an array: where lane 0's bytes are,
/// the element type and the shape (axis 0 is lanes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// Where lane 0's bytes are.
    pub at: Location,
    /// The element type.
    pub dtype: Dtype,
    /// The shape; axis 0 is lanes.
    pub shape: Vec<u64>,
}

impl View {
    /// The lanes it spans.
    pub fn lanes(&self) -> u32 {
        u32::try_from(self.shape[0]).unwrap_or(u32::MAX)
    }

    /// Its bytes in each lane.
    pub fn lane_bytes(&self) -> u64 {
        let elems: u64 = self.shape[1..].iter().product();
        elems * self.dtype.size().unwrap_or(1) as u64
    }

    /// Refuses a view outside `mem`'s active bytes.
    pub fn check(&self, mem: &DeviceMemory) -> Result<(), MemError> {
        mem.check(self.at, self.lanes(), self.lane_bytes())
    }

    /// Its bytes in `mem`: little-endian elements, C order.
    pub fn read(&self, mem: &DeviceMemory) -> Result<Vec<u8>, MemError> {
        mem.read(self.at, self.lanes(), self.lane_bytes())
    }
}

/// Writes an array's bytes (little-endian, C order, `shape[0]` lanes) into
/// `mem` from `at` on: what `--load ADDR=in.npy` does.
pub fn load(
    mem: &mut DeviceMemory,
    at: Location,
    shape: &[u64],
    data: &[u8],
) -> Result<(), MemError> {
    let lanes = shape
        .first()
        .map_or(1, |&n| u32::try_from(n).unwrap_or(u32::MAX));
    mem.write(at, lanes, data)
}

/// The program of the POOL-engine stream `bytes` for `arch`, checked as
/// `tpb-emu exec` checks it before anything runs: every record valid,
/// runnable without the scheduler (no wait or update, only POOL datapath
/// records), and within the work budget of `max_work` elements.
pub fn program(bytes: &[u8], arch: Arch, max_work: u64) -> Result<Program, HostError> {
    let program = match Program::from_stream(bytes, Target::pool(arch)) {
        Ok(p) => p,
        Err(StreamInvalid::Invalid(inv)) => return Err(HostError::Invalid(inv)),
        Err(StreamInvalid::Malformed(e)) => return Err(HostError::Stream(e)),
    };
    check_runnable(&program).map_err(HostError::Exec)?;
    let mut work = 0u64;
    for v in program.records() {
        let cost = crate::runtime::datapath_work(v);
        work = work.saturating_add(cost);
        if work > max_work {
            return Err(HostError::WorkBudget {
                offset: v.offset(),
                limit: max_work,
                done: work - cost,
                cost,
            });
        }
    }
    Ok(program)
}

/// Runs every record of `program` in order on `mem` with `exec`.
pub fn run(
    exec: &mut dyn Executor,
    program: &Program,
    mem: &mut DeviceMemory,
    trace: &mut dyn Trace,
) -> Result<(), HostError> {
    run_program(exec, program, mem, trace).map_err(HostError::Exec)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each reason prints what the message string it replaced printed.
    #[test]
    fn syntax_reasons_keep_their_messages() {
        let msg = |s: &str| parse_addr(s).unwrap_err().to_string();
        assert_eq!(
            msg("dram:0:0"),
            "bad ADDR `dram:0:0`: expected sbuf:P:OFF, psum:P:OFF or a hex ADDR4"
        );
        assert_eq!(msg("zz"), "bad ADDR `zz`: not a hex ADDR4");
        assert_eq!(
            msg("0x80000000"),
            "bad ADDR `0x80000000`: register, indirect and shape-register addresses are not \
             host addresses"
        );
        assert_eq!(
            msg("sbuf:1"),
            "bad ADDR `sbuf:1`: expected sbuf:P:OFF or psum:P:OFF"
        );
        assert_eq!(msg("sbuf:x:0"), "bad ADDR `sbuf:x:0`: bad partition");
        assert_eq!(msg("sbuf:0:y"), "bad ADDR `sbuf:0:y`: bad offset");
        assert_eq!(
            msg("sbuf:128:0"),
            "bad ADDR `sbuf:128:0`: partition must be < 128"
        );
        assert_eq!(
            parse_shape("0x2").unwrap_err().to_string(),
            "bad SHAPE `0x2`: expected axes like 128x4x4, each >= 1"
        );
        let e = HostError::WorkBudget {
            offset: 64,
            limit: 10,
            done: 4,
            cost: 8,
        };
        assert_eq!(
            e.to_string(),
            "pool stream, record at byte offset 64: it would take the work past the work budget \
             of 10 elements (4 done before it, 8 more; raise --max-work)"
        );
    }

    #[test]
    fn addresses_parse() {
        let l = parse_addr("psum:3:0x40").unwrap();
        assert_eq!((l.region, l.partition, l.offset), (Region::Psum, 3, 0x40));
        let l = parse_addr("0x00040010").unwrap();
        assert_eq!((l.region, l.partition, l.offset), (Region::Sbuf, 1, 0x10));
        for bad in [
            "sbuf:128:0",
            "sbuf:1",
            "dram:0:0",
            "0x80000000",
            "0x2400000",
            "sbuf:x:0",
            "",
        ] {
            assert!(parse_addr(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shapes_parse() {
        assert_eq!(parse_shape("4x2,2").unwrap(), [4, 2, 2]);
        for bad in ["", "4x0", "x", "65536x65536x2", "-1"] {
            assert!(parse_shape(bad).is_err(), "{bad}");
        }
        let v = View {
            at: parse_addr("sbuf:0:0").unwrap(),
            dtype: Dtype::FP32,
            shape: vec![4, 2, 2],
        };
        assert_eq!((v.lanes(), v.lane_bytes()), (4, 16));
        assert_eq!(parse_dtype("fp32"), Some(Dtype::FP32));
        assert_eq!(parse_dtype("float32"), None);
    }
}
