/* REDUCE f32 over the dims in axes_mask (keepdims only changes Y's declared shape).
 * X's dims are split into kept and reduced groups (extent-1 dims dropped, adjacent dims
 * of the same kind merged); Y is dense over the kept dims, and each Y element reduces a
 * strided sub-box of X. Sums and products accumulate in double. An empty reduction gives
 * 0 (sum, sum_square, l2), 1 (prod), -inf (max), +inf (min), NaN (mean).
 * I32 / I64 (SUM, PROD, MAX, MIN; the shape function refuses the others): sums and products
 * accumulate in uint64 and are stored truncated, so they wrap as two's complement (no UB); an
 * empty MAX / MIN gives the type's minimum / maximum. */
#include <math.h>
#include "ep_ops.h"
#include "ref_util_elem.h"

typedef struct red_nest {
    int rank;
    int64_t n[EP_MAX_RANK];
    int64_t st[EP_MAX_RANK];
} red_nest;

static void nest_push(red_nest *g, int64_t n, int64_t st) {
    if (g->rank > 0 && g->st[g->rank - 1] == st * n) {
        g->n[g->rank - 1] *= n;
        g->st[g->rank - 1] = st;
    } else {
        g->n[g->rank] = n;
        g->st[g->rank] = st;
        g->rank++;
    }
}

static float reduce_box(int kind, const float *x, const red_nest *r, int64_t count) {
    int64_t idx[EP_MAX_RANK] = {0};
    int64_t off = 0;
    double acc = kind == EP_REDUCE_PROD ? 1.0 : 0.0;
    float m = kind == EP_REDUCE_MAX ? -INFINITY : INFINITY;
    const int last = r->rank - 1;
    const int64_t len = r->rank ? r->n[last] : 1;
    const int64_t st = r->rank ? r->st[last] : 0;
    if (count > 0) {
        for (;;) {
            const float *p = x + off;
            switch (kind) {
            case EP_REDUCE_MEAN: case EP_REDUCE_SUM:
                for (int64_t k = 0; k < len; k++) acc += p[k * st];
                break;
            case EP_REDUCE_SUM_SQUARE: case EP_REDUCE_L2:
                for (int64_t k = 0; k < len; k++) acc += (double)p[k * st] * p[k * st];
                break;
            case EP_REDUCE_PROD:
                for (int64_t k = 0; k < len; k++) acc *= p[k * st];
                break;
            case EP_REDUCE_MAX:
                for (int64_t k = 0; k < len; k++) {
                    float v = p[k * st];
                    if (v > m || v != v) m = v;
                }
                break;
            default: /* MIN */
                for (int64_t k = 0; k < len; k++) {
                    float v = p[k * st];
                    if (v < m || v != v) m = v;
                }
                break;
            }
            int i = last - 1;
            for (; i >= 0; i--) {
                off += r->st[i];
                if (++idx[i] < r->n[i]) break;
                off -= r->st[i] * r->n[i];
                idx[i] = 0;
            }
            if (i < 0) break;
        }
    }
    switch (kind) {
    case EP_REDUCE_MEAN: return (float)(acc / (double)count);
    case EP_REDUCE_L2: return (float)sqrt(acc);
    case EP_REDUCE_MAX: case EP_REDUCE_MIN: return m;
    default: return (float)acc;
    }
}

/* The integer boxes: the same walk as reduce_box, one copy per dtype (T) so the inner loops load
 * directly (the dtype branch is taken once per output element, never per input element). */
#define RED_BOX_INT(NAME, T, TMIN, TMAX)                                                        \
    static T NAME(int kind, const T *x, const red_nest *r, int64_t count) {                     \
        int64_t idx[EP_MAX_RANK] = {0};                                                         \
        int64_t off = 0;                                                                        \
        uint64_t acc = kind == EP_REDUCE_PROD ? 1u : 0u;                                        \
        T m = kind == EP_REDUCE_MAX ? (TMIN) : (TMAX);                                          \
        const int last = r->rank - 1;                                                           \
        const int64_t len = r->rank ? r->n[last] : 1;                                           \
        const int64_t st = r->rank ? r->st[last] : 0;                                           \
        while (count > 0) {                                                                     \
            const T *p = x + off;                                                               \
            switch (kind) {                                                                     \
            case EP_REDUCE_SUM: for (int64_t k = 0; k < len; k++) acc += (uint64_t)p[k * st]; break; \
            case EP_REDUCE_PROD: for (int64_t k = 0; k < len; k++) acc *= (uint64_t)p[k * st]; break; \
            case EP_REDUCE_MAX: for (int64_t k = 0; k < len; k++) m = p[k * st] > m ? p[k * st] : m; break; \
            default: for (int64_t k = 0; k < len; k++) m = p[k * st] < m ? p[k * st] : m; break; \
            }                                                                                   \
            int i = last - 1;                                                                   \
            for (; i >= 0; i--) {                                                               \
                off += r->st[i];                                                                \
                if (++idx[i] < r->n[i]) break;                                                  \
                off -= r->st[i] * r->n[i];                                                      \
                idx[i] = 0;                                                                     \
            }                                                                                   \
            if (i < 0) break;                                                                   \
        }                                                                                       \
        return kind == EP_REDUCE_MAX || kind == EP_REDUCE_MIN ? m : (T)acc;                     \
    }
RED_BOX_INT(reduce_box_i32, int32_t, INT32_MIN, INT32_MAX)
RED_BOX_INT(reduce_box_i64, int64_t, INT64_MIN, INT64_MAX)

int ep_ref_reduce_f32(const ep_op *op) {
    const ep_reduce_params *p = (const ep_reduce_params *)op->params;
    const ep_tensor *tx = op->in[0];
    const ep_tensor *ty = op->out[0];
    int64_t xs[EP_MAX_RANK];
    ru_dense_strides(tx, xs);
    red_nest keep = {0}, red = {0};
    int64_t count = 1;
    for (int i = 0; i < tx->rank; i++) {
        const int64_t n = tx->dims[i];
        if ((p->axes_mask >> i) & 1u) {
            count *= n;
            if (n != 1) nest_push(&red, n, xs[i]);
        } else {
            if (n == 0) return EP_OK; /* empty output */
            if (n != 1) nest_push(&keep, n, xs[i]);
        }
    }
    if (count == 0) red.rank = 0;
    const uint8_t dt = tx->dtype;
    int64_t idx[EP_MAX_RANK] = {0};
    int64_t off = 0;
    for (int64_t o = 0;; o++) {
        if (dt == EP_DTYPE_I32)
            ((int32_t *)ty->data)[o] = reduce_box_i32(p->kind, (const int32_t *)tx->data + off, &red, count);
        else if (dt == EP_DTYPE_I64)
            ((int64_t *)ty->data)[o] = reduce_box_i64(p->kind, (const int64_t *)tx->data + off, &red, count);
        else
            ((float *)ty->data)[o] = reduce_box(p->kind, (const float *)tx->data + off, &red, count);
        int i = keep.rank - 1;
        for (; i >= 0; i--) {
            off += keep.st[i];
            if (++idx[i] < keep.n[i]) break;
            off -= keep.st[i] * keep.n[i];
            idx[i] = 0;
        }
        if (i < 0) return EP_OK;
    }
}
