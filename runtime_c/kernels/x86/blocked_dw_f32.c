/* AVX2+FMA CONV2D variant BLOCKED_DW: kernels/blocked_dw_tmpl.h with a pixel's 8 channels in one ymm. RELU and
 * CLIP are x86_act8's max / min; the other kinds of x86_act_vec run over the finished rows with x86_act8, the
 * rest with ep_act_apply_f32. */
#include "x86.h"
#include "x86_act.h"

#define BD_V __m256
#define BD_ZERO() _mm256_setzero_ps()
#define BD_SET1(f) _mm256_set1_ps(f)
#define BD_LD(p) _mm256_loadu_ps(p)
#define BD_ST(p, v) _mm256_storeu_ps((p), (v))
#define BD_ADD(a, b) _mm256_add_ps((a), (b))
#define BD_FMA(acc, w, x) _mm256_fmadd_ps((w), (x), (acc))
#define BD_CLAMP(v, lo, hi) _mm256_min_ps((hi), _mm256_max_ps((lo), (v)))
#define BD_ACT_VEC(act) x86_act_vec(act)
#define BD_ACT(act, alpha, beta, v) x86_act8((act), (alpha), (beta), (v))

#include "blocked_dw_tmpl.h"
