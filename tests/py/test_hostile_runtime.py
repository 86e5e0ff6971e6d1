"""Hostile and careless use of the runtime: plans that are well formed but wrong, and misuse of the Python
Session (lifetime, threads, fork, unset inputs, replaced plan files). Each test names what went wrong before
the runtime refused it: a heap overflow, a use-after-free, a hang, silently wrong results."""
import gc
import os
import threading
import time

import numpy as np
import pytest

from edgeplan import EdgeplanError, Session
from edgeplan._cdef import K, ffi
from edgeplan.compiler.dynamic import Sym
from edgeplan.compiler.graph import Graph, Op, Tensor
from edgeplan.compiler.memplan import plan_memory
from edgeplan.compiler.passes.select import select_kernels
from edgeplan.compiler.writer import crc32c, write_plan
from edgeplan.plan import inspect_text
from test_runtime import conv_sigmoid_plan, numpy_conv_sigmoid

F32 = np.dtype(np.float32)


def _write(g: Graph, meta=None) -> bytes:
    select_kernels(g, None)
    return write_plan(g, plan_memory(g), meta=meta)


def _reseal(data: bytearray) -> bytes:
    data[12:16] = b"\0\0\0\0"
    data[12:16] = crc32c(bytes(data)).to_bytes(4, "little")
    return bytes(data)


def _unbound_output_plan(kind: int) -> bytes:
    """x -> relu -> y, and the graph output z a view of y whose length is symbol T. Nothing gives T a value:
    kind EP_SYM_INPUT is a symbol no input carries, EP_SYM_DERIVED one whose producing op is gone."""
    x = Tensor("x", F32, (1, 8), is_input=True)
    y = Tensor("y", F32, (1, 8))
    z = Tensor("z", F32, (1, 8), view_of=y, is_output=True, dim_sym=(0, 1))
    g = Graph([x, y, z], [Op("unary", [x], [y], dict(kind=K.EP_ACT_RELU), name="relu")], [x], [z],
              syms=[Sym("T", kind, 1, 8)])
    return _write(g)


@pytest.mark.parametrize("kind", [K.EP_SYM_INPUT, K.EP_SYM_DERIVED])
def test_an_output_length_nothing_computes_is_refused_at_open(kind):
    # this plan used to open and run; its output desc then said dim -1 and nbytes 2^64-128, and
    # ep_session_get_output copied that many bytes
    with pytest.raises(EdgeplanError, match="output 0 'z': dim 1 \\('T'\\) is computed by no op and no input") as e:
        Session(_unbound_output_plan(kind))
    assert e.value.status == K.EP_ERR_PLAN_SHAPE


def test_an_op_input_length_nothing_computes_is_refused_at_open():
    # a variable-length tensor that is no input and no op's output, read by an op
    x = Tensor("x", F32, (1, 8), is_input=True)
    u = Tensor("u", F32, (1, 8), dim_sym=(0, 1))
    y = Tensor("y", F32, (1, 8), is_output=True, dim_sym=(0, 1))
    g = Graph([x, u, y], [Op("binary", [x, u], [y], dict(kind=K.EP_BIN_ADD), name="add")], [x], [y],
              syms=[Sym("U", K.EP_SYM_DERIVED, 1, 8)])
    with pytest.raises(EdgeplanError, match="op 0 \\(binary 'add'\\): input 1 dim 1 \\('U'\\) has no value"):
        Session(_write(g))


def test_a_failed_run_leaves_variable_outputs_empty_not_negative():
    from test_dynamic import range_model
    import edgeplan
    sess = Session(edgeplan.compile(range_model(), dims={"N": (1, 8), "frames": (0, 40)}))
    feeds = {t.name: np.ones(t.max_shape, t.dtype) * (100 if t.dtype.kind == "i" else 1) for t in sess.inputs}
    with pytest.raises(EdgeplanError, match="bound"):
        sess.run(feeds)
    lib = sess._lib
    for i, t in enumerate(sess.outputs):
        assert all(d >= 0 for d in t.shape) and t.nbytes <= np.prod(t.max_shape) * t.dtype.itemsize
        d = ffi.new("ep_io_desc *")
        assert lib.ep_session_io_desc(sess._s, K.EP_IO_OUTPUT, i, d) == K.EP_OK
        buf = ffi.new("char[]", max(1, int(d.max_nbytes)))
        assert lib.ep_session_get_output(sess._s, i, buf, d.nbytes) == K.EP_OK


def test_outputs_without_copy_keep_the_arena_alive():
    plan, w, b = conv_sigmoid_plan()
    x = np.random.default_rng(2).standard_normal((1, 3, 8, 8)).astype(np.float32)
    sess = Session(plan)
    out = sess.run(x=x, copy=False)["z"]
    want = numpy_conv_sigmoid(x, w, b)
    del sess
    gc.collect()
    # allocations of the arena's size would reuse its memory if the view did not keep it
    junk = [np.full(1 << 16, 7.0, np.float32) for _ in range(64)]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    out[...] = 0   # writing into it is writing into memory the view owns
    assert all(float(j[0]) == 7.0 for j in junk)


def test_replacing_a_plan_file_leaves_open_sessions_alone(tmp_path):
    p = tmp_path / "m.eplan"
    plan0, w0, b0 = conv_sigmoid_plan(seed=0)
    plan1, w1, b1 = conv_sigmoid_plan(seed=1)
    assert len(plan0.data) == len(plan1.data)   # a same-size rewrite used to change the weights silently
    plan0.save(p)
    old = Session(p)
    plan1.save(p)
    x = np.random.default_rng(3).standard_normal((1, 3, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(old.run(x=x)["z"], numpy_conv_sigmoid(x, w0, b0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(Session(p).run(x=x)["z"], numpy_conv_sigmoid(x, w1, b1), rtol=1e-5, atol=1e-6)
    assert sorted(q.name for q in tmp_path.iterdir()) == ["m.eplan"]   # no temporary file left
    assert (p.stat().st_mode & 0o777) == 0o666 & ~_umask()


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def test_one_session_from_many_threads_gives_each_caller_its_own_results():
    plan, w, b = conv_sigmoid_plan()
    sess = Session(plan)
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal((1, 3, 8, 8)).astype(np.float32) for _ in range(4)]
    want = [sess.run(x=x)["z"] for x in xs]
    bad = []

    def work(k):
        for _ in range(100):
            if not np.array_equal(sess.run(x=xs[k])["z"], want[k]):
                bad.append(k)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad, f"{len(bad)} of 400 runs got another thread's results"


def test_a_run_whose_inputs_were_never_set_is_refused():
    from test_runtime import F32 as _  # noqa: F401
    a = Tensor("a", F32, (4,), is_input=True)
    c = Tensor("c", F32, (4,), is_input=True)
    y = Tensor("y", F32, (4,), is_output=True)
    g = Graph([a, c, y], [Op("binary", [a, c], [y], dict(kind=K.EP_BIN_ADD))], [a, c], [y])
    sess = Session(_write(g))
    with pytest.raises(ValueError, match="no value for input\\(s\\) 'a' float32 \\[4\\], 'c' float32 \\[4\\]"):
        sess.run()
    with pytest.raises(ValueError, match="no value for input\\(s\\) 'c'"):
        sess.run(a=np.ones(4, np.float32))
    # once given, inputs keep their values across runs
    np.testing.assert_array_equal(sess.run(c=np.ones(4, np.float32))["y"], np.full(4, 2, np.float32))
    np.testing.assert_array_equal(sess.run()["y"], np.full(4, 2, np.float32))


def test_a_threaded_session_after_fork_fails_clearly_in_the_child():
    plan, _, _ = conv_sigmoid_plan()
    sess = Session(plan, threads=2)
    if sess.threads < 2:
        pytest.skip("this build has no worker threads")
    x = np.zeros((1, 3, 8, 8), np.float32)
    sess.run(x=x)
    pid = os.fork()
    if pid == 0:   # the child: must not hang, must get EP_ERR_FORKED, and close must return
        code = 1
        try:
            sess.run(x=x)
        except EdgeplanError as e:
            code = 0 if e.status == K.EP_ERR_FORKED and "fork" in str(e) else 2
        except BaseException:  # noqa: BLE001
            code = 3
        sess.close()
        os._exit(code)
    deadline = time.monotonic() + 30
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the child hung on a session opened before fork()")
        time.sleep(0.02)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    sess.run(x=x)   # the parent's session still works


def test_misuse_of_a_session_object_is_explained():
    plan, _, _ = conv_sigmoid_plan()
    with pytest.raises(TypeError, match="plan must be a path, bytes or an edgeplan.Plan, got int"):
        Session(123)
    sess = Session(plan)
    sess.close()
    sess.close()   # twice is fine
    for call in (lambda: sess.run(x=np.zeros((1, 3, 8, 8), np.float32)), sess.reset, sess.profile,
                 lambda: sess.set_input("x", np.zeros((1, 3, 8, 8), np.float32))):
        with pytest.raises(EdgeplanError, match="the session is closed"):
            call()


def test_a_non_utf8_name_is_shown_not_a_traceback():
    x = Tensor("in_xq", F32, (4,), is_input=True)
    y = Tensor("out_yq", F32, (4,), is_output=True)
    g = Graph([x, y], [Op("unary", [x], [y], dict(kind=K.EP_ACT_RELU), name="relu")], [x], [y])
    data = bytearray(_write(g))
    k = data.index(b"in_xq\0")
    data[k:k + 5] = b"in_\xff\xfe"
    data = _reseal(data)
    sess = Session(data)
    assert sess.inputs[0].name == "in_\ufffd\ufffd"
    assert "in_\ufffd\ufffd" in inspect_text(data)


@pytest.mark.parametrize("meta", [
    {"arena_map": [[0, 16]]}, {"arena_map": "x"}, {"arena_map": [["a", 1, 2, 3, "t"]]},
    {"op_cost": [[1]]}, {"op_cost": [["a", "b"]]}, {"op_cost": "nonsense"}, {"fused": 7}, [1, 2],
])
def test_a_malformed_meta_section_means_no_metadata(meta):
    x = Tensor("x", F32, (4,), is_input=True)
    y = Tensor("y", F32, (4,), is_output=True)
    g = Graph([x, y], [Op("unary", [x], [y], dict(kind=K.EP_ACT_RELU), name="relu")], [x], [y])
    data = _write(g, meta=meta)
    text = inspect_text(data)
    assert "ops (1):" in text
    if isinstance(meta, dict) and "arena_map" in meta:
        assert "arena map: malformed" in text
    sess = Session(data, profile=True)
    sess.run(x=np.ones(4, np.float32))
    prof = sess.profile()
    assert len(prof) == 1 and prof[0]["calls"] == 1 and prof[0]["flops"] == 0
