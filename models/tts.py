"""Text to speech in two models: a FastSpeech-style acoustic model (tokens → mel) and a HiFi-GAN-style
vocoder (mel → audio), and both in one graph (``tts``: tokens → audio, one plan).

tts_acoustic: tokens [1, N] int64 ─ embedding + positions ─ FFT blocks ─┬─ duration predictor
              ─ length regulator ─ + positions ─ FFT blocks ─ Linear ─▶ mel [1, 80, frames]
                                                                      └▶ durations [1, N] int64
  positions: fairseq's make_positions (CumSum of the non-pad mask, times the mask) gathered from a
  sinusoid table whose row 0 (pad) is zero; no Shape subgraph, so the graph runs at any N.
  durations = Cast(Clip(Round(Exp(log_dur)), 1, 8)), per token, data dependent.
  length regulation without loops: cum = CumSum(durations); total = cum[0, -1] (a scalar);
  frames = Range(0, total, 1) (its length is data dependent: value_info names it "frames", at most
  8 * N); each frame's token = ReduceSum(frames[:, None] >= cum[None, :]); Gather(encoder out, axis 1).

hifigan: mel [1, 80, frames] ─ Conv1d k7 ─ 3 × (LeakyReLU(0.1), ConvTranspose1d ×r, residual block
         of dilated Conv1d (dilations 1, 3, 5)) ─ LeakyReLU ─ Conv1d k7 → 1 ─ Tanh
         ─▶ audio [1, 1, 256·frames]
  channels 128 → 64 → 32 → 16, upsampling 8 · 8 · 4 = 256 (the acoustic model's hop).

tts: tokens [1, N] int64 ─ acoustic model ─ mel ─ vocoder ─▶ audio [1, 1, 256·frames] at SAMPLE_RATE Hz
                                                 ├▶ mel [1, 80, frames]
                                                 └▶ durations [1, N] int64
  the two graphs above joined at "mel", with the same layer and parameter names and (seed, seed + 1)
  the same weights as tts_acoustic(seed) and hifigan(seed + 1): the defaults equal the pair's defaults.
"""
from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto

from ._speech import SeqGraph, sinusoid_table

SEED_ACOUSTIC = 7
SEED_VOCODER = 8
MAX_DURATION = 8
HOP = 256                  # audio samples per mel frame (the vocoder's upsampling)
SAMPLE_RATE = 22050        # Hz of the vocoder's audio (LJSpeech's rate, 256-sample hop = 11.6 ms)
# symbol set: pad first (index 0 never appears in real text), then space, punctuation, letters
TTS_SYMBOLS = ["_", " ", "!", "'", ",", "-", ".", "?"] + [chr(c) for c in range(ord("a"), ord("z") + 1)]


def tts_tokens(text: str) -> np.ndarray:
    """Text → int64 token ids [1, N] (unknown characters dropped)."""
    ids = [TTS_SYMBOLS.index(c) for c in text.lower() if c in TTS_SYMBOLS[1:]]
    return np.array([ids or [1]], dtype=np.int64)


# ---------------------------------------------------------------------- FastSpeech-style acoustic model

def _fft_block(g: SeqGraph, x, d: int, heads: int, filt: int, k: int, p: str):
    """FastSpeech's FFT block (post-LN): LN(x + MHSA(x)), LN(x + Conv1d(k) -> ReLU -> Conv1d(1))."""
    x = g.layernorm(g.op("Add", [x, g.mha(x, d, heads, p + "slf_attn")], p + "slf_attn.residual"), d,
                    p + "slf_attn.layer_norm")
    y = g.transpose(x, [0, 2, 1], p + "pos_ffn.transpose_in")
    y = g.relu(g.conv1d(y, d, filt, k, p + "pos_ffn.w_1"), p + "pos_ffn.relu")
    y = g.conv1d(y, filt, d, 1, p + "pos_ffn.w_2", gain=1.0)
    y = g.transpose(y, [0, 2, 1], p + "pos_ffn.transpose_out")
    return g.layernorm(g.op("Add", [x, y], p + "pos_ffn.residual"), d, p + "pos_ffn.layer_norm")


def _duration_predictor(g: SeqGraph, x, d: int, filt: int, p: str):
    """Conv1d(k3) -> ReLU -> LN, twice, then Linear -> log duration [1, N]; durations int64 [1, N]."""
    for i, cin in enumerate((d, filt)):
        y = g.transpose(x, [0, 2, 1], f"{p}conv_layer.{i}.transpose_in")
        y = g.relu(g.conv1d(y, cin, filt, 3, f"{p}conv_layer.{i}.conv"), f"{p}conv_layer.{i}.relu")
        x = g.layernorm(g.transpose(y, [0, 2, 1], f"{p}conv_layer.{i}.transpose_out"), filt,
                        f"{p}conv_layer.{i}.layer_norm")
    # log durations spread ~0.5-0.7 around ~log 2.5 over tokens (seed dependent): durations 1..8, varied
    y = g.linear(x, filt, 1, p + "linear_layer", gain=1.0, bias_value=math.log(5.0))
    y = g.squeeze(y, [2], p + "squeeze")
    y = g.op("Round", [g.op("Exp", [y], p + "exp")], p + "round")
    lo, hi = g.const(1.0, name="duration_min"), g.const(float(MAX_DURATION), name="duration_max")
    y = g.op("Clip", [y, lo, hi], p + "clip")
    return g.cast(y, TensorProto.INT64, p + "cast", out="durations")


def _length_regulator(g: SeqGraph, x, dur, p: str):
    """x [1, N, d], dur [1, N] int64 -> (x repeated per frame [1, M, d], frame indices [M])."""
    cum = g.op("CumSum", [dur, g.ints(1, "length_regulator.axis")], p + "cumsum")        # [1, N]
    # total = cum[0, -1] (as torch exports it: two scalar-index Gathers), a 0-d int64 for Range
    row = g.op("Gather", [cum, g.ints(0, "length_regulator.batch_index")], p + "select_batch", axis=0)   # [N]
    total = g.op("Gather", [row, g.ints(-1, "length_regulator.last_index")], p + "total", axis=0)
    frames = g.op("Range", [g.ints(0, "length_regulator.start"), total, g.ints(1, "length_regulator.delta")],
                  p + "range", out="frame_index")                                          # [M]
    g.annotate(frames, ["frames"], TensorProto.INT64)
    ge = g.op("GreaterOrEqual", [g.unsqueeze(frames, [1], p + "unsqueeze"), cum], p + "ge")   # [M, N]
    idx = g.op("ReduceSum", [g.cast(ge, TensorProto.FLOAT, p + "cast_float"), g.ints([1])], p + "count",
               keepdims=0)
    idx = g.cast(idx, TensorProto.INT64, p + "cast_index")                                  # [M]
    return g.op("Gather", [x, idx], p + "gather", axis=1), frames


def tts_acoustic(seed: int = SEED_ACOUSTIC, vocab: int = len(TTS_SYMBOLS), d_model: int = 128,
                 n_heads: int = 2, n_enc: int = 2, n_dec: int = 2, filt: int = 256, kernel: int = 9,
                 n_mels: int = 80, max_frames: int = 1024):
    """Input "tokens" [1, N] int64 (1 <= id < vocab; 0 is padding) -> outputs "mel" [1, n_mels, frames]
    float32 and "durations" [1, N] int64, frames = sum(durations) <= 8 N. The position table has
    max_frames + 1 rows, so N <= max_frames / 8 (128 by default) always fits."""
    g = SeqGraph("tts_fastspeech", seed)
    tok = g.input("tokens", [1, "N"], TensorProto.INT64)
    _acoustic(g, tok, vocab, d_model, n_heads, n_enc, n_dec, filt, kernel, n_mels, max_frames)
    g.output("mel", [1, n_mels, "frames"])
    g.output("durations", [1, "N"], TensorProto.INT64)
    return g.build(f"FastSpeech-style acoustic model ({n_enc}+{n_dec} FFT blocks, d_model {d_model}), "
                   "deterministic synthetic weights")


def _acoustic(g: SeqGraph, tok, vocab, d_model, n_heads, n_enc, n_dec, filt, kernel, n_mels, max_frames):
    """The acoustic model's layers on ``tok``; makes the tensors "mel" and "durations"."""
    emb = (g.rng.standard_normal((vocab, d_model)) * 0.5).astype(np.float32)
    emb[0] = 0.0                                                                            # padding_idx 0
    x = g.op("Gather", [g.param("encoder.src_word_emb.weight", emb), tok], "encoder.src_word_emb", axis=0)
    pe = sinusoid_table(max_frames + 1, d_model)
    pe[0] = 0.0
    table = g.param("position_table", pe)                                   # row p + 1: position p
    # fairseq make_positions: cumsum of the non-pad mask, times the mask (pad -> row 0)
    mask = g.cast(g.op("Not", [g.op("Equal", [tok, g.ints(0, "padding_idx")], "encoder.positions.eq_pad")],
                       "encoder.positions.not_pad"), TensorProto.FLOAT, "encoder.positions.mask")
    pos = g.op("CumSum", [mask, g.ints(1, "encoder.positions.axis")], "encoder.positions.cumsum")
    pos = g.op("Mul", [pos, mask], "encoder.positions.mul_mask")
    pos = g.cast(pos, TensorProto.INT64, "encoder.positions.cast")
    pe_tok = g.op("Gather", [table, pos], "encoder.position_enc", axis=0)
    x = g.op("Add", [x, pe_tok], "encoder.add_positions")
    for i in range(n_enc):
        x = _fft_block(g, x, d_model, n_heads, filt, kernel, f"encoder.layer_stack.{i}.")
    dur = _duration_predictor(g, x, d_model, filt, "duration_predictor.")
    x, frames = _length_regulator(g, x, dur, "length_regulator.")
    dec_pe = g.op("Gather", [table, g.op("Add", [frames, g.ints(1, "decoder.position_offset")],
                                         "decoder.positions.add")], "decoder.position_enc", axis=0)
    x = g.op("Add", [x, dec_pe], "decoder.add_positions")
    for i in range(n_dec):
        x = _fft_block(g, x, d_model, n_heads, filt, kernel, f"decoder.layer_stack.{i}.")
    y = g.linear(x, d_model, n_mels, "mel_linear")
    g.transpose(y, [0, 2, 1], "mel_transpose", out="mel")
    return "mel"


# ---------------------------------------------------------------------- HiFi-GAN-style vocoder

def _resblock(g: SeqGraph, x, c: int, p: str, dilations=(1, 3, 5)):
    """HiFi-GAN ResBlock1: x += Conv1d(k3, d=1)(LReLU(Conv1d(k3, dilation d)(LReLU(x)))) per dilation."""
    for j, dil in enumerate(dilations):
        y = g.leaky_relu(x, f"{p}convs1.{j}.leaky_relu")
        y = g.conv1d(y, c, c, 3, f"{p}convs1.{j}", dilation=dil)
        y = g.leaky_relu(y, f"{p}convs2.{j}.leaky_relu")
        y = g.conv1d(y, c, c, 3, f"{p}convs2.{j}", gain=0.5)
        x = g.op("Add", [x, y], f"{p}residual.{j}")
    return x


def hifigan(seed: int = SEED_VOCODER, n_mels: int = 80, channels: int = 128, rates=(8, 8, 4)):
    """Input "mel" [1, n_mels, frames] float32 -> output "audio" [1, 1, samples] in (-1, 1),
    samples = frames * prod(rates). ConvTranspose kernel 2r, padding r / 2 (r even): exact r× upsampling."""
    if any(r % 2 for r in rates):
        raise ValueError("upsampling rates must be even")
    g = SeqGraph("hifigan", seed)
    x = g.input("mel", [1, n_mels, "frames"])
    _vocoder(g, x, n_mels, channels, rates)
    g.output("audio", [1, 1, "samples"])
    return g.build(f"HiFi-GAN-style vocoder (upsampling {'x'.join(map(str, rates))}, {channels} channels), "
                   "deterministic synthetic weights")


def _vocoder(g: SeqGraph, x, n_mels, channels, rates):
    """The vocoder's layers on ``x``; makes the tensor "audio"."""
    x = g.conv1d(x, n_mels, channels, 7, "conv_pre", gain=1.0)
    c = channels
    for i, r in enumerate(rates):
        x = g.leaky_relu(x, f"ups.{i}.leaky_relu")
        x = g.conv_transpose1d(x, c, c // 2, 2 * r, r, r // 2, f"ups.{i}")
        c //= 2
        x = _resblock(g, x, c, f"resblocks.{i}.")
        x = g.op("Mul", [x, g.const(0.5)], f"resblocks.{i}.scale")                  # keep the stack O(1)
    x = g.leaky_relu(x, "leaky_relu_post", alpha=0.01)
    x = g.conv1d(x, c, 1, 7, "conv_post", gain=1.0)
    g.op("Tanh", [x], "tanh", out="audio")
    return "audio"


# ---------------------------------------------------------------------- both in one graph

def tts(seed: int = SEED_ACOUSTIC, vocoder_seed: int | None = None, vocab: int = len(TTS_SYMBOLS),
        d_model: int = 128, n_heads: int = 2, n_enc: int = 2, n_dec: int = 2, filt: int = 256,
        kernel: int = 9, n_mels: int = 80, max_frames: int = 1024, channels: int = 128, rates=(8, 8, 4)):
    """Input "tokens" [1, N] int64 -> outputs "audio" [1, 1, samples] float32 in (-1, 1) at SAMPLE_RATE,
    samples = frames * prod(rates), "mel" [1, n_mels, frames] and "durations" [1, N] int64.
    The acoustic model's weights come from ``seed``, the vocoder's from ``vocoder_seed`` (default
    seed + 1): tts() equals hifigan() applied to tts_acoustic()'s mel."""
    if any(r % 2 for r in rates):
        raise ValueError("upsampling rates must be even")
    g = SeqGraph("tts_fastspeech_hifigan", seed)
    tok = g.input("tokens", [1, "N"], TensorProto.INT64)
    mel = _acoustic(g, tok, vocab, d_model, n_heads, n_enc, n_dec, filt, kernel, n_mels, max_frames)
    g.rng = np.random.default_rng(seed + 1 if vocoder_seed is None else vocoder_seed)
    _vocoder(g, mel, n_mels, channels, rates)
    g.output("audio", [1, 1, "samples"])
    g.output("mel", [1, n_mels, "frames"])
    g.output("durations", [1, "N"], TensorProto.INT64)
    return g.build(f"FastSpeech-style acoustic model ({n_enc}+{n_dec} FFT blocks, d_model {d_model}) and "
                   f"HiFi-GAN-style vocoder (upsampling {'x'.join(map(str, rates))}) in one graph: text "
                   "tokens to audio, deterministic synthetic weights")
