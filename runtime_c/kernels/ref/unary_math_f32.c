/* The unary op's math kinds (EP_ACT_MATH_FIRST and up, plan_format.h): libm's float functions, one loop
 * per kind. Kept out of act.c, which every fused epilogue links, so that a build without the unary op
 * carries none of them. */
#include <math.h>
#include "ep_ops.h"

#define MATH_LOOP(expr)                         \
    do {                                        \
        for (int64_t i = 0; i < n; i++) {       \
            const float v = x[i];               \
            x[i] = (expr);                      \
        }                                       \
    } while (0)

void ep_ref_unary_math_f32(int kind, float *x, int64_t n) {
    switch (kind) {
    case EP_ACT_SIN: MATH_LOOP(sinf(v)); return;
    case EP_ACT_COS: MATH_LOOP(cosf(v)); return;
    case EP_ACT_TAN: MATH_LOOP(tanf(v)); return;
    case EP_ACT_ASIN: MATH_LOOP(asinf(v)); return;
    case EP_ACT_ACOS: MATH_LOOP(acosf(v)); return;
    case EP_ACT_ATAN: MATH_LOOP(atanf(v)); return;
    case EP_ACT_SINH: MATH_LOOP(sinhf(v)); return;
    case EP_ACT_COSH: MATH_LOOP(coshf(v)); return;
    case EP_ACT_ASINH: MATH_LOOP(asinhf(v)); return;
    case EP_ACT_ACOSH: MATH_LOOP(acoshf(v)); return;
    case EP_ACT_ATANH: MATH_LOOP(atanhf(v)); return;
    case EP_ACT_SIGN: MATH_LOOP(v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : v)); return;
    default: return;   /* the shape function admits no other kind */
    }
}
