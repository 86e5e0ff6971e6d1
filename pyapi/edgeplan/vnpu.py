"""The virtual NPU ("EPN-1", runtime_c/delegates/vnpu, include/edgeplan/vnpu.h) from Python.

``VirtualNPU(preset)`` owns one device (its ``ep_vnpu_device`` allocated by cffi); pass it as a delegate::

    npu = VirtualNPU("u55-256-sram")
    s = edgeplan.Session(plan, delegates=[npu])
    s.run(feeds); npu.counters(); npu.op_cycles()

``estimate(blob, cfg)`` runs only the cycle model on a blob (what the compiler's partitioner calls, so the model
has one source: the C library). Presets: ``presets()``."""
from __future__ import annotations

from ._cdef import ffi
from .runtime import EdgeplanError, load_library, status_str

_COUNTERS = ("active_cycles", "compute_cycles", "mac_ops", "sram_rd_bytes", "sram_wr_bytes", "ext_rd_bytes",
             "ext_wr_bytes", "ops", "executes")
_OPS = {1: "conv", 2: "dwconv", 3: "matmul", 4: "eltwise", 5: "lut", 6: "dma", 7: "pool"}
_LIMITERS = ("compute", "sram", "ext")


def presets() -> list[str]:
    lib = load_library()
    return [ffi.string(lib.ep_vnpu_preset_name(i)).decode() for i in range(lib.ep_vnpu_preset_count())]


def config(cfg="u55-256-sram"):
    """An ``ep_vnpu_config *`` from a preset name, a VirtualNPU, an existing config, or a dict of fields over
    a preset's (``{"preset": "u55-128-shared", "ext_mbps": 250}``)."""
    lib = load_library()
    if isinstance(cfg, VirtualNPU):
        return cfg.cfg
    if isinstance(cfg, ffi.CData):
        return cfg
    fields = dict(cfg) if isinstance(cfg, dict) else {"preset": cfg}
    name = fields.pop("preset", "u55-256-sram")
    c = ffi.new("ep_vnpu_config *")
    rc = lib.ep_vnpu_preset(str(name).encode(), c)
    if rc != 0:
        raise EdgeplanError(rc, f"vNPU preset {name!r} unknown (presets: {', '.join(presets())})")
    for k, v in fields.items():
        if k == "name":
            c.name = str(v).encode()[:31]
        else:
            setattr(c, k, int(v))
    return c


def _counters(c) -> dict:
    return {k: int(getattr(c, k)) for k in _COUNTERS}


def _op(o) -> dict:
    return dict(op=_OPS.get(int(o.opcode), str(int(o.opcode))), cycles=int(o.cycles),
                compute_cycles=int(o.compute_cycles), mac_ops=int(o.mac_ops), limiter=_LIMITERS[int(o.limiter)],
                sram_rd_bytes=int(o.sram_rd_bytes), sram_wr_bytes=int(o.sram_wr_bytes),
                ext_rd_bytes=int(o.ext_rd_bytes), ext_wr_bytes=int(o.ext_wr_bytes))


def estimate(blob: bytes, cfg="u55-256-sram") -> dict:
    """The cycle model on a blob, validated as the delegate's init does (against the I/O it declares):
    {"total": counters dict, "ops": [per-kick dicts: op, cycles, compute_cycles, mac_ops, limiter, *_bytes]}.
    Raises EdgeplanError with the validator's reason for a blob the vNPU would refuse."""
    lib = load_library()
    c = config(cfg)
    buf = bytes(blob)
    n = ffi.new("uint32_t *")
    tot = ffi.new("ep_vnpu_counters *")
    why = ffi.new("char[]", 256)
    rc = lib.ep_vnpu_estimate(buf, len(buf), c, ffi.NULL, 0, n, tot, why, 256)
    if rc == 0 and n[0]:
        ops = ffi.new("ep_vnpu_op_info[]", n[0])
        rc = lib.ep_vnpu_estimate(buf, len(buf), c, ops, n[0], n, tot, why, 256)
    if rc != 0:
        raise EdgeplanError(rc, f"vNPU refuses the blob: {ffi.string(why).decode(errors='replace') or status_str(rc)}")
    return {"total": _counters(tot), "ops": [_op(ops[i]) for i in range(n[0])] if n[0] else []}


class VirtualNPU:
    """One vNPU device. ``preset``: a preset name (``presets()``), or a config as ``config()`` takes.
    ``.delegate`` is the ``ep_delegate *`` to register (Session(delegates=[npu]) also takes the object). The
    pointer lives in this object's memory: keep the VirtualNPU alive while a session uses it (a Session keeps
    what it was given, so pass the object rather than a bare ``npu.delegate``)."""

    def __init__(self, preset="u55-256-sram"):
        self._lib = load_library()
        self.cfg = config(preset)
        self._dev = ffi.new("ep_vnpu_device *")
        rc = self._lib.ep_vnpu_open(self._dev, self.cfg)
        if rc != 0:
            raise EdgeplanError(rc, "ep_vnpu_open: the config is not one the vNPU models")
        self.delegate = ffi.addressof(self._dev[0], "delegate")
        self.name = ffi.string(self._dev.name).decode()

    def counters(self, total: bool = False) -> dict:
        """PMU-style counters of the last execute (or summed over the device's life): active_cycles,
        compute_cycles, mac_ops, sram/ext read/write bytes, ops, executes; plus failures (executes that fell
        back to the CPU)."""
        d = _counters(self._dev.total if total else self._dev.last)
        d["failures"] = int(self._dev.failures)
        return d

    def op_cycles(self) -> list[dict]:
        """Per kick of the last execute (up to EP_VNPU_MAX_TRACE): op, cycles, compute_cycles, mac_ops, limiter
        and the bytes on each port."""
        return [_op(self._dev.trace[i]) for i in range(self._dev.n_trace)]

    def reset(self) -> None:
        self._lib.ep_vnpu_counters_reset(self._dev)

    @property
    def clock_mhz(self) -> int:
        return int(self.cfg.clock_mhz)

    def __repr__(self) -> str:
        return f"VirtualNPU({ffi.string(self.cfg.name).decode()!r})"
