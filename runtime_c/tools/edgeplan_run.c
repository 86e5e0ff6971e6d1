/* edgeplan-run: runs a plan on a board with no Python.
 *
 *   edgeplan-run model.eplan [--input [name=]x.npy]... [--output [name=]y.npy]... [--repeat N] [--threads N]
 *                [--seed N] [--vnpu PRESET] [--public-key FILE.pub] [--quiet] [--watch]
 *
 * Inputs not given are zero. --seed is the session's seed (ep_options.seed: the key of random ops
 * without a seed of their own; 0 when not given). Prints each output's shape and summary, latency (median of N runs),
 * arena bytes and peak RSS. The plan is mmapped; weights are used in place. --vnpu runs the plan's partitions on the
 * virtual NPU of that preset (run_vnpu.c) and prints its modelled cycles. --watch serves one request per line of
 * standard input and replaces the plan when its file changes (validated first; a bad file is refused and the
 * serving plan stays): a board's model update without a restart. --public-key refuses a plan that key has not
 * signed (docs/signing.md), in watch mode too. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "edgeplan/edgeplan.h"
#include "npy.h"
#include "run_npu.h"
#include "tool_util.h"

#define MAX_IO 64

static void usage(void) {
    fprintf(stderr,
            "usage: edgeplan-run PLAN [--input [NAME=]FILE.npy]... [--output [NAME=]FILE.npy]... [--repeat N] [--threads N] [--seed N] [--vnpu PRESET] [--public-key FILE.pub] [--quiet] [--watch]\n");
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* "name=path" or "path" */
static void split_arg(char *arg, char **name, char **path) {
    char *eq = strchr(arg, '=');
    if (eq) { *eq = '\0'; *name = arg; *path = eq + 1; }
    else { *name = NULL; *path = arg; }
}

static const char *dtype_name(int32_t dt) {
    switch (dt) {
    case 1: return "float32"; case 2: return "uint8"; case 3: return "int8"; case 5: return "int16";
    case 6: return "int32"; case 7: return "int64"; case 9: return "bool"; case 10: return "float16";
    case 11: return "float64"; case 16: return "bfloat16";
    default: return "?";
    }
}

static void summarize(const ep_io_desc *d, const void *data) {
    printf("  %s: %s [", d->name, dtype_name(d->dtype));
    int64_t n = 1;
    for (int i = 0; i < d->rank; i++) { printf(i ? ", %d" : "%d", d->dims[i]); n *= d->dims[i]; }
    printf("]");
    if (d->dtype == 1 && n > 0) {
        const float *x = data;
        double mn = x[0], mx = x[0], sum = 0;
        int64_t arg = 0;
        for (int64_t i = 0; i < n; i++) {
            if (x[i] < mn) mn = x[i];
            if (x[i] > mx) { mx = x[i]; arg = i; }
            sum += x[i];
        }
        printf("  min %.6g max %.6g mean %.6g argmax %lld", mn, mx, sum / (double)n, (long long)arg);
    }
    printf("\n");
}

/* Sets the inputs given as files (a variable-length one takes the file's shape); an input not given stays zero. */
static int feed_inputs(ep_session *s, int n_in, char **in_names, char **in_paths, int warn_missing) {
    char err[256] = "";
    ep_session_info si = {.struct_size = sizeof(si)};
    if (ep_session_query(s, &si)) { fprintf(stderr, "edgeplan-run: %s\n", ep_status_str(EP_ERR_INTERNAL)); return 1; }
    int rc;
    unsigned char given[MAX_IO] = {0};
    for (int i = 0; i < n_in; i++) {
        uint32_t idx = (uint32_t)i;
        if (in_names[i] && ep_session_find(s, EP_IO_INPUT, in_names[i], &idx)) {
            fprintf(stderr, "edgeplan-run: the plan has no input '%s'\n", in_names[i]); return 1;
        }
        ep_io_desc d;
        if (ep_session_io_desc(s, EP_IO_INPUT, idx, &d)) { fprintf(stderr, "edgeplan-run: the plan has only %u inputs\n", si.n_inputs); return 1; }
        npy_array a;
        if (npy_read(in_paths[i], &a, err, sizeof(err))) { fprintf(stderr, "edgeplan-run: %s\n", err); return 1; }
        int same = a.dtype == d.dtype && a.rank == d.rank;
        for (int k = 0; same && k < d.rank; k++) same = a.dims[k] == d.dims[k];
        if (!same && a.dtype == d.dtype && a.rank == d.rank) {   /* a variable-length input: within its bounds? */
            int32_t dims[8];
            int fits = 1;
            for (int k = 0; k < d.rank; k++) {
                fits &= a.dims[k] >= 0 && a.dims[k] <= INT32_MAX;
                dims[k] = (int32_t)a.dims[k];
            }
            same = fits && ep_session_set_input_shape(s, idx, dims, (uint32_t)d.rank) == EP_OK;
            if (same && ep_session_io_desc(s, EP_IO_INPUT, idx, &d)) same = 0;
        }
        if (!same) {
            fprintf(stderr, "edgeplan-run: input '%s' expects %s [", d.name, dtype_name(d.dtype));
            for (int k = 0; k < d.rank; k++) {
                if (d.dim_names[k]) {
                    fprintf(stderr, k ? ", %s=%d..%d" : "%s=%d..%d", d.dim_names[k], d.min_dims[k], d.max_dims[k]);
                    if (d.dim_steps[k] > 1) fprintf(stderr, ":%d", d.dim_steps[k]);
                }
                else fprintf(stderr, k ? ", %d" : "%d", d.dims[k]);
            }
            fprintf(stderr, "], %s holds %s [", in_paths[i], dtype_name(a.dtype));
            for (int k = 0; k < a.rank; k++) fprintf(stderr, k ? ", %lld" : "%lld", (long long)a.dims[k]);
            fprintf(stderr, "]\n");
            return 1;
        }
        rc = ep_session_set_input(s, idx, a.data, a.nbytes);
        free(a.data);
        if (rc) { fprintf(stderr, "edgeplan-run: input '%s': %s\n", d.name, ep_status_str(rc)); return 1; }
        if (idx < MAX_IO) given[idx] = 1;
    }
    for (uint32_t i = 0; i < si.n_inputs && i < MAX_IO; i++) {
        ep_io_desc d;
        if (warn_missing && !given[i] && ep_session_io_desc(s, EP_IO_INPUT, i, &d) == EP_OK)
            fprintf(stderr, "edgeplan-run: input '%s' not given (--input): it is zero\n", d.name);
    }

    return 0;
}

#ifndef EP_NO_SWAP
/* The plan file's identity: a new file renamed over it, or one rewritten, differs in one of these. */
static int file_changed(const char *path, struct stat *last) {
    struct stat st;
    if (stat(path, &st) != 0) return 0;   /* mid-replacement: look again at the next request */
    const int changed = st.st_ino != last->st_ino || st.st_size != last->st_size ||
                        st.st_mtim.tv_sec != last->st_mtim.tv_sec || st.st_mtim.tv_nsec != last->st_mtim.tv_nsec;
    *last = st;
    return changed;
}

/* --watch: serves one request per line of standard input ("quit" or end of input stops) and, before each, opens
 * the plan file again when it has changed. The new plan is opened into its own arena and given the inputs first;
 * only then does it replace the serving one (ep_slot_swap), so a bad file is refused with its reason and
 * the old plan keeps serving. Takes ownership of the mapped plan, the arena and the session. */
static int run_watch(const char *path, void *plan, size_t plan_len, ep_session *s, void *arena,
                     const ep_options *opt0, int n_in, char **in_names, char **in_paths) {
    ep_slot slot;
    if (ep_slot_init(&slot, s) != EP_OK) { fprintf(stderr, "edgeplan-run: --watch: this build has no hot swap\n"); return 1; }
    struct stat last;
    if (stat(path, &last) != 0) memset(&last, 0, sizeof last);
    char err[256] = "", line[256];
    ep_options opt = *opt0;
    opt.error_buf = err;
    opt.error_buf_len = sizeof err;
    long requests = 0, swaps = 0, refused = 0, failed = 0;
    while (fgets(line, sizeof line, stdin) && strncmp(line, "quit", 4) != 0) {
        if (file_changed(path, &last)) {
            void *next_plan = MAP_FAILED, *next_arena = NULL;
            size_t next_len = 0;
            ep_session *next = NULL;
            ep_plan_info info;
            int rc = EP_ERR_PLAN_TRUNCATED;
            err[0] = '\0';
            const int fd = open(path, O_RDONLY);
            struct stat st;
            if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
                next_len = (size_t)st.st_size;
                next_plan = mmap(NULL, next_len, PROT_READ, MAP_PRIVATE, fd, 0);
            }
            if (fd >= 0) close(fd);
            if (next_plan != MAP_FAILED && (rc = ep_plan_query(next_plan, next_len, &info)) == EP_OK) {
                const size_t n = info.arena_bytes ? (size_t)info.arena_bytes : 64;
                if (posix_memalign(&next_arena, 64, n) == 0) {
                    memset(next_arena, 0, n);
                    rc = ep_session_open(&next, next_plan, next_len, next_arena, (size_t)info.arena_bytes, &opt);
                } else {
                    rc = EP_ERR_ARENA_TOO_SMALL, next_arena = NULL;
                }
            }
            if (rc == EP_OK && feed_inputs(next, n_in, in_names, in_paths, 0)) rc = EP_ERR_SIZE;
            ep_session *old = NULL;
            if (rc == EP_OK) rc = ep_slot_swap(&slot, next, &old);
            if (rc == EP_OK) {
                ep_session_close(old);
                free(arena);
                munmap(plan, plan_len);
                arena = next_arena, plan = next_plan, plan_len = next_len;
                printf("swap %ld: %s, arena %llu bytes\n", ++swaps, path, (unsigned long long)info.arena_bytes);
            } else {
                if (next) ep_session_close(next);
                free(next_arena);
                if (next_plan != MAP_FAILED) munmap(next_plan, next_len);
                refused++;
                printf("refused: %s: %s%s%s; the serving plan stays\n", path, ep_status_str(rc), err[0] ? ": " : "", err);
            }
        }
        ep_session *cur = ep_slot_acquire(&slot);
        const int rc = ep_run(cur);
        ep_session_info si = {.struct_size = sizeof(si)};
        if (ep_session_query(cur, &si) != EP_OK) si.n_outputs = 0;
        printf("request %ld: %s\n", ++requests, rc == EP_OK ? "ok" : ep_status_str(rc));
        failed += rc != EP_OK;
        for (uint32_t i = 0; rc == EP_OK && i < si.n_outputs; i++) {
            ep_io_desc d;
            if (ep_session_io_desc(cur, EP_IO_OUTPUT, i, &d) == EP_OK) summarize(&d, ep_session_io_buffer(cur, EP_IO_OUTPUT, i));
        }
        ep_slot_release(&slot, cur);
        fflush(stdout);
    }
    printf("watch: %ld requests (%ld failed), %ld swaps, %ld plans refused; peak RSS: %ld KiB\n", requests, failed,
           swaps, refused, peak_rss_kib());
    ep_session *cur = ep_slot_acquire(&slot);
    ep_slot_release(&slot, cur);
    ep_slot_destroy(&slot);
    ep_session_close(cur);
    free(arena);
    munmap(plan, plan_len);
    return failed ? 1 : 0;
}
#else
static int run_watch(const char *path, void *plan, size_t plan_len, ep_session *s, void *arena,
                     const ep_options *opt0, int n_in, char **in_names, char **in_paths) {
    (void)path, (void)plan, (void)plan_len, (void)s, (void)arena, (void)opt0, (void)n_in, (void)in_names, (void)in_paths;
    fprintf(stderr, "edgeplan-run: --watch needs the hot-swap runtime (built with -Dswap=false)\n");
    return 2;
}
#endif

int main(int argc, char **argv) {
    const char *plan_path = NULL, *npu = NULL;
    char *in_names[MAX_IO], *in_paths[MAX_IO], *out_names[MAX_IO], *out_paths[MAX_IO];
    int n_in = 0, n_out = 0, repeat = 1, quiet = 0, threads = 1, watch = 0, have_key = 0;
    uint8_t key[33];
    uint64_t seed = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--input") && i + 1 < argc && n_in < MAX_IO) {
            split_arg(argv[++i], &in_names[n_in], &in_paths[n_in]); n_in++;
        } else if (!strcmp(argv[i], "--output") && i + 1 < argc && n_out < MAX_IO) {
            split_arg(argv[++i], &out_names[n_out], &out_paths[n_out]); n_out++;
        } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
            repeat = atoi(argv[++i]);
            if (repeat < 1 || repeat > 1000000) { fprintf(stderr, "edgeplan-run: --repeat must be 1..1000000\n"); return 2; }
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            threads = atoi(argv[++i]);
            if (threads < 1 || threads > 64) { fprintf(stderr, "edgeplan-run: --threads must be 1..64\n"); return 2; }
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            char *end = NULL;
            const char *v = argv[++i];
            errno = 0;
            seed = (uint64_t)strtoull(v, &end, 0);
            if (!*v || *end || *v == '-' || errno) { fprintf(stderr, "edgeplan-run: --seed must be an integer 0..2^64-1\n"); return 2; }
        } else if (!strcmp(argv[i], "--vnpu") && i + 1 < argc) {
            npu = argv[++i];
        } else if (!strcmp(argv[i], "--public-key") && i + 1 < argc) {
            const char *kp = argv[++i];
            FILE *kf = fopen(kp, "rb");
            const size_t n = kf ? fread(key, 1, sizeof key, kf) : 0;   /* 33: a longer file is refused */
            if (kf) fclose(kf);
            if (n != 32) {
                fprintf(stderr, "edgeplan-run: %s: %s\n", kp, kf ? "a public key is the 32 raw bytes `edgeplan keygen` writes to NAME.pub" : "cannot read");
                return 2;
            }
            have_key = 1;
        } else if (!strcmp(argv[i], "--watch")) {
            watch = 1;
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = 1;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(); return 0;
        } else if (argv[i][0] != '-' && !plan_path) {
            plan_path = argv[i];
        } else {
            fprintf(stderr, "edgeplan-run: unexpected argument '%s'\n", argv[i]); usage(); return 2;
        }
    }
    if (!plan_path) { usage(); return 2; }

    double t0 = now_ms();
    int fd = open(plan_path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) { fprintf(stderr, "edgeplan-run: cannot read %s\n", plan_path); return 1; }
    void *plan = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (plan == MAP_FAILED) { fprintf(stderr, "edgeplan-run: cannot map %s\n", plan_path); return 1; }
    size_t plan_len = (size_t)st.st_size;

    ep_plan_info info;
    int rc = have_key ? ep_plan_verify(plan, plan_len, key) : EP_OK;   /* before anything else is read */
    if (rc) { fprintf(stderr, "edgeplan-run: %s: %s\n", plan_path, ep_status_str(rc)); return 1; }
    rc = ep_plan_query(plan, plan_len, &info);
    if (rc) { fprintf(stderr, "edgeplan-run: %s: %s\n", plan_path, ep_status_str(rc)); return 1; }
    void *arena = NULL;
    if (posix_memalign(&arena, 64, info.arena_bytes ? (size_t)info.arena_bytes : 64)) {
        fprintf(stderr, "edgeplan-run: cannot allocate %llu arena bytes\n", (unsigned long long)info.arena_bytes);
        return 1;
    }
    memset(arena, 0, info.arena_bytes ? (size_t)info.arena_bytes : 64);   /* an input not given is zero */
    char err[256] = "";
    ep_options opt;
    memset(&opt, 0, sizeof(opt));
    opt.struct_size = sizeof(opt);
    opt.error_buf = err;
    opt.error_buf_len = sizeof(err);
    opt.n_threads = (uint32_t)threads;
    opt.seed = seed;
    if (npu && run_npu_attach(npu, &opt, err, sizeof err)) { fprintf(stderr, "edgeplan-run: %s\n", err); return 2; }
    ep_session *s = NULL;
    rc = ep_session_open(&s, plan, plan_len, arena, (size_t)info.arena_bytes, &opt);   /* verified above */
    if (have_key) opt.public_key = key;   /* --watch: every replacement is verified as it opens */
    if (rc) { fprintf(stderr, "edgeplan-run: cannot open %s: %s: %s\n", plan_path, ep_status_str(rc), err); return 1; }
    double t_open = now_ms() - t0;
    ep_session_info si = {.struct_size = sizeof(si)};
    if (ep_session_query(s, &si)) { fprintf(stderr, "edgeplan-run: %s\n", ep_status_str(EP_ERR_INTERNAL)); return 1; }

    if (feed_inputs(s, n_in, in_names, in_paths, 1)) return 1;
    if (watch) return run_watch(plan_path, plan, plan_len, s, arena, &opt, n_in, in_names, in_paths);

    double *times = malloc(sizeof(double) * (size_t)repeat);
    if (!times) return 1;
    for (int r = 0; r < repeat; r++) {
        double t = now_ms();
        rc = ep_run(s);
        times[r] = now_ms() - t;
        if (rc) {
            fprintf(stderr, "edgeplan-run: run failed: %s: %s\n", ep_status_str(rc), si.last_error);
            return 1;
        }
    }
    qsort(times, (size_t)repeat, sizeof(double), cmp_double);

    const uint32_t n_outputs = si.n_outputs;
    if (!quiet) printf("outputs:\n");
    for (uint32_t i = 0; i < n_outputs; i++) {
        ep_io_desc d;
        if (ep_session_io_desc(s, EP_IO_OUTPUT, i, &d) != EP_OK) {
            fprintf(stderr, "edgeplan-run: output %u: %s\n", i, ep_status_str(EP_ERR_INTERNAL));
            return 1;
        }
        if (!quiet) summarize(&d, ep_session_io_buffer(s, EP_IO_OUTPUT, i));
    }
    for (int i = 0; i < n_out; i++) {
        uint32_t idx = (uint32_t)i;
        if (out_names[i] && ep_session_find(s, EP_IO_OUTPUT, out_names[i], &idx)) {
            fprintf(stderr, "edgeplan-run: the plan has no output '%s'\n", out_names[i]); return 1;
        }
        ep_io_desc d;
        if (ep_session_io_desc(s, EP_IO_OUTPUT, idx, &d)) { fprintf(stderr, "edgeplan-run: the plan has only %u outputs\n", n_outputs); return 1; }
        if (npy_write(out_paths[i], d.dtype, d.rank, d.dims, ep_session_io_buffer(s, EP_IO_OUTPUT, idx), d.nbytes)) {
            fprintf(stderr, "edgeplan-run: cannot write %s\n", out_paths[i]); return 1;
        }
    }
    printf("latency: median %.3f ms, min %.3f ms over %d run%s, %u thread%s\n", times[repeat / 2], times[0], repeat,
           repeat > 1 ? "s" : "", si.n_threads, si.n_threads > 1 ? "s" : "");
    printf("open: %.3f ms; arena: %llu bytes (tensors %llu, session %llu); weights: %llu bytes in place; peak RSS: %ld KiB\n",
           t_open, (unsigned long long)info.arena_bytes, (unsigned long long)info.planned_bytes,
           (unsigned long long)info.session_bytes, (unsigned long long)info.const_bytes, peak_rss_kib());
    if (npu) run_npu_report(s, repeat);
    ep_session_close(s);
    free(times);
    free(arena);
    munmap(plan, plan_len);
    return 0;
}
