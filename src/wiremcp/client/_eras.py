"""Which era a server speaks: the probe, the fallback, and what is remembered.

Rules it keeps (basic/versioning.mdx, "Backward Compatibility"; stdio.mdx and
streamable-http.mdx, "Backward Compatibility"):

* ``era="auto"`` probes with ``server/discover`` at the preferred modern
  version. A `DiscoverResult` means modern, at the newest version both sides
  list; a recognised modern error code (-32020, -32021) means modern too;
* -32022 (UnsupportedProtocolVersion) whose ``data.supported`` names a
  modern version this client speaks retries the probe once with it, even the
  one just sent (the server may have refused the request, not the version);
  when it names only legacy versions, the client falls back; when it names
  nothing this client speaks, the server is incompatible;
* any other JSON-RPC error or an HTTP 4xx without a modern error body means
  legacy: the 2025-11-25 ``initialize`` follows (lifecycle.mdx), whose
  ``protocolVersion`` must be a legacy version this client knows, or
  2024-11-05 (`ANSWERABLE_VERSIONS`: servers on the HTTP+SSE transport); an HTTP
  5xx or a dropped connection is not an answer and is raised, never taken
  as "legacy";
* no reply within the probe timeout is read per transport binding: on
  stdio it means legacy (stdio.mdx: "does not respond within a reasonable
  timeout: the server is legacy"; the I/O, `_negotiate`, starts that clock at
  the server's first output and still takes a late answer); over Streamable HTTP it is not an answer
  (streamable-http.mdx falls back only on a 4xx without a recognized modern
  error body; every HTTP request gets a status), so a slow server is
  reported as a timeout, never switched to the legacy era
  (``silence_means_legacy=False``);
* a -32022 in reply to the fallback ``initialize`` means modern, not a
  failure (versioning.mdx: "a recognized modern JSON-RPC error (such as
  UnsupportedProtocolVersionError) identifies a modern server: the client
  retries with a supported version rather than falling back"): a modern
  server that answered the probe too late serves the modern era on that
  connection and refuses ``initialize`` (`initialize_refused`);
* what was decided is kept in an `EraCache` under the transport's key
  (versioning.mdx: "for the lifetime of the server process (stdio) or
  origin (HTTP)"). A cache belongs to whoever passes it: by default each
  `Client` has its own; pass one `EraCache` to several clients to share
  what they learn. Nothing here is process-global.

`Negotiation` is the decision alone: it is fed outcomes and answers with the
next `Probe`, `Initialize` or `Ready` step; it sends nothing and reads no
clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, Iterator, Literal

from ..protocol import LEGACY_VERSIONS, MODERN_VERSIONS, Era
from ..protocol.errors import MODERN_ERROR_CODES, UNSUPPORTED_PROTOCOL_VERSION
from ._errors import IncompatibleServer

__all__ = ["EraCache", "EraChoice", "Negotiation", "Probe", "Initialize", "Ready", "LEGACY_VERSION", "pick_version"]

EraChoice = Literal["auto", "modern", "legacy"]

#: The legacy revision offered in ``initialize`` (2025-11-25 lifecycle.mdx).
LEGACY_VERSION = LEGACY_VERSIONS[0]
#: Versions a server may answer ``initialize`` with: the legacy ones, 2024-11-05 among them, the
#: revision of the HTTP+SSE transport that servers reached through it may still speak (the client
#: uses no feature of a later revision that such a server must have: it calls only what the
#: server's capabilities declare).
ANSWERABLE_VERSIONS: tuple[str, ...] = LEGACY_VERSIONS
_ALL = ", ".join(MODERN_VERSIONS + LEGACY_VERSIONS)


class EraCache:
    """Era decisions by server key: ``(era, protocol version)``. Share one between clients to share them."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[Hashable, tuple[Era, str]] = {}

    def get(self, key: Hashable) -> tuple[Era, str] | None:
        return self._known.get(key)

    def remember(self, key: Hashable, era: Era, version: str) -> None:
        self._known[key] = (era, version)

    def forget(self, key: Hashable | None = None) -> None:
        """Forget one server (the next client to it probes again), or every server when ``key`` is ``None``."""
        if key is None:
            self._known.clear()
        else:
            self._known.pop(key, None)

    def __len__(self) -> int:
        return len(self._known)

    def __iter__(self) -> Iterator[Hashable]:
        return iter(list(self._known))

    def __repr__(self) -> str:
        return f"EraCache({self._known!r})"


@dataclass(frozen=True, slots=True)
class Probe:
    """Send ``server/discover`` with this modern version in ``_meta``."""

    version: str


@dataclass(frozen=True, slots=True)
class Initialize:
    """Run the 2025-11-25 handshake: ``initialize`` offering this version."""

    version: str = LEGACY_VERSION


@dataclass(frozen=True, slots=True)
class Ready:
    """Settled: the era, the version, and what the server said about itself (``None`` when it was not asked)."""

    era: Era
    version: str
    server: dict[str, Any] | None = None


Step = Probe | Initialize | Ready


def pick_version(data: Any) -> str | None:
    """The newest modern version this client speaks among a -32022 error's ``data.supported``."""
    supported = data.get("supported") if type(data) is dict else None
    if type(supported) is not list:
        return None
    return next((v for v in MODERN_VERSIONS if v in supported), None)


def _names_legacy(data: Any) -> bool:
    supported = data.get("supported") if type(data) is dict else None
    return type(supported) is list and any(v in LEGACY_VERSIONS for v in supported)


class Negotiation:
    """One era decision, fed outcomes one by one. Start with `first`."""

    __slots__ = ("preferred", "choice", "cached", "version", "silence_means_legacy", "_retried")

    def __init__(
        self,
        choice: EraChoice,
        preferred: str = MODERN_VERSIONS[0],
        cached: tuple[Era, str] | None = None,
        *,
        silence_means_legacy: bool = True,
    ) -> None:
        """``silence_means_legacy``: ``True`` for stdio's binding, ``False`` for Streamable HTTP's."""
        if choice not in ("auto", "modern", "legacy"):
            raise ValueError("era must be 'auto', 'modern' or 'legacy'")
        if preferred not in MODERN_VERSIONS:
            raise ValueError(f"protocol_version must be one of {', '.join(MODERN_VERSIONS)}")
        self.choice = choice
        self.preferred = preferred
        self.cached = cached
        self.version = preferred
        self.silence_means_legacy = silence_means_legacy
        self._retried = False

    def first(self) -> Step:
        if self.choice == "legacy":
            return Initialize()
        if self.choice == "modern":
            return Ready(Era.MODERN, self.preferred)
        if self.cached is not None:
            era, version = self.cached
            return Initialize() if era is Era.LEGACY else Ready(Era.MODERN, version)
        return Probe(self.preferred)

    # -- outcomes of the probe ------------------------------------------------

    def discovered(self, result: dict[str, Any]) -> Step:
        """The probe got a complete DiscoverResult."""
        raw = result.get("supportedVersions")
        versions = raw if type(raw) is list else []
        if self.version in versions:
            return Ready(Era.MODERN, self.version, result)
        version = next((v for v in MODERN_VERSIONS if v in versions), None)
        if version is not None:
            return Ready(Era.MODERN, version, result)
        if any(v in LEGACY_VERSIONS for v in versions):
            return Initialize()
        raise IncompatibleServer(
            f"the server supports {', '.join(map(str, versions)) or 'no versions'}; this client speaks {_ALL}"
        )

    def refused(self, code: int, message: str, data: Any) -> Step:
        """The probe got a JSON-RPC error (on HTTP, perhaps in the body of a 4xx).

        2026-07-28 streamable-http.mdx, "Backward Compatibility": "If the body
        contains a recognized modern JSON-RPC error, the server speaks a modern
        version of MCP — retry using the advertised `supported` versions or
        correct the request, rather than falling back. If the body is empty or
        is not a recognized modern JSON-RPC error, fall back to `initialize`
        and continue with the legacy version for subsequent requests." (An
        official mcp 1.x server answers the probe with 400 and -32600 "Bad
        Request: Missing session ID": not a modern error, so legacy.)
        """
        if code == UNSUPPORTED_PROTOCOL_VERSION:
            version = pick_version(data)
            if version is not None and not self._retried:
                self._retried = True
                self.version = version
                return Probe(version)
            if _names_legacy(data):
                return Initialize()
            raise IncompatibleServer(f"the server supports none of this client's protocol versions ({_ALL}): {message}")
        if code in MODERN_ERROR_CODES:
            return Ready(Era.MODERN, self.version)
        return Initialize()

    def silent(self) -> Step | None:
        """No reply to the probe within its timeout: legacy on stdio; ``None`` (no answer, raise) over HTTP."""
        return Initialize() if self.silence_means_legacy else None

    def http_refused(self, status: int) -> Step | None:
        """The probe got an HTTP error with no JSON-RPC body: a 4xx means legacy.

        ``None`` for any other status: that is no answer about the era, and
        the caller raises the error it got.
        """
        return Initialize() if 400 <= status < 500 else None

    # -- the legacy handshake -------------------------------------------------

    def initialize_refused(self, code: int, data: Any) -> Ready | None:
        """The fallback ``initialize`` got an error: -32022 means modern; ``None``: no answer about the era, raise it.

        The version is the newest modern one ``data.supported`` names that this
        client speaks, else the one the probe offered (a modern server refusing
        ``initialize`` served that one on this connection).
        """
        if code != UNSUPPORTED_PROTOCOL_VERSION or self.choice != "auto":
            return None
        supported = data.get("supported") if type(data) is dict else None
        if type(supported) is list and not any(v in MODERN_VERSIONS for v in supported):
            return None
        return Ready(Era.MODERN, pick_version(data) or self.version)

    def initialized(self, result: dict[str, Any]) -> Ready:
        """The ``initialize`` result: its version must be a legacy one this client knows."""
        version = result.get("protocolVersion")
        if type(version) is not str or version not in ANSWERABLE_VERSIONS:
            raise IncompatibleServer(
                f"the server answered initialize with protocol version {version!r}; "
                f"this client accepts {', '.join(ANSWERABLE_VERSIONS)}"
            )
        return Ready(Era.LEGACY, version, result)
