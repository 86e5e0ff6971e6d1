/* AVX2+FMA kernel of CONV_TRANSPOSE2D variant PACKED (polyphase, plan_format.h): the driver of
 * kernels/conv_transpose_tmpl.h over a 6 x 16 register-blocked micro-kernel (12 ymm accumulators, 2 ymm of
 * the weight strip, 1 broadcast of the packed input panel per k), bias and activation on the registers.
 * Built with -mavx2 -mfma. */
#include <immintrin.h>
#include "x86.h"
#include "x86_act.h"

static void ct_tile(int64_t K, const float *a, const float *b, const float *bias, int act, float alpha, float beta,
                    float *t) {
    __m256 c0[EP_PACK_MR], c1[EP_PACK_MR];
#pragma GCC unroll 6
    for (int i = 0; i < EP_PACK_MR; i++) c0[i] = _mm256_setzero_ps(), c1[i] = _mm256_setzero_ps();
    for (int64_t k = 0; k < K; k++) {
        const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 6
        for (int i = 0; i < EP_PACK_MR; i++) {
            const __m256 av = _mm256_broadcast_ss(a + i);
            c0[i] = _mm256_fmadd_ps(av, b0, c0[i]);
            c1[i] = _mm256_fmadd_ps(av, b1, c1[i]);
        }
        a += EP_PACK_MR;
        b += EP_PACK_NR;
    }
#pragma GCC unroll 6
    for (int i = 0; i < EP_PACK_MR; i++) {
        _mm256_storeu_ps(t + i * EP_PACK_NR, c0[i]);
        _mm256_storeu_ps(t + i * EP_PACK_NR + 8, c1[i]);
    }
    if (!bias && act == EP_ACT_NONE) return;
    /* epilogue over the stored tile: one loop (one copy of each activation, not 12) */
    const __m256 bb0 = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
    const __m256 bb1 = bias ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps();
#pragma GCC unroll 1
    for (int v = 0; v < 2 * EP_PACK_MR; v++) {
        __m256 x = _mm256_loadu_ps(t + 8 * v);
        if (bias) x = _mm256_add_ps(x, v & 1 ? bb1 : bb0);
        _mm256_storeu_ps(t + 8 * v, x86_act8(act, alpha, beta, x));
    }
    if (!x86_act_vec(act))
        for (int i = 0; i < EP_PACK_MR; i++) ep_act_apply_f32(act, t + i * EP_PACK_NR, EP_PACK_NR, alpha, beta);
}

#include "conv_transpose_tmpl.h"
