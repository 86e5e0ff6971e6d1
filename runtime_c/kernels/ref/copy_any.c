/* COPY, any dtype: byte copy (Y may have another shape with the same element count). */
#include <string.h>
#include "ep_ops.h"

int ep_ref_copy_any(const ep_op *op) {
    const ep_tensor *x = op->in[0];
    const ep_tensor *y = op->out[0];
    const size_t bytes = (size_t)ep_numel(x) * ep_dtype_size(x->dtype);
    if (bytes != 0 && y->data != x->data) memmove(y->data, x->data, bytes);
    return EP_OK;
}
