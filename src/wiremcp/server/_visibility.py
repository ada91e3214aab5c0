"""VisibilityRules: which of a server's registered components it serves now, by tag and by name (docs/tags.md).

A server serves what is in its served tables, the ones the engine reads:
``Server._tools``, ``Server._prompts.by_name``, ``Server._resources.static``
and ``.templates``. Without visibility rules those tables are all there is.
The first rule (``Server(include_tags=..., exclude_tags=...)``, or a first
``server.enable`` / ``server.disable``) makes a `VisibilityRules`, which from then
on holds every registered component (in registration order) and keeps the
served tables equal to the registered components it lets through. Rules kept:

* **zero cost when unused.** A server with no rule never imports this module;
  with rules, a request reads the same tables with the same code as without:
  a hidden component is simply not in them, so a call of it gets exactly the
  error of an unknown one (``Unknown tool``, ``unknown prompt``, the
  resource's -32002), it is in no list, and no check anywhere is aware of it
  (authorization, completion, subscriptions, the fused ``tools/call`` stage);
* **the subset.** ``include_tags``: only components carrying at least one of
  them are served; ``exclude_tags``: none carrying any of them is (it wins
  over ``include_tags``). Fixed when the server is made: enabling a component
  outside the subset is a ValueError;
* **enable and disable.** ``disable(name)`` / ``enable(name)`` switch one
  component (a tool's or prompt's name, a resource's URI or template);
  ``disable(tags={...})`` / ``enable(tags={...})`` switch every component
  carrying one of the tags, now and registered later. The latest switch
  naming a component (by name, or by one of its tags) decides; without one
  it is served. Removing a component forgets the switches of its name;
* **announced.** A change of what a list holds is announced as a
  registration is (``notifications/tools/list_changed``...: on
  ``subscriptions/listen`` streams, and in every 2025-11-25 session), once per
  list, and only when the list did change;
* capabilities and the methods served follow what is *registered*, not what
  is served now (`Engine.offer`, `Engine.capabilities`): a client told of a
  list change can always ask for the list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Literal

from ._options import tag_set

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["VisibilityRules", "Kind", "KINDS"]

#: A component's kind as ``enable``/``disable`` name it (a template is a "resource": URIs are one namespace).
Kind = Literal["tool", "prompt", "resource"]
KINDS: tuple[Kind, ...] = ("tool", "prompt", "resource")


class VisibilityRules:
    """A server's visibility rules and every component it registered (see the module docs)."""

    __slots__ = ("server", "include", "exclude", "tools", "prompts", "static", "templates", "_names", "_tags", "_seq")

    def __init__(self, server: Server, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None) -> None:
        self.server = server
        #: Only components with one of these tags are served (None: no such rule).
        self.include = None if include is None else tag_set(include, "include_tags")
        #: No component with one of these tags is served.
        self.exclude = tag_set(exclude, "exclude_tags")
        # Every registered component, registration order: what the served tables held until now.
        made = server.__dict__  # a registry not made yet holds nothing: asking does not make it
        prompts, resources = made.get("_prompts"), made.get("_resources")
        self.tools: dict[str, Any] = dict(server._tools)
        self.prompts: dict[str, Any] = dict(prompts.by_name) if prompts is not None else {}
        self.static: dict[str, Any] = dict(resources.static) if resources is not None else {}
        self.templates: dict[str, Any] = dict(resources.templates) if resources is not None else {}
        # The switches: (kind, name) or tag -> (on, when); the latest naming a component decides.
        self._names: dict[tuple[str, str], tuple[bool, int]] = {}
        self._tags: dict[str, tuple[bool, int]] = {}
        self._seq = 0

    # -- what is served --------------------------------------------------------------

    def in_subset(self, tags: frozenset[str]) -> bool:
        """Whether a component with ``tags`` is in the subset the server serves at most."""
        if self.include is not None and self.include.isdisjoint(tags):
            return False
        return self.exclude.isdisjoint(tags)

    def served(self, kind: Kind, key: str, tags: frozenset[str]) -> bool:
        """Whether the component ``key`` of ``kind`` carrying ``tags`` is served now."""
        if not self.in_subset(tags):
            return False
        rule = self._names.get((kind, key))
        for tag in tags:
            by_tag = self._tags.get(tag)
            if by_tag is not None and (rule is None or by_tag[1] > rule[1]):
                rule = by_tag
        return rule is None or rule[0]

    def refresh(self, kind: Kind) -> bool:
        """Make the served tables of ``kind`` hold the registered components served now; whether they changed."""
        server = self.server
        if kind == "tool":
            if _refill(server._tools, self._filter("tool", self.tools)):
                server._engine.tools.forget()
                return True
            return False
        if kind == "prompt":
            if not self.prompts and "_prompts" not in server.__dict__:
                return False
            prompts = server._prompts
            if _refill(prompts.by_name, self._filter("prompt", self.prompts)):
                prompts._defs = None
                return True
            return False
        if not (self.static or self.templates) and "_resources" not in server.__dict__:
            return False
        resources = server._resources
        changed = _refill(resources.static, self._filter("resource", self.static))
        changed = _refill(resources.templates, self._filter("resource", self.templates)) or changed
        if changed:
            resources._defs = resources._template_defs = None
        return changed

    def _filter(self, kind: Kind, registered: dict[str, Any]) -> dict[str, Any]:
        return {key: c for key, c in registered.items() if self.served(kind, key, c.tags)}

    # -- registration ----------------------------------------------------------------

    def table(self, kind: Kind, component: Any) -> dict[str, Any]:
        """The registered table ``component`` of ``kind`` belongs in."""
        if kind == "tool":
            return self.tools
        if kind == "prompt":
            return self.prompts
        return self.static if component.template is None else self.templates

    def forget(self, kind: Kind, key: str) -> None:
        """``key`` was removed: its switches by name go with it."""
        self._names.pop((kind, key), None)

    # -- enable, disable ---------------------------------------------------------------

    def switch(self, on: bool, name: str | None, tags: Iterable[str] | None, kind: Kind | None) -> None:
        """``Server.enable`` (``on``) or ``Server.disable``: one component by name, or every one with a tag."""
        verb = "enable" if on else "disable"
        if (name is None) == (tags is None):
            raise TypeError(f"server.{verb} takes a component's name or tags=..., one of the two")
        if kind is not None and kind not in KINDS:
            raise ValueError(f"server.{verb}: kind is 'tool', 'prompt' or 'resource', not {kind!r}")
        self._seq += 1
        if name is not None:
            found, component = self.find(name, kind, verb)
            if on and not self.in_subset(component.tags):
                raise ValueError(
                    f"server.enable({name!r}): its tags {sorted(component.tags)} are outside the subset this server "
                    f"serves (include_tags={sorted(self.include) if self.include is not None else None}, "
                    f"exclude_tags={sorted(self.exclude)})"
                )
            self._names[(found, name)] = (on, self._seq)
            kinds: tuple[Kind, ...] = (found,)
        else:
            for tag in tag_set(tags, f"server.{verb}"):
                self._tags[tag] = (on, self._seq)
            kinds = KINDS
        for each in kinds:
            if self.refresh(each):
                self.announce(each)

    def find(self, name: str, kind: Kind | None, verb: str) -> tuple[Kind, Any]:
        """The registered component ``name`` (of ``kind``, when given): KeyError if none, ValueError if several."""
        if type(name) is not str:
            raise TypeError(f"server.{verb} takes a component's name (a string), not {name!r}")
        found: list[tuple[Kind, Any]] = []
        for each, table in (("tool", self.tools), ("prompt", self.prompts), ("resource", self.static), ("resource", self.templates)):
            component = table.get(name)
            if component is not None and kind in (None, each):
                found.append((each, component))  # type: ignore[arg-type]  # the literal kinds above
        if not found:
            raise KeyError(f"server.{verb}({name!r}): no {kind or 'tool, prompt or resource'} of that name is registered")
        if len(found) > 1:
            raise ValueError(f"server.{verb}({name!r}): a tool and a prompt share that name; say which with kind=")
        return found[0]

    def announce(self, kind: Kind) -> None:
        """Tell listeners and sessions that the list of ``kind`` changed."""
        server = self.server
        if kind == "tool":
            server.notify_tools_changed()
        elif kind == "prompt":
            server.notify_prompts_changed()
        else:
            server.notify_resources_changed()


def _refill(table: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """Make ``table`` equal to ``wanted``, in place (the fused stage holds the tool table's ``get``); whether it changed."""
    if list(table) == list(wanted) and all(table[key] is component for key, component in wanted.items()):
        return False
    table.clear()
    table.update(wanted)
    return True
