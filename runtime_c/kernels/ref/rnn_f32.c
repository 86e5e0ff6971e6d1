/* LSTM and GRU f32 reference kernels (ONNX equations, default activations; layouts and the
 * sequence_lens semantics in plan_format.h, ep_rnn_params). Each (direction, batch) pair runs
 * its whole sequence with its state in scratch: h [H], c or r*h [H], gates [G*H]. */
#include <math.h>
#include <string.h>
#include "ep_ops.h"
#include "rnn_geo.h"

static inline float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }
static inline float clipv(float x, float c) { return c > 0.0f ? (x < -c ? -c : (x > c ? c : x)) : x; }
static inline float dotf(const float *a, const float *b, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return (float)s;
}


static int rnn_run(const ep_op *op, int G, int lstm) {
    const ep_rnn_params *p = (const ep_rnn_params *)op->params;
    rnn_io io;
    if (rnn_bind(op, lstm, &io) != EP_OK) return EP_ERR_RUN_INDEX;
    const rnn_geo g = io.g;
    const float *X = io.X;
    int64_t len = 0;
    const int64_t H = g.H, GH = G * H;
    float *h = (float *)op->scratch, *c = h + H, *gt = c + H;
    for (int64_t d = 0; d < g.D; d++) {
        const int rev = p->direction == EP_RNN_REVERSE || d == 1;
        const float *W = (const float *)op->in[1]->data + d * GH * g.I;
        const float *R = (const float *)op->in[2]->data + d * GH * H;
        const float *Wb = (const float *)op->in[3]->data + d * 2 * GH, *Rb = Wb + GH;
        const float *P = io.pp ? (const float *)io.pp->data + d * 3 * H : NULL;
        for (int64_t b = 0; b < g.B; b++) {
            rnn_seq_len(io.sl, b, g.T, &len);
            rnn_state_begin(&io, d, b, h, c);
            for (int64_t s = 0; s < len; s++) {
                const int64_t t = rev ? len - 1 - s : s;
                const float *xt = X + rnn_x_off(&g, t, b);
                if (lstm) {
                    for (int64_t r = 0; r < GH; r++)
                        gt[r] = dotf(W + r * g.I, xt, g.I) + dotf(R + r * H, h, H) + Wb[r] + Rb[r];
                    for (int64_t j = 0; j < H; j++) {
                        const float ip = gt[j] + (P ? P[j] * c[j] : 0.0f);
                        const float fp = gt[2 * H + j] + (P ? P[2 * H + j] * c[j] : 0.0f);
                        const float it = sigm(clipv(ip, p->clip)), ft = sigm(clipv(fp, p->clip));
                        const float ct = tanhf(clipv(gt[3 * H + j], p->clip));
                        c[j] = ft * c[j] + it * ct;
                        const float op_ = gt[H + j] + (P ? P[H + j] * c[j] : 0.0f);
                        h[j] = sigm(clipv(op_, p->clip)) * tanhf(c[j]);
                    }
                } else {
                    float *rh = c; /* GRU has no cell: c holds r * h */
                    for (int64_t r = 0; r < 2 * H; r++)
                        gt[r] = sigm(clipv(dotf(W + r * g.I, xt, g.I) + dotf(R + r * H, h, H) + Wb[r] + Rb[r], p->clip));
                    const float *z = gt, *rg = gt + H;
                    float *hh = gt + 2 * H;
                    if (p->linear_before_reset) {
                        for (int64_t j = 0; j < H; j++)
                            hh[j] = dotf(W + (2 * H + j) * g.I, xt, g.I) + Wb[2 * H + j] +
                                    rg[j] * (dotf(R + (2 * H + j) * H, h, H) + Rb[2 * H + j]);
                    } else {
                        for (int64_t j = 0; j < H; j++) rh[j] = rg[j] * h[j];
                        for (int64_t j = 0; j < H; j++)
                            hh[j] = dotf(W + (2 * H + j) * g.I, xt, g.I) + Wb[2 * H + j] +
                                    dotf(R + (2 * H + j) * H, rh, H) + Rb[2 * H + j];
                    }
                    for (int64_t j = 0; j < H; j++) {
                        const float ht = tanhf(clipv(hh[j], p->clip));
                        h[j] = (1.0f - z[j]) * ht + z[j] * h[j];
                    }
                }
                memcpy(io.Y + rnn_y_off(&g, t, d, b), h, (size_t)H * sizeof(float));
            }
            rnn_state_end(&io, d, b, len, h, c);
        }
    }
    return EP_OK;
}

int ep_ref_lstm_f32(const ep_op *op) { return rnn_run(op, 4, 1); }
int ep_ref_gru_f32(const ep_op *op) { return rnn_run(op, 3, 0); }
