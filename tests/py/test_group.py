"""Shared-arena groups (docs/groups.md): plans grouped into one arena run one at a time, each member keeping its
streaming state across the others' runs, and give exactly what they give alone."""
import subprocess
import sys
import threading

import numpy as np
import pytest

import edgeplan
from edgeplan import EdgeplanError, SessionGroup, models
from edgeplan._cdef import K
from edgeplan.group import GroupError, group_info, plan_group

# name: (builder kwargs, compile kwargs)
ZOO = {
    "tiny": ({}, {}),
    "kws": ({}, {"dims": {"T": (1, 100)}, "state": {"h_in": "h_out"}}),
    "mobilenetv2": ({"size": 64}, {}),
    "asr": ({}, {"dims": {"samples": (400, 16000)}}),
}


@pytest.fixture(scope="module")
def plans():
    return {n: edgeplan.compile(models.build(n, **kw), **ckw).to_bytes() for n, (kw, ckw) in ZOO.items()}


def _feeds(sess, rng, length=None) -> dict:
    out = {}
    for t in sess.inputs:
        shape = [length if (length is not None and lo != hi) else hi
                 for lo, hi in zip(t.min_shape, t.max_shape)]
        out[t.name] = rng.standard_normal(shape).astype(t.dtype)
    return out


def test_group_arena_and_layout(plans):
    g = plan_group(list(plans.values()), names=list(plans))
    alone = [edgeplan.Session(p).arena_bytes for p in plans.values()]
    assert g.separate_arena_bytes == alone
    # the group: every member's own bytes, the largest shared part, the busy word
    assert g.group_arena_bytes == sum(g.tables_bytes) + sum(g.state_bytes) + g.shared_bytes + 64
    assert g.group_arena_bytes < max(alone) + sum(alone) // 20
    assert g.state_bytes[list(plans).index("kws")] == 256 and g.state_bytes[0] == 0   # kws's GRU state, 64 floats
    for i, p in enumerate(g.plans):
        info = group_info(p.to_bytes())
        assert info["member"] == i and info["n_members"] == len(plans)
        assert info["group_arena_size"] == g.group_arena_bytes
        assert info["arena_offset"] == sum(g.tables_bytes[:i]) + sum(g.state_bytes[:i])
    assert "0." in g.summary().splitlines()[-1]


def test_interleaved_runs_match_separate_sessions(plans):
    """Every member, run in turn with the others between its runs, gives its separate session's outputs bit for
    bit; kws's streaming state (kept in its own bytes) survives the others' runs."""
    g = plan_group(list(plans.values()), names=list(plans))
    rng = np.random.default_rng(7)
    alone = {n: edgeplan.Session(p) for n, p in plans.items()}
    with SessionGroup(g) as sg:
        assert len(sg) == len(plans) and sg.arena_bytes == g.group_arena_bytes
        assert [m.arena_bytes for m in sg] == [p.report["arena_bytes"] for p in g.plans]   # each one's reach
        for step in range(6):
            for n in plans:
                length = int(rng.integers(1, 101)) if n == "kws" else (int(rng.integers(400, 16001)) if n == "asr" else None)
                f = _feeds(alone[n], rng, length)
                want, got = alone[n].run(f), sg[n].run(f)
                assert want.keys() == got.keys()
                for k in want:
                    np.testing.assert_array_equal(got[k], want[k], err_msg=f"{n} {k} step {step}")
        # reset zeroes a member's state, and only its own
        alone["kws"].reset()
        sg["kws"].reset()
        f = _feeds(alone["kws"], rng, 5)
        np.testing.assert_array_equal(sg["kws"].run(f)["probs"], alone["kws"].run(f)["probs"])


def test_member_inputs_are_given_every_run(plans):
    g = plan_group([plans["tiny"], plans["kws"]], names=["tiny", "kws"])
    sg = SessionGroup(g)
    rng = np.random.default_rng(1)
    sg["tiny"].run(_feeds(sg["tiny"], rng))
    with pytest.raises(ValueError, match="give every input to each run"):
        sg["tiny"].run()
    with pytest.raises(EdgeplanError, match="not swapped alone"):
        sg["tiny"].swap(plans["tiny"])


def test_threads_share_the_group(plans):
    """Requests from several threads on different members are serialised by the group's lock: each gets its own
    member's answer."""
    names = ["tiny", "kws", "mobilenetv2"]
    g = plan_group([plans[n] for n in names], names=names)
    sg = SessionGroup(g)
    rng = np.random.default_rng(3)
    cases = {}
    for n in names:
        s = edgeplan.Session(plans[n])
        cases[n] = []
        for _ in range(3):
            f = _feeds(s, rng, 7 if n == "kws" else None)
            s.reset()
            cases[n].append((f, s.run(f)))
    errors = []

    def worker(n):
        for i in range(30):
            f, want = cases[n][i % 3]
            with sg[n]._lock:     # the group lock: reset and run of this member as one request
                sg[n].reset()
                got = sg[n].run(f)
            if any(not np.array_equal(got[k], want[k]) for k in want):
                errors.append((n, i))

    ts = [threading.Thread(target=worker, args=(n,)) for n in names]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_c_refuses_a_second_member_while_one_holds_the_group(plans):
    g = plan_group([plans["tiny"], plans["kws"]], names=["tiny", "kws"])
    sg = SessionGroup(g)
    lib = sg[0]._lib
    assert lib.ep_group_lock(sg[0]._s) == K.EP_OK
    assert lib.ep_group_lock(sg[1]._s) == K.EP_ERR_GROUP_BUSY
    assert lib.ep_run(sg[1]._s) == K.EP_ERR_GROUP_BUSY
    lib.ep_group_unlock(sg[0]._s)
    assert lib.ep_group_lock(sg[1]._s) == K.EP_OK
    lib.ep_group_unlock(sg[1]._s)
    assert edgeplan.runtime.status_str(K.EP_ERR_GROUP_BUSY) == "another session of its group is running"


def test_bad_groups_are_refused(plans, tmp_path):
    g = plan_group([plans["tiny"], plans["kws"]])
    with pytest.raises(GroupError, match="already a group member"):
        plan_group([g.plans[0].to_bytes()])
    with pytest.raises(GroupError, match="not an edgeplan plan"):
        plan_group([b"not a plan at all" * 8])
    with pytest.raises(GroupError, match="not a valid plan"):
        plan_group([plans["tiny"][:-100]])                 # truncated: the runtime's check says why
    with pytest.raises(ValueError, match="not a folder"):
        SessionGroup(tmp_path / "missing")
    with pytest.raises(EdgeplanError, match="not member 0"):
        SessionGroup(list(reversed(g.plans)))
    with pytest.raises(EdgeplanError, match="not a group member"):
        SessionGroup([plans["tiny"], plans["kws"]])
    other = plan_group([plans["tiny"], plans["asr"]])
    with pytest.raises(EdgeplanError):
        SessionGroup([g.plans[0], other.plans[1]])   # members of two groups
    # a member alone (its own arena) runs and agrees with the plan it was made from
    rng = np.random.default_rng(2)
    one, ref = edgeplan.Session(g.plans[1]), edgeplan.Session(plans["kws"])
    f = _feeds(ref, rng, 9)
    np.testing.assert_array_equal(one.run(f)["probs"], ref.run(f)["probs"])
    # a flipped byte anywhere in a member's GROUP record: refused, or (the unused bytes) still the same group
    data = g.plans[1].to_bytes()
    off = len(data) - 64
    from edgeplan.compiler.writer import crc32c
    for i in range(64):
        b = bytearray(data)
        b[off + i] ^= 0x10
        b[12:16] = bytes(4)
        b[12:16] = crc32c(bytes(b)).to_bytes(4, "little")
        try:
            sg = SessionGroup([g.plans[0], bytes(b)])
        except EdgeplanError:
            continue
        raise AssertionError(f"record byte {i} flipped: the group still opened")


def test_signed_group(plans, tmp_path):
    from edgeplan.signing import keygen
    _, pub = keygen(tmp_path / "k")
    g = plan_group([plans["tiny"], plans["kws"]], names=["tiny", "kws"])
    paths = g.save(tmp_path / "grp", sign=tmp_path / "k")
    sg = SessionGroup(tmp_path / "grp", public_key=pub.read_bytes())
    assert sg.names == [p.stem for p in paths]
    from edgeplan.signing import sign_plan
    with pytest.raises(GroupError, match="signed plan"):
        plan_group([sign_plan(plans["tiny"], tmp_path / "k")])


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "edgeplan.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)


def test_cli_group_and_compile_group(plans, tmp_path):
    import onnx
    for n in ("tiny", "kws"):
        (tmp_path / f"{n}.eplan").write_bytes(plans[n])
    r = _cli("group", tmp_path / "tiny.eplan", tmp_path / "kws.eplan", "-o", tmp_path / "grp", "--ops-out",
             tmp_path / "grp.ops")
    assert r.returncode == 0, r.stderr
    assert "group arena" in r.stdout and "x" in r.stdout.splitlines()[-3]
    ops = (tmp_path / "grp.ops").read_text()
    assert "feature groups" in ops and "feature dynamic" in ops and "gru f32" in ops
    sg = SessionGroup(tmp_path / "grp")
    assert sg.names == ["00-tiny", "01-kws"]
    onnx.save(models.build("tiny"), tmp_path / "a.onnx")
    onnx.save(models.build("yolo", size=64), tmp_path / "b.onnx")
    r = _cli("compile", tmp_path / "a.onnx", tmp_path / "b.onnx", "--group", tmp_path / "g2")
    assert r.returncode == 0, r.stderr
    assert len(SessionGroup(tmp_path / "g2")) == 2
    r = _cli("compile", tmp_path / "a.onnx", tmp_path / "b.onnx")
    assert r.returncode != 0 and "--group DIR" in r.stderr and "Traceback" not in r.stderr
    r = _cli("group", tmp_path / "grp" / "00-tiny.eplan", "-o", tmp_path / "g3")
    assert r.returncode != 0 and "already a group member" in r.stderr and "Traceback" not in r.stderr
    r = _cli("group", tmp_path / "missing.eplan", "-o", tmp_path / "g4")
    assert r.returncode != 0 and "cannot read" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
def test_vision_vad_asr_tts_in_half_the_arena():
    """The target: MobileNetV2 (224x224) + Silero VAD + the zoo's ASR and TTS (acoustic model and vocoder), at
    deployment bounds (5 s utterances, 128-phoneme sentences, 128-frame vocoder chunks), in at most half the sum of
    their separate arenas; and each member, run between the others, gives its separate session's outputs."""
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from conftest import pinned
    from edgeplan.vad import compile_vad
    plans = {
        "mobilenetv2": edgeplan.compile(models.build("mobilenetv2")),
        "vad": compile_vad(pinned("silero_vad")),
        "asr": edgeplan.compile(models.build("asr"), dims={"samples": (400, 80000)}),
        "tts_acoustic": edgeplan.compile(models.build("tts_acoustic"), dims={"N": (1, 128), "frames": (1, 512)}),
        "hifigan": edgeplan.compile(models.build("hifigan"), dims={"frames": (1, 128)}),
    }
    g = plan_group(list(plans.values()), names=list(plans))
    print(g.summary())
    assert g.ratio <= 0.5
    sg = SessionGroup(g)
    rng = np.random.default_rng(11)
    alone = {n: edgeplan.Session(p) for n, p in plans.items()}
    for _ in range(2):
        for n in plans:
            f = {}
            for t in alone[n].inputs:
                lo, hi = t.min_shape, t.max_shape
                shape = [int(rng.integers(a, min(b, 64 * a if a else b) + 1)) if a != b else b for a, b in zip(lo, hi)]
                f[t.name] = (rng.integers(1, 30, size=shape) if t.dtype.kind == "i"
                             else rng.standard_normal(shape)).astype(t.dtype)
            try:
                want = alone[n].run(f)
            except EdgeplanError:      # a random duration beyond the planned frames: not a group matter
                continue
            got = sg[n].run(f)
            for k in want:
                np.testing.assert_array_equal(got[k], want[k], err_msg=f"{n} {k}")
