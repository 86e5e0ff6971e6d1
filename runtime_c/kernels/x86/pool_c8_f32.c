/* AVX2 MAXPOOL, AVGPOOL and GLOBAL_AVGPOOL variants C8: kernels/pool_c8_tmpl.h with a pixel's 8 channels in one
 * ymm. MAXPS is "v > m ? v : m" per lane, the reference's update: every result equals the reference's bit for
 * bit. */
#include <immintrin.h>
#include "x86.h"

typedef __m256 v8;
#define V8_LD(p) _mm256_loadu_ps(p)
#define V8_ST(p, v) _mm256_storeu_ps((p), (v))
#define V8_SET1(f) _mm256_set1_ps(f)
#define V8_MAX(v, m) _mm256_max_ps((v), (m))   /* MAXPS: v > m ? v : m (m when either is NaN, or both zeros) */
#define V8_ADD(a, b) _mm256_add_ps((a), (b))
#define V8_DIV(a, b) _mm256_div_ps((a), (b))

#include "pool_c8_tmpl.h"
