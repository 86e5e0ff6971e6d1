/* Shared by the packed-GEMM drivers of every ISA (kernels/pack_tmpl.h) and their micro-kernels.
 *
 * The micro-kernel computes one MR x NR tile of C = A B over a k-block:
 *   A: MR rows read as a[i*a_sm + k*a_sk] (packed weight panels: a_sm 1, a_sk MR; plain row-major
 *      activations: a_sm lda, a_sk 1), broadcast one element at a time;
 *   B: a packed strip [k][NR] (NR = 16 floats = 2 AVX2 ymm = 4 NEON q registers), zero padded;
 *   C: NR contiguous floats per row, row stride ldc.
 * On the last k-block the fused epilogue runs on the tile in registers:
 *   C = act(acc + bias_row[i] + bias_col[i*bias_col_ld + j] + res[i*res_ld + j]).
 * Same blocking on every ISA: MR 6 x NR 16 (12 ymm / 24 q accumulators), KC 256, MC 96. */
#ifndef EP_PACK_COMMON_H
#define EP_PACK_COMMON_H

#include <stdint.h>
#include <string.h>
#include "ep_kernel.h"
#include "float_bits.h"

#define PK_MR EP_PACK_MR
#define PK_NR EP_PACK_NR
#define PK_KC 256
#define PK_MC 96

typedef struct pk_epi {
    const float *bias_row;  /* one value per tile row, or NULL */
    const float *bias_col;  /* one value per tile column, or NULL */
    int64_t bias_col_ld;    /* row stride of bias_col (0: shared by all rows) */
    const float *res;       /* residual, same tile layout as C, or NULL */
    int64_t res_ld;
    int act;
    float alpha, beta;
} pk_epi;

/* Epilogue e moved to element (m0, n0) of C, in dst; NULL stays NULL. */
static inline const pk_epi *pk_epi_at(pk_epi *dst, const pk_epi *e, int64_t m0, int64_t n0) {
    if (!e) return NULL;
    *dst = *e;
    if (dst->bias_row) dst->bias_row += m0;
    if (dst->bias_col) dst->bias_col += m0 * dst->bias_col_ld + n0;
    if (dst->res) dst->res += m0 * dst->res_ld + n0;
    return dst;
}

/* ns strips [ns][K][NR] of the plain matrix x[K][ld], columns q0.. of it: strip s holds columns
 * q0 + s*NR + j, j < NR, zero past column n (the 1x1 im2col: a plane's pixels are its columns). */
static inline void pk_pack_plain(float *dst, const float *x, int64_t ns, int64_t q0, int64_t n, int64_t K, int64_t ld) {
    for (int64_t s = 0; s < ns; s++) {
        float *d = dst + s * K * PK_NR;
        const int64_t q = q0 + s * PK_NR, cnt = n - q < PK_NR ? n - q : PK_NR;
        for (int64_t k = 0; k < K; k++) {
            memcpy(d + k * PK_NR, x + k * ld + q, (size_t)cnt * 4);
            for (int64_t j = cnt; j < PK_NR; j++) d[k * PK_NR + j] = 0.0f;
        }
    }
}

/* 16-bit weights (plan_format.h "16-bit weights"): a packed weight operand's elements are float32 (dt
 * EP_DTYPE_F32) or EP_DTYPE_F16 / EP_DTYPE_BF16, converted exactly to float32 one tile's k-block at a time.
 * pk_off: element i of such an operand. PK_CVT_F16(d, s, n) and PK_CVT_BF16(d, s, n): the including ISA
 * file's vector conversions of n elements, or these scalar ones. */
static inline const void *pk_off(const void *p, int dt, int64_t i) {
    return (const char *)p + i * (dt == EP_DTYPE_F32 ? 4 : 2);
}
static inline void pk_cvt_f16_scalar(float *d, const uint16_t *s, int64_t n) {
    for (int64_t i = 0; i < n; i++) d[i] = ep_f16_to_f32(s[i]);
}
static inline void pk_cvt_bf16(float *d, const uint16_t *s, int64_t n) {
    for (int64_t i = 0; i < n; i++) d[i] = ep_bf16_to_f32(s[i]);
}

#endif
