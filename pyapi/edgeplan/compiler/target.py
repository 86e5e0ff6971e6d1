"""Kernel-selection targets: which variants a board's runtime has fast kernels for, and the budgets that
decide between them (passes/select.py runs the selection; each op's rule sits with its lowering in
ops/<family>.py, its SELECT table).

Targets:
  generic   variant 0 everywhere (the reference layouts, least scratch)
  x86-64    packed GEMM for Conv (any groups) and Gemm, the depthwise kernel, Winograd F(4x4,3x3) for
            3x3 stride-1 convolutions with enough channels (>= 64) and pixels (>= 144). Winograd filters take 4x
            the bytes of 3x3 ones (36 vs 9 per channel pair), so layers are taken by MACs saved per extra byte
            while the extra stays within winograd_budget x the model's constant bytes (1.0: plan at most 2x)
  x86-64-compact  the same without Winograd (plan size as generic, plus MR padding)
  aarch64   packed GEMM, depthwise and Winograd (the NEON kernels), Winograd from 128 channels within 0.5x
            the constant bytes (a board's memory is tighter, and its rates are not measured here)
  host      the entry for this machine (x86-64, aarch64, else generic)
Every packed target also takes the polyphase packed ConvTranspose (groups 1) while its phase weights stay within
ct_expand x the plain ones (1 for the HiFi-GAN kernel = 2 x stride; x86-64-compact allows no growth).
LSTM / GRU stay variant 0 on every target; packed targets give them scratch for the hoisted input projection
of up to RNN_CHUNK timesteps (ops/rnn.py, docs/kernels.md).
"""
from __future__ import annotations

import platform
from dataclasses import dataclass
from typing import Callable
# measured on one AVX2 core (bench/conv_variants.py, docs/kernels.md)
DW_C8_WIDTH = 32
DIRECT_CHANNELS = 16
POINTWISE_PIXELS = 64
POINTWISE_KXK_PIXELS = 12


@dataclass(frozen=True)
class Target:
    name: str
    packed: bool = False          # packed GEMM / depthwise variants
    winograd: bool = False        # Winograd F(4x4, 3x3) for 3x3 stride-1 convolutions
    pack_bytes: int = 0           # scratch budget of one im2col pass (about half the L2)
    # Winograd wins where the GEMMs are big enough to hide its transforms: measured against the packed
    # variant on one AVX2 core (3x3, C = M): 1.3-2.1x slower at 16-32 channels, even at 64, 0.44-0.74x
    # from 128 channels on maps of 20x20 and more; in a C8 plan its 64-channel layers (plain, between two
    # reorders) beat the blocked direct convolution (docs/kernels.md): x86-64 takes them from 64
    winograd_min_channels: int = 128
    # Winograd F(9 - r, r) along W (1 x r kernels, 3 <= r <= 7: TTS and WaveNet convolutions) from this many
    # input and output channels and outputs (a Piper voice's 32-channel layers ran up to 1.17x slower on it, its
    # 64-channel ones 0.7-0.9x the packed variant's time; docs/kernels.md)
    winograd1d_min_channels: int = 64
    winograd1d_min_outputs: int = 32
    winograd_min_pixels: int = 144
    winograd_budget: float = 0.0  # extra constant bytes Winograd may add, as a fraction of the model's
    threads: int = 4              # depthwise scratch holds this many padded planes: one per thread
    ct_expand: float = 4.0        # ConvTranspose PACKED while sh*TH*sw*TW <= ct_expand * KH*KW (weight growth)
    blocks: bool = True           # fused inverted-residual blocks (passes/blocks.py) on packed targets
    block_bytes: int = 0          # scratch of one fused-block task (its rows of the expanded tensor): an L2 share
    # depthwise outputs narrower than this run 8 channels at a time (CONV2D DW_C8), wider ones a plane at a time
    dw_c8_width: int = 0
    # convolutions (groups 1) with at most direct_channels inputs and direct_outputs outputs (direct_outputs_s1
    # at stride 1) run DIRECT (stems and narrow layers: im2col's copying outweighs their few output channels),
    # when a band's input rows fit pack_bytes
    direct_channels: int = 0
    direct_outputs: int = 32
    direct_outputs_s1: int = 16
    # 1x1 convolutions (stride 1, no pads, groups 1) on maps of at most this many pixels run POINTWISE (the
    # pixels as the GEMM's rows), larger ones PACKED
    pointwise_pixels: int = 0
    # other groups-1 convolutions run POINTWISE (their im2col rows packed per 6 pixels) up to this many output
    # pixels: PACKED's one 16-pixel strip is then at most 75 % full (a 1-D conv over a short window)
    pointwise_kxk_pixels: int = 0
    # activations between convolutions in the channel-blocked layout C8 (passes/layout.py)
    blocked: bool = False
    # C8 is chosen before the inverted-residual blocks are fused (INVRES then takes only what stayed plain):
    # on x86 the C8 kernels run MobileNetV2's blocks faster than the fused op, with the expanded tensors in the
    # arena; on the boards the fused op keeps them out of the smaller L2 and the arena (docs/kernels.md)
    c8_before_blocks: bool = False


TARGETS = {
    "generic": Target("generic"),
    "x86-64": Target("x86-64", packed=True, winograd=True, pack_bytes=256 * 1024, winograd_budget=1.0, winograd_min_channels=64,
                      block_bytes=512 * 1024, dw_c8_width=DW_C8_WIDTH, direct_channels=DIRECT_CHANNELS,
                      pointwise_pixels=POINTWISE_PIXELS, pointwise_kxk_pixels=POINTWISE_KXK_PIXELS, blocked=True,
                      c8_before_blocks=True),
    "x86-64-compact": Target("x86-64-compact", packed=True, pack_bytes=256 * 1024, ct_expand=1.0,
                             block_bytes=512 * 1024, dw_c8_width=DW_C8_WIDTH, direct_channels=DIRECT_CHANNELS,
                             pointwise_pixels=POINTWISE_PIXELS, pointwise_kxk_pixels=POINTWISE_KXK_PIXELS, blocked=True,
                             c8_before_blocks=True),
    # NEON boards (kernels/neon/ overrides PACKED, DEPTHWISE, WINOGRAD, DW_C8, DIRECT and POINTWISE)
    "aarch64": Target("aarch64", packed=True, winograd=True, pack_bytes=128 * 1024, winograd_budget=0.5,
                       block_bytes=256 * 1024, dw_c8_width=DW_C8_WIDTH, direct_channels=DIRECT_CHANNELS,
                       pointwise_pixels=POINTWISE_PIXELS, pointwise_kxk_pixels=POINTWISE_KXK_PIXELS, blocked=True),
}


def host_target() -> str:
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        return "x86-64"
    return "aarch64" if machine in ("aarch64", "arm64") else "generic"


def get_target(target) -> Target:
    if isinstance(target, Target):
        return target
    name = host_target() if target in (None, "host") else target
    if name not in TARGETS:
        raise ValueError(f"unknown target {target!r} (known: host, {', '.join(TARGETS)})")
    return TARGETS[name]


@dataclass
class Upgrade:
    """A variant that needs more constant bytes than the one an op has (a larger weight layout, e.g.
    Winograd's transformed filters): an op's select rule offers it instead of taking it, and select_kernels
    takes the offers by gain per extra byte while they fit the target's budget. apply() switches the op to
    the variant; fallback() gives it the variant it gets without the upgrade."""
    gain: float                  # e.g. multiplies saved per extra constant byte
    extra: int                   # constant bytes the variant adds
    apply: Callable[[], None]
    fallback: Callable[[], None]
