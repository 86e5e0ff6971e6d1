"""NPU profiles (boards/npu/) and whole models partitioned onto the virtual NPU: every profile agrees with its
vNPU preset; an int8 MobileNetV2 fully offloaded gives the CPU plan's logits exactly (max |delta| = 0); one op
forced onto the CPU mid-network gives exactly two NPU partitions with that one CPU op between them; on every
int8 model of the zoo the partitioned plan's modelled latency is at most the CPU plan's; the CLI compiles,
runs and profiles with --npu."""
import json
import subprocess
import sys

import numpy as np
import pytest

import edgeplan
from edgeplan import vnpu
from edgeplan._cdef import K
from edgeplan.compiler.partition import CPU_MODELS
from edgeplan.compiler.partition.profiles import list_profiles, load_profile
from edgeplan.plan import read_plan
from conftest import zoo


def _int8(name, seed=0, **kw):
    """A zoo model quantised by edgeplan's PTQ, its input name and a calibration set."""
    m = zoo().build(name, **kw)
    x = m.graph.input[0]
    shape = tuple(d.dim_value for d in x.type.tensor_type.shape.dim)
    rng = np.random.default_rng(seed)
    cal = [{x.name: rng.standard_normal(shape).astype(np.float32)} for _ in range(4)]
    return m, x.name, shape, cal


@pytest.fixture(scope="module")
def mobilenet():
    m, name, shape, cal = _int8("mobilenetv2", size=64, width=0.5, num_classes=50)
    cpu = edgeplan.compile(m, quantize="int8", calibration=cal)
    npu = edgeplan.compile(m, quantize="int8", calibration=cal, npu="u55-256-sram")
    return m, name, shape, cal, cpu, npu


def test_every_profile_is_its_vnpu_preset():
    assert len(list_profiles()) >= 6
    for name in list_profiles():
        p = load_profile(name)
        c = vnpu.config(p.preset)
        assert (p.macs_per_cycle, p.clock_mhz, p.sram_kib * 1024, p.sram_mbps, p.ext_mbps) == (
            c.macs_per_cycle, c.clock_mhz, c.sram_bytes, c.sram_mbps, c.ext_mbps), name
        assert p.weights == ("sram" if not c.const_in_ext else "flash" if "u55" in name else "dram"), name
        assert p.cpu in CPU_MODELS and p.sync_us > 0 and p.ops == ("qconv2d", "qgemm", "qadd", "qlut", "maxpool")


def test_mobilenetv2_int8_fully_offloaded_equals_the_cpu_exactly(mobilenet):
    _, name, shape, _, cpu, npu = mobilenet
    rep = npu.report["partitions"]
    assert rep["n_partitions"] == 1
    n_int8 = sum(v for k, v in cpu.report["op_counts"].items() if k in ("qconv2d", "qadd", "qgemm", "qlut"))
    # every int8 conv and add; the classifier's QGEMM sits alone after the float global pooling (one op: CPU)
    assert rep["npu_ops"] == n_int8 - 1
    assert rep["partitioned_us"] < rep["cpu_only_us"]
    dev = vnpu.VirtualNPU("u55-256-sram")
    s, ref = edgeplan.Session(npu, delegates=[dev]), edgeplan.Session(cpu)
    for seed in range(3):
        x = {name: np.random.default_rng(100 + seed).standard_normal(shape).astype(np.float32)}
        a, b = s.run(x), ref.run(x)
        for k in a:
            assert np.abs(a[k] - b[k]).max() == 0.0, k
    part = s.partitions[0]
    assert part["status"] == K.EP_OK and part["delegate_runs"] == 3 and part["cpu_runs"] == 0
    c = dev.counters()
    assert c["ops"] == rep["npu_ops"] and c["mac_ops"] > 0 and c["active_cycles"] >= c["compute_cycles"]
    # without the NPU the same plan runs its CPU ops
    alone = edgeplan.Session(npu)
    x = {name: np.random.default_rng(7).standard_normal(shape).astype(np.float32)}
    np.testing.assert_array_equal(alone.run(x)[k], ref.run(x)[k])
    assert alone.partitions[0]["status"] == K.EP_ERR_NOT_FOUND


def test_a_blob_for_another_device_falls_back_with_the_reason(mobilenet):
    _, name, shape, _, cpu, npu = mobilenet
    s = edgeplan.Session(npu, delegates=[vnpu.VirtualNPU("u55-128-sram")])   # compiled for 256 MACs
    p = s.partitions[0]
    assert p["status"] == K.EP_ERR_DELEGATE_BLOB and "128" in p["reason"] and "256" in p["reason"], p
    x = {name: np.random.default_rng(1).standard_normal(shape).astype(np.float32)}
    k = next(iter(s.outputs)).name
    np.testing.assert_array_equal(s.run(x)[k], edgeplan.Session(cpu).run(x)[k])


def test_one_op_forced_onto_the_cpu_splits_the_network_in_two(mobilenet):
    m, name, shape, cal, cpu, npu = mobilenet
    ops = read_plan(npu.to_bytes())["ops"]
    first = next(i for i, o in enumerate(ops) if o["op"] == "delegate")
    run = ops[first + 1:first + 1 + ops[first]["skip"]]
    middle = [o["name"] for o in run if o["op"] == "qadd"]
    forced = middle[len(middle) // 2]
    split = edgeplan.compile(m, quantize="int8", calibration=cal, npu="u55-256-sram", npu_unsupported=[forced])
    rep = split.report["partitions"]
    assert rep["n_partitions"] == 2
    sops = read_plan(split.to_bytes())["ops"]
    d = [i for i, o in enumerate(sops) if o["op"] == "delegate"]
    end0 = d[0] + sops[d[0]]["skip"]
    between = sops[end0 + 1:d[1]]
    assert [o["name"] for o in between] == [forced] and between[0]["op"] == "qadd"
    placed = [r for r in rep["runs"] if r["placed"]]
    assert sum(r["n_ops"] for r in placed) == rep["npu_ops"] == npu.report["partitions"]["npu_ops"] - 1
    # each side of the split pays its own invoke and reads / writes its boundary through the arena
    assert all(r["npu_us"] > rep["sync_us"] for r in placed)
    assert rep["partitioned_us"] > npu.report["partitions"]["partitioned_us"]
    dev = vnpu.VirtualNPU("u55-256-sram")
    s = edgeplan.Session(split, delegates=[dev])
    x = {name: np.random.default_rng(5).standard_normal(shape).astype(np.float32)}
    k = next(iter(s.outputs)).name
    np.testing.assert_array_equal(s.run(x)[k], edgeplan.Session(cpu).run(x)[k])
    assert [p["delegate_runs"] for p in s.partitions] == [1, 1]


@pytest.mark.parametrize("name, kw", [("tiny", {}), ("resnet50", dict(size=32, num_classes=10)),
                                      ("yolo", dict(size=64, nc=2, width=0.125))])
@pytest.mark.parametrize("profile", ["u55-128-shared", "rk3588-core-like"])
def test_the_partitioned_plan_never_models_slower_than_the_cpu(name, kw, profile):
    m, inp, shape, cal = _int8(name, **kw)
    plan = edgeplan.compile(m, quantize="int8", calibration=cal, npu=profile)
    rep = plan.report["partitions"]
    assert rep["partitioned_us"] <= rep["cpu_only_us"]
    for r in rep["runs"]:
        faster = r["npu_us"] is not None and r["npu_us"] < r["cpu_us"]
        assert faster if r["placed"] else (not faster or "fewer than 2 ops and 1,000,000 MACs" in r["reason"]), r
    s = edgeplan.Session(plan, delegates=[vnpu.VirtualNPU(profile)])
    ref = edgeplan.Session(edgeplan.compile(m, quantize="int8", calibration=cal))
    x = {inp: np.random.default_rng(9).standard_normal(shape).astype(np.float32)}
    a, b = s.run(x), ref.run(x)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


@pytest.mark.slow
def test_a_real_int8_transformer_offloads_its_large_projections():
    """Smart Turn v3.2 (a Whisper-tiny encoder, int8 QDQ, from the pinned real-model suite) on the RK3588-like
    core beside an A76: its QGEMMs are runs of 1 to 3 ops between float attention and norms; the large ones go
    to the NPU, alone or not, and the logits equal the CPU plan's exactly. (Marked slow: two compiles of a
    Whisper-tiny encoder and a functional simulation of its projections.)"""
    from conftest import pinned
    from edgeplan.vnpu import VirtualNPU
    path = str(pinned("smart_turn_v3_2_cpu"))
    shapes = {"input_features": (1, 80, 800)}
    plan = edgeplan.compile(path, shapes=shapes, board="rk3588", npu="rk3588-core-like")
    rep = plan.report["partitions"]
    assert rep["partitioned_us"] < rep["cpu_only_us"]
    singles = [r for r in rep["runs"] if r["placed"] and r["n_ops"] == 1]
    # all but the small classifier head (a 200 us invoke for 5 us of CPU work stays on the CPU)
    assert singles and rep["npu_ops"] >= 0.8 * plan.report["op_counts"]["qgemm"]
    for r in rep["runs"]:
        assert r["placed"] or "fewer than 2 ops" in r["reason"] or r["npu_us"] > r["cpu_us"], r
    s = edgeplan.Session(plan, delegates=[VirtualNPU("rk3588-core-like")])
    ref = edgeplan.Session(edgeplan.compile(path, shapes=shapes, board="rk3588"))
    x = {"input_features": (0.5 * np.random.default_rng(0).standard_normal(shapes["input_features"])).astype(np.float32)}
    a, b = s.run(x), ref.run(x)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    assert all(p["status"] == K.EP_OK and p["delegate_runs"] == 1 for p in s.partitions)


def test_a_float_plan_has_nothing_to_offload():
    plan = edgeplan.compile(zoo().build("tiny"), npu="u55-256-sram")
    rep = plan.report["partitions"]
    assert rep["n_partitions"] == 0 and rep["partitioned_us"] == rep["cpu_only_us"]
    assert any("is not in the profile's ops" in k for k in rep["refused"])


def _cli(*args, check=True):
    r = subprocess.run([sys.executable, "-m", "edgeplan.cli", *args], capture_output=True, text=True)
    if check:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_cli_compile_run_and_profile_with_an_npu(mobilenet, tmp_path):
    import onnx
    m, name, shape, cal, _, _ = mobilenet
    src = tmp_path / "m.onnx"
    onnx.save(m, src)
    (tmp_path / "cal").mkdir()
    for i, c in enumerate(cal):
        np.save(tmp_path / "cal" / f"{i}.npy", c[name])
    out = tmp_path / "m.eplan"
    r = _cli("compile", str(src), "--quantize", "int8", "--calibration", str(tmp_path / "cal"), "--npu",
             "u55-128-shared", "-o", str(out))
    assert "npu placement (u55-128-shared against the cortex-m55 CPU model" in r.stdout
    assert "-> partition 0" in r.stdout
    r = _cli("inspect", str(out))
    assert "partition 0 (EPN1)" in r.stdout
    r = _cli("run", str(out), "--random", "--npu", "u55-128-shared")
    assert "partition 0 (op 1" in r.stdout and "vnpu-u55-128-shared, 1 run(s)" in r.stdout
    assert "cycles in the last execute" in r.stdout
    trace = tmp_path / "t.json"
    r = _cli("profile", str(out), "--npu", "u55-128-shared", "--runs", "2", "--warmup", "0", "--trace", str(trace))
    assert "end to end: CPU ops" in r.stdout and "(modelled)" in r.stdout
    ev = json.loads(trace.read_text())["traceEvents"]
    npu_events = [e for e in ev if e.get("tid") == 1 and e["ph"] == "X"]
    assert len(npu_events) == 2 and all(e["args"]["modelled"] for e in npu_events)
    assert any(e["ph"] == "M" and e["tid"] == 1 and "modelled" in e["args"]["name"] for e in ev)
    r = _cli("run", str(out), "--random")     # no NPU: the CPU ops, and why
    assert "CPU (no delegate for blob kind" in r.stdout


def test_cli_refuses_bad_npu_options(tmp_path):
    import onnx
    src = tmp_path / "t.onnx"
    onnx.save(zoo().build("tiny"), src)
    r = _cli("compile", str(src), "--npu", "no-such-npu", check=False)
    assert r.returncode == 2 and "unknown NPU profile 'no-such-npu'; known: " in r.stderr
    r = _cli("compile", str(src), "--npu-cpu", "x", check=False)
    assert r.returncode != 0 and "add --npu PROFILE" in r.stderr
    plan = tmp_path / "t.eplan"
    _cli("compile", str(src), "-o", str(plan))
    r = _cli("run", str(plan), "--random", "--npu", "u99", check=False)
    assert r.returncode == 2 and "--npu u99" in r.stderr and "traceback" not in r.stderr.lower()
