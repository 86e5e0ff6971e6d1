"""Constant folding: every node whose inputs are all constants is evaluated (numpy for the common shape
ops, by the op's FOLD entry beside its lowering in ops/<family>.py; onnx.reference.ReferenceEvaluator on a
one-node model otherwise); Shape and Size of tensors with
static shapes become constants. Between rounds, shapes are re-inferred so that Shape→...→Reshape chains
fold away completely."""
from __future__ import annotations

import math

import numpy as np

from .. import ir, limits
from . import rewrite, unroll
from ..errors import Problems
from ..ops import FOLD
from ..onnx_import import infer_shapes, np_dtype, shape_of

NEVER_FOLD = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
              "Bernoulli", "If", "Loop", "Scan", "SequenceConstruct", "SequenceEmpty"}
MAX_ROUNDS = 8

# ops the compiler supports only by evaluating them at compile time (static shapes, constant inputs);
# Dropout (inference) is removed by cleanup; Loop and Scan with a compile-time trip count are unrolled
# (passes/unroll.py), the ops of rewrite.REWRITES rewritten as other ops (passes/rewrite.py). The ONNX node
# tests claim these too.
FOLDED_OPS = ("Shape", "Size", "ConstantOfShape", "Range", "Dropout", "MelWeightMatrix", "HannWindow",
              "HammingWindow", "BlackmanWindow", "Loop", "Scan") + tuple(rewrite.REWRITES)


def _ref_eval(node, arrays, opset):
    from onnx import helper, reference
    in_names = [f"in{k}" if a is not None else "" for k, a in enumerate(arrays)]
    out_names = [f"out{k}" if o else "" for k, o in enumerate(node.outputs)]
    p = helper.make_node(node.op_type, in_names, out_names, domain=node.domain)
    if node.proto is not None:
        p.attribute.extend(node.proto.attribute)
    else:
        for k, v in node.attrs.items():
            p.attribute.append(helper.make_attribute(k, v))
    ins = [helper.make_tensor_value_info(nm, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
           for nm, a in zip(in_names, arrays) if nm]
    outs = [helper.make_empty_tensor_value_info(nm) for nm in out_names if nm]
    g = helper.make_graph([p], "fold", ins, outs)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    res = reference.ReferenceEvaluator(model).run(None, {nm: a for nm, a in zip(in_names, arrays) if nm})
    it = iter(res)
    return [np.asarray(next(it)) if o else None for o in out_names]


def evaluate(node, arrays, opset) -> list:
    f = FOLD.get(node.op_type)
    if f is not None and node.domain == "" and len(node.outputs) == 1:
        try:
            return [np.asarray(f(node, arrays))]
        except Exception:  # noqa: BLE001 — fall back to the reference evaluator
            pass
    return _ref_eval(node, arrays, opset)


# ---- output sizes before evaluating: every op whose output can be much larger than its inputs ----
BROADCAST = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "PRelu", "Mod", "And", "Or", "Xor",
             "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "BitShift", "BitwiseAnd", "BitwiseOr",
             "BitwiseXor", "Where"}
WINDOWS = {"HannWindow", "HammingWindow", "BlackmanWindow"}


def _vals(a, most=64):
    """The values of a small constant as Python ints, or None."""
    if a is None or a.size > most or not np.issubdtype(a.dtype, np.number):
        return None
    return [int(v) for v in a.reshape(-1)]


def _bcast(*shapes):
    """numpy broadcasting of shapes (Python ints, no array built), or None if they do not broadcast."""
    r = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(r):
        ds = {int(s[i - r + len(s)]) for s in shapes if i - r + len(s) >= 0}
        big = ds - {1}
        if len(big) > 1:
            return None
        out.append(big.pop() if big else 1)
    return out


def _range_len(a):
    s, l, d = (x.reshape(-1)[0].item() if x is not None and x.size == 1 else None for x in a[:3])
    if s is None or l is None or not d:
        return None
    if all(isinstance(v, int) for v in (s, l, d)):
        return [max(0, -((s - l) // d))]
    q = (float(l) - float(s)) / float(d)
    return [max(0, math.ceil(q))] if math.isfinite(q) else None


def _resize_shape(n, a):
    x = a[0]
    r = x.ndim
    axes = [int(v) % r if r else 0 for v in n.attrs.get("axes", range(r))]
    sizes = a[3] if len(a) > 3 and a[3] is not None and a[3].size else None
    scales = a[2] if len(a) > 2 and a[2] is not None and a[2].size else None
    if n.op_type == "Upsample":
        scales, axes = (a[1] if len(a) > 1 else None), list(range(r))
        if scales is None and "scales" in n.attrs:
            scales = np.asarray(n.attrs["scales"], np.float64)
    out = list(x.shape)
    if sizes is not None and sizes.size == len(axes):
        vals = [int(v) for v in sizes.reshape(-1)]
        if n.attrs.get("keep_aspect_ratio_policy", "stretch") != "stretch":
            # the output keeps the aspect ratio at the largest ratio at most
            ratio = max((v / d if d else 0.0) for v, d in zip(vals, (x.shape[ax] for ax in axes)))
            vals = [math.floor(ratio * x.shape[ax] + 0.5) for ax in axes]
        for ax, v in zip(axes, vals):
            out[ax] = v
        return out
    if scales is not None and scales.size == len(axes):
        for ax, sc in zip(axes, scales.reshape(-1).astype(np.float64)):
            if not math.isfinite(sc):
                return None
            out[ax] = math.floor(float(sc) * x.shape[ax])
        return out
    return None


def _pad_shape(n, a):
    x = a[0]
    pads = _vals(a[1]) if len(a) > 1 and a[1] is not None else [int(v) for v in n.attrs.get("pads", [])]
    axes = _vals(a[3]) if len(a) > 3 and a[3] is not None else list(range(x.ndim))
    if pads is None or axes is None or len(pads) != 2 * len(axes) or not x.ndim:
        return None
    out = list(x.shape)
    for k, ax in enumerate(axes):
        out[ax % x.ndim] += pads[k] + pads[k + len(axes)]
    return out


def _matmul_shape(n, a):
    A, B = a[0], a[1]
    if A.ndim == 0 or B.ndim == 0:
        return None
    if n.op_type == "Gemm":
        rows = A.shape[1] if int(n.attrs.get("transA", 0)) else A.shape[0]
        cols = B.shape[0] if int(n.attrs.get("transB", 0)) else B.shape[-1]
        return [rows, cols]
    sa = (1,) + A.shape if A.ndim == 1 else A.shape
    sb = B.shape + (1,) if B.ndim == 1 else B.shape
    batch = _bcast(sa[:-2], sb[:-2])
    return None if batch is None else batch + [sa[-2], sb[-1]]


def _predicted_shape(n, a):
    """The shape of output 0 of n from its constant inputs a, computed without evaluating it, for the ops
    whose output can be far larger than their inputs; None when not known."""
    op = n.op_type
    try:
        if op == "Range":
            return _range_len(a)
        if op == "ConstantOfShape":
            return _vals(a[0])
        if op == "Expand":
            shp = _vals(a[1])
            return None if shp is None else _bcast(a[0].shape, shp)
        if op == "Tile":
            reps = _vals(a[1])
            return None if reps is None or len(reps) != a[0].ndim else [d * k for d, k in zip(a[0].shape, reps)]
        if op in ("Resize", "Upsample"):
            return _resize_shape(n, a)
        if op == "Pad":
            return _pad_shape(n, a)
        if op in ("MatMul", "MatMulInteger", "Gemm"):
            return _matmul_shape(n, a)
        if op in BROADCAST:
            return _bcast(*[x.shape for x in a if x is not None])
        if op == "Gather":
            x, i = a[0], a[1]
            ax = int(n.attrs.get("axis", 0)) % max(x.ndim, 1)
            return list(x.shape[:ax]) + list(i.shape) + list(x.shape[ax + 1:])
        if op == "OneHot":
            depth = _vals(a[1])
            if depth is None or len(depth) != 1:
                return None
            shape = list(a[0].shape)
            ax = int(n.attrs.get("axis", -1))
            shape.insert(ax % (len(shape) + 1), depth[0])
            return shape
        if op in WINDOWS:
            size = _vals(a[0])
            return None if size is None or len(size) != 1 else size
        if op == "MelWeightMatrix":
            mel, dft = _vals(a[0]), _vals(a[1])
            return None if not mel or not dft else [dft[0] // 2 + 1, mel[0]]
    except (ValueError, TypeError, IndexError, AttributeError, ArithmeticError):
        return None     # malformed inputs: evaluating the node reports them
    return None


def _out_dtype(m, n, a):
    """The dtype of output 0 of n: from the op's definition where it fixes it, else as inferred, else the
    widest input's."""
    if n.op_type == "ConstantOfShape":
        val = n.attrs.get("value")
        return np.dtype(np.float32) if val is None else np.asarray(val).dtype
    if n.op_type == "Cast" and np_dtype(int(n.attrs.get("to", 0))) is not None:
        return np.dtype(np_dtype(int(n.attrs["to"])))
    if n.op_type in ("Range", "Expand", "Tile", "Pad") and a and a[0] is not None:
        return np.dtype(a[0].dtype)
    v = m.values.get(n.outputs[0]) if n.outputs and n.outputs[0] else None
    if v is not None and v.dtype is not None:
        return np.dtype(v.dtype)
    dts = [np.dtype(x.dtype) for x in a if x is not None]
    return max(dts, key=lambda d: d.itemsize) if dts else np.dtype(np.float32)


def _fold_size(m, n, a):
    """(shape, bytes) output 0 of n will have if folded: predicted from its inputs, else the inferred
    static shape; None if unknown."""
    shape = _predicted_shape(n, a)
    if shape is None and n.outputs and n.outputs[0]:
        shape = m.static_shape(n.outputs[0])
    if shape is None or any(int(d) < 0 for d in shape):
        return None
    return list(shape), limits.nbytes(shape, _out_dtype(m, n, a))


def _refuse(shape, size, dtype, limit_text, what="one folded constant"):
    desc = f"[{', '.join(map(str, shape))}] {np.dtype(dtype).name}"
    return (f"constant folding would materialise {desc} = {limits.fmt_bytes(size)}, above the limit for "
            f"{what} ({limit_text}); check the node's constant inputs")


def _shape_const(node, shape):
    start = int(node.attrs.get("start", 0))
    end = node.attrs.get("end")
    r = len(shape)
    start = min(max(start + r if start < 0 else start, 0), r)
    end = r if end is None else min(max(int(end) + r if int(end) < 0 else int(end), 0), r)
    return np.array(shape[start:end], dtype=np.int64)


class _Budget:
    """What folding may still materialise in this model (limits.py): one constant at most
    limits.fold_limit(its inputs' bytes), all of them together at most `total`."""

    def __init__(self, m: ir.Model):
        own = sum(v.const.nbytes for v in m.values.values() if v.const is not None and v.const.dtype != object)
        self.total = max(limits.MAX_FOLD_TOTAL_BYTES, limits.FOLD_GROWTH * own)
        self.used = 0
        self.unroll = [unroll.MAX_UNROLLED_NODES]   # body nodes Loop / Scan unrolling may still add

    def refusal(self, arrays, shape, size, dtype):
        """Why folding a node with these constant inputs to an output of `size` bytes is refused, or None."""
        seen, in_bytes = set(), 0
        for a in arrays:
            if a is not None and id(a) not in seen:
                seen.add(id(a))
                in_bytes += a.nbytes
        if size > limits.fold_limit(in_bytes):
            return _refuse(shape, size, dtype, limits.fold_limit_text(in_bytes))
        if self.used + size > self.total:
            return _refuse(shape, size, dtype, f"{limits.fmt_bytes(self.total)}, of which folding has used "
                                                  f"{limits.fmt_bytes(self.used)}", "all folded constants")
        return None


def _inline_if(m: ir.Model, n: ir.Node, cond: bool) -> list:
    """The nodes that replace If node n whose condition is the constant `cond`: the taken branch's nodes
    (its own values renamed under the If's name, so they cannot collide; names it reads from the outer
    scope kept), its initializers and Constants as constants, and an Identity per If output. A nested If
    is one of those nodes, folded in a later round if its condition becomes constant."""
    from onnx import helper
    from ..onnx_import import constant_node_value, node_from_proto, own_and_free, rename_graph, tensor_to_array
    g = n.subgraph("then_branch" if cond else "else_branch")
    prefix = (n.name or "if") + ("/then/" if cond else "/else/")
    own, _ = own_and_free(g)
    names = {v: m.fresh(prefix + v) for v in sorted(own)}
    rename_graph(g, names)
    for t in g.initializer:
        m.set_const(t.name, tensor_to_array(t))
    nodes = []
    for k, p in enumerate(g.node):
        if p.op_type == "Constant" and p.domain in ("", "ai.onnx"):
            m.set_const(p.output[0], constant_node_value(p))
            continue
        p.name = p.name or f"{prefix}{p.op_type}_{k}"
        nodes.append(node_from_proto(p, p.name))
        for v in nodes[-1].inputs + nodes[-1].outputs:
            if v:
                m.value(v)
    for src, dst in zip((o.name for o in g.output), n.outputs):
        if not dst:
            continue
        ident = helper.make_node("Identity", [src], [dst], name=f"{prefix}out:{dst}")
        nodes.append(ir.Node("Identity", [src], [dst], {}, ident.name, "", proto=ident))
        m.value(src)
    return nodes


# the quantised ops, held back (neither rewritten nor folded) while the rest folds and the shapes settle, so that
# passes/int8.py sees their chains with static shapes and their int8 weights still behind DequantizeLinear
QUANT_HOLD = {("", t) for t in ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv",
                                "QLinearMatMul", "ConvInteger", "MatMulInteger")} | \
    {("com.microsoft", t) for t in ("QLinearAdd", "QLinearMul", "QLinearGlobalAveragePool", "QLinearAveragePool",
                                    "QLinearSigmoid", "QLinearLeakyRelu", "QLinearConcat", "DynamicQuantizeLSTM")}


def _fold_round(m: ir.Model, budget: _Budget, problems: Problems, hold: bool = False) -> int:
    done = 0
    keep = []
    for n in m.nodes:
        if hold and (n.domain, n.op_type) in QUANT_HOLD:
            keep.append(n)
            continue
        arrays = [m.const(i) if i else None for i in n.inputs]
        out = None
        if n.domain == "" and n.op_type == "If" and arrays and arrays[0] is not None and arrays[0].size == 1:
            keep += _inline_if(m, n, bool(arrays[0].reshape(-1)[0]))    # the branch the constant takes
            done += 1
            continue
        expand = None   # a rewrite into other ops once shapes are static (None with n.note when not yet)
        if (n.domain == "" and n.op_type in rewrite.REWRITES
                or n.domain == "com.microsoft" and n.op_type in rewrite.CONTRIB_REWRITES):
            expand = rewrite.rewrite
        elif n.domain == "" and n.op_type in ("Loop", "Scan") and "body" in n.attrs:
            unroller = unroll.unroll_loop if n.op_type == "Loop" else unroll.unroll_scan
            expand = lambda m_, n_: unroller(m_, n_, budget.unroll)   # noqa: E731
        if expand is not None:
            nodes = expand(m, n)
            if nodes is not None:
                keep += nodes
                done += 1
                continue
            if expand is not rewrite.rewrite:
                keep.append(n)
                continue
            # a rewrite that does not apply (an inference BatchNormalization): folded like any node
        if (n.domain == "" and n.op_type == "CastLike" and arrays and arrays[0] is not None and len(n.inputs) > 1
                and m.values.get(n.inputs[1]) is not None and m.values[n.inputs[1]].dtype is not None):
            out = [arrays[0].astype(m.values[n.inputs[1]].dtype)]   # only the second input's dtype matters
        elif n.domain == "" and n.op_type == "Shape" and m.static_shape(n.inputs[0]) is not None:
            out = [_shape_const(n, m.static_shape(n.inputs[0]))]
        elif n.domain == "" and n.op_type == "Size" and m.static_shape(n.inputs[0]) is not None:
            out = [np.array(math.prod(m.static_shape(n.inputs[0])), dtype=np.int64)]
        elif (n.domain == "" and n.op_type not in NEVER_FOLD and n.inputs
              and all(a is not None or not i for a, i in zip(arrays, n.inputs))
              and not any(a is not None and a.dtype == object for a in arrays)):
            est = _fold_size(m, n, arrays)
            why = est and budget.refusal(arrays, est[0], est[1], _out_dtype(m, n, arrays))
            if why:
                problems.add(n, why)
                keep.append(n)
                continue
            try:
                out = evaluate(n, arrays, m.opset)
            except Exception as e:  # noqa: BLE001
                n.note = f"constant folding failed: {type(e).__name__}: {e}"
            else:
                # sizes no estimate foresaw are still held to the limits, once computed
                for a in out:
                    why = a is not None and budget.refusal(arrays, a.shape, a.nbytes, a.dtype)
                    if why:
                        problems.add(n, why)
                        out = None
                        break
        if out is None:
            keep.append(n)
            continue
        shaped = n.op_type in ("Shape", "Size") or any(i in m.from_shapes for i in n.inputs if i)
        for name, arr in zip(n.outputs, out):
            if name and arr is not None:
                m.set_const(name, arr)
                budget.used += arr.nbytes
                if shaped:
                    m.from_shapes.add(name)
        done += 1
    m.nodes = keep
    return done


def _needs_reinfer(m: ir.Model) -> bool:
    for n in m.nodes:
        for i in list(n.inputs) + list(n.outputs):
            if i and m.const(i) is None and not m.values[i].is_static:
                return True
    return False


def reinfer(m: ir.Model) -> None:
    """Run ONNX shape inference again on the current IR (small constants as initializers, large ones as
    typed inputs) and take every shape it knows better."""
    from onnx import helper, numpy_helper
    if any(n.proto is None for n in m.nodes):
        return
    used = {i for n in m.nodes for i in n.inputs if i}
    inits, ins = [], []
    for name in m.inputs:
        v = m.values[name]
        if v.dtype is not None and v.shape is not None:
            ins.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(v.dtype),
                                                     [d if d is not None else None for d in v.shape]))
    for name in sorted(used):
        a = m.const(name)
        if a is None or a.dtype == object:
            continue
        try:
            if a.size <= 4096 or (np.issubdtype(a.dtype, np.integer) and a.size <= 65536):
                inits.append(numpy_helper.from_array(a, name))
            else:
                ins.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape))
        except Exception:  # noqa: BLE001
            return
    nodes = []
    for n in m.nodes:
        p = helper.make_node(n.op_type, n.own_inputs(), n.outputs, name=n.name, domain=n.domain)
        if n.captures:   # the subgraphs read the captured values by their current names
            from onnx import AttributeProto
            for a in n.proto.attribute:
                if a.type == AttributeProto.GRAPH:
                    p.attribute.append(helper.make_attribute(a.name, n.subgraph(a.name)))
                else:
                    p.attribute.append(a)
        else:
            p.attribute.extend(n.proto.attribute)
        nodes.append(p)
    # what edgeplan's own nodes (passes/int8.py) write, onnx cannot infer: their known types go in as facts
    known = []
    for n in m.nodes:
        if n.domain != "edgeplan":
            continue
        for o in n.outputs:
            v = m.values.get(o)
            if v is not None and v.dtype is not None and v.shape is not None:
                known.append(helper.make_tensor_value_info(o, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape)))
    g = helper.make_graph(nodes, "reinfer", ins, [helper.make_empty_tensor_value_info(o) for o in m.outputs],
                          initializer=inits, value_info=known)
    # every domain the nodes use (onnx leaves the ops it has no schema for, com.microsoft ones, unknown)
    domains = {n.domain for n in nodes if n.domain not in ("", "ai.onnx")}
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", m.opset)] +
                              [helper.make_opsetid(d, m.opsets.get(d, 1)) for d in sorted(domains)])
    model = infer_shapes(model)
    for vi in list(model.graph.value_info) + list(model.graph.output):
        v = m.values.get(vi.name)
        if v is None or v.const is not None:
            continue
        dt, shp = shape_of(vi.type)
        if v.dtype is None and dt is not None:
            v.dtype = dt
        if shp is not None and (v.shape is None or (not v.is_static and
                                                    sum(d is None for d in shp) < sum(d is None for d in v.shape))):
            v.shape = shp


def fold(m: ir.Model, notes: list) -> None:
    """Fold every constant subgraph; raises CompileError naming each node whose folded output would be
    above the size limits (limits.py), before evaluating it."""
    from .int8 import int8_ops
    from .qdq import fold_pairs
    total = 0
    budget = _Budget(m)
    problems = Problems()
    if any((n.domain, n.op_type) in QUANT_HOLD for n in m.nodes):
        for _ in range(MAX_ROUNDS):      # everything but the quantised ops first (QUANT_HOLD)
            n = _fold_round(m, budget, problems, hold=True)
            problems.raise_if_any()
            total += n
            if _needs_reinfer(m):
                reinfer(m)
            if not n:
                break
    int8_ops(m, notes)
    fold_pairs(m, notes)
    for _ in range(MAX_ROUNDS):
        n = _fold_round(m, budget, problems)
        problems.raise_if_any()
        total += n
        if not n:
            break
        if _needs_reinfer(m):
            reinfer(m)
    if total:
        notes.append(f"folded {total} constant node(s)")
