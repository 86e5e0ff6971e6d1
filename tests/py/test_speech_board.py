"""The board tool edgeplan-speech (runtime_c/tools/edgeplan_speech.c over runtime_c/speech/): VAD
segments, Piper ids to audio and Whisper transcription in C, with no Python, on the real models and the
real recording. Each must give what the Python tools give on the same plans: the same segments, the
same wav bytes, the same text. (Under qemu-aarch64: tests/py/test_cross.py.)"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, pinned

TEXT = "Ever tried, ever failed. No matter, try again. Fail again. Fail better."


def speech_tool():
    """edgeplan-speech beside the runtime library in use (a build tree), else installed with the package."""
    lib = os.environ.get("EDGEPLAN_LIB")
    for p in ([Path(lib).with_name("edgeplan-speech")] if lib else []) + [Path(sys.executable).with_name("edgeplan-speech")]:
        if p.is_file():
            return str(p)
    found = shutil.which("edgeplan-speech")
    if found is None:
        pytest.fail("edgeplan-speech is not built (meson builds it with the runtime; pip install . installs it)")
    return found


def whisper_plans(d: Path, seconds: float = 30) -> Path:
    """The converted Whisper tiny.en (its window `seconds` long) with its three plans compiled, in d."""
    spec = importlib.util.spec_from_file_location("whisper_ct2", ROOT / "tools" / "whisper_ct2.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    tool.convert(pinned("whisper_tiny_en_ct2"), d, seconds)
    from edgeplan.whisper import GRAPHS, Whisper
    asr = Whisper(d)
    for g in GRAPHS:
        os.replace(asr._plan(g, None), d / f"{g}.eplan")
        (d / f"{g}.onnx").unlink()
    return d


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("board")
    mp = pytest.MonkeyPatch()
    mp.setenv("EDGEPLAN_CACHE", str(d / "cache"))
    yield d
    mp.undo()


def _tool(*args, ok=True):
    r = subprocess.run([speech_tool(), *map(str, args)], capture_output=True, text=True, timeout=900)
    assert (r.returncode == 0) == ok, r.stdout + r.stderr
    return r


def test_vad_in_c_gives_the_python_tools_segments(env):
    from edgeplan.vad import SileroVad, speech_segments
    wav = pinned("speech_beckett") / "beckett.wav"
    vad = SileroVad(pinned("silero_vad"))
    plan = next((env / "cache" / "vad").glob("*.eplan"))
    with wave.open(str(wav), "rb") as w:
        x = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768.0
    want = speech_segments(vad.probabilities(x), len(x))
    r = _tool("vad", plan, wav)
    got = [tuple(round(float(v) * 16000) for v in line.split()) for line in r.stdout.splitlines()]
    assert got == [(s, e) for s, e in want] and len(got) == 6
    assert "ms a window" in r.stderr and "peak RSS" in r.stderr


@pytest.mark.parametrize("args, says", [
    (["vad", "p", "w", "--threshold", "abc"], "--threshold abc: expected a probability in 0..1"),
    (["vad", "p", "w", "--threshold", "1.5"], "expected a probability in 0..1"),
    (["vad", "p", "w", "--min-silence-ms", "10x"], "--min-silence-ms 10x: expected milliseconds"),
    (["vad", "p", "w", "--speech-pad-ms"], "--speech-pad-ms needs a value"),
    (["tts", "p", "--ids", "1,2", "-o", "o.wav", "--scales", "0.5,1"], "expected NOISE,LENGTH,NOISE_W"),
    (["tts", "p", "--ids", "1,2", "-o", "o.wav", "--scales", "0.5,1,0.8,9"], "expected NOISE,LENGTH,NOISE_W"),
    (["tts", "p", "--ids", "1,2", "-o", "o.wav", "--rate", "22k"], "--rate: a sample rate"),
    (["tts", "p", "--ids", "1,2", "-o"], "-o needs a value"),
])
def test_options_that_are_not_numbers_are_refused(args, says):
    """Options are read whole: a value with trailing characters, out of range or missing is named, before any
    file is opened."""
    r = _tool(*args, ok=False)
    assert says in r.stderr, r.stderr


def test_tts_in_c_writes_the_python_tools_wav(env):
    from edgeplan import piper
    model = pinned("piper_en_us_joe_medium")
    voice = env / "joe.onnx"
    voice.symlink_to(model)
    shutil.copy(model.with_name(model.name + ".json"), env / "joe.onnx.json")
    v = piper.Voice.load(voice)
    ids = v.ids("həlˈoʊ wˈɜːld.")
    py = env / "py.wav"
    r = subprocess.run([sys.executable, "-m", "edgeplan.cli", "tts", str(voice), "--ids", ",".join(map(str, ids)),
                        "--noise-scale", "0", "--noise-w", "0", "-o", str(py)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    plan = v.plan_path(piper.BUCKETS[0])
    c = env / "c.wav"
    r = _tool("tts", plan, "--ids", ",".join(map(str, ids)), "--scales", "0,1,0", "-o", c)
    assert c.read_bytes() == py.read_bytes()
    assert "real-time factor" in r.stderr
    r = _tool("tts", plan, "--ids", ",".join(["20"] * 200), "-o", env / "x.wav", ok=False)
    assert "at most 96" in r.stderr


def test_asr_in_c_transcribes_as_the_python_tool_does(env):
    d = whisper_plans(env / "whisper")
    wav = pinned("speech_beckett") / "beckett.wav"
    r = _tool("asr", d, wav)
    assert r.stdout.strip() == f"text: {TEXT}"
    assert "real-time factor" in r.stderr
    plain = env / "plain"
    plain.mkdir()
    for f in ("encoder.eplan", "decoder.eplan", "whisper.txt", "vocabulary.txt"):
        os.symlink(d / f, plain / f)
    assert _tool("asr", plain, wav).stdout.strip() == f"text: {TEXT}"      # full recompute
    with wave.open(str(env / "8k.wav"), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(8000), w.writeframes(b"\0\0" * 80)
    assert "16000 Hz" in _tool("asr", d, env / "8k.wav", ok=False).stderr
    (env / "nocfg").mkdir()
    assert "whisper.txt" in _tool("asr", env / "nocfg", wav, ok=False).stderr
    (env / "junk.wav").write_bytes(b"RIFF\0\0\0\0WAVEjunk")
    assert "fmt" in _tool("vad", d / "encoder.eplan", env / "junk.wav", ok=False).stderr


@pytest.mark.slow
def test_speech_bundle_runs_with_nothing_else_installed(env):
    """edgeplan bundle --board x86-64 --voice --whisper --vad: a static edgeplan-speech with the plans,
    the voice's json, whisper.txt and the vocabulary; run from the folder, it gives the text and the
    segments (the same code cross-built is what an ARM board gets; tests/py/test_cross.py runs it)."""
    d = env / "whisper_src"
    spec = importlib.util.spec_from_file_location("whisper_ct2", ROOT / "tools" / "whisper_ct2.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    tool.convert(pinned("whisper_tiny_en_ct2"), d)
    model = pinned("piper_en_us_joe_medium")
    voice = env / "bundle_voice.onnx"
    voice.symlink_to(model)
    shutil.copy(model.with_name(model.name + ".json"), env / "bundle_voice.onnx.json")
    out = env / "dist"
    r = subprocess.run([sys.executable, "-m", "edgeplan.cli", "bundle", "--board", "x86-64", "--voice", str(voice),
                        "--whisper", str(d), "--vad", str(pinned("silero_vad")), "-o", str(out)],
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout + r.stderr
    names = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert {"edgeplan-speech", "voice.eplan", "voice.onnx.json", "vad.eplan", "asr/encoder.eplan",
            "asr/decoder_with_past.eplan", "asr/whisper.txt", "asr/vocabulary.txt", "README.md"} <= names
    assert "asr/decoder.eplan" not in names   # the cached decoder runs the prompt too
    wav = pinned("speech_beckett") / "beckett.wav"
    run = lambda *a: subprocess.run([str(out / "edgeplan-speech"), *map(str, a)], capture_output=True, text=True,  # noqa: E731
                                    cwd=out, env={"PATH": "/usr/bin:/bin"}, timeout=900)
    r = run("asr", "asr", wav)
    assert r.returncode == 0 and r.stdout.strip() == f"text: {TEXT}", r.stderr
    r = run("vad", "vad.eplan", wav)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 6, r.stderr
    r = run("tts", "voice.eplan", "--ids", "1,0,20,0,59,0,24,0,2", "-o", "out.wav")
    assert r.returncode == 0 and (out / "out.wav").stat().st_size > 44, r.stderr
    assert "beyond them" in r.stderr
