"""edgeplan: compile ONNX models into plans on the host; run plans in a fixed arena on the board.

``edgeplan.Session`` needs only numpy and cffi; ``edgeplan.compile`` also needs onnx (imported lazily)."""
from __future__ import annotations

from .plan import Plan
from .runtime import EdgeplanError, Session, TensorInfo

__version__ = "0.1.0"
__all__ = ["compile", "Plan", "Session", "EdgeplanError", "TensorInfo", "__version__"]


def compile(model, shapes: dict | None = None) -> Plan:  # noqa: A001 - the natural name
    """Compiles an ONNX model (path, bytes or ModelProto) into a Plan.

    ``shapes`` pins input dims, e.g. ``{"x": (1, 3, 640, 640)}``."""
    from .compiler.pipeline import compile_model
    return compile_model(model, shapes=shapes)
