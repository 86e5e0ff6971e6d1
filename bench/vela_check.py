#!/usr/bin/env python3
"""Vela 5.2.0 reference cycles for the vNPU timing model (docs/npu.md "Timing model against Vela 5.2.0").

Writes the int8 TFLite twins of models/qtwins.py (MobileNetV2-1.0-224 in TF's topology, ResNet-50), runs
Vela on each for every configuration below, and records the total and per-layer cycles Vela reports (its
per-layer CSV and network summary CSV) with the exact command lines into tests/py/data/vela_5.2.0.json, which
tests/py/test_vela.py reads (it does not need Vela).

    python3 bench/vela_check.py [--vela /tmp/velaenv/bin/vela] [--out tests/py/data/vela_5.2.0.json]
                                [--nets mobilenetv2,resnet50] [--keep DIR]

Vela is a dev-only dependency: ethos-u-vela==5.2.0 in its own virtualenv (a wheel for cp311 x86_64);
the TFLite writer (tools/tflite_write.py) uses the flatc-generated schema classes of that wheel, found
through the interpreter next to the vela executable."""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VELA_VERSION = "5.2.0"
SYSTEM = "Ethos_U55_High_End_Embedded"
# name -> (accelerator, system config, memory mode)
CONFIGS = {
    "u55-128-sram": ("ethos-u55-128", SYSTEM, "Sram_Only"),
    "u55-256-sram": ("ethos-u55-256", SYSTEM, "Sram_Only"),
    "u55-128-shared": ("ethos-u55-128", SYSTEM, "Shared_Sram"),     # the MLEK anchor's configuration
    "u55-256-shared": ("ethos-u55-256", SYSTEM, "Shared_Sram"),
}
SUMMARY_KEYS = ("cycles_total", "cycles_npu", "cycles_sram_access", "cycles_off_chip_flash_access", "nn_macs",
                "total_original_weights", "total_npu_encoded_weights", "sram_total_bytes",
                "sram_feature_map_read_bytes", "sram_feature_map_write_bytes", "sram_weight_read_bytes",
                "sram_weight_write_bytes", "off_chip_flash_weight_read_bytes", "off_chip_flash_total_bytes",
                "sram_memory_used", "core_clock", "sram_bandwidth", "off_chip_flash_bandwidth",
                "weights_storage_area", "feature_map_storage_area")


def _vela_site(vela: str) -> str:
    """The site-packages of the interpreter that runs vela (its flatc TFLite classes)."""
    py = Path(vela).with_name("python")
    out = subprocess.run([str(py), "-c", "import ethosu.vela as v, os; print(os.path.dirname(os.path.dirname("
                          "os.path.dirname(v.__file__))))"], check=True, capture_output=True, text=True)
    return out.stdout.strip()


def _num(v: str):
    try:
        f = float(v)
    except ValueError:
        return v
    return int(f) if f.is_integer() else f


def per_layer(csv_path: Path, net) -> list:
    """Vela's per-layer rows grouped per network layer, in order. A row belongs to the layer whose output
    tensor it names; rows of ops Vela adds (the softmax's 25 elementwise steps) belong to the next named
    layer. Cycle columns: op = the row's cycles (max of the NPU and the memory-access cycles, as Vela sums
    them), npu = the NPU's compute cycles, sram / flash = the access cycles on each memory."""
    layers = {ly.output: ly for ly in net.layers}
    out, pending = [], dict(cycles=0, npu=0, sram=0, flash=0, vela_ops=0, macs=0)
    for row in csv.DictReader(open(csv_path)):
        pending["cycles"] += int(row["Op Cycles"])
        pending["npu"] += int(row["NPU"])
        pending["sram"] += int(row["SRAM AC"])
        pending["flash"] += int(row["OffFlash AC"])
        pending["macs"] += int(row["MAC Count"])
        pending["vela_ops"] += int(row["Target"] == "NPU" and int(row["Op Cycles"]) > 0)
        if row["Target"] != "NPU":
            raise RuntimeError(f"{csv_path.name}: {row['Name']} runs on the CPU")
        name = row["Name"].strip()
        if name in layers:
            if out and out[-1]["name"] == name:
                for k in pending:
                    out[-1][k] += pending[k]
            else:
                out.append(dict(name=name, kind=layers[name].kind, **pending))
            pending = dict.fromkeys(pending, 0)
    if any(pending.values()):
        raise RuntimeError(f"{csv_path.name}: rows after the last named layer")
    return out


def run(vela: str, net_name: str, tflite: Path, cfg: str, work: Path) -> dict:
    accel, system, mode = CONFIGS[cfg]
    outdir = f"out_{net_name}_{cfg}"
    args = [tflite.name, "--config", "Arm/vela.ini", "--accelerator-config", accel, "--system-config",
            system, "--memory-mode", mode, "--optimise", "Performance", "--verbose-performance", "--output-dir", outdir]
    subprocess.run([vela] + args, cwd=work, check=True, capture_output=True, text=True)
    d = work / outdir
    summary = next(d.glob("*_summary_*.csv"))
    s = {k: _num(v) for k, v in next(csv.DictReader(open(summary))).items() if k in SUMMARY_KEYS}
    return dict(command="vela " + " ".join(shlex.quote(a) for a in args), summary=s,
                layers=per_layer(next(d.glob("*_per-layer.csv")), NETS[net_name]))


NETS: dict = {}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vela", default="/tmp/velaenv/bin/vela")
    ap.add_argument("--out", default=str(ROOT / "tests/py/data/vela_5.2.0.json"))
    ap.add_argument("--nets", default="mobilenetv2,resnet50")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--keep", help="keep the TFLite files and Vela's outputs in this directory")
    a = ap.parse_args(argv)
    version = subprocess.run([a.vela, "--version"], check=True, capture_output=True, text=True).stdout.strip()
    if version != VELA_VERSION:
        sys.exit(f"{a.vela} is Vela {version}; the reference numbers are Vela {VELA_VERSION}")
    sys.path.insert(0, str(ROOT))
    sys.path.append(_vela_site(a.vela))          # after ours: only ethosu.vela.tflite comes from there
    from models import qtwins
    from tools.tflite_write import tflite_bytes

    result = dict(vela=VELA_VERSION, generator="python3 bench/vela_check.py",
                  models="models/qtwins.py (seeds " + ", ".join(f"{k} {v}" for k, v in qtwins.SEEDS.items())
                  + "), written by tools/tflite_write.py", configs={k: dict(zip(("accelerator", "system",
                                                                                  "memory_mode"), v))
                                                                       for k, v in CONFIGS.items()},
                  networks={})
    tmp = tempfile.TemporaryDirectory()
    work = Path(a.keep) if a.keep else Path(tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    for name in a.nets.split(","):
        net = NETS[name] = qtwins.build(name)
        data = tflite_bytes(net)
        tflite = work / f"{name}_int8.tflite"
        tflite.write_bytes(data)
        entry = result["networks"][name] = dict(tflite_sha256=hashlib.sha256(data).hexdigest(),
                                                macs=net.macs, weights=net.n_weights, runs={})
        for cfg in a.configs.split(","):
            r = entry["runs"][cfg] = run(a.vela, name, tflite, cfg, work)
            s = r["summary"]
            print(f"{name:12s} {cfg:15s} total {s['cycles_total']:>11,} npu {s['cycles_npu']:>11,} "
                  f"({len(r['layers'])} layers)", flush=True)
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    print("wrote", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
