/* MATMUL batch broadcasting shared by the reference (kernels/ref/matmul_f32.c) and the ISA kernels:
 * output batch bi (row-major over Y.dims[:-2]) reads A's and B's matrix a_mat / b_mat, the batch dims
 * aligned on the right, an extent-1 dim always reading index 0. */
#ifndef EP_MATMUL_BCAST_H
#define EP_MATMUL_BCAST_H
#include "ep_kernel.h"

static inline void ep_matmul_batch(const ep_tensor *at, const ep_tensor *bt, const ep_tensor *yt, int64_t bi,
                                   int64_t *a_mat, int64_t *b_mat) {
    const int ra = at->rank, rb = bt->rank, ro = yt->rank;
    int64_t rem = bi, am = 0, bm = 0, a_stride = 1, b_stride = 1;
    for (int d = ro - 3; d >= 0; d--) {
        const int64_t idx = rem % yt->dims[d];
        rem /= yt->dims[d];
        const int ia = d - (ro - ra), ib = d - (ro - rb);
        const int64_t da = ia >= 0 ? at->dims[ia] : 1, db = ib >= 0 ? bt->dims[ib] : 1;
        if (da != 1) am += idx * a_stride;
        if (db != 1) bm += idx * b_stride;
        a_stride *= da;
        b_stride *= db;
    }
    *a_mat = am;
    *b_mat = bm;
}

/* ATTENTION's MASK (broadcast to S[batch..., M, N], aligned on the right): the offset of row i of output
 * batch bi (Y's batch dims are S's), and through *col the step between its columns (0 when MASK's last
 * extent is 1). */
static inline int64_t ep_attention_mask_row(const ep_tensor *mt, const ep_tensor *yt, int64_t bi, int64_t i,
                                            int64_t *col) {
    const int rm = mt->rank, ro = yt->rank;
    int64_t off = 0, stride = 1, rem = bi;
    *col = 0;
    if (rm >= 1) {
        *col = mt->dims[rm - 1] == 1 ? 0 : 1;
        stride = mt->dims[rm - 1];
    }
    if (rm >= 2) {
        if (mt->dims[rm - 2] != 1) off += i * stride;
        stride *= mt->dims[rm - 2];
    }
    for (int d = ro - 3; d >= 0 && d - (ro - rm) >= 0; d--) {
        const int64_t idx = rem % yt->dims[d], dm = mt->dims[d - (ro - rm)];
        rem /= yt->dims[d];
        if (dm != 1) off += idx * stride;
        stride *= dm;
    }
    return off;
}

#endif
