"""Calibration for post-training quantisation (compiler/ptq.py, compiler/calib_media.py): the MSE clip-search
observer, the range cache, and calibration folders of images or wavs prepared by a recipe."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import wave

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import edgeplan
from edgeplan.compiler import ptq
from edgeplan.compiler.calib_media import read_wav
from edgeplan.compiler.ptq import CalibrationError

from test_int8 import _cnn

Image = pytest.importorskip("PIL.Image")


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EDGEPLAN_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _mse(v, lo, hi):
    return ptq._fake_quant_mse(v.astype(np.float64), lo, hi)


def test_mse_range_clips_outliers_and_beats_the_extremes():
    rng = np.random.default_rng(0)
    v = rng.laplace(0, 1, 200_000)                  # a long tail: the extremes waste codes on rare values
    lo, hi = float(v.min()), float(v.max())
    a, b = ptq.mse_range(v, lo, hi)
    assert lo < a < 0 < b < hi and max(-a, b) < 0.9 * max(-lo, hi), (a, b, lo, hi)
    e = _mse(v, a, b)
    assert e < 0.8 * _mse(v, lo, hi)
    pa, pb = np.percentile(v, 0.01), np.percentile(v, 99.99)
    assert e <= 1.01 * _mse(v, pa, pb)
    # rare huge outliers are kept when clipping them would cost more than the finer step gains
    w = v.copy()
    w[:20] = 40.0 * rng.choice([-1, 1], 20)
    a, b = ptq.mse_range(w, float(w.min()), float(w.max()))
    assert _mse(w, a, b) <= _mse(w, float(w.min()), float(w.max()))
    # a range the data fills uniformly is not clipped: every shrink loses more than it gains
    u = rng.uniform(-3, 5, 100_000)
    a, b = ptq.mse_range(u, -3.0, 5.0)
    assert a <= -2.8 and b >= 4.8, (a, b)
    # an all-positive tensor keeps lo = 0 (zero stays exact)
    a, b = ptq.mse_range(np.abs(v), 0.0, float(np.abs(v).max()))
    assert a == 0.0 and b > 0


def _samples(seed, n, shape=(1, 3, 12, 12)):
    rng = np.random.default_rng(seed)
    return [{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(n)]


def test_ranges_are_cached_by_model_observer_and_inputs(_cache, monkeypatch):
    f = _cnn(5, "relu")
    calls = []
    real = ptq.observe
    monkeypatch.setattr(ptq, "observe", lambda *a, **k: calls.append(1) or real(*a, **k))
    p1 = edgeplan.compile(f, quantize="int8", calibration=_samples(1, 6))
    assert p1.report["calibration"] == {"observer": "percentile", "percentile": 99.99, "samples": 6,
                                        "ranges_cached": False}
    p2 = edgeplan.compile(f, quantize="int8", calibration=_samples(1, 6))
    assert p2.report["calibration"]["ranges_cached"] and len(calls) == 1
    assert p1.to_bytes() == p2.to_bytes()
    # another observer, other inputs, another model: each observed again
    edgeplan.compile(f, quantize="int8", calibration=_samples(1, 6), observer="mse")
    edgeplan.compile(f, quantize="int8", calibration=_samples(2, 6))
    edgeplan.compile(_cnn(6, "relu"), quantize="int8", calibration=_samples(1, 6))
    assert len(calls) == 4
    # a damaged cache file is observed again (and rewritten), never trusted
    files = sorted((_cache / "ranges").glob("*.json"))
    assert len(files) == 4
    for f_ in files:
        f_.write_text('{"x": [1.0, -1.0]')
    p3 = edgeplan.compile(f, quantize="int8", calibration=_samples(1, 6))
    assert not p3.report["calibration"]["ranges_cached"] and p3.to_bytes() == p1.to_bytes()
    for f_ in files:
        f_.write_text(json.dumps({"unrelated": [0.0, 1.0]}))
    assert not edgeplan.compile(f, quantize="int8", calibration=_samples(1, 6)).report["calibration"]["ranges_cached"]


def _png(path, rng, size=(12, 12)):
    a = rng.integers(0, 256, (size[0], size[1], 3), dtype=np.uint8)
    Image.fromarray(a, "RGB").save(path)
    return a


def test_image_folder_with_a_recipe(tmp_path):
    rng = np.random.default_rng(7)
    cal = tmp_path / "img"
    cal.mkdir()
    pix = [_png(cal / f"p{k}.png", rng) for k in range(8)]
    (cal / "preprocess.toml").write_text('[image]\nmean = [0.485, 0.456, 0.406]\nstd = [0.229, 0.224, 0.225]\n'
                                         'color = "BGR"\n')
    inputs = {"x": ((1, 3, 12, 12), np.float32)}
    got = ptq.load_calibration(cal, inputs)
    mean, std = np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32)
    want = ((pix[0][:, :, ::-1].astype(np.float32) * np.float32(1 / 255) - mean) / std).transpose(2, 0, 1)[None]
    assert len(got) == 8 and got[0]["x"].dtype == np.float32
    np.testing.assert_allclose(got[0]["x"], want, rtol=1e-6, atol=1e-6)
    # NHWC inputs, a uint8 model input (no scaling), other sizes by crop and letterbox
    nhwc = ptq.load_calibration(cal, {"x": ((1, 12, 12, 3), np.float32)})[0]["x"]
    np.testing.assert_allclose(nhwc, want.transpose(0, 2, 3, 1), rtol=1e-6, atol=1e-6)
    (cal / "preprocess.toml").unlink()
    u8 = ptq.load_calibration(cal, {"x": ((1, 12, 12, 3), np.uint8)})[0]["x"]
    np.testing.assert_array_equal(u8[0], pix[0])
    big = tmp_path / "big"
    big.mkdir()
    _png(big / "a.png", rng, (40, 20))
    for mode in ("crop", "letterbox", "stretch"):
        r = {"image": {"resize": mode}}
        assert ptq.load_calibration(big, inputs, r)[0]["x"].shape == (1, 3, 12, 12)
    # the whole path: a CNN quantised on the folder
    plan = edgeplan.compile(_cnn(3, "relu"), quantize="int8", calibration=str(cal))
    assert plan.report["calibration"]["samples"] == 8 and plan.report["op_counts"].get("qconv2d") == 3


def _wav(path, x, rate, width=2, channels=1):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels), w.setsampwidth(width), w.setframerate(rate)
        full = 1 << (8 * width - 1)
        q = np.clip(np.round(np.repeat(x, channels) * full), -full, full - 1).astype(np.int64)
        if width == 1:
            w.writeframes((q + 128).astype(np.uint8).tobytes())
        else:
            w.writeframes(b"".join(int(v).to_bytes(width, "little", signed=True) for v in q))


def _speech_model(n=800):
    """[1, n] samples -> framed by a strided Conv1d (10 filters of 80) -> Relu -> MatMul: a toy audio front
    (PTQ quantises the MatMul; 1-D convolutions stay float)."""
    rng = np.random.default_rng(4)
    inits = [nh.from_array((rng.standard_normal((10, 1, 80)) * 0.1).astype(np.float32), "w"),
             nh.from_array((rng.standard_normal((10, 4)) * 0.2).astype(np.float32), "fc"),
             nh.from_array(np.array([1, 1, n], np.int64), "shape3")]
    nodes = [h.make_node("Reshape", ["x", "shape3"], ["x3"]),
             h.make_node("Conv", ["x3", "w"], ["c"], strides=[80]), h.make_node("Relu", ["c"], ["r"]),
             h.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]), h.make_node("MatMul", ["t", "fc"], ["y"])]
    g = h.make_graph(nodes, "audio", [h.make_tensor_value_info("x", T.FLOAT, [1, n])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, n // 80, 4])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def test_wav_folder_with_a_recipe(tmp_path):
    rng = np.random.default_rng(9)
    cal = tmp_path / "wav"
    cal.mkdir()
    x = (0.5 * np.sin(np.arange(600) * 0.05) + 0.05 * rng.standard_normal(600)).astype(np.float32)
    _wav(cal / "a.wav", x, 16000)
    _wav(cal / "b.wav", x[:300], 16000, width=3, channels=2)     # 24-bit stereo, shorter than the input
    _wav(cal / "c.wav", x[:400], 8000, width=1)                   # 8-bit at 8 kHz: resampled to 16 kHz
    (cal / "preprocess.toml").write_text("[audio]\nrate = 16000\n")
    got = ptq.load_calibration(cal, {"x": ((1, 800), np.float32)})
    assert [g["x"].shape for g in got] == [(1, 800)] * 3
    np.testing.assert_allclose(got[0]["x"][0, :600], x, atol=1 / 32768)
    assert np.all(got[0]["x"][0, 600:] == 0)
    np.testing.assert_allclose(got[1]["x"][0, :300], x[:300], atol=1 / (1 << 23) + 1e-7)
    assert np.abs(got[2]["x"][0, :800:2] - x[:400]).max() < 0.05     # 8-bit codes, resampled
    y, rate = read_wav(cal / "c.wav")
    assert rate == 8000 and len(y) == 400
    plan = edgeplan.compile(_speech_model(), quantize="int8", calibration=str(cal))
    assert plan.report["calibration"]["samples"] == 3 and plan.report["op_counts"].get("qgemm") == 1


def test_bad_media_folders_are_refused_by_name(tmp_path):
    rng = np.random.default_rng(1)
    f = _cnn(2, "relu")

    def refused(folder, text, model=f, **kw):
        with pytest.raises(CalibrationError, match=text):
            edgeplan.compile(model, quantize="int8", calibration=str(folder), **kw)

    mixed = tmp_path / "mixed"
    mixed.mkdir()
    _png(mixed / "a.png", rng)
    _wav(mixed / "b.wav", np.zeros(10, np.float32), 16000)
    refused(mixed, "mixes images and wavs")
    img = tmp_path / "img"
    img.mkdir()
    _png(img / "a.png", rng)
    (img / "preprocess.toml").write_text("[image]\nmeen = [0.5]\n")
    refused(img, "unknown key.*meen")
    (img / "preprocess.toml").write_text("[image]\nstd = 0\n")
    refused(img, "std has a zero")
    (img / "preprocess.toml").write_text("[image]\nmean = [1, 2]\n")
    refused(img, "mean has 2 values, the input has 3")
    (img / "preprocess.toml").write_text("[image\n")
    refused(img, "not valid TOML")
    (img / "preprocess.toml").unlink()
    refused(img, "is not valid TOML|does not exist", preprocess=str(tmp_path / "none.toml"))
    (img / "z.jpg").write_bytes(b"not a jpeg")
    refused(img, "z.jpg': cannot read it")
    (img / "z.jpg").unlink()
    refused(img, r"differs from the input's \[H, W\]", preprocess={"image": {"size": [10, 10]}})
    refused(img, "feed a model with one input", model=_two_inputs())
    wav = tmp_path / "wav"
    wav.mkdir()
    (wav / "a.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    refused(wav, "a.wav': cannot read it as PCM wav", model=_speech_model())
    (wav / "a.wav").unlink()
    _wav(wav / "a.wav", np.zeros(0, np.float32), 16000)
    refused(wav, "has no samples", model=_speech_model())
    _wav(wav / "a.wav", np.zeros(100, np.float32), 16000)
    refused(wav, "needs an input of samples", model=f)
    refused(wav, "length 900 differs", model=_speech_model(), preprocess={"audio": {"length": 900}})
    with pytest.raises(CalibrationError, match="recipe prepares calibration images"):
        edgeplan.compile(f, preprocess={"image": {}})
    npy = tmp_path / "npy"
    npy.mkdir()
    np.save(npy / "a.npy", np.zeros((1, 3, 12, 12), np.float32))
    refused(npy, "recipe is for folders of images or wavs", preprocess={"image": {}})


def _two_inputs():
    g = h.make_graph([h.make_node("Add", ["a", "b"], ["c"]), h.make_node("MatMul", ["c", "w"], ["y"])], "two",
                     [h.make_tensor_value_info("a", T.FLOAT, [1, 4]), h.make_tensor_value_info("b", T.FLOAT, [1, 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 2])],
                     [nh.from_array(np.ones((4, 2), np.float32), "w")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def test_cli_calibrates_on_images_with_the_mse_observer(tmp_path):
    rng = np.random.default_rng(2)
    m = tmp_path / "f.onnx"
    onnx.save(_cnn(8, "relu"), m)
    cal = tmp_path / "cal"
    cal.mkdir()
    for k in range(4):
        _png(cal / f"{k}.png", rng, (30, 30))
    recipe = tmp_path / "r.toml"
    recipe.write_text('[image]\nresize = "crop"\n')
    env = {**os.environ, "EDGEPLAN_CACHE": str(tmp_path / "c")}
    cmd = [sys.executable, "-m", "edgeplan.cli", "compile", str(m), "--quantize", "int8", "--calibration", str(cal),
           "--preprocess", str(recipe), "--observer", "mse", "-o", str(tmp_path / "q.eplan")]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "calibration: 4 input(s), mse observer, ranges observed" in r.stdout
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "ranges from the cache" in r.stdout, r.stdout + r.stderr
    r = subprocess.run(cmd[:5] + ["--preprocess", str(recipe)], capture_output=True, text=True, env=env)
    assert r.returncode != 0 and "--preprocess is the recipe" in r.stderr and "Traceback" not in r.stderr
