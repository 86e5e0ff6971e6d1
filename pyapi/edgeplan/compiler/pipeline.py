"""compile(): ONNX model -> lowered graph -> memory plan -> plan bytes, with a report."""
from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np

from ..plan import Plan, query
from .graph import Graph, link_branches
from .cost import op_costs
from .kernelset import features, kernel_set
from .memplan import plan_memory
from .passes.blocks import fuse_blocks
from .dynamic import state_in_place
from .passes.layout import assign_layouts, fuse_prelu, nhwc_stems
from .passes.select import select_kernels
from .passes.weights16 import store_weights16
from .target import get_target
from .writer import write_plan


def compile_graph(graph: Graph, *, source: str = "", required_features: int = 0, target=None,
                  weights: str | None = None, npu=None, int8_dynamic: bool = False) -> Plan:
    """target: kernel-selection target (passes/select.py): "host" (default), "x86-64" or "generic".
    weights: None (float32), or "fp16" / "bf16": the packed weights stored in 16 bits, or "fp16-exact": those
    float16 holds exactly (passes/weights16.py).
    int8_dynamic: GEMMs with constant weights on int8 codes quantised per row at run time
    (passes/int8_dynamic.py).
    npu: None, or (partition.Backend, partition.CpuModel, unsupported op names): the runs of ops worth
    offloading become DELEGATE ops (compiler/partition)."""
    tg = get_target(target)
    if weights in ("fp16", "bf16"):
        # Winograd's float32 filters are 4x the filter
        tg = dataclasses.replace(tg, winograd=False)
    dyn = None
    if int8_dynamic:
        from .passes.int8_dynamic import int8_dynamic as rewrite
        dyn = rewrite(graph)
    select_kernels(graph, tg)
    if tg.c8_before_blocks:
        assign_layouts(graph, tg)
        fuse_blocks(graph, tg)
    else:
        fuse_blocks(graph, tg)
        assign_layouts(graph, tg)
    fuse_prelu(graph)
    nhwc_stems(graph)
    state_in_place(graph)
    w16 = store_weights16(graph, weights) if weights is not None else None
    if npu is not None:
        from .partition import partition
        backend, cpu, unsupported = npu
        partition(graph, backend, cpu, unsupported)
    link_branches(graph.ops)
    mem = plan_memory(graph)
    arena_map = sorted([b.offset, b.size, b.first, b.last, b.label] for b in mem.buffers)
    meta = {"producer": "edgeplan", "source": source,
            "symbols": [dict(name=y.name, kind=y.kind, min=y.lo, max=y.hi) for y in graph.syms], "fused": list(graph.fused), "arena_map": arena_map,
            "strategy": mem.strategy, "lower_bound": mem.lower_bound, "target": graph.meta.get("target", ""),
            "kernels": kernel_set(graph), "features": features(graph), "op_cost": op_costs(graph)}
    if graph.meta.get("partitions"):   # where each run of ops was placed and why (edgeplan inspect)
        meta["partitions"] = graph.meta["partitions"]
    scales = graph.meta.get("code_scales") or {}
    if scales:   # the real value of the int8 codes: scale * (code - zero point), by tensor name (edgeplan inspect)
        def root(t):
            while t.view_of is not None:
                t = t.view_of
            return id(t)
        by_root = {root(t): scales[t.name] for t in graph.tensors if t.name in scales}   # views share their codes
        meta["code_scales"] = {t.name: list(by_root[root(t)]) for t in graph.tensors
                               if root(t) in by_root and np.dtype(t.dtype) in (np.dtype(np.int8), np.dtype(np.uint8))}
    data = write_plan(graph, mem, required_features=required_features, meta=meta)
    info = query(data)
    const_bytes = info["const_bytes"]
    report = dict(
        n_ops=len(graph.ops), op_counts=dict(Counter(op.kind for op in graph.ops)), fused=list(graph.fused),
        const_bytes=const_bytes, planned_bytes=mem.arena_bytes, lower_bound=mem.lower_bound,
        strategy=mem.strategy, strategies=mem.strategies, session_bytes=info["session_bytes"],
        arena_bytes=info["arena_bytes"], inplace=mem.inplace, plan_bytes=len(data), kernels=meta["kernels"],
        features=meta["features"],
        symbols=[(y.name, y.lo, y.hi) + ((y.step,) if y.step > 1 else ()) for y in graph.syms],
        state=[t.name for t in graph.tensors if t.is_state], warnings=list(graph.meta.get("warnings", ())))
    if w16 is not None:
        report["weights16"] = w16
    if dyn is not None:
        report["int8_dynamic"] = dyn
    if graph.meta.get("partitions"):
        report["partitions"] = graph.meta["partitions"]
    return Plan(data, report)


def compile_model(model, shapes: dict | None = None, target=None, dims=None, state=None, consts=None,
                  max_trips: int = 0, weights: str | None = None, npu=None, hidden_state=(),
                  int8_dynamic: bool = False, state_fill=None) -> Plan:
    """dims: {name: (min, max)} bounds of variable dims (model dim names, or data-dependent lengths);
    state: {input name: output name} pairs kept in the arena across runs (compiler/dynamic.py);
    hidden_state: the state outputs that are not plan outputs (a TFLite model's variables);
    state_fill: {input name: byte} the reset byte of an int8 state (its zero point; zero bytes otherwise);
    consts: {input name: value} inputs frozen to a value at compile time (onnx_import.freeze_inputs);
    max_trips: the iteration bound of Loops whose trip count is only known at run time (passes/unroll.py)."""
    from . import dynamic, onnx_import
    from .frontend import lower
    source = model if isinstance(model, str) else getattr(getattr(model, "graph", None), "name", "")
    if consts:
        model = onnx_import.freeze_inputs(onnx_import.load(model), dict(consts))
    if dims:
        graph = dynamic.lower_dynamic(model, shapes, dims, max_trips)
    else:
        graph = lower(model, shapes=shapes, max_trips=max_trips)
        if graph.meta.get("data_dims"):   # lengths the data decides: trace which tensors follow them
            graph = dynamic.lower_dynamic(model, shapes, {}, max_trips)
    if state:
        dynamic.apply_state(graph, dict(state), hide=set(hidden_state), fill=state_fill)
    return compile_graph(graph, source=str(source), target=target, weights=weights, npu=npu,
                         int8_dynamic=int8_dynamic)
