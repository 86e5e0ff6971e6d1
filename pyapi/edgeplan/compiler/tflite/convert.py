"""TFLite subgraph -> ONNX ModelProto, with each tensor's layout tracked through the graph.

Every TFLite tensor t is held in ONNX as `transpose(t, perm)` for a perm chosen by its producer: the image
ops (convolutions, pools, resizes, depth-to-space) produce and read NCHW (perm (0, 3, 1, 2) of TFLite's
NHWC); element-wise ops keep their input's perm; ops with axes (reductions, concatenation, split, softmax,
pad, slices, gather) map their axes through it; reshapes that only add or drop unit dims keep it. A
Transpose is emitted only where a reader needs a perm its producer did not give: at the graph's inputs and
outputs (which keep TFLite's NHWC shapes and names) and before a reshape that mixes dims (a flatten of
H x W x C before FULLY_CONNECTED reads TFLite's NHWC order; see Converter.reshape).

Quantised tensors (int8 / uint8 / int16 with scales) are held as their codes; an op reads
DequantizeLinear(codes) and writes QuantizeLinear(result), so a QDQ graph comes out and compiler/passes/int8.py
maps the Conv / Gemm / Add / element-wise chains onto the int8 kernels."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError, Problem
from .reader import Graph, Op, Tensor

OPSET = 21
NCHW = (0, 3, 1, 2)


def ident(r: int) -> tuple:
    return tuple(range(r))


def compose(p, q) -> tuple:
    """The perm r with x.transpose(p).transpose(q) == x.transpose(r)."""
    return tuple(p[i] for i in q)


def inverse(p) -> tuple:
    inv = [0] * len(p)
    for i, a in enumerate(p):
        inv[a] = i
    return tuple(inv)


def onnx_type(dt) -> int:
    from onnx import helper
    return helper.np_dtype_to_tensor_dtype(np.dtype(dt))


class Unsupported(Exception):
    """An op (or an option of it) the importer does not map; collected per node into one CompileError."""


class Downstream(Exception):
    """An op reads a tensor that an op which failed to import writes: not reported again."""


class Converter:
    def __init__(self, g: Graph, shapes: dict | None = None):
        self.g = g
        self.pinned = dict(shapes or {})   # input name -> the shape the caller runs it with
        self.nodes: list = []
        self.inits: list = []
        self.used: set = set()
        self.vals: dict = {}       # tensor index -> {perm: ONNX name of its values (codes when quantised)}
        self.made: dict = {}       # tensor index -> the perm its producer wrote
        self.fvals: dict = {}      # (tensor index, perm, op index) -> ONNX name of its dequantised values
        self.shapes: dict = {}     # tensor index -> static shape (TFLite order)
        self.consts: dict = {}     # tensor index -> numpy constant (TFLite order), folded at import
        self.cinit: dict = {}      # (tensor index, perm, rank) -> initializer name
        self.op: Op = None
        self.failed: set = set()   # tensors written by ops that did not import
        self.fp16_weights = 0      # float16 constants dequantised at import (kept 16-bit by weights16)
        # resource variables (variables.py): handle tensor -> key, key -> initial value / state / value now
        self.var_of: dict = {}
        self.var_init: dict = {}
        self.var_state: dict = {}  # key -> (state input name, TFLite shape, tensor whose codes an int8 state holds)
        self.var_cur: dict = {}
        self.var_written: set = set()
        self.state_inputs: list = []
        self.state: dict = {}      # state input name -> the output fed back into it after each run
        self.state_fill: dict = {} # state input name -> its reset byte (an int8 state's zero point)
        written = {o for op in g.ops for o in op.outputs}
        for t in g.tensors:
            self.shapes[t.index] = t.shape
            if t.data is not None:
                self.consts[t.index] = t.data
            elif (t.dtype is not None and t.shape and 0 in t.shape and t.index not in written
                  and t.index not in g.inputs):   # an empty constant has no buffer (a reshape to a scalar)
                self.consts[t.index] = np.zeros(t.shape, t.dtype)

    # ---- names and nodes ------------------------------------------------------------------------------
    def uname(self, base: str) -> str:
        base = base or "v"
        name, k = base, 1
        while name in self.used:
            k += 1
            name = f"{base}:{k}"
        self.used.add(name)
        return name

    def node(self, op_type: str, inputs: list, n_out: int = 1, base: str = "", **attrs):
        from onnx import helper
        outs = [self.uname(base or f"{self.opname()}/{op_type}") for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=self.uname(f"{self.opname()}/{op_type}"),
                                           **attrs))
        return outs[0] if n_out == 1 else outs

    def opname(self) -> str:
        if self.op is None:
            return "edge"
        out = self.g.tensors[self.op.outputs[0]].name if self.op.outputs else ""
        return f"{self.op.name}#{self.op.index}" + (f"({out})" if out else "")

    def init(self, arr: np.ndarray, base: str = "c") -> str:
        from onnx import numpy_helper
        name = self.uname(base)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def ints(self, values, base: str = "c") -> str:
        return self.init(np.asarray(values, np.int64), base)

    def scalar(self, v, dt=np.float32) -> str:
        return self.init(np.asarray(v, dt), "c")

    # ---- tensors ------------------------------------------------------------------------------------
    def t(self, i: int) -> Tensor:
        return self.g.tensors[i]

    def shape(self, i: int) -> tuple:
        return tuple(self.shapes[i])

    def rank(self, i: int) -> int:
        return len(self.shapes[i])

    def const(self, i: int):
        return self.consts.get(i) if i >= 0 else None

    def is_const(self, i: int) -> bool:
        return i >= 0 and i in self.consts

    def quantized(self, i: int) -> bool:
        t = self.t(i)
        return t.quant is not None and t.type in (3, 9, 7, 2) and not (t.type == 2 and i not in self.consts)

    def perm_of(self, i: int) -> tuple:
        if i in self.consts:
            return ident(len(self.consts[i].shape))
        return self.made.get(i, ident(self.rank(i)))

    def raw(self, i: int, perm=None) -> str:
        """The ONNX name of tensor i's values (codes when quantised) in layout perm (default: TFLite's)."""
        r = self.rank(i) if i not in self.consts else self.consts[i].ndim
        perm = tuple(perm) if perm is not None else ident(r)
        if i in self.consts:
            key = (i, perm)
            if key not in self.cinit:
                self.cinit[key] = self.init(np.transpose(self.consts[i], perm), self.t(i).name or "c")
            return self.cinit[key]
        have = self.vals.get(i)
        if have is None and i in self.failed:
            raise Downstream()
        if have is None:
            raise Unsupported(f"tensor '{self.t(i).name}' is read before any op writes it")
        if perm in have:
            return have[perm]
        p0 = self.made[i]
        q = tuple(p0.index(a) for a in perm)
        name = self.node("Transpose", [have[p0]], base=self.t(i).name + "/T", perm=list(q))
        have[perm] = name
        return name

    def qparams(self, i: int, perm, dtype=None):
        """(scale name, zero point name, axis) of tensor i's quantisation, the axis mapped through perm."""
        q = self.t(i).quant
        dt = dtype or self.t(i).dtype
        if q.per_channel:
            axis = list(perm).index(q.axis) if perm is not None else q.axis
            return (self.init(q.scale.astype(np.float32), "scale"),
                    self.init(q.zero_point.astype(dt), "zp"), axis)
        return (self.init(np.float32(q.scale[0]), "scale"), self.init(np.asarray(q.zero_point[0], dt), "zp"), None)

    def fl(self, i: int, perm=None) -> str:
        """Tensor i as float in layout perm: its codes dequantised when quantised."""
        r = self.rank(i) if i not in self.consts else self.consts[i].ndim
        perm = tuple(perm) if perm is not None else ident(r)
        if not self.quantized(i):
            return self.raw(i, perm)
        # one DequantizeLinear per reading op, as QDQ exporters write them: passes/int8.py matches each
        # reader's chain (a QLUT cone, a QGEMM) on its own
        key = (i, perm, self.op.index if self.op is not None else -1)
        if key not in self.fvals:
            s, z, axis = self.qparams(i, perm)
            attrs = {"axis": axis} if axis is not None else {}
            self.fvals[key] = self.node("DequantizeLinear", [self.raw(i, perm), s, z],
                                        base=self.t(i).name + "/dq", **attrs)
        return self.fvals[key]

    def fl_rank(self, i: int, r: int, perm) -> str:
        """Tensor i as float, its shape first padded with leading unit dims to rank r (numpy broadcasting),
        in layout perm."""
        ri = self.rank(i) if i not in self.consts else self.consts[i].ndim
        if ri == r:
            return self.fl(i, perm)
        if i in self.consts:
            arr = self.consts[i].reshape((1,) * (r - ri) + tuple(self.consts[i].shape))
            if self.quantized(i):
                q = self.t(i).quant
                if q.per_channel:
                    raise Unsupported(f"per-channel constant '{self.t(i).name}' broadcast to rank {r}")
                arr = (arr.astype(np.float32) - np.float32(q.zero_point[0])) * np.float32(q.scale[0])
            return self.init(np.transpose(arr.astype(np.float32), perm), self.t(i).name or "c")
        x = self.fl(i)
        y = self.node("Reshape", [x, self.ints((1,) * (r - ri) + self.shape(i))], base=self.t(i).name + "/r")
        if tuple(perm) == ident(r):
            return y
        return self.node("Transpose", [y], base=self.t(i).name + "/T", perm=list(perm))

    def put(self, i: int, name: str, perm=None, shape=None, is_float: bool = True) -> None:
        """Records `name` as tensor i's value in layout perm; a float result for a quantised tensor is
        quantised (QuantizeLinear) first. shape: tensor i's TFLite shape when the model's is not to be
        trusted (computed by the op)."""
        if shape is not None:
            self.shapes[i] = tuple(int(d) for d in shape)
        perm = tuple(perm) if perm is not None else ident(self.rank(i))
        if self.quantized(i) and is_float:
            s, z, axis = self.qparams(i, perm)
            if axis is not None:
                raise Unsupported(f"per-channel activation '{self.t(i).name}'")
            name = self.node("QuantizeLinear", [name, s, z], base=self.t(i).name)
        self.vals[i] = {perm: name}
        self.made[i] = perm

    def put_const(self, i: int, arr: np.ndarray) -> None:
        self.consts[i] = np.asarray(arr)
        self.shapes[i] = tuple(np.shape(arr))

    # ---- layout helpers -----------------------------------------------------------------------------
    def common_perm(self, ins: list, r: int) -> tuple:
        """The layout an element-wise op over inputs `ins` with output rank r works in: that of its first
        run-time input of rank r."""
        for i in ins:
            if i >= 0 and i not in self.consts and self.rank(i) == r:
                return self.perm_of(i)
        return ident(r)

    def reshape(self, i: int, out_shape):
        """(ONNX name, perm) of tensor i's values (codes when quantised) reshaped to the TFLite shape out_shape."""
        in_shape = self.shape(i) if i not in self.consts else tuple(self.consts[i].shape)
        p_in = self.perm_of(i)
        return self.reshape_name(self.raw(i, p_in), in_shape, p_in, out_shape, self.t(i).name)

    def reshape_name(self, x: str, in_shape, p_in, out_shape, base: str = ""):
        """(ONNX name, perm) of x (a tensor of TFLite shape in_shape held in layout p_in) reshaped to the
        TFLite shape out_shape. A reshape that only adds or drops unit dims commutes with any transpose: it
        keeps the input's layout (no Transpose). A reshape that mixes dims reads TFLite's order: the input
        is transposed to it first (a flatten of H x W x C, typically before FULLY_CONNECTED) - the one
        place inside a graph where one is needed."""
        out_shape = tuple(int(d) for d in out_shape)
        in_shape = tuple(int(d) for d in in_shape)
        p_in = tuple(p_in)
        if p_in != ident(len(in_shape)):
            cand = _unit_perm(in_shape, p_in, out_shape)
            if cand is not None:
                shp = [out_shape[a] for a in cand]
                if [in_shape[a] for a in p_in] == shp:
                    return x, cand
                return self.node("Reshape", [x, self.ints(shp)], base=base + "/r"), cand
            inv = [p_in.index(a) for a in range(len(p_in))]
            x = self.node("Transpose", [x], base=base + "/T", perm=inv)
        if in_shape == out_shape:
            return x, ident(len(out_shape))
        return self.node("Reshape", [x, self.ints(out_shape)], base=base + "/r"), ident(len(out_shape))

    def deq(self, x: str, i: int, perm) -> str:
        """x (codes laid out as tensor i's in perm) dequantised with tensor i's parameters; x itself when
        tensor i is not quantised."""
        if not self.quantized(i):
            return x
        s, z, axis = self.qparams(i, perm)
        return self.node("DequantizeLinear", [x, s, z], **({"axis": axis} if axis is not None else {}))

    def quant(self, x: str, i: int, perm) -> str:
        """x (float) quantised with tensor i's parameters; x itself when tensor i is not quantised."""
        if not self.quantized(i):
            return x
        s, z, axis = self.qparams(i, perm)
        if axis is not None:
            raise Unsupported(f"per-channel activation '{self.t(i).name}'")
        return self.node("QuantizeLinear", [x, s, z], base=self.t(i).name)

    def same_q(self, a: int, b: int) -> bool:
        """True when tensors a and b hold the same codes for the same values (both float, or one scale and
        zero point)."""
        qa, qb = self.quantized(a), self.quantized(b)
        if qa != qb:
            return False
        if not qa:
            return self.t(a).type == self.t(b).type or a in self.consts
        x, y = self.t(a).quant, self.t(b).quant
        return (self.t(a).type == self.t(b).type and x.scale.size == 1 and y.scale.size == 1
                and np.float32(x.scale[0]) == np.float32(y.scale[0]) and int(x.zero_point[0]) == int(y.zero_point[0]))

    # ---- fused activations ----------------------------------------------------------------------------
    def act(self, x: str, code: int) -> str:
        """x with op's fused ActivationFunctionType applied: 0 NONE, 1 RELU, 2 RELU_N1_TO_1, 3 RELU6, 4 TANH,
        5 SIGN_BIT."""
        if code == 0:
            return x
        if code == 1:
            return self.node("Relu", [x])
        if code == 2:
            return self.node("Clip", [x, self.scalar(-1.0), self.scalar(1.0)])
        if code == 3:
            return self.node("Clip", [x, self.scalar(0.0), self.scalar(6.0)])
        if code in (4, 5):
            # LiteRT's kernels turn the fused activation into a clamp range (CalculateActivationRange),
            # and TANH and SIGN_BIT give the full range: the op's output is left as it is
            return x
        raise Unsupported(f"fused activation {code}")

    def pin(self, i: int, shape) -> list:
        """Tensor i (a graph input) runs with `shape` (the caller's `shapes`): the dims TFLite only knows at
        run time (shape_signature -1, stored as 1) take their values before the ops' shapes are computed."""
        t = self.t(i)
        sig = t.signature or t.shape
        try:
            shape = tuple(int(d) for d in shape)
        except (TypeError, ValueError):
            shape = None
        if shape is None or len(shape) != len(sig) or any(d < 1 or (s >= 0 and s != d) for d, s in zip(shape, sig)):
            return [Problem(None, None, f"shapes['{t.name}'] = {shape!r} does not fit the input's shape "
                                        f"{list(sig)} (-1: a dim you choose)")]
        self.shapes[i] = shape
        return []

    # ---- the model ----------------------------------------------------------------------------------
    def run_ops(self, handlers: dict) -> list:
        """Imports the subgraph's ops in order; the problems of those that do not import."""
        problems = []
        for op in self.g.ops:
            self.op = op
            key = op.name if op.name != "CUSTOM" else "CUSTOM:" + op.custom
            h = handlers.get(key)
            if h is None:
                problems.append(Problem(self.opname(), key, _unsupported_text(op)))
                self.failed.update(op.outputs)
                continue
            try:
                h(self, op)
            except Downstream:
                self.failed.update(op.outputs)
            except Unsupported as e:
                problems.append(Problem(self.opname(), key, str(e)))
                self.failed.update(op.outputs)
            except (KeyError, IndexError, ValueError) as e:
                if any(o in self.vals or o in self.consts for o in op.outputs):
                    raise
                problems.append(Problem(self.opname(), key, f"cannot be imported ({type(e).__name__}: {e})"))
                self.failed.update(op.outputs)
        return problems

    def convert(self, handlers: dict):
        from onnx import TensorProto, helper
        from . import variables
        g = self.g
        variables.prescan(self)
        problems = []
        inputs = []
        for i in list(g.inputs) + list(g.outputs):
            self.used.add(self.t(i).name)   # the edge names stay TFLite's
        for i in g.inputs:
            t = self.t(i)
            if t.dtype is None or t.type in (8, 1):
                problems.append(Problem(None, None, f"input '{t.name}' has type {t.type_name}, which edgeplan "
                                                    "does not take at a TFLite model's edge"))
                continue
            self.used.add(t.name)
            if t.name in self.pinned:
                problems += self.pin(i, self.pinned[t.name])
            shape = [d if d >= 0 else None for d in (t.signature or t.shape)]
            shape = [t.shape[k] if d is None and k < len(t.shape) and t.shape[k] > 0 else d
                     for k, d in enumerate(shape)]
            if tuple(self.shapes[i]) != tuple(t.shape):     # pinned by the caller
                shape = list(self.shapes[i])
            inputs.append(helper.make_tensor_value_info(t.name, onnx_type(t.dtype), shape))
            self.vals[i] = {ident(len(t.shape)): t.name}
            self.made[i] = ident(len(t.shape))
        problems += self.run_ops(handlers)
        self.op = None
        if problems:
            for i in g.inputs:
                t = self.t(i)
                if -1 in t.signature and t.name not in self.pinned:
                    problems.append(Problem(None, None, f"input '{t.name}' has dims known only at run time "
                                                        f"({list(t.signature)}), taken as {list(t.shape)}: pin "
                                                        f"them with shapes={{'{t.name}': (...)}} (CLI: "
                                                        f"--shape '{t.name}=D0,D1,...')"))
            raise CompileError(problems)
        outputs = []
        state_outputs = variables.finish(self)
        for i in g.outputs:
            t = self.t(i)
            name = self.raw(i)
            if name != t.name:
                self.nodes.append(helper.make_node("Identity", [name], [t.name], name=self.uname(t.name + "/out")))
            out_dt = t.dtype if i not in self.consts else self.consts[i].dtype
            outputs.append(helper.make_tensor_value_info(t.name, onnx_type(out_dt), list(self.shape(i))))
        graph = helper.make_graph(self.nodes, "tflite", inputs + self.state_inputs, outputs + state_outputs,
                                  self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="edgeplan.tflite")
        model.ir_version = 10
        del TensorProto
        return model


def _unit_perm(in_shape, p_in, out_shape):
    """A layout for a reshape of in_shape (held as transpose(p_in)) to out_shape that keeps the bytes in
    place: the non-unit dims of out_shape must be those of in_shape in order; the out layout orders them as
    p_in orders theirs. None when the reshape mixes dims."""
    a_in = [a for a in range(len(in_shape)) if in_shape[a] != 1]
    a_out = [a for a in range(len(out_shape)) if out_shape[a] != 1]
    if [in_shape[a] for a in a_in] != [out_shape[a] for a in a_out]:
        return None
    to_out = dict(zip(a_in, a_out))
    order = [to_out[a] for a in p_in if a in to_out]       # non-unit out dims in the held order
    r = len(out_shape)
    cands = [ident(r)] + ([NCHW] if r == 4 else [])
    for c in cands:
        if [a for a in c if a in set(a_out)] == order:
            return c
    # unit dims first, then the non-unit dims in held order
    units = [a for a in range(r) if a not in set(a_out)]
    return tuple(units + order)


def _unsupported_text(op: Op) -> str:
    if op.name == "CUSTOM":
        known = {"TFLite_Detection_PostProcess": "SSD box decoding and NMS: not mapped; cut the model before it "
                                                 "and decode the boxes on the host",
                 "Convolution2DTransposeBias": "mapped (MediaPipe's transposed convolution with bias)",
                 "MaxPoolingWithArgmax2D": "MediaPipe's pooling with indices: not mapped",
                 "MaxUnpooling2D": "MediaPipe's unpooling: not mapped",
                 "TransformTensorBilinear": "MediaPipe's affine crop: not mapped",
                 "TransformLandmarks": "MediaPipe's landmark transform: not mapped",
                 "Landmarks2TransformMatrix": "MediaPipe's landmark transform: not mapped",
                 "FlexAudioSpectrogram": "a TensorFlow (Flex) op: not mapped"}
        why = known.get(op.custom) or (
            "a TensorFlow (Flex) op that needs TensorFlow's kernels: not mapped" if op.custom.startswith("Flex")
            else "an unknown custom op: not mapped")
        return (f"custom op '{op.custom}' is not supported ({why}). Custom ops edgeplan maps: "
                "Convolution2DTransposeBias; common ones it refuses: TFLite_Detection_PostProcess, "
                "MaxPoolingWithArgmax2D, MaxUnpooling2D, TransformTensorBilinear, Flex*")
    return f"builtin op {op.name} is not supported by edgeplan's TFLite import (README.md, TFLite section)"
