/* Plan mutation harness: thousands of corrupted, truncated and hostile variants of real plans must each
 * be rejected with an error or run — never crash, hang or touch memory outside their buffers.
 * Built by meson (tests/c/meson.build, target fuzz_plans) with the build's sanitizers: meson test runs it on the
 * plans tests/c/ep_plan_build.h builds (static and variable-length); tests/py/test_fuzz.py builds it in an
 * -Db_sanitize=address,undefined build and runs it on compiled zoo plans. The first sanitizer report fails it
 * (__ubsan_default_options below).
 *
 *   fuzz_plans COUNT SEED [plan.eplan ...]      (no plan: the built-in ones)
 *
 * Most mutations re-seal the CRC so that they reach the deeper checks (records, params, shapes).
 * COUNT 0 opens and runs each plan unmutated once and fails unless all succeed (kernels under sanitizers). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeplan/edgeplan.h"
#include "edgeplan/plan_format.h"
#include "ep_plan_build.h"

#define ARENA_CAP (64u << 20)

/* In a sanitizer build (meson -Db_sanitize=address,undefined) the first report is fatal, whatever the environment
 * sets (the library is built with recovery on): the sanitizer runtimes read these defaults before their
 * environment variables. Unused without sanitizers. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) { return "halt_on_error=1:print_stacktrace=1"; }
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=1:abort_on_error=1"; }

static uint64_t rng_state;
static uint64_t rnd(void) {   /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }

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

/* Most mutations "re-seal" the plan: they stand for a plan whose CRC was recomputed after the change, so
 * the mutation reaches the deep checks. Recomputing a CRC over megabytes per mutation would dominate the
 * run, so a sealed plan is opened with EP_OPT_SKIP_CRC instead, which is the same thing to every later
 * check. An unsealed (stale-CRC) plan is opened normally and must fail. */
static int sealed;
static void reseal(uint8_t *p, size_t len) {
    (void)p;
    (void)len;
    sealed = 1;
}

static const int64_t INTERESTING[] = {0, 1, -1, 2, 3, 7, 8, 63, 64, 65, 127, 128, 255, 256, 4096, 65535, 65536,
                                      0x7fffffff, -0x7fffffff - 1, 0x80000000ll, 0xffffffffll, 1ll << 32,
                                      1ll << 40, 0x7fffffffffffffffll};
#define N_INTERESTING (sizeof(INTERESTING) / sizeof(INTERESTING[0]))

/* Writes an interesting or nearby value into a field of width w (1,2,4,8) at p. */
static void poke(uint8_t *p, int w) {
    int64_t v;
    uint64_t old = 0;
    memcpy(&old, p, (size_t)w);
    switch (below(3)) {
    case 0: v = INTERESTING[below(N_INTERESTING)]; break;
    case 1: v = (int64_t)(old + below(9) - 4u); break;   /* wraps in unsigned arithmetic */
    default: v = (int64_t)rnd(); break;
    }
    memcpy(p, &v, (size_t)w);
}

typedef struct { uint64_t offset, size; uint32_t count, rsize; } sec_t;

static int find_section(const uint8_t *p, size_t len, uint32_t kind, sec_t *out) {
    if (len < sizeof(ep_plan_header)) return 0;
    const ep_plan_header *h = (const ep_plan_header *)(const void *)p;
    for (uint64_t i = 0; i < h->section_count; i++) {
        uint64_t at = h->section_table_offset + i * sizeof(ep_section);
        if (h->section_table_offset > len || at > len - sizeof(ep_section) || at % 8) return 0;
        const ep_section *s = (const ep_section *)(const void *)(p + at);
        if (s->kind == kind && s->offset <= len && s->size <= len - s->offset && s->record_size <= 4096) {
            out->offset = s->offset; out->size = s->size; out->count = s->count; out->rsize = s->record_size;
            return 1;
        }
    }
    return 0;
}

/* poke() at buf[off .. off+w) if that lies inside the buffer */
static void poke_at(uint8_t *buf, size_t len, uint64_t off, int w) {
    if (off <= len && (uint64_t)w <= len - off) poke(buf + off, w);
}

/* One mutation of a valid plan (buf holds len bytes). Returns the new length. */
static size_t mutate(uint8_t *buf, size_t len) {
    sec_t s;
    int kind = (int)below(10);
    switch (kind) {
    case 0: /* plain truncation */
        return (size_t)below(len);
    case 1: { /* truncation with a consistent header */
        size_t n = (size_t)below(len);
        if (n >= sizeof(ep_plan_header)) { ((ep_plan_header *)(void *)buf)->file_size = n; reseal(buf, n); }
        return n;
    }
    case 2: /* random bit flips, CRC left stale half the time */
        for (int k = 0, n = 1 + (int)below(8); k < n; k++) buf[below(len)] ^= (uint8_t)(1u << below(8));
        if (below(2)) reseal(buf, len); else sealed = 0;
        return len;
    case 3: /* header fields */
        poke_at(buf, len, 4 * below(sizeof(ep_plan_header) / 4), below(2) ? 4 : 8);
        if (below(4)) reseal(buf, len); else sealed = 0;
        return len;
    case 4: { /* section table */
        if (len < sizeof(ep_plan_header)) return len;
        const ep_plan_header *h = (const ep_plan_header *)(void *)buf;
        uint64_t at = h->section_table_offset + below(h->section_count) * sizeof(ep_section);
        at += 4 * below(sizeof(ep_section) / 4);
        if (len >= 8 && at <= len - 8) poke(buf + at, below(2) ? 4 : 8);
        reseal(buf, len);
        return len;
    }
    case 5: case 6: { /* tensor records: dims, offsets, dtype, rank, storage */
        if (find_section(buf, len, EP_SECTION_TENSORS, &s) && s.count) {
            uint64_t ro = s.offset + below(s.count) * s.rsize;
            static const struct { int off, w; } F[] = {{0, 1}, {1, 1}, {2, 1}, {4, 4}, {8, 8}, {16, 8}, {24, 4}, {28, 4},
                                                        {32, 4}, {36, 4}, {40, 4}, {44, 4}, {56, 1}, {64, 4}};
            int f = (int)below(sizeof(F) / sizeof(F[0]));
            if (ro > len || len - ro < sizeof(ep_tensor_rec)) { reseal(buf, len); return len; }
            uint8_t *r = buf + ro;
            poke(r + F[f].off, F[f].w);
            /* keep nbytes consistent with the (possibly new) dims half the time, to get past that check */
            if (below(2)) {   /* records may be misaligned after a stride mutation: copy out and back */
                ep_tensor_rec t;
                memcpy(&t, r, sizeof(t));
                uint64_t n = 1;
                int esz = t.dtype == 1 || t.dtype == 6 ? 4 : t.dtype == 7 ? 8 : t.dtype == 10 || t.dtype == 5 ? 2 : 1;
                for (int d = 0; d < t.rank && d < 8; d++) n *= (uint64_t)(uint32_t)t.dims[d];
                t.nbytes = n * (uint64_t)esz;
                memcpy(r, &t, sizeof(t));
            }
        }
        reseal(buf, len);
        return len;
    }
    case 7: { /* op records */
        if (find_section(buf, len, EP_SECTION_OPS, &s) && s.count) {
            uint64_t ro = s.offset + below(s.count) * s.rsize;
            static const struct { int off, w; } F[] = {{0, 2}, {2, 1}, {4, 2}, {6, 2}, {8, 4}, {12, 4}, {16, 4}, {20, 4}, {24, 8}, {32, 8}};
            int f = (int)below(sizeof(F) / sizeof(F[0]));
            poke_at(buf, len, ro + (uint64_t)F[f].off, F[f].w);
        }
        reseal(buf, len);
        return len;
    }
    case 8: { /* op parameters: hostile values reach the shape functions */
        if (find_section(buf, len, EP_SECTION_PARAMS, &s) && s.size >= 4)
            for (int k = 0, n = 1 + (int)below(3); k < n; k++) poke_at(buf, len, s.offset + 4 * below(s.size / 4), 4);
        reseal(buf, len);
        return len;
    }
    default: { /* operand indices and io records */
        if (below(2) && find_section(buf, len, EP_SECTION_OPIO, &s) && s.count)
            poke_at(buf, len, s.offset + 4 * below(s.count), 4);
        else if (find_section(buf, len, EP_SECTION_IO, &s) && s.count)
            poke_at(buf, len, s.offset + 4 * below(2 * s.count), 4);
        reseal(buf, len);
        return len;
    }
    }
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
    rng_state = strtoull(argv[2], NULL, 10);
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
        for (int k = 0, m = 1 + (int)below(3); k < m; k++) n = mutate(buf, n);
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
                            dims[k] = d.min_dims[k] + (int32_t)below((uint32_t)(d.max_dims[k] - d.min_dims[k]) + 1u);
                            variable = 1;
                        }
                    }
                    if (variable && ep_session_set_input_shape(s, i, dims, (uint32_t)d.rank) == EP_OK &&
                        ep_session_io_desc(s, EP_IO_INPUT, i, &d) != EP_OK) {
                        fprintf(stderr, "desc failed after a shape was set\n");
                        return 1;
                    }
                    memset(ep_session_io_buffer(s, EP_IO_INPUT, i), (int)below(256), (size_t)d.nbytes);
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
