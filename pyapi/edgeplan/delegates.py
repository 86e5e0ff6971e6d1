"""Delegates the runtime library carries, for ``edgeplan.Session(plan, delegates=[...])`` (docs/npu.md).

``External(path, options)``: the forwarding delegate of include/edgeplan/external.h, which runs the plan's
partitions of kind EP_DELEGATE_KIND_EXTERNAL on a driver library loaded with dlopen (a vendor NPU stack's
adapter). The virtual NPU is ``edgeplan.vnpu.VirtualNPU``."""
from __future__ import annotations

import os

from ._cdef import K, ffi
from .runtime import EdgeplanError, load_library


class External:
    """A driver library that exports ``edgeplan_driver_v1`` (include/edgeplan/external.h), opened once; pass
    it to the sessions that should use it. It stays loaded while any of them is open."""

    def __init__(self, path, options: str = ""):
        self._lib = load_library()
        if not hasattr(self._lib, "ep_external_open"):
            raise EdgeplanError(K.EP_ERR_NOT_FOUND, "this runtime library was built without the external delegate")
        self._x = ffi.new("ep_external *")
        why = ffi.new("char[]", 256)
        rc = self._lib.ep_external_open(self._x, os.fsencode(path), options.encode(), why, 256)
        if rc != K.EP_OK:
            self._x = None
            raise EdgeplanError(rc, f"cannot load driver {path}: {ffi.string(why).decode(errors='replace')}")
        self.delegate = ffi.addressof(self._x, "delegate")
        self.name = ffi.string(self._x.delegate.name).decode(errors="replace")

    def counters(self) -> dict:
        """Partitions loaded, runs and failed runs over every session it served."""
        return dict(loads=int(self._x.loads), runs=int(self._x.runs), failures=int(self._x.failures))

    def __del__(self):
        if getattr(self, "_x", None) is not None:
            self._lib.ep_external_close(self._x)
            self._x = None
