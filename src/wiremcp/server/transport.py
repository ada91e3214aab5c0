"""The server's transport contract: what a transport needs from the server, and all it may use.

For people writing transports (stdio, Streamable HTTP and the in-memory pair
are written against this and nothing else; tests/test_layers.py checks it).
A server author needs none of it: `wiremcp.server` is their API.

* `ServerConnection`: one connection's server side without I/O. Fed each
  message's bytes (`ServerConnection.receive`, the one entry point: the
  fused stage (a `FusedCall`) first, then the general decoder, once), or
  decoded messages (``request``, ``notification``, ``response``: a legacy
  HTTP session), it decides the `Era` of each request (`request_era`: a request whose
  ``_meta`` carries the protocol version (`carries_protocol_meta`) is
  modern and served statelessly; a request of a connection with a legacy
  session open, or ``initialize``, is served in the `LegacySession`), and
  either answers at once (a `Reply`) or hands back a running `Call`. It owns
  the legacy session (`ConnectionState`) and the server's requests to the
  peer. `receive` names its outcome: a `Reply`, a running `Call`, a `Held`
  request the transport admits and starts, a `Notified` notification, a
  stray response, None, or `DEFERRED` (stdio before the event loop).
* `Call`: one request in progress, with a `CallState` (running, replied,
  cancelled) and its notifications' way out (the transport supplies the
  `Write` function). It makes exactly one reply, or none once cancelled.
* `reply_ok`, `reply_failed`, `settle` (await an outcome and reply),
  `reply_cancelled`: the only place where a handler's outcome, exceptions
  included, becomes a reply: a `Reply`, ``(line, code)``, the encoded
  response and the JSON-RPC error code from which HTTP picks its status.
  `ServerBusy` (code `SERVER_BUSY`, HTTP 503) refuses work over a cap of
  the server, `CallerBusy` (code `CALLER_BUSY`, HTTP 429) work over the
  caller's share of one.
* `OutgoingRequests`: the server's requests to its peer (elicitation,
  sampling, roots in a legacy session) and their answers, on
  `wiremcp.jsonrpc.PendingRequests`; an error answer raises
  `wiremcp.server.ClientRequestFailed` in the handler that asked.
* `LegacySession` (2025-11-25 and earlier: ``initialize``, subscriptions up
  to `DEFAULT_MAX_SESSION_SUBSCRIPTIONS` of URIs up to
  `DEFAULT_MAX_SUBSCRIPTION_URI` bytes).
* Around serving: a transport enters ``async with server.lifespan`` before
  it takes requests; on shutdown it calls ``server.close_subscriptions()``,
  then ``drain(tasks, server.shutdown_grace)`` (default
  `DEFAULT_SHUTDOWN_GRACE`) on its requests in flight, then leaves the
  lifespan, which shuts the `Workers` (the threads that run synchronous
  handlers) down.
* Per request, an HTTP transport sets `current_headers` (read by
  ``ctx.headers``) and, when it verified an OAuth token, `current_auth`
  (read by ``ctx.auth`` and the ``scopes=`` checks), so that the server
  never imports the transport or `wiremcp.auth`. A transport off HTTP sets
  `current_peer` to a `Peer` once per connection: ``ctx.session_state``
  of a 2026-07-28 request without authorization is that connection's.

Each name loads its module on first use, as in `wiremcp.server`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._call import Call, CallState, PostedCall, Write
    from ._connection import (
        DEFERRED,
        ConnectionState,
        Era,
        Held,
        Notified,
        ServerConnection,
        carries_protocol_meta,
        request_era,
    )
    from ._fused_call import FusedCall
    from ._context import Peer, current_auth, current_headers, current_peer
    from ._legacy import DEFAULT_MAX_SESSION_SUBSCRIPTIONS, DEFAULT_MAX_SUBSCRIPTION_URI, LegacySession
    from ._lifespan import DEFAULT_SHUTDOWN_GRACE, drain
    from ._outgoing import OutgoingRequests
    from ._reply import (
        CALLER_BUSY,
        SERVER_BUSY,
        CallerBusy,
        Reply,
        ServerBusy,
        reply_cancelled,
        reply_failed,
        reply_ok,
        settle,
    )
    from ._workers import Workers
else:
    from ._lazy import lazy_names

    __getattr__, __dir__ = lazy_names(
        globals(),
        {
            **dict.fromkeys(("Call", "CallState", "PostedCall", "Write"), "_call"),
            **dict.fromkeys(
                (
                    "DEFERRED",
                    "ConnectionState",
                    "Era",
                    "Held",
                    "Notified",
                    "ServerConnection",
                    "carries_protocol_meta",
                    "request_era",
                ),
                "_connection",
            ),
            "FusedCall": "_fused_call",
            **dict.fromkeys(("current_auth", "current_headers", "current_peer", "Peer"), "_context"),
            **dict.fromkeys(("DEFAULT_MAX_SESSION_SUBSCRIPTIONS", "DEFAULT_MAX_SUBSCRIPTION_URI", "LegacySession"), "_legacy"),
            **dict.fromkeys(("DEFAULT_SHUTDOWN_GRACE", "drain"), "_lifespan"),
            "OutgoingRequests": "_outgoing",
            **dict.fromkeys(
                ("CALLER_BUSY", "SERVER_BUSY", "CallerBusy", "Reply", "ServerBusy", "reply_cancelled", "reply_failed", "reply_ok", "settle"),
                "_reply",
            ),
            "Workers": "_workers",
        },
    )

__all__ = [
    "ServerConnection",
    "ConnectionState",
    "Era",
    "request_era",
    "carries_protocol_meta",
    "Held",
    "Notified",
    "DEFERRED",
    "FusedCall",
    "Call",
    "CallState",
    "PostedCall",
    "Write",
    "Reply",
    "reply_ok",
    "reply_failed",
    "settle",
    "reply_cancelled",
    "ServerBusy",
    "SERVER_BUSY",
    "CallerBusy",
    "CALLER_BUSY",
    "OutgoingRequests",
    "LegacySession",
    "DEFAULT_MAX_SESSION_SUBSCRIPTIONS",
    "DEFAULT_MAX_SUBSCRIPTION_URI",
    "Workers",
    "drain",
    "DEFAULT_SHUTDOWN_GRACE",
    "current_headers",
    "current_auth",
    "current_peer",
    "Peer",
]
