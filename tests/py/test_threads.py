"""The session's worker threads (runtime_c/src/pool.c, docs/performance.md "Threads"):
outputs bit-identical for 1 and N threads on the zoo models, threads started at open and joined at close,
the arena independent of the thread count, and --threads in both command lines."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import edgeplan
from edgeplan import Session
from edgeplan.compiler.pipeline import compile_model

from conftest import zoo

ZOO = [("tiny", {}), ("mobilenetv2", {"size": 64}), ("resnet50", {"size": 64}), ("yolo", {"size": 128})]
NO_AVX2 = 1 << 62   # the reference kernels (single-threaded by design) must not care either


def _n_os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.fixture(scope="module")
def plans():
    return {name: compile_model(zoo().build(name, **kw)) for name, kw in ZOO}


def _feeds(sess, seed=0):
    rng = np.random.default_rng(seed)
    return {t.name: rng.standard_normal(t.shape).astype(t.dtype) for t in sess.inputs}


@pytest.mark.parametrize("name", [n for n, _ in ZOO])
def test_zoo_outputs_bit_identical_for_1_2_3_threads(plans, name):
    plan = plans[name]
    one = Session(plan, threads=1)
    feeds = _feeds(one)
    want = one.run(feeds)
    for n in (2, 3):
        s = Session(plan, threads=n)
        assert s.threads == n
        for _ in range(2):   # and again: the workers sleep or spin between runs
            got = s.run(feeds)
            for k in want:
                assert got[k].tobytes() == want[k].tobytes(), (name, n, k)
        s.close()


def test_reference_kernels_ignore_threads(plans):
    plan = plans["mobilenetv2"]
    a = Session(plan, cpu_features_mask=NO_AVX2)
    b = Session(plan, threads=2, cpu_features_mask=NO_AVX2)
    feeds = _feeds(a, 1)
    for k, v in a.run(feeds).items():
        assert v.tobytes() == b.run(feeds)[k].tobytes()


def test_thread_counts_and_arena(plans):
    plan = plans["tiny"]
    assert Session(plan).threads == 1
    assert Session(plan, threads=0).threads == 1
    assert Session(plan, threads=64).threads == 8          # EP_MAX_THREADS
    with pytest.raises(ValueError):
        Session(plan, threads=-1)
    # the pool is a fixed struct in the session: the arena does not depend on the thread count
    assert Session(plan, threads=4).arena_bytes == Session(plan).arena_bytes


_THREAD_COUNT = """
import os, sys
import numpy as np
from edgeplan import Session
import time
n = lambda: len(os.listdir("/proc/self/task"))
def settled():   # a joined thread's task can linger in /proc a moment after pthread_join returns
    for _ in range(200):
        if n() - base <= 0:
            break
        time.sleep(0.01)
    return n() - base
plan = open(sys.argv[1], "rb").read()
feeds = lambda s: {t.name: np.zeros(t.shape, t.dtype) for t in s.inputs}
base = n()
s = Session(plan, threads=3)
opened = n() - base
s.run(feeds(s))
s.close()
closed = settled()
for _ in range(30):
    with Session(plan, threads=2) as s:
        s.run(feeds(s))
print(opened, closed, settled())
"""


def test_workers_start_at_open_and_join_at_close(plans, tmp_path):
    """Counted in a fresh process: this one's other libraries (onnxruntime's pools) start and stop
    threads of their own."""
    p = tmp_path / "tiny.eplan"
    plans["tiny"].save(p)
    r = subprocess.run([sys.executable, "-c", _THREAD_COUNT, str(p)], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1"))
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["2", "0", "0"], r.stdout    # 2 workers at open, none after close, no leak


def test_depthwise_scratch_has_a_slot_per_thread():
    from edgeplan._cdef import K
    from edgeplan.compiler.frontend import lower
    from edgeplan.compiler.ops import conv
    from edgeplan.compiler.passes import select
    g = lower(zoo().build("mobilenetv2", size=160))
    select.select_kernels(g, "x86-64")
    dw = [op for op in g.ops if op.variant == K.EP_CONV2D_VARIANT_DEPTHWISE]
    c8 = [op for op in g.ops if op.variant == K.EP_CONV2D_VARIANT_DW_C8]
    assert dw and c8
    for op in dw:   # a plane per slot
        oh, ow = op.outputs[0].shape[2:]
        assert op.scratch == conv.conv_dw_scratch(op.params, oh, ow) * min(op.inputs[0].shape[1], 4)
    for op in c8:   # a block of 8 channels per slot
        oh, ow = op.outputs[0].shape[2:]
        assert op.scratch == conv.conv_dwc8_scratch(op.params, oh, ow) * min(-(-op.inputs[0].shape[1] // 8), 4)


def _bin(name):
    p = Path(sys.executable).with_name(name)
    return str(p) if p.exists() else shutil.which(name)


def test_command_lines_take_threads(plans, tmp_path):
    path = tmp_path / "m.eplan"
    plans["mobilenetv2"].save(path)
    s = Session(path)
    x = _feeds(s)[s.inputs[0].name]
    np.save(tmp_path / "x.npy", x)
    want = s.run({s.inputs[0].name: x})[s.outputs[0].name]
    r = subprocess.run([_bin("edgeplan"), "run", str(path), "--input", str(tmp_path / "x.npy"), "--threads", "2",
                        "--output", str(tmp_path / "y_py.npy")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "2 thread(s)" in r.stdout
    r = subprocess.run([_bin("edgeplan-run"), str(path), "--input", str(tmp_path / "x.npy"), "--threads", "2",
                        "--output", str(tmp_path / "y_c.npy"), "--repeat", "3"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "2 threads" in r.stdout
    assert np.load(tmp_path / "y_py.npy").tobytes() == want.tobytes()
    assert np.load(tmp_path / "y_c.npy").tobytes() == want.tobytes()
    r = subprocess.run([_bin("edgeplan-run"), str(path), "--threads", "0"], capture_output=True, text=True)
    assert r.returncode == 2 and "--threads" in r.stderr
