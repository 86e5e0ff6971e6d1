"""Silero VAD (v5 / v6 exports: input, state, sr) on a plan, as a stream, and speech segments from its
probabilities with the reference parameters of silero-vad's get_speech_timestamps.

    vad = SileroVad("silero_vad.onnx")         # compiled once (the state kept in the arena), cached
    p = vad.probabilities(samples)             # one per 512-sample window at 16 kHz (256 at 8 kHz)
    segs = speech_segments(p, len(samples))    # [(start, end)] in samples

Each window is fed with the last 64 (32 at 8 kHz) samples of the one before it, as the model's own
wrapper does; the LSTM state stays in the arena between windows (docs/dynamic-shapes.md, state).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .plan import cache_dir, is_plan_file


class VadError(ValueError):
    pass


def compile_vad(onnx_path, rate: int = 16000, board=None):
    """The plan of a Silero VAD v5/v6 export at `rate`: one window with its context a run, sr frozen
    (its If decided at compile time), the LSTM state kept in the arena; for `board` (default: here)."""
    import edgeplan
    import onnx
    names = {i.name for i in onnx.load(str(onnx_path), load_external_data=False).graph.input}
    if not {"input", "state", "sr"} <= names:
        raise VadError(f"{onnx_path}: not a Silero VAD v5/v6 export (inputs input, state, sr; it has "
                       f"{sorted(names)})")
    window = (512 + 64) if rate == 16000 else (256 + 32)
    return edgeplan.compile(str(onnx_path), shapes={"input": (1, window), "state": (2, 1, 128)}, consts={"sr": rate},
                            state={"state": "stateN"}, board=board)


@dataclass
class Params:
    """silero-vad's get_speech_timestamps defaults."""
    threshold: float = 0.5
    neg_threshold: float | None = None        # default threshold - 0.15
    min_speech_ms: float = 250
    min_silence_ms: float = 100
    speech_pad_ms: float = 30


class SileroVad:
    def __init__(self, path, rate: int = 16000, threads: int = 1, log=None):
        if rate not in (8000, 16000):
            raise VadError(f"Silero VAD runs at 8000 or 16000 Hz, not {rate}")
        self.rate = rate
        self.window = 512 if rate == 16000 else 256
        self.context = 64 if rate == 16000 else 32
        import edgeplan
        path = Path(path)
        if not path.is_file():
            raise VadError(f"{path}: no such file")
        plan = path if is_plan_file(path) else self._compile(path, log)
        self.session = edgeplan.Session(plan, threads=threads)
        names = [t.name for t in self.session.inputs]
        if names != ["input"]:
            raise VadError(f"{path}: a Silero VAD plan takes only 'input' (the state in the arena, sr fixed); "
                           f"this one takes {names}")
        want = self.window + self.context
        if self.session.inputs[0].shape[-1] != want:
            raise VadError(f"{path}: the plan takes {self.session.inputs[0].shape[-1]} samples a window; "
                           f"{rate} Hz needs {want}")

    def _compile(self, onnx_path: Path, log):
        import edgeplan
        digest = hashlib.sha256(onnx_path.read_bytes()).hexdigest()[:24]
        out = cache_dir() / "vad" / f"{digest}-{self.rate}-{edgeplan.__version__}.eplan"
        if not out.is_file():
            if log:
                log(f"compiling {onnx_path.name} for {self.rate} Hz -> {out}")
            out.parent.mkdir(parents=True, exist_ok=True)
            compile_vad(onnx_path, self.rate).save(out)
        return out

    def probabilities(self, samples) -> np.ndarray:
        """Speech probability of each window (the last one zero-padded), the state reset first."""
        x = np.asarray(samples, np.float32).reshape(-1)
        n = -(-len(x) // self.window)
        x = np.concatenate([np.zeros(self.context, np.float32), x, np.zeros(n * self.window - len(x), np.float32)])
        self.session.reset()
        out = np.empty(n, np.float32)
        buf = np.empty((1, self.window + self.context), np.float32)
        for k in range(n):
            buf[0] = x[k * self.window:(k + 1) * self.window + self.context]
            out[k] = float(self.session.run(input=buf)["output"].reshape(-1)[0])
        return out


def speech_segments(probs, n_samples: int, window: int = 512, rate: int = 16000, params: Params = Params()) -> list:
    """[(start, end)] sample spans of speech, by silero-vad's rules: speech starts at a window at or above
    the threshold, ends after min_silence of windows below neg_threshold, is kept when longer than
    min_speech, and is padded by speech_pad on each side (half the gap each when two come closer)."""
    thr = params.threshold
    neg = params.neg_threshold if params.neg_threshold is not None else max(thr - 0.15, 0.01)
    min_speech = rate * params.min_speech_ms / 1000
    min_silence = rate * params.min_silence_ms / 1000
    pad = int(rate * params.speech_pad_ms / 1000)
    out, start, temp_end, on = [], 0, 0, False
    for i, p in enumerate(probs):
        at = window * i
        if p >= thr and temp_end:
            temp_end = 0
        if p >= thr and not on:
            on, start = True, at
            continue
        if p < neg and on:
            if not temp_end:
                temp_end = at
            if at - temp_end < min_silence:
                continue
            if temp_end - start > min_speech:
                out.append([start, temp_end])
            on, temp_end = False, 0
    if on and n_samples - start > min_speech:
        out.append([start, n_samples])
    for k, seg in enumerate(out):
        if k == 0:
            seg[0] = max(0, seg[0] - pad)
        if k + 1 < len(out):
            gap = out[k + 1][0] - seg[1]
            if gap < 2 * pad:
                seg[1] += gap // 2
                out[k + 1][0] = max(0, out[k + 1][0] - gap // 2)
            else:
                seg[1] = min(n_samples, seg[1] + pad)
                out[k + 1][0] = max(0, out[k + 1][0] - pad)
        else:
            seg[1] = min(n_samples, seg[1] + pad)
    return [tuple(s) for s in out]
