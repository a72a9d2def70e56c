//! `NRT_STATUS` values ([H28] `nrt_status.h`, SPEC-NRT §6) and their names.

/// `NRT_STATUS`: a C `enum`, returned as a 32-bit integer.
pub type Status = i32;

/// Success.
pub const NRT_SUCCESS: Status = 0;
/// Non-specific failure.
pub const NRT_FAILURE: Status = 1;
/// Invalid argument, NEFF or binding.
pub const NRT_INVALID: Status = 2;
/// Invalid model handle.
pub const NRT_INVALID_HANDLE: Status = 3;
/// Allocation failed.
pub const NRT_RESOURCE: Status = 4;
/// Timed out.
pub const NRT_TIMEOUT: Status = 5;
/// Hardware (here: the compute backend) failed.
pub const NRT_HW_ERROR: Status = 6;
/// A NEFF needs more cores than the emulator has (one).
pub const NRT_LOAD_NOT_ENOUGH_NC: Status = 9;
/// The NEFF's version, features or packager are not supported.
pub const NRT_UNSUPPORTED_NEFF_VERSION: Status = 10;
/// Called before `nrt_init`.
pub const NRT_UNINITIALIZED: Status = 13;
/// Called after `nrt_close`.
pub const NRT_CLOSED: Status = 14;
/// A run fault other than a timeout, a backend failure or an out-of-bounds access.
pub const NRT_EXEC_COMPLETED_WITH_ERR: Status = 1004;
/// An access outside a variable found during a run.
pub const NRT_EXEC_OOB: Status = 1006;

/// NRT-EC-8: every [H28] status and its enumerator name (NUL-terminated).
pub const NAMES: &[(Status, &str)] = &[
    (0, "NRT_SUCCESS\0"),
    (1, "NRT_FAILURE\0"),
    (2, "NRT_INVALID\0"),
    (3, "NRT_INVALID_HANDLE\0"),
    (4, "NRT_RESOURCE\0"),
    (5, "NRT_TIMEOUT\0"),
    (6, "NRT_HW_ERROR\0"),
    (7, "NRT_QUEUE_FULL\0"),
    (9, "NRT_LOAD_NOT_ENOUGH_NC\0"),
    (10, "NRT_UNSUPPORTED_NEFF_VERSION\0"),
    (11, "NRT_FAIL_HOST_MEM_ALLOC\0"),
    (13, "NRT_UNINITIALIZED\0"),
    (14, "NRT_CLOSED\0"),
    (15, "NRT_QUEUE_EMPTY\0"),
    (101, "NRT_EXEC_UNIT_UNRECOVERABLE\0"),
    (1002, "NRT_EXEC_BAD_INPUT\0"),
    (1003, "NRT_EXEC_COMPLETED_WITH_NUM_ERR\0"),
    (1004, "NRT_EXEC_COMPLETED_WITH_ERR\0"),
    (1005, "NRT_EXEC_NC_BUSY\0"),
    (1006, "NRT_EXEC_OOB\0"),
    (1100, "NRT_COLL_PENDING\0"),
    (1200, "NRT_EXEC_HW_ERR_COLLECTIVES\0"),
    (1201, "NRT_EXEC_HW_ERR_HBM_UE\0"),
    (1202, "NRT_EXEC_HW_ERR_NC_UE\0"),
    (1203, "NRT_EXEC_HW_ERR_DMA_ABORT\0"),
    (1204, "NRT_EXEC_SW_NQ_OVERFLOW\0"),
    (1205, "NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE\0"),
    (1206, "NRT_NETWORK_PROXY_FAILURE\0"),
];

/// NRT-EC-8: the name of an unknown status.
pub const UNKNOWN: &str = "UNKNOWN_STATUS\0";
