/* Activation functions shared by the unary op and every fused epilogue (ref semantics).
 * NaN propagates through RELU/CLIP/HARD_* as it does in numpy (comparisons, not fmaxf).
 * An unknown kind is treated as EP_ACT_NONE; shape functions reject such codes. */
#include <math.h>
#include "ep_kernel.h"

static inline float act_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

static inline float act_clip(float x, float lo, float hi) {
    x = x < lo ? lo : x;
    return x > hi ? hi : x;
}

/* Nearest integer, halves to even, whatever the FPU rounding mode (rintf would follow it): the ISA
 * kernels use explicit round-to-nearest-even instructions, and this equals them bit for bit. x - r is
 * exact (the fraction of a float is a float); |x| >= 2^23 is already an integer (frac 0); NaN and +-inf
 * come back unchanged, and the sign of x is kept on a zero result (-0.3 -> -0, as numpy). */
static inline float act_round(float x) {
    float r = floorf(x);
    const float frac = x - r;
    if (frac > 0.5f || (frac == 0.5f && floorf(r * 0.5f) != r * 0.5f)) r += 1.0f;
    return copysignf(r, x);
}

float ep_act_f32(int kind, float x, float alpha, float beta) {
    switch (kind) {
    case EP_ACT_RELU: return x < 0.0f ? 0.0f : x;
    case EP_ACT_CLIP: return act_clip(x, alpha, beta);
    case EP_ACT_LEAKY_RELU: return x < 0.0f ? alpha * x : x;
    case EP_ACT_SIGMOID: return act_sigmoid(x);
    case EP_ACT_HARD_SIGMOID: return act_clip(alpha * x + beta, 0.0f, 1.0f);
    case EP_ACT_HARD_SWISH: return x * act_clip(x / 6.0f + 0.5f, 0.0f, 1.0f);
    case EP_ACT_TANH: return tanhf(x);
    case EP_ACT_SILU: return x * act_sigmoid(x);
    case EP_ACT_ERF: return erff(x);
    case EP_ACT_SQRT: return sqrtf(x);
    case EP_ACT_GELU: return 0.5f * x * erfcf(-x * 0.70710678118654752f);   /* = 0.5 x (1 + erf(x / sqrt 2)), no cancellation for x < 0 */
    case EP_ACT_EXP: return expf(x);
    case EP_ACT_LOG: return logf(x);
    case EP_ACT_NEG: return -x;
    case EP_ACT_ABS: return fabsf(x);
    case EP_ACT_RECIPROCAL: return 1.0f / x;
    case EP_ACT_ELU: return x < 0.0f ? alpha * expm1f(x) : x;
    case EP_ACT_GELU_TANH: return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    case EP_ACT_ROUND: return act_round(x);
    case EP_ACT_FLOOR: return floorf(x);
    case EP_ACT_CEIL: return ceilf(x);
    default: return x;
    }
}

/* One loop per kind so the switch is taken once per call, not per element. */
#define ACT_LOOP(expr)                                       \
    do {                                                     \
        for (int64_t i = 0; i < n; i++) {                    \
            float v = x[i];                                  \
            x[i] = (expr);                                   \
        }                                                    \
    } while (0)

void ep_act_apply_f32(int kind, float *x, int64_t n, float alpha, float beta) {
    switch (kind) {
    case EP_ACT_NONE: return;
    case EP_ACT_RELU: ACT_LOOP(v < 0.0f ? 0.0f : v); return;
    case EP_ACT_CLIP: ACT_LOOP(act_clip(v, alpha, beta)); return;
    case EP_ACT_LEAKY_RELU: ACT_LOOP(v < 0.0f ? alpha * v : v); return;
    case EP_ACT_SIGMOID: ACT_LOOP(act_sigmoid(v)); return;
    case EP_ACT_HARD_SIGMOID: ACT_LOOP(act_clip(alpha * v + beta, 0.0f, 1.0f)); return;
    case EP_ACT_HARD_SWISH: ACT_LOOP(v * act_clip(v / 6.0f + 0.5f, 0.0f, 1.0f)); return;
    case EP_ACT_NEG: ACT_LOOP(-v); return;
    case EP_ACT_ABS: ACT_LOOP(fabsf(v)); return;
    default:
        for (int64_t i = 0; i < n; i++) x[i] = ep_act_f32(kind, x[i], alpha, beta);
        return;
    }
}
