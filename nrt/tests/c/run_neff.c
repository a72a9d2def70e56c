/*
 * run_neff: the developer guide's flow ([C-DG], SPEC-NRT §10) through tpb-emu's libnrt.
 *
 *   run_neff MODEL.neff DIR [RUNS]
 *
 * Loads MODEL.neff (its buffer freed right after nrt_load), walks the tensor info, allocates
 * one DEVICE tensor per input and output (nrt_tensor_allocate by the info size, added to a set
 * under the info name), writes each input from DIR/<name>.in (raw bytes), executes RUNS times
 * (default 2; every run must give the same bytes), writes each output to DIR/<name>.out, then
 * unloads, frees every tensor, destroys the sets, frees the info and closes. Exit 0 on success;
 * any status other than NRT_SUCCESS is printed with its name and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrt/nrt.h"

#define CHECK(call)                                                                           \
    do {                                                                                      \
        NRT_STATUS s_ = (call);                                                               \
        if (s_ != NRT_SUCCESS) {                                                              \
            fprintf(stderr, "%s:%d: %s -> %d (%s)\n", __FILE__, __LINE__, #call, (int)s_,     \
                    nrt_get_status_as_str(s_));                                               \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static void *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: read failed\n", path);
        exit(1);
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void write_file(const char *path, const void *buf, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: run_neff MODEL.neff DIR [RUNS]\n");
        return 2;
    }
    int runs = argc > 3 ? atoi(argv[3]) : 2;
    char path[4096];

    CHECK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
    size_t neff_len = 0;
    void *neff = read_file(argv[1], &neff_len);
    nrt_model_t *model = NULL;
    CHECK(nrt_load(neff, neff_len, -1, -1, &model));
    /* NRT-19: the caller may overwrite and free the bytes once nrt_load returns. */
    memset(neff, 0xA5, neff_len);
    free(neff);

    nrt_tensor_info_array_t *info = NULL;
    CHECK(nrt_get_model_tensor_info(model, &info));
    nrt_tensor_set_t *inputs = NULL, *outputs = NULL;
    CHECK(nrt_allocate_tensor_set(&inputs));
    CHECK(nrt_allocate_tensor_set(&outputs));
    nrt_tensor_t **tensors = calloc(info->tensor_count, sizeof(nrt_tensor_t *));
    for (uint64_t i = 0; i < info->tensor_count; i++) {
        const nrt_tensor_info_t *t = &info->tensor_array[i];
        printf("%s %s size %zu dtype %d shape", t->usage == NRT_TENSOR_USAGE_INPUT ? "input" : "output",
               t->name, t->size, (int)t->dtype);
        for (uint32_t d = 0; d < t->ndim; d++) printf(" %u", t->shape[d]);
        printf("\n");
        CHECK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, t->size, t->name, &tensors[i]));
        if (t->usage == NRT_TENSOR_USAGE_INPUT) {
            size_t len = 0;
            snprintf(path, sizeof path, "%s/%s.in", argv[2], t->name);
            void *data = read_file(path, &len);
            if (len != t->size) {
                fprintf(stderr, "%s: %zu bytes, the input needs %zu\n", path, len, t->size);
                return 1;
            }
            CHECK(nrt_tensor_write(tensors[i], data, 0, len));
            free(data);
            CHECK(nrt_add_tensor_to_tensor_set(inputs, t->name, tensors[i]));
        } else {
            CHECK(nrt_add_tensor_to_tensor_set(outputs, t->name, tensors[i]));
        }
    }

    void **first = calloc(info->tensor_count, sizeof(void *));
    for (int r = 0; r < runs; r++) {
        CHECK(nrt_execute(model, inputs, outputs));
        for (uint64_t i = 0; i < info->tensor_count; i++) {
            const nrt_tensor_info_t *t = &info->tensor_array[i];
            if (t->usage != NRT_TENSOR_USAGE_OUTPUT) continue;
            nrt_tensor_t *got = NULL;
            CHECK(nrt_get_tensor_from_tensor_set(outputs, t->name, &got));
            void *buf = malloc(t->size ? t->size : 1);
            CHECK(nrt_tensor_read(got, buf, 0, t->size));
            if (r == 0) {
                first[i] = buf;
                snprintf(path, sizeof path, "%s/%s.out", argv[2], t->name);
                write_file(path, buf, t->size);
            } else {
                if (memcmp(first[i], buf, t->size) != 0) {
                    fprintf(stderr, "run %d: output %s differs from the first run\n", r, t->name);
                    return 1;
                }
                free(buf);
            }
        }
    }

    CHECK(nrt_unload(model));
    for (uint64_t i = 0; i < info->tensor_count; i++) {
        free(first[i]);
        nrt_tensor_free(&tensors[i]);
        if (tensors[i] != NULL) {
            fprintf(stderr, "nrt_tensor_free left the handle set\n");
            return 1;
        }
    }
    free(first);
    free(tensors);
    nrt_destroy_tensor_set(&inputs);
    nrt_destroy_tensor_set(&outputs);
    if (inputs != NULL || outputs != NULL) {
        fprintf(stderr, "nrt_destroy_tensor_set left the handle set\n");
        return 1;
    }
    CHECK(nrt_free_model_tensor_info(info));
    nrt_close();
    printf("ok\n");
    return 0;
}
