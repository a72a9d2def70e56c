//! Getting a device: adapter discovery, backend choice and error capture.
//!
//! Running kernels on a device is [`super::pool`]'s job; tests and benchmarks
//! create a [`Gpu`] once and hand it to executors.

use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a submission may run before [`DeviceError::Timeout`].
pub const SUBMIT_TIMEOUT: Duration = Duration::from_secs(120);

/// Every GPU failure, as a value (STYLE: "GPU errors are values").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// No adapter (or none of the requested kind).
    #[error(
        "no GPU adapter found{0}; install a Vulkan driver (headless Debian/Ubuntu: \
         apt-get install mesa-vulkan-drivers libvulkan1) or use --backend cpu"
    )]
    NoAdapter(String),
    /// wgpu reported a validation error.
    #[error("GPU validation error: {0}")]
    Validation(String),
    /// The device was lost (or destroyed).
    #[error("GPU device lost: {0}")]
    Lost(String),
    /// A submission did not finish in time.
    #[error("GPU submission timed out after {0:?}")]
    Timeout(Duration),
    /// An allocation failed.
    #[error("GPU out of memory: {0}")]
    OutOfMemory(String),
}

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
}

impl From<&wgpu::AdapterInfo> for AdapterSummary {
    fn from(i: &wgpu::AdapterInfo) -> Self {
        AdapterSummary {
            name: i.name.clone(),
            backend: format!("{:?}", i.backend),
            device_type: i.device_type,
            driver: format!("{} {}", i.driver, i.driver_info).trim().to_owned(),
        }
    }
}

/// The instance: every backend, narrowed by `WGPU_BACKEND` when set.
pub fn instance() -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::all().with_env();
    wgpu::Instance::new(desc)
}

/// Every adapter the environment offers.
pub fn adapters(instance: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all().with_env()))
}

/// Rank of an adapter for `auto` (lower is better); `None` = never auto-chosen.
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

/// A device and queue with error capture installed.
pub struct Gpu {
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
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("adapter", &self.adapter)
            .finish()
    }
}

impl Gpu {
    /// Opens the adapter `choice` selects (`Cpu` is an error here: there is no GPU to open).
    pub fn open(choice: BackendChoice) -> Result<Gpu, DeviceError> {
        let inst = instance();
        let list = adapters(&inst);
        let infos: Vec<AdapterSummary> = list.iter().map(|a| (&a.get_info()).into()).collect();
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
                let mut s = slot.lock().unwrap_or_else(|p| p.into_inner());
                s.get_or_insert(classify(e));
            }));
            let slot = lost.clone();
            device.set_device_lost_callback(move |reason, msg| {
                let mut s = slot.lock().unwrap_or_else(|p| p.into_inner());
                s.get_or_insert(format!("{reason:?}: {msg}"));
            });
        }
        Ok(Gpu {
            device,
            queue,
            adapter: (&adapter.get_info()).into(),
            timestamps,
            uncaptured,
            lost,
        })
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
        if let Some(m) = self.lost.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            return Err(DeviceError::Lost(m));
        }
        if let Some(e) = self
            .uncaptured
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
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
}
