/* NEON GEMM variant ROWS (B as its transpose [N, K]): kernels/gemm_rows_tmpl.h over 4-lane q registers;
 * 16-bit weights through FCVTL (float16) or a 16-bit shift (bfloat16). */
#include <arm_neon.h>
#include "neon.h"
#include "cvt16_neon.h"

#define RV float32x4_t
#define RV_N 4
#define RV_ZERO() vdupq_n_f32(0.0f)
#define RV_LD(p) vld1q_f32(p)
#define RV_LDW(p, i, wt) neon_ldw4((p), (i), (wt))
#define RV_FMA(acc, a, b) vfmaq_f32((acc), (a), (b))
#define RV_ADD(a, b) vaddq_f32((a), (b))
#define RV_HSUM(v) vaddvq_f32(v)

#include "gemm_rows_tmpl.h"
