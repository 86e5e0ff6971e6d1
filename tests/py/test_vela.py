"""The vNPU's cycle model against Vela 5.2.0 (NPU.md sections 7.2 to 7.4; docs/npu.md "Timing model against
Vela 5.2.0").

The same int8 networks (models/qtwins.py: MobileNetV2-1.0-224 in TF's topology, ResNet-50; seeded weights)
were compiled by Vela from their TFLite twin; bench/vela_check.py committed its per-layer and total cycles in
tests/py/data/vela_5.2.0.json, so Vela is not needed here. This test compiles the ONNX QDQ twin with edgeplan,
partitions it onto the vNPU preset of the same configuration (Ethos-U55-128 / -256, High-End Embedded: 500 MHz,
SRAM 8 B/cycle, flash 1 B/cycle; Sram_Only = weights in SRAM, Shared_Sram = weights in flash) and sets the
cycle model's per-op cycles (ep_vnpu_estimate on each partition's blob) against Vela's per layer.

What is compared: the layers both sides run. ResNet-50's max pool runs as the vNPU's POOL kick (the int8 plan's
CAST -> MAXPOOL -> CAST chain); the global average pool (float between DEQUANTIZE and QUANTIZE in the int8 plan)
and the softmax stay on the CPU; they are 0.3 to 1.3 % of Vela's cycles and are left out of both sides' totals
(test_unmatched_layers_are_small checks that share). Every other layer is timed: the partition is made with
min_ops 1, so a lone supported op between two CPU ops (MobileNetV2's logits conv after the pool) is encoded and
timed too.

Targets (NPU.md 7.2, 7.3): totals within +-15 %, per layer within +-25 % for every layer over 1 % of Vela's
network cycles, and MobileNetV2 on U55-128 Shared_Sram within +-20 % of the Arm ML Embedded Evaluation Kit's
measured 7,345,741 active cycles (FVP), its AXI0 reads within +-20 % of 19.7 MB and its AXI1 (weight) reads within
+-10 % of 3.46 MB. The vNPU's weights are raw int8 plus 12 bytes of requantisation record per output channel
(v1 does not compress), so AXI1 is compared as raw bytes against the FVP's compressed ones: Vela's encoding of
these random weights is 95 % of raw (3.30 of 3.47 MB), a trained network's less.

    python3 tests/py/test_vela.py      # prints the comparison tables (docs/npu.md)"""
from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "py" / "data" / "vela_5.2.0.json"
CONFIGS = ("u55-128-sram", "u55-256-sram", "u55-128-shared", "u55-256-shared")
NETS = ("mobilenetv2", "resnet50")
TOTAL_TOL = 0.15
LAYER_TOL = 0.25
LAYER_SHARE = 0.01
MLEK_CYCLES = 7_345_741       # MobileNetV2-1.0-224 int8, U55-128, Corstone-300 FVP, Shared_Sram, HE embedded
MLEK_AXI0_RD = 19.7e6         # NPU.md: AXI0 beats x 8 B
MLEK_AXI1_RD = 3.46e6


def vela() -> dict:
    return json.loads(DATA.read_text())


def _vnpu():
    """The vNPU's Python side, or a skip in a checkout without it."""
    try:
        from edgeplan import vnpu
        from edgeplan.compiler.partition import vnpu_encode
    except ImportError as e:                      # pragma: no cover
        pytest.skip(f"vNPU Python API not available: {e}")
    return vnpu, vnpu_encode


@functools.lru_cache(maxsize=None)
def vnpu_layers(net: str, cfg) -> dict:
    """The vNPU's modelled cycles of the ONNX twin of `net` on config `cfg` (a preset name, or a tuple of
    (field, value) pairs over a preset, as edgeplan.vnpu.config takes them): {"layers": {op name: per-kick
    record}, "report": the partition report, "total": summed counters}."""
    from edgeplan._cdef import K
    from edgeplan.compiler.partition import Backend, CPU_MODELS
    from edgeplan.compiler.pipeline import compile_model
    from edgeplan.models import qtwins
    vnpu, enc = _vnpu()
    c = vnpu.config(dict(cfg) if isinstance(cfg, tuple) else cfg)
    timed = {}                                    # the run's op names -> (per-op records, blob totals)

    def encode(ops, inputs, outputs):
        blob, work = enc.encode(ops, inputs, outputs, c)
        est = vnpu.estimate(blob, c)
        names = [k[-1].name for k in enc.kicks(ops)]    # a max-pool chain (CAST, MAXPOOL, CAST) is one kick
        assert len(est["ops"]) == len(names), (f"{len(est['ops'])} kicks for {len(names)} kick groups: the "
                                               "per-op records cannot be matched to the layers")
        timed[tuple(names)] = (dict(zip(names, est["ops"])), est["total"])
        return blob, work

    def seconds(blob):
        return vnpu.estimate(blob, c)["total"]["active_cycles"] / (c.clock_mhz * 1e6)

    backend = Backend(f"vnpu-{net}", K.EP_DELEGATE_KIND_VNPU, enc.supported, encode, seconds, min_ops=1,
                      groups=enc.groups)
    # The U55's host is a Cortex-M55 (Corstone-300). Placement does not matter here: the partitioner encodes
    # every run of supported ops (min_ops 1) before it decides, and every encoded run is timed.
    plan = compile_model(qtwins.to_onnx(qtwins.build(net)),
                         npu=(backend, CPU_MODELS["cortex-m55"], frozenset()))
    layers, total = {}, {}
    for per_op, tot in timed.values():
        layers.update(per_op)
        for k, v in tot.items():
            total[k] = total.get(k, 0) + v
    report = plan.report["partitions"]
    return dict(layers=layers, report=report, total=total)


def compare(net: str, cfg: str) -> dict:
    """Per layer and total ratios vNPU / Vela on the layers both time."""
    ref = vela()["networks"][net]["runs"][cfg]
    got = vnpu_layers(net, cfg)["layers"]
    vela_total = ref["summary"]["cycles_total"]
    rows, unmatched = [], []
    for ly in ref["layers"]:
        if ly["name"] not in got:
            unmatched.append(ly)
            continue
        v = got[ly["name"]]
        rows.append(dict(name=ly["name"], kind=ly["kind"], vela=ly["cycles"], vela_npu=ly["npu"],
                         vnpu=v["cycles"], limiter=v["limiter"], share=ly["cycles"] / vela_total,
                         ratio=v["cycles"] / ly["cycles"]))
    extra = sorted(set(got) - {ly["name"] for ly in ref["layers"]})
    matched_vela = sum(r["vela"] for r in rows)
    matched_vnpu = sum(r["vnpu"] for r in rows)
    return dict(rows=rows, unmatched=unmatched, extra=extra, vela_total=vela_total, matched_vela=matched_vela,
                vnpu_total=matched_vnpu, ratio=matched_vnpu / matched_vela,
                unmatched_share=sum(u["cycles"] for u in unmatched) / vela_total,
                large_out=[r for r in rows if r["share"] > LAYER_SHARE and abs(r["ratio"] - 1) > LAYER_TOL])


CASES = [(n, c) for n in NETS for c in CONFIGS]

# Large layers (> 1 % of Vela's cycles) the cycle model misses by more than 25 %, with their cause: none since the
# model counts the IFM rows a strided kernel touches, the deeper OC pass of a one-block OFM plane, the per-block
# weight re-reads of k x k kernels and the border re-reads of depthwise blocks (runtime_c/delegates/vnpu/model.c;
# docs/npu.md "Timing model against Vela 5.2.0" has the numbers). A deviation that appears is listed here with
# its measured ratio and cause: test_large_layers_within_25_percent is then an expected failure for its
# configuration, and test_known_layer_deviations pins the list, so a fix or a new deviation both show.
KNOWN: dict = {}


def _known_xfail(net, cfg):
    known = KNOWN.get((net, cfg))
    if not known:
        return pytest.param(net, cfg)
    why = "; ".join(sorted(set(known.values())))
    return pytest.param(net, cfg, marks=pytest.mark.xfail(strict=True, reason=f"{sorted(known)}: {why}"))


@pytest.mark.parametrize("net,convs,adds,gemms", [("mobilenetv2", 53, 10, 0), ("resnet50", 53, 16, 1)])
def test_twins_compile_to_int8_ops(net, convs, adds, gemms):
    """The QDQ twin runs its convolutions, residual adds and classifier on edgeplan's int8 ops, no float conv or
    GEMM: the vNPU times the same layers Vela compiled (MobileNetV2's logits are a 1x1 conv, as in TF)."""
    import edgeplan
    from edgeplan.models import qtwins
    ops = edgeplan.compile(qtwins.to_onnx(qtwins.build(net))).report["op_counts"]
    assert (ops.get("qconv2d"), ops.get("qadd", 0), ops.get("qgemm", 0)) == (convs, adds, gemms), ops
    assert not {"conv2d", "gemm", "matmul"} & set(ops), ops


@pytest.mark.parametrize("net,cfg", CASES)
def test_unmatched_layers_are_small(net, cfg):
    """Vela's layers the vNPU does not run (the global average pool, softmax) are under 2 % of Vela's cycles, so
    comparing the layers both sides run compares the networks; and every layer the vNPU times has a Vela
    counterpart (ResNet-50's max pool among them)."""
    r = compare(net, cfg)
    assert not r["extra"], r["extra"]
    assert {u["kind"] for u in r["unmatched"]} <= {"avgpool", "softmax"}, r["unmatched"]
    assert r["unmatched_share"] < 0.02, r["unmatched_share"]


@pytest.mark.parametrize("net,cfg", CASES)
def test_network_total_within_15_percent(net, cfg):
    r = compare(net, cfg)
    assert abs(r["ratio"] - 1) <= TOTAL_TOL, f"vNPU / Vela = {r['ratio']:.3f}"


@pytest.mark.parametrize("net,cfg", [_known_xfail(n, c) for n, c in CASES])
def test_large_layers_within_25_percent(net, cfg):
    r = compare(net, cfg)
    bad = [(x["name"], round(x["ratio"], 2), x["limiter"]) for x in r["large_out"]]
    assert not bad, bad


@pytest.mark.parametrize("net,cfg", CASES)
def test_known_layer_deviations(net, cfg):
    """The large layers outside +-25 % are exactly the ones KNOWN lists (with their cause), no more, no fewer."""
    r = compare(net, cfg)
    assert {x["name"] for x in r["large_out"]} == set(KNOWN.get((net, cfg), {})), \
        [(x["name"], round(x["ratio"], 2)) for x in r["large_out"]]


@pytest.mark.parametrize("net", NETS)
def test_partition_places_the_network_body(net):
    """With a Cortex-M55 host (Corstone-300), the partitioner puts the run of all inner layers on the U55-128
    (Shared_Sram) vNPU: 62 ops of MobileNetV2, 72 of ResNet-50 (its stem conv, the max pool's CAST -> MAXPOOL ->
    CAST chain and the 68 ops after it)."""
    runs = vnpu_layers(net, "u55-128-shared")["report"]["runs"]
    body = max(runs, key=lambda r: r["n_ops"])
    assert body["placed"] and body["n_ops"] == {"mobilenetv2": 62, "resnet50": 72}[net], body


def test_mlek_anchor():
    """MobileNetV2 on U55-128 Shared_Sram against the MLEK's FVP run: active cycles +-20 %, AXI0 reads +-20 %,
    AXI1 (weights, raw int8 + records here, compressed there) +-10 %."""
    t = vnpu_layers("mobilenetv2", "u55-128-shared")["total"]
    assert abs(t["active_cycles"] / MLEK_CYCLES - 1) <= 0.20, t["active_cycles"] / MLEK_CYCLES
    assert abs(t["sram_rd_bytes"] / MLEK_AXI0_RD - 1) <= 0.20, t["sram_rd_bytes"] / MLEK_AXI0_RD
    assert abs(t["ext_rd_bytes"] / MLEK_AXI1_RD - 1) <= 0.10, t["ext_rd_bytes"] / MLEK_AXI1_RD


def _speedup(net, a, b):
    return vnpu_layers(net, a)["total"]["active_cycles"] / vnpu_layers(net, b)["total"]["active_cycles"]


def test_scaling_128_to_256():
    """NPU.md 7.4: doubling the MACs speeds MobileNetV2 up 1.4-1.8x with the weights in SRAM (Vela 1.58x), at
    most 1.4x with them in 0.5 GB/s flash (Vela 1.32x); a compute-bound conv (ResNet-50's 3x3 convs of
    layer1, 56x56x64) 1.9-2.0x."""
    ref = vela()["networks"]
    s_sram = _speedup("mobilenetv2", "u55-128-sram", "u55-256-sram")
    s_shared = _speedup("mobilenetv2", "u55-128-shared", "u55-256-shared")
    v = {c: ref["mobilenetv2"]["runs"][c]["summary"]["cycles_total"] for c in CONFIGS}
    assert 1.4 <= s_sram <= 1.8, (s_sram, v["u55-128-sram"] / v["u55-256-sram"])
    assert s_shared <= 1.4, (s_shared, v["u55-128-shared"] / v["u55-256-shared"])
    l128 = vnpu_layers("resnet50", "u55-128-sram")["layers"]
    l256 = vnpu_layers("resnet50", "u55-256-sram")["layers"]
    for name in ("layer1.0.conv2", "layer1.1.conv2", "layer1.2.conv2"):
        s = l128[name]["cycles"] / l256[name]["cycles"]
        assert 1.9 <= s <= 2.0, (name, s)


def test_halving_flash_doubles_the_weight_bound_layer():
    """NPU.md 7.4: with half the flash bandwidth (0.25 GB/s) the flash-bound logits layer of MobileNetV2
    (1280 -> 1001, 1.28 MB of weights) takes twice as long, within +-5 % (Vela: 958,832 -> 1,917,664 for an FC
    of 1.02 M weights)."""
    full = vnpu_layers("mobilenetv2", "u55-128-shared")["layers"]["logits"]
    half = vnpu_layers("mobilenetv2", (("preset", "u55-128-shared"), ("ext_mbps", 250)))["layers"]["logits"]
    assert full["limiter"] == "ext" and half["limiter"] == "ext", (full, half)
    assert abs(half["cycles"] / full["cycles"] / 2 - 1) <= 0.05, half["cycles"] / full["cycles"]


def test_clock_leaves_compute_bound_cycles():
    """NPU.md 7.4: with only the clock changed (500 -> 250 MHz, bandwidths in bytes per second kept, so twice the
    bytes per cycle), a compute-bound conv keeps its cycle count and its time doubles."""
    fast = vnpu_layers("resnet50", "u55-256-sram")["layers"]["layer1.0.conv2"]
    slow = vnpu_layers("resnet50", (("preset", "u55-256-sram"), ("clock_mhz", 250)))["layers"]["layer1.0.conv2"]
    assert fast["limiter"] == slow["limiter"] == "compute", (fast, slow)
    assert fast["cycles"] == slow["cycles"]


def test_mobilenetv2_mac_utilisation():
    """NPU.md 7.5: MobileNetV2's MAC utilisation lands in the 20-45 % band (Vela: 32 % on U55-256 Sram_Only)."""
    t = vnpu_layers("mobilenetv2", "u55-256-sram")["total"]
    util = t["mac_ops"] / 256 / t["active_cycles"]
    assert 0.20 <= util <= 0.45, util


# ---------------------------------------------------------------------- the tables of docs/npu.md

def table() -> str:
    lines = ["| network | config | Vela total | Vela, layers compared | vNPU | vNPU / Vela "
             "| large layers: vNPU / Vela | large layers out of +-25 % |", "|---|---|---|---|---|---|---|---|"]
    for net, cfg in CASES:
        r = compare(net, cfg)
        large = [x["ratio"] for x in r["rows"] if x["share"] > LAYER_SHARE]
        out = ", ".join(f"{x['name']} {x['ratio']:.2f}" for x in r["large_out"]) or "none"
        lines.append(f"| {net} | {cfg} | {r['vela_total']:,} | {r['matched_vela']:,} | {r['vnpu_total']:,} | "
                     f"{r['ratio']:.3f} | {min(large):.2f}-{max(large):.2f} | {out} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
