/* LSTM / GRU tensor geometry shared by the reference kernel (ref/rnn_f32.c) and the ISA template
 * (rnn_tmpl.h): element offsets of X, Y and the states for both layouts, and the checked sequence length. */
#ifndef EP_RNN_GEO_H
#define EP_RNN_GEO_H
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
#endif
