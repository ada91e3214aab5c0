"""Completion: suggestions for prompt arguments and template variables (server/utilities/completion.mdx).

A completer is a plain or async function registered for one argument of a
prompt (``prompt="greet", argument="name"``) or one variable of a resource
template (``template="file:///logs/{name}", argument="name"``). It is called
with keyword arguments:

* its first parameter (other than a `Context`) gets the value typed so far;
  a value its type hint cannot read gets no suggestions;
* a parameter named after another argument gets that argument's value from
  ``context.arguments`` (converted by its hint) or keeps its default; one
  without a default that the client did not send is -32602 (completion.mdx,
  "Missing required arguments");
* ``**kwargs`` gets the context arguments no parameter names.

A plain completer runs in a worker thread unless registered ``inline=True``;
an exception becomes -32603 with a message masked as `_failures` says.

It returns an iterable of strings, ranked (at most `MAX_VALUES` are sent,
with ``total`` and ``hasMore`` saying there are more), or a `Completion`
that sets ``total`` and ``hasMore`` itself.

``completion/complete`` is -32602 unless: ``ref`` is ``ref/prompt`` naming a
registered prompt or ``ref/resource`` whose ``uri`` is a registered
template's ``uriTemplate``; ``argument`` has string ``name`` and ``value``,
the name being one of the prompt's arguments or the template's variables;
``context.arguments``, when present, is an object of strings. A known
argument without a completer has no suggestions (an empty list).
"""

from __future__ import annotations

import itertools
from typing import Any, Awaitable, Callable, Iterable

from ..jsonrpc import InvalidParams
from ._context import Context
from ._failures import HandlerFailed, failure_message
from ._inject import Signature
from ._workers import Workers, run_handler
from ._prompts import Prompts
from ._resources import Resources

__all__ = ["Completion", "Completer", "Completers", "MAX_VALUES", "PROMPT_REF", "RESOURCE_REF"]

#: completion.mdx, "Completion Results": at most 100 values per response.
MAX_VALUES = 100
PROMPT_REF = "ref/prompt"
RESOURCE_REF = "ref/resource"


class Completion:
    """Suggestions with an explicit ``total`` and ``has_more`` (both optional on the wire)."""

    __slots__ = ("values", "total", "has_more")

    def __init__(self, values: Iterable[str], *, total: int | None = None, has_more: bool | None = None) -> None:
        self.values = list(values)
        self.total = total
        self.has_more = has_more

    def __repr__(self) -> str:
        return f"Completion({self.values!r}, total={self.total!r}, has_more={self.has_more!r})"


def to_completion(value: Any) -> dict[str, Any]:
    """The ``completion`` object for what a completer returned."""
    total: int | None = None
    has_more: bool | None = None
    if value is None:
        return {"values": []}
    if isinstance(value, Completion):
        values, total, has_more = value.values, value.total, value.has_more
    elif isinstance(value, (str, bytes, dict)):
        raise TypeError("a completer returns an iterable of strings (a list), not a single str or a dict")
    elif hasattr(value, "__len__"):
        values = list(value)
    else:  # a generator: take one more than fits to learn whether there are more
        values = list(itertools.islice(value, MAX_VALUES + 1))
        if len(values) > MAX_VALUES:
            has_more = True
    if len(values) > MAX_VALUES:
        if total is None and has_more is None:
            total = len(values)
        values = values[:MAX_VALUES]
        has_more = True
    for v in values:
        if type(v) is not str:
            raise TypeError(f"completion values must be strings, got {type(v).__name__}")
    out: dict[str, Any] = {"values": values}
    if total is not None:
        out["total"] = total
    if has_more is not None:
        out["hasMore"] = has_more
    return out


class Completer:
    """A registered completer for one argument of one prompt or template."""

    __slots__ = ("ref", "target", "argument", "sig", "threaded")

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        argument: str,
        prompt: str | None = None,
        template: str | None = None,
        inline: bool = False,
    ) -> None:
        if (prompt is None) == (template is None):
            raise ValueError("a completer is for a prompt (prompt=...) or a resource template (template=...), one of them")
        if type(argument) is not str or not argument:
            raise ValueError("a completer needs the name of the argument it completes")
        if template is not None:
            from ._uri_template import UriTemplate  # on first use: a server without templates never loads it

            variables = UriTemplate(template).variables
            if argument not in variables:
                raise ValueError(f"the template {template!r} has no variable {argument!r}")
            self.ref, self.target = RESOURCE_REF, template
            what = f"completer for {argument!r} of template {template!r}"
        else:
            assert prompt is not None  # exactly one of the two, checked above
            self.ref, self.target = PROMPT_REF, prompt
            what = f"completer for {argument!r} of prompt {prompt!r}"
        self.argument = argument
        self.sig = Signature(fn, what)
        #: A plain function not registered ``inline=True``: it runs in a worker thread.
        self.threaded = not self.sig.is_async and not inline
        if not self.sig.params:
            raise TypeError(f"{what}: the function needs a parameter for the value being completed")

    @property
    def key(self) -> tuple[str, str, str]:
        """``(ref type, prompt name or URI template, argument)``: what the completer is registered under."""
        return (self.ref, self.target, self.argument)

    def complete(
        self,
        value: str,
        context_arguments: dict[str, str],
        ctx: Context | None,
        workers: Workers | None = None,
        mask: bool = True,
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """The ``completion`` object now, or an awaitable of it (async or threaded)."""
        sig = self.sig
        first = sig.params[0]
        try:
            kwargs: dict[str, Any] = {first.name: first.convert(value)}
        except ValueError:
            return {"values": []}
        by_name = sig.by_name
        for name, raw in context_arguments.items():
            if name == first.name:
                continue
            param = by_name.get(name)
            if param is None:
                if sig.var_keyword:
                    kwargs[name] = raw
                continue
            try:
                kwargs[name] = param.convert(raw)
            except ValueError as exc:
                raise InvalidParams(
                    f"Invalid params: context argument {name!r}: {exc}", {"argument": name}
                ) from None
        missing = [p.name for p in sig.params[1:] if p.required and p.name not in kwargs]
        if missing:
            raise InvalidParams(
                f"Invalid params: completing {self.argument!r} needs context.arguments "
                + ", ".join(repr(m) for m in missing),
                {"missing": missing},
            )
        if sig.context is not None:
            kwargs[sig.context] = ctx
        name = f"{self.argument} of {self.target}"

        def fail(exc: Exception) -> dict[str, Any]:
            raise HandlerFailed(failure_message("completer", name, exc, mask)) from exc

        if sig.depends is not None:  # `Depends` parameters (`_depends`): filled first
            from ._depends import run_injected

            return run_injected(
                sig.depends, sig.fn, kwargs, ctx,
                is_async=sig.is_async, threaded=self.threaded, workers=workers, done=to_completion, fail=fail,
            )
        return run_handler(
            sig.fn, kwargs, ctx, is_async=sig.is_async, threaded=self.threaded, workers=workers, done=to_completion, fail=fail
        )


def _string(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if type(value) is not str:
        raise InvalidParams(f"Invalid params: completion/complete needs '{where}.{key}' as a string")
    return value


class Completers:
    """The registered completers, keyed by (ref type, prompt name or template, argument)."""

    __slots__ = ("by_key",)

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, str, str], Completer] = {}

    def __bool__(self) -> bool:
        return bool(self.by_key)

    def add(self, completer: Completer) -> None:
        if completer.key in self.by_key:
            raise ValueError(f"a completer for {completer.argument!r} of {completer.target!r} is already registered")
        self.by_key[completer.key] = completer

    def remove(self, key: tuple[str, str | None, str]) -> Completer:
        """Unregister the completer for ``(ref type, prompt or template, argument)``; KeyError if none."""
        ref, target, argument = key
        if target is None:  # neither a prompt nor a template named
            raise KeyError(key)
        return self.by_key.pop((ref, target, argument))

    def resolve(
        self, params: dict[str, Any], prompts: Prompts, resources: Resources
    ) -> tuple[Completer | None, str, dict[str, str]]:
        """Check a ``completion/complete`` request: ``(completer or None, value, context arguments)``."""
        ref = params.get("ref")
        if type(ref) is not dict:
            raise InvalidParams("Invalid params: completion/complete needs 'ref', a prompt or resource reference")
        argument = params.get("argument")
        if type(argument) is not dict:
            raise InvalidParams("Invalid params: completion/complete needs 'argument' with 'name' and 'value'")
        name = _string(argument, "name", "argument")
        value = _string(argument, "value", "argument")
        context = params.get("context")
        arguments: Any = None
        if context is not None:
            if type(context) is not dict:
                raise InvalidParams("Invalid params: completion/complete 'context' must be an object")
            arguments = context.get("arguments")
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict or any(type(v) is not str for v in arguments.values()):
            raise InvalidParams("Invalid params: 'context.arguments' must be an object of strings")

        kind = ref.get("type")
        if kind == PROMPT_REF:
            target = _string(ref, "name", "ref")
            prompt = prompts.by_name.get(target)
            if prompt is None:
                raise InvalidParams(f"Invalid params: unknown prompt {target!r}", {"name": target})
            completer = self.by_key.get((PROMPT_REF, target, name))
            if name not in prompt.sig.by_name and not (completer is not None and prompt.sig.var_keyword):
                raise InvalidParams(
                    f"Invalid params: prompt {target!r} has no argument {name!r}", {"name": target, "argument": name}
                )
            return completer, value, arguments
        if kind == RESOURCE_REF:
            target = _string(ref, "uri", "ref")
            resource = resources.templates.get(target)
            if resource is None:
                why = "a resource has no arguments" if target in resources.static else "unknown resource template"
                raise InvalidParams(f"Invalid params: {why}: {target!r}", {"uri": target})
            assert resource.template is not None
            if name not in resource.template.variables:
                raise InvalidParams(
                    f"Invalid params: the template {target!r} has no variable {name!r}", {"uri": target, "argument": name}
                )
            return self.by_key.get((RESOURCE_REF, target, name)), value, arguments
        raise InvalidParams(
            f"Invalid params: 'ref.type' must be {PROMPT_REF!r} or {RESOURCE_REF!r}", {"type": kind}
        )
