/* SPLIT, any dtype: the outputs take consecutive blocks of X along axis. */
#include <string.h>
#include "ep_ops.h"
#include "ref_util.h"

int ep_ref_split_any(const ep_op *op) {
    const ep_axis_params *p = (const ep_axis_params *)op->params;
    const ep_tensor *x = op->in[0];
    const int axis = p->axis;
    const size_t esize = ep_dtype_size(x->dtype);
    int64_t outer, inner;
    rl_outer_inner(x, axis, &outer, &inner);
    const size_t row = (size_t)(x->dims[axis] * inner) * esize;
    size_t off = 0;
    for (int k = 0; k < op->n_out; k++) {
        const ep_tensor *y = op->out[k];
        const size_t blk = (size_t)(y->dims[axis] * inner) * esize;
        if (blk == 0) continue;
        const char *s = (const char *)x->data + off;
        char *d = (char *)y->data;
        for (int64_t o = 0; o < outer; o++) memcpy(d + (size_t)o * blk, s + (size_t)o * row, blk);
        off += blk;
    }
    return EP_OK;
}
