/* Kernel checks of SOFTMAX / LOGSOFTMAX, REDUCE, LAYERNORM, LSTM and GRU (families softmax_reduce, sequence, rnn):
 * every table's kernel against the reference (tests/c/ep_check.h) on seeded random shapes (ranks 1..4, any
 * axis, rows up to 300: tails of every vector width, extents 0 and 1), on 1 and 3 threads, in place where the
 * op allows it (SOFTMAX).
 * REDUCE MAX / MIN (the vector kernels' runs) is held bit for bit, signed zeros included.
 * Tolerances, per op:
 *   SOFTMAX: |got - ref| <= 2e-6 |ref| + 1e-37 (a vector exp polynomial vs expf, as the vector SIGMOID: ~17 ulp;
 *     the floor covers outputs subnormal in one and clamped to exp(-86) in the other); LOGSOFTMAX:
 *     2e-6 (|ref| + 1) (the log of the sum adds its rounding to every output). Inputs up to +-60 (exps that
 *     underflow), NaN and +-inf.
 *   LAYERNORM: 1e-6 |ref| + 1e-7 on Y, Mean and InvStdDev (only the order of the double sums differs); inputs
 *     include a large mean over a small spread, where float statistics would lose it.
 *   LSTM / GRU: 1e-5 max|ref| + 4e-7 (I + H) sqrt(T) + 1e-6, one scale over all outputs (float FMA dots against
 *     the reference's double dots, vector sigmoid / tanh; the error of a step is damped, not amplified, by the
 *     gates), with the minimum scratch (per-step projection) and with room for 1, some and all T projected
 *     steps; a sequence length past T fails every kernel with EP_ERR_RUN_INDEX. */
#define EP_CHECK_KERNELS
#include "ep_check.h"

/* ---------------- SOFTMAX ---------------- */
static void softmax_gen(int iter, int small) {
    ep_softmax_params p = {0, (int)(chk_rnd() & 1)};
    const int r = chk_int(1, 4);
    int32_t d[4];
    for (int i = 0; i < r; i++)
        d[i] = chk_int(1, i == r - 1 ? (iter % 3 == 0 ? (small ? 150 : 300) : (small ? 37 : 40)) : (small ? 7 : 9));
    if (iter % 23 == 0) d[chk_int(0, r - 1)] = 0;
    p.axis = (small ? iter % 2 : iter % 2 == 0) ? r - 1 : chk_int(0, r - 1);
    ep_tensor x = chk_tensor_rand(r, d, iter % 5 == 0 ? 60.0f : 4.0f);   /* wide: exps that underflow */
    float *f = (float *)x.data;
    const uint32_t n = (uint32_t)(chk_bytes(&x) / 4);
    if (n && iter % 7 == 0) f[chk_rnd() % n] = NAN;
    if (n && iter % 11 == 0) f[chk_rnd() % n] = iter % 2 ? INFINITY : -INFINITY;
    char what[96];
    snprintf(what, sizeof what, "%s axis %d [%d,%d,%d,%d](r%d)", p.log ? "logsoftmax" : "softmax", p.axis, d[0],
             r > 1 ? d[1] : 0, r > 2 ? d[2] : 0, r > 3 ? d[3] : 0, r);
    chk_case c = {.what = what, .opcode = EP_OP_SOFTMAX, .params = &p, .in = {&x}, .n_in = 1, .n_out = 1,
                  .tol = p.log ? (chk_tol){.rel = 2e-6, .abs = 2e-6} : (chk_tol){.rel = 2e-6, .abs = 1e-37}};
    chk_kernels(&c);
    CHECK(c.scratch == 0, "%s: scratch %llu", what, (unsigned long long)c.scratch);
    chk_free(x.data);
}
static void gen_softmax(int iter) { softmax_gen(iter, 0); }
static void gen_softmax_small(int iter) { softmax_gen(iter, 1); }

/* ---------------- REDUCE (MAX / MIN) ---------------- */
/* The vector kernels take MAX and MIN over contiguous runs and hand the rest to the reference: every kind,
 * random axes (suffixes and not), runs up to 700, many zeros of both signs (the first of equal values must be
 * kept), NaN and +-inf. Bit for bit. */
static void gen_reduce(int iter) {
    static const int kinds[] = {EP_REDUCE_MAX, EP_REDUCE_MIN, EP_REDUCE_MAX, EP_REDUCE_MIN, EP_REDUCE_SUM, EP_REDUCE_MEAN};
    ep_reduce_params p = {kinds[iter % 6], 0, 1, 0};
    const int r = chk_int(1, 4);
    int32_t d[4], yd[4];
    for (int i = 0; i < r; i++) d[i] = chk_int(1, i == r - 1 ? (iter % 3 == 0 ? 700 : 40) : 9);
    if (iter % 29 == 0) d[chk_int(0, r - 1)] = 0;
    const int from = chk_int(0, r - 1);
    for (int i = 0; i < r; i++)
        if (iter % 4 == 0 ? chk_int(0, 1) : i >= from) p.axes_mask |= 1u << i;
    for (int i = 0; i < r; i++) yd[i] = (p.axes_mask >> i) & 1u ? 1 : d[i];
    ep_tensor x = chk_tensor_rand(r, d, 3.0f);
    float *f = (float *)x.data;
    const uint32_t n = (uint32_t)(chk_bytes(&x) / 4);
    for (uint32_t i = 0; i < n; i++) {
        if (iter % 2) continue;   /* else a zero maximum (minimum) of mixed signs: zeros and values below (above) */
        const uint32_t u = chk_rnd() % 4;
        f[i] = u == 0 ? 0.0f : u == 1 ? -0.0f : p.kind == EP_REDUCE_MIN ? fabsf(f[i]) : -fabsf(f[i]);
    }
    if (n && iter % 7 == 0) f[chk_rnd() % n] = NAN;
    if (n && iter % 11 == 0) f[chk_rnd() % n] = iter % 2 ? INFINITY : -INFINITY;
    char what[96];
    snprintf(what, sizeof what, "reduce kind %d mask %#x [%d,%d,%d,%d](r%d)", p.kind, p.axes_mask, d[0],
             r > 1 ? d[1] : 0, r > 2 ? d[2] : 0, r > 3 ? d[3] : 0, r);
    chk_case c = {.what = what, .opcode = EP_OP_REDUCE, .params = &p, .in = {&x}, .n_in = 1, .n_out = 1,
                  .tol = CHK_EXACT};
    c.out[0] = chk_mk(NULL, EP_DTYPE_F32, r, yd);
    chk_kernels(&c);
    chk_free(x.data);
}

/* ---------------- LAYERNORM ---------------- */
static void layernorm_gen(int iter, int small) {
    ep_layernorm_params p = {0, iter % 3 == 0 ? 0.0f : 1e-5f};
    const int r = chk_int(1, 4);
    int32_t d[4];
    for (int i = 0; i < r; i++)
        d[i] = chk_int(1, i == r - 1 ? (iter % 3 == 0 ? (small ? 150 : 300) : (small ? 37 : 40)) : (small ? 6 : 7));
    if (iter % 29 == 0) d[0] = 0;
    p.axis = chk_int(0, r - 1);
    int32_t inner = 1;
    for (int i = p.axis; i < r; i++) inner *= d[i];
    ep_tensor x = chk_tensor_rand(r, d, small ? 1.0f : 2.0f);
    if (iter % 4 == 1)   /* a large mean over a small spread */
        for (size_t i = 0; i < chk_bytes(&x) / 4; i++) ((float *)x.data)[i] = 1000.0f + 0.01f * ((float *)x.data)[i];
    ep_tensor sc = chk_tensor_rand(1, &inner, 1.0f), bi = chk_tensor_rand(1, &inner, 1.0f);
    const int has_b = chk_rnd() % 3 != 0, n_out = chk_int(1, 3);
    char what[128];
    snprintf(what, sizeof what, "layernorm axis %d [%d,%d,%d,%d](r%d) bias %d outs %d eps %g", p.axis, d[0],
             r > 1 ? d[1] : 0, r > 2 ? d[2] : 0, r > 3 ? d[3] : 0, r, has_b, n_out, p.epsilon);
    chk_case c = {.what = what, .opcode = EP_OP_LAYERNORM, .params = &p, .in = {&x, &sc, has_b ? &bi : NULL},
                  .n_in = 3, .n_out = n_out, .tol = {.rel = 1e-6, .abs = 1e-7}};
    chk_kernels(&c);
    chk_free(x.data), chk_free(sc.data), chk_free(bi.data);
}
static void gen_layernorm(int iter) { layernorm_gen(iter, 0); }
static void gen_layernorm_small(int iter) { layernorm_gen(iter, 1); }

/* ---------------- LSTM / GRU ---------------- */
static void rnn_gen(int iter, int lstm, int small) {
    const int G = lstm ? 4 : 3;
    ep_rnn_params p;
    memset(&p, 0, sizeof p);
    p.hidden_size = chk_int(1, iter % 4 == 0 ? (small ? 40 : 70) : (small ? 13 : 20));
    p.direction = chk_int(0, 2);
    p.layout = (int)(chk_rnd() & 1);
    p.linear_before_reset = lstm ? 0 : (int)(chk_rnd() & 1);
    p.clip = iter % 5 == 0 ? 0.8f : 0.0f;
    const int T = chk_int(1, small ? 9 : 12), B = chk_int(1, 3), I = chk_int(1, iter % 3 == 0 ? (small ? 40 : 50) : (small ? 11 : 17));
    const int H = p.hidden_size, D = p.direction == EP_RNN_BIDIRECTIONAL ? 2 : 1, GH = G * H;
    const float ws = 1.0f / sqrtf((float)H);   /* torch's init scale */
    ep_tensor x = chk_tensor_rand(3, CHK_DIMS(p.layout ? B : T, p.layout ? T : B, I), 1.0f);
    ep_tensor w = chk_tensor_rand(3, CHK_DIMS(D, GH, I), ws), rr = chk_tensor_rand(3, CHK_DIMS(D, GH, H), ws);
    ep_tensor b = chk_tensor_rand(2, CHK_DIMS(D, 2 * GH), ws), pp = chk_tensor_rand(2, CHK_DIMS(D, 3 * H), ws);
    const int32_t sd[3] = {p.layout ? B : D, p.layout ? D : B, H};
    ep_tensor h0 = chk_tensor_rand(3, sd, 1.0f), c0 = chk_tensor_rand(3, sd, 1.0f);
    ep_tensor sl = chk_mk(NULL, EP_DTYPE_I32, 1, CHK_DIMS(B));
    int32_t *len = chk_alloc(chk_bytes(&sl));
    sl.data = len;
    for (int i = 0; i < B; i++) len[i] = chk_rnd() % 3 ? T : chk_int(0, T);
    const int has_sl = chk_rnd() & 1, has_h0 = chk_rnd() & 1, has_c0 = lstm && (chk_rnd() & 1), has_p = lstm && (chk_rnd() & 1);
    char what[160];
    snprintf(what, sizeof what, "%s T%d B%d I%d H%d dir%d layout%d lbr%d clip%g sl%d h0%d c0%d P%d", lstm ? "lstm" : "gru",
             T, B, I, H, p.direction, p.layout, p.linear_before_reset, p.clip, has_sl, has_h0, has_c0, has_p);
    chk_case c = {.what = what, .opcode = (uint16_t)(lstm ? EP_OP_LSTM : EP_OP_GRU), .params = &p,
                  .in = {&x, &w, &rr, &b, has_sl ? &sl : NULL, has_h0 ? &h0 : NULL, has_c0 ? &c0 : NULL, has_p ? &pp : NULL},
                  .n_in = lstm ? 8 : 6, .n_out = lstm ? 3 : 2,
                  .tol = {.max_rel = 1e-5, .abs = 4e-7 * (I + H) * sqrt((double)T) + 1e-6}, .max_rel_all = 1};
    /* scratch beyond the minimum: one projected step, a partial chunk, all T steps (+ a ragged 12 bytes) */
    if (small) {
        if (iter % 3) c.extra[c.n_extra++] = (uint64_t)GH * 4 * (uint64_t)chk_int(1, T) + (uint64_t)chk_int(0, 3) * 4;
    } else {
        c.extra[0] = (uint64_t)GH * 4, c.extra[1] = (uint64_t)GH * 4 * (uint64_t)chk_int(1, T);
        c.extra[2] = (uint64_t)GH * 4 * (uint64_t)T + 12, c.n_extra = 3;
    }
    chk_kernels(&c);
    CHECK(c.scratch == (uint64_t)(2 + G) * H * 4, "%s: scratch %llu", what, (unsigned long long)c.scratch);
    if (has_sl) {   /* a bad sequence length fails the run before anything is written */
        len[B - 1] = T + 1;
        c.want_rc = EP_ERR_RUN_INDEX, c.n_extra = 0;
        chk_kernels(&c);
    }
    chk_free(x.data), chk_free(w.data), chk_free(rr.data), chk_free(b.data), chk_free(pp.data);
    chk_free(h0.data), chk_free(c0.data), chk_free(len);
}
static void gen_lstm(int iter) { rnn_gen(iter, 1, 0); }
static void gen_gru(int iter) { rnn_gen(iter, 0, 0); }
static void gen_lstm_small(int iter) { rnn_gen(iter, 1, 1); }
static void gen_gru_small(int iter) { rnn_gen(iter, 0, 1); }

static const chk_gen GENS[] = {{"softmax", gen_softmax, 300}, {"softmax_small", gen_softmax_small, 60},
    {"reduce", gen_reduce, 300},
    {"layernorm", gen_layernorm, 300}, {"layernorm_small", gen_layernorm_small, 50}, {"lstm", gen_lstm, 300},
    {"gru", gen_gru, 300}, {"lstm_small", gen_lstm_small, 30}, {"gru_small", gen_gru_small, 30}};
int main(int argc, char **argv) { return chk_main(argc, argv, "check_sequence", GENS, CHK_COUNT(GENS)); }
