"""Piper voices (rhasspy/piper's VITS exports) on plans: phonemes to ids with the voice's own map, the
plan compiled once and cached, text spoken sentence by sentence.

    voice = Voice.load("en_US-joe-medium.onnx")         # its en_US-joe-medium.onnx.json beside it
    ids = voice.ids("həlˈoʊ wˈɜːld.")                   # ^ _ h _ ə _ ... . _ $ (Piper's interspersed pad)
    audio = voice.speak(ids)                            # float32 samples at voice.rate, the json's scales

A voice's plan takes a fixed number of ids (max_ids: the sentence is padded with the pad id and
`input_lengths` says how many are real; the text encoder masks the rest, so the audio is the unpadded
model's) and makes up to max_frames frames of HOP samples: the sum of the predicted durations decides
how many, and a sentence that would take more fails its run with EP_ERR_RUN_BOUND. The plan is cached
under $EDGEPLAN_CACHE (default ~/.cache/edgeplan), keyed by the model's bytes and those two bounds.

Text becomes phonemes through espeak-ng (an optional run-time program, called as a separate process):
one call per clause, its IPA joined with the clause's punctuation, as Piper's phonemizer joins them.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import numpy as np

from .plan import cache_dir, is_plan_file

HOP = 256                 # samples per frame of every Piper voice's decoder (its upsampling 8 x 8 x 2 x 2)
MAX_IDS = 400             # ids a sentence may take (about 190 phonemes)
BUCKETS = (96, 192, MAX_IDS)   # the id capacities of a voice's plans: the smallest that fits is used
MAX_FRAMES = 1000         # frames a sentence may take: 11.6 s at 22.05 kHz
PAD, BOS, EOS = "_", "^", "$"
CLAUSE = re.compile(r"([^.,;:!?]+)([.,;:!?]+|$)")
SENTENCE = re.compile(r"(?<=[.!?])\s+")


class VoiceError(ValueError):
    """A voice, its config or its input that cannot be used; the message says what to do."""


class Voice:
    def __init__(self, model: Path, config: dict, plan: Path | None = None):
        self.model, self.config, self._plan = model, config, plan
        self.id_map = config["phoneme_id_map"]
        self.rate = int(config.get("audio", {}).get("sample_rate", 22050))
        inf = config.get("inference", {})
        self.scales = (float(inf.get("noise_scale", 0.667)), float(inf.get("length_scale", 1.0)),
                       float(inf.get("noise_w", 0.8)))
        self.espeak_voice = config.get("espeak", {}).get("voice", "en-us")
        self.speakers = int(config.get("num_speakers", 1))
        self._session, self._session_cap = None, None

    @classmethod
    def load(cls, path, config=None) -> "Voice":
        """A voice from its .onnx (the .onnx.json beside it) or from a plan compiled from one (the voice's
        .onnx.json given as `config`, or beside the plan as PLAN.json or STEM.onnx.json)."""
        path = Path(path)
        if not path.is_file():
            raise VoiceError(f"{path}: no such file")
        is_plan = is_plan_file(path)
        cands = [Path(config)] if config else ([path.with_name(path.name + ".json")] +
                                               ([path.with_suffix(".onnx.json")] if is_plan else []))
        conf = next((c for c in cands if c.is_file()), None)
        if conf is None:
            raise VoiceError(f"{path}: no voice config; Piper voices come with {cands[0].name} beside the model "
                             f"(or give it with --config)")
        try:
            data = json.loads(conf.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise VoiceError(f"{conf}: not a voice config ({e})") from None
        need = [k for k in ("phoneme_id_map",) if not isinstance(data.get(k), dict)]
        bad = [p for p in (PAD, BOS, EOS) if p not in data.get("phoneme_id_map", {})]
        if need or bad:
            raise VoiceError(f"{conf}: not a Piper voice config (it has no {'phoneme_id_map' if need else ''}"
                             f"{' ids for ' + ' '.join(bad) if bad and not need else ''})")
        return cls(path if not is_plan else None, data, plan=path if is_plan else None)

    # ---- phonemes -> ids ---------------------------------------------------------------------------------
    def ids(self, phonemes: str) -> list:
        """Piper's phoneme ids: BOS, pad, then each phoneme (a code point of the NFD form) followed by pad,
        then EOS. Phonemes the voice does not know are dropped (returned by missing())."""
        m = self.id_map
        out = list(m[BOS]) + list(m[PAD])
        for p in unicodedata.normalize("NFD", phonemes):
            if p in m:
                out += list(m[p]) + list(m[PAD])
        return out + list(m[EOS])

    def speaks(self, phonemes: str) -> bool:
        """Whether the phonemes hold a sound the voice knows (not only pauses: punctuation and spaces)."""
        return any(p in self.id_map and unicodedata.category(p)[0] in "LM"
                   for p in unicodedata.normalize("NFD", phonemes))

    def missing(self, phonemes: str) -> str:
        return "".join(sorted({p for p in unicodedata.normalize("NFD", phonemes) if p not in self.id_map}))

    def check_ids(self, ids) -> list:
        n = max(max(v) for v in self.id_map.values()) + 1
        top = int(self.config.get("num_symbols", n))
        bad = [i for i in ids if not 0 <= int(i) < top]
        if bad:
            raise VoiceError(f"id {bad[0]} is not one of this voice's {top} phoneme ids (0..{top - 1})")
        return [int(i) for i in ids]

    # ---- the plans --------------------------------------------------------------------------------------
    def configure(self, max_frames: int = MAX_FRAMES, threads: int = 1, log=None) -> None:
        """The frames a sentence may take, the threads of a run, where compile messages go."""
        self.max_frames, self.threads, self.log = max_frames, threads, log

    def capacity(self) -> int:
        """The most ids a sentence may take: the given plan's, else the largest of BUCKETS."""
        if self._plan is not None:
            return self.session_for(0).inputs[0].shape[-1]
        return BUCKETS[-1]

    def plan_path(self, max_ids: int = MAX_IDS) -> Path:
        """The plan for up to max_ids ids: the given plan, or compiled from the .onnx once and cached."""
        if self._plan is not None:
            return self._plan
        import edgeplan
        frames = getattr(self, "max_frames", MAX_FRAMES)
        if not hasattr(self, "_digest"):
            self._digest = hashlib.sha256(self.model.read_bytes()).hexdigest()[:24]
        out = cache_dir() / "voices" / f"{self._digest}-{max_ids}-{frames}-{edgeplan.__version__}.eplan"
        if not out.is_file():
            log = getattr(self, "log", None)
            if log:
                log(f"compiling {self.model.name} for up to {max_ids} ids and {frames} frames -> {out}")
            out.parent.mkdir(parents=True, exist_ok=True)
            compile_voice(self.model, max_ids, frames).save(out)
        return out

    def session_for(self, n_ids: int):
        """The session of the smallest plan that takes n_ids ids (BUCKETS; the text encoder runs at the
        plan's size, so a short sentence takes a small plan). One is open at a time."""
        import edgeplan
        cap = None if self._plan is not None else next((b for b in BUCKETS if b >= n_ids), BUCKETS[-1])
        if self._session is None or self._session_cap != cap:
            if self._session is not None:
                self._session.close()
            self._session = edgeplan.Session(self.plan_path(cap) if cap else self._plan,
                                             threads=getattr(self, "threads", 1))
            self._session_cap = cap
        return self._session

    def speak(self, ids, noise_scale=None, length_scale=None, noise_w=None, speaker: int = 0) -> np.ndarray:
        """Audio (float32 [samples] at self.rate) of one sentence's ids."""
        sess = self.session_for(len(ids))
        inp = {t.name: t for t in sess.inputs}
        cap = inp["input"].shape[-1]
        ids = self.check_ids(ids)
        if len(ids) > cap:
            raise VoiceError(f"{len(ids)} ids in one sentence; this voice's plan takes at most {cap} (split the "
                             f"sentence, or compile for more ids)")
        pad = self.id_map[PAD][0]
        x = np.full((1, cap), pad, np.int64)
        x[0, :len(ids)] = ids
        sc = [v if v is not None else d for v, d in zip((noise_scale, length_scale, noise_w), self.scales)]
        feeds = {"input": x, "input_lengths": np.array([len(ids)], np.int64), "scales": np.array(sc, np.float32)}
        if "sid" in inp:
            if not 0 <= speaker < self.speakers:
                raise VoiceError(f"speaker {speaker}: this voice has speakers 0..{self.speakers - 1}")
            feeds["sid"] = np.array([speaker], np.int64)
        return sess.run(feeds)["output"].reshape(-1)


def compile_voice(model, max_ids: int = MAX_IDS, max_frames: int = MAX_FRAMES, board=None):
    """The plan of a Piper voice: ids [1, max_ids] (batch 1), every length the data decides (the frames
    the durations sum to) bounded by max_frames; for `board` (default: this machine)."""
    import edgeplan
    from edgeplan.compiler.errors import CompileError
    import onnx
    m = onnx.load(str(model))
    names = [i.name for i in m.graph.input]
    if not {"input", "input_lengths", "scales"} <= set(names):
        raise VoiceError(f"{model}: not a Piper voice (its inputs are {names}; Piper's are input, input_lengths, "
                         f"scales and, for several speakers, sid)")
    shapes = {"input": (1, max_ids), "input_lengths": (1,), "scales": (3,)}
    if "sid" in names:
        shapes["sid"] = (1,)
    try:
        return edgeplan.compile(m, shapes=shapes, board=board)
    except CompileError as e:
        lengths = {p.length for p in e.problems if p.length}
        if not lengths or any(not p.length for p in e.problems):
            raise
    return edgeplan.compile(m, shapes=shapes, dims={k: (1, max_frames) for k in sorted(lengths)}, board=board)


# ---- text -> phonemes ------------------------------------------------------------------------------------
def sentences(text: str) -> list:
    return [s.strip() for s in SENTENCE.split(text.strip()) if s.strip()]


def phonemize(text: str, voice: str, espeak: str | None = None) -> str:
    """One sentence's IPA from espeak-ng: each clause phonemized on its own and joined with its
    punctuation ("həlˈoʊ, wˈɜːld.")."""
    exe = espeak or shutil.which("espeak-ng")
    if exe is None:
        raise VoiceError("--text needs espeak-ng (Debian: apt-get install espeak-ng); or give --ipa or --ids")
    parts = []
    for words, punct in CLAUSE.findall(text):
        if not words.strip():
            if parts and punct:
                parts[-1] += punct.strip()
            continue
        r = subprocess.run([exe, "-q", "--ipa", "-v", voice, "--", words.strip()], capture_output=True, text=True,
                           timeout=60)
        if r.returncode != 0:
            raise VoiceError(f"espeak-ng failed on {words.strip()!r}: {r.stderr.strip() or r.returncode}")
        parts.append(" ".join(r.stdout.split()) + punct.strip())
    return " ".join(p for p in parts if p)
