"""The delegate interface end to end (include/edgeplan/delegate.h, src/partition.c, compiler/partition):
a mock NPU driver library (tests/c/mock_driver.c, compiled here) loaded by the external delegate runs part
of a graph; without it, or when it refuses or fails, the plan's CPU ops compute the same outputs. The mock
computes float32 Relu and Add exactly as the CPU kernels do (one IEEE operation per element), so every
comparison here is bit for bit."""
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import edgeplan
from edgeplan._cdef import K
from edgeplan.compiler.partition import Backend, CpuModel
from edgeplan.compiler.writer import crc32c
from edgeplan.delegates import External
from edgeplan.plan import read_plan

ROOT = Path(__file__).resolve().parents[2]
N = 256
MOCK_MAGIC = 0x4B434F4D
RELU, ADD, ADD_RELU = 1, 2, 3


@pytest.fixture(scope="module")
def mock_lib(tmp_path_factory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("mock") / "libmock_npu.so"
    subprocess.run([cc, "-std=c11", "-O1", "-shared", "-fPIC", "-Wall", "-Werror", "-I", str(ROOT / "runtime_c" / "include"),
                    str(ROOT / "tests" / "c" / "mock_driver.c"), "-o", str(out)], check=True)
    return out


def _model():
    """x, y [1, 256] -> Relu, Add | Neg (CPU only) | Relu, Add+Relu, Add -> out: two runs the mock can take."""
    nodes = [h.make_node("Relu", ["x"], ["r1"], name="relu1"), h.make_node("Add", ["r1", "y"], ["a1"], name="add1"),
             h.make_node("Neg", ["a1"], ["n"], name="neg"), h.make_node("Relu", ["n"], ["r2"], name="relu2"),
             h.make_node("Add", ["r2", "x"], ["a2"], name="add2"), h.make_node("Relu", ["a2"], ["r3"], name="relu3"),
             h.make_node("Add", ["r3", "y"], ["out"], name="add3")]
    vi = [h.make_tensor_value_info(n, T.FLOAT, [1, N]) for n in ("x", "y")]
    g = h.make_graph(nodes, "g", vi, [h.make_tensor_value_info("out", T.FLOAT, [1, N])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _supported(op):
    if op.kind == "unary" and op.params["kind"] == K.EP_ACT_RELU:
        ok = True
    elif op.kind == "binary" and op.params["kind"] == K.EP_BIN_ADD and op.params["act"] in (K.EP_ACT_NONE, K.EP_ACT_RELU):
        ok = all(t is not None and t.shape == op.outputs[0].shape and not t.is_const for t in op.inputs)
    else:
        return f"{op.kind} is not a mock op"
    if not ok or any(np.dtype(t.dtype) != np.float32 for t in op.inputs + op.outputs):
        return "float32 without broadcasting only"
    return None


def _encode(ops, inputs, outputs):
    """The mock's blob: intermediates at 64-byte offsets in the working memory."""
    where = {id(t): (k, 0) for k, t in enumerate(inputs)}
    where.update({id(t): (100 + k, 0) for k, t in enumerate(outputs)})
    work = 0
    steps = []
    for op in ops:
        y = op.outputs[0].storage()
        if id(y) not in where:
            where[id(y)] = (200, work)
            work += -(-y.nbytes // 64) * 64
        a = where[id(op.inputs[0].storage())]
        b = where[id(op.inputs[1].storage())] if op.kind == "binary" else (0, 0)
        code = RELU if op.kind == "unary" else (ADD_RELU if op.params["act"] == K.EP_ACT_RELU else ADD)
        steps.append([code, int(np.prod(y.shape)), *a, *b, *where[id(y)]])
    blob = np.array([MOCK_MAGIC, len(steps)] + [v for s in steps for v in s], dtype="<u4").tobytes()
    return blob, work


MOCK = Backend("mock-npu", K.EP_DELEGATE_KIND_EXTERNAL, _supported, _encode, seconds=lambda blob: 1e-7,
               sync_s=1e-7)
SLOW_CPU = CpuModel("test", f32_gflops=1.0, int8_gops=1.0, mem_gbps=1.0)


def _feeds(seed=0):
    r = np.random.default_rng(seed)
    return {"x": r.standard_normal((1, N)).astype(np.float32), "y": r.standard_normal((1, N)).astype(np.float32)}


@pytest.fixture(scope="module")
def plans():
    from edgeplan.compiler.pipeline import compile_model
    return edgeplan.compile(_model()), compile_model(_model(), npu=(MOCK, SLOW_CPU, frozenset()))


def test_the_partitioner_offloads_the_two_runs_and_keeps_their_cpu_ops(plans):
    cpu, npu = plans
    rep = npu.report["partitions"]
    assert rep["n_partitions"] == 2 and rep["npu_ops"] == 5
    assert [r["placed"] for r in rep["runs"]] == [True, True]
    assert rep["refused"] == {"unary: unary is not a mock op": 1}
    assert rep["partitioned_us"] <= rep["cpu_only_us"]
    ops = [o["op"] for o in read_plan(npu.to_bytes())["ops"]]
    assert ops == ["delegate", "unary", "binary", "unary", "delegate", "unary", "binary", "binary"]
    assert npu.report["n_ops"] == cpu.report["n_ops"] + 2


def test_without_a_delegate_the_cpu_ops_run_and_say_why(plans):
    cpu, npu = plans
    s = edgeplan.Session(npu)
    want = edgeplan.Session(cpu).run(_feeds())["out"]
    np.testing.assert_array_equal(s.run(_feeds())["out"], want)
    parts = s.partitions
    assert [p["status"] for p in parts] == [K.EP_ERR_NOT_FOUND] * 2
    assert "no delegate for blob kind" in parts[0]["reason"] and parts[0]["cpu_runs"] == 1
    assert [p["n_cpu_ops"] for p in parts] == [2, 3]


def test_the_mock_driver_runs_both_partitions_bit_exactly(plans, mock_lib):
    cpu, npu = plans
    drv = External(mock_lib)
    s = edgeplan.Session(npu, delegates=[drv])
    ref = edgeplan.Session(cpu)
    for seed in range(3):
        np.testing.assert_array_equal(s.run(_feeds(seed))["out"], ref.run(_feeds(seed))["out"])
    parts = s.partitions
    assert all(p["status"] == K.EP_OK and p["delegate"] == "mock-npu" for p in parts)
    assert [(p["delegate_runs"], p["cpu_runs"]) for p in parts] == [(3, 0), (3, 0)]
    assert drv.counters() == dict(loads=2, runs=6, failures=0)


def test_a_driver_that_refuses_the_blob_falls_back_with_its_reason(plans, mock_lib):
    cpu, npu = plans
    s = edgeplan.Session(npu, delegates=[External(mock_lib, "fail_load")])
    np.testing.assert_array_equal(s.run(_feeds())["out"], edgeplan.Session(cpu).run(_feeds())["out"])
    for p in s.partitions:
        assert p["status"] == K.EP_ERR_DELEGATE_BLOB and p["reason"] == "mock: refused (fail_load)"
        assert p["delegate"] == "" and p["cpu_runs"] == 1


def test_a_failed_execute_runs_the_cpu_ops_for_that_run(plans, mock_lib):
    cpu, npu = plans
    drv = External(mock_lib, "fail_run=2")
    s = edgeplan.Session(npu, delegates=[drv])
    ref = edgeplan.Session(cpu)
    for seed in range(4):
        np.testing.assert_array_equal(s.run(_feeds(seed))["out"], ref.run(_feeds(seed))["out"])
    for p in s.partitions:
        assert (p["delegate_runs"], p["cpu_runs"]) == (2, 2) and p["last_execute_status"] == K.EP_ERR_DELEGATE
    assert drv.counters()["failures"] == 4


def test_an_op_forced_unsupported_splits_a_run(mock_lib):
    """relu2 kept on the CPU: the second run shrinks to add2 (with relu3 fused) and add3, still two
    partitions of two ops or more; the results are unchanged."""
    from edgeplan.compiler.pipeline import compile_model
    plan = compile_model(_model(), npu=(MOCK, SLOW_CPU, frozenset({"relu2"})))
    rep = plan.report["partitions"]
    assert rep["n_partitions"] == 2
    assert [r["n_ops"] for r in rep["runs"]] == [2, 2]
    s = edgeplan.Session(plan, delegates=[External(mock_lib)])
    np.testing.assert_array_equal(s.run(_feeds())["out"], edgeplan.Session(edgeplan.compile(_model())).run(_feeds())["out"])


def test_a_run_the_npu_would_lose_stays_on_the_cpu():
    from edgeplan.compiler.pipeline import compile_model
    slow = Backend("slow-npu", K.EP_DELEGATE_KIND_EXTERNAL, _supported, _encode, seconds=lambda blob: 1.0)
    plan = compile_model(_model(), npu=(slow, SLOW_CPU, frozenset()))
    rep = plan.report["partitions"]
    assert rep["n_partitions"] == 0 and all("on the NPU" in r["reason"] for r in rep["runs"])
    assert "delegate" not in [o["op"] for o in read_plan(plan.to_bytes())["ops"]]


def _patch_delegate(data: bytes, k: int, **fields) -> bytes:
    """Plan bytes with fields of the k-th DELEGATE op's params changed, the CRC re-sealed."""
    from edgeplan._cdef import ffi
    plan = read_plan(data)
    sec = next(s for s in plan["sections"] if s["kind"] == "ops")
    par = next(s for s in plan["sections"] if s["kind"] == "params")
    buf = bytearray(data)
    recs = [ffi.cast("ep_op_rec *", ffi.from_buffer(buf) + sec["offset"] + i * sec["record_size"])[0]
            for i in range(sec["count"])]
    rec = [r for r in recs if r.opcode == K.EP_OP_DELEGATE][k]
    p = ffi.cast("ep_delegate_params *", ffi.from_buffer(buf) + par["offset"] + rec.params_offset)
    for name, v in fields.items():
        setattr(p, name, v)
    buf[12:16] = b"\0\0\0\0"
    buf[12:16] = crc32c(bytes(buf)).to_bytes(4, "little")
    return bytes(buf)


@pytest.mark.parametrize("fields, why", [
    (dict(skip=0), "inconsistent"), (dict(skip=1000), "CPU ops run past its branch"),
    (dict(skip=5), "control op"), (dict(partition=1), "partition 1 out of range or repeated"),
    (dict(kind=0), "inconsistent"), (dict(reserved=7), "inconsistent")])
def test_a_malformed_partition_is_refused_at_open(plans, fields, why):
    _, npu = plans
    bad = _patch_delegate(npu.to_bytes(), 0, **fields)
    with pytest.raises(edgeplan.EdgeplanError, match=why):
        edgeplan.Session(bad)


def test_the_session_tables_count_the_partitions(plans):
    _, npu = plans
    info = edgeplan.plan.query(npu.to_bytes())
    from edgeplan.runtime import plan_info
    assert plan_info(npu.to_bytes())["arena_bytes"] == info["arena_bytes"]
    assert info["session_bytes"] >= 2 * K.EP_SESSION_PARTITION_BYTES


def test_inspect_shows_the_partitions_and_the_modelled_times(plans):
    _, npu = plans
    text = npu.inspect()
    assert "partition 0 (EEX1), CPU ops 1..2" in text and "partition 1 (EEX1), CPU ops 5..7" in text
    assert "npu placement (mock-npu against the test CPU model" in text
    assert "3 op(s) relu2..add3: NPU 0.2 us" in text and "-> partition 1" in text
    assert "not on the NPU: 1 x unary: unary is not a mock op" in text
