"""Resources and resource templates: registration, listing and reading (server/resources.mdx).

A resource is a plain or async function registered under a URI:

* a URI without ``{...}`` is a **static resource**, listed by
  ``resources/list``; its function takes no wire parameters;
* a URI with ``{...}`` is a **template** (RFC 6570, see `_uri_template`),
  listed by ``resources/templates/list`` as ``uriTemplate``; each variable
  is a parameter of the function, converted by its type hint (`_inject`).
  A parameter that is not a variable needs a default.

Either may take a `Context` parameter, and ``Annotated[T, Depends(f)]`` ones
(`_depends`: not URI variables, filled before the function runs). Reading a URI (``resources/read``):

1. a static resource with exactly that URI wins; otherwise the templates are
   tried in registration order and the first that matches the URI, whose
   variables convert, and that has every parameter it needs, wins;
2. no winner, or a function that returns None: -32602 with ``data.uri``
   (`ResourceNotFound`); never an empty ``contents`` for a missing resource;
3. what the function returns becomes ``contents``: a ``str`` is text, bytes
   are a base64 blob (MIME type: the resource's, else text/plain or
   application/octet-stream), a dict is one contents item (``text`` or
   ``blob``; ``uri`` and ``mimeType`` filled in when absent), a list is
   several items (a directory, say);
4. a plain function runs in a worker thread unless registered
   ``inline=True`` (`_workers`); a `JSONRPCError` keeps its code, MRTR's
   `InputRequired` reaches `Server.handle`, anything else (a bad return
   value included) is -32603 with a message masked as `_failures` says;
5. the result's caching hints are the resource's ``ttl_ms`` / ``cache_scope``,
   else the server's defaults (server/utilities/caching.mdx).
"""

from __future__ import annotations

import base64
import inspect
from typing import Any, Awaitable, Callable

from ..protocol import ResourceNotFound
from ._context import Context, scope_tuple
from ._failures import HandlerFailed, failure_message
from ._inject import Signature
from ._options import CacheScope, ResourceOptions, tag_set, with_tags
from ._workers import Workers, run_handler

__all__ = ["Resource", "Resources", "to_contents"]

Contents = list[dict[str, Any]]


class Resource:
    """A registered resource or resource template: its wire definition and how to read it."""

    __slots__ = (
        "uri",
        "template",
        "name",
        "sig",
        "definition",
        "mime_type",
        "ttl_ms",
        "cache_scope",
        "scopes",
        "threaded",
        "tags",
    )

    def __init__(self, fn: Callable[..., Any], uri: str, options: ResourceOptions | None = None, /, **keywords: Any) -> None:
        """The resource (or template) ``uri`` read by ``fn``, with ``options`` or the same as keywords (``Server.resource``'s)."""
        if options is None:
            options = ResourceOptions(**keywords)
        elif keywords:
            raise TypeError("Resource(fn, uri, options) takes its options once: a ResourceOptions or keywords, not both")
        ttl_ms, cache_scope, size = options.ttl_ms, options.cache_scope, options.size  # checked here
        #: OAuth scopes a request needs to read it (enforced where requests are authenticated).
        self.scopes = scope_tuple(options.scopes)
        if type(uri) is not str or not uri:
            raise ValueError("a resource needs a URI (a non-empty string)")
        if ttl_ms is not None and (type(ttl_ms) is not int or ttl_ms < 0):
            raise ValueError("ttl_ms must be an integer >= 0 (server/utilities/caching.mdx)")
        if cache_scope is not None and cache_scope not in ("public", "private"):
            raise ValueError("cache_scope must be 'public' or 'private'")
        from ._uri_template import UriTemplate  # on first registration: a server without resources never loads it

        template = UriTemplate(uri)
        self.uri = uri
        self.template = None if template.is_literal else template
        self.name = options.name or getattr(fn, "__name__", None) or uri
        what = f"resource {uri!r}"
        #: Its tags (`Server` serves a subset by them; published in ``_meta``, `_options.TAGS_META`).
        self.tags = tag_set(options.tags, what)
        self.sig = Signature(fn, what)
        #: A plain function not registered ``inline=True``: it runs in a worker thread.
        self.threaded = not self.sig.is_async and not options.inline
        variables = frozenset(template.variables)
        for var in variables:
            if var not in self.sig.by_name and not self.sig.var_keyword:
                raise TypeError(f"{what}: the function has no parameter for the variable {var!r}")
        for param in self.sig.params:
            if param.required and param.name not in variables:
                raise TypeError(f"{what}: parameter {param.name!r} is not a URI variable, so it needs a default")
        if size is not None:
            if self.template is not None:
                raise ValueError(f"{what}: a template has no size (schema.json, ResourceTemplate)")
            if type(size) is not int or size < 0:
                raise ValueError(f"{what}: size is a number of bytes (an integer >= 0)")
        self.mime_type = options.mime_type
        self.ttl_ms = ttl_ms
        self.cache_scope = cache_scope
        definition: dict[str, Any] = {"uriTemplate" if self.template is not None else "uri": uri, "name": self.name}
        if options.title:
            definition["title"] = options.title
        doc = options.description if options.description is not None else inspect.getdoc(fn)
        if doc:
            definition["description"] = doc
        if options.mime_type:
            definition["mimeType"] = options.mime_type
        if size is not None:
            definition["size"] = size
        if options.annotations:
            definition["annotations"] = options.annotations
        if options.icons:
            definition["icons"] = options.icons
        meta = with_tags(options.meta, self.tags, what)
        if meta:
            definition["_meta"] = meta
        self.definition = definition

    def arguments(self, uri: str) -> dict[str, Any] | None:
        """The function's arguments for ``uri``, or None when this template does not serve it."""
        assert self.template is not None
        values = self.template.match(uri)
        if values is None:
            return None
        by_name = self.sig.by_name
        out: dict[str, Any] = {}
        for var, value in values.items():
            param = by_name.get(var)
            if param is None:  # taken by **kwargs
                out[var] = value
                continue
            try:
                out[var] = param.convert(value)
            except ValueError:
                return None
        for param in self.sig.params:
            if param.required and param.name not in out:
                return None  # an optional part of the URI the function needs is absent
        return out

    def read(
        self, uri: str, arguments: dict[str, Any], ctx: Context | None, workers: Workers | None = None, mask: bool = True
    ) -> Contents | Awaitable[Contents]:
        """Call the function: the contents now, or an awaitable of them (async or threaded)."""
        if self.sig.context is not None:
            arguments = {**arguments, self.sig.context: ctx}
        mime_type = self.mime_type

        def done(value: Any) -> Contents:
            return to_contents(value, uri, mime_type)

        def fail(exc: Exception) -> Contents:
            raise HandlerFailed(failure_message("resource", self.uri, exc, mask)) from exc

        if self.sig.depends is not None:  # `Depends` parameters (`_depends`): filled first
            from ._depends import run_injected

            return run_injected(
                self.sig.depends, self.sig.fn, arguments, ctx,
                is_async=self.sig.is_async, threaded=self.threaded, workers=workers, done=done, fail=fail,
            )
        return run_handler(
            self.sig.fn, arguments, ctx, is_async=self.sig.is_async, threaded=self.threaded, workers=workers, done=done, fail=fail
        )


def to_contents(value: Any, uri: str, mime_type: str | None) -> Contents:
    """The ``contents`` of a ``resources/read`` result for what a resource function returned."""
    if value is None:
        raise ResourceNotFound(uri)
    if type(value) is list or type(value) is tuple:
        return [_item(v, uri, mime_type) for v in value]
    return [_item(value, uri, mime_type)]


def _item(value: Any, uri: str, mime_type: str | None) -> dict[str, Any]:
    if isinstance(value, str):
        return {"uri": uri, "mimeType": mime_type or "text/plain", "text": value}
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = base64.b64encode(value).decode("ascii")
        return {"uri": uri, "mimeType": mime_type or "application/octet-stream", "blob": data}
    if type(value) is dict:
        text, blob = value.get("text"), value.get("blob")
        if (text is None) == (blob is None):
            raise TypeError(f"resource {uri!r}: a contents dict has exactly one of 'text' and 'blob'")
        if text is not None and type(text) is not str:
            raise TypeError(f"resource {uri!r}: contents 'text' must be a str")
        item_uri = value.get("uri", uri)
        if type(item_uri) is not str:
            raise TypeError(f"resource {uri!r}: contents 'uri' must be a str")
        item: dict[str, Any] = {"uri": item_uri}
        if mime_type and "mimeType" not in value:
            item["mimeType"] = mime_type
        item.update(value)
        if blob is not None:
            if isinstance(blob, (bytes, bytearray, memoryview)):
                item["blob"] = base64.b64encode(blob).decode("ascii")
            elif type(blob) is not str:
                raise TypeError(f"resource {uri!r}: contents 'blob' must be bytes or a base64 str")
        return item
    raise TypeError(
        f"resource {uri!r} returned {type(value).__name__}; return str (text), bytes (blob), "
        "a contents dict, a list of those, or None (no such resource)"
    )


class Resources:
    """The registered resources and templates, with their list entries cached."""

    __slots__ = ("static", "templates", "_defs", "_template_defs")

    def __init__(self) -> None:
        self.static: dict[str, Resource] = {}
        self.templates: dict[str, Resource] = {}
        self._defs: list[dict[str, Any]] | None = None
        self._template_defs: list[dict[str, Any]] | None = None

    def __bool__(self) -> bool:
        return bool(self.static or self.templates)

    def add(self, resource: Resource) -> None:
        table = self.static if resource.template is None else self.templates
        if resource.uri in table:
            kind = "resource" if resource.template is None else "resource template"
            raise ValueError(f"a {kind} {resource.uri!r} is already registered")
        table[resource.uri] = resource
        self._defs = self._template_defs = None

    def remove(self, uri: str) -> Resource:
        """Unregister the static resource or template registered as ``uri``; KeyError if none."""
        resource = self.static.pop(uri, None) or self.templates.pop(uri)
        self._defs = self._template_defs = None
        return resource

    def find(self, uri: str) -> tuple[Resource, dict[str, Any]]:
        """The resource serving ``uri`` and its function's arguments; `ResourceNotFound` if none."""
        resource = self.static.get(uri)
        if resource is not None:
            return resource, {}
        for template in self.templates.values():
            arguments = template.arguments(uri)
            if arguments is not None:
                return template, arguments
        raise ResourceNotFound(uri)

    def definitions(self) -> list[dict[str, Any]]:
        defs = self._defs
        if defs is None:
            defs = self._defs = [r.definition for r in self.static.values()]
        return defs

    def template_definitions(self) -> list[dict[str, Any]]:
        defs = self._template_defs
        if defs is None:
            defs = self._template_defs = [r.definition for r in self.templates.values()]
        return defs
