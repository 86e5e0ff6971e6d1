/* Kernel checks of the pooling family (MAXPOOL, AVGPOOL, GLOBAL_AVGPOOL): every table's kernel against the
 * reference (tests/c/ep_check.h) on seeded random geometries: kernels 1..5, strides 1..4, dilation 2,
 * asymmetric pads, count_include_pad, ceil_mode, rows up to 70 (tails of every vector width), up to 40 planes
 * (the small-map path's groups of 8 and their tails), NaN and signed zeros in the input. A geometry the shape function refuses is not a kernel case (skipped).
 * MAXPOOL variant INDICES (reference only): its Y equals variant 0's bit for bit, every index lies in its
 * output's plane and points at an input equal to the output (or, for an output of -FLT_MAX, at a NaN or an
 * input <= -FLT_MAX; -1 only there), and its shape function refuses the other variant's arity.
 * Tolerances: MAXPOOL and AVGPOOL bit for bit (NaN matches NaN; the kernels compute the reference's
 * comparisons, and the average's sum in the reference's order divided the same way). GLOBAL_AVGPOOL sums a
 * plane in lanes (another order): |got - ref| <= 2 (K + 4) FLT_EPSILON sum|x| with K = H*W terms (recursive
 * summation of K terms errs by at most ~K 2^-24 sum|terms| (Higham, gamma_K), the reference and the kernel
 * alike; +4 covers the division).
 * C8 variants (plan_format.h, "Tensor layouts"): MAXPOOL and AVGPOOL on the same draws with kernels up to 7, maps
 * 1..60, C a multiple of 8 up to 128, N 1..2, and YOLO's SPPF (5x5, stride 1, pad 2 on 10x10 / 20x20) and
 * ResNet's stem (3x3, stride 2, pad 1); GLOBAL_AVGPOOL on maps up to 20x20 and 7x7 with C 1280 / 2048. The inputs
 * hold NaN, +-inf, -FLT_MAX and signed zeros (some mostly zeros of either sign), some runs of NaN or -inf
 * (windows without a finite tap). Every kernel equals the C8 reference bit for bit, and the plain variant 0
 * reference on the de-blocked input (its output blocked here), bit for bit as well: the same taps and channel
 * sums in the same order. The shape functions refuse a C8 variant with a PLAIN X or Y, variant 0 with a C8 X or
 * Y, and GLOBAL_AVGPOOL C8 with a C8 Y. */
#define EP_CHECK_KERNELS
#include "ep_check.h"

static int pool_extent(int in, int k, int s, int d, int pb, int pe, int ceil_mode) {
    const int span = in + pb + pe - ((k - 1) * d + 1);
    if (span < 0) return -1;
    if (!ceil_mode) return span / s + 1;
    int o = (span + s - 1) / s + 1;
    if (o > 0 && (o - 1) * s >= in + pb) o--;
    return o;
}

/* The arity of the other variant: the shape function must refuse it. */
static void pool_refused(chk_case *c, int n_out, uint8_t variant, const char *why) {
    ep_tensor *outs[2] = {&c->out[0], &c->out[1]};
    ep_op op = chk_op(c->opcode, c->params, c->in, c->n_in, outs, n_out);
    op.variant = variant;
    ep_shape sh[2];
    uint64_t scratch;
    CHECK(ep_op_info_get(c->opcode)->shape(&op, sh, &scratch) != EP_OK, "%s: %s accepted", c->what, why);
}

/* MAXPOOL case c (variant 0, run with keep_ref) again as variant INDICES (see the header). */
static void maxpool_indices_check(chk_case *c, const ep_tensor *x, const int32_t *yd) {
    const float *v0 = (const float *)c->ref_out[0];
    c->ref_out[0] = NULL;
    c->variant = EP_MAXPOOL_VARIANT_INDICES;
    c->n_out = 2;
    c->out[1] = chk_mk(NULL, EP_DTYPE_I64, 4, yd);
    c->spec[0] = v0;
    c->spec_tol = CHK_EXACT;
    pool_refused(c, 1, EP_MAXPOOL_VARIANT_INDICES, "INDICES with one output");
    pool_refused(c, 2, EP_MAXPOOL_VARIANT_DEFAULT, "DEFAULT with two outputs");
    if (chk_kernels(c)) {
        const float *y = (const float *)c->ref_out[0], *xv = (const float *)x->data;
        const int64_t *ix = (const int64_t *)c->ref_out[1];
        const int64_t plane = (int64_t)x->dims[2] * x->dims[3], oplane = (int64_t)yd[2] * yd[3];
        const int64_t n = chk_numel(4, yd);
        int64_t bad = -1;
        for (int64_t i = 0; i < n && bad < 0; i++) {
            const int64_t j = ix[i], pl = i / oplane;
            const int in_plane = j >= pl * plane && j < (pl + 1) * plane;
            const int ok = y[i] == -FLT_MAX ? (j == -1 || (in_plane && !(xv[j] > -FLT_MAX)))
                                            : (in_plane && xv[j] == y[i]);
            if (!ok) bad = i;
        }
        CHECK(bad < 0, "%s: output %lld = %g has index %lld", c->what, (long long)bad,
              bad < 0 ? 0.0 : (double)y[bad], bad < 0 ? 0LL : (long long)ix[bad]);
    }
    for (int o = 0; o < 2; o++) chk_free(c->ref_out[o]), c->ref_out[o] = NULL;
    chk_free((void *)v0);
}

/* The window parameters: small: kernels 1..4, strides 1..3; else mostly 2..3 / 1..2 (the common ones), every
 * third case 1..kmax / 1..4; dilation 2 in some, pads 0..k-1 on each side, count_include_pad and ceil_mode. */
static void pool_draw(ep_pool_params *p, int iter, int small, int kmax) {
    memset(p, 0, sizeof *p);
    for (int i = 0; i < 2; i++) {
        p->kernel[i] = small ? chk_int(1, 4) : iter % 3 ? chk_int(2, 3) : chk_int(1, kmax);
        p->stride[i] = small ? chk_int(1, 3) : iter % 3 ? chk_int(1, 2) : chk_int(1, 4);
        p->dilation[i] = (small ? chk_int(0, 3) == 0 : iter % 5 == 0) ? 2 : 1;
        p->pads[i] = chk_int(0, p->kernel[i] - 1);
        p->pads[i + 2] = chk_int(0, p->kernel[i] - 1);
    }
    p->count_include_pad = (int)(chk_rnd() & 1);
    p->ceil_mode = (int)(chk_rnd() & 1);
}

/* yd = the output dims of X[xd] under p; 0 when a spatial extent is negative (no output). */
static int pool_out_dims(const ep_pool_params *p, const int32_t *xd, int32_t *yd) {
    yd[0] = xd[0], yd[1] = xd[1];
    for (int i = 0; i < 2; i++) {
        yd[2 + i] = pool_extent(xd[2 + i], p->kernel[i], p->stride[i], p->dilation[i], p->pads[i], p->pads[i + 2],
                                p->ceil_mode);
        if (yd[2 + i] < 0) return 0;
    }
    return 1;
}

static void pool_what(char *what, size_t n, const char *op, const int32_t *xd, const ep_pool_params *p) {
    snprintf(what, n, "%sx[%d,%d,%d,%d] k%dx%d s%d,%d d%d,%d p%d,%d,%d,%d cip%d ceil%d", op, xd[0], xd[1], xd[2],
             xd[3], p->kernel[0], p->kernel[1], p->stride[0], p->stride[1], p->dilation[0], p->dilation[1], p->pads[0],
             p->pads[1], p->pads[2], p->pads[3], p->count_include_pad, p->ceil_mode);
}

/* small: kernels 1..4, strides 1..3, rows up to 29, one geometry that has an output (redrawn until it has);
 * else: mostly 2..3 / 1..2 (the common ones), every third case 1..5 / 1..4, rows up to 70. */
static void pool_gen(int iter, uint16_t opcode, int small) {
    ep_pool_params p;
    int32_t xd[4], yd[4];
    for (int redraw = 1; redraw;) {
        pool_draw(&p, iter, small, 5);
        xd[0] = chk_int(1, 2), xd[1] = chk_int(1, iter % 4 == 1 ? 20 : 3), xd[2] = chk_int(1, 13), xd[3] = chk_int(1, small || iter % 2 == 0 ? 29 : 70);
        redraw = !pool_out_dims(&p, xd, yd);
        if (redraw && !small) return;   /* no output: not a kernel case */
    }
    ep_tensor x = chk_tensor_rand(4, xd, 1.0f);
    float *f = (float *)x.data;
    const uint32_t nx = (uint32_t)(chk_bytes(&x) / 4);
    if (small ? chk_int(0, 5) == 0 : iter % 6 == 0) f[chk_rnd() % nx] = NAN;
    if (!small && iter % 4 == 0) f[chk_rnd() % nx] = -0.0f, f[chk_rnd() % nx] = 0.0f;
    char what[160];
    pool_what(what, sizeof what, "", xd, &p);
    chk_case c = {.what = what, .opcode = opcode, .params = &p, .in = {&x}, .n_in = 1, .n_out = 1, .tol = CHK_EXACT,
                  .may_reject = 1, .keep_ref = opcode == EP_OP_MAXPOOL};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, yd);
    if (chk_kernels(&c) && opcode == EP_OP_MAXPOOL) maxpool_indices_check(&c, &x, yd);
    chk_free(c.ref_out[0]);
    chk_free(x.data);
}
static void gen_maxpool(int iter) { pool_gen(iter, EP_OP_MAXPOOL, 0); }
static void gen_avgpool(int iter) { pool_gen(iter, EP_OP_AVGPOOL, 0); }
static void gen_maxpool_small(int iter) { pool_gen(iter, EP_OP_MAXPOOL, 1); }
static void gen_avgpool_small(int iter) { pool_gen(iter, EP_OP_AVGPOOL, 1); }

static void gen_global_avgpool(int iter) {
    (void)iter;
    ep_global_pool_params p = {0, 0};
    const int32_t xd[4] = {chk_int(1, 2), chk_int(1, 5), chk_int(1, 13), chk_int(1, 17)};
    ep_tensor x = chk_tensor_rand(4, xd, 1.0f);
    char what[64];
    snprintf(what, sizeof what, "x[%d,%d,%d,%d]", xd[0], xd[1], xd[2], xd[3]);
    chk_case c = {.what = what, .opcode = EP_OP_GLOBAL_AVGPOOL, .params = &p, .in = {&x}, .n_in = 1, .n_out = 1,
                  .tol = {.accum = (double)xd[2] * xd[3]}};
    chk_kernels(&c);
    chk_free(x.data);
}

/* ---- C8 variants ---- */

/* Special values into the plain x (iteration-dependent): single NaN, +-inf, -FLT_MAX, signed zeros, inputs of
 * mostly signed zeros, and runs of NaN or -inf along a row (windows whose taps are all skipped by MAX). */
static void pool_specials(ep_tensor *x, int iter) {
    static const float sp[] = {NAN, -INFINITY, INFINITY, -FLT_MAX, -0.0f, 0.0f};
    float *f = (float *)x->data;
    const uint32_t n = (uint32_t)(chk_bytes(x) / 4);
    if (iter % 3 != 2)
        for (uint32_t k = 0; k < 1 + n / 64; k++) f[chk_rnd() % n] = sp[chk_rnd() % CHK_COUNT(sp)];
    if (iter % 6 == 3)   /* mostly signed zeros: MAX keeps the first of equal values */
        for (uint32_t k = 0; k < n; k++)
            if (chk_rnd() % 4) f[k] = chk_rnd() & 1 ? -0.0f : 0.0f;
    if (iter % 4 == 1) {
        const uint32_t len = 1 + chk_rnd() % 24, at = chk_rnd() % n, end = at + len < n ? at + len : n;
        const float v = chk_rnd() & 1 ? NAN : -INFINITY;
        for (uint32_t k = at; k < end; k++) f[k] = v;
    }
}

/* MAXPOOL / AVGPOOL variant C8 (see the header). */
static void pool_c8_gen(int iter, uint16_t opcode) {
    ep_pool_params p;
    int32_t xd[4], yd[4];
    if (iter % 10 == 7) {   /* SPPF */
        memset(&p, 0, sizeof p);
        for (int i = 0; i < 2; i++) p.kernel[i] = 5, p.stride[i] = p.dilation[i] = 1, p.pads[i] = p.pads[i + 2] = 2;
        xd[0] = 1, xd[1] = 8 * chk_int(8, 16), xd[2] = xd[3] = chk_rnd() & 1 ? 20 : 10;
    } else if (iter % 10 == 9) {   /* ResNet's stem */
        memset(&p, 0, sizeof p);
        for (int i = 0; i < 2; i++) p.kernel[i] = 3, p.stride[i] = 2, p.dilation[i] = 1, p.pads[i] = p.pads[i + 2] = 1;
        xd[0] = 1, xd[1] = 64, xd[2] = xd[3] = 2 * chk_int(4, 15);
    } else {
        pool_draw(&p, iter, 0, 7);
        xd[0] = chk_int(1, 2), xd[1] = 8 * chk_int(1, iter % 4 == 0 ? 16 : 4);
        xd[2] = chk_int(1, iter % 2 ? 60 : 13), xd[3] = chk_int(1, iter % 2 ? 13 : 60);
        while (xd[1] > 8 && (int64_t)xd[0] * xd[1] * xd[2] * xd[3] > 60000) xd[1] -= 8;   /* keep each case small */
    }
    if (!pool_out_dims(&p, xd, yd)) return;   /* no output: not a kernel case */
    ep_tensor x = chk_tensor_rand(4, xd, 1.0f);
    pool_specials(&x, iter);
    /* the spec: variant 0's reference on the plain tensors, blocked */
    ep_tensor y0 = chk_mk(NULL, EP_DTYPE_F32, 4, yd);
    y0.data = chk_alloc(chk_bytes(&y0));
    {
        ep_tensor *in[1] = {&x}, *out[1] = {&y0};
        ep_op op = chk_op(opcode, &p, in, 1, out, 1);
        if (opcode == EP_OP_MAXPOOL) ep_ref_maxpool_f32(&op);
        else ep_ref_avgpool_f32(&op);
    }
    ep_tensor x8 = chk_c8(&x), y8 = chk_c8(&y0);
    char what[200];
    pool_what(what, sizeof what, "c8 ", xd, &p);
    const uint8_t v8 = opcode == EP_OP_MAXPOOL ? EP_MAXPOOL_VARIANT_C8 : EP_AVGPOOL_VARIANT_C8;
    chk_case c = {.what = what, .opcode = opcode, .variant = v8, .params = &p, .in = {&x8}, .n_in = 1, .n_out = 1,
                  .tol = CHK_EXACT, .spec = {(const float *)y8.data}, .spec_tol = CHK_EXACT};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, yd);
    c.out[0].layout = EP_LAYOUT_C8;
    chk_kernels(&c);

    /* hostile plans */
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, yd);
    c.out[0].layout = EP_LAYOUT_C8;
    x8.layout = EP_LAYOUT_PLAIN;
    pool_refused(&c, 1, v8, "C8 with a PLAIN X");
    x8.layout = EP_LAYOUT_C8;
    c.out[0].layout = EP_LAYOUT_PLAIN;
    pool_refused(&c, 1, v8, "C8 with a PLAIN Y");
    pool_refused(&c, 1, 0, "variant 0 with a C8 X");
    c.out[0].layout = EP_LAYOUT_C8;
    pool_refused(&c, 1, 0, "variant 0 with C8 X and Y");
    c.in[0] = &x;
    pool_refused(&c, 1, 0, "variant 0 with a C8 Y");

    chk_free(x.data), chk_free(y0.data), chk_free(x8.data), chk_free(y8.data);
}
static void gen_maxpool_c8(int iter) { pool_c8_gen(iter, EP_OP_MAXPOOL); }
static void gen_avgpool_c8(int iter) { pool_c8_gen(iter, EP_OP_AVGPOOL); }

/* GLOBAL_AVGPOOL variant C8: X C8, Y plain (see the header). */
static void gen_global_avgpool_c8(int iter) {
    ep_global_pool_params p = {0, 0};
    int32_t xd[4] = {chk_int(1, 2), 8 * chk_int(1, 16), chk_int(1, 20), chk_int(1, 20)};
    if (iter % 8 == 5) xd[0] = 1, xd[1] = chk_rnd() & 1 ? 1280 : 2048, xd[2] = xd[3] = 7;   /* classifier heads */
    const int32_t yd[4] = {xd[0], xd[1], 1, 1};
    ep_tensor x = chk_tensor_rand(4, xd, 1.0f);
    if (iter % 2) pool_specials(&x, iter);
    ep_tensor y0 = chk_mk(NULL, EP_DTYPE_F32, 4, yd);
    y0.data = chk_alloc(chk_bytes(&y0));
    {
        ep_tensor *in[1] = {&x}, *out[1] = {&y0};
        ep_op op = chk_op(EP_OP_GLOBAL_AVGPOOL, &p, in, 1, out, 1);
        ep_ref_global_avgpool_f32(&op);
    }
    ep_tensor x8 = chk_c8(&x);
    char what[64];
    snprintf(what, sizeof what, "c8 x[%d,%d,%d,%d]", xd[0], xd[1], xd[2], xd[3]);
    chk_case c = {.what = what, .opcode = EP_OP_GLOBAL_AVGPOOL, .variant = EP_GLOBAL_AVGPOOL_VARIANT_C8, .params = &p,
                  .in = {&x8}, .n_in = 1, .n_out = 1, .tol = CHK_EXACT, .spec = {(const float *)y0.data},
                  .spec_tol = CHK_EXACT};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, yd);
    chk_kernels(&c);

    /* hostile plans */
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, yd);
    c.out[0].layout = EP_LAYOUT_C8;
    pool_refused(&c, 1, EP_GLOBAL_AVGPOOL_VARIANT_C8, "C8 with a C8 Y");
    c.out[0].layout = EP_LAYOUT_PLAIN;
    x8.layout = EP_LAYOUT_PLAIN;
    pool_refused(&c, 1, EP_GLOBAL_AVGPOOL_VARIANT_C8, "C8 with a PLAIN X");
    x8.layout = EP_LAYOUT_C8;
    pool_refused(&c, 1, 0, "variant 0 with a C8 X");

    chk_free(x.data), chk_free(y0.data), chk_free(x8.data);
}

static const chk_gen GENS[] = {{"maxpool", gen_maxpool, 300}, {"avgpool", gen_avgpool, 300},
    {"maxpool_small", gen_maxpool_small, 60}, {"avgpool_small", gen_avgpool_small, 60},
    {"global_avgpool", gen_global_avgpool, 20}, {"maxpool_c8", gen_maxpool_c8, 200},
    {"avgpool_c8", gen_avgpool_c8, 200}, {"global_avgpool_c8", gen_global_avgpool_c8, 40}};
int main(int argc, char **argv) { return chk_main(argc, argv, "check_pool", GENS, CHK_COUNT(GENS)); }
