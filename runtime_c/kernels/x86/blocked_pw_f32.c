/* AVX2+FMA kernels of the C8 layout (plan_format.h, "Tensor layouts"): CONV2D variant BLOCKED_PW and REORDER,
 * kernels/blocked_pw_tmpl.h on the tiles of blocked_gemm.h; REORDER transposes 8 x 8 (x86_tr8). */
#define BG_PW 1
#include "blocked_gemm.h"

/* Pixels [p, p + 8) of the 8 plain rows at x (P floats apart) to blocked y, and back. */
static inline __attribute__((always_inline)) void ro_to_c8(const float *x, float *y, int64_t P, int64_t p) {
    __m256 v[8];
    for (int c = 0; c < 8; c++) v[c] = _mm256_loadu_ps(x + c * P + p);
    x86_tr8(v);
    for (int i = 0; i < 8; i++) _mm256_storeu_ps(y + (p + i) * BLK, v[i]);
}
static inline __attribute__((always_inline)) void ro_from_c8(const float *x, float *y, int64_t P, int64_t p) {
    __m256 v[8];
    for (int i = 0; i < 8; i++) v[i] = _mm256_loadu_ps(x + (p + i) * BLK);
    x86_tr8(v);
    for (int c = 0; c < 8; c++) _mm256_storeu_ps(y + c * P + p, v[c]);
}

#define RO_NP 8
#define RO_TO_C8(x, y, P, p) ro_to_c8((x), (y), (P), (p))
#define RO_FROM_C8(x, y, P, p) ro_from_c8((x), (y), (P), (p))

#include "blocked_pw_tmpl.h"
