/* aarch64 NEON kernels (baseline armv8-a: Advanced SIMD is architectural, no extra -march flags).
 * Bound by ep_kernels_init_neon only when the CPU reports EP_CPU_NEON (cpu_features_mask can clear it,
 * which leaves the reference kernels in place). */
#ifndef EP_NEON_H
#define EP_NEON_H
#include "ep_ops.h"   /* the kernels (declared from the op table) */

#define EP_ISA neon   /* the templates' kernels are ep_neon_<name> (EP_ISA_FN, ep_kernel.h) */

/* Overrides table entries with the NEON kernels this CPU can run (EP_CPU_* bits). */
void ep_kernels_init_neon(ep_kernel_table *t, uint64_t cpu_features);

/* A SOFTMAX row (softmax_f32.c), for the ATTENTION kernel. */
void ep_neon_softmax_row(float *y, const float *x, int64_t n);

/* y[0, n) = act(y) (act_f32.c): the transcendental kinds in vector form, the others as the reference; the
 * epilogues' pass for the kinds neon_act4 leaves to the caller. The shared templates call it as
 * EP_ISA_ACT_APPLY. */
void ep_neon_act_apply(int act, float *y, int64_t n, float alpha, float beta);
#undef EP_ISA_ACT_APPLY
#define EP_ISA_ACT_APPLY ep_neon_act_apply

#endif
