/*
 * tpb-emu's libnrt: the [H28] nrt_async.h (the 3.0 async API, exported under version node
 * NRT_3.0.0), all NRT-EC-19 stubs (SPEC-NRT §8): NRT_INVALID, nothing for void, nothing written
 * through any argument. (No static_assert: the public header uses it without <assert.h>, SPEC-NRT §2.2.)
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nrt/nrt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    NRTA_XU_TENSOR_READ = 0,
    NRTA_XU_TENSOR_WRITE,
    NRTA_XU_TENSOR_OP,
    NRTA_XU_COMPUTE,
    NRTA_XU_COLLECTIVES,
    NRTA_XU_TYPE_NUM
} nrta_xu_t;

typedef uint64_t nrta_seq_t;
typedef uint16_t nrta_xu_id_t;

typedef struct nrta_error {
    nrta_seq_t seq_id;
    uint64_t error_code;
} nrta_error_t;

typedef struct nrta_error_tracker nrta_error_tracker_t;

NRT_STATUS nrta_tensor_write(nrt_tensor_t *tensor, const void *buf, uint64_t offset, uint64_t size, int queue,
                             nrta_error_tracker_t *err, nrta_seq_t *req_sequence);
NRT_STATUS nrta_tensor_read(void *buf, nrt_tensor_t *tensor, uint64_t offset, uint64_t size, int queue,
                            nrta_error_tracker_t *err, nrta_seq_t *req_sequence);
NRT_STATUS nrta_tensor_copy(nrt_tensor_t *src, uint64_t src_offset, nrt_tensor_t *dst, uint64_t dst_offset,
                            uint64_t size, int queue, nrta_error_tracker_t *err, nrta_seq_t *req_sequence);
NRT_STATUS nrta_execute_schedule(nrt_model_t *model, const nrt_tensor_set_t *input, nrt_tensor_set_t *output,
                                 int queue, nrta_error_tracker_t *err, nrta_seq_t *req_sequence);
NRT_STATUS nrta_cc_prepare(nrt_cc_comm_t *comm, nrt_tensor_list_t *input, nrt_tensor_list_t *output,
                           nrt_dtype_t dtype, nrt_op_type_t op, nrt_cc_op_type_t cc_op,
                           nrt_cc_context_t **cc_ctx);
NRT_STATUS nrta_cc_schedule(nrt_cc_context_t **cc_ctx, int queue, nrta_error_tracker_t *err,
                            nrta_seq_t *req_sequence);
NRT_STATUS nrta_is_completed(nrta_seq_t seq, bool *is_completed);
NRT_STATUS nrta_get_sequence(uint32_t lnc, nrta_xu_t xu, int queue, nrta_seq_t *seq);
NRT_STATUS nrta_get_completion_handle(nrta_seq_t seq, int *fd);
NRT_STATUS nrta_error_tracker_create(uint32_t lnc_idx, nrta_error_tracker_t **error_tracker);
void nrta_error_tracker_destroy(nrta_error_tracker_t *error_tracker);
NRT_STATUS nrta_error_tracker_get_list(nrta_error_tracker_t *error_tracker, const nrta_error_t **list,
                                       size_t *error_count);
/* Linked by spike, not in [H28]; its prototype is unpublished (any arguments). */
NRT_STATUS nrta_event_register_xu_completion();

#ifdef __cplusplus
}
#endif
