/* GATHER, any dtype: Y = X.shape[:axis] + I.shape + X.shape[axis+1:].
 * Every index is checked before anything is written; an index outside
 * [-dim, dim) fails the run with EP_ERR_RUN_INDEX. */
#include <string.h>
#include "ep_ops.h"

static inline int64_t gather_index(const ep_tensor *ind, int64_t k) {
    if (ind->dtype == EP_DTYPE_I64) return ((const int64_t *)ind->data)[k];
    return ((const int32_t *)ind->data)[k];
}

int ep_ref_gather_any(const ep_op *op) {
    const ep_axis_params *p = (const ep_axis_params *)op->params;
    const ep_tensor *x = op->in[0];
    const ep_tensor *ind = op->in[1];
    const ep_tensor *y = op->out[0];
    const int axis = p->axis;
    const size_t esize = ep_dtype_size(x->dtype);
    const int64_t dim = x->dims[axis];
    const int64_t nidx = ep_numel(ind);
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++) outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++) inner *= x->dims[i];
    for (int64_t k = 0; k < nidx; k++) {
        int64_t v = gather_index(ind, k);
        if (v < -dim || v >= dim) return EP_ERR_RUN_INDEX;
    }
    const size_t blk = (size_t)inner * esize;
    if (blk == 0 || outer == 0) return EP_OK;
    const char *s = (const char *)x->data;
    char *d = (char *)y->data;
    for (int64_t o = 0; o < outer; o++) {
        const char *so = s + (size_t)(o * dim) * blk;
        for (int64_t k = 0; k < nidx; k++) {
            int64_t v = gather_index(ind, k);
            if (v < 0) v += dim;
            memcpy(d, so + (size_t)v * blk, blk);
            d += blk;
        }
    }
    return EP_OK;
}
