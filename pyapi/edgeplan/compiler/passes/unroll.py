"""Loop and Scan are unrolled: the body is inlined once per iteration (its values renamed under the node's
name and the iteration), loop-carried values chained from one copy to the next, scan outputs stacked with
Unsqueeze + Concat. Folding then specialises each copy (the iteration number is a constant in it).

The trip count of a Loop is its constant M, or found by running the part of the body its condition
depends on (onnx's reference evaluator, on constants only: a counter against a bound, as tf2onnx writes
while-loops); a Scan's is the length of its scan inputs.

A Loop whose trip count or condition is only known at run time is unrolled to a bound: its constant M, or
the compile option max_trips (--max-trips). Each iteration is then an If on "the loop still runs" (k < M
and the last condition): its then branch is the body, its else branch passes the carried values through
(and zeros for the scan outputs). Scan outputs are the stacked iterations sliced to the count that ran,
a data-dependent length. A run that would go past the bound fails with EP_ERR_RUN_BOUND (an
ai.edgeplan FailIf node after the last iteration). Without a bound, or with more than MAX_TRIPS
iterations, the Loop stays in the graph with the reason in its note."""
from __future__ import annotations

import numpy as np

from .. import ir

MAX_TRIPS = 4096               # iterations one Loop / Scan may unroll to
MAX_UNROLLED_NODES = 200_000   # body nodes all unrolled copies may add to a model


class _NotStatic(Exception):
    """The trip count is not known at compile time; the message says why."""


def _inline_body(m: ir.Model, n: ir.Node, prefix: str, bind: dict, shared: dict) -> tuple:
    """One copy of n's body: (its nodes, the names of its outputs). bind maps each body input to the
    value it reads in this copy; shared maps the body's constants (initializers and Constant nodes) to
    the one model constant every copy reads, filled by the first copy."""
    from ..onnx_import import constant_node_value, node_from_proto, own_and_free, rename_graph, tensor_to_array
    g = n.subgraph("body")
    own, _ = own_and_free(g)
    first = not shared
    if first:
        for v in [t.name for t in g.initializer] + [p.output[0] for p in g.node if _is_constant(p)]:
            shared[v] = m.fresh(f"{n.name}/{v}")
    names = {v: m.fresh(prefix + v) for v in sorted(own - set(bind) - set(shared))}
    names.update(shared)
    names.update(bind)
    rename_graph(g, names)
    if first:
        for t in g.initializer:
            m.set_const(t.name, tensor_to_array(t))
    nodes = []
    for k, p in enumerate(g.node):
        if _is_constant(p):
            if first:
                m.set_const(p.output[0], constant_node_value(p))
            continue
        p.name = prefix + (p.name or f"{p.op_type}_{k}")
        nodes.append(node_from_proto(p, p.name))
        for v in nodes[-1].inputs + nodes[-1].outputs:
            if v:
                m.value(v)
    return nodes, [o.name for o in g.output]


def _is_constant(p) -> bool:
    return p.op_type == "Constant" and p.domain in ("", "ai.onnx")


def _node(m: ir.Model, op_type: str, inputs, output: str, name: str, **attrs) -> ir.Node:
    from onnx import helper
    p = helper.make_node(op_type, inputs, [output], name=name, **attrs)
    m.value(output)
    return ir.Node(op_type, list(inputs), [output], dict(attrs), name, "", proto=p)


def _stack(m: ir.Model, n: ir.Node, parts: list, axis: int, out: str, what: str) -> list:
    """Nodes giving `out` = the parts stacked along a new axis `axis`."""
    if not parts:
        raise _NotStatic(f"its {what} would be empty (no iterations), which edgeplan cannot size")
    nodes, ups = [], []
    for k, v in enumerate(parts):
        u = m.fresh(f"{out}/part{k}")
        if m.opset >= 13:
            ax = m.add_const(f"{out}/axes", np.array([axis], np.int64))
            nodes.append(_node(m, "Unsqueeze", [v, ax], u, f"{n.name}/stack:{out}/{k}"))
        else:
            nodes.append(_node(m, "Unsqueeze", [v], u, f"{n.name}/stack:{out}/{k}", axes=[axis]))
        ups.append(u)
    nodes.append(_node(m, "Concat", ups, out, f"{n.name}/stack:{out}", axis=axis))
    return nodes


def _loop_trips(m: ir.Model, n: ir.Node) -> int:
    """The iterations Loop n runs, from constants only."""
    from onnx import helper, numpy_helper, reference
    own = n.own_inputs()
    M = m.const(own[0]) if own and own[0] else None
    if own and own[0] and M is None:
        raise _RunTime(f"its trip count '{own[0]}' is only known at run time")
    cond0 = m.const(own[1]) if len(own) > 1 and own[1] else np.array(True)
    if cond0 is None:
        raise _RunTime(f"its initial condition '{own[1]}' is only known at run time")
    limit = int(M.reshape(-1)[0]) if M is not None else None
    if not bool(np.asarray(cond0).reshape(-1)[0]) or (limit is not None and limit <= 0):
        return 0
    g = n.subgraph("body")
    b_in = [i.name for i in g.input]
    b_out = [o.name for o in g.output]
    consts = {t.name for t in g.initializer} | {p.output[0] for p in g.node if p.op_type == "Constant"}
    prod = {o: p for p in g.node for o in p.output if o}
    carried_out = dict(zip(b_in[2:], b_out[1:]))
    # the body's part the condition depends on: nodes, and the carried values and outer values it reads
    need_nodes, need_carry, outer, stack = [], set(), set(), [b_out[0]]
    seen = set()
    while stack:
        v = stack.pop()
        if not v or v in seen:
            continue
        seen.add(v)
        if v in consts:
            continue
        if v in b_in:
            if v in carried_out:
                need_carry.add(v)
                stack.append(carried_out[v])
            continue
        p = prod.get(v)
        if p is None:
            outer.add(v)
            continue
        if any(a.type in (5, 10) for a in p.attribute):   # GRAPH / GRAPHS: a nested subgraph
            raise _NotStatic("its condition is computed by a node with its own subgraph")
        need_nodes.append(p)
        stack.extend(p.input)
    if b_out[0] == b_in[1] or not need_nodes and b_out[0] in consts:   # the condition never changes
        if limit is None:
            raise _NotStatic("it has neither a trip count nor a condition that ends it")
        return limit
    initial = {}
    for v in need_carry:
        a = m.const(own[b_in.index(v)])   # body inputs (iter, cond, v...) line up with (M, cond, v...)
        if a is None:
            raise _RunTime(f"its condition depends on the loop-carried '{v}', whose initial value "
                             f"'{own[b_in.index(v)]}' is only known at run time")
        initial[v] = a
    outer_vals = {}
    for v in outer:
        a = m.const(v)
        if a is None:
            raise _RunTime(f"its condition depends on '{v}', which is only known at run time")
        outer_vals[v] = a
    picked = {id(p) for p in need_nodes}
    order = [p for p in g.node if id(p) in picked]
    inits = [t for t in g.initializer] + [numpy_helper.from_array(a, k) for k, a in outer_vals.items()]
    consts_nodes = [p for p in g.node if p.op_type == "Constant"]
    feeds_names = [b_in[0], b_in[1]] + sorted(need_carry)
    ins = [helper.make_tensor_value_info(b_in[0], 7, []), helper.make_tensor_value_info(b_in[1], 9, [])]
    ins += [helper.make_tensor_value_info(v, helper.np_dtype_to_tensor_dtype(initial[v].dtype), initial[v].shape)
            for v in sorted(need_carry)]
    outs = [b_out[0]] + [carried_out[v] for v in sorted(need_carry)]
    sg = helper.make_graph(consts_nodes + order, "cond", ins, [helper.make_empty_tensor_value_info(o) for o in outs],
                           inits)
    opsets = [helper.make_opsetid(d, v) for d, v in m.opsets.items()] or [helper.make_opsetid("", m.opset)]
    try:
        ev = reference.ReferenceEvaluator(helper.make_model(sg, opset_imports=opsets))
    except Exception as e:  # noqa: BLE001
        raise _NotStatic(f"its condition could not be evaluated at compile time ({type(e).__name__}: {e})")
    carry = {v: initial[v] for v in need_carry}
    k = 0
    while limit is None or k < limit:
        if k >= MAX_TRIPS:
            raise _NotStatic(f"it runs more than {MAX_TRIPS} iterations")
        feeds = {b_in[0]: np.array(k, np.int64), b_in[1]: np.array(True)}
        feeds.update(carry)
        try:
            res = ev.run(None, {f: feeds[f] for f in feeds_names})
        except Exception as e:  # noqa: BLE001
            raise _NotStatic(f"its condition could not be evaluated at compile time ({type(e).__name__}: {e})")
        k += 1
        carry = dict(zip(sorted(need_carry), res[1:]))
        if not bool(np.asarray(res[0]).reshape(-1)[0]):
            break
    return k


def _loop_io(n: ir.Node, body) -> tuple:
    """(Loop n's own inputs, its body's input names, the number of carried values, of scan outputs)."""
    b_in = [i.name for i in body.input]
    n_carry = len(b_in) - 2
    return n.own_inputs(), b_in, n_carry, len(body.output) - 1 - n_carry


class _RunTime(_NotStatic):
    """The trip count depends on run-time values (a bounded unroll may still work)."""


def unroll_loop(m: ir.Model, n: ir.Node, budget: list) -> list | None:
    """The nodes replacing Loop n, or None (with n.note set) when it cannot be unrolled."""
    try:
        try:
            trips = _loop_trips(m, n)
        except _RunTime as e:
            own = n.own_inputs()
            M = m.const(own[0]) if own and own[0] else None
            bound = int(getattr(m, "max_trips", 0) or 0)
            if M is not None:
                bound = min(bound, int(M.reshape(-1)[0])) if bound else int(M.reshape(-1)[0])
            if bound <= 0:
                raise _NotStatic(f"{e}: give its iteration bound with --max-trips N (max_trips=N) to unroll "
                                 f"it to N guarded iterations") from None
            if bound > MAX_TRIPS:
                raise _NotStatic(f"{e}, and its bound {bound} is more than {MAX_TRIPS} iterations") from None
            return _unroll_bounded(m, n, bound, budget)
        body = n.attrs["body"]
        if trips * len(body.node) > budget[0]:
            raise _NotStatic(f"unrolled, its {trips} iterations would add {trips * len(body.node)} nodes (at "
                             f"most {budget[0]} more)")
        own, b_in, n_carry, n_scan = _loop_io(n, body)
        carried = list(own[2:2 + n_carry])
        scans = [[] for _ in range(n_scan)]
        nodes, shared = [], {}
        true = m.add_const(f"{n.name}/cond", np.array(True))
        for k in range(trips):
            prefix = f"{n.name}/iter{k}/"
            bind = {b_in[0]: m.add_const(prefix + "iter_num", np.array(k, np.int64)), b_in[1]: true}
            bind.update(zip(b_in[2:], carried))
            body_nodes, outs = _inline_body(m, n, prefix, bind, shared)
            nodes += body_nodes
            carried = outs[1:1 + n_carry]
            for s in range(n_scan):
                scans[s].append(outs[1 + n_carry + s])
        for src, dst in zip(carried, n.outputs[:n_carry]):
            if dst:
                nodes.append(_node(m, "Identity", [src], dst, f"{n.name}/out:{dst}"))
        for s, dst in enumerate(n.outputs[n_carry:]):
            if dst:
                nodes += _stack(m, n, scans[s], 0, dst, f"scan output {s}")
    except _NotStatic as e:
        n.note = f"a Loop is unrolled at compile time, but {e}"
        return None
    budget[0] -= trips * len(body.node)
    return nodes


def _slice_types(m: ir.Model, n: ir.Node, body, n_carry: int) -> list:
    """(dtype, shape) of one iteration of each scan output: from the Loop's inferred outputs, else from
    shape inference of the body at the carried values' shapes."""
    from onnx import helper, shape_inference
    from ..onnx_import import shape_of
    outs = n.outputs[n_carry:]
    got = []
    for o in outs:
        v = m.values.get(o) if o else None
        if v is None or v.dtype is None or v.shape is None or len(v.shape) < 1 or \
                not all(isinstance(d, int) and d >= 0 for d in v.shape[1:]):
            break
        got.append((np.dtype(v.dtype), tuple(v.shape[1:])))
    if len(got) == len(outs):
        return got
    own = n.own_inputs()
    g = n.subgraph("body")
    b_in = list(g.input)
    typed = [helper.make_tensor_value_info(b_in[0].name, 7, []), helper.make_tensor_value_info(b_in[1].name, 9, [])]
    for vi, src in zip(b_in[2:], own[2:]):
        v = m.values.get(src)
        if v is None or v.dtype is None or v.shape is None:
            raise _NotStatic(f"its carried value '{src}' has no known type")
        typed.append(helper.make_tensor_value_info(vi.name, helper.np_dtype_to_tensor_dtype(np.dtype(v.dtype)),
                                                   list(v.shape)))
    from ..onnx_import import own_and_free
    for v in own_and_free(g)[1]:   # the outer values the body reads, at their types here
        val = m.values.get(v)
        if val is not None and val.dtype is not None and val.shape is not None:
            typed.append(helper.make_tensor_value_info(v, helper.np_dtype_to_tensor_dtype(np.dtype(val.dtype)),
                                                       list(val.shape)))
    del g.input[:]
    g.input.extend(typed)
    del g.value_info[:]      # as declared, before floats.py made the float16 values float32
    for vi in g.output:
        vi.ClearField("type")
    opsets = [helper.make_opsetid(d, v) for d, v in m.opsets.items()] or [helper.make_opsetid("", m.opset)]
    try:
        inf = shape_inference.infer_shapes(helper.make_model(g, opset_imports=opsets))
    except Exception as e:  # noqa: BLE001
        raise _NotStatic(f"its body's scan output shapes cannot be inferred ({type(e).__name__}: {e})") from None
    res = []
    for j, vi in enumerate(list(inf.graph.output)[1 + n_carry:]):
        dt, shp = shape_of(vi.type)
        if dt is None or shp is None or not all(isinstance(d, int) and d >= 0 for d in shp):
            raise _NotStatic(f"its scan output {j} ('{vi.name}') has no static shape per iteration")
        res.append((np.dtype(dt), tuple(shp)))
    return res


def _scalar(m: ir.Model, nodes: list, v: str, name: str) -> str:
    """v reshaped to a scalar (an If's condition is one bool)."""
    shape = m.static_shape(v)
    if shape == ():
        return v
    out = m.fresh(name)
    nodes.append(_node(m, "Reshape", [v, m.add_const(name + "/shape", np.zeros(0, np.int64))], out, name))
    return out


def _unroll_bounded(m: ir.Model, n: ir.Node, bound: int, budget: list) -> list:
    """Loop n unrolled to `bound` iterations, each an If on whether the loop still runs (module doc)."""
    from onnx import helper, numpy_helper
    from ..onnx_import import node_from_proto, rename_graph
    body = n.attrs["body"]
    cost = bound * (len(body.node) + 4)      # the body and each iteration's guard nodes
    if cost > budget[0]:
        raise _NotStatic(f"unrolled to its bound, its {bound} iterations would add {cost} nodes "
                         f"(at most {budget[0]} more)")
    own, b_in, n_carry, n_scan = _loop_io(n, body)
    slices = _slice_types(m, n, body, n_carry) if n_scan else []
    M = own[0] if own and own[0] else ""
    M_const = m.const(M)
    trips_known = int(M_const.reshape(-1)[0]) if M_const is not None else None
    nodes = []
    M_s = _scalar(m, nodes, M, f"{n.name}/M") if M and M_const is None else ""
    true = m.add_const(f"{n.name}/true", np.array(True))

    def still(k: int, prev: str) -> str:
        """prev (the loop went on to iteration k) and k < M."""
        if trips_known is not None:
            return prev if k < trips_known else ""        # "": statically false
        if not M:                                          # no trip count: the condition alone
            return prev
        lt = m.fresh(f"{n.name}/iter{k}/lt")
        nodes.append(_node(m, "Less", [m.add_const(f"{n.name}/k{k}", np.array(k, np.int64)), M_s], lt,
                           f"{n.name}/iter{k}/lt"))
        if prev == true:
            return lt
        both = m.fresh(f"{n.name}/iter{k}/runs")
        nodes.append(_node(m, "And", [prev, lt], both, f"{n.name}/iter{k}/runs"))
        return both

    cond0 = _scalar(m, nodes, own[1], f"{n.name}/cond0") if len(own) > 1 and own[1] else true
    act = still(0, cond0)
    carried = list(own[2:2 + n_carry])
    scans = [[] for _ in range(n_scan)]
    actives = []
    for k in range(bound):
        if not act:
            break
        prefix = f"{n.name}/iter{k}"
        then = n.subgraph("body")
        rename_graph(then, {b_in[0]: m.add_const(prefix + "/iter_num", np.array(k, np.int64)), b_in[1]: true,
                            **dict(zip(b_in[2:], carried))})
        del then.input[:]
        produced = {o for p in then.node for o in p.output if o} | {t.name for t in then.initializer}
        outs = []
        for j, vo in enumerate(then.output):
            name = vo.name
            if j == 0:   # the condition, as a scalar
                r = f"{prefix}/cond_out"
                then.initializer.append(numpy_helper.from_array(np.zeros(0, np.int64), r + "/shape"))
                then.node.append(helper.make_node("Reshape", [name, r + "/shape"], [r], name=r))
                name = r
            elif name not in produced:   # a carried value passed through: the branch's own copy
                r = f"{prefix}/pass{j}"
                then.node.append(helper.make_node("Identity", [name], [r], name=r))
                name = r
            outs.append(helper.make_empty_tensor_value_info(name))
        del then.output[:]
        then.output.extend(outs)
        els_nodes = [helper.make_node("Constant", [], [f"{prefix}/stop"], name=f"{prefix}/stop",
                                      value=numpy_helper.from_array(np.array(False), "v"))]
        els_out = [f"{prefix}/stop"]
        for j, c in enumerate(carried):
            els_nodes.append(helper.make_node("Identity", [c], [f"{prefix}/keep{j}"], name=f"{prefix}/keep{j}"))
            els_out.append(f"{prefix}/keep{j}")
        for j, (dt, shp) in enumerate(slices):
            els_nodes.append(helper.make_node("Constant", [], [f"{prefix}/none{j}"], name=f"{prefix}/none{j}",
                                              value=numpy_helper.from_array(np.zeros(shp, dt), "v")))
            els_out.append(f"{prefix}/none{j}")
        els = helper.make_graph(els_nodes, "skip", [], [helper.make_empty_tensor_value_info(o) for o in els_out])
        results = [m.fresh(f"{prefix}/cond")] + [m.fresh(f"{prefix}/v{j}") for j in range(n_carry)] + \
                  [m.fresh(f"{prefix}/scan{j}") for j in range(n_scan)]
        p = helper.make_node("If", [act], results, name=prefix, then_branch=then, else_branch=els)
        nodes.append(node_from_proto(p, prefix))
        for r in results:
            m.value(r)
        actives.append(act)
        carried = results[1:1 + n_carry]
        for j in range(n_scan):
            scans[j].append(results[1 + n_carry + j])
        act = still(k + 1, results[0])
    if act:   # the loop may still go on after the last copy: the run fails
        nodes.append(ir.Node("FailIf", [act], [], {}, f"{n.name}: more than {bound} iterations (raise --max-trips)",
                             "ai.edgeplan"))
    for src, dst in zip(carried, n.outputs[:n_carry]):
        if dst:
            nodes.append(_node(m, "Identity", [src], dst, f"{n.name}/out:{dst}"))
    if any(n.outputs[n_carry:]):
        ints = []
        for k, a in enumerate(actives):
            c = m.fresh(f"{n.name}/ran{k}")
            nodes.append(_node(m, "Cast", [a], c, f"{n.name}/ran{k}", to=7))
            ints.append(c)
        count = m.fresh(f"{n.name}/count")
        stacked = m.fresh(f"{n.name}/ran")
        nodes += _stack(m, n, ints, 0, stacked, "iteration count")
        if m.opset >= 13:
            nodes.append(_node(m, "ReduceSum", [stacked, m.add_const(f"{n.name}/axis0", np.array([0], np.int64))],
                               count, f"{n.name}/count", keepdims=1))
        else:
            nodes.append(_node(m, "ReduceSum", [stacked], count, f"{n.name}/count", axes=[0], keepdims=1))
        zero = m.add_const(f"{n.name}/zero", np.array([0], np.int64))
        for j, dst in enumerate(n.outputs[n_carry:]):
            if dst:
                full = m.fresh(f"{dst}/all")
                nodes += _stack(m, n, scans[j], 0, full, f"scan output {j}")
                nodes.append(_node(m, "Slice", [full, zero, count, zero], dst, f"{n.name}/ran:{dst}"))
    budget[0] -= cost
    return nodes


def unroll_scan(m: ir.Model, n: ir.Node, budget: list) -> list | None:
    """The nodes replacing Scan n (opset 9+), or None (with n.note set) when its inputs' lengths are not
    static."""
    try:
        body = n.attrs["body"]
        n_scan_in = int(n.attrs["num_scan_inputs"])
        own = n.own_inputs()
        n_state = len(own) - n_scan_in
        n_scan_out = len(body.output) - n_state
        in_axes = list(n.attrs.get("scan_input_axes", [0] * n_scan_in))
        in_dirs = list(n.attrs.get("scan_input_directions", [0] * n_scan_in))
        out_axes = list(n.attrs.get("scan_output_axes", [0] * n_scan_out))
        out_dirs = list(n.attrs.get("scan_output_directions", [0] * n_scan_out))
        lengths = set()
        xs = own[n_state:]
        for j, x in enumerate(xs):
            shp = m.static_shape(x)
            if shp is None:
                raise _NotStatic(f"its scan input '{x}' has no static shape (pin the input shapes with --shape)")
            ax = in_axes[j] + len(shp) if in_axes[j] < 0 else in_axes[j]
            in_axes[j] = ax
            lengths.add(shp[ax])
        if len(lengths) != 1:
            raise _NotStatic(f"its scan inputs have different lengths {sorted(lengths)}")
        trips = lengths.pop()
        if trips > MAX_TRIPS:
            raise _NotStatic(f"it runs {trips} iterations, more than {MAX_TRIPS}")
        if trips * len(body.node) > budget[0]:
            raise _NotStatic(f"unrolled, its {trips} iterations would add {trips * len(body.node)} nodes (at "
                             f"most {budget[0]} more)")
        b_in = [i.name for i in body.input]
        states = list(own[:n_state])
        scans = [[] for _ in range(n_scan_out)]
        nodes, shared = [], {}
        for k in range(trips):
            prefix = f"{n.name}/iter{k}/"
            bind = dict(zip(b_in[:n_state], states))
            for j, x in enumerate(xs):
                idx = m.add_const(prefix + f"index{j}", np.array(trips - 1 - k if in_dirs[j] else k, np.int64))
                elem = m.fresh(prefix + f"scan_in{j}")
                nodes.append(_node(m, "Gather", [x, idx], elem, f"{prefix}scan_in{j}", axis=in_axes[j]))
                bind[b_in[n_state + j]] = elem
            body_nodes, outs = _inline_body(m, n, prefix, bind, shared)
            nodes += body_nodes
            states = outs[:n_state]
            for s in range(n_scan_out):
                scans[s].append(outs[n_state + s])
        for src, dst in zip(states, n.outputs[:n_state]):
            if dst:
                nodes.append(_node(m, "Identity", [src], dst, f"{n.name}/out:{dst}"))
        for s, dst in enumerate(n.outputs[n_state:]):
            if dst:
                parts = scans[s][::-1] if out_dirs[s] else scans[s]
                # a negative axis counts in the stacked rank, as Unsqueeze's and Concat's do
                nodes += _stack(m, n, parts, out_axes[s], dst, f"scan output {s}")
    except _NotStatic as e:
        n.note = f"a Scan is unrolled at compile time, but {e}"
        return None
    budget[0] -= trips * len(body.node)
    return nodes
