/*
 * tpb-emu's libnrt: the [H28] nrt_experimental.h functions that nrt.h does not already declare
 * (nrt.h here also holds the tensor-info, model-info, barrier and memcpy functions the real
 * nrt_experimental.h declares). All are NRT-EC-19 stubs (SPEC-NRT §8) except nrt_all_gather's
 * single-worker case, which is a stub too: any call returns NRT_INVALID.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nrt/nrt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*NRT_ASYNC_EXEC_STATUS_CALLBACK)(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                                               NRT_STATUS status);

typedef struct nrt_ucode_img {
    uint8_t *bin;
    size_t size;
} nrt_ucode_img;

typedef struct nrt_ucode_info {
    nrt_ucode_img iram;
    nrt_ucode_img dram;
} nrt_ucode_info;

/* Stubs: NRT_INVALID (NULL for nrt_get_libnccl_net), nothing written. */
NRT_STATUS nrt_all_gather(int32_t vnc, uint32_t g_device_id, uint32_t g_device_count, uint32_t rank_input_size,
                          void *input, void *output);
NRT_STATUS nrt_trace_start(bool trace_mem);
NRT_STATUS nrt_trace_stop(const char *filename);
void *nrt_get_libnccl_net(int *err, char *err_msg, size_t err_msg_size);
NRT_STATUS nrt_set_pool_eng_ucode(const nrt_ucode_info *ucode_info);
NRT_STATUS nrt_register_async_exec_callback(NRT_ASYNC_EXEC_STATUS_CALLBACK callback, void *params);

#ifdef __cplusplus
}
#endif
