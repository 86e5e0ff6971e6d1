/* Kernel check (dav1d checkasm style) of the packed / depthwise / Winograd variants and their x86 AVX2+FMA kernels,
 * and of the AVX2 UNARY / BINARY kernels (see the section below for their tolerance).
 *
 * For seeded random shapes (odd sizes, tails of every blocking: MR 6, NR 16, KC 256, 8-wide vectors),
 * every variant kernel runs on inputs packed here the way the compiler packs them (select.py), with guard
 * cells around the output and the scratch; its result must match
 *   (a) the variant-0 reference kernel on the plain layout, and
 *   (b) the reference kernel of the same variant (the portable fallback),
 * within 1e-5 max|expected| + 2e-7 K + 1e-6 (K products of magnitude <= 1 per output; the variants sum
 * them in another order and with FMA).
 * The variant's shape function gives the minimum scratch; the kernels run with exactly that much and
 * with a larger one. Shape functions must also reject packed weights of a wrong shape.
 * Winograd F(4x4,3x3) is checked with a 10x looser tolerance (its transforms amplify rounding).
 * The x86 kernels run only when the CPU has AVX2 and FMA (the reference variants always run).
 * Threads: every variant run is repeated on a 3-thread pool that splits even the smallest op
 * (src/pool.h, min_work 0); its output must equal the single-thread output bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ep_ops.h"
#include "pool.h"
#include "x86/x86.h"

static ep_pool g_pool;   /* started in main */

static int n_pass, n_fail;
#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (cond) {                                                                       \
            n_pass++;                                                                     \
        } else {                                                                          \
            n_fail++;                                                                     \
            printf("FAIL %s:%d: ", __FILE__, __LINE__), printf(__VA_ARGS__), printf("\n"); \
        }                                                                                 \
    } while (0)

static uint32_t rng_state = 0x9E3779B9u;
static uint32_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}
static int rint_in(int lo, int hi) { return lo + (int)(rnd() % (uint32_t)(hi - lo + 1)); }
static float rfloat(void) { return (float)(rnd() >> 8) / (float)(1u << 24) * 2.0f - 1.0f; }

#define GUARD 64
#define SENTINEL -7777.25f
#define SCRATCH_SENTINEL 0xA5

/* a float buffer of n elements with GUARD sentinel cells on each side */
typedef struct gbuf {
    float *base;
    float *p;
    int64_t n;
} gbuf;
static gbuf galloc(int64_t n) {
    gbuf g = {malloc(sizeof(float) * (size_t)(n + 2 * GUARD)), NULL, n};
    for (int64_t i = 0; i < n + 2 * GUARD; i++) g.base[i] = SENTINEL;
    g.p = g.base + GUARD;
    return g;
}
static int guards_ok(const gbuf *g) {
    for (int64_t i = 0; i < GUARD; i++)
        if (g->base[i] != SENTINEL || g->p[g->n + i] != SENTINEL) return 0;
    return 1;
}

static ep_tensor mk(void *data, int rank, const int32_t *dims) {
    ep_tensor t;
    memset(&t, 0, sizeof(t));
    t.data = data;
    t.rank = (uint8_t)rank;
    t.dtype = EP_DTYPE_F32;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) t.dims[i] = dims[i], n *= dims[i];
    t.nbytes = (uint64_t)n * 4;
    return t;
}

static double max_abs(const float *x, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
    return m;
}
static double tol_scale = 1.0;   /* Winograd: transforms with constants up to 8 grow rounding error */
static int close_enough(const float *got, const float *want, int64_t n, int64_t k, double *worst) {
    const double tol = tol_scale * (1e-5 * max_abs(want, n) + 2e-7 * (double)k + 1e-6);   /* k products of |.| <= 1 each */
    *worst = 0;
    for (int64_t i = 0; i < n; i++) {
        const double d = fabs((double)got[i] - (double)want[i]);
        if (!(d <= tol)) {   /* NaN fails too */
            *worst = d;
            return 0;
        }
        *worst = fmax(*worst, d);
    }
    return 1;
}

static int random_act(float *alpha, float *beta) {
    static const int acts[] = {EP_ACT_NONE, EP_ACT_RELU, EP_ACT_CLIP, EP_ACT_LEAKY_RELU, EP_ACT_SIGMOID,
                               EP_ACT_HARD_SWISH, EP_ACT_SILU, EP_ACT_TANH};
    const int a = acts[rnd() % (sizeof(acts) / sizeof(acts[0]))];
    *alpha = a == EP_ACT_CLIP ? -0.5f : 0.1f;
    *beta = a == EP_ACT_CLIP ? 0.75f : 0.0f;
    return a;
}

/* Runs one variant kernel with scratch (min or bigger), checks guards of output and scratch. */
typedef int (*kfn)(const ep_op *);
static void run_variant(const char *what, kfn fn, ep_op *op, uint64_t scratch_min, uint64_t extra, const float *want,
                        int64_t ny, int64_t k) {
    const uint64_t ss = scratch_min + extra;
    uint8_t *sbuf = malloc((size_t)ss + 2 * 256 + 64);
    memset(sbuf, SCRATCH_SENTINEL, (size_t)ss + 2 * 256 + 64);
    uint8_t *scratch = sbuf + 256;
    gbuf y = galloc(ny);
    ep_tensor yt = *op->out[0];
    yt.data = y.p;
    ep_tensor *outs[1] = {&yt};
    ep_op o = *op;
    o.out = outs;
    o.scratch = ss ? scratch : NULL;
    o.scratch_size = ss;
    int rc = fn(&o);
    double worst = 0;
    CHECK(rc == EP_OK, "%s: rc %d", what, rc);
    CHECK(guards_ok(&y), "%s: output guard cells overwritten", what);
    int sg = 1;
    for (int i = 0; i < 256; i++) sg &= sbuf[i] == SCRATCH_SENTINEL && scratch[ss + (uint64_t)i] == SCRATCH_SENTINEL;
    CHECK(sg, "%s: scratch guard bytes overwritten (scratch %llu)", what, (unsigned long long)ss);
    CHECK(close_enough(y.p, want, ny, k, &worst), "%s: differs from the reference by %g", what, worst);
    if (g_pool.n_threads > 1) {   /* the same kernel on threads: the same bits */
        gbuf y2 = galloc(ny);
        memset(sbuf, SCRATCH_SENTINEL, (size_t)ss + 2 * 256 + 64);
        yt.data = y2.p;
        o.pool = &g_pool;
        rc = fn(&o);
        sg = 1;
        for (int i = 0; i < 256; i++) sg &= sbuf[i] == SCRATCH_SENTINEL && scratch[ss + (uint64_t)i] == SCRATCH_SENTINEL;
        CHECK(rc == EP_OK && guards_ok(&y2) && sg, "%s: threads: rc %d or guard cells overwritten", what, rc);
        CHECK(memcmp(y.p, y2.p, (size_t)ny * 4) == 0, "%s: %u threads differ from one", what, g_pool.n_threads);
        free(y2.base);
    }
    free(y.base);
    free(sbuf);
}

/* ---------------- CONV2D ---------------- */

static void pack_conv(float *dst, const float *w, int M, int K) {   /* [ceil(M/MR)][K][MR] */
    const int panels = (M + EP_PACK_MR - 1) / EP_PACK_MR;
    for (int p = 0; p < panels; p++)
        for (int k = 0; k < K; k++)
            for (int i = 0; i < EP_PACK_MR; i++) {
                const int m = p * EP_PACK_MR + i;
                dst[((int64_t)p * K + k) * EP_PACK_MR + i] = m < M ? w[(int64_t)m * K + k] : 0.0f;
            }
}

static void conv_case(int iter, int have_x86, int depthwise) {
    ep_conv2d_params p;
    memset(&p, 0, sizeof(p));
    const int N = rint_in(1, 2), C = depthwise ? rint_in(1, 19) : rint_in(1, iter % 7 == 0 ? 300 : 24);
    const int M = depthwise ? C : rint_in(1, iter % 5 == 0 ? 40 : 20);
    p.kernel[0] = rint_in(1, depthwise ? 5 : 4);
    p.kernel[1] = iter % 3 == 0 ? p.kernel[0] : rint_in(1, 4);
    p.stride[0] = rint_in(1, 3), p.stride[1] = rint_in(1, 3);
    p.dilation[0] = rint_in(1, 2), p.dilation[1] = rint_in(1, 2);
    if (iter % 4 == 0) p.stride[0] = p.stride[1] = p.dilation[0] = p.dilation[1] = 1;
    for (int i = 0; i < 4; i++) p.pads[i] = iter % 4 == 1 ? 0 : rint_in(0, 2);
    p.groups = depthwise ? C : 1;
    p.act = random_act(&p.act_alpha, &p.act_beta);
    const int H = rint_in(1, 23), W = rint_in(1, iter % 6 == 0 ? 70 : 23);
    const int KH = p.kernel[0], KW = p.kernel[1];
    const int OH = (H + p.pads[0] + p.pads[2] - ((KH - 1) * p.dilation[0] + 1)) / p.stride[0] + 1;
    const int OW = (W + p.pads[1] + p.pads[3] - ((KW - 1) * p.dilation[1] + 1)) / p.stride[1] + 1;
    if (H + p.pads[0] + p.pads[2] < (KH - 1) * p.dilation[0] + 1 || W + p.pads[1] + p.pads[3] < (KW - 1) * p.dilation[1] + 1)
        return;   /* no output */
    const int CG = C / p.groups, K = CG * KH * KW;
    const int has_b = rnd() & 1, has_r = (rnd() & 3) == 0;
    const int64_t nx = (int64_t)N * C * H * W, nw = (int64_t)M * K, ny = (int64_t)N * M * OH * OW;
    float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw);
    float *b = malloc(sizeof(float) * (size_t)M), *r = malloc(sizeof(float) * (size_t)ny);
    for (int64_t i = 0; i < nx; i++) x[i] = rfloat();
    for (int64_t i = 0; i < nw; i++) w[i] = rfloat();
    for (int i = 0; i < M; i++) b[i] = rfloat();
    for (int64_t i = 0; i < ny; i++) r[i] = rfloat();

    ep_tensor xt = mk(x, 4, (int32_t[]){N, C, H, W}), wt = mk(w, 4, (int32_t[]){M, CG, KH, KW});
    ep_tensor bt = mk(b, 1, (int32_t[]){M}), rt = mk(r, 4, (int32_t[]){N, M, OH, OW});
    ep_tensor yt = mk(NULL, 4, (int32_t[]){N, M, OH, OW});
    ep_tensor *ins[4] = {&xt, &wt, has_b ? &bt : NULL, has_r ? &rt : NULL};
    ep_tensor *outs[1] = {&yt};
    ep_op op = {.params = &p, .in = ins, .out = outs, .n_in = 4, .n_out = 1, .opcode = EP_OP_CONV2D};

    /* expected: variant 0 reference on the plain layout */
    gbuf want = galloc(ny);
    yt.data = want.p;
    ep_shape sh;
    uint64_t scratch = 0;
    CHECK(ep_shape_conv2d(&op, &sh, &scratch) == EP_OK, "conv variant 0 shape");
    CHECK(ep_ref_conv2d_f32(&op) == EP_OK && guards_ok(&want), "conv variant 0 ref");

    char what[200];
    snprintf(what, sizeof(what), "conv N%d C%d M%d %dx%d k%dx%d s%d,%d d%d,%d p%d,%d,%d,%d g%d act%d b%d r%d",
             N, C, M, H, W, KH, KW, p.stride[0], p.stride[1], p.dilation[0], p.dilation[1], p.pads[0], p.pads[1],
             p.pads[2], p.pads[3], p.groups, p.act, has_b, has_r);
    if (depthwise) {
        op.variant = EP_CONV2D_VARIANT_DEPTHWISE;
        CHECK(ep_shape_conv2d(&op, &sh, &scratch) == EP_OK, "%s: dw shape", what);
        run_variant(what, ep_ref_conv2d_f32, &op, scratch, 0, want.p, ny, K);
        if (have_x86) {
            run_variant(what, ep_x86_conv2d_dw_f32, &op, scratch, 0, want.p, ny, K);
            run_variant(what, ep_x86_conv2d_dw_f32, &op, scratch, 4096, want.p, ny, K);
            run_variant(what, ep_x86_conv2d_dw_f32, &op, scratch, 2 * scratch, want.p, ny, K);   /* 3 slots */
        }
    } else {
        const int panels = (M + EP_PACK_MR - 1) / EP_PACK_MR;
        float *wp = malloc(sizeof(float) * (size_t)panels * K * EP_PACK_MR);
        pack_conv(wp, w, M, K);
        ep_tensor wpt = mk(wp, 3, (int32_t[]){panels, K, EP_PACK_MR});
        ins[1] = &wpt;
        op.variant = EP_CONV2D_VARIANT_PACKED;
        CHECK(ep_shape_conv2d(&op, &sh, &scratch) == EP_OK, "%s: packed shape", what);
        CHECK(scratch == (uint64_t)K * EP_PACK_NR * 4, "%s: packed scratch %llu", what, (unsigned long long)scratch);
        CHECK(sh.dims[1] == M && sh.dims[2] == OH && sh.dims[3] == OW, "%s: packed out shape", what);
        const uint64_t more = scratch * (uint64_t)rint_in(1, 5);
        run_variant(what, ep_ref_conv2d_packed_f32, &op, scratch, 0, want.p, ny, K);
        run_variant(what, ep_ref_conv2d_packed_f32, &op, scratch, more, want.p, ny, K);
        if (have_x86) {
            run_variant(what, ep_x86_conv2d_packed_f32, &op, scratch, 0, want.p, ny, K);
            run_variant(what, ep_x86_conv2d_packed_f32, &op, scratch, more, want.p, ny, K);
        }
        /* hostile plans: a packed tensor of the wrong shape is refused */
        ep_tensor bad = mk(wp, 3, (int32_t[]){panels, K, EP_PACK_MR});
        ins[1] = &bad;
        bad.dims[1] = K + 1;
        CHECK(ep_shape_conv2d(&op, &sh, &scratch) != EP_OK, "%s: K+1 accepted", what);
        bad.dims[1] = K, bad.dims[0] = panels - 1;
        CHECK(ep_shape_conv2d(&op, &sh, &scratch) != EP_OK, "%s: fewer panels accepted", what);
        bad.dims[0] = panels, bad.dims[2] = EP_PACK_MR - 1;
        CHECK(ep_shape_conv2d(&op, &sh, &scratch) != EP_OK, "%s: MR-1 accepted", what);
        ins[1] = &wt;   /* the plain layout under the packed variant */
        CHECK(ep_shape_conv2d(&op, &sh, &scratch) != EP_OK, "%s: plain weights accepted as packed", what);
        free(wp);
    }
    free(want.base);
    free(x), free(w), free(b), free(r);
}

/* ---------------- GEMM ---------------- */

static void gemm_case(int iter, int have_x86) {
    ep_gemm_params p;
    memset(&p, 0, sizeof(p));
    p.act = random_act(&p.act_alpha, &p.act_beta);
    const int M = rint_in(1, iter % 4 == 0 ? 40 : 13), K = rint_in(1, iter % 5 == 0 ? 600 : 40);
    const int N = rint_in(1, iter % 3 == 0 ? 100 : 40);
    const int bias_kind = rint_in(0, 3);   /* none, [N], [1,N], [M,N] */
    const int has_r = (rnd() & 3) == 0;
    float *a = malloc(sizeof(float) * (size_t)M * K), *b = malloc(sizeof(float) * (size_t)K * N);
    float *c = malloc(sizeof(float) * (size_t)M * N), *r = malloc(sizeof(float) * (size_t)M * N);
    for (int64_t i = 0; i < (int64_t)M * K; i++) a[i] = rfloat();
    for (int64_t i = 0; i < (int64_t)K * N; i++) b[i] = rfloat();
    for (int64_t i = 0; i < (int64_t)M * N; i++) c[i] = rfloat(), r[i] = rfloat();
    ep_tensor at = mk(a, 2, (int32_t[]){M, K}), bt = mk(b, 2, (int32_t[]){K, N});
    ep_tensor ct = bias_kind == 1 ? mk(c, 1, (int32_t[]){N}) : mk(c, 2, (int32_t[]){bias_kind == 2 ? 1 : M, N});
    ep_tensor rt = mk(r, 2, (int32_t[]){M, N}), yt = mk(NULL, 2, (int32_t[]){M, N});
    ep_tensor *ins[4] = {&at, &bt, bias_kind ? &ct : NULL, has_r ? &rt : NULL};
    ep_tensor *outs[1] = {&yt};
    ep_op op = {.params = &p, .in = ins, .out = outs, .n_in = 4, .n_out = 1, .opcode = EP_OP_GEMM};
    gbuf want = galloc((int64_t)M * N);
    yt.data = want.p;
    ep_shape sh;
    uint64_t scratch = 0;
    CHECK(ep_shape_gemm(&op, &sh, &scratch) == EP_OK, "gemm variant 0 shape");
    CHECK(ep_ref_gemm_f32(&op) == EP_OK && guards_ok(&want), "gemm variant 0 ref");

    const int strips = (N + EP_PACK_NR - 1) / EP_PACK_NR;
    float *bp = malloc(sizeof(float) * (size_t)strips * K * EP_PACK_NR);
    for (int s = 0; s < strips; s++)
        for (int k = 0; k < K; k++)
            for (int j = 0; j < EP_PACK_NR; j++) {
                const int n = s * EP_PACK_NR + j;
                bp[((int64_t)s * K + k) * EP_PACK_NR + j] = n < N ? b[(int64_t)k * N + n] : 0.0f;
            }
    ep_tensor bpt = mk(bp, 3, (int32_t[]){strips, K, EP_PACK_NR});
    ins[1] = &bpt;
    op.variant = EP_GEMM_VARIANT_PACKED;
    char what[160];
    snprintf(what, sizeof(what), "gemm M%d K%d N%d bias%d r%d act%d", M, K, N, bias_kind, has_r, p.act);
    CHECK(ep_shape_gemm(&op, &sh, &scratch) == EP_OK && scratch == 0, "%s: packed shape", what);
    run_variant(what, ep_ref_gemm_packed_f32, &op, 0, 0, want.p, (int64_t)M * N, K);
    if (have_x86) run_variant(what, ep_x86_gemm_packed_f32, &op, 0, 0, want.p, (int64_t)M * N, K);
    ep_tensor bad = bpt;
    ins[1] = &bad;
    bad.dims[0] = strips + 1;
    CHECK(ep_shape_gemm(&op, &sh, &scratch) != EP_OK, "%s: extra strip accepted", what);
    bad.dims[0] = strips, bad.dims[1] = K + 1;
    CHECK(ep_shape_gemm(&op, &sh, &scratch) != EP_OK, "%s: K+1 accepted", what);
    ins[1] = &bt;
    CHECK(ep_shape_gemm(&op, &sh, &scratch) != EP_OK, "%s: plain B accepted as packed", what);
    free(bp);
    free(want.base);
    free(a), free(b), free(c), free(r);
}

/* ---------------- CONV2D Winograd F(4x4, 3x3) ---------------- */

static void pack_winograd(float *dst, const float *w, int M, int C) {   /* [36][ceil(M/MR)][C][MR] */
    static const double G[6][3] = {{0.25, 0, 0}, {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                   {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
    const int panels = (M + EP_PACK_MR - 1) / EP_PACK_MR;
    memset(dst, 0, sizeof(float) * (size_t)36 * panels * C * EP_PACK_MR);
    for (int m = 0; m < M; m++)
        for (int c = 0; c < C; c++) {
            const float *g = w + ((int64_t)m * C + c) * 9;
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 6; j++) {
                    double u = 0;
                    for (int k = 0; k < 3; k++)
                        for (int l = 0; l < 3; l++) u += G[i][k] * g[k * 3 + l] * G[j][l];
                    dst[(((int64_t)(i * 6 + j) * panels + m / EP_PACK_MR) * C + c) * EP_PACK_MR + m % EP_PACK_MR] = (float)u;
                }
        }
}

static void winograd_case(int iter, int have_x86) {
    ep_conv2d_params p;
    memset(&p, 0, sizeof(p));
    const int N = rint_in(1, 2), C = rint_in(1, iter % 5 == 0 ? 70 : 12), M = rint_in(1, iter % 4 == 0 ? 40 : 14);
    const int H = rint_in(1, 30), W = rint_in(1, 30);
    p.kernel[0] = p.kernel[1] = 3;
    p.stride[0] = p.stride[1] = p.dilation[0] = p.dilation[1] = 1;
    for (int i = 0; i < 4; i++) p.pads[i] = rint_in(0, 2);
    p.groups = 1;
    p.act = random_act(&p.act_alpha, &p.act_beta);
    const int OH = H + p.pads[0] + p.pads[2] - 2, OW = W + p.pads[1] + p.pads[3] - 2;
    if (OH < 1 || OW < 1) return;
    const int has_b = rnd() & 1, has_r = (rnd() & 3) == 0, K = C * 9;
    const int64_t nx = (int64_t)N * C * H * W, ny = (int64_t)N * M * OH * OW;
    const int panels = (M + EP_PACK_MR - 1) / EP_PACK_MR;
    float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)M * K);
    float *b = malloc(sizeof(float) * (size_t)M), *r = malloc(sizeof(float) * (size_t)ny);
    float *u = malloc(sizeof(float) * (size_t)36 * panels * C * EP_PACK_MR);
    for (int64_t i = 0; i < nx; i++) x[i] = rfloat();
    for (int64_t i = 0; i < (int64_t)M * K; i++) w[i] = rfloat();
    for (int i = 0; i < M; i++) b[i] = rfloat();
    for (int64_t i = 0; i < ny; i++) r[i] = rfloat();
    pack_winograd(u, w, M, C);
    ep_tensor xt = mk(x, 4, (int32_t[]){N, C, H, W}), wt = mk(w, 4, (int32_t[]){M, C, 3, 3});
    ep_tensor ut = mk(u, 4, (int32_t[]){36, panels, C, EP_PACK_MR});
    ep_tensor bt = mk(b, 1, (int32_t[]){M}), rt = mk(r, 4, (int32_t[]){N, M, OH, OW});
    ep_tensor yt = mk(NULL, 4, (int32_t[]){N, M, OH, OW});
    ep_tensor *ins[4] = {&xt, &wt, has_b ? &bt : NULL, has_r ? &rt : NULL};
    ep_tensor *outs[1] = {&yt};
    ep_op op = {.params = &p, .in = ins, .out = outs, .n_in = 4, .n_out = 1, .opcode = EP_OP_CONV2D};
    gbuf want = galloc(ny);
    yt.data = want.p;
    ep_shape sh;
    uint64_t scratch = 0;
    CHECK(ep_shape_conv2d(&op, &sh, &scratch) == EP_OK && ep_ref_conv2d_f32(&op) == EP_OK, "wino variant 0");
    char what[160];
    snprintf(what, sizeof(what), "winograd N%d C%d M%d %dx%d p%d,%d,%d,%d act%d b%d r%d", N, C, M, H, W, p.pads[0],
             p.pads[1], p.pads[2], p.pads[3], p.act, has_b, has_r);
    ins[1] = &ut;
    op.variant = EP_CONV2D_VARIANT_WINOGRAD;
    CHECK(ep_shape_conv2d(&op, &sh, &scratch) == EP_OK, "%s: shape", what);
    CHECK(scratch == (uint64_t)36 * EP_PACK_NR * (C + panels * EP_PACK_MR) * 4, "%s: scratch", what);
    tol_scale = 10.0;
    const uint64_t more = scratch * (uint64_t)rint_in(1, 4);
    run_variant(what, ep_ref_conv2d_winograd_f32, &op, scratch, 0, want.p, ny, K);
    run_variant(what, ep_ref_conv2d_winograd_f32, &op, scratch, more, want.p, ny, K);
    if (have_x86) {
        run_variant(what, ep_x86_conv2d_winograd_f32, &op, scratch, 0, want.p, ny, K);
        run_variant(what, ep_x86_conv2d_winograd_f32, &op, scratch, more, want.p, ny, K);
    }
    tol_scale = 1.0;
    ut.dims[2] = C + 1;
    CHECK(ep_shape_conv2d(&op, &sh, &scratch) != EP_OK, "%s: C+1 accepted", what);
    ut.dims[2] = C;
    p.stride[0] = 2;
    CHECK(ep_shape_conv2d(&op, &sh, &scratch) != EP_OK, "%s: stride 2 accepted", what);
    free(want.base);
    free(x), free(w), free(b), free(r), free(u);
}

/* ---------------- UNARY / BINARY (elementwise_f32.c) ----------------
 * Checked against ep_ref_unary_f32 / ep_ref_binary_f32 on the same inputs: bit for bit (NaN matches
 * any NaN) except SIGMOID, SILU and TANH, whose vector exp is a polynomial rather than libm's expf /
 * tanhf: |got - want| <= 2e-6 |want| + 1e-37. 2e-6 is ~17 ulp at the worst scale: the polynomial
 * exp is within ~2 ulp, the reference's expf within 1 ulp, and the shared 1 + e, division and
 * multiply add at most 1.5 ulp each side; the 1e-37 floor covers results that are subnormal (or
 * zero in one and subnormal in the other) near expf's overflow. Inputs include NaN, +-inf, +-0,
 * and values beyond +-88 (exp overflow / underflow). Every case runs out of place with guard cells
 * and in place (Y aliasing X, or A / B for binary). */

static int is_transcendental(int act) { return act == EP_ACT_SIGMOID || act == EP_ACT_SILU || act == EP_ACT_TANH; }

static int same_f32(float g, float w, int loose) {
    if (g != g || w != w) return g != g && w != w;
    if (loose && g == w) return 1;   /* infinities */
    if (loose) return fabs((double)g - (double)w) <= 2e-6 * fabs((double)w) + 1e-37;
    return memcmp(&g, &w, 4) == 0;   /* signed zeros too */
}
static int64_t first_diff(const float *g, const float *w, int64_t n, int loose) {
    for (int64_t i = 0; i < n; i++)
        if (!same_f32(g[i], w[i], loose)) return i;
    return -1;
}

static float elem_value(int wide) {
    const uint32_t r = rnd() % 64;
    switch (r) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return 0.0f;
    case 4: return -0.0f;
    case 5: return (rnd() & 1 ? 1.0f : -1.0f) * (86.0f + 4.0f * (float)(rnd() % 1000) / 1000.0f);
    case 6: case 7: return 0.5f * (float)rint_in(-41, 41);   /* ties for ROUND (to even), exact integers */
    case 8: return (rnd() & 1 ? 1.0f : -1.0f) * (8388607.5f + (float)(rnd() % 4));   /* near 2^23 */
    default: return wide ? rfloat() * 30.0f : rfloat() * 3.0f;
    }
}

static void unary_case(int iter, int have_x86) {
    ep_unary_params p;
    memset(&p, 0, sizeof(p));
    p.kind = 1 + iter % (EP_ACT_COUNT - 1);
    p.alpha = p.kind == EP_ACT_CLIP ? -0.5f : p.kind == EP_ACT_HARD_SIGMOID ? 0.2f : 0.1f;
    p.beta = p.kind == EP_ACT_CLIP ? 0.75f : p.kind == EP_ACT_HARD_SIGMOID ? 0.5f : 0.0f;
    const int64_t n = iter % 9 == 0 ? rint_in(0, 9) : rint_in(1, iter % 4 == 0 ? 3000 : 100);
    float *x = malloc(sizeof(float) * (size_t)(n + 1));
    const int wide = rnd() & 1;
    for (int64_t i = 0; i < n; i++) x[i] = elem_value(wide);
    const int32_t dims[2] = {1, (int32_t)n};
    ep_tensor xt = mk(x, 2, dims), yt = mk(NULL, 2, dims);
    ep_tensor *ins[1] = {&xt}, *outs[1] = {&yt};
    ep_op op = {.params = &p, .in = ins, .out = outs, .n_in = 1, .n_out = 1, .opcode = EP_OP_UNARY};
    gbuf want = galloc(n);
    yt.data = want.p;
    CHECK(ep_ref_unary_f32(&op) == EP_OK && guards_ok(&want), "unary ref");
    if (have_x86) {
        const int loose = is_transcendental(p.kind);
        gbuf got = galloc(n);
        yt.data = got.p;
        CHECK(ep_x86_unary_f32(&op) == EP_OK, "unary kind %d n %lld: rc", p.kind, (long long)n);
        CHECK(guards_ok(&got), "unary kind %d n %lld: guard cells overwritten", p.kind, (long long)n);
        int64_t d = first_diff(got.p, want.p, n, loose);
        CHECK(d < 0, "unary kind %d n %lld: [%lld] x %g got %.9g want %.9g", p.kind, (long long)n, (long long)d,
              d < 0 ? 0.0 : x[d], d < 0 ? 0.0 : got.p[d], d < 0 ? 0.0 : want.p[d]);
        /* in place: Y aliases X exactly */
        for (int64_t i = 0; i < n; i++) got.p[i] = x[i];
        xt.data = got.p, yt.data = got.p;
        CHECK(ep_x86_unary_f32(&op) == EP_OK && guards_ok(&got), "unary in place kind %d", p.kind);
        d = first_diff(got.p, want.p, n, loose);
        CHECK(d < 0, "unary in place kind %d n %lld: [%lld] differs", p.kind, (long long)n, (long long)d);
        free(got.base);
    }
    free(want.base);
    free(x);
}

static void binary_case(int iter, int have_x86) {
    ep_binary_params p;
    memset(&p, 0, sizeof(p));
    p.kind = (int)(rnd() % EP_BIN_COUNT);
    static const int acts[] = {EP_ACT_NONE, EP_ACT_NONE, EP_ACT_RELU, EP_ACT_CLIP, EP_ACT_LEAKY_RELU, EP_ACT_SIGMOID,
                               EP_ACT_SILU, EP_ACT_HARD_SWISH, EP_ACT_HARD_SIGMOID, EP_ACT_TANH, EP_ACT_ABS, EP_ACT_ELU};
    p.act = acts[rnd() % (sizeof(acts) / sizeof(acts[0]))];
    p.act_alpha = p.act == EP_ACT_CLIP ? -0.5f : 0.2f;
    p.act_beta = p.act == EP_ACT_CLIP ? 0.75f : 0.5f;
    /* output shape, then A and B each: same shape, scalar, per-channel [C,1,1], last dim [W], a random
     * mix of broadcast dims, or a lower rank suffix */
    const int r = rint_in(1, 4);
    int32_t yd[4], ad[4], bd[4];
    for (int i = 0; i < r; i++) yd[i] = rint_in(1, iter % 3 == 0 ? 40 : 9);
    int ar = r, br = r;
    int32_t *sd[2] = {ad, bd};
    int *sr[2] = {&ar, &br};
    int form_a = iter % 4 == 0 ? (int)(rnd() % 5) : 0;   /* A is usually full (in-place case) */
    if (form_a == 3) form_a = 0;                              /* one operand keeps Y's rank */
    const int form_b = (int)(rnd() % 5);
    for (int t = 0; t < 2; t++) {
        const int form = t ? form_b : form_a;
        for (int i = 0; i < r; i++) sd[t][i] = yd[i];
        switch (form) {
        case 1: for (int i = 0; i < r; i++) sd[t][i] = 1; break;
        case 2: for (int i = 0; i < r; i++) if (i != (r > 1 ? r - 3 < 0 ? 0 : r - 3 : 0)) sd[t][i] = 1; break;
        case 3: *sr[t] = 1, sd[t][0] = yd[r - 1]; break;
        case 4: for (int i = 0; i < r; i++) if (rnd() & 1) sd[t][i] = 1; break;
        default: break;
        }
    }
    for (int i = 0; i < r; i++) {   /* Y is the broadcast of A and B: widen Y's dims no operand covers */
        const int ia = i - (r - ar), ib = i - (r - br);
        const int32_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
        yd[i] = da > db ? da : db;
    }
    int64_t ny = 1, na = 1, nb = 1;
    for (int i = 0; i < r; i++) ny *= yd[i];
    for (int i = 0; i < ar; i++) na *= ad[i];
    for (int i = 0; i < br; i++) nb *= bd[i];
    float *a = malloc(sizeof(float) * (size_t)na), *b = malloc(sizeof(float) * (size_t)nb);
    for (int64_t i = 0; i < na; i++) a[i] = elem_value(0);
    for (int64_t i = 0; i < nb; i++) b[i] = elem_value(0);
    ep_tensor at = mk(a, ar, ad), bt = mk(b, br, bd), yt = mk(NULL, r, yd);
    ep_tensor *ins[2] = {&at, &bt}, *outs[1] = {&yt};
    ep_op op = {.params = &p, .in = ins, .out = outs, .n_in = 2, .n_out = 1, .opcode = EP_OP_BINARY};
    ep_shape sh;
    uint64_t scratch = 0;
    CHECK(ep_shape_binary(&op, &sh, &scratch) == EP_OK && sh.rank == r, "binary shape");
    gbuf want = galloc(ny);
    yt.data = want.p;
    CHECK(ep_ref_binary_f32(&op) == EP_OK && guards_ok(&want), "binary ref");
    char what[200];
    snprintf(what, sizeof(what), "binary kind %d act %d y[%d,%d,%d,%d] a%lld(r%d) b%lld(r%d)", p.kind, p.act, yd[0],
             r > 1 ? yd[1] : 0, r > 2 ? yd[2] : 0, r > 3 ? yd[3] : 0, (long long)na, ar, (long long)nb, br);
    if (have_x86) {
        const int loose = is_transcendental(p.act);
        gbuf got = galloc(ny);
        yt.data = got.p;
        CHECK(ep_x86_binary_f32(&op) == EP_OK && guards_ok(&got), "%s: rc / guard cells", what);
        int64_t d = first_diff(got.p, want.p, ny, loose);
        CHECK(d < 0, "%s: [%lld] got %.9g want %.9g", what, (long long)d, d < 0 ? 0.0 : got.p[d],
              d < 0 ? 0.0 : want.p[d]);
        /* in place: Y aliases A (or B) when it has Y's shape */
        for (int t = 0; t < 2; t++) {
            if ((t ? nb : na) != ny || (t ? br : ar) != r) continue;
            for (int64_t i = 0; i < ny; i++) got.p[i] = t ? b[i] : a[i];
            (t ? &bt : &at)->data = got.p;
            yt.data = got.p;
            CHECK(ep_x86_binary_f32(&op) == EP_OK && guards_ok(&got), "%s: in place rc / guards", what);
            d = first_diff(got.p, want.p, ny, loose);
            CHECK(d < 0, "%s: in place (Y = %s) [%lld] differs", what, t ? "B" : "A", (long long)d);
            at.data = a, bt.data = b;
        }
        free(got.base);
    }
    free(want.base);
    free(a), free(b);
}

/* BINARY on integer dtypes: the AVX2 entry point hands the op to the reference (ep_ref_binary_int),
 * one dtype check per call; checked equal to it byte for byte, out of place and in place, with
 * guard cells, on the broadcast forms of binary_case and values that wrap or divide by -1. Zero
 * divisors (left in one case in four) must fail both with EP_ERR_RUN_INDEX. */
static void int_binary_case(int iter, int have_x86) {
    static const uint8_t dts[5] = {EP_DTYPE_I8, EP_DTYPE_U8, EP_DTYPE_I16, EP_DTYPE_I32, EP_DTYPE_I64};
    static const int kinds[8] = {EP_BIN_ADD, EP_BIN_SUB, EP_BIN_MUL, EP_BIN_DIV, EP_BIN_MAX, EP_BIN_MIN,
                                 EP_BIN_MOD, EP_BIN_FMOD};
    const uint8_t dt = dts[rnd() % 5];
    const int64_t es = (int64_t)ep_dtype_size(dt);
    ep_binary_params p = {kinds[rnd() % 8], EP_ACT_NONE, 0, 0};
    const int r = rint_in(1, 4);
    int32_t yd[4], bd[4];
    for (int i = 0; i < r; i++) yd[i] = rint_in(1, iter % 3 == 0 ? 40 : 9);
    int br = r;
    switch (rnd() % 4) {   /* B: same shape, scalar, last dim, random broadcast */
    case 0: for (int i = 0; i < r; i++) bd[i] = yd[i]; break;
    case 1: br = 1, bd[0] = 1; break;
    case 2: br = 1, bd[0] = yd[r - 1]; break;
    default: for (int i = 0; i < r; i++) bd[i] = rnd() & 1 ? 1 : yd[i]; break;
    }
    int64_t ny = 1, nb = 1;
    for (int i = 0; i < r; i++) ny *= yd[i];
    for (int i = 0; i < br; i++) nb *= bd[i];
    unsigned char *a = malloc((size_t)(ny * es)), *b = malloc((size_t)(nb * es));
    for (int64_t i = 0; i < ny * es; i++) a[i] = (unsigned char)rnd();
    for (int64_t i = 0; i < nb * es; i++) b[i] = (unsigned char)(rnd() % 4 == 0 ? (rnd() & 1 ? 0 : 0xFF) : rnd());
    const int divides = p.kind == EP_BIN_DIV || p.kind == EP_BIN_MOD || p.kind == EP_BIN_FMOD;
    int zero = 0;
    for (int64_t i = 0; i < nb; i++) {
        int z = 1;
        for (int64_t k = 0; k < es; k++) z &= b[i * es + k] == 0;
        if (z && divides && rnd() % 4) b[i * es] = 1, z = 0;   /* most cases divide by nonzero values */
        zero |= z;
    }
    const int want_rc = divides && zero ? EP_ERR_RUN_INDEX : EP_OK;
    ep_tensor at = mk(a, r, yd), bt = mk(b, br, bd), yt = mk(NULL, r, yd);
    at.dtype = bt.dtype = yt.dtype = dt;
    at.nbytes = yt.nbytes = (uint64_t)(ny * es), bt.nbytes = (uint64_t)(nb * es);
    ep_tensor *ins[2] = {&at, &bt}, *outs[1] = {&yt};
    ep_op op = {.params = &p, .in = ins, .out = outs, .n_in = 2, .n_out = 1, .opcode = EP_OP_BINARY};
    ep_shape sh;
    uint64_t scratch = 0;
    CHECK(ep_shape_binary(&op, &sh, &scratch) == EP_OK && sh.rank == r && sh.dtype == dt, "int binary shape");
    const int64_t cells = (ny * es + 3) / 4;
    gbuf want = galloc(cells), got = galloc(cells);
    memset(want.p, 0, (size_t)(cells * 4)), memset(got.p, 0, (size_t)(cells * 4));
    yt.data = want.p;
    CHECK(ep_ref_binary_f32(&op) == want_rc && guards_ok(&want), "int binary ref");   /* the table's ref entry */
    if (have_x86) {
        yt.data = got.p;
        CHECK(ep_x86_binary_f32(&op) == want_rc && guards_ok(&got), "int binary dt %d kind %d: rc / guards", dt, p.kind);
        CHECK(want_rc || memcmp(got.p, want.p, (size_t)(ny * es)) == 0, "int binary dt %d kind %d r %d: differs from ref",
              dt, p.kind, r);
        memcpy(got.p, a, (size_t)(ny * es));   /* in place: Y aliases A */
        at.data = yt.data = got.p;
        CHECK(ep_x86_binary_f32(&op) == want_rc && guards_ok(&got), "int binary in place rc / guards");
        CHECK(want_rc || memcmp(got.p, want.p, (size_t)(ny * es)) == 0, "int binary dt %d kind %d: in place differs", dt,
              p.kind);
    }
    free(want.base), free(got.base), free(a), free(b);
}

/* ---------------- MATMUL, SOFTMAX, LAYERNORM, MAXPOOL / AVGPOOL, LSTM / GRU (variant 0) ----------------
 * The AVX2 kernel of each op against its reference kernel on the same inputs, seeded random shapes (odd
 * tails of every vector width, ranks 2..4 with broadcast batch dims, extents 1 and 0 where legal), with
 * guard cells around every output, once on one thread and once on the 3-thread pool (bit-identical).
 * Tolerances, per op:
 *   MATMUL: the packed GEMM's (close_enough, K products per output: FMA and another order);
 *   SOFTMAX: 2e-6 |want| + 1e-37 (x86_exp8 vs expf, as the vector SIGMOID; the floor covers outputs that
 *     are subnormal in one and clamped to exp(-86) in the other), LOGSOFTMAX: 2e-6 (|want| + 1);
 *   LAYERNORM: 1e-6 |want| + 1e-7 on Y, Mean and InvStdDev (only the order of the double sums differs);
 *   MAXPOOL / AVGPOOL: bit for bit (NaN matches NaN);
 *   LSTM / GRU: 1e-5 max|want| + 4e-7 (I + H) T^(1/2) + 1e-6 (float FMA dots vs the reference's double dots,
 *     vector sigmoid / tanh; the error of a step is damped, not amplified, by the gates). */

typedef enum { CMP_CLOSE, CMP_EXACT, CMP_SOFTMAX, CMP_LOGSOFTMAX, CMP_LN } cmp_mode;

static int cmp_ok(cmp_mode mode, float g, float w, double tol_abs) {
    if (g != g || w != w) return g != g && w != w;
    if (g == w) return mode != CMP_EXACT || signbit(g) == signbit(w);   /* infinities; exact: signed zeros too */
    const double d = fabs((double)g - (double)w), aw = fabs((double)w);
    switch (mode) {
    case CMP_EXACT: return 0;
    case CMP_SOFTMAX: return d <= 2e-6 * aw + 1e-37;
    case CMP_LOGSOFTMAX: return d <= 2e-6 * (aw + 1.0);
    case CMP_LN: return d <= 1e-6 * aw + 1e-7;
    default: return d <= tol_abs;
    }
}

/* Runs fn on op with guarded copies of its n_out outputs (want[i]: the reference's, ny[i] floats),
 * compares them, then again on the pool (bit for bit with the first run). inplace: X aliases Y[0]
 * (x: the input's values, copied into Y[0] first). */
static void run_cmp(const char *what, kfn fn, ep_op *op, float *const *want, const int64_t *ny, cmp_mode mode,
                    double tol_abs, const float *inplace_x) {
    enum { MAXO = 3 };
    gbuf y[2][MAXO];
    ep_tensor yt[2][MAXO];
    ep_tensor *outs[2][MAXO];
    uint8_t *sbuf = malloc((size_t)op->scratch_size + 512);
    for (int r = 0; r < 2; r++) {
        if (r == 1 && g_pool.n_threads <= 1) break;
        for (int i = 0; i < op->n_out; i++) {
            y[r][i] = galloc(ny[i]);
            yt[r][i] = *op->out[i];
            yt[r][i].data = y[r][i].p;
            outs[r][i] = &yt[r][i];
        }
        ep_op o = *op;
        ep_tensor xt;
        ep_tensor *ins[8];
        if (inplace_x) {   /* Y aliases X exactly */
            for (int i = 0; i < op->n_in; i++) ins[i] = op->in[i];
            xt = *op->in[0];
            memcpy(y[r][0].p, inplace_x, (size_t)ny[0] * 4);
            xt.data = y[r][0].p;
            ins[0] = &xt;
            o.in = ins;
        }
        o.out = outs[r];
        memset(sbuf, SCRATCH_SENTINEL, (size_t)op->scratch_size + 512);
        o.scratch = op->scratch_size ? sbuf + 256 : NULL;
        o.pool = r ? &g_pool : NULL;
        const int rc = fn(&o);
        int sg = 1;
        for (int i = 0; i < 256; i++) sg &= sbuf[i] == SCRATCH_SENTINEL && sbuf[256 + op->scratch_size + (uint64_t)i] == SCRATCH_SENTINEL;
        CHECK(rc == EP_OK, "%s%s: rc %d", what, r ? " (threads)" : "", rc);
        CHECK(sg, "%s: scratch guard bytes overwritten", what);
        for (int i = 0; i < op->n_out; i++) {
            CHECK(guards_ok(&y[r][i]), "%s%s: output %d guard cells overwritten", what, r ? " (threads)" : "", i);
            if (r == 0) {
                int64_t bad = -1;
                for (int64_t e = 0; e < ny[i] && bad < 0; e++)
                    if (!cmp_ok(mode, y[0][i].p[e], want[i][e], tol_abs)) bad = e;
                CHECK(bad < 0, "%s: output %d [%lld] got %.9g want %.9g (tol %g)", what, i, (long long)bad,
                      bad < 0 ? 0.0 : y[0][i].p[bad], bad < 0 ? 0.0 : want[i][bad], tol_abs);
            } else {
                CHECK(memcmp(y[0][i].p, y[1][i].p, (size_t)ny[i] * 4) == 0, "%s: %u threads differ from one (output %d)",
                      what, g_pool.n_threads, i);
            }
        }
    }
    for (int r = 0; r < 2; r++) {
        if (r == 1 && g_pool.n_threads <= 1) break;
        for (int i = 0; i < op->n_out; i++) free(y[r][i].base);
    }
    free(sbuf);
}

static float *rand_buf(int64_t n, float scale) {
    float *p = malloc(sizeof(float) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) p[i] = rfloat() * scale;
    return p;
}

static void matmul_case(int iter, int have_x86) {
    ep_matmul_params p = {0, 0};
    const int ra = rint_in(2, 4), rb = rint_in(2, 4), ro = ra > rb ? ra : rb;
    int32_t ad[4], bd[4], yd[4];
    const int M = iter % 11 == 0 ? rint_in(0, 2) : rint_in(1, iter % 4 == 0 ? 40 : 14);
    const int K = iter % 13 == 0 ? 0 : rint_in(1, iter % 5 == 0 ? 600 : 40);
    const int N = iter % 17 == 0 ? rint_in(0, 1) : rint_in(1, iter % 3 == 0 ? 100 : 40);
    for (int i = 0; i < ro - 2; i++) {   /* output batch dim i: each operand equal, 1 or absent */
        const int32_t e = iter % 19 == 0 && i == 0 ? 0 : rint_in(1, 3);
        const int ia = i - (ro - ra), ib = i - (ro - rb);
        const int f = rint_in(0, 2);   /* 0 both e, 1 A broadcast, 2 B broadcast */
        if (ia >= 0) ad[ia] = f == 1 ? 1 : e;
        if (ib >= 0) bd[ib] = f == 2 ? 1 : e;
        yd[i] = (ia >= 0 && ad[ia] != 1) || (ib >= 0 && bd[ib] != 1) ? e : 1;
    }
    ad[ra - 2] = M, ad[ra - 1] = K, bd[rb - 2] = K, bd[rb - 1] = N, yd[ro - 2] = M, yd[ro - 1] = N;
    int64_t na = 1, nb = 1, ny = 1;
    for (int i = 0; i < ra; i++) na *= ad[i];
    for (int i = 0; i < rb; i++) nb *= bd[i];
    for (int i = 0; i < ro; i++) ny *= yd[i];
    float *a = rand_buf(na, 1.0f), *b = rand_buf(nb, 1.0f);
    ep_tensor at = mk(a, ra, ad), bt = mk(b, rb, bd), yt = mk(NULL, ro, yd);
    ep_tensor *ins[2] = {&at, &bt}, *outs[1] = {&yt};
    ep_op op = {.params = &p, .in = ins, .out = outs, .n_in = 2, .n_out = 1, .opcode = EP_OP_MATMUL};
    ep_shape sh;
    uint64_t scratch = 0;
    char what[200];
    snprintf(what, sizeof(what), "matmul a[%d,%d,%d,%d](r%d) b[%d,%d,%d,%d](r%d)", ad[0], ad[1], ra > 2 ? ad[2] : 0,
             ra > 3 ? ad[3] : 0, ra, bd[0], bd[1], rb > 2 ? bd[2] : 0, rb > 3 ? bd[3] : 0, rb);
    CHECK(ep_shape_matmul(&op, &sh, &scratch) == EP_OK && sh.rank == ro, "%s: shape", what);
    for (int i = 0; i < ro; i++) CHECK(sh.dims[i] == yd[i], "%s: out dim %d %d != %d", what, i, sh.dims[i], yd[i]);
    gbuf want = galloc(ny);
    yt.data = want.p;
    CHECK(ep_ref_matmul_f32(&op) == EP_OK && guards_ok(&want), "%s: ref", what);
    if (have_x86) {
        float *w[1] = {want.p};
        const double tol = 1e-5 * max_abs(want.p, ny) + 2e-7 * (double)K + 1e-6;
        run_cmp(what, ep_x86_matmul_f32, &op, w, &ny, CMP_CLOSE, tol, NULL);
    }
    free(want.base), free(a), free(b);
}

static void softmax_case(int iter, int have_x86) {
    ep_softmax_params p = {0, (int)(rnd() & 1)};
    const int r = rint_in(1, 4);
    int32_t d[4];
    int64_t n = 1;
    for (int i = 0; i < r; i++) d[i] = rint_in(1, i == r - 1 ? (iter % 3 == 0 ? 300 : 40) : 9);
    if (iter % 23 == 0) d[rint_in(0, r - 1)] = 0;
    p.axis = iter % 2 == 0 ? r - 1 : rint_in(0, r - 1);
    for (int i = 0; i < r; i++) n *= d[i];
    const float scale = iter % 5 == 0 ? 60.0f : 4.0f;   /* wide: exps that underflow */
    float *x = rand_buf(n, scale);
    if (n && iter % 7 == 0) x[rnd() % (uint32_t)n] = NAN;
    if (n && iter % 11 == 0) x[rnd() % (uint32_t)n] = iter % 2 ? INFINITY : -INFINITY;
    ep_tensor xt = mk(x, r, d), yt = mk(NULL, r, d);
    ep_tensor *ins[1] = {&xt}, *outs[1] = {&yt};
    ep_op op = {.params = &p, .in = ins, .out = outs, .n_in = 1, .n_out = 1, .opcode = EP_OP_SOFTMAX};
    ep_shape sh;
    uint64_t scratch = 0;
    char what[160];
    snprintf(what, sizeof(what), "softmax log%d axis %d [%d,%d,%d,%d](r%d)", p.log, p.axis, d[0], r > 1 ? d[1] : 0,
             r > 2 ? d[2] : 0, r > 3 ? d[3] : 0, r);
    CHECK(ep_shape_softmax(&op, &sh, &scratch) == EP_OK && scratch == 0, "%s: shape", what);
    gbuf want = galloc(n);
    yt.data = want.p;
    CHECK(ep_ref_softmax_f32(&op) == EP_OK && guards_ok(&want), "%s: ref", what);
    if (have_x86) {
        float *w[1] = {want.p};
        const cmp_mode m = p.log ? CMP_LOGSOFTMAX : CMP_SOFTMAX;
        run_cmp(what, ep_x86_softmax_f32, &op, w, &n, m, 0, NULL);
        run_cmp(what, ep_x86_softmax_f32, &op, w, &n, m, 0, x);   /* in place */
    }
    free(want.base), free(x);
}

static void layernorm_case(int iter, int have_x86) {
    ep_layernorm_params p = {0, iter % 3 == 0 ? 0.0f : 1e-5f};
    const int r = rint_in(1, 4);
    int32_t d[4], sd[4];
    for (int i = 0; i < r; i++) d[i] = rint_in(1, i == r - 1 ? (iter % 3 == 0 ? 300 : 40) : 7);
    if (iter % 29 == 0) d[0] = 0;
    p.axis = rint_in(0, r - 1);
    int64_t n = 1, inner = 1, outer = 1;
    for (int i = 0; i < r; i++) n *= d[i];
    for (int i = p.axis; i < r; i++) inner *= d[i];
    for (int i = 0; i < p.axis; i++) outer *= d[i];
    for (int i = 0; i < r; i++) sd[i] = i < p.axis ? d[i] : 1;
    float *x = rand_buf(n, 2.0f), *sc = rand_buf(inner, 1.0f), *bi = rand_buf(inner, 1.0f);
    if (iter % 4 == 1)   /* a large mean over a small spread: float statistics would lose it */
        for (int64_t i = 0; i < n; i++) x[i] = 1000.0f + x[i] * 0.01f;
    const int has_b = rnd() % 3 != 0, n_out = rint_in(1, 3);
    int32_t idims[1] = {(int32_t)inner};
    ep_tensor xt = mk(x, r, d), st = mk(sc, 1, idims), bt = mk(bi, 1, idims);
    ep_tensor yt[3] = {mk(NULL, r, d), mk(NULL, r, sd), mk(NULL, r, sd)};
    ep_tensor *ins[3] = {&xt, &st, has_b ? &bt : NULL}, *outs[3] = {&yt[0], &yt[1], &yt[2]};
    ep_op op = {.params = &p, .in = ins, .out = outs, .n_in = 3, .n_out = (uint16_t)n_out, .opcode = EP_OP_LAYERNORM};
    ep_shape sh[3];
    uint64_t scratch = 0;
    char what[160];
    snprintf(what, sizeof(what), "layernorm axis %d [%d,%d,%d,%d](r%d) bias %d outs %d eps %g", p.axis, d[0],
             r > 1 ? d[1] : 0, r > 2 ? d[2] : 0, r > 3 ? d[3] : 0, r, has_b, n_out, p.epsilon);
    CHECK(ep_shape_layernorm(&op, sh, &scratch) == EP_OK, "%s: shape", what);
    gbuf want[3] = {galloc(n), galloc(outer), galloc(outer)};
    for (int i = 0; i < 3; i++) yt[i].data = want[i].p;
    CHECK(ep_ref_layernorm_f32(&op) == EP_OK && guards_ok(&want[0]) && guards_ok(&want[1]), "%s: ref", what);
    if (have_x86) {
        float *w[3] = {want[0].p, want[1].p, want[2].p};
        const int64_t ny[3] = {n, outer, outer};
        run_cmp(what, ep_x86_layernorm_f32, &op, w, ny, CMP_LN, 0, NULL);
    }
    for (int i = 0; i < 3; i++) free(want[i].base);
    free(x), free(sc), free(bi);
}

static int pool_extent(int in, int k, int s, int d, int pb, int pe, int ceil_mode) {
    const int span = in + pb + pe - ((k - 1) * d + 1);
    if (span < 0) return -1;
    if (!ceil_mode) return span / s + 1;
    int o = (span + s - 1) / s + 1;
    if (o > 0 && (o - 1) * s >= in + pb) o--;
    return o;
}

static void pool_case(int iter, int have_x86, int is_max) {
    ep_pool_params p;
    memset(&p, 0, sizeof(p));
    for (int i = 0; i < 2; i++) {
        p.kernel[i] = iter % 3 ? rint_in(2, 3) : rint_in(1, 5);
        p.stride[i] = iter % 3 ? rint_in(1, 2) : rint_in(1, 4);
        p.dilation[i] = iter % 5 == 0 ? 2 : 1;
        p.pads[i] = rint_in(0, p.kernel[i] - 1);
        p.pads[i + 2] = rint_in(0, p.kernel[i] - 1);
    }
    p.count_include_pad = (int)(rnd() & 1);
    p.ceil_mode = (int)(rnd() & 1);
    int32_t xd[4] = {rint_in(1, 2), rint_in(1, 3), rint_in(1, 13), rint_in(1, iter % 2 ? 70 : 29)}, yd[4];
    yd[0] = xd[0], yd[1] = xd[1];
    for (int i = 0; i < 2; i++) {
        yd[2 + i] = pool_extent(xd[2 + i], p.kernel[i], p.stride[i], p.dilation[i], p.pads[i], p.pads[i + 2], p.ceil_mode);
        if (yd[2 + i] < 0) return;
    }
    const int64_t nx = (int64_t)xd[0] * xd[1] * xd[2] * xd[3], ny = (int64_t)yd[0] * yd[1] * yd[2] * yd[3];
    float *x = rand_buf(nx, 1.0f);
    if (iter % 6 == 0) x[rnd() % (uint32_t)nx] = NAN;
    if (iter % 4 == 0) x[rnd() % (uint32_t)nx] = -0.0f, x[rnd() % (uint32_t)nx] = 0.0f;
    ep_tensor xt = mk(x, 4, xd), yt = mk(NULL, 4, yd);
    ep_tensor *ins[1] = {&xt}, *outs[1] = {&yt};
    ep_op op = {.params = &p, .in = ins, .out = outs, .n_in = 1, .n_out = 1,
                .opcode = (uint16_t)(is_max ? EP_OP_MAXPOOL : EP_OP_AVGPOOL)};
    ep_shape sh;
    uint64_t scratch = 0;
    char what[200];
    snprintf(what, sizeof(what), "%s x[%d,%d,%d,%d] k%dx%d s%d,%d d%d,%d p%d,%d,%d,%d cip%d ceil%d", is_max ? "maxpool" : "avgpool",
             xd[0], xd[1], xd[2], xd[3], p.kernel[0], p.kernel[1], p.stride[0], p.stride[1], p.dilation[0], p.dilation[1],
             p.pads[0], p.pads[1], p.pads[2], p.pads[3], p.count_include_pad, p.ceil_mode);
    const int rc = is_max ? ep_shape_maxpool(&op, &sh, &scratch) : ep_shape_avgpool(&op, &sh, &scratch);
    if (rc != EP_OK) {   /* a geometry the runtime rejects: not a kernel case */
        free(x);
        return;
    }
    gbuf want = galloc(ny);
    yt.data = want.p;
    CHECK((is_max ? ep_ref_maxpool_f32(&op) : ep_ref_avgpool_f32(&op)) == EP_OK && guards_ok(&want), "%s: ref", what);
    if (have_x86) {
        float *w[1] = {want.p};
        run_cmp(what, is_max ? ep_x86_maxpool_f32 : ep_x86_avgpool_f32, &op, w, &ny, CMP_EXACT, 0, NULL);
    }
    free(want.base), free(x);
}

static void rnn_case(int iter, int have_x86, int lstm) {
    const int G = lstm ? 4 : 3;
    ep_rnn_params p;
    memset(&p, 0, sizeof(p));
    p.hidden_size = rint_in(1, iter % 4 == 0 ? 70 : 20);
    p.direction = rint_in(0, 2);
    p.layout = (int)(rnd() & 1);
    p.linear_before_reset = lstm ? 0 : (int)(rnd() & 1);
    p.clip = iter % 5 == 0 ? 0.8f : 0.0f;
    const int64_t T = rint_in(1, 12), B = rint_in(1, 3), I = rint_in(1, iter % 3 == 0 ? 50 : 17), H = p.hidden_size;
    const int64_t D = p.direction == EP_RNN_BIDIRECTIONAL ? 2 : 1, GH = G * H;
    const float ws = 1.0f / sqrtf((float)H);   /* torch's init scale */
    float *x = rand_buf(T * B * I, 1.0f), *w = rand_buf(D * GH * I, ws), *rr = rand_buf(D * GH * H, ws);
    float *bb = rand_buf(D * 2 * GH, ws), *h0 = rand_buf(D * B * H, 1.0f), *c0 = rand_buf(D * B * H, 1.0f);
    float *pp = rand_buf(D * 3 * H, ws);
    int32_t sl[3];
    for (int b = 0; b < B; b++) sl[b] = rnd() % 3 ? (int32_t)T : rint_in(0, (int)T);
    const int has_sl = rnd() & 1, has_h0 = rnd() & 1, has_c0 = lstm && (rnd() & 1), has_p = lstm && (rnd() & 1);
    int32_t xd[3] = {(int32_t)(p.layout ? B : T), (int32_t)(p.layout ? T : B), (int32_t)I};
    int32_t wd[3] = {(int32_t)D, (int32_t)GH, (int32_t)I}, rd[3] = {(int32_t)D, (int32_t)GH, (int32_t)H};
    int32_t bd[2] = {(int32_t)D, (int32_t)(2 * GH)}, sld[1] = {(int32_t)B}, pd[2] = {(int32_t)D, (int32_t)(3 * H)};
    int32_t std_[3] = {(int32_t)(p.layout ? B : D), (int32_t)(p.layout ? D : B), (int32_t)H};
    int32_t yd[4] = {(int32_t)T, (int32_t)D, (int32_t)B, (int32_t)H};
    if (p.layout) yd[0] = (int32_t)B, yd[1] = (int32_t)T, yd[2] = (int32_t)D;
    ep_tensor xt = mk(x, 3, xd), wt = mk(w, 3, wd), rt = mk(rr, 3, rd), bt = mk(bb, 2, bd), slt = mk(sl, 1, sld);
    slt.dtype = EP_DTYPE_I32;
    ep_tensor h0t = mk(h0, 3, std_), c0t = mk(c0, 3, std_), pt = mk(pp, 2, pd);
    ep_tensor yt[3] = {mk(NULL, 4, yd), mk(NULL, 3, std_), mk(NULL, 3, std_)};
    ep_tensor *ins[8] = {&xt, &wt, &rt, &bt, has_sl ? &slt : NULL, has_h0 ? &h0t : NULL, has_c0 ? &c0t : NULL,
                         has_p ? &pt : NULL};
    ep_tensor *outs[3] = {&yt[0], &yt[1], &yt[2]};
    ep_op op = {.params = &p, .in = ins, .out = outs, .n_in = (uint16_t)(lstm ? 8 : 6), .n_out = (uint16_t)(lstm ? 3 : 2),
                .opcode = (uint16_t)(lstm ? EP_OP_LSTM : EP_OP_GRU)};
    ep_shape sh[3];
    uint64_t scratch = 0;
    char what[200];
    snprintf(what, sizeof(what), "%s T%lld B%lld I%lld H%lld dir%d layout%d lbr%d clip%g sl%d h0%d c0%d P%d",
             lstm ? "lstm" : "gru", (long long)T, (long long)B, (long long)I, (long long)H, p.direction, p.layout,
             p.linear_before_reset, p.clip, has_sl, has_h0, has_c0, has_p);
    CHECK((lstm ? ep_shape_lstm(&op, sh, &scratch) : ep_shape_gru(&op, sh, &scratch)) == EP_OK, "%s: shape", what);
    CHECK(scratch == (uint64_t)(2 + G) * H * 4, "%s: scratch %llu", what, (unsigned long long)scratch);
    const int64_t ny[3] = {T * D * B * H, D * B * H, D * B * H};
    gbuf want[3] = {galloc(ny[0]), galloc(ny[1]), galloc(ny[2])};
    for (int i = 0; i < 3; i++) yt[i].data = want[i].p;
    uint8_t *sbuf = malloc((size_t)scratch);
    op.scratch = sbuf, op.scratch_size = scratch;
    CHECK((lstm ? ep_ref_lstm_f32(&op) : ep_ref_gru_f32(&op)) == EP_OK, "%s: ref", what);
    free(sbuf);
    if (have_x86) {
        float *wv[3] = {want[0].p, want[1].p, want[2].p};
        double m = 0;
        for (int i = 0; i < op.n_out; i++) m = fmax(m, max_abs(want[i].p, ny[i]));
        const double tol = 1e-5 * m + 4e-7 * (double)(I + H) * sqrt((double)T) + 1e-6;
        /* minimum scratch (per-step projection), one projected step, a partial chunk, all T steps */
        const uint64_t extra[4] = {0, (uint64_t)GH * 4, (uint64_t)GH * 4 * (uint64_t)rint_in(1, (int)T), (uint64_t)GH * 4 * (uint64_t)T + 12};
        for (int e = 0; e < 4; e++) {
            op.scratch_size = scratch + extra[e];
            char w2[240];
            snprintf(w2, sizeof(w2), "%s scratch+%llu", what, (unsigned long long)extra[e]);
            run_cmp(w2, lstm ? ep_x86_lstm_f32 : ep_x86_gru_f32, &op, wv, ny, CMP_CLOSE, tol, NULL);
        }
        /* a bad sequence length fails the run before anything is written */
        if (has_sl) {
            sl[B - 1] = (int32_t)T + 1;
            op.scratch_size = scratch;
            uint8_t *s2 = malloc((size_t)scratch);
            op.scratch = s2;
            CHECK((lstm ? ep_x86_lstm_f32(&op) : ep_x86_gru_f32(&op)) == EP_ERR_RUN_INDEX, "%s: seq_len > T accepted", what);
            free(s2);
        }
    }
    for (int i = 0; i < 3; i++) free(want[i].base);
    free(x), free(w), free(rr), free(bb), free(h0), free(c0), free(pp);
}

/* ---------------- CONV_TRANSPOSE2D variant PACKED (polyphase; conv_transpose_packed.h) ----------------
 * Random 2-D and 1-D (H = 1) shapes, strides 1..4 and HiFi-GAN's (kernel 2s, pad s/2, s = 2, 4, 8),
 * dilation, output_padding, odd extents, bias, activations. The weights are packed here from the
 * layout's definition in plan_format.h (an implementation independent of select.py). The reference
 * kernel of the variant must equal variant 0 bit for bit (same sums in the same order; the padded taps
 * add +-0); the AVX2 kernel within the usual tolerance. groups != 1 is refused by the shape function. */

static int ct_taps_of(int k, int s, int d) { return d >= s ? k : (k - 1) * d / s + 1; }

/* W[C, M, KH, KW] -> [ceil(R/NR)][K][NR], R = M*sh*sw, K = C*TH*TW */
static void pack_conv_transpose(float *dst, const float *w, int C, int M, int KH, int KW,
                                const ep_conv_transpose2d_params *p) {
    const int sh = p->stride[0], sw = p->stride[1], dh = p->dilation[0], dw = p->dilation[1];
    const int TH = ct_taps_of(KH, sh, dh), TW = ct_taps_of(KW, sw, dw);
    const int64_t K = (int64_t)C * TH * TW, R = (int64_t)M * sh * sw, strips = (R + EP_PACK_NR - 1) / EP_PACK_NR;
    memset(dst, 0, sizeof(float) * (size_t)(strips * K * EP_PACK_NR));
    for (int c = 0; c < C; c++)
        for (int m = 0; m < M; m++)
            for (int kh = 0; kh < KH; kh++)
                for (int kw = 0; kw < KW; kw++) {
                    const int jh = dh >= sh ? kh : kh * dh / sh, jw = dw >= sw ? kw : kw * dw / sw;
                    const int64_t k = ((int64_t)c * TH + jh) * TW + jw;
                    const int64_t r = ((int64_t)m * sh + kh * dh % sh) * sw + kw * dw % sw;
                    dst[((r / EP_PACK_NR) * K + k) * EP_PACK_NR + r % EP_PACK_NR] =
                        w[(((int64_t)c * M + m) * KH + kh) * KW + kw];
                }
}

static void conv_transpose_case(int iter, int have_x86) {
    ep_conv_transpose2d_params p;
    memset(&p, 0, sizeof(p));
    const int kind = iter % 4;   /* 0: HiFi-GAN 1-D, 1: other 1-D, 2-3: 2-D */
    const int N = rint_in(1, 2), C = rint_in(1, iter % 7 == 0 ? 70 : 12), M = rint_in(1, iter % 5 == 0 ? 40 : 13);
    int H, W;
    if (kind == 0) {
        static const int rates[3] = {2, 4, 8};
        const int s = rates[rnd() % 3];
        p.kernel[0] = 1, p.kernel[1] = 2 * s;
        p.stride[0] = 1, p.stride[1] = s;
        p.dilation[0] = p.dilation[1] = 1;
        p.pads[1] = p.pads[3] = s / 2;
        H = 1, W = rint_in(1, iter % 3 == 0 ? 80 : 20);
    } else {
        for (int i = 0; i < 2; i++) {
            p.kernel[i] = rint_in(1, 5);
            p.stride[i] = rint_in(1, 4);
            p.dilation[i] = rnd() % 3 ? 1 : rint_in(2, 3);
            const int lim = p.stride[i] > p.dilation[i] ? p.stride[i] : p.dilation[i];
            p.output_padding[i] = rnd() % 3 ? 0 : rint_in(0, lim - 1);
            p.pads[i] = rint_in(0, 2), p.pads[i + 2] = rint_in(0, 2);
        }
        if (kind == 1) p.kernel[0] = 1, p.stride[0] = 1, p.dilation[0] = 1, p.output_padding[0] = 0, p.pads[0] = p.pads[2] = 0;
        H = kind == 1 ? 1 : rint_in(1, 13), W = rint_in(1, kind == 1 ? 50 : 17);
    }
    p.groups = 1;
    p.act = random_act(&p.act_alpha, &p.act_beta);
    const int KH = p.kernel[0], KW = p.kernel[1];
    const int OH = (H - 1) * p.stride[0] - p.pads[0] - p.pads[2] + (KH - 1) * p.dilation[0] + 1 + p.output_padding[0];
    const int OW = (W - 1) * p.stride[1] - p.pads[1] - p.pads[3] + (KW - 1) * p.dilation[1] + 1 + p.output_padding[1];
    if (OH < 1 || OW < 1) return;
    const int has_b = rnd() & 1;
    const int TH = ct_taps_of(KH, p.stride[0], p.dilation[0]), TW = ct_taps_of(KW, p.stride[1], p.dilation[1]);
    const int K = C * TH * TW, R = M * p.stride[0] * p.stride[1], strips = (R + EP_PACK_NR - 1) / EP_PACK_NR;
    const int64_t nx = (int64_t)N * C * H * W, nw = (int64_t)C * M * KH * KW, ny = (int64_t)N * M * OH * OW;
    float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw);
    float *b = malloc(sizeof(float) * (size_t)M), *wp = malloc(sizeof(float) * (size_t)strips * K * EP_PACK_NR);
    for (int64_t i = 0; i < nx; i++) x[i] = rfloat();
    for (int64_t i = 0; i < nw; i++) w[i] = rfloat();
    for (int i = 0; i < M; i++) b[i] = rfloat();
    pack_conv_transpose(wp, w, C, M, KH, KW, &p);

    ep_tensor xt = mk(x, 4, (int32_t[]){N, C, H, W}), wt = mk(w, 4, (int32_t[]){C, M, KH, KW});
    ep_tensor wpt = mk(wp, 3, (int32_t[]){strips, K, EP_PACK_NR});
    ep_tensor bt = mk(b, 1, (int32_t[]){M}), yt = mk(NULL, 4, (int32_t[]){N, M, OH, OW});
    ep_tensor *ins[3] = {&xt, &wt, has_b ? &bt : NULL};
    ep_tensor *outs[1] = {&yt};
    ep_op op = {.params = &p, .in = ins, .out = outs, .n_in = 3, .n_out = 1, .opcode = EP_OP_CONV_TRANSPOSE2D};
    gbuf want = galloc(ny);
    yt.data = want.p;
    ep_shape sh;
    uint64_t scratch = 0;
    CHECK(ep_shape_conv_transpose2d(&op, &sh, &scratch) == EP_OK, "conv_transpose variant 0 shape");
    CHECK(sh.dims[2] == OH && sh.dims[3] == OW, "conv_transpose variant 0 out shape");
    CHECK(ep_ref_conv_transpose2d_f32(&op) == EP_OK && guards_ok(&want), "conv_transpose variant 0 ref");

    char what[200];
    snprintf(what, sizeof(what), "conv_transpose N%d C%d M%d %dx%d k%dx%d s%d,%d d%d,%d p%d,%d,%d,%d op%d,%d act%d b%d",
             N, C, M, H, W, KH, KW, p.stride[0], p.stride[1], p.dilation[0], p.dilation[1], p.pads[0], p.pads[1],
             p.pads[2], p.pads[3], p.output_padding[0], p.output_padding[1], p.act, has_b);
    ins[1] = &wpt;
    op.variant = EP_CONV_TRANSPOSE2D_VARIANT_PACKED;
    CHECK(ep_shape_conv_transpose2d(&op, &sh, &scratch) == EP_OK, "%s: packed shape", what);
    CHECK(scratch == (uint64_t)K * EP_PACK_MR * 4, "%s: packed scratch %llu", what, (unsigned long long)scratch);
    CHECK(sh.dims[1] == M && sh.dims[2] == OH && sh.dims[3] == OW, "%s: packed out shape", what);
    const uint64_t more = scratch * (uint64_t)rint_in(1, 40);
    const int64_t terms = (int64_t)C * KH * KW;
    run_variant(what, ep_ref_conv_transpose2d_packed_f32, &op, scratch, 0, want.p, ny, terms);
    run_variant(what, ep_ref_conv_transpose2d_packed_f32, &op, scratch, more, want.p, ny, terms);
    {   /* the reference variant is variant 0 bit for bit */
        gbuf got = galloc(ny);
        uint8_t *s = malloc((size_t)scratch + 4);
        ep_tensor yg = yt;
        yg.data = got.p;
        ep_tensor *o2[1] = {&yg};
        ep_op o = op;
        o.out = o2, o.scratch = s, o.scratch_size = scratch;
        CHECK(ep_ref_conv_transpose2d_packed_f32(&o) == EP_OK && memcmp(got.p, want.p, (size_t)ny * 4) == 0,
              "%s: ref packed differs from variant 0 in bits", what);
        free(s);
        free(got.base);
    }
    if (have_x86) {
        run_variant(what, ep_x86_conv_transpose2d_packed_f32, &op, scratch, 0, want.p, ny, terms);
        run_variant(what, ep_x86_conv_transpose2d_packed_f32, &op, scratch, more, want.p, ny, terms);
    }
    /* hostile plans: wrongly shaped packed weights, plain weights, groups 2 */
    ep_tensor bad = wpt;
    ins[1] = &bad;
    bad.dims[1] = K + 1;
    CHECK(ep_shape_conv_transpose2d(&op, &sh, &scratch) != EP_OK, "%s: K+1 accepted", what);
    bad.dims[1] = K, bad.dims[0] = strips + 1;
    CHECK(ep_shape_conv_transpose2d(&op, &sh, &scratch) != EP_OK, "%s: extra strip accepted", what);
    bad.dims[0] = strips, bad.dims[2] = EP_PACK_NR - 1;
    CHECK(ep_shape_conv_transpose2d(&op, &sh, &scratch) != EP_OK, "%s: NR-1 accepted", what);
    ins[1] = &wt;
    CHECK(ep_shape_conv_transpose2d(&op, &sh, &scratch) != EP_OK, "%s: plain weights accepted as packed", what);
    ins[1] = &wpt;
    p.groups = 2;
    CHECK(ep_shape_conv_transpose2d(&op, &sh, &scratch) != EP_OK, "%s: groups 2 accepted", what);
    p.groups = 1;
    op.variant = 2;
    CHECK(ep_shape_conv_transpose2d(&op, &sh, &scratch) != EP_OK, "%s: unknown variant accepted", what);
    free(want.base);
    free(x), free(w), free(b), free(wp);
}

int main(int argc, char **argv) {
    const int iters = argc > 1 ? atoi(argv[1]) : 300;
    const uint64_t need = EP_CPU_AVX2 | EP_CPU_FMA;
    const int have_x86 = (ep_cpu_features() & need) == need;
    printf("x86 kernels: %s\n", have_x86 ? "AVX2+FMA present, checked" : "CPU lacks AVX2+FMA, reference variants only");
    printf("threads: %u (the variants are checked again on them)\n", ep_pool_start(&g_pool, 3));
    g_pool.min_work = 0;
    for (int i = 0; i < iters; i++) {
        conv_case(i, have_x86, 0);
        conv_case(i, have_x86, 1);
        gemm_case(i, have_x86);
        winograd_case(i, have_x86);
        unary_case(i, have_x86);
        binary_case(i, have_x86);
        int_binary_case(i, have_x86);
        matmul_case(i, have_x86);
        softmax_case(i, have_x86);
        layernorm_case(i, have_x86);
        pool_case(i, have_x86, 1);
        pool_case(i, have_x86, 0);
        rnn_case(i, have_x86, 1);
        rnn_case(i, have_x86, 0);
        conv_transpose_case(i, have_x86);
    }
    ep_pool_stop(&g_pool);
    printf("%d checks passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
