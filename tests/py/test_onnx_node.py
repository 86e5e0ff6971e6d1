"""ONNX's own backend node tests (the case generators ship inside the onnx wheel) for every op type the
compiler claims. Prints passed/claimed; fails on any claimed, in-scope case that does not compile, run
and match. Out-of-scope cases are listed with the reason.

Harness policy (what a deployed model looks like): edgeplan plans are compiled for static shapes, so
inputs that determine shapes or are weights in real exports (Reshape's shape, Slice's starts, Resize's
scales, Conv's weights, ...) are bound as initializers at compile time. Data inputs stay runtime inputs.
"""
import warnings

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import edgeplan
from edgeplan.compiler.errors import CompileError

# op type -> input positions bound as constants (weights, shapes, axes, pads, scales)
STATIC_INPUTS = {
    "Conv": (1, 2), "ConvTranspose": (1, 2), "Gemm": (1, 2), "BatchNormalization": (1, 2, 3, 4), "PRelu": (1,),
    "Reshape": (1,), "Slice": (1, 2, 3, 4), "Pad": (1, 2, 3), "Resize": (1, 2, 3), "Upsample": (1,),
    "Split": (1,), "Unsqueeze": (1,), "Squeeze": (1,), "Clip": (1, 2), "ReduceMean": (1,), "ReduceSum": (1,),
    "ReduceMax": (1,), "ReduceMin": (1,), "ReduceProd": (1,), "ReduceSumSquare": (1,), "ReduceL2": (1,),
    "ReduceL1": (1,), "ReduceLogSum": (1,), "ReduceLogSumExp": (1,),
    "ConstantOfShape": (0,), "Expand": (1,), "Tile": (1,), "Range": (0, 1, 2), "TopK": (1,),
    "CumSum": (1,), "CumProd": (1,), "Trilu": (1,), "STFT": (1, 3), "MelWeightMatrix": (0, 1, 2, 3, 4), "OneHot": (1, 2),
    "HannWindow": (0,), "HammingWindow": (0,), "BlackmanWindow": (0,), "Loop": (0, 1), "AffineGrid": (1,),
    "CenterCropPad": (1,), "Col2Im": (1, 2), "MaxUnpool": (2,), "DFT": (1, 2),
    "CausalConvWithState": (1, 2),
    # quantisation parameters and weights, as quantisers write them
    "QuantizeLinear": (1, 2), "DequantizeLinear": (1, 2), "ConvInteger": (1, 2, 3), "MatMulInteger": (1, 3),
    "QLinearConv": (1, 2, 3, 4, 5, 6, 7, 8), "QLinearMatMul": (1, 2, 3, 4, 5, 6, 7),
}

# cases of claimed ops that are out of scope, with the reason
EXCLUDED_PREFIXES = {
    "test_conv_3d": "3-D convolution is not supported",
    "test_col2im_5d": "3-D Col2Im (3-D convolution is not supported)",
    "test_convtranspose_3d": "3-D convolution is not supported",
    "test_bernoulli": "random numbers: no reference can match another generator's draws",
    "test_scan_sum": "opset-8 Scan (a batch axis that onnx.version_converter drops; the compiler refuses it)",
    "test_dropout_default_mask": "Dropout's mask output (edgeplan runs inference)",
    "test_training_dropout": "training-mode Dropout (edgeplan runs inference)",
    **{f"test_{w}window{s}_expanded": "the expanded window reads its size from a graph input (a Range of "
                                       "data-dependent length); edgeplan binds the size as an initializer "
                                       "only for the op itself" for w in ("hann", "hamming", "blackman")
       for s in ("", "_symmetric")},
    **{f"test_affine_grid_{d}{a}_expanded": "the expanded AffineGrid reads its output size from a graph input "
                                             "('size': a run-time ConstantOfShape and Range); edgeplan binds shape "
                                             "operands as initializers only for the op itself"
       for d in ("2d", "3d") for a in ("", "_align_corners")},
    **{f"test_center_crop_pad_{c}_expanded": "the expanded CenterCropPad reads its target shape from a graph input (a "
                                             "run-time Pad amount); edgeplan binds shape operands as initializers "
                                             "only for the op itself"
       for c in ("crop", "pad", "crop_and_pad", "crop_axes_hwc", "crop_negative_axes_hwc", "crop_axes_chw")},
}

# float16, bfloat16 and float64 models compute in float32 (compiler/floats.py)
FLOATS = {np.dtype(t) for t in (np.float32, np.float16, np.float64)} | {np.dtype(ml_dtypes.bfloat16)}


def _claimed() -> set:
    from edgeplan.compiler.ops import HANDLERS
    from edgeplan.compiler.passes import fold
    ops = {op for dom, op in HANDLERS if dom in ("", "ai.onnx")}
    ops |= set(getattr(fold, "FOLDED_OPS", ()))
    ops.add("Constant")       # read by the importer (onnx_import.to_ir)
    from edgeplan.compiler import ml
    ops |= set(ml.RULES)       # ai.onnx.ml ops written as default-domain ones
    from onnx import defs      # ops that onnx defines by a function body are expanded (compiler/functions.py)
    for s in defs.get_all_schemas():
        if s.domain in ("", "ai.onnx") and s.name not in ops and (s.has_function or s.has_context_dependent_function):
            ops.add(s.name)
    return ops


def _cases():
    from onnx.backend.test.case.node import collect_testcases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return collect_testcases(None)


def _out_of_scope(case, claimed) -> str:
    nodes = case.model.graph.node
    ops = {n.op_type for n in nodes}
    for prefix, why in EXCLUDED_PREFIXES.items():
        if case.name.startswith(prefix):
            return why
    if not ops <= claimed:
        return "uses unclaimed ops " + ", ".join(sorted(ops - claimed))
    static = {n.input[p] for n in nodes for p in STATIC_INPUTS.get(n.op_type, ()) if p < len(n.input)}
    index_outs = {o for n in nodes for k, o in enumerate(n.output) if k in INDEX_OUTPUTS.get(n.op_type, ())}
    for io in ([i for i in case.model.graph.input if i.name not in static]
               + [o for o in case.model.graph.output if o.name not in index_outs]):
        tt = io.type.tensor_type
        if not io.type.HasField("tensor_type"):
            return "non-tensor input/output"
        dt = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)) if tt.elem_type else None
        if dt is not None and dt.kind not in "iub" and dt not in FLOATS:
            return f"dtype {dt}: not an edgeplan dtype"
        op = nodes[0].op_type
        if dt is not None and dt.kind in "iub" and op in FLOAT_ONLY:
            return f"{dt} operand: edgeplan 1.0 computes {op} in float32"
        if dt is not None and dt.kind in "iub" and op in INT_OK and dt not in INT_OK[op]:
            return f"{dt} operand: edgeplan computes {op} on float32 and " + ", ".join(sorted(map(str, INT_OK[op])))
    return ""


# op type -> output positions that are int64 indices whatever the data's dtype (not operand dtypes)
INDEX_OUTPUTS = {"MaxPool": (1,)}
FLOAT_ONLY = {"Relu", "Abs", "Neg", "Sqrt", "Exp", "Log", "Round", "Floor", "Ceil",
              "Sigmoid", "Tanh", "ReduceMean",
              "ReduceSumSquare", "ReduceL2", "Softmax", "LogSoftmax", "MatMul", "Gemm", "Reciprocal", "PRelu",
              "LeakyRelu", "Elu", "Erf", "HardSigmoid", "HardSwish", "AveragePool"}
# ops that also run on integers (binary: kernels/ref/binary_int.c; reduce: kernels/ref/reduce_f32.c)
_INTS = {np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)}
_I32_64 = {np.dtype(np.int32), np.dtype(np.int64)}
INT_OK = {**{op: _INTS for op in ("Add", "Sub", "Mul", "Div", "Max", "Min", "Mod")},
          **{op: _I32_64 for op in ("ReduceSum", "ReduceProd")},
          **{op: _I32_64 | {np.dtype(np.bool_)} for op in ("ReduceMax", "ReduceMin")}, "Clip": _INTS, "Pad": _INTS | {np.dtype(np.bool_)},
          "MaxPool": {np.dtype(np.int8), np.dtype(np.uint8)}}


# 8 units in the last place of float16 (2^-11) and bfloat16 (2^-8)
LOW_FLOATS = {np.dtype(np.float16): (2 ** -8, 1e-3), np.dtype(ml_dtypes.bfloat16): (2 ** -5, 1e-2)}


def _arr(x) -> np.ndarray:
    """A case's input or expected output as an array (some cases store TensorProtos)."""
    return numpy_helper.to_array(x) if isinstance(x, onnx.TensorProto) else np.asarray(x)


def _bind_static(model, inputs):
    """Binds static-position inputs as initializers; returns (model, runtime feeds)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    static = set()
    for n in g.node:
        for pos in STATIC_INPUTS.get(n.op_type, ()):
            if pos < len(n.input) and n.input[pos]:
                static.add(n.input[pos])
    feeds = {}
    keep = []
    for vi, arr in zip(list(g.input), inputs):
        if vi.name in static:
            g.initializer.append(numpy_helper.from_array(_arr(arr), vi.name))
        else:
            keep.append(vi)
            feeds[vi.name] = _arr(arr)
    del g.input[:]
    g.input.extend(keep)
    return m, feeds


def _opset(model) -> int:
    return next((int(i.version) for i in model.opset_import if i.domain in ("", "ai.onnx")), 0)


MAX_TRIPS = 16


def _run_case(case):
    for inputs, expected in case.data_sets:
        model, feeds = _bind_static(case.model, inputs)
        if 0 < _opset(model) < 11:
            # what the compiler's own error tells users to do with pre-11 models (And/Or/Xor/Not cases)
            from onnx import version_converter
            model = version_converter.convert_version(model, 11)
        # a Loop whose trip count comes from the inputs (the expanded Range) unrolls to a bound
        plan = edgeplan.compile(model, max_trips=MAX_TRIPS)
        sess = edgeplan.Session(plan)
        outs = sess.run(feeds)
        names = [o.name for o in case.model.graph.output]
        for name, ref in zip(names, expected):
            got = outs[name]
            ref = _arr(ref)
            assert got.shape == ref.shape, f"{name}: shape {got.shape} != {ref.shape}"
            assert got.dtype == ref.dtype, f"{name}: dtype {got.dtype} != {ref.dtype}"
            if ref.dtype in LOW_FLOATS and case.model.graph.node[0].op_type not in ("Cast", "CastLike"):
                # computed in float32 and rounded once, where the reference rounds after every op of
                # the expanded function: a few units in the last place of the 16-bit format
                rtol, atol = LOW_FLOATS[ref.dtype]
                np.testing.assert_allclose(got.astype(np.float32), ref.astype(np.float32), rtol=rtol, atol=atol,
                                           err_msg=name)
            elif ref.dtype.kind == "f":
                np.testing.assert_allclose(got, ref, rtol=max(case.rtol, 1e-4), atol=max(case.atol, 1e-5),
                                           err_msg=name)
            elif ref.dtype in LOW_FLOATS:   # bit-exact casts; bfloat16 compared as float32 (so NaN equals NaN)
                np.testing.assert_array_equal(got.astype(np.float32), ref.astype(np.float32), err_msg=name)
            else:
                np.testing.assert_array_equal(got, ref, err_msg=name)


def test_onnx_backend_node_cases():
    claimed = _claimed()
    cases = [c for c in _cases() if c.kind == "node" and c.model is not None]
    in_claim = [c for c in cases if c.model.graph.node and c.model.graph.node[0].op_type in claimed]
    passed, failed, excluded = [], [], []
    for case in in_claim:
        why = _out_of_scope(case, claimed)
        if why:
            excluded.append((case.name, why))
            continue
        try:
            _run_case(case)
            passed.append(case.name)
        except Exception as e:  # noqa: BLE001 - every failure is reported with its case name
            lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
            failed.append((case.name, f"{type(e).__name__}: {' | '.join(lines[:3])[:300]}"))
    print(f"\nONNX node tests: {len(passed)} passed / {len(passed) + len(failed)} claimed in scope "
          f"({len(claimed)} op types claimed); {len(excluded)} excluded:")
    for name, why in excluded:
        print(f"  excluded {name}: {why}")
    for name, why in failed:
        print(f"  FAILED {name}: {why}")
    assert len(passed) > 200
    assert not failed, f"{len(failed)} claimed node cases failed: " + "; ".join(n for n, _ in failed[:40])


# op types whose every case in ONNX's node suite passes: the count may only go up (raise it when it does)
FULLY_PASSING_FLOOR = 160


def test_onnx_backend_census():
    """Every case of ONNX's backend node suite (as the installed onnx generates it), claimed or not:
    prints passed / total and the op types fully passing, then every other op type with the reason of its
    first failing case. Out-of-scope exclusions do not count as passing here."""
    claimed = _claimed()
    cases = [c for c in _cases() if c.kind == "node" and c.model is not None and c.model.graph.node]
    by_op: dict = {}
    for case in cases:
        op = case.model.graph.node[0].op_type
        if any(case.name.startswith(p) for p in EXCLUDED_PREFIXES) or _out_of_scope(case, claimed):
            why = _out_of_scope(case, claimed) or next(w for p, w in EXCLUDED_PREFIXES.items() if case.name.startswith(p))
            by_op.setdefault(op, []).append((case.name, why))
            continue
        try:
            _run_case(case)
            by_op.setdefault(op, []).append((case.name, None))
        except Exception as e:  # noqa: BLE001 - the census records every outcome
            lines = [ln.strip() for ln in str(e).splitlines() if ln.strip() and not ln.strip().startswith("cannot compile")]
            by_op.setdefault(op, []).append((case.name, f"{type(e).__name__}: {(lines or [''])[0][:160]}"))
    n_pass = sum(why is None for rs in by_op.values() for _, why in rs)
    full = sorted(op for op, rs in by_op.items() if all(why is None for _, why in rs))
    print(f"\nONNX node suite census: {n_pass} passed / {len(cases)} cases; {len(full)} of {len(by_op)} op types "
          f"fully passing:\n  " + ", ".join(full))
    for op in sorted(set(by_op) - set(full)):
        bad = [(n, w) for n, w in by_op[op] if w is not None]
        print(f"  {op}: {len(bad)} of {len(by_op[op])} not passing, e.g. {bad[0][0]}: {bad[0][1]}")
    assert len(full) >= FULLY_PASSING_FLOOR, f"{len(full)} op types fully passing < {FULLY_PASSING_FLOOR}"
