"""Variable-length dims and streaming state (plan 1.1, docs/plan-format.md "Symbols").

One plan serves every length up to a declared bound. The compiler lowers the model several times, once
with every symbol at its maximum (that graph becomes the plan: shapes, arena, scratch and weight packing
are all planned for the bound) and a few times at other values. The lowerings must agree on everything
but tensor extents: same ops, same parameters, same constants. An extent that changes between them is a
variable dim. Extents that change identically are one symbol; the symbol of an input dim is the model's
dim name ("T"); others are derived.

At run time the runtime gives every variable dim its symbol's value: input symbols come from the input
shapes, derived ones from the shape function of the first op that computes them, data-dependent ones
(Range, NonZero) from the kernel. A derived symbol needed before any op computes it (a view, or an op
that takes its output extent from the plan such as Slice) gets a rule floor((mul * src + add) / div)
fitted here on the traced values.

Streaming state: `state={"h_in": "h_out"}` turns graph input h_in into a state tensor kept in the arena
across runs (zeroed at open and by reset) and appends a copy of output h_out into it at the end of
every run.
"""
from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._cdef import K
from .errors import CompileError, Problem, Problems
from .graph import Graph, Tensor, branch_paths
from .optable import OPS

N_TRACES = 7
# ops whose shape function takes (some of) its output extents from the plan rather than computing them
OUT_DECLARED = {name for name, o in OPS.items() if o.out_declared}


@dataclass
class Sym:
    name: str
    kind: int               # K.EP_SYM_*
    lo: int
    hi: int
    src: int = 0            # 1 + index of the source symbol of a rule, 0 = none
    mul: int = 0
    add: int = 0
    div: int = 0
    step: int = 0           # INPUT symbols: values are multiples of step (> 1), plan 1.2
    src2: int = 0           # 1 + index of a second source whose value multiplies src's (plan 1.2)


class Bound(tuple):
    """A declared dim range (lo, hi) with the step its values are multiples of (1: any)."""

    def __new__(cls, lo: int, hi: int, step: int = 1):
        b = super().__new__(cls, (lo, hi))
        b.step = step
        return b


def _err(msg: str) -> CompileError:
    return CompileError([Problem(None, None, msg)])


def parse_dims(dims) -> dict:
    """{name: Bound(lo, hi, step)} from a dict of pairs / triples (lo, hi, step) / "lo..hi[:step]" strings,
    or CLI strings "T=1..3000", "height=320..1280:32" (every multiple of 32 in range). A value that is
    another dim's name ("pe": "T") declares a data-dependent length equal to that dim at run time (checked
    when it runs): {name: "T"}."""
    out = {}
    items = list(dims.items()) if isinstance(dims, dict) else [d.split("=", 1) if isinstance(d, str) else d
                                                                 for d in dims]
    for item in items:
        if len(item) != 2 or not str(item[0]):
            raise _err(f"--dim {'='.join(map(str, item))}: expected NAME=MIN..MAX (e.g. T=1..3000) or NAME=OTHER")
        name, rng = item
        if isinstance(rng, str) and ".." not in rng and rng.isidentifier():
            _once(out, name, rng)
            out[str(name)] = rng
            continue
        if isinstance(rng, str):
            text = rng
            body, colon, step = rng.partition(":")
            lo, sep, hi = body.partition("..")
            if not sep:
                raise _err(f"--dim {name}={text}: expected NAME=MIN..MAX[:STEP], e.g. T=1..3000")
            try:
                rng = (int(lo or 0), int(hi)) + ((int(step),) if colon else ())
            except ValueError:
                raise _err(f"--dim {name}={text}: MIN, MAX and STEP must be integers, e.g. T=1..3000 or "
                           f"H=320..1280:32") from None
        try:
            vals = [int(v) for v in rng]
            if len(vals) not in (2, 3):
                raise ValueError
        except (TypeError, ValueError):
            raise _err(f"dims['{name}'] must be (min, max) or (min, max, step), got {rng!r}") from None
        lo, hi, step = vals + [1] * (3 - len(vals))
        if not 0 <= lo <= hi or hi > 2**31 - 1:
            raise _err(f"dims['{name}'] = ({lo}, {hi}): need 0 <= min <= max < 2^31")
        if not 1 <= step <= 1 << 24 or lo % step or hi % step:
            raise _err(f"dims['{name}'] = {lo}..{hi}:{step}: the step must be in 1..2^24 and divide both "
                       f"MIN and MAX (e.g. H=320..1280:32)")
        _once(out, name, f"{lo}..{hi}" + (f":{step}" if step > 1 else ""))
        out[str(name)] = Bound(lo, hi, step)
    return out


def _once(out: dict, name, given: str) -> None:
    """A dim may be declared once: a second --dim of the same name is an error, not a silent override."""
    prev = out.get(str(name))
    if prev is not None:
        was = prev if isinstance(prev, str) else f"{prev[0]}..{prev[1]}"
        raise _err(f"--dim {name}={given}: '{name}' is already declared ({name}={was}); declare each dim once")


def _trace_values(lo: int, hi: int, seed: int, step: int = 1) -> list:
    """hi first (the plan), then N_TRACES - 1 other values from the upper half of [lo, hi] (multiples of
    step), in a per-symbol order so that independent symbols never change in lockstep. Small extents are
    avoided: an extent of 1 lets the lowering simplify (a transpose of a unit dim becomes a view), and the
    plan must be the bound's op list; the runtime's shape functions serve the small lengths."""
    if step > 1:
        vals = list(range(max(lo, -(-((hi + 1) // 2) // step) * step), hi + 1, step))
        pool = vals[:-1] or vals
        rng = random.Random(seed * 7919 + 17)
        rng.shuffle(pool)
        return [hi] + [pool[k % len(pool)] for k in range(N_TRACES - 1)]
    base = max(lo, (hi + 1) // 2, min(2, hi))
    mid = (base + hi) // 2
    pool = sorted({v for v in (base, base + 1, mid, mid + 1, hi - 1, hi - 2, hi - 3, hi - 5) if base <= v <= hi})
    rng = random.Random(seed * 7919 + 17)
    rng.shuffle(pool)
    vals = [hi]
    while len(vals) < N_TRACES:
        vals.append(pool[(len(vals) - 1) % len(pool)])
    return vals


def _fit(xs, ys):
    """(mul, add, div) with ys == floor((mul * xs + add) / div) at every point, or None."""
    pts = sorted(set(zip(xs, ys)))
    if len({x for x, _ in pts}) < 2:
        return None
    (x0, y0), (x1, y1) = pts[0], pts[-1]
    slope = Fraction(y1 - y0, x1 - x0)
    for div in range(1, 4097):
        c = slope * div
        for mul in sorted({c.numerator // c.denominator, -((-c.numerator) // c.denominator)}):
            if mul == 0:
                continue
            lo = max(div * y - mul * x for x, y in pts)
            hi = min(div * y - mul * x + div - 1 for x, y in pts)
            if lo <= hi and max(abs(mul), abs(lo), div) <= 1 << 24:
                return mul, lo, div
    return None


def _rule_name(src: str, mul: int, add: int, div: int) -> str:
    e = src if mul == 1 else f"{mul}*{src}"
    if add:
        e = f"{e}{'+' if add > 0 else '-'}{abs(add)}"
    return e if div == 1 else f"({e})//{div}"


# ------------------------------------------------------------------------- structure of one lowering
def _const_digest(t: Tensor) -> str:
    return hashlib.blake2b(np.ascontiguousarray(t.storage().data).tobytes(), digest_size=16).hexdigest()


def _params_key(params: dict):
    def norm(v):
        if isinstance(v, (list, tuple, np.ndarray)):
            return tuple(norm(x) for x in v)
        return v.item() if hasattr(v, "item") else v
    return tuple(sorted((k, norm(v)) for k, v in params.items()))


def _structure(g: Graph):
    """Everything but extents and constant values (checked by _check_consts)."""
    idx = {id(t): i for i, t in enumerate(g.tensors)}
    tensors = [(np.dtype(t.dtype).str, len(t.shape), t.is_input, t.is_output,
                idx.get(id(t.view_of), -1) if t.view_of is not None else -1, t.is_const) for t in g.tensors]
    ops = [(op.kind, _params_key(op.params), op.inplace,
            tuple(idx[id(t)] if t is not None else -1 for t in op.inputs),
            tuple(idx[id(t)] for t in op.outputs)) for op in g.ops]
    return tensors, ops, [idx[id(t)] for t in g.inputs], [idx[id(t)] for t in g.outputs]


def _first_difference(a, b, g: Graph, g2: Graph, what: dict) -> str:
    ta, oa, ia, outa = a
    tb, ob, ib, outb = b
    if len(oa) != len(ob):
        for i, (x, y) in enumerate(zip(oa, ob)):
            if x[0] != y[0]:
                return f"node '{g.ops[i].name}' lowers to different ops"
        return f"the lowering has {len(oa)} ops at {what['hi']} but {len(ob)} at {what['other']}"
    for i, (x, y) in enumerate(zip(oa, ob)):
        if x != y:
            op = g.ops[i]
            if x[0] != y[0]:
                return (f"op {i} is '{op.name}' ({x[0]}) at {what['hi']} but '{g2.ops[i].name}' ({y[0]}) at "
                        f"{what['other']}")
            if x[1] != y[1]:
                da, db = dict(x[1]), dict(y[1])
                keys = [k for k in da if da.get(k) != db.get(k)]
                hint = ("; a pad that follows the length is supported when it brings the dim to a multiple, "
                        "(chunk - T % chunk) % chunk on one side" if op.kind == "pad" and keys == ["pads"] else "")
                return (f"node '{op.name}' ({op.kind}): parameter(s) {', '.join(keys)} change with the length "
                        f"({', '.join(f'{k}={da[k]} vs {db.get(k)}' for k in keys)}{hint})")
            return f"node '{op.name}' ({op.kind}) lowers differently"
    for i, (x, y) in enumerate(zip(ta, tb)):
        if x != y:
            return f"tensor '{g.tensors[i].name}' is built differently"
    return "the graph inputs or outputs differ"


# ------------------------------------------------------------------------- entry points
def _const_data(t: Tensor) -> np.ndarray:
    return np.ascontiguousarray(t.data if t.data is not None else t.storage().data.reshape(t.shape))


def _shape_op(g0: Graph, gs: list, i: int):
    """A folded Shape value that a run-time op computes with ([T] in offset + T): the "shape" op that reads
    it from a tensor of the same extents, inserted before its first use; False when there is none."""
    t = g0.tensors[i]
    if t.data is None or t.data.ndim != 1 or not 1 <= t.data.size <= 8 or t.dtype not in (np.int32, np.int64):
        return False
    vals = [[int(v) for v in _const_data(g.tensors[i])] for g in gs]
    if any(len(v) != len(vals[0]) for v in vals):
        return False
    users = [k for k, op in enumerate(g0.ops) if any(x is t for x in op.inputs)]
    if not users:
        return False
    # before its first use, in the branch every use runs in (before the If that opens a deeper one), from
    # tensors that ops always run before it give
    paths = branch_paths(g0.ops)
    common = paths[users[0]]
    for k in users[1:]:
        n = 0
        while n < min(len(common), len(paths[k])) and common[n] == paths[k][n]:
            n += 1
        common = common[:n]
    first = users[0]
    if len(paths[first]) > len(common):
        opener = paths[first][len(common)][0]
        first = next(k for k, op in enumerate(g0.ops) if id(op) == opener)
    avail = list(g0.inputs) + [o for k, op in enumerate(g0.ops[:first]) if paths[k] == common[:len(paths[k])]
                               for o in op.outputs]
    idx = {id(x): j for j, x in enumerate(g0.tensors)}
    for src in avail:
        j = idx.get(id(src))
        if j is None:
            continue
        sigs = [tuple(g.tensors[j].shape[d] for g in gs) for d in range(len(src.shape))]
        dims, values = [], []
        for e in range(len(vals[0])):
            sig = tuple(v[e] for v in vals)
            if len(set(sig)) == 1:
                dims.append(-1)
                values.append(sig[0])
            elif sig in sigs:
                dims.append(sigs.index(sig))
                values.append(0)
            else:
                break
        else:
            from .graph import Op
            t.data = None
            g0.ops.insert(first, Op("shape", [src], [t], {"dims": dims + [-1] * (8 - len(dims)),
                                                          "values": values + [0] * (8 - len(values))},
                                    name=f"{t.name}/shape"))
            for g in gs[1:]:
                g.tensors[i].data = None
            return True
    return False


def _corner_op(g0: Graph, gs: list, i: int) -> bool:
    """A constant whose value at each length is the corner [:a, :b, ...] of the bound's (a causal mask
    [T, T] folded from the length): the plan stores the bound's, and a "slice" op copies the corner out
    at the run's extents (its output extents are the plan's, symbols resolved). False otherwise."""
    t = g0.tensors[i]
    if t.data is None:
        return False
    full = _const_data(t)
    for g in gs[1:]:
        a = _const_data(g.tensors[i])
        if a.ndim != full.ndim or any(x > y for x, y in zip(a.shape, full.shape)):
            return False
        if not np.array_equal(full[tuple(slice(0, d) for d in a.shape)], a):
            return False
    from .graph import Op
    whole = Tensor(t.name + "/bound", t.dtype, t.shape, data=full)
    t.data = None
    g0.tensors.append(whole)
    for g in gs[1:]:     # index-aligned with g0 for the symbol assignment
        g.tensors.append(Tensor(whole.name, t.dtype, t.shape, data=full))
        g.tensors[i].data = None
    g0.ops.insert(0, Op("slice", [whole], [t], {"starts": [0] * 8, "steps": [1] * 8}, name=f"{t.name}/corner"))
    return True


def _check_consts(g0: Graph, gs: list, what: list) -> None:
    """Constants must not depend on the length, except a length-long prefix of the one at the bound (a
    folded Range(0, T), a positional table sliced [:, :T]): the plan stores the bound's and its variable
    dim reads the prefix. Row-major prefix: only the first dim that is not 1 may vary. A folded shape
    value used in run-time arithmetic becomes a "shape" op (_shape_op)."""
    for i, t in enumerate(g0.tensors):
        if not t.is_const:
            continue
        full = _const_data(t)
        for j, g in enumerate(gs[1:], 1):
            a = _const_data(g.tensors[i])
            if a.shape == full.shape:
                ok = np.array_equal(a, full) or a.tobytes() == full.tobytes()
            else:
                varying = [d for d in range(full.ndim) if a.shape[d] != full.shape[d]]
                lead = next((d for d in range(full.ndim) if full.shape[d] != 1), 0)
                ok = (varying == [lead] and a.shape[lead] <= full.shape[lead]
                      and full.reshape(-1)[:a.size].tobytes() == a.reshape(-1).tobytes())
            if not ok and (_shape_op(g0, gs, i) or _corner_op(g0, gs, i)):
                break
            if not ok:
                raise _err(f"the model is not length-generic: constant '{t.name}' {list(a.shape)} at {what[j]} "
                           f"is not a prefix of {list(full.shape)} at {what[0]} (its values depend on the length)")


def lower_dynamic(model, shapes, dims: dict, max_trips: int = 0) -> Graph:
    """Lower `model` with its variable dims bounded by dims ({name: (lo, hi)}): the graph at the bound,
    with Graph.syms and every tensor's dim_sym filled in."""
    from . import onnx_import
    from .frontend import lower

    model = onnx_import.load(model)
    params = onnx_import.input_dim_params(model)
    input_names = {p for ps in params.values() for p in ps if p}
    ranges = parse_dims(dims)
    for name, pin in (shapes or {}).items():     # a dim pinned by --shape and bounded by --dim: which one?
        for k, p in enumerate(params.get(name, ())):
            if p in ranges:
                b = ranges[p]
                want = (f"{b[0]}..{b[1]}" + (f":{b.step}" if getattr(b, "step", 1) > 1 else "")
                        if isinstance(b, tuple) else b)
                raise _err(f"input '{name}' dim {k} ('{p}') is both pinned by --shape {name}="
                           f"{','.join(map(str, pin))} and bounded by --dim {p}={want}: give one of them "
                           f"(--dim: one plan for every value in range; --shape: a plan for that value)")
    aliases = {k: v for k, v in ranges.items() if isinstance(v, str)}
    ranges = {k: v for k, v in ranges.items() if not isinstance(v, str)}
    bad = {k: v for k, v in aliases.items() if v not in ranges}
    if bad:
        raise _err(f"dims {bad}: a length declared equal to another dim needs that dim bounded too")
    trace_vals = {name: _trace_values(b[0], b[1], k, getattr(b, "step", 1))
                  for k, (name, b) in enumerate(sorted(ranges.items()))}
    trace_vals.update({k: trace_vals[v] for k, v in aliases.items()})
    graphs = []
    bounds = {name: v[0] for name, v in trace_vals.items()}   # the plan's: what a buffer built at the bound takes
    for j in range(N_TRACES):
        symbols = {name: v[j] for name, v in trace_vals.items()}
        try:
            g = lower(model, shapes=shapes, symbols=dict(symbols, __trace__=j, __bounds__=bounds), max_trips=max_trips)
        except CompileError as e:
            if j == 0:
                raise
            at = ", ".join(f"{k}={v}" for k, v in sorted(symbols.items()))
            raise CompileError([Problem(p.node, p.op_type, f"at {at}: {p.message}") for p in e.problems]) from None
        graphs.append((symbols, g))
    verify = []     # further lowerings for _pads_to_multiple, made on demand

    def relower(k: int):
        while len(verify) <= k:
            rng = random.Random(7919 * (len(verify) + 1) + 101)
            symbols = {}
            for name, b in sorted(ranges.items()):
                step = getattr(b, "step", 1)
                first = -(-max(b[0], (b[1] + 1) // 2) // step) * step
                symbols[name] = rng.randrange(first, b[1] + 1, step) if first <= b[1] else b[1]
            symbols.update({k2: symbols[v] for k2, v in aliases.items()})
            try:
                verify.append((symbols, lower(model, shapes=shapes, max_trips=max_trips, symbols=dict(
                    symbols, __trace__=N_TRACES + len(verify), __bounds__=bounds))))
            except CompileError:
                verify.append((symbols, None))
        return verify[k][1]

    rewrites = _pads_to_multiple([g for _, g in graphs], relower)
    lows = {name: lo for name, (lo, hi) in ranges.items() if lo < min(trace_vals[name])}
    if lows:   # the shortest lengths must lower too (a convolution left with no output, say)
        symbols = {name: lows.get(name, v[0]) for name, v in trace_vals.items()}
        try:
            g_low = lower(model, shapes=shapes, symbols=dict(symbols, __bounds__=bounds), max_trips=max_trips)
            if rewrites and not aliases:
                verify.append((symbols, g_low))
        except CompileError as e:
            at = ", ".join(f"{k}={v}" for k, v in sorted(symbols.items()))
            raise CompileError([Problem(p.node, p.op_type, f"at the minimum ({at}): {p.message}")
                                for p in e.problems]) from None
    g0 = graphs[0][1]
    s0 = _structure(g0)
    for symbols, g in graphs[1:]:
        s = _structure(g)
        if s != s0:
            at = ", ".join(f"{k}={v}" for k, v in sorted(symbols.items()))
            hi = ", ".join(f"{k}={v}" for k, v in sorted(graphs[0][0].items()))
            why = _first_difference(s0, s, g0, g, {"hi": hi, "other": at})
            raise _err(f"the model is not length-generic: {why} (lowered at {hi} and at {at}); "
                       f"edgeplan needs one op list for every length")
    # a pad to a multiple makes lengths whose traced values cluster (multiples of the chunk), so a rule of
    # the dims that follow it could fit the traces and miss shorter lengths: the lowerings that checked the
    # multiple, and the one at the minimum, are more evidence for the rules when their op list is the same
    extra = []
    for sy, g in (verify if rewrites else ()):
        if g is not None:
            _apply_rewrites(g, rewrites)
            if _structure(g) == s0:
                extra.append((sy, g))
    n_tensors = len(g0.tensors)
    _check_consts(g0, [g for _, g in graphs],
                  [", ".join(f"{k}={v}" for k, v in sorted(sy.items())) for sy, _ in graphs])
    if len(g0.tensors) != n_tensors:     # _check_consts added tensors the other lowerings lack
        extra = []
    fit_vals = {name: list(v) + [sy[name] for sy, _ in extra] for name, v in trace_vals.items()}
    _assign_symbols(g0, [g for _, g in graphs] + [g for _, g in extra], ranges, fit_vals, input_names, aliases)
    return g0


N_VERIFY = 2        # lowerings at further lengths that check a fitted pad multiple
N_DISAMBIGUATE = 8  # at most this many in all while more than one multiple fits


def _multiples(points: list) -> list:
    """The m in 1..EP_PAD_MAX_MULTIPLE with (m - e % m) % m == p at every point (e, p): the divisors of
    gcd(e + p) above every p, smallest first."""
    g = 0
    for e, p in points:
        if p < 0 or e + p < 0:
            return []
        g = math.gcd(g, e + p)
    if g == 0:
        return []
    least = max(p for _, p in points) + 1
    divs = set()
    d = 1
    while d * d <= g:
        if g % d == 0:
            divs.update((d, g // d))
        d += 1
    return sorted(m for m in divs if least <= m <= K.EP_PAD_MAX_MULTIPLE)


def _pads_to_multiple(gs: list, relower) -> None:
    """A Pad whose amounts follow a variable length as `(chunk - T % chunk) % chunk` does (a speech model
    padding to a whole number of chunks, a window attention to a whole number of windows): its pads
    differ between the lowerings, so the op list would not be length-generic. Each pad that varies while
    the other side of its dim stays fixed (o >= 0) is fitted as the pad that brings extent + o to a
    multiple m (PAD's TO_MULTIPLE bits, plan 1.8), and the op's params become the same in every lowering.
    A fit on the traced lengths is checked at N_VERIFY further lengths (relower(k), a lowering or None),
    and further ones while several multiples fit. Pads that fit no multiple are left as they are: the
    structure comparison then names the node. Returns {op index: params} of the pads rewritten."""
    g0 = gs[0]
    rewrites = {}
    for i, op in enumerate(g0.ops):
        if op.kind != "pad":
            continue
        ops = [g.ops[i] if len(g.ops) == len(g0.ops) and g.ops[i].kind == "pad" else None for g in gs]
        if any(o is None for o in ops) or any(dict(o.params, pads=0) != dict(op.params, pads=0) for o in ops):
            continue
        pads = [list(o.params["pads"]) for o in ops]
        if all(p == pads[0] for p in pads) or int(op.params["mode"]) & ~K.EP_PAD_MODE_MASK:
            continue
        r = len(op.inputs[0].shape)
        fits = {}           # pads slot -> (dim, other side, candidate multiples)
        for k in range(2 * r):
            if len({p[k] for p in pads}) == 1:
                continue
            a, other = k % r, k + r if k < r else k - r
            o = pads[0][other]
            if any(p[other] != o for p in pads) or o < 0:
                fits = None
                break
            fits[k] = (a, o, _multiples([(int(x.inputs[0].shape[a]) + o, p[k]) for x, p in zip(ops, pads)]))
        if not fits or any(not c for _, _, c in fits.values()):
            continue
        j = 0
        while j < N_DISAMBIGUATE and (j < N_VERIFY or any(len(c) > 1 for _, _, c in fits.values())):
            g = relower(j)
            j += 1
            o2 = g.ops[i] if g is not None and len(g.ops) == len(g0.ops) and g.ops[i].kind == "pad" else None
            if o2 is None:
                continue
            p2 = list(o2.params["pads"])
            for k, (a, o, c) in fits.items():
                e = int(o2.inputs[0].shape[a]) + o
                c[:] = [m for m in c if p2[k + r if k < r else k - r] == o and (m - e % m) % m == p2[k]]
        if any(len(c) != 1 for _, _, c in fits.values()):
            if all(c for _, _, c in fits.values()):
                raise _err(f"node '{op.name}' (pad): its pads follow the length, as a pad to a multiple of one of "
                           f"{sorted({m for _, _, c in fits.values() for m in c})} would; edgeplan could not tell "
                           f"which from {len(gs) + j} lowerings")
            continue
        for o in ops:
            mode, p = int(o.params["mode"]), list(o.params["pads"])
            for k, (a, _, c) in fits.items():
                mode |= (K.EP_PAD_BEGIN_TO_MULTIPLE if k < r else K.EP_PAD_END_TO_MULTIPLE) << a
                p[k] = c[0]
            o.params = dict(o.params, mode=mode, pads=p)
        rewrites[i] = dict(op.params)
    return rewrites


def pad_amounts(params: dict, shape) -> list:
    """PAD's begin + end amounts for an input of this shape (runtime_c/kernels/pad_common.h)."""
    r, mode, p = len(shape), int(params["mode"]), [int(v) for v in params["pads"]]
    out = p[:2 * r]
    for i in range(r):
        if mode >> (8 + i) & 1:
            out[i] = (p[i] - (int(shape[i]) + out[r + i]) % p[i]) % p[i]
        if mode >> (16 + i) & 1:
            out[r + i] = (p[r + i] - (int(shape[i]) + out[i]) % p[r + i]) % p[r + i]
    return out


def _apply_rewrites(g: Graph, rewrites: dict) -> None:
    """The pad params _pads_to_multiple chose, on another lowering of the same op list, where its pads are
    what they give (else the lowering's structure differs, and it is not used)."""
    for i, params in rewrites.items():
        op = g.ops[i] if i < len(g.ops) else None
        if op is not None and op.kind == "pad":
            r = len(op.inputs[0].shape)
            if pad_amounts(params, op.inputs[0].shape) == [int(v) for v in op.params["pads"]][:2 * r]:
                op.params = dict(params)


def _assign_symbols(g0: Graph, gs: list, ranges: dict, trace_vals: dict, input_names: set, aliases=None) -> None:
    aliases = aliases or {}
    unused = sorted((set(ranges) | set(aliases)) - input_names - {d[2] for d in g0.meta.get("data_dims", ())})
    if unused:
        raise _err(f"dims names {', '.join(repr(u) for u in unused)}, which is neither an input dim of the "
                   f"model nor the declared length of a data-dependent output")
    syms: list = []
    by_sig: dict = {}       # traced values -> the first symbol with them
    sig_at: dict = {}       # symbol -> its traced values
    # roots: input symbols, then data-dependent lengths (each its own symbol)
    for name in sorted(ranges):
        if name in input_names:
            lo, hi = ranges[name]
            if lo == hi:
                continue
            sig = tuple(trace_vals[name])
            if sig in by_sig:
                continue
            by_sig[sig] = len(syms)
            sig_at[len(syms)] = sig
            step = getattr(ranges[name], "step", 1)
            syms.append(Sym(name, K.EP_SYM_INPUT, lo, hi, step=step if step > 1 else 0))
    data_at: dict = {}
    data_sym: dict = {}     # data-dependent length's name -> its symbol
    for k, (t, d, name, declared) in enumerate(g0.meta.get("data_dims", ())):
        if name in aliases:     # equal to that dim's symbol (by its traced values); the run checks it
            continue
        i = next(i for i, x in enumerate(g0.tensors) if x is t)
        if name in data_sym:   # a second kernel computing the same length (the run checks they agree)
            data_at[(i, d)] = data_sym[name]
            continue
        data_sym[name] = len(syms)
        sig = tuple(gi.meta["data_dims"][k][0].shape[d] for gi in gs)
        lo = ranges[name][0] if declared else 0
        data_at[(i, d)] = len(syms)
        sig_at[len(syms)] = sig
        if sig not in by_sig:
            by_sig[sig] = len(syms)
        syms.append(Sym(name, K.EP_SYM_DATA, lo, t.shape[d]))
    tags: dict = {}
    for i, t in enumerate(g0.tensors):
        tag = []
        for d in range(len(t.shape)):
            sig = tuple(gi.tensors[i].shape[d] for gi in gs)
            if (i, d) in data_at:
                tag.append(data_at[(i, d)] + 1)
            elif len(set(sig)) == 1:
                tag.append(0)
            else:
                if sig not in by_sig:
                    if sig[0] != max(sig):
                        raise _err(f"tensor '{t.name}' dim {d} is largest at a length below the bound "
                                   f"({list(sig)}); edgeplan plans the arena at the bound")
                    by_sig[sig] = len(syms)
                    sig_at[len(syms)] = sig
                    syms.append(Sym("", K.EP_SYM_DERIVED, min(sig), sig[0]))
                tag.append(by_sig[sig] + 1)
        if any(tag):
            tags[i] = tag
    need = _needs_rule(g0, tags, syms)
    for k, y in enumerate(syms):
        if y.kind != K.EP_SYM_DERIVED:
            continue
        sig = sig_at[k]
        # the simplest floor-affine function of an earlier symbol (a conv's output of its input's length);
        # a rule the runtime will use must start from a symbol known at that point
        usable = need[k][2] if k in need else None

        def ok(r):
            return usable is None or r in usable or syms[r].src

        best = None
        for r in range(k):
            if not ok(r):
                continue
            f = _fit(sig_at[r], sig)
            if f and (best is None or (f[2], abs(f[0]), abs(f[1])) < (best[1][2], abs(best[1][0]), abs(best[1][1]))):
                best = ((r,), f)
        if best is None:   # a product of two lengths (a flattened H x W): the runtime's two-source rule
            for r in range(k):
                for r2 in range(r, k):
                    if not (ok(r) and ok(r2)) or syms[r].hi * syms[r2].hi > 1 << 32:
                        continue
                    f = _fit([a * b for a, b in zip(sig_at[r], sig_at[r2])], sig)
                    if f and (best is None or (f[2], abs(f[0])) < (best[1][2], abs(best[1][0]))):
                        best = ((r, r2), f)
        if best:
            rs, (mul, add, div) = best
            src = "*".join(syms[r].name for r in rs)
            y.name = _rule_name(src if len(rs) == 1 else f"({src})", mul, add, div)
            lo = 1
            for r in rs:
                lo *= syms[r].lo
            y.lo = max(0, min(y.lo, (mul * lo + add) // div))
            if k in need:
                y.src, y.mul, y.add, y.div = rs[0] + 1, mul, add, div
                y.src2 = rs[1] + 1 if len(rs) > 1 else 0
        else:
            y.name = f"d{k}"
        if k in need and not y.src:
            t, d, _ = need[k]
            raise _err(f"tensor '{t.name}' dim {d} varies with the length ({list(sig)}) in a way the runtime "
                       f"cannot compute before it is used; reshape with 0/-1 targets or keep that dim fixed")
    if len(syms) > K.EP_MAX_SYMS:
        raise _err(f"{len(syms)} distinct variable dims > {K.EP_MAX_SYMS}")
    for i, tag in tags.items():
        g0.tensors[i].dim_sym = tuple(tag)
    g0.syms = syms


def _needs_rule(g: Graph, tags: dict, syms: list) -> dict:
    """Derived symbols some tensor needs before an op's shape function computes them:
    {sym: (tensor, dim, symbols bound at that point)}."""
    idx = {id(t): i for i, t in enumerate(g.tensors)}
    bound = {k for k, y in enumerate(syms) if y.kind == K.EP_SYM_INPUT}
    need: dict = {}

    def require(t):
        for d, s in enumerate(tags.get(idx[id(t)], ())):
            if s and s - 1 not in bound and syms[s - 1].kind == K.EP_SYM_DERIVED:
                need.setdefault(s - 1, (t, d, frozenset(bound)))
                bound.add(s - 1)

    for op in g.ops:
        for t in op.inputs:
            if t is not None:
                require(t)
        if op.kind in OUT_DECLARED:
            for t in op.outputs:
                require(t)
        for t in op.outputs:
            bound.update(s - 1 for s in tags.get(idx[id(t)], ()) if s)
    for t in g.outputs:
        require(t)
    return need


def apply_state(g: Graph, state: dict, hide=(), fill=None) -> None:
    """state {input name: output name}: the input becomes arena state fed back from the output. The outputs
    named in `hide` leave the plan's outputs (a TFLite variable's next value: only the state reads it).
    fill {input name: byte}: the byte an int8 state is reset to (its zero point; zero bytes otherwise)."""
    probs = Problems()
    ins = {t.name: t for t in g.inputs}
    outs = {t.name: t for t in g.outputs}
    for src in set(fill or ()) - set(state):
        probs.add(None, f"state_fill names {src!r}, which is not a state input (state: {', '.join(state) or 'none'})")
    for src, dst in state.items():
        t_in, t_out = ins.get(src), outs.get(dst)
        if t_in is None or t_out is None:
            probs.add(None, f"state {src!r} -> {dst!r}: need a graph input {src!r} and a graph output {dst!r} "
                            f"(inputs: {', '.join(ins)}; outputs: {', '.join(outs)})")
            continue
        if t_in.shape != t_out.shape or np.dtype(t_in.dtype) != np.dtype(t_out.dtype):
            probs.add(None, f"state {src!r} {t_in.dtype}{list(t_in.shape)} and {dst!r} "
                            f"{t_out.dtype}{list(t_out.shape)} must have the same shape and dtype")
            continue
        if any(t_in.dim_sym) or any(t_out.dim_sym):
            probs.add(None, f"state {src!r} -> {dst!r}: state must have a fixed shape")
            continue
        byte = (fill or {}).get(src, 0)
        if not isinstance(byte, (int, np.integer)) or isinstance(byte, bool) or not 0 <= byte <= 255:
            probs.add(None, f"state {src!r}: a reset byte is an integer 0..255, not {byte!r}")
            continue
        if byte and np.dtype(t_in.dtype) not in (np.dtype(np.int8), np.dtype(np.uint8)):
            probs.add(None, f"state {src!r}: a reset byte ({byte}) needs an int8 or uint8 state, not {t_in.dtype}")
            continue
        g.inputs.remove(t_in)
        t_in.is_input = False
        t_in.is_state = True
        t_in.fill = int(byte)
        if dst in hide:
            g.outputs.remove(t_out)
            t_out.is_output = False
        from .graph import Op
        g.ops.append(Op("copy", [t_out], [t_in], {"axis": 0}, name=f"{dst}->{src}/state"))
    probs.raise_if_any()


def state_in_place(g: Graph) -> int:
    """The op that makes a state's next value writes it into the state itself, and the COPY at the end goes,
    when every read of the state (or of a view of it) comes before that op and the next value is only copied
    (a streaming ring buffer: concat(state, frame) -> slice -> state). Returns the copies removed."""
    if any(op.kind in ("if", "else") for op in g.ops):
        return 0
    producer = {id(t): op for op in g.ops for t in op.outputs}
    readers = g.readers()
    done = 0
    for copy in [op for op in g.ops if op.kind == "copy" and len(op.inputs) == 1 and len(op.outputs) == 1]:
        nxt, st = copy.inputs[0], copy.outputs[0]
        p = producer.get(id(nxt))
        if (p is None or not st.is_state or nxt.is_output or nxt.is_state or nxt.view_of is not None
                or st.view_of is not None or nxt.layout or st.layout or nxt.shape != st.shape
                or np.dtype(nxt.dtype) != np.dtype(st.dtype) or any(t.view_of is nxt for t in g.tensors)
                or len(readers.get(id(nxt), ())) != 1):
            continue
        views = {id(st)} | {id(t) for t in g.tensors if t.view_of is not None and t.storage() is st}
        at = g.ops.index(p)
        if any(t is not None and id(t) in views for op in g.ops[at:] if op is not copy for t in op.inputs):
            continue   # the state is read at or after the op that makes its next value
        p.outputs[p.outputs.index(nxt)] = st
        p.inplace = None   # the state's bytes are its own: no input's buffer may serve as them
        g.ops.remove(copy)
        if nxt in g.tensors:
            g.tensors.remove(nxt)
        done += 1
    if done:
        g.fused.append(f"state written in place by the op that makes it: {done} copies removed")
    return done
