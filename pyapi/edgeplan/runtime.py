"""Thin cffi (ABI mode) wrapper over libedgeplan: numpy arrays in and out.

Imports neither onnx nor the compiler: a board with Python can run plans with numpy and cffi only."""
from __future__ import annotations

import mmap
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._cdef import EP_TO_NUMPY, K, ffi

_lib = None


class EdgeplanError(RuntimeError):
    """A C status code turned into an exception; ``status`` is the code, the message the C reason."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _candidates():
    env = os.environ.get("EDGEPLAN_LIB")
    if env:
        yield Path(env)
    here = Path(__file__).resolve().parent
    for name in ("libedgeplan.so", "libedgeplan.dylib", "edgeplan.dll"):
        yield here / "_lib" / name


def load_library():
    """The runtime shared library (loaded once)."""
    global _lib
    if _lib is None:
        tried = []
        for p in _candidates():
            tried.append(str(p))
            if p.is_file():
                _lib = ffi.dlopen(str(p))
                break
        else:
            raise OSError("libedgeplan not found (tried: " + ", ".join(tried) + "); set EDGEPLAN_LIB")
    return _lib


_types = None


def _t():
    """C types taken from the functions' signatures: building them from strings would run cffi's C
    parser (several ms per new string) on the first Session of every process."""
    global _types
    if _types is None:
        lib = load_library()
        opn = ffi.typeof(lib.ep_session_open).args
        _types = {"session_pp": opn[0], "options_p": opn[5],
                  "info_p": ffi.typeof(lib.ep_plan_query).args[2],
                  "desc_p": ffi.typeof(lib.ep_session_io_desc).args[3],
                  "sinfo_p": ffi.typeof(lib.ep_session_query).args[1],
                  "profile_p": ffi.typeof(lib.ep_session_profile).args[2],
                  "part_p": ffi.typeof(lib.ep_session_partition).args[2]}
    return _types


def _errbuf():
    buf = bytearray(256)
    return buf, ffi.from_buffer(buf)


def _errtext(buf: bytearray) -> str:
    return bytes(buf).split(b"\0", 1)[0].decode(errors="replace")


def status_str(status: int) -> str:
    return ffi.string(load_library().ep_status_str(status)).decode()


def _check(rc: int, what: str, detail: str = "") -> None:
    if rc != K.EP_OK:
        status = status_str(rc)
        if detail.startswith(status):    # the reason already says it ("not an edgeplan plan (bad magic)")
            msg = f"{what}: {detail} ({rc})"
        else:
            msg = f"{what}: {status} ({rc})" + (f": {detail}" if detail else "")
        raise EdgeplanError(rc, msg)


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: np.dtype
    shape: tuple                # current shape (inputs: as last set; outputs: as the last run made them)
    nbytes: int
    min_shape: tuple = ()       # per dim, the smallest value (== max_shape for static dims)
    max_shape: tuple = ()       # per dim, the bound the arena is planned for
    dim_names: tuple = ()       # per dim, the symbol name of a variable dim ("T"), else None
    steps: tuple = ()           # per dim, 1 or the step a variable dim's values are multiples of

    @property
    def is_variable(self) -> bool:
        return any(n is not None for n in self.dim_names)

    def shape_str(self) -> str:
        """The shape with variable dims as NAME=MIN..MAX[:STEP]: "[1, 80, T=1..3000]", "[1, 3, H=320..1280:32, ...]"."""
        steps = self.steps or (1,) * len(self.shape)
        dims = [f"{n}={lo}..{hi}" + (f":{st}" if st > 1 else "") if n is not None else str(d)
                for d, n, lo, hi, st in zip(self.shape, self.dim_names, self.min_shape, self.max_shape, steps)]
        return "[" + ", ".join(dims) + "]"


def _aligned_empty(nbytes: int, align: int = 64, zeroed: bool = False) -> tuple[np.ndarray, int]:
    if zeroed and nbytes >= 1 << 18 and align <= mmap.PAGESIZE:
        # a large arena gets pages of its own (zero, page-aligned), returned to the system when the session
        # goes: a long-running process that opens and closes sessions (Session.swap) keeps a flat footprint
        # instead of leaving arena-sized holes in the malloc heap
        return np.frombuffer(mmap.mmap(-1, nbytes), dtype=np.uint8), 0
    raw = (np.zeros if zeroed else np.empty)(nbytes + align, dtype=np.uint8)
    off = (-raw.ctypes.data) % align
    return raw, off


def plan_info(plan_bytes) -> dict:
    """ep_plan_query on plan bytes: what opening it will need."""
    lib = load_library()
    buf, off = _aligned_empty(len(plan_bytes), 8)
    buf[off:off + len(plan_bytes)] = np.frombuffer(plan_bytes, dtype=np.uint8)
    info = ffi.new(_t()["info_p"])
    _check(lib.ep_plan_query(ffi.from_buffer(buf[off:]), len(plan_bytes), info), "plan")
    return {k: getattr(info, k) for k in dir(info)}


class Session:
    """An open plan with its arena.

    ``plan`` is a path (memory-mapped, weights used in place), bytes, or an ``edgeplan.Plan``.
    ``threads``: threads ``run`` uses, this one included (workers start at open, stop at ``close``;
    outputs are bit-identical for any count; ``self.threads`` is what the runtime runs).
    ``profile``: time every op (``profile()``); without it the run loop is untouched.
    ``seed``: the key of the plan's random ops that have no seed of their own (ep_options.seed); each run
    draws the next numbers of the sequence, and ``reset()`` starts it again (docs/runtime.md).
    ``public_key``: the 32 raw bytes of an Ed25519 public key: the plan must carry a signature made with its
    secret key (docs/signing.md), else opening fails (an unsigned plan, a bad signature, a changed byte).
    ``delegates``: accelerators for the plan's partitions (docs/npu.md), each an ``ep_delegate *`` (cffi) or
    an object whose ``delegate`` attribute is one (``edgeplan.vnpu.VirtualNPU``), kept alive by the
    session; a partition without a delegate of its kind, or one its delegate refuses, runs on the CPU
    (``partitions`` says where each runs and why).

    Threads: a session runs one call at a time. Calls from several Python threads are serialised by a
    lock (each ``run`` sets its feeds, runs and copies its outputs under it), so each caller gets the
    results of its own feeds; for parallel runs, open one session per thread. ``run(copy=False)``
    returns views of the arena that the next run of this session overwrites.
    After ``os.fork()``, a session with worker threads (``threads > 1``) fails with a clear error in
    the child; open a new one there.
    A plan opened from a path stays mapped: replace the file by renaming a new one over it (as
    ``Plan.save`` and ``edgeplan compile -o`` do) and this session keeps the plan it opened."""

    def __init__(self, plan, *, threads: int = 1, cpu_features_mask: int = 0, check_crc: bool = True,
                 profile: bool = False, seed: int = 0, delegates=(), public_key: bytes | None = None):
        self._prepare(plan, threads=threads, cpu_features_mask=cpu_features_mask, check_crc=check_crc,
                      profile=profile, seed=seed, delegates=delegates, public_key=public_key)
        # zeroed (calloc: pages are mapped on first touch), so nothing reads a previous allocation's bytes
        raw, off = _aligned_empty(self.arena_bytes, K.EP_ARENA_ALIGN, zeroed=True)
        sp = ffi.new(_t()["session_pp"])
        rc = self._lib.ep_session_open(sp, self._plan_ptr, len(self._plan_buf), ffi.from_buffer(raw) + off,
                                       self.arena_bytes, self._opts)
        _check(rc, "cannot open plan", _errtext(self._err_buf))
        self._attach(sp[0], raw)

    def _prepare(self, plan, *, threads, cpu_features_mask, check_crc, profile, seed, delegates, public_key):
        """Everything before the open: the arguments checked, the plan mapped (and its signature checked),
        the options built; self.arena_bytes is the arena the plan needs on its own."""
        self._group = None
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 0:
            raise ValueError(f"threads must be an int >= 0, got {threads!r}")
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 1 << 64:
            raise ValueError(f"seed must be an int in [0, 2^64), got {seed!r}")
        if isinstance(plan, int) or not (isinstance(plan, (str, os.PathLike, bytes, bytearray, memoryview))
                                         or hasattr(plan, "to_bytes")):
            raise TypeError(f"plan must be a path, bytes or an edgeplan.Plan, got {type(plan).__name__}")
        self._s = None
        self._lock = threading.RLock()
        if public_key is not None and (not isinstance(public_key, (bytes, bytearray)) or len(public_key) != 32):
            raise ValueError("public_key must be the 32 raw bytes of an Ed25519 public key (NAME.pub from "
                             "`edgeplan keygen`)")
        self._open_kw = dict(threads=threads, cpu_features_mask=cpu_features_mask, check_crc=check_crc,
                             profile=profile, seed=seed, delegates=delegates, public_key=public_key)
        self.swaps = 0
        lib = self._lib = load_library()
        # resolved now: __del__ may run inside a cffi call that holds cffi's lock (the garbage collector
        # runs anywhere), where a first lookup of a library function would wait for that lock forever
        self._close_fn = lib.ep_session_close
        self._mmap = None
        if isinstance(plan, (str, os.PathLike)):
            with open(plan, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size == 0:
                    raise EdgeplanError(K.EP_ERR_PLAN_TRUNCATED, f"{plan}: empty file")
                self._mmap = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            self._plan_buf = np.frombuffer(self._mmap, dtype=np.uint8)
        else:
            data = plan.to_bytes() if hasattr(plan, "to_bytes") else bytes(plan)
            raw, off = _aligned_empty(len(data), 64)
            raw[off:off + len(data)] = np.frombuffer(data, dtype=np.uint8)
            self._plan_buf = raw[off:off + len(data)]
        plan_ptr = self._plan_ptr = ffi.from_buffer(self._plan_buf)
        plan_len = len(self._plan_buf)
        t = _t()
        info = ffi.new(t["info_p"])
        self._err_buf, err = _errbuf()
        opts = self._opts = ffi.new(t["options_p"])
        self._err_ptr = err
        opts.struct_size = ffi.sizeof(opts[0])
        opts.flags = (0 if check_crc else K.EP_OPT_SKIP_CRC) | (K.EP_OPT_PROFILE if profile else 0)
        opts.cpu_features_mask = cpu_features_mask
        opts.error_buf = err
        opts.error_buf_len = len(self._err_buf)
        opts.n_threads = threads
        opts.seed = seed   # the key of random ops without a seed of their own (docs/runtime.md)
        if public_key is not None:   # a plan this key has not signed is refused (docs/signing.md)
            self._public_key = ffi.new("uint8_t[32]", bytes(public_key))
            opts.flags &= ~K.EP_OPT_SKIP_CRC   # the signature leaves the CRC field out: the CRC check covers it
        self._delegates = list(delegates or ())   # the vtables (and what they point to) outlive the session
        if self._delegates:
            ptrs = [getattr(d, "delegate", d) for d in self._delegates]
            if not all(isinstance(p, ffi.CData) and ffi.typeof(p) in (ffi.typeof("ep_delegate *"),
                                                                      ffi.typeof("const ep_delegate *"))
                       for p in ptrs):
                raise TypeError("delegates must be ep_delegate pointers or objects with a 'delegate' attribute")
            self._delegate_array = ffi.new("const ep_delegate *[]", ptrs)
            opts.delegates = self._delegate_array
            opts.n_delegates = len(ptrs)
        if public_key is not None:   # checked once, here, before anything else in the plan is read
            rc = lib.ep_plan_verify(plan_ptr, plan_len, self._public_key)
            _check(rc, "cannot open plan", {K.EP_ERR_PLAN_UNSIGNED: "the plan carries no signature section",
                                            K.EP_ERR_PLAN_SIGNATURE: "the signature is another key's, or a byte "
                                                                     "of the plan changed"}.get(rc, ""))
        rc = lib.ep_plan_query(plan_ptr, plan_len, info)
        if rc != K.EP_OK:
            # open checks the plan before it looks at the arena, so it states the reason
            lib.ep_session_open(ffi.new(t["session_pp"]), plan_ptr, plan_len, ffi.NULL, 0, opts)
            _check(rc, "cannot read plan", _errtext(self._err_buf))
        self.arena_bytes = int(info.arena_bytes)
        self.planned_bytes = int(info.planned_bytes)
        self.const_bytes = int(info.const_bytes)

    def _attach(self, s, raw) -> None:
        """Binds the open session s, whose arena lies in the numpy array raw."""
        lib = self._lib
        t = _t()
        self._arena_raw = raw
        self._s = s
        si = ffi.new(t["sinfo_p"])
        si.struct_size = ffi.sizeof(si[0])
        _check(lib.ep_session_query(self._s, si), "session")
        self._last_error = si.last_error   # the session's own buffer: stable while it is open
        self.threads = int(si.n_threads)
        self.n_ops = int(si.n_ops)
        self.n_partitions = int(si.n_partitions)
        self.inputs = [self._desc(i, False) for i in range(si.n_inputs)]
        self.outputs = [self._desc(i, True) for i in range(si.n_outputs)]
        self._in_index = {t.name: i for i, t in enumerate(self.inputs)}
        self._fed = set()   # inputs given a value since open
        # where each input and output lies in the arena (fixed at open)
        self._io_off = {(out, i): int(ffi.cast("uintptr_t", lib.ep_session_io_buffer(self._s, int(out), i)))
                        - raw.ctypes.data
                        for out, n in ((False, len(self.inputs)), (True, len(self.outputs))) for i in range(n)}
        self._variable_outputs = any(t.is_variable for t in self.outputs)
        self._variable = self._variable_outputs or any(t.is_variable for t in self.inputs)
        self._views = {}   # (output, i) -> (its TensorInfo, the arena view for it): a new shape makes a new view
        self._ep_run = lib.ep_run

    @property
    def partitions(self) -> list:
        """Per partition of the plan (its DELEGATE ops): where it runs and why, and how many runs each side
        computed: dicts of index, op, n_cpu_ops, kind, delegate ("" when on the CPU), status, reason,
        delegate_runs, cpu_runs, last_execute_status."""
        with self._lock:
            self._live()
            out = []
            for k in range(self.n_partitions):
                p = ffi.new(_t()["part_p"])
                p.struct_size = ffi.sizeof(p[0])
                _check(self._lib.ep_session_partition(self._s, k, p), "partition")
                out.append(dict(index=int(p.index), op=int(p.op), n_cpu_ops=int(p.n_cpu_ops), kind=int(p.kind),
                                delegate=ffi.string(p.delegate).decode(errors="replace"), status=int(p.status),
                                reason=ffi.string(p.reason).decode(errors="replace"),
                                delegate_runs=int(p.delegate_runs), cpu_runs=int(p.cpu_runs),
                                last_execute_status=int(p.last_execute_status)))
            return out

    def _desc(self, i: int, output: bool) -> TensorInfo:
        d = ffi.new(_t()["desc_p"])
        _check(self._lib.ep_session_io_desc(self._s, K.EP_IO_OUTPUT if output else K.EP_IO_INPUT, i, d), "describe")
        r = d.rank
        names = tuple(ffi.string(d.dim_names[k]).decode(errors="replace") if d.dim_names[k] != ffi.NULL else None
                      for k in range(r))
        return TensorInfo(ffi.string(d.name).decode(errors="replace"), EP_TO_NUMPY[d.dtype], tuple(d.dims[0:r]),
                          int(d.nbytes), tuple(d.min_dims[0:r]), tuple(d.max_dims[0:r]), names,
                          tuple(d.dim_steps[0:r]))

    def _view(self, i: int, output: bool) -> np.ndarray:
        """Input or output i in the arena, as a slice of the arena's numpy array: the view keeps the
        arena's memory alive after the session is gone."""
        t = self.outputs[i] if output else self.inputs[i]
        c = self._views.get((output, i))
        if c is not None and c[0] is t:
            return c[1]
        if t.nbytes == 0:
            return np.empty(t.shape, dtype=t.dtype)
        off = self._io_off[output, i]
        if not 0 <= off <= len(self._arena_raw) - t.nbytes:
            raise EdgeplanError(K.EP_ERR_INTERNAL, f"tensor {t.name!r} lies outside the arena")
        v = self._arena_raw[off:off + t.nbytes].view(t.dtype).reshape(t.shape)
        self._views[output, i] = (t, v)
        return v

    def _live(self) -> None:
        if self._s is None:
            raise EdgeplanError(K.EP_ERR_INVALID_ARG, "the session is closed")

    def set_input(self, name: str, value) -> None:
        with self._lock:
            self._live()
            self._set_input(name, value)

    def _set_input(self, name: str, value) -> None:
        i = self._in_index.get(name)
        if i is None:
            raise KeyError(f"no input named {name!r}; the plan's inputs are "
                           + ", ".join(f"{t.name!r} {t.dtype} {list(t.shape)}" for t in self.inputs))
        t = self.inputs[i]
        x = value if type(value) is np.ndarray else np.asarray(value)
        if x.dtype != t.dtype:
            raise TypeError(f"input {name!r} expects {t.dtype}, got {x.dtype} (convert with .astype(np.{t.dtype}))")
        if x.shape != t.shape:
            self._set_shape(i, x.shape)
            t = self.inputs[i]
        self._view(i, False)[...] = x
        self._fed.add(i)

    def _set_shape(self, i: int, shape) -> None:
        t = self.inputs[i]
        bad = len(shape) != len(t.shape) or any(
            (n is None and d != hi) or not lo <= d <= hi or d % st
            for d, n, lo, hi, st in zip(shape, t.dim_names, t.min_shape, t.max_shape, t.steps))
        if bad:
            raise ValueError(f"input {t.name!r} expects shape {t.shape_str()}, got {list(shape)}"
                             + ("" if t.is_variable else " (this input has no variable dims: compile the plan with --dim NAME=MIN..MAX, or dims= in Python)"))
        dims = ffi.new("int32_t[]", [int(d) for d in shape] or [0])
        _check(self._lib.ep_session_set_input_shape(self._s, i, dims, len(shape)), f"input {t.name!r} shape")
        self.inputs[i] = self._desc(i, False)

    def run(self, feeds: dict | None = None, *, copy: bool = True, **kw) -> dict:
        """Runs the plan. ``feeds`` maps input names to arrays (also as keywords). Inputs not given keep
        the values set before; an input never given is an error. Returns a dict of output name -> array
        (copies unless copy=False: then views of the arena, overwritten by the next run)."""
        if kw:
            feeds = dict(feeds or {}, **kw)
        with self._lock:
            if self._s is None:
                self._live()
            if feeds:
                for name, value in feeds.items():
                    self._set_input(name, value)
            return self._run(copy)

    def _run(self, copy: bool) -> dict:
        if len(self._fed) < len(self.inputs):
            missing = [t for i, t in enumerate(self.inputs) if i not in self._fed]
            raise ValueError("no value for input(s) " + ", ".join(f"{t.name!r} {t.dtype} {t.shape_str()}"
                                                                  for t in missing)
                             + (": a group member's inputs lie in the bytes the group shares, so give every "
                                "input to each run" if self._group is not None else
                                ": give them to run() or set_input() before the first run"))
        if self._group is not None:
            self._fed.clear()   # the next member's run overwrites them
        rc = self._ep_run(self._s)
        if rc != K.EP_OK:
            if self._variable_outputs:   # a failed run leaves variable outputs empty
                self.outputs = [self._desc(i, True) for i in range(len(self.outputs))]
            _check(rc, "run failed", ffi.string(self._last_error).decode(errors="replace"))
        if self._variable_outputs:
            self.outputs = [self._desc(i, True) for i in range(len(self.outputs))]
        if copy:
            return {t.name: self._view(i, True).copy() for i, t in enumerate(self.outputs)}
        return {t.name: self._view(i, True) for i, t in enumerate(self.outputs)}

    def swap(self, plan) -> None:
        """Replaces the plan between runs, without dropping a request (hot swap; docs/runtime.md).

        ``plan`` (a path, bytes or an ``edgeplan.Plan``) is opened first into its own arena, with this
        session's options, while other threads' runs go on; a plan that does not open raises here and this
        session keeps serving the old one. Then, under the session's lock (between two runs: a run in flight
        ends on the plan it started on), the new plan takes the old one's place and the old one is closed.
        The new plan's inputs and outputs may differ: ``inputs`` and ``outputs`` describe it from then on,
        and it starts with no input set and zeroed streaming state."""
        if self._group is not None:
            raise EdgeplanError(K.EP_ERR_INVALID_ARG, "a group member is not swapped alone: group the new plans "
                                                      "and open a new SessionGroup")
        new = Session(plan, **self._open_kw)
        with self._lock:
            self._live()
            mine, theirs = dict(self.__dict__), dict(new.__dict__)
            theirs["_lock"], mine["_lock"] = mine["_lock"], theirs["_lock"]
            theirs["swaps"] = mine["swaps"] + 1
            self.__dict__.clear()
            self.__dict__.update(theirs)
            new.__dict__.clear()
            new.__dict__.update(mine)
        new.close()   # the old plan: no run can reach it any more

    def reset(self) -> None:
        with self._lock:
            self._live()
            _check(self._lib.ep_reset(self._s), "reset")

    def profile(self) -> list:
        """Per-op counters since open or ``profile_reset()`` (zero unless opened with ``profile=True``):
        dicts of index, name, kind, calls, total_ns, last_start_ns, last_ns (CLOCK_MONOTONIC, comparable
        with ``time.monotonic_ns()`` on Linux), and flops and bytes from the compiler's cost model
        (plan META ``op_cost``; without it flops is 0 and bytes the runtime's operand bytes). In a plan
        with variable dims the cost model's figures (at the bound) are scaled to the current extents."""
        with self._lock:
            self._live()
            return self._profile()

    def _profile(self) -> list:
        lib = self._lib
        p = ffi.new(_t()["profile_p"])
        cost = self._op_cost()
        out = []
        for i in range(self.n_ops):
            _check(lib.ep_session_profile(self._s, i, p), "profile")
            flops, nbytes = cost[i] if cost and i < len(cost) else (int(p.flops), int(p.bytes))
            cb = self._const_bytes[i] if cost and self._variable else 0
            if cost and self._variable and nbytes > cb and int(p.bytes) < nbytes:
                # the cost model is the bound's: scale it to this run's extents by the activation bytes
                # (the runtime's operand bytes at the current shapes, weights left out; exact for ops
                # linear in their length)
                flops, nbytes = flops * (int(p.bytes) - cb) // (nbytes - cb), int(p.bytes)
            out.append(dict(index=i, name=ffi.string(p.name).decode(errors="replace"),
                            kind=ffi.string(p.kind).decode(), calls=int(p.calls), total_ns=int(p.total_ns),
                            last_start_ns=int(p.last_start_ns), last_ns=int(p.last_ns), flops=int(flops),
                            bytes=int(nbytes)))
        return out

    def profile_reset(self) -> None:
        with self._lock:
            self._live()
            _check(self._lib.ep_session_profile_reset(self._s), "profile reset")

    def _op_cost(self):
        if not hasattr(self, "_cost"):
            from .plan import read_plan
            try:
                plan = read_plan(bytes(self._plan_buf))
                cost = plan.get("meta", {}).get("op_cost")
                t = plan["tensors"]
                self._const_bytes = [sum(t[x]["nbytes"] for x in op["inputs"] if x < len(t)
                                         and t[x]["storage"] == "const") for op in plan["ops"]]
            except Exception:  # noqa: BLE001 - META is ancillary: a stripped or odd one means no cost
                cost = None
            ok = (isinstance(cost, list) and len(cost) == self.n_ops
                  and all(isinstance(c, list) and len(c) == 2 and all(type(v) is int and v >= 0 for v in c)
                          for c in cost))
            self._cost = cost if ok else None   # a malformed cost model is no cost model
        return self._cost

    def close(self) -> None:
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            if getattr(self, "_s", None) is not None:
                self._close_fn(self._s)
                self._s = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    def __repr__(self) -> str:
        ins = ", ".join(f"{t.name}:{t.dtype}{list(t.shape)}" for t in self.inputs)
        outs = ", ".join(f"{t.name}:{t.dtype}{list(t.shape)}" for t in self.outputs)
        return f"<edgeplan.Session inputs=[{ins}] outputs=[{outs}] arena={self.arena_bytes}>"


class SessionGroup:
    """The members of a shared-arena group (``edgeplan.plan_group``, ``edgeplan group``; docs/groups.md), open
    in one arena: ``sessions[i]`` (or ``group["name"]``) is an ``edgeplan.Session``.

    ``plans``: an ``edgeplan.group.Group``, a folder of member plans (``Group.save``: its ``*.eplan`` files in
    name order), or the member plans (paths, bytes or ``edgeplan.Plan``) in member order. The other arguments
    are ``Session``'s, for every member.

    The members run one at a time: they share one lock, so a run from another thread waits for the one in
    flight (a C caller that runs two members at once gets ``EP_ERR_GROUP_BUSY``). Each member keeps its
    streaming state across the others' runs; its inputs and outputs lie in the shared bytes, so every run
    takes all of its inputs, and ``run(copy=False)`` views last until the next member runs."""

    def __init__(self, plans, *, threads: int = 1, cpu_features_mask: int = 0, check_crc: bool = True,
                 profile: bool = False, seed: int = 0, public_key: bytes | None = None):
        names = None
        if hasattr(plans, "plans") and hasattr(plans, "names"):
            plans, names = plans.plans, plans.names
        elif isinstance(plans, (str, os.PathLike)):
            if not os.path.isdir(plans):
                raise ValueError(f"{plans}: not a folder; give the folder `edgeplan group -o` wrote, or the list "
                                 "of member plans")
            files = sorted(p for p in os.listdir(plans) if p.endswith(".eplan"))
            if not files:
                raise ValueError(f"{plans}: no .eplan files (write a group with `edgeplan group ... -o {plans}`)")
            plans = [os.path.join(plans, p) for p in files]
        plans = list(plans)
        if not plans:
            raise ValueError("a group needs at least one plan")
        self._lock = threading.RLock()
        self.sessions = []
        for p in plans:
            m = Session.__new__(Session)
            m._prepare(p, threads=threads, cpu_features_mask=cpu_features_mask, check_crc=check_crc,
                       profile=profile, seed=seed, delegates=(), public_key=public_key)
            self.sessions.append(m)
        lib = self.sessions[0]._lib
        info = ffi.new("ep_group_info *")
        rc = lib.ep_group_query(self.sessions[0]._plan_ptr, len(self.sessions[0]._plan_buf), info)
        _check(rc, "cannot open group", "plan 0 is not a group member: group the plans with `edgeplan group` "
                                        "or edgeplan.plan_group" if rc == K.EP_ERR_NOT_FOUND else "")
        self.arena_bytes = int(info.group_arena_bytes)
        raw, off = _aligned_empty(self.arena_bytes, K.EP_ARENA_ALIGN, zeroed=True)
        self._arena_raw = raw
        n = len(self.sessions)
        out = ffi.new("ep_session *[]", n)
        ptrs = ffi.new("const void *[]", [m._plan_ptr for m in self.sessions])
        lens = ffi.new("size_t[]", [len(m._plan_buf) for m in self.sessions])
        first = self.sessions[0]
        rc = lib.ep_group_open(out, ptrs, lens, n, ffi.from_buffer(raw) + off, self.arena_bytes, first._opts)
        _check(rc, "cannot open group", _errtext(first._err_buf))
        for i, m in enumerate(self.sessions):
            m._attach(out[i], raw)
            m._group = self
            m._lock = self._lock
            _check(lib.ep_group_query(m._plan_ptr, len(m._plan_buf), info), "group member")
            m.arena_bytes = self.arena_bytes - int(info.arena_offset)   # its reach in the group arena
        if names is None:
            names = [os.path.splitext(os.path.basename(p))[0] if isinstance(p, (str, os.PathLike)) else f"member{i}"
                     for i, p in enumerate(plans)]
        self.names = list(names)

    def __getitem__(self, key) -> Session:
        if isinstance(key, str):
            if key not in self.names:
                raise KeyError(f"no member {key!r}; the group has {', '.join(self.names)}")
            key = self.names.index(key)
        return self.sessions[key]

    def __len__(self) -> int:
        return len(self.sessions)

    def __iter__(self):
        return iter(self.sessions)

    def close(self) -> None:
        for m in self.sessions:
            m.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return f"<edgeplan.SessionGroup members=[{', '.join(self.names)}] arena={self.arena_bytes}>"
