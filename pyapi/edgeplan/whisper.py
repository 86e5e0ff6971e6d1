"""Whisper-class encoder-decoder ASR on plans: greedy decoding with the model's special tokens,
timestamps off, byte-level BPE decoded to text.

    asr = Whisper("tiny.en/")                  # encoder, decoder_with_past or decoder, whisper.json, vocabulary.txt
    r = asr.transcribe(samples)                # float32 16 kHz mono; r["text"], r["ids"], timings

A model folder is what tools/whisper_ct2.py writes: each graph as .onnx (compiled on first use and
cached under $EDGEPLAN_CACHE, default ~/.cache/edgeplan) or as a plan (.eplan). The encoder takes one
30 s window of samples (its log-mel front end is in the graph) and gives every decoder layer's cross-
attention keys and values, set into the decoder's inputs once a window (a plan's inputs keep their values
between runs). With decoder_with_past the decoder runs one token a step on the self-attention cache (the
plan's outputs, views of its arena, copied into its inputs for the next step: the one copy the model's
I/O demands), the prompt too, token by token from an empty cache, so the plain decoder is not loaded;
without it, the decoder recomputes the whole sequence each step. Audio longer than a window is transcribed window by window (`segments` to give other cuts,
such as a VAD's speech segments).
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import numpy as np

from .plan import cache_dir

GRAPHS = ("encoder", "decoder", "decoder_with_past")
# CTranslate2's float16 weights, widened to float32 by tools/whisper_ct2.py, go back to 16 bits where they are
# exact: half the bytes a decoder step streams, the float32 plan's results (compiler/passes/weights16.py)
WEIGHTS = "fp16-exact"


class WhisperError(ValueError):
    """A model folder or an input that cannot be used; the message says what to do."""


def graph_dims(meta: dict) -> dict:
    """The variable dims each graph of a Whisper folder is compiled with (whisper.json's max_tokens)."""
    return {"decoder": {"n": (1, meta["max_tokens"])}, "decoder_with_past": {"P": (0, meta["max_tokens"] - 1)}}


def byte_decoder() -> dict:
    """GPT-2's byte-level BPE alphabet: the printable character standing for each byte, inverted."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


def is_model_dir(path) -> bool:
    p = Path(path)
    return p.is_dir() and (p / "whisper.json").is_file()


class Whisper:
    def __init__(self, folder, threads: int = 1, log=None, quantize: str | None = None):
        """quantize: None (float32 arithmetic, the weights float16 holds exactly stored in 16 bits), or
        "int8-dynamic" for the graphs compiled here from .onnx (int8 weights, activations quantised per row at
        run time: compiler/passes/int8_dynamic.py); .eplan files run as they are."""
        self.dir = Path(folder)
        self.quantize = quantize
        if not is_model_dir(self.dir):
            raise WhisperError(f"{folder}: not a Whisper model folder (it has no whisper.json; convert a CTranslate2 "
                               f"folder with tools/whisper_ct2.py)")
        try:
            self.meta = json.loads((self.dir / "whisper.json").read_text())
            self.vocab = (self.dir / "vocabulary.txt").read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise WhisperError(f"{folder}: {e}") from None
        self.vocab = self.vocab[:self.meta["vocab"]]
        if len(self.vocab) != self.meta["vocab"]:
            raise WhisperError(f"{folder}/vocabulary.txt has {len(self.vocab)} tokens; whisper.json says "
                               f"{self.meta['vocab']}")
        self.rate, self.window = int(self.meta["sample_rate"]), int(self.meta["window"])
        self._bytes = byte_decoder()
        import edgeplan
        self.sessions = {}
        for g in ("encoder", "decoder_with_past", "decoder"):
            if g == "decoder" and "decoder_with_past" in self.sessions:
                continue   # the cached decoder also runs the prompt (from an empty cache): one decoder in memory
            plan = self._plan(g, log)
            if plan is not None:
                self.sessions[g] = edgeplan.Session(plan, threads=threads)
        if "encoder" not in self.sessions or not ({"decoder", "decoder_with_past"} & set(self.sessions)):
            raise WhisperError(f"{folder}: needs encoder and decoder or decoder_with_past (.onnx or .eplan)")
        self.max_tokens = int(self.meta["max_tokens"])
        v = self.meta["vocab"]
        self.suppress = np.zeros(v, bool)
        self.suppress[[i for i in self.meta["suppress"] if 0 <= i < v]] = True
        self.suppress[self.meta["timestamp_begin"]:] = True          # timestamps off
        self.suppress_begin = [i for i in self.meta["suppress_begin"] if 0 <= i < v]

    def _plan(self, graph: str, log):
        plan, onnx = self.dir / f"{graph}.eplan", self.dir / f"{graph}.onnx"
        if plan.is_file():
            return plan
        if not onnx.is_file():
            return None
        import edgeplan
        dims = graph_dims(self.meta).get(graph)
        quantize = self.quantize or WEIGHTS
        digest = hashlib.sha256(onnx.read_bytes() + repr((dims, quantize)).encode()).hexdigest()[:24]
        out = cache_dir() / "whisper" / f"{digest}-{edgeplan.__version__}.eplan"
        if not out.is_file():
            if log:
                log(f"compiling {onnx} -> {out}")
            out.parent.mkdir(parents=True, exist_ok=True)
            edgeplan.compile(str(onnx), dims=dims, quantize=quantize).save(out)
        return out

    def prompt(self) -> list:
        m = self.meta
        lead = [m["sot"]] + ([m["english"], m["transcribe"]] if m["multilingual"] else [])
        return lead + [m["no_timestamps"]]

    def text(self, ids) -> str:
        raw = "".join(self.vocab[i] for i in ids if i < self.meta["eot"])
        data = bytes(self._bytes.get(c, ord("?")) for c in raw)
        return data.decode("utf-8", errors="replace").strip()

    def _pick(self, logits, first: bool) -> int:
        lg = np.array(logits, np.float32).reshape(-1)
        lg[self.suppress] = -np.inf
        if first:
            lg[self.suppress_begin] = -np.inf
        return int(lg.argmax())

    def decode(self, window) -> dict:
        """Greedy decoding of one window of samples (at most self.window)."""
        x = np.zeros((1, self.window), np.float32)
        x[0, :len(window)] = window
        t0 = time.perf_counter()
        e = self.sessions["encoder"].run({"audio": x})
        t1 = time.perf_counter()
        toks = self.prompt()
        dec, past = self.sessions.get("decoder"), self.sessions.get("decoder_with_past")
        for sess in (s for s in (dec, past) if s is not None):   # set once a window: inputs keep their values
            for name, v in e.items():
                if name.startswith("cross_"):
                    sess.set_input(name, v)
        out, steps, eot, stopped = None, 0, self.meta["eot"], False
        cache = None
        if past is not None:   # the prompt token by token, from an empty cache (its length P may be 0)
            ks = [v for k, v in e.items() if k.startswith("cross_k")]   # [1, heads, head dim, frames] a layer
            empty = np.zeros((len(ks), 1, ks[0].shape[1], 0, ks[0].shape[2]), np.float32)
            cache = (empty, empty)
            for i, t in enumerate(toks[:-1]):
                o = past.run(tokens=np.array([[t]], np.int64), offset=np.array([i], np.int64), past_k=cache[0],
                             past_v=cache[1], copy=False)
                cache = (o["present_k"], o["present_v"])
        while True:   # outputs as views of the arena (copy=False): the cache is copied once, into the next step
            if past is None:
                out = dec.run(tokens=np.array([toks], np.int64), copy=False)
            else:
                out = past.run(tokens=np.array([toks[-1:]], np.int64), offset=np.array([len(toks) - 1], np.int64),
                               past_k=cache[0], past_v=cache[1], copy=False)
                cache = (out["present_k"], out["present_v"])
            steps += 1
            k = self._pick(out["logits"], steps == 1)
            if k == eot:
                break
            toks.append(k)
            if len(toks) >= self.max_tokens:
                stopped = True
                break
        t2 = time.perf_counter()
        ids = toks[len(self.prompt()):]
        return {"ids": ids, "text": self.text(ids), "encoder_ms": (t1 - t0) * 1e3, "decoder_ms": (t2 - t1) * 1e3,
                "steps": steps, "stopped_at_max": stopped}

    def transcribe(self, samples, segments=None) -> dict:
        """samples: float32 mono at self.rate. segments: (start, end) sample spans to transcribe (a VAD's
        speech; neighbours that fit one window together are transcribed together), default consecutive
        windows. Returns text, ids, and per-window results."""
        samples = np.asarray(samples, np.float32).reshape(-1)
        if segments is None:
            segments = [(s, min(len(samples), s + self.window)) for s in range(0, max(1, len(samples)), self.window)]
        else:   # neighbours merged while they fit one window (the silence between them kept)
            merged = []
            for s, e in sorted(segments):
                if merged and e - merged[-1][0] <= self.window:
                    merged[-1][1] = max(merged[-1][1], e)
                else:
                    merged.append([s, e])
            segments = [tuple(m) for m in merged]
        parts = []
        for s, e in segments:
            for a in range(s, e, self.window):    # a segment longer than a window: window by window
                r = self.decode(samples[a:min(e, a + self.window)])
                r["span"] = (a, min(e, a + self.window))
                parts.append(r)
        return {"text": " ".join(p["text"] for p in parts if p["text"]), "ids": [i for p in parts for i in p["ids"]],
                "segments": parts}
