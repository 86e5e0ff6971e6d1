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
from .optable import OPS

# runtime op name -> (EP_OP_* constant name, C params struct), from the op table (runtime_c/ops.def)
OPCODES = {name: (o.const, o.params) for name, o in OPS.items()}

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
    fill: int = 0                          # a state's reset byte (an int8 state's zero point)
    dim_sym: tuple = ()                    # per dim: 0 static, k + 1 = symbol k of Graph.syms
    layout: int = 0                        # EP_LAYOUT_* (passes/layout.py): PLAIN, or C8 [N][C/8][H][W][8]

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
    exact: bool = False                    # integer-valued operands summed exactly (no Winograd)
    branch: Optional["Op"] = None          # "if": its "else" op; "else": the last op of its branch (itself
                                           # when it is empty). link_branches() turns these into skips


@dataclass(eq=False)
class Graph:
    tensors: list                          # every Tensor referenced (inputs, outputs, consts, views)
    ops: list                              # execution order
    inputs: list                           # graph input Tensors, in model order
    outputs: list                          # graph output Tensors, in model order
    fused: list = field(default_factory=list)   # human-readable notes of what passes did
    meta: dict = field(default_factory=dict)
    syms: list = field(default_factory=list)    # dynamic.Sym records of variable dims (plan SYMS section)
    repacked: dict = field(default_factory=dict, repr=False)   # replace_const's made weights

    def readers(self) -> dict:
        """{id(tensor): [(op, input slot), ...]} in execution order: who reads each tensor (not its views)."""
        out: dict = {}
        for op in self.ops:
            for i, t in enumerate(op.inputs):
                if t is not None:
                    out.setdefault(id(t), []).append((op, i))
        return out

    def replace_const(self, op: Op, index: int, pack, suffix: str, *params) -> Tensor:
        """Gives op a new constant as input `index` (float32, or int8 when pack() gives int8): pack(), the old
        constant repacked, named
        '<old>:<suffix>'. The repacked form is made once per (old tensor, suffix, params), so
        ops sharing a weight (an unrolled loop's steps) share it too: suffix and params name everything
        pack depends on. The old tensor leaves the graph unless something else still uses it."""
        old = op.inputs[index]
        key = (id(old), suffix, params)
        new = self.repacked.get(key, (None, None))[1]
        if new is None:
            data = pack()
            dt = np.dtype(np.int8) if data.dtype == np.int8 else np.dtype(np.float32)
            new = Tensor(f"{old.name}:{suffix}", dt, tuple(int(d) for d in data.shape), data=data)
            self.repacked[key] = (old, new)   # old is kept alive: its id stays its own
            self.tensors.append(new)
        op.inputs[index] = new
        still_used = any(t is old for o in self.ops for t in o.inputs) or any(
            t.view_of is old for t in self.tensors) or old.is_input or old.is_output
        if not still_used and old in self.tensors:
            self.tensors.remove(old)
        return new


def branch_paths(ops) -> list:
    """Per op, the branches it runs in, outermost first: a tuple of (id of the "if" op, 0 then / 1 else).
    An "if" or "else" op itself belongs to the branch around it. Ops whose path is a prefix of another's
    always run before it (when it runs)."""
    paths, stack = [], []      # stack: [if op, 0/1, the op that ends the branch being followed]
    for op in ops:
        if stack and stack[-1][1] == 0 and op is stack[-1][2]:   # the then branch's "else"
            stack[-1][1:] = [1, op.branch]
            paths.append(tuple((id(f[0]), f[1]) for f in stack[:-1]))
        else:
            paths.append(tuple((id(f[0]), f[1]) for f in stack))
            if op.kind == "if":
                stack.append([op, 0, op.branch])
        while stack and stack[-1][1] == 1 and op is stack[-1][2]:   # else branches that end here
            stack.pop()
    return paths


def link_branches(ops) -> None:
    """Sets the skips of the "if" / "else" ops (ep_branch_params) from their links, once the op list is
    final: "if" to its "else", "else" past its branch's last op."""
    at = {id(op): i for i, op in enumerate(ops)}
    for i, op in enumerate(ops):
        if op.kind in ("if", "else"):
            j = at[id(op.branch)]
            assert j > i if op.kind == "if" else j >= i, (op.kind, op.name)
            op.params = dict(op.params, skip=j - i)


def const_f32(t: Tensor | None):
    """t's constant data (through views) in t's shape when it is a float32 constant, else None."""
    if t is None:
        return None
    s = t.storage()
    if s.data is None or np.dtype(s.dtype) != np.float32:
        return None
    return np.asarray(s.data).reshape(t.shape)
