"""Writes small TFLite flatbuffers for tests with the `tflite` package's generated builder functions
(flatc's Python output: Start / AddField / End per table), without TensorFlow.

    b = Builder()
    x = b.tensor("x", (1, 8, 8, 3))
    w = b.tensor("w", (4, 3, 3, 3), data=np.ones((4, 3, 3, 3), np.float32))
    y = b.tensor("y", (1, 8, 8, 4))
    b.op("CONV_2D", [x, w, -1], [y], "Conv2DOptions", Padding=0, StrideW=1, StrideH=1)
    data = b.finish([x], [y])

Options are given by table name and field values (lists become vectors); quantisation as
quant=(scales, zero_points, axis)."""
from __future__ import annotations

import importlib

import flatbuffers
import numpy as np
from tflite.utils import BUILTIN_OPCODE2NAME

CODES = {v: k for k, v in BUILTIN_OPCODE2NAME.items()}
TYPES = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.int32): 2, np.dtype(np.uint8): 3,
         np.dtype(np.int64): 4, np.dtype(np.bool_): 6, np.dtype(np.int16): 7, np.dtype(np.int8): 9}


def _mod(name):
    return importlib.import_module("tflite." + name)


def _options_enum(name: str):
    for enum in ("BuiltinOptions", "BuiltinOptions2"):
        cls = getattr(_mod(enum), enum)
        if hasattr(cls, name):
            return enum, getattr(cls, name)
    raise KeyError(name)


class Builder:
    def __init__(self):
        self.tensors = []      # (name, shape, type, buffer index, quant)
        self.buffers = [b""]   # buffer 0: empty
        self.ops = []          # (code, custom, inputs, outputs, options name, fields, custom options)

    def tensor(self, name, shape, dtype=np.float32, data=None, quant=None) -> int:
        buf = 0
        if data is not None:
            arr = np.ascontiguousarray(np.asarray(data, dtype))
            self.buffers.append(arr.astype(arr.dtype.newbyteorder("<")).tobytes())
            buf = len(self.buffers) - 1
        self.tensors.append((name, tuple(int(d) for d in shape), TYPES[np.dtype(dtype)], buf, quant))
        return len(self.tensors) - 1

    def const(self, name, data, dtype=None, quant=None) -> int:
        arr = np.asarray(data, dtype)
        return self.tensor(name, arr.shape, arr.dtype, arr, quant)

    def op(self, name, inputs, outputs, options=None, custom=None, custom_options=b"", **fields):
        self.ops.append((CODES[name] if custom is None else 32, custom, list(inputs), list(outputs), options,
                         fields, bytes(custom_options)))

    # ---- serialisation ------------------------------------------------------------------------------
    def _ivec(self, b, values, start, prepend):
        start(b, len(values))
        for v in reversed(list(values)):
            prepend(v)
        return b.EndVector()

    def _options(self, b, name, fields):
        m = _mod(name)
        vecs = {}
        for k, v in fields.items():
            if isinstance(v, (list, tuple, np.ndarray)):
                vecs[k] = self._ivec(b, [int(x) for x in v], getattr(m, f"Start{k}Vector"), b.PrependInt32)
        m.Start(b)
        for k, v in fields.items():
            getattr(m, f"Add{k}")(b, vecs[k] if k in vecs else v)
        return m.End(b)

    def finish(self, inputs, outputs) -> bytes:
        T = {n: _mod(n) for n in ("Buffer", "Tensor", "QuantizationParameters", "Operator", "OperatorCode",
                                   "SubGraph", "Model")}
        b = flatbuffers.Builder(1 << 16)
        buf_offs = []
        for data in self.buffers:
            vec = b.CreateNumpyVector(np.frombuffer(data, np.uint8)) if data else None
            T["Buffer"].Start(b)
            if vec is not None:
                T["Buffer"].AddData(b, vec)
            buf_offs.append(T["Buffer"].End(b))
        t_offs = []
        for name, shape, ttype, buf, quant in self.tensors:
            nm = b.CreateString(name)
            shp = self._ivec(b, shape, T["Tensor"].StartShapeVector, b.PrependInt32)
            q = None
            if quant is not None:
                scales, zps, axis = quant
                Q = T["QuantizationParameters"]
                sc = self._ivec(b, [float(s) for s in np.atleast_1d(scales)], Q.StartScaleVector, b.PrependFloat32)
                zp = self._ivec(b, [int(z) for z in np.atleast_1d(zps)], Q.StartZeroPointVector, b.PrependInt64)
                Q.Start(b), Q.AddScale(b, sc), Q.AddZeroPoint(b, zp), Q.AddQuantizedDimension(b, int(axis))
                q = Q.End(b)
            t = T["Tensor"]
            t.Start(b), t.AddShape(b, shp), t.AddType(b, ttype), t.AddBuffer(b, buf), t.AddName(b, nm)
            if q is not None:
                t.AddQuantization(b, q)
            t_offs.append(t.End(b))
        codes = []
        for code, custom, *_ in self.ops:
            if (code, custom) not in codes:
                codes.append((code, custom))
        o_offs = []
        for code, custom, ins, outs, oname, fields, copts in self.ops:
            opt = self._options(b, oname, fields) if oname else None
            cvec = b.CreateNumpyVector(np.frombuffer(copts, np.uint8)) if copts else None
            O = T["Operator"]
            iv = self._ivec(b, ins, O.StartInputsVector, b.PrependInt32)
            ov = self._ivec(b, outs, O.StartOutputsVector, b.PrependInt32)
            O.Start(b), O.AddOpcodeIndex(b, codes.index((code, custom))), O.AddInputs(b, iv), O.AddOutputs(b, ov)
            if opt is not None:
                enum, value = _options_enum(oname)
                if enum == "BuiltinOptions":
                    O.AddBuiltinOptionsType(b, value), O.AddBuiltinOptions(b, opt)
                else:
                    O.AddBuiltinOptions2Type(b, value), O.AddBuiltinOptions2(b, opt)
            if cvec is not None:
                O.AddCustomOptions(b, cvec)
            o_offs.append(O.End(b))
        c_offs = []
        for code, custom in codes:
            cs = b.CreateString(custom) if custom else None
            C = T["OperatorCode"]
            C.Start(b), C.AddDeprecatedBuiltinCode(b, min(code, 127)), C.AddBuiltinCode(b, code), C.AddVersion(b, 1)
            if cs is not None:
                C.AddCustomCode(b, cs)
            c_offs.append(C.End(b))

        def offsets(start, offs):
            return self._ivec(b, offs, start, b.PrependUOffsetTRelative)
        S, M = T["SubGraph"], T["Model"]
        tv = offsets(S.StartTensorsVector, t_offs)
        ov = offsets(S.StartOperatorsVector, o_offs)
        iv = self._ivec(b, inputs, S.StartInputsVector, b.PrependInt32)
        outv = self._ivec(b, outputs, S.StartOutputsVector, b.PrependInt32)
        sname = b.CreateString("main")
        S.Start(b), S.AddTensors(b, tv), S.AddInputs(b, iv), S.AddOutputs(b, outv), S.AddOperators(b, ov)
        S.AddName(b, sname)
        sg = S.End(b)
        cv = offsets(M.StartOperatorCodesVector, c_offs)
        sv = offsets(M.StartSubgraphsVector, [sg])
        bv = offsets(M.StartBuffersVector, buf_offs)
        desc = b.CreateString("edgeplan test")
        M.Start(b), M.AddVersion(b, 3), M.AddOperatorCodes(b, cv), M.AddSubgraphs(b, sv)
        M.AddDescription(b, desc), M.AddBuffers(b, bv)
        b.Finish(M.End(b), file_identifier=b"TFL3")
        return bytes(b.Output())
