//! The process-wide state behind the C API: the lifecycle word (NRT-EC-2),
//! the handle registry (NRT-EC-3), the environment read at `nrt_init`
//! (NRT-EC-4), the log level and the compute backend.

use crate::status::*;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, OnceLock};
use tpb_emu::Arch;
use tpb_emu::device::gpu::BackendChoice;
use tpb_emu::model::Model;
use tpb_emu::model::backend::Backend;

// ---- Lifecycle (NRT-EC-2) -------------------------------------------------------------------

/// Process start: no `nrt_init` yet.
pub const NEVER: u8 = 0;
/// Between `nrt_init` and `nrt_close`.
pub const INIT: u8 = 1;
/// After `nrt_close`.
pub const CLOSED: u8 = 2;
/// A child forked after `nrt_init`.
pub const CHILD: u8 = 3;

/// The lifecycle word. Read without a lock, so a forked child never blocks.
pub static LIFE: AtomicU8 = AtomicU8::new(NEVER);

/// NRT-EC-2(b): the status of a gated call in the current state, or `Ok`.
pub fn gate() -> Result<(), Status> {
    match LIFE.load(Ordering::Acquire) {
        INIT => Ok(()),
        NEVER => Err(NRT_UNINITIALIZED),
        CLOSED => Err(NRT_CLOSED),
        _ => Err(NRT_FAILURE),
    }
}

/// True in a child forked after `nrt_init` (NRT-EC-2(d)): no lock may be taken.
pub fn in_child() -> bool {
    LIFE.load(Ordering::Acquire) == CHILD
}

extern "C" fn atfork_child() {
    // NRT-EC-2(d): an INIT parent's child is CHILD; only an atomic store here.
    let _ = LIFE.compare_exchange(INIT, CHILD, Ordering::AcqRel, Ordering::Acquire);
}

/// Registers the fork handler once per process (at the first `nrt_init`).
pub fn register_atfork() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `atfork_child` is an `extern "C" fn()` that only does an atomic
        // compare-exchange, which is async-signal-safe as a child handler needs.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(atfork_child)) };
        if rc != 0 {
            log(
                Level::Warn,
                "pthread_atfork failed; a forked child is not detected",
            );
        }
    });
}

// ---- Logging (NRT-EC-4) ---------------------------------------------------------------------

/// `NEURON_RT_LOG_LEVEL`'s levels, in order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Level {
    /// Nothing at all.
    Quiet = 0,
    /// Errors (the default).
    Error = 1,
    /// Warnings.
    Warn = 2,
    /// Information.
    Info = 3,
    /// Debugging.
    Debug = 4,
    /// Tracing.
    Trace = 5,
}

static LEVEL: AtomicU8 = AtomicU8::new(Level::Error as u8);

/// NRT-EC-4: a level name, any case (`WARNING` too).
pub fn parse_level(s: &str) -> Option<Level> {
    Some(match s.to_ascii_uppercase().as_str() {
        "QUIET" => Level::Quiet,
        "ERROR" => Level::Error,
        "WARN" | "WARNING" => Level::Warn,
        "INFO" => Level::Info,
        "DEBUG" => Level::Debug,
        "TRACE" => Level::Trace,
        _ => return None,
    })
}

/// Writes `msg` to stderr when `level` is enabled (never to stdout).
pub fn log(level: Level, msg: &str) {
    if level as u8 <= LEVEL.load(Ordering::Relaxed) {
        let tag = match level {
            Level::Quiet => "",
            Level::Error => "ERROR",
            Level::Warn => "WARN",
            Level::Info => "INFO",
            Level::Debug => "DEBUG",
            Level::Trace => "TRACE",
        };
        eprintln!("tpb-emu libnrt {tag}: {msg}");
    }
}

/// Logs once per process per `key` (stubs, one-time warnings).
pub fn log_once(level: Level, key: &str, msg: &str) {
    static SEEN: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Default::default);
    let first = lock(&SEEN).insert(key.to_string());
    if first {
        log(level, msg);
    }
}

/// A mutex guard whatever an earlier panic left (every entry point catches
/// panics; the registry stays consistent because each update is one insert
/// or remove).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

// ---- Environment (NRT-EC-4) -----------------------------------------------------------------

/// NRT-EC-4: `1`, `true`, `yes` (any case).
pub fn env_true(name: &str) -> bool {
    std::env::var(name)
        .is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
}

/// NRT-EC-1: which `nrt_dtype_t` numbering tensor info reports.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DtypeAbi {
    /// [H28] (`nrt.h`): the instruction set's DTYPE byte.
    H28,
    /// [H1]–[H27] (`nrt_experimental.h`).
    Legacy,
}

/// What `nrt_init` read from the environment.
#[derive(Clone, Debug)]
pub struct Config {
    /// `TPB_EMU_BACKEND`.
    pub backend: BackendChoice,
    /// `TPB_EMU_NRT_DTYPE_ABI`.
    pub dtype_abi: DtypeAbi,
    /// `TPB_EMU_ARCH`.
    pub arch: Option<Arch>,
}

/// NRT-EC-4: `NEURON_RT_VISIBLE_CORES`' grammar (`m`, `m-n`, comma lists):
/// the indices, or `None` when malformed.
fn parse_cores(s: &str) -> Option<Vec<u64>> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let num = |x: &str| -> Option<u64> {
            (!x.is_empty() && x.bytes().all(|c| c.is_ascii_digit()))
                .then(|| x.parse().ok())
                .flatten()
        };
        let (a, b) = (num(a)?, num(b)?);
        if b < a || b - a > 4096 {
            return None;
        }
        out.extend(a..=b);
    }
    Some(out)
}

/// NRT-EC-4: the environment `nrt_init` reads, or the status it fails with
/// (nothing changes on failure).
pub fn read_config() -> Result<Config, Status> {
    let mut warnings = Vec::new();
    let level = match std::env::var("NEURON_RT_LOG_LEVEL") {
        Ok(v) => parse_level(&v).unwrap_or_else(|| {
            warnings.push(format!(
                "NEURON_RT_LOG_LEVEL={v:?} is not a level; using ERROR"
            ));
            Level::Error
        }),
        Err(_) => Level::Error,
    };
    LEVEL.store(level as u8, Ordering::Relaxed);
    // NRT-EC-4: an unknown level is reported whatever the level it falls back to.
    for w in warnings.drain(..) {
        eprintln!("tpb-emu libnrt WARN: {w}");
    }
    if let Ok(v) = std::env::var("NEURON_RT_VISIBLE_CORES") {
        let Some(mut cores) = parse_cores(&v) else {
            log(
                Level::Error,
                &format!("NEURON_RT_VISIBLE_CORES={v:?} is malformed"),
            );
            return Err(NRT_INVALID);
        };
        cores.sort_unstable();
        cores.dedup();
        if cores.windows(2).any(|w| w[1] != w[0] + 1) {
            log(
                Level::Error,
                &format!("NEURON_RT_VISIBLE_CORES={v:?} is not contiguous"),
            );
            return Err(NRT_INVALID);
        }
        if cores != [0] {
            log(Level::Error, "Logical Neuron Core(s) not available");
            return Err(NRT_FAILURE);
        }
    } else if let Ok(v) = std::env::var("NEURON_RT_NUM_CORES") {
        match v.trim().parse::<u64>() {
            Ok(0 | 1) => {}
            Ok(_) => {
                log(Level::Error, "Logical Neuron Core(s) not available");
                return Err(NRT_FAILURE);
            }
            Err(_) => {
                log(
                    Level::Error,
                    &format!("NEURON_RT_NUM_CORES={v:?} is not a number"),
                );
                return Err(NRT_INVALID);
            }
        }
    }
    if let Ok(v) = std::env::var("NEURON_LOGICAL_NC_CONFIG")
        && v.trim() != "1"
    {
        log(
            Level::Warn,
            &format!("NEURON_LOGICAL_NC_CONFIG={v}: the emulator has logical cores of 1"),
        );
    }
    if std::env::var_os("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS").is_some() {
        log(
            Level::Warn,
            "NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS: executions are synchronous",
        );
    }
    if env_true("NEURON_RT_STOCHASTIC_ROUNDING_EN") {
        log(
            Level::Warn,
            "stochastic rounding is not emulated (results may differ from hardware)",
        );
    }
    let backend = match std::env::var("TPB_EMU_BACKEND") {
        Ok(v) => tpb_emu::model::backend::choice(&v).unwrap_or_else(|| {
            log(
                Level::Warn,
                &format!("TPB_EMU_BACKEND={v:?}: expected cpu, gpu or auto; using auto"),
            );
            BackendChoice::Auto
        }),
        Err(_) => BackendChoice::Auto,
    };
    let dtype_abi = match std::env::var("TPB_EMU_NRT_DTYPE_ABI") {
        Ok(v) if v == "legacy" => DtypeAbi::Legacy,
        Ok(v) => {
            log(
                Level::Warn,
                &format!("TPB_EMU_NRT_DTYPE_ABI={v:?} ignored (only \"legacy\")"),
            );
            DtypeAbi::H28
        }
        Err(_) => DtypeAbi::H28,
    };
    Ok(Config {
        backend,
        dtype_abi,
        arch: env_arch(),
    })
}

/// `TPB_EMU_ARCH` (NRT-EC-4), `None` when unset or unknown (WARN).
pub fn env_arch() -> Option<Arch> {
    let v = std::env::var("TPB_EMU_ARCH").ok()?;
    let a = Arch::from_name(&v);
    if a.is_none() {
        log(
            Level::Warn,
            &format!("TPB_EMU_ARCH={v:?}: expected sunda, cayman or mariana"),
        );
    }
    a
}

// ---- Backends ---------------------------------------------------------------------------------

/// The GPU backends, opened once per process on first use (`gpu`: any
/// adapter; `auto`: a hardware adapter, else the CPU). `Backend` is
/// `Send + Sync`, so executors on one device may be made from several threads.
static GPU: OnceLock<Result<Backend, String>> = OnceLock::new();
static AUTO: OnceLock<Result<Backend, String>> = OnceLock::new();

/// The opened backend for `choice` (the CPU one is a value, not shared).
pub fn backend(choice: BackendChoice) -> Result<&'static Backend, String> {
    static CPU: Backend = Backend::Cpu;
    let cell = match choice {
        BackendChoice::Cpu => return Ok(&CPU),
        BackendChoice::Gpu => &GPU,
        BackendChoice::Auto => &AUTO,
    };
    cell.get_or_init(|| Backend::open(choice).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(Clone::clone)
}

// ---- Registry (NRT-EC-3) ----------------------------------------------------------------------

/// A tensor's bytes: owned (zeroed, 64-byte aligned) or a caller's buffer.
pub struct Storage {
    ptr: NonNull<u8>,
    len: usize,
    owned: Owned,
}

/// Who frees a storage's bytes.
enum Owned {
    /// The caller (an attached buffer).
    No,
    /// The allocator, with this layout.
    Heap(std::alloc::Layout),
    /// A shared mapping of this memory file (large tensors).
    File {
        /// The memory file.
        _file: std::fs::File,
        /// The writable mapping `ptr` points into (unmapped on drop).
        _map: memmap2::MmapMut,
    },
}

/// Tensors of at least this many bytes live in a memory file.
const FILE_BACKED: usize = 1 << 20;

// SAFETY: the storage is plain bytes at a fixed address; every access through the
// library goes through a live handle while the registry lock or a run holds an Arc,
// and concurrent writes through `nrt_tensor_get_va` are the caller's, as in libnrt.
unsafe impl Send for Storage {}
// SAFETY: as for Send: no Rust reference to the bytes is ever held across threads.
unsafe impl Sync for Storage {}

impl Storage {
    /// `len` zero bytes, 64-byte aligned (at least one byte, so a size-0
    /// tensor still has a non-NULL address); `None` when memory is exhausted.
    pub fn zeroed(len: usize) -> Option<Storage> {
        if len >= FILE_BACKED
            && let Some(s) = Storage::file_backed(len)
        {
            return Some(s);
        }
        let layout = std::alloc::Layout::from_size_align(len.max(1), 64).ok()?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        Some(Storage {
            ptr: NonNull::new(p)?,
            len,
            owned: Owned::Heap(layout),
        })
    }

    /// `len` zero bytes in an anonymous memory file, mapped shared (page aligned).
    fn file_backed(len: usize) -> Option<Storage> {
        // SAFETY: memfd_create with a NUL-terminated name; the result is checked.
        let fd = unsafe { libc::memfd_create(c"tpb-emu-nrt-tensor".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: `fd` is a new descriptor that nothing else owns.
        let file = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        file.set_len(len as u64).ok()?;
        // SAFETY: the file is private to this storage; its size never changes while mapped.
        let mut map = unsafe { memmap2::MmapOptions::new().len(len).map_mut(&file) }.ok()?;
        Some(Storage {
            ptr: NonNull::new(map.as_mut_ptr())?,
            len,
            owned: Owned::File {
                _file: file,
                _map: map,
            },
        })
    }

    /// The caller's buffer (`nrt_tensor_attach_buffer`); never freed here.
    pub fn attached(ptr: *mut u8, len: usize) -> Storage {
        Storage {
            ptr: NonNull::new(ptr).unwrap_or(NonNull::dangling()),
            len,
            owned: Owned::No,
        }
    }

    /// The first byte's address.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        if let Owned::Heap(layout) = self.owned {
            // SAFETY: `ptr` came from `alloc_zeroed(layout)` and is freed once, here.
            unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) };
        }
    }
}

/// A tensor: a view of `size` bytes at `offset` of its storage.
pub struct Tensor {
    /// None for an empty tensor (`nrt_tensor_allocate_empty`).
    pub storage: Option<Arc<Storage>>,
    /// The view's start in the storage.
    pub offset: usize,
    /// The view's size.
    pub size: usize,
    /// The placement (VIRTUAL once a buffer is attached).
    pub placement: u32,
    /// Successful runs that wrote it as an output since the last reset.
    pub completions: u64,
}

impl Tensor {
    /// The view's first byte, when it has storage.
    pub fn va(&self) -> Option<*mut u8> {
        self.storage
            .as_ref()
            .map(|s| s.ptr().wrapping_add(self.offset))
    }
}

/// A public input or output of a loaded model (NRT-EC-17).
#[derive(Clone, Debug)]
pub struct Io {
    /// The name.
    pub name: String,
    /// def.json's size in bytes.
    pub size: usize,
    /// neff.json's dltype string.
    pub dltype: String,
    /// neff.json's shape.
    pub shape: Vec<u32>,
}

/// A loaded model.
pub struct LoadedModel {
    /// The model API's model.
    pub model: Model,
    /// Inputs, ascending bytewise name order.
    pub inputs: Vec<Io>,
    /// Outputs, ascending bytewise name order.
    pub outputs: Vec<Io>,
    /// Held by a run: two runs of one model are serialised, and unload waits.
    pub running: Mutex<()>,
    /// The backend chosen at `nrt_init`.
    pub backend: BackendChoice,
    /// `NEURON_RT_EXEC_TIMEOUT` as read at load (`None`: no limit).
    pub timeout: Option<std::time::Duration>,
}

/// Everything the handles name.
#[derive(Default)]
pub struct Registry {
    /// Models by handle.
    pub models: HashMap<usize, Arc<LoadedModel>>,
    /// Tensors by handle.
    pub tensors: HashMap<usize, Tensor>,
    /// Tensor sets by handle: name → tensor handle.
    pub sets: HashMap<usize, BTreeMap<Vec<u8>, usize>>,
    /// Live tensor-info arrays (malloc addresses).
    pub infos: HashSet<usize>,
    /// The last token handed out (an offset into the reserved range).
    next: usize,
}

/// The registry, made on first use (never at library load).
pub static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(Default::default);

/// The configuration of the current INIT period.
pub static CONFIG: Mutex<Option<Config>> = Mutex::new(None);

/// Bytes of address space reserved for handle tokens.
const TOKEN_SPACE: usize = 1 << 32;
/// The step between tokens.
const TOKEN_STEP: usize = 16;

/// NRT-EC-3: the base of a `PROT_NONE` range that no client object can
/// occupy; tokens are handed out from it in order and never reused.
fn token_base() -> Option<usize> {
    static BASE: OnceLock<Option<usize>> = OnceLock::new();
    *BASE.get_or_init(|| {
        // SAFETY: an anonymous PROT_NONE reservation at an address the kernel picks;
        // nothing is mapped over existing memory and the range is never accessed.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                TOKEN_SPACE,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        (p != libc::MAP_FAILED).then_some(p as usize)
    })
}

impl Registry {
    /// NRT-EC-3: a new, never reused handle (`None`: the space is spent).
    pub fn token(&mut self) -> Option<usize> {
        let base = token_base()?;
        if self.next + TOKEN_STEP >= TOKEN_SPACE {
            return None;
        }
        self.next += TOKEN_STEP;
        Some(base + self.next)
    }

    /// NRT-EC-3's teardown at `nrt_close`: every model, tensor and set goes;
    /// caller-attached buffers and tensor-info arrays stay.
    pub fn clear(&mut self) {
        self.models.clear();
        self.tensors.clear();
        self.sets.clear();
    }
}

/// The registry, locked.
pub fn registry() -> MutexGuard<'static, Registry> {
    lock(&REGISTRY)
}
