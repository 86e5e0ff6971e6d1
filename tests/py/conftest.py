import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def meson_cmd() -> list:
    meson = shutil.which("meson")
    return [meson] if meson else [sys.executable, "-m", "mesonbuild.mesonmain"]


@pytest.fixture(scope="session")
def asan_build(tmp_path_factory) -> Path:
    """A board build of the checkout (-Dpython=false) with the C tests, under AddressSanitizer and
    UndefinedBehaviorSanitizer, configured once per session (tests/c: the C suite and the fuzz_plans harness);
    each user builds the targets it runs (`meson test` builds every C test, `ninja ... tests/c/fuzz_plans` one)."""
    build = tmp_path_factory.mktemp("asan") / "build"
    r = subprocess.run(meson_cmd() + ["setup", str(build), str(ROOT), "-Dpython=false", "-Dtests=true",
                                      "--buildtype=debugoptimized", "-Db_sanitize=address,undefined"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return build


def zoo():
    """The model builders, edgeplan.models (the checkout's models/ when edgeplan runs from the checkout)."""
    from edgeplan import models
    return models


def runtime_script(name: str):
    """A build script of runtime_c/ (gen_ops.py, gen_config.py) imported as a module, as meson runs it."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, ROOT / "runtime_c" / f"{name}.py")
    mod = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def rel_err(got, ref) -> float:
    """max |got - ref| / max |ref| (the issue's end-to-end metric)."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    denom = max(float(np.abs(ref).max()) if ref.size else 0.0, 1e-30)
    return float(np.abs(got - ref).max()) / denom if ref.size else 0.0


def pinned(fid: str):
    """The cached copy of a pinned real model ([[model]]: its .onnx) or [[files]] entry (its folder) of
    tests/models/manifest.toml, fetched on demand; skipped when that fails outside CI (failed in CI)."""
    import importlib.util
    import os
    spec = importlib.util.spec_from_file_location("edgeplan_model_fetch", ROOT / "tests" / "models" / "fetch.py")
    fetch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fetch)
    try:
        man = fetch.load_manifest()
    except fetch.FetchError as e:
        pytest.skip(str(e))
    entry = next(x for x in man["models"] + man["files"] if x["id"] == fid)
    cache = fetch.cache_dir()
    if not fetch.is_cached(entry, cache):
        try:
            fetch.fetch([fid], log=lambda *a: None)
        except fetch.FetchError as e:
            if os.environ.get("CI"):
                pytest.fail(str(e))
            pytest.skip(str(e))
    return fetch.files_dir(entry, cache) if "files" in entry else fetch.model_path(entry, cache)


# onnxruntime's integer ops whose x64 kernels multiply u8 x s8 (QOperator and dynamic quantisation)
ORT_INTEGER_OPS = {"QLinearConv", "QLinearMatMul", "MatMulInteger", "ConvInteger", "QGemm", "QLinearAdd", "QLinearMul",
                   "DynamicQuantizeMatMul", "QAttention", "DynamicQuantizeLSTM"}


def ort_session(model, unfused: bool = False, threads: int = 1):
    """An onnxruntime InferenceSession for a reference run (model: a ModelProto or a path).

    On x64 CPUs without VNNI (an AVX2-only EPYC) onnxruntime's u8 x s8 integer kernels sum pairs of products in
    16 bits with VPMADDUBSW, which saturates (onnxruntime#6004), so their results depend on the host; the
    option "session.x64quantprecision" = 1 converts them to exact u8 x u8 kernels (onnxruntime#12088), a graph
    optimisation of level EXTENDED. So a reference run sets it, and an unfused run (ORT_DISABLE_ALL: a QDQ
    model's exact fake-quantised float graph) of a model with integer ops, whose kernels would otherwise run as
    they are, runs at EXTENDED. Where that conversion is refused (onnxruntime has no u8 kernel for an int8
    QLinearConv after it: its s8 x s8 kernels, which do not saturate, then run as they are) the plain options
    are used. On a CPU with VNNI the results are the same either way."""
    import onnx
    import onnxruntime as ort
    m = model if isinstance(model, onnx.ModelProto) else onnx.load(str(model), load_external_data=False)
    data = m.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    integer = bool({n.op_type for n in m.graph.node} & ORT_INTEGER_OPS)

    def options(precise: bool):
        so = ort.SessionOptions()
        so.log_severity_level = 3
        so.intra_op_num_threads = threads
        if precise:
            so.add_session_config_entry("session.x64quantprecision", "1")
        if unfused:
            so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED if precise and integer
                                           else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        return so
    try:
        return ort.InferenceSession(data, options(True), providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - onnxruntime's NotImplemented has no importable base class
        if "NOT_IMPLEMENTED" not in str(e):
            raise
        return ort.InferenceSession(data, options(False), providers=["CPUExecutionProvider"])
