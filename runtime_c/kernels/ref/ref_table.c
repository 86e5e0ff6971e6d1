/* The reference kernel table: every opcode's default variant in portable C. */
#include "ep_ops.h"
#include "ep_config.h"   /* EP_HAVE_*: the ops/variants this build has (-Dkernels) */

void ep_kernels_init_ref(ep_kernel_table *t) {
#if EP_HAVE_CONV2D_DEFAULT
    t->fn[EP_OP_CONV2D][0] = ep_ref_conv2d_f32;
#endif
#if EP_HAVE_CONV_TRANSPOSE2D_DEFAULT
    t->fn[EP_OP_CONV_TRANSPOSE2D][0] = ep_ref_conv_transpose2d_f32;
#endif
#if EP_HAVE_GEMM_DEFAULT
    t->fn[EP_OP_GEMM][0] = ep_ref_gemm_f32;
#endif
#if EP_HAVE_MATMUL_DEFAULT
    t->fn[EP_OP_MATMUL][0] = ep_ref_matmul_f32;
#endif
#if EP_HAVE_UNARY_DEFAULT
    t->fn[EP_OP_UNARY][0] = ep_ref_unary_f32;
#endif
#if EP_HAVE_BINARY_DEFAULT
    t->fn[EP_OP_BINARY][0] = ep_ref_binary_f32;
#endif
#if EP_HAVE_MAXPOOL_DEFAULT
    t->fn[EP_OP_MAXPOOL][0] = ep_ref_maxpool_f32;
#endif
#if EP_HAVE_AVGPOOL_DEFAULT
    t->fn[EP_OP_AVGPOOL][0] = ep_ref_avgpool_f32;
#endif
#if EP_HAVE_GLOBAL_AVGPOOL_DEFAULT
    t->fn[EP_OP_GLOBAL_AVGPOOL][0] = ep_ref_global_avgpool_f32;
#endif
#if EP_HAVE_CONCAT_DEFAULT
    t->fn[EP_OP_CONCAT][0] = ep_ref_concat_any;
#endif
#if EP_HAVE_SPLIT_DEFAULT
    t->fn[EP_OP_SPLIT][0] = ep_ref_split_any;
#endif
#if EP_HAVE_SLICE_DEFAULT
    t->fn[EP_OP_SLICE][0] = ep_ref_slice_any;
#endif
#if EP_HAVE_TRANSPOSE_DEFAULT
    t->fn[EP_OP_TRANSPOSE][0] = ep_ref_transpose_any;
#endif
#if EP_HAVE_PAD_DEFAULT
    t->fn[EP_OP_PAD][0] = ep_ref_pad_f32;
#endif
#if EP_HAVE_RESIZE_DEFAULT
    t->fn[EP_OP_RESIZE][0] = ep_ref_resize_f32;
#endif
#if EP_HAVE_SOFTMAX_DEFAULT
    t->fn[EP_OP_SOFTMAX][0] = ep_ref_softmax_f32;
#endif
#if EP_HAVE_REDUCE_DEFAULT
    t->fn[EP_OP_REDUCE][0] = ep_ref_reduce_f32;
#endif
#if EP_HAVE_GATHER_DEFAULT
    t->fn[EP_OP_GATHER][0] = ep_ref_gather_any;
#endif
#if EP_HAVE_COPY_DEFAULT
    t->fn[EP_OP_COPY][0] = ep_ref_copy_any;
#endif
#if EP_HAVE_LAYERNORM_DEFAULT
    t->fn[EP_OP_LAYERNORM][0] = ep_ref_layernorm_f32;
#endif
#if EP_HAVE_WHERE_DEFAULT
    t->fn[EP_OP_WHERE][0] = ep_ref_where_any;
#endif
#if EP_HAVE_COMPARE_DEFAULT
    t->fn[EP_OP_COMPARE][0] = ep_ref_compare_any;
#endif
#if EP_HAVE_EXPAND_DEFAULT
    t->fn[EP_OP_EXPAND][0] = ep_ref_expand_any;
#endif
#if EP_HAVE_CAST_DEFAULT
    t->fn[EP_OP_CAST][0] = ep_ref_cast_any;
#endif
#if EP_HAVE_ARGMAX_DEFAULT
    t->fn[EP_OP_ARGMAX][0] = ep_ref_argmax_any;
#endif
#if EP_HAVE_TOPK_DEFAULT
    t->fn[EP_OP_TOPK][0] = ep_ref_topk_any;
#endif
#if EP_HAVE_CUMSUM_DEFAULT
    t->fn[EP_OP_CUMSUM][0] = ep_ref_cumsum_any;
#endif
#if EP_HAVE_TRILU_DEFAULT
    t->fn[EP_OP_TRILU][0] = ep_ref_trilu_any;
#endif
#if EP_HAVE_LSTM_DEFAULT
    t->fn[EP_OP_LSTM][0] = ep_ref_lstm_f32;
#endif
#if EP_HAVE_GRU_DEFAULT
    t->fn[EP_OP_GRU][0] = ep_ref_gru_f32;
#endif
#if EP_HAVE_SCATTERND_DEFAULT
    t->fn[EP_OP_SCATTERND][0] = ep_ref_scatternd_any;
#endif
#if EP_HAVE_GATHERND_DEFAULT
    t->fn[EP_OP_GATHERND][0] = ep_ref_gathernd_any;
#endif
#if EP_HAVE_RANGE_DEFAULT
    t->fn[EP_OP_RANGE][0] = ep_ref_range_any;
#endif
#if EP_HAVE_SLICE_DYN_DEFAULT
    t->fn[EP_OP_SLICE_DYN][0] = ep_ref_slice_dyn_any;
#endif
#if EP_HAVE_SHAPE_DEFAULT
    t->fn[EP_OP_SHAPE][0] = ep_ref_shape_any;
#endif
#if EP_HAVE_NONZERO_DEFAULT
    t->fn[EP_OP_NONZERO][0] = ep_ref_nonzero_any;
#endif
    /* packed variants (plan_format.h, EP_*_VARIANT_*); depthwise keeps variant 0's weights */
#if EP_HAVE_CONV2D_PACKED
    t->fn[EP_OP_CONV2D][EP_CONV2D_VARIANT_PACKED] = ep_ref_conv2d_packed_f32;
#endif
#if EP_HAVE_CONV2D_DEPTHWISE
    t->fn[EP_OP_CONV2D][EP_CONV2D_VARIANT_DEPTHWISE] = ep_ref_conv2d_f32;
#endif
#if EP_HAVE_CONV2D_WINOGRAD
    t->fn[EP_OP_CONV2D][EP_CONV2D_VARIANT_WINOGRAD] = ep_ref_conv2d_winograd_f32;
#endif
#if EP_HAVE_GEMM_PACKED
    t->fn[EP_OP_GEMM][EP_GEMM_VARIANT_PACKED] = ep_ref_gemm_packed_f32;
#endif
#if EP_HAVE_CONV_TRANSPOSE2D_PACKED
    t->fn[EP_OP_CONV_TRANSPOSE2D][EP_CONV_TRANSPOSE2D_VARIANT_PACKED] = ep_ref_conv_transpose2d_packed_f32;
#endif
}
