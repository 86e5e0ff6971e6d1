/* AVX2+FMA SOFTMAX / LOGSOFTMAX f32 (variant 0, any axis; kernels/softmax_tmpl.h drives the rows and the
 * threads); mirrors kernels/neon/softmax_f32.c.
 *
 * Per row, the reference's three passes: max (NaN anywhere makes the whole row NaN, as in the
 * reference), then exp(x - max) with x86_exp8 summed in double (each 8-float vector widened to two
 * 4-double halves), then the scale (softmax: e * (1 / sum) in double, rounded once, as the reference)
 * or x - max - log(sum) (logsoftmax: the reference's float operations). The softmax stores e in Y on
 * the second pass and scales it in place on the third (so exp runs once per element, not twice).
 * The innermost axis runs 8 elements per vector with a masked tail; any other axis runs 8 adjacent
 * columns per vector (one column per lane), masked when fewer remain.
 * Accuracy against the reference: x86_exp8 is within ~2 ulp of expf and the double sums differ only by
 * order, so softmax outputs are within ~3e-7 relative (the test allows 2e-6 relative + 1e-37 absolute,
 * as for the vector SIGMOID), logsoftmax within 2e-6 * (|y| + 1). */
#include <immintrin.h>
#include <math.h>
#include "x86.h"
#include "x86_act.h"
#include "reduce_common.h"

#define SM_INLINE static inline __attribute__((always_inline))

/* (float)(e * inv) lane by lane, the product in double */
SM_INLINE __m256 sm_scale(__m256 e, __m256d inv_lo, __m256d inv_hi) {
    const __m128 lo = _mm256_cvtpd_ps(_mm256_mul_pd(x86_lo_pd(e), inv_lo));
    const __m128 hi = _mm256_cvtpd_ps(_mm256_mul_pd(x86_hi_pd(e), inv_hi));
    return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}

static void sm_row(float *y, const float *x, int64_t n, int log_mode) {
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    const int64_t nv = n & ~(int64_t)7;
    const int tail = (int)(n - nv);
    const __m256i tm = x86_mask8(tail);
    /* pass 1: max, NaN noted apart (max_ps skips a NaN input as the reference's '>' does not) */
    __m256 m8 = ninf, nan8 = _mm256_setzero_ps();
    for (int64_t i = 0; i < nv; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        nan8 = _mm256_or_ps(nan8, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        m8 = _mm256_max_ps(v, m8);
    }
    if (tail) {
        const __m256 v = _mm256_blendv_ps(ninf, _mm256_maskload_ps(x + nv, tm), _mm256_castsi256_ps(tm));
        nan8 = _mm256_or_ps(nan8, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        m8 = _mm256_max_ps(v, m8);
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float m = _mm256_movemask_ps(nan8) ? NAN : _mm_cvtss_f32(m4);
    const __m256 mv = _mm256_set1_ps(m);
    /* pass 2: sum of exp(x - m) in double; softmax keeps e in y */
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    for (int64_t i = 0; i < nv; i += 8) {
        const __m256 e = x86_exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
        if (!log_mode) _mm256_storeu_ps(y + i, e);
        s0 = _mm256_add_pd(s0, x86_lo_pd(e));
        s1 = _mm256_add_pd(s1, x86_hi_pd(e));
    }
    if (tail) {
        const __m256 e = _mm256_and_ps(x86_exp8(_mm256_sub_ps(_mm256_maskload_ps(x + nv, tm), mv)),
                                       _mm256_castsi256_ps(tm));
        if (!log_mode) _mm256_maskstore_ps(y + nv, tm, e);
        s0 = _mm256_add_pd(s0, x86_lo_pd(e));
        s1 = _mm256_add_pd(s1, x86_hi_pd(e));
    }
    const double sum = x86_hsum_pd(_mm256_add_pd(s0, s1));
    /* pass 3 */
    if (log_mode) {
        const __m256 ls = _mm256_set1_ps((float)log(sum));
        for (int64_t i = 0; i < nv; i += 8)
            _mm256_storeu_ps(y + i, _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv), ls));
        if (tail) _mm256_maskstore_ps(y + nv, tm, _mm256_sub_ps(_mm256_sub_ps(_mm256_maskload_ps(x + nv, tm), mv), ls));
        return;
    }
    const __m256d inv = _mm256_set1_pd(1.0 / sum);
    for (int64_t i = 0; i < nv; i += 8) _mm256_storeu_ps(y + i, sm_scale(_mm256_loadu_ps(y + i), inv, inv));
    if (tail) _mm256_maskstore_ps(y + nv, tm, sm_scale(_mm256_maskload_ps(y + nv, tm), inv, inv));
}

/* w (1..8) adjacent columns, one per lane; full: w == 8 (plain loads). */
SM_INLINE void sm_cols_n(float *y, const float *x, int64_t n, int64_t inner, __m256i tm, const int full,
                         int log_mode) {
#define SM_LD(p) (full ? _mm256_loadu_ps(p) : _mm256_maskload_ps((p), tm))
#define SM_ST(p, v) (full ? _mm256_storeu_ps((p), (v)) : _mm256_maskstore_ps((p), tm, (v)))
    __m256 m8 = _mm256_set1_ps(-INFINITY), nan8 = _mm256_setzero_ps();
    for (int64_t k = 0; k < n; k++) {
        const __m256 v = SM_LD(x + k * inner);
        nan8 = _mm256_or_ps(nan8, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        m8 = _mm256_max_ps(v, m8);
    }
    m8 = _mm256_blendv_ps(m8, _mm256_set1_ps(NAN), nan8);
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    for (int64_t k = 0; k < n; k++) {
        const __m256 e = x86_exp8(_mm256_sub_ps(SM_LD(x + k * inner), m8));
        if (!log_mode) SM_ST(y + k * inner, e);
        s0 = _mm256_add_pd(s0, x86_lo_pd(e));
        s1 = _mm256_add_pd(s1, x86_hi_pd(e));
    }
    if (log_mode) {
        double s[8];
        float l[8];
        _mm256_storeu_pd(s, s0);
        _mm256_storeu_pd(s + 4, s1);
        for (int i = 0; i < 8; i++) l[i] = (float)log(s[i]);
        const __m256 ls = _mm256_loadu_ps(l);
        for (int64_t k = 0; k < n; k++)
            SM_ST(y + k * inner, _mm256_sub_ps(_mm256_sub_ps(SM_LD(x + k * inner), m8), ls));
        return;
    }
    const __m256d one = _mm256_set1_pd(1.0), i0 = _mm256_div_pd(one, s0), i1 = _mm256_div_pd(one, s1);
    for (int64_t k = 0; k < n; k++) SM_ST(y + k * inner, sm_scale(SM_LD(y + k * inner), i0, i1));
#undef SM_LD
#undef SM_ST
}

static void sm_cols(float *y, const float *x, int64_t n, int64_t inner, int w, int log_mode) {
    if (w == 8)
        sm_cols_n(y, x, n, inner, x86_mask8(8), 1, log_mode);
    else
        sm_cols_n(y, x, n, inner, x86_mask8(w), 0, log_mode);
}

/* one softmax row for ATTENTION (kernels/attention_tmpl.h) */
void ep_x86_softmax_row(float *y, const float *x, int64_t n) { sm_row(y, x, n, 0); }

#define SM_LANES 8
#include "softmax_tmpl.h"

/* REDUCE MAX / MIN over contiguous runs (kernels/reduce_common.h), 16 lanes at a time; NaN is tracked
 * apart, so MAXPS / MINPS lanes see none. */
static int x86_minmax_run(int kind, const float *p, int64_t len, float *out) {
    const int mx = kind == EP_REDUCE_MAX;
    __m256 m0 = _mm256_set1_ps(mx ? -INFINITY : INFINITY), m1 = m0, un = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 16 <= len; k += 16) {
        const __m256 v0 = _mm256_loadu_ps(p + k), v1 = _mm256_loadu_ps(p + k + 8);
        un = _mm256_or_ps(un, _mm256_or_ps(_mm256_cmp_ps(v0, v0, _CMP_UNORD_Q), _mm256_cmp_ps(v1, v1, _CMP_UNORD_Q)));
        m0 = mx ? _mm256_max_ps(m0, v0) : _mm256_min_ps(m0, v0);
        m1 = mx ? _mm256_max_ps(m1, v1) : _mm256_min_ps(m1, v1);
    }
    m0 = mx ? _mm256_max_ps(m0, m1) : _mm256_min_ps(m0, m1);
    float l[8];
    _mm256_storeu_ps(l, m0);
    float r = l[0];
    for (int j = 1; j < 8; j++) r = mx ? (l[j] > r ? l[j] : r) : (l[j] < r ? l[j] : r);
    return ep_minmax_finish(kind, p, k, len, r, _mm256_movemask_ps(un) != 0, out);
}

int ep_x86_reduce_f32(const ep_op *op) { return ep_reduce_minmax(op, x86_minmax_run); }
