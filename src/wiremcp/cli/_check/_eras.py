"""Era probes of ``wiremcp check``: which eras the server speaks, how it negotiates, and a tour of its requests.

* `discover` sends ``server/discover`` (modern ``_meta``) as the first
  message of a fresh session, as a client of both eras does: a
  ``DiscoverResult`` means modern; any error or silence means legacy (the
  fallback MUST NOT hang on one error code); a *result* that is no
  ``DiscoverResult`` leaves a client unable to tell (``wire-discover``).
* `legacy` opens a session with ``initialize``: a version it speaks gets
  a version it knows back; an unknown version gets a version the server
  supports, not an error (``wire-version-negotiation``).
* `unsupported_version`: a modern request with a version nobody speaks gets
  ``-32022`` and the supported list (``wire-unsupported-version``).
* `tour`: each list request the server's capabilities offer, so the wire
  checker judges every result (``resultType``, caching hints, schemas);
  what it lists (tools, prompts, resources) is handed to the checks of
  `_tools` (`_extra`).
"""

from __future__ import annotations

from typing import Any

from ...protocol import LEGACY_VERSIONS
from ._context import LEGACY, MODERN, Era, initialize_params
from ._conn import HttpConn, Session
from ._findings import Finding, rule

__all__ = ["DISCOVER", "NEGOTIATION", "UNSUPPORTED", "TIMEOUT", "discover", "legacy", "unsupported_version", "tour"]

DISCOVER = rule(
    "wire-discover", "wire", "error", "server/discover gets a DiscoverResult (modern) or an error (legacy)",
    "Servers MUST implement server/discover. The server returns a DiscoverResult: the server is modern. The server returns any "
    "other error, or does not respond within a reasonable timeout: the server is legacy.",
    "basic/versioning.mdx; basic/transports/stdio.mdx (2026-07-28), Backward Compatibility",
)
NEGOTIATION = rule(
    "wire-version-negotiation", "wire", "error", "initialize answers with the version asked for, or another the server supports",
    "If the server supports the requested protocol version, it MUST respond with the same version. Otherwise, the server MUST "
    "respond with another protocol version it supports.", "basic/lifecycle.mdx (2025-11-25), Version Negotiation",
)
UNSUPPORTED = rule(
    "wire-unsupported-version", "wire", "error", "A modern request with an unknown version gets -32022 listing the versions supported",
    "If the server does not implement the requested version, it MUST respond with an UnsupportedProtocolVersionError listing "
    "the versions it does support. (On HTTP: 400 Bad Request.)", "basic/versioning.mdx (2026-07-28), Protocol Version Negotiation",
)
TIMEOUT = rule(
    "wire-answers-in-time", "wire", "error", "Each request is answered within --timeout, and the server does not exit",
    "Implementations SHOULD establish timeouts for all sent requests, to prevent hung connections and resource exhaustion.",
    "basic/patterns/cancellation.mdx (2026-07-28), Timeouts",
)


def _result(msg: Any) -> Any:
    return msg.get("result") if type(msg) is dict else None


async def discover(session: Session) -> tuple[bool, list[Finding]]:
    """Whether the server is modern (by its answer to ``server/discover``), and findings."""
    since = len(session.transcript)
    era = Era("modern")
    await era.begin(session)  # on HTTP: the MCP-Protocol-Version header
    try:
        reply = await era.request(session, "server/discover")
    except TimeoutError:
        return False, []  # silence: legacy, as a client falls back
    result = _result(reply)
    if result is None:
        return False, []
    versions = result.get("supportedVersions") if type(result) is dict else None
    if type(versions) is list and MODERN in versions:
        return True, []
    message = (
        f"server/discover got a result that is not a DiscoverResult naming {MODERN} (supportedVersions: {versions!r}); "
        "a client can tell neither era"
    )
    return False, [Finding(DISCOVER, message, "server/discover", session.envelopes(since))]


async def legacy(session: Session, seen: dict[str, Any] | None = None) -> tuple[bool, list[Finding]]:
    """Whether the server speaks the legacy era (``initialize``), and findings of its negotiation.

    ``seen``: where the ``initialize`` result is kept (under ``"initialize"``), for the host checks."""
    since = len(session.transcript)
    try:
        reply = await Era("legacy").begin(session)
    except TimeoutError:
        return False, []
    result = _result(reply)
    if type(result) is not dict:
        return False, []
    if seen is not None:
        seen["initialize"] = result
    version = result.get("protocolVersion")
    if version not in LEGACY_VERSIONS:
        message = f"initialize asked for {LEGACY}; the server answered {version!r}, not a legacy revision"
        return True, [Finding(NEGOTIATION, message, "initialize", session.envelopes(since))]
    return True, []


async def unknown_version(session: Session) -> list[Finding]:
    """``initialize`` with a version that does not exist: a version the server supports comes back."""
    since = len(session.transcript)
    reply = await session.request("initialize", initialize_params("1999-01-01"))
    result = _result(reply)
    version = result.get("protocolVersion") if type(result) is dict else None
    if version in LEGACY_VERSIONS:
        return []
    what = f"the version {version!r}" if result is not None else f"error {_code(reply)}"
    message = f"initialize asked for 1999-01-01 (a version no one speaks) and got {what}; the server must offer one it supports"
    return [Finding(NEGOTIATION, message, "initialize", session.envelopes(since))]


def _code(msg: Any) -> Any:
    error = msg.get("error") if type(msg) is dict else None
    return error.get("code") if type(error) is dict else None


async def unsupported_version(session: Session) -> list[Finding]:
    since = len(session.transcript)
    era = Era("modern")
    conn = session.conn
    if isinstance(conn, HttpConn):
        conn.protocol_version = "1900-01-01"
    reply = await session.request("server/discover", {"_meta": era.meta("1900-01-01")})
    found: list[Finding] = []
    error = reply.get("error") if type(reply) is dict else None
    data = error.get("data") if type(error) is dict else None
    if _code(reply) != -32022:
        found.append(Finding(UNSUPPORTED, f"a request for version 1900-01-01 got {_code(reply) or 'a result'}, expected error -32022", "server/discover", session.envelopes(since)))
    elif type(data) is not dict or type(data.get("supported")) is not list:
        found.append(Finding(UNSUPPORTED, "the -32022 error has no data.supported list", "server/discover", session.envelopes(since)))
    if isinstance(conn, HttpConn):
        await conn.settle()
        status = conn.statuses[-1][1] if conn.statuses else None
        if status != 400:
            found.append(Finding(UNSUPPORTED, f"over HTTP the status is {status}, expected 400", "HTTP status", session.envelopes(since)))
        conn.protocol_version = MODERN
    return found


#: capability, list method, the member of its result holding the items
_LISTS = (
    ("tools", "tools/list", "tools"), ("resources", "resources/list", "resources"),
    ("resources", "resources/templates/list", "resourceTemplates"), ("prompts", "prompts/list", "prompts"),
)


async def tour(session: Session, era: Era, opening: Any) -> dict[str, list[dict[str, Any]]]:
    """Each list request the server offers, one page each; what each listed (by its result's member)."""
    if era.name == "modern":
        opening = await era.request(session, "server/discover")
    else:
        await session.request("ping")
    result = _result(opening)
    capabilities = result.get("capabilities") if type(result) is dict else None
    listed: dict[str, list[dict[str, Any]]] = {}
    for capability, method, member in _LISTS:
        if type(capabilities) is not dict or capability not in capabilities:
            continue
        page = _result(await era.request(session, method))
        items = page.get(member) if type(page) is dict else None
        if type(items) is list:
            listed[member] = [item for item in items if type(item) is dict]
    return listed
