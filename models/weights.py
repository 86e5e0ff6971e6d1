"""Deterministic weight initialisation with analytic activation statistics.

Random weights on their own make a 50-layer network explode or vanish. Trained networks don't, because
each BatchNorm's running statistics match the tensor that reaches it. We get the same effect without
running anything: the builder carries, for every 4-D tensor, an estimate of its per-channel mean and
variance under a standard-normal network input, and each BatchNorm gets

    running_mean = true_mean + 0.1 * true_std * N(0, 1)      (a little off, as real ones are)
    running_var  = true_var  * U(0.5, 1.5)
    gamma ~ U(0.5, 1.0),  beta ~ U(-0.1, 0.1)

so every BN output is roughly N(beta, gamma^2) per channel at any depth. The estimates use:

* Conv: mean_o = sum_{i,k} w[o,i,k] mu_i + b_o,  var_o = sum_{i,k} w[o,i,k]^2 var_i
  (exact in expectation over the weights; spatial correlations only add noise, and the var draw
  is randomised anyway);
* elementwise activations: Gauss-Hermite quadrature of f(N(mean, var));
* MaxPool: moments of the maximum of k*k i.i.d. normals (an over-estimate that the next BN absorbs);
* Add: sums of means and variances; Concat/Split: concatenation/slicing of the channel vectors.

Everything here is numpy; the same Generator drawn in the same order gives the same bytes.
"""
from __future__ import annotations

import math

import numpy as np

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(64)   # nodes/weights for exp(-x^2 / 2)
_GH_W = _GH_W / _GH_W.sum()


def he_normal(rng: np.random.Generator, shape, fan_in: int, gain: float = 2.0) -> np.ndarray:
    """N(0, gain / fan_in) in float32: He (gain 2) before a ReLU-like unit, LeCun (gain 1) otherwise."""
    return (rng.standard_normal(shape) * math.sqrt(gain / fan_in)).astype(np.float32)


def small_bias(rng: np.random.Generator, n: int, scale: float = 0.01) -> np.ndarray:
    return (rng.standard_normal(n) * scale).astype(np.float32)


# ----------------------------------------------------------------------------- statistics

def unit_stats(c: int):
    return np.zeros(c), np.ones(c)


def conv_stats(w: np.ndarray, b, group: int, mean, var):
    """Per-output-channel (mean, var) of a Conv with weight w [Cout, Cin/g, kh, kw]."""
    cout, cin_g = w.shape[:2]
    w64 = w.astype(np.float64).reshape(cout, cin_g, -1)
    grp = np.arange(cout) // (cout // group)                      # group of each output channel
    mu = np.asarray(mean).reshape(group, cin_g)[grp]              # [Cout, Cin/g]
    va = np.asarray(var).reshape(group, cin_g)[grp]
    m = (w64.sum(2) * mu).sum(1)
    v = ((w64 ** 2).sum(2) * va).sum(1)
    if b is not None:
        m = m + b
    return m, np.maximum(v, 1e-12)


def bn_params(rng: np.random.Generator, mean, var):
    """gamma, beta, running_mean, running_var (float32) for a BN whose input has these stats."""
    c = len(mean)
    gamma = rng.uniform(0.5, 1.0, c)
    beta = rng.uniform(-0.1, 0.1, c)
    rm = mean + 0.1 * np.sqrt(var) * rng.standard_normal(c)
    rv = var * rng.uniform(0.5, 1.5, c)
    return [a.astype(np.float32) for a in (gamma, beta, rm, rv)]


def bn_stats(gamma, beta, rm, rv, eps, mean, var):
    s = gamma.astype(np.float64) / np.sqrt(rv.astype(np.float64) + eps)
    return beta + s * (mean - rm), s * s * var


def act_stats(fn, mean, var):
    """(mean, var) of fn(X) for X ~ N(mean, var) per channel, by Gauss-Hermite quadrature."""
    z = np.asarray(mean)[:, None] + np.sqrt(var)[:, None] * _GH_X[None, :]
    y = fn(z)
    m = y @ _GH_W
    return m, np.maximum(y * y @ _GH_W - m * m, 1e-12)


def _max_moments(n: int):
    """Mean and variance of the maximum of n i.i.d. standard normals (numerical integration)."""
    x = np.linspace(-8.0, 8.0, 4001)
    phi = np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    cdf = np.array([0.5 * (1.0 + math.erf(t / math.sqrt(2.0))) for t in x])
    pdf = n * phi * cdf ** (n - 1)
    dx = x[1] - x[0]
    m = float((x * pdf).sum() * dx)
    return m, float((x * x * pdf).sum() * dx - m * m)


_MAX_CACHE: dict = {}


def maxpool_stats(k: int, mean, var):
    n = k * k
    if n not in _MAX_CACHE:
        _MAX_CACHE[n] = _max_moments(n)
    cm, cv = _MAX_CACHE[n]
    sd = np.sqrt(var)
    return mean + cm * sd, cv * var


ACTS = {
    "relu": lambda z: np.maximum(z, 0.0),
    "relu6": lambda z: np.clip(z, 0.0, 6.0),
    "sigmoid": lambda z: 1.0 / (1.0 + np.exp(-z)),
    "silu": lambda z: z / (1.0 + np.exp(-z)),
}
