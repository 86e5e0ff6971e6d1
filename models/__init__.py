"""Reference model builders for edgeplan: pure onnx.helper + numpy, deterministic synthetic weights.

    from edgeplan import models
    m = models.build("resnet50", size=64)      # -> onnx.ModelProto (opset 17, ir_version 8)

Every builder takes ``batch``, ``size``, ``dynamic_batch`` and ``seed`` keyword arguments; weights
depend only on the seed and the architecture (not on ``size``), so outputs are reproducible.
"""
from __future__ import annotations

from ._builder import IR_VERSION, OPSET, Graph, profile
from .mobilenetv2 import mobilenetv2
from .resnet import resnet50
from .tiny import tiny
from .yolo import yolo

BUILDERS = {"resnet50": resnet50, "mobilenetv2": mobilenetv2, "yolo": yolo, "tiny": tiny}
NAMES = list(BUILDERS)
# input name and NCHW shape each builder produces with default arguments
INPUTS = {"resnet50": ("input", [1, 3, 224, 224]), "mobilenetv2": ("input", [1, 3, 224, 224]),
          "yolo": ("images", [1, 3, 320, 320]), "tiny": ("x", [1, 3, 32, 32])}


def build(name: str, **kw):
    """Build model ``name`` (one of NAMES) with builder keyword arguments ``kw``."""
    try:
        fn = BUILDERS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(NAMES)}") from None
    return fn(**kw)


__all__ = ["build", "NAMES", "BUILDERS", "INPUTS", "profile", "Graph", "OPSET", "IR_VERSION",
           "resnet50", "mobilenetv2", "yolo", "tiny"]
