"""A YOLOv8n-like detector: Conv-BN-SiLU, C2f (Split/Concat), SPPF, FPN+PAN neck with nearest Resize,
decoupled anchor-free head with YOLOv5-style box decode, one output [batch, A, 4 + nc].

Output rows are (cx, cy, w, h) in input pixels followed by nc sigmoid class scores;
A = sum over strides 8/16/32 of (size/stride)^2.
"""
from __future__ import annotations

import numpy as np

from ._builder import Graph

SEED = 8
STRIDES = (8, 16, 32)


def _conv(g: Graph, x, c: int, k: int, s: int, p: str):
    return g.conv_bn_act(x, c, k, s, "silu", p, ("conv", "bn", "act"))


def _c2f(g: Graph, x, c2: int, n: int, shortcut: bool, p: str):
    c = c2 // 2
    ys = list(g.split(_conv(g, x, 2 * c, 1, 1, p + "cv1."), [c, c], p + "split"))
    for i in range(n):
        q = f"{p}m.{i}."
        y = _conv(g, _conv(g, ys[-1], c, 3, 1, q + "cv1."), c, 3, 1, q + "cv2.")
        ys.append(g.add(ys[-1], y, q + "add") if shortcut else y)
    return _conv(g, g.concat(ys, p + "concat"), c2, 1, 1, p + "cv2.")


def _sppf(g: Graph, x, c2: int, p: str):
    y = [_conv(g, x, g.ch[x] // 2, 1, 1, p + "cv1.")]
    for _ in range(3):
        y.append(g.maxpool(y[-1], 5, 1, 2, p + "m"))
    return _conv(g, g.concat(y, p + "concat"), c2, 1, 1, p + "cv2.")


def _head_level(g: Graph, x, lvl: int, stride: int, hw: int, nc: int, c0: int, p: str):
    """Box (4) and class (nc) branches of one level -> [N, hw*hw, 4 + nc]; c0 = P3 channels."""
    cb, cc = max(16, c0 // 4, 64), max(c0, min(nc, 100))
    b = _conv(g, _conv(g, x, cb, 3, 1, f"{p}cv2.{lvl}.0."), cb, 3, 1, f"{p}cv2.{lvl}.1.")
    b = g.conv(b, 4, 1, bias=True, gain=1.0, name=f"{p}cv2.{lvl}.2")
    k = _conv(g, _conv(g, x, cc, 3, 1, f"{p}cv3.{lvl}.0."), cc, 3, 1, f"{p}cv3.{lvl}.1.")
    k = g.sigmoid(g.conv(k, nc, 1, bias=True, gain=1.0, name=f"{p}cv3.{lvl}.2"), f"{p}cls_sigmoid.{lvl}")
    # box decode (YOLOv5 style): xy = (2 sig - 0.5 + grid) * stride, wh = (2 sig)^2 * 4 stride
    q = f"{p}decode.{lvl}."
    xy, wh = g.split(g.sigmoid(b, q + "sigmoid"), [2, 2], q + "split")
    gy, gx = np.meshgrid(np.arange(hw, dtype=np.float32), np.arange(hw, dtype=np.float32), indexing="ij")
    grid = g.param(f"grid.{lvl}", np.stack([gx, gy])[None] - 0.5)          # [1, 2, hw, hw]
    xy = g.binary("Mul", xy, g.const(2.0), q + "xy_mul2")
    xy = g.binary("Add", xy, grid, q + "xy_add_grid")
    xy = g.binary("Mul", xy, g.const(float(stride)), q + "xy_mul_stride")
    wh = g.binary("Mul", wh, g.const(2.0), q + "wh_mul2")
    wh = g.binary("Pow", wh, g.const(2.0), q + "wh_pow")
    wh = g.binary("Mul", wh, g.const(4.0 * stride), q + "wh_mul_anchor")
    y = g.concat([xy, wh, k], q + "concat")
    y = g.reshape(y, [0, 4 + nc, -1], q + "reshape")
    return g.transpose(y, [0, 2, 1], q + "transpose")


def yolo(batch: int = 1, size: int = 320, nc: int = 80, width: float = 0.25, depth: float = 0.33,
         dynamic_batch: bool = False, seed: int = SEED):
    """Input "images" [batch|N, 3, size, size] -> output "output0" [batch|N, A, 4 + nc]."""
    if size % 32 or size < 64:
        raise ValueError("yolo size must be a multiple of 32, >= 64")
    ch = lambda c: max(8, int(round(c * width / 8)) * 8)     # noqa: E731
    rep = lambda n: max(1, round(n * depth))                 # noqa: E731
    n = "N" if dynamic_batch else batch
    g = Graph("yolo", seed, calib=(4, 256, 256))
    x = g.input("images", [n, 3, size, size])
    # backbone
    x = _conv(g, x, ch(64), 3, 2, "model.0.")
    x = _conv(g, x, ch(128), 3, 2, "model.1.")
    x = _c2f(g, x, ch(128), rep(3), True, "model.2.")
    x = _conv(g, x, ch(256), 3, 2, "model.3.")
    p3 = _c2f(g, x, ch(256), rep(6), True, "model.4.")
    x = _conv(g, p3, ch(512), 3, 2, "model.5.")
    p4 = _c2f(g, x, ch(512), rep(6), True, "model.6.")
    x = _conv(g, p4, ch(1024), 3, 2, "model.7.")
    x = _c2f(g, x, ch(1024), rep(3), True, "model.8.")
    p5 = _sppf(g, x, ch(1024), "model.9.")
    # FPN (top-down)
    x = g.concat([g.resize2x(p5, "model.10"), p4], "model.11")
    n4 = _c2f(g, x, ch(512), rep(3), False, "model.12.")
    x = g.concat([g.resize2x(n4, "model.13"), p3], "model.14")
    o3 = _c2f(g, x, ch(256), rep(3), False, "model.15.")
    # PAN (bottom-up)
    x = g.concat([_conv(g, o3, ch(256), 3, 2, "model.16."), n4], "model.17")
    o4 = _c2f(g, x, ch(512), rep(3), False, "model.18.")
    x = g.concat([_conv(g, o4, ch(512), 3, 2, "model.19."), p5], "model.20")
    o5 = _c2f(g, x, ch(1024), rep(3), False, "model.21.")
    # head
    outs = [_head_level(g, o, i, s, size // s, nc, g.ch[o3], "model.22.")
            for i, (o, s) in enumerate(zip((o3, o4, o5), STRIDES))]
    g.concat(outs, "model.22.concat", axis=1, out="output0")
    a = sum((size // s) ** 2 for s in STRIDES)
    g.output("output0", [n, a, 4 + nc])
    return g.build(f"YOLOv8n-like detector, {nc} classes, deterministic synthetic weights")
