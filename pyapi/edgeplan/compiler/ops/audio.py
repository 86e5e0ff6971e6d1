"""STFT with a constant window (or none) → one strided convolution whose filters are the windowed DFT
basis: framing and transform in one op, and length-generic (the frame count follows from the signal
length in the runtime's conv shape function, so one plan serves every length). A window computed at
run time → gather (frames, constant indices) + multiply + gemm, for fixed lengths only.
MelWeightMatrix is folded at compile time (passes/fold.py, FOLDED_OPS): its inputs are constants in
every real front end.

The basis costs frame_length * 2 * bins floats of constants (n_fft 400: 0.6 MiB); a dedicated FFT
kernel would trade that for code, a later option."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from .. import limits
from ..lowering import NodeError
from .sequence import const_int


def dft_basis(N: int, bins: int, complex_in: bool, window) -> np.ndarray:
    """[N*C, 2*bins]: frame (n, c) row times basis = (re, im) of bin k, window applied."""
    n = np.arange(N, dtype=np.float64)[:, None]
    k = np.arange(bins, dtype=np.float64)[None, :]
    ang = 2.0 * np.pi * ((n * k) % N) / N
    cos, sin = np.cos(ang), np.sin(ang)
    w = np.ones(N) if window is None else np.asarray(window, np.float64).reshape(-1)
    C = 2 if complex_in else 1
    m = np.zeros((N, C, bins, 2), np.float64)
    m[:, 0, :, 0] = cos            # re(x) -> re
    m[:, 0, :, 1] = -sin           # re(x) -> im
    if complex_in:
        m[:, 1, :, 0] = sin        # im(x) -> re
        m[:, 1, :, 1] = cos        # im(x) -> im
    m *= w[:, None, None, None]
    return m.reshape(N * C, 2 * bins).astype(np.float32)


def lower_stft(ctx, n):
    S = ctx.input(n, 0)
    ctx.need_f32(S)
    if len(S.shape) != 3 or S.shape[2] not in (1, 2):
        raise NodeError(f"signal must be [batch, length, 1 or 2], got {S.shape}")
    Bn, L, C = S.shape
    step = const_int(ctx, n, 1, "frame_step")
    Wt = ctx.input(n, 2, optional=True)
    N = const_int(ctx, n, 3, "frame_length", default=-1) if n.input(3) else -1
    if Wt is not None:
        ctx.need_f32(Wt)
        if len(Wt.shape) != 1 or (N >= 0 and Wt.shape[0] != N):
            raise NodeError(f"window {Wt.shape} does not match frame_length {N}")
        N = Wt.shape[0]
    if N < 1:
        raise NodeError("STFT needs frame_length or a window")
    if step < 1 or N > L:
        raise NodeError(f"frame_step {step} / frame_length {N} do not fit signal length {L}")
    onesided = int(n.attrs.get("onesided", 1))
    if onesided and C == 2:
        raise NodeError("onesided STFT of a complex signal is undefined")
    bins = N // 2 + 1 if onesided else N
    F = (L - N) // step + 1
    name = n.outputs[0]
    # the DFT basis (and, with a run-time window, the frame indices) are constants built here
    basis_bytes = limits.nbytes((N * C, 2 * bins), np.float32)
    if basis_bytes > limits.MAX_FOLD_BYTES:
        raise NodeError(f"frame_length {N} needs a DFT basis of {limits.fmt_bytes(basis_bytes)}, above the "
                        f"{limits.fmt_bytes(limits.MAX_FOLD_BYTES)} limit for a constant built at compile time")
    if N * C > limits.PARAM_LIMIT or step * C > limits.PARAM_LIMIT:
        raise NodeError(f"frame_length {N} / frame_step {step} exceed the runtime's window limit "
                        f"{limits.PARAM_LIMIT}")
    if Wt is None or Wt.data is not None:
        # signal [B, L, C] is [B, 1, 1, L*C] row-major; a 1 x N*C filter at stride step*C sees frame f as
        # the N*C values (n, c) from f*step; output channel 2k+j is (re, im)[j] of bin k
        basis = dft_basis(N, bins, C == 2, None if Wt is None else Wt.data)
        w = ctx.const(name + "/dft", np.ascontiguousarray(basis.T).reshape(2 * bins, 1, 1, N * C))
        x4 = ctx.view(S, (Bn, 1, 1, L * C))
        y4 = ctx.tmp(name + "/conv", (Bn, 2 * bins, 1, F))
        ctx.emit("conv2d", [x4, w, None, None], [y4], {
            "kernel": [1, N * C], "stride": [1, step * C], "dilation": [1, 1], "pads": [0, 0, 0, 0], "groups": 1,
            "act": K.EP_ACT_NONE, "act_alpha": 0.0, "act_beta": 0.0})
        yt = ctx.tmp(name + "/t", (Bn, F, 2 * bins))
        ctx.emit("transpose", [ctx.view(y4, (Bn, 2 * bins, F))], [yt], {"perm": [0, 2, 1, 3, 4, 5, 6, 7]})
        ctx.view_output(n, 0, yt, (Bn, F, bins, 2))
        return
    if limits.nbytes((F, N), np.int64) > limits.MAX_FOLD_BYTES:
        raise NodeError(f"{F} frames of {N} need {limits.fmt_bytes(limits.nbytes((F, N), np.int64))} of frame "
                        f"indices, above the {limits.fmt_bytes(limits.MAX_FOLD_BYTES)} limit for a constant built "
                        f"at compile time")
    idx = ctx.const(name + "/frame_idx", (np.arange(F)[:, None] * step + np.arange(N)[None, :]).astype(np.int64))
    frames = ctx.tmp(name + "/frames", (Bn, F, N, C))
    ctx.emit("gather", [S, idx], [frames], {"axis": 1})
    window = None
    if Wt is not None and Wt.data is not None:
        window = Wt.data
    elif Wt is not None:
        wv = ctx.view(Wt, (N, 1))
        fw = ctx.tmp(name + "/windowed", (Bn, F, N, C))
        ctx.emit("binary", [frames, wv], [fw], {"kind": K.EP_BIN_MUL, "act": K.EP_ACT_NONE,
                                                "act_alpha": 0.0, "act_beta": 0.0}, inplace=0)
        frames = fw
    basis = ctx.const(name + "/dft", dft_basis(N, bins, C == 2, window))
    a2 = ctx.view(frames, (Bn * F, N * C))
    y2 = ctx.tmp(name + "/2d", (Bn * F, 2 * bins))
    ctx.emit("gemm", [a2, basis, None], [y2], {"act": K.EP_ACT_NONE, "act_alpha": 0.0, "act_beta": 0.0})
    ctx.view_output(n, 0, y2, (Bn, F, bins, 2))


LOWER = {("", "STFT"): lower_stft}
