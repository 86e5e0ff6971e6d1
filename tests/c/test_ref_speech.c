/* Standalone test of the speech-op shape functions and reference kernels: LAYERNORM, WHERE,
 * COMPARE, EXPAND, CAST, ARGMAX, TOPK, CUMSUM, TRILU, LSTM, GRU, SCATTERND, GATHERND.
 *
 * (a) Known answers, hand-computed (the recurrent ones from their closed form with zero weights).
 * (b) Every shape function rejects hostile params / shapes with an EP_ERR_PLAN_* code; bad runtime
 *     indices fail the run with EP_ERR_RUN_INDEX.
 * (c) Random parameter bytes, dtypes and shapes never crash a shape function; whatever it accepts is
 *     run through the kernel on heap buffers of exactly the validated sizes (ASan finds overruns).
 *
 * Build (from the repo root; ep_config.h is not needed):
 *   cc -std=c11 -Iruntime_c -Iruntime_c/include -Iruntime_c/kernels -Iruntime_c/src tests/c/test_ref_speech.c \
 *      runtime_c/src/ops/{sequence,logic,rnn}.c \
 *      runtime_c/kernels/ref/{layernorm_f32,logic_any,sequence_any,rnn_f32}.c -lm */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ep_check.h"

/* op with its scratch */
static ep_op mkop(uint16_t opcode, const void *params, ep_tensor *const *in, int n_in, ep_tensor *const *out,
                  int n_out, void *scratch, uint64_t scratch_size) {
    ep_op op = chk_op(opcode, params, in, n_in, out, n_out);
    op.scratch = scratch;
    op.scratch_size = scratch_size;
    return op;
}

/* Runs shape fn (must accept and agree with every output tensor) then the kernel. */
static int run(const char *what, ep_shape_fn shape, ep_kernel_fn kern, const ep_op *op) {
    ep_shape s[4];
    uint64_t scratch = 0;
    int rc = shape(op, s, &scratch);
    CHECK(rc == EP_OK, "%s: shape rc %d", what, rc);
    if (rc != EP_OK) return rc;
    for (int k = 0; k < op->n_out; k++) {
        const ep_tensor *t = op->out[k];
        int same = t->rank == s[k].rank && t->dtype == s[k].dtype;
        for (int i = 0; i < t->rank && same; i++) same = t->dims[i] == s[k].dims[i];
        CHECK(same, "%s: output %d shape differs", what, k);
    }
    CHECK(scratch <= op->scratch_size, "%s: scratch %llu > %llu", what, (unsigned long long)scratch,
          (unsigned long long)op->scratch_size);
    return kern(op);
}

static int feq(float a, float b) { return fabsf(a - b) <= 1e-5f * (1.0f + fabsf(b)); }
static int fall(const float *a, const float *b, int n) {
    for (int i = 0; i < n; i++)
        if (!feq(a[i], b[i])) {
            printf("  [%d] got %.7g want %.7g\n", i, a[i], b[i]);
            return 0;
        }
    return 1;
}
static double sg(double x) { return 1.0 / (1.0 + exp(-x)); }

/* ================= (a) known answers ================= */
static void known_layernorm(void) {
    float x[8] = {1, 2, 3, 4, -1, 0, 1, 2}, sc[4] = {1, 2, 1, 1}, bi[4] = {0, 0, 1, 0}, y[8], mean[2], inv[2];
    ep_tensor tx = chk_mk(x, EP_DTYPE_F32, 2, CHK_DIMS(2, 4)), ts = chk_mk(sc, EP_DTYPE_F32, 1, CHK_DIMS(4));
    ep_tensor tb = chk_mk(bi, EP_DTYPE_F32, 1, CHK_DIMS(4));
    ep_tensor ty = chk_mk(y, EP_DTYPE_F32, 2, CHK_DIMS(2, 4)), tm = chk_mk(mean, EP_DTYPE_F32, 2, CHK_DIMS(2, 1));
    ep_tensor ti = chk_mk(inv, EP_DTYPE_F32, 2, CHK_DIMS(2, 1));
    ep_tensor *in[3] = {&tx, &ts, &tb}, *out[3] = {&ty, &tm, &ti};
    ep_layernorm_params p = {1, 0.0f};
    ep_op op = mkop(EP_OP_LAYERNORM, &p, in, 3, out, 3, NULL, 0);
    CHECK(run("layernorm", ep_shape_layernorm, ep_ref_layernorm_f32, &op) == EP_OK, "layernorm rc");
    const float r = (float)(1.0 / sqrt(1.25)); /* var of {1,2,3,4} and {-1,0,1,2} */
    float e[8] = {-1.5f * r, -0.5f * r * 2, 0.5f * r + 1, 1.5f * r, -1.5f * r, -0.5f * r * 2, 0.5f * r + 1, 1.5f * r};
    CHECK(fall(y, e, 8), "layernorm values");
    CHECK(feq(mean[0], 2.5f) && feq(mean[1], 0.5f) && feq(inv[0], r) && feq(inv[1], r), "layernorm stats");
}

static void known_where_compare_expand(void) {
    uint8_t c[2] = {1, 0};
    float x[3] = {1, 2, 3}, yv[1] = {9}, z[6];
    ep_tensor tc = chk_mk(c, EP_DTYPE_BOOL, 2, CHK_DIMS(2, 1)), tx = chk_mk(x, EP_DTYPE_F32, 1, CHK_DIMS(3));
    ep_tensor ty = chk_mk(yv, EP_DTYPE_F32, 1, CHK_DIMS(1));
    ep_tensor tz = chk_mk(z, EP_DTYPE_F32, 2, CHK_DIMS(2, 3));
    ep_tensor *in[3] = {&tc, &tx, &ty}, *out[1] = {&tz};
    ep_where_params wp = {0, 0};
    ep_op op = mkop(EP_OP_WHERE, &wp, in, 3, out, 1, NULL, 0);
    CHECK(run("where", ep_shape_where, ep_ref_where_any, &op) == EP_OK, "where rc");
    CHECK(fall(z, (const float[]){1, 2, 3, 9, 9, 9}, 6), "where values");

    int64_t a[3] = {1, 5, -7}, b[1] = {1};
    uint8_t o[3];
    ep_tensor ta = chk_mk(a, EP_DTYPE_I64, 1, CHK_DIMS(3)), tb = chk_mk(b, EP_DTYPE_I64, 1, CHK_DIMS(1));
    ep_tensor to = chk_mk(o, EP_DTYPE_BOOL, 1, CHK_DIMS(3));
    ep_tensor *cin[2] = {&ta, &tb}, *cout[1] = {&to};
    const int kinds[5] = {EP_CMP_EQUAL, EP_CMP_LESS, EP_CMP_GREATER, EP_CMP_LESS_EQUAL, EP_CMP_GREATER_EQUAL};
    const uint8_t want[5][3] = {{1, 0, 0}, {0, 0, 1}, {0, 1, 0}, {1, 0, 1}, {1, 1, 0}};
    for (int k = 0; k < 5; k++) {
        ep_compare_params cp = {kinds[k], 0};
        ep_op cop = mkop(EP_OP_COMPARE, &cp, cin, 2, cout, 1, NULL, 0);
        CHECK(run("compare", ep_shape_compare, ep_ref_compare_any, &cop) == EP_OK && !memcmp(o, want[k], 3),
              "compare kind %d", kinds[k]);
    }
    uint8_t l[4] = {0, 1, 0, 1}, r[4] = {0, 0, 1, 1}, lo[4];
    ep_tensor tl = chk_mk(l, EP_DTYPE_BOOL, 1, CHK_DIMS(4)), tr = chk_mk(r, EP_DTYPE_BOOL, 1, CHK_DIMS(4));
    ep_tensor tlo = chk_mk(lo, EP_DTYPE_BOOL, 1, CHK_DIMS(4));
    ep_tensor *lin[2] = {&tl, &tr}, *lout[1] = {&tlo};
    const uint8_t lw[3][4] = {{0, 0, 0, 1}, {0, 1, 1, 1}, {0, 1, 1, 0}};
    for (int k = 0; k < 3; k++) {
        ep_compare_params cp = {EP_CMP_AND + k, 0};
        ep_op lop = mkop(EP_OP_COMPARE, &cp, lin, 2, lout, 1, NULL, 0);
        CHECK(run("logic", ep_shape_compare, ep_ref_compare_any, &lop) == EP_OK && !memcmp(lo, lw[k], 4), "logic %d", k);
    }

    int32_t ex[3] = {1, 2, 3}, ey[12];
    ep_tensor tex = chk_mk(ex, EP_DTYPE_I32, 2, CHK_DIMS(3, 1)), tey = chk_mk(ey, EP_DTYPE_I32, 3, CHK_DIMS(2, 3, 2));
    ep_tensor *ein[1] = {&tex}, *eout[1] = {&tey};
    ep_op eop = mkop(EP_OP_EXPAND, &wp, ein, 1, eout, 1, NULL, 0);
    CHECK(run("expand", ep_shape_expand, ep_ref_expand_any, &eop) == EP_OK, "expand rc");
    const int32_t ew[12] = {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3};
    CHECK(!memcmp(ey, ew, sizeof ew), "expand values");
}

static void known_cast(void) {
    float x[6] = {1.7f, -1.7f, NAN, 1e10f, -1e10f, 0.0f};
    int32_t yi[6];
    uint8_t yu[6], yb[6];
    ep_tensor tx = chk_mk(x, EP_DTYPE_F32, 1, CHK_DIMS(6));
    ep_tensor ti = chk_mk(yi, EP_DTYPE_I32, 1, CHK_DIMS(6)), tu = chk_mk(yu, EP_DTYPE_U8, 1, CHK_DIMS(6));
    ep_tensor tb = chk_mk(yb, EP_DTYPE_BOOL, 1, CHK_DIMS(6));
    ep_tensor *in[1] = {&tx}, *oi[1] = {&ti}, *ou[1] = {&tu}, *ob[1] = {&tb};
    ep_cast_params p = {EP_DTYPE_I32, 0};
    ep_op op = mkop(EP_OP_CAST, &p, in, 1, oi, 1, NULL, 0);
    CHECK(run("cast", ep_shape_cast, ep_ref_cast_any, &op) == EP_OK, "cast rc");
    CHECK(!memcmp(yi, ((const int32_t[]){1, -1, 0, INT32_MAX, INT32_MIN, 0}), sizeof yi), "cast f32->i32 saturates");
    p.to = EP_DTYPE_U8;
    op = mkop(EP_OP_CAST, &p, in, 1, ou, 1, NULL, 0);
    CHECK(run("cast", ep_shape_cast, ep_ref_cast_any, &op) == EP_OK &&
          !memcmp(yu, ((const uint8_t[]){1, 0, 0, 255, 0, 0}), 6), "cast f32->u8");
    p.to = EP_DTYPE_BOOL;
    op = mkop(EP_OP_CAST, &p, in, 1, ob, 1, NULL, 0);
    CHECK(run("cast", ep_shape_cast, ep_ref_cast_any, &op) == EP_OK &&
          !memcmp(yb, ((const uint8_t[]){1, 1, 1, 1, 1, 0}), 6), "cast f32->bool");
    /* the boundaries of each saturating float -> integer loop, against truncation in double */
    const float edge[] = {2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483904.0f, 255.0f, 255.5f, 254.99f,
                          256.0f,        -0.5f,         -0.0f,          127.5f,         127.0f, -128.0f, -128.9f,
                          -129.0f,       INFINITY,      -INFINITY,      16777217.0f,    0.99f,  -1.0f};
    enum { NE = sizeof edge / sizeof edge[0] };
    const struct { uint8_t dt; double lo, hi; } sat[3] = {
        {EP_DTYPE_I32, -2147483648.0, 2147483647.0}, {EP_DTYPE_U8, 0.0, 255.0}, {EP_DTYPE_I8, -128.0, 127.0}};
    for (int t = 0; t < 3; t++) {
        int32_t got32[NE];
        ep_tensor te = chk_mk((void *)edge, EP_DTYPE_F32, 1, CHK_DIMS(NE));
        ep_tensor tg = chk_mk(got32, sat[t].dt, 1, CHK_DIMS(NE));
        ep_tensor *ein[1] = {&te}, *eout[1] = {&tg};
        p.to = sat[t].dt;
        op = mkop(EP_OP_CAST, &p, ein, 1, eout, 1, NULL, 0);
        CHECK(run("cast", ep_shape_cast, ep_ref_cast_any, &op) == EP_OK, "cast edges rc");
        for (int i = 0; i < NE; i++) {
            const double v = edge[i];
            const int64_t want = v <= sat[t].lo ? (int64_t)sat[t].lo : v >= sat[t].hi ? (int64_t)sat[t].hi : (int64_t)v;
            const int64_t g = sat[t].dt == EP_DTYPE_I32 ? got32[i]
                              : sat[t].dt == EP_DTYPE_U8 ? ((const uint8_t *)got32)[i] : ((const int8_t *)got32)[i];
            CHECK(g == want, "cast f32 %.9g to dtype %d: %lld, want %lld", v, sat[t].dt, (long long)g, (long long)want);
        }
    }
    const int32_t big[3] = {16777217, -16777219, INT32_MIN};
    float fb[3];
    ep_tensor tbig = chk_mk((void *)big, EP_DTYPE_I32, 1, CHK_DIMS(3)), tfb = chk_mk(fb, EP_DTYPE_F32, 1, CHK_DIMS(3));
    ep_tensor *bin[1] = {&tbig}, *bout[1] = {&tfb};
    p.to = EP_DTYPE_F32;
    op = mkop(EP_OP_CAST, &p, bin, 1, bout, 1, NULL, 0);
    CHECK(run("cast", ep_shape_cast, ep_ref_cast_any, &op) == EP_OK && fb[0] == 16777216.0f && fb[1] == -16777220.0f &&
          fb[2] == -2147483648.0f, "cast i32->f32 rounds to nearest even");
    int64_t w[3] = {300, -1, 5};
    int8_t w8[3];
    ep_tensor tw = chk_mk(w, EP_DTYPE_I64, 1, CHK_DIMS(3)), tw8 = chk_mk(w8, EP_DTYPE_I8, 1, CHK_DIMS(3));
    ep_tensor *win[1] = {&tw}, *wout[1] = {&tw8};
    p.to = EP_DTYPE_I8;
    op = mkop(EP_OP_CAST, &p, win, 1, wout, 1, NULL, 0);
    CHECK(run("cast", ep_shape_cast, ep_ref_cast_any, &op) == EP_OK && w8[0] == 44 && w8[1] == -1 && w8[2] == 5,
          "cast i64->i8 wraps");
}

static void known_index_ops(void) {
    /* ARGMAX / ARGMIN with ties */
    float x[5] = {3, 1, 3, 2, 1};
    int64_t am;
    ep_tensor tx = chk_mk(x, EP_DTYPE_F32, 2, CHK_DIMS(1, 5)), tam = chk_mk(&am, EP_DTYPE_I64, 1, CHK_DIMS(1));
    ep_tensor *in[1] = {&tx}, *out[1] = {&tam};
    const int64_t want[4] = {0, 2, 1, 4}; /* max first, max last, min first, min last */
    for (int k = 0; k < 4; k++) {
        ep_argmax_params p = {1, 0, k & 1, k >> 1};
        ep_op op = mkop(EP_OP_ARGMAX, &p, in, 1, out, 1, NULL, 0);
        CHECK(run("argmax", ep_shape_argmax, ep_ref_argmax_any, &op) == EP_OK && am == want[k], "argmax %d: %lld", k,
              (long long)am);
    }
    /* TOPK */
    float v[3];
    int64_t vi[3];
    int32_t scr[10];
    ep_tensor tv = chk_mk(v, EP_DTYPE_F32, 2, CHK_DIMS(1, 3)), tvi = chk_mk(vi, EP_DTYPE_I64, 2, CHK_DIMS(1, 3));
    ep_tensor *tout[2] = {&tv, &tvi};
    ep_topk_params tp = {1, 3, 1, 1};
    ep_op op = mkop(EP_OP_TOPK, &tp, in, 1, tout, 2, scr, sizeof scr);
    CHECK(run("topk", ep_shape_topk, ep_ref_topk_any, &op) == EP_OK && fall(v, (const float[]){3, 3, 2}, 3) &&
          vi[0] == 0 && vi[1] == 2 && vi[2] == 3, "topk largest");
    tp.largest = 0;
    CHECK(run("topk", ep_shape_topk, ep_ref_topk_any, &op) == EP_OK && fall(v, (const float[]){1, 1, 2}, 3) &&
          vi[0] == 1 && vi[1] == 4 && vi[2] == 3, "topk smallest");
    /* CUMSUM */
    int32_t cx[4] = {1, 2, 3, 4}, cy[4];
    ep_tensor tcx = chk_mk(cx, EP_DTYPE_I32, 1, CHK_DIMS(4)), tcy = chk_mk(cy, EP_DTYPE_I32, 1, CHK_DIMS(4));
    ep_tensor *cin[1] = {&tcx}, *cout[1] = {&tcy};
    const int32_t cw[4][4] = {{1, 3, 6, 10}, {0, 1, 3, 6}, {10, 9, 7, 4}, {9, 7, 4, 0}};
    for (int k = 0; k < 4; k++) {
        ep_cumsum_params cp = {0, k & 1, k >> 1, 0};
        ep_op cop = mkop(EP_OP_CUMSUM, &cp, cin, 1, cout, 1, NULL, 0);
        CHECK(run("cumsum", ep_shape_cumsum, ep_ref_cumsum_any, &cop) == EP_OK && !memcmp(cy, cw[k], sizeof cy),
              "cumsum %d", k);
    }
    /* CUMSUM with prod = 1 (CumProd): exclusive starts from 1 */
    const int32_t cpw[4][4] = {{1, 2, 6, 24}, {1, 1, 2, 6}, {24, 24, 12, 4}, {24, 12, 4, 1}};
    for (int k = 0; k < 4; k++) {
        ep_cumsum_params cp = {0, k & 1, k >> 1, 1};
        ep_op cop = mkop(EP_OP_CUMSUM, &cp, cin, 1, cout, 1, NULL, 0);
        CHECK(run("cumprod", ep_shape_cumsum, ep_ref_cumsum_any, &cop) == EP_OK && !memcmp(cy, cpw[k], sizeof cy),
              "cumprod %d", k);
    }
    /* TRILU on a 3x3 of ones */
    int64_t m[9], my[9];
    for (int i = 0; i < 9; i++) m[i] = i + 1;
    ep_tensor tm = chk_mk(m, EP_DTYPE_I64, 2, CHK_DIMS(3, 3)), tmy = chk_mk(my, EP_DTYPE_I64, 2, CHK_DIMS(3, 3));
    ep_tensor *min_[1] = {&tm}, *mout[1] = {&tmy};
    ep_trilu_params trp = {1, 0, 1};
    ep_op top = mkop(EP_OP_TRILU, &trp, min_, 1, mout, 1, NULL, 0);
    CHECK(run("trilu", ep_shape_trilu, ep_ref_trilu_any, &top) == EP_OK &&
          !memcmp(my, ((const int64_t[]){0, 2, 3, 0, 0, 6, 0, 0, 0}), sizeof my), "triu k=1");
    trp.upper = 0;
    trp.k = -1;
    CHECK(run("trilu", ep_shape_trilu, ep_ref_trilu_any, &top) == EP_OK &&
          !memcmp(my, ((const int64_t[]){0, 0, 0, 4, 0, 0, 7, 8, 0}), sizeof my), "tril k=-1");
    trp.k = INT64_MAX; /* keeps everything, no overflow */
    CHECK(run("trilu", ep_shape_trilu, ep_ref_trilu_any, &top) == EP_OK && !memcmp(my, m, sizeof m), "tril k=max");
    /* SCATTERND add with a repeated index, negative index */
    float d[4] = {1, 2, 3, 4}, u[3] = {10, 20, 30}, sy[4];
    int64_t si[3] = {1, 1, -1};
    ep_tensor td = chk_mk(d, EP_DTYPE_F32, 1, CHK_DIMS(4)), tsi = chk_mk(si, EP_DTYPE_I64, 2, CHK_DIMS(3, 1));
    ep_tensor tu = chk_mk(u, EP_DTYPE_F32, 1, CHK_DIMS(3));
    ep_tensor tsy = chk_mk(sy, EP_DTYPE_F32, 1, CHK_DIMS(4));
    ep_tensor *sin_[3] = {&td, &tsi, &tu}, *sout[1] = {&tsy};
    ep_scatternd_params sp = {EP_SCATTER_ADD, 0};
    ep_op sop = mkop(EP_OP_SCATTERND, &sp, sin_, 3, sout, 1, NULL, 0);
    CHECK(run("scatternd", ep_shape_scatternd, ep_ref_scatternd_any, &sop) == EP_OK &&
          fall(sy, (const float[]){1, 32, 3, 34}, 4), "scatternd add");
    si[2] = 4;
    CHECK(ep_ref_scatternd_any(&sop) == EP_ERR_RUN_INDEX, "scatternd index out of range");
    /* GATHERND batch_dims 1: data [2,2,2], indices [2,1] */
    int32_t gd[8] = {0, 1, 2, 3, 4, 5, 6, 7}, gy[4];
    int64_t gi[2] = {1, 0};
    ep_tensor tgd = chk_mk(gd, EP_DTYPE_I32, 3, CHK_DIMS(2, 2, 2)), tgi = chk_mk(gi, EP_DTYPE_I64, 2, CHK_DIMS(2, 1));
    ep_tensor tgy = chk_mk(gy, EP_DTYPE_I32, 2, CHK_DIMS(2, 2));
    ep_tensor *gin[2] = {&tgd, &tgi}, *gout[1] = {&tgy};
    ep_gathernd_params gp = {1, 0};
    ep_op gop = mkop(EP_OP_GATHERND, &gp, gin, 2, gout, 1, NULL, 0);
    CHECK(run("gathernd", ep_shape_gathernd, ep_ref_gathernd_any, &gop) == EP_OK &&
          !memcmp(gy, ((const int32_t[]){2, 3, 4, 5}), sizeof gy), "gathernd batch_dims 1");
    gi[1] = -3;
    CHECK(ep_ref_gathernd_any(&gop) == EP_ERR_RUN_INDEX, "gathernd index out of range");
}

/* LSTM / GRU with zero W and R: every gate is a constant of the bias, so the state follows a
 * closed-form recurrence. T = 3, B = 2 (seq_lens {3, 1}), I = 2, H = 1, forward. */
static void known_rnn(void) {
    float x[12] = {0}, w[8] = {0}, r[4] = {0}, bias[8] = {0.5f, -0.3f, 0.8f, 0.2f, 0.1f, 0.2f, -0.4f, 0.6f};
    float y[6], yh[2], yc[2], scr[6];
    int32_t sl[2] = {3, 1};
    ep_tensor tx = chk_mk(x, EP_DTYPE_F32, 3, CHK_DIMS(3, 2, 2)), tw = chk_mk(w, EP_DTYPE_F32, 3, CHK_DIMS(1, 4, 2));
    ep_tensor tr = chk_mk(r, EP_DTYPE_F32, 3, CHK_DIMS(1, 4, 1)), tb = chk_mk(bias, EP_DTYPE_F32, 2, CHK_DIMS(1, 8));
    ep_tensor tsl = chk_mk(sl, EP_DTYPE_I32, 1, CHK_DIMS(2));
    ep_tensor ty = chk_mk(y, EP_DTYPE_F32, 4, CHK_DIMS(3, 1, 2, 1));
    ep_tensor th = chk_mk(yh, EP_DTYPE_F32, 3, CHK_DIMS(1, 2, 1));
    ep_tensor tc = chk_mk(yc, EP_DTYPE_F32, 3, CHK_DIMS(1, 2, 1));
    ep_tensor *in[5] = {&tx, &tw, &tr, &tb, &tsl}, *out[3] = {&ty, &th, &tc};
    ep_rnn_params p = {1, EP_RNN_FORWARD, 0, 0, 0.0f, 0};
    ep_op op = mkop(EP_OP_LSTM, &p, in, 5, out, 3, scr, sizeof scr);
    CHECK(run("lstm", ep_shape_lstm, ep_ref_lstm_f32, &op) == EP_OK, "lstm rc");
    const double i = sg(0.5 + 0.1), o = sg(-0.3 + 0.2), f = sg(0.8 - 0.4), g = tanh(0.2 + 0.6);
    double c = 0, hs[3], cs[3];
    for (int t = 0; t < 3; t++) {
        c = f * c + i * g;
        cs[t] = c;
        hs[t] = o * tanh(c);
    }
    float e[6] = {(float)hs[0], (float)hs[0], (float)hs[1], 0, (float)hs[2], 0};
    CHECK(fall(y, e, 6), "lstm Y (zeros past seq_lens)");
    CHECK(feq(yh[0], (float)hs[2]) && feq(yh[1], (float)hs[0]) && feq(yc[0], (float)cs[2]) && feq(yc[1], (float)cs[0]),
          "lstm Y_h / Y_c at each batch's last step");
    sl[1] = 4;
    CHECK(ep_ref_lstm_f32(&op) == EP_ERR_RUN_INDEX, "lstm seq_lens > T fails the run");
    sl[1] = 1;

    /* GRU, linear_before_reset 0 and 1: bias Wb {z, r, h}, Rb {z, r, h} */
    float gw[6] = {0}, gr[3] = {0}, gb[6] = {0.3f, -0.2f, 0.5f, 0.1f, 0.4f, -0.9f}, gs[5];
    ep_tensor tgw = chk_mk(gw, EP_DTYPE_F32, 3, CHK_DIMS(1, 3, 2));
    ep_tensor tgr = chk_mk(gr, EP_DTYPE_F32, 3, CHK_DIMS(1, 3, 1)), tgb = chk_mk(gb, EP_DTYPE_F32, 2, CHK_DIMS(1, 6));
    ep_tensor *gin[5] = {&tx, &tgw, &tgr, &tgb, &tsl}, *gout[2] = {&ty, &th};
    for (int lbr = 0; lbr < 2; lbr++) {
        ep_rnn_params gp = {1, EP_RNN_REVERSE, 0, lbr, 0.0f, 0};
        ep_op gop = mkop(EP_OP_GRU, &gp, gin, 5, gout, 2, gs, sizeof gs);
        CHECK(run("gru", ep_shape_gru, ep_ref_gru_f32, &gop) == EP_OK, "gru rc");
        const double z = sg(0.3 + 0.1), rr = sg(-0.2 + 0.4);
        /* R is zero: r * (R h + Rbh) = r * Rbh (lbr 1); R (r * h) + Rbh = Rbh (lbr 0) */
        const double hh = tanh(0.5 + (lbr ? rr * -0.9 : -0.9));
        double h = 0, hv[3];
        for (int t = 0; t < 3; t++) hv[t] = h = (1 - z) * hh + z * h;
        /* reverse: batch 0 runs t = 2, 1, 0; batch 1 (length 1) only t = 0 */
        float ge[6] = {(float)hv[2], (float)hv[0], (float)hv[1], 0, (float)hv[0], 0};
        CHECK(fall(y, ge, 6), "gru Y lbr=%d", lbr);
        CHECK(feq(yh[0], (float)hv[2]) && feq(yh[1], (float)hv[0]), "gru Y_h lbr=%d", lbr);
    }
}

/* ================= (b) hostile plans ================= */
static void test_reject(void) {
    float f[64];
    int64_t i64[64];
    uint64_t scr;
    ep_shape s[4];
    ep_tensor x = chk_mk(f, EP_DTYPE_F32, 2, CHK_DIMS(2, 4)), y = chk_mk(f, EP_DTYPE_F32, 2, CHK_DIMS(2, 4));
    ep_tensor xi = chk_mk(i64, EP_DTYPE_I64, 2, CHK_DIMS(2, 4)), bad = chk_mk(f, 99, 1, CHK_DIMS(4));
    ep_tensor neg = chk_mk(f, EP_DTYPE_F32, 1, CHK_DIMS(-1));
    ep_tensor s4 = chk_mk(f, EP_DTYPE_F32, 1, CHK_DIMS(4)), s3 = chk_mk(f, EP_DTYPE_F32, 1, CHK_DIMS(3));
    ep_tensor *in[4] = {&x, &s4, NULL, NULL}, *out[4] = {&y, &y, &y, &y};
#define REJ(fn, params, nin, nout, what)                                                \
    do {                                                                                \
        ep_op o_ = mkop(0, params, in, nin, out, nout, NULL, 0);                          \
        int rc_ = fn(&o_, s, &scr);                                                     \
        CHECK(rc_ <= EP_ERR_PLAN_TRUNCATED && rc_ > EP_ERR_ARENA_TOO_SMALL, "%s: rc %d", what, rc_); \
    } while (0)
    ep_layernorm_params lp = {1, 1e-5f};
    REJ(ep_shape_layernorm, NULL, 2, 1, "layernorm no params");
    REJ(ep_shape_layernorm, &lp, 1, 1, "layernorm arity");
    lp.axis = 2;
    REJ(ep_shape_layernorm, &lp, 2, 1, "layernorm axis");
    lp.axis = 1;
    lp.epsilon = NAN;
    REJ(ep_shape_layernorm, &lp, 2, 1, "layernorm NaN epsilon");
    lp.epsilon = -1.0f;
    REJ(ep_shape_layernorm, &lp, 2, 1, "layernorm negative epsilon");
    lp.epsilon = 1e-5f;
    in[1] = &s3;
    REJ(ep_shape_layernorm, &lp, 2, 1, "layernorm scale size");
    in[1] = NULL;
    REJ(ep_shape_layernorm, &lp, 2, 1, "layernorm missing scale");
    in[1] = &bad;
    REJ(ep_shape_layernorm, &lp, 2, 1, "layernorm bad dtype");
    in[1] = &neg;
    REJ(ep_shape_layernorm, &lp, 2, 1, "layernorm negative dim");
    in[1] = &s4;
    in[0] = &xi;
    REJ(ep_shape_layernorm, &lp, 2, 1, "layernorm int input");
    in[0] = &x;

    ep_where_params wp = {0, 0};
    in[1] = &x;
    in[2] = &x;
    REJ(ep_shape_where, &wp, 3, 1, "where non-bool condition");
    REJ(ep_shape_where, &wp, 2, 1, "where arity");
    ep_compare_params cp = {EP_CMP_AND, 0};
    REJ(ep_shape_compare, &cp, 2, 1, "compare AND on f32");
    cp.kind = 8;
    REJ(ep_shape_compare, &cp, 2, 1, "compare kind");
    cp.kind = EP_CMP_LESS;
    in[1] = &xi;
    REJ(ep_shape_compare, &cp, 2, 1, "compare mixed dtypes");
    in[1] = &s3;
    REJ(ep_shape_compare, &cp, 2, 1, "compare no broadcast");
    ep_tensor big = chk_mk(f, EP_DTYPE_F32, 2, CHK_DIMS(3, 1));
    out[0] = &big;
    in[1] = &x;
    REJ(ep_shape_expand, &wp, 1, 1, "expand to a smaller shape");
    out[0] = &y;
    ep_cast_params castp = {17, 0};   /* FLOAT8E4M3FN: no plan dtype */
    REJ(ep_shape_cast, &castp, 1, 1, "cast to float8");
    castp.to = 1000;
    REJ(ep_shape_cast, &castp, 1, 1, "cast to 1000");
    castp.to = -1;
    REJ(ep_shape_cast, &castp, 1, 1, "cast to -1");

    /* ARGMAX and TOPK: one bad field each (TOPK also with one output) */
    static const struct { ep_argmax_params p; const char *what; } bad_argmax[] = {
        {{2, 1, 0, 0}, "argmax axis"}, {{-1, 1, 0, 0}, "argmax negative axis"}, {{0, 2, 0, 0}, "argmax keepdims 2"},
        {{0, 1, 0, 5}, "argmax min 5"}};
    for (size_t k = 0; k < sizeof bad_argmax / sizeof bad_argmax[0]; k++)
        REJ(ep_shape_argmax, &bad_argmax[k].p, 1, 1, bad_argmax[k].what);
    static const struct { ep_topk_params p; int n_out; const char *what; } bad_topk[] = {
        {{1, 5, 1, 1}, 2, "topk k > dim"}, {{1, -1, 1, 1}, 2, "topk k < 0"}, {{1, 2, 1, 1}, 1, "topk one output"},
        {{1, 2, 7, 1}, 2, "topk largest 7"}};
    for (size_t k = 0; k < sizeof bad_topk / sizeof bad_topk[0]; k++)
        REJ(ep_shape_topk, &bad_topk[k].p, 1, bad_topk[k].n_out, bad_topk[k].what);
    ep_cumsum_params csp = {3, 0, 0, 0};
    REJ(ep_shape_cumsum, &csp, 1, 1, "cumsum axis");
    csp.axis = 0;
    csp.reverse = -1;
    REJ(ep_shape_cumsum, &csp, 1, 1, "cumsum reverse -1");
    csp.reverse = 0;
    csp.prod = 2;
    REJ(ep_shape_cumsum, &csp, 1, 1, "cumsum prod 2");
    ep_trilu_params trp = {2, 0, 0};
    REJ(ep_shape_trilu, &trp, 1, 1, "trilu upper 2");
    trp.upper = 1;
    in[0] = &s4;
    REJ(ep_shape_trilu, &trp, 1, 1, "trilu rank 1");
    in[0] = &x;

    /* SCATTERND / GATHERND */
    int64_t idx[4] = {0};
    ep_tensor ind = chk_mk(idx, EP_DTYPE_I64, 2, CHK_DIMS(1, 3)), indf = chk_mk(f, EP_DTYPE_F32, 2, CHK_DIMS(1, 1));
    ep_tensor *nin[3] = {&x, &ind, &s4}, *nout[1] = {&y};
    ep_scatternd_params sp = {EP_SCATTER_NONE, 0};
    ep_gathernd_params gp = {0, 0};
    ep_op so = mkop(0, &sp, nin, 3, nout, 1, NULL, 0), go = mkop(0, &gp, nin, 2, nout, 1, NULL, 0);
    CHECK(ep_shape_scatternd(&so, s, &scr) < 0, "scatternd q > rank");
    CHECK(ep_shape_gathernd(&go, s, &scr) < 0, "gathernd q > rank");
    nin[1] = &indf;
    CHECK(ep_shape_scatternd(&so, s, &scr) < 0, "scatternd float indices");
    ind = chk_mk(idx, EP_DTYPE_I64, 2, CHK_DIMS(1, 1));
    nin[1] = &ind;
    sp.reduction = 9;
    CHECK(ep_shape_scatternd(&so, s, &scr) < 0, "scatternd reduction 9");
    sp.reduction = EP_SCATTER_NONE;
    nin[2] = &s3;
    CHECK(ep_shape_scatternd(&so, s, &scr) < 0, "scatternd updates shape");
    ep_tensor u14 = chk_mk(f, EP_DTYPE_F32, 2, CHK_DIMS(1, 4));
    nin[2] = &u14;
    CHECK(ep_shape_scatternd(&so, s, &scr) == EP_OK, "scatternd accepts [1,4] updates of [2,4] data");
    gp.batch_dims = 2;
    CHECK(ep_shape_gathernd(&go, s, &scr) < 0, "gathernd batch_dims");
    gp.batch_dims = -1;
    CHECK(ep_shape_gathernd(&go, s, &scr) < 0, "gathernd negative batch_dims");

    /* LSTM / GRU */
    float w[64];
    ep_tensor X = chk_mk(f, EP_DTYPE_F32, 3, CHK_DIMS(2, 1, 2)), W = chk_mk(w, EP_DTYPE_F32, 3, CHK_DIMS(1, 8, 2));
    ep_tensor R = chk_mk(w, EP_DTYPE_F32, 3, CHK_DIMS(1, 8, 2));
    ep_tensor B = chk_mk(w, EP_DTYPE_F32, 2, CHK_DIMS(1, 16)), Y = chk_mk(f, EP_DTYPE_F32, 4, CHK_DIMS(2, 1, 1, 2));
    ep_tensor H = chk_mk(f, EP_DTYPE_F32, 3, CHK_DIMS(1, 1, 2));
    ep_tensor SLf = chk_mk(f, EP_DTYPE_F32, 1, CHK_DIMS(1));
    ep_tensor *rin[8] = {&X, &W, &R, &B, NULL, NULL, NULL, NULL}, *rout[3] = {&Y, &H, &H};
    ep_rnn_params rp = {2, EP_RNN_FORWARD, 0, 0, 0.0f, 0};
    ep_op ro = mkop(0, &rp, rin, 4, rout, 3, NULL, 0);
    CHECK(ep_shape_lstm(&ro, s, &scr) == EP_OK && scr == 6 * 2 * sizeof(float), "lstm accepts the valid case");
    /* one bad field each: hidden 0 and != weights, direction 3, bidirectional with D=1 weights, layout 2, NaN and
     * negative clip, linear_before_reset on LSTM */
    static const struct { ep_rnn_params p; const char *what; } bad_rnn[] = {
        {{0, EP_RNN_FORWARD, 0, 0, 0.0f, 0}, "lstm hidden 0"}, {{3, EP_RNN_FORWARD, 0, 0, 0.0f, 0}, "lstm hidden != weights"},
        {{2, 3, 0, 0, 0.0f, 0}, "lstm direction 3"}, {{2, EP_RNN_BIDIRECTIONAL, 0, 0, 0.0f, 0}, "lstm bidirectional"},
        {{2, EP_RNN_FORWARD, 2, 0, 0.0f, 0}, "lstm layout 2"}, {{2, EP_RNN_FORWARD, 0, 0, NAN, 0}, "lstm NaN clip"},
        {{2, EP_RNN_FORWARD, 0, 0, -1.0f, 0}, "lstm negative clip"},
        {{2, EP_RNN_FORWARD, 0, 1, 0.0f, 0}, "lstm linear_before_reset"}};
    for (size_t k = 0; k < sizeof bad_rnn / sizeof bad_rnn[0]; k++) {
        rp = bad_rnn[k].p;
        CHECK(ep_shape_lstm(&ro, s, &scr) < 0, "%s", bad_rnn[k].what);
    }
    rp = (ep_rnn_params){2, EP_RNN_FORWARD, 0, 0, 0.0f, 0};
    rin[3] = NULL;
    CHECK(ep_shape_lstm(&ro, s, &scr) < 0, "lstm missing bias");
    rin[3] = &B;
    rin[4] = &SLf;
    ro.n_in = 5;
    CHECK(ep_shape_lstm(&ro, s, &scr) < 0, "lstm float seq_lens");
    ro.n_in = 4;
    ro.n_out = 2;
    CHECK(ep_shape_lstm(&ro, s, &scr) < 0, "lstm two outputs");
    ro.n_out = 3;
    rout[2] = NULL;
    CHECK(ep_shape_lstm(&ro, s, &scr) < 0, "lstm NULL output");
    ro.n_out = 2;
    CHECK(ep_shape_gru(&ro, s, &scr) < 0, "gru with LSTM-sized weights");
}

/* ================= (c) random params and shapes ================= */
static const uint8_t DTYPES[] = {EP_DTYPE_F32, EP_DTYPE_I32, EP_DTYPE_I64, EP_DTYPE_BOOL, EP_DTYPE_U8, EP_DTYPE_I8,
                                 EP_DTYPE_I16, EP_DTYPE_F16};

static void rand_tensor(ep_tensor *t, int max_rank) {
    memset(t, 0, sizeof *t);
    t->rank = (uint8_t)chk_int(0, max_rank);
    t->dtype = chk_rnd() % 8 ? DTYPES[chk_rnd() % 8] : (uint8_t)(chk_rnd() % 20);
    for (int i = 0; i < t->rank; i++) t->dims[i] = chk_rnd() % 16 ? chk_int(0, 4) : chk_int(-2, 40);
}

static void *alloc_for(ep_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->dims[i];
    size_t bytes = (size_t)n * ep_dtype_size(t->dtype);
    t->nbytes = bytes;
    uint8_t *p = malloc(bytes ? bytes : 1);
    for (size_t i = 0; i < bytes; i++) p[i] = (uint8_t)(chk_rnd() % 7 == 0 ? chk_rnd() : chk_rnd() % 3);
    t->data = p;
    return p;
}

typedef struct fz_op {
    uint16_t opcode;
    ep_shape_fn shape;
    ep_kernel_fn kern;
    int min_in, max_in, min_out, max_out;
} fz_op;

/* opcode, shape function, reference kernel, arity (as in runtime_c/ops.def) */
static const fz_op FZ[] = {
    {EP_OP_LAYERNORM, ep_shape_layernorm, ep_ref_layernorm_f32, 2, 3, 1, 3},
    {EP_OP_WHERE, ep_shape_where, ep_ref_where_any, 3, 3, 1, 1},
    {EP_OP_COMPARE, ep_shape_compare, ep_ref_compare_any, 2, 2, 1, 1},
    {EP_OP_EXPAND, ep_shape_expand, ep_ref_expand_any, 1, 1, 1, 1},
    {EP_OP_CAST, ep_shape_cast, ep_ref_cast_any, 1, 1, 1, 1},
    {EP_OP_ARGMAX, ep_shape_argmax, ep_ref_argmax_any, 1, 1, 1, 1},
    {EP_OP_TOPK, ep_shape_topk, ep_ref_topk_any, 1, 1, 2, 2},
    {EP_OP_CUMSUM, ep_shape_cumsum, ep_ref_cumsum_any, 1, 1, 1, 1},
    {EP_OP_TRILU, ep_shape_trilu, ep_ref_trilu_any, 1, 1, 1, 1},
    {EP_OP_LSTM, ep_shape_lstm, ep_ref_lstm_f32, 4, 8, 3, 3}, {EP_OP_GRU, ep_shape_gru, ep_ref_gru_f32, 4, 6, 2, 2},
    {EP_OP_SCATTERND, ep_shape_scatternd, ep_ref_scatternd_any, 3, 3, 1, 1},
    {EP_OP_GATHERND, ep_shape_gathernd, ep_ref_gathernd_any, 2, 2, 1, 1},
};

/* Small random ints in every param word (valid-looking values most of the time). */
static void rand_params(int32_t *p, int n) {
    for (int i = 0; i < n; i++) {
        switch (chk_rnd() % 8) {
        case 0: p[i] = (int32_t)(chk_rnd() * 257u); break;
        case 1: p[i] = -chk_int(1, 3); break;
        default: p[i] = chk_int(0, 4); break;
        }
    }
}

static void test_fuzz(int iters) {
    int accepted[sizeof FZ / sizeof FZ[0]] = {0};
    for (int it = 0; it < iters; it++) {
        const int k = (int)(chk_rnd() % (sizeof FZ / sizeof FZ[0]));
        const fz_op *f = &FZ[k];
        int32_t params[16];
        rand_params(params, 16);
        if (f->opcode == EP_OP_LAYERNORM && chk_rnd() % 2) ((float *)params)[1] = 1e-5f;
        if ((f->opcode == EP_OP_LSTM || f->opcode == EP_OP_GRU) && chk_rnd() % 2) params[4] = 0;
        ep_tensor ins[8], outs[3], *pin[8], *pout[3];
        const int n_in = chk_int(f->min_in - (chk_rnd() % 16 == 0), f->max_in), n_out = chk_int(f->min_out, f->max_out);
        /* structured inputs most of the time: the RNN and ND ops need related shapes to get through */
        for (int i = 0; i < 8; i++) {
            rand_tensor(&ins[i], 4);
            pin[i] = i < n_in && (i < f->min_in || chk_rnd() % 3) ? &ins[i] : NULL;
        }
        if ((f->opcode == EP_OP_LSTM || f->opcode == EP_OP_GRU) && chk_rnd() % 2) {
            params[1] = chk_int(0, 2);
            params[2] = chk_int(0, 1);
            params[3] = f->opcode == EP_OP_GRU ? chk_int(0, 1) : 0;
            const int G = f->opcode == EP_OP_LSTM ? 4 : 3, H = params[0] = chk_int(1, 3), D = params[1] == 2 ? 2 : 1;
            const int T = chk_int(0, 3), B = chk_int(0, 3), I = chk_int(0, 3);
            ins[0] = chk_mk(NULL, EP_DTYPE_F32, 3, params[2] == 1 ? CHK_DIMS(B, T, I) : CHK_DIMS(T, B, I));
            ins[1] = chk_mk(NULL, EP_DTYPE_F32, 3, CHK_DIMS(D, G * H, I));
            ins[2] = chk_mk(NULL, EP_DTYPE_F32, 3, CHK_DIMS(D, G * H, H));
            ins[3] = chk_mk(NULL, EP_DTYPE_F32, 2, CHK_DIMS(D, 2 * G * H));
            ins[4] = chk_mk(NULL, chk_rnd() % 2 ? EP_DTYPE_I32 : EP_DTYPE_I64, 1, CHK_DIMS(B));
            ins[5] = chk_mk(NULL, EP_DTYPE_F32, 3, params[2] == 1 ? CHK_DIMS(B, D, H) : CHK_DIMS(D, B, H));
            ins[6] = ins[5];
            ins[7] = chk_mk(NULL, EP_DTYPE_F32, 2, CHK_DIMS(D, 3 * H));
        }
        if ((f->opcode == EP_OP_SCATTERND || f->opcode == EP_OP_GATHERND) && chk_rnd() % 2) {
            ins[1].dtype = EP_DTYPE_I64;
            if (ins[1].rank == 0) ins[1].rank = 1;
            ins[1].dims[ins[1].rank - 1] = chk_int(1, 2);
        }
        if (f->opcode != EP_OP_LSTM && f->opcode != EP_OP_GRU && chk_rnd() % 2) { /* structured: related shapes, plausible dtypes and params */
            const uint8_t arith[3] = {EP_DTYPE_F32, EP_DTYPE_I32, EP_DTYPE_I64};
            ep_tensor *x = &ins[0];
            if (x->rank == 0 && chk_rnd() % 4) x->rank = 1;
            for (int i = 0; i < x->rank; i++) x->dims[i] = chk_int(1, 4);
            const int ax = x->rank ? (int)(chk_rnd() % x->rank) : 0;
            switch (f->opcode) {
            case EP_OP_LAYERNORM: {
                int32_t inner = 1;
                x->dtype = EP_DTYPE_F32;
                params[0] = ax;
                ((float *)params)[1] = 1e-3f;
                for (int i = ax; i < x->rank; i++) inner *= x->dims[i];
                ins[1] = ins[2] = chk_mk(NULL, EP_DTYPE_F32, 1, &inner);
                break;
            }
            case EP_OP_WHERE:
                ins[0].dtype = EP_DTYPE_BOOL;
                ins[1] = ins[2] = *x;
                ins[1].dtype = ins[2].dtype = DTYPES[chk_rnd() % 7];
                if (chk_rnd() % 2) ins[2].rank = 1, ins[2].dims[0] = x->rank ? x->dims[x->rank - 1] : 1;
                break;
            case EP_OP_ARGMAX: case EP_OP_TOPK: case EP_OP_CUMSUM:
                x->dtype = arith[chk_rnd() % 3];
                params[0] = ax;
                params[1] = chk_int(0, x->rank ? x->dims[ax] : 1);
                break;
            case EP_OP_SCATTERND: {
                const int q = x->rank ? chk_int(1, x->rank) : 1, n = chk_int(0, 3);
                x->dtype = arith[chk_rnd() % 3];
                params[0] = chk_int(0, 4);
                ins[1] = chk_mk(NULL, EP_DTYPE_I64, 2, CHK_DIMS(n, q));
                ins[2] = chk_mk(NULL, x->dtype, 1, &n);
                for (int i = q; i < x->rank; i++) ins[2].dims[ins[2].rank++] = x->dims[i];
                break;
            }
            default: break;
            }
        }
        for (int i = 0; i < n_out; i++) {
            rand_tensor(&outs[i], 4);
            pout[i] = &outs[i];
        }
        if (f->opcode == EP_OP_EXPAND && chk_rnd() % 2) outs[0] = ins[0], outs[0].data = NULL;
        ep_op op = mkop(f->opcode, params, pin, n_in, pout, n_out, NULL, 0);
        ep_shape s[4];
        uint64_t scratch = 0;
        if (f->shape(&op, s, &scratch) != EP_OK) continue;
        accepted[k]++;
        /* bind like the executor: outputs take the validated shapes, buffers of exactly those sizes */
        void *mem[16];
        int nm = 0;
        for (int i = 0; i < n_in; i++)
            if (pin[i]) mem[nm++] = alloc_for(pin[i]);
        for (int i = 0; i < n_out; i++) {
            outs[i] = chk_mk(NULL, s[i].dtype, s[i].rank, s[i].dims);
            mem[nm++] = alloc_for(&outs[i]);
        }
        op.scratch = scratch ? malloc(scratch) : NULL;
        op.scratch_size = scratch;
        const int rc = f->kern(&op);
        CHECK(rc == EP_OK || rc == EP_ERR_RUN_INDEX, "fuzz op %u: kernel rc %d", f->opcode, rc);
        free(op.scratch);
        for (int i = 0; i < nm; i++) free(mem[i]);
    }
    for (size_t k = 0; k < sizeof FZ / sizeof FZ[0]; k++)
        if (getenv("EP_FUZZ_VERBOSE")) printf("op %u accepted %d\n", FZ[k].opcode, accepted[k]);
    for (size_t k = 0; k < sizeof FZ / sizeof FZ[0]; k++)
        CHECK(accepted[k] > 0, "fuzz: op %u never accepted (the fuzz reaches no kernel)", FZ[k].opcode);
}

int main(void) {
    known_layernorm();
    known_where_compare_expand();
    known_cast();
    known_index_ops();
    known_rnn();
    test_reject();
    test_fuzz(60000);
    printf("test_ref_speech: %d passed, %d failed\n", chk_n_pass, chk_n_fail);
    return chk_n_fail == 0 ? 0 : 1;
}
