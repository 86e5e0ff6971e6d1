"""Post-training quantisation: a float ONNX model and calibration inputs -> the same model with QDQ nodes,
which the int8 path (passes/int8.py) then compiles onto the integer kernels.

What is quantised (docs/quantization.md, "Post-training quantisation"): every Conv (2-D, constant weights), every
MatMul / Gemm with a constant 2-D B, and every Add of two activations (a residual connection). Their weights become int8 per output channel (absmax / 127, symmetric,
[-127, 127]), their biases int32 at scale s_x s_w, and their float input and output (after a Relu or Clip
that alone reads it, which the integer op then clamps) int8 per tensor, asymmetric:
    scale = (hi - lo) / 255, zero_point = round(-128 - lo / scale), with lo <= 0 <= hi
where [lo, hi] is what the observer saw on the calibration inputs:
    minmax       the extremes;
    percentile   the p-th and (100 - p)-th percentiles (default p = 99.99), from up to 2^16 evenly spaced
                 values of each tensor per input;
    mse          the clip range whose int8 codes reconstruct those values with the least mean squared error
                 (a search over ranges shrunk from the extremes, both ends together, then each end alone).
The ranges are cached under $EDGEPLAN_CACHE/ranges, keyed by the model, the observer and the calibration
inputs, so compiling the same model on the same inputs again does not run the calibration again.
Everything else stays float and reads dequantised values: softmax, normalisations, recurrent cells,
element-wise ops. The calibration runs the float model on edgeplan itself, with the observed tensors as
extra outputs."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper


OBSERVERS = ("minmax", "percentile", "mse")
SAMPLE = 1 << 16
MSE_SAMPLE = 1 << 17   # values per tensor the MSE search scores each candidate range on


class CalibrationError(ValueError):
    """Calibration inputs that do not fit the model (the message names the file and input)."""


def load_calibration(path, inputs: dict, recipe=None) -> list:
    """The calibration inputs in folder `path`: one sample per .npy file (a single-input model) or per .npz
    file (arrays named by the model's inputs), or per image or wav file with a preprocessing recipe
    (calib_media.py: the folder's preprocess.toml, or `recipe`, a dict or a TOML path). inputs:
    {name: (shape, dtype)} of the model."""
    from .calib_media import MediaError, load_media
    p = Path(path)
    if not p.is_dir():
        raise CalibrationError(f"calibration folder '{path}' does not exist")
    files = sorted(list(p.glob("*.npy")) + list(p.glob("*.npz")))
    if not files:
        try:
            media = load_media(p, inputs, recipe, progress)
        except MediaError as e:
            raise CalibrationError(str(e)) from None
        if media is not None:
            check_calibration(media[0], inputs, media[1])
            return media[0]
        raise CalibrationError(f"calibration folder '{path}' has no .npy, .npz, image or wav files: give one file "
                               f"per input sample (.npy for a single-input model, .npz with arrays named "
                               f"{sorted(inputs)}, or images / wavs with a preprocess.toml recipe)")
    if recipe is not None:
        raise CalibrationError(f"a preprocessing recipe is for folders of images or wavs; '{path}' holds numpy files")
    out = []
    for f in files:
        try:
            data = np.load(f, allow_pickle=False)
        except Exception as e:  # noqa: BLE001 - numpy's errors for a file that is not .npy / .npz
            raise CalibrationError(f"calibration file '{f}': not a numpy file ({e})") from None
        if isinstance(data, np.ndarray):
            if len(inputs) != 1:
                raise CalibrationError(f"calibration file '{f}': a .npy holds one array, but the model has inputs "
                                       f"{sorted(inputs)}; use .npz files with arrays named by them")
            out.append({next(iter(inputs)): data})
        else:
            out.append({k: data[k] for k in data.files})
            data.close()
    check_calibration(out, inputs, [str(f) for f in files])
    return out


def check_calibration(samples: list, inputs: dict, names=None) -> None:
    if not samples:
        raise CalibrationError("the calibration set is empty: give at least one input sample (32 or more "
                               "representative ones are recommended)")
    for k, s in enumerate(samples):
        where = f"calibration file '{names[k]}'" if names else f"calibration sample {k}"
        if set(s) != set(inputs):
            raise CalibrationError(f"{where}: has arrays {sorted(s)}, the model takes {sorted(inputs)}")
        for name, a in s.items():
            shape, dtype = inputs[name]
            a = np.asarray(a)
            if a.dtype != dtype:
                raise CalibrationError(f"{where}: input '{name}' has dtype {a.dtype.name}, the model takes "
                                       f"{np.dtype(dtype).name}")
            if a.ndim != len(shape) or any(d >= 0 and d != e for d, e in zip(shape, a.shape)):
                raise CalibrationError(f"{where}: input '{name}' has shape {tuple(a.shape)}, the model takes "
                                       f"{tuple(shape)}")
            if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
                raise CalibrationError(f"{where}: input '{name}' has NaN or infinite values")


def progress(items, what: str, total=None, unit: str = " inputs"):
    """items, with a progress bar on stderr when it is a terminal (tqdm)."""
    try:
        from tqdm import tqdm
    except ImportError:   # the bar is a convenience: without tqdm the loop runs silently
        return items
    return tqdm(items, desc=what, total=total, disable=None, leave=False, file=sys.stderr, unit=unit)


class _Units:
    """The quantisable nodes of a model and the float tensors whose ranges they need."""

    def __init__(self, model: onnx.ModelProto):
        g = model.graph
        self.inits = {i.name: i for i in g.initializer}
        self.cons: dict = {}
        for n in g.node:
            for i in n.input:
                self.cons.setdefault(i, []).append(n)
        self.outputs = {o.name for o in g.output}
        self.units = []            # (node, activation input, quantised output tensor, act node or None)
        for n in g.node:
            if n.domain not in ("", "ai.onnx"):
                continue
            w = self.inits.get(n.input[1]) if len(n.input) > 1 else None
            if w is None or w.data_type != onnx.TensorProto.FLOAT or n.input[0] in self.inits:
                continue
            if n.op_type == "Conv" and len(w.dims) == 4:
                pass
            elif n.op_type == "MatMul" and len(w.dims) == 2:
                pass
            elif n.op_type == "Gemm" and len(w.dims) == 2 and not _attr(n, "transA", 0) and \
                    _attr(n, "alpha", 1.0) == 1.0 and _attr(n, "beta", 1.0) == 1.0:
                pass
            else:
                continue
            out, act = n.output[0], None
            users = self.cons.get(out, [])
            if len(users) == 1 and users[0].op_type in ("Relu", "Clip") and out not in self.outputs:
                act = users[0]
                out = act.output[0]
            self.units.append((n, n.input[0], out, act))
        self.adds = []             # (Add node, its two inputs, quantised output): residual adds, QADD
        for n in g.node:
            if n.op_type != "Add" or n.domain not in ("", "ai.onnx") or len(n.input) != 2 or \
                    any(i in self.inits for i in n.input) or n.input[0] == n.input[1]:
                continue
            out = n.output[0]
            users = self.cons.get(out, [])
            if len(users) == 1 and users[0].op_type == "Relu" and out not in self.outputs:
                out = users[0].output[0]
            self.adds.append((n, tuple(n.input), out))

    def tensors(self) -> list:
        """The float activations to quantise, in graph order of first use."""
        seen, out = set(), []
        for t in [t for _, x, y, _ in self.units for t in (x, y)] + [t for _, ab, y in self.adds for t in ab + (y,)]:
            if t not in seen:
                seen.add(t)
                out.append(t)
        return out


def prepare(model: onnx.ModelProto) -> onnx.ModelProto:
    """The float model as PTQ reads it: Constant nodes as initializers, and each inference BatchNormalization
    that alone reads a Conv's output folded into that Conv's weights and bias (as exporters leave them)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    keep = []
    for n in g.node:
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and len(n.attribute) == 1 and \
                n.attribute[0].name == "value":
            inits[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
            continue
        keep.append(n)
    cons: dict = {}
    for n in keep:
        for i in n.input:
            cons.setdefault(i, []).append(n)
    outputs = {o.name for o in g.output}
    dead = set()
    for n in keep:
        if n.op_type != "Conv" or len(n.input) < 2 or n.input[1] not in inits:
            continue
        users = cons.get(n.output[0], [])
        bn = users[0] if len(users) == 1 else None
        if (bn is None or bn.op_type != "BatchNormalization" or n.output[0] in outputs or len(bn.output) != 1
                or any(i not in inits for i in bn.input[1:5]) or _attr(bn, "training_mode", 0)):
            continue
        gamma, beta, mean, var = (inits[i].astype(np.float64) for i in bn.input[1:5])
        k = gamma / np.sqrt(var + float(_attr(bn, "epsilon", 1e-5)))
        w = inits[n.input[1]].astype(np.float64)
        b = inits[n.input[2]].astype(np.float64) if len(n.input) > 2 and n.input[2] else np.zeros(w.shape[0])
        wn, bn_name = f"{n.input[1]}/bn", f"{n.output[0]}/bn_bias"
        inits[wn] = (w * k.reshape(-1, 1, 1, 1)).astype(np.float32)
        inits[bn_name] = ((b - mean) * k + beta).astype(np.float32)
        del n.input[1:]
        n.input.extend([wn, bn_name])
        n.output[0] = bn.output[0]
        dead.add(id(bn))
    del g.node[:]
    g.node.extend(x for x in keep if id(x) not in dead)
    used = {i for x in g.node for i in x.input} | outputs
    del g.initializer[:]
    g.initializer.extend(numpy_helper.from_array(np.asarray(a), k) for k, a in inits.items() if k in used)
    return m


def _attr(n, name, default):
    for a in n.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def observe(model: onnx.ModelProto, tensors: list, samples: list, method: str, percentile: float,
            shapes=None) -> dict:
    """{tensor: (lo, hi)} over the calibration samples, from the float model run by edgeplan."""
    from .pipeline import compile_model
    from ..runtime import Session
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    m.graph.output.extend(helper.make_empty_tensor_value_info(t) for t in tensors if t not in have)
    sess = Session(compile_model(m, shapes=shapes))
    lo = {t: np.inf for t in tensors}
    hi = {t: -np.inf for t in tensors}
    keep: dict = {t: [] for t in tensors}
    for k, s in enumerate(progress(samples, "calibrating")):
        out = sess.run(s)
        for t in tensors:
            v = np.asarray(out[t], np.float32).reshape(-1)
            if v.size == 0:
                continue
            if not np.all(np.isfinite(v)):
                raise CalibrationError(f"tensor '{t}' is NaN or infinite on calibration sample {k}: the float "
                                       f"model overflows there, so it has no range to quantise to")
            lo[t], hi[t] = min(lo[t], float(v.min())), max(hi[t], float(v.max()))
            if method != "minmax":
                keep[t].append(v[::max(1, -(-v.size // SAMPLE))])
    ranges = {}
    for t in tensors:
        a, b = lo[t], hi[t]
        if method == "percentile" and keep[t]:
            v = np.concatenate(keep[t])
            a, b = float(np.percentile(v, 100.0 - percentile)), float(np.percentile(v, percentile))
        elif method == "mse" and keep[t]:
            v = np.concatenate(keep[t])
            a, b = mse_range(v[::max(1, -(-v.size // MSE_SAMPLE))], min(a, 0.0), max(b, 0.0))
        ranges[t] = (min(a, 0.0), max(b, 0.0))
    return ranges


def _fake_quant_mse(v: np.ndarray, lo: float, hi: float) -> float:
    """Mean squared error of v through int8 codes of [lo, hi] (act_params' scale and zero point)."""
    s, z = act_params(lo, hi)
    s = float(s)
    q = np.clip(np.rint(v / s) + z, -128, 127)
    return float(np.mean(((q - z) * s - v) ** 2))


def mse_range(v: np.ndarray, lo: float, hi: float, steps: int = 48) -> tuple:
    """The clip range [a, b] (lo <= a <= 0 <= b <= hi) of least int8 reconstruction error on values v: the
    extremes shrunk together by each of `steps` ratios in (0, 1], then each end alone around the best pair.
    Clipping a few outliers buys a finer step for every other value. Ties keep the wider range."""
    if hi - lo <= 0 or v.size == 0:
        return lo, hi
    v = v.astype(np.float64)
    ratios = np.linspace(1.0, 1.0 / steps, steps)
    best = (_fake_quant_mse(v, lo, hi), lo, hi)
    for r in ratios[1:]:
        e = _fake_quant_mse(v, lo * r, hi * r)
        if e < best[0]:
            best = (e, lo * r, hi * r)
    _, a, b = best
    for r in ratios[1:]:   # the top end alone, then the bottom end alone
        e = _fake_quant_mse(v, a, b * r)
        if e < best[0]:
            best = (e, a, b * r)
    _, a, b = best
    for r in ratios[1:]:
        e = _fake_quant_mse(v, a * r, b)
        if e < best[0]:
            best = (e, a * r, b)
    return best[1], best[2]


def _ranges_key(model: onnx.ModelProto, tensors: list, samples: list, method: str, percentile: float,
                shapes) -> str:
    """The cache key of observed ranges: the model, the observed tensors, the observer and the inputs."""
    import hashlib
    from .. import __version__
    h = hashlib.sha256()
    h.update(f"edgeplan {__version__}\0{method}\0{percentile!r}\0{sorted((shapes or {}).items())!r}\0".encode())
    h.update("\0".join(tensors).encode())
    h.update(model.SerializeToString(deterministic=True))
    for s in samples:
        for name in sorted(s):
            a = np.ascontiguousarray(s[name])
            h.update(f"\0{name}\0{a.dtype.str}\0{a.shape}\0".encode())
            h.update(a.tobytes())
    return h.hexdigest()


def cached_observe(model: onnx.ModelProto, tensors: list, samples: list, method: str, percentile: float,
                   shapes=None) -> tuple:
    """(observe's ranges, whether they came from the cache $EDGEPLAN_CACHE/ranges). A missing, unreadable or
    malformed cache file is recomputed; a cache that cannot be written is skipped."""
    import json
    import os
    from ..plan import cache_dir
    path = cache_dir() / "ranges" / (_ranges_key(model, tensors, samples, method, percentile, shapes) + ".json")
    try:
        got = json.loads(path.read_text())
        ranges = {t: (float(got[t][0]), float(got[t][1])) for t in tensors}
        if all(np.isfinite(a) and np.isfinite(b) and a <= 0.0 <= b for a, b in ranges.values()):
            return ranges, True
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        pass
    ranges = observe(model, tensors, samples, method, percentile, shapes)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({t: [a, b] for t, (a, b) in ranges.items()}))
        os.replace(tmp, path)
    except OSError:
        pass
    return ranges, False


def act_params(lo: float, hi: float) -> tuple:
    """(scale, zero point) of int8 codes for [lo, hi] (lo <= 0 <= hi)."""
    if hi - lo <= 0:
        return np.float32(1.0), 0
    s = np.float32((hi - lo) / 255.0)
    z = int(np.clip(np.rint(-128.0 - lo / float(s)), -128, 127))
    return s, z


def insert_qdq(model: onnx.ModelProto, units: _Units, ranges: dict) -> onnx.ModelProto:
    """The QDQ model: each quantised activation t gets QuantizeLinear -> DequantizeLinear right after its producer
    and every reader reads the dequantised copy; each unit's weights and bias become DequantizeLinear of int8
    per-channel weights and int32 biases."""
    g = model.graph
    inits = dict(units.inits)
    new_inits, dq_of = [], {}
    quant = units.tensors()

    def const(name, arr):
        new_inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    outputs = {o.name for o in g.output}
    for t in quant:
        s_, z = act_params(*ranges[t])
        sn, zn = const(f"{t}/q_scale", np.float32(s_)), const(f"{t}/q_zero", np.int8(z))
        # a graph output keeps its name on the dequantised copy; its producer writes t/float
        src, dq = (f"{t}/float", t) if t in outputs else (t, f"{t}/dq")
        q = helper.make_node("QuantizeLinear", [src, sn, zn], [f"{t}/q"], name=f"{t}/Q")
        d = helper.make_node("DequantizeLinear", [f"{t}/q", sn, zn], [dq], name=f"{t}/DQ")
        dq_of[t] = (dq, float(s_), [q, d])

    weights = {}      # unit node id -> (its weight and bias DequantizeLinear nodes, its weight / bias input names)
    for n, x, y, act in units.units:
        w = numpy_helper.to_array(inits[n.input[1]]).astype(np.float64)
        trans = n.op_type == "Gemm" and _attr(n, "transB", 0)
        axis = 0 if (n.op_type == "Conv" or trans) else 1
        red = tuple(i for i in range(w.ndim) if i != axis)
        sw = np.abs(w).max(axis=red) / 127.0
        sw = np.where(sw > 0, sw, 1.0).astype(np.float32)
        shape = [-1 if i == axis else 1 for i in range(w.ndim)]
        wq = np.clip(np.rint(w / sw.astype(np.float64).reshape(shape)), -127, 127).astype(np.int8)
        wn = n.input[1]
        const(f"{wn}/w_q", wq)
        const(f"{wn}/w_scale", sw)
        const(f"{wn}/w_zero", np.zeros(sw.size, np.int8))
        extra = [helper.make_node("DequantizeLinear", [f"{wn}/w_q", f"{wn}/w_scale", f"{wn}/w_zero"],
                                  [f"{wn}/w_dq"], name=f"{wn}/DQ", axis=axis)]
        ren = {1: f"{wn}/w_dq"}
        if len(n.input) > 2 and n.input[2] and n.input[2] in inits:
            b = numpy_helper.to_array(inits[n.input[2]]).astype(np.float64).reshape(-1)
            sb = (dq_of[x][1] * sw.astype(np.float64)).astype(np.float32)
            if b.size == sb.size:
                bq = np.clip(np.rint(b / sb.astype(np.float64)), -(2 ** 31 - 1), 2 ** 31 - 1).astype(np.int32)
                bn = n.input[2]
                const(f"{bn}/b_q", bq)
                const(f"{bn}/b_scale", sb)
                const(f"{bn}/b_zero", np.zeros(sb.size, np.int32))
                extra.append(helper.make_node("DequantizeLinear", [f"{bn}/b_q", f"{bn}/b_scale", f"{bn}/b_zero"],
                                              [f"{bn}/b_dq"], name=f"{bn}/DQ", axis=0))
                ren[2] = f"{bn}/b_dq"
        weights[id(n)] = (extra, ren)

    nodes = []
    for i in g.input:
        if i.name in dq_of:
            nodes.extend(dq_of[i.name][2])
    for n in g.node:
        new = onnx.NodeProto()
        new.CopyFrom(n)
        extra, ren = weights.get(id(n), ([], {}))
        nodes.extend(extra)
        for k, name in enumerate(new.input):
            if k in ren:
                new.input[k] = ren[k]
            elif name in dq_of:
                new.input[k] = dq_of[name][0]
        for k, o in enumerate(n.output):
            if o in dq_of and o in outputs:
                new.output[k] = f"{o}/float"
        nodes.append(new)
        for o in n.output:
            if o in dq_of:
                nodes.extend(dq_of[o][2])
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    out.graph.initializer.extend(new_inits)
    return out


def _setup(model, samples, calibration, method, percentile, shapes, recipe=None, info=None):
    """(prepared model, its units, calibration samples, ranges) for quantize / quantize_auto; `info` (a dict),
    when given, gets the observer, the sample count and whether the ranges came from the cache."""
    from .onnx_import import load
    if method not in OBSERVERS:
        raise CalibrationError(f"observer '{method}' is unknown: use one of {', '.join(OBSERVERS)}")
    if not 50.0 < float(percentile) <= 100.0:
        raise CalibrationError(f"percentile {percentile} is outside (50, 100]")
    m = prepare(load(model))
    init_names = {i.name for i in m.graph.initializer}
    inputs = {}
    for vi in m.graph.input:
        if vi.name in init_names:
            continue
        tt = vi.type.tensor_type
        dims = tuple((shapes or {}).get(vi.name, [d.dim_value if d.HasField("dim_value") else -1
                                                   for d in tt.shape.dim]))
        inputs[vi.name] = (dims, helper.tensor_dtype_to_np_dtype(tt.elem_type))
    if calibration is not None:
        samples = load_calibration(calibration, inputs, recipe)
    elif recipe is not None:
        raise CalibrationError("a preprocessing recipe is for a calibration folder of images or wavs")
    elif samples is not None:
        samples = list(samples)
        check_calibration(samples, inputs)
    else:
        raise CalibrationError("post-training quantisation needs calibration inputs (--calibration DIR)")
    units = _Units(m)
    if not units.units:
        raise CalibrationError("the model has no Conv, MatMul or Gemm with constant float weights: nothing to "
                               "quantise")
    ranges, hit = cached_observe(m, units.tensors(), samples, method, float(percentile), shapes)
    if info is not None:
        info.update(observer=method, samples=len(samples), ranges_cached=hit)
        if method == "percentile":
            info["percentile"] = float(percentile)
    return m, units, samples, ranges


def quantize(model, samples=None, *, calibration=None, method: str = "percentile", percentile: float = 99.99,
             shapes=None, recipe=None, info=None) -> onnx.ModelProto:
    """The QDQ model of float `model` (path, bytes or ModelProto) for the calibration inputs: `samples`, a list
    of {input name: array}, or `calibration`, a folder (load_calibration, with `recipe` for images and wavs).
    `info`, a dict, gets what _setup reports."""
    m, units, _, ranges = _setup(model, samples, calibration, method, percentile, shapes, recipe, info)
    return insert_qdq(m, units, ranges)


def _subset(units: _Units, keep_float: set) -> _Units:
    u = _Units.__new__(_Units)
    u.__dict__.update(units.__dict__)
    u.units = [x for k, x in enumerate(units.units) if k not in keep_float]
    return u


def quantize_auto(model, samples=None, *, calibration=None, target_sqnr: float = 30.0, method: str = "percentile",
                  percentile: float = 99.99, shapes=None, recipe=None, info=None) -> tuple:
    """Mixed precision: int8 where the model allows, float where it must. Every layer's sensitivity is the output
    SQNR (dB, against the float model, over the calibration inputs) with that layer alone quantised; starting from
    all layers int8, the most sensitive layer still int8 goes back to float until the output SQNR reaches
    target_sqnr (or none is left). Deterministic for the same inputs. Returns (QDQ model, report dict)."""
    from .pipeline import compile_model
    from ..runtime import Session
    if not np.isfinite(float(target_sqnr)):
        raise CalibrationError(f"target SQNR {target_sqnr} is not a finite number of dB")
    m, units, samples, ranges = _setup(model, samples, calibration, method, percentile, shapes, recipe, info)
    ref_sess = Session(compile_model(m, shapes=shapes))
    ref = [ref_sess.run(s) for s in samples]
    names = [o.name for o in m.graph.output]

    def sqnr(keep_float: set) -> float:
        sess = Session(compile_model(insert_qdq(m, _subset(units, keep_float), ranges), shapes=shapes))
        worst = np.inf
        got = [sess.run(s) for s in samples]
        for name in names:
            r = np.concatenate([np.asarray(g[name], np.float64).reshape(-1) for g in ref])
            e = r - np.concatenate([np.asarray(g[name], np.float64).reshape(-1) for g in got])
            p, n = float(np.sum(r * r)), float(np.sum(e * e))
            worst = min(worst, np.inf if n == 0 else (10 * np.log10(p / n) if p > 0 else -np.inf))
        return worst

    n = len(units.units)
    everyone = set(range(n))
    sens = []
    for k in progress(range(n), "sensitivity", unit=" layers"):
        sens.append(sqnr(everyone - {k}))
    order = sorted(range(n), key=lambda k: (sens[k], k))      # most sensitive first
    keep: set = set()
    steps = [(0, sqnr(keep))]
    for k in order:
        if steps[-1][1] >= target_sqnr:
            break
        keep.add(k)
        steps.append((len(keep), sqnr(keep)))
    report = {"target_sqnr_db": target_sqnr, "output_sqnr_db": steps[-1][1], "int8_layers": n - len(keep),
              "float_layers": len(keep), "steps": [{"float_layers": a, "output_sqnr_db": b} for a, b in steps],
              "layers": [{"name": x[0].name or x[0].output[0], "op": x[0].op_type,
                          "precision": "float32" if k in keep else "int8", "sensitivity_sqnr_db": sens[k]}
                         for k, x in enumerate(units.units)]}
    return insert_qdq(m, _subset(units, keep), ranges), report


def report_text(report: dict) -> str:
    lines = [f"mixed precision: {report['int8_layers']} int8 and {report['float_layers']} float layer(s); output "
             f"SQNR {report['output_sqnr_db']:.1f} dB (target {report['target_sqnr_db']:.1f} dB)",
             f"  {'layer':40s} {'op':8s} {'precision':9s} sensitivity"]
    for r in report["layers"]:
        lines.append(f"  {r['name'][:40]:40s} {r['op']:8s} {r['precision']:9s} {r['sensitivity_sqnr_db']:.1f} dB")
    return "\n".join(lines)
