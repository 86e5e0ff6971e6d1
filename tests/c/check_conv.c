/* Kernel checks of the convolution family (CONV2D variants DEFAULT, PACKED, DEPTHWISE, WINOGRAD, DW_C8, DIRECT and
 * POINTWISE, CONV_TRANSPOSE2D variant PACKED): every table's kernel against the reference (tests/c/ep_check.h).
 *
 * Each generated convolution runs through every variant it qualifies for: variant 0 on the plain OIHW weights,
 * DEPTHWISE and DW_C8 when groups == C == M, DIRECT and POINTWISE (W^T packed here as GEMM-B strips) when
 * groups == 1, PACKED (weights packed here per group as plan_format.h lays
 * them out) for any groups. Shapes:
 * odd sizes, the tails of every blocking (MR 6, NR 16, KC 256, 16- and 32-column rows), C up to 300, strides
 * 1..3, dilation 2, asymmetric pads, groups, bias, residual and fused activations. The variants with scratch
 * run with the shape function's minimum and with more (more im2col strips per pass, more depthwise slots,
 * larger Winograd blocks); every variant must also match variant 0 on the plain layout, and its shape function
 * must refuse packed weights of a wrong shape.
 * Tolerances (ep_check.h): chk_tol_accum(K) against the same variant's reference, chk_tol_dot(K) against
 * variant 0, K = C/groups * KH * KW products per output; the reference of PACKED must equal variant 0 bit for bit (the
 * same sums in the same order; the padded taps add +-0). Winograd F(4x4, 3x3): 10 chk_tol_dot(K) against both
 * (its transforms, constants up to 8, amplify rounding; the per-element sum bound does not apply).
 * CONV_TRANSPOSE2D PACKED (polyphase): random 2-D and 1-D (H = 1) shapes, strides 1..4 and HiFi-GAN's (kernel
 * 2s, pad s/2, s = 2, 4, 8), dilation, output_padding; weights packed here from the layout's definition in
 * plan_format.h (independent of select.py); the reference kernel of the variant must equal variant 0 bit for
 * bit (the same sums in the same order), the others within chk_tol_accum / chk_tol_dot of C*KH*KW terms.
 * INVRES (the fused inverted-residual block): tests/c/check_invres.h. The C8 layout's variants BLOCKED_DW and
 * BLOCKED_PW and REORDER, BLOCKED_CONV: tests/c/check_blocked_dw.h, check_blocked_pw.h and check_blocked_conv.h. */
#define EP_CHECK_KERNELS
#include "ep_check.h"
#include "check_invres.h"
#include "check_blocked_dw.h"
#include "check_blocked_pw.h"
#include "check_blocked_conv.h"

/* A refused shape: the shape function of op (in[1] replaced by bad) must not accept it. */
static void refused(chk_case *c, ep_tensor *bad, const char *why) {
    ep_tensor *outs[1] = {&c->out[0]}, *keep = c->in[1];
    c->in[1] = bad;
    ep_op op = chk_op(c->opcode, c->params, c->in, c->n_in, outs, 1);
    op.variant = c->variant;
    ep_shape sh;
    uint64_t scratch;
    CHECK(ep_op_info_get(c->opcode)->shape(&op, &sh, &scratch) != EP_OK, "%s: %s accepted", c->what, why);
    c->in[1] = keep;
}

/* ---------------- CONV2D: variant 0, DEPTHWISE, PACKED ---------------- */
/* W[M, K] (K = C/G*KH*KW) as PACKED's panels: per group its M/G rows [ceil(M/G/MR)][K][MR], group after group */
static ep_tensor pack_grouped(const float *w, int G, int M, int K) {
    const int Mg = M / G, pg = (Mg + EP_PACK_MR - 1) / EP_PACK_MR;
    ep_tensor t = chk_mk(NULL, EP_DTYPE_F32, 3, CHK_DIMS(G * pg, K, EP_PACK_MR));
    float *d = (float *)chk_alloc(chk_bytes(&t));
    t.data = d;
    for (int g = 0; g < G; g++) {
        ep_tensor one = chk_pack_blocks(w + (int64_t)g * Mg * K, K, Mg, 1, K, EP_PACK_MR);
        memcpy(d + (int64_t)g * pg * K * EP_PACK_MR, one.data, chk_bytes(&one));
        chk_free(one.data);
    }
    return t;
}

static void conv_check(ep_conv2d_params *p, int N, int C, int M, int H, int W, int has_b, int has_r, int wide) {
    ep_conv2d_params pa = *p;
    pa.act = EP_ACT_NONE;
    const int KH = p->kernel[0], KW = p->kernel[1], G = p->groups, K = C / G * KH * KW;
    const int OH = (H + p->pads[0] + p->pads[2] - ((KH - 1) * p->dilation[0] + 1)) / p->stride[0] + 1;
    const int OW = (W + p->pads[1] + p->pads[3] - ((KW - 1) * p->dilation[1] + 1)) / p->stride[1] + 1;
    ep_tensor x = chk_tensor_rand(4, CHK_DIMS(N, C, H, W), 1.0f), w = chk_tensor_rand(4, CHK_DIMS(M, C / G, KH, KW), 1.0f);
    ep_tensor b = chk_tensor_rand(1, CHK_DIMS(M), 1.0f), r = chk_tensor_rand(4, CHK_DIMS(N, M, OH, OW), 1.0f);
    char what[200];
    snprintf(what, sizeof what, "conv N%d C%d M%d %dx%d k%dx%d s%d,%d d%d,%d p%d,%d,%d,%d g%d act%d b%d r%d", N, C, M,
             H, W, KH, KW, p->stride[0], p->stride[1], p->dilation[0], p->dilation[1], p->pads[0], p->pads[1],
             p->pads[2], p->pads[3], G, p->act, has_b, has_r);
    chk_case c = {.what = what, .opcode = EP_OP_CONV2D, .params = p, .params_abs = &pa,
                  .in = {&x, &w, has_b ? &b : NULL, has_r ? &r : NULL}, .n_in = 4, .n_out = 1,
                  .tol = chk_tol_accum(K), .tol_for = chk_vexp_override(p->act, K), .keep_ref = 1};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(N, M, OH, OW));
    chk_kernels(&c);   /* variant 0 */
    c.keep_ref = 0;
    c.spec[0] = c.ref_out[0];
    c.spec_tol = chk_tol_dot(K);
    if (G == C && G == M) {
        c.variant = EP_CONV2D_VARIANT_DEPTHWISE;
        c.n_extra = 0;
        chk_kernels(&c);   /* the minimum scratch: one padded plane */
        c.n_extra = 1;
        c.extra[0] = wide ? 4096 : c.scratch * (uint64_t)chk_int(1, 2);
        if (wide) c.extra[c.n_extra++] = 2 * c.scratch;   /* 3 slots */
        chk_kernels(&c);
        c.variant = EP_CONV2D_VARIANT_DW_C8;   /* 8 channels at a time: one slot, then more */
        c.n_extra = 0;
        chk_kernels(&c);
        c.n_extra = 1;
        c.extra[0] = c.scratch * (uint64_t)chk_int(1, 3);
        chk_kernels(&c);
    }
    if (G == 1 && KW <= 32) {
        c.variant = EP_CONV2D_VARIANT_DIRECT;   /* bands of input rows: one slot, then more */
        c.n_extra = 0;
        chk_kernels(&c);
        c.n_extra = 1;
        c.extra[0] = c.scratch * (uint64_t)chk_int(1, 3);
        chk_kernels(&c);
    }
    if (G == 1) {
        ep_tensor wt = chk_pack_blocks(w.data, K, M, 1, K, EP_PACK_NR);   /* W^T [K][M] as GEMM-B strips */
        c.in[1] = &wt;
        c.variant = EP_CONV2D_VARIANT_POINTWISE;   /* one MR-pixel chunk, then more pixels per chunk */
        c.n_extra = 0;
        chk_kernels(&c);
        CHECK(c.scratch == (uint64_t)EP_PACK_MR * (K + M) * 4, "%s: pointwise scratch %llu", what,
              (unsigned long long)c.scratch);
        c.n_extra = 1;
        c.extra[0] = c.scratch * (uint64_t)chk_int(1, 12);
        chk_kernels(&c);
        ep_tensor bad = wt;   /* hostile plans: strips of the wrong shape, or plain weights */
        bad.dims[1] = K + 1;
        refused(&c, &bad, "pointwise K+1");
        bad.dims[1] = C, bad.dims[2] = EP_PACK_NR - 1;
        refused(&c, &bad, "pointwise NR-1");
        refused(&c, &w, "plain weights as pointwise");
        c.in[1] = &w;
        chk_free(wt.data);
    }
    {
        ep_tensor wp = pack_grouped(w.data, G, M, K);
        c.in[1] = &wp;
        c.variant = EP_CONV2D_VARIANT_PACKED;
        c.n_extra = 1;
        c.extra[0] = 0;
        c.keep_ref = 1;
        void *v0 = c.ref_out[0];
        c.ref_out[0] = NULL;
        chk_kernels(&c);   /* keeps the variant's reference output: it must be variant 0's bits */
        CHECK(c.ref_out[0] && v0 && !memcmp(c.ref_out[0], v0, chk_bytes(&c.out[0])), "%s: ref packed differs from variant 0 in bits",
              what);
        chk_free(c.ref_out[0]);
        c.ref_out[0] = v0, c.keep_ref = 0;
        c.extra[0] = c.scratch * (uint64_t)(wide ? chk_int(1, 5) : chk_int(1, 2));   /* more strips per pass */
        chk_kernels(&c);
        CHECK(c.scratch == (uint64_t)K * EP_PACK_NR * 4, "%s: packed scratch %llu", what, (unsigned long long)c.scratch);
        /* hostile plans: a packed tensor of the wrong shape, or plain weights, are refused */
        ep_tensor bad = wp;
        bad.dims[1] = K + 1;
        refused(&c, &bad, "K+1");
        bad.dims[1] = K, bad.dims[0]--;
        refused(&c, &bad, "fewer panels");
        bad.dims[0]++, bad.dims[2] = EP_PACK_MR - 1;
        refused(&c, &bad, "MR-1");
        refused(&c, &w, "plain weights as packed");
        chk_free(wp.data);
    }
    chk_free(c.ref_out[0]);
    chk_free(x.data), chk_free(w.data), chk_free(b.data), chk_free(r.data);
}

/* The geometries AVX2 needs: C up to 300, W up to 70, strides 1..3, dilation 1..2 (all 1 one case in four). */
static void conv_gen_wide(int iter, int depthwise) {
    ep_conv2d_params p;
    memset(&p, 0, sizeof p);
    const int G = depthwise || iter % 4 != 2 ? 1 : chk_int(2, 4);   /* grouped one case in four */
    const int N = chk_int(1, 2), C = depthwise ? chk_int(1, 19) : G * chk_int(1, iter % 7 == 0 ? 300 / G : 24);
    const int M = depthwise ? C : G * chk_int(1, iter % 5 == 0 ? 40 : 20);
    p.kernel[0] = chk_int(1, depthwise ? 5 : 4);
    p.kernel[1] = iter % 3 == 0 ? p.kernel[0] : chk_int(1, 4);
    p.stride[0] = chk_int(1, 3), p.stride[1] = chk_int(1, 3);
    p.dilation[0] = chk_int(1, 2), p.dilation[1] = chk_int(1, 2);
    if (iter % 4 == 0) p.stride[0] = p.stride[1] = p.dilation[0] = p.dilation[1] = 1;
    for (int i = 0; i < 4; i++) p.pads[i] = iter % 4 == 1 ? 0 : chk_int(0, 2);
    p.groups = depthwise ? C : G;
    p.act = chk_random_act(&p.act_alpha, &p.act_beta, 1);
    const int H = chk_int(1, 23), W = chk_int(1, iter % 6 == 0 ? 70 : 23);
    if (H + p.pads[0] + p.pads[2] < (p.kernel[0] - 1) * p.dilation[0] + 1 ||
        W + p.pads[1] + p.pads[3] < (p.kernel[1] - 1) * p.dilation[1] + 1)
        return;   /* no output */
    const int has_b = chk_rnd() & 1, has_r = (chk_rnd() & 3) == 0;
    conv_check(&p, N, C, M, H, W, has_b, has_r, 1);
}
static void gen_conv(int iter) { conv_gen_wide(iter, 0); }
static void gen_conv_dw(int iter) { conv_gen_wide(iter, 1); }

/* The geometries the NEON kernels special-case. shape 0: random (groups one case in four), 1: pointwise
 * (1x1, stride 1, no pads), 2: depthwise 3x3 / 5x5, stride 1..2, pads around k/2; dw: depthwise. */
static void conv_gen_small(int shape, int dw) {
    for (;;) {
        ep_conv2d_params p;
        memset(&p, 0, sizeof p);
        p.act = chk_random_act(&p.act_alpha, &p.act_beta, 0);
        const int N = chk_int(1, 2);
        int C = chk_int(1, 7), M = chk_int(1, 13), G = 1;
        for (int i = 0; i < 2; i++) {
            p.kernel[i] = shape == 1 ? 1 : chk_int(1, 5);
            p.stride[i] = shape == 1 ? 1 : chk_int(1, 3);
            p.dilation[i] = shape == 1 || chk_int(0, 3) ? 1 : 2;
            p.pads[i] = shape == 1 ? 0 : chk_int(0, 2);
            p.pads[i + 2] = shape == 1 ? 0 : chk_int(0, 2);
        }
        if (shape == 2) {
            p.kernel[0] = p.kernel[1] = chk_int(0, 1) ? 3 : 5;
            p.stride[0] = p.stride[1] = chk_int(1, 2);
            p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = p.kernel[0] / 2 - chk_int(0, 1);
        }
        if (dw || shape == 2) C = chk_int(1, 6), M = C, G = C;
        else if (chk_int(0, 3) == 0) G = chk_int(1, 3), C = G * chk_int(1, 3), M = G * chk_int(1, 4);
        p.groups = G;
        const int H = chk_int(1, 12), W = chk_int(1, 27);
        if (H + p.pads[0] + p.pads[2] < (p.kernel[0] - 1) * p.dilation[0] + 1 ||
            W + p.pads[1] + p.pads[3] < (p.kernel[1] - 1) * p.dilation[1] + 1)
            continue;   /* no output: draw again */
        const int n_in = 2 + chk_int(0, 2), has_b = n_in > 2 && chk_int(0, 3) != 0;
        conv_check(&p, N, C, M, H, W, has_b, n_in > 3, 0);
        return;
    }
}
static void gen_conv_small(int iter) { (void)iter, conv_gen_small(0, 0); }
static void gen_conv_1x1(int iter) { (void)iter, conv_gen_small(1, 0); }
static void gen_conv_dw_small(int iter) { conv_gen_small(iter % 3 == 0 ? 2 : 0, 1); }
static void gen_conv_dw33(int iter) { (void)iter, conv_gen_small(2, 0); }

/* 1x1, stride 1, no pads, groups 1 (POINTWISE): C up to 300, M up to 70 (the tails of MR 6 and NR 16 both ways),
 * maps up to 20x20. */
static void gen_conv_pw(int iter) {
    ep_conv2d_params p;
    memset(&p, 0, sizeof p);
    p.kernel[0] = p.kernel[1] = p.stride[0] = p.stride[1] = p.dilation[0] = p.dilation[1] = p.groups = 1;
    p.act = chk_random_act(&p.act_alpha, &p.act_beta, 1);
    const int N = chk_int(1, 2), C = chk_int(1, iter % 3 == 0 ? 300 : 40), M = chk_int(1, 70);
    const int H = chk_int(1, 20), W = chk_int(1, 20), has_b = chk_rnd() & 1, has_r = (chk_rnd() & 3) == 0;
    conv_check(&p, N, C, M, H, W, has_b, has_r, 1);
}

/* ---------------- CONV2D Winograd F(4x4, 3x3) ---------------- */
/* W[M, C, 3, 3] -> U = G g G^T as [36][ceil(M/MR)][C][MR] */
static ep_tensor pack_winograd(const float *w, int M, int C) {
    static const double Gm[6][3] = {{0.25, 0, 0}, {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                    {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
    const int panels = (M + EP_PACK_MR - 1) / EP_PACK_MR;
    ep_tensor t = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(36, panels, C, EP_PACK_MR));
    float *d = chk_alloc(chk_bytes(&t));
    t.data = d;
    memset(d, 0, chk_bytes(&t));
    for (int m = 0; m < M; m++)
        for (int c = 0; c < C; c++) {
            const float *g = w + ((int64_t)m * C + c) * 9;
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 6; j++) {
                    double u = 0;
                    for (int k = 0; k < 3; k++)
                        for (int l = 0; l < 3; l++) u += Gm[i][k] * g[k * 3 + l] * Gm[j][l];
                    d[(((int64_t)(i * 6 + j) * panels + m / EP_PACK_MR) * C + c) * EP_PACK_MR + m % EP_PACK_MR] = (float)u;
                }
        }
    return t;
}

static void gen_winograd(int iter) {
    ep_conv2d_params p;
    memset(&p, 0, sizeof p);
    const int N = chk_int(1, 2), C = chk_int(1, iter % 5 == 0 ? 70 : 12), M = chk_int(1, iter % 4 == 0 ? 40 : 14);
    const int H = chk_int(1, 30), W = chk_int(1, 30);
    p.kernel[0] = p.kernel[1] = 3;
    p.stride[0] = p.stride[1] = p.dilation[0] = p.dilation[1] = 1;
    for (int i = 0; i < 4; i++) p.pads[i] = chk_int(0, 2);
    p.groups = 1;
    p.act = chk_random_act(&p.act_alpha, &p.act_beta, 1);
    const int OH = H + p.pads[0] + p.pads[2] - 2, OW = W + p.pads[1] + p.pads[3] - 2;
    if (OH < 1 || OW < 1) return;
    const int has_b = chk_rnd() & 1, has_r = (chk_rnd() & 3) == 0, K = C * 9, panels = (M + EP_PACK_MR - 1) / EP_PACK_MR;
    ep_tensor x = chk_tensor_rand(4, CHK_DIMS(N, C, H, W), 1.0f), w = chk_tensor_rand(4, CHK_DIMS(M, C, 3, 3), 1.0f);
    ep_tensor b = chk_tensor_rand(1, CHK_DIMS(M), 1.0f), r = chk_tensor_rand(4, CHK_DIMS(N, M, OH, OW), 1.0f);
    ep_tensor u = pack_winograd(w.data, M, C);
    char what[160];
    snprintf(what, sizeof what, "winograd N%d C%d M%d %dx%d p%d,%d,%d,%d act%d b%d r%d", N, C, M, H, W, p.pads[0],
             p.pads[1], p.pads[2], p.pads[3], p.act, has_b, has_r);
    chk_tol wide = chk_tol_dot(K);
    wide.max_rel *= 10, wide.abs *= 10;
    chk_case c = {.what = what, .opcode = EP_OP_CONV2D, .params = &p, .in = {&x, &w, has_b ? &b : NULL, has_r ? &r : NULL},
                  .n_in = 4, .n_out = 1, .tol = chk_tol_dot(K), .tol_for = chk_vexp_override(p.act, K), .keep_ref = 1};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(N, M, OH, OW));
    chk_kernels(&c);   /* variant 0 */
    c.in[1] = &u;
    c.variant = EP_CONV2D_VARIANT_WINOGRAD;
    c.keep_ref = 0, c.tol = wide, c.tol_for = NULL, c.spec[0] = c.ref_out[0], c.spec_tol = wide;
    c.n_extra = 1;
    c.extra[0] = 0;
    chk_kernels(&c);
    c.extra[0] = c.scratch * (uint64_t)chk_int(1, 4);
    chk_kernels(&c);
    CHECK(c.scratch == (uint64_t)36 * EP_PACK_NR * (C + panels * EP_PACK_MR) * 4, "%s: scratch %llu", what,
          (unsigned long long)c.scratch);
    ep_tensor bad = u;
    bad.dims[2] = C + 1;
    refused(&c, &bad, "C+1");
    p.stride[0] = 2;
    refused(&c, &u, "stride 2");
    chk_free(c.ref_out[0]), chk_free(u.data);
    chk_free(x.data), chk_free(w.data), chk_free(b.data), chk_free(r.data);
}

/* ---------------- CONV_TRANSPOSE2D variant PACKED (polyphase; conv_transpose_packed.h) ---------------- */
static int ct_taps_of(int k, int s, int d) { return d >= s ? k : (k - 1) * d / s + 1; }

/* W[C, M, KH, KW] -> [ceil(R/NR)][K][NR], R = M*sh*sw, K = C*TH*TW (plan_format.h) */
static ep_tensor pack_conv_transpose(const float *w, int C, int M, int KH, int KW, const ep_conv_transpose2d_params *p) {
    const int sh = p->stride[0], sw = p->stride[1], dh = p->dilation[0], dw = p->dilation[1];
    const int TH = ct_taps_of(KH, sh, dh), TW = ct_taps_of(KW, sw, dw);
    const int K = C * TH * TW, strips = (M * sh * sw + EP_PACK_NR - 1) / EP_PACK_NR;
    ep_tensor t = chk_mk(NULL, EP_DTYPE_F32, 3, CHK_DIMS(strips, K, EP_PACK_NR));
    float *d = chk_alloc(chk_bytes(&t));
    t.data = d;
    memset(d, 0, chk_bytes(&t));
    for (int c = 0; c < C; c++)
        for (int m = 0; m < M; m++)
            for (int kh = 0; kh < KH; kh++)
                for (int kw = 0; kw < KW; kw++) {
                    const int jh = dh >= sh ? kh : kh * dh / sh, jw = dw >= sw ? kw : kw * dw / sw;
                    const int64_t k = ((int64_t)c * TH + jh) * TW + jw;
                    const int64_t r = ((int64_t)m * sh + kh * dh % sh) * sw + kw * dw % sw;
                    d[((r / EP_PACK_NR) * K + k) * EP_PACK_NR + r % EP_PACK_NR] = w[(((int64_t)c * M + m) * KH + kh) * KW + kw];
                }
    return t;
}

/* kind 0: HiFi-GAN 1-D (kernel 2s, pad s/2), 1: other 1-D, 2: 2-D; wide: the larger extents */
static void conv_transpose_gen(int kind, int wide, int iter) {
    for (;;) {
        ep_conv_transpose2d_params p;
        memset(&p, 0, sizeof p);
        const int N = chk_int(1, 2), C = wide ? chk_int(1, iter % 7 == 0 ? 70 : 12) : chk_int(1, 9);
        const int M = wide ? chk_int(1, iter % 5 == 0 ? 40 : 13) : chk_int(1, 13);
        int H, W;
        if (kind == 0) {
            const int s = 2 << chk_int(0, 2);
            p.kernel[0] = 1, p.kernel[1] = 2 * s, p.stride[0] = 1, p.stride[1] = s;
            p.dilation[0] = p.dilation[1] = 1;
            p.pads[1] = p.pads[3] = s / 2;
            H = 1, W = chk_int(1, wide ? (iter % 3 == 0 ? 80 : 20) : 30);
        } else {
            for (int i = 0; i < 2; i++) {
                p.kernel[i] = chk_int(1, 5);
                p.stride[i] = chk_int(1, 4);
                p.dilation[i] = chk_rnd() % 3 ? 1 : chk_int(2, 3);
                const int lim = p.stride[i] > p.dilation[i] ? p.stride[i] : p.dilation[i];
                p.output_padding[i] = chk_rnd() % 3 ? 0 : chk_int(0, lim - 1);
                p.pads[i] = chk_int(0, 2), p.pads[i + 2] = chk_int(0, 2);
            }
            if (kind == 1) p.kernel[0] = p.stride[0] = p.dilation[0] = 1, p.output_padding[0] = p.pads[0] = p.pads[2] = 0;
            H = kind == 1 ? 1 : chk_int(1, wide ? 13 : 9), W = chk_int(1, kind == 1 ? (wide ? 50 : 40) : (wide ? 17 : 13));
        }
        p.groups = 1;
        p.act = chk_random_act(&p.act_alpha, &p.act_beta, wide);
        const int KH = p.kernel[0], KW = p.kernel[1];
        const int OH = (H - 1) * p.stride[0] - p.pads[0] - p.pads[2] + (KH - 1) * p.dilation[0] + 1 + p.output_padding[0];
        const int OW = (W - 1) * p.stride[1] - p.pads[1] - p.pads[3] + (KW - 1) * p.dilation[1] + 1 + p.output_padding[1];
        if (OH < 1 || OW < 1) {
            if (wide) return;
            continue;   /* no output: draw again */
        }
        ep_conv_transpose2d_params pa = p;
        pa.act = EP_ACT_NONE;
        const int has_b = wide ? (int)(chk_rnd() & 1) : chk_int(0, 3) != 0;
        const int TH = ct_taps_of(KH, p.stride[0], p.dilation[0]), TW = ct_taps_of(KW, p.stride[1], p.dilation[1]);
        const int K = C * TH * TW, strips = (M * p.stride[0] * p.stride[1] + EP_PACK_NR - 1) / EP_PACK_NR;
        const double terms = (double)C * KH * KW;
        ep_tensor x = chk_tensor_rand(4, CHK_DIMS(N, C, H, W), 1.0f), w = chk_tensor_rand(4, CHK_DIMS(C, M, KH, KW), 1.0f);
        ep_tensor b = chk_tensor_rand(1, CHK_DIMS(M), 1.0f), wp = pack_conv_transpose(w.data, C, M, KH, KW, &p);
        char what[200];
        snprintf(what, sizeof what, "conv_transpose N%d C%d M%d %dx%d k%dx%d s%d,%d d%d,%d p%d,%d,%d,%d op%d,%d act%d b%d",
                 N, C, M, H, W, KH, KW, p.stride[0], p.stride[1], p.dilation[0], p.dilation[1], p.pads[0], p.pads[1],
                 p.pads[2], p.pads[3], p.output_padding[0], p.output_padding[1], p.act, has_b);
        chk_case c = {.what = what, .opcode = EP_OP_CONV_TRANSPOSE2D, .params = &p, .params_abs = &pa,
                      .in = {&x, &w, has_b ? &b : NULL}, .n_in = 3, .n_out = 1, .tol = chk_tol_accum(terms),
                      .tol_for = chk_vexp_override(p.act, terms), .keep_ref = 1};
        c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(N, M, OH, OW));
        chk_kernels(&c);   /* variant 0 */
        void *v0 = c.ref_out[0];
        c.ref_out[0] = NULL;
        c.in[1] = &wp;
        c.variant = EP_CONV_TRANSPOSE2D_VARIANT_PACKED;
        c.spec[0] = v0, c.spec_tol = chk_tol_dot(terms);
        c.n_extra = 1;
        c.extra[0] = 0;
        chk_kernels(&c);   /* keeps the variant's reference output: it must be variant 0's bits */
        CHECK(c.ref_out[0] && v0 && !memcmp(c.ref_out[0], v0, chk_bytes(&c.out[0])), "%s: ref packed differs from variant 0 in bits",
              what);
        chk_free(c.ref_out[0]);
        c.keep_ref = 0;
        c.extra[0] = c.scratch * (uint64_t)(wide ? chk_int(1, 40) : chk_int(0, 2));
        chk_kernels(&c);
        CHECK(c.scratch == (uint64_t)K * EP_PACK_MR * 4, "%s: packed scratch %llu", what, (unsigned long long)c.scratch);
        /* hostile plans: wrongly shaped packed weights, plain weights, groups 2, an unknown variant */
        ep_tensor bad = wp;
        bad.dims[1] = K + 1;
        refused(&c, &bad, "K+1");
        bad.dims[1] = K, bad.dims[0] = strips + 1;
        refused(&c, &bad, "an extra strip");
        bad.dims[0] = strips, bad.dims[2] = EP_PACK_NR - 1;
        refused(&c, &bad, "NR-1");
        refused(&c, &w, "plain weights as packed");
        p.groups = 2;
        refused(&c, &wp, "groups 2");
        p.groups = 1;
        c.variant = 2;
        refused(&c, &wp, "an unknown variant");
        chk_free(v0);
        chk_free(x.data), chk_free(w.data), chk_free(b.data), chk_free(wp.data);
        return;
    }
}
static void gen_conv_transpose(int iter) { conv_transpose_gen(iter % 4 < 2 ? iter % 4 : 2, 1, iter); }
static void gen_conv_transpose_small(int iter) { conv_transpose_gen(iter % 3, 0, iter); }

/* ---------------- CONV2D Winograd F(9 - r, r) along W ---------------- */
/* W[M, C, 1, r] -> U = G g as [8][ceil(M/MR)][C][MR]: G's row j = p_j^k / prod_{l != j} (p_j - p_l) over the
 * 7 finite points, the last row (inf) picks g[r - 1] (an independent statement of the compiler's G) */
static ep_tensor pack_winograd1d(const float *w, int M, int C, int r) {
    static const double pt[7] = {0, 1, -1, 2, -2, 0.5, -0.5};
    double G[8][7] = {{0}};
    for (int j = 0; j < 7; j++) {
        double f = 1;
        for (int l = 0; l < 7; l++)
            if (l != j) f *= pt[j] - pt[l];
        for (int k = 0; k < r; k++) G[j][k] = pow(pt[j], k) / f;
    }
    G[7][r - 1] = 1;
    const int panels = (M + EP_PACK_MR - 1) / EP_PACK_MR;
    ep_tensor t = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(8, panels, C, EP_PACK_MR));
    float *d = chk_alloc(chk_bytes(&t));
    t.data = d;
    memset(d, 0, chk_bytes(&t));
    for (int m = 0; m < M; m++)
        for (int c = 0; c < C; c++)
            for (int xi = 0; xi < 8; xi++) {
                double u = 0;
                for (int k = 0; k < r; k++) u += G[xi][k] * w[((int64_t)m * C + c) * r + k];
                d[(((int64_t)xi * panels + m / EP_PACK_MR) * C + c) * EP_PACK_MR + m % EP_PACK_MR] = (float)u;
            }
    return t;
}

/* r = 3..7, dilations up to 13, pads up to the window's span, H up to 3 rows, W past one tile block and not; C up
 * to 80, M up to 40 (MR and NR tails); against variant 0 within chk_tol_dot(K) x 10, as WINOGRAD */
static void gen_winograd1d(int iter) {
    ep_conv2d_params p;
    memset(&p, 0, sizeof p);
    const int r = 3 + iter % 5, dw = iter % 3 == 0 ? chk_int(1, 13) : 1;
    const int N = chk_int(1, 2), C = chk_int(1, iter % 4 == 0 ? 80 : 12), M = chk_int(1, iter % 5 == 0 ? 40 : 14);
    const int H = chk_int(1, 3), W = chk_int(1, iter % 2 ? 300 : 40);
    p.kernel[0] = 1, p.kernel[1] = r;
    p.stride[0] = p.stride[1] = p.dilation[0] = 1;
    p.dilation[1] = dw;
    p.pads[1] = chk_int(0, (r - 1) * dw), p.pads[3] = chk_int(0, (r - 1) * dw);
    p.groups = 1;
    p.act = chk_random_act(&p.act_alpha, &p.act_beta, 1);
    const int OW = W + p.pads[1] + p.pads[3] - (r - 1) * dw;
    if (OW < 1) return;
    const int has_b = chk_rnd() & 1, has_r = (chk_rnd() & 3) == 0, K = C * r, panels = (M + EP_PACK_MR - 1) / EP_PACK_MR;
    ep_tensor x = chk_tensor_rand(4, CHK_DIMS(N, C, H, W), 1.0f), w = chk_tensor_rand(4, CHK_DIMS(M, C, 1, r), 1.0f);
    ep_tensor b = chk_tensor_rand(1, CHK_DIMS(M), 1.0f), rr = chk_tensor_rand(4, CHK_DIMS(N, M, H, OW), 1.0f);
    ep_tensor u = pack_winograd1d(w.data, M, C, r);
    char what[160];
    snprintf(what, sizeof what, "winograd1d N%d C%d M%d %dx%d r%d d%d p%d,%d act%d b%d r%d", N, C, M, H, W, r, dw,
             p.pads[1], p.pads[3], p.act, has_b, has_r);
    chk_tol wide = chk_tol_dot(K);
    wide.max_rel *= 10, wide.abs *= 10;
    chk_case c = {.what = what, .opcode = EP_OP_CONV2D, .params = &p, .in = {&x, &w, has_b ? &b : NULL, has_r ? &rr : NULL},
                  .n_in = 4, .n_out = 1, .tol = chk_tol_dot(K), .tol_for = chk_vexp_override(p.act, K), .keep_ref = 1};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(N, M, H, OW));
    chk_kernels(&c);   /* variant 0 */
    c.in[1] = &u;
    c.variant = EP_CONV2D_VARIANT_WINOGRAD_1D;
    c.keep_ref = 0, c.tol = wide, c.tol_for = NULL, c.spec[0] = c.ref_out[0], c.spec_tol = wide;
    c.n_extra = 1;
    c.extra[0] = c.scratch * (uint64_t)chk_int(1, 4);
    chk_kernels(&c);
    CHECK(c.scratch == (uint64_t)8 * EP_PACK_NR * (C + panels * EP_PACK_MR) * 4, "%s: scratch %llu", what,
          (unsigned long long)c.scratch);
    ep_tensor bad = u;
    bad.dims[0] = 9;
    refused(&c, &bad, "9 points");
    p.kernel[1] = 8;
    refused(&c, &u, "r 8");
    p.kernel[1] = r, p.stride[1] = 2;
    refused(&c, &u, "stride 2");
    p.stride[1] = 1, p.pads[0] = 1;
    refused(&c, &u, "pads along H");
    chk_free(c.ref_out[0]);
    chk_free(x.data), chk_free(w.data), chk_free(b.data), chk_free(rr.data), chk_free(u.data);
}

/* CONCAT and SPLIT read C8 operands only when all are C8 and the axis is 1 (whole blocks per image). */
static void gen_chunk_layouts(int iter) {
    (void)iter;
    ep_tensor a = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(1, 8, 3, 4)), b = a;
    ep_tensor y1 = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(1, 16, 3, 4)), y2 = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(1, 8, 6, 4));
    ep_tensor *in[2] = {&a, &b}, *o1[1] = {&y1}, *o2[1] = {&y2};
    ep_shape sh[2];
    uint64_t scratch;
    for (int lay = 0; lay < 2; lay++)
        for (int axis = 1; axis <= 2; axis++) {
            const ep_axis_params p = {axis, 0};
            a.layout = b.layout = y1.layout = y2.layout = (uint8_t)lay;
            ep_op cat = chk_op(EP_OP_CONCAT, &p, in, 2, axis == 1 ? o1 : o2, 1);
            ep_op split = chk_op(EP_OP_SPLIT, &p, axis == 1 ? o1 : o2, 1, in, 2);
            const int ok = lay == EP_LAYOUT_PLAIN || axis == 1;
            CHECK((ep_op_info_get(EP_OP_CONCAT)->shape(&cat, sh, &scratch) == EP_OK) == ok, "concat layout %d axis %d", lay, axis);
            CHECK((ep_op_info_get(EP_OP_SPLIT)->shape(&split, sh, &scratch) == EP_OK) == ok, "split layout %d axis %d", lay, axis);
            b.layout = (uint8_t)!lay;   /* mixed layouts: refused */
            CHECK(ep_op_info_get(EP_OP_CONCAT)->shape(&cat, sh, &scratch) != EP_OK, "concat mixed layouts");
            CHECK(ep_op_info_get(EP_OP_SPLIT)->shape(&split, sh, &scratch) != EP_OK, "split mixed layouts");
        }
}

static const chk_gen GENS[] = {{"conv", gen_conv, 300}, {"conv_dw", gen_conv_dw, 300}, {"invres", gen_invres, 400},
    {"conv_small", gen_conv_small, 50}, {"conv_1x1", gen_conv_1x1, 20}, {"conv_dw33", gen_conv_dw33, 40},
    {"conv_pw", gen_conv_pw, 150},
    {"conv_dw_small", gen_conv_dw_small, 60}, {"winograd", gen_winograd, 300}, {"winograd1d", gen_winograd1d, 300},
    {"conv_transpose", gen_conv_transpose, 300}, {"conv_transpose_small", gen_conv_transpose_small, 60},
    {"conv_blocked_dw", gen_conv_blocked_dw, 200}, {"conv_blocked_pw", gen_conv_blocked_pw, 150},
    {"reorder", gen_reorder, 100}, {"conv_blocked_conv", gen_conv_blocked_conv, 150},
    {"chunk_layouts", gen_chunk_layouts, 1}};
int main(int argc, char **argv) { return chk_main(argc, argv, "check_conv", GENS, CHK_COUNT(GENS)); }
