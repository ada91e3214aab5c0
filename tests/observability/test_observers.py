"""Observers (``protocol/observers.py``): the server and the client tell them about each request,
notification and 2025-11-25 session, over real transports (docs/architecture.md, "Observers").

The server is ``tests/servers/observed.py`` run by ``wiremcp run`` in its own
process (stdio, and HTTP on loopback), with a recording observer and a
middleware; the client records too. Checked: each request is started, then
answered once with its outcome, around the middleware; what a 2025-11-25
session answers itself is observed as ``internal`` without the middleware;
a notification is observed where it is acted on and where it is sent; the
``_meta`` an observer adds on the client reaches the server; a session
opens and closes once; and a middleware added while serving raises.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from wiremcp import Client
from wiremcp.client import RemoteError
from wiremcp.protocol.observers import ObservedNotification, ObservedRequest, ObservedSession, Observer, around_notification

ROOT = Path(__file__).resolve().parent.parent.parent
SERVER = str(ROOT / "tests" / "servers" / "observed.py")
CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "WIREMCP_"))}


class ClientRecorder(Observer):
    """What the client tells: requests (adding a tag to their ``_meta``), notifications, the session."""

    def __init__(self) -> None:
        self.events: list[list[Any]] = []

    def request_started(self, request: ObservedRequest) -> Any:
        assert request.meta is not None
        request.meta["test/tag"] = f"client-{request.method}"
        return request.method

    def request_answered(
        self, request: ObservedRequest, started: Any, result: dict[str, Any] | None, error: BaseException | None
    ) -> None:
        outcome = "ok" if error is None else getattr(error, "code", type(error).__name__)
        self.events.append(["request", started, type(request.id).__name__, outcome, request.version])

    def notification_started(self, note: ObservedNotification) -> Any:
        assert note.meta is not None
        note.meta["test/tag"] = "client-note"
        return note.method

    def notification_ended(self, note: ObservedNotification, started: Any, error: BaseException | None) -> None:
        self.events.append(["notification", started, error is None])

    def session_opened(self, session: ObservedSession) -> None:
        self.events.append(["opened", session.version, session.http])

    def session_closed(self, session: ObservedSession) -> None:
        self.events.append(["closed", session.version])


async def _exercise(client: Client) -> list[list[Any]]:
    """The calls both transports make; the server's events as the ``observed`` tool returns them."""
    assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
    assert (await client.call_tool("broken")).is_error
    with pytest.raises(RemoteError) as limited:
        await client.call_tool("limited")
    assert limited.value.code == -32029
    with pytest.raises(RemoteError) as missing:
        await client.request("no/such/method")
    assert missing.value.code == -32601
    client.notify("notifications/roots/list_changed")
    late = (await client.call_tool("late")).text
    assert late.startswith("RuntimeError: add_middleware(") and "register middleware and observers before serving" in late
    await asyncio.sleep(0.1)  # the notification has been acted on
    events: list[list[Any]] = (await client.call_tool("observed")).structured_content["events"]
    return events


def _requests(events: list[list[Any]]) -> list[tuple[str, Any]]:
    """(method, outcome) of each answered request, in order, after checking each was started once, just so."""
    started = {i + 1: event for i, event in enumerate(events) if event[0] == "started"}
    answered = []
    for event in events:
        if event[0] == "answered":
            _, method, id_, index, outcome, _ = event
            assert started.pop(index)[1:3] == [method, id_]  # the value request_started returned came back
            answered.append((method, outcome))
    assert not started  # every request started was answered
    return answered


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_server_and_client_observers_over_stdio(era: str) -> None:
    recorder = ClientRecorder()

    async def main() -> list[list[Any]]:
        client = Client.stdio(sys.executable, ["-m", "wiremcp", "run", SERVER], env=CLEAN, era=era)
        client.add_observer(recorder)
        async with client:
            return await _exercise(client)

    events = asyncio.run(main())
    served = [
        ("tools/call", "ok"), ("tools/call", "tool_error"), ("tools/call", -32029), ("no/such/method", -32601),
        ("tools/call", "ok"),  # late
    ]
    if era == "legacy":
        assert events[0] == ["opened", None, False]  # stdio: no session id
        assert events[1][:4] == ["started", "initialize", events[1][2], True]  # answered by the session itself
        assert events[2][1] == "initialize" and events[2][4:] == ["ok", "2025-11-25"]  # initialize settled it
        assert events[3:5] == [["notification", "notifications/initialized", None], ["notified", "notifications/initialized", True]]
        assert _requests(events) == [("initialize", "ok"), *served]
    else:
        assert _requests(events) == served
    # a handler's request: started, then the middleware, then answered (the middleware never sees initialize)
    echo = next(i for i, event in enumerate(events) if event[:2] == ["started", "tools/call"])
    assert events[echo + 1] == ["middleware", "tools/call"] and events[echo + 2][0] == "answered"
    middleware = ["tools/call"] * 3 + ["no/such/method", "tools/call", "tools/call"]  # ... late, observed
    assert [event[1] for event in events if event[0] == "middleware"] == middleware
    version = "2025-11-25" if era == "legacy" else "2026-07-28"
    assert {event[5] for event in events if event[0] == "started" and event[1] != "initialize"} == {version}
    assert ["notification", "notifications/roots/list_changed", None] in events
    assert ["notified", "notifications/roots/list_changed", True] in events
    # the client: every request answered once, with its id and outcome; its notifications; its session
    requests = [event for event in recorder.events if event[0] == "request"]
    assert [event[1] for event in requests][-6:] == ["tools/call"] * 3 + ["no/such/method"] + ["tools/call"] * 2
    assert {event[2] for event in requests} == {"int"}
    assert [event[3] for event in requests][-6:-2] == ["ok", "ok", -32029, -32601]
    assert ["notification", "notifications/roots/list_changed", True] in recorder.events
    if era == "legacy":
        assert requests[0][1] == "initialize" and ["notification", "notifications/initialized", True] in recorder.events
        assert recorder.events[recorder.events.index(requests[0]) + 2] == ["opened", "2025-11-25", False]
        assert recorder.events[-1] == ["closed", "2025-11-25"]
    else:
        assert len(requests) == 6  # era="modern": no probe, no initialize
        assert not [event for event in recorder.events if event[0] in ("opened", "closed")]


def test_observed_meta_reaches_the_server() -> None:
    """What a client observer adds to ``_meta`` is sent: the server's observer reads it back."""

    class Tagged(Observer):
        def request_started(self, request: ObservedRequest) -> Any:
            assert request.meta is not None
            request.meta["test/tag"] = "from-the-client"

    async def main() -> Any:
        client = Client.stdio(sys.executable, ["-m", "wiremcp", "run", str(ROOT / "examples" / "echo.py")], env=CLEAN)
        client.add_observer(Tagged())
        wire: list[bytes] = []
        client.on_wire = lambda direction, data: wire.append(data) if direction == "send" else None
        async with client:
            await client.call_tool("echo", {"text": "x"})
        return wire

    sent = asyncio.run(main())
    assert any(b'"test/tag":"from-the-client"' in data and b'"tools/call"' in data for data in sent)


def test_a_legacy_session_over_http_opens_and_closes_once() -> None:
    pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")
    log_path = Path(tempfile.mkstemp(prefix="wiremcp-observed-", suffix=".log")[1])
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "wiremcp", "run", SERVER, "--http", "--port", "0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, cwd=ROOT, env=CLEAN,
        )
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", log_path.read_text(errors="replace"))):
            assert time.monotonic() < deadline and proc.poll() is None, log_path.read_text(errors="replace")
            time.sleep(0.05)
        url = found.group(1)

        async def main() -> tuple[str, list[list[Any]]]:
            async with Client.http(url, era="legacy") as legacy:
                assert (await legacy.call_tool("echo", {"text": "a"})).text == "a"
                session_id = legacy.transport.session_id  # type: ignore[attr-defined]
            await asyncio.sleep(0.2)  # the DELETE has been answered
            async with Client.http(url, era="modern") as modern:
                return session_id, (await modern.call_tool("observed")).structured_content["events"]

        session_id, events = asyncio.run(main())
    finally:
        proc.terminate()
        proc.wait(10)
        log_path.unlink(missing_ok=True)
    assert type(session_id) is str
    assert [event for event in events if event[0] in ("opened", "closed")] == [
        ["opened", session_id, True], ["closed", session_id, "2025-11-25"]
    ]
    assert [event[4] for event in events if event[0] == "started" and event[1] == "tools/call"] == [session_id]


class Nesting(Observer):
    """Records the order of the notification hooks of several observers, and the error each end gets."""

    def __init__(self, name: str, log: list[Any]) -> None:
        self.name, self.log = name, log

    def notification_started(self, note: ObservedNotification) -> Any:
        self.log.append(("started", self.name))
        return self.name

    def notification_ended(self, note: ObservedNotification, started: Any, error: BaseException | None) -> None:
        self.log.append(("ended", started, type(error).__name__ if error is not None else None))


def test_around_notification_nests_the_hooks_as_with_blocks() -> None:
    """The one helper both sides call (server/_pipeline.py, client/_observing.py): started in order,
    ended in reverse with the value each started returned, the act's result handed back, and an
    exception from the act given to every end, then raised; no event loop needed."""
    log: list[Any] = []
    observers = [Nesting("a", log), Nesting("b", log)]
    note = ObservedNotification("notifications/roots/list_changed", {})
    assert around_notification(observers, note, lambda: log.append(("act",)) or 42) == 42
    assert log == [("started", "a"), ("started", "b"), ("act",), ("ended", "b", None), ("ended", "a", None)]

    log.clear()

    def fail() -> None:
        raise ConnectionResetError("gone")

    with pytest.raises(ConnectionResetError):
        around_notification(observers, note, fail)
    assert log == [("started", "a"), ("started", "b"), ("ended", "b", "ConnectionResetError"), ("ended", "a", "ConnectionResetError")]
    assert around_notification([], note, lambda: "alone") == "alone"
