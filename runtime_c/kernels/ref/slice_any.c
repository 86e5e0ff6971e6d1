/* SLICE, any dtype: Y[i...] = X[start + i * step ...] per dim; extents are Y's dims. */
#include "ep_ops.h"
#include "ref_util_elem.h"

int ep_ref_slice_any(const ep_op *op) {
    const ep_slice_params *p = (const ep_slice_params *)op->params;
    const ep_tensor *x = op->in[0];
    const ep_tensor *y = op->out[0];
    const int rank = x->rank;
    const size_t esize = ep_dtype_size(x->dtype);
    int64_t xs[EP_MAX_RANK], n[EP_MAX_RANK], ss[EP_MAX_RANK];
    ru_dense_strides(x, xs);
    int64_t base = 0;
    for (int i = 0; i < rank; i++) {
        n[i] = y->dims[i];
        if (n[i] == 0) return EP_OK;
        ss[i] = xs[i] * p->steps[i];
        base += xs[i] * p->starts[i];
    }
    ru_gather_strided(y->data, (const char *)x->data + base * (int64_t)esize, rank, n, ss, esize);
    return EP_OK;
}
