"""NPU partitioning: which parts of a lowered graph an accelerator runs (docs/npu.md "Partitioning").

The host decides. An accelerator is described by a ``Backend``: which plan ops it runs, how a run of them
becomes its blob, and how long that blob takes on it (its own timing model). The partitioner
  1. finds the maximal runs of consecutive ops (in schedule order, one branch, no control op, static
     shapes) that the backend supports;
  2. encodes each run and models both sides: the NPU time (the blob's modelled time, plus the per-invoke
     sync cost) against the CPU time of the same ops (``CpuModel``: compute and memory rooflines per op);
  3. keeps a run on the NPU only when it is faster there and has at least ``min_ops`` ops or ``min_macs``
     multiply-adds ("the NPU never loses"; a lone small op is not worth an invoke even when the model says so);
     every other run stays on the CPU, with the reason.
A kept run becomes one DELEGATE op (its blob a constant, its inputs and outputs the run's boundary tensors,
its working memory the op's scratch) followed by the run's own ops, which the runtime skips when the delegate
ran and runs when it did not: a plan opened without the delegate computes the same int8 results.

Partition I/O is zero-copy: the boundary tensors stay in the arena, so no copy bytes are modelled; a
backend whose device cannot read the arena accounts for its transfers in its own time model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ..._cdef import K
from ..cost import op_bytes, op_flops
from ..graph import Graph, Op, Tensor, branch_paths

CONTROL = {"if", "else", "delegate"}


@dataclass
class Backend:
    """An accelerator as the partitioner sees it.

    supported(op) -> None when the device runs the plan op, else the reason it does not.
    encode(ops, inputs, outputs) -> (blob bytes, working-memory bytes): the run as the device's blob; ops in
        schedule order, inputs / outputs the run's boundary (storage) tensors in the order the DELEGATE op
        passes them. Raises ValueError (with the reason) when the run cannot be encoded (too large for the
        device's memory, say): the run stays on the CPU.
    seconds(blob) -> the blob's modelled time on the device, compute and memory traffic included.
    groups(graph) -> optional: {index of an op: index one past the last op} of op sequences the device runs as one
        command though no single op of them is supported alone (the vNPU: CAST int8 -> f32, MAXPOOL, CAST back,
        the int8 max pool). find_runs takes such a group whole, never asking its ops one by one."""
    name: str
    kind: int
    supported: Callable[[Op], Optional[str]]
    encode: Callable[[list, list, list], tuple]
    seconds: Callable[[bytes], float]
    sync_s: float = 0.0          # per invoke: doorbell, cache maintenance, interrupt, driver call
    min_ops: int = 2             # shorter runs stay on the CPU unless they have min_macs multiply-adds
    min_macs: int = 1_000_000
    max_io: int = K.EP_DELEGATE_MAX_IO
    detail: Callable[[bytes], dict] = None   # optional: the timing model's breakdown for reports
    cpu: str = ""                # the CPU beside the device (a CPU_MODELS key), when no board is given
    groups: Callable[[Graph], dict] = None


@dataclass(frozen=True)
class CpuModel:
    """Per-op CPU time: max(compute, memory) + a fixed dispatch cost, at one thread.

    The rates are sustained kernel throughputs (not peaks) of edgeplan's kernels on the board's core:
    float32 GFLOP/s, int8 GOP/s (2 per multiply-add) and the memory bandwidth one core sees."""
    name: str
    f32_gflops: float
    int8_gops: float
    mem_gbps: float
    op_overhead_s: float = 1e-6

    def op_seconds(self, op: Op) -> float:
        try:
            flops = float(op_flops(op))
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            flops = 0.0
        rate = self.int8_gops if op.kind.startswith("q") else self.f32_gflops
        return max(flops / (rate * 1e9), op_bytes(op) / (self.mem_gbps * 1e9)) + self.op_overhead_s


# one core of each board's CPU running edgeplan's kernels (docs/npu.md "CPU model"): int8 on the A76 uses
# SDOT, on the A72 and A53 the widening NEON kernels; x86-64 is the AVX2 host
CPU_MODELS = {
    "x86-64": CpuModel("x86-64", f32_gflops=80.0, int8_gops=100.0, mem_gbps=15.0),
    "cortex-a76": CpuModel("cortex-a76", f32_gflops=25.0, int8_gops=70.0, mem_gbps=10.0),
    "cortex-a72": CpuModel("cortex-a72", f32_gflops=10.0, int8_gops=12.0, mem_gbps=4.0),
    "cortex-a53": CpuModel("cortex-a53", f32_gflops=4.0, int8_gops=6.0, mem_gbps=2.5),
    "cortex-m55": CpuModel("cortex-m55", f32_gflops=0.4, int8_gops=1.0, mem_gbps=0.8, op_overhead_s=5e-6),
}


def cpu_model(board=None) -> CpuModel:
    """The CPU model of a board (edgeplan.boards.Board or name), or of this host when None."""
    if board is None:
        import platform
        return CPU_MODELS["x86-64" if platform.machine() in ("x86_64", "AMD64") else "cortex-a72"]
    if isinstance(board, str):
        from ...boards import load_board
        board = load_board(board)
    cpu = board.cpu.split(".")[0]
    if board.arch == "x86_64":
        return CPU_MODELS["x86-64"]
    return CPU_MODELS.get(cpu, CPU_MODELS["cortex-a72"])


@dataclass
class Run:
    ops: list
    start: int                    # index of the first op in the graph's op list
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    npu_s: float = math.inf
    cpu_s: float = 0.0
    blob: bytes = b""
    work: int = 0
    placed: bool = False
    reason: str = ""

    def report(self, index: int | None) -> dict:
        return dict(partition=index, ops=[o.name or o.kind for o in self.ops], n_ops=len(self.ops),
                    kinds=sorted({o.kind for o in self.ops}), npu_us=round(self.npu_s * 1e6, 3)
                    if math.isfinite(self.npu_s) else None, cpu_us=round(self.cpu_s * 1e6, 3),
                    placed=self.placed, reason=self.reason, blob_bytes=len(self.blob), work_bytes=self.work,
                    inputs=[t.name for t in self.inputs], outputs=[t.name for t in self.outputs])


def _static(op: Op) -> bool:
    return all(not any(t.dim_sym) for t in list(op.inputs) + list(op.outputs) if t is not None)


def find_runs(graph: Graph, backend: Backend, unsupported: frozenset = frozenset()) -> tuple[list, list]:
    """Maximal runs of consecutive supported ops, and [(op, reason)] for the ops the backend refuses.
    ``unsupported``: op names to treat as unsupported (tests; a user's override)."""
    paths = branch_paths(graph.ops)
    grouped = set()      # ops of the backend's groups whose every op may go (static, not marked, one branch)
    for a, b in (backend.groups(graph) if backend.groups else {}).items():
        members = range(a, b)
        if all(graph.ops[k].name not in unsupported and _static(graph.ops[k]) and paths[k] == paths[a]
               for k in members):
            grouped.update(members)
    runs, refused, cur = [], [], None
    for i, op in enumerate(graph.ops):
        why = None
        if i in grouped:
            why = None
        elif op.kind in CONTROL:
            why = "control op"
        elif op.name in unsupported:
            why = "marked unsupported"
        elif not _static(op):
            why = "variable dims"
        else:
            why = backend.supported(op)
        if why is None and cur is not None and paths[i] == paths[cur.start]:
            cur.ops.append(op)
            continue
        if cur is not None:
            runs.append(cur)
            cur = None
        if why is None:
            cur = Run([op], i)
        elif op.kind not in CONTROL:
            refused.append((op, why))
    if cur is not None:
        runs.append(cur)
    return runs, refused


def boundary(graph: Graph, run: Run) -> None:
    """The run's inputs (storage tensors it reads that it does not write; constants are the blob's) and
    outputs (storage tensors it writes that an op after it, a graph output or a state reads), in first-use
    order."""
    inside = {id(o) for o in run.ops}
    written = {id(t.storage()) for o in run.ops for t in o.outputs}
    ins, seen = [], set()
    for o in run.ops:
        for t in o.inputs:
            if t is None or t.is_const:
                continue
            s = t.storage()
            if id(s) not in written and id(s) not in seen:
                seen.add(id(s))
                ins.append(s)
    read_outside = {id(t.storage()) for o in graph.ops if id(o) not in inside for t in o.inputs if t is not None}
    read_outside |= {id(t.storage()) for t in graph.outputs}
    read_outside |= {id(t.storage()) for t in graph.tensors if t.is_state}
    outs, seen = [], set()
    for o in run.ops:
        for t in o.outputs:
            s = t.storage()
            if id(s) in read_outside and id(s) not in seen:
                seen.add(id(s))
                outs.append(s)
    run.inputs, run.outputs = ins, outs


def _macs(op: Op) -> int:
    try:
        return int(op_flops(op)) // 2
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return 0


def decide(graph: Graph, run: Run, backend: Backend, cpu: CpuModel) -> None:
    run.cpu_s = sum(cpu.op_seconds(o) for o in run.ops)
    macs = sum(_macs(o) for o in run.ops)
    if len(run.ops) < backend.min_ops and macs < backend.min_macs:
        run.reason = (f"{len(run.ops)} op(s) of {macs:,} MACs: fewer than {backend.min_ops} ops and "
                      f"{backend.min_macs:,} MACs")
        return
    boundary(graph, run)
    if not run.outputs:
        run.reason = "computes nothing that is read"
        return
    if len(run.inputs) > backend.max_io or len(run.outputs) > backend.max_io:
        run.reason = f"{len(run.inputs)} inputs / {len(run.outputs)} outputs, more than {backend.max_io}"
        return
    try:
        blob, work = backend.encode(run.ops, run.inputs, run.outputs)
    except ValueError as e:
        run.reason = f"not encodable: {e}"
        return
    run.blob, run.work = bytes(blob), int(work)
    run.npu_s = float(backend.seconds(run.blob)) + backend.sync_s
    if run.npu_s >= run.cpu_s:
        run.reason = f"modelled {run.npu_s * 1e6:.1f} us on the NPU, {run.cpu_s * 1e6:.1f} us on the CPU"
        return
    run.placed = True


def partition(graph: Graph, backend: Backend, cpu: CpuModel | None = None,
              unsupported: frozenset = frozenset()) -> dict:
    """Partitions graph in place: each run worth offloading becomes a DELEGATE op followed by its CPU ops.
    Returns the report (also kept in graph.meta["partitions"]): per run, its ops, modelled NPU and CPU times,
    whether it was placed and why not; and the refused ops by reason."""
    cpu = cpu or cpu_model()
    runs, refused = find_runs(graph, backend, frozenset(unsupported))
    for r in runs:
        decide(graph, r, backend, cpu)
    placed = [r for r in runs if r.placed]
    if placed:
        starts = {r.start: r for r in placed}
        ops, k, i = [], 0, 0
        while i < len(graph.ops):
            r = starts.get(i)
            if r is None:
                ops.append(graph.ops[i])
                i += 1
                continue
            blob = Tensor(f"npu{k}:blob", np.dtype(np.uint8), (len(r.blob),),
                          data=np.frombuffer(r.blob, dtype=np.uint8).copy())
            graph.tensors.append(blob)
            d = Op("delegate", [blob] + list(r.inputs), list(r.outputs),
                   dict(skip=len(r.ops), kind=backend.kind, partition=k, reserved=0),
                   name=f"npu{k}", scratch=r.work)
            for o in r.ops:   # an in-place CPU op could make the delegate's output share its input's bytes
                o.inplace = None
            ops.append(d)
            ops.extend(r.ops)
            i += len(r.ops)
            k += 1
        graph.ops = ops
    cpu_total = sum(cpu.op_seconds(o) for o in graph.ops if o.kind not in CONTROL)
    placed_cpu = sum(r.cpu_s for r in placed)
    report = dict(backend=backend.name, cpu=cpu.name, sync_us=backend.sync_s * 1e6,
                  runs=[r.report(placed.index(r) if r.placed else None) for r in runs],
                  refused=_refused_summary(refused),
                  cpu_only_us=round(cpu_total * 1e6, 3),
                  partitioned_us=round((cpu_total - placed_cpu + sum(r.npu_s for r in placed)) * 1e6, 3),
                  n_partitions=len(placed), npu_ops=sum(len(r.ops) for r in placed))
    graph.meta["partitions"] = report
    graph.fused.append(f"npu: {len(placed)} partition(s) of {report['npu_ops']} op(s) on {backend.name}")
    return report


def _refused_summary(refused: list) -> dict:
    out: dict = {}
    for op, why in refused:
        key = f"{op.kind}: {why}"
        out[key] = out.get(key, 0) + 1
    return out


def resolve(npu, board=None, unsupported=()) -> tuple:
    """compile()'s npu= and board= as (Backend, CpuModel, unsupported names): npu a Backend, or the name of
    an NPU profile (boards/npu/<name>.toml)."""
    if isinstance(npu, Backend):
        backend = npu
    elif isinstance(npu, str):
        from .profiles import backend_for
        backend = backend_for(npu)
    else:
        raise TypeError(f"npu must be an NPU profile name or a partition.Backend, got {type(npu).__name__}")
    if board is None and backend.cpu in CPU_MODELS:
        return backend, CPU_MODELS[backend.cpu], frozenset(unsupported)
    return backend, cpu_model(board), frozenset(unsupported)
