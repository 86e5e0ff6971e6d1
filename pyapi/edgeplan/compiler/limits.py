"""The sizes the compiler refuses to build, each defined once with its reason.

A model is untrusted input and small; what it describes need not be: Range(0, 2**40) is a few hundred
bytes of ONNX and 8 TiB of int64. Every limit here is checked from shapes, before anything of that size is
allocated, and the refusal names the node (errors.CompileError), so a hostile model costs neither memory
nor a traceback.

- Constant folding (passes/fold.py) and the lowerings that build constants may materialise at most
  MAX_FOLD_BYTES for one constant from little data, or up to FOLD_GROWTH times the bytes of the node's own
  constant inputs (a Cast of int8 weights to int64 widens them 8x, a DequantizeLinear 4x), so that a large
  real model still folds. All the constants folding creates in one model together stay within
  max(MAX_FOLD_TOTAL_BYTES, FOLD_GROWTH x the model's own constant bytes): memory stays proportional to the
  model file.
- The plan stores every dim as int32 (ep_tensor_rec.dims) and every op parameter in its C struct field:
  a value that does not fit is refused (MAX_DIM, writer.FieldError).
- One tensor, and the whole arena, must fit in the address space of a 32-bit board: 4 GiB
  (MAX_TENSOR_BYTES, MAX_ARENA_BYTES). The runtime's own checks (2^40 elements, a 2^40-byte arena) are
  only a plausibility bound; the compiler refuses earlier and says which tensors are the largest.
- Conv / ConvTranspose / pool windows: kernel, stride and dilation in [1, PARAM_LIMIT], pads in
  [0, PARAM_LIMIT], the range ep_param_in_range accepts at open (runtime_c/src/ops/shape_check.h,
  EP_PARAM_LIMIT): a plan the runtime would refuse is refused here, naming the node.
"""
from __future__ import annotations

import math

import numpy as np

MAX_FOLD_BYTES = 1 << 30        # a VGG's 25088 x 4096 fc weight built by ConstantOfShape is 392 MiB
FOLD_GROWTH = 8
MAX_FOLD_TOTAL_BYTES = 2 << 30
MAX_DIM = (1 << 31) - 1
MAX_TENSOR_BYTES = 1 << 32
MAX_ARENA_BYTES = 1 << 32
PARAM_LIMIT = 1 << 20


def fmt_bytes(n: int) -> str:
    """1536 -> '1.5 KiB'; exact below 1 KiB."""
    n = int(n)
    if n < 1024:
        return f"{n} bytes"
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        n /= 1024.0
        if n < 1024 or unit == "EiB":
            return f"{n:.1f} {unit}"
    return f"{n:.1f} EiB"


def nbytes(shape, dtype) -> int:
    """Bytes of a dense tensor, in exact integer arithmetic (no int64 wrap-around for absurd shapes)."""
    return math.prod(int(d) for d in shape) * np.dtype(dtype).itemsize


def fold_limit(input_bytes: int) -> int:
    """The most bytes one constant built from constant inputs of input_bytes may have."""
    return max(MAX_FOLD_BYTES, FOLD_GROWTH * int(input_bytes))


def fold_limit_text(input_bytes: int) -> str:
    if FOLD_GROWTH * int(input_bytes) > MAX_FOLD_BYTES:
        return f"{fmt_bytes(fold_limit(input_bytes))} ({FOLD_GROWTH}x its constant inputs)"
    return fmt_bytes(MAX_FOLD_BYTES)


def tensor_problem(shape, dtype, max_rank: int) -> str | None:
    """Why a tensor of this shape and dtype cannot be in a plan, or None. The text starts with the shape,
    so callers prefix what the tensor is ("output 'y' ...")."""
    shape = [int(d) for d in shape]
    dt = np.dtype(dtype)
    desc = f"[{', '.join(map(str, shape))}] {dt.name}"
    if len(shape) > max_rank:
        return f"{desc} has rank {len(shape)}; plans hold tensors of rank <= {max_rank}"
    neg = [k for k, d in enumerate(shape) if d < 0]
    if neg:
        return f"{desc} has a negative dim {neg[0]}"
    big = [k for k, d in enumerate(shape) if d > MAX_DIM]
    if big:
        return f"{desc} has dim {big[0]} = {shape[big[0]]}, above {MAX_DIM} (plans store dims as int32)"
    size = nbytes(shape, dt)
    if size > MAX_TENSOR_BYTES:
        return (f"{desc} is {fmt_bytes(size)}, above the {fmt_bytes(MAX_TENSOR_BYTES)} limit for one tensor "
                f"(what a 32-bit board can address)")
    return None
