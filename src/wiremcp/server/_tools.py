"""Tools: registration from Python functions, argument checks, calls and results.

A tool is a plain or async function. Its ``inputSchema`` comes from the type
hints (see `_schema`), its description from the docstring (a Google-style
``Args:`` section describes the parameters and is left out of the tool's
description). Everything is worked out once, at registration; a call does:

1. the arguments are checked against the input schema (compiled); a problem
   becomes a tool execution error (``isError: true``) the model can read and
   fix (server/tools.mdx, "Error Handling");
2. they are converted to the declared Python types (`_schema._convert`; nothing to do
   for ``str``/``bool``/``float``/... parameters);
3. declared inputs (``Annotated[T, Elicit(...)]``, see `_inputs`) are
   gathered, over as many rounds as they need, before the body runs once;
4. the function runs: an async one is awaited on the loop, a plain one runs
   in a worker thread (`_workers`) unless registered with ``inline=True``;
5. what it returns becomes the result:

   * with an ``outputSchema`` (a return annotation that describes data, or
     ``output_schema=``): ``structuredContent`` plus the same JSON as a text
     block (tools.mdx, "Structured Content"); a non-object return type is
     wrapped as ``{"result": value}``. The structured content is checked
     against the schema: a tool that breaks its own schema gets a tool
     execution error, logged as a server bug, and nothing non-conforming is
     sent (tools.mdx, "Output Schema": servers MUST conform);
   * otherwise: a ``str`` is one text block; a content block (`text`,
     `image`, ...) or a list of them (strings in such a list become text
     blocks) is the content; a `ToolResult` is taken whole; ``None`` is empty
     content; any other value is sent as its JSON text;

6. an exception becomes ``isError: true``: a `ToolError`'s message is sent
   as it is, any other is masked unless ``mask_errors=False`` (`_failures`);
   a `JSONRPCError` (a deliberate protocol error, such as -32021 from
   ``ctx.elicit``) stays a protocol error, and `InputRequired` (a
   BaseException) reaches `Server.handle`, which answers it.

Registration refuses (``ValueError``/``TypeError``): a schema that cannot be
compiled, an inputSchema whose root is not ``type: object``, a bad
``x-mcp-header`` (`_schema.check_headers`), unknown or mistyped tool
annotations, icons with an unsafe ``src``, malformed ``_meta`` keys, and
MCP Apps metadata that breaks `_apps`' rules (``ui=`` not a ``ui://`` URI, an
empty or unknown ``visibility``, ``ui=`` beside a hand-written ``_meta.ui``). A tool
name outside the spec's SHOULD rules (1-128 of ``[A-Za-z0-9_.-]``) is logged
as a warning and kept.
"""

from __future__ import annotations

import inspect
import logging
import re
import sys
import typing
from typing import TYPE_CHECKING, Any, Awaitable, Callable, TypedDict

import orjson

from ..jsonrpc import JSONRPCError
from ..protocol.content import CONTENT_TYPES
from ._apps import tool_ui_meta
from ._context import Context, scope_tuple
from ._failures import ToolError, failure_message
from ._inject import context_param
from ._options import ToolOptions, tag_set, with_tags
from ._workers import Workers
from ._schema import (
    ArgumentError,
    Check,
    SchemaError,
    arguments_converter,
    check_headers,
    compile_validator,
    is_structured,
    json_default,
    output_schema_for,
    parse_docstring,
    signature_info,
)

if TYPE_CHECKING:
    from ._depends import Injection
    from ._inputs import BoundInput

__all__ = ["Tool", "ToolAnnotations", "ToolError", "ToolResult", "TOOL_ANNOTATIONS"]

log = logging.getLogger("wiremcp.server")

class ToolAnnotations(TypedDict, total=False):
    """Hints about a tool's behaviour for the client (schema.json, ToolAnnotations); all optional."""

    title: str
    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


#: ToolAnnotations keys and their JSON types, checked at registration.
TOOL_ANNOTATIONS: dict[str, type] = {
    "title": str,
    "readOnlyHint": bool,
    "destructiveHint": bool,
    "idempotentHint": bool,
    "openWorldHint": bool,
}
_SNAKE = {
    "read_only_hint": "readOnlyHint",
    "destructive_hint": "destructiveHint",
    "idempotent_hint": "idempotentHint",
    "open_world_hint": "openWorldHint",
}
#: The characters of a tool name (server/tools.mdx, "Tool Names": 1 to 128 of them); a set, not a
#: pattern, so that registering a tool compiles no regular expression.
_TOOL_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
#: A ``_meta`` key (compiled by `re` on first use, its cache: only a tool given ``meta=`` needs it).
_META_KEY = rf"(?:(?:{_LABEL}\.)*{_LABEL}/)?(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?"


class ToolResult:
    """A full tools/call result when a plain return value is not enough.

    ``content`` is a list of content blocks (a ``str`` item is a text block);
    left out while ``structured_content`` is given, it becomes that JSON as one
    text block. ``structured_content`` must match the tool's ``outputSchema``
    when it has one (it is sent as given, not wrapped).
    """

    __slots__ = ("content", "structured_content", "is_error", "meta")

    def __init__(
        self,
        content: list[Any] | None = None,
        *,
        structured_content: Any = None,
        is_error: bool = False,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.content = content
        self.structured_content = structured_content
        self.is_error = is_error
        self.meta = meta

    def __repr__(self) -> str:
        return (
            f"ToolResult({self.content!r}, structured_content={self.structured_content!r}, "
            f"is_error={self.is_error!r})"
        )


_result_hints: list[frozenset[Any]] = []


def _content_hints() -> frozenset[Any]:
    """The return annotations that mean "content, not data": the content block types and `ToolResult`.

    On first use: `_content` (its TypedDicts cost some 3.5 M instructions to
    import) loads only for a tool whose return annotation may describe data.
    """
    if not _result_hints:
        from ._content import CONTENT_HINTS

        _result_hints.append(CONTENT_HINTS | {ToolResult})
    return _result_hints[0]


def error_result(message: str) -> dict[str, Any]:
    return {"resultType": "complete", "content": [{"type": "text", "text": message}], "isError": True}


def _bad_output(name: str, problem: str) -> dict[str, Any]:
    log.error("tool %r returned a result it cannot send: %s", name, problem)
    return error_result(f"Error in tool {name!r}: the result {problem}")


def _text_block(value: str) -> dict[str, Any]:
    """`wiremcp.text` of a str, without importing `_content`."""
    return {"type": "text", "text": value}


def _is_block(v: Any) -> bool:
    return type(v) is dict and v.get("type") in CONTENT_TYPES


def to_result(value: Any, name: str = "?") -> dict[str, Any]:
    """The tools/call result for what a tool without an ``outputSchema`` returned."""
    t = type(value)
    if t is str:
        return {"resultType": "complete", "content": [{"type": "text", "text": value}]}
    if t is ToolResult:
        return _from_tool_result(value, name, None)
    if value is None:
        return {"resultType": "complete", "content": []}
    if t is dict and value.get("type") in CONTENT_TYPES:
        return {"resultType": "complete", "content": [value]}
    if t is list and value and any(_is_block(v) for v in value) and all(_is_block(v) or type(v) is str for v in value):
        return {"resultType": "complete", "content": [_text_block(v) if type(v) is str else v for v in value]}
    if t is bytes or t is bytearray:
        return _bad_output(name, "is bytes; say what they are with wiremcp.image(), audio() or embedded_resource()")
    try:
        raw = orjson.dumps(value, default=json_default)
    except TypeError as exc:
        return _bad_output(name, f"cannot be sent as JSON: {exc}")
    return {"resultType": "complete", "content": [{"type": "text", "text": raw.decode()}]}


def _from_tool_result(r: ToolResult, name: str, check: Check | None) -> dict[str, Any]:
    out: dict[str, Any] = {"resultType": "complete"}
    content = r.content
    structured = r.structured_content
    if structured is not None:
        try:
            raw = orjson.dumps(structured, default=json_default)
        except TypeError as exc:
            return _bad_output(name, f"structured_content cannot be sent as JSON: {exc}")
        structured = orjson.loads(raw)
        if content is None:
            content = [{"type": "text", "text": raw.decode()}]
    if check is not None and not r.is_error:
        if structured is None:
            return _bad_output(name, "has no structured_content, but the tool declares an outputSchema")
        problem = check(structured)
        if problem is not None:
            return _bad_output(name, f"does not match the tool's outputSchema: {problem}")
    if content is None:
        content = []
    elif type(content) is not list:
        return _bad_output(name, "content must be a list of content blocks")
    else:
        content = [_text_block(v) if type(v) is str else v for v in content]
        for v in content:
            if not _is_block(v):
                return _bad_output(name, f"content holds {type(v).__name__} {v!r:.60}, not a content block")
    out["content"] = content
    if structured is not None:
        out["structuredContent"] = structured
    if r.is_error:
        out["isError"] = True
    if r.meta:
        out["_meta"] = r.meta
    return out


class Tool:
    """A registered tool: its wire definition and how to call it.

    ``output_schema`` is the published ``outputSchema`` (or ``None``).
    """

    __slots__ = (
        "name",
        "fn",
        "definition",
        "is_async",
        "context_param",
        "output_schema",
        "_check",
        "_convert",
        "_result",
        "_output_check",
        "_wrap",
        "scopes",
        "threaded",
        "inputs",
        "ui_uri",
        "app_only",
        "task",
        "fused_arguments",
        "fused_threaded",
        "depends",
        "tags",
    )

    def __init__(self, fn: Callable[..., Any], options: ToolOptions | None = None, /, **keywords: Any) -> None:
        """A tool of ``fn`` with ``options``, or the same options as keywords (those of ``Server.tool``)."""
        if options is None:
            options = ToolOptions(**keywords)
        elif keywords:
            raise TypeError("Tool(fn, options) takes its options once: a ToolOptions or keywords, not both")
        if not callable(fn):
            raise TypeError(f"a tool is a function (plain or async), not {fn!r}")
        self.fn = fn
        #: OAuth scopes a request needs to call it (enforced where requests are authenticated).
        self.scopes = scope_tuple(options.scopes)
        self.name = options.name if options.name is not None else fn.__name__
        if type(self.name) is not str or not self.name:
            raise ValueError(f"a tool needs a name (a non-empty string), not {self.name!r}")
        if not (len(self.name) <= 128 and _TOOL_NAME_CHARS.issuperset(self.name)):
            log.warning(
                "tool name %r: names SHOULD be 1 to 128 characters of A-Z a-z 0-9 _ - . (server/tools.mdx, Tool Names)",
                self.name,
            )
        where = f"tool {self.name!r}"
        #: Its tags (`Server` serves a subset by them; published in ``_meta``, `_options.TAGS_META`).
        self.tags = tag_set(options.tags, where)
        #: Whether a call may become a task (`_tasks`): None (never), "auto", "always" or a function.
        self.task = None if options.task == "never" else _check_task_mode(options.task, where)
        self.is_async = inspect.iscoroutinefunction(fn)
        #: A plain function not registered ``inline=True``: it runs in a worker thread.
        self.threaded = not self.is_async and not options.inline
        self.context_param = _context_param(fn)
        #: Parameters the framework gathers from the client before the body runs (`_inputs`).
        self.inputs: list[BoundInput] = _find_inputs(fn, where)
        #: Parameters filled by dependency functions (``Annotated[T, Depends(f)]``, `_depends`), or None.
        self.depends: Injection | None = _find_depends(fn, where)
        input_schema, doc, return_hint = self._input(options.input_schema, where)
        self._output(options, return_hint, where)
        _warn_untyped(self, options, return_hint, where)
        #: What the fused ``tools/call`` stage (`_intake.FastPath`) needs, prepared once (`FusedArguments`),
        #: when a call may take it: an inline synchronous function with no context, inputs or scopes,
        #: and a schema of scalar properties; else None. ``fused_threaded``: the same for such a
        #: function that runs in the worker pool (the stage hands it to `Workers`; on the event loop only).
        self.fused_arguments: FusedArguments | None = None
        self.fused_threaded: FusedArguments | None = None
        if (
            not self.is_async and self.context_param is None and not self.inputs
            and not self.scopes and self.depends is None
        ):
            arguments = scalar_arguments(input_schema)
            if arguments is not None:
                types, required = arguments
                fused = (types, required, self.output_schema is None, self._convert, fn, self._failed, self._result)
                if self.threaded:
                    self.fused_threaded = fused
                else:
                    self.fused_arguments = fused
        self.definition = self._definition(options, input_schema, doc, where)
        if self.app_only or self.task is not None:
            # the general path decides: visibility per client (`_apps`), task creation (`_tasks`)
            self.fused_arguments = self.fused_threaded = None

    def _input(self, input_schema: dict[str, Any] | None, where: str) -> tuple[dict[str, Any], str | None, Any]:
        """The input schema (from the signature, or as given), the docstring's description and the return hint."""
        fn = self.fn
        if input_schema is None:
            skip = frozenset({self.context_param}) if self.context_param else frozenset()
            injected = {b.name for b in self.inputs} | (set(self.depends.params) if self.depends is not None else set())
            info = signature_info(fn, skip=skip | injected)
            input_schema = info.schema
            doc = info.description
            return_hint = info.return_hint
            self._convert = arguments_converter(info.params)
        else:
            if not isinstance(input_schema, dict) or input_schema.get("type") != "object":
                raise ValueError(f"{where}: input_schema must be a JSON Schema object with \"type\": \"object\" at the root")
            doc, _ = parse_docstring(inspect.getdoc(fn))
            return_hint = _return_hint(fn)
            self._convert = None  # a hand-written schema: arguments arrive as JSON
        try:
            self._check = compile_validator(input_schema, noun="argument")
        except SchemaError as exc:
            raise SchemaError(f"{where}: input_schema: {exc}") from None
        check_headers(input_schema, f"{where} inputSchema")
        return input_schema, doc, return_hint

    def _output(self, options: ToolOptions, return_hint: Any, where: str) -> None:
        """The output schema (given, or made from the return annotation) and how results are made."""
        output_schema, structured_output = options.output_schema, options.structured_output
        self.output_schema: dict[str, Any] | None = None
        self._output_check: Check | None = None
        self._wrap = False
        if output_schema is not None:
            if structured_output is False:
                raise ValueError(f"{where}: output_schema= and structured_output=False contradict each other")
            if not isinstance(output_schema, dict):
                raise TypeError(f"{where}: output_schema must be a JSON Schema object (a dict)")
            self.output_schema = output_schema
        elif structured_output is not False and is_structured(return_hint) and is_structured(return_hint, _content_hints()):
            # (more hints only make fewer annotations data: the content types are loaded only when they could count)
            try:
                self.output_schema, self._wrap = output_schema_for(return_hint)
            except SchemaError as exc:
                if structured_output:
                    raise SchemaError(f"{where}, return type: {exc}") from None
                log.debug("%s: no outputSchema for return type %r: %s", where, return_hint, exc)
        elif structured_output:
            raise ValueError(
                f"{where}: structured_output=True needs a return annotation that describes data "
                "(a dict, TypedDict, dataclass, pydantic model, list, number...) or output_schema="
            )
        if self.output_schema is not None:
            try:
                self._output_check = compile_validator(self.output_schema)
            except SchemaError as exc:
                raise SchemaError(f"{where}: output_schema: {exc}") from None
            self._result: Callable[[Any], dict[str, Any]] = self._structured
        else:
            self._result = self._unstructured

    def _definition(self, options: ToolOptions, input_schema: dict[str, Any], doc: str | None, where: str) -> dict[str, Any]:
        """The wire definition, built once; sets the MCP Apps links (`ui_uri`, `app_only`) from it."""
        definition: dict[str, Any] = {"name": self.name}
        title, description = options.title, options.description
        if title is not None:
            if type(title) is not str:
                raise TypeError(f"{where}: title must be a string")
            definition["title"] = title
        if description is not None:
            if type(description) is not str:
                raise TypeError(f"{where}: description must be a string")
            doc = description
        if doc:
            definition["description"] = doc
        definition["inputSchema"] = input_schema
        if self.output_schema is not None:
            definition["outputSchema"] = self.output_schema
        if options.annotations:
            definition["annotations"] = _check_annotations(options.annotations, where)
        if options.icons:
            from ._content import check_icons

            definition["icons"] = check_icons(options.icons, f"{where} icons")
        # MCP Apps (`_apps`): ui= / visibility= become _meta.ui, checked with a hand-written _meta.ui.
        meta = tool_ui_meta(options.meta, options.ui, options.visibility, where)
        ui_block: dict[str, Any] | None = meta.get("ui") if meta else None
        #: The ``ui://`` resource the tool's results are shown in, or None.
        self.ui_uri: str | None = ui_block.get("resourceUri") if ui_block else None
        #: ``visibility`` leaves out the model: hidden from clients without MCP Apps (`_apps`).
        self.app_only = ui_block is not None and "model" not in ui_block.get("visibility", ("model",))
        meta = with_tags(meta, self.tags, where)
        if meta:
            definition["_meta"] = _check_meta(meta, where)
        try:
            orjson.dumps(definition)
        except TypeError as exc:
            raise TypeError(f"{where}: the definition is not JSON: {exc}") from None
        return definition

    @property
    def wants_context(self) -> bool:
        """Whether a call needs a `Context` (a ``ctx`` parameter, declared inputs to gather, or dependencies)."""
        return self.context_param is not None or bool(self.inputs) or self.depends is not None

    def call(
        self, arguments: dict[str, Any], ctx: Context | None, workers: Workers | None = None, mask: bool = True
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """Run the tool: a result dict now, or an awaitable of one.

        ``workers`` runs a threaded tool (without it, a plain function runs
        inline); ``mask`` hides the text of unexpected exceptions (`_failures`).
        """
        problem = self._check(arguments)
        if problem is not None:
            return error_result(f"Invalid arguments for tool {self.name!r}: {problem}")
        if self._convert is not None:
            try:
                arguments = self._convert(arguments)
            except ArgumentError as exc:
                return error_result(f"Invalid arguments for tool {self.name!r}: {exc}")
        if self.context_param is not None:
            arguments = {**arguments, self.context_param: ctx}
        if self.inputs:
            if ctx is None:
                raise TypeError(f"tool {self.name!r} declares inputs: call it with a Context")
            return self._gathered(arguments, ctx, workers, mask)
        if self.depends is not None:
            return self._injected(arguments, ctx, workers, mask)
        return self._run(arguments, ctx, workers, mask)

    # -- the task path (`_tasks`): arguments and declared inputs on the request, the body in the task --

    def prepare(self, arguments: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """Check and convert ``arguments``: ``(arguments, None)``, or ``(None, the tool execution error)``."""
        problem = self._check(arguments)
        if problem is not None:
            return None, error_result(f"Invalid arguments for tool {self.name!r}: {problem}")
        if self._convert is not None:
            try:
                arguments = self._convert(arguments)
            except ArgumentError as exc:
                return None, error_result(f"Invalid arguments for tool {self.name!r}: {exc}")
        return arguments, None

    async def gather_inputs(self, ctx: Context) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The declared inputs: ``(values, None)``, or ``({}, the tool execution error)`` when declined."""
        from ._inputs import Declined, gather

        try:
            return await gather(self.inputs, ctx), None
        except Declined as exc:
            return {}, error_result(str(exc))

    def run_body(
        self, arguments: dict[str, Any], ctx: Context | None, workers: Workers | None = None, mask: bool = True
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """Run the body on prepared arguments (declared inputs included), ``ctx`` bound to its parameter."""
        if self.context_param is not None:
            arguments = {**arguments, self.context_param: ctx}
        if self.depends is not None:
            return self._injected(arguments, ctx, workers, mask)
        return self._run(arguments, ctx, workers, mask)

    def _run(
        self, arguments: dict[str, Any], ctx: Context | None, workers: Workers | None, mask: bool
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        if self.threaded and workers is not None:
            return self._finish(workers.run(self.fn, arguments, ctx), mask)
        try:
            out = self.fn(**arguments)
        except JSONRPCError:
            raise  # a deliberate protocol error (e.g. -32021 from ctx.ask) stays one
        except Exception as exc:
            return self._failed(exc, mask)
        if self.is_async:
            return self._finish(out, mask)
        return self._result(out)

    async def _gathered(
        self, arguments: dict[str, Any], ctx: Context, workers: Workers | None, mask: bool
    ) -> dict[str, Any]:
        from ._inputs import Declined, gather

        try:
            values = await gather(self.inputs, ctx)
        except Declined as exc:
            return error_result(str(exc))
        if self.depends is not None:
            return await self._injected({**arguments, **values}, ctx, workers, mask)
        out = self._run({**arguments, **values}, ctx, workers, mask)
        if isinstance(out, dict):
            return out
        return await out

    async def _injected(
        self, arguments: dict[str, Any], ctx: Context | None, workers: Workers | None, mask: bool
    ) -> dict[str, Any]:
        """Fill the dependencies' parameters (`_depends`), then run the body."""
        assert self.depends is not None
        try:
            values = await self.depends.resolve(ctx)
        except JSONRPCError:
            raise  # a deliberate protocol error stays one
        except Exception as exc:
            return self._failed(exc, mask)
        out = self._run({**arguments, **values}, ctx, workers, mask)
        if isinstance(out, dict):
            return out
        return await out

    async def _finish(self, pending: Awaitable[Any], mask: bool = True) -> dict[str, Any]:
        try:
            out = await pending
        except JSONRPCError:
            raise  # a deliberate protocol error (e.g. -32021 from ctx.ask) stays one
        except Exception as exc:
            return self._failed(exc, mask)
        return self._result(out)

    def _unstructured(self, value: Any) -> dict[str, Any]:
        if type(value) is str:
            return {"resultType": "complete", "content": [{"type": "text", "text": value}]}
        return to_result(value, self.name)

    def _structured(self, value: Any) -> dict[str, Any]:
        if type(value) is ToolResult:
            return _from_tool_result(value, self.name, self._output_check)
        try:
            raw = orjson.dumps(value, default=json_default)
        except TypeError as exc:
            return _bad_output(self.name, f"cannot be sent as JSON: {exc}")
        data = orjson.loads(raw)
        structured = {"result": data} if self._wrap else data
        # _structured is the result builder only when _output_check is set (__init__)
        problem = self._output_check(structured)  # type: ignore[misc]
        if problem is not None:
            return _bad_output(self.name, f"does not match the tool's outputSchema: {problem}")
        return {
            "resultType": "complete",
            "content": [{"type": "text", "text": raw.decode()}],
            "structuredContent": structured,
        }

    def _failed(self, exc: Exception, mask: bool = True) -> dict[str, Any]:
        return error_result(failure_message("tool", self.name, exc, mask))


#: A scalar schema's argument types (exact Python types per name) and its required names.
ArgumentTypes = tuple[dict[str, frozenset[type]], frozenset[str]]
if TYPE_CHECKING:
    #: `Tool.fused_arguments`: a tool's fused run, prepared once when the tool is made, as
    #: ``(types, required, text_block, convert, fn, failed, result)``.
    #:
    #: The fused stage (`_intake.FastPath.serve`) checks the arguments against
    #: ``types`` and ``required``, then runs the tool as `Tool.call` would,
    #: without a call of its own: ``convert`` (None: as sent; pure, so a problem
    #: leaves the call to the general path), ``fn(**arguments)``, then
    #: ``failed(exc, mask)`` for an exception that is not a `JSONRPCError`, or
    #: the result: one text block for a ``str`` when ``text_block`` (no output
    #: schema), else ``result(value)``. A plain tuple, not a NamedTuple: the
    #: stage unpacks it on every call, and only an exact tuple unpacks without
    #: an iterator (bench/README.md, "Where the remaining distance goes").
    FusedArguments = tuple[
        dict[str, frozenset[type]],
        frozenset[str],
        bool,
        "Callable[[dict[str, Any]], dict[str, Any]] | None",
        Callable[..., Any],
        Callable[[Exception, bool], dict[str, Any]],
        Callable[[Any], dict[str, Any]],
    ]

_SCALAR_TYPES: dict[str, frozenset[type]] = {
    "string": frozenset({str}),
    "boolean": frozenset({bool}),
    "integer": frozenset({int}),
    "number": frozenset({int, float}),
}
#: Keywords that do not constrain a value (annotations), besides ``type``.
_ANNOTATION_KEYS = frozenset({"type", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"})
_SCALAR_ROOT_KEYS = frozenset({"type", "properties", "required", "additionalProperties", "title", "description"})


def scalar_arguments(schema: Any) -> ArgumentTypes | None:
    """What a fast argument check needs for ``schema``, or None when the compiled validator must decide.

    A scalar schema: an object of named properties, each with one scalar
    ``type`` and annotations only; ``required`` names; ``additionalProperties``
    absent or false. The fast check accepts arguments whose every key is a
    property with a value of an exact type (``True`` is no integer, ``1.0`` is
    left to the validator) and that hold every required name; anything else
    goes through the general path, which gives the exact error.
    """
    if type(schema) is not dict or schema.get("type") != "object" or not schema.keys() <= _SCALAR_ROOT_KEYS:
        return None
    if schema.get("additionalProperties", False) is not False:
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if type(properties) is not dict or type(required) is not list:
        return None
    types: dict[str, frozenset[type]] = {}
    for name, sub in properties.items():
        if type(sub) is not dict or not sub.keys() <= _ANNOTATION_KEYS:
            return None
        kind = sub.get("type")
        kinds = kind if type(kind) is list and kind else [kind]
        allowed: frozenset[type] = frozenset()
        for each in kinds:
            more = _SCALAR_TYPES.get(each) if type(each) is str else None
            if more is None:
                return None
            allowed |= more
        types[name] = allowed
    if not all(type(name) is str and name in types for name in required):
        return None
    return types, frozenset(required)


def _check_task_mode(task: Any, where: str) -> Any:
    """`_tasks._modes.check_task_mode`: a tool of the default ``task="never"`` never imports `_tasks`."""
    from ._tasks._modes import check_task_mode

    return check_task_mode(task, where)


def _find_inputs(fn: Callable[..., Any], where: str) -> list[BoundInput]:
    """`_inputs.find_inputs`: the parameters of ``fn`` annotated with an input marker.

    A marker (`Elicit`, `Sample`, `Roots`, `Resolve`) is an instance of a
    class of `_inputs`, so while that module is not loaded no annotation can
    hold one: a server without declared inputs never imports it.
    """
    inputs = sys.modules.get(f"{__package__}._inputs")
    if inputs is None:
        return []
    found: list[BoundInput] = inputs.find_inputs(fn, where)
    return found


def _find_depends(fn: Callable[..., Any], where: str) -> Injection | None:
    """`_depends.find_depends`: None while `_depends` is not loaded (no annotation can hold a `Depends` then)."""
    depends = sys.modules.get(f"{__package__}._depends")
    if depends is None:
        return None
    found: Injection | None = depends.find_depends(fn, where)
    return found


def _return_hint(fn: Callable[..., Any]) -> Any:
    try:
        return typing.get_type_hints(fn, include_extras=True).get("return", inspect.Parameter.empty)
    except Exception:
        return inspect.Parameter.empty


# Which parameter takes the Context: shared with resources, prompts, completers.
_context_param = context_param


def _check_annotations(annotations: Any, where: str) -> dict[str, Any]:
    """A checked copy of ToolAnnotations (schema.json, ToolAnnotations)."""
    if not isinstance(annotations, dict):
        raise TypeError(f"{where}: annotations must be a dict of ToolAnnotations")
    for key, value in annotations.items():
        kind = TOOL_ANNOTATIONS.get(key)
        if kind is None:
            hint = f" (did you mean {_SNAKE[key]!r}?)" if key in _SNAKE else ""
            raise ValueError(
                f"{where}: unknown tool annotation {key!r}{hint}; known: {', '.join(TOOL_ANNOTATIONS)}"
            )
        if type(value) is not kind:
            raise TypeError(f"{where}: annotation {key!r} must be a {kind.__name__}, not {value!r}")
    return dict(annotations)


def _check_meta(meta: Any, where: str) -> dict[str, Any]:
    """A checked copy of a ``_meta`` object: key syntax (schema.json, MetaObject); reserved prefixes warn."""
    if not isinstance(meta, dict):
        raise TypeError(f"{where}: meta must be a dict")
    for key in meta:
        if type(key) is not str or re.fullmatch(_META_KEY, key) is None:
            raise ValueError(
                f"{where}: _meta key {key!r} is malformed: an optional reverse-DNS prefix ending in '/' "
                "(com.example/) and a name of letters, digits, '-', '_', '.' (basic/index.mdx, _meta)"
            )
        prefix, slash, _ = key.rpartition("/")
        labels = prefix.split(".") if slash else []
        if len(labels) >= 2 and labels[1] in ("modelcontextprotocol", "mcp"):
            log.warning("%s: _meta key %r uses a prefix reserved for MCP itself", where, key)
    return dict(meta)


def _warn_untyped(tool: Tool, options: ToolOptions, return_hint: Any, where: str) -> None:
    """`SchemaWarning`s (shown by ``wiremcp dev``) for what registration accepts silently.

    A parameter with no type hint takes any JSON value as it decodes; a tool with
    no return annotation publishes no ``outputSchema``.
    """
    skipped = {tool.context_param, *(b.name for b in tool.inputs), *(tool.depends.params if tool.depends else ())}
    said: list[str] = []
    if options.input_schema is None:
        for param in inspect.signature(tool.fn).parameters.values():
            if param.annotation is param.empty and param.name not in skipped and param.kind is not param.VAR_KEYWORD:
                said.append(
                    f"{where}: parameter {param.name!r} has no type hint: it takes any JSON value, unchecked "
                    f"(annotate it, e.g. `{param.name}: str`)"
                )
    if return_hint is inspect.Parameter.empty and tool.output_schema is None and options.structured_output is None:
        said.append(
            f"{where}: no return annotation: the tool publishes no outputSchema "
            "(annotate `-> str` for text, or a data type such as `-> dict[str, int]` for structured content)"
        )
    if said:
        from ._definition import warn_at_def  # loaded only to warn (not at a server's start)

        for message in said:
            warn_at_def(tool.fn, message)
