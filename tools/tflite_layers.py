"""Layer-by-layer comparison of edgeplan with LiteRT on one .tflite file: where does a difference start?

    PYTHONPATH=pyapi python3 tools/tflite_layers.py model.tflite [--lo 0 --hi 1] [--seed 0] [--exact]

Inputs are uniform in [lo, hi) (integer inputs: codes in [lo, hi]). Every float or int8 tensor an op
writes becomes an output of the imported graph (the plan then fuses less than the model's own plan, so the
numbers are per op); LiteRT keeps its intermediates with experimental_preserve_all_tensors. Per op: the max
|edgeplan - LiteRT|, the tensor's range (max |LiteRT|) and their ratio (int8 tensors: how many codes
differ, and by how much). --exact adds, for CONV_2D / DEPTHWISE_CONV_2D (stride 1) and ADD, how far each
engine is from a float64 evaluation of the op on that engine's own input: when both are at float32
rounding and only the inputs differ, the growth is the network's gain on rounding differences, not a
defect.
A dev tool (needs ai-edge-litert); docs/tflite.md has what it found on the pinned suite."""
from __future__ import annotations

import argparse

import numpy as np


def _act(y, a):
    return {0: y, 1: np.maximum(y, 0), 2: np.clip(y, -1, 1), 3: np.clip(y, 0, 6)}.get(a, y)


def _exact(g, op, value):
    """float64 result of op on value(i) for its inputs, or None for an op this does not evaluate."""
    from edgeplan.compiler.tflite.ops import opt
    a = opt(op, "FusedActivationFunction", 0)
    if op.name == "ADD":
        return _act(value(op.inputs[0]) + value(op.inputs[1]), a)
    if op.name not in ("CONV_2D", "DEPTHWISE_CONV_2D") or opt(op, "StrideH", 1) != 1 or opt(op, "StrideW", 1) != 1:
        return None
    if opt(op, "DilationHFactor", 1) > 1 or opt(op, "DilationWFactor", 1) > 1:
        return None
    x, w = value(op.inputs[0]), value(op.inputs[1])
    b = value(op.inputs[2]) if len(op.inputs) > 2 and op.inputs[2] >= 0 else 0.0
    n, h, wd, _ = x.shape
    dw = op.name == "DEPTHWISE_CONV_2D"
    kh, kw = w.shape[1], w.shape[2]
    valid = opt(op, "Padding", 0) == 1
    if valid and (kh > 1 or kw > 1):
        return None
    ph, pw = (0, 0) if valid else ((kh - 1) // 2, (kw - 1) // 2)
    xp = np.pad(x, ((0, 0), (ph, kh - 1 - ph), (pw, kw - 1 - pw), (0, 0)))
    y = np.zeros((n, h, wd, w.shape[3] if dw else w.shape[0])) + b
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, i:i + h, j:j + wd, :]
            y += patch * w[0, i, j, :] if dw else patch @ w[:, i, j, :].T
    return _act(y, a)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--lo", type=float, default=0.0)
    ap.add_argument("--hi", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--exact", action="store_true")
    args = ap.parse_args(argv)
    from onnx import helper
    from ai_edge_litert.interpreter import Interpreter
    import edgeplan
    from edgeplan.compiler.pipeline import compile_model
    from edgeplan.compiler.tflite.convert import Converter
    from edgeplan.compiler.tflite.ops import HANDLERS
    from edgeplan.compiler.tflite.reader import read
    g = read(open(args.model, "rb").read())
    cv = Converter(g)
    m = cv.convert(HANDLERS)
    sel = []
    for op in g.ops:
        for i in op.outputs:
            t = g.tensors[i]
            if i in cv.vals and (t.type == 0 or cv.quantized(i)) and i not in g.outputs:
                sel.append((op, i, cv.vals[i][cv.made[i]], cv.made[i]))
                m.graph.output.append(helper.make_tensor_value_info(sel[-1][2], 1 if t.type == 0 else
                                                                    helper.np_dtype_to_tensor_dtype(np.dtype(t.dtype)),
                                                                    None))
    s = edgeplan.Session(compile_model(m, weights="fp16" if cv.fp16_weights else None, state=cv.state))
    it = Interpreter(model_path=args.model, num_threads=1, experimental_preserve_all_tensors=True)
    it.allocate_tensors()
    rng = np.random.default_rng(args.seed)
    feeds = {}
    for d in it.get_input_details():
        if np.dtype(d["dtype"]).kind == "f":
            feeds[d["name"]] = rng.uniform(args.lo, args.hi, d["shape"]).astype(np.float32)
        else:
            feeds[d["name"]] = rng.integers(int(args.lo), int(args.hi), d["shape"], endpoint=True, dtype=d["dtype"])
    for d in it.get_input_details():
        it.set_tensor(d["index"], feeds[d["name"]])
    it.invoke()
    got = s.run(feeds)
    ours = {}
    for op, i, name, perm in sel:
        ref = it.get_tensor(i)
        ours[i] = np.transpose(got[name], np.argsort(perm)).reshape(ref.shape)

    def value(k, i):
        t = g.tensors[i]
        if t.data is not None:
            return t.data.astype(np.float64)
        src = next((o for o in g.ops if i in o.outputs), None)
        if src is not None and src.name == "DEQUANTIZE" and g.tensors[src.inputs[0]].data is not None:
            return g.tensors[src.inputs[0]].data.astype(np.float64)
        return (it.get_tensor(i) if k == 0 else ours[i]).astype(np.float64)

    for op, i, name, perm in sel:
        ref, e = it.get_tensor(i), ours[i]
        if ref.dtype.kind in "iu":
            dc = np.abs(ref.astype(np.int64) - e.astype(np.int64))
            print(f"{op.index:4d} {op.name:22s} {str(ref.shape):18s} codes: {int((dc > 0).sum())} of {dc.size} "
                  f"differ, max {int(dc.max(initial=0))}  {g.tensors[i].name[:40]}")
            continue
        rng_ = max(float(np.abs(ref).max()), 1e-30)
        err = float(np.abs(e - ref).max())
        line = f"{op.index:4d} {op.name:22s} {str(ref.shape):18s} |d| {err:.2e} range {rng_:.3g} rel {err / rng_:.2e}"
        if args.exact:
            try:
                xl, xe = _exact(g, op, lambda j: value(0, j)), _exact(g, op, lambda j: value(1, j))
            except KeyError:
                xl = xe = None
            if xl is not None:
                line += (f"  vs float64 on own input: litert {np.abs(ref - xl).max():.1e} "
                         f"edgeplan {np.abs(e - xe).max():.1e}")
        print(line + f"  {g.tensors[i].name[:40]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
