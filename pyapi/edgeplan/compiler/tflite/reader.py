"""Reads a TFLite flatbuffer through the `tflite` package's generated classes into plain records: tensors
(shape, dtype, constant data, quantisation, sparsity) and operators (builtin name or custom code, options
object, inputs, outputs). Sparse constants are densified here (DENSIFY's input, TFLite's sparse format)."""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

IDENTIFIER = b"TFL3"

# TensorType -> numpy dtype (complex and string tensors are named in errors, never computed)
_DTYPES = {0: np.float32, 1: np.float16, 2: np.int32, 3: np.uint8, 4: np.int64, 6: np.bool_, 7: np.int16,
           9: np.int8, 10: np.float64, 12: np.uint64, 15: np.uint32, 16: np.uint16, 8: np.complex64}
TYPE_NAMES = {0: "float32", 1: "float16", 2: "int32", 3: "uint8", 4: "int64", 5: "string", 6: "bool", 7: "int16",
              8: "complex64", 9: "int8", 10: "float64", 11: "complex128", 12: "uint64", 13: "resource",
              14: "variant", 15: "uint32", 16: "uint16", 17: "int4", 18: "bfloat16"}


def is_tflite(data) -> bool:
    """True for bytes whose flatbuffer file identifier (bytes 4..8) is TFLite's "TFL3"."""
    return len(data) >= 8 and bytes(data[4:8]) == IDENTIFIER


@dataclass
class Quant:
    scale: np.ndarray            # float32, one per tensor or per channel
    zero_point: np.ndarray       # int64
    axis: int                    # the channel axis when per channel

    @property
    def per_channel(self) -> bool:
        return self.scale.size > 1


@dataclass
class Tensor:
    index: int
    name: str
    shape: tuple
    type: int                    # TensorType
    data: Optional[np.ndarray]   # constant data, None for a run-time tensor
    quant: Optional[Quant]
    sparse: bool = False
    signature: tuple = ()        # shape_signature (-1 for a dim only known at run time)

    @property
    def dtype(self):
        return _DTYPES.get(self.type)

    @property
    def type_name(self) -> str:
        return TYPE_NAMES.get(self.type, str(self.type))


@dataclass
class Op:
    index: int
    name: str                    # builtin name (CONV_2D) or CUSTOM
    custom: str                  # custom code for CUSTOM
    inputs: list                 # tensor indices, -1 for an omitted optional input
    outputs: list
    options: object = None       # the generated options class, None when the op has none
    custom_options: bytes = b""
    version: int = 1
    extra: dict = field(default_factory=dict)


@dataclass
class Graph:
    tensors: list
    ops: list
    inputs: list
    outputs: list
    description: str = ""
    name: str = ""
    subgraphs: list = field(default_factory=list)   # the model's subgraphs by index (0 is this one)


def _module(name):
    return importlib.import_module("tflite." + name)


def _enum_names(module: str, cls: str) -> dict:
    c = getattr(_module(module), cls)
    return {v: k for k, v in vars(c).items() if not k.startswith("_") and isinstance(v, int)}


def _options(op):
    """The builtin options of op as their generated class (BuiltinOptions, then BuiltinOptions2), or None."""
    kind = op.BuiltinOptionsType()
    table = op.BuiltinOptions()
    names = _enum_names("BuiltinOptions", "BuiltinOptions")
    if not kind or table is None:
        kind2 = op.BuiltinOptions2Type() if hasattr(op, "BuiltinOptions2Type") else 0
        if not kind2:
            return None
        names, table = _enum_names("BuiltinOptions2", "BuiltinOptions2"), op.BuiltinOptions2()
        kind = kind2
    cls_name = names.get(kind)
    if cls_name is None or table is None:
        return None
    cls = getattr(_module(cls_name), cls_name)
    obj = cls()
    obj.Init(table.Bytes, table.Pos)
    return obj


def _buffer(model, buf, index):
    b = model.Buffers(index)
    if b is None:
        return None
    off = b.Offset() if hasattr(b, "Offset") else 0
    if off > 1:   # large models keep buffers after the flatbuffer, addressed by offset and size
        return bytes(buf[off:off + b.Size()])
    if b.DataLength() == 0:
        return None
    return b.DataAsNumpy().tobytes()


def _index_vector(kind, table):
    """A SparseIndexVector union's values as an int64 array."""
    if kind == 0 or table is None:
        return np.zeros(0, np.int64)
    cls_name = {1: "Int32Vector", 2: "Uint16Vector", 3: "Uint8Vector"}[kind]
    cls = getattr(_module(cls_name), cls_name)
    v = cls()
    v.Init(table.Bytes, table.Pos)
    return np.asarray(v.ValuesAsNumpy() if v.ValuesLength() else [], np.int64)


def densify(values: np.ndarray, shape: tuple, sparsity) -> np.ndarray:
    """The dense array of a TFLite sparse tensor: `values` in storage order, traversed along
    traversal_order; each dim DENSE (dense_size entries) or SPARSE_CSR (array_segments / array_indices);
    dims past the tensor's rank are the blocks of the dims named by block_map (TFLite's FormatConverter)."""
    order = [int(v) for v in sparsity.TraversalOrderAsNumpy()] if sparsity.TraversalOrderLength() else []
    block_map = [int(v) for v in sparsity.BlockMapAsNumpy()] if sparsity.BlockMapLength() else []
    rank = len(shape)
    if not order:
        order = list(range(rank))
    n = len(order)
    metas = [sparsity.DimMetadata(i) for i in range(sparsity.DimMetadataLength())]
    block_size = {}
    for k, d in enumerate(block_map):
        level = order.index(rank + k)
        block_size[d] = metas[level].DenseSize()
    idx = np.zeros(1, np.int64)            # position in the storage of the current level
    coords = np.zeros((1, n), np.int64)    # coordinates in the expanded (blocked) space
    for level, dim in enumerate(order):
        m = metas[level]
        if m.Format() == 0:                # DENSE
            size = m.DenseSize()
            ar = np.arange(size, dtype=np.int64)
            idx = (idx[:, None] * size + ar[None, :]).reshape(-1)
            coords = np.repeat(coords, size, axis=0)
            coords[:, dim] = np.tile(ar, len(coords) // size if size else 0)
        else:                              # SPARSE_CSR
            seg = _index_vector(m.ArraySegmentsType(), m.ArraySegments())
            ind = _index_vector(m.ArrayIndicesType(), m.ArrayIndices())
            start, stop = seg[idx], seg[idx + 1]
            counts = stop - start
            total = int(counts.sum())
            # child positions: start[p] + 0..counts[p]-1 for every parent p
            offs = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
            j = np.repeat(start, counts) + offs
            coords = np.repeat(coords, counts, axis=0)
            coords[:, dim] = ind[j]
            idx = j
    dense = np.zeros(shape, values.dtype)
    full = coords[:, :rank].copy()
    for k, d in enumerate(block_map):
        full[:, d] = full[:, d] * block_size[d] + coords[:, rank + k]
    dense[tuple(full.T)] = values[idx]
    return dense


def read(data: bytes) -> Graph:
    """The first subgraph of a TFLite model as a Graph; every subgraph (the bodies of IF and CALL_ONCE) is in
    its `subgraphs`, by index."""
    import tflite
    buf = bytearray(data)
    model = tflite.Model.GetRootAsModel(buf, 0)
    if model.SubgraphsLength() < 1:
        raise ValueError("the model has no subgraph")
    desc = model.Description().decode("utf-8", "replace") if model.Description() else ""
    graphs = [_subgraph(model, buf, k) for k in range(model.SubgraphsLength())]
    for g in graphs:
        g.subgraphs = graphs
    graphs[0].description = desc
    return graphs[0]


def _subgraph(model, buf, k: int) -> Graph:
    from tflite.utils import BUILTIN_OPCODE2NAME
    sg = model.Subgraphs(k)
    tensors = []
    for i in range(sg.TensorsLength()):
        t = sg.Tensors(i)
        shape = tuple(int(v) for v in t.ShapeAsNumpy()) if t.ShapeLength() else ()
        sig = tuple(int(v) for v in t.ShapeSignatureAsNumpy()) if t.ShapeSignatureLength() else ()
        raw = _buffer(model, buf, t.Buffer())
        q = t.Quantization()
        quant = None
        if q is not None and q.ScaleLength() > 0:
            zp = q.ZeroPointAsNumpy() if q.ZeroPointLength() else np.zeros(q.ScaleLength(), np.int64)
            quant = Quant(np.asarray(q.ScaleAsNumpy(), np.float32), np.asarray(zp, np.int64),
                          int(q.QuantizedDimension()))
        rec = Tensor(i, t.Name().decode("utf-8", "replace"), shape, t.Type(), None, quant, signature=sig)
        dt = _DTYPES.get(t.Type())
        if raw is not None and dt is not None:
            arr = np.frombuffer(raw, np.dtype(dt).newbyteorder("<")).astype(dt)
            sp = t.Sparsity()
            if sp is not None:
                arr = densify(arr, shape, sp)
                rec.sparse = True
            elif arr.size == int(np.prod(shape, dtype=np.int64)):
                arr = arr.reshape(shape)
            rec.data = arr
        tensors.append(rec)
    ops = []
    for i in range(sg.OperatorsLength()):
        o = sg.Operators(i)
        oc = model.OperatorCodes(o.OpcodeIndex())
        code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
        name = BUILTIN_OPCODE2NAME.get(code, f"BUILTIN_{code}")
        custom = oc.CustomCode().decode("utf-8", "replace") if code == 32 and oc.CustomCode() else ""
        ins = [int(v) for v in o.InputsAsNumpy()] if o.InputsLength() else []
        outs = [int(v) for v in o.OutputsAsNumpy()] if o.OutputsLength() else []
        copts = o.CustomOptionsAsNumpy().tobytes() if o.CustomOptionsLength() else b""
        ops.append(Op(i, name, custom, ins, outs, _options(o), copts, oc.Version()))
    ins = [int(v) for v in sg.InputsAsNumpy()] if sg.InputsLength() else []
    outs = [int(v) for v in sg.OutputsAsNumpy()] if sg.OutputsLength() else []
    name = sg.Name().decode("utf-8", "replace") if sg.Name() else f"subgraph {k}"
    return Graph(tensors, ops, ins, outs, name=name)
