"""Deterministic weight initialisation, calibrated so activations stay O(1) at any depth.

Random weights on their own make a 50-layer network explode or vanish; trained networks don't because
each BatchNorm's running statistics match the tensor that reaches it. We get the same effect the way
data-dependent initialisation does: while the graph is being composed, ``Graph`` pushes a small fixed
calibration batch (standard-normal images, like the inputs the checks use) through every layer in
numpy, and each BatchNorm is given

    gamma ~ U(0.5, 1.0)        beta ~ U(-0.1, 0.1)
    running_mean = batch_mean + 0.1 * batch_std * N(0, 1)      (a little off, as real ones are)
    running_var  = batch_var * U(0.5, 1.5)

so every BN output is roughly N(beta, gamma^2) per channel. Conv weights are He-normal
(N(0, 2 / fan_in)), Linear weights LeCun-normal (N(0, 1 / fan_in)), biases N(0, 0.01^2).
(An analytic mean/variance propagation was tried first; ignoring cross-channel and spatial
correlations, its error compounded to ~1000x by ResNet-50's layer4, so we measure instead.)

The calibration batch has a fixed shape per model, independent of the ``size`` a model is built at,
so weights depend only on the architecture and the seed. Weights come from ``default_rng(seed)``
and the calibration images from ``default_rng([seed, 1])``: same seed, same bytes.

The numpy reference ops below are just enough for calibration (NCHW float32).
"""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def he_normal(rng: np.random.Generator, shape, fan_in: int, gain: float = 2.0) -> np.ndarray:
    """N(0, gain / fan_in) in float32: He (gain 2) before a ReLU-like unit, LeCun (gain 1) otherwise."""
    return rng.standard_normal(shape, dtype=np.float32) * np.float32(math.sqrt(gain / fan_in))


def small_bias(rng: np.random.Generator, n: int, scale: float = 0.01) -> np.ndarray:
    return rng.standard_normal(n, dtype=np.float32) * np.float32(scale)


def calibration_input(seed: int, shape) -> np.ndarray:
    return np.random.default_rng([seed, 1]).standard_normal(shape, dtype=np.float32)


def bn_params(rng: np.random.Generator, x: np.ndarray | None, c: int):
    """gamma, beta, running_mean, running_var (float32) for a BN that sees activations x [N,C,H,W]."""
    if x is None:
        mean, var = np.zeros(c), np.ones(c)
    else:
        mean = x.mean(axis=(0, 2, 3), dtype=np.float64)
        var = x.var(axis=(0, 2, 3), dtype=np.float64)
        var = np.maximum(var, 1e-3 * var.mean() + 1e-6)   # a channel that never varies must not blow up
    gamma = rng.uniform(0.5, 1.0, c)
    beta = rng.uniform(-0.1, 0.1, c)
    rm = mean + 0.1 * np.sqrt(var) * rng.standard_normal(c)
    rv = var * rng.uniform(0.5, 1.5, c)
    return [a.astype(np.float32) for a in (gamma, beta, rm, rv)]


# ----------------------------------------------------------------------------- numpy reference ops

def conv2d(x, w, b, stride: int, pad: int, group: int):
    n, c, _, _ = x.shape
    o, cg, kh, kw = w.shape
    if pad:
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    hi, wi = x.shape[2:]
    ho, wo = (hi - kh) // stride + 1, (wi - kw) // stride + 1
    if group == c == o and cg == 1:                     # depthwise: accumulate the k*k shifted planes
        y = np.zeros((n, o, ho, wo), np.float32)
        for i in range(kh):
            for j in range(kw):
                y += x[:, :, i:i + stride * ho:stride, j:j + stride * wo:stride] * w[None, :, 0, i, j, None, None]
    else:
        ys = []
        og = o // group
        for gi in range(group):
            xg = x[:, gi * cg:(gi + 1) * cg]
            wg = w[gi * og:(gi + 1) * og].reshape(og, -1)
            if kh == kw == 1:
                cols = xg[:, :, ::stride, ::stride][:, :, :ho, :wo].reshape(n, cg, ho * wo)
            else:                                        # im2col as (n, cg*kh*kw, ho*wo): no transposes
                cols = np.empty((n, cg, kh, kw, ho, wo), np.float32)
                for i in range(kh):
                    for j in range(kw):
                        cols[:, :, i, j] = xg[:, :, i:i + stride * ho:stride, j:j + stride * wo:stride]
                cols = cols.reshape(n, cg * kh * kw, ho * wo)
            yg = np.matmul(wg, cols)
            ys.append(yg.reshape(n, og, ho, wo))
        y = np.concatenate(ys, 1) if group > 1 else ys[0]
    if b is not None:
        y = y + b[None, :, None, None]
    return np.ascontiguousarray(y, dtype=np.float32)


def batchnorm(x, gamma, beta, rm, rv, eps):
    s = gamma / np.sqrt(rv + np.float32(eps))
    return (x - rm[None, :, None, None]) * s[None, :, None, None] + beta[None, :, None, None]


def sigmoid(x):
    return (1.0 / (1.0 + np.exp(-x))).astype(np.float32)


def pool(x, k: int, stride: int, pad: int, kind: str):
    if pad:
        fill = -np.inf if kind == "max" else 0.0
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=fill)
    win = sliding_window_view(x, (k, k), axis=(2, 3))[:, :, ::stride, ::stride]
    return np.ascontiguousarray(win.max(axis=(4, 5)) if kind == "max" else win.mean(axis=(4, 5)),
                                dtype=np.float32)
