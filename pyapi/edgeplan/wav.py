"""WAV files in and out with the standard library's ``wave`` module (PCM only), as float32 samples.

    x, rate = read_wav("speech.wav", rate=16000)    # float32 [n] in [-1, 1], mono
    write_wav("out.wav", y, 22050)                   # float32 in [-1, 1] (clipped) -> 16-bit PCM mono

Reading accepts 8-bit (unsigned), 16-, 24- and 32-bit (signed) PCM, and downmixes several channels to
mono by averaging them. Nothing is resampled: ``rate=`` makes a file at any other rate an error that
says so (``resample`` exists for tools that want it). Compressed or float WAVs (``wave`` reads only PCM)
are errors too.
"""
from __future__ import annotations

import wave
from pathlib import Path

import numpy as np


class WavError(ValueError):
    """A file that is not a PCM WAV edgeplan can read, or not at the rate asked for."""


def read_wav(path, rate: int | None = None, mono: bool = True) -> tuple[np.ndarray, int]:
    """Reads a PCM WAV file: (samples float32 in [-1, 1], sample rate). ``mono``: channels averaged into
    one ([n]); else [n, channels]. ``rate``: the rate the caller needs; another one raises WavError."""
    try:
        with wave.open(str(path), "rb") as w:
            ch, width, sr, n = w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()
            raw = w.readframes(n)
    except wave.Error as e:
        raise WavError(f"{path}: not a PCM WAV file ({e})") from None
    except EOFError:
        raise WavError(f"{path}: truncated WAV file") from None
    except RuntimeError:        # wave's chunk reader, on a chunk size past the end of the file
        raise WavError(f"{path}: not a PCM WAV file (a chunk runs past the end of the file)") from None
    if rate is not None and sr != rate:
        raise WavError(f"{path}: sample rate {sr} Hz, expected {rate} Hz (resample it first, e.g. "
                       f"`sox {Path(path).name} -r {rate} out.wav` or `ffmpeg -i {Path(path).name} -ar {rate} "
                       f"-ac 1 out.wav`)")
    if ch < 1:
        raise WavError(f"{path}: {ch} channels")
    n = len(raw) // (width * ch)                 # a short last frame (truncated file) is dropped
    raw = raw[:n * width * ch]
    if width == 1:                               # 8-bit WAV is unsigned, 128 = silence
        x = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 2:
        x = np.frombuffer(raw, "<i2").astype(np.float32) / 32768.0
    elif width == 3:                             # 24-bit: sign-extend 3 little-endian bytes
        b = np.frombuffer(raw, np.uint8).reshape(-1, 3).astype(np.int32)
        v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        x = (np.where(v >= 1 << 23, v - (1 << 24), v)).astype(np.float32) / float(1 << 23)
    elif width == 4:
        x = (np.frombuffer(raw, "<i4").astype(np.float64) / 2147483648.0).astype(np.float32)
    else:
        raise WavError(f"{path}: {8 * width}-bit samples are not supported (8, 16, 24 or 32-bit PCM)")
    x = x.reshape(n, ch)
    if mono:
        x = x[:, 0].copy() if ch == 1 else x.mean(axis=1, dtype=np.float64).astype(np.float32)
    return x, sr


def resample(x, src: int, dst: int) -> np.ndarray:
    """Band-limited resampling of float samples [n] from ``src`` to ``dst`` Hz (FFT: the spectrum cut or
    zero-extended; length round(n * dst / src)). For wav files going between models, not for quality."""
    if not (src > 0 and dst > 0):
        raise ValueError(f"resample: rates must be above 0 Hz, got {src} -> {dst}")
    x = np.asarray(x, dtype=np.float32).reshape(-1)
    if src == dst or x.size == 0:
        return x
    n, m = x.size, max(1, int(round(x.size * dst / src)))
    spec = np.fft.rfft(x.astype(np.float64))
    out = np.zeros(m // 2 + 1, dtype=np.complex128)
    k = min(spec.size, out.size)
    out[:k] = spec[:k]
    return (np.fft.irfft(out, m) * (m / n)).astype(np.float32)


def write_wav(path, samples, rate: int) -> int:
    """Writes float samples ([n], or any shape with one non-unit dim, e.g. [1, 1, n]) as 16-bit PCM mono
    at ``rate`` Hz; values are clipped to [-1, 32767 / 32768]. Returns the number of samples written.
    ``path``: a file name or a binary file object. Everything is checked before the file is opened, so a
    bad argument leaves an existing file as it was."""
    if not 1 <= int(rate) < 1 << 32:
        raise ValueError(f"write_wav: sample rate {rate} Hz (need 1 .. 2^32 - 1)")
    x = np.asarray(samples, dtype=np.float32)
    if x.ndim != 1:
        if sum(d != 1 for d in x.shape) > 1:
            raise ValueError(f"write_wav: expected mono samples ([n] or [1, 1, n]), got shape {list(x.shape)}")
        x = x.reshape(-1)
    if not np.isfinite(x).all():
        raise ValueError("write_wav: samples contain NaN or Inf")
    # the reader's scale (int16 / 32768), so a read-write round trip is exact to half a step
    pcm = np.clip(np.round(x.astype(np.float64) * 32768.0), -32768, 32767).astype("<i2")
    if hasattr(path, "write"):
        _write_pcm16(path, pcm, int(rate))
    else:   # opened here: wave.open(name) that fails leaves a half-made writer whose __del__ complains
        with open(path, "wb") as f:
            _write_pcm16(f, pcm, int(rate))
    return int(pcm.size)


def _write_pcm16(f, pcm: np.ndarray, rate: int) -> None:
    with wave.open(f, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
