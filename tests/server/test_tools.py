"""Tool definitions, results, structured output and content blocks.

Spec: server/tools.mdx ("Tool", "Tool Names", "x-mcp-header", "Tool Result",
"Structured Content", "Output Schema", "Error Handling"); basic/index.mdx
("icons", "_meta", "JSON Schema Usage"); server/resources.mdx ("Annotations");
conformance FIXTURES.md 2.1 and 3.2 (the content fixtures and
json-schema-2020-12). Every tool definition is checked against ``Tool`` and
every result against ``CallToolResult`` from schema.json (2026-07-28).
"""

import asyncio
import base64
import dataclasses
import functools
import importlib.util
import logging
import sys
from typing import Annotated, Any, Optional, TypedDict

import orjson
import pytest

import wiremcp
from conftest import SERVERS, call, request, wiremcp_cmd
from schema_check import check, handle
from wiremcp import Content, Field, Header, ToolError, ToolResult
from wiremcp.jsonrpc import InvalidParams
from wiremcp.server import (
    ImageContent,
    SchemaError,
    Tool,
    audio,
    embedded_resource,
    image,
    resource_link,
    text,
)
from wiremcp.server._mrtr import InputRequired

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def run_tool(tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call a tool in-process; the result is checked against CallToolResult."""
    out = tool.call(arguments, None)
    if not isinstance(out, dict):
        out = asyncio.run(_wait(out))
    return check("CallToolResult", out)


async def _wait(pending: Any) -> Any:
    return await pending


def make(fn: Any, **options: Any) -> Tool:
    tool = Tool(fn, **options)
    check("Tool", tool.definition)
    return tool


# -- definitions --------------------------------------------------------------------


def test_definition_fields():
    """tools.mdx, Tool: name, title, description, inputSchema, outputSchema, annotations, icons, _meta."""

    class Weather(TypedDict):
        temperature: float

    def get_weather(location: Annotated[str, "City name or zip code"]) -> Weather:
        """Get current weather information for a location."""
        return {"temperature": 1.0}

    tool = make(
        get_weather,
        title="Weather Information Provider",
        annotations={"title": "Weather", "readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True},
        icons=[{"src": "https://example.com/weather-icon.png", "mimeType": "image/png", "sizes": ["48x48", "any"], "theme": "dark"}],
        meta={"com.example/owner": "team-a", "plain": 1},
    )
    assert tool.definition == {
        "name": "get_weather",
        "title": "Weather Information Provider",
        "description": "Get current weather information for a location.",
        "inputSchema": {
            "type": "object",
            "properties": {"location": {"type": "string", "description": "City name or zip code"}},
            "required": ["location"],
            "additionalProperties": False,
        },
        "outputSchema": {"type": "object", "properties": {"temperature": {"type": "number"}}, "required": ["temperature"]},
        "annotations": {"title": "Weather", "readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True},
        "icons": [{"src": "https://example.com/weather-icon.png", "mimeType": "image/png", "sizes": ["48x48", "any"], "theme": "dark"}],
        "_meta": {"com.example/owner": "team-a", "plain": 1},
    }


def test_no_parameters_is_the_recommended_closed_object():
    """tools.mdx, Schema Examples: no parameters → {"type": "object", "additionalProperties": false}."""

    def now() -> str:
        return "12:00"

    schema = make(now).definition["inputSchema"]
    assert schema == {"type": "object", "properties": {}, "additionalProperties": False}
    assert run_tool(make(now), {})["content"] == [{"type": "text", "text": "12:00"}]


def test_explicit_input_schema_is_published_verbatim():
    """FIXTURES 3.2, json-schema-2020-12: $schema, $defs, $anchor, allOf, if/then/else pass through."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"city": {"type": "string"}}}},
        "properties": {"address": {"$ref": "#addressDef"}, "n": {"type": "integer"}},
        "allOf": [{"anyOf": [{"required": ["n"]}, {"required": ["address"]}]}],
        "if": {"required": ["n"]},
        "then": {"properties": {"n": {"minimum": 1}}},
        "additionalProperties": False,
    }

    def tool_fn(**arguments: Any) -> str:
        return orjson.dumps(arguments).decode()

    tool = make(tool_fn, input_schema=schema)
    assert tool.definition["inputSchema"] is schema
    assert run_tool(tool, {"n": 2})["content"][0]["text"] == '{"n":2}'  # arguments arrive as JSON, unconverted
    for bad, fragment in (({}, "required"), ({"n": 0}, "at least 1"), ({"address": {"city": 3}}, "'address.city'"), ({"x": 1}, "'x' is not an accepted argument")):
        result = run_tool(tool, bad)
        assert result["isError"] is True and fragment in result["content"][0]["text"], (bad, result)


def test_input_schema_must_be_an_object_schema():
    with pytest.raises(ValueError, match="type"):
        Tool(lambda: "", name="t", input_schema={"type": "array"})
    with pytest.raises(SchemaError, match="dialect"):
        Tool(lambda: "", name="t", input_schema={"type": "object", "$schema": "http://json-schema.org/draft-04/schema#"})
    with pytest.raises(SchemaError, match="never fetched"):
        Tool(lambda: "", name="t", input_schema={"type": "object", "properties": {"a": {"$ref": "https://evil.example/s.json"}}})


@pytest.mark.parametrize("name", ["getUser", "DATA_EXPORT_v2", "admin.tools.list", "a", "x" * 128])
def test_good_tool_names_do_not_warn(name, caplog):
    with caplog.at_level(logging.WARNING, "wiremcp.server"):
        Tool(lambda: "", name=name)
    assert not caplog.records


@pytest.mark.parametrize("name", ["has space", "comma,name", "x" * 129, "ünïcode", "slash/name"])
def test_odd_tool_names_warn_but_register(name, caplog):
    """tools.mdx, Tool Names: SHOULD rules → a logged warning, not a refusal."""
    with caplog.at_level(logging.WARNING, "wiremcp.server"):
        tool = Tool(lambda: "", name=name)
    assert tool.name == name
    assert "Tool Names" in caplog.text


def test_empty_or_non_string_name_is_refused():
    with pytest.raises(ValueError):
        Tool(lambda: "", name="")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Tool(lambda: "", name=3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "annotations, error, fragment",
    [
        ({"readonlyHint": True}, ValueError, "unknown tool annotation"),
        ({"read_only_hint": True}, ValueError, "did you mean 'readOnlyHint'"),
        ({"readOnlyHint": "yes"}, TypeError, "must be a bool"),
        ({"destructiveHint": 1}, TypeError, "must be a bool"),
        ({"title": 5}, TypeError, "must be a str"),
        (["readOnlyHint"], TypeError, "dict"),
    ],
)
def test_annotations_are_checked(annotations, error, fragment):
    """schema.json, ToolAnnotations: known keys with their JSON types."""
    with pytest.raises(error, match=fragment):
        Tool(lambda: "", name="t", annotations=annotations)


@pytest.mark.parametrize(
    "icon, fragment",
    [
        ({"src": "http://example.com/i.png"}, "https: URL or a data: URI"),
        ({"src": "javascript:alert(1)"}, "https: URL or a data: URI"),
        ({"src": "file:///etc/passwd"}, "https: URL or a data: URI"),
        ({"src": "https://"}, "https: URL"),
        ({"src": "data:image/png,rawbytes"}, "base64"),
        ({"mimeType": "image/png"}, "src is required"),
        ({"src": "https://e.com/i.png", "sizes": "48x48"}, "sizes"),
        ({"src": "https://e.com/i.png", "sizes": ["48"]}, "sizes"),
        ({"src": "https://e.com/i.png", "theme": "blue"}, "theme"),
        ({"src": "https://e.com/i.png", "mimeType": "png"}, "mimeType"),
        ({"src": "https://e.com/i.png", "size": ["1x1"]}, "unknown keys"),
    ],
)
def test_icons_are_checked(icon, fragment):
    """basic/index.mdx, icons: https: or data: URIs only (clients MUST reject others)."""
    with pytest.raises((ValueError, TypeError), match=fragment):
        Tool(lambda: "", name="t", icons=[icon])


def test_data_uri_icon_is_accepted():
    data = "data:image/png;base64," + base64.b64encode(PNG).decode()
    tool = make(lambda: "", name="t", icons=[{"src": data, "sizes": ["1x1"]}])
    assert tool.definition["icons"] == [{"src": data, "sizes": ["1x1"]}]


@pytest.mark.parametrize("key", ["bad key", "-lead", "com.example/-x", "1com/x", "a..b/x", 5])
def test_malformed_meta_keys_are_refused(key):
    """basic/index.mdx, _meta: prefix labels and name syntax."""
    with pytest.raises(ValueError, match="malformed"):
        Tool(lambda: "", name="t", meta={key: 1})


def test_reserved_meta_prefix_warns(caplog):
    with caplog.at_level(logging.WARNING, "wiremcp.server"):
        tool = make(lambda: "", name="t", meta={"io.modelcontextprotocol/thing": 1, "com.example.mcp/ok": 2})
    assert "reserved" in caplog.text and "io.modelcontextprotocol/thing" in caplog.text
    assert "com.example.mcp/ok" not in caplog.text  # the second label is 'example': not reserved
    assert tool.definition["_meta"] == {"io.modelcontextprotocol/thing": 1, "com.example.mcp/ok": 2}


def test_header_problems_are_registration_errors():
    """tools.mdx, x-mcp-header: violations are a ValueError when the tool is registered."""

    def number(rate: Annotated[float, Header("Rate")]) -> str:
        return ""

    with pytest.raises(ValueError, match="not 'number'"):
        Tool(number)

    def nested(items: list[Annotated[str, Header("Item")]]) -> str:
        return ""

    with pytest.raises(ValueError, match="statically reachable"):
        Tool(nested)

    def twice(a: Annotated[str, Header("Region")], b: Annotated[str, Field(header="REGION")]) -> str:
        return ""

    with pytest.raises(ValueError, match="case-insensitive"):
        Tool(twice)

    with pytest.raises(ValueError, match="token"):
        Tool(lambda: "", name="t", input_schema={"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A B"}}})


def test_header_from_hints():
    def run_sql(region: Annotated[str, Header("Region"), "The region"], shard: Annotated[int, Field(header="Shard")] = 0, query: str = "") -> str:
        return region

    props = make(run_sql).definition["inputSchema"]["properties"]
    assert props["region"] == {"type": "string", "x-mcp-header": "Region", "description": "The region"}
    assert props["shard"]["x-mcp-header"] == "Shard" and props["shard"]["maximum"] == 2**53 - 1


def test_server_tool_decorator_options():
    server = wiremcp.Server("t")

    @server.tool(name="renamed", title="T", description="explicit", structured_output=False)
    def f(a: int) -> dict[str, int]:
        """Docstring loses to description=."""
        return {"a": a}

    tool = server.tools["renamed"]
    assert tool.definition["description"] == "explicit" and "outputSchema" not in tool.definition
    listed = handle(server, "tools/list")
    check("ListToolsResult", listed)
    assert listed["tools"] == [tool.definition]


# -- results: unstructured ---------------------------------------------------------------


def test_plain_returns():
    """tools.mdx, Tool Result: str, None, content blocks, lists mixing them, JSON values."""

    def f(kind: str) -> Any:
        return {
            "str": "hello",
            "none": None,
            "block": image(PNG, "image/png"),
            "blocks": [text("a"), "b", embedded_resource("test://r", text="x")],
            "json": {"a": [1, 2]},
            "list": ["a", "b"],
        }[kind]

    tool = make(f)
    assert "outputSchema" not in tool.definition  # Any: no structured output
    assert run_tool(tool, {"kind": "str"})["content"] == [{"type": "text", "text": "hello"}]
    assert run_tool(tool, {"kind": "none"})["content"] == []
    assert run_tool(tool, {"kind": "block"})["content"][0]["type"] == "image"
    assert [b["type"] for b in run_tool(tool, {"kind": "blocks"})["content"]] == ["text", "text", "resource"]
    assert run_tool(tool, {"kind": "json"})["content"] == [{"type": "text", "text": '{"a":[1,2]}'}]
    assert run_tool(tool, {"kind": "list"})["content"] == [{"type": "text", "text": '["a","b"]'}]


def test_unsendable_returns_are_tool_errors(caplog):
    """A value that cannot become a result is a tool execution error, logged as a server bug."""

    def raw() -> Any:
        return b"\x89PNG"

    def odd() -> Any:
        return object()

    with caplog.at_level(logging.ERROR, "wiremcp.server"):
        result = run_tool(make(raw), {})
        assert result["isError"] is True and "wiremcp.image()" in result["content"][0]["text"]
        result = run_tool(make(odd), {})
        assert result["isError"] is True and "cannot be sent as JSON" in result["content"][0]["text"]
    assert "returned a result it cannot send" in caplog.text


def test_errors_are_results():
    """tools.mdx, Error Handling: ToolError and exceptions → isError: true; invalid input too."""

    def f(n: Annotated[int, Field(ge=0)]) -> str:
        if n == 1:
            raise ToolError("Invalid departure date: must be in the future.")
        if n == 2:
            raise KeyError("boom")
        return "ok"

    tool = make(f)
    assert run_tool(tool, {"n": 1}) == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "Invalid departure date: must be in the future."}],
        "isError": True,
    }
    # issue 16 (error masking): an unexpected exception's text stays in the server log by default
    masked = run_tool(tool, {"n": 2})["content"][0]["text"]
    assert masked == "Error in tool 'f': an internal error occurred (the details are in the server's log)"
    assert "boom" not in masked
    assert "KeyError: 'boom'" in tool.call({"n": 2}, None, mask=False)["content"][0]["text"]  # type: ignore[index]
    bad = run_tool(tool, {"n": -1})
    assert bad["isError"] is True and bad["content"][0]["text"] == "Invalid arguments for tool 'f': 'n' must be at least 0"


def test_protocol_errors_and_input_required_pass_through():
    """JSONRPCError stays a protocol error; InputRequired (a BaseException) reaches Server.handle."""

    def asks() -> str:
        raise InputRequired({"k": {"method": "elicitation/create", "params": {}}})

    def refuses() -> str:
        raise InvalidParams("nope")

    async def asks_later() -> dict[str, int]:
        raise InputRequired({"k": {"method": "elicitation/create", "params": {}}})

    with pytest.raises(InputRequired):
        Tool(asks).call({}, None)
    with pytest.raises(InvalidParams):
        Tool(refuses).call({}, None)
    with pytest.raises(InputRequired):
        asyncio.run(_wait(Tool(asks_later).call({}, None)))


def test_tool_result_whole():
    def f() -> ToolResult:
        return ToolResult([text("a"), "b"], is_error=True, meta={"com.example/x": 1})

    tool = make(f)
    assert "outputSchema" not in tool.definition
    assert run_tool(tool, {}) == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        "isError": True,
        "_meta": {"com.example/x": 1},
    }

    def g() -> ToolResult:
        return ToolResult(structured_content={"k": (1, 2)})

    # content left out: the structured JSON becomes the text block (tools.mdx, Structured Content)
    assert run_tool(make(g), {}) == {
        "resultType": "complete",
        "content": [{"type": "text", "text": '{"k":[1,2]}'}],
        "structuredContent": {"k": [1, 2]},
    }

    def h() -> ToolResult:
        return ToolResult([{"not": "a block"}])

    assert run_tool(make(h), {})["isError"] is True


# -- results: structured -------------------------------------------------------------------


@dataclasses.dataclass
class User:
    id: str
    name: str


def test_object_return_is_structured_content_plus_text():
    """tools.mdx, Structured Content: structuredContent and the same JSON as a text block."""

    class Weather(TypedDict):
        temperature: float
        conditions: str

    def weather() -> Weather:
        return {"temperature": 22.5, "conditions": "Partly cloudy"}

    assert run_tool(make(weather), {}) == {
        "resultType": "complete",
        "content": [{"type": "text", "text": '{"temperature":22.5,"conditions":"Partly cloudy"}'}],
        "structuredContent": {"temperature": 22.5, "conditions": "Partly cloudy"},
    }


@pytest.mark.parametrize(
    "hint, value, structured, text_",
    [
        (list[User], [User("1", "A")], {"result": [{"id": "1", "name": "A"}]}, '[{"id":"1","name":"A"}]'),
        (int, 42, {"result": 42}, "42"),
        (bool, False, {"result": False}, "false"),
        (Optional[User], None, {"result": None}, "null"),
        (tuple[int, str], (1, "a"), {"result": [1, "a"]}, '[1,"a"]'),
        (set[int], {3}, {"result": [3]}, "[3]"),
        (User, User("2", "B"), {"id": "2", "name": "B"}, '{"id":"2","name":"B"}'),
        (dict[str, int], {"a": 1}, {"a": 1}, '{"a":1}'),
    ],
)
def test_structured_returns(hint, value, structured, text_):
    """Non-object returns are wrapped under "result" (the official SDKs' convention)."""

    def f():
        return value

    f.__annotations__["return"] = hint
    tool = make(f)
    result = run_tool(tool, {})
    assert result["structuredContent"] == structured
    assert result["content"] == [{"type": "text", "text": text_}]
    assert tool._output_check(result["structuredContent"]) is None


def test_async_structured_tool():
    async def users() -> list[User]:
        await asyncio.sleep(0)
        return [User("1", "A")]

    assert run_tool(make(users), {})["structuredContent"] == {"result": [{"id": "1", "name": "A"}]}


def test_output_that_breaks_its_schema_is_a_tool_error(caplog):
    """tools.mdx, Output Schema: servers MUST conform, so a non-conforming result is never sent."""

    class Weather(TypedDict):
        temperature: float

    def weather() -> Weather:
        return {"temperature": "hot"}  # type: ignore[typeddict-item]

    with caplog.at_level(logging.ERROR, "wiremcp.server"):
        result = run_tool(make(weather), {})
    assert result["isError"] is True and "structuredContent" not in result
    assert result["content"][0]["text"] == (
        "Error in tool 'weather': the result does not match the tool's outputSchema: "
        "'temperature' must be number, not a string"
    )
    assert "weather" in caplog.text


def test_output_options():
    def f(n: int) -> Any:
        return list(range(n))

    tool = make(f, output_schema={"type": "array", "items": {"type": "integer"}})
    # an explicit schema is used as given (2026-07-28 allows any root; nothing is wrapped)
    assert run_tool(tool, {"n": 3})["structuredContent"] == [0, 1, 2]

    def g() -> dict[str, int]:
        return {"a": 1}

    assert "outputSchema" not in make(g, structured_output=False).definition
    with pytest.raises(ValueError, match="contradict"):
        Tool(g, output_schema={"type": "object"}, structured_output=False)

    def h() -> str:
        return ""

    with pytest.raises(ValueError, match="structured_output=True"):
        Tool(h, structured_output=True)
    with pytest.raises(SchemaError):
        Tool(h, output_schema={"type": "object", "properties": {"a": {"$ref": "#/nope"}}})


def test_structured_tool_returning_a_tool_result():
    def total(values: list[int]) -> dict[str, int]:
        if not values:
            return ToolResult(["nothing to add"], is_error=True)  # type: ignore[return-value]
        if len(values) == 1:
            return ToolResult(["no structure"])  # type: ignore[return-value]
        if len(values) == 2:
            return ToolResult(structured_content={"total": "x"})  # type: ignore[return-value]
        return ToolResult([text("sum")], structured_content={"total": sum(values)})  # type: ignore[return-value]

    tool = make(total, output_schema={"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]})
    assert run_tool(tool, {"values": [1, 2, 3]}) == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "sum"}],
        "structuredContent": {"total": 6},
    }
    assert run_tool(tool, {"values": []})["content"] == [{"type": "text", "text": "nothing to add"}]
    assert "has no structured_content" in run_tool(tool, {"values": [1]})["content"][0]["text"]
    assert "does not match" in run_tool(tool, {"values": [1, 2]})["content"][0]["text"]


def test_content_annotations_mean_no_output_schema():
    def one() -> ImageContent:
        return image(PNG, "image/png")

    def many() -> list[Content]:
        return [text("a"), image(PNG, "image/png")]

    for fn in (one, many):
        tool = make(fn)
        assert "outputSchema" not in tool.definition
        assert "structuredContent" not in run_tool(tool, {})


def test_pydantic_in_and_out():
    pydantic = pytest.importorskip("pydantic")

    class Person(pydantic.BaseModel):
        name: str
        age: int = pydantic.Field(ge=0)

    def grow(p: Person) -> Person:
        assert isinstance(p, Person)
        return Person(name=p.name, age=p.age + 1)

    tool = make(grow)
    assert tool.definition["outputSchema"]["properties"]["age"]["minimum"] == 0
    result = run_tool(tool, {"p": {"name": "a", "age": 1}})
    assert result["structuredContent"] == {"name": "a", "age": 2}
    assert run_tool(tool, {"p": {"name": "a", "age": -1}})["isError"] is True


def test_pydantic_stays_optional():
    """wiremcp never imports pydantic itself: registering and calling typed tools leaves it out."""
    import subprocess

    code = (
        "import sys, dataclasses, typing, wiremcp\n"
        "@dataclasses.dataclass\nclass P:\n    x: int\n"
        "s = wiremcp.Server('x')\n"
        "@s.tool()\ndef f(p: P, n: typing.Annotated[int, wiremcp.Field(ge=0)] = 1) -> list[P]:\n    return [p]\n"
        "assert s.tools['f'].call({'p': {'x': 1}}, None)['structuredContent'] == {'result': [{'x': 1}]}\n"
        "assert 'pydantic' not in sys.modules and 'annotated_types' not in sys.modules, 'imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


# -- content helpers ------------------------------------------------------------------------


def test_content_helpers_match_the_spec_schema():
    """tools.mdx, Tool Result: text, image, audio, resource_link, embedded resource, annotations."""
    blocks = [
        text("hi"),
        text("hi", annotations={"audience": ["user", "assistant"], "priority": 1}, meta={"com.example/k": 1}),
        image(PNG, "image/png", annotations={"priority": 0.9}),
        image(base64.b64encode(PNG).decode(), "image/png"),
        audio(b"RIFF....WAVE", "audio/wav"),
        resource_link("file:///project/src/main.rs", "main.rs", title="Main", description="Entry point", mime_type="text/x-rust", size=12),
        resource_link("https://example.com/r", "r", icons=[{"src": "https://example.com/i.png"}]),
        embedded_resource("file:///a.txt", text="fn main() {}", mime_type="text/x-rust", annotations={"lastModified": "2025-05-03T14:30:00Z"}),
        embedded_resource("test://blob", blob=b"\x00\x01", mime_type="application/octet-stream"),
    ]
    for block in blocks:
        check("ContentBlock", block)
    assert blocks[2]["data"] == base64.b64encode(PNG).decode()
    assert blocks[8]["resource"] == {"uri": "test://blob", "mimeType": "application/octet-stream", "blob": "AAE="}
    assert blocks[7]["annotations"] == {"lastModified": "2025-05-03T14:30:00Z"}


def test_last_modified_from_a_datetime():
    import datetime

    when = datetime.datetime(2025, 1, 12, 15, 0, 58, tzinfo=datetime.timezone.utc)
    assert text("x", annotations={"lastModified": when})["annotations"] == {"lastModified": "2025-01-12T15:00:58+00:00"}
    with pytest.raises(ValueError, match="timezone"):
        text("x", annotations={"lastModified": datetime.datetime(2025, 1, 1)})


@pytest.mark.parametrize(
    "make_block, error",
    [
        (lambda: text(3), TypeError),  # type: ignore[arg-type]
        (lambda: image("not base64!", "image/png"), ValueError),
        (lambda: image(PNG, ""), TypeError),
        (lambda: audio(3, "audio/wav"), TypeError),  # type: ignore[arg-type]
        (lambda: embedded_resource("test://x"), TypeError),
        (lambda: embedded_resource("test://x", text="a", blob=b"b"), TypeError),
        (lambda: resource_link("", "n"), TypeError),
        (lambda: resource_link("test://x", "n", size=-1), TypeError),
        (lambda: text("x", annotations={"audience": ["robot"]}), ValueError),
        (lambda: text("x", annotations={"priority": 2}), ValueError),
        (lambda: text("x", annotations={"colour": "red"}), ValueError),
    ],
)
def test_content_helpers_refuse_bad_input(make_block, error):
    with pytest.raises(error):
        make_block()


# -- end to end: a real `wiremcp run` over stdio ------------------------------------------------

@functools.cache
def load_toolbox() -> Any:
    spec = importlib.util.spec_from_file_location("toolbox_server", SERVERS / "toolbox.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]  # dataclasses and get_type_hints look it up
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_toolbox_in_process():
    """The toolbox server's definitions and a call of each no-argument tool, in-process."""
    module = load_toolbox()
    listed = check("ListToolsResult", handle(module.server, "tools/list"))
    assert len(listed["tools"]) == len(module.server.tools)
    for definition in listed["tools"]:
        check("Tool", definition)
        if not definition["inputSchema"].get("required"):
            check("CallToolResult", handle(module.server, "tools/call", {"name": definition["name"], "arguments": {}}))


@pytest.fixture
def toolbox(spawn):
    return spawn(*wiremcp_cmd("run", str(SERVERS / "toolbox.py")))


def result_of(peer, message) -> dict[str, Any]:
    reply = peer.ask(message)
    assert "result" in reply, reply
    return check("CallToolResult", reply["result"]) if message["method"] == "tools/call" else reply["result"]


@pytest.mark.slow
def test_e2e_tools_list_definitions_are_valid(toolbox):
    """tools.mdx, Listing Tools: every definition is a valid Tool; hand-written schemas pass verbatim."""
    JSON_SCHEMA_2020_12 = load_toolbox().JSON_SCHEMA_2020_12
    listed = toolbox.ask(request(1, "tools/list"))["result"]
    check("ListToolsResult", listed)
    tools = {t["name"]: t for t in listed["tools"]}
    for definition in tools.values():
        check("Tool", definition)
        assert definition["inputSchema"]["type"] == "object"
    assert tools["json_schema_2020_12_tool"]["inputSchema"] == JSON_SCHEMA_2020_12
    assert tools["test_x_mcp_header"]["inputSchema"]["properties"]["region"]["x-mcp-header"] == "Region"
    weather = tools["get_weather_data"]
    assert weather["outputSchema"]["required"] == ["temperature", "conditions"]  # NotRequired under PEP 563
    assert tools["list_users"]["outputSchema"]["properties"]["result"]["type"] == "array"
    assert "outputSchema" not in tools["test_simple_text"] and "outputSchema" not in tools["plain_dict"]
    link = tools["find_link"]
    assert link["title"] == "Link finder" and link["annotations"]["readOnlyHint"] is True
    assert link["icons"][0]["src"].startswith("https://") and link["_meta"] == {"com.example/category": "links"}
    assert tools["tree_sum"]["inputSchema"]["properties"]["node"] == {"$ref": "#/$defs/Node"}


@pytest.mark.slow
def test_e2e_conformance_content_fixtures(toolbox):
    """FIXTURES.md 2.1: the content tools as the conformance suite checks them."""
    simple = result_of(toolbox, request(1, "tools/call", {"name": "test_simple_text"}))  # no arguments key at all
    assert simple["content"][0]["type"] == "text" and simple["content"][0]["text"]
    img = result_of(toolbox, call(2, "test_image_content"))["content"][0]
    assert img["type"] == "image" and img["mimeType"] == "image/png" and base64.b64decode(img["data"]) == PNG
    snd = result_of(toolbox, call(3, "test_audio_content"))["content"][0]
    assert snd["type"] == "audio" and snd["mimeType"] == "audio/wav" and base64.b64decode(snd["data"]).startswith(b"RIFF")
    res = result_of(toolbox, call(4, "test_embedded_resource"))["content"][0]
    assert res["type"] == "resource" and res["resource"]["uri"] == "test://embedded-resource"
    assert res["resource"]["mimeType"] == "text/plain" and res["resource"]["text"]
    mixed = result_of(toolbox, call(5, "test_multiple_content_types"))["content"]
    assert [b["type"] for b in mixed] == ["text", "image", "resource"]
    error = result_of(toolbox, call(6, "test_error_handling"))
    assert error["isError"] is True and error["content"][0]["text"]


@pytest.mark.slow
def test_e2e_json_schema_2020_12_tool(toolbox):
    """FIXTURES.md 3.2, json-schema-2020-12: $ref, allOf/anyOf, if/then/else enforced on calls."""
    ok = result_of(toolbox, call(1, "json_schema_2020_12_tool", {"name": "Ann", "contactMethod": "phone", "phone": "1", "address": {"street": "s", "city": "c"}}))
    assert ok["content"][0]["text"] == "contact Ann by phone" and "isError" not in ok
    for i, (arguments, fragment) in enumerate(
        [
            ({"name": "Ann"}, "'phone' is required"),
            ({"name": "Ann", "contactMethod": "phone", "email": "e"}, "'phone' is required"),
            ({"name": "Ann", "phone": "1"}, "'email' is required"),
            ({"name": "Ann", "email": "e", "address": {"street": "s"}}, "'address.city' is required"),
            ({"name": "", "email": "e"}, "'name' must be at least 1 character long"),
            ({"name": "Ann", "email": "e", "extra": 1}, "'extra' is not an accepted argument"),
        ]
    ):
        result = result_of(toolbox, call(10 + i, "json_schema_2020_12_tool", arguments))
        assert result["isError"] is True and fragment in result["content"][0]["text"], (arguments, result)


@pytest.mark.slow
def test_e2e_structured_output(toolbox):
    """tools.mdx, Structured Content / Output Schema, over the wire."""
    weather = result_of(toolbox, call(1, "get_weather_data", {"location": "Paris"}))
    assert weather["structuredContent"]["temperature"] == 22.5
    assert orjson.loads(weather["content"][0]["text"]) == weather["structuredContent"]
    users = result_of(toolbox, call(2, "list_users", {"limit": 1}))
    assert users["structuredContent"] == {"result": [{"id": "1", "name": "Alice", "email": "alice@example.com"}]}
    assert result_of(toolbox, call(3, "count", {"items": ["a", "b"]}))["structuredContent"] == {"result": 2}
    broken = result_of(toolbox, call(4, "broken_weather"))
    assert broken["isError"] is True and "outputSchema" in broken["content"][0]["text"] and "structuredContent" not in broken
    plain = result_of(toolbox, call(5, "plain_dict"))
    assert plain == {"resultType": "complete", "content": [{"type": "text", "text": '{"a":1}'}], "_meta": plain["_meta"]}
    assert result_of(toolbox, call(6, "squares", {"n": 3}))["structuredContent"] == [0, 1, 4]
    total = result_of(toolbox, call(7, "total", {"values": [1, 2]}))
    assert total["structuredContent"] == {"total": 3} and total["content"] == [{"type": "text", "text": "total is 3"}]
    assert total["_meta"]["com.example/n"] == 2 and "io.modelcontextprotocol/serverInfo" in total["_meta"]
    invalid = result_of(toolbox, call(8, "list_users", {"limit": 11}))
    assert invalid["isError"] is True and "'limit' must be at most 10" in invalid["content"][0]["text"]


@pytest.mark.slow
def test_e2e_conversions(toolbox):
    """Arguments arrive as the declared Python types."""
    seen = result_of(
        toolbox,
        call(1, "describe", {"shape": "circle", "size": [2, 3], "tags": ["b", "a"], "when": "2024-02-03", "ident": "12345678-1234-5678-1234-567812345678", "blob": "aGk="}),
    )["structuredContent"]
    assert seen == {
        "shape": "Shape.CIRCLE",
        "size": ["tuple", 2, 3],
        "tags": ["set", "a", "b"],
        "when": ["date", "2024-02-03"],
        "ident": ["UUID", "12345678-1234-5678-1234-567812345678"],
        "blob": ["bytes", "hi"],
        "mode": "fast",
        "scale": None,
    }
    bad_date = result_of(toolbox, call(2, "describe", {"shape": "circle", "size": [1, 1], "tags": [], "when": "tomorrow", "ident": "12345678-1234-5678-1234-567812345678"}))
    assert bad_date["isError"] is True and "'when'" in bad_date["content"][0]["text"]
    dup = result_of(toolbox, call(3, "describe", {"shape": "circle", "size": [1, 1], "tags": ["a", "a"], "when": "2024-02-03", "ident": "x"}))
    assert dup["isError"] is True and "'tags' must not repeat items" in dup["content"][0]["text"]
    tree = {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}
    assert result_of(toolbox, call(4, "tree_sum", {"node": tree}))["structuredContent"] == {"result": 6}
    bad_tree = result_of(toolbox, call(5, "tree_sum", {"node": {"value": 1, "children": [{"value": "2"}]}}))
    assert "'node.children[0].value' must be integer" in bad_tree["content"][0]["text"]


@pytest.mark.slow
def test_e2e_links_headers_and_pydantic(toolbox):
    link, picture = result_of(toolbox, call(1, "find_link", {"name": "main.rs"}))["content"]
    assert link == {"type": "resource_link", "uri": "file:///project/main.rs", "name": "main.rs", "description": "A project file", "mimeType": "text/plain"}
    assert picture["annotations"] == {"audience": ["user"], "priority": 0.9}
    assert result_of(toolbox, call(2, "test_x_mcp_header", {"region": "us-west1", "query": "SELECT 1"}))["content"][0]["text"] == "us-west1: SELECT 1"
    pytest.importorskip("pydantic")
    person = {"name": "ada lovelace", "age": 36, "address": {"street": "St James's Square", "zip": "12345"}}
    result = result_of(toolbox, call(3, "register_person", {"person": person}))
    assert result["structuredContent"]["name"] == "Ada Lovelace"
    bad = result_of(toolbox, call(4, "register_person", {"person": {**person, "address": {"street": "x", "zip": "1"}}}))
    assert bad["isError"] is True and "'person.address.zip' must match the pattern" in bad["content"][0]["text"]
