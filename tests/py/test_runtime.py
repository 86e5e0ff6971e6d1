"""The runtime API through the Python wrapper: arena sizing, error reporting, I/O checks, plan checks.
Plans here are built directly from lowered graphs, so these tests exercise the runtime alone."""
import numpy as np
import pytest

from edgeplan import EdgeplanError, Session
from edgeplan._cdef import K, ffi
from edgeplan.compiler.graph import Graph, Op, Tensor
from edgeplan.compiler.pipeline import compile_graph
from edgeplan.runtime import load_library

F32 = np.dtype(np.float32)


def conv_sigmoid_plan(seed=0):
    rng = np.random.default_rng(seed)
    x = Tensor("x", F32, (1, 3, 8, 8), is_input=True)
    w = Tensor("w", F32, (4, 3, 3, 3), data=rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    b = Tensor("b", F32, (4,), data=rng.standard_normal(4).astype(np.float32))
    y = Tensor("y", F32, (1, 4, 8, 8))
    z = Tensor("z", F32, (1, 4, 8, 8), is_output=True)
    conv = dict(kernel=[3, 3], stride=[1, 1], dilation=[1, 1], pads=[1, 1, 1, 1], groups=1,
                act=K.EP_ACT_RELU, act_alpha=0.0, act_beta=0.0)
    ops = [Op("conv2d", [x, w, b], [y], conv, name="conv"),
           Op("unary", [y], [z], dict(kind=K.EP_ACT_SIGMOID), name="sig", inplace=0)]
    return compile_graph(Graph([x, w, b, y, z], ops, [x], [z])), w.data, b.data


def numpy_conv_sigmoid(x, w, b):
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((1, 4, 8, 8), np.float64)
    for i in range(8):
        for j in range(8):
            y[0, :, i, j] = np.tensordot(w, xp[0, :, i:i + 3, j:j + 3], axes=3) + b
    return 1 / (1 + np.exp(-np.maximum(y, 0)))


def test_runs_and_matches_numpy():
    plan, w, b = conv_sigmoid_plan()
    sess = Session(plan)
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    out = sess.run({"x": x})["z"]
    assert out.shape == (1, 4, 8, 8) and out.dtype == np.float32
    np.testing.assert_allclose(out, numpy_conv_sigmoid(x, w, b), rtol=1e-5, atol=1e-6)
    # outputs are copies; a second run gives the same answer
    np.testing.assert_array_equal(sess.run(x=x)["z"], out)


def _open_raw(plan_bytes: bytes, arena_len: int, arena_offset: int = 0):
    lib = load_library()
    pbuf = np.zeros(len(plan_bytes) + 64, np.uint8)
    poff = (-pbuf.ctypes.data) % 64
    pbuf[poff:poff + len(plan_bytes)] = np.frombuffer(plan_bytes, np.uint8)
    abuf = np.zeros(arena_len + 128, np.uint8)
    aoff = (-abuf.ctypes.data) % 64 + arena_offset
    err = ffi.new("char[256]")
    opts = ffi.new("ep_options *", dict(struct_size=ffi.sizeof("ep_options"), error_buf=err, error_buf_len=256))
    sp = ffi.new("ep_session **")
    rc = lib.ep_session_open(sp, ffi.from_buffer(pbuf) + poff, len(plan_bytes), ffi.from_buffer(abuf) + aoff,
                             arena_len, opts)
    return rc, ffi.string(err).decode()


def test_arena_exact_size_opens_one_byte_less_fails():
    plan, _, _ = conv_sigmoid_plan()
    need = Session(plan).arena_bytes
    assert need == plan.report["arena_bytes"]
    rc, msg = _open_raw(plan.data, need)
    assert rc == K.EP_OK, msg
    rc, msg = _open_raw(plan.data, need - 1)
    assert rc == K.EP_ERR_ARENA_TOO_SMALL
    assert f"{need} needed" in msg


def test_misaligned_arena_is_refused():
    plan, _, _ = conv_sigmoid_plan()
    rc, msg = _open_raw(plan.data, 1 << 16, arena_offset=8)
    assert rc == K.EP_ERR_ARENA_ALIGN and "aligned" in msg


def test_wrong_inputs_are_explained():
    plan, _, _ = conv_sigmoid_plan()
    sess = Session(plan)
    x = np.zeros((1, 3, 8, 8), np.float32)
    with pytest.raises(KeyError, match="no input named 'nope'.*'x' float32 \\[1, 3, 8, 8\\]"):
        sess.run({"nope": x})
    with pytest.raises(ValueError, match="expects shape \\[1, 3, 8, 8\\], got \\[1, 3, 8, 9\\]"):
        sess.run({"x": np.zeros((1, 3, 8, 9), np.float32)})
    with pytest.raises(TypeError, match="expects float32, got float64"):
        sess.run({"x": x.astype(np.float64)})


def test_corrupt_plans_raise_with_the_c_message():
    plan, _, _ = conv_sigmoid_plan()
    data = bytearray(plan.data)
    data[-1] ^= 0xFF
    with pytest.raises(EdgeplanError, match="checksum") as e:
        Session(bytes(data))
    assert e.value.status == K.EP_ERR_PLAN_CRC
    with pytest.raises(EdgeplanError) as e:
        Session(plan.data[:100])
    assert e.value.status == K.EP_ERR_PLAN_TRUNCATED
    with pytest.raises(EdgeplanError) as e:
        Session(b"GIF89a" + bytes(100))
    assert e.value.status == K.EP_ERR_PLAN_MAGIC
    future = bytearray(plan.data)
    future[4:6] = (2).to_bytes(2, "little")
    with pytest.raises(EdgeplanError, match="plan format 2.[0-9]+; this runtime reads 1.x"):
        Session(bytes(future))


def test_missing_cpu_features_are_refused():
    from edgeplan.compiler.memplan import plan_memory
    from edgeplan.compiler.writer import write_plan
    x = Tensor("x", F32, (4,), is_input=True)
    y = Tensor("y", F32, (4,), is_output=True)
    g = Graph([x, y], [Op("unary", [x], [y], dict(kind=K.EP_ACT_RELU))], [x], [y])
    data = write_plan(g, plan_memory(g), required_features=1 << 40)   # a feature no CPU has
    with pytest.raises(EdgeplanError, match="plan needs CPU features") as e:
        Session(data)
    assert e.value.status == K.EP_ERR_PLAN_FEATURES


def test_inconsistent_shapes_are_caught_at_open():
    from edgeplan.compiler.memplan import plan_memory
    from edgeplan.compiler.writer import write_plan
    x = Tensor("x", F32, (1, 3, 8, 8), is_input=True)
    w = Tensor("w", F32, (4, 3, 3, 3), data=np.zeros((4, 3, 3, 3), np.float32))
    y = Tensor("y", F32, (1, 4, 7, 8), is_output=True)    # conv gives 8x8 with these pads
    conv = dict(kernel=[3, 3], stride=[1, 1], dilation=[1, 1], pads=[1, 1, 1, 1], groups=1)
    g = Graph([x, w, y], [Op("conv2d", [x, w, None], [y], conv, name="bad_conv")], [x], [y])
    with pytest.raises(EdgeplanError, match="bad_conv") as e:
        Session(write_plan(g, plan_memory(g)))
    assert e.value.status in (K.EP_ERR_PLAN_SHAPE, K.EP_ERR_PLAN_OP)


def test_run_time_index_errors_name_the_op():
    i64 = np.dtype(np.int64)
    data = Tensor("data", F32, (5, 2), is_input=True)
    idx = Tensor("idx", i64, (3,), is_input=True)
    out = Tensor("out", F32, (3, 2), is_output=True)
    g = Graph([data, idx, out], [Op("gather", [data, idx], [out], dict(axis=0), name="embed")], [data, idx], [out])
    sess = Session(compile_graph(g))
    d = np.arange(10, dtype=np.float32).reshape(5, 2)
    np.testing.assert_array_equal(sess.run(data=d, idx=np.array([4, 0, -1]))["out"], d[[4, 0, -1]])
    with pytest.raises(EdgeplanError, match="op 0 \\(gather 'embed'\\): index value out of range"):
        sess.run(data=d, idx=np.array([0, 5, 1]))


def test_plan_from_path_is_mmapped(tmp_path):
    plan, _, _ = conv_sigmoid_plan()
    p = tmp_path / "m.eplan"
    plan.save(p)
    sess = Session(p)
    assert sess.const_bytes >= 4 * (108 + 4)
    assert [t.name for t in sess.inputs] == ["x"] and [t.name for t in sess.outputs] == ["z"]
