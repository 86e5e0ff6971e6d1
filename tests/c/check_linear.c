/* Kernel checks of the linear family (GEMM variants DEFAULT, PACKED and ROWS, MATMUL, ATTENTION): every table's kernel against
 * the reference (tests/c/ep_check.h) on seeded random shapes: odd sizes, the tails of every blocking (MR 6,
 * NR 16, KC 256, 4- and 8-wide vectors), K past one 256 block, extents 0 and 1, broadcast batch dims, every
 * bias form ([N], [1,N], [M,N]), residuals and fused activations. PACKED runs on B packed here the way the
 * compiler packs it (select.py: strips [ceil(N/NR)][K][NR]) and must also match variant 0 on the plain B;
 * its shape function must refuse packed weights of a wrong shape. ROWS runs on B transposed ([N, K]), likewise,
 * and on it stored as F16 or BF16 must give the bytes of its rounded f32 values (chk_w16_exact).
 *
 * Tolerances: chk_tol_accum(K) against the same variant's reference, chk_tol_dot(K) against variant 0
 * (ep_check.h: every output sums K products, in another order and with FMA); the reference of PACKED must equal
 * variant 0 bit for bit (the same sums in the same order). */
#define EP_CHECK_KERNELS
#include "ep_check.h"

/* ---------------- GEMM ---------------- */
/* wide: M up to 40, K up to 600, N up to 100, the AVX2 activations; else M <= 14, K <= 40 or 257..300, N <= 41. */
static void gemm_gen(int iter, int wide) {
    ep_gemm_params p = {0, 0, 0, 0}, pa = {0, 0, 0, 0};
    p.act = chk_random_act(&p.act_alpha, &p.act_beta, wide);
    const int M = wide ? chk_int(1, iter % 4 == 0 ? 40 : 13) : chk_int(1, 14);
    const int K = wide ? chk_int(1, iter % 5 == 0 ? 600 : 40) : chk_int(0, 9) == 0 ? chk_int(257, 300) : chk_int(1, 40);
    const int N = wide ? chk_int(1, iter % 3 == 0 ? 100 : 40) : chk_int(1, 41);
    const int bias_kind = chk_int(0, 3), has_r = wide ? (chk_rnd() & 3) == 0 : chk_int(0, 1);   /* none, [N], [1,N], [M,N] */
    ep_tensor a = chk_tensor_rand(2, CHK_DIMS(M, K), 1.0f), b = chk_tensor_rand(2, CHK_DIMS(K, N), 1.0f);
    ep_tensor bias = bias_kind == 1 ? chk_tensor_rand(1, CHK_DIMS(N), 1.0f)
                                    : chk_tensor_rand(2, CHK_DIMS(bias_kind == 2 ? 1 : M, N), 1.0f);
    ep_tensor r = chk_tensor_rand(2, CHK_DIMS(M, N), 1.0f);
    char what[96];
    snprintf(what, sizeof what, "gemm M%d K%d N%d bias%d r%d act%d", M, K, N, bias_kind, has_r, p.act);
    chk_case c = {.what = what, .opcode = EP_OP_GEMM, .params = &p, .params_abs = &pa,
                  .in = {&a, &b, bias_kind ? &bias : NULL, has_r ? &r : NULL}, .n_in = 4, .n_out = 1,
                  .tol = chk_tol_accum(K), .tol_for = chk_vexp_override(p.act, K), .keep_ref = 1};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, 2, CHK_DIMS(M, N));
    chk_kernels(&c);   /* variant 0 */
    ep_tensor bp = chk_pack_blocks(b.data, K, N, N, 1, EP_PACK_NR);   /* strips [ceil(N/NR)][K][NR] */
    c.in[1] = &bp;
    c.variant = EP_GEMM_VARIANT_PACKED;
    void *v0 = c.ref_out[0];
    c.ref_out[0] = NULL;
    c.spec[0] = v0;
    c.spec_tol = chk_tol_dot(K);
    chk_kernels(&c);   /* keeps the variant's reference output: it must be variant 0's bits */
    CHECK(c.ref_out[0] && v0 && !memcmp(c.ref_out[0], v0, chk_bytes(&c.out[0])), "%s: ref packed differs from variant 0", what);
    chk_free(c.ref_out[0]);
    c.ref_out[0] = v0;
    CHECK(c.scratch == 0, "%s: packed scratch %llu", what, (unsigned long long)c.scratch);
    /* hostile plans: packed weights of a wrong shape are refused */
    ep_tensor *outs[1] = {&c.out[0]};
    ep_op op = chk_op(EP_OP_GEMM, &p, c.in, 4, outs, 1);
    op.variant = EP_GEMM_VARIANT_PACKED;
    ep_shape sh;
    uint64_t scratch;
    ep_tensor bad = bp;
    c.in[1] = &bad;
    bad.dims[0]++;
    CHECK(ep_shape_gemm(&op, &sh, &scratch) != EP_OK, "%s: an extra strip accepted", what);
    bad.dims[0]--, bad.dims[1]++;
    CHECK(ep_shape_gemm(&op, &sh, &scratch) != EP_OK, "%s: K+1 accepted", what);
    c.in[1] = &b;
    CHECK(ep_shape_gemm(&op, &sh, &scratch) != EP_OK, "%s: plain B accepted as packed", what);
    /* ROWS: B as its transpose [N, K] */
    ep_tensor bt = chk_mk(NULL, EP_DTYPE_F32, 2, CHK_DIMS(N, K));
    bt.data = chk_alloc(chk_bytes(&bt));
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++) ((float *)bt.data)[(int64_t)n * K + k] = ((const float *)b.data)[(int64_t)k * N + n];
    c.in[1] = &bt;
    c.variant = EP_GEMM_VARIANT_ROWS;
    c.keep_ref = 1;
    c.ref_out[0] = NULL;
    chk_kernels(&c);
    CHECK(c.ref_out[0] && v0 && !memcmp(c.ref_out[0], v0, chk_bytes(&c.out[0])), "%s: ref rows differs from variant 0", what);
    chk_free(c.ref_out[0]);
    c.ref_out[0] = v0;
    op.variant = EP_GEMM_VARIANT_ROWS;
    ep_tensor badt = bt;
    c.in[1] = &badt;
    badt.dims[1]++;
    if (N != K + 1) CHECK(ep_shape_gemm(&op, &sh, &scratch) != EP_OK, "%s: rows of K+1 accepted", what);
    c.in[1] = &bp;
    CHECK(ep_shape_gemm(&op, &sh, &scratch) != EP_OK, "%s: packed B accepted as rows", what);
    /* ROWS on 16-bit weights (1.16): the same bytes as on their rounded f32 values, every table */
    ep_tensor bt16 = chk_w16_round(&bt, (int)(chk_rnd() & 1));
    c.in[1] = &bt;
    chk_w16_exact(&c, 1, &bt16);
    chk_free(bt16.data);
    chk_free(bt.data);
    chk_free(c.ref_out[0]), chk_free(bp.data);
    chk_free(a.data), chk_free(b.data), chk_free(bias.data), chk_free(r.data);
}
static void gen_gemm(int iter) { gemm_gen(iter, 1); }
static void gen_gemm_small(int iter) { gemm_gen(iter, 0); }

/* ---------------- MATMUL ---------------- */
/* Batch dims right-aligned: each operand's equal to the output's, 1, or absent. */
static void matmul_gen(int M, int K, int N, int zero_batch) {
    ep_matmul_params p = {0, 0};
    const int ra = chk_int(2, 4), rb = chk_int(2, 4), ro = ra > rb ? ra : rb;
    int32_t ad[4], bd[4], yd[4];
    for (int i = 0; i < ro - 2; i++) {
        const int32_t e = zero_batch && i == 0 ? 0 : chk_int(1, 3);
        const int ia = i - (ro - ra), ib = i - (ro - rb), f = chk_int(0, 2);   /* 0 both e, 1 A broadcast, 2 B broadcast */
        if (ia >= 0) ad[ia] = f == 1 ? 1 : e;
        if (ib >= 0) bd[ib] = f == 2 ? 1 : e;
        yd[i] = (ia >= 0 && ad[ia] != 1) || (ib >= 0 && bd[ib] != 1) ? e : 1;
    }
    ad[ra - 2] = M, ad[ra - 1] = K, bd[rb - 2] = K, bd[rb - 1] = N, yd[ro - 2] = M, yd[ro - 1] = N;
    ep_tensor a = chk_tensor_rand(ra, ad, 1.0f), b = chk_tensor_rand(rb, bd, 1.0f);
    char what[128];
    snprintf(what, sizeof what, "matmul a[%d,%d,%d,%d](r%d) b[%d,%d,%d,%d](r%d)", ad[0], ad[1], ra > 2 ? ad[2] : 0,
             ra > 3 ? ad[3] : 0, ra, bd[0], bd[1], rb > 2 ? bd[2] : 0, rb > 3 ? bd[3] : 0, rb);
    chk_case c = {.what = what, .opcode = EP_OP_MATMUL, .params = &p, .in = {&a, &b}, .n_in = 2, .n_out = 1,
                  .tol = chk_tol_accum(K)};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, ro, yd);
    chk_kernels(&c);
    chk_free(a.data), chk_free(b.data);
}
static void gen_matmul(int iter) {   /* up to 40 x 600 x 100, extents 0 */
    const int M = iter % 11 == 0 ? chk_int(0, 2) : chk_int(1, iter % 4 == 0 ? 40 : 14);
    const int K = iter % 13 == 0 ? 0 : chk_int(1, iter % 5 == 0 ? 600 : 40);
    const int N = iter % 17 == 0 ? chk_int(0, 1) : chk_int(1, iter % 3 == 0 ? 100 : 40);
    matmul_gen(M, K, N, iter % 19 == 0);
}
static void gen_matmul_small(int iter) {   /* small batched products */
    (void)iter;
    const int M = chk_int(1, 9), K = chk_int(1, 33), N = chk_int(1, 35);
    matmul_gen(M, K, N, 0);
}
static void gen_matmul_edges(int iter) {   /* extents 0 and 1, K past one 256 block, 16-column strips and tails */
    const int M = iter % 5 == 0 ? chk_int(0, 1) : chk_int(1, 20), K = iter % 7 == 0 ? chk_int(0, 1) : chk_int(1, iter % 3 ? 40 : 300);
    const int N = iter % 6 == 0 ? chk_int(0, 1) : chk_int(1, 70);
    matmul_gen(M, K, N, iter % 11 == 0);
}

/* ---------------- ATTENTION ---------------- */
/* Q [.., M, D], KT [.., D, N], V [.., N, E] (V's batch dims e, 1 or absent: never beyond S's), a mask of any
 * broadcast form or none, scale or divide, bands of 1..16 rows; the minimum scratch (one slot), then 3 slots.
 * Tolerance: S differs from the reference's by the rounding of D products (FMA), softmax's exp by ~2e-6
 * relative, and |Y| <= max|V| = 1. */
static void attention_gen(int iter) {
    const int M = iter % 11 == 0 ? chk_int(0, 2) : chk_int(1, iter % 4 == 0 ? 40 : 13);
    const int D = chk_int(1, iter % 5 == 0 ? 80 : 20), E = iter % 13 == 0 ? chk_int(0, 1) : chk_int(1, 40);
    const int N = iter % 17 == 0 ? chk_int(0, 1) : chk_int(1, iter % 3 == 0 ? 300 : 40);
    ep_attention_params p = {0, chk_int(0, 1), chk_int(1, 16), 0};
    p.scale = p.divide ? sqrtf((float)D) : 1.0f / sqrtf((float)D);
    const int rq = chk_int(2, 4), rk = chk_int(2, 4), ro = rq > rk ? rq : rk, rv = chk_int(2, ro);
    int32_t qd[4], kd[4], vd[4], yd[4], sd[4], md[4];
    for (int i = 0; i < ro - 2; i++) {
        const int32_t e = chk_int(1, 3);
        const int iq = i - (ro - rq), ik = i - (ro - rk), iv = i - (ro - rv), f = chk_int(0, 2);
        if (iq >= 0) qd[iq] = f == 1 ? 1 : e;
        if (ik >= 0) kd[ik] = f == 2 ? 1 : e;
        yd[i] = sd[i] = (iq >= 0 && qd[iq] != 1) || (ik >= 0 && kd[ik] != 1) ? e : 1;
        if (iv >= 0) vd[iv] = chk_int(0, 1) ? yd[i] : 1;
    }
    qd[rq - 2] = M, qd[rq - 1] = D, kd[rk - 2] = D, kd[rk - 1] = N, vd[rv - 2] = N, vd[rv - 1] = E;
    yd[ro - 2] = sd[ro - 2] = M, yd[ro - 1] = E, sd[ro - 1] = N;
    const int has_mask = chk_int(0, 2) != 0, rm = chk_int(0, ro);
    for (int i = 0; i < rm; i++) md[i] = chk_int(0, 1) ? sd[i + ro - rm] : 1;
    ep_tensor q = chk_tensor_rand(rq, qd, 1.0f), k = chk_tensor_rand(rk, kd, 1.0f), v = chk_tensor_rand(rv, vd, 1.0f);
    ep_tensor m = chk_tensor_rand(rm, md, 2.0f);
    for (size_t i = 0; i < chk_bytes(&m) / 4; i++)   /* some masked-out positions, as a causal mask has */
        if (chk_int(0, 7) == 0) ((float *)m.data)[i] = -1e4f;
    char what[160];
    snprintf(what, sizeof what, "attention M%d D%d N%d E%d ranks q%d k%d v%d mask%d(r%d) rows%d div%d", M, D, N, E,
             rq, rk, rv, has_mask, rm, p.rows, p.divide);
    chk_case c = {.what = what, .opcode = EP_OP_ATTENTION, .params = &p, .in = {&q, &k, &v, has_mask ? &m : NULL},
                  .n_in = has_mask ? 4 : 3, .n_out = 1, .tol = {.max_rel = 1e-5, .abs = 1e-6 * D + 4e-6}};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, ro, yd);
    chk_kernels(&c);
    c.n_extra = 1;
    c.extra[0] = 2 * c.scratch;
    chk_kernels(&c);
    chk_free(q.data), chk_free(k.data), chk_free(v.data), chk_free(m.data);
}

/* One row of A against many: every table's MATMUL (and so its ATTENTION's products) computes a product of one
 * row (B streamed row by row) with the bits of that row in a product of several (the register tiles): the same
 * FMAs in the same k order. K past one 256 block, N past one 1024-column pass, tails of 4 and 8 columns. */
static void gen_matmul_row(int iter) {
    const int M = chk_int(2, 9), K = iter % 3 == 0 ? chk_int(257, 700) : chk_int(1, 80);
    const int N = iter % 4 == 0 ? chk_int(1025, 1600) : chk_int(1, 70);
    ep_matmul_params p = {0, 0};
    ep_tensor a = chk_tensor_rand(2, CHK_DIMS(M, K), 1.0f), b = chk_tensor_rand(2, CHK_DIMS(K, N), 1.0f);
    ep_tensor y = chk_mk(chk_alloc((size_t)M * N * 4), EP_DTYPE_F32, 2, CHK_DIMS(M, N));
    ep_tensor a1 = chk_mk(NULL, EP_DTYPE_F32, 2, CHK_DIMS(1, K)), y1 = chk_mk(chk_alloc((size_t)N * 4), EP_DTYPE_F32, 2, CHK_DIMS(1, N));
    ep_tensor *in[2] = {&a, &b}, *out[1] = {&y}, *in1[2] = {&a1, &b}, *out1[1] = {&y1};
    ep_op op = chk_op(EP_OP_MATMUL, &p, in, 2, out, 1), op1 = chk_op(EP_OP_MATMUL, &p, in1, 2, out1, 1);
    for (int ti = 1; ti < chk_n_tables; ti++) {
        const ep_kernel_fn fn = chk_tables[ti].t.fn[EP_OP_MATMUL][0];
        if (!fn || !chk_checked_here(ti, EP_OP_MATMUL, 0)) continue;
        CHECK(fn(&op) == EP_OK, "matmul_row: table %d refused M%d K%d N%d", ti, M, K, N);
        for (int i = 0; i < M; i++) {
            a1.data = (float *)a.data + (int64_t)i * K;
            CHECK(fn(&op1) == EP_OK && !memcmp(y1.data, (float *)y.data + (int64_t)i * N, (size_t)N * 4),
                  "matmul_row: table %d, row %d of M%d K%d N%d differs from its product alone", ti, i, M, K, N);
        }
    }
    chk_free(a.data), chk_free(b.data), chk_free(y.data), chk_free(y1.data);
}

static const chk_gen GENS[] = {{"gemm", gen_gemm, 300}, {"gemm_small", gen_gemm_small, 80},
    {"matmul", gen_matmul, 300}, {"matmul_small", gen_matmul_small, 30}, {"matmul_edges", gen_matmul_edges, 40},
    {"matmul_row", gen_matmul_row, 40},
    {"attention", attention_gen, 300}};
int main(int argc, char **argv) { return chk_main(argc, argv, "check_linear", GENS, CHK_COUNT(GENS)); }
