"""Static memory planning: liveness intervals over the schedule, then offsets.

Every non-constant storage tensor (views share their owner's storage) and every op's scratch becomes a
buffer with a live interval [first, last] in op indices. Graph inputs and outputs live for the whole
run (inputs keep their contents across runs; outputs must survive to the end). An op marked in-place
may write its output over an input whose last use it is. Several placement strategies run and the
smallest arena wins; the lower bound is the largest sum of simultaneously live bytes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import CompileError, Problem
from .graph import Graph, Tensor
from .limits import MAX_ARENA_BYTES, fmt_bytes

ALIGN = 64


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


@dataclass(eq=False)
class Buffer:
    size: int
    first: int
    last: int
    label: str
    tensors: list = field(default_factory=list)   # storage tensors placed here (several when in place)
    op: int = -1                                   # op index for scratch buffers
    offset: int = -1

    def overlaps(self, other: "Buffer") -> bool:
        return self.first <= other.last and other.first <= self.last


@dataclass
class MemoryPlan:
    arena_bytes: int
    lower_bound: int
    strategy: str
    buffers: list
    offsets: dict          # storage Tensor -> arena offset
    scratch: dict          # op index -> (offset, size)
    strategies: dict       # strategy name -> arena bytes
    inplace: list          # (op name, input tensor name) pairs reused in place


def liveness(graph: Graph) -> tuple[list, list]:
    """Buffers with live intervals, and the in-place merges done."""
    n = len(graph.ops)
    end = max(n - 1, 0)
    first: dict = {}
    last: dict = {}

    def touch(t: Tensor, i: int):
        s = t.storage()
        if s.is_const:
            return
        first[s] = min(first.get(s, i), i)
        last[s] = max(last.get(s, i), i)

    for t in graph.inputs:
        touch(t, 0)
        touch(t, end)
    for i, op in enumerate(graph.ops):
        for t in op.inputs:
            if t is not None:
                touch(t, i)
        for t in op.outputs:
            touch(t, i)
    for t in graph.outputs:
        touch(t, end)
    state = [t for t in graph.tensors if t.is_state]   # kept across runs: live from start to end
    for t in state:
        touch(t, 0)
        touch(t, end)
    pinned = ({t.storage() for t in graph.inputs} | {t.storage() for t in graph.outputs}
              | {t.storage() for t in state})

    buffers: dict = {}
    order = sorted(first, key=lambda s: first[s])   # stable: ties keep first-touch order (deterministic)
    owner: dict = {}
    merges = []
    for i, op in enumerate(graph.ops):
        if op.inplace is None:
            continue
        src = op.inputs[op.inplace]
        if src is None or len(op.outputs) != 1:
            continue
        a, b = src.storage(), op.outputs[0].storage()
        a = owner.get(a, a)
        if (a.is_const or a in pinned or b in pinned or last.get(a) != i or first.get(b) != i
                or _align(a.nbytes) != _align(b.nbytes)):
            continue
        owner[b] = a
        last[a] = max(last[a], last[b])
        merges.append((op.name or op.kind, src.name))
    for s in order:
        root = owner.get(s, s)
        while root in owner:
            root = owner[root]
        if root not in buffers:
            buffers[root] = Buffer(_align(root.nbytes), first[root], last[root], root.name)
        buf = buffers[root]
        buf.tensors.append(s)
        buf.first = min(buf.first, first[s])
        buf.last = max(buf.last, last[s])
    # a view may span more bytes than its storage (RESHAPE_DYN's output at the capacity of its own bounds):
    # the buffer holds the largest, so that no record reaches into another buffer
    span: dict = {}
    for t in graph.tensors:
        if t.view_of is not None:
            s = t.storage()
            span[s] = max(span.get(s, 0), t.nbytes)
    for buf in buffers.values():
        buf.size = max([buf.size] + [_align(span[s]) for s in buf.tensors if s in span])
    out = [b for b in buffers.values() if b.size > 0]
    for i, op in enumerate(graph.ops):
        if op.scratch:
            out.append(Buffer(_align(op.scratch), i, i, f"scratch:{op.name or op.kind}", op=i))
    return out, merges


def _live_peak(buffers: list) -> tuple:
    """(largest sum of simultaneously live bytes, the first op index where it is reached)."""
    events = {}
    for b in buffers:
        events[b.first] = events.get(b.first, 0) + b.size
        events[b.last + 1] = events.get(b.last + 1, 0) - b.size
    live = peak = at = 0
    for t in sorted(events):
        live += events[t]
        if live > peak:
            peak, at = live, t
    return peak, at


def lower_bound(buffers: list) -> int:
    return _live_peak(buffers)[0]


def _place(buffers: list, order: list) -> int:
    """Best-fit placement of buffers in the given order; returns arena bytes."""
    n = len(order)
    first = np.empty(n, np.int64)
    last = np.empty(n, np.int64)
    lo_end = np.empty((n, 2), np.int64)   # (offset, offset + size) of the placed buffers
    top = 0
    for k, b in enumerate(order):
        live = np.flatnonzero((first[:k] <= b.last) & (last[:k] >= b.first))   # placed and live with b
        busy = lo_end[live]
        busy = busy[np.lexsort((busy[:, 1], busy[:, 0]))].tolist() if len(live) else []
        best, best_gap, cursor = None, None, 0
        for lo, hi in busy:
            gap = lo - cursor
            if gap >= b.size and (best_gap is None or gap < best_gap):
                best, best_gap = cursor, gap
            cursor = max(cursor, hi)
        b.offset = best if best is not None else cursor
        first[k], last[k] = b.first, b.last
        lo_end[k] = b.offset, b.offset + b.size
        top = max(top, b.offset + b.size)
    return top


STRATEGIES = {
    # TFLite Micro's GreedyMemoryPlanner: largest first, best fit
    "greedy_by_size": lambda bs: sorted(bs, key=lambda b: (-b.size, b.first)),
    # longest-lived first, then largest
    "greedy_by_lifetime": lambda bs: sorted(bs, key=lambda b: (-(b.last - b.first), -b.size, b.first)),
    # in schedule order (what a naive allocator would do, with reuse)
    "greedy_in_order": lambda bs: sorted(bs, key=lambda b: (b.first, -b.size)),
    # largest "area" (bytes x lifetime) first
    "greedy_by_area": lambda bs: sorted(bs, key=lambda b: (-b.size * (b.last - b.first + 1), b.first)),
}


def _refuse_arena(graph: Graph, buffers: list, arena: int, bound: int) -> CompileError:
    """The error for an arena above MAX_ARENA_BYTES, naming the largest buffers live at the peak and
    the nodes that produce them."""
    producer = {}
    for op in graph.ops:
        for t in op.outputs:
            producer.setdefault(t.storage(), op)
    inputs = {t.storage() for t in graph.inputs}
    at = _live_peak(buffers)[1]
    live = sorted((b for b in buffers if b.first <= at <= b.last), key=lambda b: -b.size)
    parts = []
    for b in live[:4]:
        if b.op >= 0:
            op = graph.ops[b.op]
            parts.append(f"scratch of node '{op.name or op.kind}' ({op.kind}) {fmt_bytes(b.size)}")
            continue
        t = b.tensors[0]
        if t in inputs:
            src = "graph input"
        elif t in producer:
            src = f"from node '{producer[t].name or producer[t].kind}' ({producer[t].kind})"
        else:
            src = "state"
        parts.append(f"'{t.name}' {list(t.shape)} {t.dtype.name} {fmt_bytes(b.size)} ({src})")
    return CompileError([Problem(None, None,
        f"the plan needs an arena of {fmt_bytes(arena)} ({fmt_bytes(bound)} of tensors live at once), above the "
        f"{fmt_bytes(MAX_ARENA_BYTES)} limit (what a 32-bit board can address); the largest live then: "
        f"{'; '.join(parts)}. Pin smaller input shapes, or bound the variable dims lower")])


def plan_memory(graph: Graph) -> MemoryPlan:
    """Offsets for every buffer; raises CompileError when the arena would exceed MAX_ARENA_BYTES."""
    buffers, merges = liveness(graph)
    bound = lower_bound(buffers)
    if bound > MAX_ARENA_BYTES:
        raise _refuse_arena(graph, buffers, bound, bound)
    results = {}
    best = None
    for name, order_fn in STRATEGIES.items():
        size = _place(buffers, order_fn(buffers))
        results[name] = size
        if best is None or size < results[best[0]]:
            best = (name, [b.offset for b in buffers])
    name, offsets = best
    for b, off in zip(buffers, offsets):
        b.offset = off
    if results[name] > MAX_ARENA_BYTES:
        raise _refuse_arena(graph, buffers, results[name], bound)
    tensor_offsets = {}
    scratch = {}
    for b in buffers:
        if b.op >= 0:
            scratch[b.op] = (b.offset, b.size)
        for t in b.tensors:
            tensor_offsets[t] = b.offset
    _check(buffers)
    return MemoryPlan(results[name], lower_bound(buffers), name, buffers, tensor_offsets, scratch, results, merges)


def _check(buffers: list) -> None:
    """No two simultaneously live buffers may overlap in memory."""
    v = np.array([(b.first, b.last, b.offset, b.offset + b.size) for b in buffers], np.int64).reshape(-1, 4)
    for i, a in enumerate(buffers):
        r = v[i + 1:]
        hit = np.flatnonzero((r[:, 0] <= a.last) & (a.first <= r[:, 1]) & (r[:, 2] < a.offset + a.size)
                             & (a.offset < r[:, 3]))
        if len(hit):
            raise AssertionError(f"memory plan overlap: {a.label} and {buffers[i + 1 + int(hit[0])].label}")
