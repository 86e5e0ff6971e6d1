"""A small streaming keyword spotter: log-mel frames in, per-frame class probabilities out, GRU state
carried between calls.

    feats [1, T, 40], h_in [1, 1, 64] ─ Linear + ReLU ─ GRU (causal) ─ Linear ─ Softmax
        ├─▶ probs [1, T, 12]
        └─▶ h_out [1, 1, 64]   (the GRU's Y_h: feed it back as h_in for the next chunk)

The GRU is unidirectional and every other layer is per frame, so running chunk by chunk while
feeding h_out back as h_in equals running the whole sequence at once. Zeros are the initial state.
Gates in ONNX order (z, r, h), linear_before_reset=1 as torch exports nn.GRU; weights uniform in
±1/sqrt(H) like torch's initialisation, deterministic from the seed.
"""
from __future__ import annotations

import math

import numpy as np

from ._speech import SeqGraph

SEED = 6
# Speech Commands v2 style label set
KWS_LABELS = ["_silence_", "_unknown_", "yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go"]


def kws(seed: int = SEED, n_feats: int = 40, hidden: int = 64, n_classes: int = len(KWS_LABELS)):
    """Inputs "feats" [1, T, n_feats] and "h_in" [1, 1, hidden] (float32) -> outputs "probs"
    [1, T, n_classes] and "h_out" [1, 1, hidden]."""
    g = SeqGraph("kws_gru", seed)
    x = g.input("feats", [1, "T", n_feats])
    h = g.input("h_in", [1, 1, hidden])
    x = g.relu(g.linear(x, n_feats, hidden, "input_proj", gain=2.0), "input_proj.relu")
    x = g.transpose(x, [1, 0, 2], "gru.transpose_in")                       # [T, 1, H]
    bound = 1.0 / math.sqrt(hidden)
    wx = g.rng.uniform(-bound, bound, (1, 3 * hidden, hidden)).astype(np.float32)
    wh = g.rng.uniform(-bound, bound, (1, 3 * hidden, hidden)).astype(np.float32)
    b = g.rng.uniform(-bound, bound, (1, 6 * hidden)).astype(np.float32)
    y, _ = g.op("GRU", [x, g.param("gru.weight_ih_l0", wx), g.param("gru.weight_hh_l0", wh),
                        g.param("gru.bias_l0", b), "", h], "gru", out=["gru_output_0", "h_out"],
                hidden_size=hidden, linear_before_reset=1, direction="forward")  # Y [T, 1, 1, H]
    y = g.squeeze(y, [1], "gru.squeeze")                                    # [T, 1, H]
    y = g.transpose(y, [1, 0, 2], "gru.transpose_out")                      # [1, T, H]
    logits = g.linear(y, hidden, n_classes, "classifier", gain=4.0)
    g.softmax(logits, "softmax", axis=-1, out="probs")
    g.output("probs", [1, "T", n_classes])
    g.output("h_out", [1, 1, hidden])
    return g.build("streaming GRU keyword spotter (chunked: feed h_out back as h_in), "
                   "deterministic synthetic weights")
