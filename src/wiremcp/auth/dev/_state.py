"""Where the local issuer keeps its key between runs: one file in a per-user directory.

Rules it keeps:

* the directory is ``$XDG_STATE_HOME/wiremcp/dev-issuer``
  (``~/.local/state/wiremcp/dev-issuer`` by default), created with mode 0700
  and set to 0700 again on every save; a directory another user owns is
  refused;
* the file (``issuer.json``: the issuer URL, the default resource, the token
  secret and the private key in PKCS#8 PEM) is written to a temporary file
  with mode 0600 and renamed over the old one, so a reader never sees half a
  file and no other user can read the key;
* the key is loaded only from a file readable by its owner alone (no group or
  other bits), else `load` refuses it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import orjson

from .._jose import load_private_key, private_key_pem
from .._storage import default_state_dir
from ._issuer import DevIssuer

__all__ = ["state_file", "save", "load"]


def state_file(directory: str | os.PathLike[str] | None = None) -> Path:
    """The file the issuer is kept in."""
    base = Path(directory) if directory is not None else default_state_dir().parent / "dev-issuer"
    return base / "issuer.json"


def save(issuer: DevIssuer, directory: str | os.PathLike[str] | None = None) -> Path:
    """Keep ``issuer`` (URL, default resource, secret, key); the file's path."""
    path = state_file(directory)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    _check_owner(path.parent)
    os.chmod(path.parent, 0o700)
    entry = {"issuer": issuer.issuer, "resource": issuer.resource, "secret": issuer.secret, "key": private_key_pem(issuer.key)}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, orjson.dumps(entry))
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return path


def load(directory: str | os.PathLike[str] | None = None, *, issuer: str | None = None) -> DevIssuer | None:
    """The kept issuer (under ``issuer``, a URL to use instead of the kept one), or None when nothing is kept."""
    path = state_file(directory)
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    _check_owner(path)
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise PermissionError(f"{path} is readable by others (mode {stat.S_IMODE(info.st_mode):o}); remove it and start again")
    entry = orjson.loads(path.read_bytes())
    return DevIssuer(
        issuer or entry["issuer"], key=load_private_key(entry["key"]), secret=entry["secret"], resource=entry.get("resource")
    )


def _check_owner(path: Path) -> None:
    if hasattr(os, "getuid") and path.stat().st_uid != os.getuid():
        raise PermissionError(f"{path} belongs to another user")
