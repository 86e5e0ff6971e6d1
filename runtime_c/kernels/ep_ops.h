/* Declarations of every shape function (src/ops/) and kernel (kernels/<isa>/), from the op table
 * (runtime_c/ops.def). Naming: ep_shape_<op>, ep_<isa>_<op>[_<shape>]_<dtype>; "_any" works on any
 * dtype by element size. */
#ifndef EP_OPS_H
#define EP_OPS_H
#include "ep_kernel.h"

#define EP_OP(N, n, code, P, i0, i1, o0, o1, F, fam, since) \
    int ep_shape_##n(const ep_op *op, ep_shape *out, uint64_t *scratch);
#define EP_KERNEL(isa, N, V, k) int k(const ep_op *op);
#include "ops.def"

void ep_ref_unary_math_f32(int kind, float *x, int64_t n);   /* kernels/ref/unary_math_f32.c: EP_ACT_MATH_FIRST.. */
int ep_ref_binary_int(const ep_op *op);   /* kernels/ref/binary_int.c: the integer dtypes (from binary_f32) */

/* Fills table entry [op][variant] with kernel k when the build has the variant (ep_config.h EP_HAVE_*):
 * the <isa>_table.c files expand the op table's EP_KERNEL rows of their ISA through it. */
#define EP_KERNEL_SET(t, N, V, k) \
    if (EP_HAVE_##N##_##V) (t)->fn[EP_OP_##N][EP_##N##_VARIANT_##V] = (k);

#endif
