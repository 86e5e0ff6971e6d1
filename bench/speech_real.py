#!/usr/bin/env python3
"""edgeplan vs onnxruntime on the real speech models (a benchmark, not a test): one process, one
thread each, the two engines' calls alternating, the median of each and the median of the per-round
ratios (edgeplan / onnxruntime: lower is better for edgeplan), with their range.

    voice        Piper en_US-joe-medium on one sentence (edgeplan: its 96-id plan, ids padded;
                 onnxruntime: the ids alone), noise scales 0
    encoder      Whisper tiny.en's encoder on a 30 s window (log-mel in the graph)
    decoder step Whisper tiny.en's decoder_with_past at 20 cached tokens (inputs set per step as the
                 decoding loop sets them: token, offset, the cache; cross keys / values set once)
    vad window   Silero VAD v6, one 512-sample window with its state (edgeplan: the state in the arena);
                 from Python (both engines' calls), and from C: edgeplan-speech vad over 20 s of audio
                 (its per-window figure, the plan's run alone) against onnxruntime's Python call per
                 window over the same windows, rounds alternating

    python3 bench/speech_real.py [--runs N] [--cache DIR]

Needs the pinned models (tests/models/fetch.py) and espeak-ng is not needed (fixed ids)."""
from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def alternate(f_ep, f_ort, runs: int) -> tuple:
    """(edgeplan's median ms, onnxruntime's median ms, the median of the per-round ratios, their range)"""
    f_ep(), f_ort()
    a, b = [], []
    for _ in range(runs):
        t = time.perf_counter()
        f_ep()
        a.append(time.perf_counter() - t)
        t = time.perf_counter()
        f_ort()
        b.append(time.perf_counter() - t)
    r = [x / y for x, y in zip(a, b)]
    return statistics.median(a) * 1e3, statistics.median(b) * 1e3, statistics.median(r), (min(r), max(r))


def _row(name, t, note=""):
    ep_ms, ort_ms, ratio, (lo, hi) = t
    return (name, ep_ms, ort_ms, f"{note}{'; ' if note else ''}ratio range {lo:.2f}..{hi:.2f}", ratio)


def _speech_tool():
    lib = os.environ.get("EDGEPLAN_LIB")
    for p in ([Path(lib).with_name("edgeplan-speech")] if lib else []) + [Path(sys.executable).with_name("edgeplan-speech")]:
        if p.is_file():
            return p
    found = shutil.which("edgeplan-speech")
    return Path(found) if found else None


def _vad_from_c(tool, onnx_path, vo, rounds: int) -> tuple:
    """edgeplan-speech vad's per-window latency against onnxruntime's Python call on the same windows."""
    import wave
    from edgeplan.vad import compile_vad
    d = Path(tempfile.mkdtemp(prefix="edgeplan-vad-"))
    compile_vad(onnx_path).save(d / "vad.eplan")
    pcm = (np.random.default_rng(3).standard_normal(16000 * 20) * 3000).clip(-32768, 32767).astype("<i2")
    with wave.open(str(d / "in.wav"), "wb") as f:
        f.setnchannels(1), f.setsampwidth(2), f.setframerate(16000), f.writeframes(pcm.tobytes())
    x = pcm.astype(np.float32) / 32768
    wins = [np.concatenate([x[max(0, k - 64):k] if k else np.zeros(64, np.float32), x[k:k + 512]])[None]
            for k in range(0, len(x) - 512 + 1, 512)]
    state, sr = np.zeros((2, 1, 128), np.float32), np.array(16000, np.int64)
    ep, ort_, ratios = [], [], []
    for _ in range(rounds):
        r = subprocess.run([str(tool), "vad", str(d / "vad.eplan"), str(d / "in.wav")], capture_output=True,
                           text=True, check=True)
        c_ms = float(r.stderr.split(" ms a window")[0].rsplit(" ", 1)[1])
        t = time.perf_counter()
        for w in wins:
            state = vo.run(None, {"input": w, "state": state, "sr": sr})[1]
        o_ms = (time.perf_counter() - t) * 1e3 / len(wins)
        ep.append(c_ms), ort_.append(o_ms), ratios.append(c_ms / o_ms)
    return ("vad window (C tool vs onnxruntime's Python call)", statistics.median(ep), statistics.median(ort_),
            f"the ratio: median of {rounds} per-round ratios ({min(ratios):.2f}..{max(ratios):.2f})",
            statistics.median(ratios))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--cache", help="EDGEPLAN_CACHE for the compiled plans (default a temporary folder)")
    a = ap.parse_args()
    os.environ["EDGEPLAN_CACHE"] = a.cache or tempfile.mkdtemp(prefix="edgeplan-bench-")
    sys.path.insert(0, str(ROOT / "pyapi"))
    import onnxruntime as ort
    import edgeplan
    from edgeplan import piper
    fetch = _load("fetch", ROOT / "tests" / "models" / "fetch.py")
    cache = fetch.cache_dir()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    rows = []

    # voice
    voice = cache / "piper_en_us_joe_medium.onnx"
    v = piper.Voice.load(voice)
    ids = [1, 0] + [i for p in (20, 59, 24, 120, 27, 100, 3, 35, 120, 62, 122, 24, 17, 10) for i in (p, 0)] + [2]
    sess = v.session_for(len(ids))
    o = ort.InferenceSession(str(voice), so, providers=["CPUExecutionProvider"])
    x = np.full((1, sess.inputs[0].shape[-1]), 0, np.int64)
    x[0, :len(ids)] = ids
    sc = np.array([0, 1, 0], np.float32)
    audio_s = len(v.speak(ids, 0, 1, 0)) / v.rate
    t = alternate(lambda: sess.run(input=x, input_lengths=np.array([len(ids)], np.int64), scales=sc),
                  lambda: o.run(None, {"input": np.array([ids], np.int64),
                                       "input_lengths": np.array([len(ids)], np.int64), "scales": sc}), a.runs)
    rows.append(_row(f"voice ({audio_s:.2f} s of audio)", t,
                     f"RTF {t[0] / 1e3 / audio_s:.3f} vs {t[1] / 1e3 / audio_s:.3f}"))

    # whisper
    tool = _load("whisper_ct2", ROOT / "tools" / "whisper_ct2.py")
    wd = Path(tempfile.mkdtemp(prefix="edgeplan-whisper-"))
    tool.convert(cache / "whisper_tiny_en_ct2", wd)
    from edgeplan.whisper import Whisper
    asr = Whisper(wd)
    enc, enc_o = asr.sessions["encoder"], ort.InferenceSession(str(wd / "encoder.onnx"), so)
    audio = (np.random.default_rng(0).standard_normal((1, 480000)) * 0.05).astype(np.float32)
    rows.append(_row("whisper encoder (30 s window)",
                     alternate(lambda: enc.run(audio=audio), lambda: enc_o.run(None, {"audio": audio}), a.runs)))
    e = enc.run(audio=audio)
    past, past_o = asr.sessions["decoder_with_past"], ort.InferenceSession(str(wd / "decoder_with_past.onnx"), so)
    P = 20
    rng = np.random.default_rng(1)
    pk = rng.standard_normal((4, 1, 6, P, 64)).astype(np.float32)
    pv = rng.standard_normal((4, 1, 6, P, 64)).astype(np.float32)
    cross = {k: v for k, v in e.items() if k.startswith("cross_")}
    for k, v in cross.items():
        past.set_input(k, v)
    tok, off = np.array([[440]], np.int64), np.array([P], np.int64)
    feeds_o = dict(cross, tokens=tok, offset=off, past_k=pk, past_v=pv)
    rows.append(_row(f"whisper decoder step ({P} cached)",
                     alternate(lambda: past.run(tokens=tok, offset=off, past_k=pk, past_v=pv, copy=False),
                               lambda: past_o.run(None, feeds_o), a.runs * 3)))

    # vad
    from edgeplan.vad import SileroVad
    vad = SileroVad(cache / "silero_vad.onnx")
    vo = ort.InferenceSession(str(cache / "silero_vad.onnx"), so)
    w = (np.random.default_rng(2).standard_normal((1, 576)) * 0.1).astype(np.float32)
    state = np.zeros((2, 1, 128), np.float32)
    sr = np.array(16000, np.int64)
    rows.append(_row("vad window (Python call)",
                     alternate(lambda: vad.session.run(input=w, copy=False),
                               lambda: vo.run(None, {"input": w, "state": state, "sr": sr}), a.runs * 20)))
    speech_tool = _speech_tool()
    if speech_tool:
        rows.append(_vad_from_c(speech_tool, cache / "silero_vad.onnx", vo, max(3, a.runs // 2)))

    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")),
               platform.processor())
    flags = open("/proc/cpuinfo").read()
    isa = "AVX-512 present" if " avx512f" in flags else "AVX2"
    print(f"{cpu} ({isa}; edgeplan's x86 kernels are AVX2), 1 thread, medians of {a.runs}+ alternating calls\n")
    print("| case | edgeplan ms | onnxruntime ms | ratio (median of per-round ratios) | |")
    print("|---|---|---|---|---|")
    for name, ep_ms, ort_ms, note, ratio in rows:
        print(f"| {name} | {ep_ms:.2f} | {ort_ms:.2f} | {ratio:.2f} | {note} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
