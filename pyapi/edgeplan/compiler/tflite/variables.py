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
in microWakeWord's files, whose int8 state starts at the zero point). A quantised variable is held as
float (its codes dequantised) and quantised again where it is read: a code survives the round trip
exactly. A variable with no CALL_ONCE initialiser starts at zero; one the main subgraph reads and never
writes is the constant its initialiser gives it."""
from __future__ import annotations

import numpy as np

from .convert import Converter, Unsupported, ident
from .reader import Op


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
    """The ONNX name of the variable's value as the run starts: the state input, its initial value added."""
    from onnx import helper
    t = cv.t(out)
    shape = tuple(cv.shape(out))
    if not (t.type == 0 or cv.quantized(out)):
        raise Unsupported(f"variable '{key[1]}' holds {t.type_name}: state is float32 or quantised codes")
    name = cv.uname(key[1])
    cv.state_inputs.append(helper.make_tensor_value_info(name, 1, list(shape)))
    cv.var_state[key] = (name, shape)
    init = cv.var_init.get(key)
    if init is not None and init.size != int(np.prod(shape)):
        raise Unsupported(f"variable '{key[1]}' is initialised with {init.size} values, read as {t.name}{list(shape)}")
    if init is not None and np.any(init != 0):
        return cv.node("Add", [name, cv.init(init.reshape(shape))], base=name + "/value")
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
    cv.put(out, cur, ident(cv.rank(out)))


def _range(dt):
    info = np.iinfo(dt)
    return info.min, info.max


def assign_variable(cv: Converter, op: Op):
    key, v = _var(cv, op.inputs[0]), op.inputs[1]
    if key not in cv.var_state:         # written before any read: the state still exists (read next run)
        cv.var_cur[key] = _state_input(cv, key, v)
    name, shape = cv.var_state[key]
    if tuple(cv.shape(v)) != shape:
        raise Unsupported(f"variable '{key[1]}' is read as {list(shape)} and assigned {list(cv.shape(v))}")
    cv.var_cur[key] = cv.fl(v, ident(cv.rank(v)))


def finish(cv: Converter) -> list:
    """The state outputs (value infos) after the last op; fills cv.state {input: output}."""
    from onnx import helper
    outs = []
    for key, (name, shape) in cv.var_state.items():
        val = cv.var_cur[key]
        init = cv.var_init.get(key)
        if init is not None and np.any(init != 0):
            val = cv.node("Sub", [val, cv.init(init.reshape(shape))], base=name + "/delta")
        out = cv.uname(name + "/next")
        cv.nodes.append(helper.make_node("Identity", [val], [out], name=cv.uname(out)))
        outs.append(helper.make_tensor_value_info(out, 1, list(shape)))
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
