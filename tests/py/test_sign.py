"""Signed plans: signatures made with `cryptography` (edgeplan.signing) verified by the runtime's C verifier
(runtime_c/src/sign.c) at open. With a key: a signed plan opens and runs as before, an unsigned plan is refused,
another key's signature is refused, and a flipped bit in any byte of the file is refused. Without a key a signed
plan opens as any plan. The CLI: keygen, sign, compile --sign, run / inspect --public-key, edgeplan-run
--public-key. The primitives against FIPS 180 and RFC 8032 are tests/c/test_sign.c."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import edgeplan
from edgeplan import signing
from edgeplan._cdef import K
from edgeplan.runtime import EdgeplanError

ed25519 = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.ed25519")


def _model(n=8):
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "c"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])],
                          [helper.make_tensor("c", TensorProto.FLOAT, [1], [0.5])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def key():
    k = ed25519.Ed25519PrivateKey.generate()
    return k, signing.public_key_bytes(k)


@pytest.fixture(scope="module")
def plan():
    return edgeplan.compile(_model()).to_bytes()


def _status(fn) -> int:
    with pytest.raises(EdgeplanError) as e:
        fn()
    return e.value.status


def test_signed_plan_runs_and_unsigned_or_foreign_is_refused(plan, key):
    k, pub = key
    signed = signing.sign_plan(plan, k)
    x = np.linspace(-2, 2, 8, dtype=np.float32).reshape(1, 8)
    want = edgeplan.Session(plan).run(x=x)["y"]
    np.testing.assert_array_equal(edgeplan.Session(signed, public_key=pub).run(x=x)["y"], want)
    np.testing.assert_array_equal(edgeplan.Session(signed).run(x=x)["y"], want)   # no key: read as any plan
    assert _status(lambda: edgeplan.Session(plan, public_key=pub)) == K.EP_ERR_PLAN_UNSIGNED
    other = ed25519.Ed25519PrivateKey.generate()
    assert _status(lambda: edgeplan.Session(signing.sign_plan(plan, other), public_key=pub)) == K.EP_ERR_PLAN_SIGNATURE
    resigned = signing.sign_plan(signed, other)     # signing again replaces the signature
    assert len(resigned) == len(signed)
    assert signing.verify_plan(resigned, signing.public_key_bytes(other)) == 0
    assert signing.verify_plan(resigned, pub) == K.EP_ERR_PLAN_SIGNATURE
    with pytest.raises(ValueError, match="32 raw bytes"):
        edgeplan.Session(signed, public_key=pub[:31])


def test_a_flipped_bit_in_any_byte_is_refused(plan, key):
    k, pub = key
    signed = signing.sign_plan(plan, k)
    accepted = []
    for i in range(len(signed)):
        bad = bytearray(signed)
        bad[i] ^= 1 << (i % 8)
        try:
            edgeplan.Session(bytes(bad), public_key=pub).close()
            accepted.append(i)
        except EdgeplanError:
            pass
    assert not accepted, f"{len(accepted)} of {len(signed)} single-bit changes opened: bytes {accepted[:10]}"
    for cut in (len(signed) - 1, len(signed) // 2, 100):
        with pytest.raises(EdgeplanError):
            edgeplan.Session(signed[:cut], public_key=pub)


def test_signatures_of_many_keys_and_plans_with_symbols(key):
    """50 keys on one plan (each verifies under its own key only); both ways a signature section is added
    (in the table's padding, or by moving the sections down 64 bytes); a signed streaming plan with variable
    dims runs as compiled."""
    plan = edgeplan.compile(_model()).to_bytes()
    keys = [ed25519.Ed25519PrivateKey.generate() for _ in range(50)]
    pubs = [signing.public_key_bytes(k) for k in keys]
    for i, k in enumerate(keys):
        signed = signing.sign_plan(plan, k)
        assert signing.verify_plan(signed, pubs[i]) == 0
        assert signing.verify_plan(signed, pubs[(i + 1) % 50]) == K.EP_ERR_PLAN_SIGNATURE
    from edgeplan import models
    kws = edgeplan.compile(models.build("kws"), dims={"T": (1, 100)}, state={"h_in": "h_out"}).to_bytes()
    def room(b):   # bytes free between the section table and the first section
        tbl, n = int.from_bytes(b[24:32], "little"), int.from_bytes(b[32:36], "little")
        first = min(int.from_bytes(b[tbl + 32 * i + 8:tbl + 32 * i + 16], "little") for i in range(n))
        return first - (tbl + 32 * n)
    # the small plan's table fills its block: the sections move down 64 bytes; kws (variable dims: a SYMS
    # section) leaves room for one more entry: signed in place
    assert room(plan) < 32 <= room(kws)
    moved = signing.sign_plan(plan, key[0])
    assert room(moved) == room(plan) + 64 - 32 and signing.verify_plan(moved, key[1]) == 0
    signed = signing.sign_plan(kws, key[0])
    assert room(signed) == room(kws) - 32 and len(signed) <= len(kws) + 64 + 80
    feats = np.random.default_rng(0).standard_normal((1, 37, 40)).astype(np.float32)
    a, b = edgeplan.Session(kws), edgeplan.Session(signed, public_key=key[1])
    for _ in range(3):   # streaming: the state carries over the same way
        ra, rb = a.run(feats=feats), b.run(feats=feats)
        for name in ra:
            np.testing.assert_array_equal(ra[name], rb[name])


def _cli(*args, ok=True, cwd=None):
    r = subprocess.run([sys.executable, "-m", "edgeplan.cli", *map(str, args)], capture_output=True, text=True,
                       cwd=cwd, env=dict(os.environ))
    assert (r.returncode == 0) == ok, r.stdout + r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    return r


def _edgeplan_run() -> str:
    lib = os.environ.get("EDGEPLAN_LIB")
    if lib and (Path(lib).parent / "edgeplan-run").is_file():
        return str(Path(lib).parent / "edgeplan-run")
    p = Path(sys.executable).with_name("edgeplan-run")
    return str(p) if p.exists() else "edgeplan-run"


def test_cli_keygen_sign_compile_run_inspect(tmp_path, plan):
    import onnx
    model = tmp_path / "m.onnx"
    onnx.save(_model(), model)
    _cli("keygen", "-o", tmp_path / "team")
    assert (tmp_path / "team.pub").stat().st_size == 32
    assert (tmp_path / "team").stat().st_mode & 0o077 == 0
    r = _cli("keygen", "-o", tmp_path / "team", ok=False)
    assert "never overwritten" in r.stderr
    _cli("compile", model, "-o", tmp_path / "s.eplan", "--sign", tmp_path / "team")
    _cli("compile", model, "-o", tmp_path / "u.eplan")
    pub = tmp_path / "team.pub"
    assert "latency" in _cli("run", tmp_path / "s.eplan", "--random", "--public-key", pub).stdout
    r = _cli("run", tmp_path / "u.eplan", "--random", "--public-key", pub, ok=False)
    assert "not signed" in r.stderr
    out = _cli("inspect", tmp_path / "s.eplan", "--public-key", pub).stdout
    assert "signature: Ed25519, key id" in out and "verified" in out
    assert "signature: none" in _cli("inspect", tmp_path / "u.eplan").stdout
    _cli("sign", tmp_path / "u.eplan", "--key", tmp_path / "team", "-o", tmp_path / "u2.eplan")
    _cli("inspect", tmp_path / "u2.eplan", "--public-key", pub)
    r = _cli("sign", tmp_path / "u.eplan", "--key", pub, ok=False)    # the public key is not a secret key
    assert "that is a public key" in r.stderr
    r = _cli("run", tmp_path / "s.eplan", "--random", "--public-key", model, ok=False)
    assert "32 raw bytes" in r.stderr
    exe = _edgeplan_run()
    r = subprocess.run([exe, tmp_path / "s.eplan", "--public-key", pub, "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([exe, tmp_path / "u.eplan", "--public-key", pub], capture_output=True, text=True)
    assert r.returncode == 1 and "not signed" in r.stderr
    bad = bytearray((tmp_path / "s.eplan").read_bytes())
    bad[len(bad) // 2] ^= 4
    (tmp_path / "b.eplan").write_bytes(bad)
    r = subprocess.run([exe, tmp_path / "b.eplan", "--public-key", pub], capture_output=True, text=True)
    assert r.returncode == 1 and "signature" in r.stderr


def test_hostile_signature_sections_get_a_status(plan, key):
    """ep_plan_verify reads the header, the section table and the signature record of untrusted bytes: 2,500
    mutations of them (random bytes and extreme values written over offsets, sizes, counts and the record)
    each get a status, never a crash, and never EP_OK unless only the (unsigned) CRC field changed; open refuses
    every changed plan."""
    k, pub = key
    signed = bytearray(signing.sign_plan(plan, k))
    rng = np.random.default_rng(7)
    tbl, n = int.from_bytes(signed[24:32], "little"), int.from_bytes(signed[32:36], "little")
    rec = next(int.from_bytes(signed[tbl + 32 * i + 8:tbl + 32 * i + 16], "little") for i in range(n)
               if int.from_bytes(signed[tbl + 32 * i:tbl + 32 * i + 4], "little") == K.EP_SECTION_SIGNATURE)
    fields = [16, 24, 32] + [tbl + 32 * i + o for i in range(n) for o in (0, 8, 16, 24)] + [rec, rec + 4, rec + 8]
    extremes = [0, 1, 63, 64, 80, 2**31, 2**32 - 1, 2**63, 2**64 - 1, len(signed), len(signed) - 79]
    ok = 0
    for _ in range(2500):
        bad = bytearray(signed)
        for _ in range(int(rng.integers(1, 4))):
            if rng.random() < 0.6:
                off = int(rng.choice(fields))
                v = int(rng.choice(extremes)) if rng.random() < 0.7 else int(rng.integers(0, 2**63))
                width = 8 if off in (16, 24) or (off - tbl) % 32 in (8, 16) else 4
                bad[off:off + width] = (v % (1 << (8 * width))).to_bytes(width, "little")
            else:
                i = int(rng.integers(0, len(bad)))
                bad[i] = int(rng.integers(0, 256))
        rc = signing.verify_plan(bytes(bad), pub)
        same = bad[:12] + bad[16:] == signed[:12] + signed[16:]   # the CRC field is not signed: open checks it
        assert rc < 0 or same
        ok += rc == 0 and not same
        if not same:   # and whatever the signature says, open refuses the changed plan
            with pytest.raises(EdgeplanError):
                edgeplan.Session(bytes(bad), public_key=pub).close()
    assert ok == 0
