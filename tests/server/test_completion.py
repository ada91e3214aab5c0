"""Completion: in-process rules, then end to end over stdio.

Spec: server/utilities/completion.mdx (Capabilities, Requesting Completions,
Reference Types, Completion Results, Data Types, Error Handling),
conformance/FIXTURES.md section 2.4 (completion-complete). Every result is
validated against schema.json (CompleteResult).
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest

import wiremcp
from conftest import SERVERS, StdioPeer, request, wiremcp_cmd
from schema_check import check, handle, wire_error
from wiremcp import Completion, Context, Server

SERVER_INFO = "io.modelcontextprotocol/serverInfo"
LANGUAGES = ["python", "pytorch", "pyside", "rust", "go"]
FRAMEWORKS = {"python": ["flask", "fastapi", "django"], "rust": ["axum", "actix-web"]}


def complete(server: Server, ref: dict[str, Any], name: str, value: str, context: dict[str, str] | None = None, **options: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
    if context is not None:
        params["context"] = {"arguments": context}
    return check("CompleteResult", handle(server, "completion/complete", params, **options))


def prompt_ref(name: str) -> dict[str, str]:
    return {"type": "ref/prompt", "name": name}


def template_ref(uri: str) -> dict[str, str]:
    return {"type": "ref/resource", "uri": uri}


@pytest.fixture
def server() -> Server:
    server = Server("complete", version="3.0")

    @server.prompt()
    def code_review(language: str, framework: str = "", code: str = "") -> str:
        return code

    @server.resource("file:///logs/{name}{?lines}")
    def logs(name: str, lines: int = 0) -> str:
        return name

    @server.resource("test://static")
    def static() -> str:
        return ""

    @server.complete(prompt="code_review", argument="language")
    def languages(value: str) -> list[str]:
        return [v for v in LANGUAGES if v.startswith(value)]

    @server.complete(prompt="code_review", argument="framework")
    def frameworks(value: str, language: str = "") -> list[str]:
        return [v for v in FRAMEWORKS.get(language, []) if v.startswith(value)]

    @server.complete(template="file:///logs/{name}{?lines}", argument="name")
    async def log_names(value: str, ctx: Context) -> list[str]:
        return [f"{value}.log", f"{value}-{ctx.request_id}.log"]

    return server


# -- capability ------------------------------------------------------------------------------


def test_capability_only_with_a_completer():
    """completion.mdx, Capabilities; FIXTURES.md 2.4; -32601 when not declared (Error Handling)."""
    plain = Server("plain")
    plain.add_prompt(lambda a: a, name="p")
    assert "completions" not in handle(plain, "server/discover")["capabilities"]
    params = {"ref": prompt_ref("p"), "argument": {"name": "a", "value": ""}}
    assert wire_error(plain, "completion/complete", params)["code"] == -32601
    plain.add_completer(lambda value: ["x"], prompt="p", argument="a")
    assert handle(plain, "server/discover")["capabilities"]["completions"] == {}
    assert complete(plain, prompt_ref("p"), "a", "")["completion"] == {"values": ["x"]}
    plain.remove_completer(prompt="p", argument="a")
    assert "completions" not in handle(plain, "server/discover")["capabilities"]


# -- results ---------------------------------------------------------------------------------------


def test_prompt_argument(server):
    """completion.mdx, Requesting Completions (the first example)."""
    result = complete(server, prompt_ref("code_review"), "language", "py")
    assert result["completion"] == {"values": ["python", "pytorch", "pyside"]}
    assert result["resultType"] == "complete" and result["_meta"][SERVER_INFO]["name"] == "complete"


def test_context_arguments_reach_named_parameters(server):
    """completion.mdx: previous completions in context.arguments (the second example)."""
    assert complete(server, prompt_ref("code_review"), "framework", "fla", {"language": "python"})["completion"] == {
        "values": ["flask"]
    }
    assert complete(server, prompt_ref("code_review"), "framework", "fla")["completion"] == {"values": []}
    # context arguments the completer does not name are ignored
    assert complete(server, prompt_ref("code_review"), "language", "g", {"unrelated": "x"})["completion"] == {"values": ["go"]}


def test_template_variable_async_with_context(server):
    """completion.mdx, Reference Types: ref/resource names a URI template."""
    result = complete(server, template_ref("file:///logs/{name}{?lines}"), "name", "app", id="c7")
    assert result["completion"] == {"values": ["app.log", "app-c7.log"]}


def test_a_known_argument_without_completer_has_no_suggestions(server):
    """FIXTURES.md 2.4: values may be empty."""
    assert complete(server, prompt_ref("code_review"), "code", "x")["completion"] == {"values": []}
    assert complete(server, template_ref("file:///logs/{name}{?lines}"), "lines", "1")["completion"] == {"values": []}


def test_at_most_100_values_with_total_and_has_more():
    """completion.mdx, Completion Results: maximum 100 items, optional total, hasMore."""
    server = Server("many")
    server.add_prompt(lambda n: n, name="p")
    server.add_prompt(lambda n: n, name="q")
    server.add_prompt(lambda n: n, name="r")
    server.add_completer(lambda value: [str(i) for i in range(250)], prompt="p", argument="n")
    server.add_completer(lambda value: (str(i) for i in range(10**9)), prompt="q", argument="n")  # a generator: never drained
    server.add_completer(lambda value: [str(i) for i in range(100)], prompt="r", argument="n")
    many = complete(server, prompt_ref("p"), "n", "")["completion"]
    assert many["values"] == [str(i) for i in range(100)] and many["total"] == 250 and many["hasMore"] is True
    endless = complete(server, prompt_ref("q"), "n", "")["completion"]
    assert len(endless["values"]) == 100 and endless["hasMore"] is True and "total" not in endless
    exact = complete(server, prompt_ref("r"), "n", "")["completion"]
    assert len(exact["values"]) == 100 and "hasMore" not in exact


def test_completion_object_sets_total_and_has_more():
    """completion.mdx, the example result: values, total 10, hasMore true."""
    server = Server("explicit")
    server.add_prompt(lambda language: language, name="code_review")

    @server.complete(prompt="code_review", argument="language")
    def languages(value: str) -> Completion:
        return Completion(["python", "pytorch", "pyside"], total=10, has_more=True)

    assert complete(server, prompt_ref("code_review"), "language", "py")["completion"] == {
        "values": ["python", "pytorch", "pyside"],
        "total": 10,
        "hasMore": True,
    }
    assert repr(Completion(["a"])) == "Completion(['a'], total=None, has_more=None)"


def test_typed_value_and_context_parameters():
    server = Server("typed")
    server.add_resource(lambda page, size: "", "test://p/{page}/{size}")

    @server.complete(template="test://p/{page}/{size}", argument="size")
    def sizes(value: int, page: int) -> list[str]:
        return [str(value * page)]

    ref = template_ref("test://p/{page}/{size}")
    assert complete(server, ref, "size", "3", {"page": "2"})["completion"] == {"values": ["6"]}
    # a value its hint cannot read gets no suggestions
    assert complete(server, ref, "size", "abc", {"page": "2"})["completion"] == {"values": []}
    # a required context argument that is missing, or does not convert: -32602
    missing = wire_error(server, "completion/complete", {"ref": ref, "argument": {"name": "size", "value": "3"}})
    assert missing["code"] == -32602 and missing["data"] == {"missing": ["page"]}
    bad = {"ref": ref, "argument": {"name": "size", "value": "3"}, "context": {"arguments": {"page": "two"}}}
    assert wire_error(server, "completion/complete", bad)["code"] == -32602


def test_kwargs_receive_all_context_arguments():
    server = Server("kw")
    server.add_prompt(lambda a, b="", c="": a, name="p")

    @server.complete(prompt="p", argument="a")
    def everything(value: str, **context: str) -> list[str]:
        return [f"{value}:{k}={v}" for k, v in sorted(context.items())]

    assert complete(server, prompt_ref("p"), "a", "x", {"b": "1", "c": "2"})["completion"] == {"values": ["x:b=1", "x:c=2"]}


# -- errors (completion.mdx, Error Handling) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "data"),
    [
        ({"ref": prompt_ref("nope"), "argument": {"name": "language", "value": ""}}, {"name": "nope"}),
        ({"ref": prompt_ref("code_review"), "argument": {"name": "nope", "value": ""}}, {"name": "code_review", "argument": "nope"}),
        ({"ref": template_ref("file:///nope/{x}"), "argument": {"name": "x", "value": ""}}, {"uri": "file:///nope/{x}"}),
        ({"ref": template_ref("test://static"), "argument": {"name": "x", "value": ""}}, {"uri": "test://static"}),
        (
            {"ref": template_ref("file:///logs/{name}{?lines}"), "argument": {"name": "nope", "value": ""}},
            {"uri": "file:///logs/{name}{?lines}", "argument": "nope"},
        ),
        ({"ref": {"type": "ref/tool", "name": "x"}, "argument": {"name": "a", "value": ""}}, {"type": "ref/tool"}),
        ({"argument": {"name": "a", "value": ""}}, None),
        ({"ref": "code_review", "argument": {"name": "a", "value": ""}}, None),
        ({"ref": {"type": "ref/prompt"}, "argument": {"name": "a", "value": ""}}, None),
        ({"ref": prompt_ref("code_review")}, None),
        ({"ref": prompt_ref("code_review"), "argument": {"name": "language"}}, None),
        ({"ref": prompt_ref("code_review"), "argument": {"name": "language", "value": 3}}, None),
        ({"ref": prompt_ref("code_review"), "argument": {"name": "language", "value": ""}, "context": []}, None),
        (
            {"ref": prompt_ref("code_review"), "argument": {"name": "language", "value": ""}, "context": {"arguments": {"a": 1}}},
            None,
        ),
    ],
)
def test_invalid_requests(server, params, data):
    error = wire_error(server, "completion/complete", params)
    assert error["code"] == -32602
    if data is not None:
        assert error["data"] == data


def test_a_failing_completer_is_an_internal_error(caplog):
    server = Server("fail")
    server.add_prompt(lambda a: a, name="p")
    server.add_prompt(lambda a: a, name="q")
    server.add_completer(lambda value: 1 / 0, prompt="p", argument="a")
    server.add_completer(lambda value: [1, 2], prompt="q", argument="a")  # values must be strings
    for name in ("p", "q"):
        params = {"ref": prompt_ref(name), "argument": {"name": "a", "value": ""}}
        assert wire_error(server, "completion/complete", params)["code"] == -32603


def test_registration_errors():
    server = Server("reg")
    with pytest.raises(ValueError, match="one of them"):
        server.add_completer(lambda value: [], argument="a")
    with pytest.raises(ValueError, match="one of them"):
        server.add_completer(lambda value: [], prompt="p", template="t://{a}", argument="a")
    with pytest.raises(ValueError, match="no variable"):
        server.add_completer(lambda value: [], template="t://{a}", argument="b")
    with pytest.raises(TypeError, match="a parameter for the value"):
        server.add_completer(lambda: [], prompt="p", argument="a")
    server.add_completer(lambda value: [], prompt="p", argument="a")
    with pytest.raises(ValueError, match="already registered"):
        server.add_completer(lambda value: [], prompt="p", argument="a")


def test_completion_object_helper_is_public():
    assert wiremcp.Completion is Completion


# -- end to end over stdio (tests/servers/library.py) ---------------------------------------------------------


@pytest.fixture(scope="module")
def library() -> Iterator[StdioPeer]:
    peer = StdioPeer(wiremcp_cmd("run", str(SERVERS / "library.py")))
    try:
        yield peer
    finally:
        peer.kill()


def ask(peer: StdioPeer, id: Any, ref: dict[str, str], name: str, value: str, context: dict[str, str] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
    if context is not None:
        params["context"] = {"arguments": context}
    return peer.ask(request(id, "completion/complete", params))


@pytest.mark.slow
def test_stdio_conformance_fixture(library):
    """FIXTURES.md 2.4: completion-complete on test_prompt_with_arguments / arg1 returns a values array."""
    caps = library.ask(request("d", "server/discover"))["result"]["capabilities"]
    assert caps["completions"] == {}
    reply = ask(library, 1, prompt_ref("test_prompt_with_arguments"), "arg1", "test")
    result = check("CompleteResult", reply["result"])
    assert result["completion"]["values"] == ["test-alpha", "test-beta"]


@pytest.mark.slow
def test_stdio_context_template_and_truncation(library):
    frameworks = check("CompleteResult", ask(library, 2, prompt_ref("scaffold"), "framework", "a", {"language": "rust"})["result"])
    assert frameworks["completion"]["values"] == ["axum", "actix-web"]
    logs = check("CompleteResult", ask(library, 3, template_ref("file:///logs/{name}{?lines}"), "name", "a")["result"])
    assert logs["completion"]["values"] == ["access.log", "app.log"]
    numbers = check("CompleteResult", ask(library, 4, template_ref("test://numbers/{n}"), "n", "")["result"])
    assert len(numbers["completion"]["values"]) == 100 and numbers["completion"]["total"] == 250
    assert numbers["completion"]["hasMore"] is True


@pytest.mark.slow
def test_stdio_errors(library):
    unknown = ask(library, "u", prompt_ref("nope"), "arg1", "")
    assert unknown["error"]["code"] == -32602 and unknown["id"] == "u"
    bad_argument = ask(library, "v", prompt_ref("test_prompt_with_arguments"), "arg9", "")
    assert bad_argument["error"]["code"] == -32602
