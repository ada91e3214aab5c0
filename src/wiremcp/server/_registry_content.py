"""The registration API of resources, templates, prompts and completers, which `Server` inherits.

server/resources.mdx, server/prompts.mdx, server/utilities/completion.mdx;
the rules of each component live beside it (`_resources`, `_prompts`,
`_completion`, `_uri_template`), the handlers that serve them in
`_handlers_content`. Rules kept here:

* the registries (and the modules of these components) are made on first
  use: a server of tools alone imports none of them (bench/README.md, "Cold
  start"), and asking what is registered does not make them;
* each registration or removal updates the engine's method table at once
  (`Engine.offer`: a method is served exactly while something of its kind is
  registered) and is announced to ``subscriptions/listen`` streams;
* a decorator refuses misuse at once (a bare ``@server.resource``, a URI that
  is not a non-empty string, a completer that does not say what it completes,
  a non-callable); the options of each kind are one frozen value
  (`ResourceOptions`, `PromptOptions`) built from the keywords once.
"""

from __future__ import annotations

import os
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Iterable, TypeVar, cast, overload

from ..backends import ChangeBus
from ._apps import UI_EXTENSION, UI_MIME_TYPE, UiCsp, ui_resource_parts
from ._options import CacheScope, PromptOptions, ResourceOptions

if TYPE_CHECKING:
    from ._completion import Completer, Completers
    from ._depends import Injection
    from ._engine import Engine
    from ._prompts import Prompt, Prompts
    from ._resources import Resource, Resources
    from ._server import Server
    from ._visibility import VisibilityRules

__all__ = ["ContentRegistry", "check_name", "check_decorated"]

#: A function being registered: the decorators hand it back unchanged, with its own type.
F = TypeVar("F", bound=Callable[..., Any])


class ContentRegistry:
    """Resources, templates, prompts and completers: what a `Server` registers besides tools."""

    # Set by `Server.__init__`.
    _engine: Engine
    _extensions: dict[str, dict[str, Any]]
    bus: ChangeBus

    # The registries of resources, prompts and completers, made (and their modules imported) on first use.

    @cached_property
    def _resources(self) -> Resources:
        from ._resources import Resources

        return Resources()

    @cached_property
    def _prompts(self) -> Prompts:
        from ._prompts import Prompts

        return Prompts()

    @cached_property
    def _completers(self) -> Completers:
        from ._completion import Completers

        return Completers()

    def _bind(self, injection: Injection) -> None:
        """A function with `Depends` parameters was registered: its lifespan-scoped ones open with this server's lifespan."""
        injection.bind(cast("Server", self))

    def notify_prompts_changed(self) -> None:
        """Tell ``subscriptions/listen`` streams that asked for it that the prompt list changed."""
        self.bus.publish(("prompts", None))

    def notify_resources_changed(self) -> None:
        """Tell ``subscriptions/listen`` streams that asked for it that the resource list changed."""
        self.bus.publish(("resources", None))

    def notify_resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to streams subscribed to ``uri``."""
        self.bus.publish(("updated", uri))

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        ttl_ms: int | None = None,
        cache_scope: CacheScope | None = None,
        scopes: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        inline: bool = False,
    ) -> Callable[[F], F]:
        """Decorator: register a function as the resource at ``uri``; returns it unchanged.

        A ``uri`` with ``{...}`` (RFC 6570) registers a resource template
        whose variables are the function's parameters. ``ttl_ms`` and
        ``cache_scope`` set the caching hints of its ``resources/read``
        results (default: the server's). A plain function runs in a worker
        thread unless ``inline=True``. ``tags``: as a tool's (``Server.tool``).
        """
        if callable(uri):
            raise TypeError(
                "@server.resource needs the resource's URI: write @server.resource(\"file:///...\"), "
                "not a bare @server.resource"
            )
        if type(uri) is not str or not uri:
            raise TypeError(f"@server.resource needs the resource's URI as a non-empty string, not {uri!r}")
        options = ResourceOptions(
            name=name, title=title, description=description, mime_type=mime_type, size=size, annotations=annotations,
            icons=icons, meta=meta, ttl_ms=ttl_ms, cache_scope=cache_scope, scopes=scopes, tags=tags, inline=inline,
        )

        def register(fn: F) -> F:
            check_decorated("resource", fn)
            self.add_resource(fn, uri, options)
            return fn

        return register

    def add_resource(
        self, fn: Callable[..., Any], uri: str, options: ResourceOptions | None = None, /, **keywords: Any
    ) -> Resource:
        """Register ``fn`` as the resource (or template) ``uri`` and return it; ValueError if ``uri`` is taken.

        The options are a `ResourceOptions` or the keywords of `resource`.
        """
        from ._resources import Resource

        try:
            resource = Resource(fn, uri, options, **keywords)
        except (TypeError, ValueError) as exc:  # told at the user's def, without our frames (`_definition`)
            from ._definition import at_def  # only for a registration that fails

            raise at_def(fn, exc) from None
        if resource.sig.depends is not None:
            self._bind(resource.sig.depends)
        visibility: VisibilityRules | None = self.__dict__.get("_visibility")
        if visibility is None:
            self._resources.add(resource)
        else:  # registered; served if the rules let it through (see _visibility)
            table = visibility.table("resource", resource)
            if resource.uri in table:
                kind = "resource" if resource.template is None else "resource template"
                raise ValueError(f"a {kind} {resource.uri!r} is already registered")
            table[resource.uri] = resource
            visibility.refresh("resource")
        self._engine.offer()
        self.notify_resources_changed()
        return resource

    def ui_resource(
        self,
        uri: str,
        *,
        html: str | None = None,
        file: str | os.PathLike[str] | None = None,
        package: tuple[str, str] | None = None,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        csp: UiCsp | None = None,
        permissions: Iterable[str] | None = None,
        domain: str | None = None,
        prefers_border: bool | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        ttl_ms: int | None = None,
        cache_scope: CacheScope | None = None,
        scopes: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
    ) -> Resource:
        """Register an MCP Apps view: an HTML document at a ``ui://`` URI (see `wiremcp.server._apps`).

        The HTML is ``html=`` (a string), ``file=`` (a path) or ``package=``
        (``("my_pkg.views", "view.html")``), read once, now. ``csp`` lists the
        origins the view may reach (``connectDomains``, ``resourceDomains``,
        ``frameDomains``, ``baseUriDomains``); ``permissions`` names browser
        features it asks for (``camera``, ``microphone``, ``geolocation``,
        ``clipboardWrite``); ``domain`` asks the host for a dedicated origin;
        ``prefers_border`` asks for a border. Link a tool to it with
        ``@server.tool(ui=uri)``.
        """
        read, ui_meta, size = ui_resource_parts(
            uri, html=html, file=file, package=package, csp=csp, permissions=permissions,
            domain=domain, prefers_border=prefers_border, meta=meta,
        )
        self._extensions.setdefault(UI_EXTENSION, {})  # MCP Apps, opted in
        options = ResourceOptions(
            name=name or uri, title=title, description=description, mime_type=UI_MIME_TYPE, size=size, icons=icons,
            meta=ui_meta, ttl_ms=ttl_ms, cache_scope=cache_scope, scopes=scopes, tags=tags, inline=True,
        )
        return self.add_resource(read, uri, options)

    def remove_resource(self, uri: str) -> None:
        """Unregister the resource or template registered as ``uri`` (KeyError if none)."""
        visibility: VisibilityRules | None = self.__dict__.get("_visibility")
        if visibility is None:
            self._resources.remove(uri)
        else:
            del (visibility.static if uri in visibility.static else visibility.templates)[uri]
            visibility.forget("resource", uri)
            visibility.refresh("resource")
        self._engine.offer()
        self.notify_resources_changed()

    @property
    def resources(self) -> dict[str, Resource]:
        """The static resources by URI, in registration order (a copy), served now or not (``Server.enable``)."""
        visibility: VisibilityRules | None = self.__dict__.get("_visibility")
        return dict(self._resources.static if visibility is None else visibility.static)

    @property
    def resource_templates(self) -> dict[str, Resource]:
        """The resource templates by URI template, in registration order (a copy), served now or not."""
        visibility: VisibilityRules | None = self.__dict__.get("_visibility")
        return dict(self._resources.templates if visibility is None else visibility.templates)

    @overload
    def prompt(self, name: F, /) -> F: ...

    @overload
    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        scopes: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        inline: bool = False,
    ) -> Callable[[F], F]: ...

    def prompt(self, name: str | F | None = None, **options: Any) -> F | Callable[[F], F]:
        """Decorator: register a function as a prompt; its parameters are the prompt's arguments.

        ``@server.prompt()`` and bare ``@server.prompt`` both work. A plain
        function runs in a worker thread unless ``inline=True``. ``tags``: as
        a tool's (``Server.tool``).
        """
        if callable(name):  # used bare: the function came as `name`
            self.add_prompt(name, PromptOptions(**options))
            return name
        check_name("prompt", name)
        chosen = PromptOptions(name=name, **options)

        def register(fn: F) -> F:
            check_decorated("prompt", fn)
            self.add_prompt(fn, chosen)
            return fn

        return register

    def add_prompt(self, fn: Callable[..., Any], options: PromptOptions | None = None, /, **keywords: Any) -> Prompt:
        """Register ``fn`` as a prompt and return it; ValueError if the name is taken.

        The options are a `PromptOptions` or the keywords of `prompt`.
        """
        from ._prompts import Prompt

        try:
            prompt = Prompt(fn, options, **keywords)
        except (TypeError, ValueError) as exc:  # told at the user's def, without our frames (`_definition`)
            from ._definition import at_def  # only for a registration that fails

            raise at_def(fn, exc) from None
        if prompt.sig.depends is not None:
            self._bind(prompt.sig.depends)
        visibility: VisibilityRules | None = self.__dict__.get("_visibility")
        if visibility is None:
            self._prompts.add(prompt)
        else:  # registered; served if the rules let it through (see _visibility)
            if prompt.name in visibility.prompts:
                raise ValueError(f"a prompt named {prompt.name!r} is already registered")
            visibility.prompts[prompt.name] = prompt
            visibility.refresh("prompt")
        self._engine.offer()
        self.notify_prompts_changed()
        return prompt

    def remove_prompt(self, name: str) -> None:
        """Unregister the prompt ``name`` (KeyError if there is none) and announce that the prompt list changed."""
        visibility: VisibilityRules | None = self.__dict__.get("_visibility")
        if visibility is None:
            self._prompts.remove(name)
        else:
            del visibility.prompts[name]
            visibility.forget("prompt", name)
            visibility.refresh("prompt")
        self._engine.offer()
        self.notify_prompts_changed()

    @property
    def prompts(self) -> dict[str, Prompt]:
        """The registered prompts by name, in registration order (a copy), served now or not (``Server.enable``)."""
        visibility: VisibilityRules | None = self.__dict__.get("_visibility")
        return dict(self._prompts.by_name if visibility is None else visibility.prompts)

    def complete(
        self,
        fn: Any = None,
        /,
        *,
        argument: str | None = None,
        prompt: str | None = None,
        template: str | None = None,
        inline: bool = False,
    ) -> Callable[[F], F]:
        """Decorator: register a completer for one argument of a prompt or a template variable.

        It needs to know what it completes, so it is always called:
        ``@server.complete(prompt="review", argument="language")``. A plain
        function runs in a worker thread unless ``inline=True``.

        >>> server = wiremcp.Server("demo")
        >>> @server.complete(prompt="review", argument="language")
        ... def languages(value: str) -> list[str]:
        ...     return [x for x in ("python", "rust") if x.startswith(value)]
        """
        if fn is not None or argument is None:
            raise TypeError(
                "@server.complete needs to know what it completes: "
                "@server.complete(prompt=..., argument=...) or @server.complete(template=..., argument=...)"
            )
        what = argument

        def register(fn: F) -> F:
            check_decorated("completer", fn)
            self.add_completer(fn, argument=what, prompt=prompt, template=template, inline=inline)
            return fn

        return register

    def add_completer(
        self,
        fn: Callable[..., Any],
        *,
        argument: str,
        prompt: str | None = None,
        template: str | None = None,
        inline: bool = False,
    ) -> Completer:
        """Register ``fn`` to complete ``argument`` of ``prompt`` or ``template``; ValueError if one does."""
        from ._completion import Completer

        completer = Completer(fn, argument=argument, prompt=prompt, template=template, inline=inline)
        self._completers.add(completer)
        if completer.sig.depends is not None:
            self._bind(completer.sig.depends)
        self._engine.offer()
        return completer

    def remove_completer(self, *, argument: str, prompt: str | None = None, template: str | None = None) -> None:
        """Unregister the completer of ``argument`` of ``prompt`` or ``template``; KeyError if there is none."""
        ref = "ref/prompt" if prompt is not None else "ref/resource"
        self._completers.remove((ref, prompt if prompt is not None else template, argument))
        self._engine.offer()


def check_name(kind: str, name: Any) -> None:
    """A decorator's first argument, when not the function: a name (str) or nothing."""
    if name is not None and type(name) is not str:
        raise TypeError(f"@server.{kind}(...) takes the {kind}'s name as a string first, not {name!r}")


def check_decorated(kind: str, fn: Any) -> None:
    if not callable(fn):
        raise TypeError(f"@server.{kind} decorates a function (plain or async), not {fn!r}")
