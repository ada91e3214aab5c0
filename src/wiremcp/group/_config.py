"""The servers of a `ClientGroup`, read from the ``mcpServers`` JSON hosts use (docs/hosts.md).

Rules it keeps:

* the file is a JSON object whose servers sit under ``mcpServers`` (Claude
  Desktop, Claude Code, Cursor, Windsurf, ``wiremcp install mcp-json``) or
  ``servers`` (VS Code); every other key is ignored. A mapping already
  loaded may be given instead of a path, with or without that outer key;
* an entry with ``command`` (and optional ``args``, ``env``, ``cwd``) is a
  stdio server; one with ``url`` (or Windsurf's ``serverUrl``) and optional
  ``headers`` is Streamable HTTP, which falls back to HTTP+SSE on its own;
  ``"type": "sse"`` goes straight to the 2024-11-05 HTTP+SSE transport.
  ``type`` may also be ``stdio``, ``http`` or ``streamable-http``; it must
  agree with the entry's keys. ``"disabled": true`` (Cline, Windsurf) leaves
  the server out;
* ``${VAR}`` and ``${VAR:-default}`` in ``command``, ``args``, ``env``,
  ``cwd``, ``url`` and ``headers`` are replaced from the environment, as
  Claude Code reads ``.mcp.json`` (``expand_env=False`` keeps them as
  written); a variable that is not set and has no default is an error, never
  an empty string sent on as a credential;
* anything else wrong (not an object, a server name that is not a usable
  prefix, ``args`` that are not strings, neither ``command`` nor ``url``) is
  a `ConfigError` naming the server and the key. Nothing is silently
  dropped.

Server names become the prefix of their tools' names (``server__tool``),
so they must be 1 to 64 ASCII letters, digits, ``_``, ``-`` or ``.``
(server/tools.mdx, "Tool Names"), and must not contain the separator.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Mapping

__all__ = ["ServerConfig", "ConfigError", "load_config", "TransportKind"]

TransportKind = Literal["stdio", "http", "sse"]

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}\Z")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_TYPES: dict[str, TransportKind] = {"stdio": "stdio", "http": "http", "streamable-http": "http", "sse": "sse"}


class ConfigError(ValueError):
    """A server configuration that cannot be used; the message names the server and the key."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """One server of a group: how to reach it (``transport`` says which of the fields apply)."""

    name: str
    transport: TransportKind = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_name(self.name)
        if self.transport == "stdio":
            if not self.command:
                raise ConfigError(f"server {self.name!r}: a stdio server needs a 'command'")
        elif not self.url:
            raise ConfigError(f"server {self.name!r}: an {self.transport} server needs a 'url'")

    @classmethod
    def from_entry(cls, name: str, entry: Any, *, expand_env: bool = True) -> ServerConfig:
        """One entry of ``mcpServers`` (see the module docstring)."""
        where = f"server {name!r}"
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where}: the entry must be a JSON object, not {type(entry).__name__}")
        expand = _expander(where) if expand_env else (lambda key, value: value)
        kind_raw = entry.get("type")
        url = entry.get("url", entry.get("serverUrl"))
        command = entry.get("command")
        if kind_raw is not None and (type(kind_raw) is not str or kind_raw not in _TYPES):
            raise ConfigError(f"{where}: 'type' must be one of {', '.join(_TYPES)}, not {kind_raw!r}")
        if command is not None and url is not None:
            raise ConfigError(f"{where}: give either 'command' (stdio) or 'url' (HTTP), not both")
        kind: TransportKind = _TYPES[kind_raw] if kind_raw is not None else ("stdio" if url is None else "http")
        if kind == "stdio":
            if type(command) is not str or not command:
                raise ConfigError(f"{where}: 'command' must be a non-empty string")
            args = entry.get("args", [])
            if type(args) is not list or not all(type(a) is str for a in args):
                raise ConfigError(f"{where}: 'args' must be a list of strings")
            env = _strings(where, "env", entry.get("env"))
            cwd = entry.get("cwd")
            if cwd is not None and type(cwd) is not str:
                raise ConfigError(f"{where}: 'cwd' must be a string")
            return cls(
                name,
                "stdio",
                command=expand("command", command),
                args=tuple(expand("args", a) for a in args),
                env=None if env is None else {k: expand("env", v) for k, v in env.items()},
                cwd=None if cwd is None else expand("cwd", cwd),
            )
        if type(url) is not str or not url:
            raise ConfigError(f"{where}: 'url' must be a non-empty string")
        headers = _strings(where, "headers", entry.get("headers")) or {}
        return cls(name, kind, url=expand("url", url), headers={k: expand("headers", v) for k, v in headers.items()})


def check_name(name: Any, separator: str | None = None) -> None:
    if type(name) is not str or not _NAME.match(name):
        raise ConfigError(
            f"server name {name!r}: use 1 to 64 ASCII letters, digits, '_', '-' or '.' "
            "(it prefixes tool names, which allow no other characters; server/tools.mdx)"
        )
    if separator is not None and separator in name:
        raise ConfigError(f"server name {name!r} contains the separator {separator!r}: rename it, or choose another separator")


def load_config(source: str | os.PathLike[str] | Mapping[str, Any], *, expand_env: bool = True) -> dict[str, ServerConfig]:
    """The servers of a host configuration file (or of its already parsed JSON), by name, in file order."""
    if isinstance(source, Mapping):
        data: Any = source
        origin = "the configuration"
    else:
        origin = str(source)
        try:
            data = json.loads(Path(source).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{origin} is not JSON (comments are not allowed): {exc}") from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"{origin} must hold a JSON object")
    servers = data.get("mcpServers", data.get("servers"))
    if servers is None:
        if "mcpServers" in data or "servers" in data or not all(isinstance(v, Mapping) for v in data.values()):
            raise ConfigError(f"{origin} has no 'mcpServers' (or VS Code 'servers') object")
        servers = data  # the inner object itself
    if not isinstance(servers, Mapping):
        raise ConfigError(f"{origin}: 'mcpServers' must be a JSON object")
    out: dict[str, ServerConfig] = {}
    for name, entry in servers.items():
        if isinstance(entry, Mapping) and entry.get("disabled") is True:
            continue
        out[name] = ServerConfig.from_entry(name, entry, expand_env=expand_env)
    return out


def _strings(where: str, key: str, value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(type(k) is str and type(v) is str for k, v in value.items()):
        raise ConfigError(f"{where}: '{key}' must be an object of strings")
    return dict(value)


def _expander(where: str) -> Callable[[str, str], str]:
    def expand(key: str, value: str) -> str:
        def one(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            found = os.environ.get(name)
            if found is not None:
                return found
            if default is not None:
                return default
            raise ConfigError(f"{where}: '{key}' uses ${{{name}}}, which is not set (write ${{{name}:-default}} for a default)")

        return _VAR.sub(one, value)

    return expand
