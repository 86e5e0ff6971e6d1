"""IR → graph.Graph: runs each node's lowering function (ops/*), then gives every graph output its own
buffer. Lowering functions compute output shapes themselves from the (static) input tensors."""
from __future__ import annotations

import random
import re

import numpy as np

from .._cdef import K
from . import graph, ir, limits
from .errors import Problems
from .writer import FieldError, pack_params


# ops the compiler evaluates at compile time only (passes/fold.py): one that is left has an input whose shape
# or value is not known then
COMPILE_TIME_ONLY = {"Shape": "the shape of", "Size": "the shape of", "ConstantOfShape": "the value of",
                     "EyeLike": "the shape of", "MelWeightMatrix": "the values of", "HannWindow": "the value of",
                     "HammingWindow": "the value of", "BlackmanWindow": "the value of"}


def _compile_time_only(m: ir.Model, n: ir.Node, producers: dict) -> str:
    """Why node n, an op evaluated at compile time, could not be: the first input whose shape (or value)
    is unknown, and the node it comes from."""
    need = COMPILE_TIME_ONLY[n.op_type]
    for name in (i for i in n.inputs if i):
        known = m.static_shape(name) is not None if need == "the shape of" else m.const(name) is not None
        if known:
            continue
        p = producers.get(name)
        why = "has no static shape" if need == "the shape of" else "is not a constant"
        if p is None:
            return (f"{n.op_type} is evaluated at compile time, but its input '{name}' {why}: it is a graph "
                    f"input with unpinned dims; pin them (--shape)")
        return (f"{n.op_type} is evaluated at compile time, but its input '{name}' {why}: it comes from node "
                f"'{p.name}' ({p.op_type}), so it is only known at run time, and edgeplan does not compute "
                f"{n.op_type} at run time there")
    return f"{n.op_type} is evaluated at compile time, but it could not be ({n.note or 'no reason recorded'})"


# value_here: ops never evaluated while lowering, and the most elements a value it evaluates may have
LATE_FOLD_NEVER = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                   "Bernoulli", "If", "Loop", "Scan", "NonZero", "Unique", "TopK"}
LATE_FOLD_ELEMS = 64


class NodeError(Exception):
    """A node cannot be lowered; the message says what is unsupported."""


class _Poisoned(Exception):
    """An input comes from a node that already failed: stay quiet."""


PAD8 = 8


def tensor_problem(shape, dtype, io=False):
    """Why a tensor of this shape and dtype cannot be in a plan (limits.tensor_problem), or None. Graph
    inputs (io) must also have a dtype the plan has a code for; constants of other dtypes may still be
    converted by the lowering that takes them."""
    if io and np.dtype(dtype) not in graph.DTYPES:
        known = ", ".join(sorted(d.name for d in graph.DTYPES))
        desc = f"[{', '.join(str(int(d)) for d in shape)}] {np.dtype(dtype).name}"
        return f"{desc}, a dtype plans do not hold ({known})"
    return limits.tensor_problem(shape, dtype, K.EP_MAX_RANK)


def pad8(values, fill):
    vals = [int(v) for v in values]
    return vals + [fill] * (PAD8 - len(vals))


class Lowerer:
    def __init__(self, m: ir.Model, problems: Problems, symbols=None, handlers=None):
        self.m = m
        self.handlers = handlers or {}   # (domain, op_type) -> lowering function (ops.HANDLERS)
        self.symbols = dict(symbols or {})   # dim name -> value in this lowering (compiler/dynamic.py)
        self.data_dims: list = []            # (tensor, dim, symbol name, declared) of data-dependent extents
        self.problems = problems
        self.tensors: dict = {}          # IR value name -> graph.Tensor
        self.order: list = []            # every graph.Tensor, creation order
        self.ops: list = []
        self.names: set = set()
        self.poisoned: set = set()
        self.warnings: list = []         # what the plan does differently from the model (the plan's report)
        self._here: dict = {}            # value_here's results
        self._undeclared = 0             # data_dim's undeclared lengths so far
        self._same: dict = {}            # data_dim's keyed lengths
        self._producers = None           # IR value -> node, while lower_nodes runs
        self.node = None

    # ---------------------------------------------------------------- tensors
    def unique(self, base: str) -> str:
        name, k = base, 1
        while name in self.names:
            name, k = f"{base}_{k}", k + 1
        self.names.add(name)
        return name

    def _add(self, t: graph.Tensor) -> graph.Tensor:
        self.order.append(t)
        return t

    def new(self, base, shape, dtype, data=None, view_of=None) -> graph.Tensor:
        shape = tuple(int(d) for d in shape)
        why = tensor_problem(shape, dtype)
        if why:
            raise NodeError(f"{'output' if self.node is not None and base in self.node.outputs else 'tensor'} "
                            f"'{base}' {why}")
        if data is not None:
            data = np.asarray(data, dtype=dtype, order="C").reshape(shape)
        return self._add(graph.Tensor(self.unique(base), np.dtype(dtype), shape, data=data, view_of=view_of))

    def const(self, base, data) -> graph.Tensor:
        data = np.asarray(data, order="C")
        return self.new(base, data.shape, data.dtype, data=data)

    def tensor(self, name: str) -> graph.Tensor:
        """The graph tensor of IR value `name` (constants are created on first use)."""
        t = self.tensors.get(name)
        if t is not None:
            return t
        if name in self.poisoned:
            raise _Poisoned(name)
        a = self.m.const(name)
        if a is None:
            raise NodeError(f"input '{name}' has no producer")
        if a.dtype == object:
            raise NodeError(f"string tensor '{name}' is unsupported")
        t = self.tensors[name] = self.const(name, a)
        return t

    def input(self, n: ir.Node, i: int, what: str = None, optional=False):
        name = n.input(i)
        if not name:
            if optional:
                return None
            raise NodeError(f"input {i} ({what or 'required'}) is missing")
        return self.tensor(name)

    def const_input(self, n: ir.Node, i: int, what: str, optional=False):
        """The constant data of input i, or NodeError when it is computed at run time."""
        name = n.input(i)
        if not name:
            if optional:
                return None
            raise NodeError(f"{what} (input {i}) is missing")
        if name in self.poisoned:
            raise _Poisoned(name)
        a = self.m.const(name)
        if a is None:
            a = self.value_here(name)
        if a is None:
            raise NodeError(f"{what} (input {i}, '{name}') is computed at run time; only a constant is supported")
        return a

    def known(self, name: str) -> bool:
        """Whether IR value `name` is a constant in this lowering: the model's, or value_here's."""
        return bool(name) and self.value_here(name) is not None

    def value_here(self, name: str, depth: int = 0):
        """The value of IR value `name` in this lowering when it is shape arithmetic on extents this
        lowering knows but the model's static shapes did not (a tensor whose length the data decides):
        Shape / Size of a lowered tensor, and small default-domain ops of such values and constants.
        None otherwise. compiler/dynamic.py lowers at several lengths, so a value that follows one is
        traced like a shape computed from an input's dims."""
        a = self.m.const(name)
        if a is not None or depth > 64:
            return a
        if name in self._here:
            return self._here[name]
        self._here[name] = None
        p = self.m.producers().get(name) if self._producers is None else self._producers.get(name)
        if p is None or p.domain != "" or not p.inputs:
            return None
        out = None
        if p.op_type in ("Shape", "Size"):
            t = self.tensors.get(p.inputs[0])
            if t is not None:
                from .passes.fold import _shape_const
                out = [np.array(int(np.prod(t.shape, dtype=np.int64)), np.int64) if p.op_type == "Size"
                       else _shape_const(p, t.shape)]
        elif p.op_type not in LATE_FOLD_NEVER:
            arrays = [self.value_here(i, depth + 1) if i else None for i in p.inputs]
            if all(a is not None or not i for a, i in zip(arrays, p.inputs)) and \
                    all(a is None or (a.dtype != object and a.size <= LATE_FOLD_ELEMS) for a in arrays):
                from .passes.fold import evaluate
                try:
                    out = evaluate(p, arrays, self.m.opset)
                except Exception:  # noqa: BLE001 — not evaluable here: computed at run time only
                    out = None
        if out is None:
            return None
        for o, v in zip(p.outputs, out):
            if o and v is not None:
                self._here[o] = np.asarray(v)
        return self._here.get(name)

    def bind(self, name: str, t: graph.Tensor) -> graph.Tensor:
        """Make t the tensor of IR value `name`."""
        self.tensors[name] = t
        return t

    def output(self, n: ir.Node, i: int, shape, dtype) -> graph.Tensor:
        name = n.outputs[i]
        t = self.new(name, shape, dtype)
        return self.bind(name, t)

    def view(self, src: graph.Tensor, shape, base: str = None) -> graph.Tensor:
        shape = tuple(int(d) for d in shape)
        if int(np.prod(shape, dtype=np.int64)) != int(np.prod(src.shape, dtype=np.int64)):
            raise NodeError(f"cannot view {src.shape} as {shape}")
        if shape == tuple(src.shape) and base is None:
            return src
        if src.data is not None:
            return self.new(base or src.name + "/view", shape, src.dtype, data=src.data.reshape(shape))
        return self.new(base or src.name + "/view", shape, src.dtype, view_of=src)

    def view_output(self, n: ir.Node, i: int, src: graph.Tensor, shape) -> graph.Tensor:
        """IR output i of n is a zero-copy view of src."""
        shape = tuple(int(d) for d in shape)
        name = n.outputs[i]
        if src.data is not None:
            return self.bind(name, self.new(name, shape, src.dtype, data=src.data.reshape(shape)))
        if int(np.prod(shape, dtype=np.int64)) != int(np.prod(src.shape, dtype=np.int64)):
            raise NodeError(f"cannot view {src.shape} as {shape}")
        return self.bind(name, self.new(name, shape, src.dtype, view_of=src))

    def data_dim(self, n: ir.Node, i: int, d: int, default=None, same=None, by_output=True) -> tuple:
        """(extent, symbol name, declared) for dim d of output i of n, whose length depends on the data. The
        bound comes from dims= under the dim's name in the model (value_info dim_param), under
        "<output>:<d>", or under the output's name (unless by_output is False: a second data-dependent
        dim of one output); without one,
        `default` (a natural maximum such as NonZero's element count) or an error. Lengths given the same
        key `same` (NonZero of one mask, through views) are one length."""
        if same is not None and same in self._same:
            return self._same[same]
        got = self._data_dim(n, i, d, default, by_output)
        if same is not None:
            self._same[same] = got
        return got

    def _data_dim(self, n: ir.Node, i: int, d: int, default, by_output=True) -> tuple:
        out = n.outputs[i]
        # onnx's shape inference names unknown dims unk__N: not names a user can know, so not keys
        params = [None if p and re.fullmatch(r"unk__\d+", p) else p for p in self.m.dim_params.get(out, ())]
        by_name = [params[d]] if d < len(params) and params[d] else []
        for key in by_name + [f"{out}:{d}"] + ([out] if by_output else []):
            if key in self.symbols:
                return int(self.symbols[key]), key, True
        if default is None:
            hint = params[d] if d < len(params) and params[d] else out if by_output else f"{out}:{d}"
            e = NodeError(f"the length of output '{out}' depends on the data: declare its maximum with "
                          f"dims={{'{hint}': (0, MAX)}} / --dim {hint}=0..MAX")
            e.length = hint
            raise e
        # undeclared: the natural maximum at the bound; at the other lengths compiler/dynamic.py lowers at,
        # a little less, by amounts of its own (seeded by its place in the lowering), so that this length
        # looks neither like one that follows the input shapes nor like another undeclared one
        j = int(self.symbols.get("__trace__", 0))
        k, self._undeclared = self._undeclared, self._undeclared + 1
        less = 0 if j == 0 or default < 1 else random.Random(k * 1009 + j).randint(1, min(int(default), 16))
        return int(default) - less, f"{out}:len{d}", False

    def bound_of(self, sym: str, extent: int) -> int:
        """The plan's bound of data-dependent length `sym` (its extent in this lowering is `extent`): the
        declared maximum, the same in every lowering compiler/dynamic.py runs."""
        return int(self.symbols.get("__bounds__", {}).get(sym, extent))

    def tmp(self, base: str, shape, dtype=np.float32) -> graph.Tensor:
        return self.new(base, shape, dtype)

    # ---------------------------------------------------------------- ops
    def emit(self, kind: str, inputs, outputs, params=None, inplace=None, name=None) -> graph.Op:
        """Append a runtime op; its params must fit their C struct fields (packed here once, so a value
        out of range is the node's error, not the writer's)."""
        assert kind in graph.OPCODES, kind
        for t in list(inputs) + list(outputs):
            if t is not None and np.dtype(t.dtype) not in graph.DTYPES:
                known = ", ".join(sorted(d.name for d in graph.DTYPES))
                raise NodeError(f"tensor '{t.name}' has dtype {np.dtype(t.dtype).name}, which plans do not hold "
                                f"({known})")
        try:
            pack_params(kind, dict(params or {}))
        except FieldError as e:
            raise NodeError(f"parameter '{e.field}' = {e.value} does not fit the plan's {e.ctype} field "
                            f"({e.reason})") from None
        op = graph.Op(kind, list(inputs), list(outputs), dict(params or {}),
                      name=name if name is not None else (self.node.name if self.node is not None else ""),
                      inplace=inplace)
        self.ops.append(op)
        return op

    def need_f32(self, *tensors, what="input"):
        for t in tensors:
            if t is not None and t.dtype != np.float32:
                raise NodeError(f"{what} '{t.name}' has dtype {t.dtype.name}; only float32 is supported")

    def attr(self, n, key, default=None):
        return n.attrs.get(key, default)

    # ---------------------------------------------------------------- driver
    def lower_node(self, n: ir.Node, handler) -> None:
        outer = self.node   # a branch's nodes are lowered inside their If's lowering
        self.node = n
        n_ops = len(self.ops)
        try:
            handler(self, n)
            missing = [o for o in n.outputs if o and o not in self.tensors]
            if missing:
                raise NodeError(f"lowering produced no tensor for output(s) {missing}")
        except _Poisoned:
            del self.ops[n_ops:]
            self.poisoned.update(o for o in n.outputs if o)
        except NodeError as e:
            del self.ops[n_ops:]
            self.problems.add(n, str(e), length=getattr(e, "length", None))
            self.poisoned.update(o for o in n.outputs if o)
        except (ValueError, TypeError, IndexError, KeyError, ArithmeticError) as e:
            # what malformed attributes make numpy or int() raise (a string where ints belong, say)
            del self.ops[n_ops:]
            self.problems.add(n, f"cannot lower the node, its attributes or inputs are malformed "
                                 f"({type(e).__name__}: {e})")
            self.poisoned.update(o for o in n.outputs if o)
        finally:
            self.node = outer

    def lower_nodes(self, nodes, producers: dict) -> None:
        """Lower nodes (in order) of self.m; producers maps each value to its node, for error messages."""
        outer, self._producers = self._producers, producers
        try:
            for n in nodes:
                h = self.handlers.get((n.domain, n.op_type))
                if h is None:
                    self.poisoned.update(o for o in n.outputs if o)
                    if n.domain == "" and n.op_type in COMPILE_TIME_ONLY:
                        if not any(i in self.poisoned for i in n.inputs if i):   # else the cause is reported upstream
                            self.problems.add(n, _compile_time_only(self.m, n, producers))
                        continue
                    what = (f"op type '{n.op_type}' is unsupported" if n.domain == ""
                            else f"op '{n.op_type}' of domain '{n.domain}' is unsupported (only the default ONNX domain)")
                    if n.note:
                        what += f" ({n.note})"
                    self.problems.add(n, what)
                    continue
                self.lower_node(n, h)
        finally:
            self._producers = outer

    def finish_outputs(self, out_names) -> list:
        """Every graph output gets its own buffer: a copy op where it is (a view of) an input or a constant,
        or shares storage with an earlier output."""
        outs = [self.tensor(o) for o in out_names]
        claimed = set()
        result = [None] * len(outs)
        # real (non-view) tensors claim their storage first, views later
        for k in sorted(range(len(outs)), key=lambda k: outs[k].view_of is not None):
            t = outs[k]
            st = t.storage()
            if t.is_const or st.is_input or id(st) in claimed or any(r is t for r in result if r is not None):
                name = t.name
                self.names.discard(name)
                if not t.is_input:
                    t.name = self.unique(name + ("/const" if t.is_const else "/src"))
                out = self.new(name, t.shape, t.dtype)
                self.emit("copy", [t], [out], {"axis": 0}, name=f"{name}/copy")
                t = out
            claimed.add(id(t.storage()))
            t.is_output = True
            result[k] = t
        return result


def _drop_unread(low: Lowerer, outputs: list) -> None:
    """Removes the ops nothing reads: the run-time arithmetic of a shape that the op using it took as a
    constant (Lowerer.value_here). Branch ops, ops without outputs (a bound check) and the ops a branch
    link names stay; data-dependent lengths of removed ops are dropped with them."""
    anchored = {id(op.branch) for op in low.ops if op.branch is not None}
    need = {id(t.storage()) for t in outputs}
    keep = []
    for op in reversed(low.ops):
        outs = [t for t in op.outputs if t is not None]
        if (outs and op.kind not in ("if", "else") and id(op) not in anchored
                and not any(id(t.storage()) in need for t in outs)):
            continue
        keep.append(op)
        need.update(id(t.storage()) for t in op.inputs if t is not None)
    if len(keep) == len(low.ops):
        return
    low.ops = keep[::-1]
    written = {id(t) for op in low.ops for t in op.outputs if t is not None}
    low.data_dims = [d for d in low.data_dims if id(d[0]) in written]


def lower_model(m: ir.Model, problems: Problems, handlers: dict, notes: list, symbols=None) -> graph.Graph:
    low = Lowerer(m, problems, symbols, handlers)
    inputs = []
    for name in m.inputs:
        v = m.values[name]
        if v.shape is not None and any(isinstance(d, int) and d < 0 for d in v.shape):
            problems.add(None, f"input '{name}' has negative dims {list(v.shape)}")
            low.poisoned.add(name)
            continue
        if v.dtype is None or not v.is_static:
            problems.add(None, f"input '{name}' has unknown dtype or shape")
            low.poisoned.add(name)
            continue
        why = tensor_problem(v.shape, v.dtype, io=True)
        if why:
            problems.add(None, f"input '{name}' {why}")
            low.poisoned.add(name)
            continue
        t = low.new(name, v.shape, v.dtype)
        t.is_input = True
        inputs.append(low.bind(name, t))
    low.lower_nodes(m.nodes, m.producers())
    outputs = []
    if not any(o in low.poisoned for o in m.outputs) and not problems:
        outputs = low.finish_outputs(m.outputs)
    problems.raise_if_any()
    _drop_unread(low, outputs)
    used = []
    seen = set()

    def visit(t):
        while t is not None and id(t) not in seen:
            seen.add(id(t))
            used.append(t)
            t = t.view_of
    for t in inputs:
        visit(t)
    for op in low.ops:
        for t in op.inputs + op.outputs:
            visit(t)
    for t in outputs:
        visit(t)
    rank = {id(t): i for i, t in enumerate(low.order)}
    used.sort(key=lambda t: rank[id(t)])
    return graph.Graph(tensors=used, ops=low.ops, inputs=inputs, outputs=outputs, fused=list(notes),
                       meta={"opset": m.opset, "data_dims": low.data_dims, "dim_params": m.dim_params,
                             "warnings": list(low.warnings), "code_scales": getattr(m, "code_scales", {})})
