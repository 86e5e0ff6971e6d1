/* NEON kernels of the C8 layout (plan_format.h, "Tensor layouts"): CONV2D variant BLOCKED_PW and REORDER,
 * kernels/blocked_pw_tmpl.h on the tiles of blocked_gemm.h; REORDER transposes 4 pixels as two 4 x 4 (neon_tr4). */
#define BG_PW 1
#include "blocked_gemm.h"

/* Pixels [p, p + 4) of the 8 plain rows at x (P floats apart) to blocked y, and back. */
NEON_INLINE void ro_to_c8(const float *x, float *y, int64_t P, int64_t p) {
    float32x4_t v[8];
    for (int c = 0; c < 8; c++) v[c] = vld1q_f32(x + c * P + p);
    neon_tr4(v), neon_tr4(v + 4);
    for (int i = 0; i < 4; i++) {
        vst1q_f32(y + (p + i) * BLK, v[i]);
        vst1q_f32(y + (p + i) * BLK + 4, v[i + 4]);
    }
}
NEON_INLINE void ro_from_c8(const float *x, float *y, int64_t P, int64_t p) {
    float32x4_t v[8];
    for (int i = 0; i < 4; i++) {
        v[i] = vld1q_f32(x + (p + i) * BLK);
        v[i + 4] = vld1q_f32(x + (p + i) * BLK + 4);
    }
    neon_tr4(v), neon_tr4(v + 4);
    for (int c = 0; c < 8; c++) vst1q_f32(y + c * P + p, v[c]);
}

#define RO_NP 4
#define RO_TO_C8(x, y, P, p) ro_to_c8((x), (y), (P), (p))
#define RO_FROM_C8(x, y, P, p) ro_from_c8((x), (y), (P), (p))

#include "blocked_pw_tmpl.h"
