"""Speech on plans: the `edgeplan asr` and `edgeplan tts` commands and the helpers under them.

    sess = edgeplan.Session("asr.eplan")                  # audio [1, samples] -> tokens [1, frames]
    x, _ = read_wav("speech.wav", rate=16000)
    r = transcribe(sess, x)                               # r["ids"]: CTC greedy-decoded token ids
    text = decode_text(r["ids"], load_vocab("vocab.txt"))

    sess = edgeplan.Session("tts.eplan")                  # tokens [1, N] int64 -> audio [1, 1, samples]
    r = synthesize(sess, [20, 17, 24, 24, 27])            # r["audio"]: float32 [samples]

Everything the models compute is in the plan: the ASR plan takes raw samples (its log-mel front end is in
the graph) and the TTS plan goes from token ids to the waveform. Here are only reading and writing WAV
files (edgeplan.wav, standard library), CTC greedy decoding of the plan's per-frame token ids, and
splitting audio longer than the plan's bound into chunks. Needs numpy and cffi only (and the model
builders for ``--text`` / ``--write-vocab``, which take the symbol tables from edgeplan.models).
"""
from __future__ import annotations

import re
import sys
import time

import numpy as np

from .cliutil import (check_writable, die, open_session, os_reason, peak_rss_kib, positive_float, positive_int,
                      sample_rate, write_file)
from .wav import WavError, read_wav, resample, write_wav

ASR_RATE = 16000          # models/asr.py SAMPLE_RATE: the ASR model's input rate
TTS_RATE = 22050          # models/tts.py SAMPLE_RATE: the vocoder's output rate
SPACE = "\u2581"          # "▁": a space in a vocabulary file (a line holding only " " is easy to lose)


# ------------------------------------------------------------------------------------------ vocabulary
def ctc_greedy(ids) -> list:
    """CTC greedy decoding of per-frame token ids: merge repeats, then drop the blank (0)."""
    out, prev = [], None
    for t in np.asarray(ids).reshape(-1).tolist():
        if t != prev and t != 0:
            out.append(int(t))
        prev = t
    return out


def load_vocab(path) -> list:
    """One token per line, in id order (line 1 is id 0, the blank); "▁" stands for a space. A file
    that is not UTF-8 text raises ValueError (UnicodeDecodeError)."""
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\r\n") for line in f]


def vocab_text(vocab) -> str:
    return "".join((SPACE if tok == " " else tok) + "\n" for tok in vocab)


def write_vocab(path, vocab) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(vocab_text(vocab))


def decode_text(ids, vocab) -> str:
    return "".join(vocab[i] if 0 <= i < len(vocab) else f"<{i}>" for i in ids).replace(SPACE, " ")


def text_tokens(text: str) -> np.ndarray:
    """Text -> the TTS model's token ids [1, N] (models/tts.py TTS_SYMBOLS; other characters dropped)."""
    from edgeplan.models.tts import tts_tokens   # onnx and the builders: only when text is spoken
    return tts_tokens(text)


# ------------------------------------------------------------------------------------------ ASR
def _one(items, what: str, sess, kind: str):
    if len(items) != 1:
        ts = sess.inputs if kind == "in" else sess.outputs
        have = ", ".join(f"{t.name!r} {t.dtype} {t.shape_str()}" for t in ts)
        raise ValueError(f"expected a plan with one {what}; it has {have}")
    return items[0]


def asr_io(sess):
    """(audio input, token output name, argmax needed): the plan's one float32 input [1, samples] and its
    int "tokens" output (per-frame ids), else its float [1, frames, vocab] output (argmax taken here)."""
    x = _one([t for t in sess.inputs if t.dtype == np.float32], "float32 audio input [1, samples]", sess, "in")
    if any(d != 1 for d in x.max_shape[:-1]):
        raise ValueError(f"audio input {x.name!r} is {x.shape_str()}; expected [1, samples] (mono)")
    ints = [t for t in sess.outputs if t.dtype.kind in "iu"]
    tok = next((t for t in ints if t.name == "tokens"), ints[0] if len(ints) == 1 else None)
    if tok is not None:
        return x, tok.name, False
    lp = _one([t for t in sess.outputs if t.dtype == np.float32 and len(t.shape) == 3],
              "token-id output or [1, frames, vocab] scores output", sess, "out")
    return x, lp.name, True


def chunk_spans(n: int, lo: int, hi: int, chunk: int | None = None) -> list:
    """[(start, end)] covering n samples with pieces of at most ``hi`` (or ``chunk``) samples: equal-sized
    pieces when the audio is just longer than the bound, fixed ``chunk``-sized ones when asked."""
    if n <= 0:
        return [(0, 0)]
    if chunk:
        size = max(1, min(int(chunk), hi))
        return [(s, min(n, s + size)) for s in range(0, n, size)]
    k = -(-n // hi)
    edges = [round(i * n / k) for i in range(k + 1)]
    return list(zip(edges[:-1], edges[1:]))


def transcribe(sess, audio, chunk: int | None = None) -> dict:
    """Runs the ASR plan on float32 samples [n]; audio longer than the plan's bound (or than ``chunk``
    samples) runs piece by piece, each piece on its own (no context crosses a boundary); a piece shorter
    than the plan's minimum is zero-padded to it. Returns frames (per-frame ids, all pieces), ids (CTC
    greedy decoded), spans, padded (samples of zeros added), run_ms (time in Session.run)."""
    x_info, out_name, argmax = asr_io(sess)
    lo, hi = x_info.min_shape[-1], x_info.max_shape[-1]
    audio = np.ascontiguousarray(np.asarray(audio, dtype=np.float32).reshape(-1))
    spans = chunk_spans(len(audio), lo, hi, chunk)
    frames, padded, run_s = [], 0, 0.0
    lead = (1,) * (len(x_info.max_shape) - 1)
    for s, e in spans:
        piece = audio[s:e]
        if len(piece) < lo:
            padded += lo - len(piece)
            piece = np.concatenate([piece, np.zeros(lo - len(piece), np.float32)])
        t = time.perf_counter()
        y = sess.run({x_info.name: piece.reshape(lead + (len(piece),))}, copy=False)[out_name]
        run_s += time.perf_counter() - t
        frames.append((y.argmax(-1) if argmax else y).reshape(-1).astype(np.int64))
    frames = np.concatenate(frames)
    return {"frames": frames, "ids": ctc_greedy(frames), "spans": spans, "padded": padded,
            "run_ms": run_s * 1e3, "input": x_info}


# ------------------------------------------------------------------------------------------ TTS
def tts_io(sess):
    """(token input, audio output name): the plan's one integer input [1, N] and float audio output
    ("audio", else the only float output)."""
    tok = _one([t for t in sess.inputs if t.dtype.kind in "iu"], "integer token input [1, N]", sess, "in")
    floats = [t for t in sess.outputs if t.dtype == np.float32]
    out = next((t for t in floats if t.name == "audio"), None) or _one(floats, "float32 audio output", sess, "out")
    return tok, out.name


def synthesize(sess, tokens) -> dict:
    """Runs the TTS plan on token ids; returns audio (float32 [samples]), mel frames (0 if the plan has no
    "mel" output), durations (or None), run_ms."""
    tok, out_name = tts_io(sess)
    ids = np.asarray(tokens).reshape(-1).astype(tok.dtype)
    lo, hi = tok.min_shape[-1], tok.max_shape[-1]
    if not lo <= len(ids) <= hi:
        raise ValueError(f"{len(ids)} tokens; this plan takes {lo}..{hi} (input {tok.name!r} {tok.shape_str()}"
                         + ("" if tok.is_variable else "; compile with --dim N=1..MAX for variable lengths") + ")")
    t = time.perf_counter()
    y = sess.run({tok.name: ids.reshape((1,) * (len(tok.max_shape) - 1) + (len(ids),))})
    run_ms = (time.perf_counter() - t) * 1e3
    mel = y.get("mel")
    return {"audio": y[out_name].reshape(-1), "frames": int(mel.shape[-1]) if mel is not None else 0,
            "durations": y["durations"].reshape(-1) if "durations" in y else None, "run_ms": run_ms,
            "tokens": ids}


# ------------------------------------------------------------------------------------------ commands
def _open(path, threads: int):
    t = time.perf_counter()
    sess = open_session(path, threads=threads)
    return sess, (time.perf_counter() - t) * 1e3


def _footer(sess, times_ms: list, audio_s: float) -> None:
    times_ms = sorted(times_ms)
    med = times_ms[len(times_ms) // 2]
    rtf = med / 1e3 / audio_s if audio_s > 0 else float("inf")
    print(f"latency: {med:.2f} ms (median of {len(times_ms)} run(s), min {times_ms[0]:.2f} ms), "
          f"real-time factor {rtf:.4f} ({audio_s:.3f} s of audio), {sess.threads} thread(s)")
    print(f"arena: {sess.arena_bytes:,} bytes (tensors {sess.planned_bytes:,}); weights {sess.const_bytes:,} bytes "
          f"in place; peak RSS {peak_rss_kib() / 1024:.1f} MiB")


def _read_vocab(path) -> list:
    try:
        return load_vocab(path)
    except OSError as e:
        die(f"cannot read {path}: {os_reason(e)}")
    except UnicodeDecodeError:
        die(f"--vocab {path}: not a UTF-8 text file (one token per line, blank first)")


def cmd_whisper(a) -> int:
    """edgeplan asr MODEL_DIR WAV: a Whisper-class encoder-decoder (edgeplan.whisper)."""
    from . import EdgeplanError
    from .whisper import Whisper, WhisperError
    try:
        t = time.perf_counter()
        asr = Whisper(a.plan, threads=a.threads, log=print, quantize="int8-dynamic" if a.int8 else None)
        open_ms = (time.perf_counter() - t) * 1e3
    except WhisperError as e:
        die(str(e), 2)
    except EdgeplanError as e:
        die(f"{a.plan}: {e}")
    try:
        audio, rate = read_wav(a.wav, rate=asr.rate)
    except OSError as e:
        die(f"cannot read {a.wav}: {os_reason(e)}")
    except WavError as e:
        die(str(e))
    if len(audio) == 0:
        die(f"{a.wav}: no samples", 2)
    dur = len(audio) / rate
    mode = "one token a step on the cache" if "decoder_with_past" in asr.sessions else "full recompute each step"
    print(f"{a.wav}: {len(audio)} samples, {dur:.3f} s at {rate} Hz")
    print(f"{a.plan}: Whisper, {asr.meta['layers']} decoder layers, d {asr.meta['d_model']}, {asr.meta['vocab']} "
          f"tokens; decoder {mode}; ready in {open_ms:.1f} ms")
    segments = None
    if a.vad is not None:
        a.vad_model = a.vad
        segments, _, _ = _vad_segments(a, audio, rate)
        print(f"vad: {len(segments)} speech segment(s): " + ", ".join(f"{s / rate:.2f}..{e / rate:.2f} s"
                                                                 for s, e in segments))
        if not segments:
            print("text: ")
            return 0
    times, r = [], None
    for _ in range(a.repeat):
        t = time.perf_counter()
        try:
            r = asr.transcribe(audio, segments)
        except EdgeplanError as e:
            die(f"{a.plan}: {e}")
        times.append((time.perf_counter() - t) * 1e3)
    for k, seg in enumerate(r["segments"]):
        s, e = seg["span"]
        per = seg["decoder_ms"] / max(1, seg["steps"])
        print(f"{'segment' if segments else 'window'} {k + 1} ({s / rate:.2f}..{e / rate:.2f} s): encoder {seg['encoder_ms']:.1f} ms, "
              f"{seg['steps']} decoder steps at {per:.2f} ms")
        if seg["stopped_at_max"]:
            print(f"note: window {k + 1} stopped at the model's maximum of {asr.max_tokens} tokens without an "
                  f"end of text; its transcript may be cut short")
    print("tokens: " + " ".join(map(str, r["ids"])))
    print(f"text: {r['text']}")
    times.sort()
    med = times[len(times) // 2]
    sess = asr.sessions["encoder"]
    print(f"latency: {med:.1f} ms (median of {len(times)} run(s)), real-time factor {med / 1e3 / dur:.4f} "
          f"({dur:.3f} s of audio), {sess.threads} thread(s)")
    arena = sum(x.arena_bytes for x in asr.sessions.values())
    weights = sum(x.const_bytes for x in asr.sessions.values())
    print(f"arena: {arena:,} bytes in {len(asr.sessions)} plans; weights {weights:,} bytes in place; peak RSS "
          f"{peak_rss_kib() / 1024:.1f} MiB")
    return 0


def _vad_segments(a, audio, rate):
    """(segments, probabilities, vad) of a Silero VAD on audio, with the command's options."""
    from . import EdgeplanError
    from .vad import Params, SileroVad, VadError, speech_segments
    try:
        vad = SileroVad(a.vad_model, rate=rate, threads=a.threads, log=lambda m: print(m, file=sys.stderr))
        probs = vad.probabilities(audio)
    except VadError as e:
        die(str(e), 2)
    except EdgeplanError as e:
        die(f"{a.vad_model}: {e}")
    params = Params(threshold=a.threshold, min_speech_ms=a.min_speech_ms, min_silence_ms=a.min_silence_ms,
                    speech_pad_ms=a.speech_pad_ms)
    return speech_segments(probs, len(audio), vad.window, rate, params), probs, vad


def cmd_vad(a) -> int:
    """edgeplan vad MODEL WAV: one speech segment a line, start and end in seconds."""
    try:
        audio, rate = read_wav(a.wav)
    except OSError as e:
        die(f"cannot read {a.wav}: {os_reason(e)}")
    except WavError as e:
        die(str(e))
    if rate not in (8000, 16000):
        die(f"{a.wav}: {rate} Hz; Silero VAD takes 8000 or 16000 Hz (resample it first)", 2)
    if len(audio) == 0:
        die(f"{a.wav}: no samples", 2)
    a.vad_model = a.model
    t = time.perf_counter()
    segs, probs, vad = _vad_segments(a, audio, rate)
    ms = (time.perf_counter() - t) * 1e3
    for s, e in segs:
        print(f"{s / rate:.3f} {e / rate:.3f}")
    speech = sum(e - s for s, e in segs) / rate
    print(f"# {len(segs)} segment(s), {speech:.2f} s of speech in {len(audio) / rate:.2f} s; {len(probs)} windows "
          f"of {vad.window} samples, {ms / max(1, len(probs)):.3f} ms a window", file=sys.stderr)
    return 0


def cmd_asr(a) -> int:
    from . import EdgeplanError
    from .whisper import is_model_dir
    if a.plan and a.wav and is_model_dir(a.plan):
        return cmd_whisper(a)
    if bool(a.plan) != bool(a.wav) or not (a.plan or a.write_vocab):
        die("asr needs PLAN and WAV (or only --write-vocab FILE)", 2)
    if a.int8:
        die("--int8 is for a Whisper folder's .onnx graphs; compile a CTC model with edgeplan compile --quantize "
            "int8-dynamic instead", 2)
    chunk = None
    if a.chunk_seconds is not None:      # positive and finite (argparse); at least one sample at the rate
        chunk = int(round(a.chunk_seconds * a.rate))
        if chunk < 1:
            die(f"--chunk-seconds {a.chunk_seconds}: under one sample at {a.rate} Hz", 2)
    if a.write_vocab:
        from edgeplan.models import ASR_VOCAB as vocab
        write_file(check_writable(a.write_vocab, "--write-vocab", keep=(a.plan, a.wav)), vocab_text(vocab).encode())
        print(f"wrote the ASR model's vocabulary ({len(vocab)} tokens, blank first) -> {a.write_vocab}")
        if not a.plan:
            return 0
    vocab = _read_vocab(a.vocab or a.write_vocab) if a.vocab or a.write_vocab else None
    try:
        audio, rate = read_wav(a.wav, rate=a.rate)
    except OSError as e:
        die(f"cannot read {a.wav}: {os_reason(e)}")
    except WavError as e:
        swapped = str(a.plan).lower().endswith(".wav") and not str(a.wav).lower().endswith(".wav")
        die(f"{e}" + ("; the order is: edgeplan asr PLAN WAV" if swapped else ""))
    sess, open_ms = _open(a.plan, a.threads)
    try:
        x_info, out_name, _ = asr_io(sess)
    except ValueError as e:
        die(f"{a.plan}: {e}")
    dur = len(audio) / rate
    lo, hi = x_info.min_shape[-1], x_info.max_shape[-1]
    print(f"{a.wav}: {len(audio)} samples, {dur:.3f} s at {rate} Hz")
    print(f"{a.plan}: input {x_info.name!r} {x_info.shape_str()} ({lo / rate:.3f}..{hi / rate:.3f} s), "
          f"output {out_name!r}; opened in {open_ms:.1f} ms")
    if chunk is not None and chunk > hi:
        print(f"note: --chunk-seconds {a.chunk_seconds} is past the plan's bound; chunks of {hi} samples")
    times, r = [], None
    for _ in range(a.repeat):
        try:
            r = transcribe(sess, audio, chunk)
        except (EdgeplanError, ValueError) as e:
            die(f"{a.plan}: {e}")
        times.append(r["run_ms"])
    if len(r["spans"]) > 1:
        why = "--chunk-seconds" if chunk else f"the audio is longer than the plan's bound of {hi} samples"
        print(f"chunks: {len(r['spans'])} of at most {max(e - s for s, e in r['spans'])} samples ({why}); each "
              f"is recognised on its own, so no context crosses a chunk boundary")
    if r["padded"]:
        print(f"note: {r['padded']} samples of silence padded up to the plan's minimum of {lo} samples")
    ids = r["ids"]
    print(f"frames: {len(r['frames'])} -> {len(ids)} tokens after CTC greedy decoding (repeats merged, blank 0 "
          f"dropped)")
    print("tokens: " + " ".join(map(str, ids)))
    if vocab is not None:
        print(f"text: {decode_text(ids, vocab)!r}")
    _footer(sess, times, dur)
    return 0


def _parse_tokens(text: str) -> np.ndarray:
    """--tokens "1,2,3" (commas and/or spaces) -> int64 ids; each must be an integer 0 <= id < 2^63."""
    try:
        ids = [int(v) for v in text.replace(" ", ",").split(",") if v]
    except ValueError:
        die(f"--tokens expects comma-separated integer ids, got {text!r}", 2)
    if not ids:
        die("--tokens is empty; give token ids such as --tokens 20,17,24", 2)
    bad = [v for v in ids if not 0 <= v < 1 << 63]
    if bad:
        die(f"--tokens: id {bad[0]} is out of range (token ids are 0 or more)", 2)
    return np.array(ids, np.int64)


def _text_tokens(text: str) -> np.ndarray:
    """--text -> the zoo TTS model's ids. A text with no letter or punctuation mark the model knows is
    refused (the model would be given one space), and the characters dropped are named."""
    from edgeplan.models import TTS_SYMBOLS as symbols
    known = set(symbols[1:])
    if not any(c in known and c != " " for c in text.lower()):
        die(f"--text {text!r} has no character the TTS model speaks (it knows {''.join(symbols[2:])!r} "
            "and space)", 2)
    dropped = sorted({c for c in text.lower() if c not in known})
    if dropped:
        print(f"note: characters the model does not know were dropped: {''.join(dropped)!r}")
    return text_tokens(text).reshape(-1)


def _is_piper(path) -> bool:
    """A Piper voice: a model or plan with a voice config beside it (PLAN.json or STEM.onnx.json), or an
    .onnx with Piper's inputs."""
    from pathlib import Path
    from .plan import is_plan_file
    p = Path(path)
    if not p.is_file():
        return False
    if p.with_name(p.name + ".json").is_file() or p.with_suffix(".onnx.json").is_file():
        return True
    if is_plan_file(p):
        return False
    try:      # an .onnx without its json: a voice when its inputs are Piper's (then the json is asked for)
        import onnx
        names = {i.name for i in onnx.load(str(p), load_external_data=False).graph.input}
    except Exception:  # noqa: BLE001 — not an ONNX file: the plan path reports what it is
        return False
    return {"input", "input_lengths", "scales"} <= names


def cmd_piper(a) -> int:
    """edgeplan tts VOICE: a Piper voice (.onnx + .onnx.json, or its plan), sentence by sentence."""
    import os
    import wave
    from . import EdgeplanError
    from ._cdef import K
    from .piper import HOP, Voice, VoiceError, phonemize, sentences
    given = [x for x in (a.text, a.ipa, a.ids if a.ids is not None else a.tokens) if x is not None]
    if len(given) != 1:
        die("tts needs one of --text \"...\", --ipa \"...\" or --ids 1,2,3", 2)
    check_writable(a.output, "-o", keep=(a.plan, a.config))
    try:
        voice = Voice.load(a.plan, a.config)
        if a.ids is not None or a.tokens is not None:
            items = [("ids", voice.check_ids(_parse_tokens(a.ids if a.ids is not None else a.tokens).tolist()))]
        else:
            ph = [phonemize(t, voice.espeak_voice) for t in sentences(a.text)] if a.text is not None else \
                [p.strip() for p in re.split(r"(?<=[.!?])\s+", a.ipa) if p.strip()]
            items = []
            for p in ph:
                gone = voice.missing(p.replace(" ", ""))
                if gone:
                    print(f"note: phonemes the voice does not know were dropped: {gone!r}")
                if voice.speaks(p):
                    items.append((p, voice.ids(p)))
            if not items:
                die(f"{'--text' if a.text is not None else '--ipa'}: no phoneme this voice speaks", 2)
        voice.configure(max_frames=max(1, int(a.max_seconds * voice.rate) // HOP), threads=a.threads, log=print)
        cap = voice.capacity()
    except VoiceError as e:
        die(str(e), 2)
    except EdgeplanError as e:
        die(f"{a.plan}: {e}")
    print(f"{a.plan}: Piper voice, {voice.rate} Hz, up to {cap} ids and {a.max_seconds:g} s a sentence")
    scales = (a.noise_scale, a.length_scale, a.noise_w)
    # streamed: each sentence's samples go to a temporary file beside the output as they are made, which
    # replaces the output once the last one is in (an existing file is never left half written)
    import tempfile
    from pathlib import Path
    out = Path(a.output)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    times, total = [], 0
    try:
        with os.fdopen(fd, "wb") as f, wave.open(f, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(voice.rate)
            for what, ids in items:
                try:
                    voice.session_for(len(ids))    # opened (compiled the first time) outside the timing
                    t = time.perf_counter()
                    y = voice.speak(ids, *scales, speaker=a.speaker)
                except VoiceError as e:
                    die(f"{what!r}: {e}", 2)
                except EdgeplanError as e:
                    hint = (f"; the sentence is longer than the plan's {a.max_seconds:g} s: split it, or give "
                            f"--max-seconds" if e.status == K.EP_ERR_RUN_BOUND else "")
                    die(f"{a.plan}: {e}{hint}")
                times.append((time.perf_counter() - t) * 1e3)
                if not np.isfinite(y).all():
                    die(f"{a.plan}: the voice's audio has NaN or Inf; {a.output} not written")
                w.writeframes(np.clip(np.round(y.astype(np.float64) * 32768.0), -32768, 32767).astype("<i2").tobytes())
                total += len(y)
                print(f"sentence {len(times)}: {len(ids)} ids -> {len(y) / voice.rate:.2f} s in {times[-1]:.1f} ms"
                      + (f"  {what}" if what != "ids" else ""), flush=True)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dur = total / voice.rate
    print(f"samples: {total} ({dur:.3f} s at {voice.rate} Hz) -> {a.output} (16-bit PCM mono)")
    rtf = sum(times) / 1e3 / dur if dur > 0 else float("inf")
    print(f"latency: {sum(times):.1f} ms for {len(times)} sentence(s), real-time factor {rtf:.4f}, "
          f"{a.threads} thread(s)")
    sess = voice.session_for(len(items[-1][1]))   # the last sentence's, open
    print(f"arena: {sess.arena_bytes:,} bytes (tensors {sess.planned_bytes:,}); weights {sess.const_bytes:,} bytes "
          f"in place; peak RSS {peak_rss_kib() / 1024:.1f} MiB")
    return 0


def cmd_tts(a) -> int:
    import io
    from . import EdgeplanError
    from ._cdef import K
    if a.ipa is not None or a.ids is not None or a.config is not None or _is_piper(a.plan):
        return cmd_piper(a)
    if (a.tokens is None) == (a.text is None):
        die("tts needs --tokens 1,2,3 or --text \"...\" (one of them)", 2)
    # everything is checked before the plan runs; the wav is written only once the audio is ready
    tokens = _text_tokens(a.text) if a.text is not None else _parse_tokens(a.tokens)
    check_writable(a.output, "-o", keep=(a.plan,))
    sess, open_ms = _open(a.plan, a.threads)
    try:
        tok, out_name = tts_io(sess)
    except ValueError as e:
        die(f"{a.plan}: {e}")
    print(f"{a.plan}: input {tok.name!r} {tok.shape_str()}, output {out_name!r}; opened in {open_ms:.1f} ms")
    times, r = [], None
    for _ in range(a.repeat):
        try:
            r = synthesize(sess, tokens)
        except EdgeplanError as e:
            hint = ("; is every token id below the model's vocabulary size?"
                    if e.status == K.EP_ERR_RUN_INDEX and a.tokens is not None else "")
            die(f"{a.plan}: {e}{hint}")
        except ValueError as e:
            die(f"{a.plan}: {e}")
        times.append(r["run_ms"])
    y = r["audio"]
    print(f"tokens: {len(tokens)} ({' '.join(map(str, tokens.tolist()))})"
          + (f" from {a.text!r}" if a.text is not None else ""))
    if r["frames"]:
        d = r["durations"]
        print(f"frames: {r['frames']}" + (f" (durations {' '.join(map(str, d.tolist()))})" if d is not None else ""))
    dur = len(y) / a.model_rate
    rate = a.rate or a.model_rate
    buf = io.BytesIO()
    try:
        n = write_wav(buf, resample(y, a.model_rate, rate), rate)
    except ValueError as e:         # NaN or Inf in the plan's audio
        die(f"{a.plan}: {e}; {a.output} not written")
    write_file(a.output, buf.getvalue())
    print(f"samples: {len(y)} ({dur:.3f} s at {a.model_rate} Hz)"
          + (f", resampled to {n} at {rate} Hz" if rate != a.model_rate else "")
          + f" -> {a.output} (16-bit PCM mono)")
    _footer(sess, times, dur)
    return 0


def _vad_options(p) -> None:
    """silero-vad's get_speech_timestamps parameters, its defaults."""
    p.add_argument("--threshold", type=float, default=0.5, help="speech probability threshold (default 0.5)")
    p.add_argument("--min-speech-ms", type=float, default=250, help="shorter speech is dropped (default 250)")
    p.add_argument("--min-silence-ms", type=float, default=100, help="silence that ends a segment (default 100)")
    p.add_argument("--speech-pad-ms", type=float, default=30, help="padding on each side (default 30)")


def add_parsers(sub) -> None:
    """The asr and tts subcommands, on cli.main's subparsers."""
    s = sub.add_parser("asr", help="speech to text: a Whisper model folder, or a CTC ASR plan, on a 16 kHz mono wav")
    s.add_argument("plan", nargs="?", metavar="MODEL", help="a Whisper folder (tools/whisper_ct2.py writes one: "
                   "encoder, decoder[, decoder_with_past] as .onnx or .eplan, whisper.json, vocabulary.txt), or a CTC "
                   "ASR plan: audio [1, samples] -> tokens [1, frames]")
    s.add_argument("wav", nargs="?", help="PCM wav (8/16/24/32-bit; several channels are averaged)")
    s.add_argument("--vocab", metavar="FILE", help="one token per line, blank first; prints the text")
    s.add_argument("--write-vocab", metavar="FILE", help="write the zoo ASR model's vocabulary (models/asr.py) to "
                   "FILE (and use it, if PLAN and WAV are given too)")
    s.add_argument("--chunk-seconds", type=positive_float, metavar="S",
                   help="recognise the audio in pieces of S seconds (default: whole, or pieces of the plan's "
                        "bound when the audio is longer)")
    s.add_argument("--rate", type=sample_rate, default=ASR_RATE, help=f"the plan's sample rate (default "
                   f"{ASR_RATE}); a wav at another rate is an error (no resampling)")
    s.add_argument("--repeat", type=positive_int, default=1, help="runs to time (median)")
    s.add_argument("--threads", type=positive_int, default=1, help="threads per run, this one included (default 1)")
    s.add_argument("--vad", metavar="MODEL", help="a Whisper folder's audio cut into speech segments by this Silero "
                   "VAD (.onnx or its plan) first, each transcribed")
    s.add_argument("--int8", action="store_true", help="a Whisper folder's .onnx graphs compiled with int8 weights "
                   "and activations quantised per row at run time (--quantize int8-dynamic)")
    _vad_options(s)
    s.set_defaults(fn=cmd_asr)
    v = sub.add_parser("vad", help="speech segments of a wav by a Silero VAD: one 'start end' (seconds) a line")
    v.add_argument("model", help="Silero VAD v5/v6 .onnx (compiled on first use and cached) or a plan of it")
    v.add_argument("wav", help="PCM wav at 16000 or 8000 Hz")
    v.add_argument("--threads", type=positive_int, default=1, help="threads per run (default 1)")
    _vad_options(v)
    v.set_defaults(fn=cmd_vad)
    t = sub.add_parser("tts", help="text to speech: a Piper voice (or a zoo TTS plan) to a wav")
    t.add_argument("plan", metavar="VOICE", help="a Piper voice's .onnx (its .onnx.json beside it) or a plan "
                   "compiled from one; or a zoo TTS plan: tokens [1, N] int64 -> audio [1, 1, samples]")
    t.add_argument("--tokens", metavar="1,2,3", help="token ids (a zoo plan; for a voice, as --ids)")
    t.add_argument("--ids", metavar="1,0,41,...", help="a Piper voice's phoneme ids, BOS/pad/EOS included")
    t.add_argument("--ipa", help="phonemes (IPA, as espeak-ng writes them), mapped with the voice's phoneme_id_map")
    t.add_argument("--text", help="text: for a voice, phonemized by espeak-ng (installed separately) sentence by "
                   "sentence; for a zoo plan, its token ids (models/tts.py)")
    t.add_argument("--noise-scale", type=float, help="a voice's noise scale (default: its .onnx.json's)")
    t.add_argument("--length-scale", type=float, help="a voice's length scale, >1 slower (default: its json's)")
    t.add_argument("--noise-w", type=float, help="a voice's duration noise (default: its json's)")
    t.add_argument("--speaker", type=int, default=0, help="speaker id of a multi-speaker voice (default 0)")
    t.add_argument("--config", metavar="JSON", help="the voice's .onnx.json, when it is not beside VOICE")
    t.add_argument("--max-seconds", type=positive_float, default=11.6, metavar="S",
                   help="the longest sentence the voice's plan takes (default 11.6 s; the arena grows with it)")
    t.add_argument("-o", "--output", default="out.wav",
                   help="the wav (default out.wav); an existing file is replaced only once the audio is ready")
    t.add_argument("--model-rate", type=sample_rate, default=TTS_RATE,
                   help=f"the plan's audio sample rate (default {TTS_RATE}, models/tts.py)")
    t.add_argument("--rate", type=sample_rate, help="sample rate of the wav written (default: the model's); another "
                   "rate is resampled (FFT), e.g. --rate 16000 for edgeplan asr")
    t.add_argument("--repeat", type=positive_int, default=1, help="runs to time (median)")
    t.add_argument("--threads", type=positive_int, default=1, help="threads per run, this one included (default 1)")
    t.set_defaults(fn=cmd_tts)
