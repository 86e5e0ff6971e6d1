"""Ops that ONNX defines by a function body (Attention, RotaryEmbedding, SwiGLU, CenterCropPad, AffineGrid,
the losses, ...) and that the compiler has no lowering of its own for are expanded into that body, the
definition onnx's schema gives for the model's opset and (for context-dependent functions) the node's
attributes and input types. The expansion is onnx's own inliner run on the body made a model-local
function, so attribute references and renaming follow onnx. The expanded nodes then compile as any
others; an expansion that uses an op the compiler lacks reports that op, under the expanded node's name."""
from __future__ import annotations

DOMAIN = "edgeplan.expanded"
DEFAULT_DOMAINS = ("", "ai.onnx")


def _supported() -> set:
    from .ops import HANDLERS
    from .passes import fold
    ops = {op for dom, op in HANDLERS if dom in DEFAULT_DOMAINS}
    return ops | set(fold.FOLDED_OPS) | {"Constant"}


def _schema(op_type: str, opset: int):
    from onnx import defs
    try:
        return defs.get_schema(op_type, opset, "")
    except Exception:  # noqa: BLE001 - no such op at this opset
        return None


def value_types(model) -> dict:
    """The TypeProto (dtype and shape, as declared or inferred) of every top-level value of model: what a
    context-dependent function is built from (RotaryEmbedding's body depends on its input's rank)."""
    import onnx
    from onnx import helper, numpy_helper
    from .onnx_import import skeleton
    sk, _ = skeleton(model)
    try:
        sk = onnx.shape_inference.infer_shapes(sk)
    except Exception:  # noqa: BLE001 - inference is best effort here
        pass
    g = sk.graph
    types = {vi.name: vi.type for vi in list(g.input) + list(g.value_info) + list(g.output)
             if vi.type.HasField("tensor_type")}
    for t in model.graph.initializer:
        types[t.name] = helper.make_tensor_type_proto(t.data_type, list(t.dims))
    return types


def _function_of(node, opset: int, types: dict):
    """The FunctionProto defining node at opset, or None."""
    from onnx import FunctionProto, TypeProto
    s = _schema(node.op_type, opset)
    if s is None:
        return None
    if s.has_function:
        raw = s.get_function_with_opset_version(opset)
        return FunctionProto.FromString(raw) if isinstance(raw, bytes) and raw else (raw or s.function_body)
    if s.has_context_dependent_function:
        tps = []
        for name in node.input:
            tp = types.get(name) if name else TypeProto()
            if tp is None:
                return None          # the body depends on input types the model does not say
            tps.append(tp)
        try:
            raw = s.get_context_dependent_function_with_opset_version(
                opset, node.SerializeToString(), [t.SerializeToString() for t in tps])
        except Exception:  # noqa: BLE001 - the schema refuses this node's attributes
            return None
        if not raw:
            return None
        return FunctionProto.FromString(raw)
    return None


MAX_DEPTH = 4   # a body may hold function-defined ops itself (SoftmaxCrossEntropyLoss: NegativeLogLikelihoodLoss)


def expand_functions(model, opset: int):
    """model with its top-level nodes of unsupported function-defined ops expanded, repeatedly while the
    bodies hold more (a new ModelProto), or model itself when it has none."""
    for _ in range(MAX_DEPTH):
        out = _expand_once(model, opset)
        if out is model:
            break
        model = out
    return model


def _expand_once(model, opset: int):
    import onnx
    from onnx import helper, inliner
    supported = _supported()
    todo = [k for k, n in enumerate(model.graph.node)
            if n.domain in DEFAULT_DOMAINS and n.op_type not in supported and _schema(n.op_type, opset) is not None
            and (_schema(n.op_type, opset).has_function or _schema(n.op_type, opset).has_context_dependent_function)]
    if not todo:
        return model
    types = value_types(model)
    m = onnx.ModelProto.FromString(model.SerializeToString())
    original = {}   # function name -> the (domain, op_type) it expands
    for k in todo:
        n = m.graph.node[k]
        f = _function_of(n, opset, types)
        if f is None:
            continue
        g = onnx.FunctionProto()
        g.CopyFrom(f)
        g.domain, g.name = DOMAIN, f"{n.op_type}_{k}"
        for j, b in enumerate(g.node):   # errors name an expanded node under the node it came from
            b.name = f"{n.name or n.op_type + '_' + str(k)}/{b.name or b.op_type + '_' + str(j)}"
        if not any(o.domain in DEFAULT_DOMAINS for o in g.opset_import):
            g.opset_import.append(helper.make_opsetid("", opset))
        m.functions.append(g)
        original[g.name] = (n.domain, n.op_type)
        n.domain, n.op_type = DOMAIN, g.name
    if not original:
        return model
    m.opset_import.append(helper.make_opsetid(DOMAIN, 1))
    m = inliner.inline_local_functions(m)
    del m.opset_import[[o.domain for o in m.opset_import].index(DOMAIN)]
    kept = [n for n in m.graph.node if n.domain == DOMAIN]
    for n in kept:   # not inlined (the body's opset differs from the model's): the node as it was
        n.domain, n.op_type = original[n.op_type]
    if len(kept) == len(original):
        return model
    del m.functions[:]
    return m
