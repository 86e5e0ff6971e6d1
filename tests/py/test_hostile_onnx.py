"""Hostile and malformed ONNX models: each is refused with a CompileError that names the node (or the
initializer, input or file) and says what is wrong, quickly and without allocating what the model asks for.

Every model here is built with onnx.helper and is at most a few MiB; several describe terabytes. Compiles
that must be refused run under tracemalloc (numpy's buffers are traced) and must peak below PEAK_BYTES, so
a size check placed after the allocation it guards fails the test instead of exhausting the machine. The
limits themselves are in pyapi/edgeplan/compiler/limits.py."""
from __future__ import annotations

import os
import re
import tracemalloc
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper

import edgeplan
from edgeplan.compiler import limits
from edgeplan.compiler.dynamic import parse_dims
from edgeplan.compiler.errors import CompileError

PEAK_BYTES = 64 << 20
F = TP.FLOAT
BIG = 2 ** 40


def make(nodes, inputs, outputs, inits=(), opset=17, sparse=()):
    g = h.make_graph(nodes, "hostile", inputs, outputs, initializer=list(inits), sparse_initializer=list(sparse))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def vi(name, shape, dtype=F):
    return h.make_tensor_value_info(name, dtype, shape)


def const(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def i64(name, *vals):
    return const(name, np.array(vals, np.int64))


def refused(model, *needles, **kw) -> str:
    """The CompileError message of compiling model, which must contain every needle; the compile must
    allocate less than PEAK_BYTES on the way."""
    tracemalloc.start()
    try:
        with pytest.raises(CompileError) as ei:
            edgeplan.compile(model, **kw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    msg = str(ei.value)
    for s in needles:
        assert s in msg, msg
    assert peak < PEAK_BYTES, f"compile allocated {peak} bytes before refusing: {msg}"
    return msg


# ============================================================================ invalid graphs
def test_two_nodes_writing_one_tensor():
    m = make([h.make_node("Relu", ["x"], ["y"], name="a"), h.make_node("Sigmoid", ["x"], ["y"], name="b")],
             [vi("x", [1, 4])], [vi("y", [1, 4])])
    refused(m, "node 'b' (Sigmoid)", "tensor 'y'", "node 'a' (Relu)", "exactly one producer")


@pytest.mark.parametrize("out,what", [("x", "graph input"), ("w", "initializer")])
def test_node_writing_an_input_or_initializer(out, what):
    m = make([h.make_node("Relu", ["x"], [out], name="r"), h.make_node("Add", ["x", "w"], ["y"], name="add")],
             [vi("x", [4])], [vi("y", [4])], [const("w", np.ones(4, np.float32))])
    refused(m, "node 'r' (Relu)", f"writes tensor '{out}'", what)


def test_repeated_graph_input():
    m = make([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [4]), vi("x", [4])], [vi("y", [4])])
    refused(m, "graph input 'x' is declared twice")


def test_graph_without_outputs():
    m = make([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [1, 4])], [])
    refused(m, "the graph has no outputs")


@pytest.mark.parametrize("dims", [["T=1..4", "T=1..8"], [("T", (1, 4)), ("T", (1, 8))], ["T=1..4", "T=U"]])
def test_dim_declared_twice(dims):
    with pytest.raises(CompileError) as ei:
        parse_dims(dims)
    msg = str(ei.value)
    assert "'T' is already declared (T=1..4)" in msg and "declare each dim once" in msg, msg


def test_cli_refuses_without_a_traceback(tmp_path, capsys):
    """`edgeplan compile` prints the CompileError as one message and exits 1."""
    from edgeplan.cli import main
    onnx.save(make([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [1, "T"])], [vi("y", [1, "T"])]),
              tmp_path / "dyn.onnx")
    onnx.save(make([h.make_node("Range", ["s", "l", "d"], ["y"], name="rng")], [], [vi("y", None, TP.INT64)],
                   [const("s", np.array(0, np.int64)), const("l", np.array(BIG, np.int64)),
                    const("d", np.array(1, np.int64))]), tmp_path / "range.onnx")
    for model, args, needle in (("dyn.onnx", ["--dim", "T=1..4", "--dim", "T=1..8"], "'T' is already declared"),
                                ("range.onnx", [], "node 'rng' (Range): constant folding would materialise")):
        with pytest.raises(SystemExit) as ei:
            main(["compile", str(tmp_path / model), "-o", str(tmp_path / "out.eplan"), *args])
        err = capsys.readouterr().err
        assert ei.value.code == 1 and "Traceback" not in err and err.startswith("edgeplan: "), err
        assert needle in err, err


# ============================================================================ sizes: constant folding
FOLD_CASES = {
    "Range": ([h.make_node("Range", ["s", "l", "d"], ["y"], name="k")],
              [const("s", np.array(0, np.int64)), const("l", np.array(BIG, np.int64)),
               const("d", np.array(1, np.int64))],
              "[1099511627776] int64 = 8.0 TiB"),
    "ConstantOfShape": ([h.make_node("ConstantOfShape", ["s"], ["y"], name="k")], [i64("s", 2 ** 20, 2 ** 20)],
                        "[1048576, 1048576] float32 = 4.0 TiB"),
    "Expand": ([h.make_node("Expand", ["w", "s"], ["y"], name="k")],
               [const("w", np.ones((1, 1), np.float32)), i64("s", 2 ** 20, 2 ** 20)], "4.0 TiB"),
    "Tile": ([h.make_node("Tile", ["w", "s"], ["y"], name="k")],
             [const("w", np.ones((2, 2), np.float32)), i64("s", 2 ** 20, 2 ** 20)], "16.0 TiB"),
    "MatMul": ([h.make_node("MatMul", ["a", "b"], ["y"], name="k")],
               [const("a", np.ones((2 ** 20, 1), np.float32)), const("b", np.ones((1, 2 ** 20), np.float32))],
               "[1048576, 1048576] float32"),
    "Add": ([h.make_node("Add", ["a", "b"], ["y"], name="k")],
            [const("a", np.ones((2 ** 20, 1), np.float32)), const("b", np.ones((1, 2 ** 20), np.float32))], "4.0 TiB"),
    "Resize": ([h.make_node("Resize", ["w", "", "sc"], ["y"], name="k")],
               [const("w", np.ones((1, 1, 2, 2), np.float32)),
                const("sc", np.array([1, 1, 2 ** 20, 2 ** 20], np.float32))],
               "[1, 1, 2097152, 2097152] float32"),
    "Pad": ([h.make_node("Pad", ["w", "p"], ["y"], name="k")],
            [const("w", np.ones((2, 2), np.float32)), i64("p", 0, 0, 2 ** 20, 2 ** 20)], "4.0 TiB"),
    "OneHot": ([h.make_node("OneHot", ["i", "depth", "v"], ["y"], name="k")],
               [i64("i", 1, 2, 3), const("depth", np.array(BIG, np.int64)), const("v", np.array([0, 1], np.float32))],
               "[3, 1099511627776] float32"),
}


@pytest.mark.parametrize("op", sorted(FOLD_CASES))
def test_folding_refuses_huge_constants(op):
    """A few hundred bytes of constants that fold into terabytes are refused before numpy sees them."""
    nodes, inits, size = FOLD_CASES[op]
    refused(make(nodes, [], [vi("y", None)], inits), f"node 'k' ({op})", "constant folding would materialise",
            size, f"limit for one folded constant ({limits.fmt_bytes(limits.MAX_FOLD_BYTES)})")


def test_folding_limit_follows_the_constant_inputs(monkeypatch):
    """A folded constant may be FOLD_GROWTH x its constant inputs (a Cast of real int8 weights widens them),
    but no more than MAX_FOLD_BYTES from little data; limits scaled down so nothing large is built."""
    monkeypatch.setattr(limits, "MAX_FOLD_BYTES", 256 << 10)
    n = 1 << 17
    cast = make([h.make_node("Cast", ["w"], ["w64"], name="widen", to=TP.INT64),
                 h.make_node("Add", ["x", "w64"], ["y"], name="add")],
                [vi("x", [n], TP.INT64)], [vi("y", [n], TP.INT64)], [const("w", np.arange(n).astype(np.int8))])
    y = edgeplan.Session(edgeplan.compile(cast)).run({"x": np.ones(n, np.int64)})["y"]
    assert np.array_equal(y, np.arange(n).astype(np.int8).astype(np.int64) + 1)
    fill = make([h.make_node("ConstantOfShape", ["s"], ["y"], name="fill")], [], [vi("y", None)], [i64("s", n)])
    refused(fill, "node 'fill' (ConstantOfShape)", "[131072] float32 = 512.0 KiB", "(256.0 KiB)")


def test_folded_constants_have_a_total_budget(monkeypatch):
    monkeypatch.setattr(limits, "MAX_FOLD_BYTES", 1 << 20)
    monkeypatch.setattr(limits, "MAX_FOLD_TOTAL_BYTES", 2 << 20)
    nodes = [h.make_node("ConstantOfShape", ["s"], [f"c{k}"], name=f"fill{k}") for k in range(4)]
    nodes.append(h.make_node("Sum", [f"c{k}" for k in range(4)], ["y"], name="sum"))
    msg = refused(make(nodes, [], [vi("y", None)], [i64("s", 1 << 18)]), "node 'fill2' (ConstantOfShape)",
                  "limit for all folded constants (2.0 MiB, of which folding has used 2.0 MiB)")
    assert "fill0" not in msg and "fill1" not in msg


def test_sparse_initializer_dense_form_is_bounded():
    sp = h.make_sparse_tensor(const("w", np.ones(2, np.float32)), i64("w_idx", 1, 3), [2 ** 20, 2 ** 20])
    m = make([h.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", [4])], [vi("y", None)], sparse=[sp])
    refused(m, "sparse initializer 'w'", "dense form [1048576, 1048576] float32 is 4.0 TiB")


@pytest.mark.parametrize("idx,bad", [((1, 99), "99"), ((1, -1), "-1")])
def test_sparse_initializer_index_out_of_range(idx, bad):
    sp = h.make_sparse_tensor(const("w", np.ones(2, np.float32)), i64("w_idx", *idx), [4])
    m = make([h.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", [4])], [vi("y", None)], sparse=[sp])
    refused(m, "sparse initializer 'w'", "index outside [0, 4)")


def test_constant_built_by_stft_is_bounded():
    m = make([h.make_node("STFT", ["x", "step", "", "n"], ["y"], name="stft")], [vi("x", [1, 2 ** 20, 1])],
             [vi("y", None)], [const("step", np.array(1, np.int64)), const("n", np.array(2 ** 19, np.int64))])
    refused(m, "node 'stft' (STFT)", "frame_length 524288 needs a DFT basis of 1.0 TiB")


def test_constant_broadcast_by_layernorm_is_bounded(monkeypatch):
    """LayerNormalization broadcasts a constant scale to the normalised shape at compile time (the limit
    scaled down, so that nothing large is built)."""
    monkeypatch.setattr(limits, "MAX_FOLD_BYTES", 256 << 20)
    m = make([h.make_node("LayerNormalization", ["x", "s"], ["y"], name="ln", axis=1)], [vi("x", [1, 2 ** 27])],
             [vi("y", None)], [const("s", np.ones(1, np.float32))])
    refused(m, "node 'ln' (LayerNormalization): broadcasting constant 's' to [134217728] would build 512.0 MiB")


def test_gemm_bias_broadcast_is_bounded():
    """Gemm's [M, 1] bias broadcast to [M, N] is not built at compile time when it would be huge."""
    n = 2 ** 20
    m = make([h.make_node("Gemm", ["a", "b", "c"], ["y"], name="gemm")], [vi("a", [n, 1])], [vi("y", None)],
             [const("b", np.ones((1, n), np.float32)), const("c", np.ones((n, 1), np.float32))])
    refused(m, "node 'gemm' (Gemm)", "[1048576, 1048576] float32 is 4.0 TiB", "4.0 GiB limit for one tensor")


# ============================================================================ sizes: tensors and arena
def test_huge_resize_output_is_refused():
    m = make([h.make_node("Resize", ["x", "", "sc"], ["y"], name="rs", mode="nearest")], [vi("x", [1, 3, 64, 64])],
             [vi("y", None)], [const("sc", np.array([1, 1, 8192, 8192], np.float32))])
    refused(m, "node 'rs' (Resize)", "output 'y' [1, 3, 524288, 524288] float32 is 3.0 TiB",
            "4.0 GiB limit for one tensor (what a 32-bit board can address)")


def test_arena_above_limit_names_the_largest_tensors():
    """No tensor is above the limit (1 GiB each), but five live at once: 5 GiB of arena."""
    n = 1 << 28
    nodes = [h.make_node("Relu", ["x"], ["a"], name="r1"), h.make_node("Sigmoid", ["x"], ["b"], name="s1"),
             h.make_node("Tanh", ["x"], ["c"], name="t1"), h.make_node("Add", ["a", "b"], ["d"], name="add1")]
    m = make(nodes, [vi("x", [1, n])], [vi(o, [1, n]) for o in "abcd"])
    refused(m, "arena of 5.0 GiB", "above the 4.0 GiB limit", "'x' [1, 268435456] float32 1.0 GiB (graph input)",
            "from node 'r1' (unary)", "from node 's1' (unary)")


def test_variable_dim_bound_is_held_to_the_tensor_limit():
    m = make([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [1, "T", 4096])], [vi("y", [1, "T", 4096])])
    refused(m, "input 'x' [1, 2147483647, 4096] float32 is 32.0 TiB", dims={"T": (1, 2 ** 31 - 1)})


# ============================================================================ windows: kernels, strides, dilations, pads
def _conv(**attrs):
    w = const("w", np.ones((4, 3, 3, 3), np.float32))
    return make([h.make_node("Conv", ["x", "w"], ["y"], name="conv1", **attrs)], [vi("x", [1, 3, 8, 8])],
                [vi("y", None)], [w])


def _conv_t(**attrs):
    w = const("w", np.ones((3, 4, 3, 3), np.float32))
    return make([h.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", **attrs)], [vi("x", [1, 3, 8, 8])],
                [vi("y", None)], [w])


def _pool(op, **attrs):
    return make([h.make_node(op, ["x"], ["y"], name="pool", **attrs)], [vi("x", [1, 3, 8, 8])], [vi("y", None)],
                opset=19)


WINDOW_CASES = {
    "conv stride 0": (lambda: _conv(strides=[0, 1]), "node 'conv1' (Conv): strides must be >= 1, got [0, 1]"),
    "conv dilation 0": (lambda: _conv(dilations=[1, 0]), "node 'conv1' (Conv): dilations must be >= 1, got [1, 0]"),
    "conv negative pad": (lambda: _conv(pads=[-1, 0, 0, 0]),
                          "node 'conv1' (Conv): pads must be >= 0, got [-1, 0, 0, 0]"),
    "conv strides rank": (lambda: _conv(strides=[2]), "node 'conv1' (Conv): strides [2] do not match 2 spatial dims"),
    "conv stride too big": (lambda: _conv(strides=[1, 2 ** 21]), "strides must be <= 1048576"),
    "conv kernel 0": (lambda: make([h.make_node("Conv", ["x", "w"], ["y"], name="conv1")], [vi("x", [1, 3, 8, 8])],
                                   [vi("y", None)], [const("w", np.ones((4, 3, 0, 3), np.float32))]),
                      "node 'conv1' (Conv): kernel sizes must be >= 1, got [0, 3]"),
    "convT stride 0": (lambda: _conv_t(strides=[0, 1]), "node 'up' (ConvTranspose): strides must be >= 1, got [0, 1]"),
    "convT dilation 0": (lambda: _conv_t(dilations=[0, 1]), "node 'up' (ConvTranspose): dilations must be >= 1"),
    "convT output_padding": (lambda: _conv_t(strides=[2, 2], output_padding=[2, 0]),
                             "node 'up' (ConvTranspose): output_padding [2, 0] must be smaller than the stride"),
    "maxpool kernel 0": (lambda: _pool("MaxPool", kernel_shape=[0, 2]),
                         "node 'pool' (MaxPool): kernel sizes must be >= 1, got [0, 2]"),
    "maxpool stride 0": (lambda: _pool("MaxPool", kernel_shape=[2, 2], strides=[0, 1]),
                         "node 'pool' (MaxPool): strides must be >= 1, got [0, 1]"),
    "maxpool dilation 0": (lambda: _pool("MaxPool", kernel_shape=[2, 2], dilations=[1, 0]),
                           "node 'pool' (MaxPool): dilations must be >= 1, got [1, 0]"),
    "avgpool stride 0": (lambda: _pool("AveragePool", kernel_shape=[2, 2], strides=[1, 0]),
                         "node 'pool' (AveragePool): strides must be >= 1, got [1, 0]"),
}


@pytest.mark.parametrize("case", list(WINDOW_CASES))
def test_window_attributes_out_of_range(case):
    build, needle = WINDOW_CASES[case]
    refused(build(), needle)


def test_window_limit_is_the_runtimes():
    """limits.PARAM_LIMIT is the runtime's EP_PARAM_LIMIT (an internal header, so not in the cffi declarations)."""
    hdr = Path(__file__).resolve().parents[2] / "runtime_c" / "src" / "ops" / "shape_check.h"
    if not hdr.is_file():
        pytest.skip("not a source checkout")
    m = re.search(r"#define\s+EP_PARAM_LIMIT\s+\(1 << (\d+)\)", hdr.read_text())
    assert m and limits.PARAM_LIMIT == 1 << int(m.group(1))


# ============================================================================ values that do not fit the plan's fields
def test_pad_of_2_40():
    m = make([h.make_node("Pad", ["x", "p"], ["y"], name="pad")], [vi("x", [1, 4])], [vi("y", None)],
             [i64("p", 0, 0, 0, BIG)])
    refused(m, "node 'pad' (Pad): output 'y' [1, 1099511627780] float32 has dim 1", "int32")


def test_pad_parameter_that_does_not_fit_int32():
    """The output shape is fine (2^40 added, 2^40 cropped), the pads are not: the op's C struct is int32."""
    m = make([h.make_node("Pad", ["x", "p"], ["y"], name="pad")], [vi("x", [1, 4])], [vi("y", None)],
             [i64("p", 0, BIG, 0, -BIG)])
    refused(m, "node 'pad' (Pad): parameter 'pads'", "ep_pad_params", "int32_t")


def test_conv_pad_of_2_40():
    refused(_conv(pads=[BIG, 0, 0, 0]), "node 'conv1' (Conv): pads must be <= 1048576", str(BIG))


def test_slice_step_of_2_40():
    m = make([h.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"], name="sl")], [vi("x", [1, 8])], [vi("y", None)],
             [i64("s", 0), i64("e", 8), i64("a", 1), i64("st", BIG)])
    refused(m, "node 'sl' (Slice): parameter 'steps'", "int32_t")


def test_input_dim_of_2_40_in_the_model():
    m = make([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [1, BIG])], [vi("y", [1, BIG])])
    refused(m, "input 'x' [1, 1099511627776] float32 has dim 1 = 1099511627776", "int32")


def test_input_dim_of_2_40_pinned():
    m = make([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [1, "N"])], [vi("y", [1, "N"])])
    refused(m, "input 'x' dim 1 pinned to 1099511627776", "<= 2147483647", shapes={"x": (1, BIG)})


# ============================================================================ external data
def _external_model(d, location, offset=None, length=None):
    w = numpy_helper.from_array(np.arange(4, dtype=np.float32), "w")
    w.ClearField("raw_data")
    w.data_location = TP.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = w.external_data.add()
            e.key, e.value = k, str(v)
    m = make([h.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", [4])], [vi("y", [4])], [w])
    d.mkdir(exist_ok=True)
    onnx.save(m, d / "m.onnx")
    return m, d / "m.onnx"


@pytest.fixture
def secret(tmp_path):
    """A readable file outside the model's directory tmp_path/model."""
    p = tmp_path / "secret.bin"
    p.write_bytes(np.arange(4, dtype=np.float32).tobytes())
    return p


def test_external_data_file_missing(tmp_path):
    _, path = _external_model(tmp_path / "model", "nope.bin")
    refused(str(path), "initializer 'w'", "'nope.bin', which does not exist")


def test_external_data_escaping_the_model_directory(tmp_path, secret):
    _, path = _external_model(tmp_path / "model", "../secret.bin")
    refused(str(path), "initializer 'w'", "'../secret.bin', which is outside the model's directory")


def test_external_data_absolute_path(tmp_path, secret):
    _, path = _external_model(tmp_path / "model", str(secret))
    refused(str(path), "initializer 'w'", f"'{secret}', an absolute path")


def test_external_data_symlink_out_of_the_directory(tmp_path, secret):
    _, path = _external_model(tmp_path / "model", "w.bin")
    os.symlink(secret, tmp_path / "model" / "w.bin")
    refused(str(path), "initializer 'w'", "'w.bin', which is outside the model's directory")


def test_external_data_range_past_the_file(tmp_path):
    _, path = _external_model(tmp_path / "model", "w.bin", offset=8, length=16)
    (tmp_path / "model" / "w.bin").write_bytes(bytes(16))
    refused(str(path), "initializer 'w'", "needs bytes up to 24 of its external file 'w.bin', which has 16")


def test_external_data_file_shorter_than_the_tensor(tmp_path):
    _, path = _external_model(tmp_path / "model", "w.bin")
    (tmp_path / "model" / "w.bin").write_bytes(bytes(8))
    refused(str(path), "initializer 'w' has 8 bytes of raw_data", "need 16 bytes")


@pytest.mark.parametrize("given", ["bytes", "a ModelProto"])
def test_external_data_without_a_directory(tmp_path, given):
    m, _ = _external_model(tmp_path / "model", "w.bin")
    (tmp_path / "model" / "w.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    refused(m.SerializeToString() if given == "bytes" else m, "initializer 'w'", "external file 'w.bin'",
            f"given as {given}, with no directory", "pass the model's path")


def test_external_data_inside_the_directory_still_loads(tmp_path):
    d = tmp_path / "model"
    d.mkdir()
    m = make([h.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", [4])], [vi("y", [4])],
             [const("w", np.arange(4, dtype=np.float32))])
    onnx.save(m, d / "m.onnx", save_as_external_data=True, location="w.bin", size_threshold=0)
    y = edgeplan.Session(edgeplan.compile(str(d / "m.onnx"))).run({"x": np.ones(4, np.float32)})["y"]
    assert np.array_equal(y, np.arange(4, dtype=np.float32) + 1)


# ============================================================================ stored data that does not match its dims
def test_short_raw_data():
    w = const("w", np.ones(4, np.float32))
    w.raw_data = w.raw_data[:10]
    m = make([h.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", [4])], [vi("y", [4])], [w])
    refused(m, "initializer 'w' has 10 bytes of raw_data, but its dims [4] of float32 need 16 bytes")


def test_raw_data_far_short_of_huge_dims():
    w = const("w", np.ones(4, np.float32))
    del w.dims[:]
    w.dims.extend([2 ** 20, 2 ** 20])
    m = make([h.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", [4])], [vi("y", [4])], [w])
    refused(m, "initializer 'w' has 16 bytes of raw_data", "dims [1048576, 1048576] of float32 need 4398046511104")


def test_typed_data_count_mismatch():
    w = TP(name="w", data_type=F, dims=[4], float_data=[1.0, 2.0, 3.0])
    m = make([h.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", [4])], [vi("y", [4])], [w])
    refused(m, "initializer 'w' has 3 values in float_data, but its dims [4] of float32 need 4")


def test_constant_attribute_with_short_raw_data():
    t = const("v", np.ones(4, np.float32))
    t.raw_data = t.raw_data[:3]
    m = make([h.make_node("Constant", [], ["c"], name="k", value=t), h.make_node("Add", ["x", "c"], ["y"], name="add")],
             [vi("x", [4])], [vi("y", [4])])
    refused(m, "node 'k' (Constant) attribute 'value' has 3 bytes of raw_data", "need 16 bytes")


# ============================================================================ other malformed graphs
def _strides_string():
    node = h.make_node("Conv", ["x", "w"], ["y"], name="conv1")
    node.attribute.append(h.make_attribute("strides", "ab"))
    return make([node], [vi("x", [1, 3, 8, 8])], [vi("y", None)], [const("w", np.ones((4, 3, 3, 3), np.float32))])


OTHER_CASES = {
    # broken before: a traceback or a silent acceptance
    "empty op_type": (lambda: make([h.make_node("", ["x"], ["y"], name="e")], [vi("x", [4])], [vi("y", [4])]),
                      "node 'e' (): the node has no op_type"),
    "complex64 constant": (lambda: make([h.make_node("Gather", ["w", "i"], ["y"], name="g")], [vi("i", [2], TP.INT64)],
                                        [vi("y", None)], [const("w", np.ones((4, 2), np.complex64))]),
                           "node 'g' (Gather): tensor 'w' has dtype complex64, which plans do not hold"),
    "complex64 input": (lambda: make([h.make_node("Identity", ["x"], ["y"], name="id")], [vi("x", [4], TP.COMPLEX64)],
                                     [vi("y", None)]), "input 'x' [4] complex64, a dtype plans do not hold"),
    "rank 9 input": (lambda: make([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [1] * 9)], [vi("y", None)]),
                     "input 'x' [1, 1, 1, 1, 1, 1, 1, 1, 1] float32 has rank 9"),
    "string strides": (_strides_string, "node 'conv1' (Conv): attribute 'strides' is STRING, Conv takes INTS"),
    "infinite scale": (lambda: make([h.make_node("Resize", ["x", "", "sc"], ["y"], name="rs")], [vi("x", [1, 1, 4, 4])],
                                    [vi("y", None)], [const("sc", np.array([1, 1, np.inf, 1], np.float32))]),
                       "node 'rs' (Resize): scale inf must be a finite number > 0"),
    "constant with two outputs": (lambda: make([h.make_node("Constant", [], ["c", "d"], name="k",
                                                            value=const("v", np.ones(4, np.float32))),
                                                h.make_node("Add", ["x", "c"], ["y"], name="add")],
                                               [vi("x", [4])], [vi("y", [4])]),
                                  "node 'k' (Constant): has 2 outputs, Constant takes at most 1"),
    # a dim written as a value <= 0 (Paddle's -1 batch) is a symbolic dim, named after its input
    "negative input dim": (lambda: make([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [1, -5])],
                                        [vi("y", None)]),
                           "input 'x' dim 1 ('x_dim1') is symbolic: pin it with shapes={'x': (1, 1)} / "
                           "--shape x=1,1, or bound it with dims={'x_dim1': (MIN, MAX)}"),
    # refused clearly before too: kept so that they stay so
    "undefined input": (lambda: make([h.make_node("Add", ["x", "ghost"], ["y"], name="add")], [vi("x", [4])],
                                     [vi("y", [4])]), "node 'add' (Add): input 'ghost' has no producer"),
    "dim_param without a bound": (lambda: make([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [1, "T"])],
                                               [vi("y", [1, "T"])]),
                                  "input 'x' dim 1 ('T') is symbolic: pin it with shapes="),
    "axis out of range": (lambda: make([h.make_node("Softmax", ["x"], ["y"], name="sm", axis=-5)], [vi("x", [1, 4])],
                                       [vi("y", [1, 4])]), "node 'sm' (Softmax): axis -5 is out of range for rank 2"),
    "reshape with two -1": (lambda: make([h.make_node("Reshape", ["x", "s"], ["y"], name="rs")], [vi("x", [2, 4])],
                                         [vi("y", None)], [i64("s", -1, -1)]),
                            "node 'rs' (Reshape): invalid shape [-1, -1]"),
    "cycle": (lambda: make([h.make_node("Add", ["x", "b"], ["a"], name="n1"),
                            h.make_node("Relu", ["a"], ["b"], name="n2")], [vi("x", [4])], [vi("b", [4])]),
              "node 'n1' (Add): input 'b' comes from node 'n2' (Relu), which depends on this node's output: the "
              "graph has a cycle"),
}


@pytest.mark.parametrize("case", list(OTHER_CASES))
def test_malformed_graph_is_explained(case):
    build, needle = OTHER_CASES[case]
    refused(build(), needle)


def test_a_compile_time_op_names_the_upstream_cause():
    """A window as long as a data-dependent count is not 'unsupported': the message names the input and
    the node it comes from, and the op that depends on it is not reported a second time."""
    nodes = [h.make_node("NonZero", ["x"], ["nz"], name="nz"), h.make_node("Size", ["nz"], ["n"], name="count"),
             h.make_node("HannWindow", ["n"], ["w"], name="window"), h.make_node("Relu", ["w"], ["z"], name="after")]
    m = make(nodes, [vi("x", [4])], [vi("z", None)])
    msg = refused(m, "node 'window' (HannWindow): HannWindow is evaluated at compile time, but its input 'n' is not "
                     "a constant: it comes from node 'count' (Size)")
    assert "after" not in msg and "unsupported" not in msg