"""The inspector's state: one `Client`, the envelopes it saw, the page's open streams and questions.

`Inspector` owns a `wiremcp.Client` made by a factory fixed when the process
started (the page can never name a command or a URL: the target comes from
the command line alone). It keeps these rules:

* **Every envelope is recorded.** The client's ``on_wire`` hook hands over
  each envelope it sends and receives; each becomes a `record` with a
  sequence number, the ``channel`` it crossed (``"client-server"``; an MCP
  Apps host will add ``"view-host"`` for postMessage envelopes with the same
  fields), who sent it (``from``/``to``), the time since the inspector
  started, for a response the time since its request (``elapsed_ms``), its
  text exactly as it crossed, the problems `WireChecker` (the rules of
  ``wiremcp tap``) finds in it, and its ``session``: the number of the
  connection it crossed (request ids start again at 1 when the client
  connects again, after a change under ``wiremcp dev --web``; the page
  labels ids of later sessions with it). The last `HISTORY` records are kept and
  replayed to a page that connects; a page that cannot keep up (`QUEUE`
  events waiting) is disconnected, and gets the whole history again when it
  reconnects: nothing is dropped without the page knowing.
* **Elicitations wait for a person.** The client's elicitation callback
  publishes the request to every open page and waits until one answers
  (`answer`); the answer's ``action`` must be ``accept``, ``decline`` or
  ``cancel`` and an accepted answer carries a ``content`` object.
* **Calls never time out on their own** (a person may be answering an
  elicitation while a legacy ``tools/call`` is in flight); lists use the
  client's timeout.
* **Events are plain data.** What goes to the page is JSON; the page shows
  every string from the server as text.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from typing import Any, Awaitable, Callable, Literal, NotRequired, TypedDict

import orjson

from ...client import Client, ClientError, ConnectionClosed, RemoteError
from ...protocol import Era
from .._client import unreachable
from .._wirecheck import Problem, WireChecker
from ._viewcheck import ViewChecker

__all__ = ["Inspector", "Record", "ClientFactory", "HISTORY", "QUEUE", "AnswerError"]

#: How many records a page that connects is sent first.
HISTORY = 5000
#: How many events may wait for one page before it is disconnected.
QUEUE = 20000
#: How many views' conversations are checked at once (the oldest is forgotten first).
VIEWS = 64

#: Makes the client: ``factory(on_wire, elicitation)``.
ClientFactory = Callable[[Callable[[str, bytes], None], Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]], Client]

Event = tuple[str, Any]


class Record(TypedDict):
    """One envelope as the page shows it."""

    seq: int
    channel: str
    #: ``"c2s"``/``"s2c"`` on client-server, ``"v2h"``/``"h2v"`` on view-host.
    direction: str
    #: Who sent it and who received it: ``"client"``/``"server"``, or ``"view"``/``"host"``
    #: (``"sandbox"`` for the sandbox proxy's own reserved messages).
    sender: str
    receiver: str
    #: Milliseconds since the inspector started.
    t_ms: float
    #: For a response: milliseconds since the request it answers crossed; else None.
    elapsed_ms: float | None
    #: ``method`` of a request or notification, else None.
    method: str | None
    #: ``"request"``, ``"notification"``, ``"response"``, ``"error"`` or ``"invalid"``.
    kind: str
    id: Any
    text: str
    problems: list[Problem]
    #: Which connection of this inspector process it crossed: 1, then one more each time the
    #: client connects again (``wiremcp dev --web`` after a change), where request ids start again at 1.
    session: int
    #: On view-host: the number of the view in the page.
    view: NotRequired[int]


class AnswerError(Exception):
    """An answer to an elicitation the page may not give; ``status`` is the HTTP status to reply with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _kind(msg: Any) -> tuple[str, str | None, Any]:
    if type(msg) is not dict:
        return "invalid", None, None
    method = msg.get("method")
    if type(method) is str:
        return ("request" if "id" in msg else "notification"), method, msg.get("id")
    if "error" in msg:
        return "error", None, msg.get("id")
    if "result" in msg:
        return "response", None, msg.get("id")
    return "invalid", None, msg.get("id")


class Inspector:
    """The client, its wire records and the pages watching them (one per process, on one event loop)."""

    def __init__(self, factory: ClientFactory, *, target: str = "", clock: Callable[[], float] = time.perf_counter) -> None:
        self.factory = factory
        self.target = target
        self.clock = clock
        self.start = clock()
        self.client: Client | None = None
        self.checker = WireChecker()
        self.records: deque[Record] = deque(maxlen=HISTORY)
        self.seq = itertools.count(1)
        self.sent_at: dict[tuple[str, bool, Any], float] = {}
        self.streams: set[asyncio.Queue[Event | None]] = set()
        self.questions: dict[int, tuple[dict[str, Any], asyncio.Future[dict[str, Any]]]] = {}
        self.question_ids = itertools.count(1)
        self.state: dict[str, Any] = {"connected": False, "target": target}
        self.view_checkers: dict[int, ViewChecker] = {}
        #: The number of the current connection (`Record`'s ``session``): 1 for the first.
        self.session = 0

    # -- the client ------------------------------------------------------------------------

    async def connect(self) -> None:
        """Connect (a fresh client each time) and list what the server offers; a failure is kept in the state."""
        self.checker = WireChecker()
        self.sent_at.clear()
        self.session += 1
        self.client = self.factory(self.on_wire, self.elicit)
        try:
            await self.client.connect()
            await self.refresh()
        except ClientError as exc:
            self.state = {"connected": False, "target": self.target, "error": _describe(exc, self.client)}
            self.publish("state", self.state)
            raise

    async def restart(self, why: str) -> None:
        """Close the client and connect again (``wiremcp dev --web`` after a change)."""
        await self.close_client()
        self.publish("note", {"text": f"{why}; reconnected", "t_ms": self._now()})
        try:
            await self.connect()
        except ClientError:
            pass

    async def close_client(self) -> None:
        for _, future in self.questions.values():
            if not future.done():
                future.set_result({"action": "cancel"})
        if self.client is not None:
            client, self.client = self.client, None
            await client.aclose()
            auth = getattr(client.transport, "auth", None)  # `--auth`: the OAuth client's own HTTP session
            if auth is not None:
                await auth.aclose()

    async def aclose(self) -> None:
        """Close the client and end every page stream."""
        await self.close_client()
        for queue in list(self.streams):
            self._end(queue)

    async def refresh(self) -> dict[str, Any]:
        client = self._client()
        if client.server is None:  # era="modern" forced: nothing was probed yet
            await client.discover()
        info = client.server_info or {}
        server = client.server
        caps = client.server_capabilities
        state: dict[str, Any] = {
            "connected": True,
            "target": self.target,
            "serverInfo": info,
            "era": "modern" if client.era is Era.MODERN else "legacy",
            "protocolVersion": client.protocol_version,
            "instructions": server.instructions if server is not None else None,
            "capabilities": sorted(caps),
            "tools": await client.list_tools(refresh=True) if "tools" in caps else [],
            "resources": await client.list_resources(refresh=True) if "resources" in caps else [],
            "resourceTemplates": await client.list_resource_templates(refresh=True) if "resources" in caps else [],
            "prompts": await client.list_prompts(refresh=True) if "prompts" in caps else [],
        }
        self.state = state
        self.publish("state", state)
        return state

    def _client(self) -> Client:
        if self.client is None:
            raise ClientError("not connected")
        return self.client

    async def call(self, request: Any) -> dict[str, Any]:
        """What the page asked: ``{"kind": "tool"|"resource"|"prompt", ...}`` -> ``{"ok": ..., ...}``."""
        if type(request) is not dict or request.get("kind") not in ("tool", "resource", "prompt"):
            raise AnswerError(400, "kind must be 'tool', 'resource' or 'prompt'")
        kind = request["kind"]
        name_key = "uri" if kind == "resource" else "name"
        name = request.get(name_key)
        if type(name) is not str:
            raise AnswerError(400, f"{name_key} must be a string")
        arguments = request.get("arguments")
        if arguments is not None and type(arguments) is not dict:
            raise AnswerError(400, "arguments must be an object")
        started = self._now()
        try:
            client = self._client()
            if kind == "tool":
                result = (await client.call_tool(name, arguments, timeout=None)).raw
            elif kind == "resource":
                result = (await client.read_resource(name, refresh=True, timeout=None)).raw
            else:
                if arguments is not None and any(type(v) is not str for v in arguments.values()):
                    raise AnswerError(400, "prompt arguments are strings")
                result = (await client.get_prompt(name, arguments, timeout=None)).raw
        except RemoteError as exc:
            error: dict[str, Any] = {"code": exc.code, "message": exc.message}
            if exc.has_data:
                error["data"] = exc.data
            return {"ok": False, "error": error, "ms": self._now() - started}
        except ClientError as exc:
            message = _describe(exc, self.client)
            if isinstance(exc, ConnectionClosed) and self.state.get("connected"):
                self.state = {**self.state, "connected": False, "error": message}  # the lists stay, greyed by the page
                self.publish("state", self.state)
            return {"ok": False, "error": {"message": message}, "ms": self._now() - started}
        return {"ok": True, "result": result, "ms": self._now() - started}

    # -- elicitation -----------------------------------------------------------------------

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        """The client's elicitation callback: ask every open page, return the first answer."""
        number = next(self.question_ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.questions[number] = (params, future)
        self.publish("elicit", {"id": number, "params": params})
        try:
            return await future
        finally:
            del self.questions[number]
            self.publish("elicit-done", {"id": number})

    def answer(self, body: Any) -> None:
        """A page's answer: ``{"id": n, "action": ..., "content": {...}}``."""
        if type(body) is not dict or type(body.get("id")) is not int:
            raise AnswerError(400, "id must be the integer of an open elicitation")
        entry = self.questions.get(body["id"])
        if entry is None or entry[1].done():
            raise AnswerError(404, f"no open elicitation {body['id']}")
        action = body.get("action")
        if action not in ("accept", "decline", "cancel"):
            raise AnswerError(400, "action must be 'accept', 'decline' or 'cancel'")
        result: dict[str, Any] = {"action": action}
        if action == "accept" and entry[0].get("mode") != "url":
            content = body.get("content")
            if type(content) is not dict:
                raise AnswerError(400, "an accepted form elicitation carries a content object")
            result["content"] = content
        entry[1].set_result(result)

    # -- the wire --------------------------------------------------------------------------

    def _now(self) -> float:
        return round((self.clock() - self.start) * 1000, 3)

    def on_wire(self, way: str, data: bytes) -> None:
        """The client's ``on_wire`` hook: record, check and publish one envelope."""
        direction: Literal["c2s", "s2c"] = "c2s" if way == "send" else "s2c"
        t = self._now()
        checked = self.checker.check_line(direction, bytes(data))
        kind, method, id_ = _kind(checked["msg"])
        elapsed = None
        if kind in ("request",):
            self.sent_at[(direction, type(id_) is str, id_)] = t
        elif kind in ("response", "error"):
            asked = "s2c" if direction == "c2s" else "c2s"
            at = self.sent_at.pop((asked, type(id_) is str, id_), None)
            if at is not None:
                elapsed = round(t - at, 3)
        record: Record = {
            "seq": next(self.seq),
            "channel": "client-server",
            "direction": direction,
            "sender": "client" if direction == "c2s" else "server",
            "receiver": "server" if direction == "c2s" else "client",
            "t_ms": t,
            "elapsed_ms": elapsed,
            "method": method,
            "kind": kind,
            "id": id_,
            "text": bytes(data).decode("utf-8", "replace").rstrip("\r\n"),
            "problems": checked["problems"],
            "session": self.session,
        }
        self.records.append(record)
        self.publish("wire", record)

    def on_view_wire(self, body: Any) -> list[Record]:
        """The postMessage envelopes the page's host bridge saw, in order: a list of
        ``{"view", "direction", "text", "sender"?, "age_ms"?}`` (``age_ms``: how long ago the page saw it)."""
        if type(body) is not list or not body:
            raise AnswerError(400, "the body is a non-empty list of envelopes")
        for item in body:
            if type(item) is not dict:
                raise AnswerError(400, "each envelope is an object")
            self._view_fields(item)
        return [self._view_record(item) for item in body]

    def _view_fields(self, body: dict[str, Any]) -> None:
        view, direction, text, sender = body.get("view"), body.get("direction"), body.get("text"), body.get("sender", "")
        if type(view) is not int or view < 1:
            raise AnswerError(400, "view must be the page's positive integer of the view")
        if direction not in ("v2h", "h2v"):
            raise AnswerError(400, "direction must be 'v2h' or 'h2v'")
        if type(text) is not str:
            raise AnswerError(400, "text must be the envelope as JSON text")
        if sender not in ("", "sandbox"):
            raise AnswerError(400, "sender is 'sandbox' or absent")
        age = body.get("age_ms", 0)
        if type(age) not in (int, float) or not 0 <= age <= 600000:
            raise AnswerError(400, "age_ms is a number of milliseconds, 0 to 600000")

    def _view_record(self, body: dict[str, Any]) -> Record:
        view, direction, text, sender = body["view"], body["direction"], body["text"], body.get("sender", "")
        checker = self.view_checkers.get(view)
        if checker is None:
            checker = self.view_checkers[view] = ViewChecker()
            while len(self.view_checkers) > VIEWS:
                del self.view_checkers[next(iter(self.view_checkers))]
        t = round(self._now() - body.get("age_ms", 0), 3)
        checked = checker.check_line(direction, text.encode(), sender)
        kind, method, id_ = _kind(checked["msg"])
        elapsed = None
        key = (f"{view}:{direction}", type(id_) is str, id_)
        if kind == "request":
            self.sent_at[key] = t
        elif kind in ("response", "error"):
            at = self.sent_at.pop((f"{view}:{'h2v' if direction == 'v2h' else 'v2h'}", type(id_) is str, id_), None)
            if at is not None:
                elapsed = round(t - at, 3)
        view_side = sender or "view"
        record: Record = {
            "seq": next(self.seq),
            "channel": "view-host",
            "direction": direction,
            "sender": view_side if direction == "v2h" else "host",
            "receiver": "host" if direction == "v2h" else view_side,
            "t_ms": t,
            "elapsed_ms": elapsed,
            "method": method,
            "kind": kind,
            "id": id_,
            "text": text,
            "problems": checked["problems"],
            "session": self.session,
            "view": view,
        }
        self.records.append(record)
        self.publish("wire", record)
        return record

    # -- page streams ----------------------------------------------------------------------

    def subscribe(self) -> asyncio.Queue[Event | None]:
        """A new page stream: a reset, the state, the history, the open questions, then what comes."""
        # the replay does not count against the QUEUE events that may wait after it
        queue: asyncio.Queue[Event | None] = asyncio.Queue(QUEUE + len(self.records) + len(self.questions) + 2)
        queue.put_nowait(("reset", {"history": len(self.records)}))
        queue.put_nowait(("state", self.state))
        for record in self.records:
            queue.put_nowait(("wire", record))
        for number, (params, future) in self.questions.items():
            if not future.done():
                queue.put_nowait(("elicit", {"id": number, "params": params}))
        self.streams.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Event | None]) -> None:
        self.streams.discard(queue)

    def publish(self, name: str, data: Any) -> None:
        for queue in list(self.streams):
            if queue.qsize() >= queue.maxsize - 1:
                self._end(queue)  # too slow: it reconnects and gets the history again
            else:
                queue.put_nowait((name, data))

    def _end(self, queue: asyncio.Queue[Event | None]) -> None:
        self.streams.discard(queue)
        try:
            queue.put_nowait(None)
        except asyncio.QueueFull:
            queue.get_nowait()
            queue.put_nowait(None)


def _describe(exc: BaseException, client: Client | None) -> str:
    url = getattr(getattr(client, "transport", None), "url", None)
    text = (unreachable(exc, url) if isinstance(url, str) else None) or str(exc) or type(exc).__name__
    stderr_text = getattr(getattr(client, "transport", None), "stderr_text", None)
    if callable(stderr_text):
        tail = str(stderr_text()).strip()
        if tail and tail not in text:
            text += "\nserver stderr:\n" + tail[-4000:]
    return text


def encode_event(name: str, data: Any) -> bytes:
    """One Server-Sent Event (orjson writes no newline, so one ``data:`` line holds it)."""
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"
