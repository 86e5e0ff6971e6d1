/* Kernel checks of the elementwise family (UNARY, BINARY on f32 and on integers): every table's kernel against
 * the reference (tests/c/ep_check.h), out of place and in place (Y aliasing X, A or B), on 1 and 3 threads.
 *
 * Tolerances. Bit for bit (a NaN matches any NaN; signed zeros must match) for every kind, except SIGMOID,
 * SILU, TANH, GELU and ERF where a kernel evaluates exp with a vector polynomial instead of libm's expf / tanhf /
 * erfcf / erff (x86_act.h, neon_math.h): |got - want| <= 2e-6 |want| + 1e-37. 2e-6 is ~17 ulp at the worst scale: the
 * polynomial exp is within ~2 ulp, the reference's expf within 1 ulp, and the shared 1 + e, division and
 * multiply add at most 1.5 ulp each side; the 1e-37 floor covers results that are subnormal (or zero in one
 * and subnormal in the other) near expf's overflow. The NEON kernels compute the other kinds with vector
 * min/max, so they are held to equal values there (RELU of -0 is +0 there: vmaxq; NaN matches NaN).
 * Integer BINARY (I8, U8, I16, I32, I64; the ISA entry points hand it to ep_ref_binary_int after one dtype
 * check) is bit for bit; a zero divisor (DIV, MOD, FMOD, left in one case in four) must fail every kernel
 * with EP_ERR_RUN_INDEX.
 * Inputs: NaN, +-inf, +-0, values beyond +-88 (exp overflow / underflow), ties and integers (ROUND, FLOOR,
 * CEIL), values near 2^23; the broadcast forms same shape, scalar, per-channel [C,1,1], last dim [W], a
 * lower-rank suffix and random mixes. Two generators per op: long rows with extreme values ("unary",
 * "binary") and short rows over every kind and activation with plain values ("unary_small", "binary_small"). */
#define EP_CHECK_KERNELS
#include "ep_check.h"

static int is_transcendental(int act) {
    return act == EP_ACT_SIGMOID || act == EP_ACT_SILU || act == EP_ACT_TANH || act == EP_ACT_GELU || act == EP_ACT_ERF;
}

static chk_tol elem_tol(int act) {
    if (!is_transcendental(act)) return CHK_EXACT;
    return (chk_tol){.rel = 2e-6, .abs = 1e-37};
}
static const chk_tol_for neon_exact[] = {   /* equal values (RELU of -0 is +0 there: vmaxq) */
    {"ep_neon_unary_f32", {CHK_VALUE, 0, 0, 0, 0, 0}},
    {"ep_neon_binary_f32", {CHK_VALUE, 0, 0, 0, 0, 0}},
    {NULL, {0, 0, 0, 0, 0, 0}},
};
static const chk_tol_for *elem_tol_for(int act) { return is_transcendental(act) ? NULL : neon_exact; }

static float elem_value(int wide) {
    switch (chk_rnd() % 64) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return 0.0f;
    case 4: return -0.0f;
    case 5: return (chk_rnd() & 1 ? 1.0f : -1.0f) * (86.0f + 4.0f * (float)(chk_rnd() % 1000) / 1000.0f);
    case 6: case 7: return 0.5f * (float)chk_int(-41, 41);   /* ties for ROUND (to even), exact integers */
    case 8: return (chk_rnd() & 1 ? 1.0f : -1.0f) * (8388607.5f + (float)(chk_rnd() % 4));   /* near 2^23 */
    default: return wide ? chk_float() * 30.0f : chk_float() * 3.0f;
    }
}

/* ---------------- UNARY ---------------- */
static void unary_check(const ep_unary_params *p, ep_tensor *x) {
    char what[96];
    snprintf(what, sizeof what, "unary kind %d alpha %g beta %g x[%d,%d]", p->kind, p->alpha, p->beta, x->dims[0],
             x->dims[1]);
    chk_case c = {.what = what, .opcode = EP_OP_UNARY, .params = p, .in = {x}, .n_in = 1, .n_out = 1,
                  .tol = elem_tol(p->kind), .tol_for = elem_tol_for(p->kind)};
    chk_kernels(&c);
    chk_free(x->data);
}

static void gen_unary(int iter) {   /* every kind in turn, rows up to 3000, extreme values */
    ep_unary_params p = {1 + iter % (EP_ACT_COUNT - 1), 0.1f, 0.0f, 0};
    if (p.kind == EP_ACT_CLIP) p.alpha = -0.5f, p.beta = 0.75f;
    if (p.kind == EP_ACT_HARD_SIGMOID) p.alpha = 0.2f, p.beta = 0.5f;
    const int n = iter % 9 == 0 ? chk_int(0, 9) : chk_int(1, iter % 4 == 0 ? 3000 : 100);
    ep_tensor x = chk_tensor_rand(2, CHK_DIMS(1, n), 1.0f);
    const int wide = chk_rnd() & 1;
    for (int i = 0; i < n; i++) ((float *)x.data)[i] = elem_value(wide);
    unary_check(&p, &x);
}

static void gen_unary_small(int iter) {   /* random kinds, [1..3, 1..45], values in [-1, 1), ties */
    (void)iter;
    ep_unary_params p = {chk_int(1, EP_ACT_COUNT - 1), 0.2f, 0.7f, 0};
    if (p.kind == EP_ACT_CLIP) p.alpha = -0.3f, p.beta = 0.4f;
    if (p.kind == EP_ACT_ELU || p.kind == EP_ACT_LEAKY_RELU) p.alpha = 0.3f;
    const int32_t d0 = chk_int(1, 3), d1 = chk_int(1, 45);
    ep_tensor x = chk_tensor_rand(2, CHK_DIMS(d0, d1), 1.0f);
    float *f = (float *)x.data;
    if (chk_int(0, 4) == 0) f[0] = NAN;
    if (chk_int(0, 4) == 0) f[d0 * d1 - 1] = -0.0f;
    for (int i = 0; i < d0 * d1; i++)   /* ties and integers for ROUND / FLOOR / CEIL */
        if (chk_int(0, 5) == 0) f[i] = 0.5f * (float)chk_int(-9, 9);
    unary_check(&p, &x);
}

/* ---------------- BINARY f32 ---------------- */
/* A and B of shapes ad[ar], bd[br] against Y of rank r: Y is their broadcast. */
static void binary_check(const ep_binary_params *p, int r, int ar, const int32_t *ad, int br, const int32_t *bd,
                         int wide_values) {
    int32_t yd[4];
    for (int i = 0; i < r; i++) {
        const int ia = i - (r - ar), ib = i - (r - br);
        const int32_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
        yd[i] = da > db ? da : db;
    }
    if (!chk_isa_kernel(EP_OP_BINARY, 0)) return;   /* nothing to check: no table has its own kernel */
    ep_tensor a = chk_tensor_rand(ar, ad, 1.0f), b = chk_tensor_rand(br, bd, 1.0f);
    float *fa = (float *)a.data, *fb = (float *)b.data;
    if (wide_values) {
        for (size_t i = 0; i < chk_bytes(&a) / 4; i++) fa[i] = elem_value(0);
        for (size_t i = 0; i < chk_bytes(&b) / 4; i++) fb[i] = elem_value(0);
    } else {
        if (p->kind == EP_BIN_POW)   /* positive bases */
            for (size_t i = 0; i < chk_bytes(&a) / 4; i++) fa[i] = fabsf(fa[i]) + 0.1f;
        if (chk_int(0, 5) == 0 && chk_bytes(&a)) fa[0] = NAN;
    }
    char what[160];
    snprintf(what, sizeof what, "binary kind %d act %d y[%d,%d,%d,%d](r%d) a(r%d) [%d..%d] b(r%d) [%d..%d]", p->kind,
             p->act, yd[0], r > 1 ? yd[1] : 0, r > 2 ? yd[2] : 0, r > 3 ? yd[3] : 0, r, ar, ad[0], ad[ar - 1], br, bd[0],
             bd[br - 1]);
    chk_case c = {.what = what, .opcode = EP_OP_BINARY, .params = p, .in = {&a, &b}, .n_in = 2, .n_out = 1,
                  .tol = elem_tol(p->act), .tol_for = elem_tol_for(p->act)};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, r, yd);
    chk_kernels(&c);
    chk_free(a.data), chk_free(b.data);
}

static void gen_binary(int iter) {   /* extreme values, the vector activations, rows up to 40 */
    static const int acts[] = {EP_ACT_NONE, EP_ACT_NONE, EP_ACT_RELU, EP_ACT_CLIP, EP_ACT_LEAKY_RELU, EP_ACT_SIGMOID,
                               EP_ACT_SILU, EP_ACT_HARD_SWISH, EP_ACT_HARD_SIGMOID, EP_ACT_TANH, EP_ACT_ABS, EP_ACT_ELU};
    ep_binary_params p = {(int)(chk_rnd() % (EP_BIN_FMOD + 1)), acts[chk_rnd() % (sizeof(acts) / sizeof(acts[0]))], 0.2f, 0.5f};
    if (p.act == EP_ACT_CLIP) p.act_alpha = -0.5f, p.act_beta = 0.75f;
    /* output shape, then A and B each: same shape, scalar, per-channel [C,1,1], last dim [W], a random mix
     * of broadcast dims (A is usually full: the in-place case; one operand keeps Y's rank) */
    const int r = chk_int(1, 4);
    int32_t yd[4], sd[2][4];
    int sr[2] = {r, r};
    for (int i = 0; i < r; i++) yd[i] = chk_int(1, iter % 3 == 0 ? 40 : 9);
    int form_a = iter % 4 == 0 ? (int)(chk_rnd() % 5) : 0;
    if (form_a == 3) form_a = 0;
    const int form_b = (int)(chk_rnd() % 5);
    for (int t = 0; t < 2; t++) {
        const int form = t ? form_b : form_a;
        for (int i = 0; i < r; i++) sd[t][i] = yd[i];
        switch (form) {
        case 1: for (int i = 0; i < r; i++) sd[t][i] = 1; break;
        case 2: for (int i = 0; i < r; i++) if (i != (r > 1 ? r - 3 < 0 ? 0 : r - 3 : 0)) sd[t][i] = 1; break;
        case 3: sr[t] = 1, sd[t][0] = yd[r - 1]; break;
        case 4: for (int i = 0; i < r; i++) if (chk_rnd() & 1) sd[t][i] = 1; break;
        default: break;
        }
    }
    binary_check(&p, r, sr[0], sd[0], sr[1], sd[1], 1);
}

static void gen_binary_small(int iter) {   /* every activation (half NONE), plain values, POW on positive bases */
    (void)iter;
    ep_binary_params p = {chk_int(0, EP_BIN_FMOD), chk_int(0, 9) < 5 ? EP_ACT_NONE : chk_int(1, EP_ACT_MATH_FIRST - 1),
                          0.3f, 0.6f};
    if (p.act == EP_ACT_CLIP) p.act_alpha = -0.5f, p.act_beta = 0.5f;
    const int r = chk_int(1, 4);
    int32_t d[4], da[4], db[4];
    for (int i = 0; i < r; i++) d[i] = chk_int(1, i == r - 1 ? 37 : 5);
    int ra = chk_int(1, r), rb = chk_int(1, r);
    const int form = chk_int(0, 3);   /* 0 same shape, 1 scalar b, 2 per-channel b, 3 random broadcast */
    for (int i = 0; i < ra; i++) da[i] = d[r - ra + i];
    for (int i = 0; i < rb; i++) db[i] = d[r - rb + i];
    if (form == 0) {
        for (int i = 0; i < r; i++) da[i] = db[i] = d[i];
        ra = rb = r;
    }
    if (form == 1) rb = 1, db[0] = 1;
    if (form == 2 && r >= 3) rb = 3, db[0] = d[r - 3], db[1] = 1, db[2] = 1;
    if (form == 3) {
        for (int i = 0; i < ra; i++) if (chk_int(0, 2) == 0) da[i] = 1;
        for (int i = 0; i < rb; i++) if (chk_int(0, 2) == 0) db[i] = 1;
    }
    if (ra < r && rb < r) {
        rb = r;
        for (int i = 0; i < r; i++) db[i] = d[i];
    }
    binary_check(&p, r, ra, da, rb, db, 0);
}

/* ---------------- BINARY on C8 operands ---------------- */
/* Y C8 [N,C,H,W] (C a multiple of 8); A C8 of Y's dims and B one value per (n, c) ([N,C,1,1] or [1,C,1,1] PLAIN
 * or C8, [C,1,1]), per n ([N,1,1,1]), a scalar ([1]), or C8 of Y's dims too; either order. The spec: the op on the
 * plain tensors (the reference, variant 0), blocked. The shape function must refuse a PLAIN operand of Y's dims,
 * a per-pixel PLAIN operand ([1,C,H,1]), a C8 A with a PLAIN Y and a PLAIN A and B with a C8 Y of H*W > 1. */
static int binary_refused(chk_case *c) {
    ep_tensor *outs[1] = {&c->out[0]};
    ep_op op = chk_op(c->opcode, c->params, c->in, c->n_in, outs, 1);
    ep_shape sh[1];
    uint64_t scratch;
    return ep_op_info_get(c->opcode)->shape(&op, sh, &scratch) != EP_OK;
}
static void gen_binary_c8(int iter) {
    static const int acts[] = {EP_ACT_NONE, EP_ACT_NONE, EP_ACT_RELU, EP_ACT_CLIP, EP_ACT_HARD_SIGMOID, EP_ACT_SIGMOID};
    ep_binary_params p = {iter % (EP_BIN_FMOD + 1), acts[chk_rnd() % CHK_COUNT(acts)], 0.2f, 0.5f};
    if (p.act == EP_ACT_CLIP) p.act_alpha = -0.5f, p.act_beta = 0.75f;
    const int32_t yd[4] = {chk_int(1, 2), 8 * chk_int(1, iter % 4 ? 4 : 24), chk_int(1, 13), chk_int(1, iter % 3 ? 13 : 40)};
    const int form = chk_int(0, 6), b_first = chk_rnd() & 1;
    int32_t bd[4] = {yd[0], yd[1], 1, 1};
    int br = 4;
    if (form == 1) bd[0] = 1;
    if (form == 2) br = 3, bd[0] = yd[1], bd[1] = bd[2] = 1;
    if (form == 3) br = 1, bd[0] = 1;
    if (form == 4) bd[1] = 1;
    if (form == 6) memcpy(bd, yd, sizeof bd);
    ep_tensor a = chk_tensor_rand(4, yd, 1.0f), b = chk_tensor_rand(br, bd, 1.0f);
    float *fa = (float *)a.data, *fb = (float *)b.data;
    for (size_t i = 0; i < chk_bytes(&a) / 4; i++)
        if (chk_rnd() % 8 == 0) fa[i] = elem_value(0);
    if (p.kind == EP_BIN_POW) {   /* positive bases */
        for (size_t i = 0; i < chk_bytes(&a) / 4; i++) fa[i] = fabsf(fa[i]) + 0.1f;
        for (size_t i = 0; i < chk_bytes(&b) / 4; i++) fb[i] = fabsf(fb[i]) + 0.1f;
    }
    /* the spec on the plain tensors */
    ep_tensor y0 = chk_mk(NULL, EP_DTYPE_F32, 4, yd);
    y0.data = chk_alloc(chk_bytes(&y0));
    {
        ep_tensor *in[2] = {b_first ? &b : &a, b_first ? &a : &b}, *out[1] = {&y0};
        ep_op op = chk_op(EP_OP_BINARY, &p, in, 2, out, 1);
        ep_ref_binary_f32(&op);
    }
    ep_tensor a8 = chk_c8(&a), y8 = chk_c8(&y0), b8 = b;
    if (form == 0 || form == 1 || form == 5 || form == 6) b8 = chk_c8(&b);
    if (form == 0 || form == 1) b8.layout = EP_LAYOUT_PLAIN;   /* [n,C,1,1]: the same bytes in both layouts */
    char what[160];
    snprintf(what, sizeof what, "c8 binary kind %d act %d y[%d,%d,%d,%d] b form %d%s", p.kind, p.act, yd[0], yd[1],
             yd[2], yd[3], form, b_first ? " (first)" : "");
    const int trans = is_transcendental(p.act);
    chk_case c = {.what = what, .opcode = EP_OP_BINARY, .params = &p, .in = {b_first ? &b8 : &a8, b_first ? &a8 : &b8},
                  .n_in = 2, .n_out = 1, .tol = elem_tol(p.act), .tol_for = elem_tol_for(p.act),
                  .spec = {(const float *)y8.data}, .spec_tol = trans ? elem_tol(p.act) : CHK_EXACT_VALUE};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, yd);
    c.out[0].layout = EP_LAYOUT_C8;
    chk_kernels(&c);

    /* hostile plans */
    const int ia = b_first ? 1 : 0, ib = 1 - ia;
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 4, yd);
    c.out[0].layout = EP_LAYOUT_PLAIN;
    CHECK(binary_refused(&c), "%s: a PLAIN Y accepted", what);
    c.out[0].layout = EP_LAYOUT_C8;
    c.in[ia] = &a;
    CHECK(!binary_refused(&c) == ((int64_t)yd[2] * yd[3] == 1), "%s: a PLAIN A of Y's dims %s", what,
          binary_refused(&c) ? "refused" : "accepted");
    c.in[ia] = &a8;
    ep_tensor px = chk_mk(a.data, EP_DTYPE_F32, 4, CHK_DIMS(1, yd[1], yd[2], 1));
    c.in[ib] = &px;
    CHECK(!binary_refused(&c) == (yd[2] == 1), "%s: a per-pixel PLAIN B %s", what, binary_refused(&c) ? "refused" : "accepted");
    chk_free(a.data), chk_free(b.data), chk_free(y0.data), chk_free(a8.data), chk_free(y8.data);
    if (b8.data != b.data) chk_free(b8.data);
}

/* ---------------- BINARY on integers ---------------- */
static void gen_binary_int(int iter) {
    static const uint8_t dts[5] = {EP_DTYPE_I8, EP_DTYPE_U8, EP_DTYPE_I16, EP_DTYPE_I32, EP_DTYPE_I64};
    static const int kinds[8] = {EP_BIN_ADD, EP_BIN_SUB, EP_BIN_MUL, EP_BIN_DIV, EP_BIN_MAX, EP_BIN_MIN,
                                 EP_BIN_MOD, EP_BIN_FMOD};
    const uint8_t dt = dts[chk_rnd() % 5];
    const size_t es = ep_dtype_size(dt);
    ep_binary_params p = {kinds[chk_rnd() % 8], EP_ACT_NONE, 0, 0};
    const int r = chk_int(1, 4);
    int32_t yd[4], bd[4];
    for (int i = 0; i < r; i++) yd[i] = iter % 2 ? chk_int(1, iter % 3 == 0 ? 40 : 9) : chk_int(1, i == r - 1 ? 37 : 5);
    int br = r;
    switch (chk_rnd() % 5) {   /* B: same shape, scalar [1], all ones, last dim, random broadcast */
    case 0: for (int i = 0; i < r; i++) bd[i] = yd[i]; break;
    case 1: br = 1, bd[0] = 1; break;
    case 2: for (int i = 0; i < r; i++) bd[i] = 1; break;
    case 3: br = 1, bd[0] = yd[r - 1]; break;
    default: for (int i = 0; i < r; i++) bd[i] = chk_rnd() & 1 ? 1 : yd[i]; break;
    }
    ep_tensor a = chk_mk(NULL, dt, r, yd), b = chk_mk(NULL, dt, br, bd);
    unsigned char *pa = chk_alloc(chk_bytes(&a)), *pb = chk_alloc(chk_bytes(&b));
    a.data = pa, b.data = pb;
    for (size_t i = 0; i < chk_bytes(&a); i++) pa[i] = (unsigned char)chk_rnd();
    for (size_t i = 0; i < chk_bytes(&b); i++) pb[i] = (unsigned char)(chk_rnd() % 4 == 0 ? (chk_rnd() & 1 ? 0 : 0xFF) : chk_rnd());
    const int divides = p.kind == EP_BIN_DIV || p.kind == EP_BIN_MOD || p.kind == EP_BIN_FMOD;
    int zero = 0;
    for (size_t i = 0; i < chk_bytes(&b) / es; i++) {
        int z = 1;
        for (size_t k = 0; k < es; k++) z &= pb[i * es + k] == 0;
        if (z && divides && chk_rnd() % 4) pb[i * es] = 1, z = 0;   /* most cases divide by nonzero values */
        zero |= z;
    }
    char what[96];
    snprintf(what, sizeof what, "binary dtype %d kind %d y[%d..%d](r%d) b(r%d)", dt, p.kind, yd[0], yd[r - 1], r, br);
    chk_case c = {.what = what, .opcode = EP_OP_BINARY, .params = &p, .in = {&a, &b}, .n_in = 2, .n_out = 1,
                  .tol = CHK_EXACT, .want_rc = divides && zero ? EP_ERR_RUN_INDEX : EP_OK};
    c.out[0] = chk_mk(NULL, dt, r, yd);
    chk_kernels(&c);
    chk_free(pa), chk_free(pb);
}

static const chk_gen GENS[] = {{"unary", gen_unary, 300}, {"unary_small", gen_unary_small, 60},
    {"binary", gen_binary, 300}, {"binary_small", gen_binary_small, 120}, {"binary_int", gen_binary_int, 300},
    {"binary_c8", gen_binary_c8, 200}};
int main(int argc, char **argv) { return chk_main(argc, argv, "check_elementwise", GENS, CHK_COUNT(GENS)); }
