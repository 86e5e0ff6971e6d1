/* PAD (ONNX Pad): f32, and any integer or bool dtype by element size. Per dim, negative pads crop first (as onnxruntime does), then
 * the cropped extent m is padded with numpy.pad semantics (onnx reference):
 *   constant: outside [0, m) takes the value;
 *   edge:     clamp into [0, m);
 *   wrap:     i modulo m;
 *   reflect:  mirror without repeating the edge, period 2(m-1), so pads larger than
 *             m-1 keep reflecting as numpy does; m == 1 repeats the only element.
 * Within what onnxruntime accepts (reflect pads <= m-1, m >= 2) the results agree. X and Y may be C8 (1.14). */
#include <string.h>
#include "ep_ops.h"
#include "ref_util_elem.h"
#include "pad_common.h"

/* Index into the cropped extent m, or -1 for the constant value. */
static inline int64_t pad_map(int mode, int64_t i, int64_t m) {
    if (i >= 0 && i < m) return i;
    if (mode == EP_PAD_CONSTANT) return -1;
    if (mode == EP_PAD_WRAP) {
        const int64_t r = i % m;
        return r < 0 ? r + m : r;
    }
    if (mode == EP_PAD_EDGE || m == 1) return i < 0 ? 0 : m - 1;
    const int64_t period = 2 * (m - 1);
    int64_t r = i % period;
    if (r < 0) r += period;
    return r < m ? r : period - r;
}

/* The constant `value` in Y's dtype (esz bytes; the shape function admits F32 and the integer and bool
 * dtypes, and the compiler writes integer values exactly representable as float). */
static void pad_value(uint8_t *v, uint8_t dt, float value) {
    switch (dt) {
    case EP_DTYPE_I8: { const int8_t t = (int8_t)value; memcpy(v, &t, 1); break; }
    case EP_DTYPE_U8: { const uint8_t t = (uint8_t)value; memcpy(v, &t, 1); break; }
    case EP_DTYPE_BOOL: v[0] = value != 0.0f; break;
    case EP_DTYPE_I16: { const int16_t t = (int16_t)value; memcpy(v, &t, 2); break; }
    case EP_DTYPE_U16: { const uint16_t t = (uint16_t)value; memcpy(v, &t, 2); break; }
    case EP_DTYPE_I32: { const int32_t t = (int32_t)value; memcpy(v, &t, 4); break; }
    case EP_DTYPE_U32: { const uint32_t t = (uint32_t)value; memcpy(v, &t, 4); break; }
    case EP_DTYPE_I64: { const int64_t t = (int64_t)value; memcpy(v, &t, 8); break; }
    case EP_DTYPE_U64: { const uint64_t t = (uint64_t)value; memcpy(v, &t, 8); break; }
    default: memcpy(v, &value, 4); break;
    }
}

/* n copies of the es-byte value v at y: one memset when its bytes are equal (0.0f, 0), else doubling memcpys */
static void pad_fill(uint8_t *y, const uint8_t *v, int64_t n, size_t es) {
    if (n <= 0) return;
    int same = 1;
    for (size_t k = 1; k < es; k++) same &= v[k] == v[0];
    if (same) {
        memset(y, v[0], (size_t)n * es);
        return;
    }
    memcpy(y, v, es);
    for (int64_t done = 1; done < n;) {
        const int64_t c = done < n - done ? done : n - done;
        memcpy(y + (size_t)done * es, y, (size_t)c * es);
        done += c;
    }
}

/* Any dtype, by element size: per output row, the source row of X for the outer coordinates (or the
 * constant), the interior copied in one memcpy; in constant mode the pads filled as runs, in the other modes
 * element by element. */
/* Pads X (dims xd) into Y (dims yd) of `rank` dims with begin pads pb and end pads pe (negative: crops). */
static void pad_run(const uint8_t *x, uint8_t *y, int rank, int64_t *xd, int64_t *yd, int64_t *pb, int64_t *pe,
                    int mode, const uint8_t *val, size_t es) {
    int64_t xs[EP_MAX_RANK + 1], lead[EP_MAX_RANK + 1], crop[EP_MAX_RANK + 1], m[EP_MAX_RANK + 1];
    /* constant mode: a trailing dim without pads or crops joins the one before it (a channel pad of [N,C,H,W]
     * becomes rows of C*H*W), the pads of that one scaled by its extent */
    while (mode == EP_PAD_CONSTANT && rank > 1 && pb[rank - 1] == 0 && pe[rank - 1] == 0) {
        const int64_t n = xd[rank - 1];
        rank--;
        xd[rank - 1] *= n, yd[rank - 1] *= n, pb[rank - 1] *= n, pe[rank - 1] *= n;
    }
    int64_t stride = 1;
    for (int i = rank - 1; i >= 0; i--) xs[i] = stride, stride *= xd[i];
    for (int i = 0; i < rank; i++) {
        const int64_t b = pb[i], e = pe[i];
        lead[i] = b > 0 ? b : 0;
        crop[i] = b < 0 ? -b : 0;
        m[i] = xd[i] - crop[i] - (e < 0 ? -e : 0);
    }
    const int last = rank - 1;
    const int64_t w = yd[last], b = lead[last], mw = m[last];
    int64_t idx[EP_MAX_RANK + 1] = {0};
    for (;;) {
        int64_t off = 0;
        int outside = 0;
        for (int i = 0; i < last; i++) {
            const int64_t s = pad_map(mode, idx[i] - lead[i], m[i]);
            if (s < 0) outside = 1;
            off += (s + crop[i]) * xs[i];
        }
        const uint8_t *row = x + (size_t)(off + crop[last]) * es;
        const int64_t hi = outside ? 0 : (b + mw < w ? b + mw : w);   /* [b, hi) copies row[0, hi - b) */
        if (hi > b) memcpy(y + (size_t)b * es, row, (size_t)(hi - b) * es);
        if (mode == EP_PAD_CONSTANT) {
            if (hi > b) {
                pad_fill(y, val, b < w ? b : w, es);
                pad_fill(y + (size_t)hi * es, val, w - hi, es);
            } else {
                pad_fill(y, val, w, es);
            }
        }
        for (int64_t o = 0; mode != EP_PAD_CONSTANT && o < w; o++) {
            if (o == b && hi > b) o = hi;
            if (o >= w) break;
            const int64_t s = outside ? -1 : pad_map(mode, o - b, mw);
            memcpy(y + (size_t)o * es, s < 0 ? val : row + (size_t)s * es, es);
        }
        y += (size_t)w * es;
        int i = last - 1;
        for (; i >= 0; i--) {
            if (++idx[i] < yd[i]) break;
            idx[i] = 0;
        }
        if (i < 0) return;
    }
}

/* A C8 X and Y (1.14) are the [N, C/8, H, W, 8] tensors of their bytes, padded as such: the shape function
 * admits channel pads of whole blocks only. */
int ep_ref_pad_f32(const ep_op *op) {
    const ep_pad_params *p = (const ep_pad_params *)op->params;
    const ep_tensor *tx = op->in[0];
    const ep_tensor *ty = op->out[0];
    const int rank = tx->rank;
    const size_t es = ep_dtype_size(tx->dtype);
    uint8_t val[8];
    pad_value(val, tx->dtype, p->value);
    if (ep_numel(ty) == 0) return EP_OK;
    if (rank == 0) {
        memcpy(ty->data, tx->data, es);
        return EP_OK;
    }
    int64_t xd[EP_MAX_RANK + 1], yd[EP_MAX_RANK + 1], pb[EP_MAX_RANK + 1], pe[EP_MAX_RANK + 1];
    ep_pad_amounts(p, tx, pb, pe);
    for (int i = 0; i < rank; i++) xd[i] = tx->dims[i], yd[i] = ty->dims[i];
    if (tx->layout == EP_LAYOUT_C8) {   /* [N, C, H, W] -> [N, C/8, H, W, 8] */
        xd[1] /= EP_LAYOUT_BLOCK, yd[1] /= EP_LAYOUT_BLOCK, pb[1] /= EP_LAYOUT_BLOCK, pe[1] /= EP_LAYOUT_BLOCK;
        xd[4] = yd[4] = EP_LAYOUT_BLOCK, pb[4] = pe[4] = 0;
    }
    pad_run((const uint8_t *)tx->data, (uint8_t *)ty->data, tx->layout == EP_LAYOUT_C8 ? 5 : rank, xd, yd, pb, pe,
            ep_pad_base_mode(p), val, es);
    return EP_OK;
}
