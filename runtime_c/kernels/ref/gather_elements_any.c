/* GATHER_ELEMENTS reference kernel, any dtype (by element size): Y has Indices' shape, and element e of Y
 * is Data at e's coordinates with coordinate `axis` replaced by Indices[e]. Every index is checked
 * before anything is written; one outside [-dim, dim) fails the run with EP_ERR_RUN_INDEX. */
#include <string.h>
#include "ep_ops.h"
#include "ref_bcast.h"

int ep_ref_gather_elements_any(const ep_op *op) {
    const ep_axis_params *p = (const ep_axis_params *)op->params;
    const ep_tensor *data = op->in[0], *ind = op->in[1], *y = op->out[0];
    const int r = ind->rank, axis = p->axis;
    const int64_t dim = data->dims[axis], n = rb_count(ind);
    const size_t es = ep_dtype_size(data->dtype);
    for (int64_t e = 0; e < n; e++) {
        const int64_t v = rb_load_i(ind->data, ind->dtype, e);
        if (v < -dim || v >= dim) return EP_ERR_RUN_INDEX;
    }
    if (n == 0) return EP_OK;
    /* odometer over Indices' shape; base: the Data offset of the coordinates off the axis */
    int64_t stride[EP_MAX_RANK] = {0}, idx[EP_MAX_RANK] = {0}, base = 0, s = 1;
    for (int d = r - 1; d >= 0; d--) {
        stride[d] = s;
        s *= data->dims[d];
        idx[d] = 0;
    }
    const int64_t astride = stride[axis];
    const char *src = (const char *)data->data;
    char *dst = (char *)y->data;
    for (int64_t e = 0; e < n; e++) {
        int64_t v = rb_load_i(ind->data, ind->dtype, e);
        if (v < 0) v += dim;
        memcpy(dst + e * (int64_t)es, src + (base + v * astride) * (int64_t)es, es);
        for (int d = r - 1; d >= 0; d--) {   /* next coordinate of Indices */
            if (d != axis) base += stride[d];
            if (++idx[d] < ind->dims[d]) break;
            if (d != axis) base -= stride[d] * ind->dims[d];
            idx[d] = 0;
        }
    }
    return EP_OK;
}
