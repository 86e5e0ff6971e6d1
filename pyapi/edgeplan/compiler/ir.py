"""The ONNX-level IR that the passes mutate: named values (dtype, static-or-partial shape, optional constant
data) and nodes (op_type, attrs, input/output value names). An absent optional input is the empty name "".

Internal node types created by the passes live in the "edgeplan" domain (see passes/fuse.py): EpGemm (a
gemm with constant B[K,N]) and EpAct (a standalone activation recognised from a pattern). Fused epilogues
are recorded on Conv/ConvTranspose/EpGemm/binary nodes as attrs ep_act/ep_alpha/ep_beta, and a residual
as a 4th input of Conv/EpGemm.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

EP_DOMAIN = "edgeplan"


@dataclass(eq=False)
class Value:
    name: str
    dtype: Optional[np.dtype] = None
    shape: Optional[tuple] = None          # one int (or None when unknown) per dim; None = unknown rank
    const: Optional[np.ndarray] = None     # constant data

    @property
    def is_static(self) -> bool:
        return self.shape is not None and all(isinstance(d, int) and d >= 0 for d in self.shape)


@dataclass(eq=False)
class Node:
    op_type: str
    inputs: list
    outputs: list
    attrs: dict = field(default_factory=dict)
    name: str = ""
    domain: str = ""
    proto: object = None                   # the source onnx NodeProto (its attributes), if any
    note: str = ""                         # why folding this node failed, for error messages
    captures: tuple = ()                   # outer values its subgraphs read, by their names at import: the
                                           # last len(captures) inputs are those values' current names
    exact: bool = False                    # an integer product in float32 (passes/qdq.py): nothing is fused
                                           # into it and its kernel variant sums exactly

    def input(self, i: int) -> str:
        return self.inputs[i] if i < len(self.inputs) else ""

    def own_inputs(self) -> list:
        """The inputs of the ONNX node itself (without the captured values)."""
        return self.inputs[:len(self.inputs) - len(self.captures)]

    def subgraph(self, key: str):
        """A copy of graph attribute `key` that reads the captured outer values by their current names
        (passes rename values after import)."""
        import onnx
        g = onnx.GraphProto()
        g.CopyFrom(self.attrs[key])
        if self.captures:
            now = self.inputs[len(self.inputs) - len(self.captures):]
            ren = {a: b for a, b in zip(self.captures, now) if a != b}
            if ren:
                from .onnx_import import rename_graph
                rename_graph(g, ren)
        return g


# nodes kept without consumers: they fail the run when their condition holds (ops/control.py)
EFFECTS = {("ai.edgeplan", "FailIf")}


class Model:
    def __init__(self, opset: int):
        self.opset = opset
        self.opsets: dict = {"": opset}   # every domain the model imports -> its version
        self.values: dict = {}
        self.nodes: list = []
        self.inputs: list = []             # runtime graph inputs (value names), model order
        self.outputs: list = []            # graph outputs (value names), model order
        self.dim_params: dict = {}         # value name -> dim_param name per dim (None: unnamed), from the model
        self.from_shapes: set = set()      # constants folded from a Shape or Size (passes/fold.py): values that
                                           # follow a variable length when compiler/dynamic.py lowers
        self._taken: set = set()

    # ---- values ----
    def value(self, name: str) -> Value:
        v = self.values.get(name)
        if v is None:
            v = self.values[name] = Value(name)
            self._taken.add(name)
        return v

    def const(self, name: str) -> Optional[np.ndarray]:
        if not name:
            return None
        v = self.values.get(name)
        return None if v is None else v.const

    def set_const(self, name: str, data) -> None:
        arr = np.asarray(data, order="C")
        v = self.value(name)
        v.const, v.dtype, v.shape = arr, arr.dtype, tuple(int(d) for d in arr.shape)

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self._taken or name in self.values:
            name, k = f"{base}_{k}", k + 1
        self._taken.add(name)
        return name

    def add_const(self, base: str, data) -> str:
        name = self.fresh(base)
        self.set_const(name, data)
        return name

    def dtype(self, name: str) -> Optional[np.dtype]:
        """The dtype of a constant or a value with a known one, else None."""
        a = self.const(name)
        if a is not None:
            return np.dtype(a.dtype)
        v = self.values.get(name)
        return np.dtype(v.dtype) if v is not None and v.dtype is not None else None

    def shape(self, name: str) -> Optional[tuple]:
        v = self.values.get(name)
        return None if v is None else v.shape

    def static_shape(self, name: str) -> Optional[tuple]:
        v = self.values.get(name)
        return v.shape if v is not None and v.is_static else None

    # ---- graph structure ----
    def producers(self) -> dict:
        return {o: n for n in self.nodes for o in n.outputs if o}

    def consumers(self) -> dict:
        cons: dict = {}
        for n in self.nodes:
            seen = set()
            for i in n.inputs:
                if i and i not in seen:
                    seen.add(i)
                    cons.setdefault(i, []).append(n)
        return cons

    def replace_uses(self, old: str, new: str) -> None:
        for n in self.nodes:
            if old in n.inputs:
                n.inputs = [new if i == old else i for i in n.inputs]
        self.outputs = [new if o == old else o for o in self.outputs]

    def rename_value(self, old: str, new: str) -> None:
        """Give value `old` (produced by a node) the name `new` everywhere."""
        v = self.values.pop(old, None)
        if v is not None:
            nv = self.value(new)
            nv.dtype = nv.dtype if nv.dtype is not None else v.dtype
            nv.shape = nv.shape if nv.shape is not None else v.shape
        for n in self.nodes:
            n.outputs = [new if o == old else o for o in n.outputs]
        self.replace_uses(old, new)

    def toposort(self) -> list:
        """Stable topological order (model order where possible). Returns the nodes that could not be
        scheduled (missing inputs or cycles); they are left at the end."""
        avail = set(self.inputs) | {k for k, v in self.values.items() if v.const is not None} | {""}
        waiting: dict = {}
        missing = {}
        prods = self.producers()
        heap = []
        for idx, n in enumerate(self.nodes):
            need = {i for i in n.inputs if i not in avail and i in prods}
            missing[idx] = len(need)
            for i in need:
                waiting.setdefault(i, []).append(idx)
            if not need:
                heapq.heappush(heap, idx)
        order = []
        done = set()
        while heap:
            idx = heapq.heappop(heap)
            n = self.nodes[idx]
            order.append(n)
            done.add(idx)
            for o in n.outputs:
                for j in waiting.pop(o, ()):
                    missing[j] -= 1
                    if missing[j] == 0:
                        heapq.heappush(heap, j)
        stuck = [n for idx, n in enumerate(self.nodes) if idx not in done]
        self.nodes = order + stuck
        return stuck

    def remove_dead(self) -> None:
        """Drops the nodes no graph output depends on, except the run-time checks (EFFECTS)."""
        prods = self.producers()
        live = set(self.outputs)
        keep = {id(n) for n in self.nodes if (n.domain, n.op_type) in EFFECTS}
        live |= {i for n in self.nodes if id(n) in keep for i in n.inputs if i}
        stack = list(live)
        while stack:
            n = prods.get(stack.pop())
            if n is None or id(n) in keep:
                continue
            keep.add(id(n))
            for i in n.inputs:
                if i and i not in live:
                    live.add(i)
                    stack.append(i)
        self.nodes = [n for n in self.nodes if id(n) in keep]
        used = live | set(self.inputs)
        for name in [k for k, v in self.values.items() if k not in used]:
            del self.values[name]
