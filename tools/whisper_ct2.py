#!/usr/bin/env python3
"""Whisper in CTranslate2's format (faster-whisper's model folders: model.bin, config.json,
vocabulary.txt) to ONNX: the graphs `edgeplan asr` runs.

    python3 tools/whisper_ct2.py CT2_DIR OUT_DIR [--seconds S]

writes into OUT_DIR:
- encoder.onnx: audio [1, 480000] (30 s at 16 kHz, zero-padded, as Whisper is trained) -> for each
  decoder layer i, cross_k<i> [1, heads, head_dim, 1500] (its cross-attention keys, transposed for
  q @ k) and cross_v<i> [1, heads, 1500, head_dim] (its values), computed once per window; and hidden
  [1, 1500, d] (the encoder's output). Whisper's log-mel front end
  is in the graph: reflect-padded STFT (n_fft 400, hop 160, periodic Hann) as a convolution with the
  windowed DFT basis, power, 80 Slaney mel filters, log10 floored at max - 8, (x + 4) / 4.
- decoder.onnx: tokens [1, n] (+ every cross_k<i> / cross_v<i>) -> logits [1, vocab] of the last token and
  present_k, present_v [layers, 1, heads, n, head_dim]: the self-attention keys and values of every token.
  Alone, it decodes by full recompute (the whole sequence each step).
- decoder_with_past.onnx: tokens [1, 1], offset [1] (the token's position), past_k, past_v
  [layers, 1, heads, P, head_dim] -> logits and present (P + 1): one step on the cache.
- With --seconds S (S < 30, a multiple of 0.02 s), the window is S seconds: the encoder sees 100 S mel frames and
  keeps the first 50 S of its 1500 positions, the decoder cross-attends to those. Whisper is trained on 30 s
  windows; a shorter one (whisper.cpp's audio context) transcribes short commands at a fraction of the encoder's
  cost (attention is quadratic in the positions), with some loss of accuracy on longer speech.
- tokenizer.json (copied: vocabulary and special tokens) and whisper.json: the special ids, the ids
  the decoder suppresses (config.json's), the model sizes; whisper.txt: the same decoding facts as
  "key value" lines for the C tool (edgeplan-speech asr).

The model.bin reader follows CTranslate2's binary layout (version 6): a header (version, spec name,
revision), then each variable as name, rank, dims, dtype code, byte count and data, then aliases. The
weights may be float16, float32 or int8 (with a float scale per output row, "<name>_scale"); all become
float32 here. Whisper's key projections have no bias (CTranslate2 stores zeros in the fused ones).
"""
from __future__ import annotations

import argparse
import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16000
N_FFT, HOP, N_MELS_DEFAULT = 400, 160, 80
CHUNK = 30 * SAMPLE_RATE                   # samples per window (Whisper's)
FRAMES = CHUNK // HOP                      # 3000 mel frames -> 1500 encoder positions
NEG = -1e9                                 # masked attention score (finite: no NaN for a fully masked row)
DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


class FormatError(ValueError):
    pass


# ------------------------------------------------------------------------------------------ model.bin
def read_ct2(path) -> dict:
    """{variable name: numpy array} of a CTranslate2 model.bin (aliases resolved)."""
    b = Path(path).read_bytes()
    o = 0

    def take(fmt):
        nonlocal o
        if o + struct.calcsize(fmt) > len(b):
            raise FormatError(f"{path}: truncated at byte {o}")
        v = struct.unpack_from(fmt, b, o)
        o += struct.calcsize(fmt)
        return v[0]

    def string():
        nonlocal o
        n = take("<H")
        if n == 0 or o + n > len(b):
            raise FormatError(f"{path}: bad string at byte {o}")
        s = b[o:o + n - 1].decode("utf-8")
        o += n
        return s

    version = take("<I")
    if version < 5:
        raise FormatError(f"{path}: CTranslate2 binary version {version}; this reader takes 5 and up")
    spec = string()
    if spec != "WhisperSpec":
        raise FormatError(f"{path}: a {spec}, not a WhisperSpec")
    take("<I")                                     # spec revision
    out = {}
    for _ in range(take("<I")):
        name = string()
        dims = [take("<I") for _ in range(take("<B"))]
        code = take("<B")
        nbytes = take("<I")
        if code not in DTYPES:
            raise FormatError(f"{path}: variable {name} has dtype code {code}")
        dt = np.dtype(DTYPES[code])
        count = int(np.prod(dims, dtype=np.int64)) if dims else 1
        if nbytes != count * dt.itemsize or o + nbytes > len(b):
            raise FormatError(f"{path}: variable {name} {dims} holds {nbytes} bytes")
        out[name] = np.frombuffer(b, dt, count, o).reshape(dims)
        o += nbytes
    if o < len(b):
        for _ in range(take("<I")):
            alias, target = string(), string()
            out[alias] = out[target]
    return out


class Weights:
    def __init__(self, raw: dict):
        self.raw = raw

    def __call__(self, name: str) -> np.ndarray:
        a = self.raw[name]
        if a.dtype == np.int8 and name + "_scale" in self.raw:     # int8 rows with a float scale each
            return (a.astype(np.float32) / self.raw[name + "_scale"].astype(np.float32).reshape(-1, 1))
        return a.astype(np.float32)

    def scalar(self, name: str, default=None) -> int:
        return int(self.raw[name]) if name in self.raw else default

    def count(self, prefix: str) -> int:
        n = 0
        while f"{prefix}/layer_{n}/ffn/linear_0/weight" in self.raw:
            n += 1
        return n


# ------------------------------------------------------------------------------------------ front end
def mel_filters(n_mels: int, sr: int = SAMPLE_RATE, n_fft: int = N_FFT) -> np.ndarray:
    """[n_mels, n_fft // 2 + 1] triangular filters on the Slaney mel scale (linear below 1 kHz, log
    above), each normalised to unit area (Slaney's 2 / bandwidth): the filters Whisper was trained with."""
    def hz_to_mel(f):
        f = np.asarray(f, np.float64)
        lin = f / (200.0 / 3)
        logstep = np.log(6.4) / 27.0
        return np.where(f >= 1000.0, 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / logstep, lin)

    def mel_to_hz(m):
        m = np.asarray(m, np.float64)
        logstep = np.log(6.4) / 27.0
        return np.where(m >= 15.0, 1000.0 * np.exp(logstep * (m - 15.0)), m * (200.0 / 3))

    freqs = np.linspace(0, sr / 2, n_fft // 2 + 1)
    pts = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2), n_mels + 2))
    fdiff = np.diff(pts)
    ramps = pts[:, None] - freqs[None, :]
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    w = np.maximum(0, np.minimum(lower, upper))
    return (w * (2.0 / (pts[2:n_mels + 2] - pts[:n_mels]))[:, None]).astype(np.float32)


def dft_kernels(n_fft: int = N_FFT) -> np.ndarray:
    """[2 * (n_fft // 2 + 1), 1, n_fft]: the periodic-Hann-windowed cos and -sin bases, as Conv weights."""
    n = np.arange(n_fft)
    win = 0.5 - 0.5 * np.cos(2 * np.pi * n / n_fft)
    k = np.arange(n_fft // 2 + 1)[:, None]
    ang = 2 * np.pi * k * n[None, :] / n_fft
    return np.concatenate([np.cos(ang) * win, -np.sin(ang) * win])[:, None, :].astype(np.float32)


# ------------------------------------------------------------------------------------------ graphs
class G:
    """A small ONNX graph builder: each method adds a node and returns its output name."""

    def __init__(self, name):
        from onnx import helper
        self.h, self.name = helper, name
        self.nodes, self.inits, self.k = [], [], 0

    def _n(self, base):
        self.k += 1
        return f"{base}_{self.k}"

    def const(self, a, base="c"):
        from onnx import numpy_helper
        name = self._n(base)
        self.inits.append(numpy_helper.from_array(np.array(a, order="C"), name))  # 0-d stays 0-d
        return name

    def op(self, kind, ins, n_out=1, **attrs):
        outs = [self._n(kind) for _ in range(n_out)]
        self.nodes.append(self.h.make_node(kind, ins, outs, name=self._n(kind + "_node"), **attrs))
        return outs[0] if n_out == 1 else outs

    def i64(self, v):
        return self.const(np.array(v, np.int64), "i")

    def linear(self, x, w, b=None):
        y = self.op("MatMul", [x, self.const(np.ascontiguousarray(w.T), "w")])
        return self.op("Add", [y, self.const(b, "b")]) if b is not None else y

    def layer_norm(self, x, g, b):
        return self.op("LayerNormalization", [x, self.const(g, "g"), self.const(b, "beta")], axis=-1, epsilon=1e-5)

    def gelu(self, x):   # exact: x * (1 + erf(x / sqrt 2)) / 2
        e = self.op("Erf", [self.op("Div", [x, self.const(np.array(np.sqrt(2.0), np.float32))])])
        return self.op("Mul", [self.op("Mul", [x, self.op("Add", [e, self.const(np.array(1, np.float32))])]),
                               self.const(np.array(0.5, np.float32))])

    def heads(self, x, h, dh):
        """[1, t, h * dh] -> [1, h, t, dh]"""
        return self.op("Transpose", [self.op("Reshape", [x, self.i64([1, -1, h, dh])])], perm=[0, 2, 1, 3])

    def merge(self, x, d):
        return self.op("Reshape", [self.op("Transpose", [x], perm=[0, 2, 1, 3]), self.i64([1, -1, d])])

    def attend(self, q, k, v, dh, mask=None, kt=False):
        """softmax(q k^T / sqrt(dh) + mask) v; kt: k is given transposed ([.., dh, t])."""
        s = self.op("MatMul", [q, k if kt else self.op("Transpose", [k], perm=[0, 1, 3, 2])])
        s = self.op("Mul", [s, self.const(np.array(1.0 / np.sqrt(dh), np.float32))])
        if mask is not None:
            s = self.op("Add", [s, mask])
        return self.op("MatMul", [self.op("Softmax", [s], axis=-1), v])

    def model(self, inputs, outputs):
        from onnx import helper
        g = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="edgeplan-whisper-ct2")
        m.ir_version = 8
        return m


def _split_rows(a, parts):
    n = a.shape[0] // parts
    return [a[i * n:(i + 1) * n] for i in range(parts)]


def build_encoder(w: Weights, n_mels: int, frames: int = FRAMES):
    from onnx import TensorProto as T
    from onnx import helper
    g = G("whisper_encoder")
    h = w.scalar("encoder/num_heads")
    pos = w("encoder/position_encodings/encodings")[:frames // 2]
    d = pos.shape[1]
    dh = d // h
    # log-mel: reflect pad n_fft / 2, STFT as a strided convolution, power, mel, log10, floor, scale
    x = g.op("Unsqueeze", ["audio", g.i64([1])])                                   # [1, 1, samples]
    x = g.op("Pad", [x, g.i64([0, 0, N_FFT // 2, 0, 0, N_FFT // 2])], mode="reflect")
    spec = g.op("Conv", [x, g.const(dft_kernels())], strides=[HOP])               # [1, 402, 3001]
    spec = g.op("Slice", [spec, g.i64([0]), g.i64([frames]), g.i64([2])])          # the last frame dropped
    nb = N_FFT // 2 + 1
    re_, im_ = g.op("Split", [spec, g.i64([nb, nb])], n_out=2, axis=1)
    power = g.op("Add", [g.op("Mul", [re_, re_]), g.op("Mul", [im_, im_])])       # [1, 201, 3000]
    mel = g.op("MatMul", [g.const(mel_filters(n_mels)[None]), power])             # [1, 80, 3000]
    logm = g.op("Div", [g.op("Log", [g.op("Max", [mel, g.const(np.array(1e-10, np.float32))])]),
                        g.const(np.array(np.log(10.0), np.float32))])
    top = g.op("ReduceMax", [logm], keepdims=1)
    logm = g.op("Max", [logm, g.op("Sub", [top, g.const(np.array(8.0, np.float32))])])
    feats = g.op("Div", [g.op("Add", [logm, g.const(np.array(4.0, np.float32))]), g.const(np.array(4.0, np.float32))])
    g.nodes.append(helper.make_node("Identity", [feats], ["log_mel"], name="log_mel"))   # a probe: [1, n_mels, 3000]
    # two convolutions with GELU, positions, the pre-norm blocks, the final norm
    x = g.gelu(g.op("Conv", [feats, g.const(w("encoder/conv1/weight")), g.const(w("encoder/conv1/bias"))], pads=[1, 1]))
    x = g.gelu(g.op("Conv", [x, g.const(w("encoder/conv2/weight")), g.const(w("encoder/conv2/bias"))], pads=[1, 1],
                    strides=[2]))
    x = g.op("Add", [g.op("Transpose", [x], perm=[0, 2, 1]), g.const(pos[None])])  # [1, 1500, d]
    for i in range(w.count("encoder")):
        p = f"encoder/layer_{i}"
        y = g.layer_norm(x, w(f"{p}/self_attention/layer_norm/gamma"), w(f"{p}/self_attention/layer_norm/beta"))
        qkv = w(f"{p}/self_attention/linear_0/weight")
        bqkv = w(f"{p}/self_attention/linear_0/bias")
        q, k, v = (g.heads(g.linear(y, wt, bt), h, dh) for wt, bt in zip(_split_rows(qkv, 3), _split_rows(bqkv, 3)))
        a = g.merge(g.attend(q, k, v, dh), d)
        x = g.op("Add", [x, g.linear(a, w(f"{p}/self_attention/linear_1/weight"), w(f"{p}/self_attention/linear_1/bias"))])
        x = g.op("Add", [x, _ffn(g, w, p, x)])
    x = g.layer_norm(x, w("encoder/layer_norm/gamma"), w("encoder/layer_norm/beta"))
    outs = []
    for i in range(w.count("decoder")):
        p = f"decoder/layer_{i}/attention/linear_1"
        (wk, wv), (bk, bv) = _split_rows(w(f"{p}/weight"), 2), _split_rows(w(f"{p}/bias"), 2)
        kt = g.op("Transpose", [g.heads(g.linear(x, wk, bk), h, dh)], perm=[0, 1, 3, 2])
        g.nodes.append(helper.make_node("Identity", [kt], [f"cross_k{i}"], name=f"cross_k{i}"))
        g.nodes.append(helper.make_node("Identity", [g.heads(g.linear(x, wv, bv), h, dh)], [f"cross_v{i}"],
                                        name=f"cross_v{i}"))
        outs += [helper.make_tensor_value_info(f"cross_k{i}", T.FLOAT, [1, h, dh, frames // 2]),
                 helper.make_tensor_value_info(f"cross_v{i}", T.FLOAT, [1, h, frames // 2, dh])]
    g.nodes.append(helper.make_node("Identity", [x], ["hidden"], name="hidden_out"))
    return g.model([helper.make_tensor_value_info("audio", T.FLOAT, [1, frames * HOP])],
                   outs + [helper.make_tensor_value_info("hidden", T.FLOAT, [1, frames // 2, d])])


def _ffn(g, w, p, x):
    y = g.layer_norm(x, w(f"{p}/ffn/layer_norm/gamma"), w(f"{p}/ffn/layer_norm/beta"))
    y = g.gelu(g.linear(y, w(f"{p}/ffn/linear_0/weight"), w(f"{p}/ffn/linear_0/bias")))
    return g.linear(y, w(f"{p}/ffn/linear_1/weight"), w(f"{p}/ffn/linear_1/bias"))


def build_decoder(w: Weights, with_past: bool, frames: int = FRAMES):
    """tokens -> logits of the last token, and the self-attention keys / values of every position."""
    from onnx import TensorProto as T
    from onnx import helper
    g = G("whisper_decoder_with_past" if with_past else "whisper_decoder")
    h = w.scalar("decoder/num_heads")
    emb = w("decoder/embeddings/weight")
    pos = w("decoder/position_encodings/encodings")
    vocab, d = emb.shape
    dh, L = d // h, w.count("decoder")
    ids = g.op("Squeeze", ["tokens", g.i64([0])])                                  # [n]
    n = g.op("Shape", [ids])                                                        # [1]
    steps = g.op("Range", [g.i64(0), g.op("Squeeze", [n, g.i64([0])]), g.i64(1)])  # 0 .. n-1
    where = g.op("Add", [steps, "offset"]) if with_past else steps                 # positions
    x = g.op("Add", [g.op("Gather", [g.const(emb, "emb"), ids], axis=0), g.op("Gather", [g.const(pos, "pos"), where], axis=0)])
    x = g.op("Unsqueeze", [x, g.i64([0])])                                          # [1, n, d]
    if with_past:
        # a key at position j is masked for the query at position i when j > i (the past is all visible)
        total = g.op("Shape", [g.op("Gather", ["past_k", g.i64(0)], axis=0)], start=2, end=3)   # [P]
        P = g.op("Squeeze", [total, g.i64([0])])
        cols = g.op("Range", [g.i64(0), g.op("Add", [P, g.op("Squeeze", [n, g.i64([0])])]), g.i64(1)])
    else:
        cols = steps
    rows = g.op("Unsqueeze", [where, g.i64([1])])
    mask = g.op("Where", [g.op("Greater", [g.op("Unsqueeze", [cols, g.i64([0])]), rows]),
                          g.const(np.array(NEG, np.float32)), g.const(np.array(0, np.float32))])
    pk, pv = [], []
    for i in range(L):
        p = f"decoder/layer_{i}"
        y = g.layer_norm(x, w(f"{p}/self_attention/layer_norm/gamma"), w(f"{p}/self_attention/layer_norm/beta"))
        qkv = w(f"{p}/self_attention/linear_0/weight")
        bqkv = w(f"{p}/self_attention/linear_0/bias")
        q, k, v = (g.heads(g.linear(y, wt, bt), h, dh) for wt, bt in zip(_split_rows(qkv, 3), _split_rows(bqkv, 3)))
        if with_past:
            k = g.op("Concat", [g.op("Gather", ["past_k", g.i64(i)], axis=0), k], axis=2)
            v = g.op("Concat", [g.op("Gather", ["past_v", g.i64(i)], axis=0), v], axis=2)
        pk.append(g.op("Unsqueeze", [k, g.i64([0])]))
        pv.append(g.op("Unsqueeze", [v, g.i64([0])]))
        a = g.merge(g.attend(q, k, v, dh, mask), d)
        x = g.op("Add", [x, g.linear(a, w(f"{p}/self_attention/linear_1/weight"), w(f"{p}/self_attention/linear_1/bias"))])
        y = g.layer_norm(x, w(f"{p}/attention/layer_norm/gamma"), w(f"{p}/attention/layer_norm/beta"))
        q = g.heads(g.linear(y, w(f"{p}/attention/linear_0/weight"), w(f"{p}/attention/linear_0/bias")), h, dh)
        a = g.merge(g.attend(q, f"cross_k{i}", f"cross_v{i}", dh, kt=True), d)
        x = g.op("Add", [x, g.linear(a, w(f"{p}/attention/linear_2/weight"), w(f"{p}/attention/linear_2/bias"))])
        x = g.op("Add", [x, _ffn(g, w, p, x)])
    last = g.op("Gather", [x, g.i64(-1)], axis=1)                                  # [1, d]
    last = g.layer_norm(last, w("decoder/layer_norm/gamma"), w("decoder/layer_norm/beta"))
    g.nodes.append(helper.make_node("Gemm", [last, g.const(emb, "emb_out")], ["logits"], transB=1, name="logits"))
    g.nodes.append(helper.make_node("Concat", pk, ["present_k"], axis=0, name="present_k"))
    g.nodes.append(helper.make_node("Concat", pv, ["present_v"], axis=0, name="present_v"))
    n_tok = 1 if with_past else "n"
    ins = [helper.make_tensor_value_info("tokens", T.INT64, [1, n_tok])]
    if with_past:
        ins += [helper.make_tensor_value_info("offset", T.INT64, [1]),
                helper.make_tensor_value_info("past_k", T.FLOAT, [L, 1, h, "P", dh]),
                helper.make_tensor_value_info("past_v", T.FLOAT, [L, 1, h, "P", dh])]
    for i in range(L):
        ins += [helper.make_tensor_value_info(f"cross_k{i}", T.FLOAT, [1, h, dh, frames // 2]),
                helper.make_tensor_value_info(f"cross_v{i}", T.FLOAT, [1, h, frames // 2, dh])]
    total = "P1" if with_past else "n"
    return g.model(ins, [helper.make_tensor_value_info("logits", T.FLOAT, [1, vocab]),
                         helper.make_tensor_value_info("present_k", T.FLOAT, [L, 1, h, total, dh]),
                         helper.make_tensor_value_info("present_v", T.FLOAT, [L, 1, h, total, dh])])


# ------------------------------------------------------------------------------------------ specials
def special_ids(vocab: list, config: dict) -> dict:
    """The token ids greedy decoding needs, by their names in the vocabulary."""
    at = {t: i for i, t in enumerate(vocab) if t.startswith("<|") and t.endswith("|>")}
    need = ["<|endoftext|>", "<|startoftranscript|>", "<|notimestamps|>"]
    miss = [t for t in need if t not in at]
    if miss:
        raise FormatError(f"the vocabulary has no {', '.join(miss)}")
    multilingual = "<|en|>" in at and len(vocab) >= 51865
    return {
        "eot": at["<|endoftext|>"], "sot": at["<|startoftranscript|>"], "no_timestamps": at["<|notimestamps|>"],
        "timestamp_begin": at["<|notimestamps|>"] + 1, "transcribe": at.get("<|transcribe|>"),
        "english": at.get("<|en|>") if multilingual else None, "multilingual": multilingual,
        "suppress": [int(i) for i in config.get("suppress_ids", [])],
        "suppress_begin": [int(i) for i in config.get("suppress_ids_begin", [])],
    }


def whisper_txt(meta: dict) -> str:
    """whisper.json's decoding facts as "key value" lines (lists comma-separated), for the C tool
    edgeplan-speech asr, which reads no JSON."""
    lead = [meta["sot"]] + ([meta["english"], meta["transcribe"]] if meta["multilingual"] else [])
    rows = {"eot": meta["eot"], "no_timestamps": meta["no_timestamps"], "timestamp_begin": meta["timestamp_begin"],
            "vocab": meta["vocab"], "max_tokens": meta["max_tokens"], "window": meta["window"],
            "prompt": lead + [meta["no_timestamps"]], "suppress": meta["suppress"],
            "suppress_begin": meta["suppress_begin"]}
    return "".join(f"{k} {','.join(map(str, v)) if isinstance(v, list) else v}\n" for k, v in rows.items())


def window_frames(seconds: float) -> int:
    """The mel frames of a window of `seconds` (even: two frames per encoder position)."""
    frames = round(seconds * SAMPLE_RATE / HOP) if np.isfinite(seconds) else 0
    if not (2 <= frames <= FRAMES and frames % 2 == 0 and abs(frames * HOP - seconds * SAMPLE_RATE) < 1e-6):
        raise ValueError(f"--seconds {seconds}: the window must be a multiple of {2 * HOP / SAMPLE_RATE} s, "
                         f"at most {CHUNK // SAMPLE_RATE} s")
    return frames


def convert(src, dst, seconds: float = 30) -> dict:
    import onnx
    src, dst = Path(src), Path(dst)
    frames = window_frames(seconds)
    w = Weights(read_ct2(src / "model.bin"))
    config = json.loads((src / "config.json").read_text()) if (src / "config.json").is_file() else {}
    vocab = (src / "vocabulary.txt").read_text(encoding="utf-8").split("\n")
    if vocab and vocab[-1] == "":
        vocab = vocab[:-1]
    n_mels = w.raw["encoder/conv1/weight"].shape[1]
    dst.mkdir(parents=True, exist_ok=True)
    onnx.save(build_encoder(w, n_mels, frames), dst / "encoder.onnx")
    onnx.save(build_decoder(w, False, frames), dst / "decoder.onnx")
    onnx.save(build_decoder(w, True, frames), dst / "decoder_with_past.onnx")
    emb = w.raw["decoder/embeddings/weight"]
    meta = dict(special_ids(vocab, config), n_mels=n_mels, vocab=int(emb.shape[0]), layers=w.count("decoder"),
                heads=w.scalar("decoder/num_heads"), d_model=int(emb.shape[1]),
                max_tokens=int(w.raw["decoder/position_encodings/encodings"].shape[0]),
                sample_rate=SAMPLE_RATE, window=frames * HOP, source=str(src))
    (dst / "whisper.json").write_text(json.dumps(meta, indent=1))
    (dst / "whisper.txt").write_text(whisper_txt(meta))
    (dst / "vocabulary.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    if (src / "tokenizer.json").is_file():
        shutil.copy(src / "tokenizer.json", dst / "tokenizer.json")
    return meta


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", help="a CTranslate2 Whisper folder (model.bin, config.json, vocabulary.txt)")
    ap.add_argument("dst", help="the folder to write encoder.onnx, decoder.onnx, decoder_with_past.onnx into")
    ap.add_argument("--seconds", type=float, default=30,
                    help="the window, 30 s as Whisper is trained; shorter runs the encoder on fewer positions")
    a = ap.parse_args(argv)
    try:
        meta = convert(a.src, a.dst, a.seconds)
    except (OSError, FormatError, KeyError, ValueError) as e:
        print(f"whisper_ct2: {e}", file=sys.stderr)
        return 1
    print(f"wrote {a.dst}: {meta['layers']} decoder layers, d {meta['d_model']}, {meta['vocab']} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
