"""The handlers of ``resources/*``, ``prompts/*`` and ``completion/complete``.

The rules of each component live beside it (`_resources`, `_prompts`,
`_completion`, `_uri_template`); these handlers apply them to a request:

* each list pages its registry's definitions (`Engine.listing`: hidden from a
  caller whose token lacks their scopes, then ``cacheScope: private``);
* ``resources/read`` needs ``uri``, a string (-32602), served by a static
  resource or the first template matching it (else -32002); its result
  carries the resource's caching hints, else the server's (a resource with
  scopes is ``private``);
* ``prompts/get`` checks the prompt's arguments before it runs;
* ``completion/complete`` with no completer for the argument answers no
  values;
* a component's function gets a `Context` only when it takes one; a plain
  function runs in a worker thread unless registered ``inline=True``, so a
  result comes now or later, and gets the server's shared ``_meta`` either way.

The engine loads this module when a server first registers one of these
components (`Engine.offer`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable

from ..jsonrpc import InvalidParams, Request
from ..protocol import methods
from ..protocol.meta import RequestMeta
from ._context import Context, Emit

if TYPE_CHECKING:
    from ._engine import Engine, Handler
    from ._resources import Resource

__all__ = ["ContentHandlers", "content_handlers"]


def content_handlers(engine: Engine, resources: bool, prompts: bool, completers: bool) -> dict[str, Handler]:
    """The handlers to serve: those of each kind something is registered of."""
    handlers = ContentHandlers(engine)
    offered: dict[str, Handler] = {}
    if resources:
        offered[methods.RESOURCES_LIST] = handlers.resources_list
        offered[methods.RESOURCES_TEMPLATES_LIST] = handlers.resource_templates_list
        offered[methods.RESOURCES_READ] = handlers.resources_read
    if prompts:
        offered[methods.PROMPTS_LIST] = handlers.prompts_list
        offered[methods.PROMPTS_GET] = handlers.prompts_get
    if completers:
        offered[methods.COMPLETION_COMPLETE] = handlers.completion_complete
    return offered


class ContentHandlers:
    """The handlers of resources, prompts and completion of one engine, reading its server's registries."""

    __slots__ = ("engine", "server")

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.server = engine.server

    def _context(self, request: Request, meta: RequestMeta, emit: Emit | None) -> Context:
        return Context(request.id, request.method, meta, self.server, emit)

    def resources_list(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        resources = self.server._resources
        return self.engine.listing("resources", resources.definitions(), params, resources.static, "uri")

    def resource_templates_list(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any]:
        resources = self.server._resources
        defs = resources.template_definitions()
        return self.engine.listing("resourceTemplates", defs, params, resources.templates, "uriTemplate")

    def prompts_list(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        prompts = self.server._prompts
        return self.engine.listing("prompts", prompts.definitions(), params, prompts.by_name, "name")

    def resources_read(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        uri = params.get("uri")
        if type(uri) is not str:
            raise InvalidParams("Invalid params: resources/read needs 'uri', the resource's URI as a string")
        server = self.server
        resource, arguments = server._resources.find(uri)
        ctx = self._context(request, meta, emit) if resource.sig.wants_context else None
        out = resource.read(uri, arguments, ctx, server.workers, server.mask_errors)
        if type(out) is list:
            return self._read_result(resource, out)
        return self._read_later(resource, out)  # type: ignore[arg-type]  # the awaitable: `type() is list` narrows one branch only

    def _read_result(self, resource: Resource, contents: list[dict[str, Any]]) -> dict[str, Any]:
        server = self.server
        return self.engine.complete(
            {
                "resultType": "complete",
                "contents": contents,
                "ttlMs": server.list_ttl_ms if resource.ttl_ms is None else resource.ttl_ms,
                "cacheScope": resource.cache_scope or ("private" if resource.scopes else server.cache_scope),
            }
        )

    async def _read_later(self, resource: Resource, pending: Awaitable[list[dict[str, Any]]]) -> dict[str, Any]:
        return self._read_result(resource, await pending)

    def prompts_get(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        server = self.server
        prompt = server._prompts.find(params.get("name"))
        arguments = prompt.arguments(params.get("arguments"))
        ctx = self._context(request, meta, emit) if prompt.sig.wants_context else None
        out = prompt.get(arguments, ctx, server.workers, server.mask_errors)
        if type(out) is dict:
            return self.engine.complete(out)
        return self.engine.after(out)  # type: ignore[arg-type]  # the awaitable: `type() is dict` narrows one branch only

    def completion_complete(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        server = self.server
        completer, value, context_arguments = server._completers.resolve(params, server._prompts, server._resources)
        if completer is None:
            return self.engine.complete({"resultType": "complete", "completion": {"values": []}})
        ctx = self._context(request, meta, emit) if completer.sig.wants_context else None
        out = completer.complete(value, context_arguments, ctx, server.workers, server.mask_errors)
        if type(out) is dict:
            return self.engine.complete({"resultType": "complete", "completion": out})
        return self._completion_later(out)  # type: ignore[arg-type]  # the awaitable: `type() is dict` narrows one branch only

    async def _completion_later(self, pending: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        return self.engine.complete({"resultType": "complete", "completion": await pending})
