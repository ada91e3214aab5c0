"""Prompts: in-process rules, then end to end over stdio.

Spec: server/prompts.mdx (Capabilities, Listing Prompts, Getting a Prompt,
Data Types: Prompt, PromptMessage, Text/Image/Audio Content, Resource Links,
Embedded Resources; Error Handling), server/utilities/pagination.mdx,
server/utilities/caching.mdx (prompts/list is cacheable),
basic/patterns/mrtr.mdx (prompts/get may need input), conformance/FIXTURES.md
section 2.3. Every result is validated against schema.json (ListPromptsResult,
GetPromptResult).
"""

from __future__ import annotations

import base64
import enum
from typing import Annotated, Any, Iterator, Literal

import pytest

import wiremcp
from conftest import META, SERVERS, StdioPeer, request, wiremcp_cmd
from schema_check import check, handle, wire_error
from wiremcp import Context, Server
from wiremcp.server import DEFAULT_LIST_TTL_MS

SERVER_INFO = "io.modelcontextprotocol/serverInfo"
PNG = b"\x89PNG\r\n\x1a\n"


def make(**options: Any) -> Server:
    return Server("prompts", version="2.0", **options)


def get(server: Server, name: str, arguments: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return check("GetPromptResult", handle(server, "prompts/get", params, **options))


# -- capabilities --------------------------------------------------------------------------


def test_no_prompts_no_capability_and_methods_not_found():
    """prompts.mdx, Capabilities; FIXTURES.md 1: advertised capabilities match reality."""
    server = make()
    assert "prompts" not in handle(server, "server/discover")["capabilities"]
    assert wire_error(server, "prompts/list")["code"] == -32601
    assert wire_error(server, "prompts/get", {"name": "x"})["code"] == -32601


def test_capability_follows_registration_and_removal():
    server = make()
    server.add_prompt(lambda: "hi", name="hi")
    assert handle(server, "server/discover")["capabilities"]["prompts"] == {"listChanged": True}
    server.remove_prompt("hi")
    assert "prompts" not in handle(server, "server/discover")["capabilities"]
    assert wire_error(server, "prompts/list")["code"] == -32601


# -- listing ---------------------------------------------------------------------------------


def test_list_with_arguments_from_the_signature():
    """prompts.mdx, Listing Prompts: name, title, description, arguments (name, description, required), icons."""
    server = make()
    icons = [{"src": "https://example.com/review-icon.svg", "mimeType": "image/svg+xml", "sizes": ["any"]}]

    @server.prompt(title="Request Code Review", icons=icons, meta={"k": 1})
    def code_review(
        code: Annotated[str, "The code to review"],
        style: Annotated[str, {"title": "Style guide", "description": "Which guide"}] = "pep8",
        strict: bool = False,
        ctx: Context | None = None,
    ) -> str:
        """Asks the LLM to analyze code quality and suggest improvements"""
        return code

    @server.prompt("plain")
    def no_doc_no_args() -> str:
        return "x"

    result = check("ListPromptsResult", handle(server, "prompts/list"))
    assert result["prompts"] == [
        {
            "name": "code_review",
            "title": "Request Code Review",
            "description": "Asks the LLM to analyze code quality and suggest improvements",
            "arguments": [
                {"name": "code", "description": "The code to review", "required": True},
                {"name": "style", "title": "Style guide", "description": "Which guide", "required": False},
                {"name": "strict", "required": False},
            ],
            "icons": icons,
            "_meta": {"k": 1},
        },
        {"name": "plain"},
    ]
    assert result["resultType"] == "complete" and result["_meta"][SERVER_INFO]["name"] == "prompts"


def test_list_caching_hints_and_pagination():
    """caching.mdx: prompts/list carries ttlMs/cacheScope on every page; pagination.mdx: nextCursor."""
    server = make(page_size=2, list_ttl_ms=600_000)
    for i in range(3):
        server.add_prompt(lambda: "x", name=f"p{i}")
    first = check("ListPromptsResult", handle(server, "prompts/list"))
    assert [p["name"] for p in first["prompts"]] == ["p0", "p1"]
    assert (first["ttlMs"], first["cacheScope"]) == (600_000, "public")
    second = check("ListPromptsResult", handle(server, "prompts/list", {"cursor": first["nextCursor"]}))
    assert [p["name"] for p in second["prompts"]] == ["p2"] and "nextCursor" not in second
    assert (second["ttlMs"], second["cacheScope"]) == (600_000, "public")
    assert wire_error(server, "prompts/list", {"cursor": "bogus"})["code"] == -32602


# -- getting -----------------------------------------------------------------------------------


def test_get_simple_prompt():
    """prompts.mdx, Getting a Prompt; FIXTURES.md 2.3 test_simple_prompt: a str is one user text message."""
    server = make()

    @server.prompt()
    def test_simple_prompt() -> str:
        """A simple prompt."""
        return "This is a simple prompt for testing."

    result = get(server, "test_simple_prompt")
    assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}]
    assert result["description"] == "A simple prompt." and result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO] == {"name": "prompts", "version": "2.0"}
    assert "ttlMs" not in result  # prompts/get is not a cacheable result


def test_get_with_arguments():
    """FIXTURES.md 2.3 test_prompt_with_arguments: the values appear in the messages."""
    server = make()

    @server.prompt()
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    result = get(server, "test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "testValue2"})
    assert result["messages"][0]["content"]["text"] == "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
    assert "description" not in result


def test_messages_with_roles_images_audio_and_resources():
    """prompts.mdx, PromptMessage: user/assistant; text, image, audio, resource_link, embedded resource."""
    server = make()

    @server.prompt()
    def rich(resourceUri: str) -> list[Any]:
        return [
            wiremcp.user(wiremcp.embedded_resource(resourceUri, text="Resource content", mime_type="text/plain")),
            wiremcp.user(wiremcp.image(PNG, "image/png")),
            wiremcp.assistant(wiremcp.audio(b"RIFF", "audio/wav")),
            wiremcp.user(wiremcp.resource_link("file:///project/src/main.rs", "main.rs", mime_type="text/x-rust")),
            {"role": "assistant", "content": {"type": "text", "text": "raw dict"}},
            wiremcp.image(PNG, "image/png"),  # a bare content block is a user message
            "plain text",
        ]

    messages = get(server, "rich", {"resourceUri": "test://example-resource"})["messages"]
    assert messages[0] == {
        "role": "user",
        "content": {"type": "resource", "resource": {"uri": "test://example-resource", "mimeType": "text/plain", "text": "Resource content"}},
    }
    assert messages[1]["content"] == {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}
    assert messages[2]["role"] == "assistant" and messages[2]["content"]["mimeType"] == "audio/wav"
    assert messages[3]["content"]["type"] == "resource_link"
    assert messages[4] == {"role": "assistant", "content": {"type": "text", "text": "raw dict"}}
    assert messages[5]["role"] == "user" and messages[5]["content"]["type"] == "image"
    assert messages[6] == {"role": "user", "content": {"type": "text", "text": "plain text"}}


def test_a_single_message_and_a_full_result_dict():
    server = make()
    server.add_prompt(lambda: wiremcp.assistant("I am one message"), name="one", description="registered")
    server.add_prompt(
        lambda: {"description": "chosen at run time", "messages": ["a", wiremcp.assistant("b")]}, name="full", description="d"
    )
    one = get(server, "one")
    assert one["messages"] == [{"role": "assistant", "content": {"type": "text", "text": "I am one message"}}]
    assert one["description"] == "registered"
    full = get(server, "full")
    assert full["description"] == "chosen at run time" and len(full["messages"]) == 2


def test_message_helpers():
    assert wiremcp.user("hi") == {"role": "user", "content": {"type": "text", "text": "hi"}}
    assert wiremcp.server.message("assistant", "ok") == {"role": "assistant", "content": {"type": "text", "text": "ok"}}
    with pytest.raises(ValueError):
        wiremcp.server.message("system", "no")
    with pytest.raises(TypeError):
        wiremcp.user({"no": "type"})
    with pytest.raises(TypeError):
        wiremcp.user(3)  # type: ignore[arg-type]


class Tone(enum.Enum):
    FORMAL = "formal"
    CASUAL = "casual"


def test_arguments_are_converted_by_type_hint():
    server = make()

    @server.prompt()
    def typed(count: int, ratio: float, loud: bool, kind: Literal["a", "b"], tone: Tone, maybe: int | None = None) -> str:
        return repr((count, ratio, loud, kind, tone, maybe))

    result = get(server, "typed", {"count": "3", "ratio": "0.5", "loud": "true", "kind": "b", "tone": "casual", "maybe": "-1"})
    assert result["messages"][0]["content"]["text"] == repr((3, 0.5, True, "b", Tone.CASUAL, -1))
    for bad in ({"count": "three"}, {"ratio": "nan"}, {"loud": "maybe"}, {"kind": "c"}, {"tone": "angry"}):
        arguments = {"count": "3", "ratio": "0.5", "loud": "true", "kind": "b", "tone": "casual", **bad}
        error = wire_error(server, "prompts/get", {"name": "typed", "arguments": arguments})
        (key,) = bad
        assert error["code"] == -32602 and error["data"] == {"name": "typed", "argument": key}


def test_async_prompt_with_context():
    server = make()

    @server.prompt()
    async def whoami(ctx: Context, topic: str = "x") -> str:
        return f"{ctx.request_id} {ctx.method} {ctx.client_info['name']} {topic}"

    result = check("GetPromptResult", handle(server, "prompts/get", {"name": "whoami"}, id=77))
    assert result["messages"][0]["content"]["text"] == "77 prompts/get tests x"
    assert "ctx" not in str(handle(server, "prompts/list")["prompts"])


def test_kwargs_accept_extra_arguments():
    server = make()

    @server.prompt()
    def anything(first: str, **rest: str) -> str:
        return f"{first} {sorted(rest.items())}"

    assert get(server, "anything", {"first": "1", "b": "2"})["messages"][0]["content"]["text"] == "1 [('b', '2')]"


def test_bare_decorator():
    server = make()

    @server.prompt
    def bare() -> str:
        """Registered without parentheses."""
        return "ok"

    assert bare() == "ok"
    assert get(server, "bare")["messages"][0]["content"]["text"] == "ok"


# -- errors (prompts.mdx, Error Handling) ---------------------------------------------------------


@pytest.fixture
def greeter() -> Server:
    server = make()

    @server.prompt()
    def greet(name: str, greeting: str = "Hello") -> str:
        return f"{greeting}, {name}!"

    return server


def test_unknown_prompt(greeter):
    assert wire_error(greeter, "prompts/get", {"name": "nope"}) == {
        "code": -32602,
        "message": "Invalid params: unknown prompt 'nope'",
        "data": {"name": "nope"},
    }


def test_name_must_be_a_string(greeter):
    for params in ({}, {"name": 3}):
        assert wire_error(greeter, "prompts/get", params)["code"] == -32602


def test_missing_required_argument(greeter):
    for arguments in (None, {}, {"greeting": "Hi"}):
        params: dict[str, Any] = {"name": "greet"}
        if arguments is not None:
            params["arguments"] = arguments
        error = wire_error(greeter, "prompts/get", params)
        assert error["code"] == -32602 and error["data"] == {"name": "greet", "missing": ["name"]}
        check("InvalidParamsError", error)


def test_unknown_argument(greeter):
    error = wire_error(greeter, "prompts/get", {"name": "greet", "arguments": {"name": "a", "nmae": "b"}})
    assert error["code"] == -32602 and error["data"] == {"name": "greet", "argument": "nmae"}


def test_arguments_must_be_an_object_of_strings(greeter):
    for arguments in ([], "name=x", {"name": 5}, {"name": None}):
        assert wire_error(greeter, "prompts/get", {"name": "greet", "arguments": arguments})["code"] == -32602


def test_a_failing_prompt_is_an_internal_error(caplog):
    server = make()

    def broken() -> str:
        raise KeyError("secret")

    server.add_prompt(broken)
    server.add_prompt(lambda: 42, name="bad_return")
    server.add_prompt(lambda: {"role": "system", "content": {"type": "text", "text": "x"}}, name="bad_role")
    for name in ("broken", "bad_return", "bad_role"):
        error = wire_error(server, "prompts/get", {"name": name})
        assert error["code"] == -32603 and "secret" not in error["message"]


def test_registration_errors():
    server = make()
    server.add_prompt(lambda: "x", name="dup")
    with pytest.raises(ValueError, match="already registered"):
        server.add_prompt(lambda: "y", name="dup")

    def positional_only(a: str, /) -> str:
        return a

    with pytest.raises(TypeError, match="by keyword"):
        server.add_prompt(positional_only)

    def unsupported(a: bytes) -> str:
        return ""

    with pytest.raises(TypeError, match="cannot convert"):
        server.add_prompt(unsupported)
    with pytest.raises(KeyError):
        server.remove_prompt("never")


# -- multi round-trip: prompts/get may need input (mrtr.mdx; FIXTURES.md 3.4) -----------------------------------


def test_input_required_propagates_from_a_prompt():
    server = make()

    @server.prompt()
    async def test_input_required_result_prompt(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Context?", {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}, key="user_context"
        )
        return f"Context: {answer['content']['context']}"

    meta = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    first = check("InputRequiredResult", handle(server, "prompts/get", {"name": "test_input_required_result_prompt"}, meta=meta))
    assert list(first["inputRequests"]) == ["user_context"]
    retry = {
        "name": "test_input_required_result_prompt",
        "inputResponses": {"user_context": {"action": "accept", "content": {"context": "tests"}}},
        "requestState": first["requestState"],
    }
    done = check("GetPromptResult", handle(server, "prompts/get", retry, meta=meta))
    assert done["messages"][0]["content"]["text"] == "Context: tests"


# -- end to end over stdio (tests/servers/library.py) -----------------------------------------------------


@pytest.fixture(scope="module")
def library() -> Iterator[StdioPeer]:
    peer = StdioPeer(wiremcp_cmd("run", str(SERVERS / "library.py")))
    try:
        yield peer
    finally:
        peer.kill()


@pytest.mark.slow
def test_stdio_prompts_list(library):
    """FIXTURES.md 2.3: entries need name and description; page_size 2 paginates."""
    prompts: list[dict[str, Any]] = []
    pages: list[int] = []
    cursor = None
    while True:
        reply = library.ask(request("pl", "prompts/list", {} if cursor is None else {"cursor": cursor}))
        result = check("ListPromptsResult", reply["result"])
        assert result["ttlMs"] == DEFAULT_LIST_TTL_MS and result["cacheScope"] == "public"
        prompts += result["prompts"]
        pages.append(len(result["prompts"]))
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert pages == [2] * (len(prompts) // 2) + ([len(prompts) % 2] if len(prompts) % 2 else [])  # page_size=2
    assert [p["name"] for p in prompts] == [
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
        "code_review",
        "scaffold",
    ]
    assert all(p.get("description") for p in prompts)
    with_args = prompts[1]
    assert with_args["arguments"] == [
        {"name": "arg1", "description": "First test argument", "required": True},
        {"name": "arg2", "description": "Second test argument", "required": True},
    ]


@pytest.mark.slow
def test_stdio_get_simple_and_with_arguments(library):
    """FIXTURES.md 2.3: prompts-get-simple, prompts-get-with-args."""
    simple = check("GetPromptResult", library.ask(request(1, "prompts/get", {"name": "test_simple_prompt"}))["result"])
    assert simple["messages"] == [{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}]
    args = {"arg1": "testValue1", "arg2": "testValue2"}
    reply = library.ask(request(2, "prompts/get", {"name": "test_prompt_with_arguments", "arguments": args}))
    text = check("GetPromptResult", reply["result"])["messages"][0]["content"]["text"]
    assert "testValue1" in text and "testValue2" in text


@pytest.mark.slow
def test_stdio_get_embedded_resource_and_image(library):
    """FIXTURES.md 2.3: prompts-get-embedded-resource, prompts-get-with-image."""
    reply = library.ask(
        request(3, "prompts/get", {"name": "test_prompt_with_embedded_resource", "arguments": {"resourceUri": "test://example-resource"}})
    )
    first, second = check("GetPromptResult", reply["result"])["messages"]
    assert first["content"]["type"] == "resource"
    assert first["content"]["resource"]["uri"] == "test://example-resource"
    assert first["content"]["resource"]["mimeType"] == "text/plain" and first["content"]["resource"]["text"]
    assert second["content"]["type"] == "text"
    reply = library.ask(request(4, "prompts/get", {"name": "test_prompt_with_image"}))
    image, text = check("GetPromptResult", reply["result"])["messages"]
    assert image["content"]["type"] == "image" and image["content"]["mimeType"] == "image/png"
    assert base64.b64decode(image["content"]["data"]).startswith(b"\x89PNG") and text["content"]["type"] == "text"


@pytest.mark.slow
def test_stdio_async_prompt_description_and_context(library):
    reply = library.ask(request(5, "prompts/get", {"name": "code_review", "arguments": {"code": "x = 1", "language": "rust"}}))
    result = check("GetPromptResult", reply["result"])
    assert result["description"] == "Review of rust code"
    assert [m["role"] for m in result["messages"]] == ["user", "assistant"]
    reply = library.ask(request("sc", "prompts/get", {"name": "scaffold", "arguments": {"language": "python", "framework": "flask"}}))
    assert reply["result"]["messages"][0]["content"]["text"] == "Create a python project with flask (request sc)."


@pytest.mark.slow
def test_stdio_errors(library):
    """prompts.mdx, Error Handling: invalid prompt name, missing required arguments, invalid values: -32602."""
    unknown = library.ask(request("e1", "prompts/get", {"name": "nope"}))
    assert unknown["error"]["code"] == -32602 and unknown["id"] == "e1"
    missing = library.ask(request("e2", "prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": "x"}}))
    assert missing["error"]["code"] == -32602 and missing["error"]["data"]["missing"] == ["arg2"]
    invalid = library.ask(request("e3", "prompts/get", {"name": "code_review", "arguments": {"code": "x", "language": "cobol"}}))
    assert invalid["error"]["code"] == -32602 and invalid["error"]["data"]["argument"] == "language"
