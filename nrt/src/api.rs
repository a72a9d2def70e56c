//! The functions of SPEC-NRT §5 and the ones §8 implements, with their
//! [H28] C signatures (`nrt/include/nrt/nrt.h`).
//!
//! Pointer arguments are checked for NULL and handles looked up in the
//! registry before anything is dereferenced (NRT-EC-3); out-arguments are
//! written only on success.

use crate::state::{self, CHILD, CLOSED, Config, DtypeAbi, INIT, Io, LIFE, Level, LoadedModel};
use crate::state::{Storage, Tensor, gate, in_child, log, registry};
use crate::status::*;
use crate::{guard, guard_status};
use std::collections::{BTreeMap, HashMap};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
use tpb_emu::files::{HostBytes, Input};
use tpb_emu::model::{LoadError, LoadOptions, ModelError, RunOptions};
use tpb_emu::neff::{NeffError, NeffFault};
use tpb_emu::runtime::RunError;

/// `nrt_tensor_placement_t`.
const PLACEMENT_DEVICE: u32 = 0;
const PLACEMENT_VIRTUAL: u32 = 2;

/// `nrt_tensor_info_t` (SPEC-NRT §2.2): 296 bytes, 8-aligned.
#[repr(C)]
pub struct TensorInfoC {
    /// NUL-terminated name.
    pub name: [c_char; 256],
    /// 0 input, 1 output.
    pub usage: u32,
    /// Bytes.
    pub size: usize,
    /// `nrt_dtype_t` (NRT-EC-1).
    pub dtype: u32,
    /// `ndim` dimensions (never NULL).
    pub shape: *mut u32,
    /// Dimensions.
    pub ndim: u32,
}

const _: () = assert!(std::mem::size_of::<TensorInfoC>() == 296);
const _: () = assert!(std::mem::align_of::<TensorInfoC>() == 8);
const _: () = assert!(std::mem::offset_of!(TensorInfoC, usage) == 256);
const _: () = assert!(std::mem::offset_of!(TensorInfoC, size) == 264);
const _: () = assert!(std::mem::offset_of!(TensorInfoC, dtype) == 272);
const _: () = assert!(std::mem::offset_of!(TensorInfoC, shape) == 280);
const _: () = assert!(std::mem::offset_of!(TensorInfoC, ndim) == 288);

/// Bytes before the first entry of `nrt_tensor_info_array_t`.
const INFO_HEADER: usize = 8;

/// The configuration of the current INIT period.
fn config() -> Config {
    state::lock(&state::CONFIG).clone().unwrap_or(Config {
        backend: tpb_emu::device::gpu::BackendChoice::Auto,
        dtype_abi: DtypeAbi::H28,
        arch: None,
    })
}

/// Writes `v` through `out` when it is not NULL; `Err(NRT_INVALID)` when it is.
///
/// # Safety
/// `out` is NULL or valid for a write of `T`.
unsafe fn put<T>(out: *mut T, v: T) -> Result<(), Status> {
    if out.is_null() {
        return Err(NRT_INVALID);
    }
    // SAFETY: non-NULL, and the caller's contract makes it writable.
    unsafe { out.write_unaligned(v) };
    Ok(())
}

/// A C string's bytes (NULL → `None`).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn cstr<'a>(p: *const c_char) -> Option<&'a [u8]> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    Some(unsafe { CStr::from_ptr(p) }.to_bytes())
}

// ---- 5.1–5.6 Lifecycle, version, instance, counts ----------------------------------------------

/// 5.1 `nrt_init` (NRT-EC-2(a), NRT-EC-5).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_init(framework: c_int, _fw: *const c_char, _fal: *const c_char) -> Status {
    guard_status("nrt_init", || {
        match LIFE.load(Ordering::Acquire) {
            INIT => return Ok(()),
            CHILD => return Err(NRT_FAILURE),
            _ => {}
        }
        // NRT-EC-5: framework outside 0..5.
        if !(0..=5).contains(&framework) {
            log(
                Level::Error,
                &format!("nrt_init: bad framework tag {framework}"),
            );
            return Err(NRT_INVALID);
        }
        let cfg = state::read_config()?;
        if cfg.backend == tpb_emu::device::gpu::BackendChoice::Gpu {
            // NRT-EC-4: `gpu` without an adapter fails here, as the runtime without a device.
            if let Err(e) = state::backend(cfg.backend) {
                log(Level::Error, &format!("nrt_init: no GPU: {e}"));
                return Err(NRT_INVALID);
            }
        }
        state::register_atfork();
        log(Level::Info, &format!("nrt_init: backend {:?}", cfg.backend));
        *state::lock(&state::CONFIG) = Some(cfg);
        LIFE.store(INIT, Ordering::Release);
        Ok(())
    })
}

/// 5.2 `nrt_close`: NRT-EC-3's teardown, then CLOSED. NRT-EC-6: returns 0
/// as a 32-bit integer for callers that read one.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_close() -> Status {
    guard("nrt_close", 0, || {
        if LIFE.load(Ordering::Acquire) != INIT {
            return 0;
        }
        LIFE.store(CLOSED, Ordering::Release);
        let models: Vec<Arc<LoadedModel>> = {
            let mut r = registry();
            let m = r.models.drain().map(|(_, m)| m).collect();
            r.clear();
            m
        };
        // Wait for running executions, as nrt_unload does.
        for m in models {
            drop(state::lock(&m.running));
        }
        0
    })
}

/// `nrt_version_t` ([H27]+): 224 bytes.
const VERSION_SIZE: usize = 224;

/// 5.3 `nrt_get_version` (NRT-EC-7).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_get_version(ver: *mut u8, size: usize) -> Status {
    guard_status("nrt_get_version", || {
        if ver.is_null() {
            return Err(NRT_INVALID);
        }
        if size < 160 {
            log(Level::Error, "nrt_get_version: Size is < 160");
            return Err(NRT_FAILURE);
        }
        let crate_version = env!("CARGO_PKG_VERSION");
        let mut buf = [0u8; VERSION_SIZE];
        for (i, n) in [2u64, 30, 50, 0].iter().enumerate() {
            buf[i * 8..i * 8 + 8].copy_from_slice(&n.to_ne_bytes());
        }
        let detail = format!("libnrt version 2.30.50.0 (tpb-emu {crate_version})");
        let d = &detail.as_bytes()[..detail.len().min(127)];
        buf[32..32 + d.len()].copy_from_slice(d);
        let hash = format!("tpb-emu-{crate_version}");
        let h = &hash.as_bytes()[..hash.len().min(40)];
        buf[160..160 + h.len()].copy_from_slice(h);
        // The numbers and rt_detail always; git_hash only when size > 200; never at or past size.
        let mut end = 160;
        if size > 200 {
            end = size.min(VERSION_SIZE);
        }
        // SAFETY: `ver` is non-NULL and the caller gave `size` ≥ `end` writable bytes.
        unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), ver, end) };
        Ok(())
    })
}

/// 5.4 `nrt_get_status_as_str` (NRT-EC-8): static, never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_get_status_as_str(status: Status) -> *const c_char {
    guard("nrt_get_status_as_str", UNKNOWN.as_ptr().cast(), || {
        NAMES
            .iter()
            .find(|(s, _)| *s == status)
            .map_or(UNKNOWN, |(_, n)| n)
            .as_ptr()
            .cast()
    })
}

/// 5.5 `nrt_get_instance_info` (NRT-EC-9).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_get_instance_info(info: *mut u8, len: usize) -> Status {
    guard_status("nrt_get_instance_info", || {
        if info.is_null() {
            return Err(NRT_INVALID);
        }
        static VALUE: OnceLock<[u8; 32]> = OnceLock::new();
        let v = VALUE.get_or_init(|| {
            let (family, name): (u32, &[u8]) = match state::env_arch() {
                Some(tpb_emu::Arch::Sunda) => (2, b"trn1"),
                Some(tpb_emu::Arch::Mariana) => (14, b"trn3"),
                _ => (5, b"trn2"),
            };
            let mut b = [0u8; 32];
            b[0..4].copy_from_slice(&family.to_ne_bytes());
            b[4..8].copy_from_slice(&9u32.to_ne_bytes());
            b[8..8 + name.len()].copy_from_slice(name);
            b[24..27].copy_from_slice(b"emu");
            b
        });
        if len > 32 {
            state::log_once(
                Level::Warn,
                "instance_info_len",
                "nrt_get_instance_info: length above 32",
            );
        }
        let n = len.min(32);
        // SAFETY: `info` is non-NULL and the caller gave `len` ≥ `n` writable bytes.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), info, n) };
        Ok(())
    })
}

/// 5.6: every count is 1, before `nrt_init` too.
fn count(name: &str, out: *mut u32) -> Status {
    // SAFETY: `out` is NULL or a `uint32_t *` from the caller.
    guard_status(name, || unsafe { put(out, 1) })
}

/// 5.6 `nrt_get_total_nc_count`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_get_total_nc_count(out: *mut u32) -> Status {
    count("nrt_get_total_nc_count", out)
}

/// 5.6 `nrt_get_total_vnc_count`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_get_total_vnc_count(out: *mut u32) -> Status {
    count("nrt_get_total_vnc_count", out)
}

/// 5.6 `nrt_get_visible_nc_count`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_get_visible_nc_count(out: *mut u32) -> Status {
    count("nrt_get_visible_nc_count", out)
}

/// 5.6 `nrt_get_visible_vnc_count`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_get_visible_vnc_count(out: *mut u32) -> Status {
    count("nrt_get_visible_vnc_count", out)
}

// ---- 5.7–5.11 Models ---------------------------------------------------------------------------

/// NRT-EC-16: a model-API failure's status.
fn model_status(e: &ModelError) -> Status {
    match e {
        ModelError::Run(r) => match r {
            RunError::Deadlock(_) | RunError::WorkBudget { .. } | RunError::RecordBudget { .. } => {
                NRT_TIMEOUT
            }
            RunError::Backend(_) => NRT_HW_ERROR,
            _ => NRT_EXEC_COMPLETED_WITH_ERR,
        },
        _ => NRT_INVALID,
    }
}

/// The model's public tensors in NRT-EC-17's order, or why it cannot be
/// described (`nrt_load` 2).
fn describe(m: &tpb_emu::model::Model) -> Result<(Vec<Io>, Vec<Io>), String> {
    let neff = m.neff().ok_or("not a NEFF")?;
    let group = |ts: &[tpb_emu::neff::IoTensor], infos: Vec<tpb_emu::model::TensorInfo>| {
        let mut out = Vec::new();
        for t in ts {
            // NRT-EC-11: 1–255 bytes without NUL.
            if t.name.is_empty() || t.name.len() > 255 || t.name.contains('\0') {
                return Err(format!("tensor name {:?} is not 1 to 255 bytes", t.name));
            }
            if t.shape.len() > 32 {
                return Err(format!(
                    "tensor {}: {} dimensions (at most 32)",
                    t.name,
                    t.shape.len()
                ));
            }
            let shape = t
                .shape
                .iter()
                .map(|&d| u32::try_from(d))
                .collect::<Result<Vec<u32>, _>>()
                .map_err(|_| format!("tensor {}: a dimension of 2^32 or more", t.name))?;
            let size = infos
                .iter()
                .find(|i| i.name == t.name)
                .map(|i| i.bytes)
                .ok_or_else(|| format!("tensor {} has no variable", t.name))?;
            let size =
                usize::try_from(size).map_err(|_| format!("tensor {} is too large", t.name))?;
            out.push(Io {
                name: t.name.clone(),
                size,
                dltype: t.dltype.clone(),
                shape,
            });
        }
        out.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        Ok(out)
    };
    Ok((
        group(&neff.inputs, m.inputs())?,
        group(&neff.outputs, m.outputs())?,
    ))
}

/// 5.7 `nrt_load` (NRT-EC-10, NRT-EC-16).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_load(
    bytes: *const u8,
    size: usize,
    vnc: i32,
    vnc_count: i32,
    model: *mut *mut c_void,
) -> Status {
    guard_status("nrt_load", || load(bytes, size, vnc, vnc_count, model))
}

fn load(
    bytes: *const u8,
    size: usize,
    vnc: i32,
    vnc_count: i32,
    model: *mut *mut c_void,
) -> Result<(), Status> {
    gate()?;
    if bytes.is_null() || model.is_null() {
        return Err(NRT_INVALID);
    }
    if size < 1024 {
        log(
            Level::Error,
            &format!("nrt_load: Invalid number of NEFF bytes received {size:x}"),
        );
        return Err(NRT_INVALID);
    }
    if vnc != -1 && vnc != 0 {
        log(
            Level::Error,
            &format!("nrt_load: vnc {vnc}: the emulator has core 0 only"),
        );
        return Err(NRT_INVALID);
    }
    match vnc_count {
        -1..=1 => {}
        c if c >= 2 => {
            log(
                Level::Error,
                &format!("nrt_load: vnc_count {c}: the emulator has one core"),
            );
            return Err(NRT_LOAD_NOT_ENOUGH_NC);
        }
        c => {
            log(Level::Error, &format!("nrt_load: vnc_count {c}"));
            return Err(NRT_INVALID);
        }
    }
    let cfg = config();
    // SAFETY: `bytes` is non-NULL and the caller gives `size` readable bytes; they are copied,
    // so the caller may free them when this returns.
    let data = unsafe { std::slice::from_raw_parts(bytes, size) }.to_vec();
    let mut opts = LoadOptions {
        // NRT-EC-4: the runtime's default, unlike the CLI's NEFF-EC-2.
        verify: state::env_true("NEURON_RT_VALIDATE_HASH"),
        strict: false,
        arch: cfg.arch,
    };
    // NRT-EC-4 `NEURON_RT_ALLOW_LEGACY_NEFF`: NEFF-EC-17's arch mismatch only warns, and the
    // NEFF runs on its own generation. The bytes are kept for that second reading only when
    // a mismatch is possible (TPB_EMU_ARCH set).
    let legacy = cfg.arch.is_some() && state::env_true("NEURON_RT_ALLOW_LEGACY_NEFF");
    let retry = legacy.then(|| data.clone());
    let m = match tpb_emu::model::Model::from_neff_bytes(data, "NEFF", &opts) {
        Ok(m) => m,
        Err(e) if retry.is_some() && arch_mismatch(&e) => {
            log(
                Level::Warn,
                &format!("nrt_load: {e} (NEURON_RT_ALLOW_LEGACY_NEFF: loaded for the NEFF's arch)"),
            );
            opts.arch = None;
            let data = retry.unwrap_or_default();
            tpb_emu::model::Model::from_neff_bytes(data, "NEFF", &opts).map_err(|e| {
                log(Level::Error, &format!("nrt_load: {e}"));
                load_status(&e)
            })?
        }
        Err(e) => {
            log(Level::Error, &format!("nrt_load: {e}"));
            return Err(load_status(&e));
        }
    };
    for w in m.warnings() {
        log(Level::Warn, &format!("nrt_load: {w}"));
    }
    // SPEC-NEFF §6 step 14 without the run: rejected programs fail here, not at execute.
    m.validate().map_err(|e| {
        log(Level::Error, &format!("nrt_load: {e}"));
        NRT_INVALID
    })?;
    let (inputs, outputs) = describe(&m).map_err(|e| {
        log(Level::Error, &format!("nrt_load: {e}"));
        NRT_INVALID
    })?;
    let loaded = Arc::new(LoadedModel {
        model: m,
        inputs,
        outputs,
        running: Mutex::new(()),
        backend: cfg.backend,
        timeout: exec_timeout(),
    });
    let mut r = registry();
    // A close while loading: the model is not registered.
    gate()?;
    let h = r.token().ok_or(NRT_RESOURCE)?;
    r.models.insert(h, loaded);
    // SAFETY: `model` is non-NULL (checked above).
    unsafe { put(model, h as *mut c_void) }
}

/// The NEFF reader's failure, if `e` is one.
fn neff_error(e: &ModelError) -> Option<&NeffError> {
    match e {
        ModelError::Load(l) => match &**l {
            LoadError::Neff { source, .. } => Some(source),
            _ => None,
        },
        _ => None,
    }
}

/// NEFF-EC-17: a NEFF built for another generation than `TPB_EMU_ARCH`.
fn arch_mismatch(e: &ModelError) -> bool {
    matches!(
        neff_error(e),
        Some(NeffError::Load(NeffFault::ArchMismatch { .. }))
    )
}

/// NRT-EC-10/EC-16: the status of a reader failure. The reader's own status
/// ([`NeffError::runtime_status`]), except that step 12's one-graph rule gives
/// `NRT_LOAD_NOT_ENOUGH_NC` (9) for two or more graphs (one subgraph per core,
/// SPEC-NRT §11 (13)) and 2 for none.
fn load_status(e: &ModelError) -> Status {
    match neff_error(e) {
        Some(NeffError::Load(NeffFault::Graphs { count, .. })) if *count >= 2 => {
            NRT_LOAD_NOT_ENOUGH_NC
        }
        Some(n) => n.runtime_status() as Status,
        None => NRT_INVALID,
    }
}

/// NRT-EC-4 `NEURON_RT_EXEC_TIMEOUT`, read at load: seconds per execution, default 600, 0 for
/// none; a value that is not a whole number of seconds warns and keeps the default.
fn exec_timeout() -> Option<std::time::Duration> {
    const DEFAULT: u64 = 600;
    let secs = match std::env::var("NEURON_RT_EXEC_TIMEOUT") {
        Err(_) => DEFAULT,
        Ok(v) => v.trim().parse::<u64>().unwrap_or_else(|_| {
            log(
                Level::Warn,
                &format!("NEURON_RT_EXEC_TIMEOUT={v:?}: not a number of seconds, {DEFAULT} used"),
            );
            DEFAULT
        }),
    };
    (secs > 0).then(|| std::time::Duration::from_secs(secs))
}

/// NRT-EC-20 `nrt_load_collectives`: one rank of one device is `nrt_load`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_load_collectives(
    bytes: *const u8,
    size: usize,
    vnc: i32,
    vnc_count: i32,
    ctx_device_id: u32,
    ctx_device_count: u32,
    model: *mut *mut c_void,
) -> Status {
    guard_status("nrt_load_collectives", || {
        gate()?;
        if ctx_device_id != 0 || ctx_device_count != 1 {
            log(
                Level::Error,
                "nrt_load_collectives: one rank of one device only",
            );
            return Err(NRT_INVALID);
        }
        load(bytes, size, vnc, vnc_count, model)
    })
}

/// A live model by handle (3 otherwise).
fn find_model(h: *const c_void) -> Result<Arc<LoadedModel>, Status> {
    registry()
        .models
        .get(&(h as usize))
        .cloned()
        .ok_or(NRT_INVALID_HANDLE)
}

/// 5.8 `nrt_unload`: waits for running executions.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_unload(model: *mut c_void) -> Status {
    guard_status("nrt_unload", || {
        gate()?;
        let m = registry()
            .models
            .remove(&(model as usize))
            .ok_or(NRT_INVALID_HANDLE)?;
        drop(state::lock(&m.running));
        Ok(())
    })
}

fn model_one(name: &str, model: *const c_void, out: *mut u32) -> Status {
    guard_status(name, || {
        gate()?;
        find_model(model)?;
        // SAFETY: `out` is NULL or a `uint32_t *` from the caller.
        unsafe { put(out, 1) }
    })
}

/// 5.9 `nrt_get_model_nc_count`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_get_model_nc_count(model: *const c_void, out: *mut u32) -> Status {
    model_one("nrt_get_model_nc_count", model, out)
}

/// 5.9 `nrt_get_model_vnc_count`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_get_model_vnc_count(model: *const c_void, out: *mut u32) -> Status {
    model_one("nrt_get_model_vnc_count", model, out)
}

/// §8 `nrt_get_model_instance_count`: 1.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_get_model_instance_count(model: *const c_void, out: *mut u32) -> Status {
    model_one("nrt_get_model_instance_count", model, out)
}

/// §8 `nrt_get_model_info`: `vnc` 0, `min(size_in, 4)` bytes written.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_get_model_info(
    model: *const c_void,
    info: *mut u8,
    size_in: usize,
    size_out: *mut usize,
) -> Status {
    guard_status("nrt_get_model_info", || {
        gate()?;
        find_model(model)?;
        if info.is_null() || size_out.is_null() {
            return Err(NRT_INVALID);
        }
        let n = size_in.min(4);
        let v = 0u32.to_ne_bytes();
        // SAFETY: `info` is non-NULL with `size_in` ≥ `n` writable bytes.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), info, n) };
        // SAFETY: `size_out` is non-NULL.
        unsafe { put(size_out, n) }
    })
}

/// NRT-EC-1 and NRT-EC-17: a neff.json dltype as `nrt_dtype_t`.
pub fn dtype_code(dltype: &str, abi: DtypeAbi) -> u32 {
    const TABLE: [(&str, u32, u32); 11] = [
        ("uint8", 0x3, 5),
        ("int8", 0x2, 4),
        ("uint16", 0x5, 7),
        ("int16", 0x4, 6),
        ("uint32", 0x9, 9),
        ("int32", 0x8, 8),
        ("uint64", 0x1, 11),
        ("int64", 0xC, 10),
        ("float16", 0x7, 2),
        ("bfloat16", 0x6, 3),
        ("float32", 0xA, 1),
    ];
    TABLE
        .iter()
        .find(|e| e.0 == dltype)
        .map_or(0, |e| match abi {
            DtypeAbi::H28 => e.1,
            DtypeAbi::Legacy => e.2,
        })
}

/// 5.10 `nrt_get_model_tensor_info` (NRT-EC-17): one `malloc` block for the
/// array, one per shape.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_get_model_tensor_info(model: *mut c_void, out: *mut *mut u8) -> Status {
    guard_status("nrt_get_model_tensor_info", || {
        gate()?;
        let m = find_model(model)?;
        if out.is_null() {
            return Err(NRT_INVALID);
        }
        let abi = config().dtype_abi;
        let all: Vec<(u32, &Io)> = m
            .inputs
            .iter()
            .map(|t| (0, t))
            .chain(m.outputs.iter().map(|t| (1, t)))
            .collect();
        let bytes = INFO_HEADER + all.len() * std::mem::size_of::<TensorInfoC>();
        // SAFETY: malloc of a non-zero size; the result is checked for NULL.
        let arr = unsafe { libc::malloc(bytes) }.cast::<u8>();
        if arr.is_null() {
            return Err(NRT_RESOURCE);
        }
        // SAFETY: `arr` has `bytes` ≥ 8 bytes; malloc's alignment suits u64.
        unsafe { arr.cast::<u64>().write(all.len() as u64) };
        for (i, (usage, t)) in all.iter().enumerate() {
            let ndim = t.shape.len();
            // SAFETY: malloc of a non-zero size; checked for NULL below.
            let shape = unsafe { libc::malloc(4 * ndim.max(1)) }.cast::<u32>();
            if shape.is_null() {
                for j in 0..i {
                    // SAFETY: entries 0..i were written below with malloc'd shapes.
                    unsafe {
                        let e = arr.add(INFO_HEADER).cast::<TensorInfoC>().add(j);
                        libc::free((*e).shape.cast());
                    }
                }
                // SAFETY: `arr` came from malloc and is freed once.
                unsafe { libc::free(arr.cast()) };
                return Err(NRT_RESOURCE);
            }
            let dims: Vec<u32> = if ndim == 0 { vec![1] } else { t.shape.clone() };
            // SAFETY: `shape` holds max(ndim, 1) u32s, exactly `dims.len()`.
            unsafe { std::ptr::copy_nonoverlapping(dims.as_ptr(), shape, dims.len()) };
            let mut name = [0 as c_char; 256];
            for (d, &b) in name.iter_mut().zip(t.name.as_bytes()) {
                *d = b as c_char;
            }
            let e = TensorInfoC {
                name,
                usage: *usage,
                size: t.size,
                dtype: dtype_code(&t.dltype, abi),
                shape,
                ndim: ndim as u32,
            };
            // SAFETY: entry i lies inside the block (8 + 296·len bytes); malloc's
            // alignment (16) and 8 + 296·i keep it 8-aligned.
            unsafe { arr.add(INFO_HEADER).cast::<TensorInfoC>().add(i).write(e) };
        }
        registry().infos.insert(arr as usize);
        // SAFETY: `out` is non-NULL.
        unsafe { put(out, arr) }
    })
}

/// 5.11 `nrt_free_model_tensor_info`: NULL → 0; not handed out or freed → 2.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_free_model_tensor_info(info: *mut u8) -> Status {
    guard_status("nrt_free_model_tensor_info", || {
        if info.is_null() {
            return Ok(());
        }
        if in_child() {
            return Err(NRT_FAILURE);
        }
        if !registry().infos.remove(&(info as usize)) {
            log(
                Level::Error,
                "nrt_free_model_tensor_info: not a live tensor-info array",
            );
            return Err(NRT_INVALID);
        }
        // SAFETY: `info` is a live array this library malloc'd (registered until now):
        // its count and entries are as written by nrt_get_model_tensor_info.
        unsafe {
            let n = info.cast::<u64>().read() as usize;
            for i in 0..n {
                let e = info.add(INFO_HEADER).cast::<TensorInfoC>().add(i);
                libc::free((*e).shape.cast());
            }
            libc::free(info.cast());
        }
        Ok(())
    })
}

// ---- 5.12–5.22 Tensors ---------------------------------------------------------------------------

/// Registers `t`, writing its handle through `out` (checked non-NULL by the caller).
fn register_tensor(t: Tensor, out: *mut *mut c_void) -> Result<(), Status> {
    let mut r = registry();
    gate()?;
    let h = r.token().ok_or(NRT_RESOURCE)?;
    r.tensors.insert(h, t);
    // SAFETY: `out` is non-NULL (the callers check).
    unsafe { put(out, h as *mut c_void) }
}

/// 5.12 `nrt_tensor_allocate` (NRT-EC-12).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_allocate(
    placement: c_int,
    vnc: c_int,
    size: usize,
    _name: *const c_char,
    out: *mut *mut c_void,
) -> Status {
    guard_status("nrt_tensor_allocate", || {
        gate()?;
        if out.is_null() || !(0..=2).contains(&placement) {
            return Err(NRT_INVALID);
        }
        if placement as u32 == PLACEMENT_DEVICE && vnc != 0 && vnc != -1 {
            return Err(NRT_INVALID);
        }
        if placement == 1 && size > 4 << 20 {
            state::log_once(
                Level::Warn,
                "host4mb",
                "nrt_tensor_allocate: HOST tensors above 4 MB",
            );
        }
        let s = Storage::zeroed(size).ok_or(NRT_RESOURCE)?;
        register_tensor(
            Tensor {
                storage: Some(Arc::new(s)),
                offset: 0,
                size,
                placement: placement as u32,
                completions: 0,
            },
            out,
        )
    })
}

/// 5.13 `nrt_tensor_allocate_empty`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_allocate_empty(_name: *const c_char, out: *mut *mut c_void) -> Status {
    guard_status("nrt_tensor_allocate_empty", || {
        gate()?;
        if out.is_null() {
            return Err(NRT_INVALID);
        }
        register_tensor(
            Tensor {
                storage: None,
                offset: 0,
                size: 0,
                placement: PLACEMENT_VIRTUAL,
                completions: 0,
            },
            out,
        )
    })
}

/// 5.14 `nrt_tensor_attach_buffer`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_attach_buffer(
    tensor: *mut c_void,
    buffer: *mut u8,
    size: usize,
) -> Status {
    guard_status("nrt_tensor_attach_buffer", || {
        gate()?;
        let mut r = registry();
        let t = r.tensors.get_mut(&(tensor as usize)).ok_or(NRT_INVALID)?;
        if buffer.is_null() && size > 0 {
            return Err(NRT_INVALID);
        }
        t.storage = Some(Arc::new(Storage::attached(buffer, size)));
        t.offset = 0;
        t.size = size;
        t.placement = PLACEMENT_VIRTUAL;
        Ok(())
    })
}

/// NRT-EC-13: `[offset, offset + size)` inside `len` (overflow-checked).
fn in_bounds(offset: usize, size: usize, len: usize) -> bool {
    offset.checked_add(size).is_some_and(|end| end <= len)
}

/// 5.15 `nrt_tensor_allocate_slice` (NRT-EC-13).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_allocate_slice(
    source: *const c_void,
    offset: usize,
    size: usize,
    _name: *const c_char,
    out: *mut *mut c_void,
) -> Status {
    guard_status("nrt_tensor_allocate_slice", || {
        gate()?;
        if out.is_null() {
            return Err(NRT_INVALID);
        }
        let t = {
            let r = registry();
            let s = r.tensors.get(&(source as usize)).ok_or(NRT_INVALID)?;
            let storage = s.storage.clone().ok_or(NRT_INVALID)?;
            if !in_bounds(offset, size, s.size) {
                return Err(NRT_INVALID);
            }
            Tensor {
                storage: Some(storage),
                offset: s.offset + offset,
                size,
                placement: s.placement,
                completions: 0,
            }
        };
        register_tensor(t, out)
    })
}

/// 5.16 `nrt_tensor_free`: a pointer that is itself a live handle is taken
/// as the handle (§4.2) and nothing is written through it.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_free(tensor: *mut *mut c_void) {
    guard("nrt_tensor_free", (), || {
        if gate().is_err() || tensor.is_null() {
            return;
        }
        let mut r = registry();
        if r.tensors.remove(&(tensor as usize)).is_some() {
            return;
        }
        // SAFETY: not a handle, so a `nrt_tensor_t **` from the caller: readable.
        let h = unsafe { tensor.read_unaligned() };
        if h.is_null() {
            return;
        }
        if r.tensors.remove(&(h as usize)).is_none() {
            log(Level::Warn, "nrt_tensor_free: not a live tensor");
            return;
        }
        // SAFETY: as above, and writable.
        unsafe { tensor.write_unaligned(std::ptr::null_mut()) };
    })
}

/// A live tensor's view: its storage (with a reference) and its range.
fn view(h: *const c_void) -> Result<(Arc<Storage>, usize, usize), Status> {
    let r = registry();
    let t = r.tensors.get(&(h as usize)).ok_or(NRT_INVALID)?;
    let s = t.storage.clone().ok_or(NRT_INVALID)?;
    Ok((s, t.offset, t.size))
}

/// 5.17 `nrt_tensor_read` (NRT-EC-13).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_read(
    tensor: *const c_void,
    buf: *mut u8,
    offset: usize,
    size: usize,
) -> Status {
    guard_status("nrt_tensor_read", || {
        gate()?;
        let (s, base, len) = view(tensor)?;
        if !in_bounds(offset, size, len) || (buf.is_null() && size > 0) {
            return Err(NRT_INVALID);
        }
        if size > 0 {
            // SAFETY: the range lies inside the live storage (checked), `buf` has `size`
            // writable bytes by the caller's contract; memmove-safe copy.
            unsafe { std::ptr::copy(s.ptr().add(base + offset), buf, size) };
        }
        Ok(())
    })
}

/// 5.17 `nrt_tensor_write` (NRT-EC-13).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_write(
    tensor: *mut c_void,
    buf: *const u8,
    offset: usize,
    size: usize,
) -> Status {
    guard_status("nrt_tensor_write", || {
        gate()?;
        let (s, base, len) = view(tensor)?;
        if !in_bounds(offset, size, len) || (buf.is_null() && size > 0) {
            return Err(NRT_INVALID);
        }
        if size > 0 {
            // SAFETY: the range lies inside the live storage (checked), `buf` has `size`
            // readable bytes by the caller's contract.
            unsafe { std::ptr::copy(buf, s.ptr().add(base + offset), size) };
        }
        Ok(())
    })
}

/// 5.18 `nrt_tensor_copy`: NRT-EC-13 on both sides; overlap as `memmove`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_copy(
    src: *const c_void,
    src_offset: usize,
    dst: *mut c_void,
    dst_offset: usize,
    size: usize,
) -> Status {
    guard_status("nrt_tensor_copy", || {
        gate()?;
        let (s, sb, sl) = view(src)?;
        let (d, db, dl) = view(dst)?;
        if !in_bounds(src_offset, size, sl) || !in_bounds(dst_offset, size, dl) {
            return Err(NRT_INVALID);
        }
        if size > 0 {
            // SAFETY: both ranges lie inside live storage (checked); `copy` is memmove.
            unsafe {
                std::ptr::copy(
                    s.ptr().add(sb + src_offset),
                    d.ptr().add(db + dst_offset),
                    size,
                )
            };
        }
        Ok(())
    })
}

/// 5.19 `nrt_tensor_get_size`: 0 for NULL, unknown, stale or storage-less.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_get_size(tensor: *const c_void) -> usize {
    guard("nrt_tensor_get_size", 0, || {
        if gate().is_err() {
            return 0;
        }
        view(tensor).map_or(0, |v| v.2)
    })
}

/// 5.20 `nrt_tensor_memset` (NRT-EC-13).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_memset(
    tensor: *mut c_void,
    offset: u64,
    value: c_int,
    size: usize,
) -> Status {
    guard_status("nrt_tensor_memset", || {
        gate()?;
        let (s, base, len) = view(tensor)?;
        let offset = usize::try_from(offset).map_err(|_| NRT_INVALID)?;
        if !in_bounds(offset, size, len) {
            return Err(NRT_INVALID);
        }
        if size > 0 {
            // SAFETY: the range lies inside the live storage (checked).
            unsafe { std::ptr::write_bytes(s.ptr().add(base + offset), value as u8, size) };
        }
        Ok(())
    })
}

/// 5.21 `nrt_tensor_get_va`: the view's first byte; NULL for NULL, unknown,
/// stale or storage-less tensors.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_get_va(tensor: *const c_void) -> *mut c_void {
    guard("nrt_tensor_get_va", std::ptr::null_mut(), || {
        if gate().is_err() {
            return std::ptr::null_mut();
        }
        registry()
            .tensors
            .get(&(tensor as usize))
            .and_then(Tensor::va)
            .map_or(std::ptr::null_mut(), |p| p.cast())
    })
}

/// 5.22 `nrt_memcpy_to_device` (NRT-EC-14): only inside one live tensor's storage.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_memcpy_to_device(
    dest: *mut c_void,
    src: *const c_void,
    size: usize,
) -> Status {
    guard_status("nrt_memcpy_to_device", || {
        if in_child() {
            return Err(NRT_FAILURE);
        }
        if size == 0 {
            return Ok(());
        }
        if src.is_null() {
            return Err(NRT_INVALID);
        }
        let r = registry();
        let d = dest as usize;
        let inside = r
            .tensors
            .values()
            .filter_map(|t| t.storage.as_ref())
            .any(|s| {
                let start = s.ptr() as usize;
                d >= start && in_bounds(d - start, size, s.len())
            });
        if !inside {
            return Err(NRT_INVALID);
        }
        // SAFETY: `[dest, dest+size)` lies inside live storage (checked, registry locked);
        // `src` has `size` readable bytes by the caller's contract.
        unsafe { std::ptr::copy(src.cast::<u8>(), dest.cast::<u8>(), size) };
        Ok(())
    })
}

/// §8 `nrt_tensor_get_lnc_index`: 0 for DEVICE, -1 otherwise.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_get_lnc_index(tensor: *const c_void, out: *mut c_int) -> Status {
    guard_status("nrt_tensor_get_lnc_index", || {
        gate()?;
        let p = registry()
            .tensors
            .get(&(tensor as usize))
            .ok_or(NRT_INVALID)?
            .placement;
        // SAFETY: `out` is NULL or an `int *` from the caller.
        unsafe { put(out, if p == PLACEMENT_DEVICE { 0 } else { -1 }) }
    })
}

/// `nrt_tensor_batch_op_t`.
#[repr(C)]
struct BatchOp {
    offset: u64,
    size: u64,
    buffer: *mut u8,
}

/// `nrt_tensor_batch_t`.
#[repr(C)]
struct Batch {
    tensor: *const c_void,
    ops: *const BatchOp,
    num_ops: u32,
}

/// §8 batch read/write: 5.17 per op, in order, stopping at the first failure.
fn batch(name: &str, batches: *const u8, n: u64, write: bool) -> Status {
    guard_status(name, || {
        gate()?;
        if n == 0 {
            return Ok(());
        }
        if batches.is_null() {
            return Err(NRT_INVALID);
        }
        for i in 0..n as usize {
            // SAFETY: the caller gives `n` batches.
            let b = unsafe { batches.cast::<Batch>().add(i).read_unaligned() };
            if b.ops.is_null() && b.num_ops > 0 {
                return Err(NRT_INVALID);
            }
            for j in 0..b.num_ops as usize {
                // SAFETY: the batch gives `num_ops` ops.
                let op = unsafe { b.ops.add(j).read_unaligned() };
                let (off, size) = (op.offset as usize, op.size as usize);
                let s = if write {
                    nrt_tensor_write(b.tensor.cast_mut(), op.buffer, off, size)
                } else {
                    nrt_tensor_read(b.tensor, op.buffer, off, size)
                };
                if s != NRT_SUCCESS {
                    return Err(s);
                }
            }
        }
        Ok(())
    })
}

/// §8 `nrt_tensor_read_batch`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_read_batch(batches: *const u8, n: u64, _unsafe: bool) -> Status {
    batch("nrt_tensor_read_batch", batches, n, false)
}

/// §8 `nrt_tensor_write_batch`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_write_batch(batches: *const u8, n: u64, _unsafe: bool) -> Status {
    batch("nrt_tensor_write_batch", batches, n, true)
}

/// §8 `nrt_tensor_check_output_completion` (not gated).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_check_output_completion(
    tensor: *const c_void,
    _timeout: i64,
    expected: u64,
) -> Status {
    guard_status("nrt_tensor_check_output_completion", || {
        if tensor.is_null() {
            return Err(NRT_INVALID);
        }
        if in_child() {
            return Err(NRT_FAILURE);
        }
        let c = registry()
            .tensors
            .get(&(tensor as usize))
            .ok_or(NRT_INVALID)?
            .completions;
        if c >= expected {
            Ok(())
        } else {
            Err(NRT_TIMEOUT)
        }
    })
}

/// §8 `nrt_tensor_reset_output_completion` (not gated).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_reset_output_completion(tensor: *mut c_void) -> Status {
    guard_status("nrt_tensor_reset_output_completion", || {
        if tensor.is_null() {
            return Err(NRT_INVALID);
        }
        if in_child() {
            return Err(NRT_FAILURE);
        }
        registry()
            .tensors
            .get_mut(&(tensor as usize))
            .ok_or(NRT_INVALID)?
            .completions = 0;
        Ok(())
    })
}

// ---- 5.23 Tensor sets ------------------------------------------------------------------------------

/// 5.23 `nrt_allocate_tensor_set`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_allocate_tensor_set(out: *mut *mut c_void) -> Status {
    guard_status("nrt_allocate_tensor_set", || {
        gate()?;
        if out.is_null() {
            return Err(NRT_INVALID);
        }
        let mut r = registry();
        let h = r.token().ok_or(NRT_RESOURCE)?;
        r.sets.insert(h, BTreeMap::new());
        // SAFETY: `out` is non-NULL.
        unsafe { put(out, h as *mut c_void) }
    })
}

/// 5.23 `nrt_destroy_tensor_set` (§4.2: a set passed by value is destroyed).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_destroy_tensor_set(set: *mut *mut c_void) {
    guard("nrt_destroy_tensor_set", (), || {
        if gate().is_err() || set.is_null() {
            return;
        }
        let mut r = registry();
        if r.sets.remove(&(set as usize)).is_some() {
            return;
        }
        // SAFETY: not a handle, so a `nrt_tensor_set_t **` from the caller: readable.
        let h = unsafe { set.read_unaligned() };
        if !h.is_null() && r.sets.remove(&(h as usize)).is_some() {
            // SAFETY: as above, and writable.
            unsafe { set.write_unaligned(std::ptr::null_mut()) };
        }
    })
}

/// 5.23 `nrt_add_tensor_to_tensor_set`: adds or replaces.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_add_tensor_to_tensor_set(
    set: *mut c_void,
    name: *const c_char,
    tensor: *mut c_void,
) -> Status {
    guard_status("nrt_add_tensor_to_tensor_set", || {
        gate()?;
        // SAFETY: `name` is NULL or a C string.
        let name = unsafe { cstr(name) }.ok_or(NRT_INVALID)?.to_vec();
        let mut r = registry();
        if !r.tensors.contains_key(&(tensor as usize)) {
            return Err(NRT_INVALID);
        }
        r.sets
            .get_mut(&(set as usize))
            .ok_or(NRT_INVALID)?
            .insert(name, tensor as usize);
        Ok(())
    })
}

/// 5.23 `nrt_get_tensor_from_tensor_set`: not found → 1, `*tensor` untouched.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_get_tensor_from_tensor_set(
    set: *mut c_void,
    name: *const c_char,
    out: *mut *mut c_void,
) -> Status {
    guard_status("nrt_get_tensor_from_tensor_set", || {
        gate()?;
        // SAFETY: `name` is NULL or a C string.
        let name = unsafe { cstr(name) }.ok_or(NRT_INVALID)?;
        if out.is_null() {
            return Err(NRT_INVALID);
        }
        let r = registry();
        let h = *r
            .sets
            .get(&(set as usize))
            .ok_or(NRT_INVALID)?
            .get(name)
            .ok_or(NRT_FAILURE)?;
        // SAFETY: `out` is non-NULL.
        unsafe { put(out, h as *mut c_void) }
    })
}

// ---- 5.24–5.25 Execute -------------------------------------------------------------------------------

/// A bound tensor: its storage, the view's start, and its handle.
struct Bound {
    storage: Arc<Storage>,
    start: usize,
    handle: usize,
}

/// NRT-EC-18: binds the sets to the model's names, in its order of checks.
fn bind(
    m: &LoadedModel,
    input_set: *const c_void,
    output_set: *const c_void,
) -> Result<(Vec<Bound>, Vec<Bound>), Status> {
    let r = registry();
    let ins = r.sets.get(&(input_set as usize)).ok_or(NRT_INVALID)?;
    let outs = r.sets.get(&(output_set as usize)).ok_or(NRT_INVALID)?;
    if ins.len() != m.inputs.len() {
        log(
            Level::Error,
            &format!(
                "nrt_execute: Incorrect number of inputs, expected: {}, received: {}",
                m.inputs.len(),
                ins.len()
            ),
        );
        return Err(NRT_INVALID);
    }
    let find = |set: &BTreeMap<Vec<u8>, usize>, io: &Io, what: &str| {
        set.get(io.name.as_bytes()).copied().ok_or_else(|| {
            log(
                Level::Error,
                &format!("nrt_execute: no {what} tensor {} in the set", io.name),
            );
            NRT_INVALID
        })
    };
    let in_h: Vec<usize> = m
        .inputs
        .iter()
        .map(|io| find(ins, io, "input"))
        .collect::<Result<_, _>>()?;
    let out_h: Vec<usize> = m
        .outputs
        .iter()
        .map(|io| find(outs, io, "output"))
        .collect::<Result<_, _>>()?;
    let resolve = |hs: &[usize], ios: &[Io]| -> Result<Vec<Bound>, Status> {
        hs.iter()
            .zip(ios)
            .map(|(&h, io)| {
                let t = r.tensors.get(&h).ok_or_else(|| {
                    log(
                        Level::Error,
                        &format!("nrt_execute: tensor {} is not live", io.name),
                    );
                    NRT_INVALID
                })?;
                let s = t.storage.clone().ok_or(NRT_INVALID)?;
                if t.size < io.size {
                    log(
                        Level::Error,
                        &format!(
                            "nrt_execute: tensor {}: {} bytes, the model needs {}",
                            io.name, t.size, io.size
                        ),
                    );
                    return Err(NRT_INVALID);
                }
                Ok(Bound {
                    storage: s,
                    start: t.offset,
                    handle: h,
                })
            })
            .collect()
    };
    let a = resolve(&in_h, &m.inputs)?;
    let b = resolve(&out_h, &m.outputs)?;
    Ok((a, b))
}

/// 5.24 `nrt_execute` (NRT-EC-18).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_execute(
    model: *mut c_void,
    input_set: *const c_void,
    output_set: *mut c_void,
) -> Status {
    guard_status("nrt_execute", || execute(model, input_set, output_set))
}

fn execute(
    model: *mut c_void,
    input_set: *const c_void,
    output_set: *mut c_void,
) -> Result<(), Status> {
    gate()?;
    let m = find_model(model)?;
    let (ins, outs) = bind(&m, input_set, output_set)?;
    let mut data: HashMap<String, HostBytes> = HashMap::with_capacity(ins.len());
    for (b, io) in ins.iter().zip(&m.inputs) {
        // Lent, not copied: the run reads the tensor's bytes in place (the Arc keeps the
        // storage alive until the run's last reference to them is gone).
        let lent = Lent {
            storage: b.storage.clone(),
            start: b.start,
            len: io.size,
        };
        let shared = HostBytes::shared(Arc::new(Input::Borrowed(Box::new(lent))), 0..io.size)
            .ok_or(NRT_FAILURE)?;
        data.insert(io.name.clone(), shared);
    }
    // Runs of one model are serialised; other models run concurrently.
    let _running = state::lock(&m.running);
    let fail = |e: ModelError| {
        log(Level::Error, &format!("nrt_execute: {e}"));
        model_status(&e)
    };
    let mut prepared = m.model.prepare(&data).map_err(fail)?;
    drop(data);
    // §7.3: each output variable starts with its tensor's current bytes (a device tensor is
    // written in place on hardware, so the bytes a program skips keep their value). A tensor
    // of zeros is what staging already holds, so only other bytes are copied in.
    for (b, io) in outs.iter().zip(&m.outputs) {
        // SAFETY: the view holds at least `io.size` bytes from `start` (bind checked), kept
        // alive by the Arc; the model's run lock is held, and a concurrent write through
        // `nrt_tensor_get_va` during an execute is the caller's race, as in libnrt.
        let bytes = unsafe { std::slice::from_raw_parts(b.storage.ptr().add(b.start), io.size) };
        if !all_zero(bytes) && !prepared.seed(&io.name, bytes) {
            state::log_once(
                Level::Warn,
                &format!("seed {}", io.name),
                &format!(
                    "nrt_execute: output {}: its variable's size differs from the tensor \
                     info's; the run starts it from zeros",
                    io.name
                ),
            );
        }
    }
    let choice = if m.model.needs_device() {
        m.backend
    } else {
        tpb_emu::device::gpu::BackendChoice::Cpu
    };
    let backend = state::backend(choice).map_err(|e| {
        log(Level::Error, &format!("nrt_execute: backend: {e}"));
        NRT_HW_ERROR
    })?;
    let mut exec = backend.executor(m.model.arch()).map_err(|e| {
        log(Level::Error, &format!("nrt_execute: backend: {e}"));
        NRT_HW_ERROR
    })?;
    // NEURON_RT_EXEC_TIMEOUT (read at load): checked between records, every PROGRESS_EVERY.
    let start = std::time::Instant::now();
    let mut timed_out = false;
    let mut check = |_| match m.timeout {
        Some(t) if start.elapsed() > t => {
            timed_out = true;
            std::ops::ControlFlow::Break(())
        }
        _ => std::ops::ControlFlow::Continue(()),
    };
    let result = prepared.run_controlled(
        exec.as_mut(),
        &RunOptions::default(),
        &mut tpb_emu::device::NoTrace,
        &mut check,
    );
    let finished = result.map_err(|e| {
        if timed_out {
            log(
                Level::Error,
                &format!(
                    "nrt_execute: timed out after {:.1} s (NEURON_RT_EXEC_TIMEOUT)",
                    start.elapsed().as_secs_f64()
                ),
            );
            NRT_TIMEOUT
        } else {
            fail(e)
        }
    })?;
    // Outputs are copied back only after a successful run, in info order.
    for (b, io) in outs.iter().zip(&m.outputs) {
        let got = finished.output(&io.name).ok_or(NRT_FAILURE)?;
        let n = got.len().min(io.size);
        // SAFETY: the view holds at least `io.size` ≥ `n` bytes from `start`, kept alive by the Arc.
        unsafe { std::ptr::copy_nonoverlapping(got.as_ptr(), b.storage.ptr().add(b.start), n) };
    }
    let mut r = registry();
    for b in &outs {
        if let Some(t) = r.tensors.get_mut(&b.handle) {
            t.completions += 1;
        }
    }
    Ok(())
}

/// An input tensor's bytes lent to a run: `len` bytes from `start` of the storage.
struct Lent {
    storage: Arc<Storage>,
    start: usize,
    len: usize,
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `bind` checked that the view holds `len` bytes from `start`; the Arc keeps
        // the storage alive. Writes into it while a run reads it are the caller's race (a
        // tensor bound as input and output is written back only after the run).
        unsafe { std::slice::from_raw_parts(self.storage.ptr().add(self.start), self.len) }
    }
}

/// True when every byte is 0 (eight at a time).
fn all_zero(bytes: &[u8]) -> bool {
    let (head, words, tail) = {
        // SAFETY: u64 has no invalid bit patterns; align_to splits at alignment boundaries.
        unsafe { bytes.align_to::<u64>() }
    };
    head.iter().all(|&b| b == 0) && tail.iter().all(|&b| b == 0) && words.iter().all(|&w| w == 0)
}

/// 5.25 `nrt_execute_repeat` (NRT-EC-15): ≤ 1 is `nrt_execute`, above → 2.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_execute_repeat(
    model: *mut c_void,
    input_set: *const c_void,
    output_set: *mut c_void,
    repeat: c_int,
) -> Status {
    guard_status("nrt_execute_repeat", || {
        gate()?;
        if repeat > 1 {
            log(
                Level::Error,
                "nrt_execute_repeat: Supports for loops on the host is deprecated",
            );
            return Err(NRT_INVALID);
        }
        execute(model, input_set, output_set)
    })
}

/// §8 `nrt_profile_start`: 0, no file.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_profile_start(_model: *mut c_void, _filename: *const c_char) -> Status {
    NRT_SUCCESS
}

/// §8 `nrt_profile_stop`: 0, no file.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_profile_stop(_filename: *const c_char) -> Status {
    NRT_SUCCESS
}

/// §8 `nrt_async_drain_queued_execs`: nothing is ever queued.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_async_drain_queued_execs() -> Status {
    NRT_SUCCESS
}

/// NRT-EC-20: a one-worker collective setup is a no-op.
fn one_worker(name: &str, id: u32, count: u32) -> Status {
    guard_status(name, || {
        gate()?;
        if id == 0 && count == 1 {
            Ok(())
        } else {
            state::log_once(
                Level::Warn,
                name,
                &format!("{name}: only one worker is emulated"),
            );
            Err(NRT_INVALID)
        }
    })
}

/// NRT-EC-20 `nrt_barrier`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_barrier(_vnc: i32, g_device_id: u32, g_device_count: u32) -> Status {
    one_worker("nrt_barrier", g_device_id, g_device_count)
}

/// NRT-EC-20 `nrt_build_global_comm`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_build_global_comm(
    _vnc: i32,
    g_device_id: u32,
    g_device_count: u32,
) -> Status {
    one_worker("nrt_build_global_comm", g_device_id, g_device_count)
}

/// NRT-EC-20 `nrt_cc_global_comm_init`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_cc_global_comm_init(
    _vnc: u32,
    g_device_id: u32,
    g_device_count: u32,
) -> Status {
    one_worker("nrt_cc_global_comm_init", g_device_id, g_device_count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_dtype_numberings_follow_the_spec_table() {
        // SPEC-NRT §3.1, typed from the table: (dltype, [H28], [H1]).
        let want = [
            ("float32", 10, 1),
            ("float16", 7, 2),
            ("bfloat16", 6, 3),
            ("int8", 2, 4),
            ("uint8", 3, 5),
            ("int16", 4, 6),
            ("uint16", 5, 7),
            ("int32", 8, 8),
            ("uint32", 9, 9),
            ("int64", 12, 10),
            ("uint64", 1, 11),
            ("float8e4", 0, 0),
            ("complex64", 0, 0),
        ];
        for (s, h28, h1) in want {
            assert_eq!(dtype_code(s, DtypeAbi::H28), h28, "{s}");
            assert_eq!(dtype_code(s, DtypeAbi::Legacy), h1, "{s}");
        }
    }
}
