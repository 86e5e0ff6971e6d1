/* Shape functions: LSTM, GRU (layouts in plan_format.h, ep_rnn_params).
 * Params and shapes are untrusted plan bytes: every field is checked here so the kernel can
 * trust them. */
#include "speech_common.h"

static int dims_are(const ep_tensor *t, int rank, int64_t d0, int64_t d1, int64_t d2) {
    const int64_t d[3] = {d0, d1, d2};
    if (t->rank != rank) return 0;
    for (int i = 0; i < rank; i++)
        if (t->dims[i] != d[i]) return 0;
    return 1;
}

/* G gates; lstm selects the LSTM-only inputs (initial_c, P) and output (Y_c). */
static int shape_rnn(const ep_op *op, ep_shape *out, uint64_t *scratch, int G, int lstm) {
    const int max_in = lstm ? 8 : 6, n_out = lstm ? 3 : 2;
    int rc = sp_chk_arity(op, 4, max_in, n_out, n_out);
    if (rc == EP_OK) rc = sp_chk_io(op, 4);
    if (rc != EP_OK) return rc;
    const ep_rnn_params *p = (const ep_rnn_params *)op->params;
    if (p->direction < EP_RNN_FORWARD || p->direction > EP_RNN_BIDIRECTIONAL || !sp_is_01(p->layout) ||
        !sp_is_01(p->linear_before_reset) || (lstm && p->linear_before_reset))
        return EP_ERR_PLAN_PARAMS;
    if (!(p->clip >= 0.0f) || p->clip > 3.0e38f) return EP_ERR_PLAN_PARAMS; /* NaN, inf */
    if (p->hidden_size < 1 || p->hidden_size > (1 << 20)) return EP_ERR_PLAN_PARAMS;
    const ep_tensor *x = op->in[0];
    if (x->rank != 3) return EP_ERR_PLAN_SHAPE;
    const int64_t D = p->direction == EP_RNN_BIDIRECTIONAL ? 2 : 1, H = p->hidden_size;
    const int64_t T = x->dims[p->layout ? 1 : 0], B = x->dims[p->layout ? 0 : 1], I = x->dims[2];
    for (int k = 0; k < op->n_in; k++)
        if (op->in[k] && k != 4 && op->in[k]->dtype != EP_DTYPE_F32) return EP_ERR_PLAN_TENSOR;
    if (!dims_are(op->in[1], 3, D, G * H, I) || !dims_are(op->in[2], 3, D, G * H, H) ||
        !dims_are(op->in[3], 2, D, 2 * G * H, 0))
        return EP_ERR_PLAN_SHAPE;
    const ep_tensor *sl = op->n_in > 4 ? op->in[4] : NULL;
    if (sl && (!sp_is_index_dtype(sl->dtype) || !dims_are(sl, 1, B, 0, 0))) return EP_ERR_PLAN_SHAPE;
    const int64_t s0 = p->layout ? B : D, s1 = p->layout ? D : B;
    for (int k = 5; k < op->n_in && k < 7; k++)
        if (op->in[k] && !dims_are(op->in[k], 3, s0, s1, H)) return EP_ERR_PLAN_SHAPE;
    if (lstm && op->n_in > 7 && op->in[7] && !dims_are(op->in[7], 2, D, 3 * H, 0)) return EP_ERR_PLAN_SHAPE;
    int64_t y[4] = {T, D, B, H};
    if (p->layout) y[0] = B, y[1] = T, y[2] = D;
    if ((rc = sp_set_shape(&out[0], 4, y, EP_DTYPE_F32)) != EP_OK) return rc;
    const int64_t st[3] = {s0, s1, H};
    for (int k = 1; k < n_out; k++)
        if ((rc = sp_set_shape(&out[k], 3, st, EP_DTYPE_F32)) != EP_OK) return rc;
    *scratch = (uint64_t)(2 + G) * (uint64_t)H * sizeof(float);
    return EP_OK;
}

int ep_shape_lstm(const ep_op *op, ep_shape *out, uint64_t *scratch) { return shape_rnn(op, out, scratch, 4, 1); }
int ep_shape_gru(const ep_op *op, ep_shape *out, uint64_t *scratch) { return shape_rnn(op, out, scratch, 3, 0); }
