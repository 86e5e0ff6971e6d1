#!/usr/bin/env python3
"""The speech round trip: fixed sentences spoken by a real Piper voice, resampled to 16 kHz (scipy's
polyphase resampler), transcribed by a real Whisper, scored by word error rate against the text. The
same pipeline runs twice: on edgeplan's plans and on onnxruntime running the same .onnx files (the voice
on the unpadded ids, the three Whisper graphs), so the table says what edgeplan changes.

    python3 bench/roundtrip.py VOICE.onnx WHISPER_DIR [--sentences N]

VOICE.onnx needs its .onnx.json beside it; WHISPER_DIR is what tools/whisper_ct2.py writes. Needs
espeak-ng (the phonemizer), onnxruntime and scipy. Noise scales are 0, so both runs are deterministic.
Prints a markdown table (docs/speech.md)."""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

SENTENCES = [
    "The weather is nice today.",
    "Please open the front door.",
    "I would like a cup of coffee.",
    "The train leaves from platform two.",
    "She reads a book every night.",
    "Turn off the lights in the kitchen.",
    "We are going to the park this afternoon.",
    "The children played in the garden.",
    "Can you tell me the time?",
    "My brother works at the hospital.",
    "The music was very loud.",
    "He forgot his keys at home.",
    "Let us meet at the station.",
    "The cat is sleeping on the sofa.",
    "Close the window, it is cold outside.",
    "They bought fresh bread at the market.",
    "The meeting starts in ten minutes.",
    "Water the plants before you leave.",
    "The river flows through the city.",
    "I left my phone on the table.",
    "The dog ran across the field.",
    "Thank you for your help yesterday.",
]


def words(text: str) -> list:
    return re.sub(r"[^a-z' ]+", " ", text.lower()).split()


def wer(ref: list, hyp: list) -> tuple:
    """(edits, reference words): Levenshtein distance over words."""
    d = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, d[0] = d[0], i
        for j, h in enumerate(hyp, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (r != h))
    return d[len(hyp)], len(ref)


class OrtSession:
    """onnxruntime behind what the pipelines use of edgeplan.Session: set_input, and run(feeds, **kw)
    -> {output: array} with the inputs set before kept; one thread."""

    def __init__(self, path):
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.log_severity_level = 3
        self.s = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        self.names = [o.name for o in self.s.get_outputs()]
        self.inputs = {i.name for i in self.s.get_inputs()}
        self.fed = {}

    def set_input(self, name, value):
        self.fed[name] = np.asarray(value)

    def run(self, feeds=None, *, copy=True, **kw):
        self.fed.update({k: np.array(v) for k, v in dict(feeds or {}, **kw).items()})
        return dict(zip(self.names, self.s.run(None, {k: v for k, v in self.fed.items() if k in self.inputs})))


def pipelines(voice_path, whisper_dir):
    """{"edgeplan": (speak(ids) -> audio, asr), "onnxruntime": (...)}."""
    from edgeplan import piper
    from edgeplan.whisper import GRAPHS, Whisper
    voice = piper.Voice.load(voice_path)
    asr_ep = Whisper(whisper_dir)
    asr_ort = Whisper(whisper_dir)
    asr_ort.sessions = {g: OrtSession(Path(whisper_dir) / f"{g}.onnx") for g in GRAPHS
                        if (Path(whisper_dir) / f"{g}.onnx").is_file()}
    ort_voice = OrtSession(voice_path)

    def speak_ort(ids):
        return ort_voice.run({"input": np.array([ids], np.int64), "input_lengths": np.array([len(ids)], np.int64),
                              "scales": np.array([0.0, voice.scales[1], 0.0], np.float32)})["output"].reshape(-1)
    return voice, {"edgeplan": (lambda ids: voice.speak(ids, 0.0, None, 0.0), asr_ep),
                   "onnxruntime": (speak_ort, asr_ort)}


def run(voice_path, whisper_dir, n: int = len(SENTENCES), log=print) -> dict:
    from scipy.signal import resample_poly
    from edgeplan import piper
    voice, pipes = pipelines(voice_path, whisper_dir)
    ids = [voice.ids(piper.phonemize(s, voice.espeak_voice)) for s in SENTENCES[:n]]
    out = {}
    for name, (speak, asr) in pipes.items():
        edits = total = 0
        rows, t_tts, t_asr, audio_s = [], 0.0, 0.0, 0.0
        for text, x in zip(SENTENCES[:n], ids):
            t = time.perf_counter()
            y = speak(x)
            t_tts += time.perf_counter() - t
            audio_s += len(y) / voice.rate
            g = np.gcd(16000, voice.rate)
            y16 = resample_poly(y.astype(np.float64), 16000 // g, voice.rate // g).astype(np.float32)
            t = time.perf_counter()
            hyp = asr.transcribe(y16)["text"]
            t_asr += time.perf_counter() - t
            e, r = wer(words(text), words(hyp))
            edits, total = edits + e, total + r
            rows.append((text, hyp, e, r))
            log(f"{name:12} {e}/{r}  {text!r} -> {hyp!r}")
        out[name] = {"wer": edits / total, "edits": edits, "words": total, "rows": rows,
                     "tts_rtf": t_tts / audio_s, "asr_rtf": t_asr / audio_s, "audio_s": audio_s}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("voice")
    ap.add_argument("whisper_dir")
    ap.add_argument("--sentences", type=int, default=len(SENTENCES))
    a = ap.parse_args(argv)
    r = run(a.voice, a.whisper_dir, a.sentences, log=lambda *x: print(*x, file=sys.stderr))
    print("| pipeline | WER | errors / words | TTS RTF | ASR RTF |")
    print("|---|---|---|---|---|")
    for name, v in r.items():
        print(f"| {name} | {100 * v['wer']:.1f}% | {v['edits']} / {v['words']} | {v['tts_rtf']:.3f} | "
              f"{v['asr_rtf']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
