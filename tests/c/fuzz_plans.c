/* Plan mutation harness: thousands of corrupted, truncated and hostile variants of real plans must each
 * be rejected with an error or run — never crash, hang or touch memory outside their buffers.
 * Built by meson (tests/c/meson.build, target fuzz_plans) with the build's sanitizers: meson test runs it on the
 * plans tests/c/ep_plan_build.h builds (static and variable-length); tests/py/test_fuzz.py builds it in an
 * -Db_sanitize=address,undefined build and runs it on compiled zoo plans. The first sanitizer report fails it
 * (__ubsan_default_options below).
 *
 *   fuzz_plans COUNT SEED [plan.eplan ...]      (no plan: the built-in ones)
 *
 * The mutations are tests/fuzz/plan_mutate.h's (shared with the libFuzzer target's custom mutator); most re-seal
 * the CRC so that they reach the deeper checks (records, params, shapes).
 * COUNT 0 opens and runs each plan unmutated once and fails unless all succeed (kernels under sanitizers). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeplan/edgeplan.h"
#include "edgeplan/plan_format.h"
#include "ep_plan_build.h"
#include "../fuzz/plan_mutate.h"

#define ARENA_CAP (64u << 20)

/* In a sanitizer build (meson -Db_sanitize=address,undefined) the first report is fatal, whatever the environment
 * sets (the library is built with recovery on): the sanitizer runtimes read these defaults before their
 * environment variables. Unused without sanitizers. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) { return "halt_on_error=1:print_stacktrace=1"; }
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=1:abort_on_error=1"; }

/* Whether the current mutant stands for a re-sealed plan (plan_mutate.h). Recomputing a CRC over megabytes per
 * mutation would dominate the run, so a sealed plan is opened with EP_OPT_SKIP_CRC instead, which is the same thing
 * to every later check. An unsealed (stale-CRC) plan is opened normally and must fail. */
static int sealed;

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); b = NULL; }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static int run_clean(uint8_t *const *plans, const size_t *lens, const char *const *names, int n) {
    for (int i = 0; i < n; i++) {
        const size_t len = lens[i];
        const uint8_t *p = plans[i];
        ep_plan_info info;
        if (ep_plan_query(p, len, &info)) { fprintf(stderr, "%s: cannot query\n", names[i]); return 1; }
        void *arena = aligned_alloc(64, (size_t)(info.arena_bytes + 63) / 64 * 64);
        ep_session *s = NULL;
        int rc = ep_session_open(&s, p, len, arena, (size_t)info.arena_bytes, NULL);
        if (!rc) {
            ep_session_info si = {.struct_size = sizeof(si)};
            if (ep_session_query(s, &si)) { fprintf(stderr, "query failed\n"); return 1; }
            for (uint32_t k = 0; k < si.n_inputs; k++) {
                ep_io_desc d;
                if (ep_session_io_desc(s, EP_IO_INPUT, k, &d)) { fprintf(stderr, "desc failed\n"); return 1; }
                memset(ep_session_io_buffer(s, EP_IO_INPUT, k), 0, (size_t)d.nbytes);
            }
            rc = ep_run(s);
        }
        printf("%s: %s\n", names[i], ep_status_str(rc));
        if (!rc) ep_session_close(s);
        free(arena);
        if (rc) return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: fuzz_plans COUNT SEED [PLAN...]\n");
        return 2;
    }
    long count = atol(argv[1]);
    pm_state = strtoull(argv[2], NULL, 10);
    int n_plans = argc - 3;
    uint8_t *plans[64];
    size_t lens[64];
    const char *names[64];
    if (n_plans > 64) n_plans = 64;
    for (int i = 0; i < n_plans; i++) {
        names[i] = argv[3 + i];
        plans[i] = read_file(argv[3 + i], &lens[i]);
        if (!plans[i]) { fprintf(stderr, "cannot read %s\n", argv[3 + i]); return 2; }
    }
    if (n_plans == 0) {   /* the plans built by hand: static, with a variable length, and with an even one (1.2) */
        static epb_plan built;
        static const int flags[3] = {0, EPB_DYNAMIC, EPB_DYNAMIC | EPB_STEP2};
        static const char *const what[3] = {"built-in plan", "built-in dynamic plan", "built-in step-2 plan"};
        for (int i = 0; i < 3; i++) {
            lens[i] = epb_build(&built, flags[i], 0);
            plans[i] = malloc(lens[i]);
            memcpy(plans[i], built.bytes, lens[i]);
            names[i] = what[i];
        }
        n_plans = 3;
    }
    if (count == 0) {
        const int rc = run_clean(plans, lens, names, n_plans);
        for (int i = 0; i < n_plans; i++) free(plans[i]);
        return rc;
    }
    long rejected_query = 0, rejected_open = 0, ran = 0, run_errors = 0, too_big = 0, stale = 0;
    for (long it = 0; it < count; it++) {
        size_t len = lens[it % n_plans];
        /* exact-size, 8-aligned copy so ASan sees any read past the end */
        uint8_t *buf = aligned_alloc(8, (len + 7) / 8 * 8);
        memcpy(buf, plans[it % n_plans], len);
        size_t n = len;
        sealed = 1;
        for (int k = 0, m = 1 + (int)pm_below(3); k < m; k++) n = pm_mutate(buf, n, &sealed);
        uint8_t *plan = malloc(n ? n : 1);   /* the mutated plan, in a buffer of exactly n bytes */
        memcpy(plan, buf, n);
        free(buf);
        if ((uintptr_t)plan % 8) { free(plan); continue; }
        ep_plan_info info;
        int rc = ep_plan_query(plan, n, &info);   /* structure only */
        if (rc) { rejected_query++; free(plan); continue; }
        if (!sealed) {
            /* a stale CRC: whatever else is right, validation and open must refuse it */
            if (ep_plan_validate(plan, n) == EP_OK && memcmp(plan, plans[it % n_plans], n < len ? n : len) != 0) {
                fprintf(stderr, "a plan with a stale CRC validated\n");
                return 1;
            }
            stale++;
            free(plan);
            continue;
        }
        if (info.arena_bytes > ARENA_CAP) { too_big++; free(plan); continue; }
        void *arena = aligned_alloc(64, (size_t)(info.arena_bytes + 63) / 64 * 64 + 64);
        ep_session *s = NULL;
        char err[200];
        ep_options opt;
        memset(&opt, 0, sizeof(opt));
        opt.struct_size = sizeof(opt);
        opt.flags = EP_OPT_SKIP_CRC;
        opt.error_buf = err;
        opt.error_buf_len = sizeof(err);
        rc = ep_session_open(&s, plan, n, arena, (size_t)info.arena_bytes, &opt);
        if (rc) {
            if (rc >= 0 || strlen(err) >= sizeof(err)) { fprintf(stderr, "bad status %d\n", rc); return 1; }
            rejected_open++;
        } else {
            for (int pass = 0; pass < 2; pass++) {   /* variable dims: two random lengths in bounds */
                ep_session_info si = {.struct_size = sizeof(si)};
                if (ep_session_query(s, &si)) { fprintf(stderr, "query failed\n"); return 1; }
                for (uint32_t i = 0; i < si.n_inputs; i++) {
                    ep_io_desc d;
                    if (ep_session_io_desc(s, EP_IO_INPUT, i, &d) != EP_OK) continue;
                    int32_t dims[8];
                    int variable = 0;
                    for (int k = 0; k < d.rank && k < 8; k++) {
                        dims[k] = d.dims[k];
                        if (d.dim_names[k] && d.max_dims[k] >= d.min_dims[k]) {
                            dims[k] = d.min_dims[k] + (int32_t)pm_below((uint32_t)(d.max_dims[k] - d.min_dims[k]) + 1u);
                            variable = 1;
                        }
                    }
                    if (variable && ep_session_set_input_shape(s, i, dims, (uint32_t)d.rank) == EP_OK &&
                        ep_session_io_desc(s, EP_IO_INPUT, i, &d) != EP_OK) {
                        fprintf(stderr, "desc failed after a shape was set\n");
                        return 1;
                    }
                    memset(ep_session_io_buffer(s, EP_IO_INPUT, i), (int)pm_below(256), (size_t)d.nbytes);
                }
                rc = ep_run(s);
                if (rc) run_errors++;
                /* whatever the run did, every output reads back within its capacity */
                for (uint32_t i = 0; i < si.n_outputs; i++) {
                    ep_io_desc d;
                    if (ep_session_io_desc(s, EP_IO_OUTPUT, i, &d) != EP_OK) continue;
                    if (d.nbytes > d.max_nbytes) {
                        fprintf(stderr, "output %u: %llu bytes > its capacity %llu\n", i,
                                (unsigned long long)d.nbytes, (unsigned long long)d.max_nbytes);
                        return 1;
                    }
                    void *out = malloc((size_t)d.max_nbytes + 1);
                    if (out && ep_session_get_output(s, i, out, (size_t)d.nbytes) != EP_OK && !rc) {
                        fprintf(stderr, "output %u: get_output failed after a good run\n", i);
                        return 1;
                    }
                    free(out);
                }
                if (ep_reset(s) != EP_OK) { fprintf(stderr, "reset failed\n"); return 1; }
            }
            ran++;
            ep_session_close(s);
        }
        free(arena);
        free(plan);
    }
    for (int i = 0; i < n_plans; i++) free(plans[i]);
    printf("%ld mutated plans: %ld rejected by validate, %ld rejected at open, %ld opened and ran (%ld run errors), "
           "%ld stale CRCs refused, %ld skipped (arena > %u MiB), 0 crashes\n",
           count, rejected_query, rejected_open, ran, run_errors, stale, too_big, ARENA_CAP >> 20);
    return 0;
}
