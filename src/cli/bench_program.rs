//! `tpb-emu bench program`: a whole program — DMA in → Pool 2×2 max → DMA
//! out over 128 lanes, the front end's `pool2d` program for a
//! 1×128×H×256 fp32 map — timed on one backend, beside a reference measured
//! in the same run: the same backend's copy of the bytes the program moves
//! (memcpy on the CPU backend, the adapter's copy kernel on a GPU).
//!
//! The program is staged once and one machine made; each timed run restarts
//! it ([`Machine::restart`]: its memory and DRAM reused, the image reloaded
//! outside the timing) and times
//! the scheduler, the DMAs and the backend until the run has finished
//! (deferred GPU work included). The bytes moved are the input DMA's plus
//! the output DMA's (1.25 × `--bytes`); the reference copies that many bytes.
//! `copy_ms / program_ms` is the program's efficiency against a bare copy:
//! 1.0 would be a program as fast as moving its bytes once.

use super::CliError;
use super::backend::Backend;
use crate::device::Executor;
use crate::device::gpu::copy::CopyKernel;
use crate::device::gpu::{BackendChoice, Kernels};
use crate::frontend::{Pool2d, PoolMode, Tensor, compile_owned};
use crate::runtime::{Machine, Staged, stage};
use serde::Serialize;
use std::hint::black_box;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Floats per row of the map.
const WIDTH: u64 = 256;

/// The most `--bytes` may ask for: the program's DRAM variables, the input
/// and its quarter-size output, must fit the emulator's DRAM
/// ([`crate::runtime::MAX_DRAM_BYTES`], 4 GiB: 3 GiB + 0.75 GiB do). A larger
/// map is refused before anything is allocated (the input alone would be
/// built first, and its allocation could abort).
pub const MAX_BYTES: u64 = 3 << 30;

/// Options of `bench program`.
#[derive(Clone, Copy, Debug)]
pub struct ProgramArgs {
    /// Backend.
    pub backend: BackendChoice,
    /// Input bytes over all 128 lanes (rounded down to whole rows of 1 KiB a lane).
    pub bytes: u64,
    /// Timed repetitions (the best is reported).
    pub repeat: u32,
    /// One JSON object on the last line.
    pub json: bool,
}

/// The report (`--json` prints it as one object).
#[derive(Clone, Debug, Serialize)]
pub struct ProgramReport {
    /// `cpu` or `gpu: <adapter>`.
    pub backend: String,
    /// The map pooled: N, C, H, W.
    pub shape: [u64; 4],
    /// Bytes the program's DMAs move (input + output).
    pub bytes_moved: u64,
    /// Best program time, ms.
    pub program_ms: f64,
    /// Best time of the reference copy of `bytes_moved`, ms.
    pub copy_ms: f64,
    /// `copy_ms / program_ms`.
    pub copy_over_program: f64,
    /// Records the program executes.
    pub records: u64,
}

/// Runs `bench program`.
pub fn run(args: &ProgramArgs, out: &mut dyn Write) -> Result<ProgramReport, CliError> {
    if args.bytes > MAX_BYTES {
        return Err(CliError::Usage(format!(
            "--bytes {}: at most {MAX_BYTES} (the input and its quarter-size output must fit the emulator's {} bytes of DRAM)",
            args.bytes,
            crate::runtime::MAX_DRAM_BYTES
        )));
    }
    let rows = (args.bytes / (128 * WIDTH * 4)).max(2) & !1;
    let shape = [1, 128, rows, WIDTH];
    let elems = (128 * rows * WIDTH) as usize;
    let values: Vec<f32> = (0..elems)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 8) as f32)
        .collect();
    let x = Tensor::from_f32(&shape, &values);
    drop(values);
    let in_bytes = x.data.len() as u64;
    let compiled = compile_owned(&Pool2d::new(PoolMode::Max, 2, 2), x)?;
    let staged: Arc<Staged> =
        Arc::new(stage(&compiled.program).map_err(|e| CliError::BenchProgram(Box::new(e)))?);
    let moved = in_bytes + in_bytes / 4;
    let backend = Backend::open(args.backend)?;
    let mut exec = backend.executor(staged.arch())?;
    let mut records = 0;
    let mut m = Machine::new(Arc::clone(&staged));
    // As `pool2d` runs it: only the output is read.
    m.set_dram_only(true);
    let mut program = |exec: &mut dyn Executor| -> Result<Duration, CliError> {
        // Device memory and DRAM are allocated once and reused run after run.
        m.restart();
        let t = Instant::now();
        m.run(exec, &mut crate::device::NoTrace)?;
        let d = t.elapsed();
        records = m.total_executed();
        black_box(m.dram());
        Ok(d)
    };
    let (t_prog, t_copy) = match &backend {
        Backend::Cpu => {
            let src = vec![1u8; moved as usize];
            let mut dst = vec![0u8; moved as usize];
            let mut copy = || {
                let t = Instant::now();
                dst.copy_from_slice(black_box(&src));
                black_box(&mut dst);
                t.elapsed()
            };
            program(exec.as_mut())?;
            copy();
            let (mut p, mut c) = (Duration::MAX, Duration::MAX);
            for _ in 0..args.repeat.max(1) {
                p = p.min(program(exec.as_mut())?);
                c = c.min(copy());
            }
            (p, c)
        }
        Backend::Gpu(g) => {
            let kernels = Kernels::new(g).map_err(CliError::Device)?;
            let copy = CopyKernel::new(&kernels, moved).map_err(CliError::Device)?;
            program(exec.as_mut())?;
            copy.run().map_err(CliError::Device)?;
            let (mut p, mut c) = (Duration::MAX, Duration::MAX);
            for _ in 0..args.repeat.max(1) {
                p = p.min(program(exec.as_mut())?);
                let t = Instant::now();
                copy.run().map_err(CliError::Device)?;
                // Wall clock on both sides: the program is timed by the host too.
                c = c.min(t.elapsed());
            }
            (p, c)
        }
    };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let r = ProgramReport {
        backend: backend.describe(),
        shape,
        bytes_moved: moved,
        program_ms: ms(t_prog),
        copy_ms: ms(t_copy),
        copy_over_program: t_copy.as_secs_f64() / t_prog.as_secs_f64(),
        records,
    };
    let w = |out: &mut dyn Write, s: String| writeln!(out, "{s}").map_err(CliError::Stdout);
    w(
        out,
        format!(
            "bench program on {}: DMA in -> Pool 2x2 max -> DMA out, {:?} fp32, {} records, {} bytes moved",
            r.backend, r.shape, r.records, r.bytes_moved
        ),
    )?;
    w(
        out,
        format!(
            "program {:.3} ms ({:.2} GB/s); copy of the same bytes (reference) {:.3} ms ({:.2} GB/s)",
            r.program_ms,
            moved as f64 / t_prog.as_secs_f64() / 1e9,
            r.copy_ms,
            moved as f64 / t_copy.as_secs_f64() / 1e9
        ),
    )?;
    w(
        out,
        format!("copy/program ratio: {:.2}", r.copy_over_program),
    )?;
    if args.json {
        let j = serde_json::to_string(&r)?;
        w(out, j)?;
    }
    Ok(r)
}
