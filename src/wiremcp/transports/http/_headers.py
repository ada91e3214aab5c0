"""Request metadata headers (streamable-http.mdx, "Request Metadata").

The rules this module keeps for a POST whose body is a JSON-RPC request
("Server Validation"; the first that fails decides, and every failure is
`HeaderMismatch`, -32020, HTTP 400):

==============================  ==============================================
header                          rule
==============================  ==============================================
``MCP-Protocol-Version``        required; equals ``params._meta``'s
                                ``io.modelcontextprotocol/protocolVersion``
                                when the body carries one as a string (a body
                                without one is -32602, basic/index.mdx)
``Mcp-Method``                  required; equals ``method``
``Mcp-Name``                    for ``tools/call`` and ``prompts/get``
                                (``params.name``), ``resources/read``
                                (``params.uri``) and the tasks extension's
                                ``tasks/get``, ``tasks/update`` and
                                ``tasks/cancel`` (``params.taskId``,
                                tasks.md "Streamable HTTP: Routing
                                Headers"): required when the body carries
                                the value as a string; equals it
``Mcp-Param-{Name}``            for ``tools/call`` of a registered tool whose
                                ``inputSchema`` annotates properties with
                                ``x-mcp-header``: present exactly when the
                                argument at that property path is present and
                                not null; equals it (integers numerically)
==============================  ==============================================

Values are case-sensitive; names are not (ASGI hands them over lower-cased).
Repeated field lines are combined with ``", "`` (RFC 9110, section 5.3), so a
routing header sent twice never matches. ``Mcp-Name`` and ``Mcp-Param-*``
values are either plain (visible ASCII, space and tab only) or the Base64
sentinel ``=?base64?{Base64 of UTF-8}?=`` ("Value Encoding"), decoded before
the comparison; any other byte, bad Base64 or bad UTF-8 is a failure.

Only what the specification says a server MUST check is checked: nothing is
required of notifications (their header rules are undefined in 2026-07-28),
and an ``x-mcp-header`` annotation off a pure ``properties`` chain is ignored
(conforming clients drop such a tool; the tool's own schema still validates
its arguments).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, TypeVar

from ...jsonrpc import Request
from ...protocol import methods
from ...protocol.errors import HeaderMismatch
from ...protocol.headers import InvalidHeaderAnnotation, decode_header_value, encode_header_value, header_annotations
from ...protocol.meta import PROTOCOL_VERSION
from ...server import Server, Tool

if TYPE_CHECKING:
    from ...server.transport import FusedCall

__all__ = [
    "PROTOCOL_VERSION_HEADER",
    "METHOD_HEADER",
    "NAME_HEADER",
    "PARAM_HEADER_PREFIX",
    "NAME_FIELDS",
    "encode_header_value",
    "decode_header_value",
    "header_params",
    "HeaderRules",
]

log = logging.getLogger("wiremcp.transport")

# Lower-cased, as ASGI servers deliver header names.
PROTOCOL_VERSION_HEADER = b"mcp-protocol-version"
METHOD_HEADER = b"mcp-method"
NAME_HEADER = b"mcp-name"
PARAM_HEADER_PREFIX = "Mcp-Param-"

#: Method -> the ``params`` field mirrored in ``Mcp-Name`` ("Standard Request Headers").
NAME_FIELDS: dict[str, str] = {
    methods.TOOLS_CALL: "name",
    methods.PROMPTS_GET: "name",
    methods.RESOURCES_READ: "uri",
    # extensions/tasks/tasks.md, "Streamable HTTP: Routing Headers"
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

#: Integer forms a header may use for an integer argument ("42", "-7", "42.0", "4.2e1").
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


class _Param:
    """One ``x-mcp-header`` annotation: where the argument is and which header mirrors it."""

    __slots__ = ("path", "key", "header", "type")

    def __init__(self, path: tuple[str, ...], token: str, type_: Any) -> None:
        self.path = path
        self.header = PARAM_HEADER_PREFIX + token
        self.key = self.header.lower().encode("ascii")
        self.type = type_


def header_params(input_schema: Any) -> tuple[_Param, ...]:
    """The ``x-mcp-header`` annotations of a tool (rules: `wiremcp.protocol.headers`).

    Tools registered with wiremcp were checked at registration; a schema that
    breaks a rule anyway mirrors nothing, with a warning.
    """
    try:
        found = header_annotations(input_schema)
    except InvalidHeaderAnnotation as exc:
        log.warning("ignored the x-mcp-header annotations of a tool: %s", exc)
        return ()
    return tuple(_Param(p.path, p.name, p.type) for p in found)


def _argument_at(arguments: Any, path: tuple[str, ...]) -> Any:
    node = arguments
    for key in path:
        if type(node) is not dict:
            return None
        node = node.get(key)
    return node


def _matches(value: Any, text: str) -> bool:
    """Whether a decoded header ``text`` stands for the argument ``value`` ("Value Encoding")."""
    t = type(value)
    if t is str:
        return bool(text == value)
    if t is bool:
        return text == ("true" if value else "false")
    if t is int or t is float:
        # Compared numerically, so "42" matches 42.0 and "42.0" matches 42 ("Server Validation").
        if not _NUMBER.fullmatch(text):
            return False
        try:
            if "." not in text and "e" not in text and "E" not in text:
                return bool(int(text) == value)
            return bool(float(text) == value)
        except ValueError:  # more digits than int() converts
            return False
    return False  # an object, array or null has no header form


#: Most distinct header values each of `HeaderRules`'s caches holds before it is emptied.
_CACHED_VALUES = 256

_T = TypeVar("_T", str, "str | None")


def _remember(cache: dict[bytes, _T], raw: bytes, value: _T) -> _T:
    if len(cache) >= _CACHED_VALUES:
        cache.clear()
    cache[raw] = value
    return value


def _field(headers: dict[bytes, bytes], key: bytes) -> str | None:
    raw = headers.get(key)
    # Optional whitespace around a field value is not part of it (RFC 9110, section 5.5).
    return None if raw is None else raw.strip(b" \t").decode("latin-1")


class HeaderRules:
    """Checks one request's mirrored headers against its body (see the module docs).

    Built once per app; it caches each tool's ``x-mcp-header`` annotations,
    recomputed when a tool of that name is replaced.
    """

    __slots__ = ("server", "_params", "_texts", "_names", "_calls", "_get_tool")

    def __init__(self, server: Server) -> None:
        self.server = server
        self._params: dict[str, tuple[Tool, tuple[_Param, ...]]] = {}
        # Header values as received -> as compared (trimmed, Latin-1; Mcp-Name decoded, None when
        # invalid). Clients repeat a handful of values; each cache is emptied when it fills.
        self._texts: dict[bytes, str] = {}
        self._names: dict[bytes, str | None] = {}
        # (MCP-Protocol-Version, Mcp-Method, Mcp-Name) as received -> (version, name) as compared, or ()
        # when they cannot pass for a tools/call: `check_call`'s verdict per distinct triple.
        self._calls: dict[tuple[bytes | None, bytes | None, bytes | None], tuple[str, str] | tuple[()]] = {}
        self._get_tool = server.get_tool

    def check(self, headers: dict[bytes, bytes], request: Request) -> None:
        """Raise `HeaderMismatch` unless the headers agree with ``request``."""
        self.check_fields(headers, request.method, request.params)

    def check_fields(self, headers: dict[bytes, bytes], method: str, params: Any) -> None:
        """`check` for a request given by its ``method`` and ``params`` (no `Request` object needed)."""
        version = headers.get(PROTOCOL_VERSION_HEADER)
        if version is None:
            raise HeaderMismatch("Header mismatch: the MCP-Protocol-Version header is required")
        texts = self._texts
        meta = params.get("_meta") if type(params) is dict else None
        if type(meta) is dict:
            body_version = meta.get(PROTOCOL_VERSION)
            if type(body_version) is str:
                header_version = texts.get(version)
                if header_version is None:
                    header_version = _remember(texts, version, version.strip(b" \t").decode("latin-1"))
                if header_version != body_version:
                    raise HeaderMismatch(
                        f"Header mismatch: MCP-Protocol-Version header value {header_version!r} does not match "
                        f"the body's _meta protocol version {body_version!r}"
                    )
        raw_method = headers.get(METHOD_HEADER)  # `_field`, inline
        if raw_method is None:
            raise HeaderMismatch("Header mismatch: the Mcp-Method header is required")
        header_method = texts.get(raw_method)
        if header_method is None:
            header_method = _remember(texts, raw_method, raw_method.strip(b" \t").decode("latin-1"))
        if header_method != method:
            raise HeaderMismatch(
                f"Header mismatch: Mcp-Method header value {header_method!r} does not match body value {method!r}"
            )
        field = NAME_FIELDS.get(method)
        if field is None or type(params) is not dict:
            return
        body_name = params.get(field)
        if type(body_name) is not str:
            return  # the method reports the missing or mistyped field itself (-32602)
        raw = headers.get(NAME_HEADER)
        if raw is None:
            raise HeaderMismatch(f"Header mismatch: the Mcp-Name header is required for {method}")
        names = self._names
        if raw in names:
            name = names[raw]
        else:
            name = _remember(names, raw, decode_header_value(raw.strip(b" \t").decode("latin-1")))
        if name is None:
            raise HeaderMismatch("Header mismatch: the Mcp-Name header value is not valid (see Value Encoding)")
        if name != body_name:
            raise HeaderMismatch(
                f"Header mismatch: Mcp-Name header value {name!r} does not match body value {body_name!r}"
            )
        if method == methods.TOOLS_CALL:
            # `_tool_params`, inline: one lookup for the usual tool without annotations.
            cached = self._params.get(body_name)
            tool = self._get_tool(body_name)
            if cached is not None and cached[0] is tool:
                annotated = cached[1]
            else:
                annotated = self._tool_params(body_name)
            if annotated:
                self._check_params(headers, annotated, params.get("arguments"))

    def check_call(self, headers: dict[bytes, bytes], call: FusedCall) -> bool:
        """For the fused stage: True when `check_fields` passes for a fused ``tools/call`` (a `FusedCall`).

        The call's ``version`` is the body's ``_meta`` protocol version, its
        ``tool`` the tool it names, its ``arguments`` as sent; `MCPApp` hands
        this method to `ServerConnection.receive` as its ``vet``. False when it might not pass:
        the general path then runs `check_fields`, which gives the exact
        error. The three routing headers are looked up together, and each
        distinct triple of raw values is decoded and its ``Mcp-Method``
        checked once (a bounded cache); what depends on the body (the
        version, the name, the tool's ``x-mcp-header`` parameters) is
        compared on every request.
        """
        key = (headers.get(PROTOCOL_VERSION_HEADER), headers.get(METHOD_HEADER), headers.get(NAME_HEADER))
        known = self._calls.get(key)
        if known is None:
            known = self._call_headers(key)
        tool = call.tool
        name = tool.name
        if not known or known[0] != call.version or known[1] != name:
            return False
        cached = self._params.get(name)  # `_tool_params`, inline, for the tool in hand
        annotated = cached[1] if cached is not None and cached[0] is tool else self._tool_params(name)
        if annotated:
            try:
                self._check_params(headers, annotated, call.arguments)
            except HeaderMismatch:
                return False
        return True

    def _call_headers(
        self, key: tuple[bytes | None, bytes | None, bytes | None]
    ) -> tuple[str, str] | tuple[()]:
        """`check_call`'s verdict on one triple of raw header values (remembered)."""
        calls = self._calls
        if len(calls) >= _CACHED_VALUES:
            calls.clear()
        raw_version, raw_method, raw_name = key
        known: tuple[str, str] | tuple[()] = ()
        if raw_version is not None and raw_method is not None and raw_name is not None:
            name = decode_header_value(raw_name.strip(b" \t").decode("latin-1"))
            if name is not None and raw_method.strip(b" \t").decode("latin-1") == methods.TOOLS_CALL:
                known = (raw_version.strip(b" \t").decode("latin-1"), name)
        calls[key] = known
        return known

    def _tool_params(self, name: str) -> tuple[_Param, ...]:
        tool = self.server.get_tool(name)
        if tool is None:
            return ()
        cached = self._params.get(name)
        if cached is not None and cached[0] is tool:
            return cached[1]
        found = header_params(tool.definition.get("inputSchema"))
        self._params[name] = (tool, found)
        return found

    @staticmethod
    def _check_params(headers: dict[bytes, bytes], annotated: tuple[_Param, ...], arguments: Any) -> None:
        for p in annotated:
            value = _argument_at(arguments, p.path)
            raw = _field(headers, p.key)
            where = ".".join(p.path)
            if value is None:
                if raw is not None:
                    raise HeaderMismatch(
                        f"Header mismatch: {p.header} header is present but argument {where!r} is absent"
                    )
                continue
            if raw is None:
                raise HeaderMismatch(f"Header mismatch: {p.header} header is required: argument {where!r} is present")
            text = decode_header_value(raw)
            if text is None:
                raise HeaderMismatch(f"Header mismatch: {p.header} header value is not valid (see Value Encoding)")
            if not _matches(value, text):
                raise HeaderMismatch(
                    f"Header mismatch: {p.header} header value {text!r} does not match argument {where!r}"
                )
