"""Sequence layers for the speech builders (asr.py, kws.py, tts.py), on top of ``Graph``.

The CNN builders calibrate BatchNorm statistics by pushing images through numpy copies of their layers;
the speech models keep activations O(1) the way their architectures do instead (pre/post LayerNorm,
per-utterance feature normalisation) plus fan-in scaled weights, so ``SeqGraph`` carries no calibration
values. Inputs may have symbolic dims (dim_param strings). Layers are written the way torch exports
them at opset 17: nn.Linear on a 3-D tensor is MatMul(x, W[in, out]) + Add(bias); Conv1d is Conv with a
1-D kernel on [N, C, L]; every Reshape target uses only 0 (copy) and -1 (infer), never a
Shape→Gather→Concat subgraph, so one graph traces at any sequence length.

Naming: a module's node is named by its module path ("encoder.layers.0.feed_forward1.linear1"), the
bias Add of a Linear gets ".add"; parameters are named like a torch state_dict (".weight", ".bias").
"""
from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto, helper

from . import weights as W
from ._builder import Graph


def sinusoid_table(n: int, d: int) -> np.ndarray:
    """The Transformer's sinusoidal position table [n, d] (sin on even, cos on odd features)."""
    pos = np.arange(n, dtype=np.float64)[:, None]
    inv = np.exp(-math.log(10000.0) * np.arange(0, d, 2, dtype=np.float64) / d)[None, :]
    t = np.zeros((n, d), np.float64)
    t[:, 0::2] = np.sin(pos * inv)
    t[:, 1::2] = np.cos(pos * inv)[:, : d // 2]
    return t.astype(np.float32)


class SeqGraph(Graph):
    def __init__(self, name: str, seed: int):
        super().__init__(name, seed, calib=(1, 1, 1))
        self.value_info: list = []

    # ------------------------------------------------------------------ graph I/O
    def input(self, name: str, shape, dtype=TensorProto.FLOAT) -> str:
        """A graph input; dims may be ints or dim_param strings."""
        self.inputs.append(helper.make_tensor_value_info(name, dtype, list(shape)))
        return name

    def annotate(self, name: str, shape, dtype=TensorProto.FLOAT) -> str:
        """A value_info entry for an intermediate tensor (e.g. to name a data-dependent dim)."""
        self.value_info.append(helper.make_tensor_value_info(name, dtype, list(shape)))
        return name

    def build(self, doc: str = ""):
        m = super().build(doc)
        m.graph.value_info.extend(self.value_info)
        return m

    # ------------------------------------------------------------------ generic nodes
    def op(self, op: str, inputs, name: str, out=None, n_out: int = 1, **attrs):
        return self.node(op, inputs, name, out=out, n_out=n_out, **attrs)

    def ints(self, values, name: str | None = None) -> str:
        """An int64 constant: a list becomes 1-D, a Python int a 0-d scalar."""
        return self.const(values, np.int64, name)

    def unsqueeze(self, x, axes, name: str, out=None):
        return self.node("Unsqueeze", [x, self.ints(list(axes))], name, out=out)

    def squeeze(self, x, axes, name: str, out=None):
        return self.node("Squeeze", [x, self.ints(list(axes))], name, out=out)

    def cast(self, x, to: int, name: str, out=None):
        return self.node("Cast", [x], name, out=out, to=to)

    def swish(self, x, name: str):
        """Swish / SiLU as torch exports it: x * Sigmoid(x)."""
        return self.node("Mul", [x, self.node("Sigmoid", [x], f"{name}.sigmoid")], name)

    def relu(self, x, name: str, out=None):
        return self.node("Relu", [x], name, out=out)

    def leaky_relu(self, x, name: str, alpha: float = 0.1):
        return self.node("LeakyRelu", [x], name, alpha=alpha)

    # ------------------------------------------------------------------ layers
    def linear(self, x, nin: int, nout: int, name: str, gain: float = 1.0, bias: bool = True,
               bias_value=None, out=None):
        """nn.Linear on [..., nin]: MatMul with W[in, out], then Add bias (named ``name``.add)."""
        w = W.he_normal(self.rng, (nin, nout), nin, gain)
        y = self.node("MatMul", [x, self.param(f"{name}.weight", w)], name, out=None if bias else out)
        if not bias:
            return y
        b = W.small_bias(self.rng, nout) if bias_value is None else np.full(nout, bias_value, np.float32)
        return self.node("Add", [y, self.param(f"{name}.bias", b)], f"{name}.add", out=out)

    def layernorm(self, x, d: int, name: str, eps: float = 1e-5, out=None):
        """LayerNormalization over the last axis; scale ~ 1 + N(0, 0.1^2), bias ~ N(0, 0.02^2)."""
        gamma = (1.0 + 0.1 * self.rng.standard_normal(d)).astype(np.float32)
        beta = (0.02 * self.rng.standard_normal(d)).astype(np.float32)
        return self.node("LayerNormalization", [x, self.param(f"{name}.weight", gamma),
                                                self.param(f"{name}.bias", beta)],
                         name, out=out, axis=-1, epsilon=eps)

    def conv1d(self, x, cin: int, cout: int, k: int, name: str, stride: int = 1, pad: int | None = None,
               dilation: int = 1, group: int = 1, gain: float = 2.0, bias: bool = True, out=None):
        """nn.Conv1d on [N, C, L]; default padding keeps the length ("same") at stride 1."""
        pad = dilation * (k - 1) // 2 if pad is None else pad
        w = W.he_normal(self.rng, (cout, cin // group, k), cin // group * k, gain)
        ins = [x, self.param(f"{name}.weight", w)]
        if bias:
            ins.append(self.param(f"{name}.bias", W.small_bias(self.rng, cout)))
        return self.node("Conv", ins, name, out=out, dilations=[dilation], group=group, kernel_shape=[k],
                         pads=[pad, pad], strides=[stride])

    def conv2d(self, x, cin: int, cout: int, k: int, name: str, stride: int = 1, pad: int | None = None,
               gain: float = 2.0):
        """nn.Conv2d (with bias) on [N, C, H, W]."""
        pad = k // 2 if pad is None else pad
        w = W.he_normal(self.rng, (cout, cin, k, k), cin * k * k, gain)
        ins = [x, self.param(f"{name}.weight", w), self.param(f"{name}.bias", W.small_bias(self.rng, cout))]
        return self.node("Conv", ins, name, dilations=[1, 1], group=1, kernel_shape=[k, k], pads=[pad] * 4,
                         strides=[stride, stride])

    def conv_transpose1d(self, x, cin: int, cout: int, k: int, stride: int, pad: int, name: str,
                         gain: float = 2.0):
        """nn.ConvTranspose1d (with bias); weight [cin, cout, k]. Each output sample sees k / stride taps
        per input channel, so the fan-in is cin * k / stride."""
        w = W.he_normal(self.rng, (cin, cout, k), max(1, cin * k // stride), gain)
        ins = [x, self.param(f"{name}.weight", w), self.param(f"{name}.bias", W.small_bias(self.rng, cout))]
        return self.node("ConvTranspose", ins, name, dilations=[1], group=1, kernel_shape=[k],
                         pads=[pad, pad], strides=[stride])

    def batchnorm1d(self, x, c: int, name: str, var: float = 1.0, eps: float = 1e-5):
        """BatchNormalization (inference) on [N, C, L] for activations of roughly zero mean and variance
        ``var``: running stats a little off, as trained ones are (see weights.bn_params)."""
        gamma, beta, rm, rv = W.bn_params(self.rng, None, c)
        rm = (rm * math.sqrt(var)).astype(np.float32)
        rv = (rv * var).astype(np.float32)
        ins = [x] + [self.param(f"{name}.{s}", a) for s, a in
                     (("weight", gamma), ("bias", beta), ("running_mean", rm), ("running_var", rv))]
        return self.node("BatchNormalization", ins, name, epsilon=eps, momentum=0.9)

    def mha(self, x, d: int, heads: int, name: str):
        """Multi-head self-attention over [1, T, d] (no mask): q/k/v Linear, split heads with
        Reshape [0, 0, H, dk], softmax(q k^T / sqrt(dk)) v, merge heads with Reshape [0, 0, d], out Linear."""
        if d % heads:
            raise ValueError(f"d_model {d} is not a multiple of heads {heads}")
        dk = d // heads
        q, k, v = (self.reshape(self.linear(x, d, d, f"{name}.linear_{s}"), [0, 0, heads, dk],
                                f"{name}.reshape_{s}") for s in "qkv")
        q = self.transpose(q, [0, 2, 1, 3], f"{name}.transpose_q")
        k = self.transpose(k, [0, 2, 3, 1], f"{name}.transpose_k")
        v = self.transpose(v, [0, 2, 1, 3], f"{name}.transpose_v")
        s = self.node("MatMul", [q, k], f"{name}.scores")
        s = self.node("Div", [s, self.const(math.sqrt(dk))], f"{name}.scale")
        a = self.softmax(s, f"{name}.softmax", axis=-1)
        y = self.node("MatMul", [a, v], f"{name}.context")
        y = self.reshape(self.transpose(y, [0, 2, 1, 3], f"{name}.transpose_out"), [0, 0, d],
                         f"{name}.reshape_out")
        return self.linear(y, d, d, f"{name}.linear_out")


def count_macs(model, feeds: dict) -> int:
    """MACs of Conv, ConvTranspose, MatMul, Gemm, GRU/LSTM and STFT (as a DFT matrix multiply) for concrete
    inputs, from the shapes onnxruntime produces (every intermediate made a graph output)."""
    import onnx
    import onnxruntime as ort
    m = onnx.ModelProto()
    m.CopyFrom(model)
    outs = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in outs:
                m.graph.output.append(helper.make_empty_tensor_value_info(o))
                outs.add(o)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    vals = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    vals.update(feeds)
    shape = {k: np.shape(v) for k, v in vals.items()}
    shape.update({t.name: tuple(t.dims) for t in model.graph.initializer})
    macs = 0
    for n in model.graph.node:
        if n.op_type == "Conv":
            macs += int(np.prod(shape[n.output[0]])) * int(np.prod(shape[n.input[1]][1:]))
        elif n.op_type == "ConvTranspose":
            macs += int(np.prod(shape[n.input[0]])) * int(np.prod(shape[n.input[1]][1:]))
        elif n.op_type in ("MatMul", "Gemm"):
            macs += int(np.prod(shape[n.output[0]])) * int(shape[n.input[0]][-1])   # A[..., K]
        elif n.op_type in ("GRU", "LSTM"):                 # W [dirs, G*H, I] and R [dirs, G*H, H] per step
            steps, batch = shape[n.input[0]][:2]
            macs += steps * batch * (int(np.prod(shape[n.input[1]])) + int(np.prod(shape[n.input[2]])))
        elif n.op_type == "STFT":
            b, f, bins, _ = shape[n.output[0]]
            frame = shape[n.input[2]][0] if len(n.input) > 2 and n.input[2] else 0
            macs += b * f * bins * 2 * frame
    return macs
