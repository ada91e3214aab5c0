"""Servers from OpenAPI documents and FastAPI apps (issue 27, docs/openapi.md), end to end.

* tests/servers/openapi_notes.py, a real FastAPI app, runs on uvicorn on
  loopback; tests/servers/openapi_server.py serves its generated document as
  MCP (`from_openapi`) over a real stdio subprocess and real HTTP, both eras.
  Every operation is called through the wiremcp client: path parameters
  percent-encoded (the upstream sees the raw path), query parameters (a list
  repeated), a header and a cookie parameter, a JSON body from separate
  arguments; a 404 and a 500 become ``isError`` results with the status and
  the body; the configured bearer token reaches the upstream and the MCP
  client's own ``Authorization`` never does; a resource and a resource
  template read through the route maps (a missing note is -32602);
* the Swagger Petstore 3.0 document (tests/servers/openapi/petstore.json,
  Apache 2.0, its note beside it) is loaded: its tools and their schemas
  listed, and a few of them called against a small local implementation of
  its routes on uvicorn (tests/servers/petstore_app.py);
* `from_fastapi` calls the same FastAPI app in-process through ASGI;
* the document rules: local ``$ref`` (recursive ones under ``$defs``),
  3.0's ``nullable``, remote ``$ref`` refused, names sanitised, route maps.
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from _http_process import HTTPServer  # noqa: E402
from _servers import uvicorn_app  # noqa: E402
from conftest import SERVERS  # noqa: E402
from wiremcp import Client  # noqa: E402
from wiremcp.client import RemoteError  # noqa: E402
from wiremcp.server.openapi import RouteMap, from_fastapi, from_openapi  # noqa: E402
from wiremcp.testing import connect  # noqa: E402

SERVER = str(SERVERS / "openapi_server.py")
PETSTORE = SERVERS / "openapi" / "petstore.json"


@pytest.fixture(scope="module")
def notes_api() -> Iterator[str]:
    with uvicorn_app("openapi_notes:app", SERVERS) as url:
        yield url.removesuffix("/mcp")


async def _notes(client: Client) -> None:
    async with client as c:
        tools = {t["name"]: t for t in await c.list_tools()}
        assert sorted(tools) == [
            "boom", "create_note", "delete_note", "echo", "elsewhere", "fail", "list_notes", "moved", "secret"
        ]
        assert tools["create_note"]["inputSchema"]["required"] == ["title"]
        assert tools["list_notes"]["description"] == "List notes\n\nNewest last."
        assert tools["list_notes"]["annotations"] == {"readOnlyHint": True}
        assert [r["uri"] for r in await c.list_resources()] == ["notes://api/version"]
        assert [t["uriTemplate"] for t in await c.list_resource_templates()] == ["notes://api/notes/{note_id}"]

        created = await c.call_tool("create_note", {"title": "milk", "tags": ["shop"]})
        assert not created.is_error, created.raw
        note = created.structured_content
        assert note["title"] == "milk" and note["tags"] == ["shop"] and note["body"] == ""
        listed = await c.call_tool("list_notes", {"tag": "shop", "limit": 100})
        assert note in listed.structured_content["notes"]
        assert all("shop" in n["tags"] for n in listed.structured_content["notes"])
        read = await c.read_resource(f"notes://api/notes/{note['id']}")
        assert json.loads(read.text) == note and read.contents[0]["mimeType"] == "application/json"
        with pytest.raises(RemoteError) as missing:
            await c.read_resource("notes://api/notes/999999")
        assert missing.value.code == -32602
        assert json.loads((await c.read_resource("notes://api/version")).text) == {"version": "1.2.0"}

        word = "hi there?&#%"
        echoed = await c.call_tool(
            "echo", {"word": word, "times": 3, "tags": ["a", "b"], "x-request-id": "r-1", "session": "s-1:ok"}
        )
        assert echoed.structured_content == {
            "word": word, "times": 3, "tags": ["a", "b"], "request_id": "r-1", "session": "s-1:ok",
            "raw_path": "/echo/hi%20there%3F%26%23%25", "authorization": "Bearer s3cret",
        }  # fmt: skip
        for code in (404, 500):
            failed = await c.call_tool("fail", {"code": code})
            assert failed.is_error and failed.text.startswith(f"HTTP {code} from the upstream API: "), failed.raw
            assert f"failed on purpose with {code}" in failed.text
        assert (await c.call_tool("secret", {})).structured_content == {"secret": "the cake is a lie"}
        deleted = await c.call_tool("delete_note", {"note_id": note["id"]})
        assert not deleted.is_error and deleted.raw["content"] == []
        again = await c.call_tool("delete_note", {"note_id": note["id"]})
        assert again.is_error and "HTTP 404" in again.text
        assert json.loads((await c.call_tool("moved", {})).text) == {"version": "1.2.0"}  # followed: same origin
        away = await c.call_tool("elsewhere", {})  # the configured token never leaves the API's origin
        assert away.is_error and away.text == "HTTP 307 from the upstream API: redirected to another origin: http://127.0.0.2:9/steal"
        boom = await c.call_tool("boom", {})
        assert boom.is_error and boom.text == "HTTP 500 from the upstream API: Internal Server Error"
        bad = await c.call_tool("echo", {"times": 2})
        assert bad.is_error and bad.text.startswith("Invalid arguments for tool 'echo'")


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_fastapi_document_over_stdio(notes_api: str, era: str) -> None:
    client = Client.stdio(sys.executable, ["-m", "wiremcp", "run", SERVER], env={"NOTES_API_URL": notes_api}, era=era)  # type: ignore[arg-type]
    asyncio.run(asyncio.wait_for(_notes(client), 60))


@pytest.fixture(scope="module")
def notes_http(notes_api: str) -> Iterator[HTTPServer]:
    served = HTTPServer(SERVER, env={"NOTES_API_URL": notes_api})
    yield served
    served.stop()


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_fastapi_document_over_http(notes_http: HTTPServer, era: str) -> None:
    # the MCP client's own Authorization reaches the MCP server only: the upstream sees the configured token
    client = Client.http(notes_http.url, era=era, headers={"Authorization": "Bearer the-mcp-clients-token"})  # type: ignore[arg-type]
    asyncio.run(asyncio.wait_for(_notes(client), 60))


# -- from_fastapi: the app in-process ----------------------------------------------


async def _bookshelf(client: Client) -> None:
    async with client as c:
        tools = {t["name"]: t for t in await c.list_tools()}
        assert sorted(tools) == ["add_book", "list_books"]
        assert tools["add_book"]["inputSchema"]["required"] == ["title", "author"]
        assert set(tools["add_book"]["outputSchema"]["properties"]) == {"id", "title", "author"}
        assert [t["uriTemplate"] for t in await c.list_resource_templates()] == ["books://shelf/books/{book_id}"]
        added = await c.call_tool("add_book", {"title": "Emma", "author": "Jane Austen"})
        assert added.structured_content == {"id": 2, "title": "Emma", "author": "Jane Austen"}
        by = await c.call_tool("list_books", {"author": "Jane Austen"})
        assert json.loads(by.text) == [added.structured_content]
        assert json.loads((await c.read_resource("books://shelf/books/1")).text)["title"] == "Dune"


@pytest.mark.slow
def test_the_docs_example_over_stdio() -> None:
    example = str(Path(__file__).resolve().parents[2] / "examples" / "openapi_server.py")
    client = Client.stdio(sys.executable, ["-m", "wiremcp", "run", example])
    asyncio.run(asyncio.wait_for(_bookshelf(client), 60))


def test_from_fastapi_calls_the_app_in_process() -> None:
    sys.path.insert(0, str(SERVERS))
    try:
        import openapi_notes
    finally:
        sys.path.remove(str(SERVERS))
    calls = 0

    async def token() -> dict[str, str]:  # asked on every call: a token that is refreshed
        nonlocal calls
        calls += 1
        return {"Authorization": "Bearer s3cret"}

    server = from_fastapi(openapi_notes.app, headers=token, route_maps=[RouteMap(tags=["none"], kind="exclude")])
    assert server.name == "Notes API" and server.version == "1.2.0"

    async def main() -> None:
        async with connect(server) as mcp:
            created = await mcp.call_tool("create_note", {"title": "in-process", "body": "b"})
            assert created.structured_content["title"] == "in-process"
            got = await mcp.call_tool("get_note", {"note_id": created.structured_content["id"]})
            assert got.structured_content == created.structured_content
            assert (await mcp.call_tool("secret", {})).structured_content == {"secret": "the cake is a lie"}
            echoed = await mcp.call_tool("echo", {"word": "a b", "tags": ["x"], "x-request-id": "r"})
            assert echoed.structured_content["raw_path"] == "/echo/a%20b"
            assert echoed.structured_content["word"] == "a b" and echoed.structured_content["request_id"] == "r"
            failed = await mcp.call_tool("fail", {"code": 418})
            assert failed.is_error and "HTTP 418" in failed.text
            boom = await mcp.call_tool("boom", {})  # Starlette answers 500, then re-raises: the answer stands
            assert boom.is_error and boom.text == "HTTP 500 from the upstream API: Internal Server Error"
            moved = await mcp.call_tool("moved", {})  # in-process, a redirect is an answer like any other
            assert moved.is_error and moved.text == "HTTP 307 from the upstream API"

    asyncio.run(main())
    assert calls == 7


# -- the Swagger Petstore 3.0 document ------------------------------------------


PET_SCHEMA_KEYS = {"id", "name", "category", "photoUrls", "tags", "status"}


def test_the_petstore_document_lists_its_operations_with_their_schemas() -> None:
    server = from_openapi(PETSTORE, base_url="https://petstore3.example/api/v3", headers={"api_key": "k"})
    tools = {name: tool.definition for name, tool in server.tools.items()}
    assert sorted(tools) == sorted([
        "updatePet", "addPet", "findPetsByStatus", "findPetsByTags", "getPetById", "updatePetWithForm",
        "deletePet", "uploadFile", "getInventory", "placeOrder", "getOrderById", "deleteOrder", "createUser",
        "createUsersWithListInput", "loginUser", "logoutUser", "getUserByName", "updateUser", "deleteUser",
    ])  # fmt: skip
    add = tools["addPet"]
    assert add["description"] == "Add a new pet to the store."  # summary and description the same: once
    assert set(add["inputSchema"]["properties"]) == PET_SCHEMA_KEYS  # the Pet body's properties, flattened
    assert add["inputSchema"]["required"] == ["name", "photoUrls"]
    assert add["inputSchema"]["properties"]["category"]["properties"]["id"] == {"type": "integer", "format": "int64"}
    assert add["inputSchema"]["properties"]["status"]["enum"] == ["available", "pending", "sold"]
    assert set(add["outputSchema"]["properties"]) == PET_SCHEMA_KEYS
    by_status = tools["findPetsByStatus"]["inputSchema"]
    assert by_status["properties"]["status"]["default"] == "available"
    assert "outputSchema" not in tools["findPetsByStatus"]  # an array: no outputSchema
    assert tools["getPetById"]["inputSchema"]["required"] == ["petId"]
    # the api_key header parameter of deletePet is configured (headers=): not offered to the model
    assert tools["deletePet"]["inputSchema"]["properties"] == {
        "petId": {"type": "integer", "format": "int64", "description": "Pet id to delete"}
    }
    assert set(tools["updatePetWithForm"]["inputSchema"]["properties"]) == {"petId", "name", "status"}
    assert tools["uploadFile"]["inputSchema"]["required"] == ["petId"]  # an octet-stream body is not offered
    assert tools["createUsersWithListInput"]["inputSchema"]["properties"]["body"]["type"] == "array"
    assert tools["getInventory"]["outputSchema"]["additionalProperties"] == {"type": "integer", "format": "int32"}


@pytest.fixture(scope="module")
def petstore_api() -> Iterator[str]:
    with uvicorn_app("petstore_app:app", SERVERS) as url:
        yield url.removesuffix("/mcp") + "/api/v3"


def test_petstore_operations_called_against_a_local_implementation(petstore_api: str) -> None:
    server = from_openapi(
        PETSTORE, base_url=petstore_api, headers={"api_key": "special-key"},
        route_maps=[RouteMap(methods=["GET"], pattern=r"^/pet/\{petId\}$", kind="template"),
                    RouteMap(tags=["user"], kind="exclude")],
    )  # fmt: skip

    async def main() -> None:
        async with connect(server, era="legacy") as mcp:
            assert not any(t["name"].endswith("User") for t in await mcp.list_tools())
            pet = {"name": "doggie", "photoUrls": ["u"], "status": "available", "category": {"id": 1, "name": "Dogs"}}
            added = await mcp.call_tool("addPet", pet)
            assert not added.is_error, added.raw
            pet_id = added.structured_content["id"]
            read = await mcp.read_resource(f"openapi://swagger-petstore-openapi-3-0/pet/{pet_id}")
            assert json.loads(read.text)["name"] == "doggie"
            found = await mcp.call_tool("findPetsByStatus", {"status": "available"})
            assert any(p["id"] == pet_id for p in json.loads(found.text))
            inventory = await mcp.call_tool("getInventory", {})  # the api_key header, configured
            assert inventory.structured_content["available"] >= 1
            assert not (await mcp.call_tool("deletePet", {"petId": pet_id})).is_error
            gone = await mcp.call_tool("deletePet", {"petId": pet_id})
            assert gone.is_error and gone.text == "HTTP 404 from the upstream API: Pet not found"

    asyncio.run(main())


def test_a_session_of_your_own_and_a_lifespan_of_your_own(petstore_api: str) -> None:
    import aiohttp

    seen: list[str] = []

    @asynccontextmanager
    async def lifespan(server: Any) -> AsyncIterator[str]:
        seen.append("entered")
        yield "value"
        seen.append("exited")

    async def main() -> None:
        async with aiohttp.ClientSession(headers={"api_key": "special-key"}) as session:
            server = from_openapi(PETSTORE, base_url=petstore_api, client=session, lifespan=lifespan, version="9")
            assert server.version == "9"
            async with connect(server) as mcp:
                inventory = await mcp.call_tool("getInventory", {})  # the session's own api_key header
                assert not inventory.is_error, inventory.raw
            assert not session.closed  # the caller's session: the server leaves it open

    asyncio.run(main())
    assert seen == ["entered", "exited"]


# -- the document rules ---------------------------------------------------------


def _doc(paths: dict[str, Any], schemas: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths,
            "components": {"schemas": schemas or {}}}  # fmt: skip


def test_recursive_refs_go_to_defs_and_nullable_becomes_null() -> None:
    tree = {"type": "object", "properties": {"label": {"type": "string", "nullable": True, "example": "x"},
                                             "children": {"type": "array", "items": {"$ref": "#/components/schemas/Tree"}}}}  # fmt: skip
    body = {"required": True, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Tree"}}}}
    server = from_openapi(_doc({"/t": {"post": {"operationId": "put tree!", "requestBody": body, "responses": {}}}}, {"Tree": tree}),
                          base_url="http://127.0.0.1:9")  # fmt: skip
    (tool,) = server.tools.values()
    assert tool.name == "put_tree"
    schema = tool.definition["inputSchema"]
    assert schema["properties"]["label"] == {"type": ["string", "null"]}
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    assert schema["$defs"]["Tree"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}


def test_a_remote_ref_is_refused() -> None:
    param = {"$ref": "https://example.com/params.json#/id"}
    with pytest.raises(ValueError, match="remote references are never fetched"):
        from_openapi(_doc({"/x": {"get": {"parameters": [param], "responses": {}}}}), base_url="http://127.0.0.1:9")


def test_a_refused_upstream_is_a_tool_error() -> None:
    server = from_openapi(_doc({"/x": {"get": {"responses": {}}}}), base_url="http://127.0.0.1:9")
    assert list(server.tools) == ["get_x"]

    async def main() -> None:
        async with connect(server) as mcp:
            result = await mcp.call_tool("get_x", {})
            assert result.is_error and result.text.startswith("HTTP 502 from the upstream API: the upstream request failed")

    asyncio.run(main())


def test_route_maps_first_match_wins_and_resources_need_no_arguments() -> None:
    paths = {
        "/a": {"get": {"operationId": "a", "responses": {}}},
        "/b": {"get": {"operationId": "b", "parameters": [{"name": "q", "in": "query", "required": True, "schema": {}}], "responses": {}}},
        "/c/{id}": {"get": {"operationId": "c", "parameters": [{"name": "id", "in": "path", "required": True, "schema": {}}], "responses": {}}},
        "/d": {"post": {"operationId": "d", "responses": {}}},
    }
    maps = [RouteMap(methods=["GET"], kind="resource"), RouteMap(methods=["get"], kind="template"),
            RouteMap(pattern="^/d$", kind="exclude"), RouteMap(kind="resource")]  # fmt: skip
    server = from_openapi(_doc(paths), base_url="http://127.0.0.1:9", route_maps=maps)
    assert list(server.tools) == ["b"]  # a required query parameter: neither resource nor template
    assert list(server.resources) == ["openapi://t/a"]
    assert list(server.resource_templates) == ["openapi://t/c/{id}"]
    with pytest.raises(ValueError, match="kind"):
        RouteMap(kind="prompt")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="collections"):
        RouteMap(methods="GET")


def test_not_an_openapi_3_document() -> None:
    with pytest.raises(ValueError, match="Swagger 2.0"):
        from_openapi({"swagger": "2.0", "paths": {}}, base_url="http://127.0.0.1:9")
    with pytest.raises(ValueError, match="base_url"):
        from_openapi(_doc({}), base_url="127.0.0.1:9")


def test_the_petstore_fixture_keeps_its_licence_note() -> None:
    note = (PETSTORE.parent / "README.md").read_text()
    assert "Apache License, Version 2.0" in note and "petstore.json" in note
    assert json.loads(PETSTORE.read_text())["info"]["license"]["name"] == "Apache 2.0"
    assert Path(PETSTORE).stat().st_size > 10_000


def test_a_closed_object_body_is_flattened_an_open_one_is_not() -> None:
    # the ReadMe API document (test_openapi_large.py) closes every body with additionalProperties: false
    def body(extra: Any) -> dict[str, Any]:
        schema = {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"],
                  "additionalProperties": extra}  # fmt: skip
        return {"post": {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
                         "responses": {}}}  # fmt: skip

    server = from_openapi(_doc({"/closed": body(False), "/open": body({"type": "string"})}), base_url="http://127.0.0.1:9")
    closed = server.tools["post_closed"].definition["inputSchema"]
    assert closed["properties"] == {"question": {"type": "string"}} and closed["required"] == ["question"]
    open_ = server.tools["post_open"].definition["inputSchema"]  # extra keys would be lost flattened: one body
    assert list(open_["properties"]) == ["body"] and open_["properties"]["body"]["additionalProperties"] == {"type": "string"}


def test_accept_content_type_and_authorization_header_parameters_are_ignored() -> None:
    # OpenAPI 3.x, Parameter Object: such a definition "SHALL be ignored". The Blockfrost document
    # (test_openapi_large.py) declares a Content-Type header beside a JSON body: offered, it went out twice.
    params = [{"name": n, "in": "header", "required": True, "schema": {"type": "string"}}
              for n in ("Content-Type", "accept", "AUTHORIZATION", "X-Trace")]  # fmt: skip
    body = {"content": {"application/json": {"schema": {"type": "array"}}}}
    server = from_openapi(_doc({"/e": {"post": {"parameters": params, "requestBody": body, "responses": {}}}}),
                          base_url="http://127.0.0.1:9")  # fmt: skip
    schema = server.tools["post_e"].definition["inputSchema"]
    assert list(schema["properties"]) == ["X-Trace", "body"] and schema["required"] == ["X-Trace"]


def test_a_nullable_ref_accepts_null() -> None:
    pet = {"type": "object", "properties": {"name": {"type": "string"}}}
    owner = {"$ref": "#/components/schemas/Pet", "nullable": True, "description": "the pet, if any"}
    body = {"content": {"application/json": {"schema": {"type": "object", "properties": {"pet": owner}}}}}
    server = from_openapi(_doc({"/o": {"post": {"requestBody": body, "responses": {}}}}, {"Pet": pet}),
                          base_url="http://127.0.0.1:9")  # fmt: skip
    prop = server.tools["post_o"].definition["inputSchema"]["properties"]["pet"]
    assert prop == {"anyOf": [{"allOf": [pet], "description": "the pet, if any"}, {"type": "null"}]}
    bare = {"type": "object", "properties": {"pet": {"$ref": "#/components/schemas/Pet", "nullable": True}}}
    body = {"content": {"application/json": {"schema": bare}}}
    server = from_openapi(_doc({"/o": {"post": {"requestBody": body, "responses": {}}}}, {"Pet": pet}),
                          base_url="http://127.0.0.1:9")  # fmt: skip
    assert server.tools["post_o"].definition["inputSchema"]["properties"]["pet"]["type"] == ["object", "null"]
