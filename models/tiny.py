"""A tiny CNN for fast tests: every common op once, runs in microseconds."""
from __future__ import annotations

from ._builder import Graph

SEED = 1


def tiny(batch: int = 1, size: int = 32, num_classes: int = 10, dynamic_batch: bool = False,
         seed: int = SEED):
    """Input "x" [batch|N, 3, size, size] -> output "y" [batch|N, num_classes] (softmax probabilities)."""
    if size % 4 or size < 8:
        raise ValueError("tiny size must be a multiple of 4, >= 8")
    n = "N" if dynamic_batch else batch
    g = Graph("tiny", seed, calib=(4, 32, 32))
    x = g.input("x", [n, 3, size, size])
    x = g.conv_bn_act(x, 16, 3, 1, "relu", "stem.", ("conv", "bn", "relu"))
    y = g.conv_bn_act(x, 16, 3, 1, "relu", "dw.", ("conv", "bn", "relu"), group=16)
    y = g.maxpool(y, 2, 2, 0, "pool1")
    s = g.maxpool(x, 2, 2, 0, "pool_skip")
    x = g.add(y, s, "add")
    x = g.conv_bn_act(x, 32, 1, 1, "relu", "pw.", ("conv", "bn", "relu"))
    x = g.avgpool(x, 2, 2, "pool2")
    x = g.flatten(g.global_avgpool(x, "gap"), "flatten")
    x = g.gemm(x, num_classes, "fc")
    g.softmax(x, "softmax", axis=1, out="y")
    g.output("y", [n, num_classes])
    return g.build("tiny test CNN, deterministic synthetic weights")
