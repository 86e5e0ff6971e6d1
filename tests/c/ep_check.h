/* The kernel-check harness of the C tests, after dav1d's tests/checkasm: one header, included by every test.
 *
 * Always available (the ref tests include only this part):
 *   CHECK(cond, fmt, ...)   counts a passed check or prints "FAIL file:line: ..." and counts a failure;
 *   chk_seed / chk_rnd / chk_int / chk_float / chk_float_in   one seeded RNG (xorshift64*, 2^64 - 1 period);
 *   chk_alloc / chk_guard / chk_free   heap buffers with CHK_GUARD guard bytes before and after the data (a write
 *       before the start or past the end is reported as such), the data filled with NaN bytes;
 *   chk_mk / chk_op / CHK_DIMS   ep_tensor and ep_op built by hand; chk_numel (a zero extent gives 0, no overflow);
 *   chk_pack_blocks   the compiler's packed weight layouts (GEMM strips, conv panels);
 *   chk_tol + chk_cmp_f32   the tolerance comparison: bit-exact, exact up to the sign of zero, ULP distance,
 *       relative (|got - want| <= rel |want| + max_rel max|want| + abs), or per element (a running sum of K
 *       terms: 2 (K + 4) FLT_EPSILON sum|terms|); every check states which and why in a comment.
 * In a sanitizer build every report is fatal (__ubsan_default_options).
 *
 * With EP_CHECK_KERNELS defined before the include (the check_<family>.c files), the table loop:
 *   chk_tables_init builds one kernel table per CPU feature level: ep_kernels_init(&t, ep_cpu_features() & mask)
 *       for each mask that clears one more ISA level (CHK_LEVELS: x86 AVX2+FMA; neon_dotprod, neon_fp16, neon),
 *       so x86, NEON and any ISA level added later run the same checks; every op-table row (ops.def EP_KERNEL) of
 *       a level the table has must be bound in it, and the table with every level cleared must be the reference's;
 *   chk_kernels(&case) runs one op (a generator's seeded random shape) through the ref kernel of its
 *       (op, variant) and through every table's kernel that differs from it: each ISA kernel on 1 thread and on a
 *       3-thread pool that splits even the smallest op (bit-identical to 1 thread), with the minimum scratch and
 *       the case's larger ones, in place where the op table allows it; guard bytes around every output and the
 *       scratch are checked after each call, inputs must be unchanged, and the outputs must match the reference
 *       within the case's tolerance (integer outputs bit for bit), and the case's spec (variant 0) if it has one;
 *   chk_main runs a family's generators, then prints every kernel's count of passed checks; a kernel the
 *       CPU has whose family this file covers but no check ran fails, and so does an ISA kernel of a family no
 *       check file covers (CHK_FAMILIES).
 * A failure names the op, variant, table (ISA), kernel, shape, seed, iteration and the worst error and its index;
 * `check_<family> --seed S --only GEN --iter I` reruns that case alone. EP_CHECK_DUMP=file writes a hash of every
 * run's outputs, to compare two builds bit for bit (a kernel change that must not change results).
 * EP_CHECK_ABOVE_BASELINE=1 checks only the kernels that differ from the baseline table's (the lowest ISA level the
 * CPU has): a run of the same binary and seed on a baseline CPU checks the rest with the same cases (CI runs the
 * aarch64 suite under qemu's cortex-a72, then only the dotprod / fp16 kernels under its max CPU). */
#ifndef EP_CHECK_H
#define EP_CHECK_H

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ep_ops.h"
#include "float_bits.h"

/* In a sanitizer build (meson -Db_sanitize=address,undefined) a report is a failure: the first one stops the test,
 * whatever the environment sets (the runtimes read these defaults first). Unused without sanitizers. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) { return "halt_on_error=1:print_stacktrace=1"; }

/* ---------------- counting checks ---------------- */
static int chk_n_pass, chk_n_fail;
#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (cond) {                                                                        \
            chk_n_pass++;                                                                  \
        } else {                                                                           \
            chk_n_fail++;                                                                  \
            printf("FAIL %s:%d: ", __FILE__, __LINE__), printf(__VA_ARGS__), printf("\n"); \
        }                                                                                  \
    } while (0)

/* ---------------- the seeded RNG ---------------- */
static uint64_t chk_rng = 0x9E3779B97F4A7C15ull;
static inline void chk_seed(uint64_t s) { chk_rng = s ? s : 0x9E3779B97F4A7C15ull; }
static inline uint32_t chk_rnd(void) {   /* xorshift64* (Vigna 2016): the high 32 bits */
    chk_rng ^= chk_rng >> 12;
    chk_rng ^= chk_rng << 25;
    chk_rng ^= chk_rng >> 27;
    return (uint32_t)((chk_rng * 0x2545F4914F6CDD1Dull) >> 32);
}
/* uniform in [lo, hi] */
static inline int chk_int(int lo, int hi) { return lo + (int)(chk_rnd() % (uint32_t)(hi - lo + 1)); }
/* uniform in [-1, 1), 24-bit steps */
static inline float chk_float(void) { return (float)(chk_rnd() >> 8) / (float)(1u << 24) * 2.0f - 1.0f; }
/* uniform in [lo, hi] */
static inline float chk_float_in(float lo, float hi) { return lo + (hi - lo) * (float)(chk_rnd() % 1000001) / 1e6f; }

/* ---------------- guarded buffers ----------------
 * [header 64 | guard CHK_GUARD | data | guard CHK_GUARD]; the data starts 16-aligned and is filled with
 * CHK_FILL (NaN as floats), so an element a kernel forgets to write shows up as a mismatch. */
#define CHK_GUARD 64
#define CHK_FILL 0xFF
#define CHK_GUARD_BYTE 0xA5
static inline void *chk_alloc(size_t bytes) {
    unsigned char *raw = (unsigned char *)malloc(64 + bytes + 2 * CHK_GUARD);
    if (!raw) {
        fprintf(stderr, "ep_check: out of memory (%zu bytes)\n", bytes);
        exit(2);
    }
    memcpy(raw, &bytes, sizeof bytes);
    memset(raw + 64, CHK_GUARD_BYTE, CHK_GUARD);
    memset(raw + 64 + CHK_GUARD, CHK_FILL, bytes);
    memset(raw + 64 + CHK_GUARD + bytes, CHK_GUARD_BYTE, CHK_GUARD);
    return raw + 64 + CHK_GUARD;
}
static inline size_t chk_size(const void *p) {
    size_t n;
    memcpy(&n, (const unsigned char *)p - CHK_GUARD - 64, sizeof n);
    return n;
}
/* 0: both guards intact; 1: a byte before the start was written; 2: a byte past the end */
static inline int chk_guard(const void *p) {
    const unsigned char *d = (const unsigned char *)p;
    const size_t n = chk_size(p);
    for (int i = 0; i < CHK_GUARD; i++)
        if (d[-1 - i] != CHK_GUARD_BYTE) return 1;
    for (int i = 0; i < CHK_GUARD; i++)
        if (d[n + (size_t)i] != CHK_GUARD_BYTE) return 2;
    return 0;
}
static inline const char *chk_guard_str(int g) { return g == 1 ? "before the start" : "past the end"; }
static inline void chk_free(void *p) {
    if (p) free((unsigned char *)p - CHK_GUARD - 64);
}

/* ---------------- tensors and ops by hand ---------------- */
/* element count of dims, 0 when any extent is 0, saturated at INT64_MAX */
static inline int64_t chk_numel(int rank, const int32_t *dims) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        if (dims[i] == 0) return 0;
    for (int i = 0; i < rank; i++) n = n > INT64_MAX / dims[i] ? INT64_MAX : n * dims[i];
    return n;
}
static inline ep_tensor chk_mk(void *data, uint8_t dtype, int rank, const int32_t *dims) {
    ep_tensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.dtype = dtype;
    t.rank = (uint8_t)rank;
    for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
    const int64_t n = chk_numel(rank, dims), es = ep_dtype_size(dtype) ? ep_dtype_size(dtype) : 1;
    t.nbytes = (uint64_t)(n > INT64_MAX / es ? INT64_MAX : n * es);
    return t;
}
#define CHK_DIMS(...) ((const int32_t[]){__VA_ARGS__})
#define CHK_COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))
static inline size_t chk_bytes(const ep_tensor *t) {
    return (size_t)chk_numel(t->rank, t->dims) * ep_dtype_size(t->dtype);
}
static inline ep_op chk_op(uint16_t opcode, const void *params, ep_tensor *const *in, int n_in, ep_tensor *const *out,
                           int n_out) {
    ep_op op;
    memset(&op, 0, sizeof op);
    op.params = params;
    op.in = in;
    op.out = out;
    op.n_in = (uint16_t)n_in;
    op.n_out = (uint16_t)n_out;
    op.opcode = opcode;
    return op;
}
/* The layout C8 of an f32 [N,C,H,W] (C a multiple of 8): element (n, c, h, w) of the plain tensor at
 * (((n*C/8 + c/8)*H + h)*W + w)*8 + c%8. chk_c8_block copies plain s into C8 d (to_c8) or C8 s into plain d;
 * chk_c8 returns a guarded C8 copy of a plain tensor. */
static inline void chk_c8_block(float *d, const float *s, const int32_t *dims, int to_c8) {
    const int64_t N = dims[0], C = dims[1], P = (int64_t)dims[2] * dims[3];
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t q = 0; q < P; q++) {
                const int64_t plain = (n * C + c) * P + q, blocked = ((n * (C / 8) + c / 8) * P + q) * 8 + c % 8;
                if (to_c8) d[blocked] = s[plain];
                else d[plain] = s[blocked];
            }
}
static inline ep_tensor chk_c8(const ep_tensor *t) {
    ep_tensor b = chk_mk(NULL, EP_DTYPE_F32, 4, t->dims);
    b.data = chk_alloc(chk_bytes(&b));
    chk_c8_block((float *)b.data, (const float *)t->data, t->dims, 1);
    b.layout = EP_LAYOUT_C8;
    return b;
}
/* A guarded f32 tensor of random values in [-scale, scale). */
static inline ep_tensor chk_tensor_rand(int rank, const int32_t *dims, float scale) {
    ep_tensor t = chk_mk(NULL, EP_DTYPE_F32, rank, dims);
    t.data = chk_alloc(chk_bytes(&t));
    float *f = (float *)t.data;
    for (size_t i = 0; i < chk_bytes(&t) / 4; i++) f[i] = chk_float() * scale;
    return t;
}

/* The compiler's packed weight layout (select.py): element (k, d) of a K x D matrix, at x[k*sk + d*sd], into
 * blocks [ceil(D/bs)][K][bs], zero past D. GEMM B[K,N] strips: (N, sk N, sd 1, NR); conv W[M,K] panels: (M, 1, K, MR). */
static inline ep_tensor chk_pack_blocks(const float *x, int K, int D, int64_t sk, int64_t sd, int bs) {
    const int blocks = (D + bs - 1) / bs;
    ep_tensor t = chk_mk(NULL, EP_DTYPE_F32, 3, CHK_DIMS(blocks, K, bs));
    float *d = (float *)chk_alloc(chk_bytes(&t));
    t.data = d;
    for (int b = 0; b < blocks; b++)
        for (int k = 0; k < K; k++)
            for (int j = 0; j < bs; j++) {
                const int e = b * bs + j;
                d[((int64_t)b * K + k) * bs + j] = e < D ? x[k * sk + e * sd] : 0.0f;
            }
    return t;
}

/* ---------------- tolerances ---------------- */
enum { CHK_CLOSE = 0, CHK_BITS = 1, CHK_VALUE = 2 };
typedef struct chk_tol {
    int exact;        /* CHK_BITS: bit for bit (a NaN matches any NaN); CHK_VALUE: equal values (-0 == +0) */
    double rel;       /* CHK_CLOSE: |got - want| <= rel |want| + max_rel max|want| + abs (all zero: unused) */
    double max_rel, abs;
    int ulp;          /* and, when > 0: at most ulp representable floats apart */
    double accum;     /* and, when > 0: <= 2 (accum + 4) FLT_EPSILON mag, mag = the reference run on |inputs|
                       * without activation (sum |terms| of a running sum of accum terms; see chk_kernels) */
} chk_tol;
#define CHK_EXACT ((chk_tol){CHK_BITS, 0, 0, 0, 0, 0})
#define CHK_EXACT_VALUE ((chk_tol){CHK_VALUE, 0, 0, 0, 0, 0})

static inline int64_t chk_ulp_dist(float a, float b) {
    int32_t ia, ib;
    memcpy(&ia, &a, 4), memcpy(&ib, &b, 4);
    const int64_t oa = ia < 0 ? (int64_t)INT32_MIN - ia : ia, ob = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
    return oa > ob ? oa - ob : ob - oa;
}
/* The bound on |got - want| at one element (inf: no bound of that kind), and whether it holds. */
static inline int chk_ok_f32(float g, float w, const chk_tol *t, double maxw, double elem) {
    if (g != g || w != w) return g != g && w != w;
    if (t->exact == CHK_BITS) return memcmp(&g, &w, 4) == 0;
    if (g == w) return 1;   /* infinities; -0 == +0 */
    if (t->exact == CHK_VALUE || isinf(g) || isinf(w)) return 0;
    const double d = fabs((double)g - (double)w);
    if ((t->rel > 0 || t->max_rel > 0 || t->abs > 0) && !(d <= t->rel * fabs((double)w) + t->max_rel * maxw + t->abs))
        return 0;
    if (t->ulp > 0 && chk_ulp_dist(g, w) > t->ulp) return 0;
    if (t->accum > 0 && !(d <= elem)) return 0;
    return 1;
}
typedef struct chk_err {
    int64_t bad;      /* elements out of tolerance */
    int64_t first;    /* the first of them, or -1 */
    int64_t worst;    /* the element with the largest |got - want| (-1: none differs) */
    double worst_err;
} chk_err;
static inline double chk_max_abs(const float *x, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(x[i])) m = fmax(m, fabs((double)x[i]));
    return m;
}
/* Compares n floats; mag (may be NULL) holds the accum magnitudes; maxw < 0: max|want| of these n.
 * Returns 1 when all are within tol. */
static inline int chk_cmp_f32(const float *got, const float *want, int64_t n, const chk_tol *t, const float *mag,
                              double maxw, chk_err *e) {
    if (maxw < 0) maxw = t->max_rel > 0 ? chk_max_abs(want, n) : 0;
    e->bad = 0, e->first = e->worst = -1, e->worst_err = 0;
    for (int64_t i = 0; i < n; i++) {
        const double elem = mag ? 2.0 * (t->accum + 4) * FLT_EPSILON * fabs((double)mag[i]) : 0.0;
        const int ok = chk_ok_f32(got[i], want[i], t, maxw, elem);
        const double d = fabs((double)got[i] - (double)want[i]);
        if (!ok && e->bad++ == 0) e->first = i;
        if (!ok && (e->worst < 0 || !(d <= e->worst_err))) e->worst = i, e->worst_err = d;
    }
    return e->bad == 0;
}

#ifdef EP_CHECK_KERNELS
/* ======================= the kernel tables (check_<family>.c) ======================= */
#include "ep_config.h"
#include "internal.h"   /* ep_kernels_init, pool.h */

/* ISA feature levels, highest first: the tables are built by clearing one more level at a time. name is the
 * isa token of the level's rows in ops.def (EP_KERNEL(isa, ...)). A level the CPU lacks is skipped. */
typedef struct chk_level {
    const char *name;
    uint64_t bits;
} chk_level;
static const chk_level CHK_LEVELS[] = {
    {"x86", EP_CPU_AVX2 | EP_CPU_FMA},
    {"neon_dotprod", EP_CPU_DOTPROD},
    {"neon_fp16", EP_CPU_FP16},
    {"neon", EP_CPU_NEON},
};
#define CHK_N_LEVELS (int)(sizeof(CHK_LEVELS) / sizeof(CHK_LEVELS[0]))
/* The op-table families each check file covers (ops.def EP_OP family column). */
static const char *const CHK_FAMILIES[][4] = {
    {"check_conv", "conv", "layout"},
    {"check_linear", "linear"},
    {"check_elementwise", "elementwise"},
    {"check_pool", "pool"},
    {"check_resize", "resize"},
    {"check_sequence", "softmax_reduce", "sequence", "rnn"},
    {"check_quant", "quant"},
};

/* the op table's rows */
typedef struct chk_op_row {
    uint16_t op;
    const char *name, *family;
} chk_op_row;
static const chk_op_row CHK_OPS[] = {
#define EP_OP(N, n, code, P, i0, i1, o0, o1, F, fam, since) {EP_OP_##N, #N, #fam},
#include "ops.def"
};
typedef struct chk_kernel_row {
    const char *isa, *op_name, *variant_name, *kernel;
    uint16_t op;
    uint8_t variant, have;
} chk_kernel_row;
static const chk_kernel_row CHK_KERNEL_ROWS[] = {
#define EP_KERNEL(isa, N, V, k) {#isa, #N, #V, #k, EP_OP_##N, EP_##N##_VARIANT_##V, EP_HAVE_##N##_##V},
#include "ops.def"
};
#define CHK_N_OPS (int)(sizeof(CHK_OPS) / sizeof(CHK_OPS[0]))
#define CHK_N_ROWS (int)(sizeof(CHK_KERNEL_ROWS) / sizeof(CHK_KERNEL_ROWS[0]))

typedef struct chk_table {
    const char *name;      /* "ref", or the highest level the table has */
    uint64_t features;
    ep_kernel_table t;
} chk_table;
static chk_table chk_tables[CHK_N_LEVELS + 1];
static int chk_n_tables;   /* [0] is the reference table, then the tables from the highest level down */
static int chk_above_baseline;   /* EP_CHECK_ABOVE_BASELINE: skip the kernels the baseline table has too */
static ep_pool chk_pool;
static int chk_pass_k[CHK_N_LEVELS + 1][EP_OP_COUNT][EP_MAX_VARIANTS];
static int chk_fail_k[CHK_N_LEVELS + 1][EP_OP_COUNT][EP_MAX_VARIANTS];
static int chk_cases, chk_skipped;
static struct { uint64_t seed; const char *gen; int iter; const char *family; } chk_at;   /* for the report */

static const char *chk_op_name(int op) {
    for (int i = 0; i < CHK_N_OPS; i++)
        if (CHK_OPS[i].op == op) return CHK_OPS[i].name;
    return "?";
}
static const char *chk_op_family(int op) {
    for (int i = 0; i < CHK_N_OPS; i++)
        if (CHK_OPS[i].op == op) return CHK_OPS[i].family;
    return "?";
}
static int chk_level_of(const char *isa) {
    for (int l = 0; l < CHK_N_LEVELS; l++)
        if (!strcmp(CHK_LEVELS[l].name, isa)) return l;
    return -1;
}
/* The row that fills table ti's entry (op, v): the highest level the table has with a row for it. */
static const chk_kernel_row *chk_row_for(int ti, int op, int v) {
    const chk_kernel_row *best = NULL;
    int best_l = CHK_N_LEVELS;
    for (int i = 0; i < CHK_N_ROWS; i++) {
        const chk_kernel_row *r = &CHK_KERNEL_ROWS[i];
        if (r->op != op || r->variant != v || !r->have) continue;
        const int l = chk_level_of(r->isa);
        if (!strcmp(r->isa, "ref")) {
            if (!best) best = r;
        } else if (ti > 0 && l >= 0 && (chk_tables[ti].features & CHK_LEVELS[l].bits) == CHK_LEVELS[l].bits &&
                   l < best_l) {
            best = r, best_l = l;
        }
    }
    return best;
}
static const char *chk_kernel_name(int ti, int op, int v) {
    const chk_kernel_row *r = chk_row_for(ti, op, v);
    return r ? r->kernel : "?";
}
static const char *chk_variant_name(int op, int v) {
    for (int i = 0; i < CHK_N_ROWS; i++)
        if (CHK_KERNEL_ROWS[i].op == op && CHK_KERNEL_ROWS[i].variant == v) return CHK_KERNEL_ROWS[i].variant_name;
    return v ? "?" : "DEFAULT";
}
static int chk_family_covered(const char *family) {
    for (size_t f = 0; f < sizeof(CHK_FAMILIES) / sizeof(CHK_FAMILIES[0]); f++)
        for (int k = 1; k < 4 && CHK_FAMILIES[f][k]; k++)
            if (!strcmp(CHK_FAMILIES[f][k], family)) return 1;
    return 0;
}
static int chk_family_mine(const char *family) {
    for (size_t f = 0; f < sizeof(CHK_FAMILIES) / sizeof(CHK_FAMILIES[0]); f++)
        if (!strcmp(CHK_FAMILIES[f][0], chk_at.family))
            for (int k = 1; k < 4 && CHK_FAMILIES[f][k]; k++)
                if (!strcmp(CHK_FAMILIES[f][k], family)) return 1;
    return 0;
}

/* The CPU the tests run on is the one asked for: qemu-user's QEMU_CPU (CI runs cortex-a72, which lacks
 * dotprod and fp16, and max, which has both), and NEON on every aarch64 CPU. */
static void chk_cpu_sanity(uint64_t f) {
    const char *qc = getenv("QEMU_CPU");
    printf("ep_cpu_features() = 0x%llx (NEON %d DOTPROD %d FP16 %d I8MM %d AVX2 %d FMA %d), QEMU_CPU=%s\n",
           (unsigned long long)f, !!(f & EP_CPU_NEON), !!(f & EP_CPU_DOTPROD), !!(f & EP_CPU_FP16),
           !!(f & EP_CPU_I8MM), !!(f & EP_CPU_AVX2), !!(f & EP_CPU_FMA), qc ? qc : "(unset)");
#if defined(__aarch64__)
    CHECK(f & EP_CPU_NEON, "an aarch64 CPU without NEON reported");
#endif
    if (qc && !strcmp(qc, "cortex-a72")) CHECK(!(f & (EP_CPU_DOTPROD | EP_CPU_FP16)), "cortex-a72 reports dotprod/fp16");
    if (qc && !strcmp(qc, "max"))
        CHECK((f & (EP_CPU_DOTPROD | EP_CPU_FP16)) == (EP_CPU_DOTPROD | EP_CPU_FP16), "qemu max lacks dotprod/fp16");
}

static void chk_tables_init(void) {
    const uint64_t cpu = ep_cpu_features();
    chk_cpu_sanity(cpu);
    chk_table *ref = &chk_tables[0];
    memset(ref, 0, sizeof *ref);
    ref->name = "ref";
    ep_kernels_init_ref(&ref->t);
    chk_n_tables = 1;
    uint64_t f = cpu;
    for (int l = 0; l < CHK_N_LEVELS; l++) {
        if (!(cpu & CHK_LEVELS[l].bits)) continue;
        chk_table *t = &chk_tables[chk_n_tables], *below = &chk_tables[chk_n_tables - 1];
        t->name = CHK_LEVELS[l].name;
        t->features = f;
        ep_kernels_init(&t->t, f);
        f &= ~CHK_LEVELS[l].bits;
        if (!memcmp(&t->t, &below->t, sizeof t->t)) {   /* the level above had no kernels of its own */
            if (chk_n_tables > 1) {
                printf("level %s: no kernels of its own (the table is level %s's)\n", below->name, t->name);
                below->name = t->name, below->features = t->features;
            } else {
                printf("level %s: no kernels (the table is the reference's)\n", t->name);
            }
            continue;
        }
        chk_n_tables++;
    }
    for (int ti = 1; ti < chk_n_tables; ti++) {
        const chk_table *t = &chk_tables[ti];
        int overridden = 0;
        for (int o = 0; o < EP_OP_COUNT; o++)
            for (int v = 0; v < EP_MAX_VARIANTS; v++) {
                CHECK(!t->t.fn[o][v] == !ref->t.fn[o][v], "table %s: op %d variant %d present %d, in ref %d", t->name, o,
                      v, !!t->t.fn[o][v], !!ref->t.fn[o][v]);
                overridden += t->t.fn[o][v] != ref->t.fn[o][v];
            }
        /* every op-table row of a level the table has is bound (by that level or a higher one) */
        for (int i = 0; i < CHK_N_ROWS; i++) {
            const chk_kernel_row *r = &CHK_KERNEL_ROWS[i];
            const int rl = chk_level_of(r->isa);
            if (rl < 0 || !r->have || (t->features & CHK_LEVELS[rl].bits) != CHK_LEVELS[rl].bits) continue;
            CHECK(t->t.fn[r->op][r->variant] != ref->t.fn[r->op][r->variant], "table %s: %s is not bound", t->name,
                  r->kernel);
        }
        printf("table %s (features 0x%llx): %d entries override ref\n", t->name, (unsigned long long)t->features,
               overridden);
    }
    ep_kernel_table masked;
    ep_kernels_init(&masked, f);   /* every ISA level cleared (ep_options.cpu_features_mask): the reference */
    CHECK(!memcmp(&masked, &ref->t, sizeof masked), "the table with every ISA level masked (0x%llx) is not ref",
          (unsigned long long)f);
    /* an ISA kernel of a family no check file covers would go untested */
    for (int i = 0; i < CHK_N_ROWS; i++)
        if (strcmp(CHK_KERNEL_ROWS[i].isa, "ref"))
            CHECK(chk_family_covered(chk_op_family(CHK_KERNEL_ROWS[i].op)), "%s: its family %s has no check file",
                  CHK_KERNEL_ROWS[i].kernel, chk_op_family(CHK_KERNEL_ROWS[i].op));
}

/* ---------------- one case ---------------- */
#define CHK_MAX_IN 8
#define CHK_MAX_OUT 3
typedef struct chk_tol_for {   /* a kernel held to another tolerance than the case's (say why) */
    const char *kernel;
    chk_tol tol;
} chk_tol_for;
typedef struct chk_case {
    const char *what;                  /* the shape and parameters, for the report */
    uint16_t opcode;
    uint8_t variant;
    const void *params;
    const void *params_abs;            /* the same op without activation: the magnitude run of tol.accum */
    ep_tensor *in[CHK_MAX_IN];         /* NULL: an absent optional input */
    int n_in, n_out;
    ep_tensor out[CHK_MAX_OUT];        /* declared outputs (rank 0: the shape function's); data ignored */
    uint64_t extra[4];                 /* scratch bytes added to the minimum, one run each (0 always runs) */
    int n_extra;
    chk_tol tol;                       /* every kernel against the ref kernel of the same (op, variant) */
    const chk_tol_for *tol_for;        /* NULL or {.kernel = NULL}-terminated overrides */
    const float *spec[CHK_MAX_OUT];    /* NULL, or the outputs of another computation every kernel must also
                                        * match within spec_tol (variant 0 on the plain layout) */
    chk_tol spec_tol;
    int want_rc;                       /* every kernel returns this; not EP_OK: no outputs are compared */
    int may_reject;                    /* 1: a shape function refusal skips the case; 0: it fails */
    int no_inplace;                    /* 1: not in place even when the op table allows it */
    int max_rel_all;                   /* 1: tol.max_rel scales max|want| over all outputs, not each one's */
    int keep_ref;                      /* 1: ref_out receives the reference's outputs (the caller chk_frees them) */
    void *ref_out[CHK_MAX_OUT];
    uint64_t scratch;                  /* out: the shape function's minimum scratch */
} chk_case;

/* ---------------- conventions shared by the families ----------------
 * A running sum of K products (GEMM, MATMUL, convolutions), in another order and with FMA:
 *   chk_tol_dot:   |got - ref| <= 1e-5 max|ref| + 2e-7 K + 1e-6 (products of magnitude <= 1: a dot's rounding
 *                  grows ~ K);
 *   chk_tol_accum: and <= 2 (K + 4) FLT_EPSILON mag, mag = the reference on |inputs| without activation (sum of
 *                  |products| + |bias| + |residual|): recursive float summation of K terms errs by at most
 *                  ~K 2^-24 sum|terms| (Higham, gamma_K) for the reference and the kernel alike, so they differ
 *                  by at most K FLT_EPSILON mag; +4 covers the bias and residual additions, the factor 2 the
 *                  fused activations chk_random_act draws (Lipschitz <= 1.5: hard-swish; relu, clip, leaky,
 *                  sigmoid, tanh, silu, gelu <= 1.13).
 * The ISA kernels evaluate a fused SIGMOID, SILU, TANH, GELU or ERF with a vector exp (x86_act.h, neon_math.h:
 * relative error <= 2e-6) that the second bound does not cover: with those activations they are held to the first. */
static inline chk_tol chk_tol_dot(double K) { return (chk_tol){.max_rel = 1e-5, .abs = 2e-7 * K + 1e-6}; }
static inline chk_tol chk_tol_accum(double K) { return (chk_tol){.max_rel = 1e-5, .abs = 2e-7 * K + 1e-6, .accum = K}; }
static inline int chk_act_vexp(int act) {
    return act == EP_ACT_SIGMOID || act == EP_ACT_SILU || act == EP_ACT_TANH || act == EP_ACT_GELU || act == EP_ACT_ERF;
}
static chk_tol_for chk_vexp_for[2];
/* tol_for of a case with fused activation act and K products (NULL when act is not one of those): every
 * kernel ("*") held to chk_tol_dot */
static inline const chk_tol_for *chk_vexp_override(int act, double K) {
    if (!chk_act_vexp(act)) return NULL;
    chk_vexp_for[0].kernel = "*";
    chk_vexp_for[0].tol = chk_tol_dot(K);
    chk_vexp_for[1].kernel = NULL;
    return chk_vexp_for;
}
/* An activation to fuse after a product. wide: the AVX2 vector ones with fixed parameters; else any of bounded
 * slope with random parameters. */
static inline int chk_random_act(float *alpha, float *beta, int wide) {
    static const int x86_acts[] = {EP_ACT_NONE, EP_ACT_RELU, EP_ACT_CLIP, EP_ACT_LEAKY_RELU, EP_ACT_SIGMOID,
                                   EP_ACT_HARD_SWISH, EP_ACT_SILU, EP_ACT_TANH, EP_ACT_GELU, EP_ACT_ERF};
    static const int acts[] = {EP_ACT_NONE, EP_ACT_RELU, EP_ACT_CLIP, EP_ACT_LEAKY_RELU, EP_ACT_HARD_SIGMOID,
                               EP_ACT_HARD_SWISH, EP_ACT_SIGMOID, EP_ACT_TANH, EP_ACT_SILU, EP_ACT_GELU};
    if (wide) {
        const int a = x86_acts[chk_rnd() % 10];
        *alpha = a == EP_ACT_CLIP ? -0.5f : 0.1f;
        *beta = a == EP_ACT_CLIP ? 0.75f : 0.0f;
        return a;
    }
    const int a = acts[chk_int(0, 9)];
    *alpha = chk_float() * 0.5f - 0.25f;
    *beta = *alpha + 0.5f + chk_float() * 0.25f;
    if (a == EP_ACT_LEAKY_RELU || a == EP_ACT_HARD_SIGMOID) *alpha = 0.1f + 0.5f * fabsf(chk_float()), *beta = 0.5f;
    return a;
}

static void chk_report(const chk_case *c, int ti, const char *run, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void chk_report(const chk_case *c, int ti, const char *run, const char *fmt, ...) {
    chk_n_fail++;
    chk_fail_k[ti][c->opcode][c->variant]++;
    if (chk_n_fail > 60) return;
    printf("FAIL %s/%s on %s (%s), %s: %s\n     seed 0x%llx: %s --seed 0x%llx --only %s --iter %d\n     ",
           chk_op_name(c->opcode), chk_variant_name(c->opcode, c->variant), chk_tables[ti].name,
           chk_kernel_name(ti, c->opcode, c->variant), run, c->what, (unsigned long long)chk_at.seed, chk_at.family,
           (unsigned long long)chk_at.seed, chk_at.gen, chk_at.iter);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}
static void chk_passed(const chk_case *c, int ti) {
    chk_n_pass++;
    chk_pass_k[ti][c->opcode][c->variant]++;
}

/* "[i0,i1,...]" of flat index i in dims */
static const char *chk_where(char *buf, size_t len, const ep_tensor *t, int64_t i) {
    int64_t idx[EP_MAX_RANK];
    for (int d = t->rank - 1; d >= 0; d--) idx[d] = t->dims[d] ? i % t->dims[d] : 0, i = t->dims[d] ? i / t->dims[d] : 0;
    size_t k = (size_t)snprintf(buf, len, "[");
    for (int d = 0; d < t->rank && k < len; d++) k += (size_t)snprintf(buf + k, len - k, d ? ",%lld" : "%lld", (long long)idx[d]);
    if (k < len) snprintf(buf + k, len - k, "]");
    return buf;
}

/* Compares output o of a run with want; reports and returns 0 on a mismatch. */
static int chk_compare(const chk_case *c, int ti, const char *run, int o, const void *got, const void *want,
                       const chk_tol *tol, const float *mag, double maxw, const char *against) {
    const ep_tensor *t = &c->out[o];
    const size_t bytes = chk_bytes(t);
    char w[96];
    if (t->dtype != EP_DTYPE_F32) {   /* integers, bool: bit for bit */
        if (!memcmp(got, want, bytes)) return 1;
        const size_t es = ep_dtype_size(t->dtype);
        size_t i = 0;
        while (!memcmp((const char *)got + i * es, (const char *)want + i * es, es)) i++;
        chk_report(c, ti, run, "output %d differs from %s (integers: bit for bit) first at %s", o, against,
                   chk_where(w, sizeof w, t, (int64_t)i));
        return 0;
    }
    chk_err e;
    const int64_t n = (int64_t)(bytes / 4);
    if (chk_cmp_f32((const float *)got, (const float *)want, n, tol, mag, maxw, &e)) return 1;
    const float *g = (const float *)got, *wv = (const float *)want;
    char w2[96];
    chk_report(c, ti, run,
               "output %d: %lld of %lld elements out of tolerance against %s (exact %d, rel %g, max_rel %g, abs %g, "
               "ulp %d, accum %g); worst |err| %.3g at %s: got %.9g want %.9g; first at %s: got %.9g want %.9g",
               o, (long long)e.bad, (long long)n, against, tol->exact, tol->rel, tol->max_rel, tol->abs, tol->ulp,
               tol->accum, e.worst_err, chk_where(w, sizeof w, t, e.worst), g[e.worst], wv[e.worst],
               chk_where(w2, sizeof w2, t, e.first), g[e.first], wv[e.first]);
    return 0;
}

typedef struct chk_run_bufs {
    void *y[CHK_MAX_OUT];
    void *scratch;
} chk_run_bufs;

/* Runs kernel fn on the case's inputs (input `alias` replaced by a copy in output 0 when >= 0) with `scratch`
 * bytes of guarded scratch; checks rc, guards and that no input changed. b receives the outputs. */
static int chk_run(const chk_case *c, int ti, ep_kernel_fn fn, const char *run, uint64_t scratch, ep_pool *pool,
                   int alias, void *const *snap, chk_run_bufs *b) {
    ep_tensor outs[CHK_MAX_OUT], ins_v[CHK_MAX_IN];
    ep_tensor *outp[CHK_MAX_OUT], *inp[CHK_MAX_IN];
    for (int o = 0; o < c->n_out; o++) {
        outs[o] = c->out[o];
        b->y[o] = outs[o].data = chk_alloc(chk_bytes(&c->out[o]));
        outp[o] = &outs[o];
    }
    for (int i = 0; i < c->n_in; i++) inp[i] = c->in[i];
    if (alias >= 0) {   /* Y aliases the input exactly: it starts as a copy of it */
        memcpy(b->y[0], c->in[alias]->data, chk_bytes(c->in[alias]));
        ins_v[alias] = *c->in[alias];
        ins_v[alias].data = b->y[0];
        inp[alias] = &ins_v[alias];
    }
    b->scratch = chk_alloc((size_t)scratch);
    ep_op op = chk_op(c->opcode, c->params, inp, c->n_in, outp, c->n_out);
    op.variant = c->variant;
    op.scratch = scratch ? b->scratch : NULL;
    op.scratch_size = scratch;
    op.pool = pool;
    const int rc = fn(&op);
    int ok = 1, g;
    if (rc != c->want_rc) ok = 0, chk_report(c, ti, run, "returned %d, expected %d", rc, c->want_rc);
    for (int o = 0; o < c->n_out; o++)
        if ((g = chk_guard(b->y[o]))) ok = 0, chk_report(c, ti, run, "wrote output %d %s", o, chk_guard_str(g));
    if ((g = chk_guard(b->scratch)))
        ok = 0, chk_report(c, ti, run, "wrote the scratch (%llu bytes) %s", (unsigned long long)scratch, chk_guard_str(g));
    for (int i = 0; i < c->n_in; i++)
        if (c->in[i] && memcmp(snap[i], c->in[i]->data, chk_bytes(c->in[i])))
            ok = 0, chk_report(c, ti, run, "modified input %d", i);
    return ok;
}
static void chk_run_free(const chk_case *c, chk_run_bufs *b) {
    for (int o = 0; o < c->n_out; o++) chk_free(b->y[o]);
    chk_free(b->scratch);
}

/* EP_CHECK_DUMP=path: one line per 1-thread run with a hash of its outputs, so that two builds (before and after a
 * change to a kernel) can be compared bit for bit on the same cases: `diff dump.old dump.new`. */
static FILE *chk_dump;
static int chk_case_in_iter;
static void chk_dump_run(const chk_case *c, int ti, int r, const chk_run_bufs *b) {
    if (!chk_dump) return;
    uint64_t h = 0xCBF29CE484222325ull;   /* FNV-1a 64 */
    for (int o = 0; o < c->n_out; o++)
        for (size_t i = 0; i < chk_bytes(&c->out[o]); i++)
            h = (h ^ ((const unsigned char *)b->y[o])[i]) * 0x100000001B3ull;
    fprintf(chk_dump, "%s %d.%d %s/%s %s run %d: %016llx\n", chk_at.gen, chk_at.iter, chk_case_in_iter,
            chk_op_name(c->opcode), chk_variant_name(c->opcode, c->variant), chk_kernel_name(ti, c->opcode, c->variant), r,
            (unsigned long long)h);
}

static const chk_tol *chk_tol_of(const chk_case *c, int ti) {
    const char *k = chk_kernel_name(ti, c->opcode, c->variant);
    for (const chk_tol_for *f = c->tol_for; f && f->kernel; f++)
        if (!strcmp(f->kernel, k) || !strcmp(f->kernel, "*")) return &f->tol;
    return &c->tol;
}

/* The magnitudes of tol.accum: the reference kernel on |inputs| (floats) with params_abs. */
static float *chk_magnitude(const chk_case *c, ep_kernel_fn ref, int o) {
    ep_tensor ins_v[CHK_MAX_IN], *inp[CHK_MAX_IN], outs[CHK_MAX_OUT], *outp[CHK_MAX_OUT];
    for (int i = 0; i < c->n_in; i++) {
        inp[i] = NULL;
        if (!c->in[i]) continue;
        ins_v[i] = *c->in[i];
        ins_v[i].data = chk_alloc(chk_bytes(c->in[i]));
        memcpy(ins_v[i].data, c->in[i]->data, chk_bytes(c->in[i]));
        if (c->in[i]->dtype == EP_DTYPE_F32)
            for (size_t k = 0; k < chk_bytes(c->in[i]) / 4; k++)
                ((float *)ins_v[i].data)[k] = fabsf(((float *)ins_v[i].data)[k]);
        inp[i] = &ins_v[i];
    }
    for (int k = 0; k < c->n_out; k++) {
        outs[k] = c->out[k];
        outs[k].data = chk_alloc(chk_bytes(&c->out[k]));
        outp[k] = &outs[k];
    }
    void *s = chk_alloc((size_t)c->scratch);
    ep_op op = chk_op(c->opcode, c->params_abs ? c->params_abs : c->params, inp, c->n_in, outp, c->n_out);
    op.variant = c->variant, op.scratch = c->scratch ? s : NULL, op.scratch_size = c->scratch;
    (void)ref(&op);
    for (int i = 0; i < c->n_in; i++)
        if (c->in[i]) chk_free(ins_v[i].data);
    for (int k = 0; k < c->n_out; k++)
        if (k != o) chk_free(outs[k].data);
    chk_free(s);
    return (float *)outs[o].data;
}

/* 1 when some table's kernel of (op, variant) is not the reference's: a generator may skip building large inputs
 * for a case nothing would check. */
/* Table ti's kernel for (op, v) is checked in this run: not the reference's, and not the baseline table's when
 * EP_CHECK_ABOVE_BASELINE leaves those to the baseline CPU's run. */
static int chk_checked_here(int ti, int op, int v) {
    const ep_kernel_fn fn = chk_tables[ti].t.fn[op][v];
    if (ti == 0 || fn == chk_tables[0].t.fn[op][v]) return 0;
    return !(chk_above_baseline && chk_n_tables > 1 && fn == chk_tables[chk_n_tables - 1].t.fn[op][v]);
}
static int chk_isa_kernel(int op, int v) {
    for (int ti = 1; ti < chk_n_tables; ti++)
        if (chk_checked_here(ti, op, v)) return 1;
    return 0;
}

/* Runs the case through every table (see the top of this file). Returns 0 when the shape function refused it. */
static int chk_kernels(chk_case *c) {
    ep_tensor *souts[CHK_MAX_OUT];
    ep_shape shp[CHK_MAX_OUT];
    for (int o = 0; o < c->n_out; o++) {
        if (c->out[o].rank == 0 && c->out[o].dtype == 0) c->out[o].dtype = EP_DTYPE_F32;
        souts[o] = &c->out[o];
    }
    ep_op sop = chk_op(c->opcode, c->params, c->in, c->n_in, souts, c->n_out);
    sop.variant = c->variant;
    c->scratch = 0;
    const int src = ep_op_info_get(c->opcode)->shape(&sop, shp, &c->scratch);
    if (src != EP_OK) {
        chk_skipped++;
        if (!c->may_reject)
            chk_report(c, 0, "shape function", "refused the op (%d); the generator makes valid ops only", src);
        return 0;
    }
    for (int o = 0; o < c->n_out; o++) {
        ep_tensor *t = &c->out[o];
        int same = t->rank == 0 || (t->rank == shp[o].rank && t->dtype == shp[o].dtype);
        for (int d = 0; same && t->rank && d < t->rank; d++) same = t->dims[d] == shp[o].dims[d];
        if (!same) chk_report(c, 0, "shape function", "output %d: not the shape the generator declared", o);
        const uint8_t layout = t->layout;   /* the declared layout (C8 for the blocked variants' outputs) */
        *t = chk_mk(NULL, shp[o].dtype, shp[o].rank, shp[o].dims);
        t->layout = layout;
    }
    chk_cases++;
    chk_case_in_iter++;
    const ep_kernel_fn ref = chk_tables[0].t.fn[c->opcode][c->variant];
    const int isa = chk_isa_kernel(c->opcode, c->variant);
    const int any = isa || (c->spec[0] != NULL && !chk_above_baseline);
    if (!ref) {
        chk_report(c, 0, "table", "no reference kernel");
        return 1;
    }
    if (!any && !c->keep_ref) return 1;   /* no ISA kernel for it on this CPU: the ref tests cover the reference */
    void *snap[CHK_MAX_IN] = {0};
    for (int i = 0; i < c->n_in; i++)
        if (c->in[i]) {
            snap[i] = malloc(chk_bytes(c->in[i]) + 1);
            memcpy(snap[i], c->in[i]->data, chk_bytes(c->in[i]));
        }
    chk_run_bufs want;
    chk_run(c, 0, ref, "1 thread", c->scratch, NULL, -1, snap, &want);
    const int compare = c->want_rc == EP_OK;
    if (!any && compare) chk_dump_run(c, 0, 0, &want);
    float *mag[CHK_MAX_OUT] = {0};
    for (int o = 0; isa && compare && c->tol.accum > 0 && o < c->n_out; o++) mag[o] = chk_magnitude(c, ref, o);
    double maxw = -1;   /* per output */
    for (int o = 0; c->max_rel_all && o < c->n_out; o++)
        if (c->out[o].dtype == EP_DTYPE_F32)
            maxw = fmax(maxw, chk_max_abs((const float *)want.y[o], (int64_t)(chk_bytes(&c->out[o]) / 4)));
    /* in place: each input the output may alias exactly (op table EP_OPF_INPLACE) */
    int alias[CHK_MAX_IN], n_alias = 0;
    for (int i = 0; !c->no_inplace && ep_op_info_get(c->opcode)->inplace && i < c->n_in; i++)
        if (c->in[i] && c->in[i]->dtype == c->out[0].dtype && c->in[i]->rank == c->out[0].rank &&
            !memcmp(c->in[i]->dims, c->out[0].dims, sizeof(int32_t) * c->out[0].rank))
            alias[n_alias++] = i;
    ep_kernel_fn tested[CHK_N_LEVELS + 1] = {0};
    for (int ti = 0; any && ti < chk_n_tables; ti++) {
        const ep_kernel_fn fn = chk_tables[ti].t.fn[c->opcode][c->variant];
        int seen = 0;
        for (int k = 0; k < ti; k++) seen |= tested[k] == fn;
        tested[ti] = fn;
        if (!fn || seen || (ti && !chk_checked_here(ti, c->opcode, c->variant))) continue;
        const chk_tol *tol = ti ? chk_tol_of(c, ti) : &c->tol;
        /* runs: scratch min + extras, then in place; each on 1 thread, then on the pool (the reference: one
         * thread; only its run against the spec when no other table has a kernel for the op) */
        for (int r = 0; r < (isa ? 1 + c->n_extra + n_alias : 1); r++) {
            const int al = r > c->n_extra ? alias[r - 1 - c->n_extra] : -1;
            const uint64_t sz = c->scratch + (r && r <= c->n_extra ? c->extra[r - 1] : 0);
            char run[64];
            snprintf(run, sizeof run, "1 thread, scratch %llu%s", (unsigned long long)sz,
                     al >= 0 ? (al ? ", in place (Y = input 1)" : ", in place (Y = input 0)") : "");
            chk_run_bufs one, par;
            int ok = 1;
            if (ti == 0 && r == 0) one = want;
            else ok = chk_run(c, ti, fn, run, sz, NULL, al, snap, &one);
            if (compare) chk_dump_run(c, ti, r, &one);
            for (int o = 0; ok && compare && !(ti == 0 && r == 0) && o < c->n_out; o++)
                ok = chk_compare(c, ti, run, o, one.y[o], want.y[o], tol, mag[o], maxw, "the reference");
            for (int o = 0; ok && compare && c->spec[o] && o < c->n_out; o++)
                ok = chk_compare(c, ti, run, o, one.y[o], c->spec[o], &c->spec_tol, NULL, -1, "the spec (variant 0)");
            if (chk_pool.n_threads > 1 && compare && ti) {   /* the same kernel on threads: the same bits */
                snprintf(run, sizeof run, "%u threads, scratch %llu%s", chk_pool.n_threads, (unsigned long long)sz,
                         al >= 0 ? ", in place" : "");
                ok &= chk_run(c, ti, fn, run, sz, &chk_pool, al, snap, &par);
                for (int o = 0; ok && o < c->n_out; o++)
                    if (memcmp(par.y[o], one.y[o], chk_bytes(&c->out[o])))
                        ok = 0, chk_report(c, ti, run, "output %d differs from 1 thread", o);
                chk_run_free(c, &par);
            }
            if (ok) chk_passed(c, ti);
            if (!(ti == 0 && r == 0)) chk_run_free(c, &one);
        }
    }
    if (c->keep_ref) {
        for (int o = 0; o < c->n_out; o++) c->ref_out[o] = want.y[o], want.y[o] = NULL;
    }
    chk_run_free(c, &want);
    for (int i = 0; i < c->n_in; i++) free(snap[i]);
    for (int o = 0; o < c->n_out; o++) chk_free(mag[o]);
    return 1;
}

/* 16-bit weights (plan_format.h "16-bit weights"): *w16 is input wi of c (f32 weights) stored as F16 (f16 != 0)
 * or BF16, and c's input wi is set to those rounded values in f32. Every table's kernel for c must then give the
 * same bytes with the 16-bit weights as with their f32 values, on one thread and on the pool. The caller frees
 * w16->data and the f32 copy (c->in[wi]->data is replaced: keep the original to free it). */
static inline ep_tensor chk_w16_round(ep_tensor *w, int f16) {
    const int64_t n = (int64_t)(chk_bytes(w) / 4);
    ep_tensor h = chk_mk(chk_alloc((size_t)(n * 2 > 0 ? n * 2 : 1)), f16 ? EP_DTYPE_F16 : EP_DTYPE_BF16, w->rank, w->dims);
    uint16_t *hv = (uint16_t *)h.data;
    float *wv = (float *)w->data;
    for (int64_t i = 0; i < n; i++) {
        hv[i] = f16 ? ep_f32_to_f16(wv[i]) : ep_f32_to_bf16(wv[i]);
        wv[i] = f16 ? ep_f16_to_f32(hv[i]) : ep_bf16_to_f32(hv[i]);
    }
    return h;
}
static inline void chk_w16_exact(chk_case *c, int wi, ep_tensor *w16) {
    ep_tensor *w32 = c->in[wi];
    ep_shape shp[CHK_MAX_OUT];
    ep_tensor *souts[CHK_MAX_OUT];
    for (int o = 0; o < c->n_out; o++) souts[o] = &c->out[o];
    c->in[wi] = w16;
    ep_op sop = chk_op(c->opcode, c->params, c->in, c->n_in, souts, c->n_out);
    sop.variant = c->variant;
    uint64_t scratch = 0;
    const int src = ep_op_info_get(c->opcode)->shape(&sop, shp, &scratch);
    c->in[wi] = w32;
    if (src != EP_OK) {
        chk_report(c, 0, "shape function", "refused 16-bit weights (%d)", src);
        return;
    }
    void *snap[CHK_MAX_IN] = {0};
    for (int i = 0; i < c->n_in; i++)
        if (c->in[i]) {
            snap[i] = malloc(chk_bytes(c->in[i]) + 1);
            memcpy(snap[i], c->in[i]->data, chk_bytes(c->in[i]));
        }
    void *snap16 = malloc(chk_bytes(w16) + 1);
    memcpy(snap16, w16->data, chk_bytes(w16));
    ep_kernel_fn tested[CHK_N_LEVELS + 1] = {0};
    for (int ti = 0; ti < chk_n_tables; ti++) {
        const ep_kernel_fn fn = chk_tables[ti].t.fn[c->opcode][c->variant];
        int seen = 0;
        for (int k = 0; k < ti; k++) seen |= tested[k] == fn;
        tested[ti] = fn;
        if (!fn || seen || (ti && !chk_checked_here(ti, c->opcode, c->variant))) continue;
        for (int run = 0; run < (ti && chk_pool.n_threads > 1 ? 2 : 1); run++) {
            ep_pool *pool = run ? &chk_pool : NULL;
            const char *how = run ? "threads, 16-bit weights" : "1 thread, 16-bit weights";
            chk_run_bufs a, b;
            int ok = chk_run(c, ti, fn, how, scratch, pool, -1, snap, &a);
            c->in[wi] = w16;
            void *save = snap[wi];
            snap[wi] = snap16;
            ok &= chk_run(c, ti, fn, how, scratch, pool, -1, snap, &b);
            snap[wi] = save;
            c->in[wi] = w32;
            for (int o = 0; ok && o < c->n_out; o++)
                if (memcmp(a.y[o], b.y[o], chk_bytes(&c->out[o])))
                    ok = 0, chk_report(c, ti, how, "output %d differs from the f32 weights' (the rounded values)", o);
            if (ok) chk_passed(c, ti);
            chk_run_free(c, &a), chk_run_free(c, &b);
        }
    }
    for (int i = 0; i < c->n_in; i++) free(snap[i]);
    free(snap16);
}

/* ---------------- a family's main ---------------- */
typedef struct chk_gen {
    const char *name;
    void (*run)(int iter);
    int iters;
} chk_gen;

static uint64_t chk_mix(uint64_t a, uint64_t b) {   /* splitmix64 of a ^ b */
    uint64_t z = a ^ (b + 0x9E3779B97F4A7C15ull + (a << 6) + (a >> 2));
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* check_<family> [--seed S] [--scale K] [--only GEN] [--iter I] [--threads T] */
static int chk_main(int argc, char **argv, const char *family, const chk_gen *gens, int n_gens) {
    uint64_t seed = 20261201;
    double scale = 1.0;
    const char *only = NULL;
    int only_iter = -1, threads = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--scale")) scale = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--only")) only = argv[i + 1];
        else if (!strcmp(argv[i], "--iter")) only_iter = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: %s [--seed S] [--scale K] [--only GEN] [--iter I] [--threads T]\n", argv[0]);
            return 2;
        }
    }
    chk_at.family = family;
    chk_at.seed = seed;
    if (getenv("EP_CHECK_DUMP") && !(chk_dump = fopen(getenv("EP_CHECK_DUMP"), "w"))) {
        fprintf(stderr, "%s: cannot write %s\n", family, getenv("EP_CHECK_DUMP"));
        return 2;
    }
    printf("%s: seed 0x%llx\n", family, (unsigned long long)seed);
    chk_tables_init();
    chk_above_baseline = getenv("EP_CHECK_ABOVE_BASELINE") && atoi(getenv("EP_CHECK_ABOVE_BASELINE"));
    if (chk_above_baseline)
        printf("EP_CHECK_ABOVE_BASELINE: only the kernels that differ from table %s's (a run on that level checks "
               "the rest)\n", chk_tables[chk_n_tables - 1].name);
    printf("threads: %u (every kernel is run again on them)\n", ep_pool_start(&chk_pool, (uint32_t)threads));
    chk_pool.min_work = 0;   /* split even the smallest op */
    for (int g = 0; g < n_gens; g++) {
        if (only && strcmp(only, gens[g].name)) continue;
        chk_at.gen = gens[g].name;
        const int iters = (int)(gens[g].iters * scale + 0.5);
        for (int it = 0; it < iters; it++) {
            if (only_iter >= 0 && it != only_iter) continue;
            chk_at.iter = it;
            chk_case_in_iter = 0;
            chk_seed(chk_mix(chk_mix(seed, (uint64_t)g), (uint64_t)it));
            gens[g].run(it);
        }
    }
    ep_pool_stop(&chk_pool);
    if (chk_dump) fclose(chk_dump);
    /* every kernel of this file's families that the CPU has was checked */
    printf("checks passed per kernel:\n");
    for (int ti = 0; ti < chk_n_tables; ti++)
        for (int o = 0; o < EP_OP_COUNT; o++)
            for (int v = 0; v < EP_MAX_VARIANTS; v++) {
                const ep_kernel_fn fn = chk_tables[ti].t.fn[o][v];
                int seen = 0;
                for (int k = 0; k < ti; k++) seen |= chk_tables[k].t.fn[o][v] == fn;
                if (!fn || seen || !chk_family_mine(chk_op_family(o))) continue;
                if (ti && !chk_checked_here(ti, o, v)) continue;   /* the baseline table's, checked on its level */
                if (ti == 0 && !chk_pass_k[0][o][v] && !chk_fail_k[0][o][v]) continue;   /* ref: run only as a reference */
                printf("  %-13s %-17s %-10s %-38s %7d passed %d failed\n", chk_tables[ti].name, chk_op_name(o),
                       chk_variant_name(o, v), chk_kernel_name(ti, o, v), chk_pass_k[ti][o][v], chk_fail_k[ti][o][v]);
                if (ti && !only) CHECK(chk_pass_k[ti][o][v] > 0, "%s: no check ran", chk_kernel_name(ti, o, v));
            }
    printf("%s: %d cases (%d refused by a shape function); %d checks passed, %d failed\n", family, chk_cases, chk_skipped,
           chk_n_pass, chk_n_fail);
    return chk_n_fail ? 1 : 0;
}
#endif /* EP_CHECK_KERNELS */

#endif
