/* ARGMAX, TOPK, CUMSUM, TRILU, SCATTERND and GATHERND reference kernels.
 * Index tensors are runtime data: every index is checked before anything is written from it;
 * one out of range fails the run with EP_ERR_RUN_INDEX. */
#include <string.h>
#include "ep_ops.h"
#include "ref_bcast.h"
#include "ref_util.h"

/* a "before" b in the requested order: strictly greater (largest) or smaller; ties keep order.
 * Integers compare exactly (U64 as unsigned, the others widened to int64). */
static inline int better(const void *p, uint8_t dt, int64_t a, int64_t b, int largest) {
    if (dt == EP_DTYPE_F32) {
        const float va = ((const float *)p)[a], vb = ((const float *)p)[b];
        return largest ? va > vb : va < vb;
    }
    if (dt == EP_DTYPE_U64) {
        const uint64_t va = ((const uint64_t *)p)[a], vb = ((const uint64_t *)p)[b];
        return largest ? va > vb : va < vb;
    }
    const int64_t va = rb_load_i(p, dt, a), vb = rb_load_i(p, dt, b);
    return largest ? va > vb : va < vb;
}


int ep_ref_argmax_any(const ep_op *op) {
    const ep_argmax_params *p = (const ep_argmax_params *)op->params;
    const ep_tensor *x = op->in[0];
    int64_t *y = (int64_t *)op->out[0]->data;
    const int64_t dim = x->dims[p->axis];
    int64_t outer, inner;
    if (rl_is_empty(x)) return EP_OK;
    rl_outer_inner(x, p->axis, &outer, &inner);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            const int64_t base = o * dim * inner + in;
            int64_t best = 0;
            for (int64_t k = 1; k < dim; k++) {
                const int64_t a = base + k * inner, b = base + best * inner;
                if (better(x->data, x->dtype, a, b, !p->min) ||
                    (p->select_last_index && !better(x->data, x->dtype, b, a, !p->min)))
                    best = k;
            }
            y[o * inner + in] = best;
        }
    return EP_OK;
}

int ep_ref_topk_any(const ep_op *op) {
    const ep_topk_params *p = (const ep_topk_params *)op->params;
    const ep_tensor *x = op->in[0], *vals = op->out[0];
    int64_t *idx = (int64_t *)op->out[1]->data;
    const int64_t dim = x->dims[p->axis], k = p->k;
    const size_t es = ep_dtype_size(x->dtype);
    int64_t outer, inner;
    if (rl_is_empty(vals)) return EP_OK;
    rl_outer_inner(x, p->axis, &outer, &inner);
    int32_t *a = (int32_t *)op->scratch, *b = a + dim;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            const int64_t base = o * dim * inner + in;
            /* bottom-up stable merge sort of the indices 0..dim-1 by value */
            for (int64_t i = 0; i < dim; i++) a[i] = (int32_t)i;
            for (int64_t w = 1; w < dim; w *= 2) {
                for (int64_t lo = 0; lo < dim; lo += 2 * w) {
                    const int64_t mid = lo + w < dim ? lo + w : dim, hi = lo + 2 * w < dim ? lo + 2 * w : dim;
                    int64_t i = lo, j = mid, t = lo;
                    while (i < mid && j < hi)
                        b[t++] = better(x->data, x->dtype, base + a[j] * inner, base + a[i] * inner, p->largest) ? a[j++] : a[i++];
                    while (i < mid) b[t++] = a[i++];
                    while (j < hi) b[t++] = a[j++];
                }
                int32_t *tmp = a;
                a = b;
                b = tmp;
            }
            for (int64_t r = 0; r < k; r++) {
                const int64_t dst = o * k * inner + r * inner + in;
                idx[dst] = a[r];
                memcpy((char *)vals->data + dst * (int64_t)es, (const char *)x->data + (base + a[r] * inner) * (int64_t)es, es);
            }
            a = (int32_t *)op->scratch; /* the pointer swaps may have left a in the second half */
            b = a + dim;
        }
    return EP_OK;
}

int ep_ref_cumsum_any(const ep_op *op) {
    const ep_cumsum_params *p = (const ep_cumsum_params *)op->params;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    const int64_t dim = x->dims[p->axis];
    int64_t outer, inner;
    if (rl_is_empty(x)) return EP_OK;
    rl_outer_inner(x, p->axis, &outer, &inner);
    const int mul = p->prod;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            double accf = mul ? 1.0 : 0.0;
            uint64_t acci = mul ? 1 : 0; /* integers wrap (unsigned arithmetic: no UB) */
            for (int64_t s = 0; s < dim; s++) {
                const int64_t kk = p->reverse ? dim - 1 - s : s;
                const int64_t e = o * dim * inner + kk * inner + in;
                switch (x->dtype) {
                case EP_DTYPE_F32: {
                    const float v = ((const float *)x->data)[e];
                    if (!p->exclusive) accf = mul ? accf * v : accf + v;
                    ((float *)y->data)[e] = (float)accf;
                    if (p->exclusive) accf = mul ? accf * v : accf + v;
                    break;
                }
                case EP_DTYPE_I32: case EP_DTYPE_U32: {   /* the low 32 bits wrap alike */
                    const uint32_t v = (uint32_t)((const int32_t *)x->data)[e];
                    if (!p->exclusive) acci = mul ? acci * v : acci + v;
                    ((int32_t *)y->data)[e] = (int32_t)(uint32_t)acci;
                    if (p->exclusive) acci = mul ? acci * v : acci + v;
                    break;
                }
                default: {   /* I64, U64 */
                    const uint64_t v = (uint64_t)((const int64_t *)x->data)[e];
                    if (!p->exclusive) acci = mul ? acci * v : acci + v;
                    ((int64_t *)y->data)[e] = (int64_t)acci;
                    if (p->exclusive) acci = mul ? acci * v : acci + v;
                    break;
                }
                }
            }
        }
    return EP_OK;
}

int ep_ref_trilu_any(const ep_op *op) {
    const ep_trilu_params *p = (const ep_trilu_params *)op->params;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    const int r = x->rank;
    const int64_t M = x->dims[r - 2], N = x->dims[r - 1];
    const size_t es = ep_dtype_size(x->dtype);
    int64_t k = p->k; /* clamp so i + k cannot overflow; the result is the same */
    if (k > (INT64_C(1) << 33)) k = INT64_C(1) << 33;
    if (k < -(INT64_C(1) << 33)) k = -(INT64_C(1) << 33);
    if (rl_is_empty(x)) return EP_OK;
    int64_t mats = 1;
    for (int i = 0; i < r - 2; i++) mats *= x->dims[i];
    const char *s = (const char *)x->data;
    char *d = (char *)y->data;
    for (int64_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < M; i++) {
            const int64_t row = (m * M + i) * N * (int64_t)es;
            int64_t lo, hi; /* kept columns [lo, hi) */
            if (p->upper) {
                lo = i + k < 0 ? 0 : (i + k > N ? N : i + k);
                hi = N;
            } else {
                lo = 0;
                hi = i + k + 1 < 0 ? 0 : (i + k + 1 > N ? N : i + k + 1);
            }
            memset(d + row, 0, (size_t)(N * (int64_t)es));
            if (hi > lo) memcpy(d + row + lo * (int64_t)es, s + row + lo * (int64_t)es, (size_t)((hi - lo) * (int64_t)es));
        }
    return EP_OK;
}

/* Offset (in elements of the slice-strided data) of index tuple t of ind (q values), or -1 when
 * one is out of range. dims: the q indexed data dims; stride: their element strides. */
static int64_t nd_offset(const ep_tensor *ind, int64_t t, int q, const int32_t *dims, const int64_t *stride) {
    int64_t off = 0;
    for (int j = 0; j < q; j++) {
        int64_t v = rb_load_i(ind->data, ind->dtype, t * q + j);
        if (v < -(int64_t)dims[j] || v >= dims[j]) return -1;
        if (v < 0) v += dims[j];
        off += v * stride[j];
    }
    return off;
}

int ep_ref_gathernd_any(const ep_op *op) {
    const ep_gathernd_params *p = (const ep_gathernd_params *)op->params;
    const ep_tensor *data = op->in[0], *ind = op->in[1], *y = op->out[0];
    const int b = p->batch_dims, q = ind->dims[ind->rank - 1];
    const size_t es = ep_dtype_size(data->dtype);
    if (rl_is_empty(y) || rl_is_empty(ind)) return EP_OK;
    int64_t nb = 1, per = 1, slice = 1;
    for (int i = 0; i < b; i++) nb *= data->dims[i];
    for (int i = b; i < ind->rank - 1; i++) per *= ind->dims[i];
    for (int i = b + q; i < data->rank; i++) slice *= data->dims[i];
    int64_t stride[EP_MAX_RANK];
    for (int j = q - 1; j >= 0; j--) stride[j] = j == q - 1 ? slice : stride[j + 1] * data->dims[b + j + 1];
    const int64_t bstride = stride[0] * data->dims[b];
    for (int64_t t = 0; t < nb * per; t++)
        if (nd_offset(ind, t, q, data->dims + b, stride) < 0) return EP_ERR_RUN_INDEX;
    char *d = (char *)y->data;
    for (int64_t t = 0; t < nb * per; t++) {
        const int64_t off = (t / per) * bstride + nd_offset(ind, t, q, data->dims + b, stride);
        memcpy(d + t * slice * (int64_t)es, (const char *)data->data + off * (int64_t)es, (size_t)(slice * (int64_t)es));
    }
    return EP_OK;
}

#define SCATTER_LOOP(T, U)                                                                    \
    do {                                                                                      \
        T *dd = (T *)y->data + off;                                                           \
        const T *uu = (const T *)upd->data + t * slice;                                       \
        for (int64_t e = 0; e < slice; e++) {                                                 \
            switch (p->reduction) {                                                           \
            case EP_SCATTER_ADD: dd[e] = (T)(U)((U)dd[e] + (U)uu[e]); break;                  \
            case EP_SCATTER_MUL: dd[e] = (T)(U)((U)dd[e] * (U)uu[e]); break;                  \
            case EP_SCATTER_MAX: dd[e] = uu[e] > dd[e] ? uu[e] : dd[e]; break;                \
            default: dd[e] = uu[e] < dd[e] ? uu[e] : dd[e]; break;                            \
            }                                                                                 \
        }                                                                                     \
    } while (0)

int ep_ref_scatternd_any(const ep_op *op) {
    const ep_scatternd_params *p = (const ep_scatternd_params *)op->params;
    const ep_tensor *data = op->in[0], *ind = op->in[1], *upd = op->in[2], *y = op->out[0];
    const int q = ind->dims[ind->rank - 1];
    const size_t es = ep_dtype_size(data->dtype);
    if (rl_is_empty(y)) return EP_OK;
    memcpy(y->data, data->data, (size_t)(rb_count(y) * (int64_t)es));
    if (rl_is_empty(ind)) return EP_OK;
    int64_t n = 1, slice = 1;
    for (int i = 0; i < ind->rank - 1; i++) n *= ind->dims[i];
    for (int i = q; i < data->rank; i++) slice *= data->dims[i];
    int64_t stride[EP_MAX_RANK];
    for (int j = q - 1; j >= 0; j--) stride[j] = j == q - 1 ? slice : stride[j + 1] * data->dims[j + 1];
    for (int64_t t = 0; t < n; t++)
        if (nd_offset(ind, t, q, data->dims, stride) < 0) return EP_ERR_RUN_INDEX;
    for (int64_t t = 0; t < n; t++) {
        const int64_t off = nd_offset(ind, t, q, data->dims, stride);
        if (p->reduction == EP_SCATTER_NONE) {
            memcpy((char *)y->data + off * (int64_t)es, (const char *)upd->data + t * slice * (int64_t)es,
                   (size_t)(slice * (int64_t)es));
        } else if (data->dtype == EP_DTYPE_F32) {
            float *dd = (float *)y->data + off;
            const float *uu = (const float *)upd->data + t * slice;
            for (int64_t e = 0; e < slice; e++) {
                switch (p->reduction) {
                case EP_SCATTER_ADD: dd[e] += uu[e]; break;
                case EP_SCATTER_MUL: dd[e] *= uu[e]; break;
                case EP_SCATTER_MAX: dd[e] = uu[e] > dd[e] ? uu[e] : dd[e]; break;
                default: dd[e] = uu[e] < dd[e] ? uu[e] : dd[e]; break;
                }
            }
        } else if (data->dtype == EP_DTYPE_I32) {
            SCATTER_LOOP(int32_t, uint32_t);
        } else {
            SCATTER_LOOP(int64_t, uint64_t);
        }
    }
    return EP_OK;
}
