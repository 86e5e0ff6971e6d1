/* Odometer over an output shape with up to three broadcast operands (numpy rules, ranks aligned
 * right; stride 0 where an operand is broadcast). Static helpers, no state beyond the iterator. */
#ifndef EP_REF_BCAST_H
#define EP_REF_BCAST_H
#include <stdint.h>
#include "ep_kernel.h"

#define RB_MAX 3
typedef struct rb_iter {
    int rank, k;
    int64_t n[EP_MAX_RANK];
    int64_t st[RB_MAX][EP_MAX_RANK];
    int64_t idx[EP_MAX_RANK];
    int64_t off[RB_MAX];        /* element offset of each operand at the current output element */
} rb_iter;

static inline void rb_begin(rb_iter *it, const ep_tensor *y, int k, const ep_tensor *const *src) {
    const int r = y->rank;
    it->rank = r;
    it->k = k;
    for (int i = 0; i < r; i++) {
        it->n[i] = y->dims[i];
        it->idx[i] = 0;
    }
    for (int j = 0; j < k; j++) {
        const ep_tensor *t = src[j];
        int64_t s = 1;
        for (int i = r - 1; i >= 0; i--) {
            const int ti = i - (r - t->rank);
            it->st[j][i] = (ti < 0 || t->dims[ti] == 1) ? 0 : s;
            if (ti >= 0) s *= t->dims[ti];
        }
        it->off[j] = 0;
    }
}

/* Advances to the next output element (row-major). */
static inline void rb_next(rb_iter *it) {
    for (int i = it->rank - 1; i >= 0; i--) {
        for (int j = 0; j < it->k; j++) it->off[j] += it->st[j][i];
        if (++it->idx[i] < it->n[i]) return;
        for (int j = 0; j < it->k; j++) it->off[j] -= it->st[j][i] * it->n[i];
        it->idx[i] = 0;
    }
}

/* Element count of y, 0 when any extent is 0 (never overflows: shapes are validated). */
static inline int64_t rb_count(const ep_tensor *y) {
    int64_t n = 1;
    for (int i = 0; i < y->rank; i++) {
        if (y->dims[i] == 0) return 0;
        n *= y->dims[i];
    }
    return n;
}

/* Loads element i of an integer-typed (or bool) buffer as int64: U16 and U32 zero-extended, U64 as
 * its bits (values >= 2^63 read negative: callers that order or convert them use rb_load_u64). */
static inline int64_t rb_load_i(const void *p, uint8_t dt, int64_t i) {
    switch (dt) {
    case EP_DTYPE_I8: return ((const int8_t *)p)[i];
    case EP_DTYPE_U8: return ((const uint8_t *)p)[i];
    case EP_DTYPE_BOOL: return ((const uint8_t *)p)[i] != 0;
    case EP_DTYPE_I16: return ((const int16_t *)p)[i];
    case EP_DTYPE_I32: return ((const int32_t *)p)[i];
    case EP_DTYPE_I64: case EP_DTYPE_U64: return ((const int64_t *)p)[i];
    case EP_DTYPE_U16: return ((const uint16_t *)p)[i];
    case EP_DTYPE_U32: return ((const uint32_t *)p)[i];
    default: return 0;
    }
}

#endif
