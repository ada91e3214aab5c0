"""Dependency injection: tool parameters filled by functions, per request or once per server lifespan.

A tool asks for a value by annotating a parameter ``Annotated[T, Depends(f)]``
(`Depends`, public in `wiremcp.server.depends`); the parameter is injected,
like a `Context`, and never appears in the ``inputSchema``. Rules:

* a **request-scoped** dependency (the default for a plain or async
  function) runs when a call needs it, before the body, once per call: the
  same function asked for twice in one call (by two parameters, or by two
  dependencies of the call) runs once and both get its value;
* a **lifespan-scoped** dependency (the default for a generator or async
  generator function, or an ``@contextmanager``/``@asynccontextmanager``
  one; ``Depends(f, scope="lifespan")`` for any other) is opened once when the
  server's lifespan is entered (a transport starting to serve, or
  ``async with server.lifespan``), shared by every call, and closed when the
  lifespan exits, in the reverse order of opening: a database pool, an HTTP
  client. A function (plain or async) of that scope returning a context
  manager has it entered. Asking for one while the lifespan does not run is a
  `RuntimeError` naming the fix; one added while it runs opens on first use;
* a dependency function's parameters are themselves injected: a `Context`
  parameter gets the request's (request scope only), an
  ``Annotated[T, Depends(g)]`` one gets ``g``'s value, a parameter with a
  default keeps it; any other parameter, a cycle, or a lifespan-scoped
  dependency that needs a request-scoped one is refused when the tool is
  registered (`TypeError`), not when a call comes;
* a plain dependency function runs on the event loop (keep it quick; make
  slow ones async); an exception it raises is the call's, as the body's
  would be: a `ToolError` is shown as it is, any other is masked unless
  ``mask_errors=False``;
* resources, resource templates, prompts and completers take them too
  (`_inject.Signature.depends`; `run_injected` fills them before the function
  runs): an injected parameter is neither a URI variable nor a prompt
  argument, and an exception from a dependency is the read's or the get's;
* zero cost when unused: a tool, resource or prompt looks for `Depends`
  markers only once this module is loaded (`_tools._find_depends`,
  `_inject.Signature`), and one without them runs as before (one ``is None``
  test on the general path).
"""

from __future__ import annotations

import contextlib
import inspect
import typing
from typing import TYPE_CHECKING, Any, Callable, Literal

from ..jsonrpc import JSONRPCError
from ._inject import _is_context

if TYPE_CHECKING:
    import asyncio
    from ._context import Context
    from ._server import Server
    from ._workers import Workers

R = typing.TypeVar("R")

__all__ = ["Depends", "Scope", "Provider", "Injection", "Resources", "find_depends", "run_injected"]

#: When a dependency runs: once per call ("request"), or once per server lifespan ("lifespan").
Scope = Literal["request", "lifespan"]


class Depends:
    """A parameter filled by ``fn``: ``db: Annotated[Pool, Depends(open_pool)]`` (see the module docs).

    ``scope`` is "request" or "lifespan"; left None it is "lifespan" for a
    generator (or ``@contextmanager``/``@asynccontextmanager``) function,
    else "request".
    """

    __slots__ = ("fn", "scope")

    def __init__(self, fn: Callable[..., Any], *, scope: Scope | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"Depends takes a function (plain, async, or a generator), not {fn!r}")
        if scope not in (None, "request", "lifespan"):
            raise ValueError(f"Depends scope is 'request' or 'lifespan', not {scope!r}")
        self.fn = fn
        self.scope = scope

    def __repr__(self) -> str:
        return f"Depends({getattr(self.fn, '__qualname__', self.fn)!r}, scope={self.scope!r})"


def _generator_kind(fn: Callable[..., Any]) -> str | None:
    target = getattr(fn, "__wrapped__", None)
    for each in (fn, target):
        if each is None:
            continue
        if inspect.isasyncgenfunction(each):
            return "asyncgen" if each is fn else "call"  # an @asynccontextmanager function returns its manager
        if inspect.isgeneratorfunction(each):
            return "gen" if each is fn else "call"
    return None


class Provider:
    """One dependency function, read once: its scope, how to call it, and what its parameters get."""

    __slots__ = ("fn", "scope", "kind", "context", "subs", "label")

    def __init__(self, fn: Callable[..., Any], scope: Scope, kind: str, label: str) -> None:
        self.fn = fn
        self.scope = scope
        #: "asyncgen", "gen" (entered as a context manager), or "call".
        self.kind = kind
        self.label = label
        self.context: str | None = None
        self.subs: list[tuple[str, Provider]] = []


def _marker(hint: Any) -> Depends | None:
    if typing.get_origin(hint) is typing.Annotated:
        for extra in typing.get_args(hint)[1:]:
            if isinstance(extra, Depends):
                return extra
    return None


def _provider(marker: Depends, where: str, chain: tuple[Callable[..., Any], ...]) -> Provider:
    fn = marker.fn
    label = getattr(fn, "__qualname__", repr(fn))
    if fn in chain:
        raise TypeError(f"{where}: dependency {label!r} depends on itself")
    generator = _generator_kind(fn)
    scope: Scope = marker.scope or ("lifespan" if generator is not None else "request")
    if generator is not None and scope == "request":
        raise TypeError(f"{where}: dependency {label!r} is a generator (a resource): its scope is 'lifespan'")
    provider = Provider(fn, scope, generator if generator in ("asyncgen", "gen") else "call", label)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
        parameters = inspect.signature(fn).parameters.values()
    except Exception as exc:
        raise TypeError(f"{where}: dependency {label!r}: cannot read its signature: {exc}") from None
    for p in parameters:
        hint = hints.get(p.name, inspect.Parameter.empty)
        sub = _marker(hint)
        if sub is not None:
            made = _provider(sub, where, (*chain, fn))
            if scope == "lifespan" and made.scope == "request":
                raise TypeError(
                    f"{where}: lifespan-scoped dependency {label!r} cannot use request-scoped {made.label!r}"
                )
            provider.subs.append((p.name, made))
        elif _is_context(hint):
            if scope == "lifespan":
                raise TypeError(f"{where}: lifespan-scoped dependency {label!r} has no request: it cannot take a Context")
            provider.context = p.name
        elif p.default is p.empty or p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY):
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            raise TypeError(
                f"{where}: dependency {label!r}, parameter {p.name!r}: give it a default, or annotate it "
                "Context or Annotated[T, Depends(...)]"
            )
    return provider


def find_depends(fn: Callable[..., Any], where: str) -> Injection | None:
    """The parameters of ``fn`` annotated ``Annotated[T, Depends(...)]``, read into an `Injection`; None if none."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:
        return None  # unresolved hints: `signature_info` reports them
    params: dict[str, Provider] = {}
    for name, hint in hints.items():
        marker = _marker(hint) if name != "return" else None
        if marker is not None:
            params[name] = _provider(marker, where, ())
    return Injection(params) if params else None


async def run_injected(
    injection: Injection,
    fn: Callable[..., Any],
    arguments: dict[str, Any],
    ctx: Context | None,
    *,
    is_async: bool,
    threaded: bool,
    workers: Workers | None,
    done: Callable[[Any], R],
    fail: Callable[[Exception], R],
) -> R:
    """`_workers.run_handler` for a resource, prompt or completer with `Depends` parameters: fill them, then call.

    A dependency that raises fails the call as its function would (``fail``);
    a `JSONRPCError` stays a protocol error.
    """
    from ._workers import run_handler

    try:
        values = await injection.resolve(ctx)
    except JSONRPCError:
        raise
    except Exception as exc:
        return fail(exc)
    out = run_handler(
        fn, {**arguments, **values}, ctx, is_async=is_async, threaded=threaded, workers=workers, done=done, fail=fail
    )
    if inspect.isawaitable(out):
        return await out
    return out


def _lifespan_providers(providers: typing.Iterable[Provider]) -> list[Provider]:
    out: list[Provider] = []
    for p in providers:
        for q in _lifespan_providers(q for _, q in p.subs):
            if q not in out:
                out.append(q)
        if p.scope == "lifespan" and p not in out:
            out.append(p)
    return out


class Injection:
    """A tool's injected parameters: name -> `Provider`, and the server's lifespan resources once registered."""

    __slots__ = ("params", "resources")

    def __init__(self, params: dict[str, Provider]) -> None:
        self.params = params
        self.resources: Resources | None = None

    def bind(self, server: Server) -> None:
        """The tool was registered on ``server``: its lifespan-scoped dependencies open with that server's lifespan."""
        wanted = _lifespan_providers(self.params.values())
        if not wanted:
            return
        resources = server._dependencies
        if resources is None:
            resources = server._dependencies = Resources(server.name)
            server.lifespan.include(resources)
        for p in wanted:
            resources.want(p)
        self.resources = resources

    async def resolve(self, ctx: Context | None) -> dict[str, Any]:
        """Each injected parameter's value for one call (each function run once, `Provider` by `Provider`)."""
        cache: dict[Any, Any] = {}
        return {name: await self._value(p, ctx, cache) for name, p in self.params.items()}

    async def _value(self, p: Provider, ctx: Context | None, cache: dict[Any, Any]) -> Any:
        key = p.fn
        if key in cache:
            return cache[key]
        if p.scope == "lifespan":
            if self.resources is None:
                raise RuntimeError(f"dependency {p.label!r} is lifespan-scoped: register the tool on a server first")
            value = await self.resources.get(p)
        else:
            kwargs = {name: await self._value(sub, ctx, cache) for name, sub in p.subs}
            if p.context is not None:
                kwargs[p.context] = ctx
            value = p.fn(**kwargs)
            if inspect.isawaitable(value):
                value = await value
        cache[key] = value
        return value


class Resources:
    """A server's lifespan-scoped dependency values: opened on lifespan entry, closed on exit (in reverse)."""

    __slots__ = ("server_name", "wanted", "values", "_stack", "_lock")

    def __init__(self, server_name: str) -> None:
        self.server_name = server_name
        self.wanted: list[Provider] = []
        self.values: dict[Any, Any] = {}
        self._stack: contextlib.AsyncExitStack | None = None
        self._lock: asyncio.Lock | None = None

    def want(self, provider: Provider) -> None:
        if all(p.fn is not provider.fn for p in self.wanted):
            self.wanted.append(provider)

    async def __aenter__(self) -> Resources:
        import asyncio  # imported by then: on first use, not at start-up

        self._lock = asyncio.Lock()
        stack = self._stack = contextlib.AsyncExitStack()
        try:
            for p in list(self.wanted):
                await self.get(p)
        except BaseException:
            self._stack = None
            self.values.clear()
            await stack.aclose()
            raise
        return self

    async def __aexit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        stack, self._stack = self._stack, None
        self.values.clear()
        if stack is not None:
            await stack.aclose()
        return False

    async def get(self, p: Provider) -> Any:
        """``p``'s value, opened now if it is not yet (the lifespan must be running)."""
        values = self.values
        if p.fn in values:
            return values[p.fn]
        if self._stack is None or self._lock is None:
            raise RuntimeError(
                f"dependency {p.label!r} is lifespan-scoped and the lifespan of server {self.server_name!r} is not "
                "running: serve the server with a transport (stdio, HTTP, wiremcp.testing), or enter it yourself "
                "with `async with server.lifespan:`"
            )
        async with self._lock:
            if p.fn not in values:
                values[p.fn] = await self._open(p, self._stack)
        return values[p.fn]

    async def _open(self, p: Provider, stack: contextlib.AsyncExitStack) -> Any:
        kwargs = {}
        for name, sub in p.subs:
            if sub.fn not in self.values:
                self.values[sub.fn] = await self._open(sub, stack)
            kwargs[name] = self.values[sub.fn]
        if p.kind == "asyncgen":
            return await stack.enter_async_context(contextlib.asynccontextmanager(p.fn)(**kwargs))
        if p.kind == "gen":
            return stack.enter_context(contextlib.contextmanager(p.fn)(**kwargs))
        out = p.fn(**kwargs)
        if inspect.isawaitable(out):
            out = await out
        if hasattr(out, "__aenter__") and hasattr(out, "__aexit__"):
            return await stack.enter_async_context(out)
        if hasattr(out, "__enter__") and hasattr(out, "__exit__"):
            return stack.enter_context(out)
        return out
