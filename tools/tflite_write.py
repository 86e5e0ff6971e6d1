"""Writes a models.qtwins QNet as an int8 TFLite flatbuffer (schema version 3), without TensorFlow: the
flatc-generated TFLite schema classes of the ``tflite`` package plus ``flatbuffers``. A dev-only tool for bench/vela_check.py; edgeplan itself does not need it.

    from tools.tflite_write import write_tflite
    write_tflite(qtwins.build("mobilenetv2"), "mobilenetv2_int8.tflite")

Operators: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED (int8 weights per output channel, int32 bias at
s_in * s_w), ADD, MAX_POOL_2D, AVERAGE_POOL_2D, RESHAPE (with its int32 shape tensor), SOFTMAX; the fused
activations (RELU, RELU6) in the options, as TFLite's converter writes them. Tensors are NHWC."""
from __future__ import annotations

import numpy as np

import importlib

import flatbuffers

# the flatc-generated schema modules of the `tflite` package (its __init__ re-exports the classes under the
# module names, so the modules are imported by path)
(AF, AddOptions, Buffer, BO, BOpt, Conv2DOptions, DepthwiseConv2DOptions, FullyConnectedOptions, Model, Operator,
 OperatorCode, Padding, Pool2DOptions, QP, ReshapeOptions, SoftmaxOptions, SubGraph, Tensor, TensorType) = (
    importlib.import_module("tflite." + n) for n in (
        "ActivationFunctionType", "AddOptions", "Buffer", "BuiltinOperator", "BuiltinOptions", "Conv2DOptions",
        "DepthwiseConv2DOptions", "FullyConnectedOptions", "Model", "Operator", "OperatorCode", "Padding",
        "Pool2DOptions", "QuantizationParameters", "ReshapeOptions", "SoftmaxOptions", "SubGraph", "Tensor",
        "TensorType"))

_ACT = {None: AF.ActivationFunctionType.NONE, "relu": AF.ActivationFunctionType.RELU,
        "relu6": AF.ActivationFunctionType.RELU6}
_PAD = {"SAME": Padding.Padding.SAME, "VALID": Padding.Padding.VALID}
_OPS = {"conv": BO.BuiltinOperator.CONV_2D, "dwconv": BO.BuiltinOperator.DEPTHWISE_CONV_2D,
        "fc": BO.BuiltinOperator.FULLY_CONNECTED, "add": BO.BuiltinOperator.ADD,
        "maxpool": BO.BuiltinOperator.MAX_POOL_2D, "avgpool": BO.BuiltinOperator.AVERAGE_POOL_2D,
        "reshape": BO.BuiltinOperator.RESHAPE, "softmax": BO.BuiltinOperator.SOFTMAX}


def _vec(b, start, values, prepend):
    start(b, len(values))
    for v in reversed(list(values)):
        prepend(v)
    return b.EndVector()


def _ivec(b, start, values):
    return _vec(b, start, [int(v) for v in values], b.PrependInt32)


def _options(b, ly, net):
    """(BuiltinOptions type, offset) of one layer."""
    if ly.kind == "conv":
        o = Conv2DOptions
        o.Start(b), o.AddPadding(b, _PAD[ly.padding]), o.AddStrideW(b, ly.stride), o.AddStrideH(b, ly.stride)
        o.AddFusedActivationFunction(b, _ACT[ly.act]), o.AddDilationWFactor(b, 1), o.AddDilationHFactor(b, 1)
        return BOpt.BuiltinOptions.Conv2DOptions, o.End(b)
    if ly.kind == "dwconv":
        o = DepthwiseConv2DOptions
        o.Start(b), o.AddPadding(b, _PAD[ly.padding]), o.AddStrideW(b, ly.stride), o.AddStrideH(b, ly.stride)
        o.AddDepthMultiplier(b, 1), o.AddFusedActivationFunction(b, _ACT[ly.act])
        o.AddDilationWFactor(b, 1), o.AddDilationHFactor(b, 1)
        return BOpt.BuiltinOptions.DepthwiseConv2DOptions, o.End(b)
    if ly.kind == "fc":
        o = FullyConnectedOptions
        o.Start(b), o.AddFusedActivationFunction(b, _ACT[ly.act])
        return BOpt.BuiltinOptions.FullyConnectedOptions, o.End(b)
    if ly.kind == "add":
        o = AddOptions
        o.Start(b), o.AddFusedActivationFunction(b, _ACT[ly.act])
        return BOpt.BuiltinOptions.AddOptions, o.End(b)
    if ly.kind in ("maxpool", "avgpool"):
        o = Pool2DOptions
        o.Start(b), o.AddPadding(b, _PAD[ly.padding]), o.AddStrideW(b, ly.stride), o.AddStrideH(b, ly.stride)
        o.AddFilterWidth(b, ly.kernel), o.AddFilterHeight(b, ly.kernel)
        o.AddFusedActivationFunction(b, _ACT[ly.act])
        return BOpt.BuiltinOptions.Pool2DOptions, o.End(b)
    if ly.kind == "reshape":
        shape = _ivec(b, ReshapeOptions.StartNewShapeVector, net.tensors[ly.output].shape)
        o = ReshapeOptions
        o.Start(b), o.AddNewShape(b, shape)
        return BOpt.BuiltinOptions.ReshapeOptions, o.End(b)
    if ly.kind == "softmax":
        o = SoftmaxOptions
        o.Start(b), o.AddBeta(b, 1.0)
        return BOpt.BuiltinOptions.SoftmaxOptions, o.End(b)
    raise ValueError(f"unknown layer kind {ly.kind}")


def tflite_bytes(net) -> bytes:
    """The QNet as TFLite flatbuffer bytes."""
    b = flatbuffers.Builder(1 << 20)
    buffers = [b""]                            # buffer 0: the empty buffer of every run-time tensor
    tensors = []                               # (name, shape, type, buffer, scales, zero points, axis)
    index = {}

    def tensor(name, shape, ttype, data=None, scales=(), zps=(), axis=0):
        buf = 0
        if data is not None:
            buffers.append(np.ascontiguousarray(data).tobytes())
            buf = len(buffers) - 1
        tensors.append((name, tuple(int(d) for d in shape), ttype, buf, list(scales), list(zps), axis))
        index[name] = len(tensors) - 1
        return index[name]

    for t in net.tensors.values():
        tensor(t.name, t.shape, TensorType.TensorType.INT8, scales=[t.scale], zps=[t.zero_point])
    ops = []                                   # (opcode, inputs, outputs, layer)
    for ly in net.layers:
        ins = [index[i] for i in ly.inputs]
        if ly.weights is not None:
            s_in = net.tensors[ly.inputs[0]].scale
            axis = 3 if ly.kind == "dwconv" else 0
            ins.append(tensor(ly.name + "/weights", ly.weights.shape, TensorType.TensorType.INT8, ly.weights,
                              ly.w_scale, [0] * ly.w_scale.size, axis))
            ins.append(tensor(ly.name + "/bias", ly.bias.shape, TensorType.TensorType.INT32,
                              ly.bias.astype("<i4"), (np.float64(s_in) * ly.w_scale.astype(np.float64)),
                              [0] * ly.bias.size, 0))
        if ly.kind == "reshape":
            shp = np.array(net.tensors[ly.output].shape, "<i4")
            ins.append(tensor(ly.name + "/shape", shp.shape, TensorType.TensorType.INT32, shp))
        ops.append((_OPS[ly.kind], ins, [index[ly.output]], ly))

    buf_offs = []
    for data in buffers:
        if data:
            vec = b.CreateNumpyVector(np.frombuffer(data, np.uint8))
            Buffer.Start(b), Buffer.AddData(b, vec)
        else:
            Buffer.Start(b)
        buf_offs.append(Buffer.End(b))

    tensor_offs = []
    for name, shape, ttype, buf, scales, zps, axis in tensors:
        nm = b.CreateString(name)
        shp = _ivec(b, Tensor.StartShapeVector, shape)
        q = None
        if scales:
            sc = _vec(b, QP.StartScaleVector, [float(s) for s in scales], b.PrependFloat32)
            zp = _vec(b, QP.StartZeroPointVector, [int(z) for z in zps], b.PrependInt64)
            QP.Start(b), QP.AddScale(b, sc), QP.AddZeroPoint(b, zp), QP.AddQuantizedDimension(b, axis)
            q = QP.End(b)
        Tensor.Start(b), Tensor.AddShape(b, shp), Tensor.AddType(b, ttype), Tensor.AddBuffer(b, buf)
        Tensor.AddName(b, nm)
        if q is not None:
            Tensor.AddQuantization(b, q)
        tensor_offs.append(Tensor.End(b))

    codes = sorted({code for code, *_ in ops})
    op_offs = []
    for code, ins, outs, ly in ops:
        otype, opt = _options(b, ly, net)
        iv, ov = _ivec(b, Operator.StartInputsVector, ins), _ivec(b, Operator.StartOutputsVector, outs)
        Operator.Start(b), Operator.AddOpcodeIndex(b, codes.index(code)), Operator.AddInputs(b, iv)
        Operator.AddOutputs(b, ov), Operator.AddBuiltinOptionsType(b, otype), Operator.AddBuiltinOptions(b, opt)
        op_offs.append(Operator.End(b))

    code_offs = []
    for code in codes:
        OperatorCode.Start(b), OperatorCode.AddDeprecatedBuiltinCode(b, min(code, 127))
        OperatorCode.AddBuiltinCode(b, code), OperatorCode.AddVersion(b, 1)
        code_offs.append(OperatorCode.End(b))

    def offsets(start, offs):
        return _vec(b, start, offs, b.PrependUOffsetTRelative)

    sg_name = b.CreateString(net.name)
    t_vec = offsets(SubGraph.StartTensorsVector, tensor_offs)
    o_vec = offsets(SubGraph.StartOperatorsVector, op_offs)
    i_vec = _ivec(b, SubGraph.StartInputsVector, [index[net.input]])
    out_vec = _ivec(b, SubGraph.StartOutputsVector, [index[net.output]])
    SubGraph.Start(b), SubGraph.AddTensors(b, t_vec), SubGraph.AddInputs(b, i_vec)
    SubGraph.AddOutputs(b, out_vec), SubGraph.AddOperators(b, o_vec), SubGraph.AddName(b, sg_name)
    sg = SubGraph.End(b)

    desc = b.CreateString(f"edgeplan models.qtwins {net.name} int8")
    c_vec = offsets(Model.StartOperatorCodesVector, code_offs)
    s_vec = offsets(Model.StartSubgraphsVector, [sg])
    b_vec = offsets(Model.StartBuffersVector, buf_offs)
    Model.Start(b), Model.AddVersion(b, 3), Model.AddOperatorCodes(b, c_vec), Model.AddSubgraphs(b, s_vec)
    Model.AddDescription(b, desc), Model.AddBuffers(b, b_vec)
    b.Finish(Model.End(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def write_tflite(net, path) -> int:
    data = tflite_bytes(net)
    with open(path, "wb") as f:
        f.write(data)
    return len(data)
