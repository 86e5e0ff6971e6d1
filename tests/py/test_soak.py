"""The soak (bench/soak.py) in short: a few thousand requests across vision and speech plans with random valid
inputs, lengths and thread counts, plans replaced every 250 requests; every output equals its reference run bit
for bit, no request fails, and the resident set stays within 1 MiB after warm-up. The full run is
`python3 bench/soak.py --requests 100000` (docs/runtime.md)."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _soak():
    spec = importlib.util.spec_from_file_location("soak_bench", ROOT / "bench" / "soak.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_soak_short(tmp_path):
    soak = _soak()
    res = soak.soak(["tiny", "kws", "asr", "hifigan"], requests=4000, seed=1, swap_every=250,
                    log=lambda *a: None, workdir=str(tmp_path))
    assert res["requests"] == 4000 and res["swaps"] == 16
    assert res["mismatches"] == 0 and res["failures"] == 0, res
    assert res["growth_kib"] <= 1024, res


def test_soak_cli_refuses_unknown_model(capsys):
    soak = _soak()
    with pytest.raises(SystemExit) as e:
        soak.main(["--models", "nosuchnet", "--requests", "1"])
    assert e.value.code == 2
    assert "unknown model(s) nosuchnet" in capsys.readouterr().err
