"""A small graph composer on top of onnx.helper.

``Graph`` hands out tensor names, keeps initializers, tracks the channel count and the estimated
per-channel statistics of every NCHW tensor (see weights.py), and names nodes the way exporters do
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
    def __init__(self, name: str, seed: int):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes: list = []
        self.inits: dict = {}
        self.inputs: list = []
        self.outputs: list = []
        self.ch: dict = {}       # tensor -> channel count (dim 1)
        self.st: dict = {}       # tensor -> (mean[C], var[C]) estimates
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
        self.inits[name] = numpy_helper.from_array(np.ascontiguousarray(arr), name)
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

    def _like(self, y, x, stats=None):
        """y has x's channel count; stats default to x's."""
        if x in self.ch:
            self.ch[y] = self.ch[x]
        s = stats if stats is not None else self.st.get(x)
        if s is not None:
            self.st[y] = s
        return y

    def stats(self, x):
        return self.st.get(x) or W.unit_stats(self.ch[x])

    # ------------------------------------------------------------------ graph I/O
    def input(self, name: str, shape, dtype=TensorProto.FLOAT) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, dtype, list(shape)))
        if len(shape) == 4:
            self.ch[name] = int(shape[1])
            self.st[name] = W.unit_stats(int(shape[1]))
        return name

    def output(self, name: str, shape, dtype=TensorProto.FLOAT) -> str:
        self.outputs.append(helper.make_tensor_value_info(name, dtype, list(shape)))
        return name

    def build(self, doc: str = "") -> onnx.ModelProto:
        g = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs,
                              initializer=list(self.inits.values()))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=IR_VERSION, producer_name="edgeplan.models",
                              producer_version="1", doc_string=doc)
        return m

    # ------------------------------------------------------------------ layers
    def conv(self, x, cout: int, k: int, stride: int = 1, pad: int | None = None, group: int = 1,
             bias: bool = False, name: str = "conv", gain: float = 2.0, out=None):
        cin = self.ch[x]
        pad = k // 2 if pad is None else pad
        fan_in = cin // group * k * k
        w = W.he_normal(self.rng, (cout, cin // group, k, k), fan_in, gain)
        ins = [x, self.param(f"{name}.weight", w)]
        b = None
        if bias:
            b = W.small_bias(self.rng, cout)
            ins.append(self.param(f"{name}.bias", b))
        y = self.node("Conv", ins, name, out=out, dilations=[1, 1], group=group,
                      kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride])
        self.ch[y] = cout
        m, v = self.stats(x)
        self.st[y] = W.conv_stats(w, b, group, m, v)
        return y

    def bn(self, x, name: str, eps: float = 1e-5):
        m, v = self.stats(x)
        gamma, beta, rm, rv = W.bn_params(self.rng, m, v)
        ins = [x] + [self.param(f"{name}.{s}", a) for s, a in
                     (("weight", gamma), ("bias", beta), ("running_mean", rm), ("running_var", rv))]
        y = self.node("BatchNormalization", ins, name, epsilon=eps, momentum=0.9)
        return self._like(y, x, W.bn_stats(gamma, beta, rm, rv, eps, m, v))

    def _act_st(self, kind, x):
        s = self.st.get(x)
        return None if s is None else W.act_stats(W.ACTS[kind], *s)

    def relu(self, x, name: str):
        return self._like(self.node("Relu", [x], name), x, self._act_st("relu", x))

    def relu6(self, x, name: str):
        """ReLU6 as opset-11+ exporters write it: Clip with constant min/max inputs."""
        y = self.node("Clip", [x, self.const(0.0, name="clip_min"), self.const(6.0, name="clip_max")], name)
        return self._like(y, x, self._act_st("relu6", x))

    def sigmoid(self, x, name: str, out=None):
        return self._like(self.node("Sigmoid", [x], name, out=out), x, self._act_st("sigmoid", x))

    def silu(self, x, name: str):
        """SiLU as exporters emit it: x * Sigmoid(x)."""
        s = self.node("Sigmoid", [x], f"{name}.sigmoid")
        return self._like(self.node("Mul", [x, s], name), x, self._act_st("silu", x))

    def conv_bn_act(self, x, cout, k, stride=1, act="relu", prefix="", names=("conv", "bn", "act"),
                    group=1):
        """Conv -> BN -> activation with names prefix+names[i] (act=None: no activation)."""
        y = self.bn(self.conv(x, cout, k, stride, group=group, name=prefix + names[0]), prefix + names[1])
        return getattr(self, act)(y, prefix + names[2]) if act else y

    def add(self, a, b, name: str):
        y = self.node("Add", [a, b], name)
        sa, sb = self.st.get(a), self.st.get(b)
        st = (sa[0] + sb[0], sa[1] + sb[1]) if sa is not None and sb is not None else None
        return self._like(y, a, st)

    def binary(self, op: str, a, b, name: str, out=None):
        """Elementwise op without statistics tracking (post-processing arithmetic)."""
        return self.node(op, [a, b], name, out=out)

    def maxpool(self, x, k: int, stride: int, pad: int, name: str):
        y = self.node("MaxPool", [x], name, ceil_mode=0, dilations=[1, 1], kernel_shape=[k, k],
                      pads=[pad] * 4, strides=[stride, stride])
        s = self.st.get(x)
        return self._like(y, x, None if s is None else W.maxpool_stats(k, *s))

    def avgpool(self, x, k: int, stride: int, name: str, pad: int = 0):
        y = self.node("AveragePool", [x], name, ceil_mode=0, count_include_pad=1,
                      kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride])
        s = self.st.get(x)
        return self._like(y, x, None if s is None else (s[0], s[1] / (k * k)))

    def global_avgpool(self, x, name: str):
        y = self.node("GlobalAveragePool", [x], name)
        self.ch[y] = self.ch[x]
        return y

    def flatten(self, x, name: str):
        y = self.node("Flatten", [x], name, axis=1)
        self.ch[y] = self.ch[x]
        return y

    def gemm(self, x, nout: int, name: str, out=None):
        """torch.nn.Linear as exported: Gemm(x, W[out, in], b, transB=1)."""
        nin = self.ch[x]
        w = W.he_normal(self.rng, (nout, nin), nin, gain=1.0)
        b = W.small_bias(self.rng, nout)
        y = self.node("Gemm", [x, self.param(f"{name}.weight", w), self.param(f"{name}.bias", b)],
                      name, out=out, alpha=1.0, beta=1.0, transB=1)
        self.ch[y] = nout
        return y

    def concat(self, xs, name: str, axis: int = 1, out=None):
        y = self.node("Concat", xs, name, out=out, axis=axis)
        if axis == 1 and all(x in self.ch for x in xs):
            self.ch[y] = sum(self.ch[x] for x in xs)
            sts = [self.st.get(x) for x in xs]
            if all(s is not None for s in sts):
                self.st[y] = (np.concatenate([s[0] for s in sts]), np.concatenate([s[1] for s in sts]))
        return y

    def split(self, x, sizes, name: str, axis: int = 1):
        """Opset-13+ Split with the sizes as an int64 input."""
        sz = self.const(sizes, np.int64)
        ys = self.node("Split", [x, sz], name, n_out=len(sizes), axis=axis)
        ys = [ys] if isinstance(ys, str) else ys
        if axis == 1 and x in self.ch:
            s, off = self.st.get(x), 0
            for y, n in zip(ys, sizes):
                self.ch[y] = n
                if s is not None:
                    self.st[y] = (s[0][off:off + n], s[1][off:off + n])
                off += n
        return ys

    def resize2x(self, x, name: str):
        """nn.Upsample(scale_factor=2, mode='nearest') as torch exports it at opset 11+."""
        y = self.node("Resize", [x, "", self.const([1.0, 1.0, 2.0, 2.0])], name,
                      coordinate_transformation_mode="asymmetric", cubic_coeff_a=-0.75,
                      mode="nearest", nearest_mode="floor")
        return self._like(y, x)

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
