/* UNIQUE reference kernel, the dtypes of ep_unique_params (plan_format.h).
 *
 * The D = X.dims[axis] slices of X along axis (slice i: X[o, i, n] for every outer index o and inner index
 * n, compared lexicographically in that row-major order) are ordered by a stable bottom-up merge sort of
 * their indices (scratch: the permutation and the merge buffer, 2 D int64). Elements compare as numbers:
 * integers exactly (U64 unsigned, the others widened to int64), F32 ascending with -0 == +0 and every NaN
 * equal and after every number (numpy.unique's order). Equal slices form a group; its first occurrence is
 * the group's first index in the sorted order (the sort is stable).
 *   sorted 1: groups in ascending order; sorted 0: in the order of their first occurrences.
 *   Y[.., u, ..] = X's slice at the u-th group's first occurrence, Indices[u] that index, Counts[u] the
 *   group's size, InverseIndices[i] the group of slice i.
 * The group count U is data-dependent: on entry Y's axis extent (and Indices' and Counts' length) is the
 * capacity; more groups than that fail the run with EP_ERR_RUN_BOUND before any output is written. The
 * kernel writes U (and D for InverseIndices) into the output extents. */
#include <string.h>
#include "ep_ops.h"
#include "ref_bcast.h"
#include "ref_util.h"

typedef struct uq_slices {
    const void *x;
    uint8_t dt;
    int64_t outer, dim, inner;
} uq_slices;

/* Elements a and b of x (flat indices): -1, 0 or 1. */
static int uq_cmp_elem(const void *x, uint8_t dt, int64_t a, int64_t b) {
    if (dt == EP_DTYPE_F32) {
        const float va = ((const float *)x)[a], vb = ((const float *)x)[b];
        const int na = va != va, nb = vb != vb;
        if (na || nb) return na - nb;
        return (va > vb) - (va < vb);
    }
    if (dt == EP_DTYPE_U64) {
        const uint64_t va = ((const uint64_t *)x)[a], vb = ((const uint64_t *)x)[b];
        return (va > vb) - (va < vb);
    }
    const int64_t va = rb_load_i(x, dt, a), vb = rb_load_i(x, dt, b);
    return (va > vb) - (va < vb);
}

/* Slices i and j: -1, 0 or 1. */
static int uq_cmp(const uq_slices *s, int64_t i, int64_t j) {
    for (int64_t o = 0; o < s->outer; o++) {
        const int64_t bi = (o * s->dim + i) * s->inner, bj = (o * s->dim + j) * s->inner;
        for (int64_t n = 0; n < s->inner; n++) {
            const int c = uq_cmp_elem(s->x, s->dt, bi + n, bj + n);
            if (c) return c;
        }
    }
    return 0;
}

/* Stable sort of perm[0, n) by slice, tmp[0, n) the merge buffer. */
static void uq_sort(const uq_slices *s, int64_t *perm, int64_t *tmp, int64_t n) {
    int64_t *a = perm, *b = tmp;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            const int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) b[k++] = uq_cmp(s, a[j], a[i]) < 0 ? a[j++] : a[i++];
            while (i < mid) b[k++] = a[i++];
            while (j < hi) b[k++] = a[j++];
        }
        int64_t *t = a;
        a = b;
        b = t;
    }
    if (a != perm) memcpy(perm, a, (size_t)n * sizeof(int64_t));
}

int ep_ref_unique_any(const ep_op *op) {
    const ep_unique_params *p = (const ep_unique_params *)op->params;
    const ep_tensor *x = op->in[0];
    ep_tensor *y = op->out[0], *ti = op->out[1], *tv = op->out[2], *tc = op->out[3];
    const int axis = p->axis;
    uq_slices s = {x->data, x->dtype, 1, x->dims[axis], 1};
    rl_outer_inner(x, axis, &s.outer, &s.inner);
    const int64_t dim = s.dim;
    int64_t *perm = (int64_t *)op->scratch, *rep = perm + dim;
    int64_t *idx = (int64_t *)ti->data, *inv = (int64_t *)tv->data, *cnt = (int64_t *)tc->data;

    /* groups: rep[i] = the first occurrence of slice i's group */
    for (int64_t i = 0; i < dim; i++) perm[i] = i;
    uq_sort(&s, perm, rep, dim);
    int64_t groups = 0;
    for (int64_t j = 0, first = 0; j < dim; j++) {
        if (j == 0 || uq_cmp(&s, perm[j - 1], perm[j]) != 0) first = perm[j], groups++;
        rep[perm[j]] = first;
    }
    if (groups > y->dims[axis] || groups > ti->dims[0] || groups > tc->dims[0]) return EP_ERR_RUN_BOUND;

    if (p->sorted) {
        for (int64_t j = 0, u = -1; j < dim; j++) {
            if (j == 0 || rep[perm[j]] != rep[perm[j - 1]]) {
                u++;
                idx[u] = rep[perm[j]];
                cnt[u] = 0;
            }
            cnt[u]++;
            inv[perm[j]] = u;
        }
    } else {   /* perm[i] becomes the group number of first occurrence i, numbered as they occur */
        for (int64_t i = 0, u = 0; i < dim; i++) {
            if (rep[i] == i) {
                perm[i] = u;
                idx[u] = i;
                cnt[u++] = 0;
            }
            inv[i] = perm[rep[i]];
            cnt[inv[i]]++;
        }
    }

    const size_t slice = (size_t)s.inner * ep_dtype_size(x->dtype);
    const char *src = (const char *)x->data;
    char *dst = (char *)y->data;
    for (int64_t o = 0; o < s.outer; o++)
        for (int64_t u = 0; u < groups; u++)
            if (slice) memcpy(dst + (size_t)(o * groups + u) * slice, src + (size_t)(o * dim + idx[u]) * slice, slice);
    y->dims[axis] = (int32_t)groups;
    ti->dims[0] = (int32_t)groups;
    tc->dims[0] = (int32_t)groups;
    tv->dims[0] = (int32_t)dim;
    return EP_OK;
}
