#!/usr/bin/env python3
"""edgeplan vs onnxruntime on the speech models (a benchmark, not a test): latency, real-time factor,
load time and peak RSS, one thread, each measurement in its own child process (as bench/bench.py).

    asr   Conformer-CTC from raw 16 kHz audio, one plan for 0.025..10 s (--dim samples=400..160000),
          run on 1 s, 5 s and 10 s of audio
    kws   streaming GRU keyword spotter (one plan, --dim T=1..100, GRU state kept in the arena):
          per 10 ms chunk (1 feature frame per run, state fed back) and 1 s of frames in one run
    tts   FastSpeech-style acoustic model + HiFi-GAN vocoder in one graph, tokens -> 22.05 kHz audio
          (--dim N=1..64 --dim frames=1..512), on 8 and 24 tokens

Latency is the median over --runs calls after --warmup; RTF = latency / audio duration (for kws per
chunk: latency / 10 ms). Load is opening the model (edgeplan.Session vs onnxruntime.InferenceSession)
after the imports; peak RSS the child's own VmHWM. Ratios are edgeplan / onnxruntime (lower is better
for edgeplan). "max diff" is max |ep - ort| / max |ort| of the float output.

    python3 bench/speech.py                  # the full table
    python3 bench/speech.py --quick          # a fast sanity run (few runs)
    python3 bench/speech.py --runs 20 --markdown docs/performance.md   # (re)writes its section there
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Speech models (bench/speech.py, 1 thread, medians)"

CHILD = r"""
import json, resource, sys, time
import numpy as np

def peak_rss_mib():
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

engine, path, case = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
runs, warmup, out_path = case["runs"], case["warmup"], case["out"]
feeds = {k: np.load(v) for k, v in case["feeds"].items()}
if engine == "edgeplan":
    import edgeplan
else:
    import onnxruntime as ort
t = time.perf_counter()
if engine == "edgeplan":
    sess = edgeplan.Session(path, threads=1)
    run = lambda f: sess.run(f)
else:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    run = lambda f: dict(zip(names, sess.run(None, f)))
load_ms = (time.perf_counter() - t) * 1e3

if case.get("stream"):
    # one feature frame per call; edgeplan keeps the GRU state in the arena (state=), onnxruntime is fed
    # h_out back as h_in; one timed sample = one chunk call
    x = feeds["feats"]
    def once(timed):
        if engine == "edgeplan":
            sess.reset()
        h = np.zeros((1, 1, 64), np.float32)
        ys = []
        for s in range(x.shape[1]):
            f = {"feats": x[:, s:s + 1]}
            if engine != "edgeplan":
                f["h_in"] = h
            t = time.perf_counter()
            y = run(f)
            timed.append((time.perf_counter() - t) * 1e3)
            if engine != "edgeplan":
                h = y["h_out"]
            ys.append(y["probs"])
        return {"probs": np.concatenate(ys, 1)}
    for _ in range(warmup):
        once([])
    times = []
    for _ in range(runs):
        out = once(times)
else:
    if engine == "onnxruntime" and case.get("h_in"):
        feeds["h_in"] = np.zeros((1, 1, 64), np.float32)
    # a plan with state (kws) starts every whole-sequence run from zeros, as onnxruntime's h_in
    fresh = sess.reset if engine == "edgeplan" else (lambda: None)
    for _ in range(warmup):
        fresh()
        run(feeds)
    times = []
    for _ in range(runs):
        fresh()
        t = time.perf_counter()
        out = run(feeds)
        times.append((time.perf_counter() - t) * 1e3)
np.savez(out_path, **{k: np.asarray(v) for k, v in out.items()})
times.sort()
print(json.dumps({"load_ms": load_ms, "median_ms": times[len(times) // 2], "min_ms": times[0],
                  "calls": len(times), "peak_rss_mib": peak_rss_mib()}))
"""


def child(engine: str, path, case: dict) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", CHILD, engine, str(path), json.dumps(case)],
                       capture_output=True, text=True, env=env)
    if r.returncode:
        raise RuntimeError(f"{engine} on {path}: {r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def speech_audio(n: int, seed: int = 0):
    """Speech-like test audio (as tests/py/test_speech_models.py): a gliding, amplitude-modulated
    harmonic tone plus a little noise."""
    import numpy as np
    t = np.arange(n) / 16000.0
    f0 = 120.0 + 40.0 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / 16000.0
    x = sum(np.sin(k * phase) / k for k in range(1, 6)) * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t)) * 0.2
    x = x + 0.01 * np.random.default_rng(seed).standard_normal(n)
    return x.astype(np.float32)[None]


def rel_diff(a, b) -> str:
    import numpy as np
    if a.shape != b.shape:
        return f"shape {list(a.shape)} vs {list(b.shape)}"
    den = max(float(np.abs(b).max()), 1e-30) if b.size else 1.0
    return f"{float(np.abs(a.astype(np.float64) - b).max()) / den:.1e}" if b.size else "0"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="3 runs after 1 warm-up, 0.5 s of kws frames")
    ap.add_argument("--only", nargs="*", choices=["asr", "kws", "tts"], help="models to run (default all)")
    ap.add_argument("--markdown", metavar="FILE", help=f"write the table as the section '{SECTION}' of FILE "
                    "(replaced if there, else appended; other sections untouched)")
    a = ap.parse_args()
    if a.quick:
        a.runs, a.warmup = 3, 1
    import numpy as np
    import onnx
    import onnxruntime
    import edgeplan
    from edgeplan import models
    from edgeplan.models import tts as tts_mod
    only = set(a.only or ["asr", "kws", "tts"])
    rows = []
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)

        def prepare(name, **compile_kw):
            onnx_path, plan_path = d / f"{name}.onnx", d / f"{name}.eplan"
            onnx.save(models.build(name), onnx_path)
            t = time.perf_counter()
            plan = edgeplan.compile(str(onnx_path), **compile_kw)
            plan.save(plan_path)
            print(f"compiled {name} ({', '.join(f'{k}={v}' for k, v in compile_kw.items())}) in "
                  f"{time.perf_counter() - t:.1f} s", flush=True)
            return onnx_path, plan_path

        def measure(model, label, onnx_path, plan_path, feeds: dict, audio_s, out_key, **extra):
            files = {}
            for k, v in feeds.items():
                files[k] = str(d / f"{label}.{k}.npy".replace(" ", "_"))
                np.save(files[k], v)
            res = {}
            for eng, path in (("edgeplan", plan_path), ("onnxruntime", onnx_path)):
                case = dict(runs=a.runs, warmup=a.warmup, feeds=files, out=str(d / f"{eng}.npz"), **extra)
                res[eng] = child(eng, path, case)
                res[eng]["out"] = dict(np.load(d / f"{eng}.npz"))
            ep, ort = res["edgeplan"], res["onnxruntime"]
            a_s = audio_s(ep["out"]) if callable(audio_s) else audio_s
            row = dict(model=model, case=label, audio_s=a_s, ep=ep, ort=ort,
                       diff=rel_diff(ep["out"][out_key], ort["out"][out_key]))
            rows.append(row)
            print(f"{model:<4} {label:<22} latency {ep['median_ms']:9.3f} vs {ort['median_ms']:9.3f} ms "
                  f"(x{ep['median_ms'] / ort['median_ms']:.2f})  RTF {ep['median_ms'] / 1e3 / a_s:.4f} vs "
                  f"{ort['median_ms'] / 1e3 / a_s:.4f}  load {ep['load_ms']:7.1f} vs {ort['load_ms']:7.1f} ms  "
                  f"peak RSS {ep['peak_rss_mib']:6.1f} vs {ort['peak_rss_mib']:6.1f} MiB  diff {row['diff']}",
                  flush=True)

        if "asr" in only:
            o, p = prepare("asr", dims={"samples": (400, 160000)})
            for sec in (1, 5, 10):
                measure("asr", f"{sec} s audio", o, p, {"audio": speech_audio(16000 * sec, seed=sec)}, float(sec),
                        "log_probs")
        if "kws" in only:
            o, p = prepare("kws", dims={"T": (1, 100)}, state={"h_in": "h_out"})
            frames = 50 if a.quick else 100
            x = np.random.default_rng(1).standard_normal((1, frames, 40)).astype(np.float32)
            measure("kws", "10 ms chunk (streamed)", o, p, {"feats": x}, 0.010, "probs", stream=True)
            measure("kws", f"{frames * 10} ms in one run", o, p, {"feats": x}, frames / 100, "probs", h_in=True)
        if "tts" in only:
            o, p = prepare("tts", dims={"N": (1, 64), "frames": (1, 512)})
            rate = tts_mod.SAMPLE_RATE
            for n in (8, 24):
                tok = np.random.default_rng(n).integers(1, len(tts_mod.TTS_SYMBOLS), (1, n)).astype(np.int64)
                measure("tts", f"{n} tokens", o, p, {"tokens": tok},
                        lambda out: out["audio"].size / rate, "audio")
    hdr = ("| model | case | audio s | edgeplan ms | onnxruntime ms | latency ratio | RTF ep / ort | "
           "load ms ep / ort | load ratio | peak RSS MiB ep / ort | RSS ratio | max diff |")
    lines = [hdr, "|" + "---|" * (hdr.count("|") - 1)]
    for r in rows:
        ep, ort = r["ep"], r["ort"]
        lines.append(f"| {r['model']} | {r['case']} | {r['audio_s']:.3g} | {ep['median_ms']:.3f} | "
                     f"{ort['median_ms']:.3f} | {ep['median_ms'] / ort['median_ms']:.2f} | "
                     f"{ep['median_ms'] / 1e3 / r['audio_s']:.4f} / {ort['median_ms'] / 1e3 / r['audio_s']:.4f} | "
                     f"{ep['load_ms']:.1f} / {ort['load_ms']:.1f} | {ep['load_ms'] / ort['load_ms']:.3f} | "
                     f"{ep['peak_rss_mib']:.1f} / {ort['peak_rss_mib']:.1f} | "
                     f"{ep['peak_rss_mib'] / ort['peak_rss_mib']:.2f} | {r['diff']} |")
    print()
    print("\n".join(lines))
    if a.markdown:
        cmd = "python3 bench/speech.py" + (" --quick" if a.quick else f" --runs {a.runs} --warmup {a.warmup}")
        if a.only:
            cmd += " --only " + " ".join(a.only)
        body = [SECTION,
                f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; onnxruntime "
                f"{onnxruntime.__version__}; edgeplan {edgeplan.__version__}; {a.runs} runs after {a.warmup} "
                f"warm-up, medians; each engine in its own child process per row.",
                f"Reproduce: `{cmd} --markdown docs/performance.md`", "", *lines, ""]
        write_section(Path(a.markdown), body)
        print(f"\nwrote section '{SECTION}' of {a.markdown}")
    return 0


def write_section(path: Path, body: list) -> None:
    """Replaces the SECTION of a markdown file (up to the next "## " heading; text kept after the table
    under a "<!-- speech notes -->" marker is preserved) or appends it."""
    text = path.read_text() if path.exists() else ""
    lines = text.splitlines()
    if SECTION in lines:
        i = lines.index(SECTION)
        j = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("## ")), len(lines))
        notes = next((k for k in range(i, j) if lines[k].strip() == "<!-- speech notes -->"), None)
        keep = lines[notes:j] if notes is not None else []
        lines = lines[:i] + body + keep + ([""] if keep and j < len(lines) else []) + lines[j:]
    else:
        lines = lines + ([""] if lines and lines[-1] else []) + body
    path.write_text("\n".join(lines).rstrip("\n") + "\n")


if __name__ == "__main__":
    sys.exit(main())
