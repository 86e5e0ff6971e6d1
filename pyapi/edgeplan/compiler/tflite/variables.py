"""TFLite resource variables -> the plan's streaming state.

A streaming model (microWakeWord's) keeps its ring buffers in resource variables: VAR_HANDLE names a
variable (container, shared_name), READ_VARIABLE reads it, ASSIGN_VARIABLE writes it, and CALL_ONCE runs an
init subgraph (VAR_HANDLE + ASSIGN_VARIABLE of constants) before the first invocation. Each variable the
main subgraph both reads and writes becomes one state pair of the plan: a float32 graph input (the state,
kept in the arena across runs, EP_TENSOR_FLAG_STATE) and a graph output (its value after the run, copied
back into the state by compiler/dynamic.apply_state and hidden from the plan's outputs).

The runtime zeroes state at open and at ep_reset. The state holds the variable's real value minus its
initial value, so zeroed state is the value CALL_ONCE gives it: READ_VARIABLE adds the initial value back,
the written value has it subtracted (neither node is emitted when the initial value is all zeros, as it is
in microWakeWord's files, whose int8 state starts at the zero point). An int8 variable of one scale and
zero point that starts at zero is held as its codes: an int8 state whose reset byte is the zero point (the
plan's ep_tensor_rec.fill), read and written with no QuantizeLinear or DequantizeLinear where the reading
and writing tensors share its parameters. Another quantised variable is held as float (its codes
dequantised) and quantised again where it is read: a code survives the round trip exactly. A variable with
no CALL_ONCE initialiser starts at zero; one the main subgraph reads and never writes is the constant its
initialiser gives it.

A rank-4 variable is held channels-first (TFLite's [N,H,W,C] as [N,C,H,W]), the layout the convolutions
that read a streaming buffer work in: the concatenation of the state with the new frame, the slice written
back and the convolution then need no transposes."""
from __future__ import annotations

import numpy as np

from .convert import Converter, Unsupported, ident
from .reader import Op


def _perm(shape) -> tuple:
    """The layout a variable of this TFLite shape is held in (the state input's dims: shape in this order)."""
    return (0, 3, 1, 2) if len(shape) == 4 else ident(len(shape))


def _key(cv: Converter, op: Op) -> tuple:
    o = op.options
    container = o.Container().decode("utf-8", "replace") if o is not None and o.Container() else ""
    shared = o.SharedName().decode("utf-8", "replace") if o is not None and o.SharedName() else ""
    return container, shared or cv.t(op.outputs[0]).name


def _var(cv: Converter, res: int) -> tuple:
    key = cv.var_of.get(res)
    if key is None:
        raise Unsupported(f"resource tensor '{cv.t(res).name}' does not come from a VAR_HANDLE of this subgraph")
    return key


def var_handle(cv: Converter, op: Op):
    cv.var_of[op.outputs[0]] = _key(cv, op)


def call_once(cv: Converter, op: Op):
    """Runs the init subgraph at import: it may only assign constants to variables (TensorFlow's
    initialisers, as the converter writes them)."""
    k = getattr(op.options, "InitSubgraphIndex", lambda: -1)()
    subs = cv.g.subgraphs
    if not 0 < k < len(subs):
        raise Unsupported(f"CALL_ONCE names init subgraph {k}, which the model does not have")
    sg = subs[k]
    handles = {}
    for o in sg.ops:
        if o.name == "VAR_HANDLE" and o.outputs:
            handles[o.outputs[0]] = _key(cv, o) if o.options is not None else ("", sg.tensors[o.outputs[0]].name)
        elif o.name == "ASSIGN_VARIABLE" and len(o.inputs) == 2 and o.inputs[0] in handles:
            t = sg.tensors[o.inputs[1]]
            if t.data is None:
                raise Unsupported(f"CALL_ONCE subgraph '{sg.name}' assigns '{t.name}', a value computed at run "
                                  "time: only constant initial values are supported")
            v = t.data.astype(np.float32)
            if t.quant is not None and t.type in (3, 9, 7):
                if t.quant.per_channel:
                    raise Unsupported(f"CALL_ONCE subgraph '{sg.name}': per-channel initial value '{t.name}'")
                v = (v - np.float32(t.quant.zero_point[0])) * np.float32(t.quant.scale[0])
            cv.var_init[handles[o.inputs[0]]] = v
        else:
            raise Unsupported(f"CALL_ONCE subgraph '{sg.name}' has op {o.name}: only VAR_HANDLE and "
                              "ASSIGN_VARIABLE of constants are supported in an init subgraph")


def _state_input(cv: Converter, key: tuple, out: int) -> str:
    """The ONNX name of the variable's value as the run starts: the state input, its initial value added
    (float), or its codes in tensor `out`'s parameters (an int8 state)."""
    from onnx import TensorProto, helper
    t = cv.t(out)
    shape = tuple(cv.shape(out))
    if not (t.type == 0 or cv.quantized(out)):
        raise Unsupported(f"variable '{key[1]}' holds {t.type_name}: state is float32 or quantised codes")
    init = cv.var_init.get(key)
    if init is not None and init.size != int(np.prod(shape)):
        raise Unsupported(f"variable '{key[1]}' is initialised with {init.size} values, read as {t.name}{list(shape)}")
    name = cv.uname(key[1])
    codes = (cv.quantized(out) and t.type == 9 and t.quant.scale.size == 1 and out not in cv.consts
             and (init is None or not np.any(init != 0)))
    perm = _perm(shape)
    cv.state_inputs.append(helper.make_tensor_value_info(name, TensorProto.INT8 if codes else TensorProto.FLOAT,
                                                         [shape[a] for a in perm]))
    cv.var_state[key] = (name, shape, out if codes else None)
    if codes:   # reset to the zero point: real 0, the value a variable without an initialiser starts at
        cv.state_fill[name] = int(t.quant.zero_point[0]) & 0xFF
        return name
    if init is not None and np.any(init != 0):
        return cv.node("Add", [name, cv.init(np.transpose(init.reshape(shape), perm))], base=name + "/value")
    return name


def read_variable(cv: Converter, op: Op):
    key, out = _var(cv, op.inputs[0]), op.outputs[0]
    if key not in cv.var_written:       # never written: the initial value (or zeros) as a constant
        init = cv.var_init.get(key)
        v = init.reshape(cv.shape(out)) if init is not None else np.zeros(cv.shape(out), np.float32)
        if cv.quantized(out):
            q = cv.t(out).quant
            v = np.clip(np.round(v / q.scale[0]) + q.zero_point[0], *_range(cv.t(out).dtype))
        cv.put_const(out, v.astype(cv.t(out).dtype))
        return
    cur = cv.var_cur.get(key)
    if cur is None:
        cur = cv.var_cur[key] = _state_input(cv, key, out)
    _, shape, q = cv.var_state[key]
    perm = _perm(shape)
    if q is None:
        cv.put(out, cur, perm)
    elif cv.same_q(out, q):        # the state's codes as they are
        cv.put(out, cur, perm, is_float=False)
    else:
        cv.put(out, cv.deq(cur, q, perm), perm)


def _range(dt):
    info = np.iinfo(dt)
    return info.min, info.max


def assign_variable(cv: Converter, op: Op):
    key, v = _var(cv, op.inputs[0]), op.inputs[1]
    if key not in cv.var_state:         # written before any read: the state still exists (read next run)
        cv.var_cur[key] = _state_input(cv, key, v)
    name, shape, q = cv.var_state[key]
    if tuple(cv.shape(v)) != shape:
        raise Unsupported(f"variable '{key[1]}' is read as {list(shape)} and assigned {list(cv.shape(v))}")
    p = _perm(shape)
    if q is None:
        cv.var_cur[key] = cv.fl(v, p)
    elif cv.same_q(v, q):
        cv.var_cur[key] = cv.raw(v, p)
    else:                              # requantised to the state's parameters
        cv.var_cur[key] = cv.quant(cv.fl(v, p), q, p)


def finish(cv: Converter) -> list:
    """The state outputs (value infos) after the last op; fills cv.state {input: output}."""
    from onnx import TensorProto, helper
    outs = []
    for key, (name, shape, q) in cv.var_state.items():
        val = cv.var_cur[key]
        init = cv.var_init.get(key)
        if q is None and init is not None and np.any(init != 0):
            val = cv.node("Sub", [val, cv.init(np.transpose(init.reshape(shape), _perm(shape)))], base=name + "/delta")
        out = cv.uname(name + "/next")
        cv.nodes.append(helper.make_node("Identity", [val], [out], name=cv.uname(out)))
        outs.append(helper.make_tensor_value_info(out, TensorProto.FLOAT if q is None else TensorProto.INT8,
                                                  [shape[a] for a in _perm(shape)]))
        cv.state[name] = out
    return outs


def prescan(cv: Converter) -> None:
    """The variables the main subgraph writes (READ_VARIABLE of the others folds to their initial value)."""
    handles = {}
    for o in cv.g.ops:
        if o.name == "VAR_HANDLE" and o.outputs:
            handles[o.outputs[0]] = _key(cv, o)
        elif o.name == "ASSIGN_VARIABLE" and o.inputs and o.inputs[0] in handles:
            cv.var_written.add(handles[o.inputs[0]])


HANDLERS = {"VAR_HANDLE": var_handle, "READ_VARIABLE": read_variable, "ASSIGN_VARIABLE": assign_variable,
            "CALL_ONCE": call_once}
