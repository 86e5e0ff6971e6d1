"""The soak (bench/soak.py) in short, in a process of its own as a server would be: 4,000 requests across vision
and speech plans with random valid inputs, lengths and thread counts, plans replaced every 250 requests; every
output equals its reference run bit for bit, no request fails, and the resident set stays within 1 MiB after
warm-up. The full run is `python3 bench/soak.py --requests 100000` (docs/runtime.md)."""
import re
import subprocess
import sys
from pathlib import Path

SOAK = Path(__file__).resolve().parents[2] / "bench" / "soak.py"


def test_soak_short():
    r = subprocess.run([sys.executable, str(SOAK), "--requests", "4000", "--models", "tiny,kws,asr,hifigan",
                        "--swap-every", "250", "--seed", "1"], capture_output=True, text=True, timeout=600)
    m = re.search(r"soak: 4,000 requests .*; (\d+) mismatches, (\d+) failures, (\d+) swaps; "
                  r".*\(growth ([+-][\d,]+) KiB", r.stdout)
    assert m, r.stdout[-2000:] + r.stderr[-3000:]
    mismatches, failures, swaps, growth = int(m[1]), int(m[2]), int(m[3]), int(m[4].replace(",", ""))
    assert (mismatches, failures, swaps) == (0, 0, 16), r.stdout
    assert growth <= 1024, r.stdout
    assert r.returncode == 0, r.stdout + r.stderr


def test_soak_cli_refuses_unknown_model():
    r = subprocess.run([sys.executable, str(SOAK), "--models", "nosuchnet", "--requests", "1"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "unknown model(s) nosuchnet" in r.stderr
