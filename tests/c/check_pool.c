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
 * alike; +4 covers the division). */
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

/* small: kernels 1..4, strides 1..3, rows up to 29, one geometry that has an output (redrawn until it has);
 * else: mostly 2..3 / 1..2 (the common ones), every third case 1..5 / 1..4, rows up to 70. */
static void pool_gen(int iter, uint16_t opcode, int small) {
    ep_pool_params p;
    int32_t xd[4], yd[4];
    for (int redraw = 1; redraw;) {
        memset(&p, 0, sizeof p);
        redraw = 0;
        for (int i = 0; i < 2; i++) {
            p.kernel[i] = small ? chk_int(1, 4) : iter % 3 ? chk_int(2, 3) : chk_int(1, 5);
            p.stride[i] = small ? chk_int(1, 3) : iter % 3 ? chk_int(1, 2) : chk_int(1, 4);
            p.dilation[i] = (small ? chk_int(0, 3) == 0 : iter % 5 == 0) ? 2 : 1;
            p.pads[i] = chk_int(0, p.kernel[i] - 1);
            p.pads[i + 2] = chk_int(0, p.kernel[i] - 1);
        }
        p.count_include_pad = (int)(chk_rnd() & 1);
        p.ceil_mode = (int)(chk_rnd() & 1);
        xd[0] = chk_int(1, 2), xd[1] = chk_int(1, iter % 4 == 1 ? 20 : 3), xd[2] = chk_int(1, 13), xd[3] = chk_int(1, small || iter % 2 == 0 ? 29 : 70);
        yd[0] = xd[0], yd[1] = xd[1];
        for (int i = 0; i < 2; i++) {
            yd[2 + i] = pool_extent(xd[2 + i], p.kernel[i], p.stride[i], p.dilation[i], p.pads[i], p.pads[i + 2], p.ceil_mode);
            if (yd[2 + i] < 0) redraw = 1;
        }
        if (redraw && !small) return;   /* no output: not a kernel case */
    }
    ep_tensor x = chk_tensor_rand(4, xd, 1.0f);
    float *f = (float *)x.data;
    const uint32_t nx = (uint32_t)(chk_bytes(&x) / 4);
    if (small ? chk_int(0, 5) == 0 : iter % 6 == 0) f[chk_rnd() % nx] = NAN;
    if (!small && iter % 4 == 0) f[chk_rnd() % nx] = -0.0f, f[chk_rnd() % nx] = 0.0f;
    char what[160];
    snprintf(what, sizeof what, "x[%d,%d,%d,%d] k%dx%d s%d,%d d%d,%d p%d,%d,%d,%d cip%d ceil%d", xd[0], xd[1], xd[2],
             xd[3], p.kernel[0], p.kernel[1], p.stride[0], p.stride[1], p.dilation[0], p.dilation[1], p.pads[0],
             p.pads[1], p.pads[2], p.pads[3], p.count_include_pad, p.ceil_mode);
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

static const chk_gen GENS[] = {{"maxpool", gen_maxpool, 300}, {"avgpool", gen_avgpool, 300},
    {"maxpool_small", gen_maxpool_small, 60}, {"avgpool_small", gen_avgpool_small, 60},
    {"global_avgpool", gen_global_avgpool, 20}};
int main(int argc, char **argv) { return chk_main(argc, argv, "check_pool", GENS, CHK_COUNT(GENS)); }
