"""Issue 16 in process: decorators both ways, registration errors, settings, typed forms, masking rules."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import enum
import logging
import threading
from typing import Annotated, Any, Literal, TypedDict

import pytest

from schema_check import handle, wire_error
from conftest import META
from wiremcp import Context, Elicit, Resolve, Server, ToolError
from wiremcp.jsonrpc import Request
from wiremcp.server import Field, SchemaError
from wiremcp.server._elicit import Elicited, form_for
from wiremcp.server._workers import Workers

# -- 2. decorators ----------------------------------------------------------------


def test_tool_decorator_with_and_without_parentheses_returns_the_function() -> None:
    server = Server("t")

    @server.tool
    def bare(x: int) -> int:
        return x

    @server.tool()
    def called(x: int) -> int:
        return x

    @server.tool("renamed", inline=True)
    def named(x: int) -> int:
        return x

    assert list(server.tools) == ["bare", "called", "renamed"]
    assert bare(1) == 1 and called(2) == 2 and named(3) == 3  # each name still the function
    assert server.tools["renamed"].threaded is False and server.tools["bare"].threaded is True


def test_prompt_and_resource_decorators() -> None:
    server = Server("t")

    @server.prompt
    def p1() -> str:
        return "a"

    @server.prompt("p-two")
    def p2() -> str:
        return "b"

    @server.resource("mem://x", inline=True)
    def x() -> str:
        return "x"

    assert list(server.prompts) == ["p1", "p-two"] and p1() == "a"
    assert list(server.resources) == ["mem://x"] and x() == "x"


@pytest.mark.parametrize(
    ("register", "message"),
    [
        (lambda s: s.tool(42), "takes the tool's name as a string"),
        (lambda s: s.tool()(42), "decorates a function"),
        (lambda s: s.tool("n")("not callable"), "decorates a function"),
        (lambda s: s.prompt()(None), "decorates a function"),
        (lambda s: s.resource(lambda: "x"), "needs the resource's URI"),
        (lambda s: s.resource("")(lambda: "x"), "needs the resource's URI"),
        (lambda s: s.resource("mem://a")(3), "decorates a function"),
        (lambda s: s.complete(lambda v: []), "needs to know what it completes"),
    ],
)
def test_decorator_misuse_is_a_clear_error_at_registration(register: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        register(Server("t"))


def test_duplicate_names_are_refused() -> None:
    server = Server("t")

    @server.tool
    def f() -> str:
        return ""

    with pytest.raises(ValueError, match="already registered"):
        server.tool(name="f")(lambda: "")
    server.prompt(f)
    with pytest.raises(ValueError, match="already registered"):
        server.prompt(f)
    server.resource("mem://a")(f)
    with pytest.raises(ValueError, match="already registered"):
        server.resource("mem://a")(f)


# -- 1. threads -----------------------------------------------------------------------


def test_sync_handlers_run_in_worker_threads_and_inline_ones_on_the_loop() -> None:
    server = Server("t")
    seen: dict[str, str] = {}

    @server.tool
    def threaded() -> str:
        seen["tool"] = threading.current_thread().name
        return "ok"

    @server.tool(inline=True)
    def inline() -> str:
        seen["inline"] = threading.current_thread().name
        return "ok"

    @server.resource("mem://r")
    def r() -> str:
        seen["resource"] = threading.current_thread().name
        return "r"

    @server.prompt
    def p(topic: str) -> str:
        seen["prompt"] = threading.current_thread().name
        return topic

    @server.complete(prompt="p", argument="topic")
    def topics(value: str) -> list[str]:
        seen["completer"] = threading.current_thread().name
        return ["a"]

    handle(server, "tools/call", {"name": "threaded", "arguments": {}})
    handle(server, "tools/call", {"name": "inline", "arguments": {}})
    assert handle(server, "resources/read", {"uri": "mem://r"})["contents"][0]["text"] == "r"
    assert handle(server, "prompts/get", {"name": "p", "arguments": {"topic": "x"}})["messages"][0]["content"]["text"] == "x"
    completion = handle(server, "completion/complete", {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "topic", "value": ""}})
    assert completion["completion"]["values"] == ["a"]
    assert seen["inline"] == threading.current_thread().name
    for kind in ("tool", "resource", "prompt", "completer"):
        assert seen[kind].startswith("wiremcp-worker"), kind


def test_progress_from_a_worker_thread_is_sent_on_the_loop() -> None:
    server = Server("t")
    sent: list[tuple[str, str]] = []

    @server.tool
    def slow(ctx: Context) -> str:
        ctx.report_progress(1, 2)
        return "done"

    async def main() -> Any:
        loop_thread = threading.current_thread().name

        def emit(method: str, params: dict[str, Any]) -> None:
            sent.append((method, threading.current_thread().name))
            assert threading.current_thread().name == loop_thread

        params = {"name": "slow", "arguments": {}, "_meta": {**META, "progressToken": "t1"}}
        return await server.handle(Request(1, "tools/call", params), emit)  # type: ignore[misc]

    assert asyncio.run(main())["content"][0]["text"] == "done"
    assert [m for m, _ in sent] == ["notifications/progress"]


def test_the_pool_is_bounded_and_refuses_a_bad_size() -> None:
    with pytest.raises(ValueError):
        Workers(0)
    pool = Workers(2)
    active: list[int] = []
    peak = [0]
    lock = threading.Lock()
    release = threading.Event()

    def work() -> None:
        with lock:
            active.append(1)
            peak[0] = max(peak[0], len(active))
        release.wait(10)
        with lock:
            active.pop()

    async def main() -> None:
        tasks = [asyncio.ensure_future(pool.run(work, {})) for _ in range(5)]
        while len(active) < 2:  # the two threads are busy
            await asyncio.sleep(0.001)
        release.set()
        await asyncio.gather(*tasks)

    asyncio.run(main())
    pool.shutdown(wait=True)
    assert peak[0] == 2


def test_a_queued_call_never_waits_behind_a_blocked_thread_while_the_pool_has_room() -> None:
    """A blocks until B runs: B must get a thread of its own (a pool of two), every time."""
    pool = Workers(2)

    async def main() -> list[str]:
        out: list[str] = []
        for _ in range(50):
            gate = threading.Event()
            def opens(gate: threading.Event = gate) -> str:
                gate.set()
                return "b"

            a = asyncio.ensure_future(pool.run(lambda: "a" if gate.wait(10) else "stuck", {}))
            b = asyncio.ensure_future(pool.run(opens, {}))
            out += await asyncio.gather(a, b)
        return out

    assert asyncio.run(main()) == ["a", "b"] * 50
    pool.shutdown(wait=True)


# -- 7. masking -------------------------------------------------------------------------


def _failing_server(**options: Any) -> Server:
    server = Server("t", **options)

    @server.tool
    def boom() -> str:
        raise RuntimeError("secret-token-123")

    @server.resource("mem://boom")
    def boom_resource() -> str:
        raise RuntimeError("secret-token-123")

    @server.resource("mem://bad-return")
    def bad_return() -> Any:
        return 42

    @server.prompt
    def boom_prompt() -> str:
        raise RuntimeError("secret-token-123")

    @server.prompt
    async def told(name: str) -> str:
        raise ToolError(f"no prompt for {name}")

    @server.complete(prompt="told", argument="name")
    def names(value: str) -> list[str]:
        raise KeyError("secret-token-123")

    return server


def test_masking_is_the_default_for_every_kind_of_handler(caplog: pytest.LogCaptureFixture) -> None:
    server = _failing_server()
    with caplog.at_level(logging.ERROR, logger="wiremcp.server"):
        tool = handle(server, "tools/call", {"name": "boom", "arguments": {}})
        resource = wire_error(server, "resources/read", {"uri": "mem://boom"})
        bad = wire_error(server, "resources/read", {"uri": "mem://bad-return"})
        prompt = wire_error(server, "prompts/get", {"name": "boom_prompt"})
        completer = wire_error(server, "completion/complete", {"ref": {"type": "ref/prompt", "name": "told"}, "argument": {"name": "name", "value": ""}})
    generic = "an internal error occurred (the details are in the server's log)"
    assert tool["isError"] is True and tool["content"][0]["text"] == f"Error in tool 'boom': {generic}"
    assert resource == {"code": -32603, "message": f"Error in resource 'mem://boom': {generic}"}
    assert bad == {"code": -32603, "message": f"Error in resource 'mem://bad-return': {generic}"}
    assert prompt == {"code": -32603, "message": f"Error in prompt 'boom_prompt': {generic}"}
    assert completer == {"code": -32603, "message": f"Error in completer 'name of told': {generic}"}
    assert wire_error(server, "prompts/get", {"name": "told", "arguments": {"name": "x"}}) == {
        "code": -32603,
        "message": "no prompt for x",
    }
    logged = "\n".join(r.getMessage() + str(r.exc_info[1] if r.exc_info else "") for r in caplog.records)
    assert logged.count("secret-token-123") == 4  # each full exception is in the server's log


def test_mask_errors_false_shows_every_message() -> None:
    server = _failing_server(mask_errors=False)
    tool = handle(server, "tools/call", {"name": "boom", "arguments": {}})
    assert tool["content"][0]["text"] == "Error in tool 'boom': RuntimeError: secret-token-123"
    assert wire_error(server, "resources/read", {"uri": "mem://boom"})["message"] == (
        "Error in resource 'mem://boom': RuntimeError: secret-token-123"
    )


# -- 9. settings ------------------------------------------------------------------------


def test_settings_come_from_arguments_then_environment_then_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = Server("t")
    assert (plain.workers.size, plain.mask_errors, plain.list_ttl_ms, plain.page_size, plain.legacy) == (40, True, 60_000, None, True)
    monkeypatch.setenv("WIREMCP_THREADS", "3")
    monkeypatch.setenv("WIREMCP_MASK_ERRORS", "off")
    monkeypatch.setenv("WIREMCP_LIST_TTL_MS", "5")
    monkeypatch.setenv("WIREMCP_PAGE_SIZE", "7")
    monkeypatch.setenv("WIREMCP_LEGACY", "no")
    monkeypatch.setenv("WIREMCP_MAX_SUBSCRIPTIONS", "9")
    monkeypatch.setenv("WIREMCP_STATE_TTL", "12.5")
    monkeypatch.setenv("WIREMCP_CLIENT_TIMEOUT", "4")
    env = Server("t")
    assert (env.workers.size, env.mask_errors, env.list_ttl_ms, env.page_size, env.legacy) == (3, False, 5, 7, False)
    assert (env.max_subscriptions, env.state_sealer.ttl, env.client_request_timeout) == (9, 12.5, 4.0)
    given = Server("t", threads=8, mask_errors=True, list_ttl_ms=0, page_size=2, legacy=True)
    assert (given.workers.size, given.mask_errors, given.list_ttl_ms, given.page_size, given.legacy) == (8, True, 0, 2, True)


@pytest.mark.parametrize(
    ("variable", "value"),
    [("WIREMCP_THREADS", "many"), ("WIREMCP_MASK_ERRORS", "maybe"), ("WIREMCP_LOG_LEVEL", "LOUD"), ("WIREMCP_THREADS", "0")],
)
def test_a_bad_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch, variable: str, value: str) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError, match=variable if value != "0" else "at least one thread"):
        Server("t")


def test_log_level_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    logger = logging.getLogger("wiremcp")
    before = logger.level
    try:
        monkeypatch.setenv("WIREMCP_LOG_LEVEL", "debug")
        Server("t")
        assert logger.level == logging.DEBUG
        Server("t", log_level="ERROR")
        assert logger.level == logging.ERROR
    finally:
        logger.setLevel(before)


# -- 4. typed forms ------------------------------------------------------------------------


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Booking:
    guest: Annotated[str, Field(min_length=1, description="Full name")]
    nights: Annotated[int, Field(ge=1, le=30)]
    day: datetime.date
    colour: Colour = Colour.RED
    extras: list[Literal["breakfast", "parking"]] = dataclasses.field(default_factory=list)
    note: str | None = None
    vip: bool = False


def test_form_from_a_dataclass_is_the_spec_subset() -> None:
    form = form_for(Booking)
    assert form.schema == {
        "type": "object",
        "properties": {
            "guest": {"type": "string", "description": "Full name", "minLength": 1},
            "nights": {"type": "integer", "minimum": 1, "maximum": 30},
            "day": {"type": "string", "format": "date"},
            "colour": {"enum": ["red", "blue"], "type": "string", "default": "red"},
            "extras": {"type": "array", "items": {"enum": ["breakfast", "parking"], "type": "string"}},
            "note": {"type": "string"},
            "vip": {"type": "boolean", "default": False},
        },
        "required": ["guest", "nights", "day"],
    }
    answer = form.result({"action": "accept", "content": {"guest": "Ada", "nights": 2, "day": "2026-12-24", "colour": "blue"}})
    assert answer == Elicited("accept", Booking("Ada", 2, datetime.date(2026, 12, 24), Colour.BLUE))
    assert form.result({"action": "decline"}) == Elicited("decline")
    assert not form.result({"action": "cancel"}).accepted


def test_forms_from_typeddicts_pydantic_and_primitives() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Contact(TypedDict):
        email: str
        age: int

    class Model(pydantic.BaseModel):  # type: ignore[misc, name-defined]
        city: str
        zip: int = 0

    assert form_for(Contact).schema["required"] == ["email", "age"]
    assert form_for(Contact).result({"action": "accept", "content": {"email": "a@b", "age": 3}}).value == {"email": "a@b", "age": 3}
    model = form_for(Model).result({"action": "accept", "content": {"city": "Oslo"}}).value
    assert isinstance(model, Model) and (model.city, model.zip) == ("Oslo", 0)
    assert form_for(bool).schema == {"type": "object", "properties": {"value": {"type": "boolean"}}, "required": ["value"]}
    assert form_for(Colour).result({"action": "accept", "content": {"value": "blue"}}).value is Colour.BLUE


@dataclasses.dataclass
class Nested:
    booking: Booking


@dataclasses.dataclass
class Patterned:
    code: Annotated[str, Field(pattern="^[A-Z]+$")]


@pytest.mark.parametrize(
    ("hint", "message"),
    [
        (Nested, "field 'booking': a nested object"),
        (Patterned, "field 'code': the keyword pattern"),
        (list[int], "a list may only hold a string Literal or Enum"),
        (dict[str, int], "a nested object"),
        (Literal[1, 2], "an enum's values must be strings"),
        (int | str, "a union of several types"),
    ],
)
def test_what_elicitation_cannot_ask_for_is_a_schema_error(hint: Any, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        form_for(hint)


def test_an_elicit_input_of_a_type_elicitation_cannot_ask_for_fails_at_registration() -> None:
    server = Server("t")
    with pytest.raises(SchemaError, match="parameter 'n'.*nested object"):

        @server.tool
        def f(n: Annotated[Nested, Elicit("?")]) -> str:
            return ""


def test_a_declined_input_with_a_default_gets_the_default() -> None:
    server = Server("t")

    @server.tool
    def greet(name: Annotated[str, Elicit("Name?")] = "stranger") -> str:
        return f"hi {name}"

    caps = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    first = handle(server, "tools/call", {"name": "greet", "arguments": {}}, meta=caps)
    assert first["resultType"] == "input_required"
    done = handle(
        server,
        "tools/call",
        {"name": "greet", "arguments": {}, "requestState": first["requestState"], "inputResponses": {"name": {"action": "decline"}}},
        meta=caps,
    )
    assert done["content"][0]["text"] == "hi stranger"


def test_declared_inputs_need_the_client_capability() -> None:
    server = Server("t")

    @server.tool
    def needs(colour: Annotated[str, Resolve(lambda ctx: "red")], name: Annotated[str, Elicit("Name?")]) -> str:
        return name

    error = wire_error(server, "tools/call", {"name": "needs", "arguments": {}})
    assert error["code"] == -32021 and error["data"]["requiredCapabilities"] == {"elicitation": {}}


def test_an_elicited_parameter_gets_the_whole_outcome() -> None:
    server = Server("t")

    @server.tool
    def rsvp(answer: Annotated[Elicited[bool], Elicit("Coming?")]) -> str:
        return f"{answer.action}: {answer.value}"

    caps = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    first = handle(server, "tools/call", {"name": "rsvp", "arguments": {}}, meta=caps)
    assert first["inputRequests"]["answer"]["params"]["requestedSchema"]["properties"] == {"value": {"type": "boolean"}}
    for response, text in (
        ({"action": "accept", "content": {"value": True}}, "accept: True"),
        ({"action": "decline"}, "decline: None"),
        ({"action": "cancel"}, "cancel: None"),
    ):
        params = {"name": "rsvp", "arguments": {}, "requestState": first["requestState"], "inputResponses": {"answer": response}}
        assert handle(server, "tools/call", params, meta=caps)["content"][0]["text"] == text
