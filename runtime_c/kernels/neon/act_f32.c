/* The NEON epilogues' activation pass for the kinds neon_act4 has no register form of: SIGMOID, SILU,
 * TANH, GELU and ERF through neon_math.h's vector forms (within 2e-6 of the reference, every element by the
 * same formula: the tail is a partial vector), the rest through the reference. One out-of-line copy that
 * every conv / GEMM kernel calls after storing a row or tile, so YOLO's SiLU and Whisper's GELU do not run
 * libm per element. Each kind's vector function is compiled once and called through a pointer (a few
 * cycles against its ~40 instructions), so a selective build carries each formula once. */
#include "neon.h"
#include "neon_act.h"
#include "neon_math.h"

typedef float32x4_t (*act4_fn)(float32x4_t);

static __attribute__((noinline)) float32x4_t act_sigmoid4(float32x4_t v) { return neon_sigmoid4(v); }
static float32x4_t act_silu4(float32x4_t v) { return vmulq_f32(v, act_sigmoid4(v)); }
static float32x4_t act_tanh4(float32x4_t v) { return neon_tanh4(v); }
static __attribute__((noinline)) float32x4_t act_erfc4(float32x4_t a) { return neon_erfc4(a); }
static float32x4_t act_gelu4(float32x4_t v) { return neon_gelu_from4(v, act_erfc4(neon_gelu_arg4(v))); }
static float32x4_t act_erf4(float32x4_t v) { return neon_erf_from4(v, act_erfc4(vabsq_f32(v))); }

void ep_neon_act_apply(int act, float *y, int64_t n, float alpha, float beta) {
    const act4_fn f = act == EP_ACT_SIGMOID ? act_sigmoid4 : act == EP_ACT_SILU ? act_silu4
                    : act == EP_ACT_TANH ? act_tanh4 : act == EP_ACT_GELU ? act_gelu4
                    : act == EP_ACT_ERF ? act_erf4 : NULL;
    if (!f) {
        ep_act_apply_f32(act, y, n, alpha, beta);
        return;
    }
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, f(vld1q_f32(y + i)));
    if (i < n) neon_st_part(y + i, f(neon_ld_part(y + i, (int)(n - i), 0.0f)), (int)(n - i));
}
