"""ONNX → IR: load, check the opset, pin input shapes, infer shapes, turn initializers and Constant nodes
into constants."""
from __future__ import annotations

import os

import numpy as np

from . import ir
from .errors import CompileError, Problems

# 22-28 only widened the type lists of the ops we claim (bfloat16, float8, int4/2): the f32 semantics
# are those of 21, and the ONNX node tests at those opsets check it (tests/py/test_onnx_node.py).
MIN_OPSET, MAX_OPSET = 11, 28
DEFAULT_DOMAINS = ("", "ai.onnx")


def load(model):
    """An onnx.ModelProto from a ModelProto, serialized bytes or a path."""
    import onnx
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray, memoryview)):
        return onnx.load_from_string(bytes(model))
    return onnx.load(os.fspath(model))


def np_dtype(elem_type: int):
    from onnx import helper
    if not elem_type:
        return None
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except Exception:
        return None


def tensor_to_array(t) -> np.ndarray:
    from onnx import numpy_helper
    return numpy_helper.to_array(t)


def sparse_to_array(sp) -> np.ndarray:
    vals = tensor_to_array(sp.values)
    idx = tensor_to_array(sp.indices).astype(np.int64)
    dims = tuple(int(d) for d in sp.dims)
    dense = np.zeros(int(np.prod(dims, dtype=np.int64)), dtype=vals.dtype)
    if idx.ndim == 1:
        dense[idx] = vals
        return dense.reshape(dims)
    dense = dense.reshape(dims)
    dense[tuple(idx.T)] = vals
    return dense


def attr_value(a):
    from onnx import AttributeProto, helper
    v = helper.get_attribute_value(a)
    if a.type == AttributeProto.TENSOR:
        return tensor_to_array(v)
    if a.type == AttributeProto.SPARSE_TENSOR:
        return sparse_to_array(v)
    if a.type == AttributeProto.STRING:
        return v.decode("utf-8", "replace")
    if a.type == AttributeProto.STRINGS:
        return [s.decode("utf-8", "replace") for s in v]
    if a.type in (AttributeProto.INTS, AttributeProto.FLOATS):
        return list(v)
    return v


def constant_node_value(node) -> np.ndarray:
    a = node.attribute[0] if len(node.attribute) == 1 else None
    if a is None:
        raise ValueError("Constant needs exactly one value attribute")
    v = attr_value(a)
    if a.name in ("value", "sparse_value"):
        return np.asarray(v)
    if a.name == "value_float":
        return np.array(v, dtype=np.float32)
    if a.name == "value_floats":
        return np.array(v, dtype=np.float32).reshape(-1)
    if a.name == "value_int":
        return np.array(v, dtype=np.int64)
    if a.name == "value_ints":
        return np.array(v, dtype=np.int64).reshape(-1)
    if a.name == "value_string":
        return np.array(v, dtype=object)
    if a.name == "value_strings":
        return np.array(v, dtype=object).reshape(-1)
    raise ValueError(f"Constant attribute '{a.name}' unknown")


def default_opset(model) -> int:
    for imp in model.opset_import:
        if imp.domain in DEFAULT_DOMAINS:
            return int(imp.version)
    return 0


def shape_of(type_proto):
    """(dtype, shape) of a tensor TypeProto; shape entries are ints or None, shape None if rank unknown."""
    if not type_proto.HasField("tensor_type"):
        return None, None
    tt = type_proto.tensor_type
    dt = np_dtype(tt.elem_type)
    if not tt.HasField("shape"):
        return dt, None
    return dt, tuple(int(d.dim_value) if d.HasField("dim_value") else None for d in tt.shape.dim)


def _fmt_shape(dims) -> tuple:
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def input_dim_params(model) -> dict:
    """{input name: tuple of dim_param names (None for a fixed or unnamed dim)} of the real inputs."""
    g = model.graph
    inits = {t.name for t in g.initializer} | {t.values.name for t in g.sparse_initializer}
    out = {}
    for vi in g.input:
        if vi.name in inits or not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            continue
        out[vi.name] = tuple(d.dim_param if not d.HasField("dim_value") and d.dim_param else None
                             for d in vi.type.tensor_type.shape.dim)
    return out


def pin_inputs(model, shapes, inits=(), symbols=None) -> None:
    """Write the pinned input dims into model (in place); raise CompileError listing every symbolic
    dim left unpinned and every contradicting or unknown pin. `inits` names constants listed as inputs.
    `symbols` ({dim_param: int}) pins every input dim of that name that `shapes` does not pin."""
    g = model.graph
    inits = set(inits) | {t.name for t in g.initializer} | {t.values.name for t in g.sparse_initializer}
    real = [vi for vi in g.input if vi.name not in inits]
    names = [vi.name for vi in real]
    shapes = dict(shapes or {})
    for vi in real:
        if symbols and vi.name not in shapes and vi.type.tensor_type.HasField("shape"):
            dims = vi.type.tensor_type.shape.dim
            if all(d.HasField("dim_value") or d.dim_param in symbols for d in dims) and \
                    any(not d.HasField("dim_value") for d in dims):
                shapes[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else symbols[d.dim_param] for d in dims)
    probs = Problems()
    for name in shapes:
        if name not in names:
            probs.add(None, f"shapes pins '{name}', which is not a graph input (inputs: {', '.join(names)})")
    for vi in real:
        name = vi.name
        if not vi.type.HasField("tensor_type"):
            probs.add(None, f"input '{name}' is not a tensor")
            continue
        tt = vi.type.tensor_type
        pin = shapes.get(name)
        if pin is not None:
            try:
                pin = tuple(int(d) for d in pin)
            except (TypeError, ValueError):
                probs.add(None, f"shapes['{name}'] must be a tuple of ints, got {pin!r}")
                continue
            if not tt.HasField("shape"):
                for d in pin:
                    tt.shape.dim.add().dim_value = d
                continue
            dims = tt.shape.dim
            if len(pin) != len(dims):
                probs.add(None, f"input '{name}' has rank {len(dims)} but shapes pins {len(pin)} dims {pin}")
                continue
            bad = False
            for k, (d, p) in enumerate(zip(dims, pin)):
                if p < 0:
                    bad = True
                    probs.add(None, f"input '{name}' dim {k} pinned to {p}: dims must be >= 0")
                elif d.HasField("dim_value") and d.dim_value != p:
                    bad = True
                    probs.add(None, f"input '{name}' dim {k} is {d.dim_value} in the model but "
                                    f"shapes pins {p} (pinned {pin})")
            if not bad:
                for d, p in zip(dims, pin):
                    d.Clear()
                    d.dim_value = p
            continue
        if not tt.HasField("shape"):
            probs.add(None, f"input '{name}' has unknown rank: pin it with shapes={{'{name}': (...)}}")
            continue
        dims = tt.shape.dim
        example = [d.dim_value if d.HasField("dim_value") else 1 for d in dims]
        for k, d in enumerate(dims):
            if not d.HasField("dim_value"):
                sym = d.dim_param or "?"
                probs.add(None, f"input '{name}' dim {k} ('{sym}') is symbolic: pin it with "
                                f"shapes={{'{name}': {_fmt_shape(example)}}} / --shape "
                                f"{name}={','.join(map(str, example))}"
                                + (f", or bound it with dims={{'{sym}': (MIN, MAX)}} / --dim {sym}=MIN..MAX"
                                   if d.dim_param else ""))
    probs.raise_if_any()


def infer_shapes(model):
    import onnx
    try:
        return onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    except Exception:
        return model


def import_model(model, shapes=None, symbols=None) -> ir.Model:
    model = load(model)
    opset = default_opset(model)
    if not MIN_OPSET <= opset <= MAX_OPSET:
        what = "imports no default-domain (ai.onnx) opset" if opset == 0 else f"uses default-domain opset {opset}"
        raise CompileError([ir_problem(f"the model {what}; edgeplan supports opsets {MIN_OPSET}-{MAX_OPSET} "
                                       f"(convert it with onnx.version_converter.convert_version)")])
    if len(model.functions):
        try:
            from onnx import inliner
            model = inliner.inline_local_functions(model)
        except Exception:  # noqa: BLE001
            pass
    skel, big = skeleton(model)
    pin_inputs(skel, shapes, big, symbols)
    skel = infer_shapes(skel)
    return to_ir(model, skel, opset)


SKELETON_MAX_ELEMS = 4096


def skeleton(model):
    """A copy of model without the data of its large initializers (they become typed graph inputs),
    for shape inference; returns (skeleton, names of those initializers)."""
    import onnx
    from onnx import helper
    g = model.graph
    sk = onnx.ModelProto()
    sk.ir_version = model.ir_version
    sk.opset_import.extend(model.opset_import)
    sg = sk.graph
    sg.name = g.name
    sg.node.extend(g.node)
    sg.output.extend(g.output)
    sg.value_info.extend(g.value_info)
    sg.sparse_initializer.extend(g.sparse_initializer)
    big = []
    for t in g.initializer:
        n = 1
        for d in t.dims:
            n *= d
        if n <= SKELETON_MAX_ELEMS and t.data_location != onnx.TensorProto.EXTERNAL:
            sg.initializer.append(t)
        else:
            big.append(t.name)
            sg.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    names = set(big)
    sg.input.extend(vi for vi in g.input if vi.name not in names)
    return sk, big


def ir_problem(msg):
    from .errors import Problem
    return Problem(None, None, msg)


def to_ir(model, skel, opset: int) -> ir.Model:
    """IR from model's constants and skel's (pinned, inferred) graph."""
    out = ir.Model(opset)
    for t in model.graph.initializer:
        out.set_const(t.name, tensor_to_array(t))
    for sp in model.graph.sparse_initializer:
        out.set_const(sp.values.name, sparse_to_array(sp))
    g = skel.graph
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        if out.const(vi.name) is not None:
            continue
        dt, shp = shape_of(vi.type)
        v = out.value(vi.name)
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            params = tuple(d.dim_param or None for d in vi.type.tensor_type.shape.dim)
            if any(params):
                out.dim_params.setdefault(vi.name, params)
        if dt is not None:
            v.dtype = dt
        if shp is not None and (v.shape is None or sum(d is None for d in shp) < sum(d is None for d in v.shape)):
            v.shape = shp
    out.inputs = [vi.name for vi in g.input if out.const(vi.name) is None]
    out.outputs = [vi.name for vi in g.output]
    names = set()
    probs = Problems()
    for idx, p in enumerate(g.node):
        name = p.name
        if not name or name in names:
            name = f"{p.op_type}_{idx}" if not name else f"{name}_{idx}"
        names.add(name)
        if p.op_type == "Constant" and p.domain in DEFAULT_DOMAINS:
            try:
                out.set_const(p.output[0], constant_node_value(p))
            except Exception as e:  # noqa: BLE001
                probs.append(ir_problem(f"node '{name}' (Constant): {e}"))
            continue
        attrs = {a.name: attr_value(a) for a in p.attribute}
        out.nodes.append(ir.Node(p.op_type, list(p.input), list(p.output), attrs, name,
                                 "" if p.domain in DEFAULT_DOMAINS else p.domain, proto=p))
        for o in p.output:
            if o:
                out.value(o)
        for i in p.input:
            if i:
                out.value(i)
    produced = {o for n in out.nodes for o in n.outputs} | set(out.inputs)
    for o in out.outputs:
        if o not in produced and out.const(o) is None:
            probs.append(ir_problem(f"graph output '{o}' is produced by no node"))
    probs.raise_if_any()
    return out
