"""`edgeplan tts VOICE` on a real Piper voice (en_US-joe-medium from the pinned suite, tests/models): ids
from the voice's phoneme_id_map as Piper builds them, the plan compiled once and cached, the audio against
onnxruntime running the same voice on the unpadded ids, and the clear errors.

The plan takes a fixed number of ids (padded; input_lengths says how many are real), so its audio is
compared with onnxruntime's on the ids alone: the text encoder masks the padding, and the two agree to
float rounding (measured 6e-5 of the peak). Noise scales are 0 so that the voice is deterministic."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import wave

import numpy as np
import pytest

from conftest import pinned

ort = pytest.importorskip("onnxruntime")
from edgeplan import piper  # noqa: E402

VOICE_ID = "piper_en_us_joe_medium"
IPA = "həlˈoʊ wˈɜːld."


@pytest.fixture(scope="module")
def voice_files(tmp_path_factory):
    """The voice's .onnx and .onnx.json in a folder of their own, and a cache that holds its plan."""
    model = pinned(VOICE_ID)
    d = tmp_path_factory.mktemp("voice")
    onnx_path = d / "en_US-joe-medium.onnx"
    os.symlink(model, onnx_path)
    shutil.copy(model.with_name(f"{VOICE_ID}.onnx.json"), d / "en_US-joe-medium.onnx.json")
    return onnx_path, d / "cache"


def _tts(voice, cache, *args, ok=True):
    env = dict(os.environ, EDGEPLAN_CACHE=str(cache))
    r = subprocess.run([sys.executable, "-m", "edgeplan.cli", "tts", str(voice), *args], capture_output=True,
                       text=True, env=env, timeout=600)
    assert (r.returncode == 0) == ok, r.stdout + r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    return r


def _wav(path):
    with wave.open(str(path), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, 22050)
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768.0


def _reference(onnx_path, ids, scales=(0.0, 1.0, 0.0)):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    s = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
    x = np.array([ids], np.int64)
    return s.run(None, {"input": x, "input_lengths": np.array([len(ids)], np.int64),
                        "scales": np.array(scales, np.float32)})[0].reshape(-1)


def test_ids_are_built_as_piper_builds_them(voice_files):
    onnx_path, _ = voice_files
    v = piper.Voice.load(onnx_path)
    m = json.loads((onnx_path.parent / "en_US-joe-medium.onnx.json").read_text())["phoneme_id_map"]
    want = m["^"] + m["_"]
    for p in "həlˈoʊ":
        want += m[p] + m["_"]
    assert v.ids("həlˈoʊ") == want + m["$"]
    assert v.ids("hə\u2603") == m["^"] + m["_"] + m["h"] + m["_"] + m["ə"] + m["_"] + m["$"]
    assert v.missing("hə\u2603") == "\u2603"
    assert (v.rate, v.scales, v.espeak_voice) == (22050, (0.667, 1.0, 0.8), "en-us")


def test_tts_speaks_ipa_as_onnxruntime_does_and_caches_its_plan(voice_files, tmp_path):
    onnx_path, cache = voice_files
    out = tmp_path / "hello.wav"
    r = _tts(onnx_path, cache, "--ipa", IPA, "--noise-scale", "0", "--noise-w", "0", "-o", str(out))
    assert "compiling" in r.stdout and "real-time factor" in r.stdout and "peak RSS" in r.stdout
    ids = piper.Voice.load(onnx_path).ids(IPA)
    ref = _reference(onnx_path, ids)
    got = _wav(out)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    err = np.abs(got - np.clip(ref, -1, 32767 / 32768)).max() / np.abs(ref).max()
    assert err < 1e-3, err           # 16-bit PCM: half a step is 1.5e-5 of full scale
    # the second run opens the cached plan; a length scale of 2 speaks about twice as long
    r = _tts(onnx_path, cache, "--ipa", IPA, "--noise-scale", "0", "--noise-w", "0", "--length-scale", "2",
             "-o", str(out))
    assert "compiling" not in r.stdout
    assert 1.7 < _wav(out).size / ref.size < 2.3


def test_tts_runs_a_plan_with_the_voice_config_beside_it(voice_files, tmp_path):
    onnx_path, cache = voice_files
    _tts(onnx_path, cache, "--ids", "1,0,20,0,2", "-o", str(tmp_path / "warm.wav"))   # the plan is cached
    plan = next((cache / "voices").glob("*.eplan"))
    shutil.copy(plan, tmp_path / "joe.eplan")
    shutil.copy(onnx_path.parent / "en_US-joe-medium.onnx.json", tmp_path / "joe.eplan.json")
    ids = [1, 0, 20, 0, 59, 0, 24, 0, 27, 0, 10, 0, 2]
    out = tmp_path / "ids.wav"
    r = _tts(tmp_path / "joe.eplan", tmp_path / "nocache", "--ids", ",".join(map(str, ids)), "--noise-scale", "0",
             "--noise-w", "0", "-o", str(out))
    assert "compiling" not in r.stdout
    ref = _reference(onnx_path, ids)
    got = _wav(out)
    assert got.shape == ref.shape and np.abs(got - ref).max() / np.abs(ref).max() < 1e-3


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_tts_phonemizes_text_with_espeak_sentence_by_sentence(voice_files, tmp_path):
    onnx_path, cache = voice_files
    out = tmp_path / "text.wav"
    r = _tts(onnx_path, cache, "--text", "Hello world. How are you, my friend?", "--noise-scale", "0",
             "--noise-w", "0", "-o", str(out))
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("sentence ")]
    assert len(lines) == 2 and "həlˈoʊ wˈɜːld." in lines[0] and "," in lines[1] and lines[1].endswith("?")
    v = piper.Voice.load(onnx_path)
    ref = np.concatenate([_reference(onnx_path, v.ids(piper.phonemize(s, "en-us")))
                          for s in ("Hello world.", "How are you, my friend?")])
    got = _wav(out)
    assert got.shape == ref.shape and np.abs(got - ref).max() / np.abs(ref).max() < 1e-3


def test_tts_bad_input_gets_a_clear_message(voice_files, tmp_path):
    onnx_path, cache = voice_files
    out = tmp_path / "x.wav"
    r = _tts(onnx_path, cache, "--ipa", "...", "-o", str(out), ok=False)
    assert "no phoneme this voice speaks" in r.stderr and not out.exists()
    r = _tts(onnx_path, cache, "--ids", "1,0,999,0,2", "-o", str(out), ok=False)
    assert "id 999 is not one of this voice's 256 phoneme ids" in r.stderr
    r = _tts(onnx_path, cache, "--ids", "1,2", "--ipa", "a", "-o", str(out), ok=False)
    assert "one of --text" in r.stderr
    lone = tmp_path / "lone.onnx"
    os.symlink(onnx_path.resolve(), lone)
    r = _tts(lone, cache, "--ipa", IPA, "-o", str(out), ok=False)
    assert "no voice config" in r.stderr and "lone.onnx.json" in r.stderr
    (tmp_path / "bad.json").write_text("{\"audio\": {}}")
    r = _tts(onnx_path, cache, "--ipa", IPA, "--config", str(tmp_path / "bad.json"), "-o", str(out), ok=False)
    assert "not a Piper voice config" in r.stderr


@pytest.mark.slow
def test_a_sentence_longer_than_the_plan_fails_and_says_what_to_do(voice_files, tmp_path):
    """A plan for 0.3 s (25 frames) and a sentence of about a second: the run fails at the bound, no wav."""
    onnx_path, cache = voice_files
    out = tmp_path / "long.wav"
    r = _tts(onnx_path, cache, "--ipa", "ðɪs ɪz ɐ lˈɔŋ sˈɛntəns.", "--max-seconds", "0.3", "-o", str(out), ok=False)
    assert "past its bound" in r.stderr or "bound" in r.stderr, r.stderr
    assert "--max-seconds" in r.stderr and not out.exists()
