/* SCATTER_ELEMENTS reference kernel (ONNX ScatterElements and Scatter): Y = Data, then element e of
 * Updates goes to Y at e's coordinates with coordinate `axis` replaced by Indices[e], in row-major order
 * of Indices (duplicates: the last one wins, or each is combined in that order by the reduction).
 * Every index is checked before anything is written; one outside [-dim, dim) fails the run with
 * EP_ERR_RUN_INDEX and leaves Y untouched. Reductions on F32, I32 and I64 (integers wrap). */
#include <string.h>
#include "ep_ops.h"
#include "ref_bcast.h"

/* y[off] = y[off] (reduction) u[e] for one element; T the type, U its unsigned twin (wrapping). */
#define SE_COMBINE(T, U)                                                                      \
    do {                                                                                      \
        T *dd = (T *)y->data + off;                                                           \
        const T uu = ((const T *)upd->data)[e];                                               \
        switch (p->reduction) {                                                               \
        case EP_SCATTER_ADD: *dd = (T)(U)((U)*dd + (U)uu); break;                             \
        case EP_SCATTER_MUL: *dd = (T)(U)((U)*dd * (U)uu); break;                             \
        case EP_SCATTER_MAX: *dd = uu > *dd ? uu : *dd; break;                                \
        default: *dd = uu < *dd ? uu : *dd; break;                                            \
        }                                                                                     \
    } while (0)

int ep_ref_scatter_elements_any(const ep_op *op) {
    const ep_scatter_elements_params *p = (const ep_scatter_elements_params *)op->params;
    const ep_tensor *data = op->in[0], *ind = op->in[1], *upd = op->in[2], *y = op->out[0];
    const int r = ind->rank, axis = p->axis;
    const int64_t dim = data->dims[axis], n = rb_count(ind);
    const size_t es = ep_dtype_size(data->dtype);
    for (int64_t e = 0; e < n; e++) {
        const int64_t v = rb_load_i(ind->data, ind->dtype, e);
        if (v < -dim || v >= dim) return EP_ERR_RUN_INDEX;
    }
    const int64_t total = rb_count(data);
    if (total) memcpy(y->data, data->data, (size_t)(total * (int64_t)es));
    if (n == 0) return EP_OK;
    /* odometer over Indices' shape; base: the Data offset of the coordinates off the axis */
    int64_t stride[EP_MAX_RANK] = {0}, idx[EP_MAX_RANK] = {0}, base = 0, s = 1;
    for (int d = r - 1; d >= 0; d--) {
        stride[d] = s;
        s *= data->dims[d];
        idx[d] = 0;
    }
    const int64_t astride = stride[axis];
    for (int64_t e = 0; e < n; e++) {
        int64_t v = rb_load_i(ind->data, ind->dtype, e);
        if (v < 0) v += dim;
        const int64_t off = base + v * astride;
        if (p->reduction == EP_SCATTER_NONE) {
            memcpy((char *)y->data + off * (int64_t)es, (const char *)upd->data + e * (int64_t)es, es);
        } else if (data->dtype == EP_DTYPE_F32) {
            float *dd = (float *)y->data + off;
            const float uu = ((const float *)upd->data)[e];
            switch (p->reduction) {
            case EP_SCATTER_ADD: *dd += uu; break;
            case EP_SCATTER_MUL: *dd *= uu; break;
            case EP_SCATTER_MAX: *dd = uu > *dd ? uu : *dd; break;
            default: *dd = uu < *dd ? uu : *dd; break;
            }
        } else if (data->dtype == EP_DTYPE_I32) {
            SE_COMBINE(int32_t, uint32_t);
        } else {
            SE_COMBINE(int64_t, uint64_t);
        }
        for (int d = r - 1; d >= 0; d--) {   /* next coordinate of Indices */
            if (d != axis) base += stride[d];
            if (++idx[d] < ind->dims[d]) break;
            if (d != axis) base -= stride[d] * ind->dims[d];
            idx[d] = 0;
        }
    }
    return EP_OK;
}
