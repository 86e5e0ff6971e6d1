/* AVX2+FMA RESIZE variant TABLE: kernels/resize_tmpl.h (the gathers stay scalar; the linear blend of two
 * interpolated rows vectorises). Built with -mavx2 -mfma; the NEON kernel runs the same template. */
#include "x86.h"
#include "resize_tmpl.h"
