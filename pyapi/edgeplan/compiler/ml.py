"""The ai.onnx.ml ops of classic models (scikit-learn exports through skl2onnx), written as default-domain
ONNX ops when the model is read:

  Binarizer              Cast(X > threshold)
  Scaler                 (X - offset) * scale
  Normalizer             X / its norm over axis 1 (unless 0), norm MAX (of the values), L1 or L2, as
                         onnxruntime computes it
  ArrayFeatureExtractor  Gather of the indices on the last axis (a vector gives one row)
  LinearRegressor        X W^T + intercepts (post_transform NONE)
  LinearClassifier       scores X W^T + intercepts, post_transform NONE / LOGISTIC / SOFTMAX, labels the
                         classlabels_ints at the argmax (two classes with one coefficient row, as
                         onnxruntime: the label by the sign of s, scores [1 - p, p] with p = sigmoid(s)
                         under LOGISTIC, else s)

A model that imports only ai.onnx.ml gets the default domain at DEFAULT_OPSET for these. Other ai.onnx.ml ops
(ZipMap's sequence of maps, string labels, trees) are refused with what to do."""
from __future__ import annotations

import numpy as np

DOMAIN = "ai.onnx.ml"
DEFAULT_OPSET = 17


class MLError(Exception):
    pass


def _attr(n, name, default=None):
    from onnx import helper
    for a in n.attribute:
        if a.name == name:
            v = helper.get_attribute_value(a)
            return v.decode() if isinstance(v, bytes) else v
    return default


class _Out:
    """Nodes replacing one ml node: fresh value names under its first output, initializers beside."""

    def __init__(self, n, opset, taken):
        self.n, self.opset, self.taken, self.nodes, self.inits = n, opset, taken, [], []

    def name(self, what):
        base = f"{self.n.output[0]}/{what}"
        name, k = base, 1
        while name in self.taken:
            name, k = f"{base}_{k}", k + 1
        self.taken.add(name)
        return name

    def const(self, what, value):
        from onnx import numpy_helper
        name = self.name(what)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op_type, inputs, out=None, **attrs):
        from onnx import helper
        out = out or self.name(op_type)
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=f"{self.n.name or self.n.op_type}/{op_type}_"
                                           f"{len(self.nodes)}", **attrs))
        return out

    def reduce(self, op_type, x, axes):
        """Reduce* over axes with keepdims, in the form the opset takes (axes an input from 18; 13 for Sum)."""
        if self.opset >= (13 if op_type == "ReduceSum" else 18):
            return self.op(op_type, [x, self.const("axes", np.array(axes, np.int64))], keepdims=1)
        return self.op(op_type, [x], axes=list(axes), keepdims=1)


def _binarizer(b, n):
    t = b.const("threshold", np.array(float(_attr(n, "threshold", 0.0)), np.float32))
    b.op("Cast", [b.op("Greater", [n.input[0], t])], n.output[0], to=1)


def _scaler(b, n):
    off = np.asarray(_attr(n, "offset", [0.0]), np.float32)
    sc = np.asarray(_attr(n, "scale", [1.0]), np.float32)
    b.op("Mul", [b.op("Sub", [n.input[0], b.const("offset", off)]), b.const("scale", sc)], n.output[0])


def _normalizer(b, n):
    norm = _attr(n, "norm", "MAX")
    x = n.input[0]
    if norm == "MAX":   # of the values (onnxruntime), not of their magnitudes
        d = b.reduce("ReduceMax", x, [1])
    elif norm == "L1":
        d = b.reduce("ReduceSum", b.op("Abs", [x]), [1])
    elif norm == "L2":
        d = b.op("Sqrt", [b.reduce("ReduceSum", b.op("Mul", [x, x]), [1])])
    else:
        raise MLError(f"norm '{norm}' is not MAX, L1 or L2")
    zero = b.op("Equal", [d, b.const("zero", np.array(0, np.float32))])
    b.op("Div", [x, b.op("Where", [zero, b.const("one", np.array(1, np.float32)), d])], n.output[0])


def _array_feature_extractor(b, n, shapes):
    x, idx = n.input[0], n.input[1]
    rank = shapes.get(x)
    if rank is None:
        raise MLError(f"the rank of '{x}' is not known (pin the input shapes)")
    flat = b.op("Reshape", [idx, b.const("flat", np.array([-1], np.int64))])
    g = b.op("Gather", [x, flat], axis=rank - 1)
    if rank == 1:   # a vector gives one row
        b.op("Reshape", [g, b.const("row", np.array([1, -1], np.int64))], n.output[0])
    else:
        b.op("Identity", [g], n.output[0])


def _linear(b, n, classifier: bool, shapes):
    coef = np.asarray(_attr(n, "coefficients", []), np.float32)
    inter = np.asarray(_attr(n, "intercepts", []), np.float32)
    x = n.input[0]
    rank = shapes.get(x)
    c = shapes.get(("cols", x))
    if rank != 2 or not c:
        raise MLError(f"'{x}' must be a matrix [N, features] of known width (pin the input shapes)")
    rows = inter.size or (coef.size // c if coef.size % c == 0 else 0)
    if coef.size == 0 or rows == 0 or coef.size != rows * c:
        raise MLError(f"its {coef.size} coefficients are not {rows or '?'} rows (one per intercept) of {c} "
                      f"features (the width of '{x}'); onnxruntime reads a part of them, edgeplan refuses")
    W = coef.reshape(rows, c).T
    post = _attr(n, "post_transform", "NONE")
    if not classifier:
        if post != "NONE":
            raise MLError(f"post_transform '{post}' (NONE only)")
        s = b.op("MatMul", [x, b.const("coef", W)])
        if inter.size:
            s = b.op("Add", [s, b.const("intercepts", inter)])
        b.op("Identity", [s], n.output[0])
        return
    labels = _attr(n, "classlabels_ints")
    if labels is None:
        raise MLError("string class labels (classlabels_strings) are not tensors edgeplan holds; export int labels")
    s = b.op("MatMul", [x, b.const("coef", W)])
    if inter.size:
        s = b.op("Add", [s, b.const("intercepts", inter)])
    if post not in ("NONE", "LOGISTIC", "SOFTMAX"):
        raise MLError(f"post_transform '{post}' (NONE, LOGISTIC or SOFTMAX)")
    if len(labels) != (W.shape[1] if W.shape[1] > 1 else 2):
        raise MLError(f"{len(labels)} class labels for {W.shape[1]} score columns")
    if W.shape[1] == 1:   # binary, as onnxruntime: label by the sign of s; scores [1 - p, p], p = s or sigmoid(s)
        am = b.op("ArgMax", [b.op("Concat", [b.op("Neg", [s]), s], axis=1)], axis=1, keepdims=0)
        p = b.op("Sigmoid", [s]) if post == "LOGISTIC" else s
        s = b.op("Concat", [b.op("Sub", [b.const("one", np.array(1, np.float32)), p]), p], axis=1)
    else:
        if post == "LOGISTIC":
            s = b.op("Sigmoid", [s])
        elif post == "SOFTMAX":
            s = b.op("Softmax", [s], axis=1)
        am = b.op("ArgMax", [s], axis=1, keepdims=0)
    b.op("Gather", [b.const("labels", np.asarray(labels, np.int64)), am], n.output[0], axis=0)
    if len(n.output) > 1 and n.output[1]:
        b.op("Identity", [s], n.output[1])


def _shapes(model) -> dict:
    """rank of each value ('name'), and the width of matrices (('cols', name)), from shape inference."""
    import onnx
    try:
        g = onnx.shape_inference.infer_shapes(model).graph
    except Exception:  # noqa: BLE001
        g = model.graph
    out = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            continue
        dims = vi.type.tensor_type.shape.dim
        out[vi.name] = len(dims)
        if len(dims) == 2 and dims[1].HasField("dim_value"):
            out[("cols", vi.name)] = dims[1].dim_value
    return out


RULES = {"Binarizer": lambda b, n, s: _binarizer(b, n), "Scaler": lambda b, n, s: _scaler(b, n),
         "Normalizer": lambda b, n, s: _normalizer(b, n), "ArrayFeatureExtractor": _array_feature_extractor,
         "LinearRegressor": lambda b, n, s: _linear(b, n, False, s),
         "LinearClassifier": lambda b, n, s: _linear(b, n, True, s)}
ADVICE = {"ZipMap": "its output is a sequence of maps, not a tensor: export the classifier without it (skl2onnx: "
                    "options={id(model): {'zipmap': False}}) and read the probabilities tensor"}


def expand_ml(model, opset: int, problems):
    """model with its ai.onnx.ml nodes written as default-domain ops (a new ModelProto), or model itself
    when it has none; the nodes that cannot be are added to problems (errors.Problems)."""
    import onnx
    from onnx import helper
    from .errors import Problem
    if not any(n.domain == DOMAIN for n in model.graph.node):
        return model
    m = onnx.ModelProto.FromString(model.SerializeToString())
    if not any(o.domain in ("", "ai.onnx") for o in m.opset_import):
        m.opset_import.append(helper.make_opsetid("", opset))
    shapes = _shapes(m)
    g = m.graph
    taken = {vi.name for vi in list(g.input) + list(g.output)} | {t.name for t in g.initializer}
    taken |= {v for n in g.node for v in list(n.input) + list(n.output)}
    out = []
    for n in g.node:
        if n.domain != DOMAIN:
            out.append(n)
            continue
        name = n.name or n.op_type
        if n.op_type not in RULES:
            why = ADVICE.get(n.op_type, "edgeplan reads Binarizer, Scaler, Normalizer, ArrayFeatureExtractor, "
                                        "LinearRegressor and LinearClassifier of ai.onnx.ml")
            problems.append(Problem(name, n.op_type, f"ai.onnx.ml op '{n.op_type}' is unsupported: {why}"))
            out.append(n)
            continue
        b = _Out(n, opset, taken)
        try:
            RULES[n.op_type](b, n, shapes)
        except MLError as e:
            problems.append(Problem(name, n.op_type, str(e)))
            out.append(n)
            continue
        out += b.nodes
        g.initializer.extend(b.inits)
    del g.node[:]
    g.node.extend(out)
    return m
