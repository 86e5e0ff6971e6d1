/* Kernel checks of the resize family: RESIZE variant TABLE on every table against the reference (which is the
 * spec: ep_ref_resize_f32, in double) on seeded random cases: ranks 2..5 with the leading dims kept, heights and
 * widths 1..40 (tails of every vector width), scales from 1/3 to 4 (integer factors, their float32 roundings of
 * out/in as the compiler writes for sizes, and arbitrary ones), every coordinate mode and nearest rounding.
 * Tolerances: nearest bit for bit (the taps are the reference's own, and a copy); linear within 1e-6 of
 * max|x| (the kernel blends in float what the reference sums in double: a few ulp of the largest input).
 * The shape function must refuse TABLE for cubic, exclude_outside and a resized leading dim. Variant C8 (the
 * layout C8, N and C kept) is checked the same way, against the plain reference's output blocked. */
#define EP_CHECK_KERNELS
#include "ep_check.h"

static float draw_scale(int in, int *out) {
    static const float fixed[] = {2.0f, 2.0f, 3.0f, 0.5f, 1.0f, 4.0f, 1.5f};
    const int kind = chk_int(0, 2);
    float s;
    if (kind == 0) {
        s = fixed[chk_rnd() % 7];
        *out = (int)floor((double)s * in);
    } else if (kind == 1) {   /* from sizes: the float32 rounding of out / in */
        *out = chk_int(1, 3 * in + 2);
        s = (float)((double)*out / (double)in);
    } else {
        s = chk_float_in(0.34f, 4.0f);
        *out = (int)floor((double)s * in);
    }
    if (*out < 1) *out = 1, s = (float)(1.0 / in);
    return s;
}

/* Nearest or linear, any coordinate mode and nearest rounding, every scale 1 (the caller draws H and W's). */
static void draw_params(ep_resize_params *p, int linear) {
    memset(p, 0, sizeof *p);
    p->mode = linear ? EP_RESIZE_LINEAR : EP_RESIZE_NEAREST;
    p->coord_mode = chk_int(EP_COORD_HALF_PIXEL, EP_COORD_HALF_PIXEL_SYMMETRIC);
    p->nearest_mode = chk_int(EP_NEAREST_ROUND_PREFER_FLOOR, EP_NEAREST_CEIL);
    p->cubic_coeff_a = -0.75f;
    for (int i = 0; i < 8; i++) p->scales[i] = 1.0f;
}

static void resize_gen(int iter, int linear) {
    ep_resize_params p;
    draw_params(&p, linear);
    const int rank = iter % 5 == 0 ? chk_int(2, 5) : 4;
    int32_t xd[5], yd[5];
    for (int i = 0; i < rank - 2; i++) xd[i] = yd[i] = chk_int(1, 3);
    for (int i = rank - 2; i < rank; i++) {
        xd[i] = chk_int(1, iter % 3 ? 17 : 40);
        int o;
        p.scales[i] = chk_int(0, 7) ? draw_scale(xd[i], &o) : (o = xd[i], 1.0f);
        yd[i] = o;
    }
    ep_tensor x = chk_tensor_rand(rank, xd, 1.0f);
    char what[160];
    snprintf(what, sizeof what, "%s rank %d x[..%d,%d] -> [..%d,%d] scales %g,%g coord %d nearest %d",
             linear ? "linear" : "nearest", rank, xd[rank - 2], xd[rank - 1], yd[rank - 2], yd[rank - 1],
             (double)p.scales[rank - 2], (double)p.scales[rank - 1], p.coord_mode, p.nearest_mode);
    chk_case c = {.what = what, .opcode = EP_OP_RESIZE, .variant = EP_RESIZE_VARIANT_TABLE, .params = &p,
                  .in = {&x}, .n_in = 1, .n_out = 1,
                  .tol = linear ? (chk_tol){.max_rel = 1e-6, .abs = 1e-7} : CHK_EXACT,
                  .extra = {0, 8u * (uint64_t)yd[rank - 1] * 3}, .n_extra = 2};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, rank, yd);
    chk_kernels(&c);
    /* what TABLE does not cover is refused */
    ep_tensor *outs[1] = {&c.out[0]};
    ep_shape sh[1];
    uint64_t scratch;
    ep_resize_params bad = p;
    bad.mode = EP_RESIZE_CUBIC;
    ep_op op = chk_op(EP_OP_RESIZE, &bad, c.in, 1, outs, 1);
    op.variant = EP_RESIZE_VARIANT_TABLE;
    CHECK(ep_shape_resize(&op, sh, &scratch) != EP_OK, "%s: TABLE accepted cubic", what);
    bad = p;
    bad.exclude_outside = 1;
    op.params = &bad;
    CHECK(ep_shape_resize(&op, sh, &scratch) != EP_OK, "%s: TABLE accepted exclude_outside", what);
    if (rank > 2) {
        bad = p;
        bad.scales[0] = 2.0f;
        CHECK(ep_shape_resize(&op, sh, &scratch) != EP_OK, "%s: TABLE accepted a resized leading dim", what);
    }
    chk_free(x.data);
}
static void gen_nearest(int iter) { resize_gen(iter, 0); }
static void gen_linear(int iter) { resize_gen(iter, 1); }

/* RESIZE variant C8: X and Y [N,C,H,W] in layout C8; the spec is the reference on the plain tensors, blocked
 * (bit for bit for the reference's C8 kernel and for nearest; linear within TABLE's tolerance). The shape
 * function must refuse C8 with a PLAIN X or Y, TABLE with C8 tensors, and C8 at C not a multiple of 8. */
static void resize_c8_gen(int iter, int linear) {
    ep_resize_params p;
    draw_params(&p, linear);
    int32_t xd[4] = {chk_int(1, 2), 8 * chk_int(1, 4), 0, 0}, yd[4] = {xd[0], xd[1], 0, 0};
    for (int i = 2; i < 4; i++) {
        xd[i] = chk_int(1, iter % 3 ? 17 : 40);
        int o;
        p.scales[i] = chk_int(0, 7) ? draw_scale(xd[i], &o) : (o = xd[i], 1.0f);
        yd[i] = o;
    }
    ep_tensor x = chk_tensor_rand(4, xd, 1.0f), y0 = chk_mk(NULL, EP_DTYPE_F32, 4, yd);
    y0.data = chk_alloc(chk_bytes(&y0));
    {
        ep_tensor *in[1] = {&x}, *out[1] = {&y0};
        ep_op op = chk_op(EP_OP_RESIZE, &p, in, 1, out, 1);
        ep_ref_resize_f32(&op);
    }
    ep_tensor x8 = chk_c8(&x), y8 = chk_c8(&y0);
    char what[160];
    snprintf(what, sizeof what, "c8 %s x[%d,%d,%d,%d] -> [..%d,%d] scales %g,%g coord %d nearest %d",
             linear ? "linear" : "nearest", xd[0], xd[1], xd[2], xd[3], yd[2], yd[3], (double)p.scales[2],
             (double)p.scales[3], p.coord_mode, p.nearest_mode);
    const chk_tol tol = linear ? (chk_tol){.max_rel = 1e-6, .abs = 1e-7} : CHK_EXACT;
    chk_case c = {.what = what, .opcode = EP_OP_RESIZE, .variant = EP_RESIZE_VARIANT_C8, .params = &p,
                  .in = {&x8}, .n_in = 1, .n_out = 1, .tol = tol, .spec = {(const float *)y8.data}, .spec_tol = tol,
                  .extra = {0, 8u * 8u * (uint64_t)yd[3] * 3}, .n_extra = 2};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, yd);
    c.out[0].layout = EP_LAYOUT_C8;
    chk_kernels(&c);
    /* hostile plans */
    ep_tensor *outs[1] = {&c.out[0]};
    ep_shape sh[1];
    uint64_t scratch;
    ep_op op = chk_op(EP_OP_RESIZE, &p, c.in, 1, outs, 1);
    op.variant = EP_RESIZE_VARIANT_C8;
    CHECK(ep_shape_resize(&op, sh, &scratch) == EP_OK, "%s: C8 refused", what);
    x8.layout = EP_LAYOUT_PLAIN;
    CHECK(ep_shape_resize(&op, sh, &scratch) != EP_OK, "%s: C8 accepted a PLAIN X", what);
    x8.layout = EP_LAYOUT_C8;
    c.out[0].layout = EP_LAYOUT_PLAIN;
    CHECK(ep_shape_resize(&op, sh, &scratch) != EP_OK, "%s: C8 accepted a PLAIN Y", what);
    c.out[0].layout = EP_LAYOUT_C8;
    op.variant = EP_RESIZE_VARIANT_TABLE;
    CHECK(ep_shape_resize(&op, sh, &scratch) != EP_OK, "%s: TABLE accepted C8 tensors", what);
    op.variant = EP_RESIZE_VARIANT_C8;
    x8.dims[1] = c.out[0].dims[1] = xd[1] - 4;
    CHECK(ep_shape_resize(&op, sh, &scratch) != EP_OK, "%s: C8 accepted C %% 8 == 4", what);
    chk_free(x.data), chk_free(y0.data), chk_free(x8.data), chk_free(y8.data);
}
static void gen_nearest_c8(int iter) { resize_c8_gen(iter, 0); }
static void gen_linear_c8(int iter) { resize_c8_gen(iter, 1); }

static const chk_gen GENS[] = {{"nearest", gen_nearest, 300}, {"linear", gen_linear, 300},
                               {"nearest_c8", gen_nearest_c8, 150}, {"linear_c8", gen_linear_c8, 150}};
int main(int argc, char **argv) { return chk_main(argc, argv, "check_resize", GENS, CHK_COUNT(GENS)); }
