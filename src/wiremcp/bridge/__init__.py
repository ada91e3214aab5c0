"""The proxy (``wiremcp.proxy``): any MCP server, of either era, served to clients of either era.

The package is ``wiremcp.bridge`` so that ``wiremcp.proxy`` stays the
function (a subpackage named ``proxy`` would replace it on import).

    server = wiremcp.proxy("https://mcp.example.com/mcp", auth=OAuthClient(...))
    wiremcp.run(server)                       # or: wiremcp proxy URL [--http]

`proxy(target)` returns a `wiremcp.Server` whose tools, resources, prompts
and completions are answered by the upstream server ``target`` (see
`wiremcp.server._forward` for the rules), through a `wiremcp.Client` the
proxy owns. It sits above both the server and the client layers (and uses
the client's transports), below the CLI.

Rules:

* ``target`` is a URL (``http://``, ``https://``: Streamable HTTP), a Python
  file (``server.py``: run as ``python -m wiremcp run server.py``), or a
  command line (``"npx -y some-server"``: started, spoken to on stdio). The
  upstream's era is found by the client (``era="auto"``), so a 2026-07-28-only
  server and a 2025-11-25-only one both work, and each downstream client
  is served in its own era by the `Server`;
* the upstream connection opens in the proxy server's lifespan (once per
  process, before the first request is read) and closes after the last reply;
* input the upstream needs is asked of the downstream client: a modern
  upstream's ``input_required`` rounds and a legacy upstream's elicitation,
  sampling and roots requests become real requests to a legacy client or
  ``input_required`` (the upstream call suspended, resumed on the retry) for a
  modern one. A legacy upstream's request goes to the downstream call that
  started the upstream call it belongs to: the call whose HTTP stream it came
  on, else the one call in flight. A request that names no call while
  several are in flight (stdio says nothing of it) is refused, the upstream
  getting an error: asking the wrong client would show it another client's
  question and hand its answer to that client;
* upstream list changes reach the downstream clients: a legacy upstream's
  ``notifications/*/list_changed`` and a modern upstream's
  ``subscriptions/listen`` events are published on the proxy server's bus,
  which serves both eras (``subscriptions/listen`` streams and legacy
  sessions' notifications);
* progress and log notifications of an upstream call go to the downstream
  request that asked; cancelling a downstream request cancels its upstream
  call;
* the proxy calls itself after its upstream: once connected, its
  ``serverInfo`` is the upstream's ``name`` and ``title`` with
  ``" (via wiremcp proxy)"`` added, and the upstream's ``version`` (a
  ``name=``/``version=`` given to `proxy` wins); before it connected, and for
  an upstream that sent none, it is ``wiremcp-proxy``;
* **credentials are never passed through** (security best practices,
  "Token Passthrough" and "Confused Deputy"): the downstream client's
  headers and token stay with the proxy; the proxy authenticates to the
  upstream as its own client, with ``auth`` (a ``wiremcp.auth.OAuthClient``)
  and ``headers`` it is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import shlex
import sys
from pathlib import Path
from typing import Any, AsyncIterator

from ..client import CallOptions, Client, RemoteError
from ..jsonrpc import JSONRPCError, Notification
from ..protocol import Era, methods
from ..server import Context, Server
from ..server.forward import Ask, reporting_context

__all__ = ["proxy", "ClientUpstream", "upstream_client"]

log = logging.getLogger("wiremcp.bridge")

_MRTR = frozenset({methods.TOOLS_CALL, methods.PROMPTS_GET, methods.RESOURCES_READ})
_INPUT_METHODS = {"elicitation": "elicitation/create", "sampling": "sampling/createMessage", "roots": "roots/list"}
#: The proxy's name before it connected (the first lines `wiremcp proxy` prints), or for an upstream without one.
PLACEHOLDER_NAME = "wiremcp-proxy"
#: What the proxy adds to its upstream's name and title.
VIA = " (via wiremcp proxy)"
_LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}

#: The downstream call an upstream call is made for (seen by the client's input callbacks in its task).
_current: contextvars.ContextVar[_Forwarding | None] = contextvars.ContextVar("wiremcp.bridge.call", default=None)


class _Forwarding:
    __slots__ = ("ctx", "ask")

    def __init__(self, ctx: Context, ask: Ask) -> None:
        self.ctx = ctx
        self.ask = ask

    def now(self) -> Context:
        """The downstream request to report to (a resumed call's retry; see `reporting_context`)."""
        return reporting_context(self.ask, self.ctx)


def upstream_client(
    target: str, *, auth: Any = None, headers: dict[str, str] | None = None, **options: Any
) -> Client:
    """A `Client` for ``target``: a URL, a Python file or a command line (see the module docs)."""
    if target.startswith(("http://", "https://")):
        return Client.http(target, headers=headers, auth=auth, **options)
    if auth is not None or headers:
        raise ValueError("auth and headers apply to an HTTP upstream (a URL), not to a local process")
    if target.endswith(".py") and Path(target).is_file():
        return Client.stdio(sys.executable, ["-m", "wiremcp", "run", target], **options)
    argv = shlex.split(target)
    if not argv:
        raise ValueError("the upstream target is empty: give a URL, a .py file or a command")
    return Client.stdio(argv[0], argv[1:], **options)


class ClientUpstream:
    """The `wiremcp.server.forward.Upstream` of a proxy: a `Client` to the upstream server."""

    def __init__(self, server: Server, client_factory: Any, *, name: str | None = None, version: str | None = None) -> None:
        self.server = server
        self._factory = client_factory
        #: The proxy's own name and version, when given; else the upstream's are taken (`_take_info`).
        self._name, self._version = name, version
        self.client: Client | None = None
        self._active: list[_Forwarding] = []
        self._listener: asyncio.Task[None] | None = None

    # -- wiremcp.server.forward.Upstream ---------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        """The upstream server's capabilities (``{}`` before the client connected)."""
        return self.client.server_capabilities if self.client is not None else {}

    async def request(self, method: str, params: dict[str, Any], ctx: Context, ask: Ask) -> dict[str, Any]:
        """Send ``method`` to the upstream server, passing its requests back through ``ask``; the result."""
        client = self.client
        if client is None:
            raise JSONRPCError("the proxy is not connected to its upstream server")
        forwarding = _Forwarding(ctx, ask)
        token = _current.set(forwarding)
        self._active.append(forwarding)
        params = dict(params)
        extra = params.pop("_meta", None)
        options = CallOptions(
            timeout=None,  # the downstream client decides how long to wait, and cancels
            on_progress=lambda progress, total, message: forwarding.now().report_progress(progress, total, message),
            on_log=lambda note: forwarding.now().log(note.get("level", "info"), note.get("data"), note.get("logger")),
            meta=extra,
        )
        try:
            if method in _MRTR:
                return await client.call(method, params, options)
            return await client.request(method, params, options)
        except RemoteError as exc:  # the upstream's error, as it sent it
            if exc.has_data:
                raise JSONRPCError(exc.message, exc.data, code=exc.code) from None
            raise JSONRPCError(exc.message, code=exc.code) from None
        finally:
            self._active.remove(forwarding)
            _current.reset(token)

    # -- the client's side -------------------------------------------------------

    def _answerer(self, kind: str) -> Any:
        method = _INPUT_METHODS[kind]

        async def answer(params: dict[str, Any]) -> Any:
            forwarding = _current.get() or self._only_call(method)
            forwarder = self.server.forwarder
            key = forwarder.key() if forwarder is not None else "proxy"
            answers = await forwarding.ask({key: {"method": method, "params": params}})
            return answers[key]

        return answer

    def _only_call(self, method: str) -> _Forwarding:
        """The call a request that names none is for: the one in flight, or refused (never a guess)."""
        if len(self._active) == 1:
            return self._active[0]
        if not self._active:
            raise JSONRPCError(f"the proxy has no client request in flight to ask for {method}")
        log.warning("refused the upstream's %s: %d calls in flight, and it names none", method, len(self._active))
        raise JSONRPCError(
            f"the proxy cannot tell which of its {len(self._active)} calls in flight this {method} is for "
            "(the request names none); refused rather than asked of another client"
        )

    def _notified(self, note: Notification) -> None:
        kind = _LIST_CHANGED.get(note.method)
        if kind is not None:
            self._changed(kind)
        elif note.method == "notifications/resources/updated":
            uri = (note.params or {}).get("uri")
            if type(uri) is str:
                self.server.notify_resource_updated(uri)

    def _changed(self, kind: str) -> None:
        if self.client is not None:
            self.client.invalidate()
        if kind == "tools":
            self.server.notify_tools_changed()
        elif kind == "prompts":
            self.server.notify_prompts_changed()
        else:
            self.server.notify_resources_changed()

    async def _listen(self, client: Client) -> None:
        """A modern upstream's list changes, for as long as the proxy runs."""
        caps = client.server_capabilities
        wanted = {name: type(caps.get(name)) is dict for name in ("tools", "prompts", "resources")}
        if not any(wanted.values()):
            return
        try:
            async with client.listen(
                tools=wanted["tools"], prompts=wanted["prompts"], resources_list=wanted["resources"]
            ) as sub:
                async for method, _ in sub:
                    kind = _LIST_CHANGED.get(method)
                    if kind is not None:
                        self._changed(kind)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the proxy goes on without change notifications
            log.warning("the upstream's subscriptions/listen ended: %s", exc)

    def _take_info(self, server: Server, upstream: dict[str, Any]) -> None:
        """Name the proxy after its upstream (``NAME (via wiremcp proxy)``, its version), unless told otherwise.

        Runs in the lifespan, before the first request is read: the ``serverInfo``
        dict every result shares is filled in place then, and never after.
        """
        info = server.server_info
        name, version, title = upstream.get("name"), upstream.get("version"), upstream.get("title")
        if self._name is None and type(name) is str and name:
            server.name = info["name"] = f"{name}{VIA}"
            if type(title) is str and title:
                info["title"] = f"{title}{VIA}"
        if self._version is None and type(version) is str and version:
            server.version = info["version"] = version

    @contextlib.asynccontextmanager
    async def connected(self, server: Server) -> AsyncIterator[Client]:
        """The proxy server's lifespan: connect upstream, follow its changes, close."""
        client: Client = self._factory(
            elicitation=self._answerer("elicitation"),
            sampling=self._answerer("sampling"),
            roots=self._answerer("roots"),
            on_notification=self._notified,
        )
        await client.connect()
        self.client = client
        self._take_info(server, client.server_info or {})
        if client.era is Era.MODERN:
            self._listener = asyncio.get_running_loop().create_task(self._listen(client))
        try:
            yield client
        finally:
            forwarder = server.forwarder
            if forwarder is not None:
                forwarder.close()
            if self._listener is not None:
                self._listener.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._listener
                self._listener = None
            self.client = None
            await client.aclose()


def proxy(
    target: str,
    *,
    auth: Any = None,
    headers: dict[str, str] | None = None,
    name: str | None = None,
    version: str | None = None,
    client_options: dict[str, Any] | None = None,
    **server_options: Any,
) -> Server:
    """A `Server` that serves the MCP server at ``target`` (see the module docs).

    ``auth`` (a ``wiremcp.auth.OAuthClient``) and ``headers`` are the proxy's
    own credentials for an HTTP upstream; the downstream clients' are never
    forwarded. ``name`` and ``version`` are the proxy's ``serverInfo``; by
    default the upstream's, once connected (``NAME (via wiremcp proxy)``).
    ``client_options`` go to the upstream `Client` (``timeout``,
    ``era``...), ``server_options`` to the `Server`.
    """
    if "lifespan" in server_options:
        raise TypeError("a proxy's lifespan is its upstream connection; wrap the returned server's instead")

    def factory(**callbacks: Any) -> Client:
        return upstream_client(target, auth=auth, headers=headers, **{**(client_options or {}), **callbacks})

    upstream: ClientUpstream | None = None

    def lifespan(server: Server) -> contextlib.AbstractAsyncContextManager[Any]:
        assert upstream is not None
        return upstream.connected(server)

    server = Server(name or PLACEHOLDER_NAME, version or "0.0.0", lifespan=lifespan, **server_options)
    upstream = ClientUpstream(server, factory, name=name, version=version)
    server.forward(upstream)
    return server
