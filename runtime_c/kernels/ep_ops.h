/* Declarations of every shape function (src/ops/) and reference kernel (kernels/ref/).
 * Naming: ep_shape_<op>, ep_<isa>_<op>[_<shape>]_<dtype>; "_any" works on any dtype by element size. */
#ifndef EP_OPS_H
#define EP_OPS_H
#include "ep_kernel.h"

int ep_shape_conv2d(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_conv_transpose2d(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_gemm(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_matmul(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_unary(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_binary(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_maxpool(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_avgpool(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_global_avgpool(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_concat(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_split(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_slice(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_transpose(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_pad(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_resize(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_softmax(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_reduce(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_gather(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_copy(const ep_op *op, ep_shape *out, uint64_t *scratch);

int ep_ref_conv2d_f32(const ep_op *op);
int ep_ref_conv_transpose2d_f32(const ep_op *op);
int ep_ref_gemm_f32(const ep_op *op);
int ep_ref_matmul_f32(const ep_op *op);
int ep_ref_unary_f32(const ep_op *op);
int ep_ref_binary_f32(const ep_op *op);   /* integer dtypes: passes the op to ep_ref_binary_int */
int ep_ref_binary_int(const ep_op *op);   /* kernels/ref/binary_int.c: I8, U8, I16, I32, I64 */
int ep_ref_maxpool_f32(const ep_op *op);
int ep_ref_avgpool_f32(const ep_op *op);
int ep_ref_global_avgpool_f32(const ep_op *op);
int ep_ref_concat_any(const ep_op *op);
int ep_ref_split_any(const ep_op *op);
int ep_ref_slice_any(const ep_op *op);
int ep_ref_transpose_any(const ep_op *op);
int ep_ref_pad_f32(const ep_op *op);
int ep_ref_resize_f32(const ep_op *op);
int ep_ref_softmax_f32(const ep_op *op);
int ep_ref_reduce_f32(const ep_op *op);
int ep_ref_gather_any(const ep_op *op);
int ep_ref_copy_any(const ep_op *op);

/* Reference kernels of the packed variants (kernels/ref/packed_f32.c). */
int ep_ref_conv2d_packed_f32(const ep_op *op);
int ep_ref_conv2d_winograd_f32(const ep_op *op);
int ep_ref_gemm_packed_f32(const ep_op *op);
/* CONV_TRANSPOSE2D variant PACKED (kernels/ref/conv_transpose_packed_f32.c). */
int ep_ref_conv_transpose2d_packed_f32(const ep_op *op);

/* Sequence / audio ops (src/ops/sequence.c, logic.c, rnn.c; kernels/ref/layernorm_f32.c,
 * logic_any.c, index_any.c, rnn_f32.c). */
int ep_shape_layernorm(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_where(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_compare(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_expand(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_cast(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_argmax(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_topk(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_cumsum(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_trilu(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_lstm(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_gru(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_scatternd(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_gathernd(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_ref_layernorm_f32(const ep_op *op);
int ep_ref_where_any(const ep_op *op);
int ep_ref_compare_any(const ep_op *op);
int ep_ref_expand_any(const ep_op *op);
int ep_ref_cast_any(const ep_op *op);
int ep_ref_argmax_any(const ep_op *op);
int ep_ref_topk_any(const ep_op *op);
int ep_ref_cumsum_any(const ep_op *op);
int ep_ref_trilu_any(const ep_op *op);
int ep_ref_lstm_f32(const ep_op *op);
int ep_ref_gru_f32(const ep_op *op);
int ep_ref_scatternd_any(const ep_op *op);
int ep_ref_gathernd_any(const ep_op *op);

/* Data-dependent sizes (src/ops/dynamic.c, kernels/ref/dynamic_any.c). */
int ep_shape_range(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_shape_nonzero(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_ref_range_any(const ep_op *op);
int ep_ref_nonzero_any(const ep_op *op);
int ep_shape_slice_dyn(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_ref_slice_dyn_any(const ep_op *op);
int ep_shape_shape(const ep_op *op, ep_shape *out, uint64_t *scratch);
int ep_ref_shape_any(const ep_op *op);

#endif
