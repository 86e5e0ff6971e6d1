"""Soak: one process serves many requests across the zoo's vision and speech plans, with random valid inputs,
lengths and thread counts, and replaces plans now and then (Session.swap). Every output must equal, bit for
bit, the reference run of the same input (a one-thread session at the start: kernels give the same bits for
any thread count), and the process's resident set must stay flat after warm-up.

    python3 bench/soak.py --requests 100000            # the full run (several minutes)
    python3 bench/soak.py --requests 3000 --models tiny,kws,asr   # what the tests run

Prints requests, mismatches, failures, swaps and VmRSS after warm-up and at the end; exits 1 on a mismatch, a
failure, or growth above --rss-slack-kib (1 MiB)."""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))   # bench/_common.py; edgeplan as installed

from _common import cpu_name   # noqa: E402
import edgeplan                 # noqa: E402
from edgeplan import models    # noqa: E402

# name: (builder kwargs, compile kwargs, state inputs reset before each request)
PLANS = {
    "tiny": ({}, {}),
    "mobilenetv2": ({"size": 64}, {}),
    "yolo": ({"size": 64}, {}),
    "kws": ({}, {"dims": {"T": (1, 100)}, "state": {"h_in": "h_out"}}),
    "asr": ({}, {"dims": {"samples": (400, 16000)}}),
    "tts_acoustic": ({}, {"dims": {"N": (1, 32), "frames": (1, 64)}}),
    "hifigan": ({}, {"dims": {"frames": (1, 16)}}),
}
THREADS = (1, 2, 4)
POOL = 6     # distinct inputs per plan, each with its reference output


def vm_rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def _digests(outs: dict) -> dict:
    """name -> (dtype, shape, BLAKE2b of the bytes): bit-exact comparison without allocating per request."""
    return {k: (v.dtype.str, v.shape, hashlib.blake2b(memoryview(np.ascontiguousarray(v)).cast("B")).digest())
            for k, v in outs.items()}



def _random_feeds(sess, rng) -> dict:
    feeds = {}
    lengths = {}
    for t in sess.inputs:
        shape = []
        for k, d in enumerate(t.shape):
            if t.max_shape[k] != t.min_shape[k]:
                sym = t.dim_names[k]
                if sym not in lengths:
                    step = t.steps[k] if t.steps else 1
                    lo, hi = -(-t.min_shape[k] // step), t.max_shape[k] // step
                    lengths[sym] = int(rng.integers(lo, hi + 1)) * step
                shape.append(lengths[sym])
            else:
                shape.append(t.max_shape[k])
        if t.dtype.kind == "i":
            feeds[t.name] = rng.integers(1, 30, size=shape).astype(t.dtype)
        else:
            feeds[t.name] = rng.standard_normal(shape).astype(t.dtype)
    return feeds


def build(names, log=print):
    plans = {}
    for name in names:
        kw, ckw = PLANS[name]
        t = time.perf_counter()
        plans[name] = edgeplan.compile(models.build(name, **kw), **ckw).to_bytes()
        log(f"compiled {name}: {len(plans[name]):,} bytes ({time.perf_counter() - t:.1f} s)")
    return plans


def soak(names, requests: int, seed: int = 0, swap_every: int = 500, warmup: float = 0.1, log=print,
         workdir: str | None = None) -> dict:
    """Plans are written to files and swapped in from them (memory-mapped, as a board replaces a model)."""
    import tempfile
    rng = np.random.default_rng(seed)
    tmp = tempfile.TemporaryDirectory(dir=workdir)
    # compiled in a child process: the compiler's large temporary arrays would leave this process's heap
    # with free, never-touched chunks that later small allocations wander into (RSS that is the host
    # Python's, not the runtime's)
    r = subprocess.run([sys.executable, __file__, "--compile-to", tmp.name, "--models", ",".join(names)],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"compiling the soak's plans failed:\n{r.stderr[-3000:]}")
    for line in r.stdout.splitlines():
        log(line)
    plans = {n: str(Path(tmp.name) / f"{n}.eplan") for n in names}
    sessions = {n: [edgeplan.Session(plans[n], threads=k) for k in THREADS] for n in names}
    pool = {}
    for n in names:
        ref = sessions[n][0]
        items = []
        for _attempt in range(50 * POOL):
            if len(items) == POOL:
                break
            feeds = _random_feeds(ref, rng)
            ref.reset()
            try:
                items.append((feeds, _digests(ref.run(feeds, copy=False))))
            except edgeplan.EdgeplanError as e:
                # a data-dependent length (the TTS model's frames from its durations) beyond the plan's bound:
                # not a valid input for this plan; draw another
                if e.status != edgeplan.runtime.K.EP_ERR_RUN_BOUND:
                    raise
        if len(items) < POOL:
            raise RuntimeError(f"{n}: no valid random input within the plan's bounds in {50 * POOL} draws")
        pool[n] = items
    # warm-up: every session replaced twice and run on every input (each arena's pages touched at the longest
    # length; the allocator has seen a swap's pattern), then the first share of the random requests
    for n in names:
        for s in sessions[n]:
            for _ in range(2):
                s.swap(plans[n])
                for feeds, _ in pool[n]:
                    s.reset()
                    s.run(feeds, copy=False)
    mismatches = failures = swaps = 0
    rss_warm = rss_max = None
    samples = []
    t0 = time.perf_counter()
    n_warm = max(1, int(requests * warmup))
    for r in range(requests):
        n = names[int(rng.integers(len(names)))]
        s = sessions[n][int(rng.integers(len(THREADS)))]
        feeds, want = pool[n][int(rng.integers(POOL))]
        try:
            s.reset()
            got = s.run(feeds, copy=False)      # views of the arena, hashed in place: no copies
            if _digests(got) != want:
                mismatches += 1
        except Exception as e:  # noqa: BLE001 - counted and reported
            failures += 1
            if failures <= 3:
                log(f"request {r} on {n}: {e}")
        if swap_every and r % swap_every == swap_every - 1:
            s.swap(plans[n])    # the same plan again: a full replacement, outputs must not change
            swaps += 1
        if r + 1 == n_warm:
            rss_warm = rss_max = vm_rss_kib()
        elif r + 1 > n_warm and (r % 500 == 0 or r + 1 == requests):
            rss = vm_rss_kib()
            rss_max = max(rss_max, rss)
            samples.append(rss)
    dt = time.perf_counter() - t0
    for group in sessions.values():
        for s in group:
            s.close()
    tmp.cleanup()
    return dict(requests=requests, mismatches=mismatches, failures=failures, swaps=swaps, seconds=dt,
                rss_warm_kib=rss_warm, rss_max_kib=rss_max, rss_end_kib=samples[-1] if samples else rss_warm,
                growth_kib=(rss_max - rss_warm) if rss_warm is not None else 0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=100000)
    ap.add_argument("--models", default=",".join(PLANS), help=f"comma list of {', '.join(PLANS)}")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--swap-every", type=int, default=500, help="requests between two swaps (0: none)")
    ap.add_argument("--rss-slack-kib", type=int, default=1024)
    ap.add_argument("--compile-to", metavar="DIR", help=argparse.SUPPRESS)   # the soak's own child process
    a = ap.parse_args(argv)
    names = [m for m in a.models.split(",") if m]
    bad = [m for m in names if m not in PLANS]
    if bad:
        ap.error(f"unknown model(s) {', '.join(bad)}; choose from {', '.join(PLANS)}")
    if a.compile_to:
        for n, data in build(names).items():
            (Path(a.compile_to) / f"{n}.eplan").write_bytes(data)
        return 0
    print(f"CPU: {cpu_name()}")
    res = soak(names, a.requests, a.seed, a.swap_every)
    print(f"soak: {res['requests']:,} requests over {', '.join(names)} in {res['seconds']:.1f} s; "
          f"{res['mismatches']} mismatches, {res['failures']} failures, {res['swaps']} swaps; VmRSS after warm-up "
          f"{res['rss_warm_kib']:,} KiB, max {res['rss_max_kib']:,} KiB, end {res['rss_end_kib']:,} KiB "
          f"(growth {res['growth_kib']:+,} KiB, allowed {a.rss_slack_kib:,})")
    ok = res["mismatches"] == 0 and res["failures"] == 0 and res["growth_kib"] <= a.rss_slack_kib
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
