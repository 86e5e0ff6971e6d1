"""MobileNetV2, torchvision topology (features.N.conv.* naming, ReLU6 as Clip, linear bottlenecks)."""
from __future__ import annotations

from ._builder import Graph

SEED = 2
# expansion t, output channels c, repeats n, first stride s
SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
            (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))


def _make_divisible(v: float, divisor: int = 8) -> int:
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def _inverted_residual(g: Graph, x, oup: int, stride: int, t: int, p: str):
    inp = g.ch[x]
    hidden = int(round(inp * t))
    y, i = x, 0
    if t != 1:
        y = g.conv_bn_act(y, hidden, 1, 1, "relu6", f"{p}conv.{i}.", ("0", "1", "2"))
        i += 1
    y = g.conv_bn_act(y, hidden, 3, stride, "relu6", f"{p}conv.{i}.", ("0", "1", "2"), group=hidden)
    y = g.bn(g.conv(y, oup, 1, name=f"{p}conv.{i + 1}", gain=1.0), f"{p}conv.{i + 2}")
    return g.add(x, y, p + "add") if stride == 1 and inp == oup else y


def mobilenetv2(batch: int = 1, size: int = 224, width: float = 1.0, dynamic_batch: bool = False,
                num_classes: int = 1000, seed: int = SEED):
    """Input "input" [batch|N, 3, size, size] -> output "output" [batch|N, num_classes]."""
    if size < 32:
        raise ValueError("mobilenetv2 needs size >= 32")
    n = "N" if dynamic_batch else batch
    g = Graph("mobilenetv2", seed, calib=(4, 160, 160))
    x = g.input("input", [n, 3, size, size])
    x = g.conv_bn_act(x, _make_divisible(32 * width), 3, 2, "relu6", "features.0.", ("0", "1", "2"))
    idx = 1
    for t, c, reps, s in SETTINGS:
        for r in range(reps):
            x = _inverted_residual(g, x, _make_divisible(c * width), s if r == 0 else 1, t,
                                   f"features.{idx}.")
            idx += 1
    last = _make_divisible(1280 * max(1.0, width))
    x = g.conv_bn_act(x, last, 1, 1, "relu6", f"features.{idx}.", ("0", "1", "2"))
    x = g.flatten(g.global_avgpool(x, "avgpool"), "flatten")
    g.gemm(x, num_classes, "classifier.1", out="output")
    g.output("output", [n, num_classes])
    return g.build(f"MobileNetV2 width {width} (torchvision topology), deterministic synthetic weights")
