/* AVX2 MAXPOOL / AVGPOOL f32 (variant 0): kernels/pool_tmpl.h over 8-lane vectors; mirrors
 * kernels/neon/pool_f32.c (4 lanes). Equal to the reference bit for bit. */
#include <immintrin.h>
#include "x86.h"

/* p[0], p[2], ..., p[14]: two loads, even elements of each 128-bit half, then the halves in order */
static inline __attribute__((always_inline)) __m256 pool_ld2(const float *p) {
    const __m256 e = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), 0x88);   /* a0 a2 b0 b2 | a4 a6 b4 b6 */
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
}
/* pool_ld2 reading only p[0..15): the second half masked to its first 7 floats (VMASKMOVPS reads none of the
 * masked-off lanes) */
static inline __attribute__((always_inline)) __m256 pool_ld2t(const float *p) {
    const __m256i m7 = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, -1, 0);
    const __m256 e = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_maskload_ps(p + 8, m7), 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
}
static inline __attribute__((always_inline)) __m256 pool_lds(const float *p, int64_t s) {
    const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)s));
    return _mm256_i32gather_ps(p, idx, 4);
}

#define PV __m256
#define PV_N 8
#define PV_LD1(p) _mm256_loadu_ps(p)
#define PV_LD2(p) pool_ld2(p)
#define PV_LDS(p, s) pool_lds((p), (s))
#define PV_LD2T(p) pool_ld2t(p)
#define PV_SET1(f) _mm256_set1_ps(f)
#define PV_ST(p, v) _mm256_storeu_ps((p), (v))
#define PV_MAX(v, m) _mm256_max_ps((v), (m))   /* MAXPS: v > m ? v : m (m when either is NaN) */
#define PV_ADD(a, b) _mm256_add_ps((a), (b))
#define PV_DIV(a, b) _mm256_div_ps((a), (b))
#include "pool_tmpl.h"
