"""Control flow. An If whose condition is a constant once the shapes are pinned takes its branch at compile
time; one decided by the data runs as IF / ELSE ops, the executor running one branch (nested Ifs, values
the branches read from outside, variable lengths, branch memory shared). Each against onnxruntime; plans
whose branches are malformed are refused at open."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import edgeplan
import edgeplan.compiler.errors
from conftest import rel_err
from edgeplan import EdgeplanError, Session
from edgeplan._cdef import K
from edgeplan.compiler.graph import Graph, Op, Tensor
from edgeplan.compiler.memplan import plan_memory
from edgeplan.compiler.passes.select import select_kernels
from edgeplan.compiler.writer import write_plan

CompileError = edgeplan.compiler.errors.CompileError
F32 = np.dtype(np.float32)


def _ort(m, feeds):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def _model(nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _branch(name, nodes, out, inits=()):
    return h.make_graph(nodes, name, [], [h.make_tensor_value_info(out, TP.FLOAT, None)], list(inits))


def _shape_if(nested: bool):
    """y = x * 2 if x has more than 4 columns, else x + 1 (the then branch holding a second If on the same
    test with Relu / Neg), the condition built from Shape as exporters write it."""
    cond_nodes = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "one"], ["cols"], axis=0),
                  h.make_node("Greater", ["cols", "four"], ["c"])]
    then_nodes = [h.make_node("Mul", ["x", "two"], ["t"])]
    if nested:
        inner_then = _branch("inner_then", [h.make_node("Relu", ["t"], ["r"])], "r")
        inner_else = _branch("inner_else", [h.make_node("Neg", ["t"], ["r"])], "r")
        then_nodes.append(h.make_node("If", ["c"], ["t2"], name="inner", then_branch=inner_then, else_branch=inner_else))
        then = _branch("then", then_nodes, "t2", [nh.from_array(np.array(2, np.float32), "two")])
    else:
        then = _branch("then", then_nodes, "t", [nh.from_array(np.array(2, np.float32), "two")])
    els = _branch("else", [h.make_node("Add", ["x", "onef"], ["e"])], "e", [nh.from_array(np.array(1, np.float32), "onef")])
    nodes = cond_nodes + [h.make_node("If", ["c"], ["y"], name="outer", then_branch=then, else_branch=els)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [2, "n"])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)],
                     [nh.from_array(np.array(1, np.int64), "one"), nh.from_array(np.array(4, np.int64), "four")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("nested", [False, True])
@pytest.mark.parametrize("n", [3, 6])
def test_an_if_on_pinned_shapes_takes_its_branch_at_compile_time(nested, n):
    m = _shape_if(nested)
    plan = edgeplan.compile(m, shapes={"x": (2, n)})
    assert "If" not in plan.inspect()
    x = np.random.default_rng(n).standard_normal((2, n)).astype(np.float32)
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert rel_err(edgeplan.Session(plan).run(x=x)["y"], ref) == 0.0


def _rate_if():
    """y = relu(x) when sr > 8000, else -x: the condition is a run-time input's value."""
    then = _branch("then", [h.make_node("Relu", ["x"], ["t"])], "t")
    els = _branch("else", [h.make_node("Neg", ["x"], ["e"])], "e")
    nodes = [h.make_node("Greater", ["sr", "k"], ["c"], name="is_16k"),
             h.make_node("If", ["c"], ["y"], name="by_rate", then_branch=then, else_branch=els)]
    return _model(nodes, [h.make_tensor_value_info("x", TP.FLOAT, [4]), h.make_tensor_value_info("sr", TP.INT64, [])],
                  [h.make_tensor_value_info("y", TP.FLOAT, None)], [nh.from_array(np.array(8000, np.int64), "k")])


@pytest.mark.parametrize("sr", [16000, 8000])
def test_an_if_decided_at_run_time_runs_the_branch_its_condition_takes(sr):
    m = _rate_if()
    plan = edgeplan.compile(m)
    text = plan.inspect()
    assert "1 if               v0  <- %3  [by_rate]  then 2..2, else at 3" in text, text
    assert "3 else             v0  <-   [by_rate]  else 4..4" in text, text
    x = np.array([-1.5, -0.25, 0.5, 2.0], np.float32)
    feeds = {"x": x, "sr": np.array(sr, np.int64)}
    assert rel_err(Session(plan).run(**feeds)["y"], _ort(m, feeds)["y"]) == 0.0


def _nested_if():
    """s = sum(x); y = relu(x @ W) + 1 when s > 0, else (-x when s < -3, else x - 1) + 1. The branches read
    x through an Identity (cleanup renames it), a weight and constants of the outer graph, and constants of
    their own; the inner If is decided at run time too."""
    W = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    then = h.make_graph([h.make_node("MatMul", ["xi", "W"], ["t0"]), h.make_node("Relu", ["t0"], ["t1"])], "then", [],
                        [h.make_tensor_value_info("t1", TP.FLOAT, [2, 8])])
    inner_then = _branch("it", [h.make_node("Neg", ["xi"], ["n0"])], "n0")
    inner_else = _branch("ie", [h.make_node("Sub", ["xi", "one"], ["n1"])], "n1")
    els = h.make_graph([h.make_node("Less", ["s", "m3"], ["c2"]),
                        h.make_node("If", ["c2"], ["e0"], name="inner", then_branch=inner_then, else_branch=inner_else)],
                       "else", [], [h.make_tensor_value_info("e0", TP.FLOAT, [2, 8])],
                       [nh.from_array(np.array(-3.0, np.float32), "m3")])
    nodes = [h.make_node("Identity", ["x"], ["xi"]), h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             h.make_node("Greater", ["s", "zero"], ["c"]),
             h.make_node("If", ["c"], ["y0"], name="outer", then_branch=then, else_branch=els),
             h.make_node("Add", ["y0", "one"], ["y"])]
    return _model(nodes, [h.make_tensor_value_info("x", TP.FLOAT, [2, 8])], [h.make_tensor_value_info("y", TP.FLOAT, [2, 8])],
                  [nh.from_array(W, "W"), nh.from_array(np.array(0.0, np.float32), "zero"),
                   nh.from_array(np.array(1.0, np.float32), "one")])


@pytest.mark.parametrize("shift", [1.0, -0.1, -1.0])   # the then branch, the inner else, the inner then
def test_nested_run_time_ifs_read_outer_values(shift):
    m = _nested_if()
    plan = edgeplan.compile(m)
    assert plan.report["op_counts"]["if"] == 2
    x = (np.random.default_rng(1).standard_normal((2, 8)) * 0.1 + shift).astype(np.float32)
    assert rel_err(Session(plan).run(x=x)["y"], _ort(m, {"x": x})["y"]) < 1e-6


@pytest.mark.parametrize("flag", [True, False])
def test_branch_results_may_be_outer_values_and_constants(flag):
    """Two outputs, graph outputs themselves: the then branch gives x itself and a constant (through
    Identity, which onnxruntime needs), the else branch a computed value and x; whichever ran, the outputs
    hold its results."""
    then = h.make_graph([h.make_node("Identity", ["x"], ["xt"]), h.make_node("Identity", ["k3"], ["kt"])], "then", [],
                        [h.make_tensor_value_info("xt", TP.FLOAT, [3]), h.make_tensor_value_info("kt", TP.FLOAT, [3])],
                        [nh.from_array(np.array([7, 8, 9], np.float32), "k3")])
    els = h.make_graph([h.make_node("Mul", ["x", "x"], ["sq"]), h.make_node("Identity", ["x"], ["xe"])], "else", [],
                       [h.make_tensor_value_info("sq", TP.FLOAT, [3]), h.make_tensor_value_info("xe", TP.FLOAT, [3])])
    m = _model([h.make_node("If", ["flag"], ["a", "b"], name="pick", then_branch=then, else_branch=els)],
               [h.make_tensor_value_info("x", TP.FLOAT, [3]), h.make_tensor_value_info("flag", TP.BOOL, [])],
               [h.make_tensor_value_info("a", TP.FLOAT, [3]), h.make_tensor_value_info("b", TP.FLOAT, [3])])
    s = Session(edgeplan.compile(m))
    feeds = {"x": np.array([1, -2, 3], np.float32), "flag": np.array(flag)}
    got, ref = s.run(**feeds), _ort(m, feeds)
    for k in ("a", "b"):
        assert np.array_equal(got[k], ref[k]), k
    feeds["flag"] = np.array(not flag)   # the same session, the other branch: nothing left from the last run
    got, ref = s.run(**feeds), _ort(m, feeds)
    for k in ("a", "b"):
        assert np.array_equal(got[k], ref[k]), k


def test_branches_giving_different_shapes_are_refused():
    then = _branch("then", [h.make_node("Relu", ["x"], ["t"])], "t")
    els = _branch("else", [h.make_node("ReduceSum", ["x"], ["e"], keepdims=1)], "e")
    m = _model([h.make_node("If", ["flag"], ["y"], name="pick", then_branch=then, else_branch=els)],
               [h.make_tensor_value_info("x", TP.FLOAT, [4]), h.make_tensor_value_info("flag", TP.BOOL, [])],
               [h.make_tensor_value_info("y", TP.FLOAT, None)])
    with pytest.raises(CompileError, match="node 'pick' \\(If\\): output 0 \\('y'\\) is \\[4\\] float32 from the "
                                           "then_branch but \\[1\\] float32 from the else_branch"):
        edgeplan.compile(m)


def test_a_branch_that_cannot_compile_says_which_input_to_freeze():
    """The else branch holds an op edgeplan lacks: the If's problem names it, and the input the condition
    comes from, to freeze when that branch never runs."""
    then = _branch("then", [h.make_node("Relu", ["x"], ["t"])], "t")
    els = _branch("else", [h.make_node("ImageDecoder", ["x"], ["e"], name="decode")], "e")
    m = _model([h.make_node("Greater", ["sr", "k"], ["c"]),
                h.make_node("If", ["c"], ["y"], name="by_rate", then_branch=then, else_branch=els)],
               [h.make_tensor_value_info("x", TP.FLOAT, [4]), h.make_tensor_value_info("sr", TP.INT64, [])],
               [h.make_tensor_value_info("y", TP.FLOAT, None)], [nh.from_array(np.array(8000, np.int64), "k")])
    with pytest.raises(CompileError) as e:
        edgeplan.compile(m)
    first = str(e.value.problems[0])
    assert first.startswith("node 'by_rate' (If): its else_branch cannot be compiled: node 'by_rate/else/decode' "
                            "(ImageDecoder): op type 'ImageDecoder' is unsupported"), first
    assert first.endswith("freeze what its condition depends on: --const sr=VALUE (consts={'sr': VALUE})"), first
    x = np.ones(4, np.float32)   # frozen, the If goes at compile time and the else branch with it
    plan = edgeplan.compile(m, consts={"sr": 16000})
    assert np.array_equal(Session(plan).run(x=x)["y"], x)


def test_an_if_under_a_variable_length():
    """x [1, n] with n in 1..32: y = relu(x) * 2 when max(x) > 0 else x - 1, one plan for every length."""
    then = _branch("then", [h.make_node("Relu", ["x"], ["r"]), h.make_node("Mul", ["r", "two"], ["t"])], "t",
                   [nh.from_array(np.array(2, np.float32), "two")])
    els = _branch("else", [h.make_node("Sub", ["x", "one"], ["e"])], "e", [nh.from_array(np.array(1, np.float32), "one")])
    m = _model([h.make_node("ReduceMax", ["x"], ["mx"], keepdims=0), h.make_node("Greater", ["mx", "zero"], ["c"]),
                h.make_node("If", ["c"], ["y0"], name="pos", then_branch=then, else_branch=els),
                h.make_node("Sigmoid", ["y0"], ["y"])],
               [h.make_tensor_value_info("x", TP.FLOAT, [1, "n"])], [h.make_tensor_value_info("y", TP.FLOAT, [1, "n"])],
               [nh.from_array(np.array(0, np.float32), "zero")])
    s = Session(edgeplan.compile(m, dims={"n": (1, 32)}))
    rng = np.random.default_rng(3)
    for n in (1, 7, 32, 20):
        for sign in (1.0, -1.0):
            x = (sign * np.abs(rng.standard_normal((1, n)))).astype(np.float32)
            got = s.run(x=x)["y"]
            assert got.shape == (1, n)
            assert rel_err(got, _ort(m, {"x": x})["y"]) < 1e-6, (n, sign)


def test_the_branches_share_arena_memory():
    """Each branch needs a 256 KiB temporary; only one runs, so the arena holds one of them, not both."""
    big = 64 * 1024
    then = _branch("then", [h.make_node("Tile", ["x", "reps"], ["tt"]), h.make_node("ReduceSum", ["tt"], ["t"], keepdims=0)],
                   "t", [nh.from_array(np.array([big], np.int64), "reps")])
    els = _branch("else", [h.make_node("Tile", ["x", "reps2"], ["te"]), h.make_node("ReduceMax", ["te"], ["e"], keepdims=0)],
                  "e", [nh.from_array(np.array([big], np.int64), "reps2")])
    m = _model([h.make_node("If", ["flag"], ["y"], name="pick", then_branch=then, else_branch=els)],
               [h.make_tensor_value_info("x", TP.FLOAT, [1]), h.make_tensor_value_info("flag", TP.BOOL, [])],
               [h.make_tensor_value_info("y", TP.FLOAT, None)])
    plan = edgeplan.compile(m)
    assert big * 4 <= plan.report["planned_bytes"] < 2 * big * 4, plan.report["planned_bytes"]
    s = Session(plan)
    for flag in (True, False):
        feeds = {"x": np.array([0.5], np.float32), "flag": np.array(flag)}
        assert rel_err(s.run(**feeds)["y"], _ort(m, feeds)["y"]) < 1e-5


# ---- malformed branches in a plan: refused at open ----------------------------------------------------------

def _branch_plan(ops_spec) -> bytes:
    """A plan x -> ops -> y whose op list is ops_spec: "if:SKIP" (on input c), "fail:SKIP" (an IF with
    fail = 1), "else:SKIP", or "neg" (y = -x, in place on y): the skips written as given, without the
    compiler's checks."""
    x = Tensor("x", F32, (4,), is_input=True)
    c = Tensor("c", np.dtype(np.bool_), (1,), is_input=True)
    y = Tensor("y", F32, (4,), is_output=True)
    ops = []
    for k, spec in enumerate(ops_spec):
        kind, _, skip = spec.partition(":")
        if kind == "neg":
            ops.append(Op("unary", [x], [y], dict(kind=K.EP_ACT_NEG), name=f"neg{k}"))
        else:
            fail = int(kind == "fail")
            kind = "if" if fail else kind
            ops.append(Op(kind, [c] if kind == "if" else [], [], dict(skip=int(skip), fail=fail), name=f"{kind}{k}"))
    g = Graph([x, c, y], ops, [x, c], [y])
    select_kernels(g, None)
    return write_plan(g, plan_memory(g))


def test_well_formed_branches_open_and_run():
    s = Session(_branch_plan(["if:2", "neg", "else:1", "neg"]))
    x = np.array([1, -2, 3, 0], np.float32)
    assert np.array_equal(s.run(x=x, c=np.array([True]))["y"], -x)


@pytest.mark.parametrize("spec,why", [
    (["if:5", "neg", "else:1", "neg"], "op 0 \\(if\\): no ELSE 5 ops on inside its branch"),
    (["if:1", "neg", "else:1", "neg"], "op 0 \\(if\\): no ELSE 1 ops on"),
    (["neg", "else:0"], "op 1 \\(else\\): not the end of an IF's then branch"),
    (["if:2", "neg", "else:9", "neg"], "op 2 \\(else\\): its branch runs past its own branch"),
    # the inner If's else branch runs past the outer then branch
    (["if:4", "if:2", "neg", "else:2", "else:1", "neg"], "op 3 \\(else\\): its branch runs past its own branch"),
    (["if:0", "neg"], "params"),
    (["if:2", "neg", "else:1"], "op 2 \\(else\\): its branch runs past"),
    (["fail:2", "neg", "else:0"], "params"),      # a bound check has empty branches
])
def test_malformed_branches_are_refused_at_open(spec, why):
    with pytest.raises(EdgeplanError, match=why):
        Session(_branch_plan(spec))


def test_a_bound_check_fails_the_run_only_when_true():
    s = Session(_branch_plan(["neg", "fail:1", "else:0"]))
    x = np.array([1, -2, 3, 0], np.float32)
    assert np.array_equal(s.run(x=x, c=np.array([False]))["y"], -x)
    with pytest.raises(EdgeplanError, match="if1") as e:
        s.run(x=x, c=np.array([True]))
    assert e.value.status == edgeplan.runtime.K.EP_ERR_RUN_BOUND


def test_branches_nested_too_deep_are_refused_at_open():
    depth = 17
    spec = [f"if:{2 * (depth - k) - 1}" for k in range(depth)]
    spec[-1] = "if:1"
    spec += ["else:0"] * depth   # each ELSE ends its IF's then branch, which holds the next IF
    with pytest.raises(EdgeplanError, match="nest too deep"):
        Session(_branch_plan(spec))


def _loop_body(nodes, carried, scans=(), inits=()):
    """A Loop body: inputs (i, cond_in, *carried), outputs (cond_out, *carried', *scans), all float carried."""
    ins = [h.make_tensor_value_info("i", TP.INT64, []), h.make_tensor_value_info("cond_in", TP.BOOL, [])]
    ins += [h.make_tensor_value_info(c, TP.FLOAT, None) for c, _ in carried]
    outs = [h.make_tensor_value_info("cond_out", TP.BOOL, [])]
    outs += [h.make_tensor_value_info(o, TP.FLOAT, None) for _, o in carried]
    outs += [h.make_tensor_value_info(s, TP.FLOAT, None) for s in scans]
    return h.make_graph(nodes, "body", ins, outs, list(inits))


def _run_both(m, feeds, **compile_kw):
    plan = edgeplan.compile(m, **compile_kw)
    assert "Loop" not in plan.inspect() and "Scan" not in plan.inspect()
    got, ref = Session(plan).run(**feeds), _ort(m, feeds)
    for k in ref:
        assert got[k].shape == ref[k].shape, k
        assert rel_err(got[k], ref[k]) < 1e-6, k
    return plan


def test_a_loop_with_a_constant_trip_count_is_unrolled():
    """y_{k+1} = y_k * 0.5 + x * k for k < 5, each y_k also stacked as a scan output."""
    body = _loop_body([h.make_node("Identity", ["cond_in"], ["cond_out"]),
                       h.make_node("Cast", ["i"], ["fi"], to=TP.FLOAT),
                       h.make_node("Mul", ["x", "fi"], ["xk"]),
                       h.make_node("Mul", ["y_in", "half"], ["yh"]),
                       h.make_node("Add", ["yh", "xk"], ["y_out"]),
                       h.make_node("Identity", ["y_out"], ["ys"])],
                      [("y_in", "y_out")], ["ys"], [nh.from_array(np.array(0.5, np.float32), "half")])
    m = _model([h.make_node("Loop", ["M", "", "y0"], ["y", "ys"], name="loop", body=body)],
               [h.make_tensor_value_info("x", TP.FLOAT, [3]), h.make_tensor_value_info("y0", TP.FLOAT, [3])],
               [h.make_tensor_value_info("y", TP.FLOAT, None), h.make_tensor_value_info("ys", TP.FLOAT, None)],
               [nh.from_array(np.array(5, np.int64), "M")])
    rng = np.random.default_rng(1)
    feeds = {"x": rng.standard_normal(3).astype(np.float32), "y0": rng.standard_normal(3).astype(np.float32)}
    _run_both(m, feeds)


def test_a_while_loop_on_a_counter_is_unrolled():
    """tf2onnx's while loop: no trip count, the condition a carried counter against a bound (7), the
    counter itself a float: the compiler runs the condition to find 7 iterations."""
    body = _loop_body([h.make_node("Add", ["c_in", "one"], ["c_out"]),
                       h.make_node("Less", ["c_out", "seven"], ["cond_out"]),
                       h.make_node("Sin", ["y_in"], ["s"]), h.make_node("Add", ["s", "x"], ["y_out"])],
                      [("c_in", "c_out"), ("y_in", "y_out")], (),
                      [nh.from_array(np.array(1, np.float32), "one"), nh.from_array(np.array(7, np.float32), "seven")])
    m = _model([h.make_node("Loop", ["", "t", "c0", "x"], ["c", "y"], name="while", body=body)],
               [h.make_tensor_value_info("x", TP.FLOAT, [2, 2])],
               [h.make_tensor_value_info("c", TP.FLOAT, None), h.make_tensor_value_info("y", TP.FLOAT, None)],
               [nh.from_array(np.array(True), "t"), nh.from_array(np.array(0, np.float32), "c0")])
    _run_both(m, {"x": np.random.default_rng(2).standard_normal((2, 2)).astype(np.float32)})


def test_a_loop_whose_condition_reads_run_time_data_is_refused_with_the_reason():
    body = _loop_body([h.make_node("Mul", ["y_in", "x"], ["y_out"]),
                       h.make_node("ReduceSum", ["y_out"], ["tot"], keepdims=0),
                       h.make_node("Less", ["tot", "big"], ["cond_out"])],
                      [("y_in", "y_out")], (), [nh.from_array(np.array(100, np.float32), "big")])
    m = _model([h.make_node("Loop", ["", "t", "x"], ["y"], name="grow", body=body)],
               [h.make_tensor_value_info("x", TP.FLOAT, [3])], [h.make_tensor_value_info("y", TP.FLOAT, None)],
               [nh.from_array(np.array(True), "t")])
    with pytest.raises(CompileError) as e:
        edgeplan.compile(m)
    msg = str(e.value)
    assert "node 'grow' (Loop)" in msg and "loop-carried 'y_in'" in msg and "only known at run time" in msg, msg


@pytest.mark.parametrize("direction", [0, 1])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_a_scan_is_unrolled_in_either_direction_and_on_any_axis(direction, axis):
    """A running sum over x's axis `axis`: the state and each partial sum, stacked on output axis `axis`."""
    body = h.make_graph([h.make_node("Add", ["s_in", "xe"], ["s_out"]), h.make_node("Identity", ["s_out"], ["p"])],
                        "body", [h.make_tensor_value_info("s_in", TP.FLOAT, [3]),
                                 h.make_tensor_value_info("xe", TP.FLOAT, [3])],
                        [h.make_tensor_value_info("s_out", TP.FLOAT, [3]), h.make_tensor_value_info("p", TP.FLOAT, [3])])
    m = _model([h.make_node("Scan", ["s0", "x"], ["s", "ps"], name="scan", body=body, num_scan_inputs=1,
                            scan_input_axes=[axis], scan_input_directions=[direction],
                            scan_output_axes=[axis], scan_output_directions=[direction])],
               [h.make_tensor_value_info("s0", TP.FLOAT, [3]),
                h.make_tensor_value_info("x", TP.FLOAT, [4, 3] if axis == 0 else [3, 4])],
               [h.make_tensor_value_info("s", TP.FLOAT, None), h.make_tensor_value_info("ps", TP.FLOAT, None)])
    rng = np.random.default_rng(axis + 1 + 3 * direction)
    x = rng.standard_normal((4, 3) if axis == 0 else (3, 4)).astype(np.float32)
    _run_both(m, {"s0": rng.standard_normal(3).astype(np.float32), "x": x})


# ---------------------------------------------------------------- Loop with a run-time trip count
def _counting_loop():
    """acc += x * i for M iterations (M a graph input), the running sums as a scan output."""
    body = h.make_graph([
        h.make_node("Cast", ["i"], ["fi"], to=TP.FLOAT),
        h.make_node("Mul", ["x", "fi"], ["xi"]),
        h.make_node("Add", ["acc", "xi"], ["acc2"]),
        h.make_node("Identity", ["c"], ["c2"]),
        h.make_node("Identity", ["acc2"], ["sc"])],
        "body", [h.make_tensor_value_info("i", TP.INT64, []), h.make_tensor_value_info("c", TP.BOOL, []),
                 h.make_tensor_value_info("acc", TP.FLOAT, [3])],
        [h.make_tensor_value_info("c2", TP.BOOL, []), h.make_tensor_value_info("acc2", TP.FLOAT, [3]),
         h.make_tensor_value_info("sc", TP.FLOAT, [3])])
    return _model([h.make_node("Loop", ["M", "", "a0"], ["accf", "sums"], name="frames", body=body)],
                  [h.make_tensor_value_info("M", TP.INT64, []), h.make_tensor_value_info("x", TP.FLOAT, [3]),
                   h.make_tensor_value_info("a0", TP.FLOAT, [3])],
                  [h.make_tensor_value_info("accf", TP.FLOAT, [3]), h.make_tensor_value_info("sums", TP.FLOAT, None)])


def test_a_loop_with_a_run_time_trip_count_runs_to_its_bound():
    m = _counting_loop()
    with pytest.raises(edgeplan.compiler.errors.CompileError, match="frames.*only known at run time.*--max-trips"):
        edgeplan.compile(m)
    plan = edgeplan.compile(m, max_trips=5)
    assert plan.data[6:8] == (3).to_bytes(2, "little")           # plan 1.3: the bound check
    s, ref = Session(plan), ort.InferenceSession(m.SerializeToString())
    rng = np.random.default_rng(0)
    for M in [3, 0, 5, 1, 4]:
        feeds = {"M": np.array(M, np.int64), "x": rng.standard_normal(3).astype(np.float32),
                 "a0": rng.standard_normal(3).astype(np.float32)}
        got, want = s.run(feeds), ref.run(None, feeds)
        assert got["sums"].shape == (M, 3)                           # the iterations that ran
        np.testing.assert_allclose(got["accf"], want[0], rtol=1e-6)
        np.testing.assert_allclose(got["sums"], want[1], rtol=1e-6)
    feeds["M"] = np.array(6, np.int64)
    with pytest.raises(EdgeplanError, match="frames: more than 5 iterations") as e:
        s.run(feeds)
    assert e.value.status == edgeplan.runtime.K.EP_ERR_RUN_BOUND
    feeds["M"] = np.array(2, np.int64)
    np.testing.assert_allclose(s.run(feeds)["sums"], ref.run(None, feeds)[1], rtol=1e-6)   # and recovers


def test_a_while_loop_on_run_time_data_stops_where_onnxruntime_does():
    """while acc < limit: acc = acc * 2 + 1 (the condition reads the carried value; no trip count)."""
    body = h.make_graph([
        h.make_node("Mul", ["acc", "two"], ["a2"]), h.make_node("Add", ["a2", "one"], ["acc2"]),
        h.make_node("Less", ["acc2", "limit"], ["go"]), h.make_node("Identity", ["acc2"], ["trace"])],
        "body", [h.make_tensor_value_info("i", TP.INT64, []), h.make_tensor_value_info("c", TP.BOOL, []),
                 h.make_tensor_value_info("acc", TP.FLOAT, [])],
        [h.make_tensor_value_info("go", TP.BOOL, []), h.make_tensor_value_info("acc2", TP.FLOAT, []),
         h.make_tensor_value_info("trace", TP.FLOAT, [])],
        [nh.from_array(np.array(2, np.float32), "two"), nh.from_array(np.array(1, np.float32), "one")])
    m = _model([h.make_node("Less", ["a0", "limit"], ["go0"]),
                h.make_node("Loop", ["", "go0", "a0"], ["out", "trace"], name="grow", body=body)],
               [h.make_tensor_value_info("a0", TP.FLOAT, []), h.make_tensor_value_info("limit", TP.FLOAT, [])],
               [h.make_tensor_value_info("out", TP.FLOAT, []), h.make_tensor_value_info("trace", TP.FLOAT, None)])
    s, ref = Session(edgeplan.compile(m, max_trips=8)), ort.InferenceSession(m.SerializeToString())
    for a0, limit in [(0.0, 100.0), (5.0, 3.0), (1.0, 2.0), (0.0, 255.0)]:
        feeds = {"a0": np.array(a0, np.float32), "limit": np.array(limit, np.float32)}
        got, want = s.run(feeds), ref.run(None, feeds)
        np.testing.assert_array_equal(got["out"], want[0])
        np.testing.assert_array_equal(got["trace"], want[1])
    with pytest.raises(EdgeplanError, match="grow: more than 8 iterations"):
        s.run({"a0": np.array(0, np.float32), "limit": np.array(1e6, np.float32)})


def test_a_constant_trip_count_with_a_run_time_condition_needs_no_option():
    """M = 4 (a constant) bounds the loop; the condition stops it early at run time."""
    body = h.make_graph([
        h.make_node("Add", ["acc", "x"], ["acc2"]), h.make_node("Less", ["acc2", "limit"], ["go"])],
        "body", [h.make_tensor_value_info("i", TP.INT64, []), h.make_tensor_value_info("c", TP.BOOL, []),
                 h.make_tensor_value_info("acc", TP.FLOAT, [])],
        [h.make_tensor_value_info("go", TP.BOOL, []), h.make_tensor_value_info("acc2", TP.FLOAT, [])])
    m = _model([h.make_node("Loop", ["M", "", "a0"], ["out"], name="upto4", body=body)],
               [h.make_tensor_value_info(n, TP.FLOAT, []) for n in ("a0", "x", "limit")],
               [h.make_tensor_value_info("out", TP.FLOAT, [])], [nh.from_array(np.array(4, np.int64), "M")])
    plan = edgeplan.compile(m)
    assert plan.data[6:8] == (2).to_bytes(2, "little")   # 1.2 Ifs, no bound check: M bounds it exactly
    s, ref = Session(plan), ort.InferenceSession(m.SerializeToString())
    for x, limit in [(1.0, 2.5), (1.0, 100.0), (3.0, 1.0)]:
        feeds = {"a0": np.array(0, np.float32), "x": np.array(x, np.float32), "limit": np.array(limit, np.float32)}
        np.testing.assert_array_equal(s.run(feeds)["out"], ref.run(None, feeds)[0])


@pytest.mark.parametrize("bad", ["then", "else"])
def test_a_branch_that_cannot_run_at_these_shapes_fails_the_run_that_takes_it(bad):
    """A branch edgeplan's ops refuse at the compiled shapes (a Reshape of 4 values to 3): the plan keeps
    the other branch, warns, and a run that takes the bad one fails with EP_ERR_RUN_BOUND naming it."""
    good = [h.make_node("Relu", ["x"], ["r"])]
    worse = [h.make_node("Reshape", ["x", "three"], ["r"])]
    inits = [nh.from_array(np.array([3], np.int64), "three")]
    then = _branch("then", worse if bad == "then" else good, "r", inits)
    els = _branch("else", worse if bad == "else" else good, "r", inits)
    m = _model([h.make_node("If", ["c"], ["y"], name="pick", then_branch=then, else_branch=els)],
               [h.make_tensor_value_info("x", TP.FLOAT, [4]), h.make_tensor_value_info("c", TP.BOOL, [])],
               [h.make_tensor_value_info("y", TP.FLOAT, None)])
    plan = edgeplan.compile(m)
    assert f"warning: node 'pick' (If): its {bad}_branch cannot run at these input shapes" in plan.summary()
    s = Session(plan)
    x = np.array([1, -2, 3, -4], np.float32)
    np.testing.assert_array_equal(s.run(x=x, c=np.array(bad == "else"))["y"], np.maximum(x, 0))
    with pytest.raises(EdgeplanError, match=f"pick/{bad}_branch cannot run") as e:
        s.run(x=x, c=np.array(bad == "then"))
    assert e.value.status == edgeplan.runtime.K.EP_ERR_RUN_BOUND
