"""`Inspector` in process (a `Client.memory` of the test server): records, timing, elicitations, page streams.

No HTTP here: what the page is sent, event by event, and what an answer must
hold before it reaches the server.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from web_server import server

import wiremcp
from wiremcp.cli._web import _session
from wiremcp.cli._web._session import AnswerError, Inspector


def inspector() -> Inspector:
    return Inspector(lambda on_wire, elicit: wiremcp.Client.memory(server, on_wire=on_wire, elicitation=elicit), target="memory")


async def next_event(queue: asyncio.Queue[Any], name: str) -> Any:
    while True:
        item = await asyncio.wait_for(queue.get(), 30)
        assert item is not None, f"the stream ended before {name!r}"
        if item[0] == name:
            return item[1]


def test_connecting_records_every_envelope_with_timing() -> None:
    async def main() -> None:
        inspect = inspector()
        await inspect.connect()
        try:
            methods = [(r["direction"], r["kind"], r["method"]) for r in inspect.records]
            assert methods == [
                ("c2s", "request", "server/discover"), ("s2c", "response", None),
                ("c2s", "request", "tools/list"), ("s2c", "response", None),
                ("c2s", "request", "resources/list"), ("s2c", "response", None),
                ("c2s", "request", "resources/templates/list"), ("s2c", "response", None),
                ("c2s", "request", "prompts/list"), ("s2c", "response", None),
            ]
            records = list(inspect.records)
            assert [r["seq"] for r in records] == list(range(1, 11))
            for asked, answered in zip(records[::2], records[1::2]):
                assert asked["id"] == answered["id"] and asked["elapsed_ms"] is None
                assert answered["elapsed_ms"] == pytest.approx(answered["t_ms"] - asked["t_ms"], abs=0.01)
            assert {r["channel"] for r in records} == {"client-server"}
            assert all(r["problems"] == [] for r in records)
            assert inspect.state["connected"] and [t["name"] for t in inspect.state["tools"]] == ["echo", "add", "hostile", "greet"]
        finally:
            await inspect.aclose()

    asyncio.run(main())


def test_an_elicitation_waits_for_a_valid_answer() -> None:
    async def main() -> None:
        inspect = inspector()
        await inspect.connect()
        stream = inspect.subscribe()
        try:
            call = asyncio.ensure_future(inspect.call({"kind": "tool", "name": "greet"}))
            asked = await next_event(stream, "elicit")
            assert asked["params"]["message"] == "Who are you?"
            assert set(asked["params"]["requestedSchema"]["properties"]) == {"name", "age"}
            number = asked["id"]
            for bad, status, message in (
                ({"id": number, "action": "maybe"}, 400, "action must be 'accept', 'decline' or 'cancel'"),
                ({"id": number, "action": "accept"}, 400, "an accepted form elicitation carries a content object"),
                ({"id": number + 1, "action": "decline"}, 404, f"no open elicitation {number + 1}"),
                ({"action": "decline"}, 400, "id must be the integer of an open elicitation"),
            ):
                with pytest.raises(AnswerError) as refused:
                    inspect.answer(bad)
                assert (refused.value.status, refused.value.message) == (status, message)
            assert not call.done()
            # a page that connects now is asked too
            late = inspect.subscribe()
            assert (await next_event(late, "elicit"))["id"] == number
            inspect.answer({"id": number, "action": "accept", "content": {"name": "Ada", "age": 36}})
            assert (await next_event(stream, "elicit-done")) == {"id": number}
            result = await call
            assert result["ok"] and result["result"]["content"][0]["text"] == "Hello, Ada (36)!"
            with pytest.raises(AnswerError):
                inspect.answer({"id": number, "action": "accept", "content": {}})
        finally:
            await inspect.aclose()

    asyncio.run(main())


def test_closing_cancels_open_questions_and_ends_the_streams() -> None:
    async def main() -> None:
        inspect = inspector()
        await inspect.connect()
        stream = inspect.subscribe()
        asked = asyncio.ensure_future(inspect.elicit({"message": "still there?", "requestedSchema": {"type": "object", "properties": {}}}))
        await next_event(stream, "elicit")
        await inspect.aclose()
        assert await asked == {"action": "cancel"}
        while (item := stream.get_nowait()) is not None:
            pass
        assert inspect.streams == set()

    asyncio.run(main())


def test_a_page_that_cannot_keep_up_is_disconnected_not_silently_short(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_session, "QUEUE", 8)

    async def main() -> None:
        inspect = inspector()
        await inspect.connect()  # 10 records: more than QUEUE, yet a new page gets them all ...
        try:
            replay = inspect.subscribe()
            names = [item[0] for item in (replay.get_nowait() for _ in range(replay.qsize())) if item is not None]
            assert names == ["reset", "state"] + ["wire"] * 10
        finally:
            await inspect.aclose()
        inspect = inspector()
        slow = inspect.subscribe()  # ... and a page that reads nothing is ended, with None last
        await inspect.connect()
        items = []
        while not slow.empty():
            items.append(slow.get_nowait())
        assert items[-1] is None and len(items) == slow.maxsize == 8 + 2  # QUEUE (and the reset, state) filled, then the end
        assert slow not in inspect.streams
        await inspect.aclose()

    asyncio.run(main())
