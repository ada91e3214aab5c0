"""Tool transformation: a tool derived from another, its arguments renamed, hidden or described, its output wrapped.

``server.add_transformed(source, name=..., arguments={...}, output=fn)``
(`Server.add_transformed`, options in `TransformOptions`, the argument rules
in `Arg`). The source is a tool of this server (a local one, or a mounted
server's copy, found by name), a `Tool` object (of another server, say), or,
on a server that forwards (``wiremcp.proxy``), a tool of the upstream named
by its upstream name. Rules:

* the derived ``inputSchema`` is the source's with each `Arg` applied: a
  renamed property under its new name (its ``required`` entry too), a hidden
  one removed, a description or a ``default`` set on the property (a default
  makes it optional). It is closed (``additionalProperties: false``) whatever
  the source's, so a hidden argument, or a renamed one under its old name, is
  refused as any unknown argument is: the derived tool's compiled validator
  gives the same tool execution error (``Invalid arguments for tool ...``);
* a call is checked against the derived schema, then its arguments are
  mapped back (new name -> source name, a hidden argument's fixed value
  added, an absent defaulted one filled) and the source is called with them:
  a local source through `Tool.call` (it checks them again against its own
  schema, converts and runs them as it always does), a forwarded one by the
  `Forwarder`, which sends ``tools/call`` upstream under the source's name;
* ``output`` (plain or async) receives the source's result as a `ToolResult`
  (content blocks, ``structured_content``, ``meta``) and what it returns
  becomes the derived tool's result as a tool function's return value does
  (`Tool`; its return annotation makes the ``outputSchema``, checked). An
  error result (``isError``) is passed on as it is, without ``output``;
  without ``output`` every result is passed on and the source's
  ``outputSchema`` is published;
* the derived definition keeps the source's ``title``, ``annotations``,
  ``icons`` and ``_meta`` (``title``/``description`` may be replaced), and
  the derived tool its scopes and MCP Apps links: a derived tool never lets a
  caller do more than the source lets it;
* mistakes are refused at registration (ValueError/TypeError): an `Arg` for
  an argument the source does not have, a name taken twice, a required
  argument hidden without a value, a default that is not JSON. For a
  forwarded source the upstream's schema is known only once listed: those
  mistakes are then logged, and the derived tool left out, when the list is
  read; a call to a derived tool before any list asks upstream for one.
"""

from __future__ import annotations

import copy
import inspect
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Final, Union

import orjson

from ..jsonrpc import JSONRPCError
from ._options import TAGS_META, ToolOptions, TransformOptions
from ._schema import SchemaError, compile_validator
from ._tools import Tool, ToolResult, error_result, _return_hint

if TYPE_CHECKING:
    from ._context import Context
    from ._forward import Upstream
    from ._server import Server
    from ._workers import Workers

__all__ = ["Arg", "Output", "ArgumentMap", "TransformedTool", "ForwardedTransforms", "derive_definition", "install", "MISSING"]

log = logging.getLogger("wiremcp.server")


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


#: No value given (``Arg.default``): distinct from None, which is a value.
MISSING: Final = _Missing()

#: ``output(result) -> value``: plain or async; ``result`` is the source's `ToolResult`.
Output = Callable[[ToolResult], Any]
#: Calls the source with mapped arguments: ``(arguments, ctx, workers, mask) -> result``.
CallSource = Callable[[dict[str, Any], "Context | None", "Workers | None", bool], Union[dict[str, Any], Awaitable[dict[str, Any]]]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Arg:
    """How one argument of the source appears in the derived tool.

    ``rename``: its name in the derived tool. ``description``: replaces the
    property's. ``default``: a value the derived tool sends when the caller
    leaves the argument out (published as the property's ``default``; the
    argument becomes optional). ``hide=True``: the argument is not in the
    derived schema and a caller may not send it; the source gets ``default``
    when one is given, else nothing (allowed only for an optional argument).
    """

    rename: str | None = None
    description: str | None = None
    default: Any = MISSING
    hide: bool = False


class ArgumentMap:
    """The derived ``inputSchema`` of one source schema, and the mapping of a call's arguments back to the source's."""

    __slots__ = ("schema", "_back", "_fixed", "_defaults", "_copy")

    def __init__(self, source_schema: dict[str, Any], arguments: dict[str, Arg], where: str) -> None:
        if type(source_schema) is not dict or source_schema.get("type") != "object":
            raise ValueError(f"{where}: the source's inputSchema is not an object schema")
        properties = source_schema.get("properties") or {}
        required = source_schema.get("required") or []
        if type(properties) is not dict or type(required) is not list:
            raise ValueError(f"{where}: the source's inputSchema has malformed properties or required")
        for old, given in arguments.items():
            if not isinstance(given, Arg):
                raise TypeError(f"{where}: arguments[{old!r}] must be an Arg, not {given!r}")
            if old not in properties:
                known = ", ".join(map(repr, properties)) or "none"
                raise ValueError(f"{where}: the source has no argument {old!r} (its arguments: {known})")
        new_properties: dict[str, Any] = {}
        new_required: list[str] = []
        back: dict[str, str] = {}
        fixed: dict[str, Any] = {}
        defaults: list[tuple[str, str, Any]] = []
        for old, sub in properties.items():
            arg = arguments.get(old)
            if arg is None:
                _claim(new_properties, old, sub, where)
                if old in required:
                    new_required.append(old)
                continue
            if arg.default is not MISSING:
                _check_json(arg.default, f"{where}: the default of argument {old!r}")
            if arg.hide:
                if arg.rename is not None or arg.description is not None:
                    raise ValueError(f"{where}: argument {old!r} is hidden: rename= and description= do not apply")
                if arg.default is not MISSING:
                    fixed[old] = arg.default
                elif old in required:
                    raise ValueError(f"{where}: argument {old!r} is required by the source: hiding it needs default=")
                continue
            new = old if arg.rename is None else arg.rename
            if type(new) is not str or not new:
                raise ValueError(f"{where}: argument {old!r}: rename must be a non-empty string, not {new!r}")
            entry = dict(sub) if type(sub) is dict else sub
            if arg.description is not None:
                if type(arg.description) is not str:
                    raise TypeError(f"{where}: argument {old!r}: description must be a string")
                if type(entry) is not dict:
                    raise ValueError(f"{where}: argument {old!r} has a boolean schema: it takes no description")
                entry["description"] = arg.description
            if arg.default is not MISSING:
                if type(entry) is dict:
                    entry["default"] = arg.default
                defaults.append((new, old, arg.default))
            elif old in required:
                new_required.append(new)
            _claim(new_properties, new, entry, where)
            if new != old:
                back[new] = old
        _check_values(source_schema, properties, [*fixed.items(), *((old, value) for _, old, value in defaults)], where)
        schema = {k: v for k, v in source_schema.items() if k not in ("properties", "required", "additionalProperties")}
        schema["properties"] = new_properties
        if new_required:
            schema["required"] = new_required
        schema["additionalProperties"] = False
        #: The derived tool's ``inputSchema``.
        self.schema = schema
        self._back = back
        self._fixed = fixed
        self._defaults = tuple(defaults)
        # a fixed or default value that is a list or an object is copied for each call: the source may change it
        self._copy = any(type(v) in (list, dict) for v in (*fixed.values(), *(d[2] for d in defaults)))

    def to_source(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """A checked call's arguments as the source takes them."""
        back = self._back
        out = dict(self._fixed)
        for key, value in arguments.items():
            out[back.get(key, key)] = value
        for new, old, value in self._defaults:
            if new not in arguments:
                out[old] = value
        return copy.deepcopy(out) if self._copy else out


def _claim(properties: dict[str, Any], name: str, sub: Any, where: str) -> None:
    if name in properties:
        raise ValueError(f"{where}: two arguments would be named {name!r}")
    properties[name] = sub


def _check_values(source: dict[str, Any], properties: dict[str, Any], values: list[tuple[str, Any]], where: str) -> None:
    """A fixed or default value the source's own schema refuses is a registration error, not a failing call."""
    for old, value in values:
        one = {k: v for k, v in source.items() if k in ("$defs", "definitions")}
        one.update({"type": "object", "properties": {old: properties[old]}})
        try:
            problem = compile_validator(one, noun="argument")({old: value})
        except SchemaError:
            continue  # the source's schema is its own business: its call checks the value
        if problem is not None:
            raise ValueError(f"{where}: the value given for argument {old!r} does not fit the source's schema: {problem}")


def _check_json(value: Any, what: str) -> None:
    try:
        orjson.dumps(value)
    except TypeError as exc:
        raise TypeError(f"{what} is not JSON: {exc}") from None


def derive_definition(source: dict[str, Any], options: TransformOptions, schema: dict[str, Any]) -> dict[str, Any]:
    """The derived tool's definition: the source's, renamed, with ``schema`` as its ``inputSchema`` (no outputSchema)."""
    out: dict[str, Any] = {"name": options.name}
    title = options.title if options.title is not None else source.get("title")
    if title is not None:
        out["title"] = title
    description = options.description if options.description is not None else source.get("description")
    if description is not None:
        out["description"] = description
    out["inputSchema"] = schema
    for key, value in source.items():
        if key not in ("name", "title", "description", "inputSchema", "outputSchema", "execution"):
            out[key] = value
    return out


class TransformedTool(Tool):
    """A tool derived from a source (see the module docs): checks, maps, calls the source, wraps its output.

    ``call_source`` runs the source with mapped arguments; None for a
    forwarded source, which the `Forwarder` calls (`prepare_source`, `finish`).
    """

    __slots__ = ("source_name", "arguments", "_call_source", "_output_fn", "_output_async", "_source_wants_context")

    def __init__(
        self,
        source_definition: dict[str, Any],
        options: TransformOptions,
        call_source: CallSource | None = None,
        *,
        fn: Callable[..., Any] | None = None,
        wants_context: bool = False,
    ) -> None:
        name = options.name
        if type(name) is not str or not name:
            raise ValueError(f"a transformed tool needs a name (a non-empty string), not {name!r}")
        where = f"tool {name!r}"
        for field in ("title", "description"):
            value = getattr(options, field)
            if value is not None and type(value) is not str:
                raise TypeError(f"{where}: {field} must be a string")
        arguments = options.arguments or {}
        if type(arguments) is not dict:
            raise TypeError(f"{where}: arguments must be a dict of source argument name -> Arg")
        self.source_name: str = source_definition.get("name", "?")
        self.arguments = ArgumentMap(source_definition.get("inputSchema", {}), arguments, where)
        self.name = name
        self.fn = fn if fn is not None else (options.output or _no_function)
        self.scopes = ()
        self.task = None
        self.is_async = True
        self.threaded = False
        self.context_param = None
        self.inputs = []
        self.fused_arguments = None
        self.fused_threaded = None
        self.depends = None
        self._convert = None
        self._call_source = call_source
        self._source_wants_context = wants_context
        try:
            self._check = compile_validator(self.arguments.schema, noun="argument")
        except SchemaError as exc:
            raise SchemaError(f"{where}: input_schema: {exc}") from None
        output = options.output
        self._output_fn = output
        self._output_async = False
        if output is not None:
            if not callable(output):
                raise TypeError(f"{where}: output must be a function of the source's ToolResult, not {output!r}")
            self._output_async = inspect.iscoroutinefunction(output)
            self._output(ToolOptions(output_schema=options.output_schema), _return_hint(output), where)
        else:
            if options.output_schema is not None:
                raise ValueError(f"{where}: output_schema= describes what output= returns: give output= too")
            self.output_schema = source_definition.get("outputSchema")
            self._output_check = None
            self._wrap = False
            self._result = self._unstructured
        definition = derive_definition(source_definition, options, self.arguments.schema)
        if self.output_schema is not None:
            definition["outputSchema"] = self.output_schema
        meta = definition.get("_meta")
        #: The source's tags (published in its ``_meta``, `_options.TAGS_META`): a derived tool is filtered as its source.
        tags = meta.get(TAGS_META) if type(meta) is dict else None
        self.tags = frozenset(t for t in tags if type(t) is str and t) if type(tags) is list else frozenset()
        ui = meta.get("ui") if type(meta) is dict else None
        self.ui_uri = ui.get("resourceUri") if type(ui) is dict else None
        self.app_only = type(ui) is dict and "model" not in ui.get("visibility", ("model",))
        try:
            orjson.dumps(definition)
        except TypeError as exc:
            raise TypeError(f"{where}: the definition is not JSON: {exc}") from None
        self.definition = definition

    @classmethod
    def of(cls, source: Tool, options: TransformOptions) -> TransformedTool:
        """A tool derived from the local tool ``source``: it keeps its scopes and is called through `Tool.call`."""
        derived = cls(source.definition, options, source.call, fn=source.fn, wants_context=source.wants_context)
        derived.scopes = source.scopes
        return derived

    @property
    def wants_context(self) -> bool:
        """Whether a call needs a `Context`: the source's need."""
        return self._source_wants_context

    def prepare_source(self, arguments: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """``(the source's arguments, None)``, or ``(None, the tool execution error)`` for arguments the derived schema refuses."""
        problem = self._check(arguments)
        if problem is not None:
            return None, error_result(f"Invalid arguments for tool {self.name!r}: {problem}")
        return self.arguments.to_source(arguments), None

    def call(
        self, arguments: dict[str, Any], ctx: Context | None, workers: Workers | None = None, mask: bool = True
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """Check the arguments against the derived schema, call the source with them mapped, wrap its result."""
        mapped, refused = self.prepare_source(arguments)
        if mapped is None:
            assert refused is not None
            return refused
        if self._call_source is None:
            raise TypeError(f"tool {self.name!r} is derived from a forwarded tool: its server's Forwarder calls it")
        out = self._call_source(mapped, ctx, workers, mask)
        if self._output_fn is None:
            return out
        if isinstance(out, dict):
            return self.finish(out, mask)
        return self._finish_later(out, mask)

    def prepare(self, arguments: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """Not for a derived tool (the task path's step): it never becomes a task; TypeError."""
        raise TypeError(f"tool {self.name!r} is derived: it never runs as a task of its own")

    async def _finish_later(self, pending: Awaitable[dict[str, Any]], mask: bool) -> dict[str, Any]:
        out = self.finish(await pending, mask)
        return out if isinstance(out, dict) else await out

    def finish(self, result: dict[str, Any], mask: bool = True) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """The derived result of the source's ``result``: ``output`` applied (an error result passes as it is)."""
        output = self._output_fn
        if output is None or result.get("isError") or result.get("resultType", "complete") != "complete":
            return result
        given = ToolResult(
            list(result.get("content") or []),
            structured_content=result.get("structuredContent"),
            meta=result.get("_meta"),
        )
        try:
            value = output(given)
        except JSONRPCError:
            raise
        except Exception as exc:
            return self._failed(exc, mask)
        if self._output_async:
            return self._finish(value, mask)
        return self._result(value)


def install(server: Server, source: Tool | str, options: TransformOptions) -> TransformedTool | None:
    """`Server.add_transformed`: derive from a local tool now, or from a forwarded one when the upstream lists it."""
    if type(source) is str:
        forwarder = server.forwarder
        if forwarder is not None:  # a proxy: the upstream's tool, known when listed (`ForwardedTransforms`)
            forwarder.transforms().add(source, options)
            return None
        tool = server._tools.get(source)
        if tool is None:
            raise ValueError(f"transformed tool {options.name!r}: this server has no tool named {source!r}")
    elif isinstance(source, Tool):
        tool = source
    else:
        raise TypeError(f"the source of a transformed tool is a Tool or a tool's name, not {source!r}")
    derived = TransformedTool.of(tool, options)
    if options.replace:
        if server._tools.get(tool.name) is not tool:
            raise ValueError(f"transformed tool {options.name!r}: replace=True needs a source registered in this server")
        if derived.name != tool.name and derived.name in server._tools:
            raise ValueError(f"a tool named {derived.name!r} is already registered")
        server.remove_tool(tool.name)
    server._register(derived)
    return derived


class ForwardedTransforms:
    """The tools derived from a forwarding server's upstream tools (`Forwarder.transforms`).

    ``tools/list`` results gain each derived tool after its source (the source
    left out when replaced); a ``tools/call`` of a derived tool is checked
    and mapped here (`before_call`) and sent upstream under the source's
    name; its result goes through `TransformedTool.finish`.
    """

    __slots__ = ("wanted", "by_source", "replaced", "built")

    def __init__(self) -> None:
        #: derived name -> (source name, options)
        self.wanted: dict[str, tuple[str, TransformOptions]] = {}
        self.by_source: dict[str, list[str]] = {}
        self.replaced: set[str] = set()
        #: derived name -> (the source definition it was made from, the tool)
        self.built: dict[str, tuple[dict[str, Any], TransformedTool | None]] = {}

    def add(self, source: str, options: TransformOptions) -> None:
        if type(options.name) is not str or not options.name:
            raise ValueError(f"a transformed tool needs a name (a non-empty string), not {options.name!r}")
        if options.name in self.wanted:
            raise ValueError(f"a tool named {options.name!r} is already derived")
        self.wanted[options.name] = (source, options)
        self.by_source.setdefault(source, []).append(options.name)
        if options.replace:
            self.replaced.add(source)

    def _tool(self, name: str, source: dict[str, Any]) -> TransformedTool | None:
        built = self.built.get(name)
        if built is not None and built[0] == source:
            return built[1]
        options = self.wanted[name][1]
        try:
            tool: TransformedTool | None = TransformedTool(source, options)
        except (TypeError, ValueError) as exc:
            log.error("transformed tool %r is left out: %s", name, exc)
            tool = None
        self.built[name] = (source, tool)
        return tool

    def listed(self, result: dict[str, Any]) -> dict[str, Any]:
        """A ``tools/list`` result from upstream with the derived tools added (and replaced sources left out)."""
        tools = result.get("tools")
        if type(tools) is not list:
            return result
        out: list[Any] = []
        for each in tools:
            source = each.get("name") if type(each) is dict else None
            if source not in self.replaced:
                out.append(each)
            for name in self.by_source.get(source, ()) if type(source) is str else ():
                tool = self._tool(name, each)
                if tool is not None:
                    out.append(tool.definition)
        return {**result, "tools": out}

    async def before_call(
        self, upstream: Upstream, params: dict[str, Any], ctx: Context
    ) -> tuple[dict[str, Any], TransformedTool | None, dict[str, Any] | None]:
        """``(params to send upstream, the derived tool or None, None)``, or a refusal as the third item."""
        from ..jsonrpc import InvalidParams

        name = params.get("name")
        if name in self.replaced:
            raise InvalidParams(f"Unknown tool: {name}", {"name": name})
        wanted = self.wanted.get(name) if type(name) is str else None
        if wanted is None:
            return params, None, None
        assert type(name) is str
        built = self.built.get(name)
        tool = built[1] if built is not None else None
        if built is None:  # no list read yet: ask upstream for one
            cursor: Any = None
            while built is None:
                page = await upstream.request("tools/list", {"cursor": cursor} if cursor else {}, ctx, ctx.ask)
                self.listed(page)
                built = self.built.get(name)
                cursor = page.get("nextCursor")
                if not cursor:
                    break
            tool = built[1] if built is not None else None
        if tool is None:
            raise InvalidParams(f"Unknown tool: {name}", {"name": name})
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict:
            raise InvalidParams("Invalid params: tools/call 'arguments' must be an object")
        mapped, refused = tool.prepare_source(arguments)
        if mapped is None:
            return params, tool, refused
        return {**params, "name": wanted[0], "arguments": mapped}, tool, None


def _no_function(**_: Any) -> None:  # the `fn` of a derived tool whose output is passed on: never called
    return None
