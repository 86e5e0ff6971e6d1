"""TFLite import: a `.tflite` flatbuffer (known by its file identifier "TFL3", not its suffix) becomes an ONNX
ModelProto in memory, which the ONNX pipeline compiles (docs/tflite.md). Needs the `tflite` package (the
flatc-generated schema classes), imported only for TFLite input."""
from __future__ import annotations

import os
from dataclasses import dataclass

from .reader import is_tflite

__all__ = ["is_tflite", "read_bytes", "to_onnx", "Imported"]


@dataclass
class Imported:
    model: object                # onnx.ModelProto
    fp16_weights: int            # float16 constant elements dequantised at import (0: none)
    quantized: bool              # the model holds int8 / uint8 codes
    state: dict                  # {state input: output fed back into it} from resource variables (variables.py)
    state_fill: dict             # {state input: its reset byte}: an int8 state's zero point


def read_bytes(model):
    """The bytes of model when it is a TFLite flatbuffer (a path or bytes), else None."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        return data if is_tflite(data) else None
    if isinstance(model, (str, os.PathLike)):
        try:
            with open(model, "rb") as f:
                head = f.read(8)
                if not is_tflite(head):
                    return None
                return head + f.read()
        except OSError:
            return None   # the ONNX loader reports the unreadable path
    return None


def to_onnx(data: bytes, shapes: dict | None = None) -> Imported:
    """The TFLite model in `data` as an ONNX ModelProto (opset convert.OPSET). shapes {input name: shape}
    sets the dims the model leaves to run time (shape_signature -1) before the ops' shapes are computed.
    Raises CompileError naming every op that does not import."""
    try:
        import tflite  # noqa: F401 - the generated schema classes
    except ImportError as e:
        raise ImportError("compiling a TFLite model needs the 'tflite' package (pip install 'tflite>=2.18')") from e
    from .convert import Converter
    from .ops import HANDLERS
    from .reader import read
    import struct
    try:   # flatbuffer offsets are untrusted: a corrupt or truncated file fails here with no reason of its own
        g = read(data)
        cv = Converter(g, shapes)
        model = cv.convert(HANDLERS)
    except (struct.error, LookupError, ArithmeticError, TypeError, ValueError, AttributeError, MemoryError,
            RecursionError) as e:
        from ..errors import CompileError, Problem
        raise CompileError([Problem(None, None, f"not a readable TFLite model: a corrupt or truncated flatbuffer "
                                                f"({type(e).__name__}: {e})")]) from None
    quantized = any(t.quant is not None and t.type in (3, 9) and t.data is None for t in g.tensors)
    return Imported(model, cv.fp16_weights, quantized, dict(cv.state), dict(cv.state_fill))
