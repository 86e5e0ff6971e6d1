/* AVX2+FMA GEMM variant ROWS (B as its transpose [N, K]): kernels/gemm_rows_tmpl.h over 8-lane ymm vectors;
 * 16-bit weights through F16C (float16) or a 16-bit shift (bfloat16). */
#include <immintrin.h>
#include "x86.h"
#include "cvt16_x86.h"

#define RV __m256
#define RV_N 8
#define RV_ZERO() _mm256_setzero_ps()
#define RV_LD(p) _mm256_loadu_ps(p)
#define RV_LDW(p, i, wt) x86_ldw8((p), (i), (wt))
#define RV_FMA(acc, a, b) _mm256_fmadd_ps((a), (b), (acc))
#define RV_ADD(a, b) _mm256_add_ps((a), (b))
static inline float rv_hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}
#define RV_HSUM(v) rv_hsum(v)

#include "gemm_rows_tmpl.h"
