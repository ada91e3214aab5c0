"""Forwarding: a server whose tools, resources, prompts and completions live on another server.

`Server.forward(upstream)` is the server half of ``wiremcp.proxy``: the
requests below are answered by ``upstream`` (an `Upstream`, which the proxy
builds on a ``wiremcp.Client``) instead of local registrations, in both eras
of the downstream client.

Rules:

* forwarded: ``tools/list``, ``tools/call``, ``resources/list``,
  ``resources/templates/list``, ``resources/read``, ``prompts/list``,
  ``prompts/get``, ``completion/complete``. ``server/discover``,
  ``subscriptions/listen`` and a legacy session's own methods stay local;
  the capabilities are the upstream's (`Upstream.capabilities`);
* the params go upstream without the downstream's protocol fields
  (``io.modelcontextprotocol/*`` and ``progressToken`` in ``_meta``,
  ``inputResponses``, ``requestState``): the upstream client adds its own.
  Other ``_meta`` keys (``traceparent`` ...) travel on. Nothing from the
  downstream's transport (headers, its token) is forwarded;
* the result comes back with ``resultType`` (``complete`` when a legacy
  upstream gave none), this server's caching hints where the upstream gave
  none, and this server's ``serverInfo`` (the upstream's is dropped: the
  client talks to this server);
* input the upstream needs (its ``input_required`` rounds, or a legacy
  upstream's elicitation, sampling and roots requests) is asked of the
  downstream client through `ask`, a function handed to the upstream call:
  a legacy downstream gets real requests (``ctx.ask``) and the call goes on;
  a modern downstream gets ``input_required``, while the upstream call stays
  suspended in this process under a resume id sealed into ``requestState``
  (``wiremcp.proxy/resume``); the retry carrying the answers resumes it, so
  the upstream tool runs once. A suspended call not resumed within the
  server's ``state_ttl`` is cancelled; a retry naming an unknown resume id
  (expired, or served by another process) starts the call over;
* the upstream's progress and log notifications go to the downstream request
  (``ctx.report_progress``, ``ctx.log``), which sends them only if asked;
  cancelling the downstream request cancels the upstream call.
"""

from __future__ import annotations

import itertools
import logging
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol

from ..jsonrpc import Request
from ..protocol import methods
from ..protocol.meta import SERVER_INFO, RequestMeta
from ._context import Context, Emit
from ._mrtr import InputRequired, check_capabilities

if TYPE_CHECKING:
    import secrets
    import asyncio
    from ._server import Server
    from ._transform import ForwardedTransforms

__all__ = ["Upstream", "Ask", "Forwarder", "FORWARDED", "RESUME_KEY", "reporting_context"]

log = logging.getLogger("wiremcp.server")

FORWARDED = (
    methods.TOOLS_LIST,
    methods.TOOLS_CALL,
    methods.RESOURCES_LIST,
    methods.RESOURCES_TEMPLATES_LIST,
    methods.RESOURCES_READ,
    methods.PROMPTS_LIST,
    methods.PROMPTS_GET,
    methods.COMPLETION_COMPLETE,
)
_LISTS = frozenset({methods.TOOLS_LIST, methods.RESOURCES_LIST, methods.RESOURCES_TEMPLATES_LIST, methods.PROMPTS_LIST})
#: The key of ``requestState``'s sealed answers that names a suspended upstream call.
RESUME_KEY = "wiremcp.proxy/resume"
_PROTOCOL_PREFIX = "io.modelcontextprotocol/"

#: ``ask({key: {"method", "params"}}) -> {key: result}``: input for the upstream, from the downstream client.
Ask = Callable[[dict[str, dict[str, Any]]], Awaitable[dict[str, Any]]]


class Upstream(Protocol):
    """The server being forwarded to (``wiremcp.proxy`` implements it with a client)."""

    def capabilities(self) -> dict[str, Any]:
        """The upstream's server capabilities (tools, resources, prompts, completions)."""
        ...

    async def request(self, method: str, params: dict[str, Any], ctx: Context, ask: Ask) -> dict[str, Any]:
        """Send one request upstream and return its complete result; ``ask`` gets input it needs."""
        ...


def reporting_context(ask: Ask, ctx: Context) -> Context:
    """The downstream request an upstream call reports progress and logs to now.

    ``ctx`` (the request that started the call), except for a call paused for a
    modern client's input: after a retry resumed it, the retry's request.
    """
    owner = getattr(ask, "__self__", None)
    return owner.ctx if isinstance(owner, _Suspended) else ctx


class _Suspended:
    """An upstream call waiting for input from a modern downstream client (see the module docs)."""

    __slots__ = ("task", "ctx", "waiting", "expiry", "changed")

    def __init__(self, ctx: Context) -> None:
        import asyncio  # imported by then: on first use, not at start-up
        self.task: asyncio.Task[dict[str, Any]] | None = None
        self.ctx = ctx  # the downstream request it reports to now (a retry brings a new one)
        self.waiting: tuple[dict[str, dict[str, Any]], asyncio.Future[dict[str, Any]]] | None = None
        self.expiry: asyncio.TimerHandle | None = None
        self.changed = asyncio.Event()  # set when the upstream needs input

    async def ask(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        import asyncio  # imported by then: on first use, not at start-up
        check_capabilities(requests, self.ctx.client_capabilities)  # -32021 to the upstream, not a suspension
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting = (requests, future)
        self.changed.set()
        return await future


class Forwarder:
    """The forwarded methods' handlers of one server (installed by `Server.forward`)."""

    def __init__(self, server: Server, upstream: Upstream) -> None:
        self.server = server
        self.upstream = upstream
        self.suspended: dict[str, _Suspended] = {}
        self._keys = itertools.count(1)
        self.handlers = {method: self._handler for method in FORWARDED}
        #: Tools derived from upstream tools (``server.add_transformed``; `_transform`), or None.
        self._transforms: ForwardedTransforms | None = None

    def transforms(self) -> ForwardedTransforms:
        """The tools derived from upstream tools, made on first use (`_transform.ForwardedTransforms`)."""
        if self._transforms is None:
            from ._transform import ForwardedTransforms

            self._transforms = ForwardedTransforms()
        return self._transforms

    def capabilities(self) -> dict[str, Any]:
        """The upstream's tools, resources, prompts and completions capabilities (listChanged as we serve it)."""
        upstream = self.upstream.capabilities()
        caps: dict[str, Any] = {}
        for name in ("tools", "resources", "prompts"):
            if type(upstream.get(name)) is dict:
                caps[name] = {"listChanged": True}
        if "resources" in caps:
            caps["resources"]["subscribe"] = False  # updates to single resources are not relayed
        if type(upstream.get("completions")) is dict:
            caps["completions"] = {}
        return caps

    def key(self) -> str:
        """A fresh input key, for input a legacy upstream asks for with a request of its own."""
        return f"proxy-{next(self._keys)}"

    def _handler(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> Awaitable[dict[str, Any]]:
        return self._forward(request, params, meta, emit)

    async def _forward(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any]:
        server = self.server
        method = request.method
        ctx = Context(request.id, method, meta, server, emit)
        transforms = self._transforms
        derived = None
        if transforms is not None and method == methods.TOOLS_CALL:  # a derived tool: checked, mapped (_transform)
            params, derived, refused = await transforms.before_call(self.upstream, params, ctx)
            if refused is not None:
                return self._finish(method, refused)
        if meta.era == "legacy":  # a legacy downstream: real requests, the call goes on
            result = await self.upstream.request(method, _upstream_params(params), ctx, ctx.ask)
        else:
            result = await self._modern(method, params, ctx, meta)
        if transforms is not None:
            if method == methods.TOOLS_LIST:
                result = transforms.listed(result)
            elif derived is not None:
                finished = derived.finish(result, server.mask_errors)
                result = finished if type(finished) is dict else await finished  # type: ignore[misc]
        return self._finish(method, result)

    async def _modern(self, method: str, params: dict[str, Any], ctx: Context, meta: RequestMeta) -> dict[str, Any]:
        import secrets  # imported by then: on first use, not at start-up
        import asyncio  # imported by then: on first use, not at start-up
        answers = meta.inputs or {}
        resume = answers.get(RESUME_KEY)
        call = self.suspended.pop(resume, None) if type(resume) is str else None
        if call is not None:
            if call.expiry is not None:
                call.expiry.cancel()
            call.ctx = ctx
            assert call.waiting is not None
            requests, future = call.waiting
            missing = {k: r for k, r in requests.items() if k not in answers}
            if missing:  # asked again rather than failed (mrtr.mdx, Error Handling)
                return self._suspend(resume, call, missing)  # type: ignore[arg-type]  # resume is a str here
            call.waiting = None
            call.changed.clear()
            if not future.done():
                future.set_result({k: answers[k] for k in requests})
        else:
            if resume is not None:
                log.info("a retry named suspended call %r, which is gone (expired?): starting over", resume)
            call = _Suspended(ctx)
            call.task = asyncio.get_running_loop().create_task(
                self.upstream.request(method, _upstream_params(params), ctx, call.ask)
            )
        task = call.task
        assert task is not None
        try:
            while True:
                watch = asyncio.ensure_future(call.changed.wait())
                try:
                    await asyncio.wait((task, watch), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    watch.cancel()
                if task.done():
                    return task.result()
                if call.waiting is not None:
                    return self._suspend(secrets.token_urlsafe(16), call, call.waiting[0])
        except BaseException:
            if not task.done() and call not in self.suspended.values():
                task.cancel()  # the downstream request was cancelled: so is the upstream call
            raise

    def _suspend(self, resume: str, call: _Suspended, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        import asyncio  # imported by then: on first use, not at start-up
        self.suspended[resume] = call
        loop = asyncio.get_running_loop()
        call.expiry = loop.call_later(self.server.state_sealer.ttl, self._expire, resume)
        raise InputRequired(requests, {RESUME_KEY: resume})

    def _expire(self, resume: str) -> None:
        call = self.suspended.pop(resume, None)
        if call is not None and call.task is not None and not call.task.done():
            log.info("cancelled upstream call %r: its client did not retry in time", resume)
            call.task.cancel()

    def _finish(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        out = dict(result)
        out.setdefault("resultType", "complete")
        meta = out.get("_meta")
        if type(meta) is dict and SERVER_INFO in meta:  # the client talks to this server, not the upstream
            meta = {k: v for k, v in meta.items() if k != SERVER_INFO}
            if meta:
                out["_meta"] = meta
            else:
                del out["_meta"]
        server = self.server
        if method in _LISTS:
            out.setdefault("ttlMs", server.list_ttl_ms)
            out.setdefault("cacheScope", server.cache_scope)
        return server._complete(out)

    def close(self) -> None:
        """Cancel every suspended upstream call (on shutdown)."""
        for resume in list(self.suspended):
            self._expire(resume)


def _upstream_params(params: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState", "_meta")}
    meta = params.get("_meta")
    if type(meta) is dict:
        kept = {k: v for k, v in meta.items() if not k.startswith(_PROTOCOL_PREFIX) and k != "progressToken"}
        if kept:
            out["_meta"] = kept
    return out
