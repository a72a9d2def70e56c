/*
 * tpb-emu's libnrt: the [H28] nrt_profile.h. nrt_profile_start/_stop (declared in nrt.h) return
 * NRT_SUCCESS and write no file; everything here is an NRT-EC-19 stub (SPEC-NRT §8): NRT_INVALID,
 * nothing for void, nothing written through any argument.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nrt/nrt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nrt_profile_continuous_options nrt_profile_continuous_options_t;
typedef struct nrt_inspect_config nrt_inspect_config_t;

NRT_STATUS nrt_profile_continuous_options_allocate(nrt_profile_continuous_options_t **options);
NRT_STATUS nrt_profile_continuous_options_free(nrt_profile_continuous_options_t *options);
NRT_STATUS nrt_profile_continuous_options_set_output_dir(nrt_profile_continuous_options_t *options,
                                                         const char *output_dir);
NRT_STATUS nrt_profile_continuous_start(nrt_profile_continuous_options_t *options);
NRT_STATUS nrt_profile_continuous_save(uint32_t vnc, nrt_profile_continuous_options_t *options);
NRT_STATUS nrt_profile_continuous_stop(void);
NRT_STATUS nrt_inspect_begin(void);
NRT_STATUS nrt_inspect_stop(void);
NRT_STATUS nrt_inspect_config_allocate(nrt_inspect_config_t **options);
NRT_STATUS nrt_inspect_config_set_defaults(nrt_inspect_config_t *options);
NRT_STATUS nrt_inspect_config_free(nrt_inspect_config_t *options);
NRT_STATUS nrt_inspect_config_set_session_id(nrt_inspect_config_t *options, int session_id);
NRT_STATUS nrt_inspect_config_set_output_dir(nrt_inspect_config_t *options, const char *output_dir);
NRT_STATUS nrt_inspect_config_set_sys_trace_max_events_per_nc(nrt_inspect_config_t *options,
                                                              uint64_t sys_trace_max_events_per_nc);
NRT_STATUS nrt_inspect_config_set_capture_enabled_for_nc(nrt_inspect_config_t *options, uint32_t nc_idx,
                                                         bool enabled);
NRT_STATUS nrt_inspect_config_set_capture_enabled_for_event_type_string(nrt_inspect_config_t *options,
                                                                        const char *event_type, bool enabled);
NRT_STATUS nrt_inspect_config_set_enable_inspect(nrt_inspect_config_t *options, bool enable_inspect);
NRT_STATUS nrt_inspect_config_set_enable_inspect_on_fail(nrt_inspect_config_t *options,
                                                         bool enable_inspect_on_fail);
NRT_STATUS nrt_inspect_begin_with_options(nrt_inspect_config_t *options);
NRT_STATUS nrt_inspect_config_get_all_activity_types(const char ***activity_types, size_t *count);
NRT_STATUS nrt_inspect_config_get_enabled_activity_types(nrt_inspect_config_t *options,
                                                         const char ***activity_types, size_t *count);
void nrt_inspect_config_free_activity_types(const char **activity_types, size_t count);
NRT_STATUS nrt_inspect_config_set_activity(nrt_inspect_config_t *options, const char *activity_type,
                                           bool enabled);

#ifdef __cplusplus
}
#endif
