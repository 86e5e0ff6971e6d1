"""The op table as the compiler sees it: generated from runtime_c/ops.def by runtime_c/gen_ops.py
(do not edit; tests/py/test_optable.py checks it is current). Per runtime op: its opcode constant
and C params struct (plan_format.h), arity, flags, family, variants and the plan minor version
that introduced it."""
from __future__ import annotations

from typing import NamedTuple


class OpSpec(NamedTuple):
    code: int
    const: str              # EP_OP_* name in plan_format.h
    params: str             # C params struct
    min_in: int
    max_in: int             # 0xFFFF: variadic
    min_out: int
    max_out: int
    inplace: bool           # an output may exactly alias an input
    data_dep: bool          # the kernel sets its outputs' variable dims
    out_declared: bool      # the shape function takes output extents from the declared output
    family: str
    since: int              # plan minor version that introduced the opcode
    variants: tuple         # variant names by number (0: default)
    kernels: tuple          # (isa, variant, C function)


OPS = {
    'conv2d': OpSpec(1, 'EP_OP_CONV2D', 'ep_conv2d_params', 2, 4, 1, 1, False, False, False, 'conv', 0,
                  ('default', 'packed', 'depthwise', 'winograd'),
                  (('ref', 'default', 'ep_ref_conv2d_f32'), ('ref', 'packed', 'ep_ref_conv2d_packed_f32'), ('ref', 'depthwise', 'ep_ref_conv2d_f32'), ('ref', 'winograd', 'ep_ref_conv2d_winograd_f32'), ('x86', 'packed', 'ep_x86_conv2d_packed_f32'), ('x86', 'depthwise', 'ep_x86_conv2d_dw_f32'), ('x86', 'winograd', 'ep_x86_conv2d_winograd_f32'), ('neon', 'default', 'ep_neon_conv2d_f32'), ('neon', 'packed', 'ep_neon_conv2d_packed_f32'), ('neon', 'depthwise', 'ep_neon_conv2d_dw_f32'))),
    'conv_transpose2d': OpSpec(2, 'EP_OP_CONV_TRANSPOSE2D', 'ep_conv_transpose2d_params', 2, 3, 1, 1, False, False, False, 'conv', 0,
                  ('default', 'packed'),
                  (('ref', 'default', 'ep_ref_conv_transpose2d_f32'), ('ref', 'packed', 'ep_ref_conv_transpose2d_packed_f32'), ('x86', 'packed', 'ep_x86_conv_transpose2d_packed_f32'), ('neon', 'packed', 'ep_neon_conv_transpose2d_packed_f32'))),
    'gemm': OpSpec(3, 'EP_OP_GEMM', 'ep_gemm_params', 2, 4, 1, 1, False, False, False, 'linear', 0,
                  ('default', 'packed'),
                  (('ref', 'default', 'ep_ref_gemm_f32'), ('ref', 'packed', 'ep_ref_gemm_packed_f32'), ('x86', 'packed', 'ep_x86_gemm_packed_f32'), ('neon', 'default', 'ep_neon_gemm_f32'), ('neon', 'packed', 'ep_neon_gemm_packed_f32'))),
    'matmul': OpSpec(4, 'EP_OP_MATMUL', 'ep_matmul_params', 2, 2, 1, 1, False, False, False, 'linear', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_matmul_f32'), ('x86', 'default', 'ep_x86_matmul_f32'), ('neon', 'default', 'ep_neon_matmul_f32'))),
    'unary': OpSpec(5, 'EP_OP_UNARY', 'ep_unary_params', 1, 1, 1, 1, True, False, False, 'elementwise', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_unary_f32'), ('x86', 'default', 'ep_x86_unary_f32'), ('neon', 'default', 'ep_neon_unary_f32'))),
    'binary': OpSpec(6, 'EP_OP_BINARY', 'ep_binary_params', 2, 2, 1, 1, True, False, False, 'elementwise', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_binary_f32'), ('x86', 'default', 'ep_x86_binary_f32'), ('neon', 'default', 'ep_neon_binary_f32'))),
    'maxpool': OpSpec(7, 'EP_OP_MAXPOOL', 'ep_pool_params', 1, 1, 1, 1, False, False, False, 'pool', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_maxpool_f32'), ('x86', 'default', 'ep_x86_maxpool_f32'), ('neon', 'default', 'ep_neon_maxpool_f32'))),
    'avgpool': OpSpec(8, 'EP_OP_AVGPOOL', 'ep_pool_params', 1, 1, 1, 1, False, False, False, 'pool', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_avgpool_f32'), ('x86', 'default', 'ep_x86_avgpool_f32'), ('neon', 'default', 'ep_neon_avgpool_f32'))),
    'global_avgpool': OpSpec(9, 'EP_OP_GLOBAL_AVGPOOL', 'ep_global_pool_params', 1, 1, 1, 1, False, False, False, 'pool', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_global_avgpool_f32'), ('neon', 'default', 'ep_neon_global_avgpool_f32'))),
    'concat': OpSpec(10, 'EP_OP_CONCAT', 'ep_axis_params', 1, 65535, 1, 1, False, False, False, 'layout', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_concat_any'),)),
    'split': OpSpec(11, 'EP_OP_SPLIT', 'ep_axis_params', 1, 1, 1, 64, False, False, True, 'layout', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_split_any'),)),
    'slice': OpSpec(12, 'EP_OP_SLICE', 'ep_slice_params', 1, 1, 1, 1, False, False, True, 'layout', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_slice_any'),)),
    'transpose': OpSpec(13, 'EP_OP_TRANSPOSE', 'ep_transpose_params', 1, 1, 1, 1, False, False, False, 'layout', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_transpose_any'),)),
    'pad': OpSpec(14, 'EP_OP_PAD', 'ep_pad_params', 1, 1, 1, 1, False, False, False, 'layout', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_pad_f32'),)),
    'gather': OpSpec(18, 'EP_OP_GATHER', 'ep_axis_params', 2, 2, 1, 1, False, False, False, 'layout', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_gather_any'),)),
    'copy': OpSpec(19, 'EP_OP_COPY', 'ep_axis_params', 1, 1, 1, 1, False, False, True, 'layout', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_copy_any'),)),
    'resize': OpSpec(15, 'EP_OP_RESIZE', 'ep_resize_params', 1, 1, 1, 1, False, False, True, 'resize', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_resize_f32'),)),
    'softmax': OpSpec(16, 'EP_OP_SOFTMAX', 'ep_softmax_params', 1, 1, 1, 1, True, False, False, 'softmax_reduce', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_softmax_f32'), ('x86', 'default', 'ep_x86_softmax_f32'), ('neon', 'default', 'ep_neon_softmax_f32'))),
    'reduce': OpSpec(17, 'EP_OP_REDUCE', 'ep_reduce_params', 1, 1, 1, 1, False, False, False, 'softmax_reduce', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_reduce_f32'),)),
    'layernorm': OpSpec(20, 'EP_OP_LAYERNORM', 'ep_layernorm_params', 2, 3, 1, 3, False, False, False, 'sequence', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_layernorm_f32'), ('x86', 'default', 'ep_x86_layernorm_f32'), ('neon', 'default', 'ep_neon_layernorm_f32'))),
    'argmax': OpSpec(25, 'EP_OP_ARGMAX', 'ep_argmax_params', 1, 1, 1, 1, False, False, False, 'sequence', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_argmax_any'),)),
    'topk': OpSpec(26, 'EP_OP_TOPK', 'ep_topk_params', 1, 1, 2, 2, False, False, False, 'sequence', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_topk_any'),)),
    'cumsum': OpSpec(27, 'EP_OP_CUMSUM', 'ep_cumsum_params', 1, 1, 1, 1, False, False, False, 'sequence', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_cumsum_any'),)),
    'trilu': OpSpec(28, 'EP_OP_TRILU', 'ep_trilu_params', 1, 1, 1, 1, False, False, False, 'sequence', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_trilu_any'),)),
    'where': OpSpec(21, 'EP_OP_WHERE', 'ep_where_params', 3, 3, 1, 1, False, False, False, 'logic', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_where_any'),)),
    'compare': OpSpec(22, 'EP_OP_COMPARE', 'ep_compare_params', 2, 2, 1, 1, False, False, False, 'logic', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_compare_any'),)),
    'expand': OpSpec(23, 'EP_OP_EXPAND', 'ep_where_params', 1, 1, 1, 1, False, False, True, 'logic', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_expand_any'),)),
    'cast': OpSpec(24, 'EP_OP_CAST', 'ep_cast_params', 1, 1, 1, 1, False, False, False, 'logic', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_cast_any'),)),
    'scatternd': OpSpec(31, 'EP_OP_SCATTERND', 'ep_scatternd_params', 3, 3, 1, 1, False, False, False, 'logic', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_scatternd_any'),)),
    'gathernd': OpSpec(32, 'EP_OP_GATHERND', 'ep_gathernd_params', 2, 2, 1, 1, False, False, False, 'logic', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_gathernd_any'),)),
    'lstm': OpSpec(29, 'EP_OP_LSTM', 'ep_rnn_params', 4, 8, 3, 3, False, False, False, 'rnn', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_lstm_f32'), ('x86', 'default', 'ep_x86_lstm_f32'), ('neon', 'default', 'ep_neon_lstm_f32'))),
    'gru': OpSpec(30, 'EP_OP_GRU', 'ep_rnn_params', 4, 6, 2, 2, False, False, False, 'rnn', 0,
                  ('default',),
                  (('ref', 'default', 'ep_ref_gru_f32'), ('x86', 'default', 'ep_x86_gru_f32'), ('neon', 'default', 'ep_neon_gru_f32'))),
    'lrn': OpSpec(37, 'EP_OP_LRN', 'ep_lrn_params', 1, 1, 1, 1, False, False, False, 'norm', 2,
                  ('default',),
                  (('ref', 'default', 'ep_ref_lrn_f32'),)),
    'range': OpSpec(33, 'EP_OP_RANGE', 'ep_where_params', 3, 3, 1, 1, False, True, False, 'dynamic', 1,
                  ('default',),
                  (('ref', 'default', 'ep_ref_range_any'),)),
    'nonzero': OpSpec(34, 'EP_OP_NONZERO', 'ep_where_params', 1, 1, 1, 1, False, True, False, 'dynamic', 1,
                  ('default',),
                  (('ref', 'default', 'ep_ref_nonzero_any'),)),
    'slice_dyn': OpSpec(35, 'EP_OP_SLICE_DYN', 'ep_slice_dyn_params', 3, 3, 1, 1, False, True, False, 'dynamic', 1,
                  ('default',),
                  (('ref', 'default', 'ep_ref_slice_dyn_any'),)),
    'shape': OpSpec(36, 'EP_OP_SHAPE', 'ep_shape_params', 1, 1, 1, 1, False, False, False, 'dynamic', 1,
                  ('default',),
                  (('ref', 'default', 'ep_ref_shape_any'),)),
}

FAMILIES = {
    'conv': ('conv2d', 'conv_transpose2d'),
    'linear': ('gemm', 'matmul'),
    'elementwise': ('unary', 'binary'),
    'pool': ('maxpool', 'avgpool', 'global_avgpool'),
    'layout': ('concat', 'split', 'slice', 'transpose', 'pad', 'gather', 'copy'),
    'resize': ('resize',),
    'softmax_reduce': ('softmax', 'reduce'),
    'sequence': ('layernorm', 'argmax', 'topk', 'cumsum', 'trilu'),
    'logic': ('where', 'compare', 'expand', 'cast', 'scatternd', 'gathernd'),
    'rnn': ('lstm', 'gru'),
    'norm': ('lrn',),
    'dynamic': ('range', 'nonzero', 'slice_dyn', 'shape'),
}
