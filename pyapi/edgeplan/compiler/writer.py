"""Serialises a lowered, memory-planned graph into plan bytes (docs/plan-format.md).

Every record is built through cffi from the C header's declarations, so the layout has exactly one
source of truth. Constants are 64-byte aligned and stored last, so a plan can be mmapped and its
weights used in place."""
from __future__ import annotations

import hashlib
import json

import numpy as np

from .._cdef import K, ffi
from .errors import CompileError, Problem
from .graph import DTYPES, OPCODES, Graph, Tensor
from .optable import OPS
from .memplan import MemoryPlan

SEC_ALIGN = 64


def _pad(buf: bytearray, align: int) -> None:
    buf.extend(b"\0" * ((-len(buf)) % align))


class _Names:
    def __init__(self):
        self.blob = bytearray()
        self.index: dict = {}

    def add(self, s: str) -> int:
        if not s:
            return K.EP_NO_NAME
        if s not in self.index:
            self.index[s] = len(self.blob)
            self.blob += s.encode("utf-8", "replace").replace(b"\0", b"?") + b"\0"
        return self.index[s]


class FieldError(ValueError):
    """A value does not fit the field of a plan record (an int32 dim of 2^40, say)."""

    def __init__(self, ctype: str, field: str, value, reason: str):
        self.ctype, self.field, self.value, self.reason = ctype, field, value, reason
        super().__init__(f"{ctype}.{field} = {value!r}: {reason}")


def _record(ctype: str, fields: dict) -> bytes:
    rec = ffi.new(ctype + " *")
    for k, v in fields.items():
        try:
            setattr(rec, k, v)
        except (TypeError, OverflowError, AttributeError, IndexError) as e:
            raise FieldError(ctype, k, v, str(e)) from None
    return bytes(ffi.buffer(rec))


def pack_params(kind: str, params: dict) -> bytes:
    struct = OPCODES[kind][1]
    fields = {}
    for k, v in params.items():
        if isinstance(v, (list, tuple, np.ndarray)):
            v = [x.item() if hasattr(x, "item") else x for x in v]
        elif hasattr(v, "item"):
            v = v.item()
        fields[k] = v
    return _record(struct, fields)


def _minor_version(graph: Graph) -> int:
    """The lowest minor version that expresses the plan (docs/plan-format.md, compatibility policy): the
    newest of its ops (the op table's `since`), 1.1 for symbols (variable dims) and state tensors, 1.2 for
    a symbol with a step or a rule over two symbols, the unary math kinds, and the 16-bit and 64-bit float
    dtypes; 1.7 for 16-bit packed weights, 1.14 on the C8 convolutions, 1.16 on GEMM ROWS."""
    v = max((OPS[op.kind].since for op in graph.ops), default=0)
    if graph.syms or any(t.is_state for t in graph.tensors):
        v = max(v, 1)
    if any(getattr(y, "step", 0) > 1 or getattr(y, "src2", 0) for y in graph.syms):
        v = max(v, 2)      # 1.2: symbols with a step, or a rule over two symbols
    if any(op.kind == "unary" and int(op.params.get("kind", 0)) >= K.EP_ACT_MATH_FIRST for op in graph.ops):
        v = max(v, 2)      # 1.2: the unary math kinds
    if any(op.kind == "pad" and (int(op.params.get("mode", 0)) == K.EP_PAD_WRAP
                                 or np.dtype(op.inputs[0].dtype) != np.float32) for op in graph.ops):
        v = max(v, 2)      # 1.2: Pad's wrap mode and integer Pad
    if any(np.dtype(t.dtype).name in _FORMATS_1_2 for t in graph.tensors):
        v = max(v, 2)      # 1.2: float16, bfloat16 and float64 tensors (CAST at the plan's edges)
    if any(np.dtype(t.dtype).name in ("uint16", "uint32", "uint64") for t in graph.tensors):
        v = max(v, 2)      # 1.2: the unsigned 16-, 32- and 64-bit dtypes
    if any(op.kind == "binary" and int(op.params.get("kind", 0)) >= K.EP_BIN_BITAND for op in graph.ops):
        v = max(v, 2)      # 1.2: the bitwise and shift kinds
    if any(op.kind == "binary" and int(op.params.get("kind", 0)) == K.EP_BIN_POW
           and np.dtype(op.inputs[0].dtype) != np.float32 for op in graph.ops):
        v = max(v, 3)      # 1.3: integer POW
    if any(op.kind == "maxpool" and op.variant == K.EP_MAXPOOL_VARIANT_INDICES for op in graph.ops):
        v = max(v, 3)      # 1.3: MAXPOOL's second output (Indices), variant INDICES
    if any(op.kind == "resize" and op.variant == K.EP_RESIZE_VARIANT_TABLE for op in graph.ops):
        v = max(v, 4)      # 1.4: RESIZE's variant TABLE
    if any(op.kind == "conv2d" and op.variant == K.EP_CONV2D_VARIANT_PACKED and int(op.params.get("groups", 1)) > 1
           for op in graph.ops):
        v = max(v, 4)      # 1.4: CONV2D PACKED with groups (a 1.3 reader refuses it: EP_ERR_PLAN_PARAMS)
    if any(op.kind == "gemm" and op.variant == K.EP_GEMM_VARIANT_ROWS for op in graph.ops):
        v = max(v, 5)      # 1.5: GEMM's variant ROWS (B as its transpose)
    if any(op.kind == "conv2d" and op.variant in (K.EP_CONV2D_VARIANT_DW_C8, K.EP_CONV2D_VARIANT_DIRECT,
                                                   K.EP_CONV2D_VARIANT_POINTWISE) for op in graph.ops):
        v = max(v, 10)     # 1.10: CONV2D's variants DW_C8, DIRECT and POINTWISE
    if any(op.kind == "conv2d" and op.variant == K.EP_CONV2D_VARIANT_POINTWISE
           and (tuple(op.params["kernel"]) != (1, 1) or tuple(op.params["stride"]) != (1, 1) or any(op.params["pads"]))
           for op in graph.ops):
        v = max(v, 11)     # 1.11: POINTWISE on any kernel, stride and pads (a 1.10 reader: EP_ERR_PLAN_PARAMS)
    if any(t.layout != K.EP_LAYOUT_PLAIN for t in graph.tensors):
        v = max(v, 12)     # 1.12: tensor layouts (C8), REORDER and CONV2D's BLOCKED variants
    if any((op.kind == "resize" and op.variant == K.EP_RESIZE_VARIANT_C8)
           or (op.kind == "binary" and op.outputs[0].layout == K.EP_LAYOUT_C8
               and any(tuple(t.shape) != tuple(op.outputs[0].shape) for t in op.inputs)) for op in graph.ops):
        v = max(v, 13)     # 1.13: RESIZE's variant C8, BINARY broadcasting over a C8 output
    if any(op.kind == "conv2d" and op.variant in (K.EP_CONV2D_VARIANT_BLOCKED_PW, K.EP_CONV2D_VARIANT_BLOCKED_CONV)
           and np.dtype(op.inputs[1].dtype).name in ("float16", "bfloat16") for op in graph.ops):
        v = max(v, 14)     # 1.14: 16-bit weights on BLOCKED_PW and BLOCKED_CONV
    if any(t.layout == K.EP_LAYOUT_NHWC for t in graph.tensors):
        v = max(v, 14)     # 1.14: NHWC stems
    if any(t.is_state and t.fill for t in graph.tensors):
        v = max(v, 14)     # 1.14: a state's reset byte
    if any(op.kind == "pad" and op.inputs[0].layout == K.EP_LAYOUT_C8 for op in graph.ops):
        v = max(v, 14)     # 1.14: PAD on C8
    if any(op.kind == "conv2d" and int(op.params.get("act", 0)) == K.EP_CONV_ACT_PRELU for op in graph.ops):
        v = max(v, 14)     # 1.14: CONV2D's PReLU epilogue
    if any(op.kind == "conv2d" and op.variant == K.EP_CONV2D_VARIANT_WINOGRAD_1D for op in graph.ops):
        v = max(v, 15)     # 1.15: CONV2D's variant WINOGRAD_1D
    if any(op.kind == "gemm" and op.variant == K.EP_GEMM_VARIANT_ROWS
           and np.dtype(op.inputs[1].dtype).name in ("float16", "bfloat16") for op in graph.ops):
        v = max(v, 16)     # 1.16: 16-bit weights on GEMM ROWS
    if any(op.kind == "if" and int(op.params.get("fail", 0)) for op in graph.ops):
        v = max(v, 3)      # 1.3: IF as a run-time bound check
    if any(op.kind in ("conv2d", "gemm", "invres") and any(
            t is not None and t.data is not None and np.dtype(t.dtype).name in ("float16", "bfloat16")
            for t in op.inputs) for op in graph.ops):
        v = max(v, 7)      # 1.7: 16-bit packed weights (plan_format.h "16-bit weights")
    if any(op.kind == "pad" and int(op.params.get("mode", 0)) & ~K.EP_PAD_MODE_MASK for op in graph.ops):
        v = max(v, 8)      # 1.8: PAD to a multiple (a pad that follows a variable length)
    if any(op.kind == "cumsum" and int(op.params.get("prod", 0)) for op in graph.ops):
        v = max(v, 2)      # 1.2: CUMSUM's product (a 1.1 reader ignores the field it was)
    return v


_FORMATS_1_2 = ("float16", "bfloat16", "float64")


def write_plan(graph: Graph, mem: MemoryPlan, *, required_features: int = 0, meta: dict | None = None) -> bytes:
    names = _Names()
    # tensors referenced by ops or graph I/O, in first-use order
    tensors: list = []
    index: dict = {}

    def tid(t: Tensor | None) -> int:
        if t is None:
            return K.EP_NO_TENSOR
        if t not in index:
            index[t] = len(tensors)
            tensors.append(t)
        return index[t]

    for t in graph.inputs:
        tid(t)
    opio: list = []
    op_recs = bytearray()
    params = bytearray()
    for i, op in enumerate(graph.ops):
        first = len(opio)
        opio += [tid(t) for t in op.inputs] + [tid(t) for t in op.outputs]
        try:
            p = pack_params(op.kind, op.params)
            _pad(params, 8)
            p_off = len(params)
            params += p
            s_off, s_size = mem.scratch.get(i, (0, 0))
            op_recs += _record("ep_op_rec", dict(
                opcode=getattr(K, OPCODES[op.kind][0]), variant=op.variant, flags=0,
                n_in=len(op.inputs), n_out=len(op.outputs), io_first=first,
                params_offset=p_off, params_size=len(p), name=names.add(op.name),
                scratch_offset=s_off, scratch_size=s_size))
        except FieldError as e:
            raise CompileError([Problem(op.name or op.kind, op.kind, f"does not fit the plan: {e}")]) from None
    for t in graph.outputs:
        tid(t)

    consts = bytearray()
    const_off: dict = {}
    same_bytes: dict = {}   # (size, digest) -> CONST offset
    tensor_recs = bytearray()
    for t in tensors:
        s = t.storage()
        if s.is_const:
            if s not in const_off:
                data = np.ascontiguousarray(s.data, dtype=s.dtype).tobytes()
                key = (len(data), hashlib.blake2b(data, digest_size=16).digest())
                at = same_bytes.get(key)
                if at is None or consts[at:at + len(data)] != data:   # equal bytes are stored once
                    _pad(consts, SEC_ALIGN)
                    at = same_bytes[key] = len(consts)
                    consts += data
                const_off[s] = at
            storage, offset = K.EP_STORAGE_CONST, const_off[s]
        else:
            storage, offset = K.EP_STORAGE_ARENA, mem.offsets.get(s, 0)
        shape = [int(d) for d in t.shape]
        if len(shape) > K.EP_MAX_RANK or np.dtype(t.dtype) not in DTYPES:
            raise CompileError([Problem(None, None, f"tensor '{t.name}' ({np.dtype(t.dtype).name}, rank {len(shape)}) "
                                                    f"cannot be stored in a plan")])
        flags = ((K.EP_TENSOR_FLAG_INPUT if t.is_input else 0) | (K.EP_TENSOR_FLAG_OUTPUT if t.is_output else 0)
                 | (K.EP_TENSOR_FLAG_STATE if t.is_state else 0))
        sym = [int(k) for k in t.dim_sym] if t.dim_sym else [0] * len(shape)
        try:
            tensor_recs += _record("ep_tensor_rec", dict(
                dtype=DTYPES[np.dtype(t.dtype)], storage=storage, rank=len(shape), flags=flags,
                name=names.add(t.name), offset=offset, nbytes=t.nbytes,
                dims=shape + [0] * (K.EP_MAX_RANK - len(shape)), dim_sym=sym + [0] * (K.EP_MAX_RANK - len(sym)),
                quant=K.EP_NO_QUANT, layout=int(t.layout), fill=int(t.fill) if t.is_state else 0))
        except FieldError as e:
            raise CompileError([Problem(None, None, f"tensor '{t.name}' does not fit the plan: {e}")]) from None

    io = bytearray()
    for t in graph.inputs:
        io += _record("ep_io_rec", dict(tensor=index[t], kind=K.EP_IO_INPUT))
    for t in graph.outputs:
        io += _record("ep_io_rec", dict(tensor=index[t], kind=K.EP_IO_OUTPUT))

    sym_recs = bytearray()
    for y in graph.syms:
        sym_recs += _record("ep_sym_rec", dict(
            name=names.add(y.name), kind=y.kind, src=y.src, min=y.lo, max=y.hi, mul=y.mul, add=y.add, div=y.div,
            step=getattr(y, "step", 0), src2=getattr(y, "src2", 0)))
    meta_blob = json.dumps(meta or {}, sort_keys=True).encode()
    sections = [
        (K.EP_SECTION_TENSORS, True, bytes(tensor_recs), len(tensors), ffi.sizeof("ep_tensor_rec")),
        (K.EP_SECTION_OPS, True, bytes(op_recs), len(graph.ops), ffi.sizeof("ep_op_rec")),
        (K.EP_SECTION_OPIO, True, np.asarray(opio, dtype="<u4").tobytes(), len(opio), 4),
        (K.EP_SECTION_PARAMS, True, bytes(params), 0, 0),
        (K.EP_SECTION_IO, True, bytes(io), len(graph.inputs) + len(graph.outputs), ffi.sizeof("ep_io_rec")),
        (K.EP_SECTION_NAMES, True, bytes(names.blob), 0, 0),
        (K.EP_SECTION_META, False, meta_blob, 0, 0),
    ] + ([(K.EP_SECTION_SYMS, True, bytes(sym_recs), len(graph.syms), ffi.sizeof("ep_sym_rec"))] if graph.syms else []) + [
        (K.EP_SECTION_CONST, True, bytes(consts), 0, 0),
    ]
    hdr_size = ffi.sizeof("ep_plan_header")
    table_off = hdr_size
    out = bytearray(hdr_size + len(sections) * ffi.sizeof("ep_section"))
    _pad(out, SEC_ALIGN)
    table = bytearray()
    for kind, critical, blob, count, rsize in sections:
        _pad(out, SEC_ALIGN)
        table += _record("ep_section", dict(
            kind=kind, flags=K.EP_SECTION_FLAG_CRITICAL if critical else 0, offset=len(out),
            size=len(blob), count=count, record_size=rsize))
        out += blob
    _pad(out, 8)
    out[table_off:table_off + len(table)] = table
    header = _record("ep_plan_header", dict(
        magic=K.EP_PLAN_MAGIC, version_major=K.EP_PLAN_VERSION_MAJOR, version_minor=_minor_version(graph),
        header_size=hdr_size, crc32c=0, file_size=len(out), section_table_offset=table_off,
        section_count=len(sections), flags=0, arena_size=mem.arena_bytes, required_features=required_features))
    out[:hdr_size] = header
    crc = crc32c(bytes(out[:12]) + b"\0\0\0\0" + bytes(out[16:]))
    out[12:16] = int(crc).to_bytes(4, "little")
    return bytes(out)


def _crc_table():
    t = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        t = np.where(t & 1, (t >> 1) ^ np.uint32(0x82F63B78), t >> 1).astype(np.uint32)
    return [int(x) for x in t]


_TABLE = _crc_table()


def crc32c(data: bytes) -> int:
    """CRC-32C; uses the runtime library's when loaded (fast), else a table in Python."""
    from ..runtime import load_library
    try:
        lib = load_library()
    except OSError:
        lib = None
    if lib is not None:
        return int(lib.ep_crc32c(ffi.from_buffer(data), len(data)))
    crc = 0xFFFFFFFF
    tbl = _TABLE
    for b in data:
        crc = tbl[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
