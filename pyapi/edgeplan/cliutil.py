"""What the command-line tools share: one-line refusals, argparse value types, output paths checked
before the work and written atomically, .npy inputs, opening a plan, peak RSS. cli.py (edgeplan compile /
run / ...) and speech.py (edgeplan asr / tts) both use it; it imports neither."""
from __future__ import annotations

import argparse
import errno
import io
import math
import os
import resource
import sys
from pathlib import Path
from typing import NoReturn

import numpy as np


# ------------------------------------------------------------------------------------------ refusals
# Every refusal is one line on stderr, "edgeplan: <what failed>: <why>[; what to do]", and a non-zero
# exit (2 for a command line that cannot work, 1 for an input or output that fails); no traceback.

def die(msg: str, code: int = 1) -> NoReturn:
    """Prints ``edgeplan: msg`` on stderr and exits with ``code``."""
    print(f"edgeplan: {msg}", file=sys.stderr)
    raise SystemExit(code)


def os_reason(e: OSError) -> str:
    """The reason of an OSError without the errno and path decoration ("No such file or directory")."""
    return e.strerror or str(e)


def _int_at_least(lo: int):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"must be {lo} or more, got {v}")
        return v
    parse.__name__ = f"int >= {lo}"
    return parse


positive_int = _int_at_least(1)       # argparse types: a bad value is argparse's one-line error
nonnegative_int = _int_at_least(0)
MAX_RATE = 768000                     # Hz: the highest rate audio hardware records at; far past any model


def positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text}")
    return v


def sample_rate(text: str) -> int:
    v = positive_int(text)
    if v > MAX_RATE:
        raise argparse.ArgumentTypeError(f"{v} Hz is past {MAX_RATE} Hz")
    return v


# ------------------------------------------------------------------------------------------ files
def _same_file(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_writable(path, flag: str, keep=()) -> str:
    """Refuses an output path before any long work: empty, a directory (or a name ending in a
    separator), a missing parent or one that is not a directory, no permission, or one of ``keep`` (the
    command's own input files, which an output must not replace). Returns the path."""
    path = os.fspath(path)
    if not path:
        die(f"{flag} needs a file name", 2)
    for k in keep:
        if k is not None and _same_file(path, k):
            die(f"{flag} {path} is {os.fspath(k)}, an input of this command; give the output another name", 2)
    p = Path(path)
    if path.endswith(("/", os.sep)) or p.is_dir():
        die(f"cannot write {path}: {os.strerror(errno.EISDIR)}; give a file name in it")
    parent = p.parent
    if not parent.exists():
        die(f"cannot write {path}: {os.strerror(errno.ENOENT)} (directory {parent} does not exist)")
    if not parent.is_dir():
        die(f"cannot write {path}: {os.strerror(errno.ENOTDIR)} ({parent} is a file)")
    if not os.access(parent, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        die(f"cannot write {path}: {os.strerror(errno.EACCES)}")
    return path


def write_file(path, data: bytes) -> None:
    """Writes ``data`` at exactly ``path`` (plan.write_atomic: a new file in the same directory renamed
    over it, so an existing file is replaced by a complete result or left as it was, never truncated or
    half written). A failure exits with one line."""
    from edgeplan.plan import write_atomic
    try:
        write_atomic(path, data)
    except OSError as e:
        die(f"cannot write {os.fspath(path)}: {os_reason(e)}")


def npy_bytes(x: np.ndarray) -> bytes:
    f = io.BytesIO()
    np.save(f, np.asarray(x), allow_pickle=False)
    return f.getvalue()


NPY_MAGIC = b"\x93NUMPY"


def load_npy(path, flag: str = "--input") -> np.ndarray:
    """One numeric array from a .npy file (never unpickles); anything else exits with one line."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(NPY_MAGIC))
            if head != NPY_MAGIC:
                what = ("a .npz archive; save one array with np.save" if head[:4] == b"PK\x03\x04"
                        else "not a .npy file (save the array with np.save)")
                die(f"{flag} {path}: {what}")
            f.seek(0)
            return np.lib.format.read_array(f, allow_pickle=False)
    except OSError as e:
        die(f"cannot read {path}: {os_reason(e)}")
    except ValueError as e:      # object (pickled) arrays, a truncated file, a corrupt header
        die(f"cannot read {path} as a .npy array: {e}")


def open_session(path, **kw):
    """A Session on the plan at ``path``; an unreadable or invalid plan exits with one line."""
    from edgeplan import EdgeplanError, Session
    try:
        return Session(path, **kw)
    except OSError as e:
        die(f"cannot read {path}: {os_reason(e)}" if e.filename is not None or e.strerror else str(e))
    except (EdgeplanError, ValueError) as e:
        msg = str(e)
        die(msg if msg.startswith(f"{path}:") else f"{path}: {msg}")


def io_list(ts) -> str:
    return ", ".join(f"{t.name!r} {t.dtype} {t.shape_str()}" for t in ts)


def read_inputs(sess, items, feeds=None) -> dict:
    """--input [NAME=]FILE.npy items -> feeds, each checked against the plan's input (name, dtype,
    shape) as it is read, so an error names the file. FILE alone needs a plan with one input."""
    from edgeplan import EdgeplanError
    feeds = dict(feeds or {})
    names = [t.name for t in sess.inputs]
    for item in items or ():
        name, sep, path = item.partition("=")
        if sep and name not in names and Path(item).is_file():   # a file name that holds '='
            name, sep, path = "", "", item
        if not sep:
            if len(names) != 1:
                die(f"--input {item}: the plan has {len(names)} inputs ({io_list(sess.inputs)}); "
                    "use --input NAME=FILE.npy", 2)
            name, path = names[0], item
        elif name not in names:
            die(f"--input {item}: the plan has no input {name!r}; its inputs: {io_list(sess.inputs)}", 2)
        if not path:
            die(f"--input {item}: no file after '='", 2)
        x = load_npy(path)
        try:
            sess.set_input(name, x)
        except (EdgeplanError, TypeError, ValueError) as e:
            die(f"--input {path}: {e}")
        feeds[name] = x
    return feeds


def peak_rss_kib() -> int:
    """This process's peak resident set, in KiB."""
    # VmHWM is this process's own peak; ru_maxrss also carries a parent's peak across exec on Linux
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
