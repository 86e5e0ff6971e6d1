"""A small Conformer-CTC speech recogniser whose graph starts at raw 16 kHz audio.

    audio [1, samples] ─ log-mel front end ─ conv subsampling (4x) ─ Conformer blocks ─ CTC head
        ├─▶ log_probs [1, frames, vocab]  (LogSoftmax)
        └─▶ tokens    [1, frames]         (greedy decode: ArgMax over the vocab, int64)

Front end (in the graph, like NeMo's AudioToMelSpectrogramPreprocessor exported with the model):
centre padding (reflect, n_fft / 2 each side), STFT (Hann window constant, frame 400 = 25 ms,
hop 160 = 10 ms, onesided), power spectrum, MatMul with the MelWeightMatrix op's matrix, Log(x + 1e-6),
per-utterance per-feature normalisation over time (NeMo's normalize="per_feature").
Frames: samples // 160 + 1 mel frames, then ceil twice by 2: frames = ((F - 1) // 2) // 2 + 1.

Conformer block (Gulati et al. 2020, without relative positional encoding): x + FFN/2, x + MHSA,
x + conv module (pointwise Conv1d, GLU as Split + Sigmoid + Mul, depthwise Conv1d k15 + BatchNorm,
Swish, pointwise Conv1d), x + FFN/2, LayerNorm. Every Reshape target uses 0 / -1 only, so the one graph
runs at any length. Weights are deterministic (seeded) and untrained: the text is noise.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ._speech import SeqGraph

SEED = 5
SAMPLE_RATE = 16000
N_FFT = 400
HOP = 160
MIN_SAMPLES = N_FFT // 2 + 1      # reflect padding needs more samples than the pad

# CTC vocabulary: blank first, then characters
ASR_VOCAB = ["<b>", " "] + [chr(c) for c in range(ord("a"), ord("z") + 1)] + ["'", "-", ".", "?"]


def asr_frames(samples: int) -> int:
    """Output frames for ``samples`` audio samples."""
    f = samples // HOP + 1
    return ((f - 1) // 2) // 2 + 1


def ctc_greedy_text(tokens, vocab=ASR_VOCAB) -> str:
    """Greedy CTC decoding of one token sequence: merge repeats, drop blanks (index 0)."""
    out, prev = [], -1
    for t in np.asarray(tokens).reshape(-1).tolist():
        if t != prev and t != 0:
            out.append(vocab[t] if 0 <= t < len(vocab) else "?")
        prev = t
    return "".join(out)


def _front_end(g: SeqGraph, x, n_mels: int):
    p = "preprocessor."
    x = g.op("Pad", [x, g.ints([0, N_FFT // 2, 0, N_FFT // 2])], p + "pad", mode="reflect")
    x = g.unsqueeze(x, [2], p + "unsqueeze")                                  # [1, L, 1]
    n = np.arange(N_FFT, dtype=np.float64)
    hann = (0.5 - 0.5 * np.cos(2 * np.pi * n / N_FFT)).astype(np.float32)    # periodic, as torch
    spec = g.op("STFT", [x, g.ints(HOP, "preprocessor.hop_length"), g.param(p + "window", hann),
                         g.ints(N_FFT, "preprocessor.n_fft")], p + "stft", onesided=1)  # [1, F, 201, 2]
    # onnx's STFT shape inference gives up on a symbolic signal length; name the frame dim so every
    # tensor after it keeps a known rank
    g.annotate(spec, [1, "mel_frames", N_FFT // 2 + 1, 2])
    power = g.op("Mul", [spec, spec], p + "square")
    power = g.op("ReduceSum", [power, g.ints([-1])], p + "power", keepdims=0)  # [1, F, 201]
    mel_w = g.op("MelWeightMatrix", [g.ints(n_mels, "preprocessor.n_mels"),
                                     g.ints(N_FFT, "preprocessor.n_fft"),
                                     g.ints(SAMPLE_RATE, "preprocessor.sample_rate"),
                                     g.const(0.0, name="preprocessor.f_min"),
                                     g.const(SAMPLE_RATE / 2, name="preprocessor.f_max")],
                 p + "mel_weight_matrix", output_datatype=TensorProto.FLOAT)   # [201, n_mels]
    mel = g.op("MatMul", [power, mel_w], p + "mel")
    mel = g.op("Log", [g.op("Add", [mel, g.const(1e-6, name="preprocessor.log_guard")], p + "add_guard")],
               p + "log")                                                     # [1, F, n_mels]
    mean = g.op("ReduceMean", [mel], p + "norm.mean", axes=[1], keepdims=1)
    d = g.op("Sub", [mel, mean], p + "norm.sub")
    var = g.op("ReduceMean", [g.op("Mul", [d, d], p + "norm.square")], p + "norm.var", axes=[1], keepdims=1)
    std = g.op("Sqrt", [g.op("Add", [var, g.const(1e-5, name="preprocessor.norm_eps")], p + "norm.add_eps")],
               p + "norm.sqrt")
    return g.op("Div", [d, std], p + "norm.div")


def _subsampling(g: SeqGraph, x, n_mels: int, ch: int, d: int):
    p = "encoder.pre_encode."
    x = g.unsqueeze(x, [1], p + "unsqueeze")                                  # [1, 1, F, n_mels]
    x = g.relu(g.conv2d(x, 1, ch, 3, p + "conv.0", stride=2, pad=1), p + "conv.1")
    x = g.relu(g.conv2d(x, ch, ch, 3, p + "conv.2", stride=2, pad=1), p + "conv.3")   # [1, ch, T', F']
    f = ((n_mels - 1) // 2) // 2 + 1
    x = g.transpose(x, [0, 2, 1, 3], p + "transpose")
    x = g.reshape(x, [0, 0, -1], p + "reshape")                               # [1, T', ch * F']
    return g.linear(x, ch * f, d, p + "out")


def _feed_forward(g: SeqGraph, x, d: int, p: str):
    y = g.layernorm(x, d, p + "norm")
    y = g.swish(g.linear(y, d, 4 * d, p + "linear1"), p + "activation")
    y = g.linear(y, 4 * d, d, p + "linear2")
    return g.op("Add", [x, g.op("Mul", [y, g.const(0.5)], p + "half_step")], p + "residual")


def _conv_module(g: SeqGraph, x, d: int, kernel: int, p: str):
    y = g.transpose(g.layernorm(x, d, p + "norm"), [0, 2, 1], p + "transpose_in")   # [1, d, T]
    y = g.conv1d(y, d, 2 * d, 1, p + "pointwise_conv1", gain=1.0)
    a, b = g.op("Split", [y, g.ints([d, d])], p + "glu.split", n_out=2, axis=1)
    y = g.op("Mul", [a, g.op("Sigmoid", [b], p + "glu.sigmoid")], p + "glu")
    y = g.conv1d(y, d, d, kernel, p + "depthwise_conv", pad=(kernel - 1) // 2, group=d, gain=1.0)
    y = g.swish(g.batchnorm1d(y, d, p + "batch_norm", var=0.3), p + "activation")
    y = g.conv1d(y, d, d, 1, p + "pointwise_conv2", gain=1.0)
    return g.op("Add", [x, g.transpose(y, [0, 2, 1], p + "transpose_out")], p + "residual")


def _conformer_block(g: SeqGraph, x, d: int, heads: int, kernel: int, p: str):
    x = _feed_forward(g, x, d, p + "feed_forward1.")
    y = g.mha(g.layernorm(x, d, p + "norm_self_att"), d, heads, p + "self_attn")
    x = g.op("Add", [x, y], p + "self_attn.residual")
    x = _conv_module(g, x, d, kernel, p + "conv.")
    x = _feed_forward(g, x, d, p + "feed_forward2.")
    return g.layernorm(x, d, p + "norm_out")


def asr(seed: int = SEED, n_mels: int = 80, d_model: int = 144, n_heads: int = 4, n_blocks: int = 2,
        vocab: int = len(ASR_VOCAB), sub_channels: int = 64, conv_kernel: int = 15):
    """Input "audio" [1, samples] float32 (16 kHz mono, at least MIN_SAMPLES) -> outputs "log_probs"
    [1, frames, vocab] float32 and "tokens" [1, frames] int64 (frames = asr_frames(samples))."""
    if conv_kernel % 2 == 0:
        raise ValueError("conv_kernel must be odd")
    g = SeqGraph("asr_conformer_ctc", seed)
    x = g.input("audio", [1, "samples"])
    x = _front_end(g, x, n_mels)
    x = _subsampling(g, x, n_mels, sub_channels, d_model)
    for i in range(n_blocks):
        x = _conformer_block(g, x, d_model, n_heads, conv_kernel, f"encoder.layers.{i}.")
    logits = g.linear(x, d_model, vocab, "decoder.decoder_layers.0")
    g.op("LogSoftmax", [logits], "decoder.log_softmax", out="log_probs", axis=-1)
    g.op("ArgMax", ["log_probs"], "greedy.argmax", out="tokens", axis=-1, keepdims=0, select_last_index=0)
    g.output("log_probs", [1, "frames", vocab])
    g.output("tokens", [1, "frames"], TensorProto.INT64)
    return g.build(f"Conformer-CTC ASR from 16 kHz audio ({n_blocks} blocks, d_model {d_model}), "
                   "deterministic synthetic weights")
