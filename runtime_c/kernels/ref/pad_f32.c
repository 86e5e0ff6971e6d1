/* PAD f32 (ONNX Pad). Per dim, negative pads crop first (as onnxruntime does), then
 * the cropped extent m is padded with numpy.pad semantics (onnx reference):
 *   constant: outside [0, m) takes the value;
 *   edge:     clamp into [0, m);
 *   reflect:  mirror without repeating the edge, period 2(m-1), so pads larger than
 *             m-1 keep reflecting as numpy does; m == 1 repeats the only element.
 * Within what onnxruntime accepts (reflect pads <= m-1, m >= 2) the results agree. */
#include <string.h>
#include "ep_ops.h"
#include "ref_util_elem.h"

/* Index into the cropped extent m, or -1 for the constant value. */
static inline int64_t pad_map(int mode, int64_t i, int64_t m) {
    if (i >= 0 && i < m) return i;
    if (mode == EP_PAD_CONSTANT) return -1;
    if (mode == EP_PAD_EDGE || m == 1) return i < 0 ? 0 : m - 1;
    const int64_t period = 2 * (m - 1);
    int64_t r = i % period;
    if (r < 0) r += period;
    return r < m ? r : period - r;
}

int ep_ref_pad_f32(const ep_op *op) {
    const ep_pad_params *p = (const ep_pad_params *)op->params;
    const ep_tensor *tx = op->in[0];
    const ep_tensor *ty = op->out[0];
    const int rank = tx->rank;
    const float *x = (const float *)tx->data;
    float *y = (float *)ty->data;
    if (ep_numel(ty) == 0) return EP_OK;
    if (rank == 0) {
        y[0] = x[0];
        return EP_OK;
    }
    int64_t xs[EP_MAX_RANK], lead[EP_MAX_RANK], crop[EP_MAX_RANK], m[EP_MAX_RANK];
    ru_dense_strides(tx, xs);
    for (int i = 0; i < rank; i++) {
        const int64_t b = p->pads[i], e = p->pads[rank + i];
        lead[i] = b > 0 ? b : 0;
        crop[i] = b < 0 ? -b : 0;
        m[i] = tx->dims[i] - crop[i] - (e < 0 ? -e : 0);
    }
    const int last = rank - 1;
    const int64_t w = ty->dims[last], b = lead[last], mw = m[last];
    int64_t idx[EP_MAX_RANK] = {0};
    for (;;) {
        /* source row of X for the outer coordinates idx[0..last-1] */
        int64_t off = 0;
        int outside = 0;
        for (int i = 0; i < last; i++) {
            const int64_t s = pad_map(p->mode, idx[i] - lead[i], m[i]);
            if (s < 0) outside = 1;
            off += (s + crop[i]) * xs[i];
        }
        if (outside) {
            for (int64_t o = 0; o < w; o++) y[o] = p->value;
        } else {
            const float *row = x + off + crop[last];
            const int64_t hi = b + mw < w ? b + mw : w; /* [b, hi) copies row[0, hi-b) */
            for (int64_t o = 0; o < b; o++) {
                const int64_t s = pad_map(p->mode, o - b, mw);
                y[o] = s < 0 ? p->value : row[s];
            }
            if (hi > b) memcpy(y + b, row, (size_t)(hi - b) * sizeof(float));
            for (int64_t o = hi > b ? hi : b; o < w; o++) {
                const int64_t s = pad_map(p->mode, o - b, mw);
                y[o] = s < 0 ? p->value : row[s];
            }
        }
        y += w;
        int i = last - 1;
        for (; i >= 0; i--) {
            if (++idx[i] < ty->dims[i]) break;
            idx[i] = 0;
        }
        if (i < 0) return EP_OK;
    }
}
