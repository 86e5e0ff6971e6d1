/* NEON depthwise CONV2D (variant DEPTHWISE): kernels/dwconv_tmpl.h over 4-lane q registers, rows in blocks of 16
 * columns (4 accumulators), 4-column vectors and a last partial vector computed in full (the padded rows are
 * ceil(OW/16)*16 wide) and stored through a local copy; tap weights by scalar (FMLA by element). The same
 * scratch layout and order of operations as the AVX2 kernel. */
#include <arm_neon.h>
#include <string.h>
#include "dw_common.h"
#include "neon.h"
#include "neon_act.h"

#define DV float32x4_t
#define DV_N 4
#define DV_ZERO() vdupq_n_f32(0.0f)
#define DV_SET1(f) vdupq_n_f32(f)
#define DV_LD(p) vld1q_f32(p)
#define DV_ST(p, v) vst1q_f32((p), (v))
#define DW_W float
#define DW_WLD(p) (*(p))
#define DV_FMA(acc, w, x) vfmaq_n_f32((acc), (x), (w))
#define DW_ACT_VEC(act) neon_act_vector(act)

typedef struct dw_tail {
    int unused;
} dw_tail;
static void dw_tail_init(dw_tail *t, int64_t OW) { (void)OW, t->unused = 0; }

static int64_t dw_fill_s2(float *row, const float *src, int64_t i0, int64_t i1, int64_t avail) {
    (void)row, (void)src, (void)i1, (void)avail;
    return i0;   /* the scalar loop of the driver */
}

NEON_INLINE float32x4_t dw_epi(float32x4_t acc, float32x4_t bias, const float *r, const ep_conv2d_params *p) {
    acc = vaddq_f32(acc, bias);
    if (r) acc = vaddq_f32(acc, vld1q_f32(r));
    return neon_act4(p->act, p->act_alpha, p->act_beta, acc);   /* identity for non-vector kinds */
}

/* the tail: residual and result through a local vector */
static void dw_store_part(float *y, const float *r, float32x4_t acc, float32x4_t bias, int64_t n, const dw_tail *t,
                          const ep_conv2d_params *p) {
    (void)t;
    float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (r) memcpy(v, r, (size_t)n * 4);
    vst1q_f32(v, dw_epi(acc, bias, r ? v : NULL, p));
    memcpy(y, v, (size_t)n * 4);
}

static int dw_plane_special(const float *pad, const float *wc, float32x4_t bias, float *y, const float *res,
                            int64_t OH, int64_t OW, int64_t PW, const int64_t *kwo, int small, const dw_tail *t,
                            const ep_conv2d_params *p) {
    (void)pad, (void)wc, (void)bias, (void)y, (void)res, (void)OH, (void)OW, (void)PW, (void)kwo, (void)small;
    (void)t, (void)p;
    return 0;
}

#include "dwconv_tmpl.h"
#include "invres_tmpl.h"
