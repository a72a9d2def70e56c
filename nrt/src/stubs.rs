//! NRT-EC-19: exported names the emulator does not implement (SPEC-NRT §8's
//! export list: every function of the [H28] headers `nrt.h`,
//! `nrt_experimental.h`, `nrt_profile.h`, `nrt_sys_trace.h`,
//! `ndebug_stream.h`, `nec.h`, `nrt_async_sendrecv.h` and `nrt_async.h`, the
//! 2.31 exports the spec names, and the names known clients link). Each
//! warns once, writes through no argument and returns what §8 says for its
//! return type: 2 (`NRT_INVALID`, the header's status for an unsupported
//! interface) for `NRT_STATUS`, NULL for pointers, nothing for `void`, 0 for
//! `size_t`, `false` for `bool`, -1 for `int` (the `nec_*` device queries).
//!
//! The Rust definitions take no parameters: under the C calling conventions
//! of x86_64 and aarch64 the caller owns its arguments, so a callee that
//! ignores them is called correctly whatever the prototype. The C headers
//! (`nrt/include/nrt/*.h`) declare each with its [H28] prototype.

use crate::state::{Level, log_once};
use crate::status::{NRT_INVALID, Status};
use std::ffi::{c_int, c_void};

fn warn(name: &str) {
    log_once(
        Level::Warn,
        name,
        &format!("{name} is not supported by the emulator"),
    );
}

macro_rules! stubs {
    ($ret:ty = $val:expr; $($name:ident),* $(,)?) => {
        $(
            #[doc = concat!("NRT-EC-19 stub: `", stringify!($name), "`.")]
            #[unsafe(no_mangle)]
            pub extern "C" fn $name() -> $ret {
                crate::guard(stringify!($name), $val, || {
                    warn(stringify!($name));
                    $val
                })
            }
        )*
    };
}

// NRT_STATUS → 2.
stubs!(Status = NRT_INVALID;
    // nrt.h [H28]
    nrt_tensor_get_device_allocation_info,
    nrt_get_dmabuf_fd,
    nrt_host_device_id_get,
    nrt_host_device_id_rid_map_get,
    nrt_get_hbm_mmap_va,
    nrt_get_vnc_memory_stats,
    nrt_get_attached_efa_bdf,
    // nrt_experimental.h [H28]
    nrt_all_gather,
    nrt_trace_start,
    nrt_trace_stop,
    nrt_set_pool_eng_ucode,
    nrt_register_async_exec_callback,
    // nrt_profile.h [H28]
    nrt_profile_continuous_options_allocate,
    nrt_profile_continuous_options_free,
    nrt_profile_continuous_options_set_output_dir,
    nrt_profile_continuous_start,
    nrt_profile_continuous_save,
    nrt_profile_continuous_stop,
    nrt_inspect_begin,
    nrt_inspect_stop,
    nrt_inspect_config_allocate,
    nrt_inspect_config_set_defaults,
    nrt_inspect_config_free,
    nrt_inspect_config_set_session_id,
    nrt_inspect_config_set_output_dir,
    nrt_inspect_config_set_sys_trace_max_events_per_nc,
    nrt_inspect_config_set_capture_enabled_for_nc,
    nrt_inspect_config_set_capture_enabled_for_event_type_string,
    nrt_inspect_config_set_enable_inspect,
    nrt_inspect_config_set_enable_inspect_on_fail,
    nrt_inspect_begin_with_options,
    nrt_inspect_config_get_all_activity_types,
    nrt_inspect_config_get_enabled_activity_types,
    nrt_inspect_config_set_activity,
    // nrt_sys_trace.h [H28]
    nrt_sys_trace_config_allocate,
    nrt_sys_trace_config_set_capture_enabled_for_event_type,
    nrt_sys_trace_get_event_types,
    nrt_sys_trace_config_get_enabled_event_types,
    nrt_sys_trace_start,
    nrt_sys_trace_stop,
    nrt_sys_trace_fetch_options_allocate,
    nrt_sys_trace_fetch_events,
    // ndebug_stream.h [H28]
    nrt_debug_client_connect,
    nrt_debug_client_read_one_event,
    // nrt_async_sendrecv.h [H28]
    nrt_async_sendrecv_get_max_num_communicators_per_lnc,
    nrt_async_sendrecv_get_max_num_pending_request,
    nrt_async_sendrecv_init,
    nrt_async_sendrecv_close,
    nrt_async_sendrecv_connect,
    nrt_async_sendrecv_accept,
    nrt_async_sendrecv_test_comm,
    nrt_async_sendrecv_send_tensor,
    nrt_async_sendrecv_recv_tensor,
    nrt_async_sendrecv_test_request,
    nrt_async_sendrecv_flush,
    // nec.h [H28]
    nec_get_virtual_core_size,
    nec_get_version_info,
    nec_build_port_and_rid_map,
    nec_pod_node_can_access_peer_node,
    // Runtime 2.31 exports ([RE:API]) without a public prototype.
    nrt_cc_create_stream,
    nrt_profile_session_start,
    nrt_profile_session_stop,
);

// The 3.0 async API (version node NRT_3.0.0), NRT_STATUS → 2.
stubs!(Status = NRT_INVALID;
    nrta_tensor_write,
    nrta_tensor_read,
    nrta_tensor_copy,
    nrta_execute_schedule,
    nrta_cc_prepare,
    nrta_cc_schedule,
    nrta_is_completed,
    nrta_get_sequence,
    nrta_get_completion_handle,
    nrta_error_tracker_create,
    nrta_error_tracker_get_list,
    // spike links it; [H28] lacks it.
    nrta_event_register_xu_completion,
);

// void → nothing.
stubs!(() = ();
    nrt_inspect_config_free_activity_types,
    nrt_sys_trace_config_set_defaults,
    nrt_sys_trace_config_free,
    nrt_sys_trace_config_set_max_events_per_nc,
    nrt_sys_trace_config_set_capture_enabled_for_nc,
    nrt_sys_trace_free_event_types,
    nrt_sys_trace_fetch_options_set_defaults,
    nrt_sys_trace_fetch_options_free,
    nrt_sys_trace_fetch_options_set_max_events_per_nc,
    nrt_sys_trace_fetch_options_set_nc_idx,
    nrt_sys_trace_buffer_free,
    nrt_debug_client_connect_close,
    nec_inc_semaphore,
    nec_set_recv_size_bytes,
    nec_ndl_printk,
    nrta_error_tracker_destroy,
);

// Pointers → NULL.
stubs!(*mut c_void = std::ptr::null_mut();
    nrt_get_libnccl_net,
);

// size_t → 0.
stubs!(usize = 0;
    nec_get_dynamic_send_size_bytes,
    nec_get_dynamic_send_offset_bytes,
    nec_get_dynamic_recv_size_bytes,
    nec_get_dynamic_recv_offset_bytes,
);

// int → -1 (the nec_* device queries).
stubs!(c_int = -1;
    nec_get_device_count,
    nec_get_device_pci_bdf,
    nec_mla_idx_to_rid,
    nec_rid_to_mla_idx,
    nec_get_peer_mla_idx,
    nec_get_p2p_pod_peer_node,
);

// bool → false.
stubs!(bool = false;
    nec_is_mla_available,
);
