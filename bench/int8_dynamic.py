#!/usr/bin/env python3
"""Dynamic int8 (``--quantize int8-dynamic``) on the real Whisper tiny.en (a benchmark, not a test): per
graph, the plan's constant bytes against float32's, the output SQNR against the float32 plan on the pinned
recording, and the latency of the int8-dynamic plan over float32's (one process, one thread, the calls
alternating, median of per-round ratios with their range). The decoder step is timed at 24 cached tokens.

    python3 bench/int8_dynamic.py [--rounds N]

Needs the pinned models (tests/models/fetch.py)."""
from __future__ import annotations

import argparse
import importlib.util
import platform
import statistics
import sys
import tempfile
import time
import wave
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "pyapi"), str(ROOT / "tests" / "models")]

import edgeplan  # noqa: E402
import fetch  # noqa: E402


def _ct2tool():
    spec = importlib.util.spec_from_file_location("whisper_ct2", ROOT / "tools" / "whisper_ct2.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _sqnr(want, got) -> float:
    want, got = np.asarray(want, np.float64), np.asarray(got, np.float64)
    return float(10 * np.log10(np.sum(want ** 2) / max(np.sum((want - got) ** 2), 1e-300)))


def _time(a, b, feeds, rounds):
    ratios, ta, tb = [], [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        a.run(feeds)
        t1 = time.perf_counter()
        b.run(feeds)
        t2 = time.perf_counter()
        ta.append(t1 - t0)
        tb.append(t2 - t1)
        ratios.append((t2 - t1) / (t1 - t0))
    return statistics.median(ta), statistics.median(tb), statistics.median(ratios), min(ratios), max(ratios)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    a = ap.parse_args()
    tool = _ct2tool()
    from edgeplan.whisper import graph_dims
    import json
    man, cache = fetch.load_manifest(), fetch.cache_dir()
    entry = {x["id"]: x for x in man["models"] + man["files"]}
    src = fetch.files_dir(entry["whisper_tiny_en_ct2"], cache)
    wav = fetch.files_dir(entry["speech_beckett"], cache) / "beckett.wav"
    with wave.open(str(wav), "rb") as w:
        x = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768.0
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        tool.convert(src, d)
        dims = graph_dims(json.loads((d / "whisper.json").read_text()))
        print(f"{platform.processor() or platform.machine()}, 1 thread; ratio = int8-dynamic / float32 time")
        print(f"{'graph':20s} {'weights':>8s} {'SQNR':>8s} {'fp32 ms':>9s} {'int8 ms':>9s} {'ratio (range)':>22s}")
        audio = np.zeros((1, tool.CHUNK), np.float32)
        audio[0, :len(x)] = x
        enc = {q: edgeplan.compile(str(d / "encoder.onnx"), quantize=q) for q in (None, "int8-dynamic")}
        s = {q: edgeplan.Session(p) for q, p in enc.items()}
        feeds = {"audio": audio}
        hidden = s[None].run(feeds)["hidden"]
        sq = _sqnr(hidden, s["int8-dynamic"].run(feeds)["hidden"])
        fa, fb, r, lo, hi = _time(s[None], s["int8-dynamic"], feeds, a.rounds)
        w = enc["int8-dynamic"].report["const_bytes"] / enc[None].report["const_bytes"]
        print(f"{'encoder':20s} {w:8.2f} {sq:7.1f}dB {fa * 1e3:9.2f} {fb * 1e3:9.2f} {r:8.2f} ({lo:.2f}-{hi:.2f})")
        dec = {q: edgeplan.compile(str(d / "decoder_with_past.onnx"), dims=dims.get("decoder_with_past"),
                                   quantize=q) for q in (None, "int8-dynamic")}
        s = {q: edgeplan.Session(p) for q, p in dec.items()}
        rng = np.random.default_rng(0)
        feeds = {}
        for i in s[None].inputs:
            shp = [24 if n == "P" else hi for hi, n in zip(i.max_shape, i.dim_names)]
            if i.dtype == np.float32:
                feeds[i.name] = (rng.standard_normal(shp) * 0.5).astype(np.float32)
            else:
                feeds[i.name] = np.full(shp, 7, i.dtype)
        if "hidden" in feeds:
            feeds["hidden"] = hidden
        want = s[None].run(feeds)
        got = s["int8-dynamic"].run(feeds)
        sq = _sqnr(want["logits"], got["logits"])
        fa, fb, r, lo, hi = _time(s[None], s["int8-dynamic"], feeds, a.rounds)
        w = dec["int8-dynamic"].report["const_bytes"] / dec[None].report["const_bytes"]
        print(f"{'decoder step (P=24)':20s} {w:8.2f} {sq:7.1f}dB {fa * 1e3:9.2f} {fb * 1e3:9.2f} {r:8.2f} "
              f"({lo:.2f}-{hi:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
