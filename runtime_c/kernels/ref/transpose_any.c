/* TRANSPOSE, any dtype: Y dim i = X dim perm[i]. Dims that stay contiguous are merged,
 * so e.g. NCHW->NHWC becomes a 3-d strided gather with a long inner run. */
#include "ep_ops.h"
#include "ref_util_elem.h"

int ep_ref_transpose_any(const ep_op *op) {
    const ep_transpose_params *p = (const ep_transpose_params *)op->params;
    const ep_tensor *x = op->in[0];
    const ep_tensor *y = op->out[0];
    const int rank = x->rank;
    int64_t xs[EP_MAX_RANK], n[EP_MAX_RANK], ss[EP_MAX_RANK];
    ru_dense_strides(x, xs);
    for (int i = 0; i < rank; i++) {
        n[i] = x->dims[p->perm[i]];
        ss[i] = xs[p->perm[i]];
    }
    ru_gather_strided(y->data, x->data, rank, n, ss, ep_dtype_size(x->dtype));
    return EP_OK;
}
