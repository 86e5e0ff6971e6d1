"""The virtual NPU from Python: real int8 plan ops (QDQ ONNX models compiled by edgeplan) encoded by
compiler/partition/vnpu_encode.py, run as a partition through edgeplan.vnpu.VirtualNPU with results equal to the
CPU's bit for bit, and the cycle model's micro-benchmark classes of NPU.md section 7.1 against Vela 5.2.0.

The micro-benchmarks compare the model's compute cycles plus the fixed per-op overhead with Vela's NPU cycles
(NPU.md's table is Regor's NPU-only split, memory stalls excluded), at the tolerances section 7.1 states."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import edgeplan
from edgeplan import vnpu
from edgeplan._cdef import K
from edgeplan.compiler.frontend import lower
from edgeplan.compiler.graph import Op, Tensor
from edgeplan.compiler.partition.vnpu_encode import encode, supported
from edgeplan.compiler.passes.select import select_kernels
from edgeplan.compiler.pipeline import compile_graph

quantization = pytest.importorskip("onnxruntime.quantization")


class _Reader(quantization.CalibrationDataReader):
    def __init__(self, feeds):
        self.data = iter(feeds)

    def get_next(self):
        return next(self.data, None)


def _quantise(tmp_path, model, shapes: dict, n: int = 4, seed: int = 3) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(model, src)
    Q = quantization
    feeds = [{k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()} for _ in range(n)]
    Q.quantize_static(str(src), str(dst), _Reader(feeds), quant_format=Q.QuantFormat.QDQ, per_channel=True,
                      activation_type=Q.QuantType.QInt8, weight_type=Q.QuantType.QInt8)
    return onnx.load(dst)


def _lowered(model):
    g = lower(model)
    select_kernels(g, None)
    return g


def _boundary(graph, run):
    """The run's inputs and outputs, as the partitioner computes them (compiler/partition.boundary)."""
    from edgeplan.compiler.partition import Run, boundary
    r = Run(list(run), 0)
    boundary(graph, r)
    return r.inputs, r.outputs


def _partitioned(graph, cfg):
    """Every maximal run of ops the vNPU supports becomes a DELEGATE op followed by its CPU ops."""
    ops, k, i = [], 0, 0
    while i < len(graph.ops):
        j = i
        while j < len(graph.ops) and supported(graph.ops[j]) is None:
            j += 1
        if j == i:
            ops.append(graph.ops[i])
            i += 1
            continue
        run = graph.ops[i:j]
        ins, outs = _boundary(graph, run)
        blob, work = encode(run, ins, outs, cfg)
        bt = Tensor(f"npu{k}:blob", np.dtype(np.uint8), (len(blob),), data=np.frombuffer(blob, np.uint8).copy())
        graph.tensors.append(bt)
        ops.append(Op("delegate", [bt] + ins, outs, dict(skip=len(run), kind=K.EP_DELEGATE_KIND_VNPU, partition=k,
                                                          reserved=0), name=f"npu{k}", scratch=work))
        for o in run:
            o.inplace = None
        ops += run
        i, k = j, k + 1
    graph.ops = ops
    return k


def _block_model(seed: int, residual: bool = True) -> onnx.ModelProto:
    """Conv 3x3/s2 -> Relu -> depthwise 3x3 -> HardSwish -> 1x1 conv -> (+ the HardSwish output) -> Flatten ->
    MatMul: QCONV2D (packed and depthwise), QLUT, QADD and QGEMM in one run."""
    rng = np.random.default_rng(seed)
    c = 12
    inits = {"w1": rng.standard_normal((c, 3, 3, 3)) * 0.3, "b1": rng.standard_normal(c) * 0.1,
             "w2": rng.standard_normal((c, 1, 3, 3)) * 0.3, "b2": rng.standard_normal(c) * 0.1,
             "w3": rng.standard_normal((c, c, 1, 1)) * 0.3, "fc": rng.standard_normal((c * 5 * 5, 10)) * 0.05}
    nodes = [h.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], group=c),
             h.make_node("HardSwish", ["c2"], ["a"]), h.make_node("Conv", ["a", "w3"], ["c3"])]
    nodes += [h.make_node("Add", ["c3", "a"], ["s"])] if residual else [h.make_node("Relu", ["c3"], ["s"])]
    nodes += [h.make_node("Flatten", ["s"], ["f"]), h.make_node("MatMul", ["f", "fc"], ["y"])]
    g = h.make_graph(nodes, "block", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 9, 9])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 10])],
                     [nh.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 14)])


def test_presets_and_configs():
    assert vnpu.presets() == ["u55-128-sram", "u55-128-shared", "u55-256-sram", "u55-256-shared",
                              "u65-256-dedicated", "rk3588-core-like"]
    c = vnpu.config({"preset": "u55-128-shared", "ext_mbps": 250})
    assert (c.macs_per_cycle, c.clock_mhz, c.const_in_ext, c.ext_mbps) == (128, 500, 1, 250)
    with pytest.raises(edgeplan.EdgeplanError, match="unknown"):
        vnpu.config("u99")
    with pytest.raises(edgeplan.EdgeplanError):
        vnpu.VirtualNPU({"preset": "u55-256-sram", "macs_per_cycle": 100})


@pytest.mark.parametrize("preset", ["u55-256-sram", "u55-128-shared", "rk3588-core-like"])
def test_partition_runs_on_the_vnpu_bit_exact(tmp_path, preset):
    """The whole int8 body of a small CNN (6 ops) is one partition; the vNPU's outputs equal the CPU ops' (the
    same plan opened without a delegate) bit for bit, and the counters add up."""
    model = _quantise(tmp_path, _block_model(7), {"x": (1, 3, 9, 9)})
    g = _lowered(model)
    kinds = [o.kind for o in g.ops]
    assert {"qconv2d", "qadd", "qlut", "qgemm"} <= set(kinds), kinds
    assert _partitioned(g, preset) == 1
    plan = compile_graph(g)
    npu = vnpu.VirtualNPU(preset)
    s_npu, s_cpu = edgeplan.Session(plan, delegates=[npu]), edgeplan.Session(plan)
    (p,) = s_npu.partitions
    assert p["delegate"] == npu.name and p["status"] == 0, p
    rng = np.random.default_rng(5)
    for r in range(3):
        feeds = {"x": rng.standard_normal((1, 3, 9, 9)).astype(np.float32) * 2}
        got, want = s_npu.run(feeds)["y"], s_cpu.run(feeds)["y"]
        assert np.array_equal(got, want), (got, want)
    (p,) = s_npu.partitions
    assert p["delegate_runs"] == 3 and p["cpu_runs"] == 0, p
    ops = npu.op_cycles()
    assert [o["op"] for o in ops] == ["conv", "dwconv", "lut", "conv", "eltwise", "matmul"], ops
    c = npu.counters()
    assert c["ops"] == 6 and c["active_cycles"] == sum(o["cycles"] for o in ops) and c["executes"] == 1
    assert c["mac_ops"] == 12 * 27 * 25 + 12 * 9 * 25 + 12 * 12 * 25 + 300 * 10
    assert npu.counters(total=True)["executes"] == 3 and npu.counters(total=True)["failures"] == 0
    assert vnpu.estimate(g.ops[[o.kind for o in g.ops].index("delegate")].inputs[0].data.tobytes(),
                         preset)["total"]["active_cycles"] == c["active_cycles"]


def test_refused_blob_falls_back_to_the_cpu(tmp_path):
    """A blob compiled for 256 MACs on a 128-MAC device: init refuses it with the reason, the CPU ops run."""
    model = _quantise(tmp_path, _block_model(8, residual=False), {"x": (1, 3, 9, 9)})
    g = _lowered(model)
    _partitioned(g, "u55-256-sram")
    plan = compile_graph(g)
    s = edgeplan.Session(plan, delegates=[vnpu.VirtualNPU("u55-128-sram")])
    (p,) = s.partitions
    assert p["delegate"] == "" and "128" in p["reason"] and "256" in p["reason"], p
    feeds = {"x": np.ones((1, 3, 9, 9), np.float32)}
    assert np.array_equal(s.run(feeds)["y"], edgeplan.Session(plan).run(feeds)["y"])


def test_supported_reasons(tmp_path):
    model = _quantise(tmp_path, _block_model(9), {"x": (1, 3, 9, 9)})
    g = _lowered(model)
    why = {o.kind: supported(o) for o in g.ops}
    assert why["qconv2d"] is None and why["qgemm"] is None and why["qadd"] is None and why["qlut"] is None
    assert "no vNPU command" in why["quantize"] and "no vNPU command" in why["dequantize"]


# ---------------- micro-benchmarks (NPU.md 7.1) ----------------
def _single(tmp_path, node_fn, shapes, inits):
    nodes, outs = node_fn()
    g = h.make_graph(nodes, "one", [h.make_tensor_value_info(k, T.FLOAT, list(s)) for k, s in shapes.items()],
                     [h.make_tensor_value_info(outs, T.FLOAT, None)],
                     [nh.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()])
    model = _quantise(tmp_path, h.make_model(g, opset_imports=[h.make_opsetid("", 14)]), shapes, n=2)
    gr = _lowered(model)
    run = [o for o in gr.ops if o.kind in ("qconv2d", "qgemm", "qadd")]
    assert len(run) == 1, [o.kind for o in gr.ops]
    return run, *_boundary(gr, run)


def _bench(tmp_path, name):
    rng = np.random.default_rng(1)
    if name == "conv3x3":
        return _single(tmp_path, lambda: ([h.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], "y"),
                       {"x": (1, 64, 56, 56)}, {"w": rng.standard_normal((64, 64, 3, 3)) * 0.05})
    if name == "conv1x1":
        return _single(tmp_path, lambda: ([h.make_node("Conv", ["x", "w"], ["y"])], "y"),
                       {"x": (1, 32, 112, 112)}, {"w": rng.standard_normal((64, 32, 1, 1)) * 0.2})
    if name == "dw3x3s2":
        return _single(tmp_path, lambda: ([h.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2],
                                                       group=96)], "y"),
                       {"x": (1, 96, 112, 112)}, {"w": rng.standard_normal((96, 1, 3, 3)) * 0.3})
    if name == "fc":
        return _single(tmp_path, lambda: ([h.make_node("MatMul", ["x", "w"], ["y"])], "y"),
                       {"x": (1, 1024)}, {"w": rng.standard_normal((1024, 1000)) * 0.03})
    return _single(tmp_path, lambda: ([h.make_node("Add", ["a", "b"], ["y"])], "y"),
                   {"a": (1, 24, 56, 56), "b": (1, 24, 56, 56)}, {})


# layer: (Vela U55-256 Sram_Only NPU cycles, tolerance, MAC-utilisation band or None, expected limiter)
VELA = {"conv3x3": (454_552, 0.05, (0.97, 1.00)), "conv1x1": (202_624, 0.05, (0.48, 0.52)),
        "dw3x3s2": (121_497, 0.10, (0.07, 0.11)), "fc": (132_243, 0.05, None), "add": (56_448, 0.10, None)}


@pytest.mark.parametrize("name", list(VELA))
def test_microbenchmark_cycle_classes(tmp_path, name):
    run, ins, outs = _bench(tmp_path, name)
    vela, tol, util = VELA[name]
    blob, _ = encode(run, ins, outs, "u55-256-sram")
    (op,) = vnpu.estimate(blob, "u55-256-sram")["ops"]
    cycles = op["compute_cycles"] + 300
    assert abs(cycles / vela - 1) <= tol, (name, cycles, vela, cycles / vela)
    if util:
        u = op["mac_ops"] / 256 / cycles
        assert util[0] <= u <= util[1], (name, u)
    assert op["cycles"] >= cycles and op["cycles"] >= op["mac_ops"] / 256
    if name == "fc":   # weight-decoder bound: the same for 64..256 MACs; flash bound in Shared_Sram
        for macs in (64, 128):
            b, _ = encode(run, ins, outs, {"preset": "u55-256-sram", "macs_per_cycle": macs})
            assert vnpu.estimate(b, {"preset": "u55-256-sram", "macs_per_cycle": macs})["ops"][0]["compute_cycles"] \
                == op["compute_cycles"]
        shared = vnpu.estimate(blob, "u55-256-shared")["ops"][0]
        half = vnpu.estimate(blob, {"preset": "u55-256-shared", "ext_mbps": 250})["ops"][0]
        assert shared["limiter"] == "ext" and abs(shared["cycles"] / 958_832 - 1) <= 0.10, shared
        assert abs((half["cycles"] - 300) / (shared["cycles"] - 300) - 2) <= 0.10
    if name == "conv3x3":   # compute bound: 128 -> 256 MACs is 1.9..2.0x; the clock alone changes nothing
        b128, _ = encode(run, ins, outs, "u55-128-sram")
        c128 = vnpu.estimate(b128, "u55-128-sram")["ops"][0]["cycles"]
        assert 1.9 <= c128 / op["cycles"] <= 2.0, (c128, op["cycles"])
        fast = vnpu.estimate(blob, {"preset": "u55-256-sram", "clock_mhz": 250, "sram_mbps": 2000})["ops"][0]
        assert fast["cycles"] == op["cycles"]
    if name == "add":
        assert op["compute_cycles"] == 56 * 56 * 24 * 3 // 4


def _runner():
    import os
    import shutil
    from pathlib import Path
    lib = os.environ.get("EDGEPLAN_LIB")
    p = Path(lib).parent / "edgeplan-run" if lib else None
    return str(p) if p and p.exists() else shutil.which("edgeplan-run")


def test_edgeplan_run_vnpu(tmp_path):
    """edgeplan-run --vnpu PRESET runs the partition on the vNPU and prints its modelled cycles; an unknown preset
    is refused with the list of presets."""
    import subprocess
    exe = _runner()
    if not exe:
        pytest.skip("edgeplan-run not built here")
    model = _quantise(tmp_path, _block_model(10), {"x": (1, 3, 9, 9)})
    g = _lowered(model)
    _partitioned(g, "u55-256-sram")
    compile_graph(g).save(tmp_path / "p.eplan")
    r = subprocess.run([exe, str(tmp_path / "p.eplan"), "--vnpu", "u55-256-sram"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "partition 0 (op 1, 6 CPU ops): vnpu-u55-256-sram" in r.stdout, r.stdout
    npu = vnpu.VirtualNPU("u55-256-sram")
    edgeplan.Session(compile_graph(g), delegates=[npu]).run({"x": np.zeros((1, 3, 9, 9), np.float32)})
    assert f"last run {npu.counters()['active_cycles']} cycles" in r.stdout, r.stdout
    r = subprocess.run([exe, str(tmp_path / "p.eplan"), "--vnpu", "u77"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown vNPU preset 'u77' (u55-128-sram," in r.stderr, r.stderr


def test_record_layouts_are_the_documented_ones():
    """docs/npu.md states these sizes and offsets (the C side asserts the sizes with _Static_assert)."""
    from edgeplan._cdef import ffi
    assert ffi.sizeof("ep_vnpu_header") == K.EP_VNPU_HEADER_BYTES == 64
    assert ffi.sizeof("ep_vnpu_io") == K.EP_VNPU_IO_BYTES == 48
    offs = {f: ffi.offsetof("ep_vnpu_header", f) for f in ("blob_bytes", "crc32c", "macs_per_cycle", "n_regions",
                                                             "io_offset", "cmd_offset", "const_offset", "n_ops")}
    assert offs == dict(blob_bytes=8, crc32c=12, macs_per_cycle=16, n_regions=32, io_offset=40, cmd_offset=44,
                        const_offset=52, n_ops=60), offs


@pytest.fixture(scope="module")
def mobilenetv2_int8():
    """MobileNetV2-1.0-224 (models/, torchvision topology, synthetic weights) quantised by edgeplan's PTQ."""
    from edgeplan.compiler import ptq
    from edgeplan.models.mobilenetv2 import mobilenetv2
    m = mobilenetv2()
    rng = np.random.default_rng(0)
    name = m.graph.input[0].name
    return ptq.quantize(m, [{name: rng.standard_normal((1, 3, 224, 224)).astype(np.float32)} for _ in range(2)]), name


def _network(graph, preset):
    """The vNPU model over every run of supported ops: summed counters."""
    tot: dict = {}
    i = 0
    while i < len(graph.ops):
        j = i
        while j < len(graph.ops) and supported(graph.ops[j]) is None:
            j += 1
        if j > i:
            ins, outs = _boundary(graph, graph.ops[i:j])
            blob, _ = encode(graph.ops[i:j], ins, outs, preset)
            for k, v in vnpu.estimate(blob, preset)["total"].items():
                tot[k] = tot.get(k, 0) + v
        i = max(j, i + 1)
    return tot


def test_mobilenetv2_totals_against_vela(mobilenetv2_int8):
    """NPU.md 7.2-7.5 on MobileNetV2: totals within 15 % of Vela 5.2.0 (U55-128/256, Sram_Only and Shared_Sram),
    the MLEK FVP anchor (7,345,741 active cycles) within 20 % and its AXI1 weight reads (3.46 MB) within 10 %
    (raw int8 weights + 12-byte records: no compression), the SRAM reads within 20 % of 19.7 MB, 128 -> 256 MACs
    1.4-1.8x with SRAM only and <= 1.4x with flash, MAC utilisation 20-45 %, and the RK3588-like preset in
    0.8-3 ms."""
    g = _lowered(mobilenetv2_int8[0])
    vela = {"u55-128-shared": 7_683_366, "u55-256-shared": 5_828_720, "u55-128-sram": 5_824_200,
            "u55-256-sram": 3_678_861}
    tot = {p: _network(g, p) for p in list(vela) + ["rk3588-core-like"]}
    for p, v in vela.items():
        assert abs(tot[p]["active_cycles"] / v - 1) <= 0.15, (p, tot[p]["active_cycles"], v)
    anchor = tot["u55-128-shared"]
    assert abs(anchor["active_cycles"] / 7_345_741 - 1) <= 0.20, anchor
    assert abs(anchor["ext_rd_bytes"] / 3.46e6 - 1) <= 0.10, anchor
    assert abs(anchor["sram_rd_bytes"] / 19.7e6 - 1) <= 0.20, anchor
    s_sram = tot["u55-128-sram"]["active_cycles"] / tot["u55-256-sram"]["active_cycles"]
    s_flash = tot["u55-128-shared"]["active_cycles"] / tot["u55-256-shared"]["active_cycles"]
    assert 1.4 <= s_sram <= 1.8 and s_flash <= 1.4, (s_sram, s_flash)
    util = tot["u55-256-sram"]["mac_ops"] / 256 / tot["u55-256-sram"]["active_cycles"]
    assert 0.20 <= util <= 0.45, util
    assert 0.8 <= tot["rk3588-core-like"]["active_cycles"] / 1000 / 1000 <= 3.0, tot["rk3588-core-like"]


def test_mobilenetv2_on_the_vnpu_is_bit_exact(mobilenetv2_int8):
    """NPU.md 7.6: the whole int8 MobileNetV2 body on the vNPU, logits identical to the CPU's (max |delta| 0)."""
    model, name = mobilenetv2_int8
    g = _lowered(model)
    assert _partitioned(g, "u55-128-shared") >= 1
    plan = compile_graph(g)
    npu = vnpu.VirtualNPU("u55-128-shared")
    s_npu, s_cpu = edgeplan.Session(plan, delegates=[npu]), edgeplan.Session(plan)
    feeds = {name: np.random.default_rng(4).standard_normal((1, 3, 224, 224)).astype(np.float32)}
    got, want = s_npu.run(feeds), s_cpu.run(feeds)
    assert all(p["delegate_runs"] == 1 and p["cpu_runs"] == 0 for p in s_npu.partitions), s_npu.partitions
    for k in want:
        assert np.array_equal(got[k], want[k]) and got[k].argmax() == want[k].argmax()
    assert npu.counters(total=True)["mac_ops"] > 300e6


@pytest.mark.parametrize("pool", [dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
                                  dict(kernel_shape=[2, 3], strides=[2, 1], ceil_mode=1),
                                  dict(kernel_shape=[3, 3], strides=[3, 3], dilations=[2, 1], pads=[2, 0, 1, 1])])
def test_int8_maxpool_runs_on_the_vnpu_bit_exact(tmp_path, pool):
    """MaxPool between int8 convs lowers to CAST (int8 -> f32) -> MAXPOOL -> CAST; the partitioner takes the chain
    whole (vnpu_encode.groups) and the vNPU runs it as one POOL kick, with the plan's outputs equal to the CPU's
    bit for bit (padding, ceil_mode and dilation included). A lone CAST or MAXPOOL is refused."""
    rng = np.random.default_rng(11)
    inits = {"w1": rng.standard_normal((24, 8, 3, 3)) * 0.3, "w2": rng.standard_normal((16, 24, 1, 1)) * 0.3}
    nodes = [h.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]), h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("MaxPool", ["r1"], ["p"], **pool), h.make_node("Conv", ["p", "w2"], ["y"])]
    g = h.make_graph(nodes, "pool", [h.make_tensor_value_info("x", T.FLOAT, [1, 8, 40, 40])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()])
    model = _quantise(tmp_path, h.make_model(g, opset_imports=[h.make_opsetid("", 14)]), {"x": (1, 8, 40, 40)})
    cpu, npu_plan = edgeplan.compile(model), edgeplan.compile(model, npu="u55-256-sram")
    (run,) = [r for r in npu_plan.report["partitions"]["runs"] if r["placed"]]
    assert {"cast", "maxpool", "qconv2d"} <= set(run["kinds"]), run
    dev = vnpu.VirtualNPU("u55-256-sram")
    s, ref = edgeplan.Session(npu_plan, delegates=[dev]), edgeplan.Session(cpu)
    for seed in range(3):
        x = {"x": np.random.default_rng(seed).standard_normal((1, 8, 40, 40)).astype(np.float32)}
        a, b = s.run(x), ref.run(x)
        for k in b:
            assert np.array_equal(a[k], b[k]), k
    assert s.partitions[0]["delegate_runs"] == 3 and s.partitions[0]["cpu_runs"] == 0
    kicks = [o["op"] for o in dev.op_cycles()]
    assert kicks.count("pool") == 1 and "cast" not in kicks, kicks
    assert all(supported(op) for op in _lowered(model).ops if op.kind in ("cast", "maxpool"))
