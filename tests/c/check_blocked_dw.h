/* Checks of the C8 layout's depthwise convolution (CONV2D BLOCKED_DW): included by check_conv.c.
 *
 * Random depthwise convolutions (groups == C == M, C a multiple of 8 up to 200, N 1..2, maps 1..70 with the
 * sizes 1, 2, 7 and 14 drawn often, kernels 1..5 and an occasional 7, strides 1..3, dilation 1..2, asymmetric
 * pads 0..3, bias, residual and fused activations), and MobileNet-like ones (3x3 or 5x5, stride 1 or 2, pads
 * k/2). X, R and Y are in layout C8 (plan_format.h, "Tensor layouts"), W packed here as [C/8][KH*KW][8] from a
 * random plain [C,1,KH,KW] filter. Every kernel must match the reference of the variant within
 * chk_tol_accum(KH*KW) (chk_tol_dot with the vector-exp activations and HARD_SIGMOID) and variant 0
 * (ep_ref_conv2d_f32 on the plain tensors, its output blocked here) within chk_tol_dot(KH*KW); the reference
 * must equal variant 0 bit for bit (the same taps in the same order). The shape function must refuse packed
 * weights of a wrong shape, plain weights, groups != C, and X, Y or R in the PLAIN layout. */

/* The shape function must refuse the case as it stands. */
static void bdw_refused(chk_case *c, const char *why) {
    ep_tensor *outs[1] = {&c->out[0]};
    ep_op op = chk_op(c->opcode, c->params, c->in, c->n_in, outs, 1);
    op.variant = c->variant;
    ep_shape sh;
    uint64_t scratch;
    CHECK(ep_op_info_get(c->opcode)->shape(&op, &sh, &scratch) != EP_OK, "%s: %s accepted", c->what, why);
}

static void gen_conv_blocked_dw(int iter) {
    static const int sizes[] = {1, 2, 7, 14};
    ep_conv2d_params p;
    memset(&p, 0, sizeof p);
    int C, H, W;
    const int N = chk_int(1, 2);
    if (iter % 4 == 3) {   /* MobileNet-like: 3x3 (5x5 one case in three), stride 1 or 2, pads k/2 */
        const int k = chk_int(0, 2) ? 3 : 5;
        p.kernel[0] = p.kernel[1] = k;
        p.stride[0] = p.stride[1] = chk_int(1, 2);
        p.dilation[0] = p.dilation[1] = 1;
        p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = k / 2;
        H = W = chk_int(0, 2) ? (7 << chk_int(0, 2)) : chk_int(1, 40);
        C = 8 * chk_int(1, 24);
    } else {
        for (int i = 0; i < 2; i++) {
            p.kernel[i] = iter % 29 == 6 ? 7 : chk_int(1, 5);
            p.stride[i] = chk_int(1, 3);
            p.dilation[i] = chk_int(1, 2);
            p.pads[i] = chk_int(0, 3), p.pads[i + 2] = chk_int(0, 3);
        }
        if (iter % 3 == 0) p.kernel[1] = p.kernel[0];
        if (iter % 4 == 0) p.stride[0] = p.stride[1] = p.dilation[0] = p.dilation[1] = 1;
        C = 8 * chk_int(1, iter % 5 == 0 ? 25 : 6);
        H = chk_int(0, 3) ? chk_int(1, 23) : sizes[chk_int(0, 3)];
        W = chk_int(0, 3) ? chk_int(1, iter % 6 == 0 ? 70 : 23) : sizes[chk_int(0, 3)];
    }
    while (C > 8 && (int64_t)C * H * W > 60000) C -= 8;   /* keep each case small */
    const int KH = p.kernel[0], KW = p.kernel[1], KK = KH * KW;
    p.groups = C;
    p.act = chk_random_act(&p.act_alpha, &p.act_beta, iter & 1);
    const int OH = (H + p.pads[0] + p.pads[2] - ((KH - 1) * p.dilation[0] + 1)) / p.stride[0] + 1;
    const int OW = (W + p.pads[1] + p.pads[3] - ((KW - 1) * p.dilation[1] + 1)) / p.stride[1] + 1;
    if (H + p.pads[0] + p.pads[2] < (KH - 1) * p.dilation[0] + 1 ||
        W + p.pads[1] + p.pads[3] < (KW - 1) * p.dilation[1] + 1)
        return;   /* no output */
    const int has_b = chk_rnd() & 1, has_r = chk_int(0, 2) == 0;
    ep_conv2d_params pa = p;
    pa.act = EP_ACT_NONE;

    /* variant 0 on the plain tensors */
    ep_tensor x = chk_tensor_rand(4, CHK_DIMS(N, C, H, W), 1.0f), w = chk_tensor_rand(4, CHK_DIMS(C, 1, KH, KW), 1.0f);
    ep_tensor b = chk_tensor_rand(1, CHK_DIMS(C), 1.0f), r = chk_tensor_rand(4, CHK_DIMS(N, C, OH, OW), 1.0f);
    ep_tensor y0 = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(N, C, OH, OW));
    y0.data = chk_alloc(chk_bytes(&y0));
    {
        ep_tensor *in[4] = {&x, &w, has_b ? &b : NULL, has_r ? &r : NULL}, *out[1] = {&y0};
        ep_op op = chk_op(EP_OP_CONV2D, &p, in, 4, out, 1);
        ep_ref_conv2d_f32(&op);
    }
    ep_tensor x8 = chk_c8(&x), r8 = chk_c8(&r), y8 = chk_c8(&y0);
    /* W as [C/8][KH*KW][8]: tap (kh, kw) of channel c at (c/8)*KK*8 + (kh*KW + kw)*8 + c%8 */
    ep_tensor wp = chk_mk(NULL, EP_DTYPE_F32, 3, CHK_DIMS(C / 8, KK, 8));
    wp.data = chk_alloc(chk_bytes(&wp));
    for (int c = 0; c < C; c++)
        for (int k = 0; k < KK; k++)
            ((float *)wp.data)[((c / 8) * KK + k) * 8 + c % 8] = ((const float *)w.data)[c * KK + k];

    /* HARD_SIGMOID adds beta after the sum: its rounding at the result's magnitude (|beta| ~ 0.5) is outside the
     * per-element bound of the sum, so every kernel is held to chk_tol_dot with it, as with the vector exp's */
    static chk_tol_for hsig[2];
    hsig[0].kernel = "*", hsig[0].tol = chk_tol_dot(KK), hsig[1].kernel = NULL;
    const chk_tol_for *tol_for = p.act == EP_ACT_HARD_SIGMOID ? hsig : chk_vexp_override(p.act, KK);
    char what[200];
    snprintf(what, sizeof what, "conv blocked_dw N%d C%d %dx%d k%dx%d s%d,%d d%d,%d p%d,%d,%d,%d act%d b%d r%d", N, C,
             H, W, KH, KW, p.stride[0], p.stride[1], p.dilation[0], p.dilation[1], p.pads[0], p.pads[1], p.pads[2],
             p.pads[3], p.act, has_b, has_r);
    chk_case c = {.what = what, .opcode = EP_OP_CONV2D, .variant = EP_CONV2D_VARIANT_BLOCKED_DW, .params = &p,
                  .params_abs = &pa, .in = {&x8, &wp, has_b ? &b : NULL, has_r ? &r8 : NULL}, .n_in = 4, .n_out = 1,
                  .tol = chk_tol_accum(KK), .tol_for = tol_for, .spec = {y8.data},
                  .spec_tol = chk_tol_dot(KK), .keep_ref = 1};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(N, C, OH, OW));
    c.out[0].layout = EP_LAYOUT_C8;
    chk_kernels(&c);
    CHECK(c.ref_out[0] && !memcmp(c.ref_out[0], y8.data, chk_bytes(&y8)),
          "%s: ref blocked_dw differs from variant 0 in bits", what);
    CHECK(c.scratch == 0, "%s: scratch %llu", what, (unsigned long long)c.scratch);
    chk_free(c.ref_out[0]);

    /* hostile plans */
    c.out[0].layout = EP_LAYOUT_C8;
    ep_tensor bad = wp;
    bad.dims[1] = KK + 1;
    c.in[1] = &bad;
    bdw_refused(&c, "KH*KW+1 taps");
    bad.dims[1] = KK, bad.dims[0] = C / 8 + 1;
    bdw_refused(&c, "an extra channel block");
    bad.dims[0] = C / 8, bad.dims[2] = 4;
    bdw_refused(&c, "4 channels per block");
    c.in[1] = &w;
    bdw_refused(&c, "plain weights");
    c.in[1] = &wp;
    p.groups = 1;
    bdw_refused(&c, "groups 1");
    p.groups = C;
    x8.layout = EP_LAYOUT_PLAIN;
    bdw_refused(&c, "a PLAIN X");
    x8.layout = EP_LAYOUT_C8;
    c.out[0].layout = EP_LAYOUT_PLAIN;
    bdw_refused(&c, "a PLAIN Y");
    c.out[0].layout = EP_LAYOUT_C8;
    r8.layout = EP_LAYOUT_PLAIN;
    c.in[3] = &r8;
    bdw_refused(&c, "a PLAIN R");

    chk_free(x.data), chk_free(w.data), chk_free(b.data), chk_free(r.data), chk_free(y0.data);
    chk_free(x8.data), chk_free(r8.data), chk_free(y8.data), chk_free(wp.data);
}
