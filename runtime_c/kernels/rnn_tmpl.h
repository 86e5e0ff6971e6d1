/* LSTM / GRU drivers (semantics of kernels/ref/rnn_f32.c and plan_format.h ep_rnn_params), compiled once
 * per ISA; variant 0, so W, R and B are read in ONNX's layout as the reference reads them.
 *
 * The input projection is hoisted out of the time loop when the plan gives the op more scratch than
 * variant 0's minimum ((2 + G) * H floats: h, c, gates): the rest holds `tc` timesteps of projections,
 * tc = (scratch floats - (2 + G) * H) / (G * H) (the compiler sizes it, passes/select.py). Each chunk of
 * tc steps first computes X_t W^T + Wb for all its timesteps in one blocked pass (rnn_nt, W streamed
 * once per chunk instead of once per step), then runs the steps: R h + Rb (a GEMV), added to the
 * projection, then the gates with the vector sigmoid / tanh. With the minimum scratch (tc = 0) the
 * projection of each step is a GEMV into the gate buffer instead: the same arithmetic, fewer passes.
 * Per step, in float with fused multiply-add: gates = (W x + Wb) + (R h + Rb) (the reference sums
 * ((Wx + Rh) + Wb) + Rb, each dot in double), so results differ from the reference by rounding.
 * GRU: z, r = sigmoid(clip(.)); h~ = tanh(clip((W_h x + Wb_h) + r * (R_h h + Rb_h))) with
 * linear_before_reset, else tanh(clip((W_h x + Wb_h) + (R_h (r * h) + Rb_h))); h = (1 - z) h~ + z h.
 *
 * Exports EP_ISA_FN(lstm_f32) and EP_ISA_FN(gru_f32) (ep_kernel.h); the including file defines
 *   static void rnn_nt(int64_t M, int64_t N, int64_t K, const float *x, int64_t ldx, const float *w,
 *                      int64_t ldw, const float *bias, const float *add, float *y, int64_t ldy);
 *       y[i*ldy + j] = (dot(x + i*ldx, w + j*ldw over K) + bias[j]) + (add ? add[i*ldy + j] : 0),
 *       i < M, j < N; add may equal y (each element is read before it is written);
 * and the vector operations of the cells below (RV_N units per vector; the last n - j < RV_N go through a masked
 * or padded vector):
 *   RV, RV_N; RV_PART(n) declares the partial-vector state of the next min(n, RV_N) units, which RV_LD(p) and
 *   RV_ST(p, v) then load and store; RV_SET1(f), RV_ADD, RV_SUB, RV_MUL (separate, IEEE), RV_SIGMOID(v), RV_TANH(v)
 *   (the ISA's vector sigmoid / tanh), RV_CLIP(v, c) (clip to [-c, c] when c > 0, NaN propagating).
 * The cells compute the reference's expressions in its order, with separate multiplies and adds:
 *   LSTM (g: the 4H pre-activations i, o, f, c; P: NULL or the 3H peepholes; c, h updated in place)
 *     i = sigmoid(clip(g_i + P_i c)), f = sigmoid(clip(g_f + P_f c)), c' = f c + i tanh(clip(g_c)),
 *     h = sigmoid(clip(g_o + P_o c')) tanh(c');
 *   GRU: z, r = sigmoid(clip(.)) in place (rnn_sigmoid_clip); h = (1 - z) tanh(clip(xh + (rec ? r * rec : 0))) + z h
 *     (rec NULL: xh is the whole pre-activation). */
#include <string.h>
#include "ep_ops.h"
#include "rnn_geo.h"

static void rnn_lstm_cell(int64_t H, const float *g, const float *P, float *c, float *h, float clip) {
    for (int64_t j = 0; j < H; j += RV_N) {
        RV_PART(H - j);
        const RV cv = RV_LD(c + j);
        RV ip = RV_LD(g + j), fp = RV_LD(g + 2 * H + j), op = RV_LD(g + H + j);
        if (P) {
            ip = RV_ADD(ip, RV_MUL(RV_LD(P + j), cv));
            fp = RV_ADD(fp, RV_MUL(RV_LD(P + 2 * H + j), cv));
        }
        const RV it = RV_SIGMOID(RV_CLIP(ip, clip)), ft = RV_SIGMOID(RV_CLIP(fp, clip));
        const RV ct = RV_TANH(RV_CLIP(RV_LD(g + 3 * H + j), clip));
        const RV cn = RV_ADD(RV_MUL(ft, cv), RV_MUL(it, ct));
        if (P) op = RV_ADD(op, RV_MUL(RV_LD(P + H + j), cn));
        RV_ST(c + j, cn);
        RV_ST(h + j, RV_MUL(RV_SIGMOID(RV_CLIP(op, clip)), RV_TANH(cn)));
    }
}

static void rnn_sigmoid_clip(float *g, int64_t n, float clip) {
    for (int64_t j = 0; j < n; j += RV_N) {
        RV_PART(n - j);
        RV_ST(g + j, RV_SIGMOID(RV_CLIP(RV_LD(g + j), clip)));
    }
}

static void rnn_gru_cell(int64_t H, const float *z, const float *r, const float *xh, const float *rec, float *h,
                         float clip) {
    const RV one = RV_SET1(1.0f);
    for (int64_t j = 0; j < H; j += RV_N) {
        RV_PART(H - j);
        RV hh = RV_LD(xh + j);
        if (rec) hh = RV_ADD(hh, RV_MUL(RV_LD(r + j), RV_LD(rec + j)));
        const RV ht = RV_TANH(RV_CLIP(hh, clip)), zv = RV_LD(z + j);
        RV_ST(h + j, RV_ADD(RV_MUL(RV_SUB(one, zv), ht), RV_MUL(zv, RV_LD(h + j))));
    }
}


static int rnn_run(const ep_op *op, const int G, const int lstm) {
    const ep_rnn_params *p = (const ep_rnn_params *)op->params;
    rnn_io io;
    if (rnn_bind(op, lstm, &io) != EP_OK) return EP_ERR_RUN_INDEX;
    const rnn_geo g = io.g;
    const float *X = io.X;
    int64_t len = 0;
    const int64_t H = g.H, GH = G * H, I = g.I, xs = g.layout ? g.I : g.B * g.I;   /* xs: X row stride in t */
    const float clip = p->clip;
    float *h = (float *)op->scratch, *c = h + H, *gt = c + H, *proj = gt + GH;
    const uint64_t have = op->scratch_size / sizeof(float), base = (uint64_t)(2 + G) * (uint64_t)H;
    int64_t tc = have > base ? (int64_t)((have - base) / (uint64_t)GH) : 0;   /* projected steps per chunk */
    if (tc > g.T) tc = g.T;
    for (int64_t d = 0; d < g.D; d++) {
        const int rev = p->direction == EP_RNN_REVERSE || d == 1;
        const float *W = (const float *)op->in[1]->data + d * GH * I;
        const float *R = (const float *)op->in[2]->data + d * GH * H;
        const float *Wb = (const float *)op->in[3]->data + d * 2 * GH, *Rb = Wb + GH;
        const float *P = io.pp ? (const float *)io.pp->data + d * 3 * H : NULL;
        for (int64_t b = 0; b < g.B; b++) {
            rnn_seq_len(io.sl, b, g.T, &len);
            rnn_state_begin(&io, d, b, h, c);
            for (int64_t s0 = 0; s0 < len;) {
                const int64_t ns = tc ? (len - s0 < tc ? len - s0 : tc) : 1;
                const int64_t t_lo = rev ? len - s0 - ns : s0;   /* the chunk's timesteps: [t_lo, t_lo + ns) */
                if (tc) rnn_nt(ns, GH, I, X + rnn_x_off(&g, t_lo, b), xs, W, I, Wb, NULL, proj, GH);
                for (int64_t s = s0; s < s0 + ns; s++) {
                    const int64_t t = rev ? len - 1 - s : s;
                    const float *xp = gt;   /* W x_t + Wb */
                    if (tc) xp = proj + (t - t_lo) * GH;
                    else rnn_nt(1, GH, I, X + rnn_x_off(&g, t, b), 0, W, I, Wb, NULL, gt, 0);
                    if (lstm) {
                        rnn_nt(1, GH, H, h, 0, R, H, Rb, xp, gt, 0);
                        rnn_lstm_cell(H, gt, P, c, h, clip);
                    } else {
                        rnn_nt(1, 2 * H, H, h, 0, R, H, Rb, xp, gt, 0);
                        rnn_sigmoid_clip(gt, 2 * H, clip);
                        const float *z = gt, *rg = gt + H;
                        if (p->linear_before_reset) {   /* c (unused by GRU) holds R_h h + Rb_h */
                            rnn_nt(1, H, H, h, 0, R + 2 * H * H, H, Rb + 2 * H, NULL, c, 0);
                            rnn_gru_cell(H, z, rg, xp + 2 * H, c, h, clip);
                        } else {                        /* c holds r * h as in the reference */
                            for (int64_t j = 0; j < H; j++) c[j] = rg[j] * h[j];
                            rnn_nt(1, H, H, c, 0, R + 2 * H * H, H, Rb + 2 * H, xp + 2 * H, gt + 2 * H, 0);
                            rnn_gru_cell(H, z, rg, gt + 2 * H, NULL, h, clip);
                        }
                    }
                    memcpy(io.Y + rnn_y_off(&g, t, d, b), h, (size_t)H * sizeof(float));
                }
                s0 += ns;
            }
            rnn_state_end(&io, d, b, len, h, c);
        }
    }
    return EP_OK;
}

int EP_ISA_FN(lstm_f32)(const ep_op *op) { return rnn_run(op, 4, 1); }
int EP_ISA_FN(gru_f32)(const ep_op *op) { return rnn_run(op, 3, 0); }
