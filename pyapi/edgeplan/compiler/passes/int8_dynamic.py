"""Dynamic int8 (``quantize="int8-dynamic"``; plan_format.h "Dynamic int8"): every GEMM with constant float
weights runs on int8 codes, with no calibration.

    A (float) ─ QUANTIZE_ROWS ─ codes, row scales ─┐
    B (float, constant) → int8 per column + scales ─┴─ DQGEMM ─ act(acc * sa * sb + C + R) ─ Y (float)

Each row of A is quantised at run time against its own largest magnitude (symmetric, [-127, 127]), so a
transformer's activations, whose ranges differ from token to token and from input to input, keep 8 bits
where one static range per tensor would not. The weights are int8 per output column (absmax / 127), a
quarter of float32's bytes. The GEMM's bias, residual and activation stay fused. The ops that read one A
share its codes (the query, key and value projections of an attention block quantise their input once).

What stays float: convolutions, MatMuls of two activations (attention scores), GEMMs whose reduction is
longer than 65,536 (the int32 accumulator's bound), a GEMM that reads the transpose of a table the plan
holds anyway (a decoder's logits projection tied to its token embedding: GEMM ROWS keeps one float copy,
where int8 would add a second) and every op that is not a GEMM. Runs on the lowered
graph before kernel selection (pipeline.compile_graph)."""
from __future__ import annotations

import numpy as np

from ..graph import Graph, Op, Tensor, branch_paths, const_f32
from ..ops.linear import ROWS_MAX_M, ROWS_MIN_BYTES, _transposed_const

MAX_K = 65536


def quantize_columns(b: np.ndarray) -> tuple:
    """(int8 codes, float32 scales) of b [K, N] per column: scale = absmax / 127 (1 for a zero column)."""
    a = np.abs(b.astype(np.float32)).max(axis=0)
    s = np.where(a > 0, a / np.float32(127), np.float32(1)).astype(np.float32)
    q = np.clip(np.rint(b / s), -127, 127).astype(np.int8)
    return np.ascontiguousarray(q), s


def int8_dynamic(graph: Graph) -> dict:
    """Rewrites the eligible GEMMs in place; returns the report's "int8_dynamic" entry."""
    paths = branch_paths(graph.ops)
    rows: dict = {}            # (A, branch path) -> (codes, scales): one QUANTIZE_ROWS per input and branch
    ops, n, f32_bytes, i8_bytes, kept = [], 0, 0, 0, []
    for op, path in zip(graph.ops, paths):
        b = const_f32(op.inputs[1]) if op.kind == "gemm" and op.variant == 0 and len(op.inputs) > 1 else None
        if b is None or b.ndim != 2 or 0 in b.shape or 0 in op.inputs[0].shape:
            ops.append(op)
            continue
        if b.shape[0] > MAX_K:
            kept.append(f"{op.name or op.outputs[0].name}: K = {b.shape[0]} > {MAX_K}")
            ops.append(op)
            continue
        if (op.inputs[0].shape[0] <= ROWS_MAX_M and b.nbytes >= ROWS_MIN_BYTES
                and _transposed_const(graph, b, op.inputs[1]) is not None):
            kept.append(f"{op.name or op.outputs[0].name}: reads the transpose of a table the plan holds (ROWS)")
            ops.append(op)
            continue
        a = op.inputs[0]
        key = (id(a.storage()), tuple(a.shape), path)   # the views of one tensor share its codes
        if key not in rows:
            codes = Tensor(f"{a.name}:q8rows", np.dtype(np.int8), tuple(a.shape), dim_sym=tuple(a.dim_sym))
            scales = Tensor(f"{a.name}:q8scales", np.dtype(np.float32), (a.shape[0],),
                            dim_sym=tuple(a.dim_sym[:1]))
            graph.tensors += [codes, scales]
            ops.append(Op("quantize_rows", [a], [codes, scales], {"axis": 1}, name=op.name))
            rows[key] = (codes, scales)
        codes, scales = rows[key]
        q, s = quantize_columns(b)
        f32_bytes += b.nbytes
        i8_bytes += q.nbytes + s.nbytes
        bt = graph.replace_const(op, 1, lambda q=q: q, "q8cols")
        st = Tensor(f"{bt.name}:scales", np.dtype(np.float32), (s.size,), data=s)
        graph.tensors.append(st)
        op.kind = "dqgemm"
        op.inputs = [codes, scales, bt, st] + list(op.inputs[2:])
        ops.append(op)
        n += 1
    graph.ops = ops
    if n:
        graph.fused.append(f"int8-dynamic: {n} GEMM(s) on int8 codes quantised per row at run time")
    return {"gemms": n, "quantize_rows": len(rows), "weight_bytes_f32": int(f32_bytes),
            "weight_bytes_int8": int(i8_bytes), "kept_float": kept}
