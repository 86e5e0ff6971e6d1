/* The NEON epilogues' activation pass for the kinds neon_act4 has no register form of: SIGMOID, SILU,
 * TANH, GELU and ERF through neon_math4 (neon_math.h, within 2e-6 of the reference, every element by the
 * same formula: the tail is a partial vector), the rest through the reference. One out-of-line copy that
 * every conv / GEMM kernel calls after storing a row or tile, so YOLO's SiLU and Whisper's GELU do not run
 * libm per element. */
#include "neon.h"
#include "neon_act.h"
#include "neon_math.h"

void ep_neon_act_apply(int act, float *y, int64_t n, float alpha, float beta) {
    if (!neon_math_kind(act)) {
        ep_act_apply_f32(act, y, n, alpha, beta);
        return;
    }
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, neon_math4(act, vld1q_f32(y + i)));
    if (i < n) neon_st_part(y + i, neon_math4(act, neon_ld_part(y + i, (int)(n - i), 0.0f)), (int)(n - i));
}
