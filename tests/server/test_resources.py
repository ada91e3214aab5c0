"""Resources and resource templates: in-process rules, then end to end over stdio.

Spec: server/resources.mdx (Capabilities, Listing Resources, Reading
Resources, Resource Templates, Data Types, Error Handling),
server/utilities/pagination.mdx, server/utilities/caching.mdx,
basic/patterns/mrtr.mdx (resources/read may need input),
conformance/FIXTURES.md section 2.2. Every result is validated against
schema.json (ListResourcesResult, ListResourceTemplatesResult,
ReadResourceResult).
"""

from __future__ import annotations

import base64
from typing import Any, Iterator

import pytest

from conftest import META, SERVERS, StdioPeer, request, wiremcp_cmd
from schema_check import check, handle, wire_error
from wiremcp import Context, JSONRPCError, Server
from wiremcp.server import DEFAULT_LIST_TTL_MS, TemplateError

SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def make(**options: Any) -> Server:
    return Server("res", version="1.0", **options)


def read(server: Server, uri: str, **options: Any) -> dict[str, Any]:
    return check("ReadResourceResult", handle(server, "resources/read", {"uri": uri}, **options))


# -- capabilities and method availability ------------------------------------------


def test_no_resources_no_capability_and_methods_not_found():
    """resources.mdx, Capabilities; FIXTURES.md 1: advertised capabilities match reality."""
    server = make()
    assert "resources" not in handle(server, "server/discover")["capabilities"]
    for method in ("resources/list", "resources/templates/list", "resources/read"):
        assert wire_error(server, method, {"uri": "x:y"})["code"] == -32601


def test_capability_follows_registration_and_removal():
    server = make()

    @server.resource("test://a")
    def a() -> str:
        return "a"

    assert handle(server, "server/discover")["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    assert handle(server, "resources/templates/list")["resourceTemplates"] == []  # declared: must work
    server.remove_resource("test://a")
    assert "resources" not in handle(server, "server/discover")["capabilities"]
    assert wire_error(server, "resources/list")["code"] == -32601


def test_a_template_alone_declares_resources():
    server = make()
    server.add_resource(lambda id: id, "test://t/{id}")
    assert "resources" in handle(server, "server/discover")["capabilities"]
    assert handle(server, "resources/list")["resources"] == []


# -- listing -------------------------------------------------------------------------


def test_list_has_static_resources_with_their_fields_and_not_templates():
    """resources.mdx, Listing Resources and Data Types: uri, name, title, description, mimeType, size, icons."""
    server = make()
    icons = [{"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}]

    @server.resource(
        "file:///project/src/main.rs",
        name="main.rs",
        title="Rust Software Application Main File",
        mime_type="text/x-rust",
        size=42,
        icons=icons,
        annotations={"audience": ["user"], "priority": 0.8, "lastModified": "2025-01-12T15:00:58Z"},
        meta={"x": 1},
    )
    def main_rs() -> str:
        """Primary application entry point"""
        return "fn main() {}"

    @server.resource("test://plain")
    def plain() -> str:
        return ""

    @server.resource("file:///{path}")
    def files(path: str) -> str:
        return path

    result = check("ListResourcesResult", handle(server, "resources/list"))
    assert result["resources"] == [
        {
            "uri": "file:///project/src/main.rs",
            "name": "main.rs",
            "title": "Rust Software Application Main File",
            "description": "Primary application entry point",
            "mimeType": "text/x-rust",
            "size": 42,
            "annotations": {"audience": ["user"], "priority": 0.8, "lastModified": "2025-01-12T15:00:58Z"},
            "icons": icons,
            "_meta": {"x": 1},
        },
        {"uri": "test://plain", "name": "plain"},
    ]
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO] == {"name": "res", "version": "1.0"}


def test_templates_list():
    """resources.mdx, Resource Templates: uriTemplate, name, title, description, mimeType."""
    server = make()

    @server.resource("file:///{path}", name="Project Files", title="📁 Project Files", mime_type="application/octet-stream")
    def files(path: str) -> bytes:
        """Access files in the project directory"""
        return b""

    result = check("ListResourceTemplatesResult", handle(server, "resources/templates/list"))
    assert result["resourceTemplates"] == [
        {
            "uriTemplate": "file:///{path}",
            "name": "Project Files",
            "title": "📁 Project Files",
            "description": "Access files in the project directory",
            "mimeType": "application/octet-stream",
        }
    ]


def test_list_caching_hints_are_the_server_defaults():
    """caching.mdx, Cacheable Results: resources/list and resources/templates/list carry ttlMs and cacheScope."""
    server = make(list_ttl_ms=300_000, cache_scope="private")
    server.add_resource(lambda: "x", "test://x", ttl_ms=1, cache_scope="public")  # per-resource hints are for reads
    server.add_resource(lambda id: id, "test://t/{id}")
    for method in ("resources/list", "resources/templates/list"):
        result = handle(server, method)
        assert (result["ttlMs"], result["cacheScope"]) == (300_000, "private")


def test_pagination_walks_every_page_once():
    """pagination.mdx: opaque nextCursor, absent on the last page; caching.mdx: each page has hints."""
    server = make(page_size=2)
    for i in range(5):
        server.add_resource(lambda: "x", f"test://r/{i}", name=f"r{i}")
        server.add_resource(lambda n: n, f"test://t{i}/{{n}}", name=f"t{i}")
    for method, key, prefix in (("resources/list", "resources", "r"), ("resources/templates/list", "resourceTemplates", "t")):
        seen: list[str] = []
        cursor = None
        pages = 0
        while True:
            result = handle(server, method, {} if cursor is None else {"cursor": cursor})
            check("ListResourcesResult" if key == "resources" else "ListResourceTemplatesResult", result)
            assert len(result[key]) <= 2 and result["cacheScope"] == "public"
            seen += [r["name"] for r in result[key]]
            pages += 1
            cursor = result.get("nextCursor")
            if cursor is None:
                break
        assert pages == 3
        assert seen == [f"{prefix}{i}" for i in range(5)]


def test_invalid_cursor_is_invalid_params():
    """pagination.mdx, Error Handling: -32602."""
    server = make(page_size=1)
    server.add_resource(lambda: "x", "test://x")
    assert wire_error(server, "resources/list", {"cursor": "not-a-cursor"})["code"] == -32602
    assert wire_error(server, "resources/list", {"cursor": 7})["code"] == -32602


# -- reading ---------------------------------------------------------------------------


def test_read_text():
    """resources.mdx, Reading Resources / Text Content; FIXTURES.md 2.2 test://static-text."""
    server = make()

    @server.resource("test://static-text", mime_type="text/plain")
    def static_text() -> str:
        return "This is the content of the static text resource."

    result = read(server, "test://static-text")
    assert result["contents"] == [
        {"uri": "test://static-text", "mimeType": "text/plain", "text": "This is the content of the static text resource."}
    ]
    assert result["resultType"] == "complete" and result["_meta"][SERVER_INFO]["name"] == "res"


def test_read_binary_is_base64():
    """resources.mdx, Binary Content: blob is base64; Security 3: binary data MUST be properly encoded."""
    server = make()
    data = bytes(range(256))
    server.add_resource(lambda: data, "test://bin", mime_type="image/png")
    server.add_resource(lambda: bytearray(b"\x00\xff"), "test://bin2")
    (item,) = read(server, "test://bin")["contents"]
    assert item["mimeType"] == "image/png" and base64.b64decode(item["blob"], validate=True) == data
    assert read(server, "test://bin2")["contents"] == [
        {"uri": "test://bin2", "mimeType": "application/octet-stream", "blob": "AP8="}
    ]


def test_default_mime_types():
    server = make()
    server.add_resource(lambda: "t", "test://t")
    assert read(server, "test://t")["contents"][0]["mimeType"] == "text/plain"


def test_read_dict_and_list_contents():
    """resources.mdx: several contents in one read (a directory); dicts get uri/mimeType filled in."""
    server = make()

    @server.resource("test://dir", mime_type="text/markdown")
    def directory() -> list[Any]:
        return [
            {"text": "# readme"},
            {"uri": "test://dir/a.png", "mimeType": "image/png", "blob": b"\x89PNG"},
            {"uri": "test://dir/b.bin", "blob": "AAEC", "_meta": {"k": "v"}},
            "plain text",
        ]

    assert read(server, "test://dir")["contents"] == [
        {"uri": "test://dir", "mimeType": "text/markdown", "text": "# readme"},
        {"uri": "test://dir/a.png", "mimeType": "image/png", "blob": "iVBORw=="},
        {"uri": "test://dir/b.bin", "mimeType": "text/markdown", "blob": "AAEC", "_meta": {"k": "v"}},
        {"uri": "test://dir", "mimeType": "text/markdown", "text": "plain text"},
    ]


def test_an_empty_list_is_an_existing_resource_without_content():
    server = make()
    server.add_resource(lambda: [], "test://empty")
    assert read(server, "test://empty")["contents"] == []


def test_unknown_uri_is_invalid_params_with_data_uri():
    """resources.mdx, Error Handling: -32602 with data.uri, never an empty contents; FIXTURES.md sep-2164."""
    server = make()
    server.add_resource(lambda: "x", "test://x")
    uri = "test://nonexistent-resource-for-conformance-testing"
    error = wire_error(server, "resources/read", {"uri": uri})
    assert error == {"code": -32602, "message": f"Resource not found: {uri}", "data": {"uri": uri}}
    check("InvalidParamsError", error)


def test_returning_none_means_not_found():
    server = make()
    server.add_resource(lambda: None, "test://gone")
    assert wire_error(server, "resources/read", {"uri": "test://gone"})["data"] == {"uri": "test://gone"}


def test_uri_must_be_a_string():
    server = make()
    server.add_resource(lambda: "x", "test://x")
    for params in ({}, {"uri": 5}, {"uri": None}):
        error = wire_error(server, "resources/read", params)
        assert error["code"] == -32602 and "uri" in error["message"]


def test_a_failing_resource_is_an_internal_error_that_leaks_nothing(caplog):
    """resources.mdx, Error Handling: -32603 for internal errors; details stay in the server log."""
    server = make()

    @server.resource("test://broken")
    def broken() -> str:
        raise RuntimeError("secret internal detail")

    error = wire_error(server, "resources/read", {"uri": "test://broken"})
    assert error["code"] == -32603 and "secret" not in str(error)
    assert "secret internal detail" in caplog.text


def test_a_jsonrpc_error_from_a_resource_is_kept():
    server = make()

    @server.resource("test://forbidden")
    async def forbidden() -> str:
        raise JSONRPCError("Not allowed", {"reason": "policy"}, code=-32001)

    assert wire_error(server, "resources/read", {"uri": "test://forbidden"}) == {
        "code": -32001,
        "message": "Not allowed",
        "data": {"reason": "policy"},
    }


def test_a_bad_return_value_is_an_internal_error():
    server = make()
    server.add_resource(lambda: 42, "test://int")
    server.add_resource(lambda: {"text": "a", "blob": "b"}, "test://both")
    server.add_resource(lambda: {"mimeType": "x/y"}, "test://neither")
    for uri in ("test://int", "test://both", "test://neither"):
        assert wire_error(server, "resources/read", {"uri": uri})["code"] == -32603


def test_async_resource_and_context():
    """Handlers get a Context when they ask for one (request id, _meta)."""
    server = make()

    @server.resource("test://who")
    async def who(ctx: Context) -> str:
        return f"{ctx.request_id} {ctx.method} {ctx.client_info['name']}"

    result = check("ReadResourceResult", handle(server, "resources/read", {"uri": "test://who"}, id="r-9"))
    assert result["contents"][0]["text"] == "r-9 resources/read tests"


def test_read_caching_hints_default_and_per_resource():
    """caching.mdx: resources/read MUST carry ttlMs and cacheScope; private for per-user data."""
    server = make(list_ttl_ms=123)
    server.add_resource(lambda: "x", "test://default")
    server.add_resource(lambda: "x", "test://mine", ttl_ms=0, cache_scope="private")
    server.add_resource(lambda n: n, "test://t/{n}", ttl_ms=9_000)
    assert [read(server, "test://default")[k] for k in ("ttlMs", "cacheScope")] == [123, "public"]
    assert [read(server, "test://mine")[k] for k in ("ttlMs", "cacheScope")] == [0, "private"]
    assert [read(server, "test://t/1")[k] for k in ("ttlMs", "cacheScope")] == [9_000, "public"]


# -- templates -------------------------------------------------------------------------


def test_template_read_passes_converted_variables():
    """resources.mdx, Resource Templates; FIXTURES.md 2.2 test://template/{id}/data."""
    server = make()
    seen: list[Any] = []

    @server.resource("test://template/{id}/data", mime_type="application/json")
    def data(id: int) -> str:
        seen.append(id)
        return f'{{"id": "{id}"}}'

    result = read(server, "test://template/123/data")
    assert seen == [123]
    assert result["contents"] == [{"uri": "test://template/123/data", "mimeType": "application/json", "text": '{"id": "123"}'}]


def test_variables_that_do_not_convert_do_not_match():
    server = make()

    @server.resource("test://n/{n}")
    def number(n: int) -> str:
        return f"number {n}"

    assert wire_error(server, "resources/read", {"uri": "test://n/abc"})["data"] == {"uri": "test://n/abc"}
    assert read(server, "test://n/-7")["contents"][0]["text"] == "number -7"


def test_static_first_then_templates_in_registration_order():
    """Static match first, then templates in registration order; a failed conversion falls through."""
    server = make()

    @server.resource("test://u/{id}")
    def by_id(id: int) -> str:
        return f"int {id}"

    @server.resource("test://u/{name}")
    def by_name(name: str) -> str:
        return f"name {name}"

    @server.resource("test://u/me")
    def me() -> str:
        return "static me"

    @server.resource("test://u/{other}")
    def never(other: str) -> str:
        return "never"

    assert read(server, "test://u/me")["contents"][0]["text"] == "static me"
    assert read(server, "test://u/12")["contents"][0]["text"] == "int 12"
    assert read(server, "test://u/bob")["contents"][0]["text"] == "name bob"


def test_query_variables_are_optional_when_the_function_has_a_default():
    server = make()

    @server.resource("file:///logs/{name}{?lines,level}")
    def logs(name: str, lines: int = 10, level: str | None = None) -> str:
        return f"{name} {lines} {level}"

    assert read(server, "file:///logs/app.log")["contents"][0]["text"] == "app.log 10 None"
    assert read(server, "file:///logs/app.log?level=warn&lines=3")["contents"][0]["text"] == "app.log 3 warn"
    assert wire_error(server, "resources/read", {"uri": "file:///logs/app.log?lines=x"})["code"] == -32602
    assert wire_error(server, "resources/read", {"uri": "file:///logs/app.log?other=1"})["code"] == -32602


def test_an_absent_variable_without_a_default_does_not_match():
    server = make()

    @server.resource("s://x{/a,b}")
    def both(a: str, b: str) -> str:
        return a + b

    assert read(server, "s://x/1/2")["contents"][0]["text"] == "12"
    assert wire_error(server, "resources/read", {"uri": "s://x/1"})["code"] == -32602


def test_exploded_and_list_variables():
    server = make()

    @server.resource("test://path{/segments*}")
    def path(segments: list[str]) -> str:
        return "|".join(segments)

    @server.resource("test://sum/{numbers}")
    def total(numbers: list[int]) -> str:
        return str(sum(numbers))

    @server.resource("test://q{?params*}")
    def query(params: dict[str, str]) -> str:
        return ",".join(f"{k}={v}" for k, v in sorted(params.items()))

    assert read(server, "test://path/a/b%20c")["contents"][0]["text"] == "a|b c"
    assert read(server, "test://sum/1,2,3")["contents"][0]["text"] == "6"
    assert read(server, "test://q?b=2&a=1")["contents"][0]["text"] == "a=1,b=2"


def test_kwargs_take_variables_with_any_name():
    server = make()

    @server.resource("test://{user.name}/{id}")
    def person(id: int, **variables: str) -> str:
        return f"{id} {variables}"

    assert read(server, "test://ann/3")["contents"][0]["text"] == "3 {'user.name': 'ann'}"


# -- registration rules -------------------------------------------------------------------


def test_registration_errors():
    server = make()
    server.add_resource(lambda: "x", "test://x")
    with pytest.raises(ValueError, match="already registered"):
        server.add_resource(lambda: "y", "test://x")
    server.add_resource(lambda a: a, "test://{a}")
    with pytest.raises(ValueError, match="already registered"):
        server.add_resource(lambda a: a, "test://{a}")
    with pytest.raises(TypeError, match="no parameter for the variable 'b'"):
        server.add_resource(lambda a: a, "test://{a}/{b}")
    with pytest.raises(TypeError, match="needs a default"):
        server.add_resource(lambda a, extra: a, "test://t/{a}")
    with pytest.raises(TypeError, match="needs a default"):
        server.add_resource(lambda a: a, "test://static")

    def complex_number(a: complex) -> str:
        return ""

    with pytest.raises(TypeError, match="cannot convert"):
        server.add_resource(complex_number, "test://z/{a}")
    with pytest.raises(ValueError, match="no size"):
        server.add_resource(lambda a: a, "test://s/{a}", size=3)
    with pytest.raises(ValueError, match="ttl_ms"):
        server.add_resource(lambda: "", "test://ttl", ttl_ms=-1)
    with pytest.raises(ValueError, match="cache_scope"):
        server.add_resource(lambda: "", "test://scope", cache_scope="shared")  # type: ignore[arg-type]
    with pytest.raises(TemplateError):
        server.add_resource(lambda: "", "test://{broken")
    with pytest.raises(KeyError):
        server.remove_resource("test://never-registered")


def test_decorator_returns_the_function_and_registry_views():
    server = make()

    @server.resource("test://a")
    def a() -> str:
        return "a"

    @server.resource("test://t/{x}")
    def t(x: str) -> str:
        return x

    assert a() == "a" and t("q") == "q"
    assert list(server.resources) == ["test://a"] and list(server.resource_templates) == ["test://t/{x}"]


# -- multi round-trip: a resource may need input (mrtr.mdx) -----------------------------------


def test_input_required_propagates_from_a_resource():
    """resources.mdx, Reading Resources: MAY answer with an InputRequiredResult (no caching hints)."""
    server = make()

    @server.resource("test://secret")
    async def secret(ctx: Context) -> str:
        answer = await ctx.elicit("Password?", {"type": "object", "properties": {"pw": {"type": "string"}}}, key="pw")
        return f"opened with {answer['content']['pw']}"

    meta = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    first = handle(server, "resources/read", {"uri": "test://secret"}, meta=meta)
    check("InputRequiredResult", first)
    assert first["resultType"] == "input_required" and "ttlMs" not in first
    retry = {
        "uri": "test://secret",
        "inputResponses": {"pw": {"action": "accept", "content": {"pw": "hunter2"}}},
        "requestState": first["requestState"],
    }
    done = check("ReadResourceResult", handle(server, "resources/read", retry, meta=meta))
    assert done["contents"][0]["text"] == "opened with hunter2"


# -- end to end over stdio (tests/servers/library.py) ---------------------------------------------


@pytest.fixture(scope="module")
def library() -> Iterator[StdioPeer]:
    peer = StdioPeer(wiremcp_cmd("run", str(SERVERS / "library.py")))
    try:
        yield peer
    finally:
        peer.kill()


@pytest.mark.slow
def test_stdio_discover_declares_resources(library):
    result = check("DiscoverResult", library.ask(request("d", "server/discover"))["result"])
    caps = result["capabilities"]
    assert type(caps["resources"]) is dict and "tools" not in caps


@pytest.mark.slow
def test_stdio_list_paginates_with_hints(library):
    """FIXTURES.md 2.2: direct resources with uri and name; caching reads the first one listed."""
    names: list[str] = []
    pages: list[int] = []
    cursor = None
    while True:
        reply = library.ask(request("l", "resources/list", {} if cursor is None else {"cursor": cursor}))
        result = check("ListResourcesResult", reply["result"])
        assert result["ttlMs"] == DEFAULT_LIST_TTL_MS and result["cacheScope"] == "public"
        names += [r["name"] for r in result["resources"]]
        pages.append(len(result["resources"]))
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert pages == [2, 2, 2]  # page_size=2, six resources
    assert names == ["static-text", "static-binary", "watched-resource", "private-note", "broken", "forbidden"]
    first = library.ask(request("l1", "resources/list"))["result"]["resources"][0]
    assert check("ReadResourceResult", library.ask(request("r0", "resources/read", {"uri": first["uri"]}))["result"])


@pytest.mark.slow
def test_stdio_templates_list(library):
    templates: list[str] = []
    cursor = None
    while True:
        reply = library.ask(request("t", "resources/templates/list", {} if cursor is None else {"cursor": cursor}))
        result = check("ListResourceTemplatesResult", reply["result"])
        templates += [t["uriTemplate"] for t in result["resourceTemplates"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert templates == [
        "test://template/{id}/data",
        "file:///logs/{name}{?lines}",
        "test://dir/{+path}",
        "test://numbers/{n}",
    ]


@pytest.mark.slow
def test_stdio_read_text_binary_template(library):
    """FIXTURES.md 2.2: resources-read-text, resources-read-binary, resources-templates-read."""
    text = check("ReadResourceResult", library.ask(request(1, "resources/read", {"uri": "test://static-text"}))["result"])
    assert text["contents"] == [
        {"uri": "test://static-text", "mimeType": "text/plain", "text": "This is the content of the static text resource."}
    ]
    binary = check("ReadResourceResult", library.ask(request(2, "resources/read", {"uri": "test://static-binary"}))["result"])
    (item,) = binary["contents"]
    assert item["mimeType"] == "image/png" and base64.b64decode(item["blob"]).startswith(b"\x89PNG")
    data = check("ReadResourceResult", library.ask(request(3, "resources/read", {"uri": "test://template/123/data"}))["result"])
    assert "123" in data["contents"][0]["text"] and data["contents"][0]["uri"] == "test://template/123/data"


@pytest.mark.slow
def test_stdio_read_async_template_query_directory_and_hints(library):
    logs = check("ReadResourceResult", library.ask(request(4, "resources/read", {"uri": "file:///logs/app.log?lines=2"}))["result"])
    assert logs["contents"][0]["text"] == "line 1\nline 2\n" and logs["ttlMs"] == 5_000
    note = check("ReadResourceResult", library.ask(request(5, "resources/read", {"uri": "test://private-note"}))["result"])
    assert (note["ttlMs"], note["cacheScope"]) == (0, "private") and note["contents"][0]["text"] == "A note for tests."
    directory = check("ReadResourceResult", library.ask(request(6, "resources/read", {"uri": "test://dir/a/b"}))["result"])
    assert [c["uri"] for c in directory["contents"]] == ["test://dir/a/b/readme.txt", "test://dir/a/b/logo.png"]
    assert "text" in directory["contents"][0] and "blob" in directory["contents"][1]


@pytest.mark.slow
@pytest.mark.parametrize(
    "uri",
    [
        "test://nonexistent-resource-for-conformance-testing",
        "file:///logs/missing.log",  # the function returned None
        "test://numbers/abc",  # does not convert to int
    ],
)
def test_stdio_unknown_uri(library, uri):
    """resources.mdx, Error Handling; FIXTURES.md sep-2164-resource-not-found."""
    reply = library.ask(request("nf", "resources/read", {"uri": uri}))
    assert "result" not in reply and reply["id"] == "nf"
    assert reply["error"]["code"] == -32602 and reply["error"]["data"] == {"uri": uri}


@pytest.mark.slow
def test_stdio_failures(library):
    broken = library.ask(request("b", "resources/read", {"uri": "test://broken"}))
    assert broken["error"]["code"] == -32603 and "secret" not in broken["error"]["message"]
    forbidden = library.ask(request("f", "resources/read", {"uri": "test://forbidden"}))
    assert forbidden["error"] == {"code": -32001, "message": "Not allowed to read this", "data": {"reason": "policy"}}
