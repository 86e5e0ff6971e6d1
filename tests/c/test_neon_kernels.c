/* Kernel checks for the aarch64 NEON kernels (dav1d checkasm style), run under qemu-user in CI.
 *
 * For every NEON table entry: seeded random shapes (odd sizes, tails of every width, broadcasts,
 * strides, dilations, pads, groups, fused bias/residual/activation), the op validated by its shape
 * function, then the reference kernel and the NEON kernel run on the same inputs into outputs with
 * guard bytes on both sides (and around the scratch). Checked: the guards, the inputs unchanged, and
 * the outputs:
 *   - elementwise, MAX/AVG pooling: equal to the reference (same operations in the same order;
 *     -0 == +0, NaN where the reference has NaN);
 *   - GLOBAL_AVGPOOL, CONV2D, GEMM, MATMUL (sums reordered into lanes, or fused multiply-add):
 *         |neon - ref| <= 2 * (K + 4) * FLT_EPSILON * mag
 *     where K is the number of summed terms and mag the same op run by the reference on |inputs|
 *     with no activation (sum of |products| + |bias| + |residual|). Justification: recursive float
 *     summation of K terms errs by at most ~K * 2^-24 * sum|terms| (Higham, gamma_K), for the
 *     reference and for NEON alike, so they differ by at most 2 * K * 2^-24 * mag = K * FLT_EPSILON
 *     * mag; +4 covers the bias/residual additions, and the factor 2 covers the fused activations
 *     we test with (Lipschitz <= 1.5: hard-swish; relu/clip/leaky/sigmoid/tanh/silu <= 1.1).
 * The feature-masked fallbacks: the table built with features 0 (what cpu_features_mask without
 * EP_CPU_NEON gives) must hold exactly the reference kernels, and every case is also run through it.
 * Under qemu, QEMU_CPU tells which CPU the run emulates; the test checks ep_cpu_features() agrees
 * (cortex-a72: no dotprod/fp16; max: both).
 * Threads: every NEON kernel also runs on a 3-thread pool that splits even the smallest op (src/pool.h,
 * min_work 0); its output must equal the single-thread NEON output bit for bit. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ep_ops.h"
#include "internal.h"
#include "neon/neon.h"

#define GUARD 64
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static int g_fail, g_cases, g_skipped;
static ep_kernel_table t_ref, t_neon, t_masked;
static ep_pool g_pool;   /* started in main */

static uint32_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}
static int ri(int lo, int hi) { return lo + (int)(rnd() % (uint32_t)(hi - lo + 1)); }
static float rf(void) { return (float)((int)(rnd() % 20001) - 10000) / 10000.0f; }

/* ---- guarded buffers ---- */
static void *gnew(size_t bytes) {
    unsigned char *raw = malloc(bytes + 2 * GUARD);
    if (!raw) { fprintf(stderr, "out of memory\n"); exit(2); }
    memset(raw, 0xA5, GUARD);
    memset(raw + GUARD + bytes, 0xA5, GUARD);
    return raw + GUARD;
}
static int gok(const void *p, size_t bytes) {
    const unsigned char *raw = (const unsigned char *)p - GUARD;
    for (int i = 0; i < GUARD; i++)
        if (raw[i] != 0xA5 || raw[GUARD + bytes + i] != 0xA5) return 0;
    return 1;
}
static void gfree(void *p) { if (p) free((unsigned char *)p - GUARD); }

typedef struct tens {
    ep_tensor t;
    size_t bytes;
} tens;

static void tset(tens *x, int rank, const int *dims) {
    memset(x, 0, sizeof(*x));
    x->t.rank = (uint8_t)rank;
    x->t.dtype = EP_DTYPE_F32;
    size_t n = 1;
    for (int i = 0; i < rank; i++) { x->t.dims[i] = dims[i]; n *= (size_t)dims[i]; }
    x->bytes = n * 4;
    x->t.nbytes = x->bytes;
}
static void talloc_rand(tens *x) {
    x->t.data = gnew(x->bytes);
    float *f = x->t.data;
    for (size_t i = 0; i < x->bytes / 4; i++) f[i] = rf();
}

/* ---- one case: shape-check, run ref / neon / masked, compare ---- */
enum { EXACT = 0, ACCUM = 1 };

typedef struct tcase {
    const char *name;
    uint16_t opcode;
    uint8_t variant;
    void *params, *params_abs;   /* params_abs: same with act NONE (for the magnitude run) */
    int n_in;
    tens in[4];
    int present[4];
    tens out;
    int mode;
    double k_terms;
} tcase;

static int run_fn_on(ep_kernel_fn fn, tcase *c, ep_tensor **ins, const void *params, float *y, void *scratch,
                     uint64_t scratch_size, ep_pool *pool) {
    ep_tensor yt = c->out.t;
    yt.data = y;
    ep_tensor *outs[1] = {&yt};
    ep_op op = {params, (ep_tensor *const *)ins, outs, scratch, scratch_size, (uint16_t)c->n_in, 1, c->opcode,
                c->variant, 0, pool};
    return fn(&op);
}
static int run_fn(ep_kernel_fn fn, tcase *c, ep_tensor **ins, const void *params, float *y, void *scratch,
                  uint64_t scratch_size) {
    return run_fn_on(fn, c, ins, params, y, scratch, scratch_size, NULL);
}

static void fail(const tcase *c, const char *what, size_t i, float got, float want, double tol) {
    if (g_fail < 20)
        fprintf(stderr, "FAIL %s: %s at %zu: neon %.9g ref %.9g (tol %.3g)\n", c->name, what, i, got, want, tol);
    g_fail++;
}

/* Returns after checking; frees nothing of the inputs (the caller does). */
static void check_case(tcase *c) {
    ep_tensor *ins[4];
    for (int i = 0; i < c->n_in; i++) ins[i] = c->present[i] ? &c->in[i].t : NULL;
    ep_op sop = {c->params, (ep_tensor *const *)ins, NULL, NULL, 0, (uint16_t)c->n_in, 1, c->opcode, c->variant, 0,
                 NULL};
    ep_tensor *souts[1] = {&c->out.t};
    sop.out = (ep_tensor *const *)souts;
    ep_shape shp;
    uint64_t scratch = 0;
    const ep_op_info *info = ep_op_info_get(c->opcode);
    int rc = info->shape(&sop, &shp, &scratch);
    if (rc != EP_OK) {   /* the generator made an op the runtime rejects: not a kernel case */
        g_skipped++;
        return;
    }
    tset(&c->out, shp.rank, shp.dims);
    const size_t n = c->out.bytes / 4;
    const uint64_t sbytes = scratch + (scratch ? (uint64_t)ri(0, 2) * scratch : 0);   /* extra passes / slots */
    ep_kernel_fn fr = t_ref.fn[c->opcode][c->variant], fn = t_neon.fn[c->opcode][c->variant];
    ep_kernel_fn fm = t_masked.fn[c->opcode][c->variant];
    if (!fr || !fn || fm != fr) {
        fprintf(stderr, "FAIL %s: table entry missing or masked table not ref\n", c->name);
        g_fail++;
        return;
    }
    float *yr = gnew(c->out.bytes), *yn = gnew(c->out.bytes), *ym = gnew(c->out.bytes), *ya = NULL;
    void *sc = gnew(sbytes);
    for (size_t i = 0; i < n; i++) yr[i] = yn[i] = ym[i] = NAN;
    /* snapshot of the inputs */
    float *snap[4] = {0};
    for (int i = 0; i < c->n_in; i++)
        if (c->present[i]) {
            snap[i] = malloc(c->in[i].bytes + 1);
            memcpy(snap[i], c->in[i].t.data, c->in[i].bytes);
        }
    int r1 = run_fn(fr, c, ins, c->params, yr, sc, sbytes);
    int r2 = run_fn(fn, c, ins, c->params, yn, sc, sbytes);
    int r3 = run_fn(fm, c, ins, c->params, ym, sc, sbytes);
    float *yt = gnew(c->out.bytes);   /* the NEON kernel on threads */
    for (size_t i = 0; i < n; i++) yt[i] = NAN;
    int r4 = run_fn_on(fn, c, ins, c->params, yt, sc, sbytes, &g_pool);
    g_cases++;
    if (r1 || r2 || r3 || r4) { fprintf(stderr, "FAIL %s: status %d %d %d %d\n", c->name, r1, r2, r3, r4); g_fail++; }
    if (!gok(yt, c->out.bytes) || memcmp(yt, yn, c->out.bytes)) {
        fprintf(stderr, "FAIL %s: %u threads differ from one (or overwrote guard bytes)\n", c->name, g_pool.n_threads);
        g_fail++;
    }
    gfree(yt);
    if (!gok(yr, c->out.bytes) || !gok(yn, c->out.bytes) || !gok(ym, c->out.bytes) || !gok(sc, sbytes)) {
        fprintf(stderr, "FAIL %s: guard bytes overwritten\n", c->name);
        g_fail++;
    }
    for (int i = 0; i < c->n_in; i++)
        if (c->present[i] && memcmp(snap[i], c->in[i].t.data, c->in[i].bytes)) {
            fprintf(stderr, "FAIL %s: input %d modified\n", c->name, i);
            g_fail++;
        }
    if (c->mode == ACCUM) {
        /* magnitude: the reference on |inputs| without activation */
        for (int i = 0; i < c->n_in; i++)
            if (c->present[i]) {
                float *f = c->in[i].t.data;
                for (size_t j = 0; j < c->in[i].bytes / 4; j++) f[j] = fabsf(f[j]);
            }
        ya = gnew(c->out.bytes);
        run_fn(fr, c, ins, c->params_abs, ya, sc, sbytes);
        for (int i = 0; i < c->n_in; i++)
            if (c->present[i]) memcpy(c->in[i].t.data, snap[i], c->in[i].bytes);
    }
    for (size_t i = 0; i < n; i++) {
        if (memcmp(&ym[i], &yr[i], 4) && !(isnan(ym[i]) && isnan(yr[i]))) {
            fail(c, "masked table differs from ref", i, ym[i], yr[i], 0);
            break;
        }
        if (isnan(yr[i]) || isnan(yn[i])) {
            if (isnan(yr[i]) != isnan(yn[i])) { fail(c, "NaN mismatch", i, yn[i], yr[i], 0); break; }
            continue;
        }
        const double tol = c->mode == ACCUM ? 2.0 * (c->k_terms + 4) * FLT_EPSILON * fabs((double)ya[i]) : 0.0;
        if (fabs((double)yn[i] - (double)yr[i]) > tol) { fail(c, "value", i, yn[i], yr[i], tol); break; }
    }
    for (int i = 0; i < c->n_in; i++) free(snap[i]);
    gfree(yr); gfree(yn); gfree(ym); gfree(ya); gfree(sc);
}

static void free_case(tcase *c) {
    for (int i = 0; i < c->n_in; i++)
        if (c->present[i]) gfree(c->in[i].t.data);
}

/* activations safe to fuse after an accumulating kernel (bounded slope) */
static int rand_act_accum(float *al, float *be) {
    static const int acts[] = {EP_ACT_NONE, EP_ACT_RELU, EP_ACT_CLIP, EP_ACT_LEAKY_RELU, EP_ACT_HARD_SIGMOID,
                               EP_ACT_HARD_SWISH, EP_ACT_SIGMOID, EP_ACT_TANH, EP_ACT_SILU, EP_ACT_NONE};
    const int a = acts[ri(0, 9)];
    *al = rf() * 0.5f - 0.25f;
    *be = *al + 0.5f + rf() * 0.25f;
    if (a == EP_ACT_LEAKY_RELU || a == EP_ACT_HARD_SIGMOID) { *al = 0.1f + 0.5f * fabsf(rf()); *be = 0.5f; }
    return a;
}

/* ---- generators ---- */
static void t_unary(int iters) {
    for (int it = 0; it < iters; it++) {
        tcase c = {0};
        ep_unary_params p = {ri(1, EP_ACT_COUNT - 1), 0.2f, 0.7f, 0};
        if (p.kind == EP_ACT_CLIP) { p.alpha = -0.3f; p.beta = 0.4f; }
        if (p.kind == EP_ACT_ELU || p.kind == EP_ACT_LEAKY_RELU) p.alpha = 0.3f;
        c.name = "unary"; c.opcode = EP_OP_UNARY; c.params = c.params_abs = &p; c.n_in = 1;
        int dims[2] = {ri(1, 3), ri(1, 45)};
        tset(&c.in[0], 2, dims); c.present[0] = 1; talloc_rand(&c.in[0]);
        float *x = c.in[0].t.data;
        if (ri(0, 4) == 0) x[0] = NAN;
        if (ri(0, 4) == 0) x[dims[0] * dims[1] - 1] = -0.0f;
        for (int i = 0; i < dims[0] * dims[1]; i++)   /* ties and integers for ROUND / FLOOR / CEIL */
            if (ri(0, 5) == 0) x[i] = 0.5f * (float)ri(-9, 9);
        check_case(&c);
        free_case(&c);
    }
}

static void t_binary(int iters) {
    for (int it = 0; it < iters; it++) {
        tcase c = {0};
        ep_binary_params p = {ri(0, EP_BIN_COUNT - 1), ri(0, 9) < 5 ? EP_ACT_NONE : ri(1, EP_ACT_COUNT - 1), 0.3f, 0.6f};
        if (p.act == EP_ACT_CLIP) { p.act_alpha = -0.5f; p.act_beta = 0.5f; }
        c.name = "binary"; c.opcode = EP_OP_BINARY; c.params = c.params_abs = &p; c.n_in = 2;
        const int r = ri(1, 4);
        int d[4], da[4], db[4];
        for (int i = 0; i < r; i++) d[i] = ri(1, i == r - 1 ? 37 : 5);
        const int ra = ri(1, r), rb = ri(1, r);
        const int form = ri(0, 3);   /* 0 same shape, 1 scalar b, 2 per-channel b, 3 random broadcast */
        for (int i = 0; i < ra; i++) da[i] = d[r - ra + i];
        for (int i = 0; i < rb; i++) db[i] = d[r - rb + i];
        int rbb = rb;
        if (form == 0) { for (int i = 0; i < r; i++) da[i] = db[i] = d[i]; rbb = r; }
        if (form == 1) { rbb = 1; db[0] = 1; }
        if (form == 2 && r >= 3) { rbb = 3; db[0] = d[r - 3]; db[1] = 1; db[2] = 1; }
        if (form == 3) {
            for (int i = 0; i < ra; i++) if (ri(0, 2) == 0) da[i] = 1;
            for (int i = 0; i < rb; i++) if (ri(0, 2) == 0) db[i] = 1;
        }
        const int raa = form == 0 ? r : ra;
        if (raa < r && rbb < r) { rbb = r; for (int i = 0; i < r; i++) db[i] = d[i]; }
        tset(&c.in[0], raa, da); tset(&c.in[1], rbb, db);
        c.present[0] = c.present[1] = 1;
        talloc_rand(&c.in[0]); talloc_rand(&c.in[1]);
        if (p.kind == EP_BIN_POW) {   /* positive bases */
            float *a = c.in[0].t.data;
            for (size_t i = 0; i < c.in[0].bytes / 4; i++) a[i] = fabsf(a[i]) + 0.1f;
        }
        if (ri(0, 5) == 0) ((float *)c.in[0].t.data)[0] = NAN;
        check_case(&c);
        free_case(&c);
    }
}

/* BINARY on integer dtypes: the NEON entry point hands the op to the reference (ep_ref_binary_int);
 * its output (single thread and on the pool) must equal the reference's byte for byte, guards intact;
 * a zero divisor (DIV, MOD, FMOD) fails all three with EP_ERR_RUN_INDEX. */
static void t_binary_int(int iters) {
    static const uint8_t dts[5] = {EP_DTYPE_I8, EP_DTYPE_U8, EP_DTYPE_I16, EP_DTYPE_I32, EP_DTYPE_I64};
    static const int kinds[8] = {EP_BIN_ADD, EP_BIN_SUB, EP_BIN_MUL, EP_BIN_DIV, EP_BIN_MAX, EP_BIN_MIN,
                                 EP_BIN_MOD, EP_BIN_FMOD};
    for (int it = 0; it < iters; it++) {
        const uint8_t dt = dts[ri(0, 4)];
        const size_t es = ep_dtype_size(dt);
        ep_binary_params p = {kinds[ri(0, 7)], EP_ACT_NONE, 0, 0};
        const int r = ri(1, 4);
        int d[4], db[4];
        for (int i = 0; i < r; i++) d[i] = ri(1, i == r - 1 ? 37 : 5);
        const int form = ri(0, 2);   /* B: same shape, scalar, random broadcast */
        for (int i = 0; i < r; i++) db[i] = form == 1 ? 1 : form == 2 && ri(0, 1) ? 1 : d[i];
        size_t n = 1, nb = 1;
        for (int i = 0; i < r; i++) n *= (size_t)d[i], nb *= (size_t)db[i];
        ep_tensor ta = {0}, tb = {0}, ty = {0};
        ta.rank = tb.rank = ty.rank = (uint8_t)r;
        ta.dtype = tb.dtype = ty.dtype = dt;
        for (int i = 0; i < r; i++) ta.dims[i] = ty.dims[i] = d[i], tb.dims[i] = db[i];
        ta.nbytes = ty.nbytes = n * es, tb.nbytes = nb * es;
        unsigned char *a = gnew(n * es), *b = gnew(nb * es), *yr = gnew(n * es), *yn = gnew(n * es), *yt = gnew(n * es);
        for (size_t i = 0; i < n * es; i++) a[i] = (unsigned char)rnd();
        for (size_t i = 0; i < nb * es; i++) b[i] = (unsigned char)(ri(0, 3) == 0 ? (ri(0, 1) ? 0 : 0xFF) : rnd());
        const int divides = p.kind == EP_BIN_DIV || p.kind == EP_BIN_MOD || p.kind == EP_BIN_FMOD;
        int zero = 0;
        for (size_t i = 0; i < nb; i++) {
            int z = 1;
            for (size_t k = 0; k < es; k++) z &= b[i * es + k] == 0;
            if (z && divides && ri(0, 3)) b[i * es] = 1, z = 0;
            zero |= z;
        }
        const int want_rc = divides && zero ? EP_ERR_RUN_INDEX : EP_OK;
        ta.data = a, tb.data = b;
        ep_tensor *ins[2] = {&ta, &tb}, *outs[1] = {&ty};
        ep_op op = {&p, (ep_tensor *const *)ins, (ep_tensor *const *)outs, NULL, 0, 2, 1, EP_OP_BINARY, 0, 0, NULL};
        ep_shape shp;
        uint64_t scratch = 0;
        g_cases++;
        if (ep_shape_binary(&op, &shp, &scratch) != EP_OK || shp.dtype != dt) {
            fprintf(stderr, "FAIL binary_int: shape function refused dtype %d kind %d\n", dt, p.kind);
            g_fail++;
        } else {
            ty.data = yr;
            const int r1 = t_ref.fn[EP_OP_BINARY][0](&op);
            ty.data = yn;
            const int r2 = t_neon.fn[EP_OP_BINARY][0](&op);
            ty.data = yt;
            op.pool = &g_pool;
            const int r3 = t_neon.fn[EP_OP_BINARY][0](&op);
            if (r1 != want_rc || r2 != want_rc || r3 != want_rc ||
                (!want_rc && (memcmp(yr, yn, n * es) || memcmp(yr, yt, n * es))) || !gok(yr, n * es) ||
                !gok(yn, n * es) || !gok(yt, n * es)) {
                fprintf(stderr, "FAIL binary_int: dtype %d kind %d rank %d: neon differs from ref\n", dt, p.kind, r);
                g_fail++;
            }
        }
        gfree(a), gfree(b), gfree(yr), gfree(yn), gfree(yt);
    }
}

static int pool_ext(int in, int k, int s, int d, int pb, int pe, int ceil_mode) {
    const int span = in + pb + pe - ((k - 1) * d + 1);
    if (span < 0) return -1;
    if (!ceil_mode) return span / s + 1;
    int o = (span + s - 1) / s + 1;
    if (o > 0 && (o - 1) * s >= in + pb) o--;
    return o;
}

static void t_pool(int iters, uint16_t opcode) {
    for (int it = 0; it < iters; it++) {
        tcase c = {0};
        ep_pool_params p;
        memset(&p, 0, sizeof p);
        for (int i = 0; i < 2; i++) {
            p.kernel[i] = ri(1, 4);
            p.stride[i] = ri(1, 3);
            p.dilation[i] = ri(0, 3) == 0 ? 2 : 1;
            p.pads[i] = ri(0, p.kernel[i] - 1);
            p.pads[i + 2] = ri(0, p.kernel[i] - 1);
        }
        p.count_include_pad = ri(0, 1);
        p.ceil_mode = ri(0, 1);
        c.name = opcode == EP_OP_MAXPOOL ? "maxpool" : "avgpool";
        c.opcode = opcode; c.params = c.params_abs = &p; c.n_in = 1;
        int dx[4] = {ri(1, 2), ri(1, 3), ri(1, 13), ri(1, 29)};
        int dy[4] = {dx[0], dx[1], 0, 0};
        int bad = 0;
        for (int i = 0; i < 2; i++) {
            dy[2 + i] = pool_ext(dx[2 + i], p.kernel[i], p.stride[i], p.dilation[i], p.pads[i], p.pads[i + 2], p.ceil_mode);
            if (dy[2 + i] < 0) bad = 1;
        }
        if (bad) { it--; continue; }
        tset(&c.in[0], 4, dx); c.present[0] = 1; talloc_rand(&c.in[0]);
        tset(&c.out, 4, dy);
        if (ri(0, 5) == 0) ((float *)c.in[0].t.data)[ri(0, dx[2] * dx[3] - 1)] = NAN;
        check_case(&c);
        free_case(&c);
    }
}

static void t_gap(int iters) {
    for (int it = 0; it < iters; it++) {
        tcase c = {0};
        ep_global_pool_params p = {0, 0};
        c.name = "global_avgpool"; c.opcode = EP_OP_GLOBAL_AVGPOOL; c.params = c.params_abs = &p; c.n_in = 1;
        int dx[4] = {ri(1, 2), ri(1, 5), ri(1, 13), ri(1, 17)};
        tset(&c.in[0], 4, dx); c.present[0] = 1; talloc_rand(&c.in[0]);
        c.mode = ACCUM;
        c.k_terms = (double)dx[2] * dx[3];
        check_case(&c);
        free_case(&c);
    }
}

/* B[K,N] -> [ceil(N/NR)][K][NR] */
static void pack_b(float *dst, const float *b, int K, int N) {
    const int strips = (N + EP_PACK_NR - 1) / EP_PACK_NR;
    for (int s = 0; s < strips; s++)
        for (int k = 0; k < K; k++)
            for (int j = 0; j < EP_PACK_NR; j++) {
                const int col = s * EP_PACK_NR + j;
                dst[((size_t)s * K + k) * EP_PACK_NR + j] = col < N ? b[(size_t)k * N + col] : 0.0f;
            }
}

static void t_gemm(int iters, int packed) {
    for (int it = 0; it < iters; it++) {
        tcase c = {0};
        ep_gemm_params p = {0, 0, 0, 0}, pa = {0, 0, 0, 0};
        p.act = rand_act_accum(&p.act_alpha, &p.act_beta);
        c.name = packed ? "gemm_packed" : "gemm"; c.opcode = EP_OP_GEMM; c.variant = packed ? EP_GEMM_VARIANT_PACKED : 0;
        c.params = &p; c.params_abs = &pa; c.n_in = 2 + ri(0, 2);
        const int M = ri(1, 14), K = ri(0, 9) == 0 ? ri(257, 300) : ri(1, 40), N = ri(1, 41);
        int da[2] = {M, K}, db[2] = {K, N}, dr[2] = {M, N};
        tset(&c.in[0], 2, da); c.present[0] = 1; talloc_rand(&c.in[0]);
        tset(&c.in[1], 2, db); c.present[1] = 1; talloc_rand(&c.in[1]);
        if (packed) {
            const int strips = (N + EP_PACK_NR - 1) / EP_PACK_NR;
            int dp[3] = {strips, K, EP_PACK_NR};
            tens pb;
            tset(&pb, 3, dp);
            pb.t.data = gnew(pb.bytes);
            pack_b(pb.t.data, c.in[1].t.data, K, N);
            gfree(c.in[1].t.data);
            c.in[1] = pb;
            tset(&c.out, 2, dr);   /* the packed shape function takes N from the output */
        }
        if (c.n_in > 2) {
            c.present[2] = ri(0, 3) != 0;
            const int form = ri(0, 2);
            int d1[1] = {N}, d2[2] = {form == 1 ? 1 : M, N};
            if (form == 0) tset(&c.in[2], 1, d1); else tset(&c.in[2], 2, d2);
            if (c.present[2]) talloc_rand(&c.in[2]);
        }
        if (c.n_in > 3) { tset(&c.in[3], 2, dr); c.present[3] = 1; talloc_rand(&c.in[3]); }
        c.mode = ACCUM;
        c.k_terms = K;
        check_case(&c);
        free_case(&c);
    }
}

static void t_matmul(int iters) {
    for (int it = 0; it < iters; it++) {
        tcase c = {0};
        ep_matmul_params p = {0, 0};
        c.name = "matmul"; c.opcode = EP_OP_MATMUL; c.params = c.params_abs = &p; c.n_in = 2;
        const int M = ri(1, 9), K = ri(1, 33), N = ri(1, 35);
        const int ra = ri(2, 4), rb = ri(2, 4);
        int da[4], db[4];
        const int bat[2] = {ri(1, 3), ri(1, 2)};
        for (int i = 0; i < ra - 2; i++) da[i] = ri(0, 2) ? bat[i + (4 - ra) - (4 - ra)] : 1;
        for (int i = 0; i < rb - 2; i++) db[i] = 1;
        /* right-aligned batch dims: equal or 1 */
        for (int i = 0; i < rb - 2; i++) {
            const int ia = i - (rb - ra);
            db[i] = (ia >= 0 && da[ia] != 1 && ri(0, 1)) ? 1 : (ia >= 0 ? da[ia] : ri(1, 3));
            if (ia >= 0 && da[ia] == 1) db[i] = ri(1, 2);
        }
        da[ra - 2] = M; da[ra - 1] = K; db[rb - 2] = K; db[rb - 1] = N;
        tset(&c.in[0], ra, da); c.present[0] = 1; talloc_rand(&c.in[0]);
        tset(&c.in[1], rb, db); c.present[1] = 1; talloc_rand(&c.in[1]);
        c.mode = ACCUM;
        c.k_terms = K;
        check_case(&c);
        free_case(&c);
    }
}

/* W[M, C, KH, KW] (groups 1) -> [ceil(M/MR)][C*KH*KW][MR] */
static void pack_w(float *dst, const float *w, int M, int K) {
    const int panels = (M + EP_PACK_MR - 1) / EP_PACK_MR;
    for (int pn = 0; pn < panels; pn++)
        for (int k = 0; k < K; k++)
            for (int i = 0; i < EP_PACK_MR; i++) {
                const int m = pn * EP_PACK_MR + i;
                dst[((size_t)pn * K + k) * EP_PACK_MR + i] = m < M ? w[(size_t)m * K + k] : 0.0f;
            }
}

/* variant: 0, PACKED or DEPTHWISE; shape: 0 random, 1 pointwise, 2 depthwise 3x3/5x5 */
static void t_conv(int iters, int variant, int shape) {
    for (int it = 0; it < iters; it++) {
        tcase c = {0};
        ep_conv2d_params p, pa;
        memset(&p, 0, sizeof p);
        p.act = rand_act_accum(&p.act_alpha, &p.act_beta);
        const int N = ri(1, 2);
        int C = ri(1, 7), M = ri(1, 13), G = 1;
        const int dw = variant == EP_CONV2D_VARIANT_DEPTHWISE || shape == 2;
        for (int i = 0; i < 2; i++) {
            p.kernel[i] = shape == 1 ? 1 : ri(1, 5);
            p.stride[i] = shape == 1 ? 1 : ri(1, 3);
            p.dilation[i] = shape == 1 || ri(0, 3) ? 1 : 2;
            p.pads[i] = shape == 1 ? 0 : ri(0, 2);
            p.pads[i + 2] = shape == 1 ? 0 : ri(0, 2);
        }
        if (shape == 2) {
            p.kernel[0] = p.kernel[1] = ri(0, 1) ? 3 : 5;
            p.stride[0] = p.stride[1] = ri(1, 2);
            p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = p.kernel[0] / 2 - ri(0, 1);
        }
        if (dw) { C = ri(1, 6); M = C; G = C; }
        else if (variant == 0 && ri(0, 3) == 0) { G = ri(1, 3); C = G * ri(1, 3); M = G * ri(1, 4); }
        p.groups = G;
        pa = p;
        pa.act = EP_ACT_NONE;
        c.name = variant == EP_CONV2D_VARIANT_PACKED ? "conv2d_packed"
                 : variant == EP_CONV2D_VARIANT_DEPTHWISE ? "conv2d_dw" : shape == 1 ? "conv2d_1x1" : shape == 2 ? "conv2d_dw_v0" : "conv2d";
        c.opcode = EP_OP_CONV2D; c.variant = (uint8_t)variant; c.params = &p; c.params_abs = &pa;
        c.n_in = 2 + ri(0, 2);
        const int H = ri(1, 12), W = ri(1, 27);
        int dx[4] = {N, C, H, W}, dwt[4] = {M, C / G, p.kernel[0], p.kernel[1]};
        int oh = (H + p.pads[0] + p.pads[2] - ((p.kernel[0] - 1) * p.dilation[0] + 1));
        int ow = (W + p.pads[1] + p.pads[3] - ((p.kernel[1] - 1) * p.dilation[1] + 1));
        if (oh < 0 || ow < 0) { it--; continue; }
        oh = oh / p.stride[0] + 1;
        ow = ow / p.stride[1] + 1;
        int dy[4] = {N, M, oh, ow};
        tset(&c.in[0], 4, dx); c.present[0] = 1; talloc_rand(&c.in[0]);
        tset(&c.in[1], 4, dwt); c.present[1] = 1; talloc_rand(&c.in[1]);
        const int K = C / G * p.kernel[0] * p.kernel[1];
        if (variant == EP_CONV2D_VARIANT_PACKED) {
            int dp[3] = {(M + EP_PACK_MR - 1) / EP_PACK_MR, K, EP_PACK_MR};
            tens pw;
            tset(&pw, 3, dp);
            pw.t.data = gnew(pw.bytes);
            pack_w(pw.t.data, c.in[1].t.data, M, K);
            gfree(c.in[1].t.data);
            c.in[1] = pw;
        }
        tset(&c.out, 4, dy);
        if (c.n_in > 2) {
            int db[1] = {M};
            tset(&c.in[2], 1, db);
            c.present[2] = ri(0, 3) != 0;
            if (c.present[2]) talloc_rand(&c.in[2]);
        }
        if (c.n_in > 3) { tset(&c.in[3], 4, dy); c.present[3] = 1; talloc_rand(&c.in[3]); }
        c.mode = ACCUM;
        c.k_terms = K;
        check_case(&c);
        free_case(&c);
    }
}

/* ---- SOFTMAX, LAYERNORM, LSTM / GRU (several outputs, own tolerances), MATMUL at the edges ----
 * The reference, NEON, feature-masked and 3-thread runs of the table entry on the same inputs; the
 * masked run must equal the reference, the threaded one the single-thread NEON run, bit for bit.
 *   SOFTMAX: |neon - ref| <= 2e-6 |ref| + 1e-37 (neon_exp4 vs expf: the x86 bound; the floor covers
 *     outputs subnormal in one and clamped to exp(-86) in the other); LOGSOFTMAX: 2e-6 (|ref| + 1);
 *   LAYERNORM: 1e-6 |ref| + 1e-7 on Y, Mean and InvStdDev (only the order of the double sums differs);
 *   LSTM / GRU: 1e-5 max|ref| + 4e-7 (I + H) sqrt(T) + 1e-6 (float FMA dots vs double, vector gates),
 *     with the minimum scratch (per-step projection) and with room for 1..T projected steps. */
enum { M_SOFTMAX = 2, M_LOGSOFTMAX = 3, M_LN = 4, M_ABS = 5 };

static int multi_ok(int mode, float g, float w, double tol) {
    if (isnan(g) || isnan(w)) return isnan(g) && isnan(w);
    if (g == w) return 1;
    const double d = fabs((double)g - (double)w), aw = fabs((double)w);
    switch (mode) {
    case M_SOFTMAX: return d <= 2e-6 * aw + 1e-37;
    case M_LOGSOFTMAX: return d <= 2e-6 * (aw + 1.0);
    case M_LN: return d <= 1e-6 * aw + 1e-7;
    default: return d <= tol;
    }
}

/* ins[0..n_in) (NULL: absent); n_out outputs, shaped by the shape function. mode M_ABS: |neon - ref| <=
 * 1e-5 max|ref| + tol_k + 1e-6 over all outputs. scratch_extra: bytes added to the minimum scratch. */
static void check_multi(const char *name, uint16_t opcode, const void *params, ep_tensor **ins, int n_in, int n_out,
                        int mode, double tol_scale_k, uint64_t scratch_extra) {
    ep_tensor o[3];
    ep_tensor *outs[3] = {&o[0], &o[1], &o[2]};
    memset(o, 0, sizeof o);
    for (int i = 0; i < 3; i++) o[i].dtype = EP_DTYPE_F32;   /* shapes: from the shape function */
    ep_op sop = {params, (ep_tensor *const *)ins, (ep_tensor *const *)outs, NULL, 0, (uint16_t)n_in, (uint16_t)n_out,
                 opcode, 0, 0, NULL};
    ep_shape shp[3];
    uint64_t scratch = 0;
    g_cases++;
    const int src = ep_op_info_get(opcode)->shape(&sop, shp, &scratch);
    if (src != EP_OK) {   /* these generators make valid ops only */
        fprintf(stderr, "FAIL %s: shape function refused the op (%d)\n", name, src);
        g_fail++;
        return;
    }
    size_t bytes[3];
    for (int i = 0; i < n_out; i++) {
        tens t;
        int dims[EP_MAX_RANK];
        for (int k = 0; k < shp[i].rank; k++) dims[k] = shp[i].dims[k];
        tset(&t, shp[i].rank, dims);
        o[i] = t.t;
        bytes[i] = t.bytes;
    }
    const uint64_t sbytes = scratch + scratch_extra;
    ep_kernel_fn fn[4] = {t_ref.fn[opcode][0], t_neon.fn[opcode][0], t_masked.fn[opcode][0], t_neon.fn[opcode][0]};
    if (!fn[0] || !fn[1] || fn[2] != fn[0] || fn[1] == fn[0]) {
        fprintf(stderr, "FAIL %s: table entry missing, masked table not ref, or no NEON kernel\n", name);
        g_fail++;
        return;
    }
    float *y[4][3];
    void *sc = gnew(sbytes);
    int rc[4];
    void *snap[8] = {0};   /* the inputs, to check no kernel writes them */
    size_t in_bytes[8] = {0};
    for (int i = 0; i < n_in && i < 8; i++)
        if (ins[i]) {
            in_bytes[i] = (size_t)ep_numel(ins[i]) * ep_dtype_size(ins[i]->dtype);
            snap[i] = malloc(in_bytes[i] + 1);
            memcpy(snap[i], ins[i]->data, in_bytes[i]);
        }
    for (int r = 0; r < 4; r++) {
        ep_tensor yt[3];
        ep_tensor *yo[3] = {&yt[0], &yt[1], &yt[2]};
        for (int i = 0; i < n_out; i++) {
            y[r][i] = gnew(bytes[i]);
            for (size_t e = 0; e < bytes[i] / 4; e++) y[r][i][e] = NAN;
            yt[i] = o[i];
            yt[i].data = y[r][i];
        }
        ep_op op = {params, (ep_tensor *const *)ins, (ep_tensor *const *)yo, sc, sbytes, (uint16_t)n_in,
                    (uint16_t)n_out, opcode, 0, 0, r == 3 ? &g_pool : NULL};
        rc[r] = fn[r](&op);
    }
    if (rc[0] || rc[1] || rc[2] || rc[3]) {
        fprintf(stderr, "FAIL %s: status %d %d %d %d\n", name, rc[0], rc[1], rc[2], rc[3]);
        g_fail++;
    }
    if (!gok(sc, sbytes)) {
        fprintf(stderr, "FAIL %s: scratch guard bytes overwritten\n", name);
        g_fail++;
    }
    for (int i = 0; i < n_in && i < 8; i++) {
        if (snap[i] && memcmp(snap[i], ins[i]->data, in_bytes[i])) {
            fprintf(stderr, "FAIL %s: input %d modified\n", name, i);
            g_fail++;
        }
        free(snap[i]);
    }
    double mag = 0;
    for (int i = 0; i < n_out; i++)
        for (size_t e = 0; e < bytes[i] / 4; e++)
            if (!isnan(y[0][i][e])) mag = fmax(mag, fabs((double)y[0][i][e]));
    const double tol = 1e-5 * mag + tol_scale_k + 1e-6;
    for (int i = 0; i < n_out; i++) {
        const size_t n = bytes[i] / 4;
        for (int r = 0; r < 4; r++)
            if (!gok(y[r][i], bytes[i])) {
                fprintf(stderr, "FAIL %s: guard bytes of output %d overwritten (run %d)\n", name, i, r);
                g_fail++;
            }
        if (memcmp(y[2][i], y[0][i], bytes[i])) {
            fprintf(stderr, "FAIL %s: masked table differs from ref (output %d)\n", name, i);
            g_fail++;
        }
        if (memcmp(y[3][i], y[1][i], bytes[i])) {
            fprintf(stderr, "FAIL %s: %u threads differ from one (output %d)\n", name, g_pool.n_threads, i);
            g_fail++;
        }
        for (size_t e = 0; e < n; e++)
            if (!multi_ok(mode, y[1][i][e], y[0][i][e], tol)) {
                if (g_fail < 40)
                    fprintf(stderr, "FAIL %s: output %d at %zu: neon %.9g ref %.9g (tol %.3g)\n", name, i, e, y[1][i][e],
                            y[0][i][e], tol);
                g_fail++;
                break;
            }
        for (int r = 0; r < 4; r++) gfree(y[r][i]);
    }
    gfree(sc);
}

static void t_softmax(int iters) {
    for (int it = 0; it < iters; it++) {
        ep_softmax_params p = {0, ri(0, 1)};
        const int r = ri(1, 4);
        int d[4];
        for (int i = 0; i < r; i++) d[i] = ri(1, i == r - 1 ? (it % 3 == 0 ? 150 : 37) : 7);
        if (it % 23 == 0) d[ri(0, r - 1)] = 0;
        p.axis = it % 2 ? r - 1 : ri(0, r - 1);
        tens x;
        tset(&x, r, d);
        talloc_rand(&x);
        float *f = x.t.data;
        const size_t n = x.bytes / 4;
        const float scale = it % 5 == 0 ? 60.0f : 4.0f;
        for (size_t i = 0; i < n; i++) f[i] *= scale;
        if (n && it % 7 == 0) f[rnd() % n] = NAN;
        if (n && it % 11 == 0) f[rnd() % n] = it % 2 ? INFINITY : -INFINITY;
        ep_tensor *ins[1] = {&x.t};
        char name[96];
        snprintf(name, sizeof name, "%s axis %d rank %d [%d..%d]", p.log ? "logsoftmax" : "softmax", p.axis, r, d[0], d[r - 1]);
        check_multi(name, EP_OP_SOFTMAX, &p, ins, 1, 1, p.log ? M_LOGSOFTMAX : M_SOFTMAX, 0, 0);
        gfree(x.t.data);
    }
}

static void t_layernorm(int iters) {
    for (int it = 0; it < iters; it++) {
        ep_layernorm_params p = {0, it % 3 == 0 ? 0.0f : 1e-5f};
        const int r = ri(1, 4);
        int d[4];
        for (int i = 0; i < r; i++) d[i] = ri(1, i == r - 1 ? (it % 3 == 0 ? 150 : 37) : 6);
        if (it % 29 == 0) d[0] = 0;
        p.axis = ri(0, r - 1);
        int inner = 1;
        for (int i = p.axis; i < r; i++) inner *= d[i];
        tens x, s, b;
        tset(&x, r, d);
        talloc_rand(&x);
        if (it % 4 == 1) {   /* large mean, small spread */
            float *f = x.t.data;
            for (size_t i = 0; i < x.bytes / 4; i++) f[i] = 1000.0f + 0.01f * f[i];
        }
        int id[1] = {inner};
        tset(&s, 1, id);
        talloc_rand(&s);
        tset(&b, 1, id);
        talloc_rand(&b);
        const int has_b = ri(0, 2) != 0, n_out = ri(1, 3);
        ep_tensor *ins[3] = {&x.t, &s.t, has_b ? &b.t : NULL};
        char name[96];
        snprintf(name, sizeof name, "layernorm axis %d rank %d [%d..%d] outs %d", p.axis, r, d[0], d[r - 1], n_out);
        check_multi(name, EP_OP_LAYERNORM, &p, ins, 3, n_out, M_LN, 0, 0);
        gfree(x.t.data), gfree(s.t.data), gfree(b.t.data);
    }
}

static void t_rnn(int iters, int lstm) {
    const int G = lstm ? 4 : 3;
    for (int it = 0; it < iters; it++) {
        ep_rnn_params p;
        memset(&p, 0, sizeof p);
        p.hidden_size = ri(1, it % 4 == 0 ? 40 : 13);
        p.direction = ri(0, 2);
        p.layout = ri(0, 1);
        p.linear_before_reset = lstm ? 0 : ri(0, 1);
        p.clip = it % 5 == 0 ? 0.8f : 0.0f;
        const int T = ri(1, 9), B = ri(1, 3), I = ri(1, it % 3 == 0 ? 40 : 11), H = p.hidden_size;
        const int D = p.direction == EP_RNN_BIDIRECTIONAL ? 2 : 1;
        int xd[3] = {p.layout ? B : T, p.layout ? T : B, I}, wd[3] = {D, G * H, I}, rd[3] = {D, G * H, H};
        int bd[2] = {D, 2 * G * H}, sd[3] = {p.layout ? B : D, p.layout ? D : B, H}, pd[2] = {D, 3 * H}, ld[1] = {B};
        tens x, w, rr, b, h0, c0, pp, sl;
        tset(&x, 3, xd), tset(&w, 3, wd), tset(&rr, 3, rd), tset(&b, 2, bd), tset(&h0, 3, sd), tset(&c0, 3, sd);
        tset(&pp, 2, pd), tset(&sl, 1, ld);
        talloc_rand(&x), talloc_rand(&w), talloc_rand(&rr), talloc_rand(&b), talloc_rand(&h0), talloc_rand(&c0);
        talloc_rand(&pp);
        const float ws = 1.0f / sqrtf((float)H);
        tens *scaled[4] = {&w, &rr, &b, &pp};
        for (int k = 0; k < 4; k++)
            for (size_t i = 0; i < scaled[k]->bytes / 4; i++) ((float *)scaled[k]->t.data)[i] *= ws;
        sl.t.dtype = EP_DTYPE_I32;
        sl.t.data = gnew(sl.bytes);
        for (int i = 0; i < B; i++) ((int32_t *)sl.t.data)[i] = ri(0, 2) ? T : ri(0, T);
        const int has_sl = ri(0, 1), has_h0 = ri(0, 1), has_c0 = lstm && ri(0, 1), has_p = lstm && ri(0, 1);
        ep_tensor *ins[8] = {&x.t, &w.t, &rr.t, &b.t, has_sl ? &sl.t : NULL, has_h0 ? &h0.t : NULL,
                             has_c0 ? &c0.t : NULL, has_p ? &pp.t : NULL};
        const uint64_t extra = it % 3 == 0 ? 0 : (uint64_t)G * H * 4 * (uint64_t)ri(1, T) + (uint64_t)ri(0, 3) * 4;
        char name[128];
        snprintf(name, sizeof name, "%s T%d B%d I%d H%d dir%d layout%d lbr%d clip%g extra%llu", lstm ? "lstm" : "gru", T, B,
                 I, H, p.direction, p.layout, p.linear_before_reset, p.clip, (unsigned long long)extra);
        check_multi(name, lstm ? EP_OP_LSTM : EP_OP_GRU, &p, ins, lstm ? 8 : 6, lstm ? 3 : 2, M_ABS,
                    4e-7 * (I + H) * sqrt((double)T), extra);
        gfree(x.t.data), gfree(w.t.data), gfree(rr.t.data), gfree(b.t.data), gfree(h0.t.data), gfree(c0.t.data);
        gfree(pp.t.data), gfree(sl.t.data);
    }
}

/* MATMUL at the edges: extents 0 and 1, K past one 256 block, 16-column strips and their tails. */
static void t_matmul_edges(int iters) {
    for (int it = 0; it < iters; it++) {
        tcase c = {0};
        ep_matmul_params p = {0, 0};
        c.name = "matmul_edges"; c.opcode = EP_OP_MATMUL; c.params = c.params_abs = &p; c.n_in = 2;
        const int M = it % 5 == 0 ? ri(0, 1) : ri(1, 20), K = it % 7 == 0 ? ri(0, 1) : ri(1, it % 3 ? 40 : 300);
        const int N = it % 6 == 0 ? ri(0, 1) : ri(1, 70);
        const int ra = ri(2, 4), rb = ri(2, 4), ro = ra > rb ? ra : rb;
        int da[4], db[4];
        for (int i = 0; i < ro - 2; i++) {
            const int e = it % 11 == 0 && i == 0 ? 0 : ri(1, 3), f = ri(0, 2);
            const int ia = i - (ro - ra), ib = i - (ro - rb);
            if (ia >= 0) da[ia] = f == 1 ? 1 : e;
            if (ib >= 0) db[ib] = f == 2 ? 1 : e;
        }
        da[ra - 2] = M; da[ra - 1] = K; db[rb - 2] = K; db[rb - 1] = N;
        tset(&c.in[0], ra, da); c.present[0] = 1; talloc_rand(&c.in[0]);
        tset(&c.in[1], rb, db); c.present[1] = 1; talloc_rand(&c.in[1]);
        c.mode = ACCUM;
        c.k_terms = K;
        check_case(&c);
        free_case(&c);
    }
}

/* CONV_TRANSPOSE2D variant PACKED (polyphase): 1-D HiFi-GAN shapes (kernel 2s, pad s/2), other 1-D and 2-D
 * shapes with dilation and output_padding; weights packed here from plan_format.h's definition. */
static int ct_taps_of(int k, int s, int d) { return d >= s ? k : (k - 1) * d / s + 1; }

static void pack_ct(float *dst, const float *w, int C, int M, int KH, int KW, const ep_conv_transpose2d_params *p) {
    const int sh = p->stride[0], sw = p->stride[1], dh = p->dilation[0], dw = p->dilation[1];
    const int TH = ct_taps_of(KH, sh, dh), TW = ct_taps_of(KW, sw, dw);
    const size_t K = (size_t)C * TH * TW, R = (size_t)M * sh * sw, strips = (R + EP_PACK_NR - 1) / EP_PACK_NR;
    memset(dst, 0, sizeof(float) * strips * K * EP_PACK_NR);
    for (int c = 0; c < C; c++)
        for (int m = 0; m < M; m++)
            for (int kh = 0; kh < KH; kh++)
                for (int kw = 0; kw < KW; kw++) {
                    const int jh = dh >= sh ? kh : kh * dh / sh, jw = dw >= sw ? kw : kw * dw / sw;
                    const size_t k = ((size_t)c * TH + jh) * TW + jw;
                    const size_t r = ((size_t)m * sh + kh * dh % sh) * sw + kw * dw % sw;
                    dst[((r / EP_PACK_NR) * K + k) * EP_PACK_NR + r % EP_PACK_NR] =
                        w[(((size_t)c * M + m) * KH + kh) * KW + kw];
                }
}

static void t_conv_transpose(int iters) {
    for (int it = 0; it < iters; it++) {
        tcase c = {0};
        ep_conv_transpose2d_params p, pa;
        memset(&p, 0, sizeof p);
        p.act = rand_act_accum(&p.act_alpha, &p.act_beta);
        const int kind = it % 3, N = ri(1, 2), C = ri(1, 9), M = ri(1, 13);
        int H, W;
        if (kind == 0) {
            const int s = 2 << ri(0, 2);
            p.kernel[0] = 1, p.kernel[1] = 2 * s, p.stride[0] = 1, p.stride[1] = s;
            p.dilation[0] = p.dilation[1] = 1;
            p.pads[1] = p.pads[3] = s / 2;
            H = 1, W = ri(1, 30);
        } else {
            for (int i = 0; i < 2; i++) {
                p.kernel[i] = ri(1, 5);
                p.stride[i] = ri(1, 4);
                p.dilation[i] = ri(0, 2) ? 1 : ri(2, 3);
                const int lim = p.stride[i] > p.dilation[i] ? p.stride[i] : p.dilation[i];
                p.output_padding[i] = ri(0, 2) ? 0 : ri(0, lim - 1);
                p.pads[i] = ri(0, 2), p.pads[i + 2] = ri(0, 2);
            }
            if (kind == 1) p.kernel[0] = p.stride[0] = p.dilation[0] = 1, p.output_padding[0] = p.pads[0] = p.pads[2] = 0;
            H = kind == 1 ? 1 : ri(1, 9), W = ri(1, kind == 1 ? 40 : 13);
        }
        p.groups = 1;
        const int KH = p.kernel[0], KW = p.kernel[1];
        const int OH = (H - 1) * p.stride[0] - p.pads[0] - p.pads[2] + (KH - 1) * p.dilation[0] + 1 + p.output_padding[0];
        const int OW = (W - 1) * p.stride[1] - p.pads[1] - p.pads[3] + (KW - 1) * p.dilation[1] + 1 + p.output_padding[1];
        if (OH < 1 || OW < 1) { it--; continue; }
        pa = p;
        pa.act = EP_ACT_NONE;
        c.name = "conv_transpose2d_packed";
        c.opcode = EP_OP_CONV_TRANSPOSE2D; c.variant = EP_CONV_TRANSPOSE2D_VARIANT_PACKED;
        c.params = &p; c.params_abs = &pa;
        c.n_in = 3;
        const int TH = ct_taps_of(KH, p.stride[0], p.dilation[0]), TW = ct_taps_of(KW, p.stride[1], p.dilation[1]);
        const int K = C * TH * TW, strips = (M * p.stride[0] * p.stride[1] + EP_PACK_NR - 1) / EP_PACK_NR;
        int dx[4] = {N, C, H, W}, dwp[3] = {strips, K, EP_PACK_NR}, db[1] = {M}, dy[4] = {N, M, OH, OW};
        tset(&c.in[0], 4, dx); c.present[0] = 1; talloc_rand(&c.in[0]);
        float *w = malloc(sizeof(float) * (size_t)C * M * KH * KW);
        for (size_t i = 0; i < (size_t)C * M * KH * KW; i++) w[i] = rf();
        tset(&c.in[1], 3, dwp); c.present[1] = 1;
        c.in[1].t.data = gnew(c.in[1].bytes);
        pack_ct(c.in[1].t.data, w, C, M, KH, KW, &p);
        free(w);
        tset(&c.in[2], 1, db);
        c.present[2] = ri(0, 3) != 0;
        if (c.present[2]) talloc_rand(&c.in[2]);
        tset(&c.out, 4, dy);
        c.mode = ACCUM;
        c.k_terms = (double)C * KH * KW;
        check_case(&c);
        free_case(&c);
    }
}

static void check_tables(void) {
    const uint64_t f = ep_cpu_features();
    printf("ep_cpu_features() = 0x%llx (NEON %d, DOTPROD %d, FP16 %d, I8MM %d), QEMU_CPU=%s\n",
           (unsigned long long)f, !!(f & EP_CPU_NEON), !!(f & EP_CPU_DOTPROD), !!(f & EP_CPU_FP16),
           !!(f & EP_CPU_I8MM), getenv("QEMU_CPU") ? getenv("QEMU_CPU") : "(unset)");
    if (!(f & EP_CPU_NEON)) { fprintf(stderr, "FAIL: aarch64 CPU without NEON reported\n"); g_fail++; }
    const char *qc = getenv("QEMU_CPU");
    if (qc && !strcmp(qc, "cortex-a72") && (f & (EP_CPU_DOTPROD | EP_CPU_FP16))) {
        fprintf(stderr, "FAIL: cortex-a72 reports dotprod/fp16\n");
        g_fail++;
    }
    if (qc && !strcmp(qc, "max") && (f & (EP_CPU_DOTPROD | EP_CPU_FP16)) != (EP_CPU_DOTPROD | EP_CPU_FP16)) {
        fprintf(stderr, "FAIL: qemu max lacks dotprod/fp16\n");
        g_fail++;
    }
    memset(&t_ref, 0, sizeof t_ref);
    ep_kernels_init_ref(&t_ref);
    ep_kernels_init(&t_neon, f);                 /* what ep_session_open builds on this CPU */
    ep_kernels_init(&t_masked, f & ~EP_CPU_NEON); /* cpu_features_mask without NEON */
    int overridden = 0;
    for (int o = 0; o < EP_OP_COUNT; o++)
        for (int v = 0; v < EP_MAX_VARIANTS; v++) {
            if (t_masked.fn[o][v] != t_ref.fn[o][v]) {
                fprintf(stderr, "FAIL: masked table op %d variant %d is not ref\n", o, v);
                g_fail++;
            }
            if (!!t_neon.fn[o][v] != !!t_ref.fn[o][v]) {
                fprintf(stderr, "FAIL: neon table op %d variant %d presence differs from ref\n", o, v);
                g_fail++;
            }
            overridden += t_neon.fn[o][v] != t_ref.fn[o][v];
        }
    printf("NEON overrides %d table entries\n", overridden);
    if (overridden < 11) { fprintf(stderr, "FAIL: expected >= 11 NEON entries\n"); g_fail++; }
}

int main(int argc, char **argv) {
    if (argc > 1) g_rng = strtoull(argv[1], NULL, 0) | 1;
    const int s = argc > 2 ? atoi(argv[2]) : 1;   /* iteration scale */
    check_tables();
    printf("threads: %u (every NEON kernel is checked again on them)\n", ep_pool_start(&g_pool, 3));
    g_pool.min_work = 0;
    t_unary(60 * s);
    t_binary(120 * s);
    t_binary_int(60 * s);
    t_pool(60 * s, EP_OP_MAXPOOL);
    t_pool(60 * s, EP_OP_AVGPOOL);
    t_gap(20 * s);
    t_gemm(40 * s, 0);
    t_gemm(40 * s, 1);
    t_matmul(30 * s);
    t_matmul_edges(40 * s);
    t_softmax(60 * s);
    t_layernorm(50 * s);
    t_rnn(30 * s, 1);
    t_rnn(30 * s, 0);
    t_conv(50 * s, 0, 0);
    t_conv(20 * s, 0, 1);
    t_conv(40 * s, 0, 2);
    t_conv(40 * s, EP_CONV2D_VARIANT_PACKED, 0);
    t_conv(40 * s, EP_CONV2D_VARIANT_DEPTHWISE, 0);
    t_conv(20 * s, EP_CONV2D_VARIANT_DEPTHWISE, 2);
    t_conv_transpose(60 * s);
    ep_pool_stop(&g_pool);
    printf("test_neon_kernels: %d cases, %d skipped (rejected by a shape function), %d failures\n", g_cases,
           g_skipped, g_fail);
    return g_fail ? 1 : 0;
}
