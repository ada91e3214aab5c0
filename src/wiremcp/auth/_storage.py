"""Where tokens and client registrations are kept: the `TokenStore` protocol and two stores.

Rules it keeps:

* an entry is keyed by the authorization server's ``issuer`` and the
  ``resource`` (the MCP server's canonical URI): credentials from one
  authorization server are never offered to another (2026-07-28
  client-registration.mdx, "Authorization Server Binding");
* an entry is a JSON object: ``{"tokens": {...}, "client": {...}}``; a
  store keeps it as given and never logs it;
* `MemoryTokenStore` (the default) lives as long as the process;
* both stores also list their keys (``await store.keys()``, what
  ``wiremcp logout`` looks through); the protocol does not require it;
* `FileTokenStore` keeps one file per key, named by the SHA-256 of the key,
  in ``$XDG_STATE_HOME/wiremcp/oauth`` (``~/.local/state/wiremcp/oauth``
  by default); the directory is created with mode 0700 and each file is
  written to a temporary file with mode 0600 and renamed over the old one,
  so a reader never sees half a file and no other user can read a token.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Protocol

import orjson

__all__ = ["TokenStore", "MemoryTokenStore", "FileTokenStore", "default_state_dir"]


class TokenStore(Protocol):
    async def load(self, issuer: str, resource: str) -> dict[str, Any] | None:
        """The entry for (issuer, resource), or None."""

    async def save(self, issuer: str, resource: str, entry: dict[str, Any]) -> None:
        """Replace the entry for (issuer, resource)."""

    async def delete(self, issuer: str, resource: str) -> None:
        """Forget the entry for (issuer, resource); no error when there is none."""


class MemoryTokenStore:
    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], dict[str, Any]] = {}

    async def load(self, issuer: str, resource: str) -> dict[str, Any] | None:
        entry = self._entries.get((issuer, resource))
        return dict(entry) if entry is not None else None

    async def save(self, issuer: str, resource: str, entry: dict[str, Any]) -> None:
        self._entries[(issuer, resource)] = dict(entry)

    async def delete(self, issuer: str, resource: str) -> None:
        self._entries.pop((issuer, resource), None)

    async def keys(self) -> list[tuple[str, str]]:
        """Every (issuer, resource) with an entry."""
        return list(self._entries)


def default_state_dir() -> Path:
    """``$XDG_STATE_HOME/wiremcp/oauth``, or ``~/.local/state/wiremcp/oauth``."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "wiremcp" / "oauth"


class FileTokenStore:
    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_state_dir()

    def path_for(self, issuer: str, resource: str) -> Path:
        digest = hashlib.sha256(orjson.dumps([issuer, resource])).hexdigest()
        return self.directory / f"{digest}.json"

    async def load(self, issuer: str, resource: str) -> dict[str, Any] | None:
        try:
            data = self.path_for(issuer, resource).read_bytes()
        except FileNotFoundError:
            return None
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError:
            return None
        if type(obj) is not dict or obj.get("issuer") != issuer or obj.get("resource") != resource:
            return None
        entry = obj.get("entry")
        return entry if type(entry) is dict else None

    async def save(self, issuer: str, resource: str, entry: dict[str, Any]) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.directory, 0o700)
        path = self.path_for(issuer, resource)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, orjson.dumps({"issuer": issuer, "resource": resource, "entry": entry}))
        finally:
            os.close(fd)
        os.replace(tmp, path)

    async def delete(self, issuer: str, resource: str) -> None:
        try:
            self.path_for(issuer, resource).unlink()
        except FileNotFoundError:
            pass

    async def keys(self) -> list[tuple[str, str]]:
        """Every (issuer, resource) with an entry (files that are not entries of this store are passed over)."""
        out: list[tuple[str, str]] = []
        try:
            paths = sorted(self.directory.glob("*.json"))
        except OSError:
            return out
        for path in paths:
            try:
                obj = orjson.loads(path.read_bytes())
            except (OSError, orjson.JSONDecodeError):
                continue
            if type(obj) is not dict:
                continue
            issuer, resource = obj.get("issuer"), obj.get("resource")
            if isinstance(issuer, str) and isinstance(resource, str) and path == self.path_for(issuer, resource):
                out.append((issuer, resource))
        return out
