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

/* ---- CONV2D DW_C8 and DIRECT (kernels/conv_direct_tmpl.h): a pixel's 8 channels are two q registers ---- */
typedef struct c8v {
    float32x4_t lo, hi;
} c8v;
#define C8 c8v
NEON_INLINE c8v c8_ld(const float *p) { return (c8v){vld1q_f32(p), vld1q_f32(p + 4)}; }
NEON_INLINE void c8_st(float *p, c8v v) { vst1q_f32(p, v.lo), vst1q_f32(p + 4, v.hi); }
NEON_INLINE c8v c8_fma(c8v a, c8v w, c8v x) { return (c8v){vfmaq_f32(a.lo, w.lo, x.lo), vfmaq_f32(a.hi, w.hi, x.hi)}; }
NEON_INLINE c8v c8_add(c8v a, c8v b) { return (c8v){vaddq_f32(a.lo, b.lo), vaddq_f32(a.hi, b.hi)}; }
NEON_INLINE c8v c8_act_v(c8v v, const ep_conv2d_params *p) {
    return (c8v){neon_act4(p->act, p->act_alpha, p->act_beta, v.lo), neon_act4(p->act, p->act_alpha, p->act_beta, v.hi)};
}
#define C8_ZERO() ((c8v){vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)})
#define C8_LD(p) c8_ld(p)
#define C8_ST(p, v) c8_st((p), (v))
#define C8_FMA(acc, w, x) c8_fma((acc), (w), (x))
#define C8_ADD(a, b) c8_add((a), (b))
#define C8_ACT(v, p) c8_act_v((v), (p))

static int64_t c8_fill_fast(float *dst, const float *const *src, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int h = 0; h < 8; h += 4) {   /* channels h..h+3 of pixels i..i+3 */
            float32x4_t v[4] = {vld1q_f32(src[h] + i), vld1q_f32(src[h + 1] + i), vld1q_f32(src[h + 2] + i),
                                vld1q_f32(src[h + 3] + i)};
            neon_tr4(v);
            for (int k = 0; k < 4; k++) vst1q_f32(dst + (i + k) * 8 + h, v[k]);
        }
    return i;
}

static int64_t c8_scatter_fast(float *const *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int h = 0; h < 8; h += 4) {
            float32x4_t v[4] = {vld1q_f32(src + i * 8 + h), vld1q_f32(src + (i + 1) * 8 + h),
                                vld1q_f32(src + (i + 2) * 8 + h), vld1q_f32(src + (i + 3) * 8 + h)};
            neon_tr4(v);
            for (int k = 0; k < 4; k++) vst1q_f32(dst[h + k] + i, v[k]);
        }
    return i;
}

#define DV_ACT(v, p) neon_act4((p)->act, (p)->act_alpha, (p)->act_beta, (v))
#include "conv_direct_tmpl.h"
