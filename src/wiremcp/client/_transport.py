"""The contract between the `Client` and a transport: small on purpose.

A transport moves encoded messages; it knows nothing of MCP. The client
hands it each outgoing message already encoded (one JSON text, no newline)
together with what an HTTP transport needs to build headers; the transport
reports what arrives through the `Receiver` the client gave to `open` (a
private object of the client's, not the `Client` itself):

* ``receiver.message(data, origin, status=None)``: one incoming JSON text.
  ``origin`` is the id of the request whose response stream carried it
  (HTTP), or ``None`` when the channel is shared (stdio, memory):
  notifications on a shared channel are correlated by their content, not by
  where they came from. ``status`` is the HTTP status of a non-2xx reply,
  kept on the `RemoteError`;
* ``receiver.request_failed(id, exc)``: the request with this id cannot be
  answered by the server any more (an HTTP error without a JSON-RPC body, a
  dropped connection); ``exc`` is the `ClientError` to raise to the caller;
* ``receiver.closed(exc)``: the channel is gone for good.

``cancel_by_notification`` says how a request is cancelled (cancellation.mdx,
"Transport-Specific Cancellation"): ``True`` for a shared stream, where the
client sends ``notifications/cancelled``; ``False`` for HTTP, where the
transport closes the request's response stream in `abandon`.

``cache_key`` names the server for the client's `EraCache` (versioning.mdx:
the era is cached per server process or per HTTP origin).

Optional members, looked up with ``getattr`` (a transport without them is
complete):

* ``mirrors_headers`` (default ``False``): when ``True`` the client computes
  the HTTP metadata headers (``MCP-Protocol-Version``, ``Mcp-Method``,
  ``Mcp-Name``, ``Mcp-Param-*``; `wiremcp.client._headers`) and passes them
  as ``send(..., headers=)``, and drops tools whose ``x-mcp-header``
  annotations are invalid;
* ``legacy_session_started(version)``: called once after a 2025-11-25
  ``initialize`` handshake (HTTP opens its GET stream for server requests);
  it may return an awaitable, which the client awaits before it sends
  anything else (HTTP: until the GET stream is open, refused, or its
  connect timeout has passed).
* ``silence_means_legacy`` (default: ``cancel_by_notification``): whether
  an era probe that gets no reply in time means a legacy server. stdio.mdx
  says so for stdio; streamable-http.mdx falls back only on a 4xx, so over
  HTTP a silent probe is a `RequestTimeout`.

Writing bytes that are not a message the client built (a demo's malformed
line) is not part of the contract: a transport may offer it as its own
method (`StdioTransport.write_line`).
"""

from __future__ import annotations

from typing import Any, Hashable, Protocol

__all__ = ["ClientTransport", "Receiver"]


class Receiver(Protocol):
    """What a transport calls back: each message received, a request that failed to go out, and the end of the connection."""
    def message(self, data: bytes, origin: Any, status: int | None = None) -> None: ...

    def request_failed(self, id: Any, exc: BaseException) -> None: ...

    def closed(self, exc: BaseException | None) -> None: ...


class ClientTransport(Protocol):
    """What `Client` needs of a transport: open with a `Receiver`, send envelopes, abandon a request, close."""

    cache_key: Hashable
    cancel_by_notification: bool

    async def open(self, receiver: Receiver) -> None:
        """Connect (start the process, ...); incoming messages go to ``receiver``."""

    def send(
        self, data: bytes, *, id: Any = None, method: str | None = None, params: Any = None, headers: Any = None
    ) -> None:
        """Send one encoded message. ``id`` is set for requests, ``None`` for notifications and replies."""

    def abandon(self, id: Any) -> None:
        """Stop receiving for the request ``id`` (HTTP: close its stream). No-op on shared streams."""

    async def aclose(self) -> None:
        """Close the channel and release everything (stop the process, ...)."""
