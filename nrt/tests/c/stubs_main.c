/*
 * The body of the exports test (nrt/tests/clients.rs prepends the #includes of every header and
 * `all[]`, a pointer to every declared function): NRT-4's count and NRT-53's stub rows.
 */
static int failures = 0;
static int rows = 0;

static void row(const char *what, long got, long want) {
    rows++;
    if (got != want) {
        failures++;
        printf("FAIL %s: got %ld, want %ld\n", what, got, want);
    } else {
        printf("ok   %s -> %ld\n", what, got);
    }
}

#define ROW(call, want) row(#call, (long)(call), (long)(want))

int main(void) {
    size_t n = sizeof all / sizeof all[0];
    for (size_t i = 0; i < n; i++) {
        if (all[i] == NULL) row("a NULL function address", 1, 0);
    }
    printf("%zu functions\n", n);
    ROW(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS);

    /* NRT-53: statuses, and nothing written through the out-arguments. */
    unsigned char out[64];
    memset(out, 0xA5, sizeof out);
    ROW(nrt_all_gather(0, 0, 1, 4, out, out + 8), NRT_INVALID);
    ROW(nrt_barrier(0, 0, 2), NRT_INVALID);
    ROW(nrt_barrier(0, 0, 1), NRT_SUCCESS);
    int fd = 12345;
    ROW(nrt_get_dmabuf_fd(0, 4096, &fd), NRT_INVALID);
    row("dmabuf fd untouched", fd, 12345);
    ROW(nrt_profile_start(NULL, "x.ntff"), NRT_SUCCESS);
    ROW(nrt_profile_stop("x.ntff"), NRT_SUCCESS);
    ROW(nrt_cc_create_stream(), NRT_INVALID);
    ROW(nrt_async_drain_queued_execs(0), NRT_SUCCESS);
    ROW(nrt_trace_start(true), NRT_INVALID);
    int err = 7;
    row("nrt_get_libnccl_net -> NULL", nrt_get_libnccl_net(&err, (char *)out, sizeof out) == NULL, 1);
    row("err untouched", err, 7);
    nrt_inspect_config_t *cfg = (nrt_inspect_config_t *)out;
    ROW(nrt_inspect_config_allocate(&cfg), NRT_INVALID);
    row("config untouched", cfg == (nrt_inspect_config_t *)out, 1);
    nrt_sys_trace_config_free(NULL);
    nrt_sys_trace_buffer_free(NULL);
    nrt_debug_client_connect_close(-1);
    int num = 99;
    ROW(nrt_async_sendrecv_get_max_num_pending_request(&num), NRT_INVALID);
    row("num untouched", num, 99);
    ROW(nrt_debug_client_connect(0, &num), NRT_INVALID);
    nrta_seq_t seq = 42;
    ROW(nrta_tensor_write(NULL, out, 0, 4, 0, NULL, &seq), NRT_INVALID);
    ROW(nrta_get_sequence(0, NRTA_XU_COMPUTE, 0, &seq), NRT_INVALID);
    row("seq untouched", (long)seq, 42);
    nrta_error_tracker_destroy(NULL);
    ROW(nrta_event_register_xu_completion(), NRT_INVALID);
    ROW(nec_get_device_count(&num, 1), -1);
    ROW(nec_get_peer_mla_idx(0, 0, 0), -1);
    ROW(nec_is_mla_available(0, 0), false);
    ROW(nec_get_dynamic_send_size_bytes(NULL, 4, 0, 1), 0);
    uint32_t vcs = 77;
    ROW(nec_get_virtual_core_size(&vcs), NRT_INVALID);
    row("virtual core size untouched", vcs, 77);
    nec_inc_semaphore(NULL, 1);
    unsigned char clean = 1;
    for (size_t i = 0; i < sizeof out; i++) clean &= out[i] == 0xA5;
    row("out buffer untouched", clean, 1);
    nrt_close();
    printf("%d rows, %d failed\n", rows, failures);
    return failures != 0;
}
