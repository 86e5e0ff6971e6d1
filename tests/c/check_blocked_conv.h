/* Checks of the C8 layout's dense convolution (CONV2D BLOCKED_CONV): included by check_conv.c, after
 * check_blocked_pw.h (bpw_refused).
 *
 * Random convolutions of groups 1: X in C8 (C a multiple of 8 up to 256) or PLAIN (C 1..5, the stems, and larger
 * odd C; a stem of at most 8 channels also NHWC, plan 1.14),
 * M a multiple of 8 up to 256 (M = 8 mod 16 included: the strip with 8 real columns), N 1..2, maps 1..60
 * with odd sizes, kernels 1..7 (3 and 5 most), strides 1..3, dilation 1..2, asymmetric pads 0..3 (pads larger than
 * the kernel needs, 1x1 maps under a 3x3 pad 1 kernel: pixels with few or no valid taps), bias, residual and the
 * fused activations conv_check draws. The shapes reach every path of the ISA kernels: row tiles and their tails (a
 * tile repeating its last pixel, 1-pixel tiles), border columns as column tiles, several k-blocks (C*KH*KW past
 * 256), the 8-channel tiles of a half strip. R and Y (and a C8 X) are blocked here from plain data; W^T is packed
 * from a random plain [M,C,KH,KW] filter as GEMM-B strips [ceil(M/16)][K][16], K = C*KH*KW, with its rows in (c/8,
 * kh, kw, c%8) order for a C8 X and (c, kh, kw) order for a PLAIN one. Every kernel is held to chk_tol_accum(K)
 * against the variant's reference and to chk_tol_dot(K) against variant 0 on the plain data (blocked here); in a
 * third of the cases also to the same bytes with W^T stored as F16 or BF16 as with its rounded f32 values
 * (chk_w16_exact), or, past EP_BLOCKED_W16_ROWS rows per input unit, to the shape function's refusal. The
 * shape function must refuse strips of a wrong shape, plain weights, groups 2, and Y or R in PLAIN. */

/* W[M][C][KH][KW] as W^T [K][M] strips, rows in (c/8, kh, kw, c%8) order (X layout c8 == EP_LAYOUT_C8),
 * (kh, kw, c) order (EP_LAYOUT_NHWC) or (c, kh, kw) order */
static ep_tensor bcv_pack(const float *w, int M, int C, int KH, int KW, int layout) {
    const int c8 = layout == EP_LAYOUT_C8, nhwc = layout == EP_LAYOUT_NHWC;
    const int K = C * KH * KW;
    float *t = (float *)malloc((size_t)M * K * sizeof(float));
    for (int m = 0; m < M; m++)
        for (int c = 0; c < C; c++)
            for (int kh = 0; kh < KH; kh++)
                for (int kw = 0; kw < KW; kw++) {
                    const int k = c8 ? ((c / 8 * KH + kh) * KW + kw) * 8 + c % 8
                                  : nhwc ? (kh * KW + kw) * C + c : (c * KH + kh) * KW + kw;
                    t[(int64_t)m * K + k] = w[(((int64_t)m * C + c) * KH + kh) * KW + kw];
                }
    ep_tensor s = chk_pack_blocks(t, K, M, 1, K, EP_PACK_NR);
    free(t);
    return s;
}

/* layout: X's (EP_LAYOUT_C8, PLAIN or NHWC) */
static void bcv_check(ep_conv2d_params *p, int N, int C, int M, int H, int W, int layout, int has_b, int has_r) {
    const int c8 = layout == EP_LAYOUT_C8, nhwc = layout == EP_LAYOUT_NHWC;
    const int prelu = chk_rnd() % 4 == 0;   /* the per-channel PReLU epilogue: the spec without it, then it */
    if (prelu) p->act = EP_ACT_NONE;
    ep_conv2d_params pa = *p;
    pa.act = EP_ACT_NONE;
    const int KH = p->kernel[0], KW = p->kernel[1], K = C * KH * KW;
    const int OH = (H + p->pads[0] + p->pads[2] - ((KH - 1) * p->dilation[0] + 1)) / p->stride[0] + 1;
    const int OW = (W + p->pads[1] + p->pads[3] - ((KW - 1) * p->dilation[1] + 1)) / p->stride[1] + 1;
    ep_tensor x = chk_tensor_rand(4, CHK_DIMS(N, C, H, W), 1.0f), w = chk_tensor_rand(4, CHK_DIMS(M, C, KH, KW), 1.0f);
    ep_tensor b = chk_tensor_rand(1, CHK_DIMS(M), 1.0f), r = chk_tensor_rand(4, CHK_DIMS(N, M, OH, OW), 1.0f);
    ep_tensor xb = chk_mk(chk_alloc(chk_bytes(&x)), EP_DTYPE_F32, 4, x.dims);
    ep_tensor rb = chk_mk(chk_alloc(chk_bytes(&r)), EP_DTYPE_F32, 4, r.dims);
    if (c8) {
        chk_c8_block(xb.data, x.data, CHK_DIMS(N, C, H, W), 1);
    } else if (nhwc) {   /* [N][H][W][C] */
        const float *xs = (const float *)x.data;
        float *xd = (float *)xb.data;
        for (int n = 0; n < N; n++)
            for (int c = 0; c < C; c++)
                for (int q = 0; q < H * W; q++) xd[((int64_t)n * H * W + q) * C + c] = xs[((int64_t)n * C + c) * H * W + q];
    } else {
        memcpy(xb.data, x.data, chk_bytes(&x));
    }
    chk_c8_block(rb.data, r.data, CHK_DIMS(N, M, OH, OW), 1);
    xb.layout = (uint8_t)layout;
    rb.layout = EP_LAYOUT_C8;
    ep_tensor wt = bcv_pack(w.data, M, C, KH, KW, layout);
    char what[200];
    snprintf(what, sizeof what, "blocked_conv %s N%d C%d M%d %dx%d k%dx%d s%d,%d d%d,%d p%d,%d,%d,%d act%d b%d r%d",
             c8 ? "c8" : nhwc ? "nhwc" : "plain", N, C, M, H, W, KH, KW, p->stride[0], p->stride[1], p->dilation[0], p->dilation[1],
             p->pads[0], p->pads[1], p->pads[2], p->pads[3], p->act, has_b, has_r);
    /* variant 0 on the plain data: the spec, blocked */
    chk_case c = {.what = what, .opcode = EP_OP_CONV2D, .params = p, .params_abs = &pa,
                  .in = {&x, &w, has_b ? &b : NULL, has_r ? &r : NULL}, .n_in = 4, .n_out = 1,
                  .tol = chk_tol_accum(K), .tol_for = chk_vexp_override(p->act, K), .keep_ref = 1};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(N, M, OH, OW));
    chk_kernels(&c);
    ep_tensor sl = chk_tensor_rand(1, CHK_DIMS(M), 1.0f);   /* slopes in [-1, 1] */
    if (prelu) chk_prelu_plain((float *)c.ref_out[0], (const float *)sl.data, N, M, (int64_t)OH * OW);
    float *spec = (float *)chk_alloc(chk_bytes(&c.out[0]));
    chk_c8_block(spec, c.ref_out[0], CHK_DIMS(N, M, OH, OW), 1);
    chk_free(c.ref_out[0]);
    c.keep_ref = 0;
    c.spec[0] = spec;
    c.spec_tol = chk_tol_dot(K);
    c.variant = EP_CONV2D_VARIANT_BLOCKED_CONV;
    c.in[0] = &xb, c.in[1] = &wt, c.in[3] = has_r ? &rb : NULL;
    if (prelu) p->act = EP_CONV_ACT_PRELU, c.in[4] = &sl, c.n_in = 5;
    c.out[0].layout = EP_LAYOUT_C8;
    chk_kernels(&c);
    CHECK(c.scratch == 0, "%s: scratch %llu", what, (unsigned long long)c.scratch);
    if (chk_rnd() % 3 == 0) {   /* 16-bit weights: the bytes of their rounded f32 values, or refused */
        ep_tensor wr = chk_mk(chk_alloc(chk_bytes(&wt)), EP_DTYPE_F32, wt.rank, wt.dims);
        memcpy(wr.data, wt.data, chk_bytes(&wt));
        ep_tensor w16 = chk_w16_round(&wr, (int)(chk_rnd() & 1));
        c.in[1] = &wr, c.spec[0] = NULL;
        if (KH * KW * (c8 ? 8 : nhwc ? C : 1) <= EP_BLOCKED_W16_ROWS) {
            chk_w16_exact(&c, 1, &w16);
        } else {
            c.in[1] = &w16;
            bpw_refused(&c, "16-bit weights with a unit past EP_BLOCKED_W16_ROWS rows");
        }
        c.in[1] = &wt, c.spec[0] = spec;
        chk_free(wr.data), chk_free(w16.data);
    }
    /* hostile plans: the shape function refuses them */
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(N, M, OH, OW));
    c.out[0].layout = EP_LAYOUT_C8;
    c.in[3] = &rb;
    ep_tensor bad = wt;
    bad.dims[0]++;
    c.in[1] = &bad;
    bpw_refused(&c, "an extra strip");
    if (M > 16) {
        bad.dims[0] -= 2;
        bpw_refused(&c, "a strip short");
    }
    bad.dims[0] = wt.dims[0], bad.dims[1] = K + (c8 ? 8 : nhwc ? C : 1);
    bpw_refused(&c, "strips of more rows");
    bad.dims[1] = K - 1;
    bpw_refused(&c, "strips of K-1 rows");
    bad.dims[1] = K, bad.dims[2] = EP_PACK_NR - 8;
    bpw_refused(&c, "strips 8 wide");
    c.in[1] = &w;
    bpw_refused(&c, "plain weights");
    c.in[1] = &wt;
    if (C % 2 == 0 && M % 16 == 0) {   /* grouped weights would be strips of C/2*KH*KW rows */
        p->groups = 2;
        bad = wt, bad.dims[1] = K / 2;
        c.in[1] = &bad;
        bpw_refused(&c, "groups 2 (K/2-row strips)");
        c.in[1] = &wt;
        bpw_refused(&c, "groups 2");
        p->groups = 1;
    }
    c.out[0].layout = EP_LAYOUT_PLAIN;
    bpw_refused(&c, "Y plain");
    c.out[0].layout = EP_LAYOUT_C8, rb.layout = EP_LAYOUT_PLAIN;
    bpw_refused(&c, "R plain");
    rb.layout = EP_LAYOUT_C8;
    chk_free(spec), chk_free(wt.data), chk_free(xb.data), chk_free(rb.data), chk_free(sl.data);
    chk_free(x.data), chk_free(w.data), chk_free(b.data), chk_free(r.data);
}

/* A kernel extent: 3 and 5 most, 1..7 */
static int bcv_kernel(void) {
    static const int k[] = {3, 3, 3, 3, 5, 5, 1, 2, 4, 6, 7};
    return k[chk_int(0, 10)];
}

/* Shapes, by iter % 10: 0 C8 3x3 / 5x5 (stride 1..2, pads k/2) on maps up to 60 with few channels; 1 the same on
 * small maps with more channels; 2 many channels in (C up to 256: several k-blocks); 3 many outputs (M up to 256);
 * 4 a PLAIN stem (C 1..4, 3x3 or 7x7, stride 2, pads k/2) on maps up to 60; 5 PLAIN, random geometry, C 1..5 or
 * odd up to 41; 6 M = 8 mod 16 and odd maps; 7 maps of 1..3 under pads up to 3; else random geometry. */
static void gen_conv_blocked_conv(int iter) {
    const int kind = iter % 10, N = chk_int(1, 2);
    for (;;) {
        ep_conv2d_params p;
        memset(&p, 0, sizeof p);
        p.groups = 1;
        p.act = chk_random_act(&p.act_alpha, &p.act_beta, 1);
        for (int i = 0; i < 2; i++) {
            p.kernel[i] = bcv_kernel();
            p.stride[i] = chk_int(1, 3);
            p.dilation[i] = chk_int(0, 3) ? 1 : 2;
            p.pads[i] = chk_int(0, 3), p.pads[i + 2] = chk_int(0, 3);
        }
        if (chk_int(0, 2) == 0) p.kernel[1] = p.kernel[0];
        int c8 = 1, C = 8 * chk_int(1, 6), M = 8 * chk_int(1, 6), H = chk_int(1, 24), W = chk_int(1, 24);
        if (kind <= 1 || kind == 4) {   /* square, stride 1..2, pads k/2 */
            const int k = kind == 4 ? (chk_int(0, 2) ? 3 : 7) : (chk_int(0, 3) ? 3 : 5);
            p.kernel[0] = p.kernel[1] = k;
            p.stride[0] = p.stride[1] = kind == 4 ? 2 : chk_int(1, 2);
            p.dilation[0] = p.dilation[1] = 1;
            p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = k / 2;
        }
        if (kind == 0) H = chk_int(20, 60), W = chk_int(20, 60), C = 8 * chk_int(1, 2), M = 8 * chk_int(1, 3);
        if (kind == 1) H = chk_int(1, 16), W = chk_int(1, 16), C = 8 * chk_int(2, 8), M = 8 * chk_int(2, 8);
        if (kind == 2) C = 8 * chk_int(12, 32), M = 8 * chk_int(1, 4), H = chk_int(1, 8), W = chk_int(1, 10);
        if (kind == 3) M = 8 * chk_int(12, 32), C = 8 * chk_int(1, 2), H = chk_int(1, 8), W = chk_int(1, 10);
        if (kind == 4) c8 = 0, C = chk_int(1, 4), M = 8 * chk_int(1, 4), H = chk_int(1, 60), W = chk_int(1, 60);
        if (kind == 5) c8 = 0, C = chk_int(0, 1) ? chk_int(1, 5) : 2 * chk_int(3, 20) + 1;
        if (kind == 6) M = 16 * chk_int(0, 4) + 8, H = 2 * chk_int(0, 12) + 1, W = 2 * chk_int(0, 12) + 1;
        if (kind == 7) H = chk_int(1, 3), W = chk_int(1, 3);
        if (kind == 7 && chk_int(0, 1)) {   /* 3x3 stride 1 pad 1: the only valid taps are the map's own */
            p.kernel[0] = p.kernel[1] = 3, p.stride[0] = p.stride[1] = 1, p.dilation[0] = p.dilation[1] = 1;
            p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = 1;
        }
        if (kind >= 8 && chk_int(0, 2) == 0) c8 = 0, C = chk_int(1, 12);
        if (H + p.pads[0] + p.pads[2] < (p.kernel[0] - 1) * p.dilation[0] + 1 ||
            W + p.pads[1] + p.pads[3] < (p.kernel[1] - 1) * p.dilation[1] + 1)
            continue;   /* no output: draw again */
        const int has_b = chk_rnd() & 1, has_r = (chk_rnd() & 3) == 0;
        /* a plain stem of at most 8 channels reads the image as it comes in half the cases (NHWC, 1.14) */
        const int layout = c8 ? EP_LAYOUT_C8 : C <= 8 && chk_int(0, 1) ? EP_LAYOUT_NHWC : EP_LAYOUT_PLAIN;
        bcv_check(&p, N, C, M, H, W, layout, has_b, has_r);
        return;
    }
}
