"""Cleanup: Identity, inference-mode Dropout and same-type Cast are removed (their output renamed onto
their input); nodes and values that no graph output depends on are removed."""
from __future__ import annotations

from .. import ir


def _passthrough(m: ir.Model, n: ir.Node, problems) -> bool:
    if n.domain != "":
        return False
    if n.op_type == "Identity":
        return True
    if n.op_type == "Cast":
        v = m.values.get(n.inputs[0])
        to = n.attrs.get("to")
        from ..onnx_import import np_dtype
        return v is not None and v.dtype is not None and to is not None and np_dtype(int(to)) == v.dtype
    if n.op_type == "Dropout":
        mode = m.const(n.input(2))
        if n.input(2) and (mode is None or bool(mode.reshape(-1)[0])):
            problems.add(n, "training_mode Dropout is unsupported (inference only)")
            return False
        if len(n.outputs) > 1 and n.outputs[1]:
            if any(n.outputs[1] in x.inputs for x in m.nodes) or n.outputs[1] in m.outputs:
                problems.add(n, "the Dropout mask output is unsupported")
                return False
        return True
    return False


def cleanup(m: ir.Model, problems) -> None:
    outs = set(m.outputs)
    for n in list(m.nodes):
        if not _passthrough(m, n, problems):
            continue
        src, dst = n.inputs[0], n.outputs[0]
        if dst not in outs:
            m.nodes.remove(n)
            m.replace_uses(dst, src)
        elif (src not in outs and src not in m.inputs and m.const(src) is None
              and any(src in x.outputs for x in m.nodes)):
            m.nodes.remove(n)
            m.rename_value(src, dst)
        else:
            # graph output that aliases an input, a constant or another output: stays, lowered as a copy
            n.op_type, n.attrs, n.inputs, n.outputs = "Identity", {}, [src], [dst]
    m.remove_dead()
