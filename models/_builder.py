"""A small graph composer on top of onnx.helper.

``Graph`` hands out tensor names, keeps initializers, tracks the channel count and the
calibration activations of every tensor (see weights.py), and names nodes the way exporters do
("layer1.0.conv1"; a reused name gets "_1", "_2", ... like torch's repeated modules). Parameters are
named like a torch state_dict ("layer1.0.bn1.running_var"). Tensor names are "<node>_output_<i>"
except where the caller asks for a name (graph outputs).
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from . import weights as W

OPSET = 17
IR_VERSION = 8


class Graph:
    """``calib`` is the (batch, height, width) of the calibration images pushed through the layers
    while they are added (see weights.py); it is fixed per model, not per build size."""

    def __init__(self, name: str, seed: int, calib=(2, 128, 128)):
        self.name = name
        self.seed = seed
        self.calib = calib
        self.rng = np.random.default_rng(seed)
        self.nodes: list = []
        self.inits: dict = {}
        self.inputs: list = []
        self.outputs: list = []
        self.ch: dict = {}       # tensor -> channel count (dim 1)
        self.val: dict = {}      # tensor -> calibration activations (numpy, NCHW / NC)
        self._node_names: set = set()

    # ------------------------------------------------------------------ plumbing
    def _uniq(self, name: str) -> str:
        base, i = name, 0
        while name in self._node_names:
            i += 1
            name = f"{base}_{i}"
        self._node_names.add(name)
        return name

    def param(self, name: str, arr: np.ndarray) -> str:
        if name in self.inits:
            raise ValueError(f"duplicate initializer {name}")
        self.inits[name] = numpy_helper.from_array(np.array(arr, order="C"), name)   # keeps 0-d scalars 0-d
        return name

    def const(self, value, dtype=np.float32, name: str | None = None) -> str:
        """A shared constant initializer (deduplicated by name)."""
        arr = np.asarray(value, dtype=dtype)
        if name is None:
            flat = "_".join(f"{v:g}" for v in arr.ravel())
            name = f"const_{np.dtype(dtype).name}_{flat}" + ("" if arr.ndim else "_s")
        if name not in self.inits:
            self.param(name, arr)
        return name

    def node(self, op: str, inputs, name: str, n_out: int = 1, out=None, **attrs):
        name = self._uniq(name)
        outs = [out] if isinstance(out, str) else (list(out) if out else
                                                     [f"{name}_output_{i}" for i in range(n_out)])
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=name, **attrs))
        return outs[0] if len(outs) == 1 else outs

    def _set(self, y, ch, fn, *xs):
        """Record y's channel count and, when every input has calibration values, fn(*values)."""
        if ch is not None:
            self.ch[y] = ch
        if all(x in self.val for x in xs):
            self.val[y] = fn(*(self.val[x] for x in xs))
        return y

    # ------------------------------------------------------------------ graph I/O
    def input(self, name: str, shape, dtype=TensorProto.FLOAT) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, dtype, list(shape)))
        c = int(shape[1])
        self.ch[name] = c
        n, h, w = self.calib
        self.val[name] = W.calibration_input(self.seed, (n, c, h, w))
        return name

    def output(self, name: str, shape, dtype=TensorProto.FLOAT) -> str:
        self.outputs.append(helper.make_tensor_value_info(name, dtype, list(shape)))
        return name

    def build(self, doc: str = "") -> onnx.ModelProto:
        g = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs,
                              initializer=list(self.inits.values()))
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                                 ir_version=IR_VERSION, producer_name="edgeplan.models",
                                 producer_version="1", doc_string=doc)

    # ------------------------------------------------------------------ layers
    def conv(self, x, cout: int, k: int, stride: int = 1, pad: int | None = None, group: int = 1,
             bias: bool = False, name: str = "conv", gain: float = 2.0, out=None):
        cin = self.ch[x]
        pad = k // 2 if pad is None else pad
        w = W.he_normal(self.rng, (cout, cin // group, k, k), cin // group * k * k, gain)
        ins = [x, self.param(f"{name}.weight", w)]
        b = None
        if bias:
            b = W.small_bias(self.rng, cout)
            ins.append(self.param(f"{name}.bias", b))
        y = self.node("Conv", ins, name, out=out, dilations=[1, 1], group=group,
                      kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride])
        return self._set(y, cout, lambda v: W.conv2d(v, w, b, stride, pad, group), x)

    def bn(self, x, name: str, eps: float = 1e-5):
        c = self.ch[x]
        gamma, beta, rm, rv = W.bn_params(self.rng, self.val.get(x), c)
        ins = [x] + [self.param(f"{name}.{s}", a) for s, a in
                     (("weight", gamma), ("bias", beta), ("running_mean", rm), ("running_var", rv))]
        y = self.node("BatchNormalization", ins, name, epsilon=eps, momentum=0.9)
        return self._set(y, c, lambda v: W.batchnorm(v, gamma, beta, rm, rv, eps), x)

    def relu(self, x, name: str):
        return self._set(self.node("Relu", [x], name), self.ch[x], lambda v: np.maximum(v, 0), x)

    def relu6(self, x, name: str):
        """ReLU6 as opset-11+ exporters write it: Clip with constant min/max inputs."""
        y = self.node("Clip", [x, self.const(0.0, name="clip_min"), self.const(6.0, name="clip_max")], name)
        return self._set(y, self.ch[x], lambda v: np.clip(v, 0, 6), x)

    def sigmoid(self, x, name: str, out=None):
        return self._set(self.node("Sigmoid", [x], name, out=out), self.ch.get(x), W.sigmoid, x)

    def silu(self, x, name: str):
        """SiLU as exporters emit it: x * Sigmoid(x)."""
        s = self.sigmoid(x, f"{name}.sigmoid")
        return self._set(self.node("Mul", [x, s], name), self.ch[x], np.multiply, x, s)

    def conv_bn_act(self, x, cout, k, stride=1, act="relu", prefix="", names=("conv", "bn", "act"),
                    group=1):
        """Conv -> BN -> activation with names prefix+names[i] (act=None: no activation)."""
        y = self.bn(self.conv(x, cout, k, stride, group=group, name=prefix + names[0]), prefix + names[1])
        return getattr(self, act)(y, prefix + names[2]) if act else y

    def add(self, a, b, name: str):
        return self._set(self.node("Add", [a, b], name), self.ch[a], np.add, a, b)

    def binary(self, op: str, a, b, name: str, out=None):
        """Elementwise op on post-processing tensors (no calibration values)."""
        return self.node(op, [a, b], name, out=out)

    def maxpool(self, x, k: int, stride: int, pad: int, name: str):
        y = self.node("MaxPool", [x], name, ceil_mode=0, dilations=[1, 1], kernel_shape=[k, k],
                      pads=[pad] * 4, strides=[stride, stride])
        return self._set(y, self.ch[x], lambda v: W.pool(v, k, stride, pad, "max"), x)

    def avgpool(self, x, k: int, stride: int, name: str, pad: int = 0):
        y = self.node("AveragePool", [x], name, ceil_mode=0, count_include_pad=1,
                      kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride])
        return self._set(y, self.ch[x], lambda v: W.pool(v, k, stride, pad, "avg"), x)

    def global_avgpool(self, x, name: str):
        y = self.node("GlobalAveragePool", [x], name)
        return self._set(y, self.ch[x], lambda v: v.mean(axis=(2, 3), keepdims=True), x)

    def flatten(self, x, name: str):
        y = self.node("Flatten", [x], name, axis=1)
        return self._set(y, self.ch[x], lambda v: v.reshape(v.shape[0], -1), x)

    def gemm(self, x, nout: int, name: str, out=None):
        """torch.nn.Linear as exported: Gemm(x, W[out, in], b, transB=1)."""
        nin = self.ch[x]
        w = W.he_normal(self.rng, (nout, nin), nin, gain=1.0)
        b = W.small_bias(self.rng, nout)
        y = self.node("Gemm", [x, self.param(f"{name}.weight", w), self.param(f"{name}.bias", b)],
                      name, out=out, alpha=1.0, beta=1.0, transB=1)
        return self._set(y, nout, lambda v: v @ w.T + b, x)

    def concat(self, xs, name: str, axis: int = 1, out=None):
        y = self.node("Concat", xs, name, out=out, axis=axis)
        if axis != 1 or not all(x in self.ch for x in xs):
            return y
        return self._set(y, sum(self.ch[x] for x in xs), lambda *v: np.concatenate(v, 1), *xs)

    def split(self, x, sizes, name: str, axis: int = 1):
        """Opset-13+ Split with the sizes as an int64 input."""
        ys = self.node("Split", [x, self.const(sizes, np.int64)], name, n_out=len(sizes), axis=axis)
        ys = [ys] if isinstance(ys, str) else ys
        if axis == 1:
            off = 0
            for y, n in zip(ys, sizes):
                self._set(y, n, lambda v, o=off, n=n: v[:, o:o + n], x)
                off += n
        return ys

    def resize2x(self, x, name: str):
        """nn.Upsample(scale_factor=2, mode='nearest') as torch exports it at opset 11+."""
        y = self.node("Resize", [x, "", self.const([1.0, 1.0, 2.0, 2.0])], name,
                      coordinate_transformation_mode="asymmetric", cubic_coeff_a=-0.75,
                      mode="nearest", nearest_mode="floor")
        return self._set(y, self.ch[x], lambda v: v.repeat(2, axis=2).repeat(2, axis=3), x)

    def reshape(self, x, shape, name: str, out=None):
        return self.node("Reshape", [x, self.const(shape, np.int64)], name, out=out)

    def transpose(self, x, perm, name: str, out=None):
        return self.node("Transpose", [x], name, out=out, perm=list(perm))

    def softmax(self, x, name: str, axis: int = -1, out=None):
        return self.node("Softmax", [x], name, out=out, axis=axis)


# ---------------------------------------------------------------------- profiling

def profile(model: onnx.ModelProto) -> dict:
    """Parameter and MAC counts (Conv and Gemm/MatMul MACs; symbolic dims count as 1).

    ``params`` counts learnable tensors the torch way (BN running stats excluded);
    ``initializer_elems`` counts every float initializer element.
    """
    inferred = onnx.shape_inference.infer_shapes(model)
    shapes = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        dims = vi.type.tensor_type.shape.dim
        shapes[vi.name] = [d.dim_value if d.HasField("dim_value") else 1 for d in dims]
    inits = {t.name: t for t in model.graph.initializer}
    params = elems = 0
    for t in model.graph.initializer:
        if t.data_type != TensorProto.FLOAT:
            continue
        n = int(np.prod(t.dims)) if t.dims else 1
        elems += n
        if not t.name.endswith((".running_mean", ".running_var")) and not t.name.startswith(
                ("const_", "clip_", "grid")):
            params += n
    macs = 0
    for nd in model.graph.node:
        if nd.op_type == "Conv":
            wd = list(inits[nd.input[1]].dims)
            macs += int(np.prod(shapes[nd.output[0]])) * int(np.prod(wd[1:]))
        elif nd.op_type in ("Gemm", "MatMul"):
            a = shapes[nd.input[0]]
            out = shapes[nd.output[0]]
            k = a[-1]
            if nd.op_type == "Gemm" and any(at.name == "transA" and at.i for at in nd.attribute):
                k = a[0]
            macs += int(np.prod(out)) * k
    return {"params": params, "initializer_elems": elems, "macs": macs, "nodes": len(model.graph.node)}
