"""ONNX → IR: load, check the opset, pin input shapes, infer shapes, turn initializers and Constant nodes
into constants."""
from __future__ import annotations

import math
import os

import numpy as np

from . import ir, limits
from .errors import CompileError, Problem, Problems

# 22-28 only widened the type lists of the ops we claim (bfloat16, float8, int4/2): the f32 semantics
# are those of 21, and the ONNX node tests at those opsets check it (tests/py/test_onnx_node.py).
MIN_OPSET, MAX_OPSET = 11, 28
DEFAULT_DOMAINS = ("", "ai.onnx")


def load(model):
    """An onnx.ModelProto from a ModelProto, serialized bytes or a path. The external data of a model read
    from a path is read here, from files inside the model's directory only (read_external); a ModelProto
    or bytes must carry its data."""
    import onnx
    if isinstance(model, onnx.ModelProto):
        m, base, given = model, None, "a ModelProto"
    elif isinstance(model, (bytes, bytearray, memoryview)):
        m, base, given = onnx.load_from_string(bytes(model)), None, "bytes"
    else:
        path = os.fspath(model)
        m = onnx.load(path, load_external_data=False)
        base, given = os.path.dirname(os.path.abspath(path)), path
    read_external(m, base, given)
    return normalize(m, copy=m is model)


def freeze_inputs(model, consts: dict):
    """model (loaded, see load) with the graph inputs named in consts made initializers of those values:
    an input the deployment always feeds the same value (Silero VAD's sample rate), so that what depends
    on it (an If on it, a shape computed from it) is decided at compile time. A value is a number or a list
    of numbers, cast to the input's dtype, in the input's declared shape (a scalar input: one number)."""
    import onnx
    from onnx import numpy_helper
    m = onnx.ModelProto.FromString(model.SerializeToString())
    inputs = {vi.name: vi for vi in m.graph.input}
    inits = {t.name for t in m.graph.initializer}
    probs = Problems()
    for name, value in consts.items():
        vi = inputs.get(name)
        if vi is None or name in inits:
            real = [v for v in inputs if v not in inits]
            probs.add(None, f"consts['{name}']: the model has no input '{name}' (inputs: {', '.join(real)})")
            continue
        dt, shape = shape_of(vi.type)
        if dt is None:
            probs.add(None, f"consts['{name}']: input '{name}' has a dtype edgeplan cannot hold")
            continue
        try:
            arr = np.asarray(value, dtype=np.float64)
            if shape is None or any(d is None for d in shape):
                raise ValueError(f"input '{name}' has no fixed shape {list(shape or [])}")
            if arr.size != math.prod(shape):
                raise ValueError(f"input '{name}' has shape {list(shape)}: give {math.prod(shape)} value(s), "
                                 f"got {arr.size}")
            if np.issubdtype(dt, np.integer) and not np.array_equal(arr, np.round(arr)):
                raise ValueError(f"input '{name}' is {np.dtype(dt).name}: give integers")
            arr = arr.astype(dt).reshape(shape)
        except (TypeError, ValueError) as e:
            probs.add(None, f"consts['{name}'] = {value!r}: {e}")
            continue
        m.graph.initializer.append(numpy_helper.from_array(arr, name))
        m.graph.input.remove(vi)
    probs.raise_if_any()
    return m


def normalize(m, copy: bool):
    """The model as the compiler reads it (a copy when `copy` and anything changes):
    - an opset below MIN_OPSET converted to MIN_OPSET by onnx's version converter (the semantics of every
      op kept, e.g. Upsample becomes Resize), so old exports run as they come;
    - a graph-input dim written as a negative value (Paddle's -1 batch) made symbolic, named
      '<input>_dim<k>' unless it has a name, so that --shape pins it and --dim bounds it. A 0 stays 0: ONNX
      defines it as an empty dim (and its node tests use it so). On an inner value or an output, a negative
      dim is made unknown (shape inference finds it)."""
    import onnx
    opset = default_opset(m)
    if 0 < opset < MIN_OPSET:
        from onnx import helper, version_converter
        scan = next((n for n in m.graph.node if n.op_type == "Scan" and n.domain in ("", "ai.onnx")), None)
        if opset < 9 and scan is not None:   # the converter drops Scan-8's batch axis: the inputs change shape
            raise CompileError([Problem(scan.name or "Scan", "Scan", f"the model uses opset {opset}, whose Scan has "
                                        f"a batch axis that converting to opset {MIN_OPSET} (onnx.version_converter) "
                                        f"does not keep. Export it at opset 9 or later")])
        listed = {vi.name for vi in m.graph.input}
        missing = [t for t in m.graph.initializer if t.name not in listed]
        if m.ir_version < 4 and missing:   # IR < 4 lists every initializer as an input; the converter needs it
            if copy:
                m, copy = onnx.ModelProto.FromString(m.SerializeToString()), False
            m.graph.input.extend(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in missing)
        try:
            m, copy = version_converter.convert_version(m, MIN_OPSET), False
        except Exception as e:  # noqa: BLE001 - the converter's errors are RuntimeError, ValueError, ...
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise CompileError([ir_problem(
                f"the model uses opset {opset}; converting it to opset {MIN_OPSET} (onnx.version_converter) "
                f"failed: {msg}. Export it at opset {MIN_OPSET} or later")]) from None
    inits = {t.name for t in m.graph.initializer}
    bad = [(vi, k) for vi in m.graph.input if vi.name not in inits and vi.type.HasField("tensor_type")
           for k, d in enumerate(vi.type.tensor_type.shape.dim) if d.HasField("dim_value") and d.dim_value < 0]
    if bad:
        if copy:
            m, copy = onnx.ModelProto.FromString(m.SerializeToString()), False
        by_name = {vi.name: vi for vi in m.graph.input}
        for vi, k in bad:
            d = by_name[vi.name].type.tensor_type.shape.dim[k]
            name = d.dim_param or f"{vi.name}_dim{k}"
            d.Clear()
            d.dim_param = name
    # a negative dim declared on an inner value or an output (a converter copying the -1 through) is unknown
    inner = [d for vi in list(m.graph.value_info) + list(m.graph.output) if vi.type.HasField("tensor_type")
             for d in vi.type.tensor_type.shape.dim if d.HasField("dim_value") and d.dim_value < 0]
    if inner:
        if copy:
            m, copy = onnx.ModelProto.FromString(m.SerializeToString()), False
            inner = [d for vi in list(m.graph.value_info) + list(m.graph.output) if vi.type.HasField("tensor_type")
                     for d in vi.type.tensor_type.shape.dim if d.HasField("dim_value") and d.dim_value < 0]
        for d in inner:
            d.Clear()
    return m


def _graph_tensors(g, where=""):
    """(description, TensorProto) of every tensor stored in graph g and its subgraphs."""
    for t in g.initializer:
        yield f"initializer '{t.name}'{where}", t
    for sp in g.sparse_initializer:
        yield f"sparse initializer '{sp.values.name}'{where}", sp.values
        yield f"sparse initializer '{sp.values.name}' (indices){where}", sp.indices
    yield from _node_tensors(g.node, where)


def _node_tensors(nodes, where=""):
    """(description, TensorProto) of every tensor in the attributes of nodes and their subgraphs."""
    from onnx import AttributeProto
    for idx, p in enumerate(nodes):
        node = f"node '{p.name or f'{p.op_type}_{idx}'}' ({p.op_type})"
        for a in p.attribute:
            what = f"{node} attribute '{a.name}'{where}"
            if a.type == AttributeProto.TENSOR:
                yield what, a.t
            elif a.type == AttributeProto.TENSORS:
                for t in a.tensors:
                    yield what, t
            elif a.type == AttributeProto.SPARSE_TENSOR:
                yield what, a.sparse_tensor.values
                yield what + " (indices)", a.sparse_tensor.indices
            elif a.type == AttributeProto.GRAPH:
                yield from _graph_tensors(a.g, f" (in the subgraph of {node})")
            elif a.type == AttributeProto.GRAPHS:
                for sub in a.graphs:
                    yield from _graph_tensors(sub, f" (in a subgraph of {node})")


def _external_problem(t, base: str, given: str):
    """Why the external data of t cannot be read from base (None if it can), as a phrase."""
    info = {e.key: e.value for e in t.external_data}
    loc = info.get("location", "")
    if base is None:
        return (f"keeps its data in the external file '{loc}', but the model was given as {given}, with no "
                f"directory to read it from: pass the model's path (or load it with onnx.load(path), which "
                f"reads its external data)")
    if not loc:
        return "is marked as external data but names no file (no 'location')"
    if os.path.isabs(loc) or os.path.splitdrive(loc)[0]:
        return (f"keeps its data in '{loc}', an absolute path: external data must be a file inside the "
                f"model's directory {base}")
    full = os.path.normpath(os.path.join(base, loc))
    real_base = os.path.realpath(base)
    if os.path.commonpath([os.path.realpath(full), real_base]) != real_base:
        return (f"keeps its data in '{loc}', which is outside the model's directory {base}; external data "
                f"must be a file inside it")
    if not os.path.isfile(full):
        return f"keeps its data in '{loc}', which does not exist in {base}" + (
            "" if not os.path.exists(full) else " as a regular file")
    try:
        offset, length = int(info.get("offset", 0) or 0), info.get("length")
        length = None if length in (None, "") else int(length)
    except ValueError:
        return f"has a non-integer offset or length for its external file '{loc}'"
    size = os.path.getsize(full)
    if offset < 0 or (length is not None and length < 0):
        return f"has a negative offset or length for its external file '{loc}'"
    if offset > size or (length is not None and offset + length > size):
        end = offset if length is None else offset + length
        return f"needs bytes up to {end} of its external file '{loc}', which has {size}"
    return None


def read_external(model, base, given: str) -> None:
    """Read every external tensor of model into it from the model's directory `base` (None: a model
    given as bytes or a ModelProto, which has none), or raise CompileError naming each tensor and file
    that cannot be read: missing, outside base (absolute, '..', a symlink out), or too short."""
    from onnx import TensorProto, external_data_helper
    tensors = list(_graph_tensors(model.graph))
    for f in model.functions:
        tensors += _node_tensors(f.node, f" (in function '{f.name}')")
    ext = [(what, t) for what, t in tensors if t.data_location == TensorProto.EXTERNAL]
    probs = Problems()
    for what, t in ext:
        why = _external_problem(t, base, given)
        if why:
            probs.add(None, f"{what} {why}")
    probs.raise_if_any()
    for what, t in ext:
        loc = next((e.value for e in t.external_data if e.key == "location"), "")
        try:
            external_data_helper.load_external_data_for_tensor(t, base)
        except Exception as e:  # noqa: BLE001 - onnx's own checks (symlinks, bounds) raise several types
            probs.add(None, f"{what}: cannot read its external data file '{loc}': {e}")
    probs.raise_if_any()


# bits per element of the packed sub-byte types (raw_data holds ceil(n * bits / 8) bytes)
def _sub_byte_bits() -> dict:
    from onnx import TensorProto
    bits = {"UINT4": 4, "INT4": 4, "FLOAT4E2M1": 4, "UINT2": 2, "INT2": 2, "FLOAT6E2M3": 6, "FLOAT6E3M2": 6}
    return {getattr(TensorProto, k): v for k, v in bits.items() if hasattr(TensorProto, k)}


def tensor_data_problem(t):
    """Why the data of TensorProto t does not match its dims and type (None if it does), as a phrase:
    raw_data must hold exactly the bytes its dims need, a typed field exactly the values."""
    from onnx import TensorProto, helper
    if t.data_location == TensorProto.EXTERNAL:
        return None
    dims = [int(d) for d in t.dims]
    if any(d < 0 for d in dims):
        return f"has negative dims {dims}"
    if t.data_type == TensorProto.UNDEFINED:
        return "has no data type"
    try:
        dt = np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type))
        field = helper.tensor_dtype_to_field(t.data_type)
    except Exception:  # noqa: BLE001
        return f"has unknown data type {t.data_type}"
    n = math.prod(dims)
    type_name = dt.name if dt != object else "string"
    sub = _sub_byte_bits()
    if t.HasField("raw_data"):
        if t.data_type == TensorProto.STRING:
            return "is a string tensor with raw_data (strings are stored in string_data)"
        want = (n * sub.get(t.data_type, dt.itemsize * 8) + 7) // 8
        have = len(t.raw_data)
        if have != want:
            return f"has {have} bytes of raw_data, but its dims {dims} of {type_name} need {want} bytes"
        return None
    if t.data_type in sub:
        return None    # packed typed values: numpy_helper checks them when converting
    want = n * (2 if t.data_type in (TensorProto.COMPLEX64, TensorProto.COMPLEX128) else 1)
    have = len(getattr(t, field))
    if have != want:
        return f"has {have} values in {field}, but its dims {dims} of {type_name} need {want}"
    return None


def np_dtype(elem_type: int):
    from onnx import helper
    if not elem_type:
        return None
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except Exception:
        return None


def tensor_to_array(t) -> np.ndarray:
    """The data of TensorProto t (check_graph has checked it against its dims). load() has read all
    external data, so a tensor still marked external was out of its reach: ValueError, never a read
    relative to the current directory."""
    from onnx import TensorProto, numpy_helper
    if t.data_location == TensorProto.EXTERNAL:
        raise ValueError("keeps its data in an external file that was not read")
    return numpy_helper.to_array(t)


def sparse_to_array(sp) -> np.ndarray:
    """The dense array of SparseTensorProto sp; ValueError when its indices do not fit its dims or its
    dense form is above the size a constant may be materialised at (limits.fold_limit)."""
    dims = tuple(int(d) for d in sp.dims)
    if any(d < 0 for d in dims):
        raise ValueError(f"has negative dims {list(dims)}")
    vals = tensor_to_array(sp.values).reshape(-1)
    idx = tensor_to_array(sp.indices).astype(np.int64)
    dense_bytes = limits.nbytes(dims, vals.dtype)
    stored = vals.nbytes + idx.nbytes
    if dense_bytes > limits.fold_limit(stored):
        raise ValueError(f"its dense form {list(dims)} {vals.dtype.name} is {limits.fmt_bytes(dense_bytes)}, above the "
                         f"limit for a constant built at compile time ({limits.fold_limit_text(stored)})")
    total = math.prod(dims)
    if idx.ndim == 1 and idx.shape[0] == vals.size:
        if idx.size and (idx.min() < 0 or idx.max() >= total):
            raise ValueError(f"has an index outside [0, {total}) of its dims {list(dims)}")
        dense = np.zeros(total, dtype=vals.dtype)
        dense[idx] = vals
        return dense.reshape(dims)
    if idx.ndim == 2 and idx.shape == (vals.size, len(dims)):
        if idx.size and ((idx < 0).any() or (idx >= np.array(dims, np.int64)).any()):
            raise ValueError(f"has an index outside its dims {list(dims)}")
        dense = np.zeros(dims, dtype=vals.dtype)
        dense[tuple(idx.T)] = vals
        return dense
    raise ValueError(f"has indices of shape {list(idx.shape)} for {vals.size} values of a rank-{len(dims)} tensor")


def attr_value(a):
    from onnx import AttributeProto, helper
    v = helper.get_attribute_value(a)
    if a.type == AttributeProto.TENSOR:
        return tensor_to_array(v)
    if a.type == AttributeProto.SPARSE_TENSOR:
        return sparse_to_array(v)
    if a.type == AttributeProto.STRING:
        return v.decode("utf-8", "replace")
    if a.type == AttributeProto.STRINGS:
        return [s.decode("utf-8", "replace") for s in v]
    if a.type in (AttributeProto.INTS, AttributeProto.FLOATS):
        return list(v)
    return v


def constant_node_value(node) -> np.ndarray:
    a = node.attribute[0] if len(node.attribute) == 1 else None
    if a is None:
        raise ValueError("Constant needs exactly one value attribute")
    v = attr_value(a)
    if a.name in ("value", "sparse_value"):
        return np.asarray(v)
    if a.name == "value_float":
        return np.array(v, dtype=np.float32)
    if a.name == "value_floats":
        return np.array(v, dtype=np.float32).reshape(-1)
    if a.name == "value_int":
        return np.array(v, dtype=np.int64)
    if a.name == "value_ints":
        return np.array(v, dtype=np.int64).reshape(-1)
    if a.name == "value_string":
        return np.array(v, dtype=object)
    if a.name == "value_strings":
        return np.array(v, dtype=object).reshape(-1)
    raise ValueError(f"Constant attribute '{a.name}' unknown")


def default_opset(model) -> int:
    for imp in model.opset_import:
        if imp.domain in DEFAULT_DOMAINS:
            return int(imp.version)
    return 0


def shape_of(type_proto):
    """(dtype, shape) of a tensor TypeProto; shape entries are ints or None, shape None if rank unknown."""
    if not type_proto.HasField("tensor_type"):
        return None, None
    tt = type_proto.tensor_type
    dt = np_dtype(tt.elem_type)
    if not tt.HasField("shape"):
        return dt, None
    return dt, tuple(int(d.dim_value) if d.HasField("dim_value") else None for d in tt.shape.dim)


def _fmt_shape(dims) -> tuple:
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def input_dim_params(model) -> dict:
    """{input name: tuple of dim_param names (None for a fixed or unnamed dim)} of the real inputs."""
    g = model.graph
    inits = {t.name for t in g.initializer} | {t.values.name for t in g.sparse_initializer}
    out = {}
    for vi in g.input:
        if vi.name in inits or not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            continue
        out[vi.name] = tuple(d.dim_param if not d.HasField("dim_value") and d.dim_param else None
                             for d in vi.type.tensor_type.shape.dim)
    return out


def pin_inputs(model, shapes, inits=(), symbols=None) -> None:
    """Write the pinned input dims into model (in place); raise CompileError listing every symbolic
    dim left unpinned and every contradicting or unknown pin. `inits` names constants listed as inputs.
    `symbols` ({dim_param: int}) pins every input dim of that name that `shapes` does not pin."""
    g = model.graph
    inits = set(inits) | {t.name for t in g.initializer} | {t.values.name for t in g.sparse_initializer}
    real = [vi for vi in g.input if vi.name not in inits]
    names = [vi.name for vi in real]
    shapes = dict(shapes or {})
    for vi in real:
        if symbols and vi.name not in shapes and vi.type.tensor_type.HasField("shape"):
            dims = vi.type.tensor_type.shape.dim
            if all(d.HasField("dim_value") or d.dim_param in symbols for d in dims) and \
                    any(not d.HasField("dim_value") for d in dims):
                shapes[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else symbols[d.dim_param] for d in dims)
    probs = Problems()
    for name in shapes:
        if name not in names:
            probs.add(None, f"shapes pins '{name}', which is not a graph input (inputs: {', '.join(names)})")
    for vi in real:
        name = vi.name
        if not vi.type.HasField("tensor_type"):
            probs.add(None, f"input '{name}' is not a tensor")
            continue
        tt = vi.type.tensor_type
        pin = shapes.get(name)
        if pin is not None:
            try:
                pin = tuple(int(d) for d in pin)
            except (TypeError, ValueError):
                probs.add(None, f"shapes['{name}'] must be a tuple of ints, got {pin!r}")
                continue
            if not tt.HasField("shape"):
                wrong = [p for p in pin if not 0 <= p <= limits.MAX_DIM]
                if wrong:
                    probs.add(None, f"input '{name}' pinned to {pin}: dims must be in [0, {limits.MAX_DIM}]")
                    continue
                for d in pin:
                    tt.shape.dim.add().dim_value = d
                continue
            dims = tt.shape.dim
            if len(pin) != len(dims):
                probs.add(None, f"input '{name}' has rank {len(dims)} but shapes pins {len(pin)} dims {pin}")
                continue
            bad = False
            for k, (d, p) in enumerate(zip(dims, pin)):
                if p < 0:
                    bad = True
                    probs.add(None, f"input '{name}' dim {k} pinned to {p}: dims must be >= 0")
                elif p > limits.MAX_DIM:
                    bad = True
                    probs.add(None, f"input '{name}' dim {k} pinned to {p}: dims must be <= {limits.MAX_DIM} "
                                    f"(plans store dims as int32)")
                elif d.HasField("dim_value") and d.dim_value != p:
                    bad = True
                    probs.add(None, f"input '{name}' dim {k} is {d.dim_value} in the model but "
                                    f"shapes pins {p} (pinned {pin})")
            if not bad:
                for d, p in zip(dims, pin):
                    d.Clear()
                    d.dim_value = p
            continue
        if not tt.HasField("shape"):
            probs.add(None, f"input '{name}' has unknown rank: pin it with shapes={{'{name}': (...)}}")
            continue
        dims = tt.shape.dim
        example = [d.dim_value if d.HasField("dim_value") else 1 for d in dims]
        for k, d in enumerate(dims):
            if not d.HasField("dim_value"):
                sym = d.dim_param or "?"
                probs.add(None, f"input '{name}' dim {k} ('{sym}') is symbolic: pin it with "
                                f"shapes={{'{name}': {_fmt_shape(example)}}} / --shape "
                                f"{name}={','.join(map(str, example))}"
                                + (f", or bound it with dims={{'{sym}': (MIN, MAX)}} / --dim {sym}=MIN..MAX"
                                   if d.dim_param else ""))
    probs.raise_if_any()


def infer_shapes(model):
    import onnx
    try:
        return onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    except Exception:
        return model


def import_model(model, shapes=None, symbols=None) -> ir.Model:
    model = load(model)
    opset = default_opset(model)
    from . import ml
    if opset == 0 and model.graph.node and all(n.domain == ml.DOMAIN for n in model.graph.node):
        opset = ml.DEFAULT_OPSET   # a classic-ML model: its ops are written in the default domain
    if not MIN_OPSET <= opset <= MAX_OPSET:
        what = "imports no default-domain (ai.onnx) opset" if opset == 0 else f"uses default-domain opset {opset}"
        raise CompileError([ir_problem(f"the model {what}; edgeplan reads opsets 1-{MAX_OPSET} (older ones "
                                       f"converted to {MIN_OPSET}): re-export it at an opset up to {MAX_OPSET}")])
    if len(model.functions):
        try:
            from onnx import inliner
            model = inliner.inline_local_functions(model)
        except Exception:  # noqa: BLE001
            pass
    check_graph(model)
    probs = Problems()
    model = ml.expand_ml(model, opset, probs)
    probs.raise_if_any()
    from .functions import expand_functions
    model = expand_functions(model, opset)
    from .floats import compute_in_float32
    model = compute_in_float32(model)
    skel, big = skeleton(model)
    pin_inputs(skel, shapes, big, symbols)
    skel = infer_shapes(skel)
    return to_ir(model, skel, opset)


SKELETON_MAX_ELEMS = 4096


def skeleton(model):
    """A copy of model without the data of its large initializers (they become typed graph inputs),
    for shape inference; returns (skeleton, names of those initializers)."""
    import onnx
    from onnx import helper
    g = model.graph
    sk = onnx.ModelProto()
    sk.ir_version = model.ir_version
    sk.opset_import.extend(model.opset_import)
    sg = sk.graph
    sg.name = g.name
    sg.node.extend(g.node)
    sg.output.extend(g.output)
    sg.value_info.extend(g.value_info)
    sg.sparse_initializer.extend(g.sparse_initializer)
    big = []
    for t in g.initializer:
        n = 1
        for d in t.dims:
            n *= d
        if n <= SKELETON_MAX_ELEMS and t.data_location != onnx.TensorProto.EXTERNAL:
            sg.initializer.append(t)
        else:
            big.append(t.name)
            sg.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    names = set(big)
    sg.input.extend(vi for vi in g.input if vi.name not in names)
    return sk, big


def ir_problem(msg):
    return Problem(None, None, msg)


def node_names(g) -> list:
    """The name of every node of graph g as errors report it: its own, made unique, or op_type_index."""
    names, out = set(), []
    for idx, p in enumerate(g.node):
        name = p.name
        if not name or name in names:
            name = f"{p.op_type}_{idx}" if not name else f"{name}_{idx}"
        names.add(name)
        out.append(name)
    return out


def schema_of(p, opsets: dict):
    """The onnx schema of NodeProto p at the model's opset, or None (custom domains, ops this onnx lacks)."""
    from onnx import defs
    domain = "" if p.domain in DEFAULT_DOMAINS else p.domain
    try:
        return defs.get_schema(p.op_type, int(opsets.get(domain, opsets.get("ai.onnx", 0)) or 1), domain)
    except Exception:  # noqa: BLE001 - onnx.defs.SchemaError: no such op (reported by the lowering)
        return None


def node_schema_problems(p, opsets: dict) -> list:
    """Why NodeProto p cannot be read as its op's schema declares it: more or fewer inputs or outputs than the
    op takes, an attribute without a type or of another type than the schema's (integers where floats are
    declared excepted). Ops without a schema here are left to their handlers."""
    from onnx import AttributeProto
    kind = AttributeProto.AttributeType.Name
    out = [f"attribute '{a.name}' has no type (the model is malformed)" for a in p.attribute
           if a.type == AttributeProto.UNDEFINED]
    schema = schema_of(p, opsets)
    if schema is None:
        return out
    for what, n, lo, hi in (("inputs", len(p.input), schema.min_input, schema.max_input),
                            ("outputs", len(p.output), schema.min_output, schema.max_output)):
        if n > hi:
            out.append(f"has {n} {what}, {p.op_type} takes at most {hi}")
        elif n < lo:
            out.append(f"has {n} {what}, {p.op_type} takes at least {lo}")
    widen = {(AttributeProto.INT, AttributeProto.FLOAT), (AttributeProto.INTS, AttributeProto.FLOATS)}
    for a in p.attribute:   # an integer where a float is declared (alpha=1) reads as that float
        want = schema.attributes.get(a.name)
        if (a.type != AttributeProto.UNDEFINED and want is not None and want.type != a.type
                and (a.type, want.type) not in widen):
            out.append(f"attribute '{a.name}' is {kind(a.type)}, {p.op_type} takes {kind(want.type)}")
    return out


def invalid_utf8(g) -> list:
    """The names in GraphProto g that are not valid UTF-8 (protobuf hands them over as bytes, not str): of its
    inputs, outputs, value infos, initializers, and its nodes' names, op types, domains, inputs, outputs and
    attribute names, as 'what' strings for a problem."""
    out = []

    def check(what, v):
        if not isinstance(v, str):
            out.append(f"{what} {v.decode('utf-8', 'replace')!r}")
    for what, vis in (("graph input", g.input), ("graph output", g.output), ("value info", g.value_info)):
        for vi in vis:
            check(what, vi.name)
    for t in list(g.initializer) + [sp.values for sp in g.sparse_initializer]:
        check("initializer", t.name)
    for idx, p in enumerate(g.node):
        for field in ("name", "op_type", "domain"):
            check(f"node {idx}'s {field}", getattr(p, field))
        for v in list(p.input) + list(p.output):
            check(f"node {idx}'s tensor", v)
        for a in p.attribute:
            check(f"node {idx}'s attribute", a.name)
    return out


def check_graph(model) -> None:
    """Raise CompileError listing every way the graph is not a valid ONNX graph that later passes would
    otherwise accept silently: no outputs, a tensor defined twice (two nodes writing one name, a node
    writing a graph input or an initializer, a repeated input or initializer), a name that is not UTF-8, a node
    without an op_type,
    inputs, outputs or attributes other than the op's schema declares (node_schema_problems), and stored tensors
    whose data does not match their dims (tensor_data_problem)."""
    g = model.graph
    bad = invalid_utf8(g)
    if bad:
        raise CompileError([ir_problem(f"{w} is not valid UTF-8 (the model is malformed)") for w in bad[:4]])
    probs = Problems()
    opsets = {o.domain: o.version for o in model.opset_import}
    if not len(g.output):
        probs.add(None, "the graph has no outputs: there is nothing to compute")
    inputs, inits = set(), set()
    for vi in g.input:
        if vi.name in inputs:
            probs.add(None, f"graph input '{vi.name}' is declared twice")
        inputs.add(vi.name)
    for t in list(g.initializer) + [sp.values for sp in g.sparse_initializer]:
        if t.name in inits:
            probs.add(None, f"initializer '{t.name}' is given twice")
        inits.add(t.name)
    for what, t in _graph_tensors(g):
        why = tensor_data_problem(t)
        if why:
            probs.add(None, f"{what} {why}")
    producer: dict = {}
    for name, p in zip(node_names(g), g.node):
        if not p.op_type:
            probs.append(Problem(name, "", "the node has no op_type (the model is malformed)"))
        for why in node_schema_problems(p, opsets):
            probs.append(Problem(name, p.op_type, why))
        for o in p.output:
            if not o:
                continue
            prev = producer.get(o)
            if prev == (name, p.op_type):
                why = f"lists output '{o}' twice"
            elif prev is not None:
                why = (f"writes tensor '{o}', which node '{prev[0]}' ({prev[1]}) writes too: every tensor must "
                       f"have exactly one producer (onnxruntime refuses this graph too)")
            elif o in inits:
                why = f"writes tensor '{o}', which is an initializer: every tensor must have exactly one producer"
            elif o in inputs:
                why = f"writes tensor '{o}', which is a graph input: every tensor must have exactly one producer"
            else:
                producer[o] = (name, p.op_type)
                continue
            probs.append(Problem(name, p.op_type, why))
    probs.raise_if_any()


def rename_graph(g, names: dict) -> None:
    """Renames, in place, the values of GraphProto g (its initializers too) and of the graphs nested in its
    nodes' attributes."""
    from onnx import AttributeProto
    for p in g.node:
        for k, v in enumerate(p.input):
            if v in names:
                p.input[k] = names[v]
        for k, v in enumerate(p.output):
            if v in names:
                p.output[k] = names[v]
        for a in p.attribute:
            if a.type == AttributeProto.GRAPH:
                rename_graph(a.g, names)
            elif a.type == AttributeProto.GRAPHS:
                for sub in a.graphs:
                    rename_graph(sub, names)
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.name in names:
            vi.name = names[vi.name]
    for t in g.initializer:
        if t.name in names:
            t.name = names[t.name]


def _subgraphs(p) -> list:
    from onnx import AttributeProto
    out = []
    for a in p.attribute:
        if a.type == AttributeProto.GRAPH:
            out.append(a.g)
        elif a.type == AttributeProto.GRAPHS:
            out.extend(a.graphs)
    return out


def own_and_free(g) -> tuple:
    """(the values GraphProto g defines, the outer values it reads in first-use order), the graphs nested
    in its nodes included."""
    own = {t.name for t in g.initializer} | {vi.name for vi in g.input}
    own |= {o for p in g.node for o in p.output if o}
    free: list = []
    seen = set()

    def need(name):
        if name and name not in own and name not in seen:
            seen.add(name)
            free.append(name)
    for p in g.node:
        for i in p.input:
            need(i)
        for sub in _subgraphs(p):
            for name in own_and_free(sub)[1]:
                need(name)
    for o in g.output:
        need(o.name)
    return own, free


def node_from_proto(p, name: str) -> ir.Node:
    """The IR node of NodeProto p. A node with subgraphs (If, Loop, Scan) lists the outer values they read
    after its own inputs, so that passes see those uses (ir.Node.captures)."""
    attrs = {a.name: attr_value(a) for a in p.attribute}
    captures: list = []
    for sub in _subgraphs(p):
        captures += [v for v in own_and_free(sub)[1] if v not in captures]
    return ir.Node(p.op_type, list(p.input) + captures, list(p.output), attrs, name,
                   "" if p.domain in DEFAULT_DOMAINS else p.domain, proto=p, captures=tuple(captures))


def to_ir(model, skel, opset: int) -> ir.Model:
    """IR from model's constants and skel's (pinned, inferred) graph."""
    out = ir.Model(opset)
    out.opsets = {o.domain: int(o.version) for o in model.opset_import}
    probs = Problems()
    for t in model.graph.initializer:
        try:
            out.set_const(t.name, tensor_to_array(t))
        except Exception as e:  # noqa: BLE001 - numpy_helper raises several types for malformed data
            probs.add(None, f"initializer '{t.name}' cannot be read: {e}")
    for sp in model.graph.sparse_initializer:
        try:
            out.set_const(sp.values.name, sparse_to_array(sp))
        except Exception as e:  # noqa: BLE001
            probs.add(None, f"sparse initializer '{sp.values.name}' cannot be read: {e}")
    g = skel.graph
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        if out.const(vi.name) is not None:
            continue
        dt, shp = shape_of(vi.type)
        v = out.value(vi.name)
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            params = tuple(d.dim_param or None for d in vi.type.tensor_type.shape.dim)
            if any(params):
                out.dim_params.setdefault(vi.name, params)
        if dt is not None:
            v.dtype = dt
        if shp is not None and (v.shape is None or sum(d is None for d in shp) < sum(d is None for d in v.shape)):
            v.shape = shp
    out.inputs = [vi.name for vi in g.input if out.const(vi.name) is None]
    out.outputs = [vi.name for vi in g.output]
    for name, p in zip(node_names(g), g.node):
        if p.op_type == "Constant" and p.domain in DEFAULT_DOMAINS:
            try:
                if len(p.output) != 1 or not p.output[0]:
                    raise ValueError(f"Constant needs exactly one output, has {len(p.output)}")
                out.set_const(p.output[0], constant_node_value(p))
            except Exception as e:  # noqa: BLE001
                probs.append(ir_problem(f"node '{name}' (Constant): {e}"))
            continue
        try:
            node = node_from_proto(p, name)
        except Exception as e:  # noqa: BLE001 - a malformed tensor attribute
            probs.append(Problem(name, p.op_type, f"an attribute cannot be read: {e}"))
            continue
        out.nodes.append(node)
        for o in p.output:
            if o:
                out.value(o)
        for i in node.inputs:
            if i:
                out.value(i)
    produced = {o for n in out.nodes for o in n.outputs} | set(out.inputs)
    for o in out.outputs:
        if o not in produced and out.const(o) is None:
            probs.append(ir_problem(f"graph output '{o}' is produced by no node"))
    probs.raise_if_any()
    return out
