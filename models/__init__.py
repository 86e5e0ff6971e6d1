"""Reference model builders for edgeplan: pure onnx.helper + numpy, deterministic synthetic weights.

    from edgeplan import models
    m = models.build("resnet50", size=64)      # -> onnx.ModelProto (opset 17, ir_version 8)

Every builder takes ``batch``, ``size``, ``dynamic_batch`` and ``seed`` keyword arguments; weights
depend only on the seed and the architecture (not on ``size``), so outputs are reproducible.
"""
from __future__ import annotations

from ._builder import IR_VERSION, OPSET, Graph, profile
from .asr import ASR_VOCAB, asr
from .kws import KWS_LABELS, kws
from .mobilenetv2 import mobilenetv2
from .resnet import resnet50
from .tiny import tiny
from .tts import TTS_SYMBOLS, hifigan, tts, tts_acoustic
from .yolo import yolo

BUILDERS = {"resnet50": resnet50, "mobilenetv2": mobilenetv2, "yolo": yolo, "tiny": tiny,
            # speech: seed and architecture keywords only, symbolic sequence dims
            "asr": asr, "kws": kws, "tts_acoustic": tts_acoustic, "hifigan": hifigan,
            "tts": tts}                 # tts = tts_acoustic then hifigan in one graph (tokens -> audio)
NAMES = list(BUILDERS)
# input name and NCHW shape each builder produces with default arguments
INPUTS = {"resnet50": ("input", [1, 3, 224, 224]), "mobilenetv2": ("input", [1, 3, 224, 224]),
          "yolo": ("images", [1, 3, 320, 320]), "tiny": ("x", [1, 3, 32, 32]),
          # speech: the first input at a typical length (its symbolic dim pinned); kws also takes the
          # state "h_in" [1, 1, 64] (zeros to start), tts_acoustic's "tokens" are int64 ids in [1, 34)
          "asr": ("audio", [1, 16000]), "kws": ("feats", [1, 50, 40]), "tts_acoustic": ("tokens", [1, 16]),
          "hifigan": ("mel", [1, 80, 32]), "tts": ("tokens", [1, 16])}


def build(name: str, **kw):
    """Build model ``name`` (one of NAMES) with builder keyword arguments ``kw``."""
    try:
        fn = BUILDERS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(NAMES)}") from None
    return fn(**kw)


__all__ = ["build", "NAMES", "BUILDERS", "INPUTS", "profile", "Graph", "OPSET", "IR_VERSION",
           "resnet50", "mobilenetv2", "yolo", "tiny", "asr", "kws", "tts_acoustic", "hifigan", "tts",
           "ASR_VOCAB", "KWS_LABELS", "TTS_SYMBOLS"]
