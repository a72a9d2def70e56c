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

use super::{Model, ModelError, NameFault, Prepared, RunOptions};
use crate::device::{CpuExecutor, Executor, NoTrace};
use crate::files::HostBytes;
use crate::runtime::why::{self, Link, Mem, Place, VarInfo, Writer, Writes};
use crate::runtime::{Executed, Machine};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write as _;
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
        return Err(NameFault::UnknownOutput {
            name: name.to_string(),
            kind: model.kind(),
            outputs: outputs.iter().map(|t| t.name.clone()).collect(),
        }
        .into());
    };
    if index.len() != t.shape.len() {
        return Err(NameFault::Rank {
            name: name.to_string(),
            index: index.to_vec(),
            shape: t.shape.clone(),
        }
        .into());
    }
    let mut flat = 0u64;
    for (axis, (&i, &n)) in index.iter().zip(&t.shape).enumerate() {
        if i >= n {
            return Err(NameFault::Index {
                name: name.to_string(),
                index: index.to_vec(),
                axis,
                shape: t.shape.clone(),
            }
            .into());
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
    element_place(model, output, index)?;
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
    let outputs: Option<Vec<(String, Vec<u8>)>> = plain.as_ref().map(|p| {
        p.outputs()
            .map(|(t, b)| (t.name.clone(), b.to_vec()))
            .collect()
    });
    let mut all = why_many(
        model,
        inputs,
        &[(output.to_string(), index.to_vec())],
        exec.name(),
        outputs.as_deref(),
        opts,
    )?;
    Ok(all.remove(0))
}

/// Explains each of `elements` (output name and index, checked with
/// [`element_place`]) with one tracking run and one value run on the CPU
/// reference, whatever their number: the chains `why` gives one by one.
/// `backend` names the backend whose outputs are explained; where it is not
/// the CPU, `outputs` are that backend's outputs (by name), which must equal
/// the CPU reference's bit for bit ([`ModelError::Disagrees`]).
pub fn why_many(
    model: &Model,
    inputs: &HashMap<String, HostBytes>,
    elements: &[(String, Vec<u64>)],
    backend: &'static str,
    outputs: Option<&[(String, Vec<u8>)]>,
    opts: &RunOptions,
) -> Result<Vec<Why>, ModelError> {
    let places = elements
        .iter()
        .map(|(n, i)| element_place(model, n, i))
        .collect::<Result<Vec<_>, _>>()?;
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
    if let Some(plain) = outputs {
        for (name, bytes) in plain {
            if tracked.output(name) != Some(bytes.as_slice()) {
                return Err(ModelError::Disagrees {
                    output: name.clone(),
                    backend,
                });
            }
        }
    }
    let staged = tracked.machine().staged();
    let mut trees = Vec::with_capacity(elements.len());
    for ((output, _), &(off, size)) in elements.iter().zip(&places) {
        let var = vars
            .iter()
            .find(|v| &v.name == output)
            .ok_or_else(|| NameFault::NotInDram(output.clone()))?;
        let root = Place {
            mem: Mem::Dram as u8,
            at: var.base + off,
            len: size,
        };
        trees.push(why::trace(staged, &writes, vars.clone(), root, var.dtype));
    }
    // The values: a second CPU run, reading each capture after its point.
    let mut captures: Vec<(u64, Place)> = trees.iter().flat_map(why::Tree::captures).collect();
    captures.sort();
    captures.dedup();
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
    let mut out = Vec::with_capacity(trees.len());
    for ((output, index), mut tree) in elements.iter().zip(trees) {
        tree.fill(&|t, p| got.get(&(t, p)).cloned().unwrap_or_default());
        let idx: Vec<String> = index.iter().map(u64::to_string).collect();
        out.push(Why {
            element: format!("{output}[{}]", idx.join(",")),
            backend: backend.to_string(),
            checked_against_cpu: backend != "cpu",
            records: writes.len(),
            chain: tree.chain(staged),
        });
    }
    Ok(out)
}

impl Why {
    /// The chain as `tpb-emu why` prints it (without `--json`): one
    /// element per line with its writer's lines under it.
    pub fn text(&self) -> String {
        let mut s = String::new();
        self.write_text(&mut s).expect("writing to a String");
        s
    }

    fn write_text(&self, out: &mut String) -> std::fmt::Result {
        let w = self;
        writeln!(
            out,
            "why {} ({} records; backend {}{})",
            w.element,
            w.records,
            w.backend,
            if w.checked_against_cpu {
                ", outputs equal to the CPU reference's, which tracked the writes"
            } else {
                ""
            }
        )?;
        for link in &w.chain {
            write_link(link, out)?;
        }
        Ok(())
    }
}

fn write_link(link: &Link, out: &mut String) -> std::fmt::Result {
    let e = &link.element;
    writeln!(
        out,
        "{} = {} ({}, bits {}) after {} records",
        e.name,
        e.value,
        e.dtype.as_deref().unwrap_or("raw"),
        e.bits,
        e.after_records
    )?;
    match &link.writer {
        Writer::Record {
            engine,
            index,
            offset,
            seq,
            disasm,
            op,
            note,
            sources,
            more_sources,
            winner,
            followed,
            ..
        } => {
            writeln!(
                out,
                "  written by {engine} record {index} (byte offset {offset}; record {seq} of the run): {op}"
            )?;
            writeln!(out, "    {disasm}")?;
            writeln!(out, "    {note}")?;
            for (i, s) in sources.iter().enumerate() {
                let mark = if *winner == Some(i) {
                    "  <- won"
                } else if *followed == Some(i) {
                    "  <- followed"
                } else {
                    ""
                };
                writeln!(
                    out,
                    "    {}: {} = {} [{}]{mark}",
                    s.label, s.element.name, s.element.value, s.written_by
                )?;
            }
            if *more_sources > 0 {
                writeln!(out, "    … and {more_sources} more sources")?;
            }
        }
        Writer::Input { variable } => {
            writeln!(out, "  input `{variable}`, as the run started")?;
        }
        Writer::Never { what } | Writer::Limit { what } => writeln!(out, "  {what}")?,
    }
    Ok(())
}
