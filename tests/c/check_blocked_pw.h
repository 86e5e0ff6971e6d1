/* Checks of the C8 layout's pointwise convolution (CONV2D BLOCKED_PW) and of REORDER: included by check_conv.c.
 *
 * BLOCKED_PW: random C and M (multiples of 8 up to ~1000 in some cases, M = 8 mod 16 included, so that both tile
 * widths, the k-blocks and the half strip run), N 1..2, H*W from 1 to a few thousand pixels (every tail: a tile
 * repeating its last pixel, 1-pixel tiles), bias, residual and the fused activations conv_check draws. X, R and Y
 * are blocked here from plain data (independently of REORDER) and W^T is packed as GEMM-B strips
 * [ceil(M/16)][C][16]. Every kernel is held to chk_tol_accum(C) against the variant's reference and to
 * chk_tol_dot(C) against variant 0 on the plain data (blocked here); in a third of the cases also to the same
 * bytes with W^T stored as F16 or BF16 as with its rounded f32 values (chk_w16_exact). The shape function must refuse strips of a
 * wrong shape, a 3x3 kernel, stride 2, pads, groups 2, and X, Y or R in PLAIN.
 * REORDER: random N, C (a multiple of 8), H and W (1 and odd included), both directions, every kernel equal to
 * the layout's definition bit for bit (it moves data). chk_kernels declares its outputs afresh after the shape
 * function (layout PLAIN), so the direction to C8 runs here through every table's kernel, on one thread and on
 * the pool, with the harness's guards; the direction to PLAIN runs through chk_kernels as well. A session must
 * refuse two PLAIN or two C8 tensors, different dims and a dtype other than f32. */

/* The PReLU epilogue (EP_CONV_ACT_PRELU, 1.14): y[n][m][..] = y < 0 ? s[m] y : y on a plain [N,M,P] output */
static void chk_prelu_plain(float *y, const float *s, int N, int M, int64_t P) {
    for (int n = 0; n < N; n++)
        for (int m = 0; m < M; m++)
            for (int64_t q = 0; q < P; q++) {
                float *v = y + ((int64_t)n * M + m) * P + q;
                if (*v < 0.0f) *v = s[m] * *v;
            }
}

/* A session must refuse c's op: its shape function refuses it, or computes another output than the declared
 * one (session.c check_shapes). */
static void bpw_refused(chk_case *c, const char *why) {
    ep_tensor *outs[1] = {&c->out[0]};
    ep_op op = chk_op(c->opcode, c->params, c->in, c->n_in, outs, 1);
    op.variant = c->variant;
    ep_shape sh[1];
    uint64_t scratch;
    const ep_tensor *y = &c->out[0];
    const int rc = ep_op_info_get(c->opcode)->shape(&op, sh, &scratch);
    CHECK(rc != EP_OK || sh[0].rank != y->rank || sh[0].dtype != y->dtype ||
              memcmp(sh[0].dims, y->dims, sizeof(int32_t) * y->rank),
          "%s: %s accepted", c->what, why);
}

static void bpw_check(int N, int C, int M, int H, int W, int has_b, int has_r) {
    ep_conv2d_params p, pa;
    memset(&p, 0, sizeof p);
    p.kernel[0] = p.kernel[1] = p.stride[0] = p.stride[1] = p.dilation[0] = p.dilation[1] = p.groups = 1;
    p.act = chk_random_act(&p.act_alpha, &p.act_beta, 1);
    const int prelu = chk_rnd() % 4 == 0;   /* the per-channel PReLU epilogue: the spec without it, then it */
    if (prelu) p.act = EP_ACT_NONE;
    pa = p;
    pa.act = EP_ACT_NONE;
    ep_tensor x = chk_tensor_rand(4, CHK_DIMS(N, C, H, W), 1.0f), w = chk_tensor_rand(4, CHK_DIMS(M, C, 1, 1), 1.0f);
    ep_tensor b = chk_tensor_rand(1, CHK_DIMS(M), 1.0f), r = chk_tensor_rand(4, CHK_DIMS(N, M, H, W), 1.0f);
    ep_tensor xb = chk_mk(chk_alloc(chk_bytes(&x)), EP_DTYPE_F32, 4, x.dims);
    ep_tensor rb = chk_mk(chk_alloc(chk_bytes(&r)), EP_DTYPE_F32, 4, r.dims);
    chk_c8_block(xb.data, x.data, CHK_DIMS(N, C, H, W), 1);
    chk_c8_block(rb.data, r.data, CHK_DIMS(N, M, H, W), 1);
    xb.layout = rb.layout = EP_LAYOUT_C8;
    ep_tensor wt = chk_pack_blocks(w.data, C, M, 1, C, EP_PACK_NR);   /* W^T [C][M] as GEMM-B strips */
    char what[160];
    snprintf(what, sizeof what, "blocked_pw N%d C%d M%d %dx%d act%d b%d r%d", N, C, M, H, W, p.act, has_b, has_r);
    /* variant 0 on the plain data: the spec, blocked */
    chk_case c = {.what = what, .opcode = EP_OP_CONV2D, .params = &p, .params_abs = &pa,
                  .in = {&x, &w, has_b ? &b : NULL, has_r ? &r : NULL}, .n_in = 4, .n_out = 1,
                  .tol = chk_tol_accum(C), .tol_for = chk_vexp_override(p.act, C), .keep_ref = 1};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(N, M, H, W));
    chk_kernels(&c);
    ep_tensor sl = chk_tensor_rand(1, CHK_DIMS(M), 1.0f);   /* slopes in [-1, 1] */
    if (prelu) chk_prelu_plain((float *)c.ref_out[0], (const float *)sl.data, N, M, (int64_t)H * W);
    float *spec = (float *)chk_alloc(chk_bytes(&c.out[0]));
    chk_c8_block(spec, c.ref_out[0], CHK_DIMS(N, M, H, W), 1);
    chk_free(c.ref_out[0]);
    c.keep_ref = 0;
    c.spec[0] = spec;
    c.spec_tol = chk_tol_dot(C);
    c.variant = EP_CONV2D_VARIANT_BLOCKED_PW;
    c.in[0] = &xb, c.in[1] = &wt, c.in[3] = has_r ? &rb : NULL;
    if (prelu) p.act = EP_CONV_ACT_PRELU, c.in[4] = &sl, c.n_in = 5;
    c.out[0].layout = EP_LAYOUT_C8;
    chk_kernels(&c);
    CHECK(c.scratch == 0, "%s: scratch %llu", what, (unsigned long long)c.scratch);
    if (chk_rnd() % 3 == 0) {   /* 16-bit weights: the bytes of their rounded f32 values */
        ep_tensor wr = chk_mk(chk_alloc(chk_bytes(&wt)), EP_DTYPE_F32, wt.rank, wt.dims);
        memcpy(wr.data, wt.data, chk_bytes(&wt));
        ep_tensor w16 = chk_w16_round(&wr, (int)(chk_rnd() & 1));
        c.in[1] = &wr, c.spec[0] = NULL;
        chk_w16_exact(&c, 1, &w16);
        c.in[1] = &wt, c.spec[0] = spec;
        chk_free(wr.data), chk_free(w16.data);
    }
    /* hostile plans: the shape function refuses them */
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(N, M, H, W));
    c.out[0].layout = EP_LAYOUT_C8;
    c.in[3] = &rb;
    if (prelu) {   /* the slopes: one per channel, with the PReLU act only */
        ep_tensor bs = sl;
        bs.dims[0] = M + 1;
        c.in[4] = &bs;
        bpw_refused(&c, "M + 1 slopes");
        c.in[4] = &sl, p.act = EP_ACT_NONE;
        bpw_refused(&c, "slopes without the PReLU act");
        p.act = EP_CONV_ACT_PRELU, c.in[4] = NULL;
        bpw_refused(&c, "the PReLU act without slopes");
        c.in[4] = &sl;
    }
    ep_tensor bad = wt;
    bad.dims[0]++;
    c.in[1] = &bad;
    bpw_refused(&c, "an extra strip");
    bad.dims[0]--, bad.dims[1] = C + 8;
    bpw_refused(&c, "strips of C+8 rows");
    bad.dims[1] = C, bad.dims[2] = EP_PACK_NR - 8;
    bpw_refused(&c, "strips 8 wide");
    c.in[1] = &w;
    bpw_refused(&c, "plain weights");
    c.in[1] = &wt;
    p.kernel[0] = p.kernel[1] = 3, p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = 1;
    bpw_refused(&c, "a 3x3 kernel");
    p.kernel[0] = p.kernel[1] = 1, p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = 0;
    p.stride[0] = p.stride[1] = 2;
    if (H > 1 && W > 1) {   /* stride 2 changes Y's extents: R and Y declared as the strided output */
        const int32_t *d = CHK_DIMS(N, M, (H + 1) / 2, (W + 1) / 2);
        ep_tensor out2 = chk_mk(NULL, EP_DTYPE_F32, 4, d), keep = c.out[0];
        out2.layout = EP_LAYOUT_C8;
        c.out[0] = out2, c.in[3] = NULL;
        bpw_refused(&c, "stride 2");
        c.out[0] = keep, c.in[3] = &rb;
    }
    p.stride[0] = p.stride[1] = 1;
    p.stride[1] = 2;
    bpw_refused(&c, "stride 1,2");
    p.stride[1] = 1, p.pads[chk_int(0, 3)] = 1;
    bpw_refused(&c, "a pad");
    memset(p.pads, 0, sizeof p.pads);
    if (C % 16 == 0 && M % 16 == 0) {   /* grouped weights are strips of C/2 rows */
        p.groups = 2;
        bad = wt, bad.dims[1] = C / 2;
        c.in[1] = &bad;
        bpw_refused(&c, "groups 2 (C/2-row strips)");
        c.in[1] = &wt;
        bpw_refused(&c, "groups 2");
        p.groups = 1;
    }
    xb.layout = EP_LAYOUT_PLAIN;
    bpw_refused(&c, "X plain");
    xb.layout = EP_LAYOUT_C8, c.out[0].layout = EP_LAYOUT_PLAIN;
    bpw_refused(&c, "Y plain");
    c.out[0].layout = EP_LAYOUT_C8, rb.layout = EP_LAYOUT_PLAIN;
    bpw_refused(&c, "R plain");
    chk_free(spec), chk_free(wt.data), chk_free(xb.data), chk_free(rb.data), chk_free(sl.data);
    chk_free(x.data), chk_free(w.data), chk_free(b.data), chk_free(r.data);
}

/* Shapes, by iter % 10: 0 many channels in (C up to 1000: several k-blocks), 1 many outputs (M up to 1000),
 * 2 many pixels (H*W up to ~3000), 3 M = 8 mod 16 and odd pixel counts, else small (C, M <= 96, maps <= 20x20). */
static void gen_conv_blocked_pw(int iter) {
    const int kind = iter % 10, N = chk_int(1, 2);
    int C = 8 * chk_int(1, 12), M = 8 * chk_int(1, 12), H = chk_int(1, 20), W = chk_int(1, 20);
    if (kind == 0) C = 8 * chk_int(20, 125), H = chk_int(1, 6), W = chk_int(1, 9), M = 8 * chk_int(1, 5);
    if (kind == 1) M = 8 * chk_int(20, 125), H = chk_int(1, 5), W = chk_int(1, 7), C = 8 * chk_int(1, 4);
    if (kind == 2) H = chk_int(20, 60), W = chk_int(20, 55), C = 8 * chk_int(1, 3), M = 8 * chk_int(1, 4);
    if (kind == 3) M = 16 * chk_int(0, 5) + 8, H = 2 * chk_int(0, 10) + 1, W = 2 * chk_int(0, 10) + 1;
    const int has_b = chk_rnd() & 1, has_r = (chk_rnd() & 3) == 0;
    bpw_check(N, C, M, H, W, has_b, has_r);
}

/* REORDER to C8 through every table's kernel (see the top of this file): exact, guards, inputs unchanged. */
static void ro_run_c8(chk_case *c, const float *want) {
    const size_t bytes = chk_bytes(c->in[0]);
    void *snap = malloc(bytes);
    memcpy(snap, c->in[0]->data, bytes);
    ep_kernel_fn tested[CHK_N_LEVELS + 1] = {0};
    for (int ti = 0; ti < chk_n_tables; ti++) {
        const ep_kernel_fn fn = chk_tables[ti].t.fn[EP_OP_REORDER][0];
        int seen = 0;
        for (int k = 0; k < ti; k++) seen |= tested[k] == fn;
        tested[ti] = fn;
        if (!fn || seen || (ti && !chk_checked_here(ti, EP_OP_REORDER, 0))) continue;
        for (int run = 0; run < (ti && chk_pool.n_threads > 1 ? 2 : 1); run++) {
            ep_tensor y = c->out[0];
            y.data = chk_alloc(bytes);
            ep_tensor *outs[1] = {&y};
            ep_op op = chk_op(EP_OP_REORDER, c->params, c->in, 1, outs, 1);
            op.pool = run ? &chk_pool : NULL;
            const char *how = run ? "threads" : "1 thread";
            const int rc = fn(&op), g = chk_guard(y.data);
            int ok = 1;
            if (rc != EP_OK) ok = 0, chk_report(c, ti, how, "returned %d", rc);
            if (g) ok = 0, chk_report(c, ti, how, "wrote output 0 %s", chk_guard_str(g));
            if (memcmp(snap, c->in[0]->data, bytes)) ok = 0, chk_report(c, ti, how, "modified input 0");
            if (ok && memcmp(y.data, want, bytes))
                ok = 0, chk_report(c, ti, how, "output 0 differs from the layout's definition");
            if (ok) chk_passed(c, ti);
            chk_free(y.data);
        }
    }
    free(snap);
}

static void gen_reorder(int iter) {
    const int N = chk_int(1, 2), C = 8 * chk_int(1, iter % 4 == 0 ? 40 : 6);
    const int H = iter % 5 == 0 ? 1 : chk_int(1, 30), W = iter % 7 == 0 ? 1 : chk_int(1, iter % 3 == 0 ? 70 : 17);
    ep_reorder_params rp;
    memset(&rp, 0, sizeof rp);
    ep_tensor x = chk_tensor_rand(4, CHK_DIMS(N, C, H, W), 1.0f), xb = chk_tensor_rand(4, CHK_DIMS(N, C, H, W), 1.0f);
    float *to_c8 = (float *)chk_alloc(chk_bytes(&x)), *to_plain = (float *)chk_alloc(chk_bytes(&x));
    chk_c8_block(to_c8, x.data, CHK_DIMS(N, C, H, W), 1);
    chk_c8_block(to_plain, xb.data, CHK_DIMS(N, C, H, W), 0);
    xb.layout = EP_LAYOUT_C8;
    char what[96];
    snprintf(what, sizeof what, "reorder N%d C%d %dx%d to C8", N, C, H, W);
    chk_case c = {.what = what, .opcode = EP_OP_REORDER, .params = &rp, .in = {&x}, .n_in = 1, .n_out = 1,
                  .tol = CHK_EXACT, .spec_tol = CHK_EXACT};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, x.dims);
    c.out[0].layout = EP_LAYOUT_C8;
    {   /* plain -> C8: the shape function, then every kernel here */
        ep_tensor *outs[1] = {&c.out[0]};
        ep_op op = chk_op(EP_OP_REORDER, &rp, c.in, 1, outs, 1);
        ep_shape sh[1];
        uint64_t scratch = 1;
        const int rc = ep_op_info_get(EP_OP_REORDER)->shape(&op, sh, &scratch);
        CHECK(rc == EP_OK && scratch == 0 && sh[0].rank == 4 && !memcmp(sh[0].dims, x.dims, 4 * sizeof(int32_t)),
              "%s: shape function %d", what, rc);
        if (rc == EP_OK) ro_run_c8(&c, to_c8);
    }
    snprintf(what, sizeof what, "reorder N%d C%d %dx%d to plain", N, C, H, W);
    c.in[0] = &xb;
    c.out[0].layout = EP_LAYOUT_PLAIN;
    c.spec[0] = to_plain;
    chk_kernels(&c);
    /* hostile plans */
    c.spec[0] = NULL;
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, x.dims);
    c.in[0] = &x;
    bpw_refused(&c, "both plain");
    c.in[0] = &xb, c.out[0].layout = EP_LAYOUT_C8;
    bpw_refused(&c, "both C8");
    c.out[0].layout = EP_LAYOUT_PLAIN, c.out[0].dims[chk_int(0, 3)] += 1;
    bpw_refused(&c, "different dims");
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, x.dims);
    ep_tensor xi = xb;
    xi.dtype = EP_DTYPE_I32;
    c.in[0] = &xi;
    bpw_refused(&c, "i32");
    c.out[0].dtype = EP_DTYPE_I32;
    bpw_refused(&c, "i32 both");
    chk_free(to_c8), chk_free(to_plain), chk_free(x.data), chk_free(xb.data);
}
