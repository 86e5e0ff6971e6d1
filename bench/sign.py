"""Signature check at open: the time ep_plan_verify takes (SHA-512 over the plan, one Ed25519 verification) for
zoo plans, against the CRC check and a whole open, calls alternating in one process.

    python3 bench/sign.py [--models mobilenetv2,tiny] [--rounds 5]"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))   # bench/_common.py; edgeplan as installed

from _common import cpu_name           # noqa: E402
import edgeplan                       # noqa: E402
from edgeplan import models, signing  # noqa: E402
from edgeplan._cdef import ffi        # noqa: E402
from edgeplan.runtime import load_library  # noqa: E402



def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="tiny,mobilenetv2,resnet50")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    from cryptography.hazmat.primitives.asymmetric import ed25519
    key = ed25519.Ed25519PrivateKey.generate()
    pub = signing.public_key_bytes(key)
    lib = load_library()
    print(f"CPU: {cpu_name()}; one thread")
    print("| plan | bytes | verify ms | CRC ms | open with key ms | open without ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in a.models.split(","):
        data = signing.sign_plan(edgeplan.compile(models.build(name)).to_bytes(), key)
        buf = np.frombuffer(data, dtype=np.uint8).copy()
        ptr, kp = ffi.from_buffer(buf), ffi.new("uint8_t[32]", pub)
        steps = {"verify": lambda: lib.ep_plan_verify(ptr, len(buf), kp),
                 "crc": lambda: lib.ep_crc32c(ptr, len(buf)),
                 "open_key": lambda: edgeplan.Session(data, public_key=pub).close(),
                 "open": lambda: edgeplan.Session(data).close()}
        assert steps["verify"]() == 0
        t = {k: [] for k in steps}
        for _ in range(a.rounds):
            for k, fn in steps.items():     # alternating, one round at a time
                s = time.perf_counter()
                fn()
                t[k].append(time.perf_counter() - s)
        m = {k: statistics.median(v) * 1e3 for k, v in t.items()}
        print(f"| {name} | {len(data):,} | {m['verify']:.2f} | {m['crc']:.2f} | {m['open_key']:.2f} "
              f"| {m['open']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
