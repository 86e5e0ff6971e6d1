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
 * The including file defines RNN_FN(name) (exports RNN_FN(lstm_f32), RNN_FN(gru_f32)) and
 *   static void rnn_nt(int64_t M, int64_t N, int64_t K, const float *x, int64_t ldx, const float *w,
 *                      int64_t ldw, const float *bias, const float *add, float *y, int64_t ldy);
 *       y[i*ldy + j] = (dot(x + i*ldx, w + j*ldw over K) + bias[j]) + (add ? add[i*ldy + j] : 0),
 *       i < M, j < N; add may equal y (each element is read before it is written);
 *   static void rnn_lstm_cell(int64_t H, const float *g, const float *P, float *c, float *h, float clip);
 *       g: the 4H pre-activations i, o, f, c; P: NULL or the 3H peepholes; c, h updated in place;
 *   static void rnn_sigmoid_clip(float *g, int64_t n, float clip);            g = sigmoid(clip(g));
 *   static void rnn_gru_cell(int64_t H, const float *z, const float *r, const float *xh, const float *rec,
 *                            float *h, float clip);
 *       h = (1 - z) tanh(clip(xh + (rec ? r * rec : 0))) + z h (rec NULL: xh is the whole pre-activation). */
#include <string.h>
#include "ep_ops.h"
#include "rnn_geo.h"


static int rnn_run(const ep_op *op, const int G, const int lstm) {
    const ep_rnn_params *p = (const ep_rnn_params *)op->params;
    rnn_io io;
    if (rnn_bind(op, lstm, &io) != EP_OK) return EP_ERR_RUN_INDEX;
    const rnn_geo g = io.g;
    const ep_tensor *sl = io.sl, *h0 = io.h0, *c0 = io.c0, *pp = io.pp;
    const float *X = io.X;
    float *Y = io.Y, *Yh = io.Yh, *Yc = io.Yc;
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
        const float *P = pp ? (const float *)pp->data + d * 3 * H : NULL;
        for (int64_t b = 0; b < g.B; b++) {
            rnn_seq_len(sl, b, g.T, &len);
            if (h0) memcpy(h, (const float *)h0->data + rnn_s_off(&g, d, b), (size_t)H * sizeof(float));
            else memset(h, 0, (size_t)H * sizeof(float));
            if (c0) memcpy(c, (const float *)c0->data + rnn_s_off(&g, d, b), (size_t)H * sizeof(float));
            else memset(c, 0, (size_t)H * sizeof(float));
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
                    memcpy(Y + rnn_y_off(&g, t, d, b), h, (size_t)H * sizeof(float));
                }
                s0 += ns;
            }
            for (int64_t t = len; t < g.T; t++) memset(Y + rnn_y_off(&g, t, d, b), 0, (size_t)H * sizeof(float));
            if (len == 0) { /* no valid step: zero final state, as onnxruntime */
                memset(h, 0, (size_t)H * sizeof(float));
                memset(c, 0, (size_t)H * sizeof(float));
            }
            memcpy(Yh + rnn_s_off(&g, d, b), h, (size_t)H * sizeof(float));
            if (Yc) memcpy(Yc + rnn_s_off(&g, d, b), c, (size_t)H * sizeof(float));
        }
    }
    return EP_OK;
}

int RNN_FN(lstm_f32)(const ep_op *op) { return rnn_run(op, 4, 1); }
int RNN_FN(gru_f32)(const ep_op *op) { return rnn_run(op, 3, 0); }
