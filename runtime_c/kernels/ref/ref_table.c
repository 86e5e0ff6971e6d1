/* The reference kernel table: every opcode's default variant in portable C. */
#include "ep_ops.h"

void ep_kernels_init_ref(ep_kernel_table *t) {
    t->fn[EP_OP_CONV2D][0] = ep_ref_conv2d_f32;
    t->fn[EP_OP_CONV_TRANSPOSE2D][0] = ep_ref_conv_transpose2d_f32;
    t->fn[EP_OP_GEMM][0] = ep_ref_gemm_f32;
    t->fn[EP_OP_MATMUL][0] = ep_ref_matmul_f32;
    t->fn[EP_OP_UNARY][0] = ep_ref_unary_f32;
    t->fn[EP_OP_BINARY][0] = ep_ref_binary_f32;
    t->fn[EP_OP_MAXPOOL][0] = ep_ref_maxpool_f32;
    t->fn[EP_OP_AVGPOOL][0] = ep_ref_avgpool_f32;
    t->fn[EP_OP_GLOBAL_AVGPOOL][0] = ep_ref_global_avgpool_f32;
    t->fn[EP_OP_CONCAT][0] = ep_ref_concat_any;
    t->fn[EP_OP_SPLIT][0] = ep_ref_split_any;
    t->fn[EP_OP_SLICE][0] = ep_ref_slice_any;
    t->fn[EP_OP_TRANSPOSE][0] = ep_ref_transpose_any;
    t->fn[EP_OP_PAD][0] = ep_ref_pad_f32;
    t->fn[EP_OP_RESIZE][0] = ep_ref_resize_f32;
    t->fn[EP_OP_SOFTMAX][0] = ep_ref_softmax_f32;
    t->fn[EP_OP_REDUCE][0] = ep_ref_reduce_f32;
    t->fn[EP_OP_GATHER][0] = ep_ref_gather_any;
    t->fn[EP_OP_COPY][0] = ep_ref_copy_any;
}
