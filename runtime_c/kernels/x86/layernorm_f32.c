/* AVX2 LAYERNORM f32 (variant 0; kernels/layernorm_tmpl.h drives the rows and the threads); mirrors
 * kernels/neon/layernorm_f32.c.
 *
 * The reference's numerics, vectorised: two passes in double (sum, then sum of squared deviations; each
 * 8-float vector widened to two 4-double halves, 4 accumulator chains), inv = 1 / sqrt(var + eps) in double, then
 * y = (float)((x - mean) * inv) * scale + bias with the subtraction and product in double and the
 * scale / bias in float (separate multiply and add, as the reference). Only the order of the double
 * sums differs from the reference, so results agree to about 1 ulp (the test allows 1e-6 relative). */
#include <immintrin.h>
#include <math.h>
#include "x86.h"
#include "x86_act.h"


static void ln_row(float *y, const float *x, const float *sc, const float *bi, int64_t n, double eps, float *mean_out,
                   float *inv_out) {
    const int64_t nv = n & ~(int64_t)7;
    __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;   /* 4 chains: the adds' latency */
    int64_t i0 = 0;
    for (; i0 + 16 <= nv; i0 += 16) {
        const __m256 v = _mm256_loadu_ps(x + i0), w = _mm256_loadu_ps(x + i0 + 8);
        a0 = _mm256_add_pd(a0, x86_lo_pd(v));
        a1 = _mm256_add_pd(a1, x86_hi_pd(v));
        a2 = _mm256_add_pd(a2, x86_lo_pd(w));
        a3 = _mm256_add_pd(a3, x86_hi_pd(w));
    }
    for (; i0 < nv; i0 += 8) {
        const __m256 v = _mm256_loadu_ps(x + i0);
        a0 = _mm256_add_pd(a0, x86_lo_pd(v));
        a1 = _mm256_add_pd(a1, x86_hi_pd(v));
    }
    double s = x86_hsum_pd(_mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)));
    for (int64_t i = nv; i < n; i++) s += x[i];
    const double mean = n ? s / (double)n : 0.0;
    const __m256d mv = _mm256_set1_pd(mean);
    a0 = a1 = a2 = a3 = _mm256_setzero_pd();
    for (i0 = 0; i0 + 16 <= nv; i0 += 16) {
        const __m256 v = _mm256_loadu_ps(x + i0), w = _mm256_loadu_ps(x + i0 + 8);
        const __m256d d0 = _mm256_sub_pd(x86_lo_pd(v), mv), d1 = _mm256_sub_pd(x86_hi_pd(v), mv);
        const __m256d d2 = _mm256_sub_pd(x86_lo_pd(w), mv), d3 = _mm256_sub_pd(x86_hi_pd(w), mv);
        a0 = _mm256_add_pd(a0, _mm256_mul_pd(d0, d0));
        a1 = _mm256_add_pd(a1, _mm256_mul_pd(d1, d1));
        a2 = _mm256_add_pd(a2, _mm256_mul_pd(d2, d2));
        a3 = _mm256_add_pd(a3, _mm256_mul_pd(d3, d3));
    }
    for (; i0 < nv; i0 += 8) {
        const __m256 v = _mm256_loadu_ps(x + i0);
        const __m256d d0 = _mm256_sub_pd(x86_lo_pd(v), mv), d1 = _mm256_sub_pd(x86_hi_pd(v), mv);
        a0 = _mm256_add_pd(a0, _mm256_mul_pd(d0, d0));
        a1 = _mm256_add_pd(a1, _mm256_mul_pd(d1, d1));
    }
    double v = x86_hsum_pd(_mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)));
    for (int64_t i = nv; i < n; i++) v += (x[i] - mean) * (x[i] - mean);
    const double var = n ? v / (double)n : 0.0;
    const double inv = 1.0 / sqrt(var + eps);
    const __m256d iv = _mm256_set1_pd(inv);
    for (int64_t i = 0; i < nv; i += 8) {
        const __m256 xv = _mm256_loadu_ps(x + i);
        const __m128 t0 = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_sub_pd(x86_lo_pd(xv), mv), iv));
        const __m128 t1 = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_sub_pd(x86_hi_pd(xv), mv), iv));
        __m256 t = _mm256_mul_ps(_mm256_insertf128_ps(_mm256_castps128_ps256(t0), t1, 1), _mm256_loadu_ps(sc + i));
        if (bi) t = _mm256_add_ps(t, _mm256_loadu_ps(bi + i));
        _mm256_storeu_ps(y + i, t);
    }
    for (int64_t i = nv; i < n; i++) {
        const float t = (float)((x[i] - mean) * inv) * sc[i];
        y[i] = bi ? t + bi[i] : t;
    }
    if (mean_out) *mean_out = (float)mean;
    if (inv_out) *inv_out = (float)inv;
}

#include "layernorm_tmpl.h"
