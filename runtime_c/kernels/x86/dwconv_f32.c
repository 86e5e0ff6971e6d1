/* AVX2+FMA depthwise CONV2D (variant DEPTHWISE): kernels/dwconv_tmpl.h over 8-lane ymm vectors, rows in blocks of
 * 32 columns (4 accumulators), 8-column vectors and a masked tail; 3x3 kernels with the 9 weights in registers
 * (16- and 8-column blocks); the stride-2 phase split de-interleaves with shuffles. The NEON kernel runs the same
 * template over q registers. */
#include "dw_common.h"
#include "x86.h"
#include "x86_act.h"

#define DV __m256
#define DV_N 8
#define DV_ZERO() _mm256_setzero_ps()
#define DV_SET1(f) _mm256_set1_ps(f)
#define DV_LD(p) _mm256_loadu_ps(p)
#define DV_ST(p, v) _mm256_storeu_ps((p), (v))
#define DW_W __m256
#define DW_WLD(p) _mm256_broadcast_ss(p)
#define DV_FMA(acc, w, x) _mm256_fmadd_ps((w), (x), (acc))
#define DW_ACT_VEC(act) x86_act_vec(act)

typedef struct dw_tail {
    __m256i mask;   /* the lanes of the last partial vector of a row: OW % 8 */
} dw_tail;
static void dw_tail_init(dw_tail *t, int64_t OW) { t->mask = x86_mask8((int)(OW % 8)); }

/* row[i] = src[2i], 8 at a time: two loads, the even elements of each 128-bit half, the halves in order */
static int64_t dw_fill_s2(float *row, const float *src, int64_t i0, int64_t i1, int64_t avail) {
    int64_t i = i0;
    for (; i + 8 <= i1 && 2 * i + 16 <= avail; i += 8) {
        const __m256 v0 = _mm256_loadu_ps(src + 2 * i), v1 = _mm256_loadu_ps(src + 2 * i + 8);
        const __m256 ev = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0));
        _mm256_storeu_ps(row + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8)));
    }
    return i;
}

static inline __attribute__((always_inline)) __m256 dw_epi_m(__m256 acc, __m256 bias, const float *r, __m256i m,
                                                            int tail, const ep_conv2d_params *p) {
    acc = _mm256_add_ps(acc, bias);
    if (r) acc = _mm256_add_ps(acc, tail ? _mm256_maskload_ps(r, m) : _mm256_loadu_ps(r));
    return x86_act8(p->act, p->act_alpha, p->act_beta, acc);
}

/* 3x3 taps with the weights in registers: 16- and 8-column blocks and a masked tail per output row. */
static void dw_rows_3x3(const float *pad, const float *wc, __m256 bias, float *y, const float *res, int64_t OH,
                        int64_t OW, int64_t row_step, int64_t kh_step, const int64_t *kwo, __m256i tail_mask,
                        const ep_conv2d_params *p) {
    const __m256 w0 = _mm256_broadcast_ss(wc + 0), w1 = _mm256_broadcast_ss(wc + 1), w2 = _mm256_broadcast_ss(wc + 2);
    const __m256 w3 = _mm256_broadcast_ss(wc + 3), w4 = _mm256_broadcast_ss(wc + 4), w5 = _mm256_broadcast_ss(wc + 5);
    const __m256 w6 = _mm256_broadcast_ss(wc + 6), w7 = _mm256_broadcast_ss(wc + 7), w8 = _mm256_broadcast_ss(wc + 8);
    const int64_t o0 = kwo[0], o1 = kwo[1], o2 = kwo[2];
#define DW_TAPS(acc, off)                                                                               \
    acc = _mm256_mul_ps(w0, _mm256_loadu_ps(r0 + o0 + (off)));                                          \
    acc = _mm256_fmadd_ps(w1, _mm256_loadu_ps(r0 + o1 + (off)), acc);                                   \
    acc = _mm256_fmadd_ps(w2, _mm256_loadu_ps(r0 + o2 + (off)), acc);                                   \
    acc = _mm256_fmadd_ps(w3, _mm256_loadu_ps(r1 + o0 + (off)), acc);                                   \
    acc = _mm256_fmadd_ps(w4, _mm256_loadu_ps(r1 + o1 + (off)), acc);                                   \
    acc = _mm256_fmadd_ps(w5, _mm256_loadu_ps(r1 + o2 + (off)), acc);                                   \
    acc = _mm256_fmadd_ps(w6, _mm256_loadu_ps(r2 + o0 + (off)), acc);                                   \
    acc = _mm256_fmadd_ps(w7, _mm256_loadu_ps(r2 + o1 + (off)), acc);                                   \
    acc = _mm256_fmadd_ps(w8, _mm256_loadu_ps(r2 + o2 + (off)), acc)
    for (int64_t oh = 0; oh < OH; oh++) {
        const float *r0 = pad + oh * row_step, *r1 = r0 + kh_step, *r2 = r1 + kh_step;
        float *yr = y + oh * OW;
        const float *rr = res ? res + oh * OW : NULL;
        int64_t ow = 0;
        for (; ow + 16 <= OW; ow += 16) {
            __m256 a0, a1;
            DW_TAPS(a0, ow);
            DW_TAPS(a1, ow + 8);
            _mm256_storeu_ps(yr + ow, dw_epi_m(a0, bias, rr ? rr + ow : NULL, tail_mask, 0, p));
            _mm256_storeu_ps(yr + ow + 8, dw_epi_m(a1, bias, rr ? rr + ow + 8 : NULL, tail_mask, 0, p));
        }
        for (; ow < OW; ow += 8) {
            const int tail = OW - ow < 8;
            __m256 a0;
            DW_TAPS(a0, ow);
            a0 = dw_epi_m(a0, bias, rr ? rr + ow : NULL, tail_mask, tail, p);
            if (tail)
                _mm256_maskstore_ps(yr + ow, tail_mask, a0);
            else
                _mm256_storeu_ps(yr + ow, a0);
        }
    }
#undef DW_TAPS
}

static inline __attribute__((always_inline)) __m256 dw_epi(__m256 acc, __m256 bias, const float *r,
                                                          const ep_conv2d_params *p) {
    return dw_epi_m(acc, bias, r, _mm256_setzero_si256(), 0, p);
}
static void dw_store_part(float *y, const float *r, __m256 acc, __m256 bias, int64_t n, const dw_tail *t,
                          const ep_conv2d_params *p) {
    (void)n;   /* n == OW % 8: t->mask */
    _mm256_maskstore_ps(y, t->mask, dw_epi_m(acc, bias, r, t->mask, 1, p));
}

static int dw_plane_special(const float *pad, const float *wc, __m256 bias, float *y, const float *res, int64_t OH,
                            int64_t OW, int64_t PW, const int64_t *kwo, int small, const dw_tail *t,
                            const ep_conv2d_params *p) {
    if (p->kernel[0] != 3 || p->kernel[1] != 3 || !small) return 0;
    const int64_t sw = p->stride[1];
    dw_rows_3x3(pad, wc, bias, y, res, OH, OW, p->stride[0] * sw * PW, p->dilation[0] * sw * PW, kwo, t->mask, p);
    return 1;
}

#include "dwconv_tmpl.h"
#include "invres_tmpl.h"

/* ---- CONV2D DW_C8 and DIRECT (kernels/conv_direct_tmpl.h): a pixel's 8 channels are one ymm ---- */
#define C8 __m256
#define C8_ZERO() _mm256_setzero_ps()
#define C8_LD(p) _mm256_loadu_ps(p)
#define C8_ST(p, v) _mm256_storeu_ps((p), (v))
#define C8_FMA(acc, w, x) _mm256_fmadd_ps((w), (x), (acc))
#define C8_ADD(a, b) _mm256_add_ps((a), (b))
#define C8_ACT(v, p) x86_act8((p)->act, (p)->act_alpha, (p)->act_beta, (v))

static int64_t c8_fill_fast(float *dst, const float *const *src, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v[8];
        for (int c = 0; c < 8; c++) v[c] = _mm256_loadu_ps(src[c] + i);
        x86_tr8(v);
        for (int k = 0; k < 8; k++) _mm256_storeu_ps(dst + (i + k) * 8, v[k]);
    }
    return i;
}

static int64_t c8_scatter_fast(float *const *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v[8];
        for (int k = 0; k < 8; k++) v[k] = _mm256_loadu_ps(src + (i + k) * 8);
        x86_tr8(v);
        for (int c = 0; c < 8; c++) _mm256_storeu_ps(dst[c] + i, v[c]);
    }
    return i;
}

#define DV_ACT(v, p) x86_act8((p)->act, (p)->act_alpha, (p)->act_beta, (v))
#include "conv_direct_tmpl.h"
