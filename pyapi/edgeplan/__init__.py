"""edgeplan: compile ONNX models into plans on the host; run plans in a fixed arena on the board.

``edgeplan.Session`` needs only numpy and cffi; ``edgeplan.compile`` also needs onnx (imported lazily)."""
from __future__ import annotations

from .plan import Plan
from .runtime import EdgeplanError, Session, TensorInfo

__version__ = "0.1.0"
__all__ = ["compile", "Plan", "Session", "EdgeplanError", "TensorInfo", "__version__"]


def compile(model, shapes: dict | None = None, *, board=None) -> Plan:  # noqa: A001 - the natural name
    """Compiles an ONNX model (path, bytes or ModelProto) into a Plan.

    ``shapes`` pins input dims, e.g. ``{"x": (1, 3, 640, 640)}``. ``board`` (a name from
    ``edgeplan.boards.list_boards()`` or a Board) picks kernel variants and weight packing for that
    board instead of this host."""
    from .compiler.pipeline import compile_model
    if board is None:
        return compile_model(model, shapes=shapes)
    from .boards import Board, load_board
    b = board if isinstance(board, Board) else load_board(board)
    return compile_model(model, shapes=shapes, target=b.target())
