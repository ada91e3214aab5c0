"""Larger published OpenAPI documents served by `from_openapi`, every operation called over real transports (issue 27).

Two documents, shipped in tests/servers/openapi/ with their licences (MIT)
and sources (README.md there): the ReadMe API's (OpenAPI 3.1, npm
``@readme/oas-examples`` 8.2.2: 54 operations; path, query and header
parameters, JSON and multipart bodies, a bearer token) and Blockfrost.io's
(OpenAPI 3.0.3, npm ``@blockfrost/openapi`` 0.1.93: 129 operations, 143
component schemas and about 930 ``$ref``s, 3.0 ``nullable``, an API key
header).

tests/servers/openapi_upstream.py, on uvicorn on loopback, answers every
operation of the document from its own response schemas and records every
request; tests/servers/openapi_large_server.py serves the document as MCP
over a real stdio subprocess and real HTTP, both eras. For every tool the
test makes arguments from its ``inputSchema`` (every argument, strings
carrying spaces, ``/``, ``?``, ``#`` and ``%`` where the schema allows) and
checks what reached the upstream: the method, the raw path (path
parameters percent-encoded whole), the query pairs, the header parameters,
the JSON body, the configured credential (once on every request, never the
MCP client's, never in a result); then the answer (structured content when the
tool has an ``outputSchema``); then, for every third tool, an error planned
for the next request (4xx and 5xx) comes back as an ``isError`` result with
the status and body.
Route maps make one operation a resource, one a template, and leave some out.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import quote, urlencode

import pytest

pytest.importorskip("uvicorn")
jsonschema = pytest.importorskip("jsonschema")

from _http_process import HTTPServer  # noqa: E402
from _servers import uvicorn_app  # noqa: E402
from conftest import SERVERS  # noqa: E402
from wiremcp import Client  # noqa: E402
from wiremcp.server.openapi import RouteMap, from_openapi  # noqa: E402
from wiremcp.testing import connect  # noqa: E402

sys.path.insert(0, str(SERVERS))
from openapi_values import example, resolve  # noqa: E402

sys.path.remove(str(SERVERS))

SERVER = str(SERVERS / "openapi_large_server.py")
FIXTURES = SERVERS / "openapi"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
#: Error answers planned in turn, one for every third tool.
ERRORS = (400, 401, 403, 404, 409, 422, 429, 500, 502, 503)
#: What a string argument carries when its schema allows: characters a path, a query or JSON must keep.
TRICKY = "a b/c?d#e%f&g=h"


@dataclass(frozen=True)
class Case:
    """A document, where its API lives, its credentials and its route maps."""

    document: Path
    base_path: str
    headers: dict[str, str]
    route_maps: list[dict[str, Any]]
    resource: str  # the tool name the operation the maps make a resource would have had
    template: str  # ... a resource template
    #: The template's variables for a read: its path parameters and query parameters.
    template_variables: dict[str, str]
    template_query: dict[str, str]
    excluded: frozenset[str] = field(default_factory=frozenset)

    @property
    def doc(self) -> dict[str, Any]:
        return _load(self.document)


@functools.lru_cache(maxsize=None)
def _load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


README = Case(
    document=FIXTURES / "readme.json",
    base_path="/v2",
    headers={"Authorization": "Bearer rdme_upstream_secret_token"},
    route_maps=[
        {"methods": ["GET"], "pattern": r"^/outbound_ips$", "kind": "resource"},
        {"methods": ["GET"], "pattern": r"^/branches/\{branch\}/reference/\{slug\}$", "kind": "template"},
        {"tags": ["Apply to ReadMe"], "kind": "exclude"},
    ],
    resource="getOutboundIPs",
    template="getReference",
    template_variables={"branch": "v1.2", "slug": "my page"},
    template_query={"dereference": "true"},
    excluded=frozenset({"getOpenRoles", "applyToReadMe"}),
)
BLOCKFROST = Case(
    document=FIXTURES / "blockfrost.json",
    base_path="/api/v0",
    headers={"project_id": "mainnetUpstreamSecretProjectId"},
    route_maps=[
        {"methods": ["GET"], "pattern": r"^/health$", "kind": "resource"},
        {"methods": ["GET"], "pattern": r"^/blocks/\{hash_or_number\}/txs$", "kind": "template"},
        {"pattern": r"^/ipfs/", "kind": "exclude"},  # served by another host (the path's own servers)
    ],
    resource="get_health",
    template="get_blocks__hash_or_number__txs",
    template_variables={"hash_or_number": "4873401"},
    template_query={"count": "5", "order": "desc"},
    excluded=frozenset({"ipfs_add", "get_ipfs_gateway__IPFS_path", "post_ipfs_pin_add__IPFS_path", "get_ipfs_pin_list",
                        "get_ipfs_pin_list__IPFS_path", "post_ipfs_pin_remove__IPFS_path"}),
)  # fmt: skip
CASES = [pytest.param(README, id="readme"), pytest.param(BLOCKFROST, id="blockfrost")]
#: The MCP client's own token (HTTP): it must never reach the upstream.
CLIENT_TOKEN = "Bearer the-mcp-clients-own-token"


def _operations(doc: dict[str, Any]) -> dict[str, tuple[str, str, dict[str, Any], list[dict[str, Any]]]]:
    """tool name -> (method, path, operation, parameters with $ref followed, path-level ones first).

    The name as docs/openapi.md says: the ``operationId``, else ``method_path``, other characters ``_``."""
    out = {}
    for path, item in doc["paths"].items():
        shared = [resolve(p, doc) for p in item.get("parameters", [])]
        for method, op in item.items():
            if method in METHODS:
                own = [resolve(p, doc) for p in op.get("parameters", [])]
                by_name = {(p["in"], p["name"]): p for p in shared + own}  # the operation's own win
                name = re.sub(r"[^A-Za-z0-9_.-]", "_", op.get("operationId") or f"{method}_{path.strip('/')}").strip("_")
                out[name or method] = (method, path, op, list(by_name.values()))
    return out


# -- the upstream ------------------------------------------------------------------------


class Upstream:
    def __init__(self, url: str) -> None:
        self.url = url

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.load(answer)

    def log(self) -> list[dict[str, Any]]:
        log: list[dict[str, Any]] = self._request("GET", "/__control/log")
        return log

    def clear(self) -> None:
        self._request("DELETE", "/__control/log")

    def plan(self, status: int, body: str) -> None:
        self._request("POST", "/__control/next", {"status": status, "body": body})


@pytest.fixture(scope="module", params=CASES)
def served(request: pytest.FixtureRequest) -> Iterator[tuple[Case, Upstream]]:
    """A case and its upstream on uvicorn."""
    case: Case = request.param
    env = {"OPENAPI_DOCUMENT": str(case.document), "OPENAPI_BASE_PATH": case.base_path}
    with uvicorn_app("openapi_upstream:app", SERVERS, env) as url:
        yield case, Upstream(url.removesuffix("/mcp"))


def _server_env(case: Case, upstream: Upstream) -> dict[str, str]:
    return {
        "OPENAPI_DOCUMENT": str(case.document), "UPSTREAM_URL": upstream.url + case.base_path,
        "UPSTREAM_HEADERS": json.dumps(case.headers), "ROUTE_MAPS": json.dumps(case.route_maps),
    }  # fmt: skip


# -- arguments and what they must become upstream ------------------------------------


def _arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Every argument the tool takes, made from its schema; strings made tricky where the schema still holds."""
    arguments = {name: example(sub, schema) for name, sub in schema["properties"].items()}
    check = jsonschema.Draft202012Validator(schema)
    assert check.is_valid(arguments), (arguments, next(check.iter_errors(arguments)).message)
    for name, value in arguments.items():
        if isinstance(value, str):
            for tricky in (TRICKY + value, value + TRICKY):
                if check.is_valid({**arguments, name: tricky}):
                    arguments[name] = tricky
                    break
    return arguments


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


@dataclass
class Expected:
    method: str
    raw_path: str
    query: list[list[str]]
    headers: dict[str, str]
    body: Any  # None: no body


def _expected(
    case: Case, operation: tuple[str, str, dict[str, Any], list[dict[str, Any]]], arguments: dict[str, Any],
    whole_body: bool = False,
) -> Expected:
    """What the upstream must receive; ``whole_body``: the tool takes the body as one ``body`` argument."""
    method, path, op, params = operation
    raw_path = case.base_path + path
    query: list[list[str]] = []
    headers: dict[str, str] = {}
    body_fields = dict(arguments)
    for param in params:
        name, where = param["name"], param["in"]
        if name not in arguments:
            continue
        value = body_fields.pop(name)
        if where == "path":
            raw_path = raw_path.replace("{" + name + "}", quote(_plain(value), safe=""))
        elif where == "query":
            explode = param.get("explode", param.get("style", "form") == "form")
            if isinstance(value, list) and explode:
                query.extend([name, _plain(v)] for v in value)
            elif isinstance(value, list):
                query.append([name, ",".join(map(_plain, value))])
            else:
                query.append([name, _plain(value)])
        elif where == "header":
            headers[name.lower()] = _plain(value)
    body: Any = None
    if "requestBody" in op and "application/json" in resolve(op["requestBody"], case.doc).get("content", {}):
        body = body_fields.pop("body", None) if whole_body else body_fields
    assert not body_fields or body is body_fields, f"arguments that are neither parameters nor body: {body_fields}"
    return Expected(method.upper(), raw_path, query, headers, body)


def _whole_body(tool: dict[str, Any], operation: tuple[str, str, dict[str, Any], list[dict[str, Any]]]) -> bool:
    return "body" in tool["inputSchema"]["properties"] and "body" not in {p["name"] for p in operation[3]}


def _check_request(case: Case, record: dict[str, Any], expected: Expected, client_token: str | None) -> None:
    assert record["method"] == expected.method
    assert record["raw_path"] == expected.raw_path
    assert record["query"] == expected.query
    def sent(name: str) -> list[str]:
        return [v for k, v in record["headers"] if k == name]

    for name, value in expected.headers.items():  # each header once
        assert sent(name) == [value], (name, record["headers"])
    for name, value in case.headers.items():  # the configured credentials, once, on every request
        assert [v for k, v in record["headers"] if k == name.lower()] == [value], record["headers"]
    if client_token is not None:
        assert client_token not in json.dumps(record)
    secret = next(iter(case.headers.values()))
    assert secret not in json.dumps({"q": record["query"], "b": record["body"], "p": record["raw_path"]})
    if expected.body is None:
        assert record["body"] is None
    else:
        assert sent("content-type") == ["application/json"], record["headers"]
        assert json.loads(record["body"]) == expected.body


def _check_answer(result: Any, tool: dict[str, Any], answer: dict[str, Any]) -> None:
    assert not result.is_error, result.raw
    assert 200 <= answer["status"] < 300
    body = answer["body"]
    if "outputSchema" in tool:
        value = json.loads(body)
        assert result.structured_content == value
        jsonschema.Draft202012Validator(tool["outputSchema"]).validate(value)
    if body:
        assert [c["text"] for c in result.raw["content"]] == [body]
    else:
        assert result.raw["content"] == []


# -- the run -----------------------------------------------------------------------------


async def _every_operation(client: Client, case: Case, upstream: Upstream, client_token: str | None) -> None:
    doc = case.doc
    operations = _operations(doc)
    secret = next(iter(case.headers.values()))
    async with client as c:
        tools = {t["name"]: t for t in await c.list_tools()}
        assert secret not in json.dumps(tools)
        assert set(tools) == set(operations) - case.excluded - {case.resource, case.template}
        for number, (name, tool) in enumerate(sorted(tools.items())):
            arguments = _arguments(tool["inputSchema"])
            expected = _expected(case, operations[name], arguments, _whole_body(tool, operations[name]))
            upstream.clear()
            result = await c.call_tool(name, arguments)
            (record,) = upstream.log()
            assert record["operation"] == _operation_key(operations[name]), record
            _check_request(case, record, expected, client_token)
            _check_answer(result, tool, record["answer"])
            assert secret not in json.dumps(result.raw)

            if number % 3:
                continue
            status = ERRORS[number // 3 % len(ERRORS)]  # every third tool: each status several times
            upstream.plan(status, f"{name} failed on purpose")
            failed = await c.call_tool(name, arguments)
            assert failed.is_error and failed.text == f"HTTP {status} from the upstream API: {name} failed on purpose"

        (resource,) = await c.list_resources()
        upstream.clear()
        read = await c.read_resource(resource["uri"])
        (record,) = upstream.log()
        assert record["operation"] == _operation_key(operations[case.resource])
        assert json.loads(read.text) == json.loads(record["answer"]["body"])
        _check_request(case, record, _expected(case, operations[case.resource], {}), client_token)

        (template,) = await c.list_resource_templates()
        path = {k: quote(v, safe="") for k, v in case.template_variables.items()}
        uri = template["uriTemplate"].split("{?")[0].format(**path) + "?" + urlencode(case.template_query)
        upstream.clear()
        await c.read_resource(uri)
        (record,) = upstream.log()
        assert record["operation"] == _operation_key(operations[case.template])
        variables = {**case.template_variables, **case.template_query}
        _check_request(case, record, _expected(case, operations[case.template], variables), client_token)


def _operation_key(operation: tuple[str, str, Any, Any]) -> str:
    return f"{operation[0].upper()} {operation[1]}"


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_every_operation_over_stdio(served: tuple[Case, Upstream], era: str) -> None:
    case, upstream = served
    client = Client.stdio(sys.executable, ["-m", "wiremcp", "run", SERVER], env=_server_env(case, upstream), era=era)  # type: ignore[arg-type]
    asyncio.run(asyncio.wait_for(_every_operation(client, case, upstream, None), 120))


@pytest.fixture(scope="module")
def served_http(served: tuple[Case, Upstream]) -> Iterator[HTTPServer]:
    case, upstream = served
    server = HTTPServer(SERVER, env=_server_env(case, upstream))
    yield server
    server.stop()


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_every_operation_over_http(served_http: HTTPServer, served: tuple[Case, Upstream], era: str) -> None:
    case, upstream = served
    client = Client.http(served_http.url, era=era, headers={"Authorization": CLIENT_TOKEN})  # type: ignore[arg-type]
    asyncio.run(asyncio.wait_for(_every_operation(client, case, upstream, CLIENT_TOKEN), 120))


# -- the document read in-process ----------------------------------------------------------


def test_the_readme_document_becomes_tools_resources_and_templates() -> None:
    server = from_openapi(README.document, base_url="https://api.readme.example/v2", headers=README.headers,
                          route_maps=[RouteMap(**m) for m in README.route_maps])  # fmt: skip
    operations = _operations(README.doc)
    assert len(operations) == 54
    assert len(server.tools) == 50 and server.name == "ReadMe API" and server.version == "2.0.0"
    assert list(server.resources) == ["openapi://readme-api/outbound_ips"]
    assert list(server.resource_templates) == ["openapi://readme-api/branches/{branch}/reference/{slug}{?dereference,reduce}"]
    for name, tool in server.tools.items():
        method, path, op, params = operations[name]
        schema = tool.definition["inputSchema"]
        jsonschema.Draft202012Validator.check_schema(schema)
        assert set(schema.get("required", ())) >= {p["name"] for p in params if p["in"] == "path"}
        assert {p["name"] for p in params if p["name"].lower() != "accept"} <= set(schema["properties"])
        assert tool.definition.get("annotations", {}).get("readOnlyHint", False) is (method == "get")
    # multipart bodies (a file upload) are not offered: the operation's parameters only
    assert set(server.tools["createAPI"].definition["inputSchema"]["properties"]) == {"branch"}
    assert set(server.tools["uploadImage"].definition["inputSchema"]["properties"]) == {"resize_height"}
    owlbot = server.tools["askOwlbot"].definition["inputSchema"]  # an Accept header parameter: ignored (OpenAPI)
    assert list(owlbot["properties"]) == ["question"] and owlbot["required"] == ["question"]


def test_the_blockfrost_document_inlines_its_refs() -> None:
    server = from_openapi(BLOCKFROST.document, base_url="https://cardano-mainnet.blockfrost.example/api/v0",
                          headers=BLOCKFROST.headers, route_maps=[RouteMap(**m) for m in BLOCKFROST.route_maps])  # fmt: skip
    operations = _operations(BLOCKFROST.doc)
    assert len(operations) == 129 and len(server.tools) == 129 - 2 - len(BLOCKFROST.excluded)
    listed = json.dumps([tool.definition for tool in server.tools.values()])
    assert "#/components/" not in listed and '"nullable"' not in listed and '"example"' not in listed
    assert BLOCKFROST.headers["project_id"] not in listed
    for tool in server.tools.values():
        jsonschema.Draft202012Validator.check_schema(tool.definition["inputSchema"])
    # 3.0's nullable: a string or null, in a component schema reached through $ref
    block = server.tools["get_blocks__hash_or_number"].definition["outputSchema"]
    assert block["properties"]["slot"]["type"] == ["integer", "null"]
    # a Content-Type header parameter is ignored (OpenAPI): the body's media type is wiremcp's to set
    evaluate = server.tools["post_utils_txs_evaluate_utxos"].definition["inputSchema"]
    assert set(evaluate["properties"]) == {"version", "cbor", "additionalUtxoSet"} and evaluate["required"] == ["cbor"]


@pytest.mark.slow
def test_only_the_required_arguments_in_process(served: tuple[Case, Upstream]) -> None:
    # what is not given is not sent: no query pair, no header; a flattened body is sent as {}, a whole one not at all
    case, upstream = served
    server = from_openapi(case.document, base_url=upstream.url + case.base_path, headers=case.headers)
    operations = _operations(case.doc)

    async def main() -> None:
        async with connect(server) as mcp:
            for name, tool in server.tools.items():
                schema = tool.definition["inputSchema"]
                required = set(schema.get("required", ()))
                arguments = {k: v for k, v in _arguments(schema).items() if k in required}
                upstream.clear()
                result = await mcp.call_tool(name, arguments)
                (record,) = upstream.log()
                whole = _whole_body(tool.definition, operations[name])
                _check_request(case, record, _expected(case, operations[name], arguments, whole), None)
                _check_answer(result, tool.definition, record["answer"])

    asyncio.run(main())
