"""The command line under careless input: every mistake a hurried user makes (a path that cannot be
written, a name the plan lacks, a count of 0, a file that is not what it claims) ends in one line on
stderr that starts with "edgeplan:" and names the bad value or path, a non-zero exit, no traceback, and
no output file truncated or half written.

The CLI runs as `python -m edgeplan.cli` in a subprocess, as in test_cli.py (what a user sees, tracebacks
included); only the argparse refusals run main(argv) in-process. The plans are tiny and built once per
module: the zoo's "tiny" CNN, the zoo TTS model for N <= 8 tokens and the zoo ASR model for 0.025..0.5 s."""
from __future__ import annotations

import io
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest

import edgeplan
from conftest import zoo
from edgeplan.wav import WavError, read_wav, resample, write_wav


def cli(*args):
    return subprocess.run([sys.executable, "-m", "edgeplan.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))


def refused(r, *words, code=None) -> str:
    """One clear line: non-zero exit (``code`` if given), stderr a single "edgeplan: ..." line holding
    every one of ``words``, no traceback. Returns the line."""
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr
    assert r.returncode != 0, r.stdout + r.stderr
    if code is not None:
        assert r.returncode == code, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("edgeplan:"), r.stderr
    for w in words:
        assert str(w) in lines[0], (w, lines[0])
    return lines[0]


def bad_flag(r, flag: str, value: str) -> None:
    """argparse's refusal of a bad value: exit 2, a last line "edgeplan CMD: error: argument FLAG: ..."."""
    assert "Traceback" not in r.stderr and r.returncode == 2, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("edgeplan ") and f"argument {flag}:" in last and value in last, last


@pytest.fixture(scope="module")
def w(tmp_path_factory):
    """A work folder: tiny.onnx/.eplan, tts.eplan, asr.eplan, inputs of every wrong kind, a file and a dir."""
    from edgeplan.compiler.dynamic import parse_dims
    d = tmp_path_factory.mktemp("hostile")
    z = zoo()
    onnx.save(z.build("tiny"), d / "tiny.onnx")
    edgeplan.compile(str(d / "tiny.onnx")).save(d / "tiny.eplan")
    edgeplan.compile(z.build("tts"), dims=parse_dims(["N=1..8", "frames=1..64"])).save(d / "tts.eplan")
    edgeplan.compile(z.build("asr"), dims=parse_dims(["samples=400..8000"])).save(d / "asr.eplan")
    np.save(d / "x.npy", np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32))
    np.save(d / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    (d / "text.npy").write_text("1 2 3\n")
    np.savez(d / "arr.npz", x=np.zeros(3))
    write_wav(d / "ok.wav", 0.1 * np.sin(np.arange(4000) / 5.0), 16000)
    (d / "chunky.wav").write_bytes(b"RIFF1234WAVEjunkjunkjunkjunk")    # a chunk size past the end
    (d / "afile").write_text("a file, not a folder\n")
    (d / "adir").mkdir()
    return d


# ------------------------------------------------------------------------------------------ unwritable paths
@pytest.mark.parametrize("out", ["missing/x.eplan", "adir", "adir/", "afile/x.eplan"])
def test_compile_unwritable_output_fails_before_compiling(w, out):
    r = cli("compile", w / "tiny.onnx", "-o", f"{w}/{out}")
    refused(r, "cannot write", out)
    assert "compiled" not in r.stdout         # checked before the compile, not after it


def test_compile_unwritable_ops_out_and_model_as_output(w):
    r = cli("compile", w / "tiny.onnx", "-o", w / "ok.eplan", "--ops-out", w / "missing" / "k.ops")
    refused(r, "cannot write", w / "missing" / "k.ops", "does not exist")
    assert "compiled" not in r.stdout and not (w / "ok.eplan").exists()
    refused(cli("compile", w / "tiny.onnx", "--ops-out", w / "adir", "-o", w / "ok.eplan"), "cannot write", "adir")
    before = (w / "tiny.onnx").read_bytes()
    refused(cli("compile", w / "tiny.onnx", "-o", w / "tiny.onnx"), "an input of this command", code=2)
    assert (w / "tiny.onnx").read_bytes() == before


def test_outputs_never_replace_the_commands_inputs(w):
    plan = (w / "tiny.eplan").read_bytes()
    refused(cli("run", w / "tiny.eplan", "--random", "--output", w / "tiny.eplan"), "an input of this command", code=2)
    refused(cli("profile", w / "tiny.eplan", "--trace", w / "tiny.eplan"), "tiny.eplan", code=2)
    refused(cli("tts", w / "tts.eplan", "--tokens", "1", "-o", w / "tts.eplan"), "tts.eplan", code=2)
    assert (w / "tiny.eplan").read_bytes() == plan


@pytest.mark.parametrize("spec", ["y={w}/missing/y.npy", "{w}/missing/y.npy", "{w}/adir", "{w}/adir/"])
def test_run_unwritable_output(w, spec):
    """A directory, or a name ending in a separator, is refused (np.save would write "DIR/.npy")."""
    path = spec.format(w=w).partition("=")[2] or spec.format(w=w)
    r = cli("run", w / "tiny.eplan", "--random", "--output", spec.format(w=w))
    refused(r, "cannot write", path)
    assert "latency" not in r.stdout          # refused before the run
    assert list((w / "adir").iterdir()) == []


def test_run_output_names_and_exact_path(w, tmp_path):
    r = cli("run", w / "tiny.eplan", "--random", "--output", f"nosuch={tmp_path / 'y.npy'}")
    refused(r, "no output 'nosuch'", "'y' float32 [1, 10]", code=2)
    r = cli("run", w / "tiny.eplan", "--random", "--output", tmp_path / "a.npy", "--output", tmp_path / "b.npy")
    refused(r, "--output number 2 needs a name", code=2)
    refused(cli("run", w / "tiny.eplan", "--random", "--output", "y="), "no file after '='", code=2)
    # written at exactly the path given: no ".npy" appended
    r = cli("run", w / "tiny.eplan", "--input", w / "x.npy", "--output", f"y={tmp_path / 'y.out'}")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["y.out"]
    np.testing.assert_array_equal(np.load(tmp_path / "y.out"),
                                  edgeplan.Session(w / "tiny.eplan").run(x=np.load(w / "x.npy"))["y"])


def test_profile_unwritable_trace(w):
    r = cli("profile", w / "tiny.eplan", "--trace", w / "missing" / "t.json")
    refused(r, "cannot write", w / "missing" / "t.json")
    assert "run(s)" not in r.stdout
    refused(cli("profile", w / "tiny.eplan", "--trace", w / "adir"), "cannot write", "adir")


def test_tts_unwritable_output(w):
    for out in (w / "missing" / "x.wav", w / "adir"):
        r = cli("tts", w / "tts.eplan", "--tokens", "1,2,3", "-o", out)
        refused(r, "cannot write", out)
        assert "opened" not in r.stdout       # refused before the plan is opened


def test_asr_unwritable_write_vocab(w):
    refused(cli("asr", "--write-vocab", w / "missing" / "v.txt"), "cannot write", w / "missing" / "v.txt")
    refused(cli("asr", "--write-vocab", w / "adir"), "cannot write", "adir")
    r = cli("asr", w / "asr.eplan", w / "ok.wav", "--write-vocab", w / "afile" / "v.txt")
    refused(r, "cannot write", "afile")


# ------------------------------------------------------------------------------------------ numeric flags
@pytest.mark.parametrize("cmd, flag, value", [
    ("run", "--repeat", "0"), ("run", "--repeat", "-3"), ("run", "--threads", "-1"), ("run", "--threads", "0"),
    ("profile", "--runs", "0"), ("profile", "--warmup", "-1"), ("profile", "--threads", "-1"),
    ("profile", "--top", "-1"), ("demo", "--repeat", "0"), ("demo", "--size", "-5"),
    ("asr", "--repeat", "0"), ("asr", "--threads", "-2"), ("asr", "--rate", "0"), ("asr", "--chunk-seconds", "0"),
    ("asr", "--chunk-seconds", "-1"), ("asr", "--chunk-seconds", "nan"), ("asr", "--chunk-seconds", "inf"),
    ("tts", "--repeat", "0"), ("tts", "--threads", "0"), ("tts", "--rate", "-5"), ("tts", "--rate", "10000000000"),
    ("tts", "--model-rate", "0"),
])
def test_numeric_flags_out_of_range(w, capsys, cmd, flag, value):
    """In-process main(argv) (argparse refuses before any command runs; a subprocess each would only
    add interpreter start-up)."""
    from edgeplan.cli import main
    args = {"run": ["run", w / "tiny.eplan", "--random"], "profile": ["profile", w / "tiny.eplan"],
            "demo": ["demo", "--model", "tiny"], "asr": ["asr", w / "asr.eplan", w / "ok.wav"],
            "tts": ["tts", w / "tts.eplan", "--tokens", "1,2", "-o", w / "n.wav"]}[cmd]
    with pytest.raises(SystemExit) as e:
        main([*map(str, args), f"{flag}={value}"])
    bad_flag(subprocess.CompletedProcess(args, e.value.code, "", capsys.readouterr().err), flag, value)
    assert not (w / "n.wav").exists()


# ------------------------------------------------------------------------------------------ tts
def test_tts_bad_option_keeps_the_old_wav(w, tmp_path):
    out = tmp_path / "old.wav"
    r = cli("tts", w / "tts.eplan", "--tokens", "20,17,24", "-o", out)
    assert r.returncode == 0, r.stderr
    before = out.read_bytes()
    bad_flag(cli("tts", w / "tts.eplan", "--tokens", "20,17,24", "-o", out, "--rate=-5"), "--rate", "-5")
    refused(cli("tts", w / "tts.eplan", "--tokens", "99999", "-o", out), "out of range", "vocabulary")
    refused(cli("tts", w / "tts.eplan", "--tokens", ",".join(["5"] * 9), "-o", out), "9 tokens", "1..8")
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.wav"]     # no temp file left behind


@pytest.mark.parametrize("args, words", [
    (["--text", ""], ["--text ''", "no character"]),
    (["--text", "日本語"], ["no character"]),
    (["--tokens", ""], ["--tokens is empty"]),
    (["--tokens=-1"], ["id -1", "0 or more"]),
    (["--tokens", "99999999999999999999999"], ["id 99999999999999999999999"]),
])
def test_tts_bad_tokens_and_text(w, tmp_path, args, words):
    r = cli("tts", w / "tts.eplan", *args, "-o", tmp_path / "t.wav")
    refused(r, *words, code=2)
    assert "opened" not in r.stdout and not (tmp_path / "t.wav").exists()


# ------------------------------------------------------------------------------------------ asr
def test_asr_careless_input(w):
    refused(cli("asr", w / "asr.eplan", w / "chunky.wav"), "chunky.wav", "not a PCM WAV")
    refused(cli("asr", w / "asr.eplan", w / "ok.wav", "--vocab", w / "x.npy"), "x.npy", "not a UTF-8 text file")
    refused(cli("asr", w / "asr.eplan", w / "ok.wav", "--chunk-seconds", "1e-9"), "--chunk-seconds", "one sample")
    refused(cli("asr", w / "ok.wav", w / "asr.eplan"), "asr.eplan", "the order is")
    refused(cli("asr", w / "asr.eplan", w / "adir"), "cannot read", "adir", "Is a directory")
    r = cli("asr", w / "asr.eplan", "--write-vocab", w / "v.txt")
    refused(r, "needs PLAN and WAV", code=2)
    assert not (w / "v.txt").exists()         # nothing written for a command line that cannot work


# ------------------------------------------------------------------------------------------ inputs
@pytest.mark.parametrize("cmd", ["run", "profile"])
def test_input_careless(w, cmd):
    plan = w / "tiny.eplan"
    refused(cli(cmd, plan, "--input", f"nosuch={w / 'x.npy'}"), "no input 'nosuch'", "'x' float32", code=2)
    r = cli(cmd, plan, "--input", w / "x.npy", "--input", f"nosuch={w / 'x.npy'}")
    line = refused(r, "no input 'nosuch'", code=2)
    assert '"' not in line                    # not a KeyError's repr
    refused(cli(cmd, plan, "--input", "x="), "no file after '='", code=2)
    refused(cli(cmd, plan, "--input", w / "text.npy"), "text.npy", "not a .npy file")
    refused(cli(cmd, plan, "--input", w / "arr.npz"), "arr.npz", ".npz archive")
    refused(cli(cmd, plan, "--input", w / "obj.npy"), "obj.npy", "Object arrays")
    refused(cli(cmd, plan, "--input", w / "ok.wav"), "ok.wav", "not a .npy file")


def test_plan_open_errors_name_the_path_once(w):
    (w / "empty.eplan").write_bytes(b"")
    cases = [(w / "nosuch.eplan", "No such file"), (w / "adir", "Is a directory"), (w / "empty.eplan", "empty"),
             (w / "tiny.onnx", "not an edgeplan plan")]
    for cmd in (["run", "--random"], ["inspect"]):
        for plan, word in cases:
            line = refused(cli(cmd[0], plan, *cmd[1:]), plan, word)
            assert line.count(str(plan)) == 1, line
    for cmd in (["profile"], ["tts", "--tokens", "1", "-o", w / "o.wav"], ["asr", w / "ok.wav"]):
        refused(cli(cmd[0], w / "tiny.onnx", *cmd[1:]), w / "tiny.onnx", "not an edgeplan plan")


# ------------------------------------------------------------------------------------------ demo, bundle, pipes
def test_demo_unknown_model_and_checkout(w):
    refused(cli("demo", "--model", "nosuch"), "'nosuch'", "tiny", code=2)
    refused(cli("demo", "--model", "tiny", "--size", "3"), "'tiny'", "--size 3")
    r = cli("demo", "--model", "tiny", "--repeat", "1")   # edgeplan.models installed, else the checkout's models/
    assert r.returncode == 0 and "latency: median" in r.stdout, r.stderr


def test_bundle_careless_input(w, tmp_path):
    """Refused before a runtime is built, and no empty bundle folder is left behind."""
    out = tmp_path / "dist"
    refused(cli("bundle", w / "nosuch.onnx", "--board", "x86-64", "-o", out), "cannot read", "nosuch.onnx")
    refused(cli("bundle", w / "x.npy", "--board", "x86-64", "-o", out), "x.npy", "not an ONNX model")
    refused(cli("bundle", w / "tiny.onnx", "--board", "x86-64", "-o", w / "afile"), "afile", "Not a directory")
    r = cli("bundle", w / "tiny.onnx", "--board", "x86-64", "--shape", "x=1,3,16,16", "-o", out)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"edgeplan: cannot compile {w / 'tiny.onnx'}:")
    assert not out.exists()


def test_size_measure_careless(w):
    refused(cli("size", "measure", w / "nosuch.so"), "cannot read", "nosuch.so", "No such file")
    refused(cli("size", "measure", w / "adir"), "cannot read", "adir", "Is a directory")
    refused(cli("size", "measure", w / "afile"), "afile", "not an ELF file")


def test_closed_stdout_is_quiet(w):
    """`edgeplan inspect p.eplan | head -1`: the reader goes away; no traceback."""
    p = subprocess.Popen([sys.executable, "-m", "edgeplan.cli", "inspect", str(w / "tiny.eplan")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))
    p.stdout.close()
    err = p.stderr.read().decode()
    p.wait(timeout=60)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert p.returncode != 0


# ------------------------------------------------------------------------------------------ the library under it
def test_wav_library_refusals(tmp_path, capfd):
    old = tmp_path / "old.wav"
    write_wav(old, np.zeros(10, np.float32), 8000)
    before = old.read_bytes()
    with pytest.raises(ValueError, match="sample rate"):
        write_wav(old, np.zeros(10, np.float32), -5)
    assert old.read_bytes() == before                        # checked before the file is opened
    with pytest.raises(FileNotFoundError):
        write_wav(tmp_path / "missing" / "x.wav", np.zeros(10, np.float32), 8000)
    assert "Exception ignored" not in capfd.readouterr().err   # no half-made wave writer complaining
    f = io.BytesIO()
    assert write_wav(f, np.zeros(10, np.float32), 8000) == 10 and f.getvalue()[:4] == b"RIFF"
    (tmp_path / "chunky.wav").write_bytes(b"RIFF1234WAVEjunkjunkjunkjunk")
    with pytest.raises(WavError, match="not a PCM WAV"):
        read_wav(tmp_path / "chunky.wav")
    with pytest.raises(ValueError, match="above 0"):
        resample(np.zeros(10, np.float32), 0, 16000)


def test_profile_session_counts(w):
    from edgeplan.profile import profile_session, random_feeds
    s = edgeplan.Session(w / "tiny.eplan", profile=True)
    for runs, warmup in ((0, 2), (-1, 2), (10, -1)):
        with pytest.raises(ValueError, match="runs >= 1 and warmup >= 0"):
            profile_session(s, random_feeds(s), runs=runs, warmup=warmup)
    r = profile_session(s, random_feeds(s), runs=2, warmup=0)     # warmup 0: no untimed run
    assert len(r["runs_ns"]) == 2 and max(o["calls"] for o in r["ops"]) == 2


def test_compile_const_malformed_or_unknown(w, tmp_path):
    out = tmp_path / "t.eplan"
    for bad in ("sr", "sr=", "sr=abc", "=5"):
        refused(cli("compile", w / "tiny.onnx", "--const", bad, "-o", out), "--const", code=2)
    r = cli("compile", w / "tiny.onnx", "--const", "sr=16000", "-o", out)     # a compile error: its problem list
    assert r.returncode == 1 and "Traceback" not in r.stderr and "consts['sr']: the model has no input 'sr'" in r.stderr
