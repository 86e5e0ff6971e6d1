"""If decided at run time (an If whose condition is a constant is inlined by passes/fold.py instead).

Each branch is a graph of its own: it is imported as a model whose inputs are the outer values it reads
(with the shapes they have in this lowering), folded, cleaned up and fused like the main graph, and its
nodes are lowered into the same op list. The op list then reads

    if(cond)  <then branch ops> copy -> outputs  else  <else branch ops> copy -> outputs

and the executor runs one branch (plan-format.md, control ops). Both branches write the If's outputs,
which must have the same dtype and shape in both."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..lowering import NodeError, _Poisoned

BRANCHES = ("then_branch", "else_branch")
EDGEPLAN_DOMAIN = "ai.edgeplan"   # the compiler's own IR ops (never in an ONNX file edgeplan reads)


def _branch_model(ctx, n, key: str):
    """Branch `key` of If node n as an ir.Model: its own values renamed under the If's name (they cannot
    collide with the outer graph's), the outer values it reads as inputs (or constants)."""
    from onnx import helper, numpy_helper
    from .. import onnx_import
    g = n.subgraph(key)
    own, free = onnx_import.own_and_free(g)
    prefix = f"{n.name or 'if'}/{key.split('_')[0]}/"
    taken = set(ctx.tensors) | set(ctx.m.values)
    names = {}
    for v in sorted(own):
        name, k = prefix + v, 1
        while name in taken:
            name, k = f"{prefix}{v}_{k}", k + 1
        taken.add(name)
        names[v] = name
    onnx_import.rename_graph(g, names)
    for k, p in enumerate(g.node):   # errors name a branch's nodes under the If
        p.name = prefix + (p.name or f"{p.op_type}_{k}")
    inputs, consts, big = [], {}, {}
    for name in free:
        if name in ctx.poisoned:
            raise _Poisoned(name)
        a = ctx.m.const(name)
        t = ctx.tensors.get(name)
        if a is None and t is not None and t.is_const:
            a = np.asarray(t.storage().data).reshape(t.shape)
        if a is not None:
            (consts if a.size <= onnx_import.SKELETON_MAX_ELEMS else big)[name] = a
        elif t is not None:
            inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(t.dtype), list(t.shape)))
        else:
            raise NodeError(f"its {key} reads '{name}', which nothing computes before the If")
    for name, a in big.items():   # typed inputs for shape inference; their data is set below
        inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)))
    g.input.extend(inputs)
    g.initializer.extend(numpy_helper.from_array(a, name) for name, a in consts.items())
    opsets = [helper.make_opsetid(d, v) for d, v in getattr(ctx.m, "opsets", {"": ctx.m.opset}).items()]
    model = helper.make_model(g, opset_imports=opsets)
    try:
        onnx_import.check_graph(model)
    except CompileError as e:
        raise NodeError(f"its {key} is not a valid graph: {e.problems[0]}") from None
    skel, _ = onnx_import.skeleton(model)
    sub = onnx_import.to_ir(model, onnx_import.infer_shapes(skel), ctx.m.opset)
    for name, a in big.items():
        sub.set_const(name, a)
    sub.inputs = [i for i in sub.inputs if i not in big]
    sub.opsets = dict(getattr(ctx.m, "opsets", {}))
    sub.max_trips = getattr(ctx.m, "max_trips", 0)
    return sub


class _Deferred(Exception):
    """A branch whose ops edgeplan has but not at these shapes (an onnxruntime run taking it fails too)."""


def _shape_only(ctx, problems) -> bool:
    """Every problem is an op edgeplan lowers, refused at these shapes: not an unsupported op type."""
    return bool(problems) and all(
        p.op_type and any((d, p.op_type) in ctx.handlers for d in ("", "ai.onnx")) and "unsupported" not in
        p.message for p in problems)


def _lower_branch(ctx, n, key: str, defer: bool = False) -> list:
    """Lowers branch `key` of n into ctx's op list; returns the graph tensors of its outputs. With defer,
    a branch refused only for its shapes raises _Deferred (its ops removed again) instead."""
    from ..errors import Problems
    from ..frontend import optimize
    sub = _branch_model(ctx, n, key)
    problems = Problems()
    try:
        optimize(sub, problems, [], "the branch")
    except CompileError as e:
        problems.extend(p for p in e.problems if p not in problems)
    outer_m, before = ctx.m, len(ctx.problems)
    n_ops, n_dd = len(ctx.ops), len(ctx.data_dims)
    if not problems:
        ctx.m = sub
        try:
            ctx.lower_nodes(sub.nodes, sub.producers())
        finally:
            ctx.m = outer_m
        problems = ctx.problems[before:]
        del ctx.problems[before:]
    if problems and defer and _shape_only(ctx, problems):
        del ctx.ops[n_ops:]
        del ctx.data_dims[n_dd:]
        raise _Deferred(str(problems[0]))
    if problems:
        ctx.problems.add(n, f"its {key} cannot be compiled: {problems[0]}"
                            + (f" (and {len(problems) - 1} more problems below)" if len(problems) > 1 else "")
                            + f". If that branch never runs at these input shapes, freeze what its condition depends "
                              f"on: {_deciders(ctx, n)}")
        ctx.problems.extend(p for p in problems[1:] if p not in ctx.problems)
        raise _Poisoned(n.outputs[0] if n.outputs else "")
    ctx.m = sub
    try:
        return [ctx.tensor(o) for o in sub.outputs]
    finally:
        ctx.m = outer_m


def _deciders(ctx, n) -> str:
    """The inputs If n's condition is computed from, as the freeze option that would decide it."""
    prods = ctx.m.producers()
    seen, stack, found = set(), [n.input(0)], []
    while stack:
        v = stack.pop()
        if not v or v in seen or ctx.m.const(v) is not None:
            continue
        seen.add(v)
        p = prods.get(v)
        if p is None:
            found.append(v)
        else:
            stack.extend(p.inputs)
    if not found:
        return f"the value '{n.input(0)}'"
    return (", ".join(f"--const {v}=VALUE" for v in sorted(found)) + " (consts={"
            + ", ".join(f"'{v}': VALUE" for v in sorted(found)) + "})")


def _write_in_place(ctx, start: int, t, o) -> bool:
    """Where branch result t is a tensor of its own that exactly one op of the branch (ops from start on)
    writes and nothing else reads, that op writes the If's output o instead (no copy)."""
    if t.view_of is not None or t.is_const or t.is_input or t.is_output or t.is_state:
        return False
    if any(d[0] is t for d in ctx.data_dims) or any(x.view_of is t for x in ctx.order):
        return False
    writers = [op for op in ctx.ops if any(x is t for x in op.outputs)]
    if len(writers) != 1 or writers[0] not in ctx.ops[start:] or writers[0].kind in ("if", "else"):
        return False
    if any(x is t for op in ctx.ops for x in op.inputs):
        return False
    op = writers[0]
    op.outputs = [o if x is t else x for x in op.outputs]
    return True


def lower_if(ctx, n):
    cond = ctx.input(n, 0, "cond")
    if cond.dtype != np.bool_ or int(np.prod(cond.shape, dtype=np.int64)) != 1:
        raise NodeError(f"its condition '{cond.name}' is {list(cond.shape)} {cond.dtype.name}; an If takes one "
                        f"bool")
    if any(k not in n.attrs for k in BRANCHES):
        raise NodeError("it needs both then_branch and else_branch")
    n_out = len(n.outputs)
    if_op = ctx.emit("if", [cond], [], {"skip": 0, "fail": 0})
    start = len(ctx.ops)
    try:
        then = _lower_branch(ctx, n, "then_branch", defer=True)
    except _Deferred as e:   # only the else branch runs; taking the then branch fails the run
        _fail_here(ctx, n, "then_branch", str(e))
        else_op = ctx.emit("else", [], [], {"skip": 0, "fail": 0})
        if_op.branch = else_op
        other = _lower_branch(ctx, n, "else_branch")
        if len(other) != n_out:
            raise NodeError(f"its else_branch has {len(other)} outputs for the If's {n_out}") from None
        outs = [ctx.output(n, k, t.shape, t.dtype) if o else None for k, (o, t) in enumerate(zip(n.outputs, other))]
        start = len(ctx.ops)
        for k, (t, o) in enumerate(zip(other, outs)):
            if o is not None and not _write_in_place(ctx, start, t, o):
                ctx.emit("copy", [t], [o], {"axis": 0}, name=f"{n.name}/else:{n.outputs[k]}")
        else_op.branch = ctx.ops[-1]
        return
    if len(then) != n_out:
        raise NodeError(f"its then_branch has {len(then)} outputs for the If's {n_out}")
    outs = [ctx.output(n, k, t.shape, t.dtype) if o else None for k, (o, t) in enumerate(zip(n.outputs, then))]

    def write(results, key, start):
        for k, (t, o) in enumerate(zip(results, outs)):
            if o is None:
                continue
            if tuple(t.shape) != tuple(o.shape) or t.dtype != o.dtype:
                raise NodeError(f"output {k} ('{n.outputs[k]}') is {list(o.shape)} {o.dtype.name} from the "
                                f"then_branch but {list(t.shape)} {t.dtype.name} from the else_branch; edgeplan "
                                f"needs one shape and dtype for both")
            if not _write_in_place(ctx, start, t, o):
                ctx.emit("copy", [t], [o], {"axis": 0}, name=f"{n.name}/{key}:{n.outputs[k]}")
    write(then, "then", start)
    else_op = ctx.emit("else", [], [], {"skip": 0, "fail": 0})
    if_op.branch = else_op
    start = len(ctx.ops)
    try:
        other = _lower_branch(ctx, n, "else_branch", defer=True)
    except _Deferred as e:   # taking the else branch fails the run
        _fail_here(ctx, n, "else_branch", str(e))
        else_op.branch = ctx.ops[-1]
        return
    if len(other) != n_out:
        raise NodeError(f"its else_branch has {len(other)} outputs for the If's {n_out}")
    write(other, "else", start)
    else_op.branch = ctx.ops[-1]


def _fail_here(ctx, n, key: str, why: str) -> None:
    """The ops of a branch that cannot run at these shapes: a bound check on a constant true, so a run
    that takes the branch fails (EP_ERR_RUN_BOUND, naming it), as an onnxruntime run taking it fails."""
    bound_check(ctx, ctx.const(f"{n.name}/{key}/taken", np.array([True])),
                f"{n.name}/{key} cannot run at these input shapes")
    ctx.warnings.append(f"node '{n.name}' (If): its {key} cannot run at these input shapes ({why}); a run that "
                        f"takes it fails with EP_ERR_RUN_BOUND")


def lower_fail_if(ctx, n):
    """A run-time bound check (passes/unroll.py writes one after a Loop unrolled to --max-trips): an IF
    with fail = 1 and empty branches; a true condition fails the run with EP_ERR_RUN_BOUND, naming the
    node."""
    cond = ctx.input(n, 0, "cond")
    if cond.dtype != np.bool_ or int(np.prod(cond.shape, dtype=np.int64)) != 1:
        raise NodeError(f"its condition '{cond.name}' is {list(cond.shape)} {cond.dtype.name}, not one bool")
    bound_check(ctx, cond, n.name)


def bound_check(ctx, cond, name: str) -> None:
    """The ops of a run-time bound check: an IF with fail = 1 on cond (one bool) and its empty ELSE; a
    true cond fails the run with EP_ERR_RUN_BOUND, the message naming `name`."""
    f_if = ctx.emit("if", [cond], [], {"skip": 0, "fail": 1}, name=name)
    f_else = ctx.emit("else", [], [], {"skip": 0, "fail": 0}, name=name + "/else")
    f_if.branch, f_else.branch = f_else, f_else


LOWER = {("", "If"): lower_if, (EDGEPLAN_DOMAIN, "FailIf"): lower_fail_if}
