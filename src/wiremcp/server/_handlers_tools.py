"""The handlers of ``server/discover``, ``tools/list`` and ``tools/call`` (the engine's always-served methods).

Rules:

* ``server/discover`` states the supported versions, the capabilities and the
  instructions, with the caching hints of a list (`Engine.cacheable`);
* ``tools/list`` pages the tool definitions, built once per change of the
  tool list (`forget` drops them) in two forms: the modern one, and the
  2025-11-25 one with ``execution.taskSupport`` for a session of a server
  with tasks. A client without MCP Apps does not see app-only tools
  (`_apps`), and a caller whose token lacks a tool's scopes does not see it
  (`_authorization.hide`, which makes the list ``cacheScope: private``);
* ``tools/call`` needs ``name`` (a string naming a tool this client may see,
  else -32602 ``Unknown tool``) and ``arguments`` (an object, or absent).
  A tool that may become a task goes to the task runtime first (`_tasks`);
  otherwise the tool runs (`Tool.call`) and its result gets the server's
  shared ``_meta``, now or when it arrives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable

from ..jsonrpc import InvalidParams, Request
from ..protocol.meta import RequestMeta
from ._apps import ModelTools, supports_apps
from ._authorization import hide
from ._context import Context, Emit
from ._pagination import paginate

if TYPE_CHECKING:
    from ._engine import Engine
    from ._tools import Tool

__all__ = ["ToolHandlers"]


class ToolHandlers:
    """Discovery and the tools' handlers of one engine, with the tool lists they cache."""

    __slots__ = ("engine", "server", "_defs", "_legacy_defs", "_model_tools")

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.server = engine.server
        self._defs: list[dict[str, Any]] | None = None
        self._legacy_defs: list[dict[str, Any]] | None = None
        #: tools/list for clients without MCP Apps: without app-only tools (see _apps).
        self._model_tools = ModelTools()

    def forget(self) -> None:
        """The tool list changed: build the definitions again when next asked."""
        self._defs = self._legacy_defs = None

    def discover(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        server = self.server
        result: dict[str, Any] = {
            "resultType": "complete",
            "supportedVersions": list(server.supported_versions),
            "capabilities": server.capabilities(),
        }
        if server.instructions:
            result["instructions"] = server.instructions
        return self.engine.cacheable(result)

    def tools_list(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        server = self.server
        tools = server._tools
        if meta.era == "legacy" and server.tasks is not None:  # 2025-11-25: execution.taskSupport
            defs = self._legacy_defs
            if defs is None:
                defs = self._legacy_defs = [_legacy_definition(t) for t in tools.values()]
        else:
            defs = self._defs
            if defs is None:
                defs = self._defs = [t.definition for t in tools.values()]
        shown = self._model_tools.view(defs)
        if shown is not defs and not supports_apps(server, meta):
            defs = shown  # app-only tools are for the views of an MCP Apps host (see _apps)
        visible = hide(defs, tools, "name")
        page, next_cursor = paginate(visible, params.get("cursor"), server.page_size)
        result: dict[str, Any] = {"resultType": "complete", "tools": page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return self.engine.cacheable(result, visible is not defs)

    def tools_call(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        name = params.get("name")
        if type(name) is not str:
            raise InvalidParams("Invalid params: tools/call needs 'name', the tool's name as a string")
        server = self.server
        tool = server._tools.get(name)
        if tool is None:
            raise InvalidParams(f"Unknown tool: {name}", {"name": name})
        if tool.app_only and not supports_apps(server, meta):
            raise InvalidParams(f"Unknown tool: {name}", {"name": name})  # never listed to this client (_apps)
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict:
            raise InvalidParams("Invalid params: tools/call 'arguments' must be an object")
        if tool.task is not None and server.tasks is not None:  # may become a task: the general path (see _tasks)
            routed = server.tasks.route(tool, arguments, request, params, meta, emit)
            if routed is not None:
                return routed
        ctx = Context(request.id, request.method, meta, server, emit) if tool.wants_context else None
        out = tool.call(arguments, ctx, server.workers, server.mask_errors)
        if type(out) is dict:
            # `Engine.complete`, inline: the serverInfo `_meta` is one dict built at start, shared.
            shared = server._result_meta
            if shared is not None:
                own = out.get("_meta")
                out["_meta"] = shared if own is None else {**shared, **own}
            return out
        return self.engine.after(out)  # type: ignore[arg-type]  # the awaitable: `type() is dict` narrows one branch only


def _legacy_definition(tool: Tool) -> dict[str, Any]:
    """A tool's 2025-11-25 definition: ``execution.taskSupport`` from its ``task`` mode."""
    if tool.task is None:
        return tool.definition
    support = "required" if tool.task == "always" else "optional"
    return {**tool.definition, "execution": {"taskSupport": support}}
