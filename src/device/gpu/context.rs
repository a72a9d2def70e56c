//! Getting a device: adapter discovery, backend choice and error capture.
//!
//! Running kernels on a device is `pool`'s job; tests and benchmarks
//! create a [`Gpu`] once and hand it to executors.

use super::types::{PARAMS_BYTES, PipelineKey, Shader};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// How long a submission may run before [`DeviceError::Timeout`].
pub const SUBMIT_TIMEOUT: Duration = Duration::from_secs(120);

pub use crate::device::gpu_error::{DeviceError, no_adapter_hint};

/// What `--backend` asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// Any adapter, software ones (lavapipe) included.
    Gpu,
    /// The CPU reference executor.
    Cpu,
    /// The first hardware adapter (discrete, then integrated, then virtual),
    /// else the CPU backend: a software adapter runs compute slower than the
    /// CPU backend, so auto never picks one.
    #[default]
    Auto,
}

/// A printable summary of one adapter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSummary {
    /// The adapter's name.
    pub name: String,
    /// The API backend (Vulkan, Metal, …).
    pub backend: String,
    /// Discrete, integrated, virtual, CPU or other.
    pub device_type: wgpu::DeviceType,
    /// Driver name and version.
    pub driver: String,
    /// Why the device cannot run on it (never chosen), or `None`.
    pub unsuitable: Option<String>,
}

impl From<&wgpu::AdapterInfo> for AdapterSummary {
    fn from(i: &wgpu::AdapterInfo) -> Self {
        AdapterSummary {
            name: i.name.clone(),
            backend: format!("{:?}", i.backend),
            device_type: i.device_type,
            driver: format!("{} {}", i.driver, i.driver_info).trim().to_owned(),
            unsuitable: None,
        }
    }
}

impl AdapterSummary {
    /// The summary of `adapter`, with whether the device can run on it.
    pub fn of(adapter: &wgpu::Adapter) -> AdapterSummary {
        AdapterSummary {
            unsuitable: unsuitable(adapter),
            ..(&adapter.get_info()).into()
        }
    }
}

/// Storage buffers a kernel binds (device memory as words and as vec4s).
const STORAGE_BUFFERS_NEEDED: u32 = 2;

/// Why the device cannot run on `adapter`: no compute shaders (GLES 3.0,
/// WebGL), too few storage buffers per stage, or a storage binding too small
/// for the largest generation's SBUF+PSUM.
pub fn unsuitable(adapter: &wgpu::Adapter) -> Option<String> {
    let compute = adapter
        .get_downlevel_capabilities()
        .flags
        .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS);
    let limits = adapter.limits();
    let need = crate::limits::Arch::ALL
        .iter()
        .map(|&a| super::types::memory_bytes(a))
        .max()
        .unwrap_or(0);
    if !compute {
        Some("no compute shaders".into())
    } else if limits.max_storage_buffers_per_shader_stage < STORAGE_BUFFERS_NEEDED {
        Some(format!(
            "{} storage buffers per stage (needs {STORAGE_BUFFERS_NEEDED})",
            limits.max_storage_buffers_per_shader_stage
        ))
    } else if limits.max_storage_buffer_binding_size < need || limits.max_buffer_size < need {
        Some(format!(
            "storage binding limit {} bytes (SBUF+PSUM need {need})",
            limits
                .max_storage_buffer_binding_size
                .min(limits.max_buffer_size)
        ))
    } else {
        None
    }
}

/// The instance, built from the environment: `WGPU_BACKEND` narrows the
/// backends, `WGPU_DX12_COMPILER`, `WGPU_GLES_MINOR_VERSION` and the other
/// `WGPU_*` variables set the backends' options and flags.
pub fn instance() -> wgpu::Instance {
    wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle().with_env())
}

/// Every adapter the environment offers.
pub fn adapters(instance: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all().with_env()))
}

/// Rank of an adapter for `auto` (lower is better); `None` = never auto-chosen.
/// Unsuitable adapters are never chosen at all (see [`choose`]).
fn auto_rank(t: wgpu::DeviceType) -> Option<u8> {
    match t {
        wgpu::DeviceType::DiscreteGpu => Some(0),
        wgpu::DeviceType::IntegratedGpu => Some(1),
        wgpu::DeviceType::VirtualGpu => Some(2),
        wgpu::DeviceType::Other => Some(3),
        wgpu::DeviceType::Cpu => None,
    }
}

/// Picks an adapter index for `choice`: `None` means "use the CPU backend"
/// (for `Auto`) or "no adapter" (for `Gpu`). `Cpu` always gives `None`.
pub fn choose(infos: &[AdapterSummary], choice: BackendChoice) -> Option<usize> {
    let best = |rank: &dyn Fn(wgpu::DeviceType) -> Option<u8>| {
        (0..infos.len())
            .filter(|&i| infos[i].unsuitable.is_none())
            .filter_map(|i| rank(infos[i].device_type).map(|r| (r, i)))
            .min()
            .map(|(_, i)| i)
    };
    match choice {
        BackendChoice::Cpu => None,
        BackendChoice::Auto => best(&auto_rank),
        BackendChoice::Gpu => best(&|t| Some(auto_rank(t).unwrap_or(4))),
    }
}

/// An open GPU device: a cheap, owned handle (`Clone`, `Send + Sync`) that
/// every executor on the device shares, with the device, its queue, error
/// capture and one pipeline cache ([`super::kernels::Kernels`]) behind it.
/// The device closes when the last handle is dropped.
#[derive(Clone)]
pub struct Gpu {
    shared: Arc<GpuDevice>,
}

/// What the handles of one [`Gpu`] share (reached through `Deref`): the
/// device and queue with error capture installed.
pub struct GpuDevice {
    /// The wgpu device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// The adapter it came from.
    pub adapter: AdapterSummary,
    /// Whether GPU timestamp queries are enabled.
    pub timestamps: bool,
    uncaptured: Arc<Mutex<Option<DeviceError>>>,
    lost: Arc<Mutex<Option<String>>>,
    layouts: Layouts,
    cache: Cache,
}

impl std::ops::Deref for Gpu {
    type Target = GpuDevice;
    fn deref(&self) -> &GpuDevice {
        &self.shared
    }
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("adapter", &self.adapter)
            .finish()
    }
}

/// The layouts every kernel shares: binding 0 the memory as u32 words, 1
/// the parameter block (dynamic offset), 2 the memory as 16-byte words;
/// and the host spans' layout (bindings 0, 1, 3 and 4).
pub(crate) struct Layouts {
    pub(crate) memory: wgpu::BindGroupLayout,
    pub(crate) memory_pipeline: wgpu::PipelineLayout,
    pub(crate) spans: wgpu::BindGroupLayout,
    pub(crate) spans_pipeline: wgpu::PipelineLayout,
}

impl Layouts {
    /// The layouts on `device` (its caller catches errors in a scope).
    pub(crate) fn new(device: &wgpu::Device) -> Layouts {
        let storage = |binding| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                // The spans' list (binding 4) is only read.
                ty: wgpu::BufferBindingType::Storage {
                    read_only: binding == 4,
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let params = wgpu::BindGroupLayoutEntry {
            binding: 1,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: true,
                min_binding_size: wgpu::BufferSize::new(PARAMS_BYTES),
            },
            count: None,
        };
        let memory = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("device memory"),
            entries: &[storage(0), storage(2), params],
        });
        let spans = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("host spans"),
            entries: &[storage(0), params, storage(3), storage(4)],
        });
        let memory_pipeline = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("device memory"),
            bind_group_layouts: &[Some(&memory)],
            immediate_size: 0,
        });
        let spans_pipeline = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("host spans"),
            bind_group_layouts: &[Some(&spans)],
            immediate_size: 0,
        });
        Layouts {
            memory,
            memory_pipeline,
            spans,
            spans_pipeline,
        }
    }
}

/// The compiled modules and pipelines of one device ([`Gpu`] holds one;
/// [`super::kernels::Kernels`] fills it).
#[derive(Default)]
pub(crate) struct Cache {
    pub(crate) modules: Mutex<HashMap<Shader, wgpu::ShaderModule>>,
    pub(crate) pipelines: Mutex<HashMap<PipelineKey, wgpu::ComputePipeline>>,
}

/// Locks `m`; a thread that panicked holding it left a map still whole.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Gpu {
    /// Opens the adapter `choice` selects (`Cpu` is an error here: there is no GPU to open).
    pub fn open(choice: BackendChoice) -> Result<Gpu, DeviceError> {
        let inst = instance();
        let list = adapters(&inst);
        let infos: Vec<AdapterSummary> = list.iter().map(AdapterSummary::of).collect();
        let kind = match choice {
            BackendChoice::Auto => " (auto picks hardware adapters only)",
            _ => "",
        };
        let i = choose(&infos, choice).ok_or_else(|| DeviceError::NoAdapter(kind.into()))?;
        Gpu::from_adapter(&list[i])
    }

    /// Opens a device on `adapter`, asking for the adapter's own limits and,
    /// when offered, timestamp queries.
    pub fn from_adapter(adapter: &wgpu::Adapter) -> Result<Gpu, DeviceError> {
        let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let desc = wgpu::DeviceDescriptor {
            label: Some("tpb-emu"),
            required_features: if timestamps {
                wgpu::Features::TIMESTAMP_QUERY
            } else {
                wgpu::Features::empty()
            },
            required_limits: adapter.limits(),
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc))
            .map_err(|e| DeviceError::NoAdapter(format!(" (request_device: {e})")))?;
        let uncaptured: Arc<Mutex<Option<DeviceError>>> = Arc::default();
        let lost: Arc<Mutex<Option<String>>> = Arc::default();
        {
            let slot = uncaptured.clone();
            device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
                lock(&slot).get_or_insert(classify(e));
            }));
            let slot = lost.clone();
            device.set_device_lost_callback(move |reason, msg| {
                lock(&slot).get_or_insert(format!("{reason:?}: {msg}"));
            });
        }
        let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let val = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let layouts = Layouts::new(&device);
        let v = pollster::block_on(val.pop());
        let o = pollster::block_on(oom.pop());
        if let Some(e) = v.or(o) {
            return Err(classify(e));
        }
        Ok(Gpu {
            shared: Arc::new(GpuDevice {
                device,
                queue,
                adapter: (&adapter.get_info()).into(),
                timestamps,
                uncaptured,
                lost,
                layouts,
                cache: Cache::default(),
            }),
        })
    }
}

impl GpuDevice {
    /// The layouts every kernel binds.
    pub(crate) fn layouts(&self) -> &Layouts {
        &self.layouts
    }

    /// The device's pipeline cache.
    pub(crate) fn cache(&self) -> &Cache {
        &self.cache
    }

    /// Runs `f` inside validation and out-of-memory error scopes and returns
    /// its value or the first error it raised.
    pub fn scoped<T>(&self, f: impl FnOnce() -> T) -> Result<T, DeviceError> {
        self.check_lost()?;
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let val = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = f();
        let v = pollster::block_on(val.pop());
        let o = pollster::block_on(oom.pop());
        if let Some(e) = v.or(o) {
            return Err(classify(e));
        }
        self.check_lost()?;
        Ok(out)
    }

    /// Waits for all submitted work, with [`SUBMIT_TIMEOUT`].
    pub fn wait(&self) -> Result<(), DeviceError> {
        let r = self.device.poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(SUBMIT_TIMEOUT),
        });
        match r {
            Ok(_) => {}
            Err(wgpu::PollError::Timeout) => return Err(DeviceError::Timeout(SUBMIT_TIMEOUT)),
            Err(e) => return Err(DeviceError::Lost(e.to_string())),
        }
        self.check_lost()
    }

    /// The first uncaptured error or device loss seen so far.
    pub fn check_lost(&self) -> Result<(), DeviceError> {
        if let Some(m) = lock(&self.lost).clone() {
            return Err(DeviceError::Lost(m));
        }
        if let Some(e) = lock(&self.uncaptured).take() {
            return Err(e);
        }
        Ok(())
    }
}

fn classify(e: wgpu::Error) -> DeviceError {
    match e {
        wgpu::Error::OutOfMemory { .. } => DeviceError::OutOfMemory(e.to_string()),
        wgpu::Error::Validation { description, .. } => DeviceError::Validation(description),
        wgpu::Error::Internal { description, .. } => DeviceError::Lost(description),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(t: wgpu::DeviceType) -> AdapterSummary {
        AdapterSummary {
            name: format!("{t:?}"),
            backend: "Vulkan".into(),
            device_type: t,
            driver: String::new(),
            unsuitable: None,
        }
    }

    #[test]
    fn auto_never_picks_a_software_adapter() {
        use wgpu::DeviceType::*;
        let lavapipe = [info(Cpu)];
        assert_eq!(choose(&lavapipe, BackendChoice::Auto), None);
        assert_eq!(choose(&lavapipe, BackendChoice::Gpu), Some(0));
        assert_eq!(choose(&lavapipe, BackendChoice::Cpu), None);
        let mixed = [info(Cpu), info(IntegratedGpu), info(DiscreteGpu)];
        assert_eq!(choose(&mixed, BackendChoice::Auto), Some(2));
        assert_eq!(choose(&mixed, BackendChoice::Gpu), Some(2));
        assert_eq!(choose(&[], BackendChoice::Gpu), None);
    }

    #[test]
    fn unsuitable_adapters_are_never_chosen() {
        use wgpu::DeviceType::*;
        let gles30 = AdapterSummary {
            unsuitable: Some("no compute shaders".into()),
            ..info(DiscreteGpu)
        };
        assert_eq!(
            choose(std::slice::from_ref(&gles30), BackendChoice::Gpu),
            None
        );
        assert_eq!(
            choose(std::slice::from_ref(&gles30), BackendChoice::Auto),
            None
        );
        assert_eq!(choose(&[gles30, info(Cpu)], BackendChoice::Gpu), Some(1));
    }
}
