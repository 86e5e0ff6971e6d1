"""Constant folding: every node whose inputs are all constants is evaluated (numpy for the common shape
ops, onnx.reference.ReferenceEvaluator on a one-node model otherwise); Shape and Size of tensors with
static shapes become constants. Between rounds, shapes are re-inferred so that Shape→...→Reshape chains
fold away completely."""
from __future__ import annotations

import numpy as np

from .. import ir
from ..onnx_import import infer_shapes, np_dtype, shape_of

NEVER_FOLD = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
              "Bernoulli", "If", "Loop", "Scan", "SequenceConstruct", "SequenceEmpty"}
MAX_ROUNDS = 8

# ops the compiler supports only by evaluating them at compile time (static shapes, constant inputs);
# Dropout (inference) is removed by cleanup. The ONNX node tests claim these too.
FOLDED_OPS = ("Shape", "Size", "ConstantOfShape", "Range", "Dropout", "MelWeightMatrix")


def _axes(node, arrays, key="axes"):
    if len(arrays) > 1 and arrays[1] is not None:
        return [int(a) for a in np.asarray(arrays[1]).reshape(-1)]
    v = node.attrs.get(key)
    return None if v is None else [int(a) for a in v]


def _squeeze(node, a):
    axes = _axes(node, a)
    x = a[0]
    if axes is None:
        return x.reshape(tuple(d for d in x.shape if d != 1))
    return np.squeeze(x, axis=tuple(ax % x.ndim for ax in axes)) if axes else x


def _unsqueeze(node, a):
    x = a[0]
    axes = _axes(node, a)
    r = x.ndim + len(axes)
    shape = list(x.shape)
    for ax in sorted(ax % r for ax in axes):
        shape.insert(ax, 1)
    return x.reshape(shape)


def _reshape(node, a):
    x, shp = a[0], [int(d) for d in a[1].reshape(-1)]
    if not node.attrs.get("allowzero", 0):
        shp = [x.shape[i] if d == 0 else d for i, d in enumerate(shp)]
    return x.reshape(shp)


def _cast(node, a):
    dt = np_dtype(int(node.attrs["to"]))
    if dt is None:
        raise ValueError("unsupported Cast target")
    return a[0].astype(dt)


def _div(node, a):
    x, y = a
    if np.issubdtype(x.dtype, np.integer):
        q = np.abs(x) // np.abs(y)
        return (q * np.sign(x) * np.sign(y)).astype(np.result_type(x, y))
    return (x / y).astype(x.dtype)


def _const_of_shape(node, a):
    val = node.attrs.get("value")
    val = np.zeros(1, np.float32) if val is None else np.asarray(val).reshape(-1)
    return np.full(tuple(int(d) for d in a[0].reshape(-1)), val[0], dtype=val.dtype)


def _gather(node, a):
    return np.take(a[0], a[1].astype(np.int64), axis=int(node.attrs.get("axis", 0)))


def _concat(node, a):
    return np.concatenate(a, axis=int(node.attrs.get("axis", 0)))


NUMPY = {
    "Identity": lambda n, a: a[0],
    "Cast": _cast,
    "Squeeze": _squeeze,
    "Unsqueeze": _unsqueeze,
    "Reshape": _reshape,
    "Concat": _concat,
    "Gather": _gather,
    "Add": lambda n, a: np.add(a[0], a[1]).astype(np.result_type(a[0], a[1])),
    "Sub": lambda n, a: np.subtract(a[0], a[1]).astype(np.result_type(a[0], a[1])),
    "Mul": lambda n, a: np.multiply(a[0], a[1]).astype(np.result_type(a[0], a[1])),
    "Div": _div,
    "Equal": lambda n, a: np.equal(a[0], a[1]),
    "Where": lambda n, a: np.where(a[0], a[1], a[2]),
    "ConstantOfShape": _const_of_shape,
    "Transpose": lambda n, a: np.ascontiguousarray(np.transpose(a[0], n.attrs.get("perm"))),
}


def _ref_eval(node, arrays, opset):
    from onnx import helper, reference
    in_names = [f"in{k}" if a is not None else "" for k, a in enumerate(arrays)]
    out_names = [f"out{k}" if o else "" for k, o in enumerate(node.outputs)]
    p = helper.make_node(node.op_type, in_names, out_names, domain=node.domain)
    if node.proto is not None:
        p.attribute.extend(node.proto.attribute)
    else:
        for k, v in node.attrs.items():
            p.attribute.append(helper.make_attribute(k, v))
    ins = [helper.make_tensor_value_info(nm, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
           for nm, a in zip(in_names, arrays) if nm]
    outs = [helper.make_empty_tensor_value_info(nm) for nm in out_names if nm]
    g = helper.make_graph([p], "fold", ins, outs)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    res = reference.ReferenceEvaluator(model).run(None, {nm: a for nm, a in zip(in_names, arrays) if nm})
    it = iter(res)
    return [np.asarray(next(it)) if o else None for o in out_names]


def evaluate(node, arrays, opset) -> list:
    f = NUMPY.get(node.op_type)
    if f is not None and node.domain == "" and len(node.outputs) == 1:
        try:
            return [np.asarray(f(node, arrays))]
        except Exception:  # noqa: BLE001 — fall back to the reference evaluator
            pass
    return _ref_eval(node, arrays, opset)


def _shape_const(node, shape):
    start = int(node.attrs.get("start", 0))
    end = node.attrs.get("end")
    r = len(shape)
    start = min(max(start + r if start < 0 else start, 0), r)
    end = r if end is None else min(max(int(end) + r if int(end) < 0 else int(end), 0), r)
    return np.array(shape[start:end], dtype=np.int64)


def _fold_round(m: ir.Model) -> int:
    done = 0
    keep = []
    for n in m.nodes:
        arrays = [m.const(i) if i else None for i in n.inputs]
        out = None
        if n.domain == "" and n.op_type == "Shape" and m.static_shape(n.inputs[0]) is not None:
            out = [_shape_const(n, m.static_shape(n.inputs[0]))]
        elif n.domain == "" and n.op_type == "Size" and m.static_shape(n.inputs[0]) is not None:
            out = [np.array(int(np.prod(m.static_shape(n.inputs[0]), dtype=np.int64)), dtype=np.int64)]
        elif (n.domain == "" and n.op_type not in NEVER_FOLD and n.inputs
              and all(a is not None or not i for a, i in zip(arrays, n.inputs))
              and not any(a is not None and a.dtype == object for a in arrays)):
            try:
                out = evaluate(n, arrays, m.opset)
            except Exception as e:  # noqa: BLE001
                n.note = f"constant folding failed: {type(e).__name__}: {e}"
        if out is None:
            keep.append(n)
            continue
        for name, arr in zip(n.outputs, out):
            if name and arr is not None:
                m.set_const(name, arr)
        done += 1
    m.nodes = keep
    return done


def _needs_reinfer(m: ir.Model) -> bool:
    for n in m.nodes:
        for i in list(n.inputs) + list(n.outputs):
            if i and m.const(i) is None and not m.values[i].is_static:
                return True
    return False


def reinfer(m: ir.Model) -> None:
    """Run ONNX shape inference again on the current IR (small constants as initializers, large ones as
    typed inputs) and take every shape it knows better."""
    from onnx import helper, numpy_helper
    if any(n.proto is None for n in m.nodes):
        return
    used = {i for n in m.nodes for i in n.inputs if i}
    inits, ins = [], []
    for name in m.inputs:
        v = m.values[name]
        if v.dtype is not None and v.shape is not None:
            ins.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(v.dtype),
                                                     [d if d is not None else None for d in v.shape]))
    for name in sorted(used):
        a = m.const(name)
        if a is None or a.dtype == object:
            continue
        try:
            if a.size <= 4096 or (np.issubdtype(a.dtype, np.integer) and a.size <= 65536):
                inits.append(numpy_helper.from_array(a, name))
            else:
                ins.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape))
        except Exception:  # noqa: BLE001
            return
    nodes = []
    for n in m.nodes:
        p = helper.make_node(n.op_type, n.inputs, n.outputs, name=n.name, domain=n.domain)
        p.attribute.extend(n.proto.attribute)
        nodes.append(p)
    g = helper.make_graph(nodes, "reinfer", ins, [helper.make_empty_tensor_value_info(o) for o in m.outputs],
                          initializer=inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", m.opset)])
    model = infer_shapes(model)
    for vi in list(model.graph.value_info) + list(model.graph.output):
        v = m.values.get(vi.name)
        if v is None or v.const is not None:
            continue
        dt, shp = shape_of(vi.type)
        if v.dtype is None and dt is not None:
            v.dtype = dt
        if shp is not None and (v.shape is None or (not v.is_static and
                                                    sum(d is None for d in shp) < sum(d is None for d in v.shape))):
            v.shape = shp


def fold(m: ir.Model, notes: list) -> None:
    total = 0
    for _ in range(MAX_ROUNDS):
        n = _fold_round(m)
        total += n
        if not n:
            break
        if _needs_reinfer(m):
            reinfer(m)
    if total:
        notes.append(f"folded {total} constant node(s)")
