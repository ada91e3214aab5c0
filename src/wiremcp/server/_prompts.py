"""Prompts: registration from Python functions, ``prompts/list`` and ``prompts/get`` (server/prompts.mdx).

A prompt is a plain or async function whose parameters are the prompt's
arguments: a parameter without a default is ``required``, its description
comes from ``Annotated[str, "..."]``, its value is converted from the wire
string by its type hint (`_inject`). A `Context` parameter, and an
``Annotated[T, Depends(f)]`` one (`_depends`), are injected and are not arguments; ``**kwargs`` accepts arguments the signature does not name.

``prompts/get`` checks, in order (each failure is -32602, prompts.mdx "Error
Handling"): the prompt exists; ``arguments`` is an object of strings; it
names no unknown argument; every required argument is present; each value
converts. Then the function runs and what it returns becomes ``messages``:

* a ``str``: one user text message;
* a message dict (``{"role", "content"}``, see `user` / `assistant`);
* a content block dict (``{"type": "image", ...}``): one user message with it;
* a list of those (strings and content blocks become user messages);
* a dict with ``messages`` (and optionally ``description``): the result body.

The result's ``description`` is the prompt's, unless the function gave one.
A plain function runs in a worker thread unless registered ``inline=True``;
an exception (a bad return value included) is -32603 with a message masked
as `_failures` says, a `JSONRPCError` keeps its code.
"""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable, Mapping

from ..jsonrpc import InvalidParams
from ._content import CONTENT_TYPES
from ._context import Context, scope_tuple
from ._failures import HandlerFailed, failure_message
from ._inject import Signature
from ._options import PromptOptions, tag_set, with_tags
from ._workers import Workers, run_handler

__all__ = ["Prompt", "Prompts", "to_messages", "message", "user", "assistant", "ROLES"]

#: Who speaks a prompt message (schema.json, Role).
ROLES = frozenset({"user", "assistant"})


def _block(content: str | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(content, str):
        return {"type": "text", "text": content}
    if isinstance(content, dict) and content.get("type") in CONTENT_TYPES:
        return content
    raise TypeError(f"a message's content is a str (text) or one content block dict, not {content!r:.80}")


def message(role: str, content: str | Mapping[str, Any]) -> dict[str, Any]:
    """A PromptMessage: ``role`` is "user" or "assistant"; a str content is a text block."""
    if role not in ROLES:
        raise ValueError(f"a message's role is 'user' or 'assistant', not {role!r}")
    return {"role": role, "content": _block(content)}


def user(content: str | Mapping[str, Any]) -> dict[str, Any]:
    """A message from the user: text (a str) or one content block (`image`, `embedded_resource`...)."""
    return {"role": "user", "content": _block(content)}


def assistant(content: str | Mapping[str, Any]) -> dict[str, Any]:
    """A message from the assistant: text (a str) or one content block."""
    return {"role": "assistant", "content": _block(content)}


class Prompt:
    """A registered prompt: its wire definition and how to get it."""

    __slots__ = ("name", "sig", "definition", "description", "scopes", "threaded", "tags")

    def __init__(self, fn: Callable[..., Any], options: PromptOptions | None = None, /, **keywords: Any) -> None:
        """A prompt of ``fn`` with ``options``, or the same options as keywords (those of ``Server.prompt``)."""
        if options is None:
            options = PromptOptions(**keywords)
        elif keywords:
            raise TypeError("Prompt(fn, options) takes its options once: a PromptOptions or keywords, not both")
        if not callable(fn):
            raise TypeError(f"a prompt is a function (plain or async), not {fn!r}")
        #: OAuth scopes a request needs to get it (enforced where requests are authenticated).
        self.scopes = scope_tuple(options.scopes)
        prompt_name = options.name or getattr(fn, "__name__", "")
        if type(prompt_name) is not str or not prompt_name:
            raise ValueError("a prompt needs a name (a non-empty string)")
        self.name = prompt_name
        #: Its tags (`Server` serves a subset by them; published in ``_meta``, `_options.TAGS_META`).
        self.tags = tag_set(options.tags, f"prompt {prompt_name!r}")
        self.sig = Signature(fn, f"prompt {self.name!r}")
        #: A plain function not registered ``inline=True``: it runs in a worker thread.
        self.threaded = not self.sig.is_async and not options.inline
        definition: dict[str, Any] = {"name": self.name}
        if options.title:
            definition["title"] = options.title
        doc = options.description if options.description is not None else inspect.getdoc(fn)
        self.description = doc or None
        if doc:
            definition["description"] = doc
        arguments: list[dict[str, Any]] = []
        for param in self.sig.params:
            argument: dict[str, Any] = {"name": param.name}
            if param.title:
                argument["title"] = param.title
            if param.description:
                argument["description"] = param.description
            argument["required"] = param.required
            arguments.append(argument)
        if arguments:
            definition["arguments"] = arguments
        if options.icons:
            definition["icons"] = options.icons
        meta = with_tags(options.meta, self.tags, f"prompt {prompt_name!r}")
        if meta:
            definition["_meta"] = meta
        self.definition = definition

    @property
    def argument_names(self) -> list[str]:
        """The names of the prompt's arguments, in order."""
        return [p.name for p in self.sig.params]

    def arguments(self, raw: Any) -> dict[str, Any]:
        """The function's keyword arguments for the wire ``arguments``, or -32602."""
        name = self.name
        if raw is None:
            raw = {}
        elif type(raw) is not dict:
            raise InvalidParams("Invalid params: prompts/get 'arguments' must be an object of strings")
        by_name = self.sig.by_name
        out: dict[str, Any] = {}
        for key, value in raw.items():
            if type(value) is not str:
                raise InvalidParams(
                    f"Invalid params: argument {key!r} of prompt {name!r} must be a string",
                    {"name": name, "argument": key},
                )
            param = by_name.get(key)
            if param is None:
                if not self.sig.var_keyword:
                    raise InvalidParams(
                        f"Invalid params: prompt {name!r} has no argument {key!r}; "
                        f"its arguments are: {', '.join(by_name) or '(none)'}",
                        {"name": name, "argument": key},
                    )
                out[key] = value
                continue
            try:
                out[key] = param.convert(value)
            except ValueError as exc:
                raise InvalidParams(
                    f"Invalid params: argument {key!r} of prompt {name!r}: {exc}", {"name": name, "argument": key}
                ) from None
        missing = [p.name for p in self.sig.params if p.required and p.name not in out]
        if missing:
            raise InvalidParams(
                f"Invalid params: prompt {name!r} needs the argument{'s' if len(missing) > 1 else ''} "
                + ", ".join(repr(m) for m in missing),
                {"name": name, "missing": missing},
            )
        return out

    def get(
        self, arguments: dict[str, Any], ctx: Context | None, workers: Workers | None = None, mask: bool = True
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """Run the prompt: the result now, or an awaitable of it (async or threaded)."""
        if self.sig.context is not None:
            arguments = {**arguments, self.sig.context: ctx}

        def fail(exc: Exception) -> dict[str, Any]:
            raise HandlerFailed(failure_message("prompt", self.name, exc, mask)) from exc

        if self.sig.depends is not None:  # `Depends` parameters (`_depends`): filled first
            from ._depends import run_injected

            return run_injected(
                self.sig.depends, self.sig.fn, arguments, ctx,
                is_async=self.sig.is_async, threaded=self.threaded, workers=workers, done=self._result, fail=fail,
            )
        return run_handler(
            self.sig.fn,
            arguments,
            ctx,
            is_async=self.sig.is_async,
            threaded=self.threaded,
            workers=workers,
            done=self._result,
            fail=fail,
        )

    def _result(self, value: Any) -> dict[str, Any]:
        result: dict[str, Any] = {"resultType": "complete"}
        description = self.description
        if type(value) is dict and "messages" in value:
            description = value.get("description", description)
            value = value["messages"]
        if description:
            result["description"] = description
        result["messages"] = to_messages(value, self.name)
        return result


def to_messages(value: Any, name: str = "?") -> list[dict[str, Any]]:
    """The ``messages`` of a ``prompts/get`` result for what a prompt function returned."""
    if type(value) is list or type(value) is tuple:
        return [_message(v, name) for v in value]
    return [_message(value, name)]


def _message(value: Any, name: str) -> dict[str, Any]:
    if isinstance(value, str):
        return {"role": "user", "content": {"type": "text", "text": value}}
    if type(value) is dict:
        if "role" in value:
            content = value.get("content")
            if value["role"] not in ROLES:
                raise TypeError(f"prompt {name!r}: a message's role is 'user' or 'assistant', not {value['role']!r}")
            if type(content) is not dict or content.get("type") not in CONTENT_TYPES:
                raise TypeError(f"prompt {name!r}: a message's content must be one content block dict")
            return value
        if value.get("type") in CONTENT_TYPES:
            return {"role": "user", "content": value}
    raise TypeError(
        f"prompt {name!r} returned {type(value).__name__}; return a str, a message (wiremcp.user/assistant), "
        "a content block, or a list of those"
    )


class Prompts:
    """The registered prompts by name, with their list entries cached."""

    __slots__ = ("by_name", "_defs")

    def __init__(self) -> None:
        self.by_name: dict[str, Prompt] = {}
        self._defs: list[dict[str, Any]] | None = None

    def __bool__(self) -> bool:
        return bool(self.by_name)

    def add(self, prompt: Prompt) -> None:
        if prompt.name in self.by_name:
            raise ValueError(f"a prompt named {prompt.name!r} is already registered")
        self.by_name[prompt.name] = prompt
        self._defs = None

    def remove(self, name: str) -> Prompt:
        prompt = self.by_name.pop(name)
        self._defs = None
        return prompt

    def find(self, name: Any) -> Prompt:
        """The prompt named ``name``, or -32602."""
        if type(name) is not str:
            raise InvalidParams("Invalid params: prompts/get needs 'name', the prompt's name as a string")
        prompt = self.by_name.get(name)
        if prompt is None:
            raise InvalidParams(f"Invalid params: unknown prompt {name!r}", {"name": name})
        return prompt

    def definitions(self) -> list[dict[str, Any]]:
        defs = self._defs
        if defs is None:
            defs = self._defs = [p.definition for p in self.by_name.values()]
        return defs
