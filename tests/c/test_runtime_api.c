/* The public C API (runtime_c/include/edgeplan/edgeplan.h, version 0.2) on a plan built by hand
 * (tests/c/ep_plan_build.h: y = relu(x) + 0.5, two ops), no Python needed: plan validation and query,
 * ep_session_open's refusals (NULL, misaligned or too-small arena, bad options, missing CPU features, a corrupt
 * plan), the session's query, I/O descriptors, find and zero-copy buffers by kind with out-of-range indices, the
 * copying setters / getters' size checks, variable-length inputs, ep_run, ep_reset, the profile counters, threads,
 * every call on a closed session, and ep_status_str for every status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ep_check.h"
#include "ep_plan_build.h"

static epb_plan g_plan;

static const ep_status ALL_STATUS[] = {
    EP_OK, EP_ERR_INVALID_ARG, EP_ERR_INDEX, EP_ERR_SIZE, EP_ERR_NOT_FOUND, EP_ERR_FORKED, EP_ERR_PLAN_TRUNCATED,
    EP_ERR_PLAN_MAGIC, EP_ERR_PLAN_VERSION, EP_ERR_PLAN_CRC, EP_ERR_PLAN_SECTION, EP_ERR_PLAN_TENSOR, EP_ERR_PLAN_OP,
    EP_ERR_PLAN_PARAMS, EP_ERR_PLAN_SHAPE, EP_ERR_PLAN_UNSUPPORTED, EP_ERR_PLAN_FEATURES, EP_ERR_PLAN_ALIGN,
    EP_ERR_PLAN_IO, EP_ERR_PLAN_UNSIGNED, EP_ERR_PLAN_SIGNATURE, EP_ERR_ARENA_TOO_SMALL, EP_ERR_ARENA_ALIGN,
    EP_ERR_RUN_INDEX, EP_ERR_RUN_BOUND, EP_ERR_DELEGATE,
    EP_ERR_INTERNAL};

static void test_status_strings(void) {
    const int n = (int)(sizeof ALL_STATUS / sizeof ALL_STATUS[0]);
    const char *unknown = ep_status_str((ep_status)12345);
    CHECK(unknown && *unknown, "an unknown status has no string");
    CHECK(!strcmp(ep_status_str((ep_status)-99), unknown), "status -99 is not unknown");
    CHECK(!strcmp(ep_status_str(EP_OK), "ok"), "EP_OK is '%s'", ep_status_str(EP_OK));
    for (int i = 0; i < n; i++) {
        const char *s = ep_status_str(ALL_STATUS[i]);
        CHECK(s && *s && strcmp(s, unknown), "status %d has no message", ALL_STATUS[i]);
        for (int j = 0; j < i; j++) CHECK(strcmp(s, ep_status_str(ALL_STATUS[j])), "statuses %d and %d share '%s'", ALL_STATUS[i], ALL_STATUS[j], s);
        /* grouped by range: caller -1..-99, plan -100..-199, memory -200.., run -300.., delegate -400.., internal -500.. */
        CHECK(ALL_STATUS[i] <= 0 && ALL_STATUS[i] >= -599, "status %d outside the ranges", ALL_STATUS[i]);
    }
    CHECK(ep_version() && !strncmp(ep_version(), "0.", 2), "version '%s'", ep_version() ? ep_version() : "(null)");
    CHECK(ep_crc32c("123456789", 9) == 0xE3069283u, "CRC-32C check value 0x%08x", ep_crc32c("123456789", 9));
}

/* a copy of the plan, changed by fn, then (reseal) sealed */
static epb_plan g_bad;
static const uint8_t *bad_plan(void (*fn)(epb_plan *), int reseal) {
    g_bad = g_plan;
    fn(&g_bad);
    if (reseal) epb_seal(&g_bad);
    return g_bad.bytes;
}
static ep_plan_header *hdr(epb_plan *p) { return (ep_plan_header *)(void *)p->bytes; }
static ep_section *section(epb_plan *p, int i) {
    return (ep_section *)(void *)(p->bytes + hdr(p)->section_table_offset + (size_t)i * sizeof(ep_section));
}
static void bad_magic(epb_plan *p) { hdr(p)->magic ^= 1; }
static void bad_major(epb_plan *p) { hdr(p)->version_major = 2; }
static void bad_header_size(epb_plan *p) { hdr(p)->header_size = 60; }
static void flip_byte(epb_plan *p) { p->bytes[p->len - 3] ^= 0x10; }
static void misaligned_section(epb_plan *p) { section(p, 2)->offset += 8; }
static void extra_section(epb_plan *p, uint32_t flags) {   /* a section of an unknown kind 200 */
    static const char blob[16] = "from the future";
    epb_section(p, 200, flags, blob, sizeof blob, 0, 0);
    hdr(p)->section_count = p->n_sections, hdr(p)->file_size = p->len;
}
static void unknown_critical(epb_plan *p) { extra_section(p, EP_SECTION_FLAG_CRITICAL); }
static void unknown_ancillary(epb_plan *p) { extra_section(p, 0); }
static void missing_ops(epb_plan *p) { section(p, 1)->kind = 201, section(p, 1)->flags = 0; }
static void bad_opcode(epb_plan *p) { ((ep_op_rec *)(void *)(p->bytes + section(p, 1)->offset))[1].opcode = 999; }
static void bad_shape(epb_plan *p) {   /* t[1, 8] -> t[2, 4]: relu's output disagrees with its input */
    ep_tensor_rec *t = (ep_tensor_rec *)(void *)(p->bytes + section(p, 0)->offset);
    t[1].dims[0] = 2, t[1].dims[1] = 4;
}

static void test_validate_query(void) {
    const size_t n = g_plan.len;
    CHECK(ep_plan_validate(g_plan.bytes, n) == EP_OK, "the plan does not validate");
    CHECK(ep_plan_validate(g_plan.bytes, n + 64) == EP_OK, "a longer buffer is refused");
    CHECK(ep_plan_validate(NULL, n) == EP_ERR_INVALID_ARG, "NULL plan");
    static _Alignas(64) uint8_t shifted[EPB_CAP + 8];
    memcpy(shifted + 4, g_plan.bytes, n);
    CHECK(ep_plan_validate(shifted + 4, n) == EP_ERR_PLAN_ALIGN, "a 4-aligned plan");
    CHECK(ep_plan_validate(g_plan.bytes, sizeof(ep_plan_header) - 1) == EP_ERR_PLAN_TRUNCATED, "shorter than the header");
    CHECK(ep_plan_validate(g_plan.bytes, n - 1) == EP_ERR_PLAN_TRUNCATED, "one byte short");
    CHECK(ep_plan_validate(bad_plan(bad_magic, 1), n) == EP_ERR_PLAN_MAGIC, "bad magic");
    CHECK(ep_plan_validate(bad_plan(bad_major, 1), n) == EP_ERR_PLAN_VERSION, "major version 2");
    CHECK(ep_plan_validate(bad_plan(bad_header_size, 1), n) == EP_ERR_PLAN_VERSION, "header size 60");
    CHECK(ep_plan_validate(bad_plan(flip_byte, 0), n) == EP_ERR_PLAN_CRC, "a flipped byte");
    CHECK(ep_plan_validate(bad_plan(misaligned_section, 1), n) == EP_ERR_PLAN_SECTION, "a misaligned section");
    const uint8_t *b = bad_plan(unknown_critical, 1);
    CHECK(ep_plan_validate(b, g_bad.len) == EP_ERR_PLAN_SECTION, "an unknown critical section");
    b = bad_plan(unknown_ancillary, 1);
    CHECK(ep_plan_validate(b, g_bad.len) == EP_OK, "an unknown ancillary section not skipped");
    CHECK(ep_plan_validate(bad_plan(missing_ops, 1), n) == EP_ERR_PLAN_SECTION, "no OPS section");
    CHECK(ep_plan_validate(bad_plan(bad_opcode, 1), n) == EP_ERR_PLAN_UNSUPPORTED, "opcode 999");

    ep_plan_info info;
    memset(&info, 0xA5, sizeof info);
    CHECK(ep_plan_query(g_plan.bytes, n, &info) == EP_OK, "query");
    CHECK(info.version_major == 1 && info.version_minor == 0, "version %u.%u", info.version_major, info.version_minor);
    CHECK(info.planned_bytes == EPB_ARENA && info.arena_bytes == info.session_bytes + EPB_ARENA && info.session_bytes > 0,
          "arena %llu = session %llu + planned %llu", (unsigned long long)info.arena_bytes,
          (unsigned long long)info.session_bytes, (unsigned long long)info.planned_bytes);
    /* the session tables' size from the public per-record figures (edgeplan.h): 4 tensors, 2 ops, 5 OPIO, 2 IO */
    const uint64_t tables = EP_SESSION_BYTES + 4 * EP_SESSION_TENSOR_BYTES + 2 * EP_SESSION_OP_BYTES +
                            5 * EP_SESSION_OPIO_BYTES + 2 * EP_SESSION_IO_BYTES;
    CHECK(info.session_bytes == (tables + 63) / 64 * 64, "session bytes %llu, edgeplan.h's figures give %llu",
          (unsigned long long)info.session_bytes, (unsigned long long)((tables + 63) / 64 * 64));
    CHECK(info.const_bytes == 64 && info.required_features == 0, "const %llu features %llu",
          (unsigned long long)info.const_bytes, (unsigned long long)info.required_features);
    CHECK(info.n_tensors == 4 && info.n_ops == 2 && info.n_inputs == 1 && info.n_outputs == 1, "counts %u %u %u %u",
          info.n_tensors, info.n_ops, info.n_inputs, info.n_outputs);
    CHECK(ep_plan_query(g_plan.bytes, n, NULL) == EP_ERR_INVALID_ARG, "query with NULL info");
    CHECK(ep_plan_query(bad_plan(flip_byte, 0), n, &info) == EP_OK, "query checks the CRC (it should not: open does)");
    CHECK(ep_plan_query(bad_plan(bad_magic, 1), n, &info) == EP_ERR_PLAN_MAGIC, "query of a bad magic");
}

static uint64_t arena_need(const uint8_t *plan) {
    ep_plan_info info;
    return ep_plan_query(plan, g_plan.len, &info) == EP_OK ? info.arena_bytes : 0;
}

static void test_open_refusals(void) {
    const size_t n = g_plan.len, need = (size_t)arena_need(g_plan.bytes);
    uint8_t *arena = aligned_alloc(64, need + 128);
    ep_session *s = (ep_session *)(void *)1;
    char err[160];
    ep_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o, o.error_buf = err, o.error_buf_len = sizeof err;
    CHECK(ep_session_open(NULL, g_plan.bytes, n, arena, need, &o) == EP_ERR_INVALID_ARG, "NULL out");
    CHECK(ep_session_open(&s, g_plan.bytes, n, NULL, need, &o) == EP_ERR_INVALID_ARG && s == NULL, "NULL arena");
    CHECK(strstr(err, "NULL") != NULL, "NULL arena: reason '%s'", err);
    CHECK(ep_session_open(&s, g_plan.bytes, n, arena + 8, need, &o) == EP_ERR_ARENA_ALIGN, "an 8-aligned arena");
    CHECK(ep_session_open(&s, g_plan.bytes, n, arena, need - 1, &o) == EP_ERR_ARENA_TOO_SMALL, "one byte short");
    char want[64];
    snprintf(want, sizeof want, "%llu needed", (unsigned long long)need);
    CHECK(strstr(err, want) != NULL, "too small: the reason '%s' does not state the size", err);
    CHECK(ep_session_open(&s, g_plan.bytes, n, arena, 0, NULL) == EP_ERR_ARENA_TOO_SMALL, "an empty arena");
    CHECK(ep_session_open(&s, NULL, n, arena, need, &o) == EP_ERR_INVALID_ARG, "NULL plan");
    ep_options small = o;
    small.struct_size = 8;   /* before error_buf_len: not an ep_options */
    CHECK(ep_session_open(&s, g_plan.bytes, n, arena, need, &small) == EP_ERR_INVALID_ARG, "options of 8 bytes");
    CHECK(ep_session_open(&s, bad_plan(flip_byte, 0), n, arena, need, &o) == EP_ERR_PLAN_CRC, "a stale CRC");
    CHECK(strstr(err, "checksum") != NULL, "stale CRC: reason '%s'", err);
    CHECK(ep_session_open(&s, bad_plan(bad_shape, 1), n, arena, need, &o) == EP_ERR_PLAN_SHAPE, "an inconsistent shape");
    CHECK(strstr(err, "relu") != NULL, "bad shape: the reason '%s' does not name the op", err);
    /* a stale CRC opens with EP_OPT_SKIP_CRC (the plan is otherwise fine: the flipped byte is a name) */
    ep_options skip = o;
    skip.flags = EP_OPT_SKIP_CRC;
    int rc = ep_session_open(&s, bad_plan(flip_byte, 0), n, arena, need, &skip);
    CHECK(rc == EP_OK, "SKIP_CRC: %d (%s)", rc, err);
    if (rc == EP_OK) ep_session_close(s);
    /* CPU features: a feature this CPU lacks, and one it has but the mask clears */
    const uint64_t cpu = ep_cpu_features();
    uint64_t lacks = 0, has = 0;
    for (uint64_t b = EP_CPU_NEON; b <= EP_CPU_CRC32; b <<= 1) {
        if (!(cpu & b) && !lacks) lacks = b;
        if ((cpu & b) && !has) has = b;
    }
    epb_plan *fp = malloc(sizeof *fp);
    if (lacks) {
        epb_build(fp, 0, lacks);
        CHECK(ep_session_open(&s, fp->bytes, fp->len, arena, need, &o) == EP_ERR_PLAN_FEATURES, "features 0x%llx",
              (unsigned long long)lacks);
        CHECK(strstr(err, "features") != NULL, "features: reason '%s'", err);
    }
    if (has) {
        epb_build(fp, 0, has);
        rc = ep_session_open(&s, fp->bytes, fp->len, arena, need, &o);
        CHECK(rc == EP_OK, "a feature the CPU has (0x%llx): %d", (unsigned long long)has, rc);
        if (rc == EP_OK) ep_session_close(s);
        ep_options masked = o;
        masked.cpu_features_mask = ~has;
        CHECK(ep_session_open(&s, fp->bytes, fp->len, arena, need, &masked) == EP_ERR_PLAN_FEATURES,
              "a feature the mask clears");
    }
    free(fp);
    free(arena);
}

typedef struct opened {
    ep_session *s;
    uint8_t *arena;
} opened;
static opened open_plan(const epb_plan *p, uint32_t flags, uint32_t threads) {
    ep_plan_info info;
    opened r = {NULL, NULL};
    if (ep_plan_query(p->bytes, p->len, &info) != EP_OK) return r;
    r.arena = aligned_alloc(64, (size_t)(info.arena_bytes + 63) / 64 * 64);
    ep_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o, o.flags = flags, o.n_threads = threads;
    const int rc = ep_session_open(&r.s, p->bytes, p->len, r.arena, (size_t)info.arena_bytes, &o);
    CHECK(rc == EP_OK, "open: %s", ep_status_str(rc));
    return r;
}

static void test_session(void) {
    opened o = open_plan(&g_plan, 0, 1);
    ep_session *s = o.s;
    if (!s) return;
    ep_session_info si;
    memset(&si, 0xA5, sizeof si);
    si.struct_size = sizeof si;
    CHECK(ep_session_query(s, &si) == EP_OK, "query");
    CHECK(si.struct_size == sizeof si && si.n_inputs == 1 && si.n_outputs == 1 && si.n_ops == 2 && si.n_threads == 1,
          "query: %u inputs %u outputs %u ops %u threads", si.n_inputs, si.n_outputs, si.n_ops, si.n_threads);
    CHECK(si.last_error && !strcmp(si.last_error, ""), "last_error before a run");
    CHECK(ep_session_query(NULL, &si) == EP_ERR_INVALID_ARG && ep_session_query(s, NULL) == EP_ERR_INVALID_ARG,
          "query of NULL");
    ep_session_info old;
    memset(&old, 0xA5, sizeof old);
    old.struct_size = 20;   /* an older caller's struct: up to n_threads; nothing past it is written */
    CHECK(ep_session_query(s, &old) == EP_OK && old.n_ops == 2 && old.struct_size == 20 && old.n_partitions == 0xA5A5A5A5u,
          "query of a 20-byte struct");
    old.struct_size = 8;
    CHECK(ep_session_query(s, &old) == EP_ERR_INVALID_ARG, "query of an 8-byte struct");

    /* descriptors, find, buffers: by kind, with out-of-range indices and kinds */
    ep_io_desc d;
    CHECK(ep_session_io_desc(s, EP_IO_INPUT, 0, &d) == EP_OK, "input desc");
    CHECK(!strcmp(d.name, "x") && d.dtype == EP_DTYPE_F32 && d.rank == 2 && d.dims[0] == 1 && d.dims[1] == EPB_T &&
              d.nbytes == EPB_T * 4 && d.max_nbytes == EPB_T * 4 && d.min_dims[1] == EPB_T && d.max_dims[1] == EPB_T &&
              d.dim_names[1] == NULL && d.dim_steps[0] == 1 && d.dim_steps[1] == 1,
          "input desc: %s rank %d [%d,%d] %llu bytes", d.name, d.rank, d.dims[0], d.dims[1], (unsigned long long)d.nbytes);
    CHECK(ep_session_io_desc(s, EP_IO_OUTPUT, 0, &d) == EP_OK && !strcmp(d.name, "y") && d.nbytes == EPB_T * 4, "output desc");
    CHECK(ep_session_io_desc(s, EP_IO_INPUT, 1, &d) == EP_ERR_INDEX, "input 1");
    CHECK(ep_session_io_desc(s, EP_IO_OUTPUT, 1, &d) == EP_ERR_INDEX, "output 1");
    CHECK(ep_session_io_desc(s, EP_IO_OUTPUT, 0xFFFFFFFFu, &d) == EP_ERR_INDEX, "output 2^32-1");
    CHECK(ep_session_io_desc(s, 2, 0, &d) == EP_ERR_INVALID_ARG, "kind 2");
    CHECK(ep_session_io_desc(s, EP_IO_INPUT, 0, NULL) == EP_ERR_INVALID_ARG, "desc into NULL");
    uint32_t i = 99;
    CHECK(ep_session_find(s, EP_IO_INPUT, "x", &i) == EP_OK && i == 0, "find x");
    CHECK(ep_session_find(s, EP_IO_OUTPUT, "y", &i) == EP_OK && i == 0, "find y");
    CHECK(ep_session_find(s, EP_IO_INPUT, "y", &i) == EP_ERR_NOT_FOUND, "y is no input");
    CHECK(ep_session_find(s, EP_IO_OUTPUT, "t", &i) == EP_ERR_NOT_FOUND, "t is no output");
    CHECK(ep_session_find(s, EP_IO_INPUT, NULL, &i) == EP_ERR_INVALID_ARG, "find NULL");
    CHECK(ep_session_find(s, EP_IO_INPUT, "x", NULL) == EP_ERR_INVALID_ARG, "find into NULL");
    CHECK(ep_session_find(s, 7, "x", &i) == EP_ERR_INVALID_ARG, "find kind 7");
    float *x = ep_session_io_buffer(s, EP_IO_INPUT, 0), *y = ep_session_io_buffer(s, EP_IO_OUTPUT, 0);
    CHECK(x && y && (uint8_t *)x >= o.arena && (uint8_t *)y < o.arena + arena_need(g_plan.bytes) && x != y, "buffers");
    CHECK(!ep_session_io_buffer(s, EP_IO_INPUT, 1) && !ep_session_io_buffer(s, EP_IO_OUTPUT, 1) &&
              !ep_session_io_buffer(s, 2, 0) && !ep_session_io_buffer(NULL, EP_IO_INPUT, 0),
          "out-of-range buffers");

    /* copying forms: the size at the current shape, nothing else */
    float in[EPB_T + 1], out[EPB_T + 1];
    for (int k = 0; k < EPB_T; k++) in[k] = (float)k - 3.5f;
    CHECK(ep_session_set_input(s, 0, in, EPB_T * 4 - 1) == EP_ERR_SIZE, "set_input 31 bytes");
    CHECK(ep_session_set_input(s, 0, in, EPB_T * 4 + 4) == EP_ERR_SIZE, "set_input 36 bytes");
    CHECK(ep_session_set_input(s, 0, NULL, EPB_T * 4) == EP_ERR_INVALID_ARG, "set_input NULL");
    CHECK(ep_session_set_input(s, 1, in, EPB_T * 4) == EP_ERR_INDEX, "set_input 1");
    CHECK(ep_session_set_input(s, 0, in, EPB_T * 4) == EP_OK, "set_input");
    CHECK(ep_run(s) == EP_OK, "run");
    CHECK(ep_session_get_output(s, 0, out, EPB_T * 4 - 4) == EP_ERR_SIZE, "get_output 28 bytes");
    CHECK(ep_session_get_output(s, 0, NULL, EPB_T * 4) == EP_ERR_INVALID_ARG, "get_output NULL");
    CHECK(ep_session_get_output(s, 1, out, EPB_T * 4) == EP_ERR_INDEX, "get_output 1");
    CHECK(ep_session_get_output(s, 0, out, EPB_T * 4) == EP_OK, "get_output");
    int right = 1;
    for (int k = 0; k < EPB_T; k++) right &= out[k] == (in[k] > 0 ? in[k] : 0.0f) + EPB_C && y[k] == out[k];
    CHECK(right, "y = relu(x) + c");
    /* zero copy: write the input buffer, read the output buffer; inputs keep their contents across runs */
    x[0] = 100.0f;
    CHECK(ep_run(s) == EP_OK && y[0] == 100.5f && x[1] == in[1], "zero-copy run");
    CHECK(ep_reset(s) == EP_OK && ep_run(s) == EP_OK && y[0] == 100.5f, "reset, then run");
    CHECK(ep_run(NULL) == EP_ERR_INVALID_ARG && ep_reset(NULL) == EP_ERR_INVALID_ARG, "run / reset NULL");

    /* profile counters without EP_OPT_PROFILE: names and bytes filled, counters zero */
    ep_op_profile pr;
    CHECK(ep_session_profile(s, 0, &pr) == EP_OK && !strcmp(pr.name, "relu") && !strcmp(pr.kind, "unary") &&
              pr.calls == 0 && pr.profiled == 0 && pr.bytes == 2 * EPB_T * 4,
          "profile op 0 unprofiled: %s %s calls %llu bytes %llu", pr.name, pr.kind, (unsigned long long)pr.calls,
          (unsigned long long)pr.bytes);
    CHECK(ep_session_profile(s, 1, &pr) == EP_OK && !strcmp(pr.name, "add") && !strcmp(pr.kind, "binary") &&
              pr.bytes == 2 * EPB_T * 4 + 4,
          "profile op 1");
    CHECK(ep_session_profile(s, 2, &pr) == EP_ERR_INDEX, "profile op 2");
    CHECK(ep_session_profile(s, 0, NULL) == EP_ERR_INVALID_ARG, "profile into NULL");
    CHECK(ep_session_profile_reset(s) == EP_OK, "profile_reset");

    /* a closed session refuses everything, without touching the arena's old contents */
    ep_session_close(s);
    CHECK(ep_run(s) == EP_ERR_INVALID_ARG, "run after close");
    CHECK(ep_reset(s) == EP_ERR_INVALID_ARG, "reset after close");
    CHECK(ep_session_query(s, &si) == EP_ERR_INVALID_ARG, "query after close");
    CHECK(ep_session_io_desc(s, EP_IO_INPUT, 0, &d) != EP_OK, "desc after close");
    CHECK(ep_session_find(s, EP_IO_INPUT, "x", &i) == EP_ERR_INVALID_ARG, "find after close");
    CHECK(!ep_session_io_buffer(s, EP_IO_INPUT, 0) && !ep_session_io_buffer(s, EP_IO_OUTPUT, 0), "buffer after close");
    CHECK(ep_session_set_input(s, 0, in, EPB_T * 4) == EP_ERR_INVALID_ARG, "set_input after close");
    CHECK(ep_session_get_output(s, 0, out, EPB_T * 4) == EP_ERR_INVALID_ARG, "get_output after close");
    CHECK(ep_session_set_input_shape(s, 0, CHK_DIMS(1, EPB_T), 2) == EP_ERR_INVALID_ARG, "set_input_shape after close");
    CHECK(ep_session_profile(s, 0, &pr) == EP_ERR_INVALID_ARG, "profile after close");
    CHECK(ep_session_profile_reset(s) == EP_ERR_INVALID_ARG, "profile_reset after close");
    ep_session_close(s);      /* twice: nothing */
    ep_session_close(NULL);
    free(o.arena);
}

static void test_profile_and_threads(void) {
    opened o = open_plan(&g_plan, EP_OPT_PROFILE, 3);
    if (!o.s) return;
    ep_session_info si = {.struct_size = sizeof si};
    CHECK(ep_session_query(o.s, &si) == EP_OK && si.n_threads >= 1 && si.n_threads <= 3, "threads %u", si.n_threads);
#if defined(EP_THREADS) && EP_THREADS
    CHECK(si.n_threads == 3, "3 threads asked, %u run", si.n_threads);
#endif
    float *x = ep_session_io_buffer(o.s, EP_IO_INPUT, 0), *y = ep_session_io_buffer(o.s, EP_IO_OUTPUT, 0);
    for (int k = 0; k < EPB_T; k++) x[k] = (float)(k % 3) - 1.0f;
    for (int r = 0; r < 3; r++) CHECK(ep_run(o.s) == EP_OK, "profiled run %d", r);
    int right = 1;
    for (int k = 0; k < EPB_T; k++) right &= y[k] == (x[k] > 0 ? x[k] : 0.0f) + EPB_C;
    CHECK(right, "profiled, threaded run: y = relu(x) + c");
    ep_op_profile pr;
    CHECK(ep_session_profile(o.s, 1, &pr) == EP_OK && pr.profiled == 1 && pr.calls == 3 && pr.total_ns >= pr.last_ns,
          "profile: profiled %u calls %llu total %llu last %llu", pr.profiled, (unsigned long long)pr.calls,
          (unsigned long long)pr.total_ns, (unsigned long long)pr.last_ns);
    CHECK(ep_session_profile_reset(o.s) == EP_OK && ep_session_profile(o.s, 1, &pr) == EP_OK && pr.calls == 0 &&
              pr.total_ns == 0,
          "profile_reset");
    CHECK(ep_session_profile_reset(NULL) == EP_ERR_INVALID_ARG, "profile_reset NULL");
    /* a second session over the same plan bytes is independent */
    opened o2 = open_plan(&g_plan, 0, 1);
    if (o2.s) {
        float *x2 = ep_session_io_buffer(o2.s, EP_IO_INPUT, 0), *y2 = ep_session_io_buffer(o2.s, EP_IO_OUTPUT, 0);
        for (int k = 0; k < EPB_T; k++) x2[k] = -1.0f;
        CHECK(ep_run(o2.s) == EP_OK && y2[0] == EPB_C && y[1] == (x[1] > 0 ? x[1] : 0.0f) + EPB_C, "two sessions");
        ep_session_close(o2.s);
    }
    free(o2.arena);
    ep_session_close(o.s);
    free(o.arena);
}

/* variable-length input: T in [1, 8] */
static void test_dynamic(void) {
    epb_plan *p = malloc(sizeof *p);
    epb_build(p, EPB_DYNAMIC, 0);
    CHECK(ep_plan_validate(p->bytes, p->len) == EP_OK, "the dynamic plan does not validate");
    opened o = open_plan(p, 0, 1);
    if (o.s) {
        ep_session *s = o.s;
        ep_io_desc d;
        CHECK(ep_session_io_desc(s, EP_IO_INPUT, 0, &d) == EP_OK && d.dims[1] == EPB_T && d.min_dims[1] == 1 &&
                  d.max_dims[1] == EPB_T && d.dim_names[1] && !strcmp(d.dim_names[1], "T") && d.max_nbytes == EPB_T * 4 &&
                  d.dim_steps[1] == 1,
              "dynamic input desc");
        CHECK(ep_session_set_input_shape(s, 0, CHK_DIMS(1, 5), 2) == EP_OK, "T = 5");
        CHECK(ep_session_io_desc(s, EP_IO_INPUT, 0, &d) == EP_OK && d.dims[1] == 5 && d.nbytes == 20, "desc at T = 5");
        float in[5] = {-2, -1, 0, 1, 2}, out[EPB_T];
        CHECK(ep_session_set_input(s, 0, in, EPB_T * 4) == EP_ERR_SIZE, "32 bytes at T = 5");
        CHECK(ep_session_set_input(s, 0, in, sizeof in) == EP_OK, "20 bytes at T = 5");
        CHECK(ep_run(s) == EP_OK, "run at T = 5");
        CHECK(ep_session_io_desc(s, EP_IO_OUTPUT, 0, &d) == EP_OK && d.dims[1] == 5 && d.nbytes == 20, "output at T = 5");
        CHECK(ep_session_get_output(s, 0, out, EPB_T * 4) == EP_ERR_SIZE, "get_output 32 bytes at T = 5");
        CHECK(ep_session_get_output(s, 0, out, 20) == EP_OK && out[0] == EPB_C && out[4] == 2 + EPB_C, "get_output at T = 5");
        CHECK(ep_session_set_input_shape(s, 0, CHK_DIMS(1, EPB_T + 1), 2) == EP_ERR_RUN_BOUND, "T past its bound");
        CHECK(ep_session_set_input_shape(s, 0, CHK_DIMS(1, 0), 2) == EP_ERR_RUN_BOUND, "T below its min");
        CHECK(ep_session_set_input_shape(s, 0, CHK_DIMS(2, 5), 2) == EP_ERR_SIZE, "a static dim changed");
        CHECK(ep_session_set_input_shape(s, 0, CHK_DIMS(5), 1) == EP_ERR_SIZE, "rank 1");
        CHECK(ep_session_set_input_shape(s, 0, NULL, 2) == EP_ERR_INVALID_ARG, "NULL dims");
        CHECK(ep_session_set_input_shape(s, 1, CHK_DIMS(1, 5), 2) == EP_ERR_INDEX, "input 1");
        CHECK(ep_session_io_desc(s, EP_IO_INPUT, 0, &d) == EP_OK && d.dims[1] == 5, "a refused shape changed nothing");
        ep_session_close(s);
    }
    free(o.arena);
    /* T even only (plan 1.2 step 2): an odd length is refused, an even one runs */
    epb_build(p, EPB_DYNAMIC | EPB_STEP2, 0);
    o = open_plan(p, 0, 1);
    if (o.s) {
        ep_io_desc d;
        CHECK(ep_session_io_desc(o.s, EP_IO_INPUT, 0, &d) == EP_OK && d.dim_steps[1] == 2 && d.min_dims[1] == 2,
              "step-2 input desc: step %d min %d", d.dim_steps[1], d.min_dims[1]);
        CHECK(ep_session_set_input_shape(o.s, 0, CHK_DIMS(1, 5), 2) == EP_ERR_INVALID_ARG, "an odd T accepted");
        CHECK(ep_session_set_input_shape(o.s, 0, CHK_DIMS(1, 4), 2) == EP_OK, "T = 4 refused");
        const float in[4] = {-1, 2, -3, 4};
        float out[4];
        CHECK(ep_session_set_input(o.s, 0, in, sizeof in) == EP_OK && ep_run(o.s) == EP_OK &&
                  ep_session_get_output(o.s, 0, out, sizeof out) == EP_OK && out[0] == EPB_C && out[3] == 4 + EPB_C,
              "run at T = 4");
        ep_session_close(o.s);
    }
    free(o.arena);
    /* the static plan refuses another static shape */
    o = open_plan(&g_plan, 0, 1);
    if (o.s) {
        CHECK(ep_session_set_input_shape(o.s, 0, CHK_DIMS(1, 5), 2) == EP_ERR_SIZE, "a static input reshaped");
        CHECK(ep_session_set_input_shape(o.s, 0, CHK_DIMS(1, EPB_T), 2) == EP_OK, "a static input at its shape");
        ep_session_close(o.s);
    }
    free(o.arena);
    free(p);
}

int main(void) {
    epb_build(&g_plan, 0, 0);
    test_status_strings();
    test_validate_query();
    test_open_refusals();
    test_session();
    test_profile_and_threads();
    test_dynamic();
    printf("test_runtime_api: %d passed, %d failed\n", chk_n_pass, chk_n_fail);
    return chk_n_fail ? 1 : 0;
}
