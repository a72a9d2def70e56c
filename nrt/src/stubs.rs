//! NRT-EC-19: exported names the emulator does not implement. Each warns
//! once, writes through no argument and returns 2 (`NRT_INVALID`, the
//! header's status for an unsupported interface).
//!
//! The Rust definitions take no parameters: under the C calling conventions
//! of x86_64 and aarch64 the caller owns its arguments, so a callee that
//! ignores them is called correctly whatever the prototype. The C header
//! declares each with its [H28] prototype where one is published.

use crate::state::{Level, log_once};
use crate::status::{NRT_INVALID, Status};

macro_rules! stubs {
    ($($name:ident),* $(,)?) => {
        $(
            #[doc = concat!("NRT-EC-19 stub: `", stringify!($name), "` → 2.")]
            #[unsafe(no_mangle)]
            pub extern "C" fn $name() -> Status {
                crate::guard(stringify!($name), NRT_INVALID, || {
                    log_once(
                        Level::Warn,
                        stringify!($name),
                        concat!(stringify!($name), " is not supported by the emulator"),
                    );
                    NRT_INVALID
                })
            }
        )*
    };
}

stubs!(
    // nrt.h [H28]
    nrt_tensor_get_device_allocation_info,
    nrt_get_dmabuf_fd,
    nrt_host_device_id_get,
    nrt_host_device_id_rid_map_get,
    nrt_get_hbm_mmap_va,
    nrt_get_vnc_memory_stats,
    nrt_get_attached_efa_bdf,
    // Collectives beyond one worker, profiling sessions (2.31 exports).
    nrt_all_gather,
    nrt_cc_create_stream,
    nrt_profile_session_start,
    nrt_profile_session_stop,
);

// The 3.0 async API (version node NRT_3.0.0).
stubs!(
    nrta_tensor_read,
    nrta_tensor_write,
    nrta_execute_schedule,
    nrta_get_sequence,
    nrta_event_register_xu_completion,
);
