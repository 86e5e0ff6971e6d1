"""float16, bfloat16 and float64 models compute in float32.

The plan keeps the model's interface: a graph input or output of one of these types stays that type, and a
CAST op at the edge converts it (the runtime's CAST knows the three formats, kernels/float_bits.h). Inside,
every value is float32:
- initializers and Constant / ConstantOfShape values are converted at compile time (float16 and bfloat16
  exactly; float64 rounded to nearest);
- a Cast to float16 or bfloat16 inside the graph keeps its rounding: it becomes a cast to that type and
  back (so a model that quantises through float16 gets the same values as onnxruntime); a Cast to float64
  becomes a Cast to float32;
- CastLike takes the dtype of its target as the model declares it, then as a Cast above;
- a `dtype` attribute (EyeLike, the random ops) naming one of the types names float32.

So a float16 model's arithmetic runs at float32 precision (as onnxruntime's CPU provider computes most
float16 ops), and a float64 model's at float32 precision: it may differ from float64 by float32 rounding."""
from __future__ import annotations

import numpy as np

DEMOTED = {10: "float16", 16: "bfloat16", 11: "float64"}   # TensorProto FLOAT16, BFLOAT16, DOUBLE
FLOAT = 1


def _graphs(g):
    """g and every subgraph under it."""
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.type == 5:      # GRAPH
                yield from _graphs(a.g)
            elif a.type == 10:   # GRAPHS
                for sg in a.graphs:
                    yield from _graphs(sg)


def uses_demoted(model) -> bool:
    for g in _graphs(model.graph):
        vis = list(g.input) + list(g.output) + list(g.value_info)
        if any(vi.type.tensor_type.elem_type in DEMOTED for vi in vis if vi.type.HasField("tensor_type")):
            return True
        if any(t.data_type in DEMOTED for t in g.initializer):
            return True
        for n in g.node:
            if n.op_type in ("Cast", "CastLike", "Constant", "ConstantOfShape", "EyeLike", "RandomNormal",
                             "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli"):
                for a in n.attribute:
                    if (a.name in ("to", "dtype") and a.i in DEMOTED) or (a.type == 4 and a.t.data_type in DEMOTED):
                        return True
    return False


def _to_f32(t):
    from onnx import numpy_helper
    arr = numpy_helper.to_array(t).astype(np.float32)
    out = numpy_helper.from_array(arr, t.name)
    t.CopyFrom(out)


def _declared(g) -> set:
    names = {vi.name for vi in g.input} | {t.name for t in g.initializer}
    return names | {o for n in g.node for o in n.output}


def _rename_uses(g, old: str, new: str, top: bool = True) -> None:
    """Every read of `old` in g and in the subgraphs that capture it (do not declare it) reads `new`."""
    if not top and old in _declared(g):
        return
    for n in g.node:
        for k, i in enumerate(n.input):
            if i == old:
                n.input[k] = new
        for a in n.attribute:
            for sg in ([a.g] if a.type == 5 else list(a.graphs) if a.type == 10 else []):
                _rename_uses(sg, old, new, top=False)
    for vo in g.output:
        if not top and vo.name == old:
            vo.name = new


def _fresh(taken: set, base: str) -> str:
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def _declared_types(model) -> dict:
    """elem_type of every top-level value of the model, as declared or inferred (for CastLike)."""
    from .functions import value_types
    return {k: t.tensor_type.elem_type for k, t in value_types(model).items()}


def _rewrite_nodes(g, types: dict, taken: set) -> None:
    from onnx import helper
    for t in g.initializer:
        if t.data_type in DEMOTED:
            _to_f32(t)
    for sp in g.sparse_initializer:
        if sp.values.data_type in DEMOTED:
            _to_f32(sp.values)
    out = []
    for n in g.node:
        for a in n.attribute:
            if a.type == 4 and a.t.data_type in DEMOTED:      # TENSOR: Constant, ConstantOfShape values
                _to_f32(a.t)
            elif a.name == "dtype" and a.type == 2 and a.i in DEMOTED:
                a.i = FLOAT
            for sg in ([a.g] if a.type == 5 else list(a.graphs) if a.type == 10 else []):
                _rewrite_nodes(sg, types, taken)
        to = None
        if n.op_type == "Cast" and n.domain in ("", "ai.onnx"):
            to = next((a.i for a in n.attribute if a.name == "to"), None)
        elif n.op_type == "CastLike" and n.domain in ("", "ai.onnx") and len(n.input) > 1:
            to = types.get(n.input[1])
            if to in DEMOTED:   # as a Cast to the declared type (the target's values become float32)
                n.CopyFrom(helper.make_node("Cast", [n.input[0]], list(n.output), name=n.name, to=to))
        if to in (10, 16):      # round to the 16-bit format, then compute on in float32
            mid = _fresh(taken, f"{n.output[0]}/{DEMOTED[to]}")
            out.append(helper.make_node("Cast", [n.input[0]], [mid], name=f"{n.name}/{DEMOTED[to]}", to=to))
            out.append(helper.make_node("Cast", [mid], list(n.output), name=n.name, to=FLOAT))
            continue
        if to == 11:
            for a in n.attribute:
                if a.name == "to":
                    a.i = FLOAT
        out.append(n)
    del g.node[:]
    g.node.extend(out)


def _retype(g, keep: set) -> None:
    """Declared types of the demoted formats become float32 (but the top graph's I/O in `keep`)."""
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is not None and tt.elem_type in DEMOTED and vi.name not in keep:
            tt.elem_type = FLOAT
    for n in g.node:
        for a in n.attribute:
            for sg in ([a.g] if a.type == 5 else list(a.graphs) if a.type == 10 else []):
                _retype(sg, set())


def compute_in_float32(model):
    """model (a ModelProto, not changed) rewritten as the module docstring says, or model itself when it
    uses none of the three formats."""
    import onnx
    from onnx import helper
    if not uses_demoted(model):
        return model
    types = _declared_types(model) if any(n.op_type == "CastLike" for g in _graphs(model.graph)
                                          for n in g.node) else {}
    m = onnx.ModelProto.FromString(model.SerializeToString())
    g = m.graph
    taken = set()
    for sg in _graphs(g):
        taken |= _declared(sg) | {i for n in sg.node for i in n.input}
    _rewrite_nodes(g, types, taken)
    inits = {t.name for t in g.initializer}
    inputs = {vi.name for vi in g.input if vi.name not in inits}
    front, back, keep = [], [], set()
    for vi in g.input:
        et = vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else 0
        if vi.name in inputs and et in DEMOTED:
            new = _fresh(taken, f"{vi.name}/float32")
            _rename_uses(g, vi.name, new)
            front.append(helper.make_node("Cast", [vi.name], [new], name=f"{vi.name}/to_float32", to=FLOAT))
            keep.add(vi.name)
    for vo in g.output:
        et = vo.type.tensor_type.elem_type if vo.type.HasField("tensor_type") else 0
        if et not in DEMOTED or vo.name in inputs:
            continue
        new = _fresh(taken, f"{vo.name}/float32")
        for n in g.node:                       # its producer (a node or an initializer) writes `new`
            for k, o in enumerate(n.output):
                if o == vo.name:
                    n.output[k] = new
        for t in g.initializer:
            if t.name == vo.name:
                t.name = new
        _rename_uses(g, vo.name, new)
        back.append(helper.make_node("Cast", [new], [vo.name], name=f"{vo.name}/to_{DEMOTED[et]}", to=et))
        keep.add(vo.name)
    nodes = front + list(g.node) + back
    del g.node[:]
    g.node.extend(nodes)
    _retype(g, keep)
    return m
