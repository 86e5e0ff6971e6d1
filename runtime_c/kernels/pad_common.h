/* PAD's amounts per dim (plan_format.h ep_pad_params): the pads slots, or for a side marked
 * EP_PAD_BEGIN_TO_MULTIPLE / EP_PAD_END_TO_MULTIPLE (1.8) the pad that brings the dim to a multiple of the
 * slot's value. The shape function checks the fields first (ep_pad_check_mode); the kernel then reads the
 * same amounts at the run's extents. */
#ifndef EP_KERNELS_PAD_COMMON_H
#define EP_KERNELS_PAD_COMMON_H
#include "ep_kernel.h"

/* EP_OK when mode's bits are valid for rank r: a known EP_PAD_* value, TO_MULTIPLE bits only for dims < r,
 * at most one side per dim, that side's multiple in [1, EP_PAD_MAX_MULTIPLE] and the other side >= 0. */
static inline int ep_pad_check_mode(const ep_pad_params *p, int r) {
    const uint32_t mode = (uint32_t)p->mode;
    const uint32_t base = mode & EP_PAD_MODE_MASK, begin = (mode >> 8) & 0xFFu, end = (mode >> 16) & 0xFFu;
    if (base > EP_PAD_WRAP || (mode >> 24) != 0) return EP_ERR_PLAN_PARAMS;
    if ((begin | end) >> r || (begin & end)) return EP_ERR_PLAN_PARAMS;
    for (int i = 0; i < r; i++) {
        if (!(((begin | end) >> i) & 1u)) continue;
        const int32_t m = (begin >> i) & 1u ? p->pads[i] : p->pads[r + i];
        const int32_t o = (begin >> i) & 1u ? p->pads[r + i] : p->pads[i];
        if (m < 1 || m > EP_PAD_MAX_MULTIPLE || o < 0) return EP_ERR_PLAN_PARAMS;
    }
    return EP_OK;
}

/* begin[i], end[i] for X's extents (ep_pad_check_mode passed): |values| < 2^31 + 2^24. */
static inline void ep_pad_amounts(const ep_pad_params *p, const ep_tensor *x, int64_t *begin, int64_t *end) {
    const uint32_t mode = (uint32_t)p->mode;
    const int r = x->rank;
    for (int i = 0; i < r; i++) {
        begin[i] = p->pads[i];
        end[i] = p->pads[r + i];
        if ((mode >> (8 + i)) & 1u) begin[i] = (p->pads[i] - ((int64_t)x->dims[i] + end[i]) % p->pads[i]) % p->pads[i];
        if ((mode >> (16 + i)) & 1u) end[i] = (p->pads[r + i] - ((int64_t)x->dims[i] + begin[i]) % p->pads[r + i]) % p->pads[r + i];
    }
}

static inline int ep_pad_base_mode(const ep_pad_params *p) { return p->mode & EP_PAD_MODE_MASK; }
#endif
