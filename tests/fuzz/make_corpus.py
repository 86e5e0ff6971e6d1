"""Writes the fuzz targets' seed corpus (tests/fuzz/corpus/<target>/): small compiled zoo plans, alone and as the
members of a shared-arena group, a speech-shaped plan (fused ATTENTION, a 1-D CONV2D POINTWISE over a short
window, a fused layer norm), an inverted-residual block in the channel-blocked layout (REORDER, CONV2D
BLOCKED_PW and BLOCKED_DW, an element-wise op on C8 tensors), a C8 stretch with broadcasting BINARY ops and a
C8 RESIZE, each with a control byte appended (fuzz_plan.c), wav files of every sample width the reader takes (fuzz_wav.c), and small
.npy arrays of float32, int8, int32 and float16 with 1-4 dims (fuzz_npy.c), and the virtual NPU blobs of an int8
plan partitioned for two NPU profiles, one blob per run of ops (conv, depthwise, add + pointwise, gemm), each with
a control byte appended (fuzz_vnpu.c).

    PYTHONPATH=pyapi python3 tests/fuzz/make_corpus.py"""
import io
import struct
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _speech_model():
    """Conv1d over 6 samples (4 outputs: POINTWISE), a layer norm written as ReduceMean / Pow / Sqrt (fused),
    then one attention head over the 4 frames (MatMul, scale, mask, Softmax, MatMul: fused)."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(5)
    f = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)  # noqa: E731
    n = helper.make_node
    nodes = [n("Conv", ["x", "w"], ["c"], kernel_shape=[3], name="conv"),
             n("Transpose", ["c"], ["t"], perm=[0, 2, 1]),
             n("ReduceMean", ["t"], ["mu"], axes=[-1]), n("Sub", ["t", "mu"], ["d"]), n("Pow", ["d", "two"], ["d2"]),
             n("ReduceMean", ["d2"], ["var"], axes=[-1]), n("Add", ["var", "eps"], ["ve"]), n("Sqrt", ["ve"], ["sd"]),
             n("Div", ["d", "sd"], ["h"]),
             n("Transpose", ["h"], ["ht"], perm=[0, 2, 1]), n("MatMul", ["h", "ht"], ["s"]),
             n("Mul", ["s", "scale"], ["ss"]), n("Add", ["ss", "mask"], ["sm"]), n("Softmax", ["sm"], ["p"], axis=-1),
             n("MatMul", ["p", "h"], ["y"])]
    inits = [numpy_helper.from_array(a, k) for k, a in (
        ("w", f(24, 20, 3)), ("two", np.array(2, np.float32)), ("eps", np.array(1e-5, np.float32)),
        ("scale", np.array(0.35, np.float32)), ("mask", np.triu(np.full((4, 4), -1e9, np.float32), 1)))]
    g = helper.make_graph(nodes, "speech", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 20, 6))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _blocked_model():
    """1x1 expand -> Relu -> depthwise 3x3 -> Neg -> 1x1 project + x: every tensor between the two reorders C8."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(6)
    f = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)  # noqa: E731
    n = helper.make_node
    nodes = [n("Conv", ["x", "we"], ["e"], kernel_shape=[1, 1]), n("Relu", ["e"], ["ea"]),
             n("Conv", ["ea", "wd"], ["d"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=16),
             n("Neg", ["d"], ["dn"]), n("Conv", ["dn", "wp"], ["p"], kernel_shape=[1, 1]),
             n("Add", ["p", "x"], ["y"])]
    inits = [numpy_helper.from_array(a, k) for k, a in (("we", f(16, 8, 1, 1)), ("wd", f(16, 1, 3, 3)),
                                                        ("wp", f(8, 16, 1, 1)))]
    g = helper.make_graph(nodes, "blocked", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 8, 5, 6))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _blocked_broadcast_model():
    """depthwise 3x3 -> Relu -> * a per-channel [C,1,1] -> + a scalar -> Resize x2 (nearest) -> 1x1: a C8 BINARY
    broadcasting its constant operands and RESIZE's C8 variant (plan 1.13) between two reorders."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(7)
    f = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)  # noqa: E731
    n = helper.make_node
    nodes = [n("Conv", ["x", "wd"], ["d"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=8), n("Relu", ["d"], ["dr"]),
             n("Mul", ["dr", "k"], ["m"]), n("Add", ["m", "t"], ["a"]), n("Resize", ["a", "", "sc"], ["r"]),
             n("Conv", ["r", "wp"], ["y"], kernel_shape=[1, 1])]
    inits = [numpy_helper.from_array(a, k) for k, a in (
        ("wd", f(8, 1, 3, 3)), ("k", f(8, 1, 1)), ("t", np.array([0.5], np.float32)),
        ("sc", np.array([1, 1, 2, 2], np.float32)), ("wp", f(8, 8, 1, 1)))]
    g = helper.make_graph(nodes, "blocked_bcast", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 8, 3, 4))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _small_c8(model):
    """The model compiled with reorders costed by their bytes only, so that its small maps still go C8."""
    import edgeplan
    from edgeplan.compiler.passes import layout
    kept, layout.REORDER_OP_S = layout.REORDER_OP_S, 0.0
    try:
        return edgeplan.compile(model)
    finally:
        layout.REORDER_OP_S = kept


def plans(out: Path):
    import edgeplan
    from edgeplan import models
    out.mkdir(parents=True, exist_ok=True)
    seeds = {
        "tiny": edgeplan.compile(models.build("tiny", size=16)),
        "kws": edgeplan.compile(models.build("kws", hidden=16), dims={"T": (1, 12)}, state={"h_in": "h_out"}),
        "speech": edgeplan.compile(_speech_model()),
        "blocked": edgeplan.compile(_blocked_model()),
        "blocked-bcast": _small_c8(_blocked_broadcast_model()),
    }
    # the two as members of a shared-arena group (a GROUP record, state in the member's own range)
    group = edgeplan.plan_group([seeds["tiny"], seeds["kws"]], names=["tiny", "kws"])
    seeds.update({f"group-{n}": p for n, p in zip(group.names, group.plans)})
    for name, plan in seeds.items():
        for ctl in (0x00, 0x0d):    # 1 thread, min lengths; 2 threads, profiling, max lengths
            (out / f"{name}-{ctl:02x}.bin").write_bytes(plan.to_bytes() + bytes([ctl]))


def _wav(channels, bits, frames, extensible=False) -> bytes:
    width = bits // 8
    rng = np.random.default_rng(bits * 10 + channels)
    data = rng.integers(0, 256, size=frames * channels * width, dtype=np.uint8).tobytes()
    tag = 0xFFFE if extensible else 1
    fmt = struct.pack("<HHIIHH", tag, channels, 16000, 16000 * channels * width, channels * width, bits)
    if extensible:
        fmt += struct.pack("<HHI", 22, bits, 0) + struct.pack("<H", 1) + bytes(14)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def wavs(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    for ch, bits, ext in ((1, 16, False), (2, 8, False), (1, 24, False), (3, 32, False), (2, 16, True)):
        (out / f"pcm{bits}-{ch}ch{'-ext' if ext else ''}.wav").write_bytes(_wav(ch, bits, 64, ext))


def vnpu_blobs(out: Path):
    """Every EPN-1 blob of the tiny CNN quantised to int8 and compiled with --npu, found by its magic at the
    64-byte-aligned constants of the plan. The profiles' placement thresholds are lowered so that each run of
    supported ops becomes a partition of its own (small, varied seeds)."""
    import dataclasses

    import edgeplan
    from edgeplan import models
    from edgeplan.compiler.partition import profiles
    out.mkdir(parents=True, exist_ok=True)
    load = profiles.load_profile
    profiles.load_profile = lambda name: dataclasses.replace(load(name), min_ops=1, min_macs=0, sync_us=0.0)
    try:
        rng = np.random.default_rng(0)
        cal = [{"x": rng.standard_normal((1, 3, 16, 16)).astype(np.float32)} for _ in range(2)]
        for npu in ("u55-256-sram", "u55-128-shared"):
            plan = edgeplan.compile(models.build("tiny", size=16), quantize="int8", calibration=cal, npu=npu)
            b = plan.to_bytes()
            k = 0
            for at in range(0, len(b) - 64, 64):
                if b[at:at + 4] == b"EPN1":
                    n = struct.unpack_from("<I", b, at + 8)[0]
                    (out / f"tiny-{npu}-{k}.bin").write_bytes(b[at:at + n] + bytes([0x00 if k % 2 else 0x01]))
                    k += 1
            assert k >= 4, f"{npu}: {k} blobs"
    finally:
        profiles.load_profile = load


def npys(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    shapes = {"float32": (5,), "int8": (2, 3), "int32": (2, 2, 3), "float16": (1, 2, 2, 3)}
    for dtype, shape in shapes.items():
        a = (rng.standard_normal(shape) * 50).astype(dtype)
        b = io.BytesIO()
        np.lib.format.write_array(b, a, version=(1, 0))   # fortran_order False: C order
        (out / f"{dtype}-{len(shape)}d.npy").write_bytes(b.getvalue())
    b = io.BytesIO()
    np.lib.format.write_array(b, np.arange(6, dtype=np.float32).reshape(3, 2), version=(2, 0))
    (out / "float32-2d-v2.npy").write_bytes(b.getvalue())


if __name__ == "__main__":
    plans(HERE / "corpus" / "fuzz_plan")
    wavs(HERE / "corpus" / "fuzz_wav")
    npys(HERE / "corpus" / "fuzz_npy")
    vnpu_blobs(HERE / "corpus" / "fuzz_vnpu")
