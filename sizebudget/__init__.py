"""edgeplan.sizebudget (the checkout's sizebudget/): binary-size budgets of the edgeplan runtime per board (docs/size.md).

    python -m edgeplan.sizebudget             # build the probes for aarch64 + x86-64, table + checks
    python -m edgeplan.sizebudget measure lib.so --objects build/runtime_c/libedgeplan.so.p
    edgeplan size ...                         # the same CLI

Modules: elfsize (ELF -> per-component sizes, pyelftools), probes (meson builds of the size probes),
budgets (budgets.toml hard limits and the baseline.json ratchet), ram (weights + arena + runtime vs a
board's RAM)."""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
BUDGETS = HERE / "budgets.toml"
BASELINE = HERE / "baseline.json"

__all__ = ["HERE", "BUDGETS", "BASELINE"]
