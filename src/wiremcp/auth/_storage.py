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
  so a reader never sees half a file and no other user can read a token;
* `KeyringTokenStore` keeps each entry as one secret of the operating
  system's keyring through the optional ``keyring`` package (imported when
  the store is made, never before; macOS Keychain, Windows Credential
  Locker, the Secret Service), named by the same SHA-256, plus one index
  secret listing the keys; the keyring's calls block, so they run in a
  thread. A machine where ``keyring`` finds no usable backend (its
  ``fail`` keyring) is refused when the store is made, not at the first
  token.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import os
from pathlib import Path
from typing import Any, Protocol

import orjson

__all__ = ["TokenStore", "MemoryTokenStore", "FileTokenStore", "KeyringTokenStore", "default_state_dir"]


class TokenStore(Protocol):
    """Where the OAuth client keeps its tokens and registration, one entry per (issuer, resource)."""

    async def load(self, issuer: str, resource: str) -> dict[str, Any] | None:
        """The entry for (issuer, resource), or None."""

    async def save(self, issuer: str, resource: str, entry: dict[str, Any]) -> None:
        """Replace the entry for (issuer, resource)."""

    async def delete(self, issuer: str, resource: str) -> None:
        """Forget the entry for (issuer, resource); no error when there is none."""


class MemoryTokenStore:
    """Tokens kept in this process only, forgotten at exit."""
    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], dict[str, Any]] = {}

    async def load(self, issuer: str, resource: str) -> dict[str, Any] | None:
        """A copy of the entry for (``issuer``, ``resource``), or None."""
        entry = self._entries.get((issuer, resource))
        return dict(entry) if entry is not None else None

    async def save(self, issuer: str, resource: str, entry: dict[str, Any]) -> None:
        """Keep a copy of ``entry`` for (``issuer``, ``resource``), replacing any."""
        self._entries[(issuer, resource)] = dict(entry)

    async def delete(self, issuer: str, resource: str) -> None:
        """Forget the entry for (``issuer``, ``resource``), if any."""
        self._entries.pop((issuer, resource), None)

    async def keys(self) -> list[tuple[str, str]]:
        """Every (issuer, resource) with an entry."""
        return list(self._entries)


def _key_name(issuer: str, resource: str) -> str:
    return hashlib.sha256(orjson.dumps([issuer, resource])).hexdigest()


def default_state_dir() -> Path:
    """``$XDG_STATE_HOME/wiremcp/oauth``, or ``~/.local/state/wiremcp/oauth``."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "wiremcp" / "oauth"


class FileTokenStore:
    """Tokens kept as one JSON file per (issuer, resource), readable by the user only, in ``directory`` (default: ``$XDG_STATE_HOME/wiremcp/oauth``)."""
    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_state_dir()

    def path_for(self, issuer: str, resource: str) -> Path:
        """The file holding the entry for (``issuer``, ``resource``)."""
        return self.directory / f"{_key_name(issuer, resource)}.json"

    async def load(self, issuer: str, resource: str) -> dict[str, Any] | None:
        """The entry for (``issuer``, ``resource``) read from its file, or None."""
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
        """Write ``entry`` for (``issuer``, ``resource``) to its file (mode 0600, replaced atomically)."""
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
        """Remove the file of (``issuer``, ``resource``), if any."""
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


class KeyringTokenStore:
    """Entries in the OS keyring via the optional ``keyring`` package (see the module docs).

    ``backend``: a ``keyring`` backend object to use instead of ``keyring.get_keyring()``.
    """

    INDEX = "index"

    def __init__(self, service: str = "wiremcp-oauth", *, backend: Any = None) -> None:
        try:
            keyring = importlib.import_module("keyring")
        except ImportError:
            raise RuntimeError("KeyringTokenStore needs the keyring package: pip install keyring") from None
        chosen = backend if backend is not None else keyring.get_keyring()
        if type(chosen).__module__.startswith("keyring.backends.fail"):
            raise RuntimeError(
                "keyring found no usable backend on this machine (no Secret Service, Keychain or Credential "
                "Locker); use FileTokenStore instead"
            )
        self.service = service
        self.backend = chosen
        self._errors = importlib.import_module("keyring.errors")
        self._lock = asyncio.Lock()  # the index is read, changed and written back

    def _get(self, name: str) -> Any:
        text = self.backend.get_password(self.service, name)
        if not isinstance(text, str):
            return None
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return None

    def _index(self) -> list[list[str]]:
        obj = self._get(self.INDEX)
        if type(obj) is not list:
            return []
        return [k for k in obj if type(k) is list and len(k) == 2 and all(isinstance(x, str) for x in k)]

    async def load(self, issuer: str, resource: str) -> dict[str, Any] | None:
        """The entry for (``issuer``, ``resource``) from the keyring, or None."""
        obj = await asyncio.to_thread(self._get, _key_name(issuer, resource))
        if type(obj) is not dict or obj.get("issuer") != issuer or obj.get("resource") != resource:
            return None
        entry = obj.get("entry")
        return entry if type(entry) is dict else None

    async def save(self, issuer: str, resource: str, entry: dict[str, Any]) -> None:
        """Save ``entry`` for (``issuer``, ``resource``) in the keyring, replacing any."""
        value = orjson.dumps({"issuer": issuer, "resource": resource, "entry": entry}).decode()

        def write() -> None:
            self.backend.set_password(self.service, _key_name(issuer, resource), value)
            index = self._index()
            if [issuer, resource] not in index:
                self.backend.set_password(self.service, self.INDEX, orjson.dumps([*index, [issuer, resource]]).decode())

        async with self._lock:
            await asyncio.to_thread(write)

    async def delete(self, issuer: str, resource: str) -> None:
        """Remove the entry for (``issuer``, ``resource``) from the keyring, if any."""
        def remove() -> None:
            try:
                self.backend.delete_password(self.service, _key_name(issuer, resource))
            except self._errors.PasswordDeleteError:
                pass
            index = self._index()
            if [issuer, resource] in index:
                index.remove([issuer, resource])
                self.backend.set_password(self.service, self.INDEX, orjson.dumps(index).decode())

        async with self._lock:
            await asyncio.to_thread(remove)

    async def keys(self) -> list[tuple[str, str]]:
        """Every (issuer, resource) with an entry, from the index secret."""
        index = await asyncio.to_thread(self._index)
        return [(issuer, resource) for issuer, resource in index]
