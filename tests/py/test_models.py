"""Reference model builders (models/): valid ONNX, runnable by onnxruntime, right shapes, sane and
reproducible outputs. Small input sizes keep the suite fast."""
from __future__ import annotations

import functools
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest

import onnxruntime as ort

ROOT = Path(__file__).resolve().parents[2]
from edgeplan import models  # noqa: E402

MODULE = "edgeplan.models"

# name -> (build kwargs for the tests, input name, expected output shape)
SMALL = {
    "resnet50": ({"size": 64}, "input", [1, 1000]),
    "mobilenetv2": ({"size": 64}, "input", [1, 1000]),
    "yolo": ({"size": 128}, "images", [1, 16 * 16 + 8 * 8 + 4 * 4, 84]),
    "tiny": ({}, "x", [1, 10]),
}


@functools.lru_cache(maxsize=None)
def _model(name: str) -> onnx.ModelProto:
    return models.build(name, **SMALL[name][0])


@functools.lru_cache(maxsize=None)
def _default(name: str):
    t0 = time.perf_counter()
    m = models.build(name)
    return m, time.perf_counter() - t0


def _input(model: onnx.ModelProto, seed: int = 0) -> np.ndarray:
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    return np.random.default_rng(seed).standard_normal(dims).astype(np.float32)


def _run(model: onnx.ModelProto, x: np.ndarray, **so_kw) -> np.ndarray:
    so = ort.SessionOptions()
    for k, v in so_kw.items():
        setattr(so, k, v)
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, {s.get_inputs()[0].name: x})[0]


def test_registry():
    assert models.NAMES[:4] == ["resnet50", "mobilenetv2", "yolo", "tiny"]      # CNNs; speech models follow
    assert {"asr", "kws", "tts_acoustic", "hifigan"} <= set(models.NAMES)
    for n in models.NAMES:
        assert callable(getattr(models, n))
    with pytest.raises(ValueError):
        models.build("vgg16")


@pytest.mark.parametrize("name", list(SMALL))
def test_checker_and_header(name):
    m = _model(name)
    onnx.checker.check_model(m, full_check=True)
    assert m.ir_version == 8
    assert [(o.domain, o.version) for o in m.opset_import] == [("", 17)]
    assert m.graph.input[0].name == SMALL[name][1]
    names = [n.name for n in m.graph.node]
    assert all(names) and len(set(names)) == len(names)
    inits = [t.name for t in m.graph.initializer]
    assert len(set(inits)) == len(inits)


@pytest.mark.parametrize("name", list(SMALL))
def test_runs_shape_and_magnitude(name):
    m = _model(name)
    y = _run(m, _input(m))
    assert list(y.shape) == SMALL[name][2]
    assert np.isfinite(y).all()
    amax = float(np.abs(y).max())
    assert 1e-1 <= amax <= 1e3, amax
    assert float(np.abs(y).mean()) > 1e-3             # not all tiny
    assert float(y.std()) > 1e-3                      # not constant


@pytest.mark.parametrize("name", list(SMALL))
def test_deterministic(name):
    a = models.build(name, **SMALL[name][0]).SerializeToString()
    assert a == _model(name).SerializeToString()
    m = _model(name)
    x = _input(m)
    y1, y2 = _run(m, x), _run(m, x)
    assert y1.tobytes() == y2.tobytes()


def test_weights_do_not_depend_on_size():
    small = {t.name: t.raw_data for t in _model("mobilenetv2").graph.initializer}
    big = {t.name: t.raw_data for t in _default("mobilenetv2")[0].graph.initializer}
    assert small == big


def test_resnet50_default_counts():
    m, _ = _default("resnet50")
    p = models.profile(m)
    assert p["params"] == 25_557_032                  # torchvision resnet50
    assert p["macs"] == 4_089_184_256
    assert sum(n.op_type == "Conv" for n in m.graph.node) == 53
    assert sum(n.op_type == "BatchNormalization" for n in m.graph.node) == 53
    names = {n.name for n in m.graph.node}
    assert {"conv1", "bn1", "maxpool", "layer1.0.conv1", "layer1.0.downsample.0", "layer4.2.bn3",
            "avgpool", "fc"} <= names
    mp = next(n for n in m.graph.node if n.op_type == "MaxPool")
    attrs = {a.name: list(a.ints) for a in mp.attribute if a.ints}
    assert attrs["kernel_shape"] == [3, 3] and attrs["strides"] == [2, 2] and attrs["pads"] == [1] * 4
    y = _run(m, _input(m))
    assert y.shape == (1, 1000) and 1e-1 <= np.abs(y).max() <= 1e3


def test_resnet50_dynamic_batch():
    m = models.build("resnet50", size=64, dynamic_batch=True)
    onnx.checker.check_model(m, full_check=True)
    assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"
    x = np.random.default_rng(1).standard_normal((3, 3, 64, 64)).astype(np.float32)
    y = _run(m, x)
    assert y.shape == (3, 1000)
    y0 = _run(_model("resnet50"), x[:1])
    np.testing.assert_allclose(y[:1], y0, rtol=1e-4, atol=1e-4)


def test_mobilenetv2_topology():
    m = _model("mobilenetv2")
    assert models.profile(m)["params"] == 3_504_872  # torchvision mobilenet_v2
    clips = [n for n in m.graph.node if n.op_type == "Clip"]
    assert len(clips) == 35 and all(len(n.input) == 3 for n in clips)
    consts = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    assert float(consts[clips[0].input[1]]) == 0.0 and float(consts[clips[0].input[2]]) == 6.0
    dw = [n for n in m.graph.node if n.op_type == "Conv" and any(a.name == "group" and a.i > 1 for a in n.attribute)]
    assert len(dw) == 17
    assert sum(n.op_type == "Add" for n in m.graph.node) == 10
    w = models.build("mobilenetv2", size=64, width=0.5)
    y = _run(w, _input(w))
    assert y.shape == (1, 1000)


def test_yolo_topology():
    m = _model("yolo")
    ops = [n.op_type for n in m.graph.node]
    for op in ("Split", "Concat", "Resize", "MaxPool", "Sigmoid", "Mul", "Reshape", "Transpose"):
        assert op in ops, op
    resizes = [n for n in m.graph.node if n.op_type == "Resize"]
    assert len(resizes) == 2
    for r in resizes:
        a = {x.name: x.s.decode() for x in r.attribute if x.s}
        assert a == {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
        assert r.input[1] == "" and len(r.input) == 3
    pools = [n for n in m.graph.node if n.op_type == "MaxPool"]
    assert len(pools) == 3
    for p in pools:
        a = {x.name: list(x.ints) for x in p.attribute if x.ints}
        assert a["kernel_shape"] == [5, 5] and a["strides"] == [1, 1] and a["pads"] == [2] * 4
    assert [p.input[0] for p in pools[1:]] == [p.output[0] for p in pools[:-1]]   # chained
    y = _run(m, _input(m))
    cls = y[..., 4:]
    assert (cls >= 0).all() and (cls <= 1).all()
    assert (y[..., 2:4] > 0).all()                     # widths/heights
    d, _ = _default("yolo")
    assert [x.dim_value for x in d.graph.output[0].type.tensor_type.shape.dim] == [1, 2100, 84]


def test_tiny_topology():
    m = _model("tiny")
    ops = {n.op_type for n in m.graph.node}
    assert {"Conv", "BatchNormalization", "Relu", "MaxPool", "Add", "AveragePool",
            "GlobalAveragePool", "Flatten", "Gemm", "Softmax"} <= ops
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    x = _input(m)
    y = s.run(None, {"x": x})[0]
    np.testing.assert_allclose(y.sum(), 1.0, rtol=1e-5)


def test_cli(tmp_path):
    out = tmp_path / "tiny.onnx"
    env_root = str(ROOT) if MODULE == "models" else None
    r = subprocess.run([sys.executable, "-m", MODULE, "tiny", "-o", str(out), "--size", "16"],
                       cwd=env_root, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    m = onnx.load(str(out))
    onnx.checker.check_model(m, full_check=True)
    assert [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim] == [1, 3, 16, 16]
