"""The ai.onnx.ml ops of classic scikit-learn exports (compiler/ml.py) against onnxruntime."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import edgeplan
from conftest import rel_err
from edgeplan.compiler.errors import CompileError


def _model(node, x_shape, outputs, default_opset=17):
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", TP.FLOAT, list(x_shape))],
                     [h.make_tensor_value_info(o, t, None) for o, t in outputs])
    ops = [h.make_opsetid("ai.onnx.ml", 1)] + ([h.make_opsetid("", default_opset)] if default_opset else [])
    return h.make_model(g, opset_imports=ops, ir_version=8)


def _check(m, x):
    got = edgeplan.Session(edgeplan.compile(m)).run(x=x)
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for o, r in zip(s.get_outputs(), s.run(None, {"x": x})):
        assert got[o.name].shape == r.shape and got[o.name].dtype == r.dtype, o.name
        if r.dtype.kind == "f":
            assert rel_err(got[o.name], r) < 1e-6, o.name
        else:
            assert np.array_equal(got[o.name], r), o.name


X = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)


@pytest.mark.parametrize("default_opset", [0, 11, 17, 21])
def test_scaler_binarizer_normalizer(default_opset):
    """Also a model that imports only ai.onnx.ml (0), and the old Reduce forms (11)."""
    for node in (h.make_node("Scaler", ["x"], ["y"], domain="ai.onnx.ml", offset=[0.5, -1, 0, 2], scale=[2, 1, 3, 0.5]),
                 h.make_node("Binarizer", ["x"], ["y"], domain="ai.onnx.ml", threshold=0.3),
                 *(h.make_node("Normalizer", ["x"], ["y"], domain="ai.onnx.ml", norm=k) for k in ("MAX", "L1", "L2"))):
        _check(_model(node, (5, 4), [("y", TP.FLOAT)], default_opset), X)


def test_array_feature_extractor():
    idx = h.make_node("Constant", [], ["i"], value=h.make_tensor("v", TP.INT64, [3], [3, 0, 2]))
    g = h.make_graph([idx, h.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml")], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [5, 4])], [h.make_tensor_value_info("y", TP.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("ai.onnx.ml", 1), h.make_opsetid("", 17)], ir_version=8)
    _check(m, X)


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX"])
@pytest.mark.parametrize("classes", [2, 3])
def test_linear_classifier(post, classes):
    rng = np.random.default_rng(classes)
    rows = 1 if classes == 2 else classes   # skl2onnx's binary form: one row, scores [-s, s]
    node = h.make_node("LinearClassifier", ["x"], ["label", "scores"], domain="ai.onnx.ml",
                       coefficients=rng.standard_normal(rows * 4).tolist(), intercepts=rng.standard_normal(rows).tolist(),
                       classlabels_ints=list(range(10, 10 + classes)), post_transform=post)
    _check(_model(node, (5, 4), [("label", TP.INT64), ("scores", TP.FLOAT)]), X)


def test_linear_regressor():
    node = h.make_node("LinearRegressor", ["x"], ["y"], domain="ai.onnx.ml", coefficients=[0.5, -1, 2, 0.25, 1, 1, 0, -3],
                       intercepts=[0.1, -0.2], targets=2)
    _check(_model(node, (5, 4), [("y", TP.FLOAT)]), X)


def test_zipmap_is_refused_with_the_export_option():
    node = h.make_node("ZipMap", ["x"], ["z"], domain="ai.onnx.ml", classlabels_int64s=[0, 1, 2, 3])
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", TP.FLOAT, [5, 4])],
                     [h.make_tensor_value_info("z", TP.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("ai.onnx.ml", 1)], ir_version=8)
    with pytest.raises(CompileError, match=r"node 'ZipMap_0' \(ZipMap\)|node 'ZipMap' \(ZipMap\).*zipmap': False"):
        edgeplan.compile(m)
