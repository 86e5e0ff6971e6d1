"""Shared-arena groups: the group arena of vision + VAD + ASR + TTS against the sum of their separate arenas, and
the cost of running members in turn (each member run between the others' against its separate session, alternating
in one process).

    python3 bench/group.py [--vad PATH/silero_vad.onnx] [--rounds 20] [--real]

Members: MobileNetV2 (224x224), a Silero VAD (the pinned one of tests/models when --vad is not given), the zoo's
ASR, and its TTS acoustic model and vocoder, at two sets of bounds: the soak's (1 s of audio, 32 phonemes,
16 vocoder frames) and deployment bounds (5 s utterances, 128-phoneme sentences, 128-frame vocoder chunks).
--real groups the pinned real speech models instead: Whisper tiny.en (encoder and cached decoder, converted by
tools/whisper_ct2.py), the Piper voice en_US joe-medium, Silero VAD, with MobileNetV2 for vision."""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))   # bench/_common.py; edgeplan as installed

from _common import cpu_name        # noqa: E402
import edgeplan                    # noqa: E402
from edgeplan import models        # noqa: E402

BOUNDS = {
    "soak": {"asr": {"samples": (400, 16000)}, "tts_acoustic": {"N": (1, 32), "frames": (1, 64)},
             "hifigan": {"frames": (1, 16)}},
    "deployment": {"asr": {"samples": (400, 80000)}, "tts_acoustic": {"N": (1, 128), "frames": (1, 512)},
                   "hifigan": {"frames": (1, 128)}},
}


def _pinned(fid):
    """A pinned model of tests/models/manifest.toml (fetched and cached on first use)."""
    sys.path.insert(0, str(ROOT.parent / "tests" / "models"))
    import fetch
    man = fetch.load_manifest()
    entry = next(x for x in man["models"] + man["files"] if x["id"] == fid)
    fetch.fetch([fid], log=lambda *a: None)
    return fetch.files_dir(entry, fetch.cache_dir()) if "files" in entry else fetch.model_path(entry, fetch.cache_dir())


def _vad_path(arg):
    return arg or _pinned("silero_vad")


def _real(vad) -> int:
    import importlib.util
    import tempfile
    from edgeplan.piper import compile_voice
    from edgeplan.whisper import Whisper
    spec = importlib.util.spec_from_file_location("whisper_ct2", ROOT.parent / "tools" / "whisper_ct2.py")
    ct2 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ct2)
    with tempfile.TemporaryDirectory() as tmp:
        ct2.convert(_pinned("whisper_tiny_en_ct2"), Path(tmp) / "whisper")
        w = Whisper(Path(tmp) / "whisper")
        plans = {f"whisper_{g}": bytes(s._plan_buf) for g, s in w.sessions.items()}
    from edgeplan.vad import compile_vad
    plans["piper_voice"] = compile_voice(_pinned("piper_en_us_joe_medium")).to_bytes()
    plans["silero_vad"] = compile_vad(vad).to_bytes()
    plans["mobilenetv2"] = edgeplan.compile(models.build("mobilenetv2")).to_bytes()
    g = edgeplan.plan_group(list(plans.values()), names=list(plans))
    print("\nreal speech models + MobileNetV2:")
    print(g.summary())
    return 0


def _feeds(sess, rng):
    out = {}
    for t in sess.inputs:
        shape = [b if a == b else max(a, b // 4) for a, b in zip(t.min_shape, t.max_shape)]
        out[t.name] = (rng.integers(1, 30, size=shape) if t.dtype.kind == "i" else rng.standard_normal(shape)).astype(t.dtype)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vad", help="a Silero VAD v5/v6 .onnx")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--real", action="store_true", help="the pinned real speech models (Whisper, Piper, Silero)")
    a = ap.parse_args()
    from edgeplan.vad import compile_vad
    print(f"CPU: {cpu_name()}; edgeplan {edgeplan.__version__}")
    if a.real:
        return _real(_vad_path(a.vad))
    base = {"mobilenetv2": edgeplan.compile(models.build("mobilenetv2")), "vad": compile_vad(_vad_path(a.vad))}
    for label, bounds in BOUNDS.items():
        plans = dict(base)
        for n, dims in bounds.items():
            plans[n] = edgeplan.compile(models.build(n), dims=dims)
        g = edgeplan.plan_group(list(plans.values()), names=list(plans))
        print(f"\n{label} bounds: " + "; ".join(f"{n} {d}" for n, d in bounds.items()))
        print(g.summary())
        if label != "deployment":
            continue
        sg = edgeplan.SessionGroup(g)
        rng = np.random.default_rng(0)
        alone = {n: edgeplan.Session(p) for n, p in plans.items()}
        feeds = {}
        for n in plans:
            for _ in range(20):
                f = _feeds(alone[n], rng)
                try:
                    alone[n].run(f)
                except edgeplan.EdgeplanError:
                    continue
                feeds[n] = f
                break
        times = {n: ([], []) for n in feeds}
        for _ in range(a.rounds):   # each member's run in the group (the others between) against its own session
            for n, f in feeds.items():
                for k, s in enumerate((alone[n], sg[n])):
                    t = time.perf_counter()
                    s.run(f)
                    times[n][k].append(time.perf_counter() - t)
        print("\nrun time in the group against alone (median of %d, 1 thread):" % a.rounds)
        for n, (al, gr) in times.items():
            print(f"  {n:<13} alone {statistics.median(al) * 1e3:8.2f} ms   in the group "
                  f"{statistics.median(gr) * 1e3:8.2f} ms   ({statistics.median(gr) / statistics.median(al):.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
