"""The round trip as the end-to-end test (bench/roundtrip.py): 22 fixed sentences spoken by the real
Piper voice, resampled to 16 kHz, transcribed by the real Whisper tiny.en. edgeplan's pipeline must
reach onnxruntime's word error rate (same .onnx files) within 1 point, and at most 15%."""
from __future__ import annotations

import importlib.util
import shutil

import pytest

from conftest import ROOT, pinned

pytest.importorskip("onnxruntime")
pytest.importorskip("scipy")


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_tts_then_asr_reaches_onnxruntimes_word_error_rate(tmp_path, monkeypatch):
    monkeypatch.setenv("EDGEPLAN_CACHE", str(tmp_path / "cache"))
    rt = _load("roundtrip", ROOT / "bench" / "roundtrip.py")
    tool = _load("whisper_ct2", ROOT / "tools" / "whisper_ct2.py")
    tool.convert(pinned("whisper_tiny_en_ct2"), tmp_path / "whisper")
    voice = tmp_path / "voice.onnx"
    model = pinned("piper_en_us_joe_medium")
    voice.symlink_to(model)
    shutil.copy(model.with_name(model.name + ".json"), tmp_path / "voice.onnx.json")
    r = rt.run(voice, tmp_path / "whisper", log=lambda *a: None)
    ep, ref = r["edgeplan"], r["onnxruntime"]
    print(f"WER edgeplan {100 * ep['wer']:.1f}%, onnxruntime {100 * ref['wer']:.1f}% over {ep['words']} words")
    assert len(ep["rows"]) >= 20
    assert ep["wer"] <= 0.15, ep["rows"]
    assert abs(ep["wer"] - ref["wer"]) <= 0.01, (ep["rows"], ref["rows"])
