"""Plan mutation under AddressSanitizer + UndefinedBehaviorSanitizer: >= 10,000 truncated, bit-flipped and
field-poked variants of real plans (CRC re-sealed so they reach the deep checks). Each must be rejected
with an error code or open and run; any crash, sanitizer report or hang fails the test.

The harness is tests/c/fuzz_plans.c, built by meson (target fuzz_plans) in the session's
-Db_sanitize=address,undefined build (conftest.asan_build) with every op and variant (-Dkernels=all) and the
host's ISA kernels; UBSAN_OPTIONS=halt_on_error=1 makes the first UBSan report fatal."""
import os
import re
import subprocess

import pytest

import edgeplan
from conftest import zoo

N_MUTATIONS = 12000
SANITIZERS = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1",
              "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def harness(asan_build):
    r = subprocess.run(["ninja", "-C", str(asan_build), "tests/c/fuzz_plans"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    exe = asan_build / "tests" / "c" / "fuzz_plans"
    assert exe.is_file()
    return exe


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    d = tmp_path_factory.mktemp("plans")
    m = zoo()
    paths = []
    # small weights: every mutation copies the whole plan, and weights add bytes, not code paths
    for name, kw in [("tiny", {}), ("mobilenetv2", {"size": 32, "width": 0.25, "num_classes": 10}),
                     ("yolo", {"size": 64, "nc": 2, "width": 0.0625})]:
        p = d / f"{name}.eplan"
        edgeplan.compile(m.build(name, **kw)).save(p)
        paths.append(p)
    # plan 1.1: variable dims with rules, a data-dependent length, streaming state
    from test_dynamic import conv_encoder, detector, gru_stream_model, range_model
    for name, model, kw in [("encoder", conv_encoder(), dict(dims={"T": (1, 64)})),
                            # plan 1.2: stepped input symbols and a rule over two symbols (H x W)
                            ("detector", detector(), dict(dims={"height": (64, 128, 32), "width": (64, 128, 32)})),
                            ("lenreg", range_model(), dict(dims={"N": (1, 8), "frames": (0, 40)})),
                            ("gru_state", gru_stream_model(), dict(dims={"T": (1, 16)}, state={"h_in": "h_out"}))]:
        p = d / f"{name}.eplan"
        edgeplan.compile(model, **kw).save(p)
        paths.append(p)
    from onnx import TensorProto, helper     # plan 1.2: the LRN op
    g = helper.make_graph([helper.make_node("LRN", ["x"], ["y"], size=3)], "lrn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 5, 4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    p = d / "lrn.eplan"
    edgeplan.compile(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])).save(p)
    paths.append(p)
    # plan 1.2: the index and detection ops, two of them with data-dependent lengths (NMS, Compress)
    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    # (the ops that check run-time indices last: a mutated run stops at the first that fails)
    nodes = [helper.make_node("Compress", ["x", "cond"], ["cp"], axis=1),
             helper.make_node("NonMaxSuppression", ["boxes", "scores", "mo", "iou", "st"], ["nms"]),
             helper.make_node("GatherElements", ["x", "gi"], ["ge"], axis=0),
             helper.make_node("ScatterElements", ["x", "si", "su"], ["se"], axis=1, reduction="add"),
             helper.make_node("ReverseSequence", ["x", "lens"], ["rs"], batch_axis=1, time_axis=0)]
    ins = [("x", F, [3, 4]), ("gi", I64, [2, 4]), ("si", I64, [3, 2]), ("su", F, [3, 2]), ("lens", I64, [4]),
           ("boxes", F, [1, 6, 4]), ("scores", F, [1, 2, 6]), ("cond", TensorProto.BOOL, [4])]
    g = helper.make_graph(nodes, "index", [helper.make_tensor_value_info(*i) for i in ins],
                          [helper.make_tensor_value_info(o, t, None) for o, t in (("ge", F), ("se", F), ("rs", F),
                                                                                   ("nms", I64), ("cp", F))],
                          [helper.make_tensor("mo", I64, [1], [3]), helper.make_tensor("iou", F, [1], [0.5]),
                           helper.make_tensor("st", F, [1], [-1.0])])
    p = d / "index.eplan"
    edgeplan.compile(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])).save(p)
    paths.append(p)
    # plan 1.3: the sampling ops (GridSample, RoiAlign with run-time batch indices, DeformConv), integer Pow
    nodes = [helper.make_node("GridSample", ["x4", "grid"], ["gs"], mode="bilinear", padding_mode="reflection"),
             helper.make_node("DeformConv", ["x4", "w", "off"], ["dc"], kernel_shape=[2, 2]),
             helper.make_node("Pow", ["ib", "ie"], ["ip"]),
             helper.make_node("RoiAlign", ["x4", "rois", "bi"], ["ra"], output_height=2, output_width=2)]
    ins = [("x4", F, [2, 2, 4, 4]), ("grid", F, [2, 3, 3, 2]), ("off", F, [2, 8, 3, 3]), ("rois", F, [3, 4]),
           ("bi", I64, [3]), ("ib", I64, [5]), ("ie", I64, [5])]
    g = helper.make_graph(nodes, "sample", [helper.make_tensor_value_info(*i) for i in ins],
                          [helper.make_tensor_value_info(o, t, None) for o, t in (("gs", F), ("dc", F), ("ip", I64),
                                                                                   ("ra", F))],
                          [helper.make_tensor("w", F, [3, 2, 2, 2], [0.1] * 24)])
    p = d / "sample.eplan"
    edgeplan.compile(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])).save(p)
    paths.append(p)
    # plan 1.3: MAXPOOL's INDICES variant, a 3-D pool (two 2-D ones), training BatchNormalization, Unique
    nodes = [helper.make_node("MaxPool", ["x4"], ["mp", "mi"], kernel_shape=[2, 2], strides=[2, 1], storage_order=1),
             helper.make_node("AveragePool", ["x5"], ["ap"], kernel_shape=[2, 2, 2], pads=[1, 0, 1, 0, 1, 1],
                              ceil_mode=1),
             helper.make_node("BatchNormalization", ["x4", "s", "b", "m", "v"], ["bn", "rm", "rv"], training_mode=1),
             helper.make_node("Unique", ["u"], ["uy", "ui", "uv", "uc"], sorted=0)]
    ins = [("x4", F, [2, 2, 4, 4]), ("x5", F, [1, 2, 3, 4, 5]), ("u", I64, [7])]
    g = helper.make_graph(nodes, "pool", [helper.make_tensor_value_info(*i) for i in ins],
                          [helper.make_tensor_value_info(o, t, None) for o, t in (
                              ("mp", F), ("mi", I64), ("ap", F), ("bn", F), ("rm", F), ("rv", F), ("uy", I64),
                              ("ui", I64), ("uv", I64), ("uc", I64))],
                          [helper.make_tensor(k, F, [2], [0.5, 1.5]) for k in "sbmv"])
    p = d / "pool.eplan"
    edgeplan.compile(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])).save(p)
    paths.append(p)
    # plan 1.2: run-time Ifs (IF / ELSE ops), nested
    from test_control_flow import _nested_if
    p = d / "branches.eplan"
    edgeplan.compile(_nested_if()).save(p)
    paths.append(p)
    # plan 1.5: fused inverted-residual blocks (INVRES), with and without the expand stage, several bands
    import dataclasses
    from edgeplan.compiler.pipeline import compile_model
    from edgeplan.compiler.target import get_target
    from test_blocks import _block
    tg = dataclasses.replace(get_target("x86-64"), block_bytes=4096)
    for name, kw in [("invres", dict(c=4, ce=12, m=4, h=9, w=11, res=True)),
                     ("invres_s2", dict(c=6, ce=6, m=5, h=16, w=20, s=2, expand=False))]:
        p = d / f"{name}.eplan"
        plan = compile_model(_block(**kw), target=tg)
        assert plan.report["op_counts"].get("invres") == 1, plan.report["op_counts"]
        plan.save(p)
        paths.append(p)
    # plan 1.6: the int8 ops after post-training quantisation (QUANTIZE, QCONV2D packed and depthwise, QADD, QLUT,
    # QGEMM, DEQUANTIZE): their requantisation tables and biases are constants the shape functions check
    import numpy as np
    from test_quant_import import _float_cnn
    rng = np.random.default_rng(5)
    cnn = _float_cnn(3)
    for n in cnn.graph.node:
        if n.op_type == "Relu" and n.output[0] == "r2":
            n.op_type = "HardSwish"
    plan = edgeplan.compile(cnn, quantize="int8",
                            calibration=[{"x": rng.standard_normal((1, 3, 24, 24)).astype(np.float32)} for _ in range(4)])
    assert {"qconv2d", "qadd", "qlut", "quantize"} <= set(plan.report["op_counts"]), plan.report["op_counts"]
    p = d / "int8.eplan"
    plan.save(p)
    paths.append(p)
    # plan 1.7: 16-bit packed weights (CONV2D PACKED, INVRES, GEMM PACKED): a mutated dtype or extent must
    # be refused by the shape functions
    for fmt in ("fp16", "bf16"):
        plan = edgeplan.compile(_float_cnn(3), quantize=fmt)
        assert plan.report["weights16"]["converted_f32_bytes"] > 0
        p = d / f"{fmt}.eplan"
        plan.save(p)
        paths.append(p)
    # plan 1.8: DELEGATE partitions with their CPU ops (no delegate registered: the CPU ops run)
    from edgeplan.compiler.pipeline import compile_model
    from test_delegate import MOCK, SLOW_CPU, _model
    plan = compile_model(_model(), npu=(MOCK, SLOW_CPU, frozenset()))
    assert plan.report["partitions"]["n_partitions"] == 2
    p = d / "delegate.eplan"
    plan.save(p)
    paths.append(p)
    # plan 1.14: C8 with PAD, the PReLU epilogue and 16-bit weights, an NHWC stem, an int8 state with its reset
    # byte written in place
    from edgeplan.compiler.passes import layout
    from test_blocked_layout import _blaze_block, _nhwc_stem
    from test_dynamic import _int8_ring
    keep, layout.REORDER_OP_S = layout.REORDER_OP_S, 0.0   # small models: let their regions go C8
    try:
        c, (w, b) = 16, (np.float32(0.3), np.float32(0.5))
        prelu = helper.make_graph(
            [helper.make_node("Conv", ["x", "wd"], ["dw"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=c),
             helper.make_node("Conv", ["dw", "wp"], ["pw"], kernel_shape=[1, 1]),
             helper.make_node("PRelu", ["pw", "sl"], ["a"]),
             helper.make_node("Conv", ["a", "wz"], ["y"], kernel_shape=[1, 1])], "prelu",
            [helper.make_tensor_value_info("x", F, [1, c, 6, 6])], [helper.make_tensor_value_info("y", F, None)],
            [helper.make_tensor("wd", F, [c, 1, 3, 3], [w] * (c * 9)), helper.make_tensor("wp", F, [c, c, 1, 1], [b] * c * c),
             helper.make_tensor("sl", F, [c, 1, 1], [0.1 * i for i in range(c)]),
             helper.make_tensor("wz", F, [8, c, 1, 1], [w] * 8 * c)])
        prelu = helper.make_model(prelu, opset_imports=[helper.make_opsetid("", 17)])
        for name, model, kw in [("c8_pad", _blaze_block(hw=6, spatial=True), {}), ("c8_prelu", prelu, {}),
                                ("c8_fp16", prelu, dict(weights="fp16")), ("nhwc_stem", _nhwc_stem(3, (9, 10)), {})]:
            plan = compile_model(model, target="x86-64", **kw)
            assert plan.report["op_counts"].get("conv2d"), plan.report["op_counts"]
            p = d / f"{name}.eplan"
            plan.save(p)
            paths.append(p)
    finally:
        layout.REORDER_OP_S = keep
    plan = compile_model(_int8_ring(), state={"s_in": "s_out"}, hidden_state=("s_out",), state_fill={"s_in": 0x80})
    p = d / "int8_state.eplan"
    plan.save(p)
    paths.append(p)
    # plan 1.15: Winograd F(m, r) along W, dilated, with a residual
    c = 64
    wino = helper.make_graph(
        [helper.make_node("Conv", ["x", "w5"], ["a"], kernel_shape=[1, 5], pads=[0, 4, 0, 4], dilations=[1, 2]),
         helper.make_node("Add", ["a", "x"], ["y"])], "wino1d",
        [helper.make_tensor_value_info("x", F, [1, c, 1, 40])], [helper.make_tensor_value_info("y", F, None)],
        [helper.make_tensor("w5", F, [c, c, 1, 5], list(np.linspace(-0.1, 0.1, c * c * 5)))])
    plan = compile_model(helper.make_model(wino, opset_imports=[helper.make_opsetid("", 17)]), target="x86-64")
    assert plan.report["op_counts"].get("conv2d") == 1 and int.from_bytes(plan.data[6:8], "little") == 15
    p = d / "winograd1d.eplan"
    plan.save(p)
    paths.append(p)
    # plan 1.16: a tied token table in float16, read by GATHER (then CAST) and by GEMM ROWS
    from edgeplan.compiler.ops import linear
    from test_weights16 import _tied_model
    emb = np.linspace(-1, 1, 61 * 20, dtype=np.float32).reshape(61, 20)
    keep, linear.ROWS_MIN_BYTES = linear.ROWS_MIN_BYTES, 0      # a small table: let it take ROWS
    try:
        plan = compile_model(_tied_model(emb), weights="fp16")
    finally:
        linear.ROWS_MIN_BYTES = keep
    assert int.from_bytes(plan.data[6:8], "little") == 16, plan.report["op_counts"]
    p = d / "rows16.eplan"
    plan.save(p)
    paths.append(p)
    return paths


def test_mutated_plans_never_crash(harness, plans):
    # tiny twice: half the mutations on the cheapest plan, the rest on the two op-rich ones
    r = subprocess.run([str(harness), str(N_MUTATIONS), "20261129", str(plans[0]), *map(str, plans)],
                       capture_output=True,
                       text=True, timeout=1200, env=dict(os.environ, **SANITIZERS))
    print(r.stdout, r.stderr[-3000:])
    assert r.returncode == 0, r.stderr[-3000:]
    m = re.search(r"(\d+) mutated plans: (\d+) rejected by validate, (\d+) rejected at open, (\d+) opened and ran", r.stdout)
    assert m, r.stdout
    total, q, o, ran = map(int, m.groups())
    assert total >= 10000
    # the mutations must reach every layer: container checks, open-time op checks, and kernels
    assert q > 1000 and o > 500 and ran > 100, r.stdout


def test_real_plans_run_clean_under_sanitizers(harness, plans):
    r = subprocess.run([str(harness), "0", "0", *map(str, plans)], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, **SANITIZERS))
    print(r.stdout, r.stderr[-3000:])
    assert r.returncode == 0 and r.stdout.count(": ok") == len(plans)
