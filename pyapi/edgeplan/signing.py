"""Signed plans (docs/signing.md): Ed25519 keys and signatures made with the `cryptography` package; the board
checks them in C (runtime_c/src/sign.c) when a session is opened with a public key.

    keygen("team")                      # writes team (the secret key, PEM, mode 0600) and team.pub (32 bytes)
    signed = sign_plan(plan_bytes, "team")
    Session(signed, public_key=Path("team.pub").read_bytes())

A plan is signed by a SIGNATURE section (plan_format.h ep_signature_rec): the key's id and an Ed25519 signature
of the whole file with the header's CRC field and the signature itself read as zeros. Signing an already signed
plan replaces its signature."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ._cdef import K, ffi
from .plan import PlanBytesError, plan_sections, with_section

SIG_REC = 80          # sizeof(ep_signature_rec)


class SigningError(ValueError):
    """A key or plan that cannot be used for signing, with what to do."""


def _crypto():
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError as e:   # pragma: no cover - a dependency of the package
        raise SigningError("signing needs the 'cryptography' package: pip install cryptography") from e
    return serialization, ed25519


def keygen(name) -> tuple[Path, Path]:
    """Writes a new Ed25519 key pair: NAME (the secret key, unencrypted PKCS#8 PEM, readable by its owner only)
    and NAME.pub (the raw 32-byte public key a board is given). Refuses to overwrite a secret key."""
    serialization, ed25519 = _crypto()
    secret, public = Path(name), Path(f"{name}.pub")
    if secret.exists():
        raise SigningError(f"{secret} exists: a secret key is never overwritten; remove it or choose another name")
    key = ed25519.Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    public.write_bytes(public_key_bytes(key))
    return secret, public


def public_key_bytes(key) -> bytes:
    serialization, _ = _crypto()
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def load_secret_key(path):
    """The secret key at path: a PKCS#8 PEM, as keygen writes it (raw 32 bytes would be indistinguishable from a
    public key, and are refused)."""
    serialization, ed25519 = _crypto()
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise SigningError(f"cannot read the secret key {path}: {e.strerror or e}") from None
    if len(data) == 32:
        raise SigningError(f"{path} holds 32 raw bytes: that is a public key (NAME.pub); sign with the secret key "
                           "NAME that `edgeplan keygen` wrote beside it")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as e:
        raise SigningError(f"{path} is not an Ed25519 secret key (the PEM file `edgeplan keygen` writes): "
                           f"{e}") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise SigningError(f"{path} holds a {type(key).__name__}, not an Ed25519 key: make one with `edgeplan "
                           "keygen`")
    return key


def load_public_key(path) -> bytes:
    """The raw 32-byte public key at path (NAME.pub from keygen)."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise SigningError(f"cannot read the public key {path}: {e.strerror or e}") from None
    if len(data) != 32:
        raise SigningError(f"{path} holds {len(data)} bytes: a public key is the 32 raw bytes `edgeplan keygen` "
                           "writes to NAME.pub")
    return data


def key_id(public: bytes) -> bytes:
    return hashlib.sha512(public).digest()[:8]


def _sections(b: bytes) -> tuple[int, list]:
    try:
        return plan_sections(b)
    except PlanBytesError as e:
        raise SigningError(str(e)) from None


def _with_signature_section(data: bytes) -> tuple[bytearray, int]:
    """The plan with a SIGNATURE section of one zeroed record (an existing one reused); its record's offset."""
    try:
        return with_section(data, K.EP_SECTION_SIGNATURE, SIG_REC)
    except PlanBytesError as e:
        raise SigningError(str(e)) from None


def sign_plan(plan, key) -> bytes:
    """The plan (bytes, a path or an edgeplan.Plan) signed with key (a secret key object, or its file)."""
    from .compiler.writer import crc32c
    if hasattr(plan, "to_bytes"):
        data = plan.to_bytes()
    elif isinstance(plan, (str, os.PathLike)):
        data = Path(plan).read_bytes()
    else:
        data = bytes(plan)
    _, ed25519 = _crypto()
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        key = load_secret_key(key)
    out, rec = _with_signature_section(data)
    pub = public_key_bytes(key)
    out[rec:rec + 16] = (K.EP_SIGNATURE_ED25519.to_bytes(4, "little") + bytes(4) + key_id(pub))
    out[12:16] = bytes(4)                      # the signed bytes read the CRC and the signature as zeros
    out[rec + 16:rec + 80] = key.sign(bytes(out))
    out[12:16] = crc32c(bytes(out[:12]) + b"\0\0\0\0" + bytes(out[16:])).to_bytes(4, "little")
    return bytes(out)


def signature_info(data: bytes) -> dict | None:
    """The plan's signature record (algorithm, key id) or None when unsigned."""
    try:
        _, secs = _sections(data)
    except SigningError:
        return None
    for kind, off in secs:
        if kind == K.EP_SECTION_SIGNATURE and off + SIG_REC <= len(data):
            return dict(algorithm=int.from_bytes(data[off:off + 4], "little"), key_id=data[off + 8:off + 16].hex())
    return None


def verify_plan(data: bytes, public: bytes) -> int:
    """The runtime's verdict (ep_plan_verify): EP_OK (0) or the status code."""
    import numpy as np

    from .runtime import load_library
    buf = np.frombuffer(bytes(data), dtype=np.uint8).copy()
    return int(load_library().ep_plan_verify(ffi.from_buffer(buf), len(buf), ffi.from_buffer(bytearray(public))))
