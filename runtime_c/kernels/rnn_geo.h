/* LSTM / GRU tensor geometry shared by the reference kernel (ref/rnn_f32.c) and the ISA template
 * (rnn_tmpl.h): element offsets of X, Y and the states for both layouts, the checked sequence length, the
 * operands, and the state of one (direction, batch) sequence before its first and after its last step. */
#ifndef EP_RNN_GEO_H
#define EP_RNN_GEO_H
#include <string.h>
#include "ep_kernel.h"

typedef struct rnn_geo {
    int64_t T, B, I, H, D;
    int layout;
} rnn_geo;

static inline int64_t rnn_x_off(const rnn_geo *g, int64_t t, int64_t b) {
    return (g->layout ? b * g->T + t : t * g->B + b) * g->I;
}
static inline int64_t rnn_y_off(const rnn_geo *g, int64_t t, int64_t d, int64_t b) {
    return (g->layout ? (b * g->T + t) * g->D + d : (t * g->D + d) * g->B + b) * g->H;
}
static inline int64_t rnn_s_off(const rnn_geo *g, int64_t d, int64_t b) {
    return (g->layout ? b * g->D + d : d * g->B + b) * g->H;
}

/* Sequence length of batch b (seq_lens is run-time data): checked before anything is written. */
static inline int rnn_seq_len(const ep_tensor *sl, int64_t b, int64_t T, int64_t *len) {
    if (!sl) {
        *len = T;
        return EP_OK;
    }
    const int64_t v = sl->dtype == EP_DTYPE_I64 ? ((const int64_t *)sl->data)[b] : ((const int32_t *)sl->data)[b];
    if (v < 0 || v > T) return EP_ERR_RUN_INDEX;
    *len = v;
    return EP_OK;
}
/* The operands of an LSTM/GRU op (plan_format.h, ep_rnn_params) and its geometry; every sequence length
 * checked (EP_ERR_RUN_INDEX) before anything is written. */
typedef struct rnn_io {
    rnn_geo g;
    const ep_tensor *sl, *h0, *c0, *pp;   /* optional: sequence lengths, initial h / c, peepholes */
    const float *X;
    float *Y, *Yh, *Yc;                   /* Yc: LSTM only */
} rnn_io;

static inline int rnn_bind(const ep_op *op, int lstm, rnn_io *io) {
    const ep_rnn_params *p = (const ep_rnn_params *)op->params;
    const ep_tensor *x = op->in[0];
    io->g.layout = p->layout;
    io->g.T = x->dims[p->layout ? 1 : 0];
    io->g.B = x->dims[p->layout ? 0 : 1];
    io->g.I = x->dims[2];
    io->g.H = p->hidden_size;
    io->g.D = p->direction == EP_RNN_BIDIRECTIONAL ? 2 : 1;
    io->sl = op->n_in > 4 ? op->in[4] : NULL;
    io->h0 = op->n_in > 5 ? op->in[5] : NULL;
    io->c0 = lstm && op->n_in > 6 ? op->in[6] : NULL;
    io->pp = lstm && op->n_in > 7 ? op->in[7] : NULL;
    int64_t len = 0;
    for (int64_t b = 0; b < io->g.B; b++)
        if (rnn_seq_len(io->sl, b, io->g.T, &len) != EP_OK) return EP_ERR_RUN_INDEX;
    io->X = (const float *)x->data;
    io->Y = (float *)op->out[0]->data;
    io->Yh = (float *)op->out[1]->data;
    io->Yc = lstm ? (float *)op->out[2]->data : NULL;
    return EP_OK;
}

/* h, c of direction d, batch b before the first step: h0 / c0, or zeros. */
static inline void rnn_state_begin(const rnn_io *io, int64_t d, int64_t b, float *h, float *c) {
    const size_t n = (size_t)io->g.H * sizeof(float);
    const int64_t o = rnn_s_off(&io->g, d, b);
    if (io->h0) memcpy(h, (const float *)io->h0->data + o, n);
    else memset(h, 0, n);
    if (io->c0) memcpy(c, (const float *)io->c0->data + o, n);
    else memset(c, 0, n);
}

/* After the len steps of direction d, batch b: Y zero for the steps past len, then the final h (and c) to Yh
 * (and Yc); a sequence with no step ends in the zero state, as onnxruntime's. */
static inline void rnn_state_end(const rnn_io *io, int64_t d, int64_t b, int64_t len, float *h, float *c) {
    const size_t n = (size_t)io->g.H * sizeof(float);
    for (int64_t t = len; t < io->g.T; t++) memset(io->Y + rnn_y_off(&io->g, t, d, b), 0, n);
    if (len == 0) {
        memset(h, 0, n);
        memset(c, 0, n);
    }
    memcpy(io->Yh + rnn_s_off(&io->g, d, b), h, n);
    if (io->Yc) memcpy(io->Yc + rnn_s_off(&io->g, d, b), c, n);
}
#endif
