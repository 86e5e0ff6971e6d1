"""int8 "twins": one quantised network, written both as an ONNX QDQ model (here) and as an int8 TFLite file
(tools/tflite_write.py), so edgeplan's vNPU timing model and Vela can be set against each other on the same
layers and the same weights (bench/vela_check.py, tests/py/test_vela.py, docs/npu.md "Timing model against
Vela 5.2.0").

    net = qtwins.build("mobilenetv2")      # a QNet: tensors (NHWC, scale, zero point) and layers
    model = qtwins.to_onnx(net)            # onnx.ModelProto, NCHW, QDQ around every integer op

The networks:
  mobilenetv2  MobileNetV2-1.0-224 in TensorFlow's topology (the one Vela and the Arm ML Embedded Evaluation
               Kit use): SAME padding, the 1001-class logits as a 1x1 conv after a 7x7 average pool, a
               reshape and a softmax. 300.8 M MACs.
  resnet50     ResNet-50 v1.5 (stride on the 3x3 conv, as models/resnet.py) with SAME padding, a 7x7 average
               pool, a 1000-way fully connected layer and a softmax. 4.09 G MACs.
The block tables are the zoo builders' (models/mobilenetv2.py, models/resnet.py); batch norm is folded.

Quantisation as TFLite's int8 converter writes it: weights symmetric per output channel (max |w| -> 127),
int32 biases at scale s_in * s_w[c], activations per tensor and asymmetric (ReLU6 outputs 6/255 with zero point
-128, and so on: fixed per tensor role, the zero points of linear outputs drawn from the seed). The weights are
random (He normal), so their entropy is higher than a trained network's: weight compression, and so the
flash-bound cycles of a Shared_Sram configuration, are pessimistic (NPU.md section 8).

Only numpy is needed to build a QNet; onnx only for to_onnx."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

SEEDS = {"mobilenetv2": 2, "resnet50": 50}
NAMES = tuple(SEEDS)


@dataclass
class QTensor:
    name: str
    shape: tuple               # NHWC (or [N, C] after a reshape)
    scale: float
    zero_point: int


@dataclass
class QLayer:
    """kind: conv, dwconv, fc (weights, bias, per-channel scales), add, avgpool, maxpool (kernel, stride), reshape,
    softmax. Weights are int8: conv [OC, KH, KW, IC] (TFLite OHWI), dwconv [1, KH, KW, C], fc [OC, IC]; bias
    int32; act None, "relu" or "relu6"; padding "SAME" or "VALID"."""
    kind: str
    name: str
    inputs: list
    output: str
    weights: np.ndarray | None = None
    w_scale: np.ndarray | None = None
    bias: np.ndarray | None = None
    kernel: int = 1
    stride: int = 1
    padding: str = "SAME"
    act: str | None = None

    def macs(self, net: "QNet") -> int:
        out = net.tensors[self.output].shape
        if self.kind == "conv":
            return int(np.prod(out)) * int(np.prod(self.weights.shape[1:]))
        if self.kind == "dwconv":
            return int(np.prod(out)) * self.kernel * self.kernel
        if self.kind == "fc":
            return int(self.weights.size)
        return 0


@dataclass
class QNet:
    name: str
    input: str
    output: str
    tensors: dict = field(default_factory=dict)
    layers: list = field(default_factory=list)

    @property
    def macs(self) -> int:
        return sum(ly.macs(self) for ly in self.layers)

    @property
    def n_weights(self) -> int:
        return sum(int(ly.weights.size) for ly in self.layers if ly.weights is not None)


def same_pads(size: int, k: int, s: int) -> tuple:
    """(before, after) padding of TensorFlow's SAME: out = ceil(size / s), the odd pixel after."""
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


# activation quantisation per tensor role: (scale, zero point or None = drawn from the seed)
_RELU6 = (6.0 / 255.0, -128)
_RELU = (0.05, -128)
_LINEAR = (0.1, None)
_ADD = (0.12, None)
_LOGITS = (0.2, None)


class _Builder:
    def __init__(self, name: str, seed: int, size: int):
        self.rng = np.random.default_rng(seed)
        self.net = QNet(name, "input", "output")
        self.names: set = set()
        self.tensor("input", (1, size, size, 3), 1.0 / 128.0, -1)

    def tensor(self, name, shape, scale, zp):
        if name in self.net.tensors:
            raise ValueError(f"duplicate tensor {name}")
        self.net.tensors[name] = QTensor(name, tuple(int(d) for d in shape), float(np.float32(scale)), int(zp))
        return name

    def _q(self, role):
        scale, zp = role
        return scale, (int(self.rng.integers(-8, 9)) if zp is None else zp)

    def _role(self, act):
        return {"relu6": _RELU6, "relu": _RELU, None: _LINEAR}[act]

    def _weights(self, shape, fan_in, axis):
        """He-normal float weights quantised symmetric per channel along axis: (int8, float32 scales)."""
        w = self.rng.standard_normal(shape, dtype=np.float32) * np.float32(math.sqrt(2.0 / fan_in))
        red = tuple(i for i in range(w.ndim) if i != axis)
        amax = np.maximum(np.abs(w).max(axis=red), 1e-8)
        sw = (amax / 127.0).astype(np.float32)
        wq = np.clip(np.rint(w / np.expand_dims(sw, red)), -127, 127).astype(np.int8)
        return wq, sw

    def _bias(self, n, s_in, sw):
        b = self.rng.standard_normal(n, dtype=np.float32) * np.float32(0.01)
        return np.rint(b / (np.float64(s_in) * sw.astype(np.float64))).astype(np.int32)

    def conv(self, x, cout, k, stride, act, name, role=None, padding="SAME"):
        n, h, w, cin = self.net.tensors[x].shape
        wq, sw = self._weights((cout, k, k, cin), k * k * cin, 0)
        b = self._bias(cout, self.net.tensors[x].scale, sw)
        oh, ow = (-(-h // stride), -(-w // stride)) if padding == "SAME" else ((h - k) // stride + 1,
                                                                               (w - k) // stride + 1)
        y = self.tensor(name, (n, oh, ow, cout), *self._q(role or self._role(act)))
        self.net.layers.append(QLayer("conv", name, [x], y, wq, sw, b, k, stride, padding, act))
        return y

    def dwconv(self, x, k, stride, act, name):
        n, h, w, c = self.net.tensors[x].shape
        wq, sw = self._weights((1, k, k, c), k * k, 3)
        b = self._bias(c, self.net.tensors[x].scale, sw)
        y = self.tensor(name, (n, -(-h // stride), -(-w // stride), c), *self._q(self._role(act)))
        self.net.layers.append(QLayer("dwconv", name, [x], y, wq, sw, b, k, stride, "SAME", act))
        return y

    def add(self, a, b, act, name):
        y = self.tensor(name, self.net.tensors[a].shape, *self._q(_RELU if act == "relu" else _ADD))
        self.net.layers.append(QLayer("add", name, [a, b], y, act=act))
        return y

    def pool(self, kind, x, k, stride, padding, name):
        t = self.net.tensors[x]
        n, h, w, c = t.shape
        oh, ow = (-(-h // stride), -(-w // stride)) if padding == "SAME" else ((h - k) // stride + 1,
                                                                               (w - k) // stride + 1)
        y = self.tensor(name, (n, oh, ow, c), t.scale, t.zero_point)   # TFLite: pools keep the quantisation
        self.net.layers.append(QLayer(kind, name, [x], y, kernel=k, stride=stride, padding=padding))
        return y

    def reshape(self, x, name):
        t = self.net.tensors[x]
        y = self.tensor(name, (t.shape[0], int(np.prod(t.shape[1:]))), t.scale, t.zero_point)
        self.net.layers.append(QLayer("reshape", name, [x], y))
        return y

    def fc(self, x, nout, name):
        t = self.net.tensors[x]
        wq, sw = self._weights((nout, t.shape[1]), t.shape[1], 0)
        b = self._bias(nout, t.scale, sw)
        y = self.tensor(name, (t.shape[0], nout), *self._q(_LOGITS))
        self.net.layers.append(QLayer("fc", name, [x], y, wq, sw, b))
        return y

    def softmax(self, x, name):
        y = self.tensor(name, self.net.tensors[x].shape, 1.0 / 256.0, -128)   # TFLite's fixed softmax output
        self.net.layers.append(QLayer("softmax", name, [x], y))
        return y


def mobilenetv2(size: int = 224, seed: int = SEEDS["mobilenetv2"]) -> QNet:
    from .mobilenetv2 import SETTINGS, _make_divisible
    g = _Builder("mobilenetv2", seed, size)
    x = g.conv("input", 32, 3, 2, "relu6", "features.0")
    idx = 1
    for t, c, reps, s in SETTINGS:
        for r in range(reps):
            stride, p, inp = (s if r == 0 else 1), f"features.{idx}.", g.net.tensors[x].shape[3]
            oup = _make_divisible(c)
            y = g.conv(x, inp * t, 1, 1, "relu6", p + "expand") if t != 1 else x
            y = g.dwconv(y, 3, stride, "relu6", p + "depthwise")
            y = g.conv(y, oup, 1, 1, None, p + "project")
            x = g.add(x, y, None, p + "add") if stride == 1 and inp == oup else y
            idx += 1
    x = g.conv(x, 1280, 1, 1, "relu6", f"features.{idx}")
    x = g.pool("avgpool", x, x_hw(g, x), 1, "VALID", "avgpool")
    x = g.conv(x, 1001, 1, 1, None, "logits", role=_LOGITS)
    x = g.reshape(x, "reshape")
    g.softmax(x, "output")
    return g.net


def resnet50(size: int = 224, seed: int = SEEDS["resnet50"]) -> QNet:
    from .resnet import LAYERS
    g = _Builder("resnet50", seed, size)
    x = g.conv("input", 64, 7, 2, "relu", "conv1")
    x = g.pool("maxpool", x, 3, 2, "SAME", "maxpool")
    for li, (planes, blocks) in enumerate(zip((64, 128, 256, 512), LAYERS)):
        for bi in range(blocks):
            stride, p = (2 if (li > 0 and bi == 0) else 1), f"layer{li + 1}.{bi}."
            y = g.conv(x, planes, 1, 1, "relu", p + "conv1")
            y = g.conv(y, planes, 3, stride, "relu", p + "conv2")
            y = g.conv(y, planes * 4, 1, 1, None, p + "conv3")
            idt = x
            if stride != 1 or g.net.tensors[x].shape[3] != planes * 4:
                idt = g.conv(x, planes * 4, 1, stride, None, p + "downsample")
            x = g.add(y, idt, "relu", p + "add")
    x = g.pool("avgpool", x, x_hw(g, x), 1, "VALID", "avgpool")
    x = g.reshape(x, "flatten")
    x = g.fc(x, 1000, "fc")
    g.softmax(x, "output")
    return g.net


def x_hw(g: _Builder, x: str) -> int:
    return g.net.tensors[x].shape[1]


def build(name: str, **kw) -> QNet:
    return {"mobilenetv2": mobilenetv2, "resnet50": resnet50}[name](**kw)


# ---------------------------------------------------------------------- ONNX QDQ

def to_onnx(net: QNet, opset: int = 17):
    """The QNet as an ONNX QDQ model (NCHW): a float input quantised once, DequantizeLinear on every integer
    op's inputs (per-channel int8 weights, int32 biases) and QuantizeLinear on its output, a fused ReLU / ReLU6
    as Relu / Clip before the QuantizeLinear, pools and the reshape on the codes, the softmax in float on a
    float output "output" [N, classes]."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits, made = [], [], set()

    def init(name, arr):
        if name not in made:
            made.add(name)
            inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def qparams(t: QTensor):
        return (init(f"{t.name}.scale", np.float32(t.scale)), init(f"{t.name}.zp", np.int8(t.zero_point)))

    def dq(name):
        s, z = qparams(net.tensors[name])
        y = f"{name}.f{len(nodes)}"          # one DequantizeLinear per reader, as exporters write them
        nodes.append(helper.make_node("DequantizeLinear", [name + ".q", s, z], [y], name=y))
        return y

    def q(src, name):
        t = net.tensors[name]
        s, z = qparams(t)
        nodes.append(helper.make_node("QuantizeLinear", [src, s, z], [name + ".q"], name=f"{name}.q"))

    def act(y, ly):
        if ly.act == "relu":
            nodes.append(helper.make_node("Relu", [y], [y + ".act"], name=f"{ly.name}.relu"))
            return y + ".act"
        if ly.act == "relu6":
            lo, hi = init(f"{ly.name}.clip_lo", np.float32(0)), init(f"{ly.name}.clip_hi", np.float32(6))
            nodes.append(helper.make_node("Clip", [y, lo, hi], [y + ".act"], name=f"{ly.name}.relu6"))
            return y + ".act"
        return y

    def weights(ly, w, axis):
        s_in = net.tensors[ly.inputs[0]].scale
        wn = init(f"{ly.name}.weight", w)
        ws = init(f"{ly.name}.weight.scale", ly.w_scale.astype(np.float32))
        wz = init(f"{ly.name}.weight.zp", np.zeros(ly.w_scale.size, np.int8))
        nodes.append(helper.make_node("DequantizeLinear", [wn, ws, wz], [wn + ".f"], axis=axis,
                                      name=f"{ly.name}.weight.dq"))
        bn = init(f"{ly.name}.bias", ly.bias)
        bs = init(f"{ly.name}.bias.scale", (np.float64(s_in) * ly.w_scale.astype(np.float64)).astype(np.float32))
        bz = init(f"{ly.name}.bias.zp", np.zeros(ly.bias.size, np.int32))
        nodes.append(helper.make_node("DequantizeLinear", [bn, bs, bz], [bn + ".f"], axis=0,
                                      name=f"{ly.name}.bias.dq"))
        return wn + ".f", bn + ".f"

    s, z = qparams(net.tensors[net.input])
    nodes.append(helper.make_node("QuantizeLinear", [net.input, s, z], [net.input + ".q"], name="input.q"))
    out_f = None
    for ly in net.layers:
        x = ly.inputs[0]
        if ly.kind in ("conv", "dwconv"):
            k = ly.kernel
            h, w = net.tensors[x].shape[1:3]
            if ly.padding == "SAME":
                (pt, pb), (pl, pr) = same_pads(h, k, ly.stride), same_pads(w, k, ly.stride)
            else:
                pt = pb = pl = pr = 0
            if ly.kind == "conv":
                wt, group = ly.weights.transpose(0, 3, 1, 2), 1               # OHWI -> OIHW
            else:
                wt, group = ly.weights.transpose(3, 0, 1, 2), ly.weights.shape[3]   # 1HWC -> C1HW
            wf, bf = weights(ly, np.ascontiguousarray(wt), 0)
            y = ly.output + ".acc"
            nodes.append(helper.make_node("Conv", [dq(x), wf, bf], [y], name=ly.name, group=group,
                                          kernel_shape=[k, k], strides=[ly.stride] * 2, pads=[pt, pl, pb, pr],
                                          dilations=[1, 1]))
            q(act(y, ly), ly.output)
        elif ly.kind == "fc":
            wf, bf = weights(ly, ly.weights, 0)
            y = ly.output + ".acc"
            nodes.append(helper.make_node("Gemm", [dq(x), wf, bf], [y], name=ly.name, transB=1))
            q(act(y, ly), ly.output)
        elif ly.kind == "add":
            y = ly.output + ".acc"
            nodes.append(helper.make_node("Add", [dq(x), dq(ly.inputs[1])], [y], name=ly.name))
            q(act(y, ly), ly.output)
        elif ly.kind == "maxpool":       # on the codes (TFLite: same quantisation in and out)
            h = net.tensors[x].shape[1]
            pt, pb = same_pads(h, ly.kernel, ly.stride)
            nodes.append(helper.make_node("MaxPool", [x + ".q"], [ly.output + ".q"], name=ly.name,
                                          kernel_shape=[ly.kernel] * 2, strides=[ly.stride] * 2,
                                          pads=[pt, pt, pb, pb]))
        elif ly.kind == "avgpool":       # the global average pool in float, requantised
            y = ly.output + ".acc"
            nodes.append(helper.make_node("GlobalAveragePool", [dq(x)], [y], name=ly.name))
            q(y, ly.output)
        elif ly.kind == "reshape":
            shape = init(f"{ly.name}.shape", np.array(net.tensors[ly.output].shape, np.int64))
            nodes.append(helper.make_node("Reshape", [x + ".q", shape], [ly.output + ".q"], name=ly.name))
        elif ly.kind == "softmax":
            nodes.append(helper.make_node("Softmax", [dq(x)], [net.output], name=ly.name, axis=-1))
            out_f = net.output
        else:
            raise ValueError(f"unknown layer kind {ly.kind}")
    if out_f is None:
        raise ValueError("the network must end in a softmax")
    n, h, w, c = net.tensors[net.input].shape
    g = helper.make_graph(nodes, net.name, [helper.make_tensor_value_info(net.input, TensorProto.FLOAT,
                                                                           [n, c, h, w])],
                          [helper.make_tensor_value_info(net.output, TensorProto.FLOAT,
                                                         list(net.tensors[net.output].shape))], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8,
                          producer_name="edgeplan.models.qtwins", producer_version="1",
                          doc_string=f"{net.name} int8 QDQ twin of the TFLite file tools/tflite_write.py writes")
    onnx.checker.check_model(m)
    return m
