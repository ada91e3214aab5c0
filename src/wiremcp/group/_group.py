"""`ClientGroup`: one client over many MCP servers, their tools, resources and prompts merged.

Rules it keeps:

* **One `Client` per server**, of whatever transport and era (stdio,
  Streamable HTTP with its HTTP+SSE fallback, HTTP+SSE; modern or legacy:
  each client finds its server's era). Each connection, reconnections
  included, probes afresh: a restarted server may be another version, and
  the probe's answer carries the capabilities the group reads (which lists
  exist, which change). A server that said nothing about its capabilities
  (``era="modern"`` forced) is asked for every list. ``auth={"name": hook}`` gives an HTTP
  server its authorization hook (an `OAuthClient`); a bearer token written
  in the entry's ``headers`` works as the host's would.
* **Names are collision-free.** ``names="prefixed"`` (the default) shows
  every tool and prompt as ``server__name`` (``separator`` is ``__``), so a
  name never changes when another server comes or goes; ``"collisions"``
  prefixes only the names more than one ready server offers, and any name
  containing the separator. Server names may not contain the separator, so
  a prefixed name splits back into one (server, name) pair: `route`.
  Resource URIs are never rewritten (a URI names the resource itself):
  ``read_resource`` goes to the server that listed the URI, or whose
  template matches it; a URI two servers claim needs ``server=``. Each
  resource's ``name`` is prefixed like a tool's.
* **Calls are routed, never retried behind the caller's back**, exactly as
  one `Client` would (only what was never sent is sent again).
* **List changes are followed.** A legacy server's
  ``notifications/*/list_changed`` and a modern server's
  ``subscriptions/listen`` events mark that server's list stale; the next
  ``list_*`` reads it again, and ``on_change(server, what)`` is called
  (``what``: ``"tools"``, ``"resources"``, ``"prompts"``, ``"ready"`` or
  ``"failed"``).
* **One server failing leaves the others working.** A server whose
  connection ends (its process exits, its SSE or listen stream breaks, a
  call fails with `ConnectionClosed`) or that cannot be reached is
  ``failed``: its entries leave every list at once, calls routed to it raise
  `ServerUnavailable` with the reason, and it is reconnected after
  ``reconnect_delay`` seconds, doubling up to ``max_reconnect_delay``
  (reset once it is ready again). `status` shows each server's state,
  error and attempts. A legacy HTTP server that dies is noticed by the
  next call to it (it keeps no stream this client must hold).
* Starting waits for every server to be ready or failed once (bounded by
  ``connect_timeout`` each); a group with failed members still starts.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Hashable, Iterable, Literal, Mapping, TypeVar

from ..client import (
    CallToolResult,
    Client,
    ClientError,
    ClientTransport,
    ConnectionClosed,
    GetPromptResult,
    ReadResourceResult,
    Receiver,
    RemoteError,
)
from ..transports.http.client import HTTPAuth, HTTPTransport
from ..transports.sse.client import SSETransport
from ..transports.stdio.client import StdioTransport
from ._config import ConfigError, ServerConfig, check_name, load_config

__all__ = ["ClientGroup", "ServerStatus", "ServerUnavailable", "State"]

log = logging.getLogger("wiremcp.group")

_T = TypeVar("_T")
State = Literal["connecting", "ready", "failed", "closed"]
_KINDS = ("tools", "resources", "prompts")
_LISTS = ("tools", "resources", "templates", "prompts")
_LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/resources/list_changed": "resources",
    "notifications/prompts/list_changed": "prompts",
}


class ServerUnavailable(ClientError):
    """The server a call was routed to is not connected (failed, or still connecting); the reason is in the message."""


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """One server's state: ``error`` says why it failed; ``attempts`` counts connections tried."""

    name: str
    state: State
    error: str | None
    attempts: int
    era: str | None
    protocol_version: str | None
    retry_in: float | None  # seconds until the next attempt, when failed


class _Watched:
    """A transport whose end is reported to the group (the `Client` sees the transport unchanged)."""

    def __init__(self, inner: Any, on_closed: Callable[[BaseException | None], None]) -> None:
        self._inner = inner
        self._on_closed = on_closed
        self.cache_key: Hashable = inner.cache_key
        self.cancel_by_notification: bool = inner.cancel_by_notification

    def __getattr__(self, name: str) -> Any:  # the optional members: mirrors_headers, legacy_session_started, ...
        return getattr(self._inner, name)

    async def open(self, receiver: Receiver) -> None:
        await self._inner.open(_WatchedReceiver(receiver, self._on_closed))

    def send(self, data: bytes, **keywords: Any) -> None:
        self._inner.send(data, **keywords)

    def abandon(self, id: Any) -> None:
        self._inner.abandon(id)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _WatchedReceiver:
    __slots__ = ("_receiver", "_on_closed")

    def __init__(self, receiver: Receiver, on_closed: Callable[[BaseException | None], None]) -> None:
        self._receiver = receiver
        self._on_closed = on_closed

    def message(self, data: bytes, origin: Any, status: int | None = None) -> None:
        self._receiver.message(data, origin, status)

    def request_failed(self, id: Any, exc: BaseException) -> None:
        self._receiver.request_failed(id, exc)

    def closed(self, exc: BaseException | None) -> None:
        self._receiver.closed(exc)
        self._on_closed(exc)


class _Member:
    """One server of the group: its client, what it listed, and the task that keeps it connected."""

    def __init__(self, group: ClientGroup, config: ServerConfig) -> None:
        self.group = group
        self.config = config
        self.name = config.name
        self.client: Client | None = None
        self.state: State = "connecting"
        self.error: str | None = None
        self.attempts = 0
        self.retry_at: float | None = None
        #: What the server listed, by kind; the kinds in `stale` are read again before the next listing.
        self.lists: dict[str, list[dict[str, Any]]] = {kind: [] for kind in _LISTS}
        self.stale: set[str] = set(_LISTS)
        self.tried = asyncio.Event()  # set once it is ready or has failed: the first try is over
        self.lost = asyncio.Event()
        self.lost_reason: str | None = None
        self.task: asyncio.Task[None] | None = None

    # -- the connection ---------------------------------------------------------------

    def _transport(self, lost: asyncio.Event) -> ClientTransport:
        """A fresh transport; its end sets ``lost`` (this attempt's, so a late report from an old one is ignored)."""
        c = self.config
        auth: HTTPAuth | None = self.group.auth.get(self.name)
        inner: Any
        if c.transport == "stdio":
            assert c.command is not None
            inner = StdioTransport(c.command, list(c.args), env=dict(c.env) if c.env is not None else None, cwd=c.cwd)
        elif c.transport == "http":
            assert c.url is not None
            inner = HTTPTransport(c.url, headers=dict(c.headers), auth=auth)
        else:
            assert c.url is not None
            inner = SSETransport(c.url, headers=dict(c.headers), auth=auth)

        def closed(exc: BaseException | None) -> None:
            self._fail(lost, exc if exc is not None else ConnectionClosed("the connection ended"))

        watched: ClientTransport = _Watched(inner, closed)
        return watched

    def fail(self, client: Client, exc: BaseException) -> None:
        """``client``'s connection is gone (a call or a stream noticed): reconnect, if it is still the current one."""
        if client is self.client:
            self._fail(self.lost, exc)

    def _fail(self, lost: asyncio.Event, exc: BaseException) -> None:
        if lost is self.lost and not lost.is_set():
            self.lost_reason = str(exc) or type(exc).__name__
            lost.set()

    async def run(self) -> None:
        group = self.group
        delay = group.reconnect_delay
        while True:
            self.state = "connecting"
            self.attempts += 1
            self.retry_at = None
            self.lost = asyncio.Event()
            self.lost_reason = None
            options = dict(group.client_options)
            if self.config.transport == "sse":
                options.setdefault("era", "legacy")  # the HTTP+SSE transport carries the initialize era
            if self.config.transport != "stdio" and self.name in group.auth:
                options.setdefault("probe_timeout", options.get("timeout", 60.0))  # a login may run inside the probe
            client = Client(self._transport(self.lost), on_notification=self._notified, **options)
            listener: asyncio.Task[None] | None = None
            try:
                async with asyncio.timeout(group.connect_timeout):
                    await client.connect()
                    self.client = client
                    self._forget()
                    await self.refresh()
                self.state, self.error = "ready", None
                delay = group.reconnect_delay
                self.tried.set()
                group._changed(self.name, "ready")
                if client.era is not None and client.era.value == "modern":
                    listener = asyncio.ensure_future(self._listen(client))
                await self.lost.wait()
                reason = self.lost_reason or "the connection ended"
            except asyncio.CancelledError:
                self.client = None
                if listener is not None:
                    listener.cancel()
                await client.aclose()
                raise
            except TimeoutError:
                reason = f"not ready within connect_timeout ({group.connect_timeout:g} s)"
            except Exception as exc:  # noqa: BLE001 - any failure to connect: report it and retry
                reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            if listener is not None:
                listener.cancel()
            self.client = None
            self._forget()
            self.state, self.error = "failed", reason
            self.retry_at = time.monotonic() + delay
            log.warning("server %r failed (%s); reconnecting in %.1f s", self.name, reason, delay)
            try:
                await client.aclose()
            except Exception:  # noqa: BLE001 - closing a broken connection is best effort
                pass
            self.tried.set()
            group._changed(self.name, "failed")
            await asyncio.sleep(delay)
            delay = min(delay * 2, group.max_reconnect_delay)

    # -- lists ---------------------------------------------------------------------

    async def refresh(self) -> None:
        """Read every stale list the server's capabilities declare."""
        client = self.client
        if client is None:
            return
        caps = client.server_capabilities if client.server is not None else {kind: {} for kind in _KINDS}
        readers = {
            "tools": ("tools", client.list_tools),
            "resources": ("resources", client.list_resources),
            "templates": ("resources", client.list_resource_templates),
            "prompts": ("prompts", client.list_prompts),
        }
        for kind in [k for k in _LISTS if k in self.stale]:
            self.stale.discard(kind)  # a change announced while reading marks it stale again
            capability, read = readers[kind]
            if capability not in caps:
                self.lists[kind] = []
                continue
            try:
                self.lists[kind] = [dict(entry) for entry in await read(refresh=True)]
            except RemoteError as exc:  # the server declared it and then refused: nothing to list
                log.warning("server %r refused %s listing: %s", self.name, kind, exc)
                self.lists[kind] = []
            except BaseException as exc:  # not read: read it next time
                self.stale.add(kind)
                if isinstance(exc, ConnectionClosed):
                    self.fail(client, exc)
                raise

    def _stale(self, what: str) -> None:
        self.stale.update(("resources", "templates") if what == "resources" else (what,))
        self.group._changed(self.name, what)

    def _forget(self) -> None:
        for kind in _LISTS:
            self.lists[kind] = []
        self.stale = set(_LISTS)

    def _notified(self, notification: Any) -> None:
        what = _LIST_CHANGED.get(getattr(notification, "method", ""))
        if what is not None:
            self._stale(what)
        if self.group.on_notification is not None:
            self.group.on_notification(self.name, notification)

    async def _listen(self, client: Client) -> None:
        """Modern servers: subscriptions/listen for list changes; its stream breaking means the server is gone."""
        if client.server is None:  # nothing said about capabilities: ask for every change
            wanted = dict.fromkeys(_KINDS, True)
        else:
            caps = client.server_capabilities
            wanted = {kind: bool((caps.get(kind) or {}).get("listChanged")) for kind in _KINDS}
        if not any(wanted.values()):
            return
        try:
            async with client.listen(tools=wanted["tools"], prompts=wanted["prompts"], resources_list=wanted["resources"]) as sub:
                async for method, _params in sub:
                    what = _LIST_CHANGED.get(method)
                    if what is not None:
                        self._stale(what)
        except asyncio.CancelledError:
            raise
        except ConnectionClosed as exc:
            self.fail(client, exc)
        except ClientError as exc:  # subscriptions refused: changes are not followed for this server
            log.warning("server %r: cannot follow list changes (%s)", self.name, exc)

    def status(self) -> ServerStatus:
        client = self.client
        retry_in = None if self.retry_at is None else max(0.0, self.retry_at - time.monotonic())
        return ServerStatus(
            self.name,
            self.state,
            self.error,
            self.attempts,
            client.era.value if client is not None and client.era is not None else None,
            client.protocol_version if client is not None else None,
            retry_in if self.state == "failed" else None,
        )


class ClientGroup:
    """Many MCP servers behind one client-like object (see the module docstring).

        async with ClientGroup.from_config("~/.cursor/mcp.json") as group:
            tools = await group.list_tools()          # "server__tool" names
            result = await group.call_tool("github__search", {"q": "mcp"})
    """

    def __init__(
        self,
        servers: Mapping[str, ServerConfig | Mapping[str, Any]] | Iterable[ServerConfig],
        *,
        names: Literal["prefixed", "collisions"] = "prefixed",
        separator: str = "__",
        auth: Mapping[str, HTTPAuth] | None = None,
        connect_timeout: float = 30.0,
        reconnect_delay: float = 0.5,
        max_reconnect_delay: float = 30.0,
        on_change: Callable[[str, str], Any] | None = None,
        on_notification: Callable[[str, Any], Any] | None = None,
        **client_options: Any,
    ) -> None:
        """``client_options`` go to every `Client` (``timeout``, ``name``, ``elicitation`` ...);
        ``on_notification(server, notification)`` sees every server's notifications."""
        if names not in ("prefixed", "collisions"):
            raise ValueError("names must be 'prefixed' or 'collisions'")
        if not separator or not re.fullmatch(r"[A-Za-z0-9_.-]+", separator):
            raise ValueError("the separator must be made of characters tool names allow: letters, digits, '_', '-', '.'")
        configs: list[ServerConfig] = []
        if isinstance(servers, Mapping):
            for name, entry in servers.items():
                configs.append(entry if isinstance(entry, ServerConfig) else ServerConfig.from_entry(name, entry))
        else:
            configs = list(servers)
        seen: set[str] = set()
        for config in configs:
            check_name(config.name, separator)
            if config.name in seen:
                raise ConfigError(f"server name {config.name!r} is given twice")
            seen.add(config.name)
        for name in auth or {}:
            if name not in seen:
                raise ConfigError(f"auth is given for {name!r}, which is not a server of this group")
        self.configs = configs
        self.names = names
        self.separator = separator
        self.auth: dict[str, HTTPAuth] = dict(auth or {})
        self.connect_timeout = connect_timeout
        self.reconnect_delay = reconnect_delay
        self.max_reconnect_delay = max_reconnect_delay
        self.on_change = on_change
        self.on_notification = on_notification
        self.client_options = client_options
        self._members: dict[str, _Member] = {}
        self._started = False

    @classmethod
    def from_config(
        cls, source: str | os.PathLike[str] | Mapping[str, Any], *, expand_env: bool = True, **options: Any
    ) -> ClientGroup:
        """A group of the servers in a host's ``mcpServers`` file (a path or the parsed JSON; see `load_config`)."""
        if isinstance(source, (str, os.PathLike)):
            source = os.path.expanduser(source)
        return cls(load_config(source, expand_env=expand_env).values(), **options)

    # -- lifecycle ---------------------------------------------------------------------

    async def __aenter__(self) -> ClientGroup:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Connect every server; returns once each is ready or has failed once (failed ones keep retrying)."""
        if self._started:
            return
        self._started = True
        for config in self.configs:
            member = _Member(self, config)
            self._members[config.name] = member
            member.task = asyncio.ensure_future(member.run())
        await asyncio.gather(*(m.tried.wait() for m in self._members.values()))

    async def aclose(self) -> None:
        """Close every connection (stdio servers are stopped)."""
        tasks = [m.task for m in self._members.values() if m.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for member in self._members.values():
            member.state = "closed"

    async def wait_ready(self, *servers: str, timeout: float | None = None) -> None:
        """Wait until the named servers (all, by default) are ready."""
        names = servers or tuple(self._members)

        async def ready() -> None:
            while not all(self._member(n).state == "ready" for n in names):
                await asyncio.sleep(0.05)

        await asyncio.wait_for(ready(), timeout)

    # -- state -------------------------------------------------------------------------

    @property
    def status(self) -> dict[str, ServerStatus]:
        """Each server's `ServerStatus`, in configuration order."""
        return {name: m.status() for name, m in self._members.items()}

    def client(self, server: str) -> Client:
        """The connected `Client` of one server; `ServerUnavailable` when it is not ready."""
        member = self._member(server)
        if member.client is None or member.state != "ready":
            raise ServerUnavailable(self._unavailable(member))
        return member.client

    def _member(self, server: str) -> _Member:
        member = self._members.get(server)
        if member is None:
            raise ClientError(f"no server named {server!r} in this group ({', '.join(self._members) or 'none'})")
        return member

    def _unavailable(self, member: _Member) -> str:
        if member.state == "failed":
            retry = member.status().retry_in
            return f"server {member.name!r} is unavailable: {member.error}" + (
                f" (reconnecting in {retry:.1f} s)" if retry is not None else ""
            )
        return f"server {member.name!r} is {member.state}"

    def _changed(self, server: str, what: str) -> None:
        if self.on_change is not None:
            try:
                self.on_change(server, what)
            except Exception:  # noqa: BLE001 - a broken callback must not stop the group
                log.exception("on_change(%r, %r) failed", server, what)

    # -- names ---------------------------------------------------------------------------

    async def _lists(self, kind: str) -> list[tuple[_Member, dict[str, Any]]]:
        ready = [m for m in self._members.values() if m.state == "ready"]
        results = await asyncio.gather(*(m.refresh() for m in ready), return_exceptions=True)
        out: list[tuple[_Member, dict[str, Any]]] = []
        for member, result in zip(ready, results):
            if isinstance(result, BaseException):
                if not isinstance(result, ClientError):
                    raise result
                log.warning("server %r could not be listed: %s", member.name, result)
                continue
            for entry in member.lists[kind]:
                if type(entry.get("name")) is not str:
                    log.warning("server %r listed an entry without a name, left out: %r", member.name, entry)
                    continue
                out.append((member, entry))
        return out

    def _exposed(self, pairs: list[tuple[_Member, dict[str, Any]]]) -> list[dict[str, Any]]:
        counts: dict[str, int] = {}
        for _member, entry in pairs:
            counts[entry["name"]] = counts.get(entry["name"], 0) + 1
        out: list[dict[str, Any]] = []
        for member, entry in pairs:
            name = entry["name"]
            unprefixed = self.names == "collisions" and counts[name] == 1 and self.separator not in name
            out.append({**entry, "name": name if unprefixed else f"{member.name}{self.separator}{name}"})
        return out

    def route(self, name: str) -> tuple[str, str]:
        """The (server, name) a group tool or prompt name stands for (a ready server's, or by its prefix)."""
        server, sep, rest = name.partition(self.separator)
        if sep and server in self._members:
            return server, rest
        if self.names == "collisions":
            owners = [
                m.name
                for m in self._members.values()
                if m.state == "ready"
                and any(e.get("name") == name for kind in ("tools", "prompts") for e in m.lists[kind])
            ]
            if len(owners) == 1:
                return owners[0], name
        raise ClientError(f"{name!r} names no server's entry (expected SERVER{self.separator}NAME; servers: {', '.join(self._members)})")

    # -- lists ---------------------------------------------------------------------------

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every ready server's tools, under their group names."""
        return self._exposed(await self._lists("tools"))

    async def list_prompts(self) -> list[dict[str, Any]]:
        """Every ready server's prompts, under their group names."""
        return self._exposed(await self._lists("prompts"))

    async def list_resources(self) -> list[dict[str, Any]]:
        """Every ready server's resources: URIs as the server gave them, names prefixed."""
        return self._exposed(await self._lists("resources"))

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        """Every ready server's resource templates: URI templates as the server gave them, names prefixed."""
        return self._exposed(await self._lists("templates"))

    # -- calls ---------------------------------------------------------------------------

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **keywords: Any) -> CallToolResult:
        """tools/call on the server the group name routes to (keywords as `Client.call_tool`'s)."""
        server, tool = self.route(name)
        return await self._on(server, lambda c: c.call_tool(tool, arguments, **keywords))

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None, **keywords: Any) -> GetPromptResult:
        """prompts/get on the server the group name routes to (keywords as `Client.get_prompt`'s)."""
        server, prompt = self.route(name)
        return await self._on(server, lambda c: c.get_prompt(prompt, arguments, **keywords))

    async def read_resource(self, uri: str, *, server: str | None = None, **keywords: Any) -> ReadResourceResult:
        """resources/read on the server that listed ``uri`` (or whose template matches it), or on ``server``."""
        if server is None:
            pairs = await self._lists("resources")
            owners = sorted({m.name for m, entry in pairs if entry.get("uri") == uri})
            if not owners:
                templates = await self._lists("templates")
                owners = sorted({m.name for m, entry in templates if _template_matches(entry.get("uriTemplate"), uri)})
            if len(owners) != 1:
                raise ClientError(
                    f"{uri!r} is listed by {', '.join(owners)}: say which with server=" if owners
                    else f"no ready server lists {uri!r} or a template matching it; say which with server="
                )
            server = owners[0]
        return await self._on(server, lambda c: c.read_resource(uri, **keywords))

    async def _on(self, server: str, call: Callable[[Client], Awaitable[_T]]) -> _T:
        member = self._member(server)
        client = self.client(server)
        try:
            return await call(client)
        except ConnectionClosed as exc:
            member.fail(client, exc)
            raise


def _template_matches(template: Any, uri: str) -> bool:
    """Whether ``uri`` fits an RFC 6570 template, reading each ``{...}`` expression as "one or more characters"."""
    if type(template) is not str:
        return False
    pattern = "".join(".+?" if part.startswith("{") else re.escape(part) for part in re.split(r"(\{[^}]*\})", template))
    return re.fullmatch(pattern, uri) is not None
