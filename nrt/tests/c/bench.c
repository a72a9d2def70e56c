/*
 * bench: nrt_load and nrt_execute timings through tpb-emu's libnrt (scripts/bench-libnrt.sh).
 *
 *   bench MODEL.neff RUNS
 *
 * Loads MODEL.neff (timing nrt_load), allocates one DEVICE tensor per info entry, writes every
 * input once (a fixed pattern), then times RUNS nrt_execute calls. Prints one line per figure.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nrt/nrt.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define CHECK(call)                                                                      \
    do {                                                                                 \
        NRT_STATUS s_ = (call);                                                          \
        if (s_ != NRT_SUCCESS) {                                                         \
            fprintf(stderr, "%s -> %d (%s)\n", #call, (int)s_, nrt_get_status_as_str(s_)); \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: bench MODEL.neff RUNS\n");
        return 2;
    }
    int runs = atoi(argv[2]);
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 2;
    fseek(f, 0, SEEK_END);
    size_t len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    void *neff = malloc(len);
    if (fread(neff, 1, len, f) != len) return 2;
    fclose(f);

    CHECK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
    nrt_model_t *model = NULL;
    double t0 = now();
    CHECK(nrt_load(neff, len, -1, -1, &model));
    printf("nrt_load: %.3f ms\n", (now() - t0) * 1e3);
    free(neff);
    nrt_tensor_info_array_t *info = NULL;
    CHECK(nrt_get_model_tensor_info(model, &info));
    nrt_tensor_set_t *in = NULL, *out = NULL;
    CHECK(nrt_allocate_tensor_set(&in));
    CHECK(nrt_allocate_tensor_set(&out));
    nrt_tensor_t **ts = calloc(info->tensor_count, sizeof *ts);
    for (uint64_t i = 0; i < info->tensor_count; i++) {
        nrt_tensor_info_t *e = &info->tensor_array[i];
        CHECK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, e->size, e->name, &ts[i]));
        if (e->usage == NRT_TENSOR_USAGE_INPUT) {
            float *x = nrt_tensor_get_va(ts[i]);
            for (size_t k = 0; k < e->size / 4; k++) x[k] = (float)(k % 1013) * 0.5f - 200.0f;
            CHECK(nrt_add_tensor_to_tensor_set(in, e->name, ts[i]));
        } else {
            CHECK(nrt_add_tensor_to_tensor_set(out, e->name, ts[i]));
        }
    }
    double best = 1e30, total = 0;
    for (int r = 0; r < runs; r++) {
        double a = now();
        CHECK(nrt_execute(model, in, out));
        double d = now() - a;
        total += d;
        if (d < best) best = d;
        printf("nrt_execute run %d: %.3f ms\n", r + 1, d * 1e3);
    }
    printf("nrt_execute: best %.3f ms, mean %.3f ms over %d runs\n", best * 1e3, total / runs * 1e3, runs);
    CHECK(nrt_unload(model));
    for (uint64_t i = 0; i < info->tensor_count; i++) nrt_tensor_free(&ts[i]);
    free(ts);
    nrt_destroy_tensor_set(&in);
    nrt_destroy_tensor_set(&out);
    CHECK(nrt_free_model_tensor_info(info));
    nrt_close();
    return 0;
}
