"""Control flow: an If whose condition is a constant once the shapes are pinned takes its branch at compile
time (nested Ifs included), each against onnxruntime."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import edgeplan
import edgeplan.compiler.errors
from conftest import rel_err


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


def test_an_if_decided_at_run_time_is_explained():
    """The condition comes from an input's values: the message says where, and what edgeplan does."""
    then = _branch("then", [h.make_node("Relu", ["x"], ["t"])], "t")
    els = _branch("else", [h.make_node("Neg", ["x"], ["e"])], "e")
    nodes = [h.make_node("Greater", ["sr", "k"], ["c"], name="is_16k"),
             h.make_node("If", ["c"], ["y"], name="by_rate", then_branch=then, else_branch=els)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [4]), h.make_tensor_value_info("sr", TP.INT64, [])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)], [nh.from_array(np.array(8000, np.int64), "k")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    with pytest.raises(edgeplan.compiler.errors.CompileError,
                       match="node 'by_rate' \\(If\\): its condition 'c' is only known at run time \\(it comes from "
                             "node 'is_16k' \\(Greater\\)\\)"):
        edgeplan.compile(m)
