"""`edgeplan vad MODEL WAV` and `edgeplan asr ... --vad MODEL`: Silero VAD v6 (the silero-vad wheel's
export) as a stream with its state in the arena, on a real recording (beckett.wav), against onnxruntime
fed the same windows and its own state; speech segments by silero-vad's rules (edgeplan.vad)."""
from __future__ import annotations

import subprocess
import sys
import wave

import numpy as np
import pytest

from conftest import pinned

ort = pytest.importorskip("onnxruntime")
from edgeplan.vad import Params, SileroVad, speech_segments  # noqa: E402


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("EDGEPLAN_CACHE", str(tmp_path_factory.mktemp("vadcache")))
    model, wav = pinned("silero_vad"), pinned("speech_beckett") / "beckett.wav"
    with wave.open(str(wav), "rb") as w:
        x = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768.0
    yield model, wav, x
    mp.undo()


def _ort_probs(model, x, window=512, context=64):
    s = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    n = -(-len(x) // window)
    x = np.concatenate([np.zeros(context, np.float32), x, np.zeros(n * window - len(x), np.float32)])
    state, out = np.zeros((2, 1, 128), np.float32), []
    for k in range(n):
        p, state = s.run(None, {"input": x[None, k * window:(k + 1) * window + context], "state": state,
                                "sr": np.array(16000, np.int64)})
        out.append(float(p.reshape(-1)[0]))
    return np.array(out, np.float32)


def _cli(*args, ok=True):
    r = subprocess.run([sys.executable, "-m", "edgeplan.cli", *map(str, args)], capture_output=True, text=True,
                       timeout=900)
    assert (r.returncode == 0) == ok, r.stdout + r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    return r


def test_the_stream_matches_onnxruntime_and_so_do_the_segments(files):
    model, wav, x = files
    got = SileroVad(model).probabilities(x)
    want = _ort_probs(model, x)
    assert got.shape == want.shape == (312,)
    assert np.abs(got - want).max() < 1e-4, np.abs(got - want).max()
    segs = speech_segments(want, len(x))
    assert len(segs) == 6                  # the recording's six phrases
    r = _cli("vad", model, wav)
    lines = r.stdout.split()
    assert [(round(float(a) * 16000), round(float(b) * 16000)) for a, b in zip(lines[::2], lines[1::2])] == \
        [(s, e) for s, e in segs]
    assert "6 segment(s)" in r.stderr


def test_segments_follow_silero_vads_rules():
    w = 512
    p = np.array([0.0] * 10 + [0.9] * 20 + [0.0] * 2 + [0.9] * 20 + [0.0] * 30 + [0.9] * 3 + [0.0] * 10, np.float32)
    n = len(p) * w
    segs = speech_segments(p, n, w, 16000, Params())
    # a 2-window dip (64 ms) is under min_silence (100 ms): one segment; 3 windows of speech (96 ms) are
    # under min_speech (250 ms): dropped; 30 ms of padding each side
    assert segs == [(10 * w - 480, 52 * w + 480)]
    # a 30 ms minimum silence ends it at the dip (measured from the dip's first window to its last)
    assert speech_segments(p, n, w, 16000, Params(min_silence_ms=30)) == [(10 * w - 480, 30 * w + 480),
                                                                          (32 * w - 480, 52 * w + 480)]
    assert speech_segments(np.zeros(20, np.float32), 20 * w) == []
    assert speech_segments(np.full(20, 0.9, np.float32), 20 * w) == [(0, 20 * w)]     # speech to the end


def test_vad_bad_input_gets_a_clear_message(files, tmp_path):
    model, wav, _ = files
    with wave.open(str(tmp_path / "44k.wav"), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(44100), w.writeframes(b"\0\0" * 100)
    assert "8000 or 16000 Hz" in _cli("vad", model, tmp_path / "44k.wav", ok=False).stderr
    with wave.open(str(tmp_path / "empty.wav"), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000), w.writeframes(b"")
    assert "no samples" in _cli("vad", model, tmp_path / "empty.wav", ok=False).stderr
    other = pinned("ort_sigmoid")
    assert "not a Silero VAD" in _cli("vad", other, wav, ok=False).stderr


def test_asr_with_vad_transcribes_the_speech_segments(files, tmp_path):
    import importlib.util
    from conftest import ROOT
    spec = importlib.util.spec_from_file_location("whisper_ct2", ROOT / "tools" / "whisper_ct2.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    model, wav, _ = files
    tool.convert(pinned("whisper_tiny_en_ct2"), tmp_path / "w")
    r = _cli("asr", tmp_path / "w", wav, "--vad", model)
    assert "vad: 6 speech segment(s)" in r.stdout
    assert "text: ever tried, ever failed. No matter, try again. Fail again. Fail better." in r.stdout
