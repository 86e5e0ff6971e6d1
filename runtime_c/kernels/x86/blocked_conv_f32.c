/* AVX2+FMA kernel of CONV2D variant BLOCKED_CONV (plan_format.h): kernels/blocked_conv_tmpl.h on the tiles of
 * blocked_gemm.h (up to 6 output pixels x 16 output channels). */
#include "blocked_gemm.h"
#include "blocked_conv_tmpl.h"
