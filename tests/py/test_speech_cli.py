"""The speech demo commands: `edgeplan asr PLAN WAV` and `edgeplan tts PLAN -o out.wav`,
WAV in and out with the standard library (edgeplan.wav), and the combined TTS model (models/tts.py tts:
acoustic model + vocoder in one graph).

The weights are random, so the text is noise: these tests check the plumbing (the command prints what
Session.run + CTC greedy decoding gives on the same samples), the shapes and lengths, determinism, and
the clear errors (wrong sample rate, too many tokens)."""
from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import wave
from importlib import import_module

import numpy as np
import onnx
import pytest

import edgeplan
from conftest import zoo
from edgeplan import speech
from edgeplan.wav import WavError, read_wav, resample, write_wav


def _zoo():
    return zoo()


Z = _zoo()
ASR = import_module(Z.__name__ + ".asr")
TTS = import_module(Z.__name__ + ".tts")


def cli(*args, ok=True):
    """python -m edgeplan.cli: the edgeplan this test imports (the console script runs the same main)."""
    r = subprocess.run([sys.executable, "-m", "edgeplan.cli", *map(str, args)], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ))
    if ok:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def audio(n: int, seed: int = 0) -> np.ndarray:
    """Speech-like test audio [n]: a gliding, amplitude-modulated harmonic tone plus a little noise."""
    t = np.arange(n) / 16000.0
    f0 = 120.0 + 40.0 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / 16000.0
    x = sum(np.sin(k * phase) / k for k in range(1, 6)) * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t)) * 0.2
    return (x + 0.01 * np.random.default_rng(seed).standard_normal(n)).astype(np.float32)


def line(out: str, key: str) -> str:
    m = re.search(rf"^{key}: ?(.*)$", out, re.M)
    assert m, f"no '{key}:' line in\n{out}"
    return m.group(1)


# ------------------------------------------------------------------------------------------------ wav
def test_wav_round_trip_16bit(tmp_path):
    x = np.random.default_rng(0).uniform(-1, 1, 5000).astype(np.float32)
    x[:3] = [-1.0, 0.0, 1.0]
    assert write_wav(tmp_path / "a.wav", x[None, None], 16000) == 5000          # [1, 1, n] accepted
    with wave.open(str(tmp_path / "a.wav")) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()) == (1, 2, 16000, 5000)
    y, rate = read_wav(tmp_path / "a.wav", rate=16000)
    assert rate == 16000 and y.dtype == np.float32 and y.shape == (5000,)
    assert np.abs(y[3:] - x[3:]).max() <= 0.5 / 32768 + 1e-7                  # half an int16 step
    assert y[0] == -1.0 and y[1] == 0.0 and abs(y[2] - 1.0) <= 1 / 32768          # +1 clips to 32767
    write_wav(tmp_path / "b.wav", np.array([3.0, -7.0, 0.25], np.float32), 8000)    # clipped
    np.testing.assert_array_equal(read_wav(tmp_path / "b.wav")[0], [32767 / 32768, -1.0, 0.25])
    with pytest.raises(ValueError, match="NaN"):
        write_wav(tmp_path / "c.wav", np.array([np.nan], np.float32), 8000)


def test_wav_wrong_rate_and_not_wav(tmp_path):
    write_wav(tmp_path / "a.wav", np.zeros(100, np.float32), 44100)
    with pytest.raises(WavError, match="sample rate 44100 Hz, expected 16000 Hz"):
        read_wav(tmp_path / "a.wav", rate=16000)
    (tmp_path / "junk.wav").write_bytes(b"not a wav at all" * 4)
    with pytest.raises(WavError, match="not a PCM WAV"):
        read_wav(tmp_path / "junk.wav")


@pytest.mark.parametrize("width", [1, 2, 3, 4])
def test_wav_read_widths_and_stereo(tmp_path, width):
    """8-bit (unsigned), 16/24/32-bit (signed) PCM; two channels averaged to mono."""
    rng = np.random.default_rng(width)
    bits = 8 * width
    ints = rng.integers(-(1 << (bits - 1)), 1 << (bits - 1), (300, 2))
    if width == 1:
        raw = (ints + 128).astype(np.uint8).tobytes()
    elif width == 3:
        u = (ints % (1 << 24)).astype(np.uint32).reshape(-1)
        raw = np.stack([u & 255, (u >> 8) & 255, (u >> 16) & 255], 1).astype(np.uint8).tobytes()
    else:
        raw = ints.astype(f"<i{width}").tobytes()
    with wave.open(str(tmp_path / "s.wav"), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(width)
        w.setframerate(16000)
        w.writeframes(raw)
    ref = ints / float(1 << (bits - 1))
    y, _ = read_wav(tmp_path / "s.wav", mono=False)
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-7)
    y, _ = read_wav(tmp_path / "s.wav", rate=16000)
    np.testing.assert_allclose(y, ref.mean(1), rtol=0, atol=1e-7)


def test_resample_and_ctc_greedy():
    t = np.arange(22050) / 22050
    y = resample(np.sin(2 * np.pi * 440 * t).astype(np.float32), 22050, 16000)
    assert y.shape == (16000,)
    np.testing.assert_allclose(y, np.sin(2 * np.pi * 440 * np.arange(16000) / 16000), atol=1e-3)
    assert speech.ctc_greedy([0, 3, 3, 0, 3, 5, 5, 0, 0, 2]) == [3, 3, 5, 2]
    assert speech.ctc_greedy([]) == []
    assert speech.ASR_RATE == ASR.SAMPLE_RATE and speech.TTS_RATE == TTS.SAMPLE_RATE


def test_vocab_file_round_trip(tmp_path):
    r = cli("asr", "--write-vocab", tmp_path / "v.txt")
    assert "32 tokens" in r.stdout
    v = speech.load_vocab(tmp_path / "v.txt")
    assert len(v) == len(ASR.ASR_VOCAB) and v[0] == "<b>"
    ids = [ASR.ASR_VOCAB.index(c) for c in "hi there"]
    assert speech.decode_text(ids, v) == "hi there" == ASR.ctc_greedy_text(ids)


# ------------------------------------------------------------------------------------------------ ASR
@pytest.fixture(scope="module")
def asr_plan(tmp_path_factory):
    """One ASR plan for 0.025..1.5 s (short, so the chunking is exercised cheaply)."""
    d = tmp_path_factory.mktemp("asr")
    onnx.save(Z.build("asr"), d / "asr.onnx")
    r = cli("compile", d / "asr.onnx", "--dim", "samples=400..24000", "-o", d / "asr.eplan")
    assert "compiled" in r.stdout
    cli("asr", "--write-vocab", d / "vocab.txt")
    return d


def direct(plan, x: np.ndarray) -> list:
    """What the command must print: Session.run on the same samples + CTC greedy decoding."""
    s = edgeplan.Session(plan)
    return speech.ctc_greedy(s.run({"audio": x[None]})["tokens"])


def test_asr_command_prints_the_plans_tokens(asr_plan):
    d = asr_plan
    write_wav(d / "one.wav", audio(16000, seed=1), 16000)
    x, _ = read_wav(d / "one.wav")                                 # the samples after int16 quantisation
    r = cli("asr", d / "asr.eplan", d / "one.wav", "--vocab", d / "vocab.txt", "--repeat", "2")
    ids = [int(t) for t in line(r.stdout, "tokens").split()]
    assert ids == direct(d / "asr.eplan", x) and ids
    assert line(r.stdout, "text") == repr(ASR.ctc_greedy_text(ids))   # gibberish: the weights are random
    assert f"frames: {ASR.asr_frames(16000)} -> {len(ids)} tokens" in r.stdout
    for word in ("latency:", "real-time factor", "arena:", "peak RSS", "samples=400..24000"):
        assert word in r.stdout
    assert "text:" not in cli("asr", d / "asr.eplan", d / "one.wav").stdout


def test_asr_long_audio_in_chunks(asr_plan):
    """2.5 s through a 1.5 s plan: two equal pieces, each recognised on its own."""
    d = asr_plan
    write_wav(d / "long.wav", audio(40000, seed=2), 16000)
    x, _ = read_wav(d / "long.wav")
    r = cli("asr", d / "asr.eplan", d / "long.wav")
    assert "chunks: 2 of at most 20000 samples" in r.stdout
    s = edgeplan.Session(d / "asr.eplan")
    frames = np.concatenate([s.run({"audio": x[None, a:b]})["tokens"][0] for a, b in ((0, 20000), (20000, 40000))])
    assert [int(t) for t in line(r.stdout, "tokens").split()] == speech.ctc_greedy(frames)
    r = cli("asr", d / "asr.eplan", d / "long.wav", "--chunk-seconds", "1")
    assert "chunks: 3 of at most 16000 samples (--chunk-seconds)" in r.stdout


def test_asr_errors(asr_plan, tmp_path):
    d = asr_plan
    write_wav(tmp_path / "cd.wav", audio(4000), 44100)
    r = cli("asr", d / "asr.eplan", tmp_path / "cd.wav", ok=False)
    assert r.returncode == 1 and "sample rate 44100 Hz, expected 16000 Hz" in r.stderr
    write_wav(tmp_path / "short.wav", audio(100), 16000)            # under the plan's minimum: padded
    r = cli("asr", d / "asr.eplan", tmp_path / "short.wav")
    assert "300 samples of silence padded" in r.stdout
    r = cli("asr", d / "asr.eplan", ok=False)
    assert r.returncode == 2


# ------------------------------------------------------------------------------------------------ TTS
@functools.lru_cache(maxsize=None)
def tts_model():
    return Z.build("tts")


def test_tts_model_is_acoustic_then_vocoder():
    import onnxruntime as ort

    def run(m, feeds):
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))
    m = tts_model()
    onnx.checker.check_model(m, full_check=True)
    assert [i.name for i in m.graph.input] == ["tokens"]
    assert [o.name for o in m.graph.output] == ["audio", "mel", "durations"]
    tok = TTS.tts_tokens("edge plan")
    y = run(m, {"tokens": tok})
    mel = run(Z.build("tts_acoustic"), {"tokens": tok})["mel"]
    np.testing.assert_array_equal(y["mel"], mel)
    np.testing.assert_array_equal(y["audio"], run(Z.build("hifigan"), {"mel": mel})["audio"])
    assert y["audio"].shape == (1, 1, TTS.HOP * int(y["durations"].sum()))
    assert Z.build("tts").SerializeToString() == m.SerializeToString()


@pytest.fixture(scope="module")
def tts_plan(tmp_path_factory):
    d = tmp_path_factory.mktemp("tts")
    onnx.save(tts_model(), d / "tts.onnx")
    r = cli("compile", d / "tts.onnx", "--dim", "N=1..32", "--dim", "frames=1..256", "-o", d / "tts.eplan")
    assert "N=1..32, frames=1..256" in r.stdout
    return d


def test_tts_command_writes_the_plans_audio(tts_plan):
    d = tts_plan
    tokens = [20, 17, 24, 24, 27, 1, 9, 12, 15]
    r = cli("tts", d / "tts.eplan", "--tokens", ",".join(map(str, tokens)), "-o", d / "a.wav")
    ref = edgeplan.Session(d / "tts.eplan").run({"tokens": np.array([tokens], np.int64)})
    frames = int(ref["durations"].sum())
    assert ref["mel"].shape == (1, 80, frames) and ref["audio"].shape == (1, 1, TTS.HOP * frames)
    assert line(r.stdout, "frames").split()[0] == str(frames)
    assert f"samples: {TTS.HOP * frames} " in r.stdout and "real-time factor" in r.stdout
    with wave.open(str(d / "a.wav")) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, TTS.SAMPLE_RATE)
        assert w.getnframes() == TTS.HOP * frames
    y, _ = read_wav(d / "a.wav", rate=TTS.SAMPLE_RATE)
    assert np.abs(y - ref["audio"].reshape(-1)).max() <= 0.5 / 32768 + 1e-6
    assert float(np.abs(y).max()) > 1e-2                             # not silence
    cli("tts", d / "tts.eplan", "--tokens", ",".join(map(str, tokens)), "-o", d / "b.wav")
    assert (d / "a.wav").read_bytes() == (d / "b.wav").read_bytes()   # deterministic


def test_tts_errors(tts_plan):
    d = tts_plan
    r = cli("tts", d / "tts.eplan", "--tokens", ",".join(["5"] * 33), "-o", d / "x.wav", ok=False)
    assert r.returncode == 1 and "33 tokens; this plan takes 1..32" in r.stderr
    r = cli("tts", d / "tts.eplan", "-o", d / "x.wav", ok=False)
    assert r.returncode == 2 and "--tokens" in r.stderr


def test_tts_then_asr_round_trip(tts_plan, asr_plan):
    """text -> tts plan -> 16 kHz wav -> asr plan -> tokens: runs end to end and equals the direct runs."""
    r = cli("tts", tts_plan / "tts.eplan", "--text", "hello edge", "--rate", "16000", "-o", tts_plan / "rt.wav")
    assert f"tokens: {len(TTS.tts_tokens('hello edge')[0])} " in r.stdout and "resampled to" in r.stdout
    x, rate = read_wav(tts_plan / "rt.wav", rate=16000)
    ref = edgeplan.Session(tts_plan / "tts.eplan").run({"tokens": TTS.tts_tokens("hello edge")})["audio"].reshape(-1)
    assert abs(len(x) - round(len(ref) * 16000 / TTS.SAMPLE_RATE)) == 0
    r = cli("asr", asr_plan / "asr.eplan", tts_plan / "rt.wav", "--vocab", asr_plan / "vocab.txt")
    ids = [int(t) for t in line(r.stdout, "tokens").split()]
    assert ids == speech.transcribe(edgeplan.Session(asr_plan / "asr.eplan"), x)["ids"]
