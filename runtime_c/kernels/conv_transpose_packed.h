/* Polyphase packed CONV_TRANSPOSE2D (plan_format.h EP_CONV_TRANSPOSE2D_VARIANT_PACKED): the geometry shared by the
 * reference kernel (kernels/ref/conv_transpose_packed_f32.c) and the ISA driver (kernels/conv_transpose_tmpl.h,
 * one MR x NR micro-kernel per ISA: kernels/x86/conv_transpose_f32.c, kernels/neon/conv_transpose_f32.c).
 *
 * The method (sub-pixel / polyphase decomposition; see docs/kernels.md). Along one axis, with stride s,
 * dilation d, pad p: output o = i*s - p + k*d, so t = o + p splits into the grid position q = t / s and the
 * phase f = t % s. Tap k reaches phase f iff k*d % s == f, from input i = q - floor(k*d / s). The
 * distinct shifts floor(k*d / s) are D(j) = d >= s ? j*d/s : j for j < T (T = d >= s ? KH : (KH-1)*d/s + 1),
 * so every output is a plain stride-1 sum over (c, jh, jw) on the phase grid:
 *   Y[m, qh*sh + fh - pt, qw*sw + fw - pl] = act(B[m] + sum_{c,jh,jw} X[c, qh - Dh(jh), qw - Dw(jw)]
 *                                                                  * Wp[(c, jh, jw), (m, fh, fw)])
 * with Wp zero where no tap exists. That is one GEMM per image: rows = phase-grid pixels (q), columns =
 * (m, fh, fw) (R = M*sh*sw), depth K = C*Th*Tw. The compiler packs Wp as GEMM B strips [ceil(R/NR)][K][NR];
 * the ISA driver packs the input into pixel panels [K][MR] (zero outside the input: the "im2col" of a stride-1
 * correlation with shifts -D), a pass of panels at a time in scratch. For a fixed pixel and m, the phases
 * fw are sw consecutive outputs of Y, so a tile row stores runs of contiguous floats (8 for HiFi-GAN's
 * x8, 4 for x4): no col2im accumulation, no scatter-add, every output written exactly once. */
#ifndef EP_CONV_TRANSPOSE_PACKED_H
#define EP_CONV_TRANSPOSE_PACKED_H
#include "ep_kernel.h"

/* T, the distinct tap shifts of a kernel of k taps along an axis: d >= s ? k : (k - 1) * d / s + 1. */
static inline int64_t ct_taps(int64_t k, int64_t d, int64_t s) { return d >= s ? k : (k - 1) * d / s + 1; }
/* D(j), the shift of the j-th distinct tap offset along an axis (j < T). */
static inline int64_t ct_shift(int64_t j, int64_t d, int64_t s) { return d >= s ? j * d / s : j; }

#endif
