//! `tpb-emu why`: the provenance chain of one output element, through the
//! model API ([`Model::prepare`], [`Prepared::run_watched`]).
//!
//! Write tracking runs on the CPU reference ([`crate::runtime::why`]): one
//! run records the executed records, a second (the same program, the same
//! inputs: deterministic, EC-31) reads the values the chain needs at the
//! points it needs them, and stops after the last. On another backend the
//! run is made there first and its outputs must equal the CPU reference's
//! bit for bit (else an error): the chain explains the bytes that backend
//! produced.

use super::{Model, ModelError, Prepared, RunOptions};
use crate::device::{CpuExecutor, Executor, NoTrace};
use crate::files::HostBytes;
use crate::runtime::why::{self, Link, Mem, Place, VarInfo, Writes};
use crate::runtime::{Executed, Machine};
use serde::Serialize;
use std::collections::HashMap;
use std::ops::ControlFlow;

/// What `why` found.
#[derive(Clone, Debug, Serialize)]
pub struct Why {
    /// The element asked about (`y[0,3,5,7]`).
    pub element: String,
    /// The backend whose outputs the chain explains.
    pub backend: String,
    /// True when that backend's outputs were checked equal to the CPU
    /// reference's (a backend other than the CPU).
    pub checked_against_cpu: bool,
    /// Records the run executed.
    pub records: u64,
    /// The chain, from the element back to an input, a constant or
    /// "never written".
    pub chain: Vec<Link>,
}

/// The bytes of element `index` (C order) of output `name`, or why not
/// (exit 2: an unknown output, a wrong rank, an index out of range).
pub fn element_place(model: &Model, name: &str, index: &[u64]) -> Result<(u64, u64), ModelError> {
    let outputs = model.outputs();
    let Some(t) = outputs.iter().find(|t| t.name == name) else {
        let names: Vec<&str> = outputs.iter().map(|t| t.name.as_str()).collect();
        return Err(ModelError::Name(format!(
            "{name}: the {} has no output of that name (outputs: {})",
            if model.is_neff() { "NEFF" } else { "program" },
            names.join(", ")
        )));
    };
    if index.len() != t.shape.len() {
        return Err(ModelError::Name(format!(
            "{name}{index:?}: {} indices for an output of shape {:?}",
            index.len(),
            t.shape
        )));
    }
    let mut flat = 0u64;
    for (d, (&i, &n)) in index.iter().zip(&t.shape).enumerate() {
        if i >= n {
            return Err(ModelError::Name(format!(
                "{name}{index:?}: index {i} is out of range for axis {d} of size {n} (shape {:?})",
                t.shape
            )));
        }
        flat = flat * n + i;
    }
    let size = t.dtype.size().unwrap_or(1) as u64;
    Ok((flat * size, size))
}

/// Every DRAM variable of the staged program, with its type and shape.
fn vars(model: &Model, p: &Prepared) -> Vec<VarInfo> {
    let all = model.variables();
    let inputs: Vec<String> = model.inputs().into_iter().map(|t| t.name).collect();
    p.staged()
        .layout()
        .filter_map(|(name, base, len)| {
            let t = all.iter().find(|t| t.name == name)?;
            Some(VarInfo {
                name: name.to_string(),
                dtype: t.dtype,
                shape: t.shape.clone(),
                base,
                len,
                input: inputs.iter().any(|n| n == name),
            })
        })
        .collect()
}

/// Explains element `index` of output `output` of a run of `model` with
/// `inputs` on `exec` ([`crate::model::backend`]'s choice).
pub fn why(
    model: &Model,
    inputs: &HashMap<String, HostBytes>,
    output: &str,
    index: &[u64],
    exec: &mut dyn Executor,
    opts: &RunOptions,
) -> Result<Why, ModelError> {
    let (off, size) = element_place(model, output, index)?;
    let on_cpu = exec.name() == "cpu";
    let plain = if on_cpu {
        None
    } else {
        Some(
            model
                .prepare(inputs)?
                .run(exec, opts, &mut NoTrace, &mut |_| ())?,
        )
    };
    // The tracking run, on the CPU reference.
    let mut cpu = CpuExecutor::default();
    let mut writes = Writes::default();
    let prepared = model.prepare(inputs)?;
    let vars = vars(model, &prepared);
    let tracked = prepared.run_watched(
        &mut cpu,
        opts,
        &mut NoTrace,
        &mut |_| (),
        &mut |_: &mut Machine, _: &mut dyn Executor, e: Executed| {
            writes.record(e);
            Ok(ControlFlow::Continue(()))
        },
    )?;
    if let Some(plain) = &plain {
        for (t, bytes) in plain.outputs() {
            if tracked.output(&t.name) != Some(bytes) {
                return Err(ModelError::Disagrees {
                    output: t.name.clone(),
                    backend: exec.name(),
                });
            }
        }
    }
    let var = vars
        .iter()
        .find(|v| v.name == output)
        .ok_or_else(|| ModelError::Name(format!("{output}: not a DRAM variable of the run")))?;
    let dtype = var.dtype;
    let root = Place {
        mem: Mem::Dram as u8,
        at: var.base + off,
        len: size,
    };
    let staged = tracked.machine().staged();
    let mut tree = why::trace(staged, &writes, vars.clone(), root, dtype);
    // The values: a second CPU run, reading each capture after its point.
    let captures = tree.captures();
    let mut got: HashMap<(u64, Place), Vec<u8>> = HashMap::new();
    let prepared = model.prepare(inputs)?;
    let read_at = |m: &Machine, p: Place| -> Vec<u8> {
        let (lo, hi) = (p.at as usize, (p.at + p.len) as usize);
        match p.mem {
            0 => m
                .dram_range(p.at, p.at + p.len)
                .map_or_else(|| m.dram()[lo..hi].to_vec(), <[u8]>::to_vec),
            1 => m.memory().region_bytes(crate::isa::tensor::Region::Sbuf)[lo..hi].to_vec(),
            _ => m.memory().region_bytes(crate::isa::tensor::Region::Psum)[lo..hi].to_vec(),
        }
    };
    // Point 0: before any record (DRAM as staged, on-chip memory zero).
    for &(t, p) in captures.iter().filter(|c| c.0 == 0) {
        let b = if p.mem == 0 {
            prepared
                .staged()
                .dram_init
                .get(p.at, p.at + p.len)
                .map_or_else(|| vec![0; p.len as usize], <[u8]>::to_vec)
        } else {
            vec![0; p.len as usize]
        };
        got.insert((t, p), b);
    }
    let last = captures.last().map_or(0, |c| c.0);
    if last > 0 {
        let mut next = captures.partition_point(|c| c.0 == 0);
        let mut cpu = CpuExecutor::default();
        let res = prepared.run_watched(
            &mut cpu,
            opts,
            &mut NoTrace,
            &mut |_| (),
            &mut |m: &mut Machine, _: &mut dyn Executor, e: Executed| {
                let t = e.seq + 1;
                while next < captures.len() && captures[next].0 == t {
                    let p = captures[next].1;
                    got.insert((t, p), read_at(m, p));
                    next += 1;
                }
                Ok(if t >= last {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                })
            },
        );
        match res {
            Ok(_) | Err(ModelError::Run(crate::runtime::RunError::Interrupted { .. })) => {}
            Err(e) => return Err(e),
        }
    }
    tree.fill(&|t, p| got.get(&(t, p)).cloned().unwrap_or_default());
    let chain = tree.chain(staged);
    let idx: Vec<String> = index.iter().map(u64::to_string).collect();
    Ok(Why {
        element: format!("{output}[{}]", idx.join(",")),
        backend: exec.name().to_string(),
        checked_against_cpu: !on_cpu,
        records: writes.len(),
        chain,
    })
}
