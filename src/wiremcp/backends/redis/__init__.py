"""`RedisBackend`: the shared state of a deployment in one Redis server (``pip install 'wiremcp[redis]'``).

redis-py's asyncio client is imported only here, and only when a
`RedisBackend` is built (``Server(backend=RedisBackend(url))`` or
``WIREMCP_REDIS_URL``).

The change bus (`RedisBus`) rules:

* a change (a list change, a resource update) published on any worker goes
  to one Redis pub/sub channel, ``{prefix}:changes``, and every worker
  delivers what arrives on it to its own listeners; the subscription filters
  are applied where the listener is (`wiremcp.server._subscriptions.listen`),
  so Redis carries each change once, whatever the number of listeners;
* a worker's own changes come back to it through Redis like the others':
  each change reaches each listener once, never twice. Changes arrive in
  the order Redis received them: one worker's in the order it made them,
  two workers' in either order (publishing is not awaited by the code that
  announces a change);
* each change carries its publisher (a random id of the worker's bus) and
  its number among that publisher's changes, so that every worker sees the
  same name for the same change: while a change is handed to the listeners,
  `RedisBus.change` is that name (a legacy session kept by several workers
  writes each of its notifications once: transports/http/_shared_sessions.py, its Redis side in `wiremcp.backends.redis.sessions`);
  a change delivered in this process only has none;
* ``None`` (``server.close_subscriptions()``) stays in this process;
* a change published before the backend is started (tools registered at
  import time, which every worker does for itself) is delivered in this
  process only;
* Redis lost while serving: the reader reconnects by itself with
  exponential back-off (`MIN_BACKOFF` doubling up to `MAX_BACKOFF`) and logs
  the loss and the recovery once each; until it is back, a change is
  delivered to this worker's listeners only (logged), and changes made on
  other workers meanwhile are missed (pub/sub keeps no history). Modern
  stateless requests never touch Redis, so they keep working;
* a message on the channel that is not a change this module wrote is logged
  and skipped, never delivered; a JSON object is a message of the
  deployment's own (`RedisBus.send`, e.g. a legacy session's new
  subscriptions), handed to `RedisBus.on_message` in the order it was
  published among the changes.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import urllib.parse
from typing import TYPE_CHECKING, Any, Callable

import orjson

from .. import BackendUnavailable, ChangeBus, Event, LocalBus

if TYPE_CHECKING:
    import redis.asyncio

__all__ = ["RedisBackend", "RedisBus", "DEFAULT_PREFIX", "CONNECT_TIMEOUT", "MIN_BACKOFF", "MAX_BACKOFF"]

log = logging.getLogger("wiremcp.backends")

#: Prefix of every key and channel this backend uses: several deployments can share one Redis.
DEFAULT_PREFIX = "wiremcp"
#: Seconds to reach Redis (connect, first PING) before start-up fails.
CONNECT_TIMEOUT = 5.0
#: Seconds of the first reconnection delay after Redis is lost, and of the longest.
MIN_BACKOFF = 0.05
MAX_BACKOFF = 5.0
_KINDS = frozenset({"tools", "prompts", "resources", "updated"})


def redacted(url: str) -> str:
    """``url`` without its password (in the userinfo or a ``password=`` query parameter, which
    redis-py reads too), for messages and logs."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is not None:
        host = parts.hostname or ""
        netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
        parts = parts._replace(netloc=netloc)
    if parts.query:
        query = "&".join(
            f"{name}=***" if urllib.parse.unquote_plus(name).lower() == "password" else f"{name}{sep}{value}"
            for name, sep, value in (field.partition("=") for field in parts.query.split("&"))
        )
        parts = parts._replace(query=query)
    out = urllib.parse.urlunsplit(parts)
    if not parts.netloc and url.startswith(f"{parts.scheme}://"):  # unix:///path keeps its three slashes
        out = f"{parts.scheme}://{out[len(parts.scheme) + 1:]}"
    return out


class RedisBus:
    """A `ChangeBus` over Redis pub/sub (see the module docs)."""

    def __init__(self, channel: str) -> None:
        self.channel = channel
        self._local = LocalBus()
        self._client: redis.asyncio.Redis | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._outbox: asyncio.Queue[bytes] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        #: True while the reader holds a live subscription to the channel.
        self.connected = False
        self._subscribed: asyncio.Event | None = None
        self._side: list[Callable[[dict[str, Any]], None]] = []
        self._publisher = secrets.token_hex(8)
        self._numbers = itertools.count(1)
        #: While a change is handed to the listeners: ``(publisher, number)``, the same on every
        #: worker; None outside a delivery, and for a change delivered in this process only.
        self.change: tuple[str, int] | None = None

    # -- ChangeBus --------------------------------------------------------------

    def subscribe(self, deliver: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``deliver`` with each event, published here or by another worker; returns the unsubscriber."""
        return self._local.subscribe(deliver)

    def publish(self, event: Event) -> None:
        """Publish ``event`` on the Redis channel (every worker delivers it), or locally before `start`."""
        loop, outbox = self._loop, self._outbox
        if event is None or loop is None or outbox is None:
            self._local.publish(event)
            return
        data = orjson.dumps([*event, self._publisher, next(self._numbers)])
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            outbox.put_nowait(data)
        else:  # a plain `def` tool in a worker thread
            loop.call_soon_threadsafe(outbox.put_nowait, data)

    def __len__(self) -> int:
        return len(self._local)

    # -- messages of the deployment's own, in order with the changes ---------------------------

    def on_message(self, receive: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """Call ``receive`` with each object `send` published (on any worker); returns the unsubscriber."""
        self._side.append(receive)
        return lambda: self._side.remove(receive) if receive in self._side else None

    async def send(self, message: dict[str, Any]) -> None:
        """Publish ``message`` (a JSON object) to every worker's `on_message`, after the changes published before it.

        The same channel as the changes, so that a worker receives both in the order they were
        published (e.g. a legacy session's new subscription, then a change of that resource).
        """
        client = self._client
        if client is None:
            raise BackendUnavailable("the Redis backend is not started (the server is not serving)")
        await client.publish(self.channel, orjson.dumps(message))

    # -- lifecycle ----------------------------------------------------------------

    async def start(self, client: redis.asyncio.Redis) -> None:
        """Subscribe to the channel on ``client``; BackendUnavailable when the subscription fails."""
        self._client = client
        self._loop = asyncio.get_running_loop()
        self._outbox = asyncio.Queue()
        self._subscribed = asyncio.Event()
        self._tasks = [
            asyncio.create_task(self._read(), name="wiremcp-redis-bus-reader"),
            asyncio.create_task(self._write(), name="wiremcp-redis-bus-writer"),
        ]
        try:
            await asyncio.wait_for(self._subscribed.wait(), CONNECT_TIMEOUT)
        except asyncio.TimeoutError:
            await self.stop()
            raise BackendUnavailable(f"could not subscribe to the Redis channel {self.channel!r}") from None

    async def stop(self) -> None:
        """Stop reading and publishing on the channel."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except asyncio.CancelledError:
                pass
        self._loop = self._outbox = None
        self.connected = False

    # -- the two tasks --------------------------------------------------------

    async def _write(self) -> None:
        import redis.exceptions

        assert self._outbox is not None and self._client is not None
        while True:
            data = await self._outbox.get()
            if not self.connected:
                self._deliver_locally(data, "Redis is unreachable")
                continue
            try:
                await self._client.publish(self.channel, data)
            except (redis.exceptions.RedisError, OSError) as exc:
                self._deliver_locally(data, f"publishing to Redis failed ({exc})")

    def _deliver_locally(self, data: bytes, why: str) -> None:
        log.warning("%s: change %s delivered to this worker's listeners only", why, data.decode())
        self._deliver(data, local=True)

    async def _read(self) -> None:
        import redis.exceptions

        assert self._client is not None and self._subscribed is not None
        delay = MIN_BACKOFF
        while True:
            pubsub = self._client.pubsub()
            try:
                await pubsub.subscribe(self.channel)
                if not self.connected and self._subscribed.is_set():
                    log.warning("Redis is back: change notifications are shared again")
                self.connected = True
                self._subscribed.set()
                delay = MIN_BACKOFF
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=30.0)
                    if message is not None and message.get("type") == "message":
                        self._deliver(message["data"])
            except (redis.exceptions.RedisError, OSError) as exc:
                if self.connected:
                    log.warning("lost Redis (%s): reconnecting; changes stay on this worker meanwhile", exc)
                self.connected = False
            finally:
                try:
                    await pubsub.aclose()  # type: ignore[no-untyped-call]  # redis-py leaves PubSub.aclose unannotated
                except (redis.exceptions.RedisError, OSError):
                    pass
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF)

    def _deliver(self, data: Any, *, local: bool = False) -> None:
        try:
            decoded = orjson.loads(data)
            if type(decoded) is dict:
                for receive in list(self._side):
                    receive(decoded)
                return
            kind, uri, *named = decoded  # [kind, uri, publisher, number]; [kind, uri] from an older worker
        except (orjson.JSONDecodeError, TypeError, ValueError):
            log.warning("skipped a message on %s that is not a change: %r", self.channel, data[:200])
            return
        change: tuple[str, int] | None = None
        if len(named) == 2 and type(named[0]) is str and type(named[1]) is int:
            change = (named[0], named[1])
        if kind not in _KINDS or not (uri is None or type(uri) is str) or (named and change is None):
            log.warning("skipped a message on %s that is not a change: %r", self.channel, data[:200])
            return
        self.change = None if local else change
        try:
            self._local.publish((kind, uri))
        finally:
            self.change = None


class RedisBackend:
    """Shared state in Redis: ``Server(backend=RedisBackend("redis://host:6379/0"))``."""

    shared = True

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX) -> None:
        try:
            import redis.asyncio  # noqa: F401
        except ImportError:
            raise RuntimeError("the Redis backend needs redis-py: pip install 'wiremcp[redis]'") from None
        if urllib.parse.urlsplit(url).scheme not in ("redis", "rediss", "unix"):
            raise ValueError(f"{redacted(url)!r} is not a Redis URL (redis://, rediss:// or unix://)")
        self.url = url
        self.prefix = prefix
        self._bus = RedisBus(f"{prefix}:changes")
        self._client: redis.asyncio.Redis | None = None

    @property
    def bus(self) -> ChangeBus:
        """The change bus on Redis pub/sub: a change on any worker reaches the listeners of every worker."""
        return self._bus

    @property
    def bus_messages(self) -> RedisBus:
        """The change bus, for messages of the deployment's own (`RedisBus.send`, `RedisBus.on_message`)."""
        return self._bus

    @property
    def connected(self) -> bool:
        """True while the change bus holds its Redis subscription."""
        return self._bus.connected

    @property
    def client(self) -> redis.asyncio.Redis:
        """The redis-py client (while started)."""
        if self._client is None:
            raise BackendUnavailable("the Redis backend is not started (the server is not serving)")
        return self._client

    def blocking_client(self) -> redis.asyncio.Redis:
        """A client of its own for one blocking read (``XREAD BLOCK``), so that it holds no shared connection.

        It connects on its first command; the caller closes it (``aclose``).
        """
        import redis.asyncio

        return redis.asyncio.Redis.from_url(self.url, socket_connect_timeout=CONNECT_TIMEOUT)

    async def start(self) -> None:
        """Connect (PING) and subscribe; BackendUnavailable when Redis cannot be reached."""
        import redis.asyncio
        import redis.exceptions

        client = redis.asyncio.Redis.from_url(
            self.url, socket_connect_timeout=CONNECT_TIMEOUT, socket_timeout=CONNECT_TIMEOUT
        )
        try:
            await asyncio.wait_for(client.ping(), CONNECT_TIMEOUT)
        except (redis.exceptions.RedisError, OSError, asyncio.TimeoutError) as exc:
            await client.aclose()
            raise BackendUnavailable(
                f"cannot reach Redis at {redacted(self.url)} (WIREMCP_REDIS_URL): {exc or type(exc).__name__}"
            ) from None
        self._client = client
        try:
            await self._bus.start(client)
        except BaseException:
            self._client = None
            await client.aclose()
            raise

    async def stop(self) -> None:
        """Stop the bus and close the connection to Redis."""
        await self._bus.stop()
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    def __repr__(self) -> str:
        return f"RedisBackend({redacted(self.url)!r}, prefix={self.prefix!r})"
