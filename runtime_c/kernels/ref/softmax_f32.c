/* SOFTMAX / LOGSOFTMAX f32 along one axis: X viewed as [outer, n, inner].
 * Numerically stable: max is subtracted before exp; the sum is accumulated in double.
 * Three passes per row (max, sum, write), so Y may alias X. No scratch. */
#include <math.h>
#include "ep_ops.h"
#include "ref_util.h"

int ep_ref_softmax_f32(const ep_op *op) {
    const ep_softmax_params *p = (const ep_softmax_params *)op->params;
    const ep_tensor *tx = op->in[0];
    const ep_tensor *ty = op->out[0];
    const int axis = p->axis;
    const int64_t n = tx->dims[axis];
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++) outer *= tx->dims[i];
    for (int i = axis + 1; i < tx->rank; i++) inner *= tx->dims[i];
    const float *x = (const float *)tx->data;
    float *y = (float *)ty->data;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t j = 0; j < inner; j++) {
            const int64_t off = o * n * inner + j;
            rl_softmax_row(y + off, x + off, n, inner, p->log);
        }
    }
    return EP_OK;
}
