/* Kernel checks of INVRES (included by check_conv.c: INVRES is of the conv family), the fused inverted-residual block (plan_format.h ep_invres_params), on seeded random
 * blocks: with and without the expand stage, 1..40 channels, maps 1..30, kernels 1..5, strides 1..3, dilation
 * 1..2, pads 0..2, every band height from 1 to past OH, biases and the residual each present or not, a random
 * fused activation per stage, 1 or 2 images, and scratch of 1 to 3 slots (threads).
 *   - The reference equals three variant-0 CONV2D references (expand 1x1, depthwise, project 1x1) bit for bit.
 *   - Every ISA kernel equals the reference within three chained dot products' rounding, and equals, bit for
 *     bit, the three CONV2D kernels of its own table (PACKED, DEPTHWISE, PACKED) that it fuses.
 *   - The shape function refuses wrongly shaped packed weights, a bias without its weights, a depthwise kernel
 *     that is not the params', band 0, an unknown activation and a residual of the wrong shape. */
#ifndef EP_CHECK_INVRES_H
#define EP_CHECK_INVRES_H
#include "ep_check.h"

static ep_tensor ir_mk_out(int N, int M, int OH, int OW) {
    ep_tensor t = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(N, M, OH, OW));
    t.data = chk_alloc(chk_bytes(&t));
    return t;
}

/* Runs fn on one op (one thread); returns its output (chk_free it). */
static float *ir_run_op(ep_kernel_fn fn, uint16_t opcode, uint8_t variant, const void *params, ep_tensor **in, int n_in,
                     int N, int M, int OH, int OW) {
    ep_tensor y = ir_mk_out(N, M, OH, OW), *outs[1] = {&y};
    ep_op op = chk_op(opcode, params, in, n_in, outs, 1);
    op.variant = variant;
    ep_shape sh;
    uint64_t scratch = 0;
    CHECK(ep_op_info_get(opcode)->shape(&op, &sh, &scratch) == EP_OK, "run_op: shape of op %d refused", opcode);
    void *s = chk_alloc((size_t)scratch + 4);
    op.scratch = scratch ? s : NULL;
    op.scratch_size = scratch;
    CHECK(fn(&op) == EP_OK, "run_op: op %d failed", opcode);
    chk_free(s);
    return (float *)y.data;
}

static void ir_refused(chk_case *c, int i, ep_tensor *bad, const void *params, const char *why) {
    ep_tensor *outs[1] = {&c->out[0]}, *keep = c->in[i];
    c->in[i] = bad;
    ep_op op = chk_op(c->opcode, params ? params : c->params, c->in, c->n_in, outs, 1);
    ep_shape sh;
    uint64_t scratch;
    CHECK(ep_shape_invres(&op, &sh, &scratch) != EP_OK, "%s: %s accepted", c->what, why);
    c->in[i] = keep;
}

static void gen_invres(int iter) {
    ep_invres_params p;
    memset(&p, 0, sizeof p);
    const int expand = iter % 4 != 3, N = chk_int(1, 2), C = chk_int(1, iter % 5 ? 12 : 40);
    const int CE = expand ? chk_int(1, iter % 3 ? 24 : 40) : C, M = chk_int(1, 20);
    const int H = chk_int(1, iter % 2 ? 12 : 30), W = chk_int(1, iter % 2 ? 12 : 30);
    for (int i = 0; i < 2; i++) {
        p.kernel[i] = chk_int(1, 5), p.stride[i] = chk_int(1, 3), p.dilation[i] = iter % 3 == 0 ? chk_int(1, 2) : 1;
        p.pads[i] = chk_int(0, 2), p.pads[i + 2] = chk_int(0, 2);
    }
    if (iter % 2 == 0) p.kernel[1] = p.kernel[0] = 3, p.stride[1] = p.stride[0], p.dilation[1] = p.dilation[0];
    const int OH = (H + p.pads[0] + p.pads[2] - ((p.kernel[0] - 1) * p.dilation[0] + 1)) / p.stride[0] + 1;
    const int OW = (W + p.pads[1] + p.pads[3] - ((p.kernel[1] - 1) * p.dilation[1] + 1)) / p.stride[1] + 1;
    if (OH < 1 || OW < 1 || H + p.pads[0] + p.pads[2] < (p.kernel[0] - 1) * p.dilation[0] + 1 ||
        W + p.pads[1] + p.pads[3] < (p.kernel[1] - 1) * p.dilation[1] + 1)
        return;
    p.band = chk_int(1, OH + 1);
    for (int i = 0; i < 3; i++) p.act[i] = chk_random_act(&p.act_alpha[i], &p.act_beta[i], 0);
    const int has_be = expand && chk_int(0, 1), has_bd = chk_int(0, 1), has_bp = chk_int(0, 1), has_r = chk_int(0, 1);
    ep_tensor x = chk_tensor_rand(4, CHK_DIMS(N, C, H, W), 1.0f);
    ep_tensor we = chk_tensor_rand(4, CHK_DIMS(CE, C, 1, 1), 0.5f), be = chk_tensor_rand(1, CHK_DIMS(CE), 0.5f);
    ep_tensor wd = chk_tensor_rand(4, CHK_DIMS(CE, 1, p.kernel[0], p.kernel[1]), 0.5f), bd = chk_tensor_rand(1, CHK_DIMS(CE), 0.5f);
    ep_tensor wp = chk_tensor_rand(4, CHK_DIMS(M, CE, 1, 1), 0.5f), bp = chk_tensor_rand(1, CHK_DIMS(M), 0.5f);
    ep_tensor r = chk_tensor_rand(4, CHK_DIMS(N, M, OH, OW), 1.0f);
    ep_tensor wep = chk_pack_blocks(we.data, C, CE, 1, C, EP_PACK_MR), wpp = chk_pack_blocks(wp.data, CE, M, 1, CE, EP_PACK_MR);
    char what[240];
    snprintf(what, sizeof what, "invres N%d C%d CE%d M%d %dx%d k%dx%d s%d,%d d%d,%d p%d,%d,%d,%d band %d acts %d,%d,%d %s b%d%d%d r%d",
             N, C, CE, M, H, W, p.kernel[0], p.kernel[1], p.stride[0], p.stride[1], p.dilation[0], p.dilation[1],
             p.pads[0], p.pads[1], p.pads[2], p.pads[3], p.band, p.act[0], p.act[1], p.act[2],
             expand ? "expand" : "no-expand", has_be, has_bd, has_bp, has_r);
    const double K = C + p.kernel[0] * p.kernel[1] + CE;
    chk_case c = {.what = what, .opcode = EP_OP_INVRES, .params = &p,
                  .in = {&x, expand ? &wep : NULL, has_be ? &be : NULL, &wd, has_bd ? &bd : NULL, &wpp,
                         has_bp ? &bp : NULL, has_r ? &r : NULL},
                  .n_in = 8, .n_out = 1, .tol = {.max_rel = 1e-4, .abs = 1e-6 * K + 1e-5}, .keep_ref = 1};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(N, M, OH, OW));
    c.n_extra = 2;
    c.extra[0] = 0;
    if (!chk_kernels(&c)) goto done;
    c.extra[1] = c.scratch * (uint64_t)chk_int(1, 2);   /* 2 or 3 slots: 2 or 3 threads */
    CHECK(c.extra[1] > 0, "%s: no scratch", what);

    /* the spec: three variant-0 CONV2D references */
    {
        ep_conv2d_params pe = {{1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, p.act[0], p.act_alpha[0], p.act_beta[0]};
        ep_conv2d_params pd = {{p.kernel[0], p.kernel[1]}, {p.stride[0], p.stride[1]}, {p.dilation[0], p.dilation[1]},
                               {p.pads[0], p.pads[1], p.pads[2], p.pads[3]}, CE, p.act[1], p.act_alpha[1], p.act_beta[1]};
        ep_conv2d_params pp = {{1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, p.act[2], p.act_alpha[2], p.act_beta[2]};
        for (int ti = 0; ti < chk_n_tables; ti++) {
            if (ti ? !chk_checked_here(ti, EP_OP_INVRES, 0) : chk_above_baseline) continue;
            const ep_kernel_table *t = &chk_tables[ti].t;
            ep_tensor e = x;
            float *edata = NULL;
            if (expand) {
                ep_tensor *ins[3] = {&x, ti ? &wep : &we, has_be ? &be : NULL};
                edata = ir_run_op(t->fn[EP_OP_CONV2D][ti ? EP_CONV2D_VARIANT_PACKED : 0], EP_OP_CONV2D,
                               ti ? EP_CONV2D_VARIANT_PACKED : 0, &pe, ins, 3, N, CE, H, W);
                e = chk_mk(edata, EP_DTYPE_F32, 4, CHK_DIMS(N, CE, H, W));
            }
            ep_tensor *ins_d[3] = {&e, &wd, has_bd ? &bd : NULL};
            float *ddata = ir_run_op(t->fn[EP_OP_CONV2D][ti ? EP_CONV2D_VARIANT_DEPTHWISE : 0], EP_OP_CONV2D,
                                  ti ? EP_CONV2D_VARIANT_DEPTHWISE : 0, &pd, ins_d, 3, N, CE, OH, OW);
            ep_tensor d = chk_mk(ddata, EP_DTYPE_F32, 4, CHK_DIMS(N, CE, OH, OW));
            ep_tensor *ins_p[4] = {&d, ti ? &wpp : &wp, has_bp ? &bp : NULL, has_r ? &r : NULL};
            float *ydata = ir_run_op(t->fn[EP_OP_CONV2D][ti ? EP_CONV2D_VARIANT_PACKED : 0], EP_OP_CONV2D,
                                  ti ? EP_CONV2D_VARIANT_PACKED : 0, &pp, ins_p, 4, N, M, OH, OW);
            ep_tensor *ins_f[8];
            for (int i = 0; i < 8; i++) ins_f[i] = c.in[i];
            float *fdata = ir_run_op(t->fn[EP_OP_INVRES][0], EP_OP_INVRES, 0, &p, ins_f, 8, N, M, OH, OW);
            CHECK(!memcmp(fdata, ydata, chk_bytes(&c.out[0])), "%s: %s INVRES differs in bits from its three CONV2D ops",
                  what, chk_tables[ti].name);
            if (ti == 0)
                CHECK(c.ref_out[0] && !memcmp(c.ref_out[0], ydata, chk_bytes(&c.out[0])),
                      "%s: the reference differs in bits from three variant-0 CONV2D references", what);
            chk_free(edata), chk_free(ddata), chk_free(ydata), chk_free(fdata);
        }
    }

    /* hostile plans */
    {
        ep_tensor bad = wep;
        bad.dims[1] = C + 1;
        if (expand) ir_refused(&c, 1, &bad, NULL, "expand weights with K+1");
        bad = wpp;
        bad.dims[0]++;
        ir_refused(&c, 5, &bad, NULL, "project weights with a panel too many");
        bad = wpp;
        bad.dims[2] = EP_PACK_MR - 1;
        ir_refused(&c, 5, &bad, NULL, "project weights with MR-1");
        ir_refused(&c, 5, &wp, NULL, "plain project weights");
        bad = wd;
        bad.dims[2] = p.kernel[0] + 1;
        ir_refused(&c, 3, &bad, NULL, "a depthwise kernel that is not the params'");
        if (!expand) ir_refused(&c, 2, &be, NULL, "an expand bias without expand weights");
        if (C != M || H != OH || W != OW) ir_refused(&c, 7, &x, NULL, "a residual of the input's shape");
        ep_invres_params q = p;
        q.band = 0;
        ir_refused(&c, 0, &x, &q, "band 0");
        q = p;
        q.act[1] = EP_ACT_MATH_FIRST;
        ir_refused(&c, 0, &x, &q, "a math kind as activation");
        ir_refused(&c, 3, NULL, NULL, "no depthwise weights");
    }
done:
    chk_free(c.ref_out[0]);
    chk_free(x.data), chk_free(we.data), chk_free(be.data), chk_free(wd.data), chk_free(bd.data), chk_free(wp.data);
    chk_free(bp.data), chk_free(r.data), chk_free(wep.data), chk_free(wpp.data);
}

#endif
