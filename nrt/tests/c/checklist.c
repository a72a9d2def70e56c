/*
 * checklist: SPEC-NRT §9's misuse cases as one table. Each row calls the library the wrong way
 * and names the status SPEC-NRT gives; where the spec says nothing changes, the row also checks
 * the out-argument or the tensor bytes it could have touched.
 *
 *   checklist PACKED.neff      (the NEFF `tpb-emu pack examples/program/program.toml` writes:
 *                               input x fp32 [128,16], outputs y_avg fp32 and y_max bf16 [128,4])
 *
 * Prints one line per row and exits 1 if any row fails.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrt/nrt.h"
#include "nrt/nrt_experimental.h"

static int failures = 0;
static int rows = 0;

static void row(const char *id, const char *what, int got, int want) {
    rows++;
    if (got != want) {
        failures++;
        printf("FAIL %-7s %s: got %d, want %d\n", id, what, got, want);
    } else {
        printf("ok   %-7s %s -> %d\n", id, what, got);
    }
}

#define ROW(id, call, want) row(id, #call, (int)(call), (int)(want))
#define SENTINEL ((void *)0x5a5a5a5a5a5a5a5aULL)

static void *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc((size_t)n);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) exit(2);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: checklist PACKED.neff\n");
        return 2;
    }
    size_t len = 0;
    void *neff = read_file(argv[1], &len);
    nrt_model_t *model = SENTINEL;
    nrt_tensor_t *t = SENTINEL;
    uint32_t count = 0;
    nrt_version_t ver;

    /* NRT-6, NRT-10: before nrt_init. */
    nrt_close();
    ROW("NRT-6", nrt_load(neff, len, -1, -1, &model), NRT_UNINITIALIZED);
    row("NRT-6", "*model untouched", model == SENTINEL, 1);
    ROW("NRT-6", nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 16, "t", &t), NRT_UNINITIALIZED);
    ROW("NRT-6", nrt_get_total_nc_count(&count), NRT_SUCCESS);
    row("NRT-6", "count written", count, 1);
    ROW("NRT-6", nrt_get_version(&ver, sizeof ver), NRT_SUCCESS);

    /* NRT-11, NRT-7 */
    ROW("NRT-11", nrt_init((nrt_framework_type_t)6, "", ""), NRT_INVALID);
    ROW("NRT-11", nrt_init((nrt_framework_type_t)-1, "", ""), NRT_INVALID);
    ROW("NRT-11", nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, NULL, NULL), NRT_SUCCESS);
    ROW("NRT-7", nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS);

    /* NRT-15, NRT-16, NRT-18 */
    unsigned char vb[224];
    memset(vb, 0xCC, sizeof vb);
    ROW("NRT-16", nrt_get_version((nrt_version_t *)vb, 159), NRT_FAILURE);
    row("NRT-16", "nothing written at 159", vb[0] == 0xCC && vb[100] == 0xCC, 1);
    ROW("NRT-16", nrt_get_version((nrt_version_t *)vb, 200), NRT_SUCCESS);
    row("NRT-16", "bytes 160.. untouched at 200", vb[160] == 0xCC && vb[199] == 0xCC, 1);
    ROW("NRT-16", nrt_get_version((nrt_version_t *)vb, 224), NRT_SUCCESS);
    nrt_version_t *v = (nrt_version_t *)vb;
    row("NRT-15", "rt_major 2, rt_minor 30", v->rt_major == 2 && v->rt_minor == 30, 1);
    row("NRT-15", "rt_detail starts \"libnrt version \"",
        strncmp(v->rt_detail, "libnrt version ", 15) == 0 && memchr(v->rt_detail, 0, 128) != NULL, 1);
    row("NRT-15", "git_hash NUL-terminated", memchr(v->git_hash, 0, 64) != NULL, 1);
    ROW("NRT-16", nrt_get_version(NULL, 224), NRT_INVALID);
    row("NRT-18", "status_as_str(2)", strcmp(nrt_get_status_as_str(NRT_INVALID), "NRT_INVALID"), 0);
    row("NRT-18", "status_as_str(12345)", strcmp(nrt_get_status_as_str((NRT_STATUS)12345), "UNKNOWN_STATUS"), 0);

    /* NRT-17 */
    nrt_instance_info_t ii;
    memset(&ii, 0xCC, sizeof ii);
    ROW("NRT-17", nrt_get_instance_info(&ii, 8), NRT_SUCCESS);
    row("NRT-17", "exactly 8 bytes", ((unsigned char *)&ii)[8] == 0xCC && ii.family != 0xCCCCCCCCu, 1);
    ROW("NRT-17", nrt_get_instance_info(&ii, sizeof ii), NRT_SUCCESS);
    row("NRT-17", "family 5 (trn2) unless TPB_EMU_ARCH", ii.family == 5 || getenv("TPB_EMU_ARCH"), 1);
    row("NRT-17", "device_revision emu", strcmp(ii.device_revision, "emu"), 0);
    ROW("NRT-17", nrt_get_instance_info(NULL, 32), NRT_INVALID);

    /* NRT-20, NRT-21: load arguments. */
    unsigned char *bad = malloc(len);
    memcpy(bad, neff, len);
    ROW("NRT-20", nrt_load(NULL, len, -1, -1, &model), NRT_INVALID);
    ROW("NRT-20", nrt_load(neff, len, -1, -1, NULL), NRT_INVALID);
    ROW("NRT-20", nrt_load(neff, 0, -1, -1, &model), NRT_INVALID);
    ROW("NRT-20", nrt_load(neff, 1023, -1, -1, &model), NRT_INVALID);
    /* neff_version_major (u64 at 0x18, SPEC-NEFF §1) set to 3. */
    uint64_t major = 3;
    memcpy(bad + 0x18, &major, 8);
    ROW("NRT-20", nrt_load(bad, len, -1, -1, &model), NRT_UNSUPPORTED_NEFF_VERSION);
    row("NRT-20", "*model untouched", model == SENTINEL, 1);
    ROW("NRT-21", nrt_load(neff, len, -1, 2, &model), NRT_LOAD_NOT_ENOUGH_NC);
    ROW("NRT-21", nrt_load(neff, len, 1, -1, &model), NRT_INVALID);
    row("NRT-21", "*model untouched", model == SENTINEL, 1);
    nrt_model_t *ms[4];
    ROW("NRT-21", nrt_load(neff, len, -1, -1, &ms[0]), NRT_SUCCESS);
    ROW("NRT-21", nrt_load(neff, len, 0, 1, &ms[1]), NRT_SUCCESS);
    ROW("NRT-21", nrt_load(neff, len, 0, -1, &ms[2]), NRT_SUCCESS);
    ROW("NRT-21", nrt_load(neff, len, -1, 0, &ms[3]), NRT_SUCCESS);
    for (int i = 1; i < 4; i++) ROW("NRT-24", nrt_unload(ms[i]), NRT_SUCCESS);
    model = ms[0];

    /* NRT-24 */
    ROW("NRT-24", nrt_get_model_nc_count(model, &count), NRT_SUCCESS);
    row("NRT-24", "model nc count", count, 1);
    ROW("NRT-24", nrt_get_model_vnc_count(model, NULL), NRT_INVALID);
    ROW("NRT-24", nrt_get_model_vnc_count(ms[1], &count), NRT_INVALID_HANDLE);
    ROW("NRT-24", nrt_unload(ms[1]), NRT_INVALID_HANDLE);
    ROW("NRT-24", nrt_unload(NULL), NRT_INVALID_HANDLE);

    /* NRT-25, NRT-26, NRT-27, NRT-28, NRT-29: tensor info. */
    nrt_tensor_info_array_t *info = SENTINEL;
    ROW("NRT-29", nrt_get_model_tensor_info(ms[1], &info), NRT_INVALID_HANDLE);
    row("NRT-29", "*tensor_info untouched", info == SENTINEL, 1);
    ROW("NRT-29", nrt_get_model_tensor_info(model, NULL), NRT_INVALID);
    ROW("NRT-25", nrt_get_model_tensor_info(model, &info), NRT_SUCCESS);
    row("NRT-25", "tensor_count", (int)info->tensor_count, 3);
    row("NRT-25", "order x, y_avg, y_max",
        !strcmp(info->tensor_array[0].name, "x") && !strcmp(info->tensor_array[1].name, "y_avg") &&
            !strcmp(info->tensor_array[2].name, "y_max"),
        1);
    nrt_tensor_info_t *x = &info->tensor_array[0];
    int legacy = getenv("TPB_EMU_NRT_DTYPE_ABI") && !strcmp(getenv("TPB_EMU_NRT_DTYPE_ABI"), "legacy");
    row("NRT-26", "x usage", x->usage, NRT_TENSOR_USAGE_INPUT);
    row("NRT-26", "x size", (int)x->size, 128 * 16 * 4);
    row("NRT-26", "x dtype (float32)", x->dtype, legacy ? 1 : 10);
    row("NRT-26", "x ndim, shape", x->ndim == 2 && x->shape[0] == 128 && x->shape[1] == 16, 1);
    row("NRT-27", "y_max dtype (bfloat16)", info->tensor_array[2].dtype, legacy ? 3 : 6);
    row("NRT-27", "y_max usage", info->tensor_array[2].usage, NRT_TENSOR_USAGE_OUTPUT);
    ROW("NRT-28", nrt_free_model_tensor_info(NULL), NRT_SUCCESS);
    nrt_tensor_info_array_t *info2 = NULL;
    ROW("NRT-28", nrt_get_model_tensor_info(model, &info2), NRT_SUCCESS);
    ROW("NRT-28", nrt_free_model_tensor_info(info2), NRT_SUCCESS);
    ROW("NRT-28", nrt_free_model_tensor_info(info2), NRT_INVALID);

    /* NRT-30..39: tensors. */
    nrt_tensor_t *a = NULL, *b = NULL, *e = NULL, *sl = NULL;
    ROW("NRT-30", nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, -1, 64, "a", &a), NRT_SUCCESS);
    t = SENTINEL;
    ROW("NRT-30", nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 1, 64, "t", &t), NRT_INVALID);
    ROW("NRT-30", nrt_tensor_allocate((nrt_tensor_placement_t)3, 0, 64, "t", &t), NRT_INVALID);
    row("NRT-30", "*tensor untouched", t == SENTINEL, 1);
    ROW("NRT-30", nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "t", NULL), NRT_INVALID);
    unsigned char buf[128], zero[64];
    memset(zero, 0, sizeof zero);
    ROW("NRT-31", nrt_tensor_read(a, buf, 0, 64), NRT_SUCCESS);
    row("NRT-31", "new tensor reads zeros", memcmp(buf, zero, 64), 0);
    unsigned char pat[64];
    for (int i = 0; i < 64; i++) pat[i] = (unsigned char)(i * 7 + 1);
    ROW("NRT-31", nrt_tensor_write(a, pat, 0, 64), NRT_SUCCESS);
    memset(buf, 0xEE, sizeof buf);
    ROW("NRT-32", nrt_tensor_read(a, buf, 1, 64), NRT_INVALID);
    row("NRT-32", "buf unchanged", buf[0] == 0xEE && buf[63] == 0xEE, 1);
    ROW("NRT-32", nrt_tensor_write(a, zero, 60, 5), NRT_INVALID);
    ROW("NRT-32", nrt_tensor_memset(a, 63, 0, 2), NRT_INVALID);
    ROW("NRT-32", nrt_tensor_read(a, buf, SIZE_MAX, 1), NRT_INVALID);
    ROW("NRT-31", nrt_tensor_read(a, buf, 0, 64), NRT_SUCCESS);
    row("NRT-32", "tensor unchanged by failed writes", memcmp(buf, pat, 64), 0);
    ROW("NRT-38", nrt_tensor_memset(a, 8, 0x1AB, 4), NRT_SUCCESS);
    ROW("NRT-38", nrt_tensor_read(a, buf, 8, 4), NRT_SUCCESS);
    row("NRT-38", "memset writes 0xAB", buf[0] == 0xAB && buf[3] == 0xAB, 1);
    ROW("NRT-34", nrt_tensor_allocate_slice(a, 16, 48, "s", &sl), NRT_SUCCESS);
    ROW("NRT-34", nrt_tensor_allocate_slice(a, 16, 49, "s", &t), NRT_INVALID);
    row("NRT-36", "slice size", (int)nrt_tensor_get_size(sl), 48);
    ROW("NRT-34", nrt_tensor_read(sl, buf, 0, 4), NRT_SUCCESS);
    row("NRT-34", "slice sees the source's byte 16", buf[0], pat[16]);
    ROW("NRT-35", nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, 16, "b", &b), NRT_SUCCESS);
    ROW("NRT-32", nrt_tensor_copy(a, 60, b, 0, 8), NRT_INVALID);
    ROW("NRT-32", nrt_tensor_copy(a, 0, b, 12, 8), NRT_INVALID);
    ROW("NRT-33", nrt_tensor_allocate_empty("e", &e), NRT_SUCCESS);
    ROW("NRT-33", nrt_tensor_read(e, buf, 0, 1), NRT_INVALID);
    row("NRT-37", "get_va of empty is NULL", nrt_tensor_get_va(e) == NULL, 1);
    unsigned char own[32];
    memset(own, 3, sizeof own);
    ROW("NRT-33", nrt_tensor_attach_buffer(e, own, sizeof own), NRT_SUCCESS);
    ROW("NRT-33", nrt_tensor_write(e, pat, 0, 4), NRT_SUCCESS);
    row("NRT-33", "write lands in the attached buffer", own[0] == pat[0] && own[4] == 3, 1);
    ROW("NRT-54", nrt_tensor_attach_buffer(e, NULL, 4), NRT_INVALID);
    int lnc = 7;
    ROW("NRT-54", nrt_tensor_get_lnc_index(a, &lnc), NRT_SUCCESS);
    row("NRT-54", "lnc of DEVICE", lnc, 0);
    ROW("NRT-54", nrt_tensor_get_lnc_index(e, &lnc), NRT_SUCCESS);
    row("NRT-54", "lnc of attached", lnc, -1);
    unsigned char *va = nrt_tensor_get_va(a);
    row("NRT-37", "get_va non-NULL", va != NULL, 1);
    ROW("NRT-39", nrt_memcpy_to_device(va + 60, pat, 4), NRT_SUCCESS);
    ROW("NRT-39", nrt_memcpy_to_device(va + 61, pat, 4), NRT_INVALID);
    ROW("NRT-39", nrt_memcpy_to_device(buf, pat, 4), NRT_INVALID);
    nrt_tensor_t *saved = b;
    nrt_tensor_free(&b);
    row("NRT-35", "free sets NULL", b == NULL, 1);
    nrt_tensor_free(&b);
    nrt_tensor_free(NULL);
    nrt_tensor_free(&saved);
    row("NRT-36", "get_size of freed", (int)nrt_tensor_get_size(saved), 0);
    row("NRT-36", "get_size of NULL", (int)nrt_tensor_get_size(NULL), 0);
    row("NRT-37", "get_va of freed", nrt_tensor_get_va(saved) == NULL, 1);
    ROW("NRT-32", nrt_tensor_read(saved, buf, 0, 1), NRT_INVALID);

    /* NRT-40..42: sets. */
    nrt_tensor_set_t *in = NULL, *out = NULL, *s2 = NULL;
    ROW("NRT-40", nrt_allocate_tensor_set(NULL), NRT_INVALID);
    ROW("NRT-40", nrt_allocate_tensor_set(&in), NRT_SUCCESS);
    ROW("NRT-40", nrt_allocate_tensor_set(&out), NRT_SUCCESS);
    ROW("NRT-41", nrt_add_tensor_to_tensor_set(NULL, "x", a), NRT_INVALID);
    ROW("NRT-41", nrt_add_tensor_to_tensor_set(in, NULL, a), NRT_INVALID);
    ROW("NRT-41", nrt_add_tensor_to_tensor_set(in, "x", NULL), NRT_INVALID);
    ROW("NRT-41", nrt_add_tensor_to_tensor_set(in, "x", saved), NRT_INVALID);
    t = SENTINEL;
    ROW("NRT-40", nrt_get_tensor_from_tensor_set(in, "nope", &t), NRT_FAILURE);
    row("NRT-40", "*tensor untouched", t == SENTINEL, 1);

    /* NRT-44..47: execute binding. Tensors of the model's sizes. */
    nrt_tensor_t *tx = NULL, *tavg = NULL, *tmax = NULL, *small = NULL, *extra = NULL;
    ROW("exec", nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 8192 + 64, "x", &tx), NRT_SUCCESS);
    ROW("exec", nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 2048, "y_avg", &tavg), NRT_SUCCESS);
    ROW("exec", nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_VIRTUAL, 0, 1024 + 64, "y_max", &tmax), NRT_SUCCESS);
    ROW("exec", nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 8191, "x", &small), NRT_SUCCESS);
    ROW("exec", nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 16, "extra", &extra), NRT_SUCCESS);
    float xs[2048 + 16];
    for (int i = 0; i < 2048 + 16; i++) xs[i] = (float)((i * 37) % 101) - 50.0f;
    ROW("exec", nrt_tensor_write(tx, xs, 0, sizeof xs), NRT_SUCCESS);
    ROW("exec", nrt_tensor_memset(tmax, 0, 0x77, 1024 + 64), NRT_SUCCESS);
    ROW("NRT-47", nrt_execute(model, NULL, out), NRT_INVALID);
    ROW("NRT-47", nrt_execute(NULL, in, out), NRT_INVALID_HANDLE);
    ROW("NRT-44", nrt_execute(model, in, out), NRT_INVALID); /* no input */
    ROW("exec", nrt_add_tensor_to_tensor_set(in, "x", small), NRT_SUCCESS);
    ROW("exec", nrt_add_tensor_to_tensor_set(out, "y_avg", tavg), NRT_SUCCESS);
    ROW("exec", nrt_add_tensor_to_tensor_set(out, "y_max", tmax), NRT_SUCCESS);
    ROW("NRT-46", nrt_execute(model, in, out), NRT_INVALID); /* one byte short */
    ROW("NRT-40", nrt_add_tensor_to_tensor_set(in, "x", tx), NRT_SUCCESS); /* replaces */
    ROW("NRT-40", nrt_get_tensor_from_tensor_set(in, "x", &t), NRT_SUCCESS);
    row("NRT-40", "replaced entry", t == tx, 1);
    ROW("exec", nrt_add_tensor_to_tensor_set(in, "extra", extra), NRT_SUCCESS);
    ROW("NRT-44", nrt_execute(model, in, out), NRT_INVALID); /* an extra input */
    ROW("NRT-56", nrt_tensor_check_output_completion(tavg, -1, 1), NRT_TIMEOUT);
    unsigned char tail[64];
    ROW("NRT-44", nrt_tensor_read(tmax, tail, 0, 64), NRT_SUCCESS);
    row("NRT-44", "no output changed by failed runs", tail[0] == 0x77 && tail[63] == 0x77, 1);
    ROW("exec", nrt_allocate_tensor_set(&s2), NRT_SUCCESS);
    ROW("exec", nrt_add_tensor_to_tensor_set(s2, "x", tx), NRT_SUCCESS);
    ROW("NRT-50", nrt_execute_repeat(model, s2, out, 2), NRT_INVALID);
    ROW("exec", nrt_add_tensor_to_tensor_set(out, "unused", extra), NRT_SUCCESS);
    ROW("NRT-46", nrt_execute(model, s2, out), NRT_SUCCESS); /* x 64 bytes long, extra output */
    ROW("NRT-46", nrt_tensor_read(tmax, tail, 1024, 64), NRT_SUCCESS);
    row("NRT-46", "output tail beyond size unchanged", tail[0] == 0x77 && tail[63] == 0x77, 1);
    ROW("NRT-56", nrt_tensor_check_output_completion(tavg, -1, 1), NRT_SUCCESS);
    ROW("NRT-56", nrt_tensor_check_output_completion(tavg, -1, 2), NRT_TIMEOUT);
    ROW("NRT-56", nrt_tensor_reset_output_completion(tavg), NRT_SUCCESS);
    ROW("NRT-56", nrt_tensor_check_output_completion(tavg, 0, 1), NRT_TIMEOUT);
    ROW("NRT-56", nrt_tensor_check_output_completion(NULL, 0, 1), NRT_INVALID);
    /* The average of the first 2x2 window of lane 0: x[0],x[1],x[4],x[5] of a 4x4 map. */
    float avg0 = 0;
    ROW("NRT-43", nrt_tensor_read(tavg, &avg0, 0, 4), NRT_SUCCESS);
    float want = (xs[0] + xs[1] + xs[4] + xs[5]) / 4.0f;
    row("NRT-43", "y_avg[0] is the 2x2 mean", avg0 == want, 1);
    unsigned char first[2048], again[2048];
    ROW("NRT-49", nrt_tensor_read(tavg, first, 0, 2048), NRT_SUCCESS);
    ROW("NRT-50", nrt_execute_repeat(model, s2, out, 1), NRT_SUCCESS);
    ROW("NRT-49", nrt_tensor_read(tavg, again, 0, 2048), NRT_SUCCESS);
    row("NRT-49", "two runs identical", memcmp(first, again, 2048), 0);
    nrt_tensor_free(&tx);
    ROW("NRT-47", nrt_execute(model, s2, out), NRT_INVALID); /* a freed input */

    /* NRT-53, NRT-54, NRT-57 */
    int fd = 12345;
    ROW("NRT-53", nrt_get_dmabuf_fd(0, 0, &fd), NRT_INVALID);
    row("NRT-53", "stub writes nothing", fd, 12345);
    ROW("NRT-53", nrt_all_gather(0, 0, 1, 0, NULL, NULL), NRT_INVALID);
    ROW("NRT-53", nrt_barrier(0, 0, 2), NRT_INVALID);
    ROW("NRT-53", nrt_barrier(0, 0, 1), NRT_SUCCESS);
    ROW("NRT-53", nrt_profile_start(model, "p"), NRT_SUCCESS);
    ROW("NRT-53", nrt_profile_stop("p"), NRT_SUCCESS);
    nrt_model_info_t mi = {7};
    size_t mio = 0;
    ROW("NRT-54", nrt_get_model_info(model, &mi, sizeof mi, &mio), NRT_SUCCESS);
    row("NRT-54", "model info vnc 0, 4 bytes", mi.vnc == 0 && mio == 4, 1);
    ROW("NRT-54", nrt_get_model_instance_count(model, &count), NRT_SUCCESS);
    row("NRT-54", "instance count", count, 1);
    nrt_model_t *mc = NULL;
    ROW("NRT-57", nrt_load_collectives(neff, len, -1, -1, 1, 2, &mc), NRT_INVALID);
    ROW("NRT-57", nrt_load_collectives(neff, len, -1, -1, 0, 1, &mc), NRT_SUCCESS);
    ROW("NRT-57", nrt_unload(mc), NRT_SUCCESS);

    /* NRT-42: sets. */
    nrt_destroy_tensor_set(&in);
    row("NRT-42", "destroy sets NULL", in == NULL, 1);
    nrt_destroy_tensor_set(&in);
    nrt_destroy_tensor_set(NULL);
    nrt_destroy_tensor_set((nrt_tensor_set_t **)out); /* the set itself, by value */
    ROW("NRT-42", nrt_add_tensor_to_tensor_set(out, "y", tavg), NRT_INVALID);
    ROW("NRT-42", nrt_tensor_read(tavg, buf, 0, 4), NRT_SUCCESS);

    /* NRT-8, NRT-9, NRT-10: after close. */
    nrt_tensor_t *old_t = a;
    nrt_model_t *old_m = model;
    nrt_close();
    ROW("NRT-8", nrt_load(neff, len, -1, -1, &model), NRT_CLOSED);
    row("NRT-8", "get_va after close", nrt_tensor_get_va(old_t) == NULL, 1);
    row("NRT-8", "get_size after close", (int)nrt_tensor_get_size(old_t), 0);
    ROW("NRT-8", nrt_get_version(&ver, sizeof ver), NRT_SUCCESS);
    nrt_close();
    ROW("NRT-10", nrt_load(neff, len, -1, -1, &model), NRT_CLOSED);
    ROW("NRT-28", nrt_free_model_tensor_info(info), NRT_SUCCESS); /* readable after close */
    ROW("NRT-9", nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS);
    ROW("NRT-9", nrt_get_model_nc_count(old_m, &count), NRT_INVALID_HANDLE);
    ROW("NRT-9", nrt_tensor_read(old_t, buf, 0, 1), NRT_INVALID);
    ROW("NRT-9", nrt_load(neff, len, -1, -1, &model), NRT_SUCCESS);
    ROW("NRT-9", nrt_unload(model), NRT_SUCCESS);
    nrt_close();

    free(bad);
    free(neff);
    printf("%d rows, %d failed\n", rows, failures);
    return failures ? 1 : 0;
}
