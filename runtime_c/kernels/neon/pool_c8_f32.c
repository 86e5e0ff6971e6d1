/* NEON MAXPOOL, AVGPOOL and GLOBAL_AVGPOOL variants C8: kernels/pool_c8_tmpl.h with a pixel's 8 channels in two
 * q registers, handled as one 8-lane value (v8). MAX is "v > m ? v : m" per lane (a compare and a select:
 * vmaxq_f32 would propagate NaN and order signed zeros), so every result equals the reference's bit for bit. */
#include <arm_neon.h>
#include "neon.h"

typedef struct v8 {
    float32x4_t lo, hi;
} v8;
static inline __attribute__((always_inline)) v8 v8_ld(const float *p) { return (v8){vld1q_f32(p), vld1q_f32(p + 4)}; }
static inline __attribute__((always_inline)) void v8_st(float *p, v8 v) { vst1q_f32(p, v.lo), vst1q_f32(p + 4, v.hi); }
static inline __attribute__((always_inline)) v8 v8_set1(float f) { return (v8){vdupq_n_f32(f), vdupq_n_f32(f)}; }
static inline __attribute__((always_inline)) v8 v8_max(v8 v, v8 m) {
    return (v8){vbslq_f32(vcgtq_f32(v.lo, m.lo), v.lo, m.lo), vbslq_f32(vcgtq_f32(v.hi, m.hi), v.hi, m.hi)};
}
static inline __attribute__((always_inline)) v8 v8_add(v8 a, v8 b) { return (v8){vaddq_f32(a.lo, b.lo), vaddq_f32(a.hi, b.hi)}; }
static inline __attribute__((always_inline)) v8 v8_div(v8 a, v8 b) { return (v8){vdivq_f32(a.lo, b.lo), vdivq_f32(a.hi, b.hi)}; }
#define V8_LD(p) v8_ld(p)
#define V8_ST(p, v) v8_st((p), (v))
#define V8_SET1(f) v8_set1(f)
#define V8_MAX(v, m) v8_max((v), (m))   /* v > m ? v : m per lane */
#define V8_ADD(a, b) v8_add((a), (b))
#define V8_DIV(a, b) v8_div((a), (b))

#include "pool_c8_tmpl.h"
