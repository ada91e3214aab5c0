"""Composition: one server's tools, resources and prompts served by another under a namespace.

``parent.mount(child, namespace="weather")``. Rules:

* a tool ``forecast`` of the child is the parent's ``weather_forecast``, a
  prompt likewise. The separator is ``_``: the spec's tool-name rule
  (server/tools.mdx, "Tool Names") allows only ASCII letters, digits, ``_``,
  ``-`` and ``.``, and many model APIs refuse ``.`` in function names, so
  ``/`` is out and ``_`` is what works everywhere. The namespace must be
  letters, digits, ``_`` or ``-``;
* resource and template URIs are kept as they are: a URI names the resource
  itself, and clients (and ``resources/subscribe`` and
  ``notifications/resources/updated``) match on it. A URI both servers
  register is a `ValueError` at mount time, as a duplicate registration is;
* the parent serves the child's entries itself (same handlers, no extra
  hop): each is a shallow copy under its new name, kept in step with the
  child. When the child's lists change (a tool added or removed at run
  time), the parent's copies follow and the parent's
  ``subscriptions/listen`` streams get the list-changed notification; a
  child's ``notifications/resources/updated`` is forwarded as is;
* completers follow their prompt (renamed with it) or template (URI kept);
* a handler of a mounted server gets a `Context` of the request it serves:
  ``ctx.server`` is the parent, ``ctx.lifespan`` the parent's value; the
  child's own lifespan is entered inside the parent's (``child.lifespan.value``);
* the child's middleware does not run for mounted entries (the parent's does);
* a child's tool registered with ``task=`` (docs/tasks.md) keeps its mode in
  the parent: mounting it turns the parent's tasks on
  (``parent.enable_tasks()``), so the call becomes a task of the parent,
  kept in the parent's task store and answered by the parent's ``tasks/*``
  (the client talks to the parent only).
"""

from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING, Any, Callable

from ._completion import PROMPT_REF
from ._subscriptions import Event

if TYPE_CHECKING:
    from ._server import Server
    from ._visibility import VisibilityRules

__all__ = ["Mount", "SEPARATOR"]

SEPARATOR = "_"
_NAMESPACE = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")


class Mount:
    """A server mounted into another under ``namespace`` (see the module docs)."""

    __slots__ = ("parent", "server", "namespace", "tools", "prompts", "resources", "completers", "_unsubscribe")

    def __init__(self, parent: Server, server: Server, namespace: str) -> None:
        if type(namespace) is not str or not _NAMESPACE.match(namespace):
            raise ValueError(
                f"namespace {namespace!r}: use 1 to 64 ASCII letters, digits, '_' or '-' "
                "(tool names allow no other characters; server/tools.mdx)"
            )
        if server is parent:
            raise ValueError("a server cannot be mounted into itself")
        self.parent = parent
        self.server = server
        self.namespace = namespace
        self.tools: list[str] = []  # the parent's names of the child's tools
        self.prompts: list[str] = []
        self.resources: list[str] = []  # URIs (and URI templates)
        self.completers: list[tuple[str, str, str]] = []  # the parent's keys of the child's completers
        self._unsubscribe: Callable[[], None] | None = None

    def name(self, name: str) -> str:
        """``name`` of the child as the parent shows it: ``NAMESPACE_NAME``."""
        return f"{self.namespace}{SEPARATOR}{name}"

    def attach(self) -> None:
        """Copy the child's entries into the parent and follow its changes."""
        self.sync(tools=True, prompts=True, resources=True)
        self._unsubscribe = self.server.bus.subscribe(self._changed)

    def detach(self) -> None:
        """Stop following the child and remove its entries from the parent."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._drop(tools=True, prompts=True, resources=True)

    def _changed(self, event: Event) -> None:
        if event is None:
            return  # the child closing its own streams says nothing about the parent's
        kind, uri = event
        if kind == "updated":
            if uri is not None:
                self.parent.notify_resource_updated(uri)
            return
        self.sync(tools=kind == "tools", prompts=kind == "prompts", resources=kind == "resources")

    def _drop(self, *, tools: bool, prompts: bool, resources: bool) -> None:
        parent = self.parent
        visibility: VisibilityRules | None = parent.__dict__.get("_visibility")  # the parent's rules: its registered tables too
        if tools:
            for name in self.tools:
                parent._tools.pop(name, None)
                if visibility is not None:
                    visibility.tools.pop(name, None)
            self.tools = []
            parent._engine.tools.forget()
        if prompts:
            for name in self.prompts:
                parent._prompts.by_name.pop(name, None)
                if visibility is not None:
                    visibility.prompts.pop(name, None)
            self.prompts = []
            parent._prompts._defs = None
        if resources:
            for uri in self.resources:
                parent._resources.static.pop(uri, None)
                parent._resources.templates.pop(uri, None)
                if visibility is not None:
                    visibility.static.pop(uri, None)
                    visibility.templates.pop(uri, None)
            self.resources = []
            parent._resources._defs = parent._resources._template_defs = None
        if prompts or resources:
            for key in self.completers:
                parent._completers.by_key.pop(key, None)
            self.completers = []

    def sync(self, *, tools: bool, prompts: bool, resources: bool) -> None:
        """Replace the parent's copies of the child's entries of the given kinds, then announce it."""
        parent, child = self.parent, self.server
        self._drop(tools=tools, prompts=prompts, resources=resources)
        # With visibility rules the parent registers the entries and serves those its rules let through (_visibility).
        visibility: VisibilityRules | None = parent.__dict__.get("_visibility")
        if tools:
            registered = parent._tools if visibility is None else visibility.tools
            for tool in child._tools.values():
                name = self.name(tool.name)
                if name in registered:
                    raise ValueError(f"mount {self.namespace!r}: the parent already has a tool named {name!r}")
                entry = copy.copy(tool)
                entry.name = name
                entry.definition = {**tool.definition, "name": name}
                registered[name] = entry
                self.tools.append(name)
                if tool.task is not None:
                    parent.enable_tasks()  # the parent runs it as a task: its store, its tasks/* (see the docs above)
            if visibility is not None:
                visibility.refresh("tool")
            parent._engine.tools.forget()
            parent.notify_tools_changed()
        if prompts:
            for prompt in child._prompts.by_name.values():
                name = self.name(prompt.name)
                entry_p = copy.copy(prompt)
                entry_p.name = name
                entry_p.definition = {**prompt.definition, "name": name}
                if visibility is None:
                    parent._prompts.add(entry_p)
                elif name in visibility.prompts:
                    raise ValueError(f"a prompt named {name!r} is already registered")
                else:
                    visibility.prompts[name] = entry_p
                self.prompts.append(name)
            if visibility is not None:
                visibility.refresh("prompt")
            parent.notify_prompts_changed()
        if resources:
            for resource in (*child._resources.static.values(), *child._resources.templates.values()):
                if visibility is None:
                    parent._resources.add(resource)
                else:
                    table = visibility.table("resource", resource)
                    if resource.uri in table:
                        raise ValueError(f"a resource {resource.uri!r} is already registered")
                    table[resource.uri] = resource
                self.resources.append(resource.uri)
            if visibility is not None:
                visibility.refresh("resource")
            parent.notify_resources_changed()
        if prompts or resources:
            for completer in child._completers.by_key.values():
                entry_c = copy.copy(completer)
                if completer.ref == PROMPT_REF:
                    entry_c.target = self.name(completer.target)
                parent._completers.add(entry_c)
                self.completers.append(entry_c.key)
        parent._engine.offer()


def check_mountable(parent: Server, child: Any) -> None:
    from ._server import Server

    if not isinstance(child, Server):
        raise TypeError(f"server.mount takes a wiremcp Server, not {child!r} (to serve another process, use wiremcp.proxy)")
    for mount in parent.mounts:
        if mount.server is child:
            raise ValueError(f"server {child.name!r} is already mounted (as {mount.namespace!r})")
