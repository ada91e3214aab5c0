"""Servers from an OpenAPI document or an ASGI app: `from_openapi`, `from_fastapi`, `RouteMap` (docs/openapi.md).

``from_openapi(document, base_url=...)`` reads the document (`_openapi_doc`)
and registers each operation on a new `Server`:

* what an operation becomes is decided by the ``route_maps``, in order, the
  first that matches winning (none matching: a tool). A map matches by HTTP
  method, a regular expression searched in the path, and tags (all of them
  on the operation); a ``"resource"`` map matches only a GET without path
  parameters or other required arguments, a ``"template"`` map only a GET
  with path parameters whose other arguments are optional query parameters
  (they become ``{?a,b}``); ``"exclude"`` leaves the operation out;
* a tool's ``inputSchema`` and ``outputSchema`` are the operation's (the
  latter when its 2xx JSON response is an object); GET and HEAD tools are
  ``readOnlyHint``, PUT and DELETE ``idempotentHint``. Its tags are the
  operation's. A call builds the upstream request: path parameters
  percent-encoded (nothing of a value can change the path), query
  parameters repeated or comma-joined per ``explode``, header and cookie
  parameters as headers, the body as JSON (or a form);
* ``headers=`` (a mapping, or a function returning one, plain or async,
  asked on every call: for a token that is refreshed) are sent on every
  upstream request and win over any header argument of the same name, which
  is then not offered to the model. The MCP request's own headers (its
  ``Authorization`` above all) are never forwarded: the server speaks to the
  upstream as itself (security_best_practices.mdx, "Token Passthrough");
* a 2xx answer is the result: JSON as structured content when the tool has an
  ``outputSchema``, else the body's text; any other status is a tool
  execution error (``isError``) with the status and the body's text; a
  request that fails (refused connection, timeout) is one too. A resource
  read answers a 404 with "resource not found" (-32602) and any other
  failure with -32603 carrying the status and body;
* the upstream is reached with aiohttp (the ``http`` extra), one
  ``ClientSession`` opened on first use and closed when the server's
  lifespan ends; ``client=`` passes your own session (you close it).
  Redirects are followed (`MAX_REDIRECTS`) only within ``base_url``'s
  origin: the configured headers never reach another host, and a redirect
  elsewhere is an error result.

``from_fastapi(app)`` reads ``app.openapi()`` and calls the app in-process
through its ASGI interface (`_openapi_asgi`): no socket, no HTTP client.
"""

from __future__ import annotations

import inspect
import re
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, Iterable, Literal, Mapping, Union
from urllib.parse import quote, urlencode

import orjson

from ..jsonrpc import JSONRPCError
from ._openapi_doc import Argument, Operation, operations, read_document
from ._server import Server
from ._tools import ToolResult

if TYPE_CHECKING:
    import aiohttp

    from ._lifespan import LifespanFactory

__all__ = ["RouteMap", "Kind", "HeadersSource", "Send", "from_openapi", "from_fastapi", "MAX_ERROR_BODY", "MAX_REDIRECTS"]

Kind = Literal["tool", "resource", "template", "exclude"]
#: ``headers=``: fixed headers, or a function (plain or async) returning them, asked on every call.
HeadersSource = Union[Mapping[str, str], Callable[[], Union[Mapping[str, str], Awaitable[Mapping[str, str]]]]]
#: How a request reaches the upstream: ``(method, path_and_query, headers, body) -> (status, content_type, body)``.
Send = Callable[[str, str, list[tuple[str, str]], "bytes | None"], Awaitable[tuple[int, str, bytes]]]
#: The most of an error answer's body put in a tool execution error (characters).
MAX_ERROR_BODY = 4000
#: Redirects followed within the API's origin (scheme, host and port of ``base_url``); one elsewhere is an error.
MAX_REDIRECTS = 5
_VARNAME = re.compile(r"[A-Za-z0-9_]+")
#: Characters a cookie value may hold as they are (RFC 6265 cookie-octet, less ``%``): the rest is percent-encoded.
_COOKIE_SAFE = "!#$&'()*+-./:<=>?@[]^_`{|}~"



@dataclass(frozen=True, slots=True, kw_only=True)
class RouteMap:
    """What the operations it matches become: ``kind`` is "tool", "resource", "template" or "exclude".

    ``methods``: HTTP methods (any case; None: all). ``pattern``: a regular
    expression searched in the path as the document writes it
    (``/pets/{petId}``). ``tags``: the operation must have all of them.
    """

    methods: Iterable[str] | None = None
    pattern: str = ""
    tags: Iterable[str] = ()
    kind: Kind = "tool"

    def __post_init__(self) -> None:
        if self.kind not in ("tool", "resource", "template", "exclude"):
            raise ValueError(f"RouteMap kind must be tool, resource, template or exclude, not {self.kind!r}")
        if isinstance(self.methods, str) or isinstance(self.tags, str):
            raise TypeError("RouteMap methods= and tags= are collections (write methods=['GET']), not one string")
        object.__setattr__(self, "methods", None if self.methods is None else frozenset(m.lower() for m in self.methods))
        object.__setattr__(self, "tags", frozenset(self.tags))
        re.compile(self.pattern)  # a bad pattern is refused now

    def matches(self, op: Operation) -> bool:
        """Whether this map decides ``op``: its method, path and tags, and a shape its kind can serve."""
        methods = self.methods
        if methods is not None and op.method not in methods:
            return False
        if not set(self.tags) <= set(op.tags):
            return False
        if self.pattern and re.search(self.pattern, op.path) is None:
            return False
        if self.kind == "resource":
            return op.method == "get" and not op.path_params and not op.required
        if self.kind == "template":
            others = [a for a in op.arguments if a.location != "path"]
            return (
                op.method == "get" and bool(op.path_params) and all(a.location == "query" for a in others)
                and not set(op.required) - {a.name for a in op.arguments if a.location == "path"}
            )
        return True


def from_openapi(
    document: dict[str, Any] | str | Path,
    *,
    base_url: str,
    client: aiohttp.ClientSession | None = None,
    route_maps: Iterable[RouteMap] | None = None,
    headers: HeadersSource | None = None,
    name: str | None = None,
    uri_prefix: str | None = None,
    **server_options: Any,
) -> Server:
    """A `Server` whose tools, resources and templates are the document's operations, calling ``base_url``.

    ``document``: a dict, JSON text or the path of a JSON file (OpenAPI 3.0 or
    3.1). ``name``: the server's (default: the document's ``info.title``).
    ``uri_prefix``: the start of resource URIs (default ``openapi://`` and
    the name, slugged). Other keywords go to `Server` (``version`` defaults to
    the document's ``info.version``).
    """
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise ValueError(f"base_url must be an http:// or https:// URL, not {base_url!r}")
    upstream = _Aiohttp(base_url.rstrip("/"), client)
    return _build(document, upstream.send, upstream.aclose, route_maps, headers, name, uri_prefix, server_options)


def from_fastapi(
    app: Any,
    *,
    route_maps: Iterable[RouteMap] | None = None,
    headers: HeadersSource | None = None,
    name: str | None = None,
    uri_prefix: str | None = None,
    **server_options: Any,
) -> Server:
    """`from_openapi` of ``app.openapi()`` (FastAPI), calling the app in-process through ASGI.

    Any ASGI app with an ``openapi()`` method returning its document works.
    """
    openapi = getattr(app, "openapi", None)
    if not callable(openapi):
        raise TypeError(f"from_fastapi needs an app with an openapi() method (FastAPI), not {app!r}")
    from ._openapi_asgi import asgi_send

    async def nothing() -> None:
        return None

    return _build(openapi(), asgi_send(app), nothing, route_maps, headers, name, uri_prefix, server_options)


def _build(
    document: dict[str, Any] | str | Path,
    send: Send,
    aclose: Callable[[], Awaitable[None]],
    route_maps: Iterable[RouteMap] | None,
    headers: HeadersSource | None,
    name: str | None,
    uri_prefix: str | None,
    server_options: dict[str, Any],
) -> Server:
    doc = read_document(document)
    found = doc.get("info")
    info: dict[str, Any] = found if isinstance(found, dict) else {}
    title = name or str(info.get("title") or "openapi")
    server_options.setdefault("version", str(info.get("version") or "0.0.0"))
    server_options["lifespan"] = _closing(aclose, server_options.get("lifespan"))
    server = Server(title, **server_options)
    maps = list(route_maps or ())
    for each in maps:
        if not isinstance(each, RouteMap):
            raise TypeError(f"route_maps holds RouteMap objects, not {each!r}")
    fixed = {k.lower() for k in headers} if isinstance(headers, Mapping) else set()
    prefix = uri_prefix if uri_prefix is not None else "openapi://" + (re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "api")
    caller = _Caller(send, headers)
    for op in operations(doc):
        if fixed:  # a configured header wins: the model is not offered it
            _drop_headers(op, fixed)
        kind = next((m.kind for m in maps if m.matches(op)), "tool")
        if kind == "exclude":
            continue
        if kind == "tool":
            _add_tool(server, op, caller)
        else:
            _add_resource(server, op, caller, prefix.rstrip("/"), kind == "template")
    return server


def _closing(aclose: Callable[[], Awaitable[None]], inner: LifespanFactory | None) -> LifespanFactory:
    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[Any]:
        try:
            if inner is None:
                yield None
            else:
                async with inner(server) as value:
                    yield value
        finally:
            await aclose()

    return lifespan


def _drop_headers(op: Operation, fixed: set[str]) -> None:
    dropped = {a.name for a in op.arguments if a.location == "header" and a.wire.lower() in fixed}
    if not dropped:
        return
    op.arguments = [a for a in op.arguments if a.name not in dropped]
    schema = op.input_schema
    schema["properties"] = {k: v for k, v in schema["properties"].items() if k not in dropped}
    if "required" in schema:
        schema["required"] = [r for r in schema["required"] if r not in dropped]
        if not schema["required"]:
            del schema["required"]


def _add_tool(server: Server, op: Operation, caller: _Caller) -> None:
    async def call(**arguments: Any) -> ToolResult:
        status, content_type, body = await caller.request(op, arguments)
        if not 200 <= status < 300:
            return ToolResult([_error_text(status, body)], is_error=True)
        value = _json(content_type, body)
        if op.output_schema is not None and isinstance(value, dict):
            return ToolResult([body.decode("utf-8", "replace")], structured_content=value)
        text = body.decode("utf-8", "replace")
        return ToolResult([text] if text else [])

    call.__name__ = op.name
    annotations: dict[str, Any] = {}
    if op.method in ("get", "head"):
        annotations["readOnlyHint"] = True
    elif op.method in ("put", "delete"):
        annotations["idempotentHint"] = True
    server.add_tool(
        call, name=op.name, description=op.description or f"{op.method.upper()} {op.path}",
        input_schema=op.input_schema, output_schema=op.output_schema, annotations=annotations or None,
        tags=op.tags or None,
    )  # fmt: skip


def _add_resource(server: Server, op: Operation, caller: _Caller, prefix: str, template: bool) -> None:
    uri = prefix + op.path
    if template:
        bad = [p for p in op.path_params if not _VARNAME.fullmatch(p)]
        query = [a.name for a in op.arguments if a.location == "query"]
        bad += [q for q in query if not _VARNAME.fullmatch(q)]
        if bad:
            raise ValueError(f"{op.method.upper()} {op.path}: {bad[0]!r} cannot be a URI template variable; map it to a tool")
        if query:
            uri += "{?" + ",".join(query) + "}"
    by_wire = {a.wire: a.name for a in op.arguments if a.location == "path"}
    uri = re.sub(r"\{([^}?]+)\}", lambda m: "{" + by_wire.get(m.group(1), m.group(1)) + "}", uri)

    async def read(**variables: Any) -> dict[str, Any] | None:
        status, content_type, body = await caller.request(op, variables)
        if status == 404:
            return None  # resources/read: -32602, resource not found
        if not 200 <= status < 300:
            raise JSONRPCError(_error_text(status, body))
        return {"text": body.decode("utf-8", "replace"), "mimeType": content_type or "text/plain"}

    read.__name__ = op.name
    server.add_resource(read, uri, name=op.name, description=op.description, tags=op.tags or None)


def _error_text(status: int, body: bytes) -> str:
    text = body.decode("utf-8", "replace")
    if len(text) > MAX_ERROR_BODY:
        text = text[:MAX_ERROR_BODY] + "..."
    return f"HTTP {status} from the upstream API: {text}" if text else f"HTTP {status} from the upstream API"


def _json(content_type: str, body: bytes) -> Any:
    base = content_type.split(";")[0].strip().lower()
    if body and (base == "application/json" or base.endswith("+json")):
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            return None
    return None


def _scalar(value: Any) -> str:
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return orjson.dumps(value).decode()
    return str(value)


class _Caller:
    """Builds an operation's upstream request from a call's arguments and sends it."""

    __slots__ = ("send", "headers")

    def __init__(self, send: Send, headers: HeadersSource | None) -> None:
        self.send = send
        self.headers = headers

    async def _fixed(self) -> Mapping[str, str]:
        source = self.headers
        if source is None:
            return {}
        if isinstance(source, Mapping):
            return source
        out = source()
        if inspect.isawaitable(out):
            out = await out
        return out

    async def request(self, op: Operation, arguments: dict[str, Any]) -> tuple[int, str, bytes]:
        path = op.path
        query: list[tuple[str, str]] = []
        sent: list[tuple[str, str]] = []
        cookies: list[str] = []
        body_value: Any = None
        body_fields: dict[str, Any] = {}
        for arg in op.arguments:
            if arg.name not in arguments:
                continue
            value = arguments[arg.name]
            _place(arg, value, query, sent, cookies, body_fields)
            if arg.location == "path":
                path = path.replace("{" + arg.wire + "}", quote(_scalar(value), safe=""))
            elif arg.location == "body":
                body_value = value
        fixed = await self._fixed()
        names = {k.lower() for k in fixed}
        headers = [(k, v) for k, v in sent if k.lower() not in names] + [(k, str(v)) for k, v in fixed.items()]
        if cookies and "cookie" not in names:
            headers.append(("Cookie", "; ".join(cookies)))
        body: bytes | None = None
        if op.body_type and any(a.location == "body*" for a in op.arguments):
            body_value = body_fields  # an object body of separate arguments: sent even when empty
        if body_value is not None:
            if op.body_type == "application/x-www-form-urlencoded" and isinstance(body_value, dict):
                body = urlencode({k: _scalar(v) for k, v in body_value.items()}).encode()
            else:
                body = orjson.dumps(body_value)
            headers.append(("Content-Type", op.body_type or "application/json"))
        target = path + ("?" + urlencode(query) if query else "")
        try:
            return await self.send(op.method.upper(), target, headers, body)
        except (OSError, TimeoutError) as exc:
            return 502, "text/plain", f"the upstream request failed: {type(exc).__name__}: {exc}".encode()


def _place(
    arg: Argument, value: Any, query: list[tuple[str, str]], headers: list[tuple[str, str]], cookies: list[str],
    body_fields: dict[str, Any],
) -> None:
    if value is None and arg.location != "body*":
        return
    if arg.location == "query":
        if isinstance(value, list):
            if arg.explode:
                query.extend((arg.wire, _scalar(v)) for v in value)
            else:
                query.append((arg.wire, ",".join(_scalar(v) for v in value)))
        else:
            query.append((arg.wire, _scalar(value)))
    elif arg.location == "header":
        headers.append((arg.wire, ",".join(map(_scalar, value)) if isinstance(value, list) else _scalar(value)))
    elif arg.location == "cookie":
        cookies.append(f"{arg.wire}={quote(_scalar(value), safe=_COOKIE_SAFE)}")
    elif arg.location == "body*":
        body_fields[arg.wire] = value


class _Aiohttp:
    """The upstream over HTTP with aiohttp: one session, made on first use (or the caller's)."""

    __slots__ = ("base_url", "client", "_own")

    def __init__(self, base_url: str, client: aiohttp.ClientSession | None) -> None:
        self.base_url = base_url
        self.client = client
        self._own: aiohttp.ClientSession | None = None

    async def send(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes | None) -> tuple[int, str, bytes]:
        import aiohttp
        from yarl import URL

        session = self.client
        if session is None:
            if self._own is None or self._own.closed:
                self._own = aiohttp.ClientSession()
            session = self._own
        url = URL(self.base_url + target, encoded=True)
        origin = url.origin()
        try:
            for _ in range(MAX_REDIRECTS + 1):
                async with session.request(method, url, headers=headers, data=body, allow_redirects=False) as response:
                    content = await response.read()
                    location = response.headers.get("Location")
                    if response.status not in (301, 302, 303, 307, 308) or location is None:
                        return response.status, response.headers.get("Content-Type", ""), content
                next_url = url.join(URL(location))
                if next_url.origin() != origin:  # the configured headers never leave the API's origin
                    return response.status, "text/plain", f"redirected to another origin: {next_url}".encode()
                url = next_url
                if response.status == 303 or (response.status in (301, 302) and method == "POST"):
                    method, body = "GET", None
            return 508, "text/plain", f"more than {MAX_REDIRECTS} redirects".encode()
        except aiohttp.ClientError as exc:
            return 502, "text/plain", f"the upstream request failed: {type(exc).__name__}: {exc}".encode()

    async def aclose(self) -> None:
        own, self._own = self._own, None
        if own is not None:
            await own.close()
