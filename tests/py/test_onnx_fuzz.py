"""Mutated ONNX models through `edgeplan compile` under a memory cap and a wall-time cap.

120 seeded mutations of four small zoo models (tiny, kws with its variable length and state, mobilenetv2, yolo):
byte flips and truncation of the protobuf, and field-level changes made with the onnx package (graph input dims,
node attributes, initializer raw_data lengths, dtypes and dims, op types and domains, node input names, dropped
nodes, the opset). Each mutant must either compile or make `edgeplan compile` exit non-zero with a short error:
no Python traceback, not killed by the address-space cap (RLIMIT_AS, 2 GiB) nor by the wall-time cap.

The compiles run in child processes of one fork server (a subprocess that imports edgeplan once, then forks
one child per mutant that sets its caps and runs the CLI's main), so that 120 compiles take seconds each, not
an interpreter start each; test_cli_subprocess_caps runs the same check through `python -m edgeplan.cli` for a
few mutants. A failure lists every offending mutant with its stderr; the mutants are kept in the test's tmp dir."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from conftest import zoo

pytestmark = pytest.mark.slow   # ~50 s on 2 shared cores

ROOT = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("EDGEPLAN_ONNX_FUZZ_SEED", "20261206"))   # another seed: more mutants
N_PER_BASE = 30
AS_LIMIT = 2 << 30
WALL_S = 60
MAX_ERROR_LINES = 6   # "edgeplan: cannot compile M:", "cannot compile the model: N problems", up to 4 problems
BASES = {   # name: (builder kwargs, edgeplan compile options)
    "tiny": (("tiny", dict(size=16)), []),
    "kws": (("kws", dict(hidden=16)), ["--dim", "T=1..12", "--state", "h_in=h_out"]),
    "mobilenetv2": (("mobilenetv2", dict(size=32, width=0.25, num_classes=10)), []),
    "yolo": (("yolo", dict(size=64, nc=2, width=0.0625)), []),
}
INTERESTING = [0, 1, -1, 2, 3, 7, 255, 65536, 2 ** 31 - 1, -2 ** 31, 2 ** 40, 2 ** 62]
OP_TYPES = ["Relu", "Conv", "MatMul", "Reshape", "Concat", "Gather", "Softmax", "Transpose", "Add", "Split",
            "Slice", "Resize", "NoSuchOp"]

# The fork server: reads jobs (model, extra args, out dir) as JSON from argv[1], writes results to argv[2].
SERVER = r"""
import json, os, resource, signal, sys, traceback
import edgeplan.cli
jobs = json.load(open(sys.argv[1]))
as_limit, wall = int(sys.argv[3]), int(sys.argv[4])
results = []
for j in jobs:
    out, err = j["out"] + ".stdout", j["out"] + ".stderr"
    pid = os.fork()
    if pid == 0:
        try:
            resource.setrlimit(resource.RLIMIT_AS, (as_limit, as_limit))
            signal.alarm(wall)
            fo, fe = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(fo, 1), os.dup2(fe, 2)
            try:
                rc = edgeplan.cli.main(["compile", j["model"], "-o", j["out"] + ".eplan"] + j["args"])
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
                if not isinstance(e.code, (int, type(None))):
                    print(e.code, file=sys.stderr)
            except BaseException:
                traceback.print_exc()     # what the interpreter prints for an uncaught exception
                rc = 1
            sys.stdout.flush(), sys.stderr.flush()
        finally:
            os._exit(locals().get("rc", 1) or 0)
    _, status = os.waitpid(pid, 0)
    results.append(dict(id=j["id"], rc=os.waitstatus_to_exitcode(status)))
json.dump(results, open(sys.argv[2], "w"))
"""


# ------------------------------------------------------------------------------------------ mutations
def _pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def flip_bytes(m, rng):
    b = bytearray(m.SerializeToString())
    n = int(rng.integers(1, 9))
    for _ in range(n):
        b[int(rng.integers(len(b)))] ^= 1 << int(rng.integers(8))
    return bytes(b), f"{n} bit flips"


def truncate(m, rng):
    b = m.SerializeToString()
    n = int(rng.integers(1, len(b)))
    return b[:n], f"truncated to {n} of {len(b)} bytes"


def input_dims(m, rng):
    vi = _pick(rng, list(m.graph.input) + list(m.graph.output))
    dims = vi.type.tensor_type.shape.dim
    if not dims or rng.integers(5) == 0:   # a rank change
        if dims and rng.integers(2):
            del dims[int(rng.integers(len(dims)))]
            return m, f"{vi.name}: a dim dropped"
        dims.add().dim_value = int(_pick(rng, [1, 3, 2 ** 20]))
        return m, f"{vi.name}: a dim added"
    k = int(rng.integers(len(dims)))
    if rng.integers(4) == 0:
        dims[k].dim_param = _pick(rng, ["N", "T", "", "1x"])
        return m, f"{vi.name}: dim {k} symbolic '{dims[k].dim_param}'"
    dims[k].dim_value = int(_pick(rng, INTERESTING))
    return m, f"{vi.name}: dim {k} = {dims[k].dim_value}"


def attribute(m, rng):
    nodes = [n for n in m.graph.node if n.attribute]
    if not nodes:
        return input_dims(m, rng)
    n = _pick(rng, nodes)
    a = _pick(rng, list(n.attribute))
    what = int(rng.integers(5))
    if what == 0:
        n.attribute.remove(a)
        return m, f"{n.name or n.op_type}: attribute {a.name} removed"
    if what == 1:   # the wrong attribute type
        new = helper.make_attribute(a.name, _pick(rng, [1.5, "x", [1, 2, 3], -7]))
        n.attribute.remove(a)
        n.attribute.append(new)
        return m, f"{n.name or n.op_type}: attribute {a.name} retyped"
    if a.ints and what == 2:   # a list of another length
        if rng.integers(2):
            del a.ints[int(rng.integers(len(a.ints)))]
        else:
            a.ints.append(int(_pick(rng, INTERESTING)))
        return m, f"{n.name or n.op_type}: attribute {a.name} now {list(a.ints)}"
    if a.ints:
        k = int(rng.integers(len(a.ints)))
        a.ints[k] = int(_pick(rng, INTERESTING))
        return m, f"{n.name or n.op_type}: attribute {a.name}[{k}] = {a.ints[k]}"
    if a.type == onnx.AttributeProto.INT:
        a.i = int(_pick(rng, INTERESTING))
        return m, f"{n.name or n.op_type}: attribute {a.name} = {a.i}"
    if a.type == onnx.AttributeProto.FLOAT:
        a.f = float(_pick(rng, [0.0, -1.0, 1e38, float("nan"), float("inf")]))
        return m, f"{n.name or n.op_type}: attribute {a.name} = {a.f}"
    if a.type == onnx.AttributeProto.STRING:
        a.s = _pick(rng, [b"", b"bogus", b"\xff"])
        return m, f"{n.name or n.op_type}: attribute {a.name} = {a.s!r}"
    n.attribute.remove(a)
    return m, f"{n.name or n.op_type}: attribute {a.name} removed"


def initializer(m, rng):
    inits = list(m.graph.initializer)
    if not inits:
        return input_dims(m, rng)
    t = _pick(rng, inits)
    if not t.raw_data:   # values in a typed field: move them to raw_data so lengths can lie
        t.CopyFrom(onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(t), t.name))
    what = int(rng.integers(5))
    if what == 0:
        n = int(rng.integers(len(t.raw_data) + 1))
        t.raw_data = t.raw_data[:n]
        return m, f"initializer {t.name}: raw_data cut to {n} bytes"
    if what == 1:
        t.raw_data = t.raw_data + bytes(int(_pick(rng, [1, 3, 4, 4096])))
        return m, f"initializer {t.name}: raw_data {len(t.raw_data)} bytes"
    if what == 2 and t.dims:
        k = int(rng.integers(len(t.dims)))
        t.dims[k] = int(_pick(rng, INTERESTING))
        return m, f"initializer {t.name}: dim {k} = {t.dims[k]}"
    if what == 3:
        t.data_type = int(_pick(rng, [0, onnx.TensorProto.STRING, onnx.TensorProto.INT8, onnx.TensorProto.DOUBLE,
                                      onnx.TensorProto.COMPLEX64, 99]))
        return m, f"initializer {t.name}: data_type {t.data_type}"
    t.dims.append(int(_pick(rng, [1, 2, 0])))
    return m, f"initializer {t.name}: rank {len(t.dims)}"


def op_type(m, rng):
    n = _pick(rng, list(m.graph.node))
    old = n.op_type
    if rng.integers(6) == 0:
        n.domain = _pick(rng, ["com.example", "ai.onnx.ml", "com.microsoft"])
        return m, f"{n.name or old}: domain {n.domain}"
    n.op_type = _pick(rng, OP_TYPES)
    return m, f"{n.name or old}: op {old} -> {n.op_type}"


def input_name(m, rng):
    nodes = [n for n in m.graph.node if n.input]
    n = _pick(rng, nodes)
    k = int(rng.integers(len(n.input)))
    old = n.input[k]
    what = int(rng.integers(4))
    if what == 0:
        n.input[k] = "no_such_tensor"
    elif what == 1:
        n.input[k] = ""          # an absent optional input, even where the op needs it
    elif what == 2:              # a later node's output: a cycle or a use before definition
        n.input[k] = _pick(rng, [o for x in m.graph.node for o in x.output])
    else:
        n.input.append(_pick(rng, [old, "no_such_tensor"]))
        return m, f"{n.name or n.op_type}: an extra input"
    return m, f"{n.name or n.op_type}: input {k} '{old}' -> '{n.input[k]}'"


def graph_edit(m, rng):
    what = int(rng.integers(3))
    if what == 0:
        k = int(rng.integers(len(m.graph.node)))
        n = m.graph.node[k]
        del m.graph.node[k]
        return m, f"node {n.name or n.op_type} dropped"
    if what == 1:
        m.opset_import[0].version = int(_pick(rng, [1, 6, 99]))
        return m, f"opset {m.opset_import[0].version}"
    n = _pick(rng, list(m.graph.node))
    if n.output:
        n.output[0] = m.graph.input[0].name   # an output that redefines a graph input
    return m, f"{n.name or n.op_type}: output renamed to the graph input"


MUTATIONS = [flip_bytes, truncate, input_dims, attribute, initializer, op_type, input_name, graph_edit]


def mutants(tmp_path: Path):
    """(id, path, extra args, description) for every mutant, written under tmp_path."""
    m = zoo()
    out = []
    rng = np.random.default_rng(SEED)
    for base, ((builder, kw), args) in BASES.items():
        model = m.build(builder, **kw)
        for i in range(N_PER_BASE):
            mut = MUTATIONS[(i + len(out)) % len(MUTATIONS)]
            b, what = mut(copy.deepcopy(model), rng)
            if not isinstance(b, bytes):
                b = b.SerializeToString()
            path = tmp_path / f"{base}-{i:02d}.onnx"
            path.write_bytes(b)
            out.append((f"{base}-{i:02d}", path, args, f"{mut.__name__}: {what}"))
    return out


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "pyapi"),
                                                                     os.environ.get("PYTHONPATH")])))


def check(cid: str, rc: int, err: str, what: str) -> str | None:
    """Why a mutant's outcome is a finding, or None."""
    lines = [x for x in err.splitlines() if x.strip()]
    if "Traceback" in err:
        return f"{cid} ({what}): a Python traceback\n{err[-3000:]}"
    if rc < 0:
        return f"{cid} ({what}): killed by signal {-rc} (the {'wall-time' if -rc == 14 else 'memory'} cap?)\n{err[-1500:]}"
    if rc != 0 and not lines:
        return f"{cid} ({what}): exit {rc} without an error"
    if rc != 0 and len(lines) > MAX_ERROR_LINES:
        return f"{cid} ({what}): an error of {len(lines)} lines\n{err[-1500:]}"
    return None


def test_mutated_onnx_compile_or_refuse(tmp_path):
    ms = mutants(tmp_path)
    jobs = [dict(id=cid, model=str(p), args=args, out=str(tmp_path / cid)) for cid, p, args, _ in ms]
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    r = subprocess.run([sys.executable, "-c", SERVER, str(tmp_path / "jobs.json"), str(tmp_path / "results.json"),
                        str(AS_LIMIT), str(WALL_S)], capture_output=True, text=True, env=_env(), timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    results = {x["id"]: x["rc"] for x in json.loads((tmp_path / "results.json").read_text())}
    findings, compiled = [], 0
    for cid, _, _, what in ms:
        err = (tmp_path / f"{cid}.stderr").read_text(errors="replace")
        compiled += results[cid] == 0
        f = check(cid, results[cid], err, what)
        if f:
            findings.append(f)
    print(f"{len(ms)} mutants: {compiled} compiled, {len(ms) - compiled} refused with an error")
    assert not findings, f"{len(findings)} of {len(ms)} mutants:\n\n" + "\n\n".join(findings)
    # the mutations must not all be refused at the parser: some reach the compiler and compile
    assert 0 < compiled < len(ms), compiled


def test_cli_subprocess_caps(tmp_path):
    """A few mutants through `python -m edgeplan.cli compile` itself, each in its own process under the caps."""
    import resource

    def caps():
        resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))

    for cid, p, args, what in mutants(tmp_path)[::40]:
        r = subprocess.run([sys.executable, "-m", "edgeplan.cli", "compile", str(p), "-o", str(tmp_path / "x.eplan")]
                           + args, capture_output=True, text=True, env=_env(), timeout=WALL_S, preexec_fn=caps)
        f = check(cid, r.returncode, r.stderr, what)
        assert f is None, f


def test_invalid_utf8_name_is_refused():
    """A name that is not UTF-8 (seed 16's tiny-08 flipped a bit of a node's name) reaches the compiler as
    bytes, not str: refused at import, naming where, rather than failing in the plan writer."""
    import edgeplan
    from edgeplan.compiler.errors import CompileError
    b = zoo().build("tiny", size=16).SerializeToString()
    k = b.index(b"pw.conv")   # the first occurrence: the weight's name, as the pointwise conv's input
    bad = b[:k + 4] + b"\xef" + b[k + 5:]     # 'pw.c\xefnv.weight'
    with pytest.raises(CompileError, match=r"node 9's tensor 'pw\.c\ufffdnv\.weight' is not valid UTF-8"):
        edgeplan.compile(bad)
