/* REVERSE_SEQUENCE reference kernel, any dtype: X viewed as [T, B, inner] (time_axis 0) or [B, T, inner]
 * (time_axis 1); for each batch b the first Lens[b] time steps are reversed, the rest copied. Every length
 * is checked before anything is written; one outside [0, T] fails the run with EP_ERR_RUN_INDEX. */
#include <string.h>
#include "ep_ops.h"
#include "ref_bcast.h"

int ep_ref_reverse_sequence_any(const ep_op *op) {
    const ep_reverse_sequence_params *p = (const ep_reverse_sequence_params *)op->params;
    const ep_tensor *x = op->in[0], *lens = op->in[1], *y = op->out[0];
    const int64_t T = x->dims[p->time_axis], B = x->dims[p->batch_axis];
    for (int64_t b = 0; b < B; b++) {
        const int64_t len = rb_load_i(lens->data, lens->dtype, b);
        if (len < 0 || len > T) return EP_ERR_RUN_INDEX;
    }
    if (rb_count(x) == 0) return EP_OK;
    int64_t inner = ep_dtype_size(x->dtype);
    for (int d = 2; d < x->rank; d++) inner *= x->dims[d];
    /* byte strides of one time step and one batch entry */
    const int64_t ts = p->time_axis == 0 ? B * inner : inner, bs = p->time_axis == 0 ? inner : T * inner;
    const char *src = (const char *)x->data;
    char *dst = (char *)y->data;
    for (int64_t b = 0; b < B; b++) {
        const int64_t len = rb_load_i(lens->data, lens->dtype, b);
        for (int64_t t = 0; t < T; t++) {
            const int64_t from = t < len ? len - 1 - t : t;
            memcpy(dst + b * bs + t * ts, src + b * bs + from * ts, (size_t)inner);
        }
    }
    return EP_OK;
}
