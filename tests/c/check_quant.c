/* Kernel checks of the int8 family (QUANTIZE, DEQUANTIZE, QCONV2D variants DEFAULT, PACKED and DEPTHWISE, QGEMM
 * and DQGEMM variants DEFAULT and PACKED, QADD, QLUT): every table's kernel against the reference (tests/c/ep_check.h) on seeded
 * random shapes, and the SIMD requantisation helpers against ep_requant.
 *
 * Every int8 output is compared bit for bit (the accumulators are exact int32 sums and requantisation is integer
 * arithmetic, so there is no tolerance to state). Operands: inputs over the full int8 range -128..127, weights in
 * [-127, 127], biases up to +-2^28 (the shape function allows 2^30), random zero points, narrow and full clamp
 * bounds; per-channel (m, s) pairs mostly m in [2^30, 2^31), s in [32, 50] (multipliers 2^-20 .. 0.5), some s up
 * to 62, some channels with s < 32 (multipliers >= 0.5: the AVX2 kernels' scalar fallback), m = 0, and powers of
 * two (m = 2^30: ties of the rounding at every other accumulator parity). Shapes: K not a multiple of 4, M and N
 * not multiples of 8, groups > 1, depthwise 3x3 / 5x5 (and others) at strides 1 and 2 with pads and dilation.
 * The PACKED variants run on weights packed here from the layout's definition in plan_format.h and must equal
 * variant 0 on the plain weights; DEPTHWISE equals variant 0 too. The variants with scratch also run with more
 * than the minimum (whole multiples of one panel, and an odd byte count that is not one).
 * QUANTIZE: NaN, +-inf, +-0, denormals, values far past the range, ties x / scale = k + 0.5 (power-of-two scales,
 * where the division is exact), U8 and I8. DEQUANTIZE: every code of I8 and U8.
 * QADD: every pair of codes once, then random codes (full range, the extremes only, near the zero points) with
 * input shifts over [31, 62] (multipliers 0, 2^31 - 1, powers of two), output shifts over [1, 62] (some below 32:
 * the AVX2 scalar fallback), in place on A and on B; the shape function refuses shifts past its limits.
 * QLUT: every code once, then random codes through random, monotone and identity tables, in place.
 * Requantisation unit check: 2^20 (acc, m, s) triples per helper, including ties and acc = +-(2^31 - 1).
 * DQGEMM (dynamic int8): its float epilogue after the exact products, bit for bit, every fused activation. */
#define EP_CHECK_KERNELS
#include "ep_check.h"
#include "quant_common.h"

#if defined(__x86_64__) && __has_include("x86/quant_x86.h")
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include "x86/quant_x86.h"
#define QC_HAVE_X86 1
#pragma GCC pop_options
#elif defined(__aarch64__) && __has_include("neon/quant_neon.h")
#include "neon/quant_neon.h"
#define QC_HAVE_NEON 1
#endif

/* ---------------- operands ---------------- */
static ep_tensor qc_i8(int rank, const int32_t *dims, int lo, int hi) {
    ep_tensor t = chk_mk(NULL, EP_DTYPE_I8, rank, dims);
    int8_t *d = (int8_t *)chk_alloc(chk_bytes(&t));
    t.data = d;
    for (size_t i = 0; i < chk_bytes(&t); i++) d[i] = (int8_t)chk_int(lo, hi);
    return t;
}
static ep_tensor qc_const_i32(int rank, const int32_t *dims) {
    ep_tensor t = chk_mk(NULL, EP_DTYPE_I32, rank, dims);
    t.data = chk_alloc(chk_bytes(&t) ? chk_bytes(&t) : 1);
    t.storage = EP_STORAGE_CONST;
    return t;
}
/* Bias [C], |b| <= 2^28 (sometimes small, sometimes 0) */
static ep_tensor qc_bias(int C) {
    ep_tensor t = qc_const_i32(1, CHK_DIMS(C));
    const int kind = chk_int(0, 3);
    for (int c = 0; c < C; c++) {
        int32_t v = kind == 0 ? 0 : kind == 1 ? chk_int(-1000, 1000) : chk_int(-(1 << 28), 1 << 28);
        ((int32_t *)t.data)[c] = v;
    }
    return t;
}
/* One channel's (m, s): mostly multipliers 2^-20 .. 0.5, some >= 0.5, m = 0, powers of two, tiny ones. */
static void qc_mult(int32_t *m, int32_t *s, int mix) {
    const int r = chk_int(0, 99);
    if (!mix || r < 70) {   /* m in [2^30, 2^31), s in [32, 50]: 2^-20 <= m / 2^s < 0.5 */
        *m = (int32_t)((1u << 30) + (chk_rnd() & ((1u << 30) - 1)));
        *s = chk_int(32, 50);
    } else if (r < 80) {   /* M >= 0.5: s < 32 */
        *m = (int32_t)((1u << 30) + (chk_rnd() & ((1u << 30) - 1)));
        *s = chk_int(1, 31);
    } else if (r < 85) {
        *m = 0;
        *s = chk_int(1, 62);
    } else if (r < 93) {   /* a power of two: rounding ties */
        *m = 1 << 30;
        *s = chk_int(31, 40);
    } else {   /* anything in range, s up to 62 */
        *m = (int32_t)(chk_rnd() & 0x7FFFFFFFu);
        *s = chk_int(32, 62);
    }
}
/* Q [2, C]; mix 0: every channel in the vector range (s >= 32) */
static ep_tensor qc_table(int C, int mix) {
    ep_tensor t = qc_const_i32(2, CHK_DIMS(2, C));
    int32_t *q = (int32_t *)t.data;
    const int global = chk_int(0, 3) == 0;   /* one (m, s) for every channel (a per-tensor weight scale) */
    int32_t m0, s0;
    qc_mult(&m0, &s0, mix);
    for (int c = 0; c < C; c++) {
        if (global) q[c] = m0, q[C + c] = s0;
        else qc_mult(&q[c], &q[C + c], mix);
    }
    return t;
}
/* The multipliers that make a product of K terms land in the output range more often than not:
 * about 64 / (sqrt(K) 128 * 73), i.e. s ~ 31 - log2(that); spread around it. */
static void qc_table_scaled(ep_tensor *t, int C, int K) {
    int32_t *q = (int32_t *)t->data;
    int e = 0;
    for (double v = sqrt((double)K) * 128.0 * 73.0 / 64.0; v > 1.0; v /= 2.0) e++;
    for (int c = 0; c < C; c++)
        if (q[C + c] >= 32 && q[c] >= (1 << 30) && chk_int(0, 1)) {
            const int s = 31 + e + chk_int(-2, 3);
            q[C + c] = s < 32 ? 32 : s > 62 ? 62 : s;
        }
}
static void qc_clamp(int32_t *zp, int32_t *lo, int32_t *hi) {
    *zp = chk_int(-128, 127);
    const int r = chk_int(0, 3);
    if (r == 0) *lo = -128, *hi = 127;
    else if (r == 1) *lo = *zp, *hi = 127;   /* a fused Relu */
    else if (r == 2) {   /* narrow: 1 to 4 codes */
        const int w = chk_int(0, 3);
        *lo = chk_int(-128, 127);
        *hi = *lo + w > 127 ? 127 : *lo + w;
    }
    else *lo = chk_int(-128, 0), *hi = chk_int(0, 127);
}

/* The packed int8 layout: element (r, k) of an R x K matrix at x[r*sr + k*sk] into [ceil(R/8)][ceil(K/4)][8][4],
 * zero past R or K. */
static void qc_pack(int8_t *d, const int8_t *x, int R, int K, int64_t sr, int64_t sk) {
    const int P = (R + EP_QPACK_R - 1) / EP_QPACK_R, K4 = (K + EP_QPACK_K - 1) / EP_QPACK_K;
    for (int p = 0; p < P; p++)
        for (int k4 = 0; k4 < K4; k4++)
            for (int r = 0; r < EP_QPACK_R; r++)
                for (int j = 0; j < EP_QPACK_K; j++) {
                    const int row = p * EP_QPACK_R + r, k = k4 * EP_QPACK_K + j;
                    d[((int64_t)(p * K4 + k4) * EP_QPACK_R + r) * EP_QPACK_K + j] =
                        row < R && k < K ? x[row * sr + k * sk] : 0;
                }
}

/* The scratch runs: the minimum (one panel), then more whole panels, and a byte count that is not a multiple */
static void qc_extra(chk_case *c, uint64_t panel) {
    c->n_extra = 3;
    c->extra[0] = panel * (uint64_t)chk_int(1, 3);
    c->extra[1] = panel * (uint64_t)chk_int(4, 40) + (uint64_t)chk_int(1, 31);
    c->extra[2] = panel * 1000;
}

/* A refused shape: the shape function of c's op with in[i] replaced by bad must not accept it. */
static void qc_refused(chk_case *c, int i, ep_tensor *bad, const char *why) {
    ep_tensor *outs[1] = {&c->out[0]}, *keep = c->in[i];
    c->in[i] = bad;
    ep_op op = chk_op(c->opcode, c->params, c->in, c->n_in, outs, 1);
    op.variant = c->variant;
    ep_shape sh;
    uint64_t scratch;
    CHECK(ep_op_info_get(c->opcode)->shape(&op, &sh, &scratch) != EP_OK, "%s: %s accepted", c->what, why);
    c->in[i] = keep;
}

/* ---------------- QGEMM ---------------- */
static void qgemm_check(int M, int K, int N, int mix) {
    ep_qgemm_params p = {0, 0, 0, 0};
    qc_clamp(&p.y_zero, &p.y_min, &p.y_max);
    ep_tensor a = qc_i8(2, CHK_DIMS(M, K), -128, 127), b = qc_i8(2, CHK_DIMS(K, N), -127, 127);
    ep_tensor bias = qc_bias(N), q = qc_table(N, mix);
    qc_table_scaled(&q, N, K);
    char what[160];
    snprintf(what, sizeof what, "qgemm M%d K%d N%d zp%d clamp[%d,%d] mix%d", M, K, N, p.y_zero, p.y_min, p.y_max, mix);
    chk_case c = {.what = what, .opcode = EP_OP_QGEMM, .params = &p, .in = {&a, &b, &bias, &q}, .n_in = 4,
                  .n_out = 1, .tol = CHK_EXACT, .keep_ref = 1};
    c.out[0] = chk_mk(NULL, EP_DTYPE_I8, 2, CHK_DIMS(M, N));
    chk_kernels(&c);   /* variant 0 */
    void *v0 = c.ref_out[0];
    c.ref_out[0] = NULL;
    /* PACKED: B as [ceil(N/8)][ceil(K/4)][8][4], element (n, k) = B[k, n] */
    const int NP = (N + 7) / 8, K4 = (K + 3) / 4;
    ep_tensor bp = chk_mk(NULL, EP_DTYPE_I8, 4, CHK_DIMS(NP, K4, EP_QPACK_R, EP_QPACK_K));
    bp.data = chk_alloc(chk_bytes(&bp));
    qc_pack((int8_t *)bp.data, (const int8_t *)b.data, N, K, 1, N);
    c.in[1] = &bp;
    c.variant = EP_QGEMM_VARIANT_PACKED;
    c.spec[0] = (const float *)v0;
    c.spec_tol = CHK_EXACT;
    const uint64_t panel = (uint64_t)K4 * EP_QPACK_R * EP_QPACK_K;
    qc_extra(&c, panel);
    chk_kernels(&c);
    CHECK(c.ref_out[0] && v0 && !memcmp(c.ref_out[0], v0, chk_bytes(&c.out[0])), "%s: ref packed differs from variant 0",
          what);
    CHECK(c.scratch == panel, "%s: packed scratch %llu, want one panel %llu", what, (unsigned long long)c.scratch,
          (unsigned long long)panel);
    ep_tensor bad = bp;
    bad.dims[0]++;
    qc_refused(&c, 1, &bad, "an extra panel");
    bad.dims[0]--, bad.dims[1]++;
    qc_refused(&c, 1, &bad, "K4 + 1");
    chk_free(c.ref_out[0]), chk_free(v0), chk_free(bp.data);
    chk_free(a.data), chk_free(b.data), chk_free(bias.data), chk_free(q.data);
}
/* M in [1, 37] (sometimes 0 or up to 100), K in [1, 300] (sometimes up to 1100), N in [1, 70] */
static void gen_qgemm(int iter) {
    const int M = iter % 23 == 0 ? 0 : chk_int(1, iter % 5 == 0 ? 100 : 37);
    const int K = iter % 7 == 0 ? chk_int(300, 1100) : iter % 3 == 0 ? chk_int(1, 9) : chk_int(1, 300);
    const int N = chk_int(1, 70);
    qgemm_check(M, K, N, 1);
}
/* every channel in the vector requantisation range */
static void gen_qgemm_vec(int iter) {
    (void)iter;
    qgemm_check(chk_int(1, 40), chk_int(1, 200), chk_int(1, 48), 0);
}

/* ---------------- DQGEMM (dynamic int8) ----------------
 * The exact int32 products then the float epilogue act(acc * (sa sb) + C + R): every kernel equals the reference
 * bit for bit, with and without bias ([N] or [M, N]) and residual, under every fused activation. */
static void dqgemm_check(int M, int K, int N) {
    float alpha, beta;
    const int act = chk_random_act(&alpha, &beta, chk_int(0, 1));
    ep_gemm_params p = {act, alpha, beta, 0};
    ep_tensor a = qc_i8(2, CHK_DIMS(M, K), -127, 127), b = qc_i8(2, CHK_DIMS(K, N), -127, 127);
    ep_tensor sa = chk_tensor_rand(1, CHK_DIMS(M), 0.02f), sb = chk_tensor_rand(1, CHK_DIMS(N), 0.002f);
    const int bias = chk_int(0, 2), res = chk_int(0, 1);
    ep_tensor c = bias == 2 ? chk_tensor_rand(2, CHK_DIMS(M, N), 1.0f) : chk_tensor_rand(1, CHK_DIMS(N), 1.0f);
    ep_tensor r = chk_tensor_rand(2, CHK_DIMS(M, N), 1.0f);
    char what[160];
    snprintf(what, sizeof what, "dqgemm M%d K%d N%d act%d bias%d res%d", M, K, N, act, bias, res);
    chk_case cs = {.what = what, .opcode = EP_OP_DQGEMM, .params = &p, .in = {&a, &sa, &b, &sb, bias ? &c : NULL, &r},
                   .n_in = res ? 6 : bias ? 5 : 4, .n_out = 1, .tol = CHK_EXACT, .keep_ref = 1};
    cs.out[0] = chk_mk(NULL, EP_DTYPE_F32, 2, CHK_DIMS(M, N));
    chk_kernels(&cs);   /* variant 0 */
    void *v0 = cs.ref_out[0];
    cs.ref_out[0] = NULL;
    const int NP = (N + 7) / 8, K4 = (K + 3) / 4;
    ep_tensor bp = chk_mk(NULL, EP_DTYPE_I8, 4, CHK_DIMS(NP, K4, EP_QPACK_R, EP_QPACK_K));
    bp.data = chk_alloc(chk_bytes(&bp));
    qc_pack((int8_t *)bp.data, (const int8_t *)b.data, N, K, 1, N);
    cs.in[2] = &bp;
    cs.variant = EP_DQGEMM_VARIANT_PACKED;
    cs.spec[0] = (const float *)v0;
    cs.spec_tol = CHK_EXACT;
    qc_extra(&cs, (uint64_t)K4 * EP_QPACK_R * EP_QPACK_K);
    chk_kernels(&cs);
    ep_tensor bad = bp;
    bad.dims[0]++;
    qc_refused(&cs, 2, &bad, "an extra panel");
    bad = sb;
    bad.dims[0]++;
    qc_refused(&cs, 3, &bad, "N + 1 column scales");
    chk_free(cs.ref_out[0]), chk_free(v0), chk_free(bp.data);
    chk_free(a.data), chk_free(b.data), chk_free(sa.data), chk_free(sb.data), chk_free(c.data), chk_free(r.data);
}
/* M in [1, 37] (sometimes 0 or up to 100), K in [1, 300] (sometimes up to 1100), N in [1, 70] */
static void gen_dqgemm(int iter) {
    const int M = iter % 23 == 0 ? 0 : chk_int(1, iter % 5 == 0 ? 100 : 37);
    const int K = iter % 7 == 0 ? chk_int(300, 1100) : iter % 3 == 0 ? chk_int(1, 9) : chk_int(1, 300);
    dqgemm_check(M, K, chk_int(1, 70));
}

/* ---------------- QCONV2D ---------------- */
static void qconv_check(ep_qconv2d_params *p, int N, int C, int M, int H, int W, int mix) {
    const int KH = p->kernel[0], KW = p->kernel[1], G = p->groups, CG = C / G, MG = M / G, K = CG * KH * KW;
    const int OH = (H + p->pads[0] + p->pads[2] - ((KH - 1) * p->dilation[0] + 1)) / p->stride[0] + 1;
    const int OW = (W + p->pads[1] + p->pads[3] - ((KW - 1) * p->dilation[1] + 1)) / p->stride[1] + 1;
    ep_tensor x = qc_i8(4, CHK_DIMS(N, C, H, W), -128, 127), w = qc_i8(4, CHK_DIMS(M, CG, KH, KW), -127, 127);
    ep_tensor bias = qc_bias(M), q = qc_table(M, mix);
    qc_table_scaled(&q, M, K);
    char what[240];
    snprintf(what, sizeof what,
             "qconv N%d C%d H%d W%d M%d G%d k%dx%d s%d,%d d%d,%d pads %d,%d,%d,%d xzp%d yzp%d clamp[%d,%d] mix%d", N, C,
             H, W, M, G, KH, KW, p->stride[0], p->stride[1], p->dilation[0], p->dilation[1], p->pads[0], p->pads[1],
             p->pads[2], p->pads[3], p->x_zero, p->y_zero, p->y_min, p->y_max, mix);
    chk_case c = {.what = what, .opcode = EP_OP_QCONV2D, .params = p, .in = {&x, &w, &bias, &q}, .n_in = 4,
                  .n_out = 1, .tol = CHK_EXACT, .keep_ref = 1};
    c.out[0] = chk_mk(NULL, EP_DTYPE_I8, 4, CHK_DIMS(N, M, OH, OW));
    chk_kernels(&c);   /* variant 0 */
    void *v0 = c.ref_out[0];
    c.ref_out[0] = NULL;
    c.spec[0] = (const float *)v0;
    c.spec_tol = CHK_EXACT;
    if (G == C && M == C) {   /* DEPTHWISE: the same weights */
        c.variant = EP_QCONV2D_VARIANT_DEPTHWISE;
        chk_kernels(&c);
        CHECK(c.ref_out[0] && v0 && !memcmp(c.ref_out[0], v0, chk_bytes(&c.out[0])), "%s: ref depthwise differs", what);
        chk_free(c.ref_out[0]);
        c.ref_out[0] = NULL;
    }
    /* PACKED: per group its MG rows of W [M, K] as [ceil(MG/8)][ceil(K/4)][8][4], group after group */
    const int PG = (MG + 7) / 8, K4 = (K + 3) / 4;
    ep_tensor wp = chk_mk(NULL, EP_DTYPE_I8, 4, CHK_DIMS(G * PG, K4, EP_QPACK_R, EP_QPACK_K));
    wp.data = chk_alloc(chk_bytes(&wp));
    for (int g = 0; g < G; g++)
        qc_pack((int8_t *)wp.data + (int64_t)g * PG * K4 * 32, (const int8_t *)w.data + (int64_t)g * MG * K, MG, K, K, 1);
    c.in[1] = &wp;
    c.variant = EP_QCONV2D_VARIANT_PACKED;
    const uint64_t panel = (uint64_t)K4 * EP_QPACK_R * EP_QPACK_K;
    qc_extra(&c, panel);
    chk_kernels(&c);
    CHECK(c.ref_out[0] && v0 && !memcmp(c.ref_out[0], v0, chk_bytes(&c.out[0])), "%s: ref packed differs from variant 0",
          what);
    CHECK(c.scratch == panel, "%s: packed scratch %llu, want one panel %llu", what, (unsigned long long)c.scratch,
          (unsigned long long)panel);
    ep_tensor bad = wp;
    bad.dims[0]++;
    qc_refused(&c, 1, &bad, "an extra panel");
    bad.dims[0]--, bad.dims[1]++;
    qc_refused(&c, 1, &bad, "K4 + 1");
    chk_free(c.ref_out[0]), chk_free(v0), chk_free(wp.data);
    chk_free(x.data), chk_free(w.data), chk_free(bias.data), chk_free(q.data);
}
static void qc_window(ep_qconv2d_params *p, int KH, int KW, int smax, int dmax, int pmax) {
    p->kernel[0] = KH, p->kernel[1] = KW;
    p->stride[0] = chk_int(1, smax), p->stride[1] = chk_int(0, 3) ? p->stride[0] : chk_int(1, smax);
    p->dilation[0] = chk_int(1, dmax), p->dilation[1] = chk_int(0, 2) ? p->dilation[0] : chk_int(1, dmax);
    for (int i = 0; i < 4; i++) p->pads[i] = chk_int(0, pmax);
    if (chk_int(0, 2) == 0) p->pads[2] = p->pads[0], p->pads[3] = p->pads[1];
    p->x_zero = chk_int(-128, 127);
    qc_clamp(&p->y_zero, &p->y_min, &p->y_max);
}
/* H, W large enough for the window (extent >= 1 output) */
static int qc_extent(int k, int d, int pad_sum, int lo, int hi) {
    const int need = (k - 1) * d + 1 - pad_sum;
    const int v = chk_int(lo, hi);
    return v < need ? (need < 1 ? 1 : need) : v;
}
/* dense and grouped: C/G up to 24, M/G up to 27, kernels 1..5, strides 1..3, dilation 1..2 */
static void gen_qconv(int iter) {
    ep_qconv2d_params p;
    memset(&p, 0, sizeof p);
    static const int ks[] = {1, 1, 3, 3, 3, 2, 5, 7};
    const int KH = ks[chk_int(0, 7)], KW = chk_int(0, 3) ? KH : ks[chk_int(0, 7)];
    qc_window(&p, KH, KW, 3, 2, 2);
    p.groups = iter % 3 == 0 ? chk_int(2, 4) : 1;
    const int CG = chk_int(1, iter % 4 == 0 ? 24 : 6), MG = chk_int(1, iter % 5 == 0 ? 27 : 12);
    const int H = qc_extent(KH, p.dilation[0], p.pads[0] + p.pads[2], 1, 14);
    const int W = qc_extent(KW, p.dilation[1], p.pads[1] + p.pads[3], 1, 17);
    qconv_check(&p, chk_int(1, 2), CG * p.groups, MG * p.groups, H, W, 1);
}
/* 1x1 pointwise and wide reductions (K past 256) */
static void gen_qconv_wide(int iter) {
    ep_qconv2d_params p;
    memset(&p, 0, sizeof p);
    const int k = iter % 2 ? 1 : 3;
    qc_window(&p, k, k, 2, 1, k / 2);
    p.groups = 1;
    const int C = chk_int(16, 80), M = chk_int(1, 40);
    const int H = qc_extent(k, 1, p.pads[0] + p.pads[2], 1, 12), W = qc_extent(k, 1, p.pads[1] + p.pads[3], 1, 12);
    qconv_check(&p, 1, C, M, H, W, iter % 3 != 0);
}
/* depthwise: 3x3 and 5x5 (some 1x1, 3x5, 7x7) at strides 1 and 2, pads, dilation 1..2, widths past 16 and 32 */
static void gen_qdw(int iter) {
    ep_qconv2d_params p;
    memset(&p, 0, sizeof p);
    static const int ks[] = {3, 3, 3, 5, 5, 1, 7, 2};
    const int KH = ks[chk_int(0, 7)], KW = iter % 9 == 0 ? (KH == 3 ? 5 : 3) : KH;
    qc_window(&p, KH, KW, 2, 2, (KH > KW ? KH : KW) / 2 + 1);
    const int C = chk_int(1, iter % 4 == 0 ? 40 : 12);
    p.groups = C;
    const int H = qc_extent(KH, p.dilation[0], p.pads[0] + p.pads[2], 1, iter % 3 == 0 ? 40 : 12);
    const int W = qc_extent(KW, p.dilation[1], p.pads[1] + p.pads[3], 1, iter % 3 == 0 ? 70 : 20);
    qconv_check(&p, chk_int(1, 2), C, C, H, W, iter % 4 != 1);
}
/* depthwise along H only (W = KW = 1: audio maps [T, 1]), long kernels, sometimes one output row (a streaming
 * step) */
static void gen_qdw_column(int iter) {
    ep_qconv2d_params p;
    memset(&p, 0, sizeof p);
    static const int ks[] = {3, 5, 9, 13, 21, 2};
    const int KH = ks[chk_int(0, 5)];
    qc_window(&p, KH, 1, 2, 2, KH / 2 + 1);
    p.pads[1] = p.pads[3] = 0;
    if (iter % 6 == 0)   /* a streaming buffer's tap: the window is the whole column, one output (x86 qdw_dots) */
        p.stride[0] = chk_int(1, 2), p.dilation[0] = 1, p.pads[0] = p.pads[2] = 0;
    const int C = chk_int(1, iter % 4 == 0 ? 70 : 12);
    p.groups = C;
    const int need = (KH - 1) * p.dilation[0] + 1 - p.pads[0] - p.pads[2];
    const int H = iter % 3 == 0 ? (need < 1 ? 1 : need) : qc_extent(KH, p.dilation[0], p.pads[0] + p.pads[2], 1, 60);
    qconv_check(&p, chk_int(1, 2), C, C, H, 1, iter % 4 != 1);
}

/* ---------------- QUANTIZE / DEQUANTIZE ---------------- */
static float qc_pow2(int e) { return ldexpf(1.0f, e); }
static void gen_quantize(int iter) {
    ep_quant_params p = {0, 0, 0, 0};
    p.dtype = chk_int(0, 1) ? EP_DTYPE_I8 : EP_DTYPE_U8;
    p.zero_point = p.dtype == EP_DTYPE_I8 ? chk_int(-128, 127) : chk_int(0, 255);
    const int pow2 = chk_int(0, 2) == 0;   /* exact division: ties are exactly k + 0.5 */
    p.scale = pow2 ? qc_pow2(chk_int(-20, 10)) : chk_float_in(1e-3f, 2.0f) * qc_pow2(chk_int(-8, 4));
    if (iter % 17 == 0) p.scale = qc_pow2(-126) * (float)chk_int(1, 3);   /* tiny: huge quotients */
    const int n = iter % 13 == 0 ? chk_int(0, 3) : chk_int(1, iter % 4 == 0 ? 5000 : 300);
    const int rank = chk_int(1, 3);
    int32_t dims[3] = {n, 1, 1};
    if (rank > 1 && n > 0) {
        const int a = chk_int(1, 4);
        dims[0] = a, dims[1] = (n + a - 1) / a;
    }
    ep_tensor x = chk_mk(NULL, EP_DTYPE_F32, rank, dims);
    float *xv = (float *)chk_alloc(chk_bytes(&x) ? chk_bytes(&x) : 1);
    x.data = xv;
    const int64_t ne = (int64_t)(chk_bytes(&x) / 4);
    for (int64_t i = 0; i < ne; i++) {
        const int r = chk_int(0, 99);
        float v;
        if (r < 50) v = chk_float_in(-300.0f, 300.0f) * p.scale;
        else if (r < 70) v = ((float)chk_int(-300, 300) + 0.5f) * p.scale;   /* ties (exact when pow2) */
        else if (r < 78) v = (float)chk_int(-300, 300) * p.scale;
        else if (r < 81) v = NAN;
        else if (r < 83) v = INFINITY;
        else if (r < 85) v = -INFINITY;
        else if (r < 87) v = chk_int(0, 1) ? -0.0f : 0.0f;
        else if (r < 89) v = qc_pow2(-140) * (float)chk_int(-5, 5);   /* denormals */
        else if (r < 93) v = chk_float() * 3e38f;
        else {
            uint32_t bits = chk_rnd();   /* any bit pattern, NaN payloads included */
            memcpy(&v, &bits, 4);
        }
        xv[i] = v;
    }
    char what[128];
    snprintf(what, sizeof what, "quantize n%lld %s scale %a zp %d", (long long)ne,
             p.dtype == EP_DTYPE_I8 ? "i8" : "u8", (double)p.scale, p.zero_point);
    chk_case c = {.what = what, .opcode = EP_OP_QUANTIZE, .params = &p, .in = {&x}, .n_in = 1, .n_out = 1,
                  .tol = CHK_EXACT};
    c.out[0] = chk_mk(NULL, (uint8_t)p.dtype, rank, dims);
    chk_kernels(&c);
    /* the semantics at the edges, on the reference */
    if (iter == 0) {
        static const float probe[] = {NAN, INFINITY, -INFINITY, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 1000.0f, -1000.0f};
        static const int want_i8[] = {3, 127, -128, 3, 5, 5, 3, 1, 1, 127, -128};   /* zp 3, scale 1 */
        ep_quant_params pq = {1.0f, 3, EP_DTYPE_I8, 0};
        ep_tensor xt = chk_mk((void *)probe, EP_DTYPE_F32, 1, CHK_DIMS(11)), yt = chk_mk(NULL, EP_DTYPE_I8, 1, CHK_DIMS(11));
        int8_t yv[11];
        yt.data = yv;
        ep_tensor *in[1] = {&xt}, *out[1] = {&yt};
        ep_op op = chk_op(EP_OP_QUANTIZE, &pq, in, 1, out, 1);
        ep_ref_quantize_f32(&op);
        for (int i = 0; i < 11; i++) CHECK(yv[i] == want_i8[i], "quantize(%g) = %d, want %d", (double)probe[i], yv[i], want_i8[i]);
    }
    chk_free(xv);
}
static void gen_dequantize(int iter) {
    ep_quant_params p = {0, 0, 0, 0};
    const int u8 = chk_int(0, 1);
    p.zero_point = u8 ? chk_int(0, 255) : chk_int(-128, 127);
    p.scale = chk_float_in(1e-3f, 2.0f) * qc_pow2(chk_int(-20, 20));
    const int n = iter == 0 ? 256 : iter % 11 == 0 ? chk_int(0, 3) : chk_int(1, iter % 4 == 0 ? 5000 : 300);
    ep_tensor x = chk_mk(NULL, u8 ? EP_DTYPE_U8 : EP_DTYPE_I8, 1, CHK_DIMS(n));
    uint8_t *xv = (uint8_t *)chk_alloc(n ? (size_t)n : 1);
    x.data = xv;
    for (int i = 0; i < n; i++) xv[i] = iter == 0 ? (uint8_t)i : (uint8_t)chk_rnd();
    char what[96];
    snprintf(what, sizeof what, "dequantize n%d %s scale %a zp %d", n, u8 ? "u8" : "i8", (double)p.scale, p.zero_point);
    chk_case c = {.what = what, .opcode = EP_OP_DEQUANTIZE, .params = &p, .in = {&x}, .n_in = 1, .n_out = 1,
                  .tol = CHK_EXACT};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 1, CHK_DIMS(n));
    chk_kernels(&c);
    chk_free(xv);
}

/* ---------------- QADD / QLUT ---------------- */
/* An input's (mult, shift): a_shift in [31, 62] (mostly 31..40, the compiler's range for real scales with 2^20 of
 * headroom), multipliers over [0, 2^31) with 0, 2^31 - 1 and powers of two (rounding ties) */
static void qc_qadd_in(int32_t *m, int32_t *s) {
    const int r = chk_int(0, 99);
    *s = r < 70 ? chk_int(31, 40) : r < 85 ? chk_int(31, 62) : chk_int(0, 1) ? 31 : 62;
    const int k = chk_int(0, 9);
    *m = k == 0 ? 0 : k == 1 ? 0x7FFFFFFF : k == 2 ? 1 << chk_int(0, 30) : (int32_t)(chk_rnd() & 0x7FFFFFFFu);
}
/* Codes: full range, or only the extremes, or near the zero points */
static void qc_codes(int8_t *d, int64_t n, int zp) {
    const int kind = chk_int(0, 3);
    for (int64_t i = 0; i < n; i++) {
        const int v = kind == 0 ? (chk_int(0, 1) ? -128 : 127) : kind == 1 ? zp + chk_int(-3, 3) : chk_int(-128, 127);
        d[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
    }
}
/* n elements: 0..3, up to 300, up to 5000, sometimes 20000..70000 (several tasks at 3 threads), as rank 1..4 */
static int qc_elem_dims(int iter, int32_t *dims) {
    const int n = iter % 13 == 0  ? chk_int(0, 3)
                  : iter % 7 == 0 ? chk_int(20000, 70000)
                                  : chk_int(1, iter % 3 ? 300 : 5000);
    const int rank = chk_int(1, 4);
    for (int i = 0; i < 4; i++) dims[i] = 1;
    dims[0] = n;
    if (rank > 1 && n > 0) {
        const int a = chk_int(1, 5);
        if (n % a == 0) dims[0] = n / a, dims[rank - 1] = a;
    }
    return rank;
}
static void gen_qadd(int iter) {
    ep_qadd_params p = {0};
    p.a_zero = chk_int(-128, 127), p.b_zero = chk_int(-128, 127);
    qc_clamp(&p.y_zero, &p.y_min, &p.y_max);
    qc_qadd_in(&p.a_mult, &p.a_shift);
    qc_qadd_in(&p.b_mult, &p.b_shift);
    const int r = chk_int(0, 99);   /* y: mostly 2^-20 .. 1 (s >= 32), some s < 32 (the AVX2 scalar fallback) */
    p.y_mult = r < 5 ? 0 : r < 10 ? 1 << 30 : (int32_t)((1u << 30) + (chk_rnd() & ((1u << 30) - 1)));
    p.y_shift = r < 75 ? chk_int(32, 52) : r < 85 ? chk_int(1, 31) : chk_int(32, 62);
    int32_t dims[4];
    int rank = qc_elem_dims(iter, dims);
    if (iter == 0) rank = 2, dims[0] = dims[1] = 256;   /* every pair of codes */
    ep_tensor a = chk_mk(NULL, EP_DTYPE_I8, rank, dims), b = chk_mk(NULL, EP_DTYPE_I8, rank, dims);
    const int64_t n = (int64_t)chk_bytes(&a);
    a.data = chk_alloc(n ? (size_t)n : 1), b.data = chk_alloc(n ? (size_t)n : 1);
    qc_codes((int8_t *)a.data, n, p.a_zero);
    qc_codes((int8_t *)b.data, n, p.b_zero);
    if (iter == 0)
        for (int64_t i = 0; i < n; i++)
            ((int8_t *)a.data)[i] = (int8_t)(i / 256 - 128), ((int8_t *)b.data)[i] = (int8_t)(i % 256 - 128);
    char what[200];
    snprintf(what, sizeof what, "qadd n%lld a(zp%d m%d s%d) b(zp%d m%d s%d) y(zp%d m%d s%d clamp[%d,%d])", (long long)n,
             p.a_zero, p.a_mult, p.a_shift, p.b_zero, p.b_mult, p.b_shift, p.y_zero, p.y_mult, p.y_shift, p.y_min,
             p.y_max);
    chk_case c = {.what = what, .opcode = EP_OP_QADD, .params = &p, .in = {&a, &b}, .n_in = 2, .n_out = 1,
                  .tol = CHK_EXACT};
    c.out[0] = chk_mk(NULL, EP_DTYPE_I8, rank, dims);
    chk_kernels(&c);
    if (iter == 1) {   /* the shape function's limits */
        ep_qadd_params bad = p;
        ep_tensor *outs[1] = {&c.out[0]};
        ep_shape sh;
        uint64_t scratch;
        int32_t *fields[] = {&bad.a_shift, &bad.b_shift, &bad.y_shift};
        const int32_t lim[][2] = {{30, 63}, {30, 63}, {0, 63}};
        for (int f = 0; f < 3; f++)
            for (int e = 0; e < 2; e++) {
                bad = p;
                *fields[f] = lim[f][e];
                ep_op op = chk_op(EP_OP_QADD, &bad, c.in, 2, outs, 1);
                CHECK(ep_op_info_get(EP_OP_QADD)->shape(&op, &sh, &scratch) != EP_OK,
                      "qadd: shift field %d = %d accepted", f, lim[f][e]);
            }
    }
    chk_free(a.data), chk_free(b.data);
}
static void gen_qlut(int iter) {
    ep_axis_params p = {0, 0};
    int32_t dims[4];
    int rank = qc_elem_dims(iter, dims);
    if (iter == 0) rank = 1, dims[0] = 256;   /* every code */
    if (rank == 1 && dims[0] == 256) rank = 2, dims[0] = 1, dims[1] = 256;   /* Y never aliases T (a constant) */
    ep_tensor x = chk_mk(NULL, EP_DTYPE_I8, rank, dims), t = chk_mk(NULL, EP_DTYPE_I8, 1, CHK_DIMS(256));
    const int64_t n = (int64_t)chk_bytes(&x);
    x.data = chk_alloc(n ? (size_t)n : 1);
    qc_codes((int8_t *)x.data, n, chk_int(-128, 127));
    if (iter == 0)
        for (int64_t i = 0; i < n; i++) ((int8_t *)x.data)[i] = (int8_t)(i - 128);
    int8_t *tv = (int8_t *)chk_alloc(256);
    const int kind = chk_int(0, 2);   /* random, a monotone activation, the identity */
    for (int i = 0; i < 256; i++)
        tv[i] = kind == 0 ? (int8_t)chk_int(-128, 127) : (int8_t)(kind == 1 && i < 128 ? -20 : i - 128);
    t.data = tv;
    t.storage = EP_STORAGE_CONST;
    char what[96];
    snprintf(what, sizeof what, "qlut n%lld table kind %d", (long long)n, kind);
    chk_case c = {.what = what, .opcode = EP_OP_QLUT, .params = &p, .in = {&x, &t}, .n_in = 2, .n_out = 1,
                  .tol = CHK_EXACT};
    c.out[0] = chk_mk(NULL, EP_DTYPE_I8, rank, dims);
    chk_kernels(&c);
    chk_free(x.data), chk_free(tv);
}

/* ---------------- the requantisation helpers against ep_requant ---------------- */
#define RQ_N (1 << 20)
/* One triple: acc over int32 (the extremes and ties often), m in [0, 2^31), s in [s_lo, 62] */
static void rq_triple(int32_t *acc, int32_t *m, int32_t *s, int s_lo) {
    const int r = chk_int(0, 99);
    *m = r < 10 ? (int32_t)(chk_rnd() & 0x7FFFFFFF) : r < 12 ? 0 : (int32_t)((1u << 30) | (chk_rnd() & 0x3FFFFFFF));
    if (r >= 12 && r < 16) *m = 0x7FFFFFFF;
    *s = chk_int(s_lo, 62);
    const int a = chk_int(0, 99);
    if (a < 40) *acc = (int32_t)chk_rnd();
    else if (a < 50) *acc = chk_int(0, 1) ? 2147483647 : -2147483647;
    else if (a < 52) *acc = chk_int(0, 1) ? INT32_MIN : 0;
    else if (a < 70) *acc = chk_int(-100000, 100000);
    else {   /* a tie: acc * m = (2u + 1) 2^(s-1) exactly, m = o 2^j, o odd, acc = 2^(s-1-j) u */
        if (*m == 0) *m = 1 << chk_int(0, 30);
        if (__builtin_ctz((unsigned)*m) + 31 < s_lo) *m = (*m | (1 << 30)) & ~1;   /* s in [s_lo, j + 31] exists */
        const int j = __builtin_ctz((unsigned)*m);
        int lo = j + 1 > s_lo ? j + 1 : s_lo, hi = j + 31 < 62 ? j + 31 : 62;
        if (lo > hi) lo = hi;
        *s = chk_int(lo, hi);
        const int e = *s - 1 - j;   /* 0 .. 30 */
        const int64_t lim = ((int64_t)1 << (31 - e)) - 1;   /* |u| 2^e < 2^31 */
        int64_t u = (int64_t)(chk_rnd() % (uint64_t)(lim > 0 ? lim : 1)) | 1;
        if (u > lim) u = lim | 1;
        if (u * ((int64_t)1 << e) > INT32_MAX) u = 1;
        *acc = (int32_t)((chk_int(0, 1) ? u : -u) * ((int64_t)1 << e));
    }
}
static int32_t rq_ref(int32_t acc, int32_t m, int32_t s, int32_t lo, int32_t hi, int32_t zp) {
    return ep_requant(acc, m, s, lo, hi, zp);
}
static void rq_clamp(int32_t *lo, int32_t *hi, int32_t *zp) {
    *zp = chk_int(-128, 127);
    if (chk_int(0, 3)) *lo = -128 - *zp, *hi = 127 - *zp;
    else *lo = chk_int(-128, 127) - *zp, *hi = chk_int(*lo + *zp, 127) - *zp;
}
#if defined(QC_HAVE_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
/* The AVX2 helper: 8 lanes per call, every s in [32, 62] (the kernels' vector range) */
static int64_t rq_x86(int *checked) {
    int64_t bad = 0;
    for (int it = 0; it < RQ_N / 8; it++) {
        int32_t acc[8], m[8], s[8], got[8], lo, hi, zp;
        rq_clamp(&lo, &hi, &zp);
        for (int l = 0; l < 8; l++) rq_triple(&acc[l], &m[l], &s[l], 32);
        const __m256i r = qx_requant(_mm256_loadu_si256((const __m256i *)acc), _mm256_loadu_si256((const __m256i *)m),
                                     _mm256_loadu_si256((const __m256i *)s), _mm256_set1_epi32(lo), _mm256_set1_epi32(hi),
                                     _mm256_set1_epi32(zp));
        _mm256_storeu_si256((__m256i *)got, r);
        for (int l = 0; l < 8; l++) {
            const int32_t want = rq_ref(acc[l], m[l], s[l], lo, hi, zp);
            if (got[l] != want && bad++ < 10)
                printf("FAIL requant avx2: acc %d m %d s %d clamp [%d, %d] zp %d: got %d want %d\n", acc[l], m[l], s[l],
                       lo, hi, zp, got[l], want);
        }
        *checked += 8;
    }
    return bad;
}
#pragma GCC pop_options
#endif
#if defined(QC_HAVE_NEON)
/* The NEON helper: 4 lanes per call, every s in [1, 62] */
static int64_t rq_neon(int *checked) {
    int64_t bad = 0;
    for (int it = 0; it < RQ_N / 4; it++) {
        int32_t acc[4], m[4], s[4], got[4], lo, hi, zp;
        rq_clamp(&lo, &hi, &zp);
        for (int l = 0; l < 4; l++) rq_triple(&acc[l], &m[l], &s[l], 1);
        const int32x4_t r = qn_requant(vld1q_s32(acc), vld1q_s32(m), vld1q_s32(s), vdupq_n_s32(lo), vdupq_n_s32(hi),
                                       vdupq_n_s32(zp));
        vst1q_s32(got, r);
        for (int l = 0; l < 4; l++) {
            const int32_t want = rq_ref(acc[l], m[l], s[l], lo, hi, zp);
            if (got[l] != want && bad++ < 10)
                printf("FAIL requant neon: acc %d m %d s %d clamp [%d, %d] zp %d: got %d want %d\n", acc[l], m[l], s[l],
                       lo, hi, zp, got[l], want);
        }
        *checked += 4;
    }
    return bad;
}
#endif
/* Also: single rounding against exact rational rounding of acc m / 2^s (ties up) on the same triples, through
 * ep_requant itself (the spec is what it says). */
static void gen_requant(int iter) {
    (void)iter;
    int checked = 0;
    int64_t bad = 0;
    for (int i = 0; i < 4096; i++) {   /* the spec: floor(acc m / 2^s + 1/2) by long division */
        int32_t acc, m, s;
        rq_triple(&acc, &m, &s, 1);
        /* q = floor(acc m / 2^s) and the remainder r in [0, 2^s): round half up is q + (2 r >= 2^s); every step
         * fits int64 (|acc m| < 2^62, s <= 62), so 32-bit targets without __int128 run it too */
        const int64_t prod = (int64_t)acc * m, den = (int64_t)1 << s;
        int64_t q = prod / den;
        if (prod % den != 0 && prod < 0) q -= 1;
        const int64_t r = prod - q * den, fl = q + (r >= den - r);
        const int64_t want = fl < -1000 ? -1000 : fl > 1000 ? 1000 : fl;
        const int32_t got = ep_requant(acc, m, s, -1000, 1000, 0);
        bad += got != want;
    }
    CHECK(bad == 0, "ep_requant differs from floor(acc m / 2^s + 1/2) on %lld of 4096", (long long)bad);
    bad = 0;
#if defined(QC_HAVE_X86)
    if ((ep_cpu_features() & (EP_CPU_AVX2 | EP_CPU_FMA)) == (EP_CPU_AVX2 | EP_CPU_FMA)) {
        bad = rq_x86(&checked);
        printf("requant avx2 (qx_requant, s in [32, 62]): %d triples, %lld differ from ep_requant\n", checked,
               (long long)bad);
        CHECK(bad == 0 && checked >= 1000000, "qx_requant: %lld of %d differ", (long long)bad, checked);
    }
#endif
#if defined(QC_HAVE_NEON)
    bad = rq_neon(&checked);
    printf("requant neon (qn_requant, s in [1, 62]): %d triples, %lld differ from ep_requant\n", checked, (long long)bad);
    CHECK(bad == 0 && checked >= 1000000, "qn_requant: %lld of %d differ", (long long)bad, checked);
#endif
    (void)checked;
    (void)bad;
}

static const chk_gen GENS[] = {{"requant", gen_requant, 1},        {"qgemm", gen_qgemm, 320},
                               {"qgemm_vec", gen_qgemm_vec, 60},   {"qconv", gen_qconv, 320},
                               {"qconv_wide", gen_qconv_wide, 40}, {"qdw", gen_qdw, 320}, {"qdw_column", gen_qdw_column, 300},
                               {"quantize", gen_quantize, 320},    {"dequantize", gen_dequantize, 320},
                               {"qadd", gen_qadd, 320},            {"qlut", gen_qlut, 160},
                               {"dqgemm", gen_dqgemm, 320}};
int main(int argc, char **argv) { return chk_main(argc, argv, "check_quant", GENS, CHK_COUNT(GENS)); }
