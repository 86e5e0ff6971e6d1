/* Standalone test of the CONV2D, CONV_TRANSPOSE2D, GEMM, MATMUL, MAXPOOL, AVGPOOL and
 * GLOBAL_AVGPOOL shape functions and reference kernels.
 *
 * (a) Known answers: hand-computed cases (the AVGPOOL ones are onnxruntime 1.32's
 *     outputs), then seeded random shapes checked against naive loops written here
 *     (double accumulation, gather form), with guard cells around every output.
 * (b) Every shape function rejects bad plans with the documented EP_ERR_PLAN_* code.
 * (c) Random parameter bytes and tensor shapes never crash a shape function; whatever
 *     it accepts is then run through the kernel on buffers sized exactly (ASan).
 *
 * Build (from the repo root):
 *   cc -std=c11 -Iruntime_c -Iruntime_c/include -Iruntime_c/kernels tests/c/test_ref_linear.c \
 *      runtime_c/src/ops/{conv2d,conv_transpose2d,gemm,matmul,pool}.c \
 *      runtime_c/kernels/ref/{conv2d,conv_transpose2d,gemm,matmul,pool}_f32.c \
 *      runtime_c/kernels/ref/act.c -lm
 * or, without act.c, add -DEP_TEST_ACT_STUB for a local NONE/RELU/CLIP/LEAKY_RELU stub. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "ep_check.h"

#ifdef EP_TEST_ACT_STUB
float ep_act_f32(int kind, float x, float alpha, float beta) {
    switch (kind) {
    case EP_ACT_RELU: return x < 0.0f ? 0.0f : x;
    case EP_ACT_CLIP: return x < alpha ? alpha : (x > beta ? beta : x);
    case EP_ACT_LEAKY_RELU: return x < 0.0f ? alpha * x : x;
    default: return x;
    }
}
void ep_act_apply_f32(int kind, float *x, int64_t n, float alpha, float beta) {
    for (int64_t i = 0; i < n; i++) x[i] = ep_act_f32(kind, x[i], alpha, beta);
}
#endif

/* ---- buffers and tensors ---- */
#define CAP (1 << 16)
#define GUARD 16
#define SENTINEL 12345.5f
static float buf_x[CAP], buf_w[CAP], buf_b[CAP], buf_r[CAP], buf_y[CAP + 2 * GUARD], buf_e[CAP];

static ep_tensor t4(float *d, int a, int b, int c, int e) { return chk_mk(d, EP_DTYPE_F32, 4, (int32_t[4]){a, b, c, e}); }
static ep_tensor t2(float *d, int a, int b) { return chk_mk(d, EP_DTYPE_F32, 2, (int32_t[2]){a, b}); }
static ep_tensor t1(float *d, int a) { return chk_mk(d, EP_DTYPE_F32, 1, &a); }

static void fill_rand(float *p, int64_t n) {
    for (int64_t i = 0; i < n; i++) p[i] = chk_float();
}

/* Runs shape fn + kernel on op (whose out[0] has the expected dims and data == buf_y+GUARD),
 * compares with buf_e. The case is named by a printf format. */
static void run_and_compare(const ep_op *op, ep_shape_fn shape, ep_kernel_fn kern, const char *fmt, ...) {
    char what[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    ep_shape s;
    uint64_t scratch = 99;
    memset(&s, 0xA5, sizeof s);
    int rc = shape(op, &s, &scratch);
    CHECK(rc == EP_OK, "%s: shape rc %d", what, rc);
    if (rc != EP_OK) return;
    const ep_tensor *y = op->out[0];
    int same = s.rank == y->rank && s.dtype == EP_DTYPE_F32 && scratch == 0;
    for (int i = 0; i < s.rank && same; i++) same = s.dims[i] == y->dims[i];
    CHECK(same, "%s: shape mismatch", what);
    if (!same) return;
    const int64_t n = ep_numel(y);
    for (int64_t i = 0; i < n + 2 * GUARD; i++) buf_y[i] = SENTINEL;
    CHECK(kern(op) == EP_OK, "%s: kernel rc", what);
    int guards = 1;
    for (int i = 0; i < GUARD; i++)
        guards &= buf_y[i] == SENTINEL && buf_y[GUARD + n + i] == SENTINEL;
    CHECK(guards, "%s: guard cells overwritten", what);
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++) {
        const float a = buf_y[GUARD + i], e = buf_e[i];
        if (!(fabsf(a - e) <= 1e-4f * (1.0f + fabsf(e)))) bad = i;
    }
    CHECK(bad < 0, "%s: element %lld got %g want %g", what, (long long)bad,
          bad >= 0 ? buf_y[GUARD + bad] : 0.0, bad >= 0 ? buf_e[bad] : 0.0);
}

static int pick_act(float *alpha, float *beta) {
    static const int acts[] = {EP_ACT_NONE, EP_ACT_RELU, EP_ACT_CLIP, EP_ACT_LEAKY_RELU};
    *alpha = -0.5f;
    *beta = 0.25f;
    const int a = acts[chk_rnd() % 4];
    if (a == EP_ACT_LEAKY_RELU) *alpha = 0.1f;
    return a;
}

/* ================= CONV2D ================= */
/* Naive double sums into buf_e, one output element at a time, in the gather form of both ops:
 *   conv2d (W[M, C/G, KH, KW]): input ih = oh*s - pad + k*d;
 *   conv_transpose2d (W[C, M/G, KH, KW]): oh = ih*s - pad + k*d, so ih = (oh + pad - k*d) / s where it divides.
 * Then + B[m], + R (conv2d), act. */
typedef struct naive_geo {
    int transpose, KH, KW, stride[2], dilation[2], pads[2], groups, act;
    float alpha, beta;
} naive_geo;

static int naive_tap(const naive_geo *g, int axis, int o, int k, int in) {   /* the input index, or -1 */
    if (!g->transpose) {
        const int i = o * g->stride[axis] - g->pads[axis] + k * g->dilation[axis];
        return i >= 0 && i < in ? i : -1;
    }
    const int t = o + g->pads[axis] - k * g->dilation[axis];
    return t >= 0 && t % g->stride[axis] == 0 && t / g->stride[axis] < in ? t / g->stride[axis] : -1;
}

static void naive_conv(const naive_geo *g, int N, int C, int H, int W, int M, int OH, int OW, int has_b, int has_r) {
    const int KH = g->KH, KW = g->KW, CG = C / g->groups, MG = M / g->groups;
    for (int64_t o = 0; o < (int64_t)N * M * OH * OW; o++) {
        const int ow = (int)(o % OW), oh = (int)(o / OW % OH), m = (int)(o / OW / OH % M), n = (int)(o / OW / OH / M);
        double acc = 0.0;
        for (int c = 0; c < CG; c++)
            for (int kh = 0; kh < KH; kh++)
                for (int kw = 0; kw < KW; kw++) {
                    const int ih = naive_tap(g, 0, oh, kh, H), iw = naive_tap(g, 1, ow, kw, W), ci = (m / MG) * CG + c;
                    if (ih < 0 || iw < 0) continue;
                    const int wi = g->transpose ? ((ci * MG + m % MG) * KH + kh) * KW + kw : ((m * CG + c) * KH + kh) * KW + kw;
                    acc += (double)buf_x[((n * C + ci) * H + ih) * W + iw] * buf_w[wi];
                }
        float v = (float)acc;
        if (has_b) v += buf_b[m];
        if (has_r) v += buf_r[o];
        buf_e[o] = ep_act_f32(g->act, v, g->alpha, g->beta);
    }
}
static void naive_conv2d(const ep_conv2d_params *p, int N, int C, int H, int W, int M, int OH, int OW, int has_b,
                         int has_r) {
    const naive_geo g = {0, p->kernel[0], p->kernel[1], {p->stride[0], p->stride[1]}, {p->dilation[0], p->dilation[1]},
                         {p->pads[0], p->pads[1]}, p->groups, p->act, p->act_alpha, p->act_beta};
    naive_conv(&g, N, C, H, W, M, OH, OW, has_b, has_r);
}

static void test_conv2d_known(void) {
    /* 1x1x3x3 input 1..9, 2x2 ones kernel, stride 1, pads 0 -> 2x2 window sums, +bias 1 */
    for (int i = 0; i < 9; i++) buf_x[i] = (float)(i + 1);
    for (int i = 0; i < 4; i++) buf_w[i] = 1.0f;
    buf_b[0] = 1.0f;
    ep_tensor x = t4(buf_x, 1, 1, 3, 3), w = t4(buf_w, 1, 1, 2, 2), b = t1(buf_b, 1);
    ep_tensor y = t4(buf_y + GUARD, 1, 1, 2, 2);
    ep_tensor *in[3] = {&x, &w, &b}, *out[1] = {&y};
    ep_conv2d_params p = {{2, 2}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, EP_ACT_NONE, 0, 0};
    ep_op op = chk_op(EP_OP_CONV2D, &p, in, 3, out, 1);
    const float want[4] = {13, 17, 25, 29};
    memcpy(buf_e, want, sizeof want);
    run_and_compare(&op, ep_shape_conv2d, ep_ref_conv2d_f32, "conv2d known");
}

static void test_conv2d_random(int iters) {
    for (int it = 0; it < iters; it++) {
        ep_conv2d_params p = {0};
        const int kind = it % 4; /* 0 plain, 1 grouped, 2 depthwise, 3 depthwise multiplier 2 */
        const int G = kind == 0 ? 1 : chk_int(2, 4);
        const int CG = kind >= 2 ? 1 : chk_int(1, 3), MG = kind == 2 ? 1 : (kind == 3 ? 2 : chk_int(1, 3));
        const int N = chk_int(1, 2), C = G * CG, M = G * MG, H = chk_int(1, 9), W = chk_int(1, 9);
        for (int i = 0; i < 2; i++) p.kernel[i] = chk_int(1, 3), p.stride[i] = chk_int(1, 3), p.dilation[i] = chk_int(1, 2);
        for (int i = 0; i < 4; i++) p.pads[i] = chk_int(0, 2);
        p.groups = G;
        p.act = pick_act(&p.act_alpha, &p.act_beta);
        const int OH = (H + p.pads[0] + p.pads[2] - ((p.kernel[0] - 1) * p.dilation[0] + 1));
        const int OW = (W + p.pads[1] + p.pads[3] - ((p.kernel[1] - 1) * p.dilation[1] + 1));
        if (OH < 0 || OW < 0) { it--; continue; }
        const int oh = OH / p.stride[0] + 1, ow = OW / p.stride[1] + 1;
        const int has_b = chk_rnd() & 1, has_r = chk_rnd() & 1;
        fill_rand(buf_x, N * C * H * W);
        fill_rand(buf_w, M * CG * p.kernel[0] * p.kernel[1]);
        fill_rand(buf_b, M);
        fill_rand(buf_r, N * M * oh * ow);
        ep_tensor x = t4(buf_x, N, C, H, W), w = t4(buf_w, M, CG, p.kernel[0], p.kernel[1]);
        ep_tensor b = t1(buf_b, M), r = t4(buf_r, N, M, oh, ow), y = t4(buf_y + GUARD, N, M, oh, ow);
        ep_tensor *in[4] = {&x, &w, has_b ? &b : NULL, &r}, *out[1] = {&y};
        ep_op op = chk_op(EP_OP_CONV2D, &p, in, has_r ? 4 : 3, out, 1);
        naive_conv2d(&p, N, C, H, W, M, oh, ow, has_b, has_r);
        run_and_compare(&op, ep_shape_conv2d, ep_ref_conv2d_f32, "conv2d random %d", it);
    }
}

/* ================= CONV_TRANSPOSE2D ================= */
static void naive_convt(const ep_conv_transpose2d_params *p, int N, int C, int H, int W, int M, int OH, int OW,
                        int has_b) {
    const naive_geo g = {1, p->kernel[0], p->kernel[1], {p->stride[0], p->stride[1]}, {p->dilation[0], p->dilation[1]},
                         {p->pads[0], p->pads[1]}, p->groups, p->act, p->act_alpha, p->act_beta};
    naive_conv(&g, N, C, H, W, M, OH, OW, has_b, 0);
}

static void test_convt_random(int iters) {
    for (int it = 0; it < iters; it++) {
        ep_conv_transpose2d_params p = {0};
        const int G = it % 3 == 0 ? 1 : chk_int(2, 3), CG = chk_int(1, 3), MG = chk_int(1, 3);
        const int N = chk_int(1, 2), C = G * CG, M = G * MG, H = chk_int(1, 6), W = chk_int(1, 6);
        for (int i = 0; i < 2; i++) {
            p.kernel[i] = chk_int(1, 3), p.stride[i] = chk_int(1, 3), p.dilation[i] = chk_int(1, 2);
            const int lim = p.stride[i] > p.dilation[i] ? p.stride[i] : p.dilation[i];
            p.output_padding[i] = chk_int(0, lim - 1);
        }
        for (int i = 0; i < 4; i++) p.pads[i] = chk_int(0, 2);
        const int oh = (H - 1) * p.stride[0] - p.pads[0] - p.pads[2] + (p.kernel[0] - 1) * p.dilation[0] + 1 + p.output_padding[0];
        const int ow = (W - 1) * p.stride[1] - p.pads[1] - p.pads[3] + (p.kernel[1] - 1) * p.dilation[1] + 1 + p.output_padding[1];
        if (oh < 0 || ow < 0) { it--; continue; }
        p.groups = G;
        p.act = pick_act(&p.act_alpha, &p.act_beta);
        const int has_b = chk_rnd() & 1;
        fill_rand(buf_x, N * C * H * W);
        fill_rand(buf_w, C * MG * p.kernel[0] * p.kernel[1]);
        fill_rand(buf_b, M);
        ep_tensor x = t4(buf_x, N, C, H, W), w = t4(buf_w, C, MG, p.kernel[0], p.kernel[1]);
        ep_tensor b = t1(buf_b, M), y = t4(buf_y + GUARD, N, M, oh, ow);
        ep_tensor *in[3] = {&x, &w, &b}, *out[1] = {&y};
        ep_op op = chk_op(EP_OP_CONV_TRANSPOSE2D, &p, in, has_b ? 3 : 2, out, 1);
        naive_convt(&p, N, C, H, W, M, oh, ow, has_b);
        run_and_compare(&op, ep_shape_conv_transpose2d, ep_ref_conv_transpose2d_f32, "conv_transpose2d random %d", it);
    }
}

/* ================= GEMM / MATMUL ================= */
static void test_gemm_random(int iters) {
    for (int it = 0; it < iters; it++) {
        ep_gemm_params p = {0};
        p.act = pick_act(&p.act_alpha, &p.act_beta);
        const int M = chk_int(0, 9), K = chk_int(0, 12), N = chk_int(0, 9);
        const int ckind = chk_int(0, 3); /* 0 none, 1 [N], 2 [1,N], 3 [M,N] */
        const int has_r = chk_rnd() & 1;
        fill_rand(buf_x, M * K);
        fill_rand(buf_w, K * N);
        fill_rand(buf_b, M * N);
        fill_rand(buf_r, M * N);
        ep_tensor a = t2(buf_x, M, K), b = t2(buf_w, K, N), r = t2(buf_r, M, N), y = t2(buf_y + GUARD, M, N);
        ep_tensor c = ckind == 1 ? t1(buf_b, N) : t2(buf_b, ckind == 2 ? 1 : M, N);
        ep_tensor *in[4] = {&a, &b, ckind ? &c : NULL, &r}, *out[1] = {&y};
        ep_op op = chk_op(EP_OP_GEMM, &p, in, has_r ? 4 : (ckind ? 3 : 2), out, 1);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double acc = 0.0;
                for (int k = 0; k < K; k++) acc += (double)buf_x[i * K + k] * buf_w[k * N + j];
                float v = (float)acc;
                if (ckind) v += buf_b[(ckind == 3 ? i * N : 0) + j];
                if (has_r) v += buf_r[i * N + j];
                buf_e[i * N + j] = ep_act_f32(p.act, v, p.act_alpha, p.act_beta);
            }
        run_and_compare(&op, ep_shape_gemm, ep_ref_gemm_f32, "gemm random %d (%dx%dx%d c%d)", it, M, K, N, ckind);
    }
}

static void test_matmul_random(int iters) {
    for (int it = 0; it < iters; it++) {
        ep_matmul_params p = {0, 0};
        const int ra = chk_int(2, 5), rb = chk_int(2, 5), ro = ra > rb ? ra : rb;
        const int M = chk_int(1, 5), K = chk_int(0, 6), N = chk_int(1, 5);
        int32_t da[8], db[8], dy[8];
        for (int i = 0; i < ro - 2; i++) {
            /* each pair equal or one of them 1; now and then an empty batch */
            const int e = chk_rnd() % 8 == 0 ? 0 : chk_int(1, 3), ia = i - (ro - ra), ib = i - (ro - rb);
            const int ea = chk_rnd() % 3 == 0 ? 1 : e, eb = chk_rnd() % 3 == 0 ? 1 : e;
            if (ia >= 0) da[ia] = ea;
            if (ib >= 0) db[ib] = eb;
            const int xa = ia >= 0 ? ea : 1, xb = ib >= 0 ? eb : 1;
            dy[i] = xa == 1 ? xb : xa;
        }
        da[ra - 2] = M; da[ra - 1] = K;
        db[rb - 2] = K; db[rb - 1] = N;
        dy[ro - 2] = M; dy[ro - 1] = N;
        ep_tensor a = chk_mk(buf_x, EP_DTYPE_F32, ra, da), b = chk_mk(buf_w, EP_DTYPE_F32, rb, db);
        ep_tensor y = chk_mk(buf_y + GUARD, EP_DTYPE_F32, ro, dy);
        fill_rand(buf_x, ep_numel(&a));
        fill_rand(buf_w, ep_numel(&b));
        ep_tensor *in[2] = {&a, &b}, *out[1] = {&y};
        ep_op op = chk_op(EP_OP_MATMUL, &p, in, 2, out, 1);
        const int64_t total = ep_numel(&y);
        for (int64_t o = 0; o < total; o++) {
            int32_t idx[8];
            int64_t rem = o;
            for (int d = ro - 1; d >= 0; d--) { idx[d] = (int32_t)(rem % dy[d]); rem /= dy[d]; }
            int64_t oa = 0, ob = 0;
            for (int d = 0; d < ra - 2; d++) oa = oa * da[d] + (da[d] == 1 ? 0 : idx[d + ro - ra]);
            for (int d = 0; d < rb - 2; d++) ob = ob * db[d] + (db[d] == 1 ? 0 : idx[d + ro - rb]);
            const int i = idx[ro - 2], j = idx[ro - 1];
            double acc = 0.0;
            for (int k = 0; k < K; k++)
                acc += (double)buf_x[(oa * M + i) * K + k] * buf_w[(ob * K + k) * N + j];
            buf_e[o] = (float)acc;
        }
        run_and_compare(&op, ep_shape_matmul, ep_ref_matmul_f32, "matmul random %d (ranks %d,%d)", it, ra, rb);
    }
}

/* ================= pooling ================= */
static int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, int ceil_mode) {
    const int64_t span = in + pb + pe - ((k - 1) * d + 1);
    int64_t o = (int64_t)(ceil_mode ? ceil((double)span / s) : floor((double)span / s)) + 1;
    if (ceil_mode && o > 0 && (o - 1) * s >= in + pb) o--;
    return o;
}

static void naive_pool(const ep_pool_params *p, int is_max, int planes, int H, int W, int OH, int OW) {
    for (int pl = 0; pl < planes; pl++)
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++) {
                double sum = 0.0;
                float mx = -FLT_MAX;
                int valid = 0, padded = 0;
                for (int kh = 0; kh < p->kernel[0]; kh++)
                    for (int kw = 0; kw < p->kernel[1]; kw++) {
                        const int ih = oh * p->stride[0] - p->pads[0] + kh * p->dilation[0];
                        const int iw = ow * p->stride[1] - p->pads[1] + kw * p->dilation[1];
                        if (ih >= -p->pads[0] && ih < H + p->pads[2] && iw >= -p->pads[1] && iw < W + p->pads[3])
                            padded++;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                        const float v = buf_x[(pl * H + ih) * W + iw];
                        valid++;
                        sum += v;
                        if (v > mx) mx = v;
                    }
                const int cnt = p->count_include_pad ? padded : valid;
                buf_e[(pl * OH + oh) * OW + ow] = is_max ? mx : (cnt ? (float)(sum / cnt) : 0.0f);
            }
}

static void test_pool_known(void) {
    /* onnxruntime 1.32, X = ones[1,1,1,5], AveragePool count_include_pad=1, ceil_mode=1 */
    static const struct { int k, d, s, pb, pe, n; float want[5]; } cases[] = {
        {2, 2, 1, 1, 1, 5, {0.5f, 1, 1, 1, 0.5f}},
        {3, 2, 2, 1, 2, 3, {2.0f / 3, 2.0f / 3, 0.5f}},
        {2, 1, 2, 1, 0, 3, {0.5f, 1, 1}},
        {3, 2, 3, 1, 1, 2, {2.0f / 3, 1}},
        {4, 1, 3, 2, 1, 3, {0.5f, 1, 0.5f}},
    };
    for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++) {
        ep_pool_params p = {{1, cases[c].k}, {1, cases[c].s}, {1, cases[c].d}, {0, cases[c].pb, 0, cases[c].pe}, 1, 1};
        for (int i = 0; i < 5; i++) buf_x[i] = 1.0f;
        ep_tensor x = t4(buf_x, 1, 1, 1, 5), y = t4(buf_y + GUARD, 1, 1, 1, cases[c].n);
        ep_tensor *in[1] = {&x}, *out[1] = {&y};
        ep_op op = chk_op(EP_OP_AVGPOOL, &p, in, 1, out, 1);
        memcpy(buf_e, cases[c].want, sizeof cases[c].want);
        run_and_compare(&op, ep_shape_avgpool, ep_ref_avgpool_f32, "avgpool ort case %d", c);
    }
    /* maxpool 1..4, k 2 s 2 pad_end 1 ceil: onnxruntime gives 2 outputs (not ONNX's 3) */
    ep_pool_params p = {{1, 2}, {1, 2}, {1, 1}, {0, 0, 0, 1}, 0, 1};
    for (int i = 0; i < 4; i++) buf_x[i] = (float)(i + 1);
    ep_tensor x = t4(buf_x, 1, 1, 1, 4), y = t4(buf_y + GUARD, 1, 1, 1, 2);
    ep_tensor *in[1] = {&x}, *out[1] = {&y};
    ep_op op = chk_op(EP_OP_MAXPOOL, &p, in, 1, out, 1);
    buf_e[0] = 2, buf_e[1] = 4;
    run_and_compare(&op, ep_shape_maxpool, ep_ref_maxpool_f32, "maxpool ceil known");
}

static void test_pool_random(int iters) {
    for (int it = 0; it < iters; it++) {
        ep_pool_params p = {0};
        const int is_max = it & 1, planes_n = chk_int(1, 2), planes_c = chk_int(1, 3);
        const int H = chk_int(1, 9), W = chk_int(1, 9);
        for (int i = 0; i < 2; i++) { /* pads up to the window extent: some windows see no input */
            p.kernel[i] = chk_int(1, 4), p.stride[i] = chk_int(1, 3), p.dilation[i] = chk_int(1, 2);
            const int ext = (p.kernel[i] - 1) * p.dilation[i] + 1;
            p.pads[i] = chk_int(0, ext - (chk_rnd() % 4 != 0)), p.pads[i + 2] = chk_int(0, ext - (chk_rnd() % 4 != 0));
        }
        p.count_include_pad = chk_rnd() & 1;
        p.ceil_mode = chk_rnd() & 1;
        const int OH = (int)pool_out(H, p.kernel[0], p.stride[0], p.dilation[0], p.pads[0], p.pads[2], p.ceil_mode);
        const int OW = (int)pool_out(W, p.kernel[1], p.stride[1], p.dilation[1], p.pads[1], p.pads[3], p.ceil_mode);
        if (OH < 0 || OW < 0) { it--; continue; }
        fill_rand(buf_x, planes_n * planes_c * H * W);
        ep_tensor x = t4(buf_x, planes_n, planes_c, H, W), y = t4(buf_y + GUARD, planes_n, planes_c, OH, OW);
        ep_tensor *in[1] = {&x}, *out[1] = {&y};
        ep_op op = chk_op(is_max ? EP_OP_MAXPOOL : EP_OP_AVGPOOL, &p, in, 1, out, 1);
        naive_pool(&p, is_max, planes_n * planes_c, H, W, OH, OW);
        run_and_compare(&op, is_max ? ep_shape_maxpool : ep_shape_avgpool, is_max ? ep_ref_maxpool_f32 : ep_ref_avgpool_f32,
                        "%s random %d", is_max ? "maxpool" : "avgpool", it);
    }
}

static void test_global_avgpool_random(int iters) {
    for (int it = 0; it < iters; it++) {
        ep_global_pool_params p = {0, 0};
        const int rank = chk_int(3, 5);
        int32_t dx[8], dy[8];
        for (int i = 0; i < rank; i++) {
            dx[i] = chk_int(i < 2 ? 1 : 0, 5);
            if (i >= 2 && dx[i] == 0 && chk_rnd() % 4) dx[i] = 3; /* mostly non-empty slices */
            dy[i] = i < 2 ? dx[i] : 1;
        }
        ep_tensor x = chk_mk(buf_x, EP_DTYPE_F32, rank, dx), y = chk_mk(buf_y + GUARD, EP_DTYPE_F32, rank, dy);
        const int64_t planes = (int64_t)dx[0] * dx[1], size = ep_numel(&x) / planes;
        fill_rand(buf_x, ep_numel(&x));
        for (int64_t pl = 0; pl < planes; pl++) {
            double s = 0.0;
            for (int64_t i = 0; i < size; i++) s += buf_x[pl * size + i];
            buf_e[pl] = size ? (float)(s / size) : 0.0f;
        }
        ep_tensor *in[1] = {&x}, *out[1] = {&y};
        ep_op op = chk_op(EP_OP_GLOBAL_AVGPOOL, &p, in, 1, out, 1);
        run_and_compare(&op, ep_shape_global_avgpool, ep_ref_global_avgpool_f32, "global_avgpool random %d", it);
    }
}

/* ================= rejection of bad plans ================= */
typedef union any_params {
    ep_conv2d_params conv;
    ep_conv_transpose2d_params convt;
    ep_gemm_params gemm;
    ep_matmul_params mm;
    ep_pool_params pool;
    ep_global_pool_params gp;
} any_params;

typedef struct fixture {
    ep_tensor t[5]; /* t[0..3] inputs, t[4] the output */
    ep_tensor *in[5], *out[2];
    any_params p;
    int n_in, n_out;
    ep_shape s[2];
    int want_rank;          /* > 0: the shape an accepted case must produce */
    int32_t want[EP_MAX_RANK];
} fixture;

static void fx_init(fixture *f, int n_in) {
    memset(f, 0, sizeof *f);
    for (int i = 0; i < 4; i++) f->in[i] = i < n_in ? &f->t[i] : NULL;
    f->out[0] = &f->t[4];
    f->n_in = n_in;
    f->n_out = 1;
}
static void set_dims(ep_tensor *t, int rank, int a, int b, int c, int d) {
    const int32_t v[4] = {a, b, c, d};
    *t = chk_mk(NULL, EP_DTYPE_F32, rank, v);
}
static int fx_run(fixture *f, uint16_t opcode, ep_shape_fn fn) {
    ep_op op = chk_op(opcode, &f->p, f->in, f->n_in, f->out, f->n_out);
    uint64_t scratch = 0;
    return fn(&op, f->s, &scratch);
}
/* records the shape an accepted case must produce; returns EP_OK */
static int expect(fixture *f, int rank, int a, int b, int c, int d) {
    const int32_t v[5] = {a, b, c, d, 1};
    f->want_rank = rank;
    for (int i = 0; i < rank; i++) f->want[i] = v[i < 4 ? i : 4];
    return EP_OK;
}

#define OK EP_OK
#define E_OP EP_ERR_PLAN_OP
#define E_TEN EP_ERR_PLAN_TENSOR
#define E_PAR EP_ERR_PLAN_PARAMS
#define E_SHP EP_ERR_PLAN_SHAPE
#define END 1
#define BIG INT32_MAX

/* conv2d base: X[1,4,5,5] W[6,2,3,3] B[6] R[1,6,5,5], k3 s1 d1 pads 1, groups 2 */
static int conv_case(fixture *f, int k) {
    ep_conv2d_params *p = &f->p.conv;
    ep_tensor *x = &f->t[0], *w = &f->t[1], *b = &f->t[2], *r = &f->t[3];
    fx_init(f, 4);
    set_dims(x, 4, 1, 4, 5, 5); set_dims(w, 4, 6, 2, 3, 3); set_dims(b, 1, 6, 0, 0, 0); set_dims(r, 4, 1, 6, 5, 5);
    const ep_conv2d_params base = {{3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 2, EP_ACT_RELU, 0, 0};
    *p = base;
    switch (k) {
    case 0: return expect(f, 4, 1, 6, 5, 5);
    case 1: f->n_in = 1; return E_OP; case 2: f->n_in = 5; return E_OP;
    case 3: f->n_out = 0; return E_OP; case 4: f->n_out = 2; return E_OP;
    case 5: f->in[0] = NULL; return E_OP; case 6: f->in[1] = NULL; return E_OP;
    case 7: f->in[2] = NULL; return OK; case 8: f->n_in = 2; return OK;
    case 9: x->dtype = EP_DTYPE_I8; return E_TEN; case 10: w->dtype = EP_DTYPE_F16; return E_TEN;
    case 11: b->dtype = EP_DTYPE_I32; return E_TEN; case 12: r->dtype = EP_DTYPE_U8; return E_TEN;
    case 13: x->rank = 3; return E_SHP; case 14: w->rank = 5; w->dims[4] = 1; return E_SHP;
    case 15: b->rank = 2; b->dims[1] = 1; return E_SHP; case 16: w->dims[1] = 3; return E_SHP;
    case 17: w->dims[0] = 5; b->dims[0] = 5; r->dims[1] = 5; return E_SHP;
    case 18: x->dims[1] = 5; return E_SHP; case 19: p->groups = 3; return E_SHP;
    case 20: p->groups = 0; return E_PAR; case 21: p->groups = -2; return E_PAR;
    case 22: p->kernel[0] = 0; return E_PAR; case 23: p->kernel[1] = -1; return E_PAR;
    case 24: p->kernel[1] = 2; return E_SHP; case 25: p->stride[0] = 0; return E_PAR;
    case 26: p->stride[1] = BIG; return E_PAR; case 27: p->dilation[0] = 0; return E_PAR;
    case 28: p->dilation[1] = -3; return E_PAR; case 29: p->pads[2] = -1; return E_PAR;
    case 30: p->pads[3] = BIG; return E_PAR; case 31: p->act = -1; return E_PAR;
    case 32: p->act = EP_ACT_COUNT; return E_PAR; case 33: b->dims[0] = 5; return E_SHP;
    case 34: r->dims[3] = 4; return E_SHP; case 35: r->rank = 3; return E_SHP;
    case 36: set_dims(x, 4, 1, 4, 2, 2); set_dims(r, 4, 1, 6, 0, 0); memset(p->pads, 0, sizeof p->pads);
        return expect(f, 4, 1, 6, 0, 0);
    case 37: set_dims(x, 4, 1, 4, 2, 2); memset(p->pads, 0, sizeof p->pads); p->dilation[0] = 3; return E_SHP;
    case 38: set_dims(x, 4, 0, 4, BIG, BIG); f->n_in = 3; for (int i = 0; i < 4; i++) p->pads[i] = 1 << 20; return E_SHP;
    case 39: set_dims(x, 4, 0, 4, BIG - 10, 5); f->n_in = 3; return expect(f, 4, 0, 6, BIG - 10, 5);
    case 40: p->groups = 4; return E_SHP;
    case 41: p->stride[0] = p->stride[1] = 1 << 20; set_dims(r, 4, 1, 6, 1, 1); return OK;
    case 42: p->stride[0] = (1 << 20) + 1; return E_PAR;
    default: return END;
    }
}

/* conv_transpose2d base: X[1,4,3,3] W[4,3,3,3] B[6], k3 s2 d1 pads 1 out_pad 1, groups 2 -> Y[1,6,6,6] */
static int convt_case(fixture *f, int k) {
    ep_conv_transpose2d_params *p = &f->p.convt;
    ep_tensor *x = &f->t[0], *w = &f->t[1], *b = &f->t[2];
    fx_init(f, 3);
    set_dims(x, 4, 1, 4, 3, 3); set_dims(w, 4, 4, 3, 3, 3); set_dims(b, 1, 6, 0, 0, 0);
    const ep_conv_transpose2d_params base = {{3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2, EP_ACT_NONE, 0, 0};
    *p = base;
    switch (k) {
    case 0: return expect(f, 4, 1, 6, 6, 6);
    case 1: f->n_in = 4; return E_OP; case 2: f->n_in = 1; return E_OP;
    case 3: f->in[1] = NULL; return E_OP; case 4: f->in[2] = NULL; return OK;
    case 5: w->dtype = EP_DTYPE_I8; return E_TEN; case 6: x->rank = 5; return E_SHP;
    case 7: w->dims[0] = 3; return E_SHP; case 8: p->groups = 3; return E_SHP;
    case 9: p->groups = 0; return E_PAR; case 10: p->output_padding[0] = 2; return E_PAR;
    case 11: p->output_padding[1] = -1; return E_PAR;
    case 12: p->dilation[0] = 3; p->output_padding[0] = 2; return OK; case 13: b->dims[0] = 3; return E_SHP;
    case 14: p->kernel[0] = 2; return E_SHP; case 15: p->stride[1] = 0; return E_PAR;
    case 16: p->act = 99; return E_PAR;
    case 17: set_dims(x, 4, 1, 0, 3, 3); set_dims(w, 4, 0, 1 << 30, 3, 3); p->groups = 4; f->n_in = 2; return E_SHP;
    case 18: set_dims(x, 4, 0, 4, BIG, 3); return E_SHP;
    case 19: set_dims(x, 4, 1, 4, 1, 3); p->pads[0] = p->pads[2] = 3; return E_SHP;
    case 20: p->pads[0] = -1; return E_PAR;
    default: return END;
    }
}

/* gemm base: A[3,4] B[4,5] C[5] R[3,5] */
static int gemm_case(fixture *f, int k) {
    ep_gemm_params *p = &f->p.gemm;
    ep_tensor *a = &f->t[0], *b = &f->t[1], *c = &f->t[2], *r = &f->t[3];
    fx_init(f, 4);
    set_dims(a, 2, 3, 4, 0, 0); set_dims(b, 2, 4, 5, 0, 0); set_dims(c, 1, 5, 0, 0, 0); set_dims(r, 2, 3, 5, 0, 0);
    p->act = EP_ACT_CLIP;
    switch (k) {
    case 0: return expect(f, 2, 3, 5, 0, 0);
    case 1: f->n_in = 1; return E_OP; case 2: f->n_in = 5; return E_OP;
    case 3: f->in[0] = NULL; return E_OP; case 4: a->dtype = EP_DTYPE_I8; return E_TEN;
    case 5: c->dtype = EP_DTYPE_F16; return E_TEN; case 6: a->rank = 3; a->dims[2] = 1; return E_SHP;
    case 7: b->dims[0] = 3; return E_SHP; case 8: c->dims[0] = 6; return E_SHP;
    case 9: set_dims(c, 2, 1, 5, 0, 0); return OK; case 10: set_dims(c, 2, 3, 5, 0, 0); return OK;
    case 11: set_dims(c, 2, 2, 5, 0, 0); return E_SHP; case 12: set_dims(c, 3, 1, 3, 5, 0); return E_SHP;
    case 13: r->dims[1] = 4; return E_SHP; case 14: p->reserved = 1; return E_PAR;
    case 15: p->act = EP_ACT_COUNT; return E_PAR; case 16: f->n_out = 2; return E_OP;
    case 17: c->rank = 0; return E_SHP; case 18: f->in[2] = NULL; return OK;
    case 19: b->dtype = EP_DTYPE_I32; return E_TEN;
    default: return END;
    }
}

/* matmul base: A[2,3,4] B[4,5] -> [2,3,5] */
static int matmul_case(fixture *f, int k) {
    ep_matmul_params *p = &f->p.mm;
    ep_tensor *a = &f->t[0], *b = &f->t[1];
    fx_init(f, 2);
    set_dims(a, 3, 2, 3, 4, 0); set_dims(b, 2, 4, 5, 0, 0);
    switch (k) {
    case 0: return expect(f, 3, 2, 3, 5, 0);
    case 1: f->n_in = 3; return E_OP; case 2: f->n_in = 1; return E_OP;
    case 3: f->in[1] = NULL; return E_OP; case 4: set_dims(a, 1, 4, 0, 0, 0); return E_SHP;
    case 5: b->dims[0] = 3; return E_SHP; case 6: set_dims(b, 3, 3, 4, 5, 0); return E_SHP;
    case 7: p->reserved = 7; return E_PAR; case 8: p->reserved2 = -1; return E_PAR;
    case 9: b->dtype = EP_DTYPE_I32; return E_TEN;
    case 10: set_dims(a, 4, 2, 1, 3, 4); set_dims(b, 3, 5, 4, 6, 0); return expect(f, 4, 2, 5, 3, 6);
    case 11: set_dims(a, 3, 1, 3, 4, 0); set_dims(b, 3, 0, 4, 2, 0); return expect(f, 3, 0, 3, 2, 0);
    case 12: f->n_out = 0; return E_OP;
    case 13: set_dims(a, 2, 3, 4, 0, 0); set_dims(b, 4, 2, 2, 4, 5); return expect(f, 4, 2, 2, 3, 5);
    default: return END;
    }
}

/* pool base: X[1,2,6,6], k3 s2 d1 pads 1 -> Y[1,2,3,3] (floor) or [1,2,4,4] (ceil) */
static int pool_case(fixture *f, int k) {
    ep_pool_params *p = &f->p.pool;
    ep_tensor *x = &f->t[0], *y = &f->t[4];
    fx_init(f, 1);
    set_dims(x, 4, 1, 2, 6, 6); set_dims(y, 4, 1, 2, 3, 3);
    const ep_pool_params base = {{3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0, 0};
    *p = base;
    switch (k) {
    case 0: return expect(f, 4, 1, 2, 3, 3);
    case 1: f->n_in = 2; return E_OP; case 2: f->n_out = 2; return E_OP;
    case 3: f->out[0] = NULL; return E_OP; case 4: f->in[0] = NULL; return E_OP;
    case 5: x->dtype = EP_DTYPE_I8; return E_TEN; case 6: y->dtype = EP_DTYPE_I8; return E_TEN;
    case 7: x->rank = 3; return E_SHP; case 8: y->rank = 3; return E_SHP;
    /* the output extents are computed (the executor compares them with the plan's): a wrong declared
     * output still yields the true shape */
    case 9: y->dims[2] = 4; return expect(f, 4, 1, 2, 3, 3);
    case 10: p->ceil_mode = 1; set_dims(y, 4, 1, 2, 4, 4); return expect(f, 4, 1, 2, 4, 4);
    case 11: p->ceil_mode = 1; return expect(f, 4, 1, 2, 4, 4);
    case 12: y->dims[1] = 3; return expect(f, 4, 1, 2, 3, 3);
    case 13: p->kernel[1] = 0; return E_PAR; case 14: p->stride[0] = -1; return E_PAR;
    case 15: p->dilation[1] = 0; return E_PAR; case 16: p->pads[1] = -1; return E_PAR;
    case 17: p->pads[3] = (1 << 20) + 1; return E_PAR; case 18: p->count_include_pad = 2; return E_PAR;
    case 19: p->ceil_mode = -1; return E_PAR;
    case 20: case 21: {
        const ep_pool_params q = {{1, 2}, {1, 2}, {1, 1}, {0, 0, 0, 1}, 0, 1};
        *p = q;
        set_dims(x, 4, 1, 1, 1, 4);
        set_dims(y, 4, 1, 1, 1, k == 20 ? 2 : 3);
        return expect(f, 4, 1, 1, 1, 2);   /* the last window would start in the end padding */
    }
    case 22: {
        const ep_pool_params q = {{1, 1}, {1, 1}, {1, 1}, {1 << 20, 1 << 20, 1 << 20, 1 << 20}, 0, 0};
        *p = q;
        set_dims(x, 4, 0, 1, BIG, BIG);
        set_dims(y, 4, 0, 1, BIG, BIG);
        return E_SHP;
    }
    case 23: p->dilation[0] = p->dilation[1] = 4; set_dims(y, 4, 1, 2, 0, 0); return OK;
    case 24: p->kernel[0] = 1 << 21; return E_PAR; case 25: x->dims[0] = 2; return expect(f, 4, 2, 2, 3, 3);
    default: return END;
    }
}

/* global_avgpool base: X[2,3,4,5] -> [2,3,1,1] */
static int gpool_case(fixture *f, int k) {
    ep_tensor *x = &f->t[0];
    fx_init(f, 1);
    set_dims(x, 4, 2, 3, 4, 5);
    switch (k) {
    case 0: return expect(f, 4, 2, 3, 1, 1);
    case 1: x->rank = 2; return E_SHP; case 2: x->dtype = EP_DTYPE_I8; return E_TEN;
    case 3: f->p.gp.reserved = 1; return E_PAR; case 4: f->n_in = 2; return E_OP;
    case 5: f->in[0] = NULL; return E_OP;
    case 6: x->rank = 5; x->dims[4] = 2; return expect(f, 5, 2, 3, 1, 1);
    case 7: f->n_out = 2; return E_OP;
    default: return END;
    }
}

typedef int (*case_fn)(fixture *f, int k);
static void run_cases(const char *name, uint16_t opcode, ep_shape_fn fn, case_fn cases) {
    fixture f;
    for (int k = 0;; k++) {
        const int want = cases(&f, k);
        if (want == END) break;
        const int got = fx_run(&f, opcode, fn);
        CHECK(got == want, "%s case %d: got %d want %d", name, k, got, want);
        if (got != EP_OK || want != EP_OK || !f.want_rank) continue;
        int same = f.s[0].rank == f.want_rank && f.s[0].dtype == EP_DTYPE_F32;
        for (int i = 0; i < f.want_rank && same; i++) same = f.s[0].dims[i] == f.want[i];
        CHECK(same, "%s case %d: wrong output shape", name, k);
    }
}

static void test_reject(void) {
    run_cases("conv2d", EP_OP_CONV2D, ep_shape_conv2d, conv_case);
    run_cases("conv_transpose2d", EP_OP_CONV_TRANSPOSE2D, ep_shape_conv_transpose2d, convt_case);
    run_cases("gemm", EP_OP_GEMM, ep_shape_gemm, gemm_case);
    run_cases("matmul", EP_OP_MATMUL, ep_shape_matmul, matmul_case);
    run_cases("maxpool", EP_OP_MAXPOOL, ep_shape_maxpool, pool_case);
    run_cases("avgpool", EP_OP_AVGPOOL, ep_shape_avgpool, pool_case);
    run_cases("global_avgpool", EP_OP_GLOBAL_AVGPOOL, ep_shape_global_avgpool, gpool_case);
}

/* ================= fuzz: random plans never crash; accepted ones run ================= */
static int32_t fuzz_int(void) {
    switch (chk_rnd() % 8) {
    case 0: return (int32_t)(chk_rnd() << 8 ^ chk_rnd());
    case 1: return chk_rnd() & 1 ? INT32_MAX : INT32_MIN;
    case 2: return -(int32_t)(chk_rnd() % 4);
    case 3: return 1 << (chk_rnd() % 31);
    default: return (int32_t)(chk_rnd() % 5);
    }
}

static void fuzz_tensor(ep_tensor *t, float *buf, int64_t cap, int want_rank) {
    int32_t d[8] = {0};
    const int rank = chk_rnd() % 5 ? want_rank : (int)(chk_rnd() % 9);
    for (int i = 0; i < rank; i++) {
        const uint32_t c = chk_rnd() % 16;
        d[i] = c == 0 ? INT32_MAX : c == 1 ? (int32_t)(chk_rnd() % (1u << 24)) : (int32_t)(chk_rnd() % 6);
    }
    /* the executor guarantees numel * 4 <= capacity: zero an extent when too big */
    int64_t n = chk_numel(rank, d);
    if (n > cap) d[chk_rnd() % rank] = 0, n = 0;
    *t = chk_mk(buf + cap - n, chk_rnd() % 8 ? EP_DTYPE_F32 : (uint8_t)(chk_rnd() % 12), rank, d);
}

static void test_fuzz(int iters) {
    static const struct { uint16_t opcode; ep_shape_fn shape; ep_kernel_fn kern; int n_in, rank[4]; } ops[] = {
        {EP_OP_CONV2D, ep_shape_conv2d, ep_ref_conv2d_f32, 4, {4, 4, 1, 4}},
        {EP_OP_CONV_TRANSPOSE2D, ep_shape_conv_transpose2d, ep_ref_conv_transpose2d_f32, 3, {4, 4, 1, 0}},
        {EP_OP_GEMM, ep_shape_gemm, ep_ref_gemm_f32, 4, {2, 2, 1, 2}},
        {EP_OP_MATMUL, ep_shape_matmul, ep_ref_matmul_f32, 2, {3, 2, 0, 0}},
        {EP_OP_MAXPOOL, ep_shape_maxpool, ep_ref_maxpool_f32, 1, {4, 0, 0, 0}},
        {EP_OP_AVGPOOL, ep_shape_avgpool, ep_ref_avgpool_f32, 1, {4, 0, 0, 0}},
        {EP_OP_GLOBAL_AVGPOOL, ep_shape_global_avgpool, ep_ref_global_avgpool_f32, 1, {4, 0, 0, 0}},
    };
    float *bufs[4] = {buf_x, buf_w, buf_b, buf_r};
    int accepted = 0, ran = 0;
    for (int it = 0; it < iters; it++) {
        const int o = it % 7;
        fixture f;
        fx_init(&f, ops[o].n_in);
        for (int i = 0; i < 4; i++) fuzz_tensor(&f.t[i], bufs[i], CAP, ops[o].rank[i] ? ops[o].rank[i] : 2);
        int32_t *words = (int32_t *)&f.p;
        for (size_t i = 0; i < sizeof f.p / 4; i++) words[i] = fuzz_int();
        if (o == 4 || o == 5) { /* a plausible output extent now and then */
            ep_pool_params *p = &f.p.pool;
            for (int i = 0; i < 2; i++) {
                p->kernel[i] = chk_int(1, 3), p->stride[i] = chk_int(1, 3), p->dilation[i] = chk_int(1, 2);
                p->pads[i] = chk_int(0, 2), p->pads[i + 2] = chk_int(0, 2);
            }
            p->ceil_mode = chk_rnd() % 3 ? (int32_t)(chk_rnd() & 1) : fuzz_int();
            p->count_include_pad = chk_rnd() & 1;
        }
        fuzz_tensor(&f.t[4], buf_y, CAP + 2 * GUARD, 4);
        if ((o == 4 || o == 5) && f.t[0].rank == 4 && chk_rnd() % 4) { /* mostly the right output extent */
            const ep_pool_params *p = &f.p.pool;
            int32_t d[4] = {f.t[0].dims[0], f.t[0].dims[1], 0, 0};
            for (int i = 0; i < 2; i++) {
                const int64_t e = pool_out(f.t[0].dims[2 + i], p->kernel[i], p->stride[i], p->dilation[i],
                                           p->pads[i], p->pads[i + 2], p->ceil_mode == 1);
                d[2 + i] = e < 0 || e > CAP ? 0 : (int32_t)e;
            }
            const int64_t n = chk_numel(4, d);
            if (n <= CAP) f.t[4] = chk_mk(buf_y + CAP + 2 * GUARD - n, EP_DTYPE_F32, 4, d);
        }
        if (chk_rnd() % 8 == 0) f.n_in = (int)(chk_rnd() % 5);
        if (chk_rnd() % 16 == 0) f.n_out = (int)(chk_rnd() % 3);
        if (chk_rnd() % 8 == 0) f.in[chk_rnd() % 4] = NULL;
        ep_op op = chk_op(ops[o].opcode, &f.p, f.in, f.n_in, f.out, f.n_out);
        uint64_t scratch = 0;
        const int rc = ops[o].shape(&op, f.s, &scratch);
        if (rc != EP_OK) {
            CHECK(rc <= EP_ERR_PLAN_TRUNCATED && rc > EP_ERR_ARENA_TOO_SMALL, "fuzz %d: odd rc %d", it, rc);
            continue;
        }
        accepted++;
        int sane = f.s[0].rank <= EP_MAX_RANK && f.s[0].dtype == EP_DTYPE_F32 && scratch == 0;
        for (int i = 0; i < f.s[0].rank && i < EP_MAX_RANK; i++) sane &= f.s[0].dims[i] >= 0;
        CHECK(sane, "fuzz %d: accepted shape not sane", it);
        const int64_t n = sane ? chk_numel(f.s[0].rank, f.s[0].dims) : 0;
        if (!sane || n > CAP) continue;
        /* the executor would now bind an output of exactly this shape: run the kernel */
        f.t[4] = chk_mk(buf_y + CAP + 2 * GUARD - n, EP_DTYPE_F32, f.s[0].rank, f.s[0].dims);
        CHECK(ops[o].kern(&op) == EP_OK, "fuzz %d: kernel rc", it);
        ran++;
    }
    printf("fuzz: %d plans, %d accepted, %d run\n", iters, accepted, ran);
}

int main(void) {
    test_conv2d_known();
    test_conv2d_random(200);
    test_convt_random(120);
    test_gemm_random(80);
    test_matmul_random(80);
    test_pool_known();
    test_pool_random(300);
    test_global_avgpool_random(40);
    test_reject();
    test_fuzz(20000);
    printf("test_ref_linear: %d passed, %d failed\n", chk_n_pass, chk_n_fail);
    return chk_n_fail == 0 ? 0 : 1;
}
