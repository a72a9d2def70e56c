//! Running a batch of kernel dispatches on device memory, in program
//! order: one parameter buffer and one bind group for the whole batch, one
//! compute pass, one submission per [`DISPATCHES_PER_SUBMIT`] dispatches.
//! The host's bytes travel in the same submission ([`Staged`]): a DMA's
//! bytes go up, and captures come down, as dispatches of `spans.wgsl`
//! between the kernels (one per DMA rather than one copy command per
//! partition), or as copy commands between passes when the spans are few
//! or long. Dispatches run in
//! order, each complete before the next starts: wgpu orders the dispatches
//! of a pass that share a writable buffer.

use super::context::DeviceError;
use super::kernels::{Kernels, PARAMS_BYTES, PipelineKey, Shader};
use super::memory::GpuMemory;
use super::shaders::program;
use super::timer::Timer;
use super::types::Span;
use std::time::Duration;

pub use super::types::{Dispatch, EncodeCx};

/// The host's spans (a DMA's bytes up, captures down): `spans.wgsl` alone
/// (device memory as plain words; the memory layout plus bindings 3 and 4,
/// `Kernels::spans_layout`).
pub const SPANS: Shader = program!("spans.wgsl", Spans, ["spans.wgsl"]);

/// Most dispatches recorded into one submission; longer batches are split.
pub const DISPATCHES_PER_SUBMIT: usize = 16_384;

/// One step of a batch, in program order.
#[derive(Clone, Debug)]
pub enum Command {
    /// A kernel, or a spans dispatch of [`Staged`].
    Dispatch(Dispatch),
    /// Copy commands between memory and a DMA's own staging (an upload
    /// belt slice, or a read-back buffer: `memory::Route::Own`), for
    /// few or long spans (`memory::by_copies`: a copy command moves
    /// bytes faster than a kernel, but costs more per span); up into memory,
    /// or down.
    Copy {
        /// Up (true) or down.
        upload: bool,
        /// The spans.
        spans: Vec<Span>,
        /// The staging buffer (`memory::Route::Own`).
        buffer: wgpu::Buffer,
    },
}

/// The host's side of a batch: the bytes its uploads copy (the front of
/// its staging words), the bytes its captures fill (after them), and the
/// spans its [`SPANS`] dispatches move, each `(memory word, staging
/// word, words, 0)`.
#[derive(Clone, Debug, Default)]
pub struct Staged {
    /// Upload bytes.
    pub upload: Vec<u8>,
    /// Capture bytes.
    pub capture_bytes: u64,
    /// The spans; a capture span's staging word counts from the start of
    /// the captures until the batch is submitted.
    pub spans: Vec<[u32; 4]>,
    /// Which spans are captures.
    pub captures: Vec<usize>,
}

impl Staged {
    /// True when the batch moves nothing for the host.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Adds the spans `(memory byte, staging byte, bytes)` (multiples of 4;
    /// many short ones: the others move by copy commands,
    /// `memory::by_copies`) and returns the dispatch that moves
    /// them: up into memory, or down into the captures.
    pub fn add(&mut self, spans: &[Span], upload: bool, max_x: u32) -> Command {
        let first = self.spans.len() as u32;
        for &(at, off, len) in spans {
            if !upload {
                self.captures.push(self.spans.len());
            }
            self.spans
                .push([(at / 4) as u32, (off / 4) as u32, (len / 4) as u32, 0]);
        }
        let count = spans.len() as u32;
        let groups_x = count.clamp(1, max_x);
        let mut params = Vec::with_capacity(16);
        for v in [first, count, groups_x, 0] {
            params.extend_from_slice(&v.to_le_bytes());
        }
        Command::Dispatch(Dispatch {
            key: span_key(upload),
            params,
            grid: (groups_x, count.div_ceil(groups_x).max(1)),
        })
    }

    /// Moves the capture spans behind the upload bytes (call once, at
    /// submission).
    fn place_captures(&mut self) {
        let shift = (self.upload.len() / 4) as u32;
        for &i in &self.captures {
            self.spans[i][1] += shift;
        }
    }
}

/// The pipeline of the spans' `upload` or `capture` entry point.
fn span_key(upload: bool) -> PipelineKey {
    PipelineKey {
        shader: SPANS,
        entry: if upload { "upload" } else { "capture" },
        constants: Vec::new(),
    }
}

/// Both spans pipelines (for the portability test's list).
pub fn span_keys() -> Vec<PipelineKey> {
    vec![span_key(true), span_key(false)]
}

/// Runs `dispatches` in order on `memory` and waits for them. Returns the
/// GPU time when timestamp queries are available (the benchmarks' timing).
pub fn run(
    kernels: &Kernels,
    memory: &GpuMemory,
    dispatches: &[Dispatch],
) -> Result<Option<Duration>, DeviceError> {
    let mut gpu_time: Option<Duration> = None;
    for chunk in dispatches.chunks(DISPATCHES_PER_SUBMIT) {
        let commands: Vec<Command> = chunk.iter().cloned().map(Command::Dispatch).collect();
        if let (Some(t), _) = submit(kernels, memory, &commands, None, true)? {
            *gpu_time.get_or_insert(Duration::ZERO) += t;
        }
    }
    kernels.gpu().wait()?;
    Ok(gpu_time)
}

/// Submits `dispatches` in order on `memory` without waiting (the
/// executor's path; at most [`DISPATCHES_PER_SUBMIT`] of them), with
/// `staged`'s bytes for their spans. Returns the buffer the captures land
/// in and their bytes (its mapping not yet requested). The queue runs submissions in
/// order, so a later read-back sees their results, and its wait reports
/// their failures.
pub fn queue(
    kernels: &Kernels,
    memory: &GpuMemory,
    commands: &[Command],
    mut staged: Staged,
) -> Result<Option<(wgpu::Buffer, u64)>, DeviceError> {
    staged.place_captures();
    let bytes = staged.capture_bytes;
    // The copies out of the upload belt's chunks go in this submission.
    memory.uploads_submitting();
    let submitted = submit(kernels, memory, commands, Some(&staged), false);
    memory.uploads_submitted();
    Ok(submitted?.1.map(|b| (b, bytes)))
}

/// One submission of `dispatches`, one compute pass, with `staged`'s
/// staging and spans buffers bound for the spans dispatches; the captures
/// are copied into a readback buffer (returned). With `timed`, between
/// timestamp queries when the device has them, waited for and timed.
fn submit(
    kernels: &Kernels,
    memory: &GpuMemory,
    commands: &[Command],
    staged: Option<&Staged>,
    timed: bool,
) -> Result<(Option<Duration>, Option<wgpu::Buffer>), DeviceError> {
    let dispatches: Vec<&Dispatch> = commands
        .iter()
        .filter_map(|c| match c {
            Command::Dispatch(d) => Some(d),
            Command::Copy { .. } => None,
        })
        .collect();
    let gpu = kernels.gpu();
    let device = &gpu.device;
    let align = device.limits().min_uniform_buffer_offset_alignment as u64;
    let stride = PARAMS_BYTES.div_ceil(align) * align;
    let mut blob = vec![0u8; (stride as usize) * dispatches.len().max(1)];
    let mut pipelines = Vec::with_capacity(dispatches.len());
    for (i, d) in dispatches.iter().enumerate() {
        debug_assert!(d.params.len() as u64 <= PARAMS_BYTES);
        let at = i * stride as usize;
        blob[at..at + d.params.len()].copy_from_slice(&d.params);
        pipelines.push(kernels.pipeline(&d.key)?);
    }
    let timer = if timed { Timer::new(gpu) } else { None };
    let staged = staged.filter(|s| !s.is_empty());
    let back = match staged {
        Some(s) if s.capture_bytes > 0 => Some(memory.reads().take(gpu, s.capture_bytes)?),
        _ => None,
    };
    let capture = gpu.scoped(|| {
        // Words of `size` bytes (at least one) holding `bytes` at the front.
        let words = |label, size: u64, bytes: &[u8], extra| {
            let b = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: size.max(4).next_multiple_of(4),
                usage: wgpu::BufferUsages::STORAGE | extra,
                mapped_at_creation: true,
            });
            if let Ok(mut view) = b.get_mapped_range_mut(..bytes.len() as u64) {
                view.copy_from_slice(bytes);
            }
            b.unmap();
            b
        };
        let host = staged.map(|s| {
            let staging = words(
                "host staging",
                s.upload.len() as u64 + s.capture_bytes,
                &s.upload,
                wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            );
            let spans: Vec<u8> = bytemuck::cast_slice(&s.spans).to_vec();
            let list = words(
                "host spans",
                spans.len() as u64,
                &spans,
                wgpu::BufferUsages::empty(),
            );
            (staging, list)
        });
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("kernel params"),
            size: blob.len() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        gpu.queue.write_buffer(&params, 0, &blob);
        let mem = memory.buffer();
        let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("device memory"),
            layout: kernels.memory_layout(),
            entries: &[whole(0, mem), whole(2, mem), params_entry(&params)],
        });
        let spans_bind = host.as_ref().map(|(staging, list)| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("host spans"),
                layout: kernels.spans_layout(),
                entries: &[
                    whole(0, mem),
                    params_entry(&params),
                    whole(3, staging),
                    whole(4, list),
                ],
            })
        });
        let mut enc = device.create_command_encoder(&Default::default());
        let mut k = 0;
        let mut i = 0;
        while k < commands.len() {
            if let Command::Copy {
                upload,
                spans,
                buffer,
            } = &commands[k]
            {
                for &(at, off, len) in spans {
                    if *upload {
                        enc.copy_buffer_to_buffer(buffer, off, mem, at, len);
                    } else {
                        enc.copy_buffer_to_buffer(mem, at, buffer, off, len);
                    }
                }
                k += 1;
                continue;
            }
            // A run of dispatches: one compute pass.
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("records"),
                timestamp_writes: timer.as_ref().map(|t| t.writes()),
            });
            while let Some(Command::Dispatch(d)) = commands.get(k) {
                let group = match (&spans_bind, d.key.shader) {
                    (Some(g), s) if s == SPANS => g,
                    _ => &bind,
                };
                pass.set_pipeline(&pipelines[i]);
                pass.set_bind_group(0, group, &[(i as u64 * stride) as u32]);
                // One layer: the shaders' `opaque` relies on workgroup_id.z == 0.
                pass.dispatch_workgroups(d.grid.0, d.grid.1, 1);
                i += 1;
                k += 1;
            }
        }
        // The captures, where the host can map them.
        let capture = match (&host, staged, back) {
            (Some((staging, _)), Some(s), Some(back)) => {
                let from = s.upload.len() as u64;
                enc.copy_buffer_to_buffer(staging, from, &back, 0, s.capture_bytes);
                Some(back)
            }
            _ => None,
        };
        if let Some(t) = &timer {
            t.resolve(&mut enc);
        }
        gpu.queue.submit([enc.finish()]);
        capture
    })?;
    let time = match timer {
        Some(t) => {
            gpu.wait()?;
            Some(t.read(gpu)?)
        }
        None => None,
    };
    Ok((time, capture))
}

/// A bind group entry for all of `buffer`.
fn whole(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

/// The entry of binding 1: one parameter block, at the dynamic offset each
/// dispatch sets.
fn params_entry(params: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding: 1,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: params,
            offset: 0,
            size: wgpu::BufferSize::new(PARAMS_BYTES),
        }),
    }
}
