/* x86-64 AVX2+FMA kernels (built with -mavx2 -mfma; bound only when the CPU has both). */
#ifndef EP_X86_H
#define EP_X86_H
#include "ep_ops.h"   /* the kernels (declared from the op table) */

#define EP_ISA x86   /* the templates' kernels are ep_x86_<name> (EP_ISA_FN, ep_kernel.h) */

/* Overrides table entries with the kernels this CPU can run (EP_CPU_* bits). */
void ep_kernels_init_x86(ep_kernel_table *t, uint64_t cpu_features);

/* A SOFTMAX row (softmax_f32.c), for the ATTENTION kernel. */
void ep_x86_softmax_row(float *y, const float *x, int64_t n);

#endif
