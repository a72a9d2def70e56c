/*
 * tpb-emu's libnrt (nrt/, SPEC-NRT): the Neuron Runtime C API as the emulator's
 * libnrt.so.1 exports it. The project's own header, written from SPEC-NRT (the [H28]
 * signatures and the §2.2 layouts); it declares exactly what the library exports.
 * Build against it with `-I nrt/include`, link with `-L target/release -lnrt`.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nrt/nrt_status.h"
#include "nrt/nrt_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NRT_MAJOR_VERSION 2
#define NRT_MINOR_VERSION 0
#define NRT_TENSOR_NAME_MAX 256

typedef struct nrt_model nrt_model_t;
typedef struct nrt_tensor nrt_tensor_t;
/** A container of named tensors. */
typedef void nrt_tensor_set_t;

typedef enum {
    NRT_TENSOR_PLACEMENT_DEVICE,
    NRT_TENSOR_PLACEMENT_HOST,
    NRT_TENSOR_PLACEMENT_VIRTUAL,
} nrt_tensor_placement_t;

typedef enum {
    NRT_FRAMEWORK_TYPE_INVALID = 0,
    NRT_FRAMEWORK_TYPE_NO_FW = 1,
    NRT_FRAMEWORK_TYPE_TENSORFLOW,
    NRT_FRAMEWORK_TYPE_PYTORCH,
    NRT_FRAMEWORK_TYPE_MXNET,
    NRT_FRAMEWORK_TYPE_PRECHECK,
} nrt_framework_type_t;

enum {
    NRT_INSTANCE_UNKNOWN = 0, NRT_INSTANCE_INF1 = 1, NRT_INSTANCE_TRN1 = 2, NRT_INSTANCE_TRN1N = 3,
    NRT_INSTANCE_INF2 = 4, NRT_INSTANCE_TRN2 = 5, NRT_INSTANCE_TRN2N = 6, NRT_INSTANCE_INF2E = 7,
    NRT_INSTANCE_TRN2P = 8, NRT_INSTANCE_TRN2U = 9, NRT_INSTANCE_TRN2E = 10, NRT_INSTANCE_TRN2EU = 11,
    NRT_INSTANCE_TRN2AC = 12, NRT_INSTANCE_TRN2UAC = 13, NRT_INSTANCE_TRN3 = 14,
    NRT_INSTANCE_TRN3PDS98 = 15
};

enum {
    NRT_INSTANCE_SIZE_1XL, NRT_INSTANCE_SIZE_2XL, NRT_INSTANCE_SIZE_4XL, NRT_INSTANCE_SIZE_6XL,
    NRT_INSTANCE_SIZE_8XL, NRT_INSTANCE_SIZE_24XL, NRT_INSTANCE_SIZE_32XL, NRT_INSTANCE_SIZE_48XL,
    NRT_INSTANCE_SIZE_3XL, NRT_INSTANCE_SIZE_UNKNOWN, NRT_INSTANCE_SIZE_NUM = NRT_INSTANCE_SIZE_UNKNOWN,
};

/** [H28] numbering (SPEC-NRT §3.1); TPB_EMU_NRT_DTYPE_ABI=legacy reports the [H1] list instead
 *  (NRT_LEGACY_DTYPE_* below). */
typedef enum nrt_dtype {
    NRT_DTYPE_UNKNOWN = 0x0,
    NRT_DTYPE_INVALID = 0x0,
    NRT_DTYPE_FP8_E3 = 0xD,
    NRT_DTYPE_FP8_E4 = 0xE,
    NRT_DTYPE_FP8_E5 = 0xF,
    NRT_DTYPE_FLOAT16 = 0x7,
    NRT_DTYPE_BFLOAT16 = 0x6,
    NRT_DTYPE_FLOAT32 = 0xA,
    NRT_DTYPE_FP32R = 0xB,
    NRT_DTYPE_UINT8 = 0x3,
    NRT_DTYPE_UINT16 = 0x5,
    NRT_DTYPE_UINT32 = 0x9,
    NRT_DTYPE_UINT64 = 0x1,
    NRT_DTYPE_INT8 = 0x2,
    NRT_DTYPE_INT16 = 0x4,
    NRT_DTYPE_INT32 = 0x8,
    NRT_DTYPE_INT64 = 0xC,
} nrt_dtype_t;

/** The [H1]–[H27] numbering (nrt_experimental.h), for TPB_EMU_NRT_DTYPE_ABI=legacy. */
enum {
    NRT_LEGACY_DTYPE_UNKNOWN = 0, NRT_LEGACY_DTYPE_FLOAT32 = 1, NRT_LEGACY_DTYPE_FLOAT16 = 2,
    NRT_LEGACY_DTYPE_BFLOAT16 = 3, NRT_LEGACY_DTYPE_INT8 = 4, NRT_LEGACY_DTYPE_UINT8 = 5,
    NRT_LEGACY_DTYPE_INT16 = 6, NRT_LEGACY_DTYPE_UINT16 = 7, NRT_LEGACY_DTYPE_INT32 = 8,
    NRT_LEGACY_DTYPE_UINT32 = 9, NRT_LEGACY_DTYPE_INT64 = 10, NRT_LEGACY_DTYPE_UINT64 = 11,
};

typedef enum nrt_tensor_usage {
    NRT_TENSOR_USAGE_INPUT = 0,
    NRT_TENSOR_USAGE_OUTPUT,
} nrt_tensor_usage_t;

/** 296 bytes (SPEC-NRT §2.2). */
typedef struct nrt_tensor_info {
    char name[NRT_TENSOR_NAME_MAX];
    nrt_tensor_usage_t usage;
    size_t size;
    nrt_dtype_t dtype;
    uint32_t *shape;
    uint32_t ndim;
} nrt_tensor_info_t;

typedef struct nrt_tensor_info_array {
    uint64_t tensor_count;
    nrt_tensor_info_t tensor_array[];
} nrt_tensor_info_array_t;

typedef struct nrt_instance_info {
    uint32_t family;
    uint32_t size;
    char arch_name[16];
    char device_revision[8];
} nrt_instance_info_t;

typedef struct nrt_model_info {
    uint32_t vnc;
} nrt_model_info_t;

typedef struct nrt_tensor_batch_op {
    uint64_t offset;
    uint64_t size;
    void *buffer;
} nrt_tensor_batch_op_t;

typedef struct nrt_tensor_batch {
    const nrt_tensor_t *tensor;
    const nrt_tensor_batch_op_t *ops;
    uint32_t num_ops;
} nrt_tensor_batch_t;

typedef struct nrt_tensor_device_allocation_info {
    uint64_t physical_address;
    size_t size;
    int hbm_index;
} nrt_tensor_device_allocation_info_t;

typedef struct nrt_vnc_memory_stats {
    size_t bytes_used;
    size_t bytes_limit;
} nrt_vnc_memory_stats_t;

/* Out-of-NEFF collectives ([H28]): the types nrt_async.h's stubs take. */
typedef struct nrt_cc_context nrt_cc_context_t;

typedef enum nrt_op_type {
    NRT_OP_ADD = 0x0,
    NRT_OP_FMA = 0x1,
    NRT_OP_MAX = 0x2,
    NRT_OP_MIN = 0x3,
    NRT_OP_INVALID = 0xF,
} nrt_op_type_t;

typedef enum nrt_cc_op_type {
    NRT_CC_ALLGATHER,
    NRT_CC_ALLREDUCE,
    NRT_CC_REDUCESCATTER
} nrt_cc_op_type_t;

typedef struct nrt_cc_comm {
    uint32_t *replica_group;
    uint32_t rank;
    uint32_t rank_n;
    uint32_t ctx_device_id;
    uint32_t ctx_device_count;
    uint32_t vnc;
} nrt_cc_comm_t;

typedef struct nrt_tensor_list {
    nrt_tensor_t **tensors;
    size_t num_tensors;
} nrt_tensor_list_t;

/* ---- Lifecycle, instance, counts (SPEC-NRT §5.1–5.6) ---- */
NRT_STATUS nrt_init(nrt_framework_type_t framework, const char *fw_version, const char *fal_version);
/** [H28] declares `void`; the library also leaves 0 in the return register (NRT-EC-6). */
void nrt_close(void);
NRT_STATUS nrt_get_instance_info(nrt_instance_info_t *info, size_t instance_info_len);
NRT_STATUS nrt_get_total_nc_count(uint32_t *vnc_count);
NRT_STATUS nrt_get_total_vnc_count(uint32_t *vnc_count);
NRT_STATUS nrt_get_visible_nc_count(uint32_t *vnc_count);
NRT_STATUS nrt_get_visible_vnc_count(uint32_t *vnc_count);

/* ---- Models (§5.7–5.11, §8) ---- */
NRT_STATUS nrt_load(const void *neff_bytes, size_t size, int32_t vnc, int32_t vnc_count, nrt_model_t **model);
NRT_STATUS nrt_load_collectives(const void *neff_bytes, size_t size, int32_t vnc, int32_t vnc_count,
                                uint32_t ctx_device_id, uint32_t ctx_device_count, nrt_model_t **model);
NRT_STATUS nrt_unload(nrt_model_t *model);
NRT_STATUS nrt_get_model_nc_count(const nrt_model_t *model, uint32_t *vnc_count);
NRT_STATUS nrt_get_model_vnc_count(const nrt_model_t *model, uint32_t *vnc_count);
NRT_STATUS nrt_get_model_instance_count(nrt_model_t *model, uint32_t *instance_count);
NRT_STATUS nrt_get_model_info(const nrt_model_t *model, nrt_model_info_t *info, size_t info_size_in,
                              size_t *info_size_out);
NRT_STATUS nrt_get_model_tensor_info(nrt_model_t *model, nrt_tensor_info_array_t **tensor_info);
NRT_STATUS nrt_free_model_tensor_info(nrt_tensor_info_array_t *tensor_info);

/* ---- Tensor sets (§5.23) ---- */
NRT_STATUS nrt_allocate_tensor_set(nrt_tensor_set_t **result);
void nrt_destroy_tensor_set(nrt_tensor_set_t **tensor_set);
NRT_STATUS nrt_add_tensor_to_tensor_set(nrt_tensor_set_t *tensor_set, const char *tensor_name, nrt_tensor_t *tensor);
NRT_STATUS nrt_get_tensor_from_tensor_set(nrt_tensor_set_t *tensor_set, const char *tensor_name, nrt_tensor_t **tensor);

/* ---- Execute (§5.24–5.25) ---- */
NRT_STATUS nrt_execute(nrt_model_t *model, const nrt_tensor_set_t *input_set, nrt_tensor_set_t *output_set);
NRT_STATUS nrt_execute_repeat(nrt_model_t *model, const nrt_tensor_set_t *input_set, nrt_tensor_set_t *output_set,
                              int repeat_count);

/* ---- Tensors (§5.12–5.22, §8) ---- */
NRT_STATUS nrt_tensor_allocate(nrt_tensor_placement_t tensor_placement, int vnc, size_t size, const char *name,
                               nrt_tensor_t **tensor);
NRT_STATUS nrt_tensor_allocate_empty(const char *name, nrt_tensor_t **tensor);
NRT_STATUS nrt_tensor_attach_buffer(nrt_tensor_t *tensor, void *buffer, size_t size);
NRT_STATUS nrt_tensor_allocate_slice(const nrt_tensor_t *tensor_source, size_t offset, size_t size, const char *name,
                                     nrt_tensor_t **tensor_slice);
void nrt_tensor_free(nrt_tensor_t **tensor);
NRT_STATUS nrt_tensor_read(const nrt_tensor_t *tensor, void *buf, size_t offset, size_t size);
NRT_STATUS nrt_tensor_write(nrt_tensor_t *tensor, const void *buf, size_t offset, size_t size);
NRT_STATUS nrt_tensor_copy(const nrt_tensor_t *src, size_t src_offset, nrt_tensor_t *dst, size_t dst_offset,
                           size_t size);
size_t nrt_tensor_get_size(const nrt_tensor_t *tensor);
NRT_STATUS nrt_tensor_memset(nrt_tensor_t *tensor, uint64_t offset, int value, size_t size);
void *nrt_tensor_get_va(const nrt_tensor_t *tensor);
NRT_STATUS nrt_memcpy_to_device(void *dest, const void *src, size_t size);
/** Not in the public headers; spike links it (SPEC-NRT §8): 0 for DEVICE, -1 otherwise. */
NRT_STATUS nrt_tensor_get_lnc_index(const nrt_tensor_t *tensor, int *lnc_index);
NRT_STATUS nrt_tensor_read_batch(const nrt_tensor_batch_t *batches, uint64_t num_batches, bool unsafe);
NRT_STATUS nrt_tensor_write_batch(const nrt_tensor_batch_t *batches, uint64_t num_batches, bool unsafe);
NRT_STATUS nrt_tensor_check_output_completion(const nrt_tensor_t *output_tensor, int64_t timeout,
                                              uint64_t expected_completion_count);
NRT_STATUS nrt_tensor_reset_output_completion(nrt_tensor_t *output_tensor);

/* ---- Profiling, async, single-worker collectives (§8, NRT-EC-20) ---- */
NRT_STATUS nrt_profile_start(nrt_model_t *model, const char *filename);
NRT_STATUS nrt_profile_stop(const char *filename);
/** 0: nothing is ever queued (the vnc is not looked at). */
NRT_STATUS nrt_async_drain_queued_execs(int32_t vnc);
NRT_STATUS nrt_barrier(int32_t vnc, uint32_t g_device_id, uint32_t g_device_count);
NRT_STATUS nrt_build_global_comm(int32_t vnc, uint32_t g_device_id, uint32_t g_device_count);
NRT_STATUS nrt_cc_global_comm_init(uint32_t vnc, uint32_t g_device_id, uint32_t g_device_count);

/* ---- Stubs (NRT-EC-19): each warns once, writes nothing and returns NRT_INVALID ----
 * The other headers of this folder (nrt_experimental.h, nrt_profile.h, nrt_sys_trace.h,
 * ndebug_stream.h, nrt_async_sendrecv.h, nrt_async.h, nec.h) declare the rest of SPEC-NRT §8's
 * export list; every function they declare is exported, most of them as stubs. */
NRT_STATUS nrt_tensor_get_device_allocation_info(const nrt_tensor_t *tensor,
                                                 nrt_tensor_device_allocation_info_t *alloc_info);
NRT_STATUS nrt_get_dmabuf_fd(uint64_t va, uint64_t size, int *fd);
NRT_STATUS nrt_host_device_id_get(int neuron_dev, uint32_t *host_device_id);
NRT_STATUS nrt_host_device_id_rid_map_get(uint32_t *count, uint32_t *host_did_to_rid_map);
NRT_STATUS nrt_get_hbm_mmap_va(int device_id, int hbm_idx, void **addr, size_t *size);
NRT_STATUS nrt_get_vnc_memory_stats(uint32_t vnc, nrt_vnc_memory_stats_t *stats, size_t stats_size_in,
                                    size_t *stats_size_out);
NRT_STATUS nrt_get_attached_efa_bdf(const void *va, char *efa_bdf, size_t *len);
/* Exported by runtime 2.31 without a public prototype: any arguments, always NRT_INVALID.
 * (An empty parameter list in C means "unspecified".) */
NRT_STATUS nrt_cc_create_stream();
NRT_STATUS nrt_profile_session_start();
NRT_STATUS nrt_profile_session_stop();

#ifdef __cplusplus
}
#endif
