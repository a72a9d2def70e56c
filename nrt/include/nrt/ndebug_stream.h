/*
 * tpb-emu's libnrt: the [H28] ndebug_stream.h, NRT-EC-19 stubs (SPEC-NRT §8): NRT_INVALID,
 * nothing for void, nothing written through any argument.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nrt/nrt_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ndebug_stream_event_type {
    NDEBUG_STREAM_EVENT_TYPE_INVALID = 0,
    NDEBUG_STREAM_EVENT_TYPE_DEBUG_TENSOR_READ = 1,
} ndebug_stream_event_type_t;

typedef struct ndebug_stream_event_header {
    uint64_t data_size;
    uint32_t type;
    char reserved[52];
} ndebug_stream_event_header_t;

NRT_STATUS nrt_debug_client_connect(int logical_nc_idx, int *stream_fd);
void nrt_debug_client_connect_close(int stream_fd);
NRT_STATUS nrt_debug_client_read_one_event(int stream_fd, ndebug_stream_event_header_t *header, void **payload);

#ifdef __cplusplus
}
#endif
