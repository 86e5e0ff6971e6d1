"""TFLite IF -> ONNX If (compiler/ops/control.py runs it: one branch per run, the arena planned for the
larger branch).

IF reads a boolean condition (one element) and passes its other inputs to the then / else subgraphs as
their inputs, in order; the chosen subgraph's outputs are the IF's. Each branch is imported by a
Converter of its own into the If's then_branch / else_branch graph: a branch input bound to an outer
constant (the weights the converter passes in as IF operands) is a constant there, one bound to a
run-time value reads the outer ONNX value (ONNX subgraphs see the outer scope), in the layout the outer
producer wrote. Branch outputs leave in TFLite's layout.

Supported: float (and bool / integer) branches over any of the ops this importer maps, nested IF
included, with outputs of one dtype and shape in both branches. Refused with the reason: quantised IF
operands or results, resource variables inside a branch, and WHILE / CALL (builtins outside the table)."""
from __future__ import annotations

from .convert import Converter, Unsupported, ident, onnx_type
from .reader import Op


def _branch(cv: Converter, op: Op, k: int, handlers: dict, what: str):
    """(GraphProto, [(dtype, shape)] of its outputs) of subgraph k bound to op's inputs 1.."""
    from onnx import helper
    subs = cv.g.subgraphs
    if not 0 < k < len(subs):
        raise Unsupported(f"its {what} subgraph {k} is not in the model")
    sg = subs[k]
    if len(sg.inputs) != len(op.inputs) - 1 or len(sg.outputs) != len(op.outputs):
        raise Unsupported(f"its {what} subgraph '{sg.name}' takes {len(sg.inputs)} inputs and gives "
                          f"{len(sg.outputs)} outputs; the IF passes {len(op.inputs) - 1} and takes {len(op.outputs)}")
    if any(o.name in ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE") for o in sg.ops):
        raise Unsupported(f"its {what} subgraph '{sg.name}' uses resource variables: state inside an IF "
                          "branch is not supported")
    sub = Converter(sg)
    sub.used = cv.used                 # one namespace: branch values may not shadow outer ones
    sub.inits = cv.inits               # constants live in the outer graph, which the branches see
    for j, i in zip(sg.inputs, op.inputs[1:]):
        if i < 0:
            raise Unsupported(f"its {what} subgraph input '{sg.tensors[j].name}' is bound to no value")
        sub.shapes[j] = cv.shape(i) if i not in cv.consts else tuple(cv.consts[i].shape)
        if cv.is_const(i):
            sub.consts[j] = cv.consts[i]
        else:
            p = cv.perm_of(i)
            sub.vals[j] = {p: cv.raw(i, p)}
            sub.made[j] = p
    problems = sub.run_ops(handlers)
    cv.fp16_weights += sub.fp16_weights
    if problems:
        raise Unsupported(f"its {what} subgraph '{sg.name}' does not import: " + "; ".join(map(str, problems)))
    infos, kinds = [], []
    for o in sg.outputs:
        t = sg.tensors[o]
        if o in sub.consts:
            dt, shape = sub.consts[o].dtype, tuple(sub.consts[o].shape)
        else:
            dt, shape = t.dtype, sub.shape(o)
        name = cv.uname(f"{op.name.lower()}#{op.index}/{what}/{t.name}")
        sub.nodes.append(helper.make_node("Identity", [sub.raw(o)], [name], name=cv.uname(name)))
        infos.append(helper.make_tensor_value_info(name, onnx_type(dt), list(shape)))
        kinds.append((dt, shape))
    graph = helper.make_graph(sub.nodes, f"{sg.name}", [], infos)
    return graph, kinds


def if_op(cv: Converter, op: Op):
    from .ops import HANDLERS
    o = op.options
    if o is None:
        raise Unsupported("IF without options (its subgraph indices)")
    if any(i >= 0 and cv.quantized(i) for i in op.inputs) or any(cv.quantized(i) for i in op.outputs):
        raise Unsupported("IF on quantised tensors is not supported (float, bool and integer operands are)")
    cond = op.inputs[0]               # a constant condition: compiler/passes/fold.py inlines the branch
    n = 1
    for d in (cv.shape(cond) if not cv.is_const(cond) else cv.consts[cond].shape):
        n *= int(d)
    if n != 1:
        raise Unsupported(f"its condition '{cv.t(cond).name}' has {n} elements (one is needed)")
    then_g, then_k = _branch(cv, op, o.ThenSubgraphIndex(), HANDLERS, "then")
    else_g, else_k = _branch(cv, op, o.ElseSubgraphIndex(), HANDLERS, "else")
    for k, (a, b) in enumerate(zip(then_k, else_k)):
        if a[0] != b[0] or tuple(a[1]) != tuple(b[1]):
            raise Unsupported(f"its output {k} is {a[0].__name__}{list(a[1])} in the then branch and "
                              f"{b[0].__name__}{list(b[1])} in the else branch (one dtype and shape is needed)")
    c = cv.raw(cond) if not cv.is_const(cond) else cv.init(cv.consts[cond])
    if cv.t(cond).type != 6:
        c = cv.node("Cast", [c], to=9)
    outs = cv.node("If", [c], n_out=len(op.outputs), then_branch=then_g, else_branch=else_g)
    outs = [outs] if len(op.outputs) == 1 else outs
    for i, name, (_, shape) in zip(op.outputs, outs, then_k):
        cv.put(i, name, ident(len(shape)), shape=shape, is_float=False)


HANDLERS = {"IF": if_op}
