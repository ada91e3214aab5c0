"""Legacy (2025-11-25) sessions shared by every worker through Redis (docs/deploy.md, "Legacy sessions").

`SharedSessions` fills the `_session_store.SessionStore` port in place of
`_sessions.Sessions` (neither derives from the other) when the server's
backend is shared (``WIREMCP_REDIS_URL``): any worker serves any message of
any session, so a load balancer needs no stickiness. It keeps the wire rules
of `_sessions` (status codes, ``Mcp-Session-Id``, ``MCP-Protocol-Version``:
`_session_rules`; event ids ``{stream}-{n}``, ``Last-Event-ID`` resumption,
the priming event, one JSON body for a request answered before it sends
anything, 429 for a refusal of the caller's share: the one carrier loop, `_carrier.carry`, fed from Redis by
`_shared_streams.RedisFeed`; what a session is, `SharedSession` shares with
the local one: `_session_base`). What is kept in Redis, and the Lua scripts
that write it, is `wiremcp.backends.redis.sessions`. Its rules of its own:

The session record

* ``initialize`` writes the session's record in Redis (``{p}:ls:{id}``):
  the ``initialize`` params, the principal that opened it, the log level and
  the resource subscriptions; it expires after ``idle_timeout`` seconds
  without a message (every message renews it);
* a worker that gets a message of a session it has not seen builds its own
  copy of the session from the record (it replays the ``initialize``), so
  what the handshake negotiated is the same everywhere; a change of the log
  level or the subscriptions made on one worker is written to the record and
  announced on the change bus's channel (in order with the changes, so a
  change of a resource subscribed to just before is not missed), and every
  other copy takes it;
* ``max_sessions`` counts the sessions of every worker: each live session
  holds a slot in one sorted set (``{p}:sessions``, its id scored by its
  expiry in milliseconds of Redis's clock, renewed by every message);
  ``initialize`` first drops the expired slots, then takes one in the same
  Lua call, or is refused as by one process (503, `ServerBusy`). DELETE
  frees the slot at once; an expired session, and so every session of a
  worker that died, frees it ``idle_timeout`` after its last message;
* DELETE on any worker deletes the record and announces it: every worker
  ends its copy (its requests in flight are cancelled, its streams end). A
  message for a session whose record is gone is 404 on every worker.

Streams (Redis Streams)

* every event of a session's stream goes to a Redis stream
  (``{p}:ls:{id}:s:{stream}``, with its event number, written by one Lua
  call so that numbers are unique whatever worker writes); the HTTP response
  carrying a stream, on whatever worker, reads it from there (``XREAD``), so
  a client that lost its connection resumes on any worker with
  ``Last-Event-ID``, even when the worker that wrote the events is gone; the
  events kept for that are bounded (`MAX_EVENTS` per stream, and the idle
  timeout);
* a request runs on the worker that received it; its number comes from
  ``INCR`` (unique in the session); a request id already in flight on any
  worker is -32600 (``HSETNX``: the claim, ``{p}:ls:{id}:calls``, id ->
  worker and stream); on a worker that has a copy of the session, the claim
  goes in the same Lua call as the renewal of the record and its slot. An
  answered request's claim is released (``HDEL``) with this worker's next
  round trip: the next message's renewal, or the heartbeat (`HEARTBEAT`),
  or at once past `MAX_RELEASES` waiting; until then the id counts as in
  flight, which only a client using an id twice in a session (basic/index.mdx
  forbids it) can see;
* a worker that dies with requests in flight: a response still carrying,
  or resuming, such a request's stream notices that the worker's heartbeat
  (``{p}:worker:{w}``, renewed every `HEARTBEAT` seconds, expiring after
  `WORKER_TTL` s) is gone, and ends the stream with a -32603 error response
  saying so (once: written to the stream like any event);
* session notifications (list changes, resource updates) reach every
  worker's copy of the session through the change bus, each change named
  the same on every worker (`RedisBus.change`: its publisher and number);
  the first copy to write a change to the standalone stream
  (``{p}:ls:{id}:s:0``) writes it, the others find it written
  (``SET NX`` on ``{p}:ls:{id}:seen:{publisher}:{number}``, in the same
  Lua call), so it is written once whether a GET stream is open or not;
* what no GET has carried yet is kept for the next GET, on any worker, as
  one process keeps it: at most ``replay_buffer`` bytes (each message
  counting its length and `ENTRY_COST`) and `MAX_UNSENT` messages, the
  oldest dropped first (removed from the stream) with a log line
  (``{p}:ls:{id}:unsent`` lists them with their sizes). A GET marks the
  events it carries as sent (``{p}:ls:{id}:sent:0``) as it hands them to
  its response; a new GET without ``Last-Event-ID`` starts after the last
  one sent, so what an earlier GET carried comes again only to a client
  that resumes with ``Last-Event-ID``. A newer GET on any worker replaces
  the older one.

Across workers

* the server's requests to the client (elicitation, sampling, roots) get
  ids from a random range of each worker's copy of the session (2**20 ids
  from a random multiple of 2**20 below 2**52), so two workers asking at
  once do not give the client the same id;
* the client's answer to the server's request may reach any worker: the
  worker that sent the request registered
  its id (``{p}:ls:{id}:out``), and the one that gets the answer forwards it
  on that worker's channel (``{p}:worker:{w}:inbox``); so does a
  ``notifications/cancelled`` for a request running on another worker;
* a worker that stops (SIGTERM) ends its requests in flight with a -32603
  error response (written to their streams, so a client resuming elsewhere
  reads it) and lets its streams go; the sessions live on.

When Redis cannot be reached

* every legacy message gets 503 (with ``Retry-After``) whose message says
  that the session store cannot be reached; a stream already under way
  ends, and the client resumes it once Redis is back (the events written
  before are still there, unless Redis itself lost them);
* 2026-07-28 requests never touch Redis and are served as usual.

What it costs: a legacy request answered at once, on a worker with a copy
of its session, makes one Redis round trip (tests/scale/test_session_round_trips.py);
one that runs on makes one more (``runs``) and one per event it writes;
2026-07-28 requests make none.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import time
from typing import Any, Awaitable, Callable

import orjson

from ...backends import BackendUnavailable
from ...backends.redis import RedisBackend
from ...backends.redis.sessions import MAX_RELEASES, MAX_UNSENT, REDIS_ERRORS, RedisSessionStore
from ...jsonrpc import ErrorResponse, InternalError, InvalidRequest, Notification, Request, Response
from ...protocol.telemetry import replaying
from ...server import Server
from ...server.transport import Call, ServerBusy, Write, reply_failed
from ._asgi import Receive, Send, empty_reply, http_error, json_reply
from ._auth import principal
from ._carrier import carry
from ._coalesce import signal
from ._session_base import SessionBase, event_id, refusal_status, unline
from ._session_rules import ENTRY_COST, LAST_EVENT_ID_HEADER, SESSION_HEADER, SessionOptions, SessionRules
from ._shared_streams import CURRENT, RedisFeed, StreamWriter

__all__ = ["SharedSessions", "SharedSession", "UNAVAILABLE", "HEARTBEAT", "WORKER_TTL", "MAX_RELEASES"]

#: What `SharedSessions.find` gives when Redis cannot be reached (each method answers 503).
UNAVAILABLE: Any = object()


log = logging.getLogger("wiremcp.transport")

#: Seconds between two renewals of a worker's heartbeat, and seconds it lasts.
HEARTBEAT = 1.0
WORKER_TTL = 3.0
class SharedSession(SessionBase):
    """This worker's copy of one shared legacy session: its `ServerConnection` and its streams here."""

    sessions: SharedSessions

    def __init__(self, sessions: SharedSessions, id: str, owner: Any) -> None:
        self.standalone_carrier: RedisFeed | None = None  # the GET stream carried here, if any
        self.carriers: set[RedisFeed] = set()
        self.writers: dict[Any, StreamWriter] = {}  # requests running here, by id
        self.claims: dict[bytes, int] = {}  # request ids (JSON) claimed with the message's `renew`: stream (0: in flight)
        super().__init__(
            sessions,
            id,
            owner,
            self._session_notification,
            # the ids of our requests to the client: a range of this copy's own, so that two
            # workers asking the same client at once never use the same id (below 2**53, for JSON)
            first_request_id=1 + secrets.randbelow(2**32) * 2**20,
        )
        self._standalone = StreamWriter(sessions, self, 0)

    def state(self) -> tuple[str | None, list[str]]:
        legacy = self.conn.session
        if legacy is None:
            return None, []
        return legacy.log_level, sorted(legacy.subscriptions)

    def take_state(self, record: dict[str, Any]) -> None:
        """The log level and subscriptions of the record (changed on another worker)."""
        legacy = self.conn.session
        if legacy is not None:
            legacy.log_level = record.get("log")
            legacy.subscriptions = set(record.get("subs", ()))

    def _session_notification(self, data: bytes) -> None:
        # List changes and resource updates reach every worker's copy (the change bus): the
        # first copy to write a change writes it, once, for the GET stream on any worker, open
        # now or later (see the module docs).
        self._standalone.notify(data, self.sessions.backend.bus_messages.change)

    def route(self) -> Write:
        """Where a request to the client goes: the asking request's stream, else the standalone stream."""
        writer = CURRENT.get()
        if writer is None or writer.session is not self or writer.finished:
            return self._standalone
        return writer

    def close_stream(self, request_id: Any, retry_ms: int | None) -> bool:
        return False  # the shared streams are always resumable; closing a connection on purpose is not offered

    def abandon(self) -> None:
        """A copy that never opened (its ``initialize`` failed): its standalone writer ends."""
        self._standalone.abandon()

    def close(self, why: str, *, stopping: bool = False) -> None:
        """End this copy: cancel its requests (``stopping``: end their streams with an error), let its streams go."""
        if self.closed:
            return
        log.info("session %s: copy on this worker ended: %s", self.id[:8], why)
        self.sessions.local.pop(self.id, None)
        for call in self.conn.cancel_calls():
            if call.task is not None:
                call.task.cancel()
        for request_id, writer in list(self.writers.items()):
            if stopping:
                writer.finish(_stopped_reply(request_id))
            else:
                writer.finish(None)
        self.writers.clear()
        self.conn.calls.clear()
        self.conn.close("the session has ended")
        for carrier in list(self.carriers):
            carrier.let_go(lost=not stopping)
        self._standalone.abandon()


def _stopped_reply(request_id: Any) -> bytes:
    stopped = InternalError("Internal error: the worker serving this request stopped; send the request again")
    return unline(reply_failed(request_id, stopped)[0])


class SharedSessions:
    """The legacy sessions of one `MCPApp` on a shared (Redis) backend; see the module docs."""

    def __init__(self, server: Server, options: SessionOptions) -> None:
        backend = server.backend
        assert isinstance(backend, RedisBackend), "SharedSessions needs the server's RedisBackend"
        self.server = server
        self.options = options
        self.rules = SessionRules(server, options)
        self.backend: RedisBackend = backend
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.store = RedisSessionStore(
            lambda: backend.client, backend.prefix, self.worker, int(options.idle_timeout * 1000), ENTRY_COST
        )
        self.local: dict[str, SharedSession] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._stop_listening: Callable[[], None] | None = None
        self._started_on: asyncio.AbstractEventLoop | None = None
        self._unsubscribe: Any = None

    def __len__(self) -> int:
        return len(self.local)

    # -- Redis --------------------------------------------------------------------------

    async def _ensure_started(self) -> None:
        loop = asyncio.get_running_loop()
        if self._started_on is loop:
            return
        self._started_on = loop
        if self._stop_listening is None:
            self._stop_listening = self.backend.bus_messages.on_message(self._received)
        await self.store.beat(int(WORKER_TTL * 1000))
        self._tasks = [
            loop.create_task(self._heartbeat(), name="wiremcp-sessions-heartbeat"),
            loop.create_task(self._listen(), name="wiremcp-sessions-inbox"),
        ]

    async def _heartbeat(self) -> None:
        failing = False
        while True:
            await asyncio.sleep(HEARTBEAT)
            try:
                await self.store.beat(int(WORKER_TTL * 1000))
                if failing:
                    log.warning("this worker's heartbeat is in Redis again")
                failing = False
            except Exception as exc:  # noqa: BLE001 - Redis lost: keep trying, say so once
                if not failing:
                    log.warning("could not renew this worker's heartbeat in Redis (%s); retrying every %g s", exc, HEARTBEAT)
                failing = True
            # Copies unused for the idle timeout are dropped here (the record stays in Redis until
            # it expires; a later message builds the copy again).
            now = time.monotonic()
            for session in list(self.local.values()):
                if now - session.last_seen >= self.options.idle_timeout and not session.carriers and not session.writers:
                    session.close("unused on this worker", stopping=True)

    async def _listen(self) -> None:
        """This worker's inbox (forwarded answers, cancellations) and the session announcements."""
        delay = 0.05
        while True:
            pubsub = self.backend.client.pubsub()
            try:
                await pubsub.subscribe(self.store.inbox(self.worker))
                delay = 0.05
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=30.0)
                    if message is not None and message.get("type") == "message":
                        try:
                            self._received(orjson.loads(message["data"]))
                        except orjson.JSONDecodeError:
                            log.warning("skipped a message in this worker's inbox that is not ours: %r", message["data"][:200])
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - Redis lost: reconnect with back-off
                log.warning("lost the Redis channel of the legacy sessions (%s): reconnecting", exc)
            finally:
                try:
                    await pubsub.aclose()  # type: ignore[no-untyped-call]  # redis-py leaves PubSub.aclose unannotated
                except Exception:  # noqa: BLE001
                    pass
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)

    def _received(self, message: dict[str, Any]) -> None:
        try:
            session = self.local.get(message["s"])
        except (KeyError, TypeError):
            log.warning("skipped a message for the legacy sessions that is not ours: %r", str(message)[:200])
            return
        if session is None:
            return
        kind = message.get("k")
        if kind == "deleted":
            session.close("the client deleted it (on another worker)")
        elif kind == "state":
            session.take_state(message)
        elif kind == "taken" and message.get("w") != self.worker:
            if session.standalone_carrier is not None:
                session.standalone_carrier.let_go()
                session.standalone_carrier = None
        elif kind == "answer":
            data = message["m"]
            if "error" in data:
                answered = session.conn.response(ErrorResponse(data["id"], data["error"]))
            else:
                answered = session.conn.response(Response(data["id"], data.get("result")))
            if not answered:
                log.warning("session %s: a forwarded answer for id %r, which nothing here waits for", session.id[:8], data["id"])
        elif kind == "cancel":
            cancelled = session.conn.notification(Notification("notifications/cancelled", message["p"]))
            if cancelled is not None:
                writer = session.writers.get(cancelled.id)
                if writer is not None:
                    writer.finish(None)

    async def append_notification(self, sid: str, data: bytes, change: tuple[str, int]) -> None:
        """Write a session notification to the standalone stream, unless another worker wrote this change already.

        ``change`` names the bus change it comes from (``("", 0)``: a change only this worker
        got, written as it is). Notifications no GET has carried yet are bounded; past the
        bound the oldest are dropped, with a log line.
        """
        limit = self.options.replay_buffer
        dropped = await self.store.append_notification(sid, data, change, limit, coalesce=signal(data))
        if dropped:
            log.warning(
                "session %s: dropped %d unsent messages of stream 0 (limit %d bytes, %d messages)",
                sid[:8], dropped, limit, MAX_UNSENT,
            )  # fmt: skip

    async def note_outgoing(self, sid: str, data: bytes) -> None:
        """A request of ours to the client went out: record which worker waits for its answer."""
        if b'"method"' not in data or b'"id"' not in data:
            return
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        if isinstance(message, dict) and "method" in message and "id" in message:
            await self.store.sent_request(sid, orjson.dumps(message["id"]))

    async def _announce(self, message: dict[str, Any]) -> None:
        """Tell every worker (a session's new state, its end, its GET stream taken), in order with the changes."""
        await self.backend.bus_messages.send(message)

    # -- the set of sessions ------------------------------------------------------------------

    async def find(self, raw_id: bytes, request_id: Any = None) -> Any:
        """This worker's copy of the session with this id (built from its record), if the session lives.

        With ``request_id`` (the message is a request) and a copy here already, the request id is claimed
        in the same round trip (`RedisSessionStore.renew`); `request` takes the claim.
        `UNAVAILABLE` when Redis cannot be reached: every method then answers 503.
        """
        try:
            return await self._find(raw_id, request_id)
        except REDIS_ERRORS as exc:
            log.warning("legacy session store unreachable: %s", exc)
            return UNAVAILABLE

    # -- the app's entry points: Redis unreachable is a 503 that says so --------------------------

    async def initialize(self, req: Request, headers: dict[bytes, bytes], send: Send, client: str = "") -> None:
        await self._guarded(send, lambda tracked: self._initialize(req, headers, tracked, client))

    async def request(self, session: Any, req: Request, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        await self._guarded(send, lambda tracked: self._request(session, req, headers, receive, tracked), session)

    async def notification(self, session: Any, note: Notification, headers: dict[bytes, bytes], send: Send) -> None:
        await self._guarded(send, lambda tracked: self._notification(session, note, headers, tracked), session)

    async def response(self, session: Any, msg: Response | ErrorResponse, headers: dict[bytes, bytes], send: Send) -> None:
        await self._guarded(send, lambda tracked: self._response(session, msg, headers, tracked), session)

    async def get(self, session: Any, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        await self._guarded(send, lambda tracked: self._get(session, headers, receive, tracked), session)

    async def delete(self, session: Any, headers: dict[bytes, bytes], send: Send) -> None:
        await self._guarded(send, lambda tracked: self._delete(session, headers, tracked), session)

    async def _guarded(self, send: Send, work: Callable[[Send], Awaitable[None]], session: Any = None) -> None:
        started = False

        async def tracked(message: Any) -> None:
            nonlocal started
            started = True
            await send(message)

        try:
            if session is UNAVAILABLE:
                raise BackendUnavailable("Redis did not answer")
            await work(tracked)
        except REDIS_ERRORS as exc:
            log.warning("legacy session store unreachable: %s", exc)
            if not started:
                await json_reply(
                    send, 503,
                    http_error(f"Service Unavailable: the legacy session store (Redis) cannot be reached ({exc}); retry later"),
                )  # fmt: skip
            else:  # a stream already under way: end it; the client resumes once Redis is back
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _find(self, raw_id: bytes, request_id: Any) -> Any:
        await self._ensure_started()
        try:
            sid = raw_id.strip(b" \t").decode("ascii")
        except UnicodeDecodeError:
            return None
        if not sid or len(sid) > 128 or not sid.replace("-", "").replace("_", "").isalnum():
            return None
        mine = principal()
        caller = list(mine) if mine is not None else None
        session = self.local.get(sid)
        # The claim goes with the renewal only where the owner is known to be the caller already
        # (a copy here): a request of another principal must claim nothing.
        claim = None
        if request_id is not None and session is not None and not session.closed and session.owner == caller:
            claim = orjson.dumps(request_id)
        record, stream = await self.store.renew(sid, claim)
        session = self.local.get(sid)
        if record is None:
            if session is not None:
                session.close("it expired or was deleted")
            return None
        if caller != record.get("owner"):
            log.warning("session %s: refused a request whose token is for another principal", sid[:8])
            if claim is not None and stream > 0:
                await self.store.release_call(sid, claim)
            return None
        if session is None or session.closed:
            session = self._restore(sid, record)
        else:
            session.take_state(record)
        session.touch()
        if claim is not None:
            session.claims[claim] = stream
        return session

    def _restore(self, sid: str, record: dict[str, Any]) -> SharedSession:
        session = SharedSession(self, sid, record.get("owner"))
        # A replay of the client's first messages, traced where they arrived: no spans here.
        replay = replaying() if self.server.telemetry else None
        mark = replay.set(True) if replay is not None else None
        try:
            _, status = session.initialize(Request(0, "initialize", record["init"]))
            assert status == 200, "the recorded initialize is answered again"
            session.conn.notification(Notification("notifications/initialized", None))
        finally:
            if replay is not None and mark is not None:
                replay.reset(mark)
        session.primes = record.get("primes", False)
        session.take_state(record)
        self.local[sid] = session
        return session

    async def _save_state(self, session: SharedSession, before: tuple[str | None, list[str]]) -> None:
        """Write a changed log level or subscription set to the record, and announce it."""
        after = session.state()
        if after == before:
            return
        if not await self.store.update(session.id, log=after[0], subs=after[1]):
            return
        await self._announce({"s": session.id, "k": "state", "log": after[0], "subs": after[1]})

    def close_all(self) -> None:
        """This worker stops: end its copies (their requests end with an error); the sessions live on."""
        for session in list(self.local.values()):
            session.close("this worker is stopping", stopping=True)
        for task in self._tasks:
            task.cancel()
        self._tasks = []
        self._started_on = None
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._stop_listening is not None:
            self._stop_listening()
            self._stop_listening = None

    def _on_change(self, event: Any) -> None:
        if event is None:  # Server.close_subscriptions(): the worker is stopping; let GET streams go
            for session in list(self.local.values()):
                if session.standalone_carrier is not None:
                    session.standalone_carrier.let_go()

    # -- POST ------------------------------------------------------------------------------------

    async def _initialize(self, req: Request, headers: dict[bytes, bytes], send: Send, client: str = "") -> None:
        await self._ensure_started()
        if await self.rules.modern_initialize(req, headers, send):
            return
        sid = secrets.token_urlsafe(32)
        taken, count = await self.store.open_slot(sid, self.options.max_sessions)
        if not taken:  # every worker's sessions count: the same refusal as one process's
            log.warning("refused initialize: %d legacy sessions are open on all workers, the limit", count)
            busy = ServerBusy(
                f"Server busy: {count} sessions are open, the most this server keeps; try again later "
                "(MCP 2026-07-28 clients need no session)"
            )
            await json_reply(send, 503, reply_failed(req.id, busy)[0])
            return
        owner = principal()
        session = SharedSession(self, sid, list(owner) if owner is not None else None)
        data, status = session.initialize(req)
        if status != 200:
            session.abandon()
            await self.store.release_slot(sid)
            await json_reply(send, status, data)
            return
        record = {"init": req.params or {}, "owner": session.owner, "primes": session.primes, "log": None, "subs": []}
        await self.store.create(session.id, record)
        self.local[session.id] = session
        self._watch_bus()
        log.info("session %s opened (protocol %s, shared)", session.id[:8], session.version)
        await json_reply(send, 200, data, ((SESSION_HEADER, session.key),))

    def _watch_bus(self) -> None:
        if self._unsubscribe is None:
            self._unsubscribe = self.server.bus.subscribe(self._on_change)

    async def _request(self, session: Any, req: Request, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        assert isinstance(session, SharedSession)
        field = orjson.dumps(req.id)
        claimed = session.claims.pop(field, None)  # taken with the message's renewal (`find`)
        if await self.rules.wrong_version(session, headers, send, req.id, with_id=True):
            if claimed:
                await self.store.release_call(session.id, field)
            return
        self._watch_bus()
        stream = claimed if claimed is not None else await self.store.claim_call(session.id, field)
        if not stream:
            refused = reply_failed(req.id, _in_flight(req.id))[0]
            await json_reply(send, 200, refused)
            return
        before = session.state()
        writer = StreamWriter(self, session, stream)
        out = session.conn.request(req, writer)
        if type(out) is tuple:
            await self._release(session.id, field)
            await self._save_state(session, before)
            if writer.idle:  # answered at once, nothing sent before: one JSON body, no stream
                writer.abandon()
                await json_reply(send, refusal_status(out), out[0])
                return
            writer.finish(out[0])
            await self._carry(session, stream, 0, receive, send, json_ok=True, prime=session.primes)
            return
        assert isinstance(out, Call)
        call = out
        session.writers[req.id] = writer
        await self.store.runs_here(session.id, stream)

        status = 200  # of the reply as the POST's one JSON body (`refusal_status`)

        async def answer(send: Send, body: bytes) -> None:
            await json_reply(send, status, body)

        async def run() -> None:
            nonlocal status
            CURRENT.set(writer)
            reply = None
            try:
                reply = await call.finish()
                status = refusal_status(reply)
            finally:
                final = session.settle(call, reply)
                session.writers.pop(req.id, None)
                writer.finish(final)
                try:
                    await self._release(session.id, field)
                    await self._save_state(session, before)
                except Exception as exc:  # noqa: BLE001
                    log.warning("session %s: could not update the record: %s", session.id[:8], exc)

        task = call.task = asyncio.get_running_loop().create_task(run())
        del task
        await self._carry(session, stream, 0, receive, send, json_ok=True, prime=session.primes, answer=answer)

    async def _release(self, sid: str, field: bytes) -> None:
        """An answered request's claim: with this worker's next round trip, or now when many wait."""
        self.store.release_later(sid, field)
        if self.store.releases_due:
            await self.store.flush_releases()

    async def _notification(self, session: Any, note: Notification, headers: dict[bytes, bytes], send: Send) -> None:
        assert isinstance(session, SharedSession)
        if await self.rules.wrong_version(session, headers, send):
            return
        cancelled = session.conn.notification(note)
        if cancelled is not None:
            writer = session.writers.get(cancelled.id)
            if writer is not None:
                writer.finish(None)  # nothing more is sent for it, not even its response
        elif note.method == "notifications/cancelled" and isinstance(note.params, dict):
            target = note.params.get("requestId")
            if type(target) in (str, int):
                worker = await self.store.call_worker(session.id, orjson.dumps(target))
                if worker is not None and worker != self.worker:
                    await self.store.publish(worker, {"s": session.id, "k": "cancel", "p": note.params})
        await empty_reply(send, 202)

    async def _response(self, session: Any, msg: Response | ErrorResponse, headers: dict[bytes, bytes], send: Send) -> None:
        assert isinstance(session, SharedSession)
        if await self.rules.wrong_version(session, headers, send):
            return
        field = orjson.dumps(msg.id)
        if session.conn.response(msg):
            await self.store.answered(session.id, field)
            await empty_reply(send, 202)
            return
        worker = await self.store.waiting_worker(session.id, field)
        if worker is not None and worker != self.worker:
            await self.store.answered(session.id, field)
            data: dict[str, Any] = {"id": msg.id}
            if isinstance(msg, ErrorResponse):
                data["error"] = msg.error
            else:
                data["result"] = msg.result
            await self.store.publish(worker, {"s": session.id, "k": "answer", "m": data})
            await empty_reply(send, 202)
            return
        await self.rules.unawaited(session, msg, send)

    # -- GET, DELETE ------------------------------------------------------------------------------

    async def _get(self, session: Any, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        assert isinstance(session, SharedSession)
        if await self.rules.refused_get(session, headers, send):
            return
        self._watch_bus()
        stream, after, prime = 0, 0, True
        last = headers.get(LAST_EVENT_ID_HEADER)
        if last is not None:
            named = event_id(last)
            if named is not None:
                sid, n = named
                if sid == b"0" or await self.store.has_stream(session.id, int(sid)):
                    stream, after, prime = int(sid), int(n), False
            if prime:
                log.debug("session %s: Last-Event-ID %r names no stream; the standalone stream opens", session.id[:8], last)
        if stream == 0:
            if session.standalone_carrier is not None:  # one connection per stream: the newer one wins
                session.standalone_carrier.let_go()
            await self._announce({"s": session.id, "k": "taken", "w": self.worker})
        await self._carry(session, stream, after, receive, send, json_ok=False, prime=prime)

    async def _delete(self, session: Any, headers: dict[bytes, bytes], send: Send) -> None:
        assert isinstance(session, SharedSession)
        if await self.rules.wrong_version(session, headers, send):
            return
        await self.store.delete(session.id)
        await self._announce({"s": session.id, "k": "deleted"})
        session.close("the client deleted it")
        await empty_reply(send, 204)

    # -- carrying a stream from Redis on one response -------------------------------------------------

    async def _carry(
        self, session: SharedSession, stream: int, after: int, receive: Receive, send: Send, *, json_ok: bool, prime: bool,
        answer: Callable[[Send, bytes], Awaitable[None]] | None = None,
    ) -> None:
        """Write one stream's events from Redis on this response (`_carrier.carry`, the wire rules).

        ``answer`` writes a reply that is all there is as one JSON body (default: a 200).
        """
        feed = RedisFeed(self, session, stream, after, receive, prime=prime)
        if answer is None:
            await carry(feed, send, json_ok=json_ok, keepalive=self.options.keepalive_interval)
        else:
            await carry(feed, send, json_ok=json_ok, keepalive=self.options.keepalive_interval, answer=answer)

    async def worker_gone(self, session: SharedSession, stream: int) -> bool:
        """Whether the worker running this stream's request died; if so, end the stream with an error (once)."""
        worker = await self.store.runner(session.id, stream)
        if worker is None or worker == self.worker or await self.store.alive(worker):
            return False
        # The request's id: the calls registry has it (the worker that died never removed it).
        field = await self.store.call_of(session.id, worker, stream)
        final = _stopped_reply(orjson.loads(field) if field is not None else None)
        await self.store.append_final_once(session.id, stream, final)
        log.warning("session %s: the worker running stream %d (%s) is gone; the stream ends with an error", session.id[:8], stream, worker)
        return True


def _in_flight(request_id: Any) -> Exception:
    return InvalidRequest(f"Invalid Request: request id {request_id!r} is already in flight", id=request_id)
