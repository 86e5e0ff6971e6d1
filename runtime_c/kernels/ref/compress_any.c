/* COMPRESS reference kernel, any dtype: the slices of X along axis whose Condition entry is true (entries
 * past X's extent are ignored, a shorter Condition selects none past its end), in order. The output
 * extent on axis is data-dependent: on entry it is the capacity (the plan's bound); the kernel writes the
 * actual count there. More than the capacity fails the run with EP_ERR_RUN_BOUND before anything is
 * written. */
#include <string.h>
#include "ep_ops.h"
#include "ref_bcast.h"
#include "ref_util.h"

int ep_ref_compress_any(const ep_op *op) {
    const ep_axis_params *p = (const ep_axis_params *)op->params;
    const ep_tensor *x = op->in[0], *cond = op->in[1];
    ep_tensor *y = op->out[0];
    const int axis = p->axis;
    const int64_t dim = x->dims[axis], m = cond->dims[0] < dim ? cond->dims[0] : dim;
    const uint8_t *c = (const uint8_t *)cond->data;
    int64_t n = 0;
    for (int64_t i = 0; i < m; i++) n += c[i] != 0;
    if (n > y->dims[axis]) return EP_ERR_RUN_BOUND;
    y->dims[axis] = (int32_t)n;
    if (rl_is_empty(x) || n == 0) return EP_OK;
    int64_t outer, inner;
    rl_outer_inner(x, axis, &outer, &inner);
    inner *= ep_dtype_size(x->dtype);   /* bytes of one slice */
    const char *src = (const char *)x->data;
    char *dst = (char *)y->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < m; i++)
            if (c[i]) {
                memcpy(dst, src + (o * dim + i) * inner, (size_t)inner);
                dst += inner;
            }
    return EP_OK;
}
