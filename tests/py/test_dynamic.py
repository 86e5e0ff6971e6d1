"""Variable-length inputs, data-dependent lengths and streaming state (plan 1.1; compiler/dynamic.py,
runtime_c/src/shapes_run.c): one plan at every length up to its bound, checked against onnxruntime."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import edgeplan
from conftest import rel_err
from edgeplan import EdgeplanError
from edgeplan._cdef import K
from edgeplan.compiler.errors import CompileError


def make(nodes, inputs, outputs, inits=(), value_info=()):
    g = h.make_graph(nodes, "g", inputs, outputs, [nh.from_array(v, k) for k, v in dict(inits).items()],
                     value_info=list(value_info))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def ort_run(model, feeds):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def same(got: dict, ref: list, tol=1e-5):
    assert len(got) == len(ref)
    for (name, y), r in zip(got.items(), ref):
        assert y.shape == r.shape, (name, y.shape, r.shape)
        if r.dtype.kind == "f":
            assert rel_err(y, r) <= tol, (name, rel_err(y, r))
        else:
            np.testing.assert_array_equal(y, r, err_msg=name)


def conv_encoder():
    """Conv1d subsampling (4x), transpose, 0/-1 reshapes, matmul, softmax, time-mean: T -> (T+3)//4."""
    rng = np.random.default_rng(0)
    inits = {"W1": rng.standard_normal((16, 8, 3)).astype(np.float32) * 0.3,
             "W2": rng.standard_normal((16, 16, 3)).astype(np.float32) * 0.3,
             "Wl": rng.standard_normal((16, 5)).astype(np.float32),
             "shp": np.array([1, -1, 4, 4], np.int64), "shp2": np.array([0, 0, 16], np.int64)}
    nodes = [
        h.make_node("Conv", ["x", "W1"], ["c1"], kernel_shape=[3], pads=[1, 1], strides=[2], name="conv1"),
        h.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        h.make_node("Conv", ["r1", "W2"], ["c2"], kernel_shape=[3], pads=[1, 1], strides=[2], name="conv2"),
        h.make_node("Transpose", ["c2"], ["t"], perm=[0, 2, 1], name="tr"),
        h.make_node("Reshape", ["t", "shp"], ["t4"], name="resh"),
        h.make_node("Reshape", ["t4", "shp2"], ["t3"], name="resh2"),
        h.make_node("MatMul", ["t3", "Wl"], ["y0"], name="mm"),
        h.make_node("Softmax", ["y0"], ["y"], axis=-1, name="sm"),
        h.make_node("ReduceMean", ["t3"], ["m"], axes=[1], keepdims=1, name="rm"),
    ]
    return make(nodes, [h.make_tensor_value_info("x", TP.FLOAT, [1, 8, "T"])],
                [h.make_tensor_value_info("y", TP.FLOAT, [1, "F", 5]),
                 h.make_tensor_value_info("m", TP.FLOAT, [1, 1, 16])], inits)


@pytest.fixture(scope="module")
def encoder():
    m = conv_encoder()
    return m, edgeplan.compile(m, dims={"T": (1, 1000)})


def test_one_plan_serves_every_length(encoder):
    m, plan = encoder
    s = edgeplan.Session(plan)
    rng = np.random.default_rng(1)
    for T in (1, 2, 3, 4, 5, 17, 64, 999, 1000, 7, 1):   # shrinking again after long runs too
        x = rng.standard_normal((1, 8, T)).astype(np.float32)
        got = s.run({"x": x})
        same(got, ort_run(m, {"x": x}))
        assert got["y"].shape == (1, (T + 3) // 4, 5)
        assert s.outputs[0].shape == (1, (T + 3) // 4, 5)


def test_the_arena_is_planned_for_the_bound(encoder):
    m, plan = encoder
    fixed = edgeplan.compile(m, shapes={"x": (1, 8, 1000)})
    assert plan.report["planned_bytes"] == fixed.report["planned_bytes"]
    assert plan.report["symbols"][0] == ("T", 1, 1000)
    s = edgeplan.Session(plan)
    x = s.inputs[0]
    assert x.dim_names == (None, None, "T") and x.min_shape == (1, 8, 1) and x.max_shape == (1, 8, 1000)
    assert s.outputs[0].dim_names[1] == "((T+1)//2+1)//2"     # conv2 of conv1's length


def test_inspect_says_what_lengths_the_plan_serves(encoder):
    _, plan = encoder
    text = plan.inspect()
    assert "T=1..1000" in text and "variable" in text


def test_a_length_past_the_bound_is_a_clear_error(encoder):
    _, plan = encoder
    s = edgeplan.Session(plan)
    with pytest.raises(ValueError, match=r"expects shape \[1, 8, T=1\.\.1000\], got \[1, 8, 1001\]"):
        s.run({"x": np.zeros((1, 8, 1001), np.float32)})
    with pytest.raises(ValueError, match="got \\[1, 8, 0\\]"):
        s.run({"x": np.zeros((1, 8, 0), np.float32)})
    # the C API says EP_ERR_RUN_BOUND and leaves the shape unchanged
    lib = edgeplan.runtime.load_library()
    from edgeplan._cdef import ffi
    dims = ffi.new("int32_t[]", [1, 8, 1001])
    assert lib.ep_session_set_input_shape(s._s, 0, dims, 3) == K.EP_ERR_RUN_BOUND
    dims = ffi.new("int32_t[]", [1, 9, 10])
    assert lib.ep_session_set_input_shape(s._s, 0, dims, 3) == K.EP_ERR_SIZE
    assert lib.ep_session_set_input_shape(s._s, 0, dims, 2) == K.EP_ERR_SIZE
    assert s._desc(0, False).shape == (1, 8, 1000)


def test_fixed_dims_stay_fixed():
    with pytest.raises(CompileError, match="'nope', which is neither an input dim"):
        edgeplan.compile(conv_encoder(), dims={"T": (1, 100), "nope": (1, 5)})
    with pytest.raises(CompileError, match="at the minimum \\(T=0\\)"):
        edgeplan.compile(conv_encoder(), dims={"T": (0, 100)})


def test_a_model_that_is_not_length_generic_is_named():
    # padding every input to 64 frames: the pad amount is computed from the input's shape, so the pad
    # op's parameters change with T. Up to 64 frames that is the pad to a multiple of 64 (PAD's to-multiple
    # bits, plan 1.8), which runs; past 64 the pad crops, which no fixed op list expresses
    nodes = [h.make_node("Shape", ["x"], ["s"], start=1, end=2, name="shape"),
             h.make_node("Sub", ["n64", "s"], ["p"], name="sub"),
             h.make_node("Concat", ["zeros", "p"], ["pads"], axis=0, name="cat"),
             h.make_node("Pad", ["x", "pads"], ["y"], name="pad")]
    m = make(nodes, [h.make_tensor_value_info("x", TP.FLOAT, [1, "T"])], [h.make_tensor_value_info("y", TP.FLOAT, None)],
             {"n64": np.array([64], np.int64), "zeros": np.array([0, 0, 0], np.int64)})
    with pytest.raises(CompileError, match="not length-generic: node 'pad' \\(pad\\): parameter\\(s\\) pads change"):
        edgeplan.compile(m, dims={"T": (1, 100)})
    s = edgeplan.Session(edgeplan.compile(m, dims={"T": (1, 64)}))
    for T in (1, 30, 63, 64):
        x = np.arange(T, dtype=np.float32)[None]
        same(s.run({"x": x}), ort_run(m, {"x": x}))
    plan = edgeplan.compile(m, shapes={"x": (1, 50)})     # a fixed length still compiles
    x = np.arange(50, dtype=np.float32)[None]
    same(edgeplan.Session(plan).run({"x": x}), ort_run(m, {"x": x}))


def range_model():
    """Length regulation as TTS exports it: frames = Range(0, sum(durations)); each frame's token."""
    nodes = [
        h.make_node("CumSum", ["d", "ax0"], ["cum"], name="cumsum"),
        h.make_node("Cast", ["d"], ["df"], to=TP.FLOAT, name="castd"),
        h.make_node("ReduceSum", ["df"], ["totalf"], keepdims=0, name="total"),
        h.make_node("Cast", ["totalf"], ["total"], to=TP.INT64, name="castt"),
        h.make_node("Range", ["zero", "total", "one"], ["frames"], name="range"),
        h.make_node("Unsqueeze", ["frames", "ax1"], ["f2"], name="unsq"),
        h.make_node("GreaterOrEqual", ["f2", "cum"], ["ge"], name="ge"),
        h.make_node("Cast", ["ge"], ["gef"], to=TP.FLOAT, name="cast"),
        h.make_node("ReduceSum", ["gef", "ax1"], ["idxf"], keepdims=0, name="count"),
        h.make_node("Cast", ["idxf"], ["idx"], to=TP.INT64, name="cast2"),
        h.make_node("Gather", ["emb", "idx"], ["y"], axis=0, name="gather"),
    ]
    inits = {"ax0": np.array(0, np.int64), "ax1": np.array([1], np.int64), "zero": np.array(0, np.int64),
             "one": np.array(1, np.int64), "emb": np.arange(24, dtype=np.float32).reshape(8, 3)}
    return make(nodes, [h.make_tensor_value_info("d", TP.INT64, ["N"])],
                [h.make_tensor_value_info("y", TP.FLOAT, ["frames", 3])], inits,
                [h.make_tensor_value_info("frames", TP.INT64, ["frames"])])


def test_data_dependent_length_regulation():
    m = range_model()
    with pytest.raises(CompileError, match="output 'frames' depends on the data.*--dim frames=0..MAX"):
        edgeplan.compile(m, dims={"N": (1, 8)})
    plan = edgeplan.compile(m, dims={"N": (1, 8), "frames": (0, 40)})
    s = edgeplan.Session(plan)
    for d in ([1], [3, 1, 2], [5, 5, 5, 5, 5, 5, 5, 5], [0, 2], [4, 0, 0, 1, 2]):
        d = np.array(d, np.int64)
        got = s.run({"d": d})
        same(got, ort_run(m, {"d": d}))
        assert got["y"].shape == (int(d.sum()), 3)
    with pytest.raises(EdgeplanError, match="exceeds|bound") as e:
        s.run({"d": np.array([6] * 7, np.int64)})   # 42 frames > 40
    assert e.value.status == K.EP_ERR_RUN_BOUND
    same(s.run({"d": np.array([2, 2], np.int64)}), ort_run(m, {"d": np.array([2, 2], np.int64)}))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_nonzero(dtype):
    rng = np.random.default_rng(3)
    x = (rng.random((3, 4, 5)) < 0.3).astype(dtype)
    m = make([h.make_node("NonZero", ["x"], ["y"], name="nz")],
             [h.make_tensor_value_info("x", h.np_dtype_to_tensor_dtype(np.dtype(dtype)), x.shape)],
             [h.make_tensor_value_info("y", TP.INT64, None)])
    s = edgeplan.Session(edgeplan.compile(m))     # bounded by the element count without dims
    for x in (x, np.zeros_like(x), np.ones_like(x), x[::-1].copy()):
        same(s.run({"x": x}), ort_run(m, {"x": x}))


def test_a_data_dependent_length_reaches_ops_through_views():
    """NonZero -> Squeeze (a view) -> Cast -> Mul, without dims=: every tensor after the NonZero runs at its
    length (this plan used to give the Mul's full capacity, zeros past the real length)."""
    m = make([h.make_node("NonZero", ["x"], ["nz"]), h.make_node("Squeeze", ["nz", "ax"], ["sq"]),
              h.make_node("Cast", ["sq"], ["f"], to=TP.FLOAT), h.make_node("Mul", ["f", "two"], ["y"])],
             [h.make_tensor_value_info("x", TP.FLOAT, [6])], [h.make_tensor_value_info("y", TP.FLOAT, None)],
             {"ax": np.array([0], np.int64), "two": np.array(2, np.float32)})
    s = edgeplan.Session(edgeplan.compile(m))
    for x in ([0, 1, 0, 2, 3, 0], [1, 1, 1, 1, 1, 1], [0] * 6):
        x = np.array(x, np.float32)
        same(s.run({"x": x}), ort_run(m, {"x": x}))


def test_range_float_and_int32():
    for dt, vals in ((np.float32, (0.5, 4.2, 0.5)), (np.int32, (10, -3, -3)), (np.int64, (5, 5, 1))):
        tp = h.np_dtype_to_tensor_dtype(np.dtype(dt))
        m = make([h.make_node("Range", ["a", "b", "c"], ["y"], name="r")],
                 [h.make_tensor_value_info(k, tp, []) for k in "abc"], [h.make_tensor_value_info("y", tp, ["n"])])
        s = edgeplan.Session(edgeplan.compile(m, dims={"y": (0, 16)}))
        feeds = {k: np.array(v, dt) for k, v in zip("abc", vals)}
        same(s.run(feeds), ort_run(m, feeds))
        with pytest.raises(EdgeplanError) as e:
            s.run(dict(feeds, c=np.array(0, dt)))
        assert e.value.status == K.EP_ERR_RUN_INDEX


def gru_stream_model(H=6, I=4):
    rng = np.random.default_rng(5)
    inits = {"W": rng.standard_normal((1, 3 * H, I)).astype(np.float32) * 0.5,
             "R": rng.standard_normal((1, 3 * H, H)).astype(np.float32) * 0.5,
             "B": rng.standard_normal((1, 6 * H)).astype(np.float32) * 0.1}
    nodes = [h.make_node("GRU", ["x", "W", "R", "B", "", "h_in"], ["y", "h_out"], hidden_size=H, name="gru")]
    return make(nodes, [h.make_tensor_value_info("x", TP.FLOAT, ["T", 1, I]),
                        h.make_tensor_value_info("h_in", TP.FLOAT, [1, 1, H])],
                [h.make_tensor_value_info("y", TP.FLOAT, ["T", 1, 1, H]),
                 h.make_tensor_value_info("h_out", TP.FLOAT, [1, 1, H])], inits)


def test_streaming_state_chunk_by_chunk_equals_whole_sequence():
    m = gru_stream_model()
    plan = edgeplan.compile(m, dims={"T": (1, 64)}, state={"h_in": "h_out"})
    assert plan.report["state"] == ["h_in"]
    s = edgeplan.Session(plan)
    assert [t.name for t in s.inputs] == ["x"]
    rng = np.random.default_rng(6)
    x = rng.standard_normal((100, 1, 4)).astype(np.float32)
    ref = ort_run(m, {"x": x, "h_in": np.zeros((1, 1, 6), np.float32)})
    for chunks in ([100], [1] * 10 + [90], [7, 50, 43], [64, 36]):
        if max(chunks) > 64:
            continue
        s.reset()
        ys, t = [], 0
        for c in chunks:
            out = s.run({"x": x[t:t + c]})
            ys.append(out["y"])
            t += c
        assert rel_err(np.concatenate(ys), ref[0]) <= 1e-5
        assert rel_err(out["h_out"], ref[1]) <= 1e-5
    # without reset the state carries on: the next chunk continues from h_out
    s.reset()
    s.run({"x": x[:10]})
    a = s.run({"x": x[10:20]})["y"]
    s.reset()
    b = s.run({"x": x[10:20]})["y"]
    assert not np.allclose(a, b)
    assert rel_err(b, ort_run(m, {"x": x[10:20], "h_in": np.zeros((1, 1, 6), np.float32)})[0]) <= 1e-5


def test_state_errors_are_named():
    with pytest.raises(CompileError, match="need a graph input 'h' and a graph output 'h_out'"):
        edgeplan.compile(gru_stream_model(), dims={"T": (1, 8)}, state={"h": "h_out"})
    with pytest.raises(CompileError, match="same shape and dtype"):
        edgeplan.compile(gru_stream_model(), dims={"T": (1, 8)}, state={"h_in": "y"})


def _int8_ring(n=4):
    """An int8 ring buffer: y = the state with the new code appended; the state keeps the last n codes."""
    nodes = [h.make_node("Concat", ["s_in", "x"], ["y"], axis=1, name="cat"),
             h.make_node("Slice", ["y", "one", "end", "ax1"], ["s_out"], name="keep")]
    return make(nodes, [h.make_tensor_value_info("s_in", TP.INT8, [1, n]), h.make_tensor_value_info("x", TP.INT8, [1, 1])],
                [h.make_tensor_value_info("y", TP.INT8, [1, n + 1]), h.make_tensor_value_info("s_out", TP.INT8, [1, n])],
                {"one": np.array([1], np.int64), "end": np.array([n + 1], np.int64), "ax1": np.array([1], np.int64)})


def test_an_int8_state_resets_to_its_fill_byte():
    """An int8 state whose real zero is code -128 (a TFLite variable's zero point) starts, and restarts after
    reset(), at that code: the plan's reset byte."""
    plan = edgeplan.compile(_int8_ring(), state={"s_in": "s_out"}, state_fill={"s_in": 0x80})
    s = edgeplan.Session(plan)
    feeds = [np.array([[v]], np.int8) for v in (5, -7, 100, 3, 9)]
    for _ in range(2):
        got = [s.run({"x": x})["y"].ravel().tolist() for x in feeds]
        assert got[0] == [-128] * 4 + [5] and got[4] == [5, -7, 100, 3, 9], got
        s.reset()
    zero = edgeplan.Session(edgeplan.compile(_int8_ring(), state={"s_in": "s_out"}))
    assert zero.run({"x": feeds[0]})["y"].ravel().tolist() == [0] * 4 + [5]
    with pytest.raises(CompileError, match="reset byte .* needs an int8 or uint8 state"):
        edgeplan.compile(gru_stream_model(), dims={"T": (1, 8)}, state={"h_in": "h_out"}, state_fill={"h_in": 1})
    with pytest.raises(CompileError, match="reset byte is an integer 0..255, not 256"):
        edgeplan.compile(_int8_ring(), state={"s_in": "s_out"}, state_fill={"s_in": 256})
    with pytest.raises(CompileError, match="state_fill names 'x', which is not a state input"):
        edgeplan.compile(_int8_ring(), state={"s_in": "s_out"}, state_fill={"x": 0x80})


def test_a_hidden_state_is_written_in_place():
    """A state whose next value is only fed back (a TFLite variable's) is written by the op that makes it, not
    copied at the end, unless the state is read after that op."""
    from edgeplan.compiler.pipeline import compile_model
    feeds = [np.array([[v]], np.int8) for v in (5, -7, 100, 3, 9, -1)]
    late = _int8_ring()   # the state read again after the slice that makes its next value
    late.graph.node.append(h.make_node("Concat", ["s_in", "s_out"], ["z"], axis=1, name="late"))
    late.graph.output.append(h.make_tensor_value_info("z", TP.INT8, [1, 8]))
    for m, copies in ((_int8_ring(), 0), (late, 1)):
        plan = compile_model(m, state={"s_in": "s_out"}, hidden_state=("s_out",), state_fill={"s_in": 0x80})
        assert plan.report["op_counts"].get("copy", 0) == copies, plan.report["op_counts"]
        s, ring = edgeplan.Session(plan), [-128] * 4
        for x in feeds:
            out = s.run({"x": x})
            want = ring + [int(x[0, 0])]
            assert out["y"].ravel().tolist() == want
            if "z" in out:
                assert out["z"].ravel().tolist() == ring + want[1:]
            ring = want[1:]


def test_a_reset_byte_off_a_state_is_refused_at_open():
    from edgeplan.compiler.writer import crc32c
    from edgeplan.plan import read_plan
    from edgeplan._cdef import ffi
    data = edgeplan.compile(_int8_ring(), state={"s_in": "s_out"}, state_fill={"s_in": 0x80}).to_bytes()
    edgeplan.Session(edgeplan.Plan(data, {}))
    p = read_plan(data)
    sec = next(s for s in p["sections"] if s["kind"] == "tensors")
    i = next(k for k, t in enumerate(p["tensors"]) if t["name"] == "x")
    buf = bytearray(data)
    rec = ffi.cast("ep_tensor_rec *", ffi.from_buffer(buf) + sec["offset"] + i * sec["record_size"])
    rec.fill = 0x80
    buf[12:16] = b"\0\0\0\0"
    buf[12:16] = crc32c(bytes(buf)).to_bytes(4, "little")
    with pytest.raises(EdgeplanError, match="reset byte on a tensor that is not state"):
        edgeplan.Session(edgeplan.Plan(bytes(buf), {}))


def test_c_runner_runs_a_variable_length_plan(tmp_path, encoder):
    import shutil
    import subprocess
    runner = shutil.which("edgeplan-run")
    if runner is None:
        pytest.skip("edgeplan-run not installed")
    m, plan = encoder
    p = tmp_path / "enc.eplan"
    plan.save(p)
    x = np.random.default_rng(2).standard_normal((1, 8, 37)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    r = subprocess.run([runner, str(p), "--input", f"x={tmp_path / 'x.npy'}", "--output", f"y={tmp_path / 'y.npy'}"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    y = np.load(tmp_path / "y.npy")
    same({"y": y}, [ort_run(m, {"x": x})[0]])
    np.save(tmp_path / "x.npy", np.zeros((1, 8, 1001), np.float32))
    r = subprocess.run([runner, str(p), "--input", f"x={tmp_path / 'x.npy'}"], capture_output=True, text=True)
    assert r.returncode == 1 and "expects float32 [1, 8, T=1..1000]" in r.stderr, r.stderr


def test_positions_from_the_input_length():
    """Exporter patterns: positions = Range(0, Shape(x)[1]) and a positional table sliced [:, :T] with the
    length from Shape; they fold to constants at each length, and the plan stores the bound's (a prefix
    of it serves shorter lengths)."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "one"], ["t"], axis=0, name="len"),
             h.make_node("Range", ["zero", "t", "one"], ["pos"], name="arange"),
             h.make_node("Cast", ["pos"], ["posf"], to=TP.FLOAT, name="cast"),
             h.make_node("Unsqueeze", ["posf", "ax"], ["pos3"], name="unsq"),
             h.make_node("Unsqueeze", ["t", "zero1"], ["t1"], name="unsq_t"),
             h.make_node("Slice", ["table", "zero1", "t1", "one1"], ["pe"], name="slice_pe"),
             h.make_node("Add", ["x", "pe"], ["xp"], name="add_pe"),
             h.make_node("Add", ["xp", "pos3"], ["y"], name="add_pos")]
    rng = np.random.default_rng(9)
    m = make(nodes, [h.make_tensor_value_info("x", TP.FLOAT, [1, "T", 4])], [h.make_tensor_value_info("y", TP.FLOAT, None)],
             {"zero": np.array(0, np.int64), "one": np.array(1, np.int64), "ax": np.array([0, 2], np.int64),
              "zero1": np.array([0], np.int64), "one1": np.array([1], np.int64),
              "table": rng.standard_normal((1, 50, 4)).astype(np.float32)})
    s = edgeplan.Session(edgeplan.compile(m, dims={"T": (1, 50)}))
    for T in (1, 2, 13, 50):
        x = rng.standard_normal((1, T, 4)).astype(np.float32)
        same(s.run({"x": x}), ort_run(m, {"x": x}))


def test_slice_with_run_time_starts_and_ends():
    """Streaming attention exports slice a positional table at a run-time offset: table[offset:offset+T]."""
    nodes = [h.make_node("Shape", ["x"], ["s"], start=1, end=2, name="shape"),
             h.make_node("Add", ["offset", "s"], ["end"], name="end"),
             h.make_node("Slice", ["table", "offset", "end", "ax1"], ["pe"], name="slice_pe"),
             h.make_node("Add", ["x", "pe"], ["y"], name="add")]
    rng = np.random.default_rng(11)
    m = make(nodes, [h.make_tensor_value_info("x", TP.FLOAT, [1, "T", 4]),
                     h.make_tensor_value_info("offset", TP.INT64, [1])],
             [h.make_tensor_value_info("y", TP.FLOAT, None)],
             {"ax1": np.array([1], np.int64), "table": rng.standard_normal((1, 64, 4)).astype(np.float32)})
    with pytest.raises(CompileError, match="do not broadcast"):     # pe's length is unknown to the compiler
        edgeplan.compile(m, dims={"T": (1, 16)})
    s = edgeplan.Session(edgeplan.compile(m, dims={"T": (1, 16), "pe": "T"}))     # pe is as long as x
    for T, off in ((1, 0), (16, 0), (5, 40), (16, 48), (3, 63 - 2)):
        feeds = {"x": rng.standard_normal((1, T, 4)).astype(np.float32), "offset": np.array([off], np.int64)}
        same(s.run(feeds), ort_run(m, feeds))
    with pytest.raises(EdgeplanError) as e:      # the table ends: the slice is shorter than x
        s.run({"x": np.zeros((1, 8, 4), np.float32), "offset": np.array([60], np.int64)})
    assert e.value.status == K.EP_ERR_RUN_BOUND and "run-time length 4, but 'T' is 8" in str(e.value)


@pytest.mark.parametrize("starts,ends,steps", [([2, -3], [9, 100], [1, 2]), ([-1, 8], [-100, 0], [-1, -3]),
                                               ([0, 0], [0, 3], [1, 1]), ([-2**62, 2**62], [2**62, -2**62], [2, -1])])
def test_slice_dyn_clamps_like_onnx(starts, ends, steps):
    x = np.arange(120, dtype=np.float32).reshape(10, 12)
    m = make([h.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="s")],
             [h.make_tensor_value_info("x", TP.FLOAT, x.shape), h.make_tensor_value_info("st", TP.INT64, [2]),
              h.make_tensor_value_info("en", TP.INT64, [2])], [h.make_tensor_value_info("y", TP.FLOAT, None)],
             {"ax": np.array([0, 1], np.int64), "sp": np.array(steps, np.int64)})
    feeds = {"x": x, "st": np.array(starts, np.int64), "en": np.array(ends, np.int64)}
    same(edgeplan.Session(edgeplan.compile(m)).run(feeds), ort_run(m, feeds))


def test_exporter_style_reshape_from_shape():
    """torch exports x.view(B, T, H, D) as Shape -> Gather -> Unsqueeze -> Concat -> Reshape: it folds to a
    different constant target at every length, which is just a variable view."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "i0"], ["b"], axis=0, name="g0"),
             h.make_node("Gather", ["s", "i1"], ["t"], axis=0, name="g1"),
             h.make_node("Unsqueeze", ["b", "ax0"], ["b1"], name="u0"),
             h.make_node("Unsqueeze", ["t", "ax0"], ["t1"], name="u1"),
             h.make_node("Concat", ["b1", "t1", "hd"], ["target"], axis=0, name="cat"),
             h.make_node("Reshape", ["x", "target"], ["x4"], name="view"),
             h.make_node("Transpose", ["x4"], ["xt"], perm=[0, 2, 1, 3], name="heads"),
             h.make_node("MatMul", ["xt", "xtT"], ["scores"], name="qk"),
             h.make_node("Transpose", ["xt"], ["xtT"], perm=[0, 1, 3, 2], name="kT"),
             h.make_node("Softmax", ["scores"], ["y"], axis=-1, name="softmax")]
    nodes = nodes[:8] + [nodes[9], nodes[8], nodes[10]]
    m = make(nodes, [h.make_tensor_value_info("x", TP.FLOAT, [1, "T", 8])], [h.make_tensor_value_info("y", TP.FLOAT, None)],
             {"i0": np.array(0, np.int64), "i1": np.array(1, np.int64), "ax0": np.array([0], np.int64),
              "hd": np.array([2, 4], np.int64)})
    s = edgeplan.Session(edgeplan.compile(m, dims={"T": (1, 40)}))
    rng = np.random.default_rng(12)
    for T in (1, 9, 40):
        x = rng.standard_normal((1, T, 8)).astype(np.float32)
        got = s.run({"x": x})
        assert got["y"].shape == (1, 2, T, T)
        same(got, ort_run(m, {"x": x}))


@pytest.mark.parametrize("arg,msg", [("T", "expected NAME=MIN..MAX"), ("T=1..x", "must be integers"),
                                     ("=1..3", "expected NAME=MIN..MAX"), ("T=9..2", "need 0 <= min <= max"),
                                     ("T=U", "needs that dim bounded too")])
def test_bad_dims_are_explained(arg, msg):
    from edgeplan.compiler.dynamic import parse_dims
    with pytest.raises(CompileError, match=msg):
        edgeplan.compile(conv_encoder(), dims=parse_dims([arg]))


def detector(seed=0):
    """A YOLO-shaped head: three stride-2 convs, a 2x nearest upsample concatenated with a skip, a 1x1
    head, then the exporter's flatten of H x W into one axis ([1, 4, -1] and a transpose)."""
    rng = np.random.default_rng(seed)
    inits = [nh.from_array(np.array([1, 1, 2, 2], np.float32), "sc"), nh.from_array(np.array([1, 4, -1], np.int64), "shp")]

    def conv(x, cin, cout, k, s, name):
        inits.append(nh.from_array((rng.standard_normal((cout, cin, k, k)) * 0.2).astype(np.float32), name + "_w"))
        return h.make_node("Conv", [x, name + "_w"], [name], name=name, kernel_shape=[k, k], strides=[s, s],
                           pads=[k // 2] * 4)
    nodes = [conv("images", 3, 8, 3, 2, "c1"), h.make_node("Relu", ["c1"], ["r1"]), conv("r1", 8, 16, 3, 2, "c2"),
             h.make_node("Relu", ["c2"], ["r2"]), conv("r2", 16, 16, 3, 2, "c3"),
             h.make_node("Resize", ["c3", "", "sc"], ["up"], mode="nearest"),
             h.make_node("Concat", ["up", "r2"], ["cat"], axis=1), conv("cat", 32, 4, 1, 1, "head"),
             h.make_node("Reshape", ["head", "shp"], ["flat"]), h.make_node("Transpose", ["flat"], ["out"], perm=[0, 2, 1])]
    g = h.make_graph(nodes, "det", [h.make_tensor_value_info("images", TP.FLOAT, [1, 3, "height", "width"])],
                     [h.make_tensor_value_info("out", TP.FLOAT, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_one_detector_plan_serves_every_multiple_of_its_stride():
    """--dim height=64..256:32: one plan, every multiple of 32 in range for both sides, the arena planned
    for the largest; the flattened H*W axis is a rule over two symbols (plan 1.2)."""
    m = detector()
    plan = edgeplan.compile(m, dims={"height": (64, 256, 32), "width": (64, 256, 32)})
    # minor version 1.10 for the 3-channel stride-2 stem's DIRECT variant (the upsample's RESIZE TABLE variant
    # alone is 1.4, the rule over two symbols 1.2)
    assert plan.data[6:8] == (10).to_bytes(2, "little")
    assert "height=64..256:32" in plan.summary() and "height=64..256:32" in plan.inspect()
    sess = edgeplan.Session(plan)
    assert sess.inputs[0].shape_str() == "[1, 3, height=64..256:32, width=64..256:32]"
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for hw in [(256, 256), (64, 128), (160, 96), (64, 64), (224, 256)]:
        x = np.random.default_rng(hw[0] + hw[1]).standard_normal((1, 3) + hw).astype(np.float32)
        y = sess.run(images=x)["out"]
        r = ref.run(None, {"images": x})[0]
        assert y.shape == r.shape == (1, hw[0] * hw[1] // 16, 4) and rel_err(y, r) <= 1e-5, hw
    with pytest.raises(ValueError, match="expects shape \\[1, 3, height=64..256:32, width=64..256:32\\], got \\[1, 3, 100, 128\\]"):
        sess.run(images=np.zeros((1, 3, 100, 128), np.float32))
    from edgeplan._cdef import ffi                                         # the C API refuses it too
    dims = ffi.new("int32_t[]", [1, 3, 96, 100])
    assert sess._lib.ep_session_set_input_shape(sess._s, 0, dims, 4) == K.EP_ERR_INVALID_ARG


@pytest.mark.parametrize("dims, msg", [
    ({"height": "64..250:32"}, "the step must be in 1..2\\^24 and divide both MIN and MAX"),
    ({"height": "64..256:x"}, "MIN, MAX and STEP must be integers"),
])
def test_bad_steps_are_explained(dims, msg):
    from edgeplan.compiler.errors import CompileError
    with pytest.raises(CompileError, match=msg):
        edgeplan.compile(detector(), dims=dict(dims, width="64..256:32"))


def test_shape_and_dim_on_one_input_is_an_error_naming_both():
    from edgeplan.compiler.errors import CompileError
    with pytest.raises(CompileError, match="input 'images' dim 2 \\('height'\\) is both pinned by --shape "
                                           "images=1,3,64,64 and bounded by --dim height=64..256:32"):
        edgeplan.compile(detector(), shapes={"images": (1, 3, 64, 64)}, dims={"height": (64, 256, 32)})


def test_a_causal_mask_folded_from_the_length_is_cut_from_the_bounds():
    """scores [T, T] + mask, where mask = where(j > i, -1e9, 0) over Range(0, T): the mask folds to a
    [T, T] constant at each length, the top-left corner of the bound's, which the plan stores once and
    cuts at the run's T."""
    T = "T"
    nodes = [h.make_node("Shape", ["x"], ["s"], start=1, end=2), h.make_node("Squeeze", ["s"], ["n"]),
             h.make_node("Range", ["zero", "n", "one"], ["r"]),
             h.make_node("Unsqueeze", ["r", "ax1"], ["rows"]), h.make_node("Unsqueeze", ["r", "ax0"], ["cols"]),
             h.make_node("Greater", ["cols", "rows"], ["future"]),
             h.make_node("Where", ["future", "neg", "zerof"], ["mask"]),
             h.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
             h.make_node("MatMul", ["x", "xt"], ["scores"]),
             h.make_node("Add", ["scores", "mask"], ["masked"]),
             h.make_node("Softmax", ["masked"], ["y"], axis=-1)]
    m = make(nodes, [h.make_tensor_value_info("x", TP.FLOAT, [1, T, 4])],
             [h.make_tensor_value_info("y", TP.FLOAT, None)],
             {"zero": np.array(0, np.int64), "one": np.array(1, np.int64), "ax0": np.array([0], np.int64),
              "ax1": np.array([1], np.int64), "neg": np.array(-1e9, np.float32), "zerof": np.array(0, np.float32)})
    s = edgeplan.Session(edgeplan.compile(m, dims={T: (1, 32)}))
    rng = np.random.default_rng(3)
    for t in (32, 17, 5, 1):
        x = rng.standard_normal((1, t, 4)).astype(np.float32)
        same(s.run({"x": x}), ort_run(m, {"x": x}))
