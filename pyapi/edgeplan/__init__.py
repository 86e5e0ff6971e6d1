"""edgeplan: compile ONNX models into plans on the host; run plans in a fixed arena on the board.

``edgeplan.Session`` needs only numpy and cffi; ``edgeplan.compile`` also needs onnx (imported lazily)."""
from __future__ import annotations

import os as _os
from pathlib import Path as _Path

# edgeplan.models and edgeplan.sizebudget are top-level folders of a source checkout (models/,
# sizebudget/) and subpackages of the installed package; in a checkout they are found there.
_root = _Path(__file__).resolve().parents[2]
if not (_Path(__file__).parent / "models").is_dir() and (_root / "models" / "__init__.py").is_file():
    __path__.append(str(_root))  # noqa: F821 - the package's own __path__

from .plan import Plan  # noqa: E402
from .runtime import EdgeplanError, Session, SessionGroup, TensorInfo  # noqa: E402

__version__ = "0.2.0"
__all__ = ["compile", "plan_group", "Plan", "Session", "SessionGroup", "EdgeplanError", "TensorInfo", "__version__"]


def compile(model, shapes: dict | None = None, *, board=None, dims: dict | None = None,  # noqa: A001
            state: dict | None = None, consts: dict | None = None, max_trips: int = 0, quantize: str | None = None,
            calibration=None, observer: str = "percentile", target_sqnr: float = 30.0, npu=None,
            npu_unsupported=(), preprocess=None, state_fill: dict | None = None) -> Plan:
    """Compiles an ONNX model (path, bytes or ModelProto) or a TFLite model (path or bytes; known by its
    flatbuffer identifier "TFL3", whatever the suffix; docs/tflite.md) into a Plan.

    ``shapes`` pins input dims, e.g. ``{"x": (1, 3, 640, 640)}``. ``dims`` bounds variable dims by the
    model's dim names, e.g. ``{"T": (1, 3000)}``: one plan serves every length in range, its arena planned
    for the maximum; a data-dependent length (Range, NonZero) is bounded the same way under its name.
    ``state`` maps a graph input to the graph output fed back into it after every run
    (``{"h_in": "h_out"}``): the plan keeps it in the arena and ``Session.reset()`` zeroes it, or sets each
    byte of an int8 state to its ``state_fill`` value (``{"h_in": 0x80}``: the zero point -128, real 0).
    A TFLite model's variables become state on their own (an int8 variable reset to its zero point).
    ``consts`` freezes graph inputs to values the deployment always feeds (``{"sr": 16000}``): they leave
    the plan's inputs, and what depends on them (an If on the sample rate) is decided at compile time.
    ``max_trips`` bounds a Loop whose trip count or condition is only known at run time: it is unrolled
    to that many iterations, each run only while the loop goes on; a run that needs more fails with
    EP_ERR_RUN_BOUND.
    ``board`` (a name from ``edgeplan.boards.list_boards()`` or a Board) picks kernel variants and
    weight packing for that board instead of this host.
    ``quantize="int8"`` quantises a float model after training (compiler/ptq.py): its Conv, MatMul and Gemm
    layers run on the int8 kernels, with activation ranges observed on ``calibration`` (a folder of .npy /
    .npz inputs, a folder of images or wavs with its ``preprocess.toml`` recipe or the recipe ``preprocess``
    (a dict or a TOML path; docs/quantization.md), or a list of {input name: array}) by ``observer``
    ("percentile", 99.99; "minmax"; or "mse", the clip of least reconstruction error). The ranges are
    cached under $EDGEPLAN_CACHE/ranges; the plan's report says under "calibration" whether they came
    from there.
    ``quantize="auto"`` keeps the layers the output is most sensitive to in float until the output's SQNR
    against the float model reaches ``target_sqnr`` dB on the calibration inputs (the plan's report has the
    per-layer precisions under "mixed_precision").
    ``quantize="int8-dynamic"`` needs no calibration: every GEMM with constant weights (a transformer's
    projections) runs on int8 weights per output column and on int8 codes of its input quantised per row
    at run time (compiler/passes/int8_dynamic.py); the report's "int8_dynamic" counts them.
    ``quantize="fp16"`` (or ``"bf16"``) stores the convolution and GEMM weights in 16 bits, half the
    bytes; activations and arithmetic stay float32 (compiler/passes/weights16.py). ``quantize="fp16-exact"``
    stores in float16 only the weights it holds exactly (a model shipped in float16, widened on export):
    the float32 plan's results, bit for bit, in fewer bytes.
    Pre-quantised models (QDQ, QOperator) need no option: they run on the int8 kernels as they come.
    ``npu`` (an NPU profile name from ``edgeplan.npu_profiles()``, or a ``compiler.partition.Backend``)
    offloads the runs of ops the NPU runs faster than the board's CPU (``board``, else this host) as
    delegate partitions, each keeping its CPU ops as the fallback (docs/npu.md); ``npu_unsupported`` names
    ops to keep on the CPU. The report's "partitions" says what went where and why."""
    from .compiler.pipeline import compile_model
    tfl = None
    if not hasattr(model, "graph"):   # a TFLite flatbuffer (path or bytes), known by its identifier "TFL3"
        from .compiler import tflite
        data = tflite.read_bytes(model)
        if data is not None:
            tfl = tflite.to_onnx(data, shapes)
            model = tfl.model
            if quantize is None and tfl.fp16_weights:   # float16 weights stay 16-bit in the plan
                quantize = "fp16"
    if quantize is None and calibration is not None:
        from .compiler.ptq import CalibrationError
        raise CalibrationError("calibration inputs are for post-training quantisation: add quantize='int8' or 'auto'")
    dynamic = quantize == "int8-dynamic"
    if dynamic:
        if calibration is not None or preprocess is not None:
            from .compiler.ptq import CalibrationError
            raise CalibrationError("quantize='int8-dynamic' quantises activations at run time and needs no "
                                   "calibration inputs")
        quantize = None
    if preprocess is not None and quantize not in ("int8", "auto"):
        from .compiler.ptq import CalibrationError
        raise CalibrationError("a preprocessing recipe prepares calibration images or wavs: add quantize='int8' "
                               "or 'auto' and a calibration folder")
    weights = None
    if quantize in ("fp16", "bf16", "fp16-exact"):
        weights, quantize = quantize, None
        if calibration is not None:
            from .compiler.ptq import CalibrationError
            raise CalibrationError(f"quantize='{weights}' stores weights in 16 bits and needs no calibration inputs")
    if quantize is not None:
        from .compiler import ptq
        if quantize not in ("int8", "auto"):
            raise ptq.CalibrationError(f"quantize='{quantize}' is unknown: 'int8', 'auto' (mixed precision), "
                                       "'int8-dynamic', 'fp16', 'bf16' or 'fp16-exact' (16-bit weights)")
        is_dir = isinstance(calibration, (str, _os.PathLike))
        calib: dict = {}
        kw = dict(calibration=calibration if is_dir else None, method=observer, shapes=shapes, recipe=preprocess,
                  info=calib)
        mixed = None
        if quantize == "auto":
            model, mixed = ptq.quantize_auto(model, None if is_dir else calibration, target_sqnr=target_sqnr, **kw)
        else:
            model = ptq.quantize(model, None if is_dir else calibration, **kw)
    target = None
    if board is not None:
        from .boards import Board, load_board
        b = board if isinstance(board, Board) else load_board(board)
        target = b.target()
    npu_spec = None
    if npu is not None:
        from .compiler.partition import resolve
        npu_spec = resolve(npu, board, npu_unsupported)
    hidden, fill = (), dict(state_fill or {})
    if tfl is not None and tfl.state:   # resource variables: state the plan keeps, not outputs
        state, hidden, fill = {**tfl.state, **(state or {})}, tuple(tfl.state.values()), {**tfl.state_fill, **fill}
    plan = compile_model(model, shapes=shapes, target=target, dims=dims, state=state, consts=consts,
                         max_trips=max_trips, weights=weights, npu=npu_spec, hidden_state=hidden,
                         int8_dynamic=dynamic, state_fill=fill)
    if quantize in ("int8", "auto"):
        plan.report["calibration"] = calib
    if quantize == "auto":
        plan.report["mixed_precision"] = mixed
    if tfl is not None:
        plan.report["tflite"] = {"fp16_weights": tfl.fp16_weights, "quantized": tfl.quantized}
    return plan


def plan_group(members, names=None):
    """Groups compiled plans (paths, bytes or ``Plan``s, in the order they are opened) into one shared arena
    for models that run one at a time; each keeps its streaming state in bytes of its own (docs/groups.md).
    Returns an ``edgeplan.group.Group``: its ``plans``, ``save(folder)``, ``summary()``, and the group arena
    against the separate arenas. Open it with ``SessionGroup``."""
    from .group import plan_group as _plan_group
    return _plan_group(members, names)
