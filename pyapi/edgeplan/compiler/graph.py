"""The lowered graph: what the compiler front end hands to scheduling, memory planning and the writer.

Every op here is one runtime op (an ``EP_OP_*`` of runtime_c/include/edgeplan/plan_format.h) whose
``params`` dict names the fields of that opcode's C parameter struct. Tensors carry static shapes (the
upper bounds) and numpy dtypes. Constant tensors carry their data, already in the layout the kernel
variant expects. A view tensor (``view_of``) shares the storage of another tensor with the same number
of bytes (Reshape, Flatten, Squeeze, Unsqueeze): no op is emitted for it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .._cdef import NUMPY_TO_EP

# op name -> (EP_OP_* constant name, C params struct)
OPCODES = {
    "conv2d": ("EP_OP_CONV2D", "ep_conv2d_params"),
    "conv_transpose2d": ("EP_OP_CONV_TRANSPOSE2D", "ep_conv_transpose2d_params"),
    "gemm": ("EP_OP_GEMM", "ep_gemm_params"),
    "matmul": ("EP_OP_MATMUL", "ep_matmul_params"),
    "unary": ("EP_OP_UNARY", "ep_unary_params"),
    "binary": ("EP_OP_BINARY", "ep_binary_params"),
    "maxpool": ("EP_OP_MAXPOOL", "ep_pool_params"),
    "avgpool": ("EP_OP_AVGPOOL", "ep_pool_params"),
    "global_avgpool": ("EP_OP_GLOBAL_AVGPOOL", "ep_global_pool_params"),
    "concat": ("EP_OP_CONCAT", "ep_axis_params"),
    "split": ("EP_OP_SPLIT", "ep_axis_params"),
    "slice": ("EP_OP_SLICE", "ep_slice_params"),
    "transpose": ("EP_OP_TRANSPOSE", "ep_transpose_params"),
    "pad": ("EP_OP_PAD", "ep_pad_params"),
    "resize": ("EP_OP_RESIZE", "ep_resize_params"),
    "softmax": ("EP_OP_SOFTMAX", "ep_softmax_params"),
    "reduce": ("EP_OP_REDUCE", "ep_reduce_params"),
    "gather": ("EP_OP_GATHER", "ep_axis_params"),
    "copy": ("EP_OP_COPY", "ep_axis_params"),
    "layernorm": ("EP_OP_LAYERNORM", "ep_layernorm_params"),
    "where": ("EP_OP_WHERE", "ep_where_params"),
    "compare": ("EP_OP_COMPARE", "ep_compare_params"),
    "expand": ("EP_OP_EXPAND", "ep_where_params"),
    "cast": ("EP_OP_CAST", "ep_cast_params"),
    "argmax": ("EP_OP_ARGMAX", "ep_argmax_params"),
    "topk": ("EP_OP_TOPK", "ep_topk_params"),
    "cumsum": ("EP_OP_CUMSUM", "ep_cumsum_params"),
    "trilu": ("EP_OP_TRILU", "ep_trilu_params"),
    "lstm": ("EP_OP_LSTM", "ep_rnn_params"),
    "gru": ("EP_OP_GRU", "ep_rnn_params"),
    "scatternd": ("EP_OP_SCATTERND", "ep_scatternd_params"),
    "gathernd": ("EP_OP_GATHERND", "ep_gathernd_params"),
    "range": ("EP_OP_RANGE", "ep_where_params"),
    "nonzero": ("EP_OP_NONZERO", "ep_where_params"),
    "slice_dyn": ("EP_OP_SLICE_DYN", "ep_slice_dyn_params"),
    "shape": ("EP_OP_SHAPE", "ep_shape_params"),
}

# numpy dtype -> EP_DTYPE_* value (ONNX TensorProto numbering), from the C header
DTYPES = NUMPY_TO_EP
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}


@dataclass(eq=False)
class Tensor:
    name: str
    dtype: np.dtype
    shape: tuple
    data: Optional[np.ndarray] = None      # constant data (C-contiguous, dtype/shape as above)
    view_of: Optional["Tensor"] = None     # shares storage with this tensor (same nbytes)
    is_input: bool = False
    is_output: bool = False
    is_state: bool = False                 # streaming state: kept across runs (compiler/dynamic.py)
    dim_sym: tuple = ()                    # per dim: 0 static, k + 1 = symbol k of Graph.syms

    @property
    def is_const(self) -> bool:
        return self.data is not None or (self.view_of is not None and self.view_of.is_const)

    @property
    def nbytes(self) -> int:
        return math.prod(int(d) for d in self.shape) * np.dtype(self.dtype).itemsize

    def storage(self) -> "Tensor":
        """The tensor that owns this one's bytes (follows view chains)."""
        t = self
        while t.view_of is not None:
            t = t.view_of
        return t


@dataclass(eq=False)
class Op:
    kind: str                              # key of OPCODES
    inputs: list                           # list[Tensor | None]; None = absent optional input
    outputs: list                          # list[Tensor]
    params: dict = field(default_factory=dict)
    name: str = ""                         # source ONNX node name(s), for errors and inspect
    variant: int = 0
    scratch: int = 0                       # scratch bytes the chosen variant needs
    inplace: Optional[int] = None          # index of an input whose buffer the output may reuse


@dataclass(eq=False)
class Graph:
    tensors: list                          # every Tensor referenced (inputs, outputs, consts, views)
    ops: list                              # execution order
    inputs: list                           # graph input Tensors, in model order
    outputs: list                          # graph output Tensors, in model order
    fused: list = field(default_factory=list)   # human-readable notes of what passes did
    meta: dict = field(default_factory=dict)
    syms: list = field(default_factory=list)    # dynamic.Sym records of variable dims (plan SYMS section)
