"""What every probe of ``wiremcp check`` is given: the target, the era, and sessions opened in it.

Rules:

* `Target` opens a fresh `Session` for each probe (`open`): a new server
  process on stdio, a new HTTP client (and MCP session) on a URL.
* In the *modern* era (2026-07-28) every request carries its ``_meta``
  (`Era.params`); on HTTP the ``MCP-Protocol-Version`` header says it too.
  In the *legacy* era a session begins with ``initialize`` (2025-11-25)
  and ``notifications/initialized`` (`Era.begin`).
* A synchronisation point (`Era.sync`) is a request every server of the era
  answers: ``server/discover`` (modern; ``ping`` is gone from 2026-07-28),
  ``ping`` (legacy). A probe that checks that *nothing* came back for a
  message sends one after it: the only reply before the sync's answer
  must be what the probe expects (no fixed sleeps).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ...protocol import meta as meta_keys
from ._conn import HttpConn, Session, StdioConn

__all__ = ["MODERN", "LEGACY", "Era", "Target", "EraName"]

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
EraName = Literal["modern", "legacy"]


@dataclass
class Target:
    """A stdio command line or a URL; ``timeout``: seconds per probe's wait."""

    argv: list[str] = field(default_factory=list)
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 10.0
    startup: float = 30.0  # how long a server may take to start: measured by the first session (`_runner`)
    label: str = ""  # the target as the user gave it (a report names it so)

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "http" if self.url else "stdio"

    def __str__(self) -> str:
        return self.label or self.url or " ".join(self.argv)

    async def open(self) -> Session:
        if self.url:
            return Session(await HttpConn(self.url, dict(self.headers), self.timeout).start(), self.timeout, self.startup)
        return Session(await StdioConn(self.argv).start(), self.timeout, self.startup)


class Era:
    """How to speak one era: the ``_meta`` of its requests, how a session begins, its synchronisation point."""

    def __init__(self, name: EraName) -> None:
        self.name = name

    def meta(self, version: str = MODERN) -> dict[str, Any]:
        return {
            meta_keys.PROTOCOL_VERSION: version,
            meta_keys.CLIENT_CAPABILITIES: {},
            meta_keys.CLIENT_INFO: {"name": "wiremcp-check", "version": "1"},
        }

    def params(self, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """``params`` for a request of this era (modern: with its ``_meta``)."""
        out = dict(params or {})
        if self.name == "modern":
            out["_meta"] = {**self.meta(), **out.get("_meta", {})}
        return out

    async def begin(self, session: Session) -> Any:
        """Open the session (legacy: the handshake); the ``initialize`` response, or None (modern)."""
        conn = session.conn
        if self.name == "modern":
            if isinstance(conn, HttpConn):
                conn.protocol_version = MODERN
            return None
        response = await session.request("initialize", initialize_params(LEGACY))
        result = response.get("result") if type(response) is dict else None
        version = result.get("protocolVersion") if type(result) is dict else None
        if isinstance(conn, HttpConn) and type(version) is str:
            conn.protocol_version = version
        await session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    def sync_message(self, session: Session) -> dict[str, Any]:
        if self.name == "modern":
            return {"jsonrpc": "2.0", "id": session.next_id("sync"), "method": "server/discover", "params": self.params()}
        return {"jsonrpc": "2.0", "id": session.next_id("sync"), "method": "ping"}

    async def sync(self, session: Session) -> tuple[Any, list[Any]]:
        """Send a synchronisation request; its answer and every message received before it."""
        msg = self.sync_message(session)
        await session.send(msg)
        return await session.wait_for(msg["id"])

    async def request(self, session: Session, method: str, params: dict[str, Any] | None = None) -> Any:
        return await session.request(method, self.params(params))


def initialize_params(version: str) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "wiremcp-check", "version": "1"}}
