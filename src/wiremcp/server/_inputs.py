"""Declared inputs: what a tool needs from the user, the client's model or the client, gathered first.

A tool parameter annotated with an input marker is not a tool argument (it is
left out of the ``inputSchema``); the framework fills it before the body runs:

* ``Annotated[T, Elicit("What is your name?")]``: a form-mode elicitation
  whose form is derived from ``T`` (`_elicit`: a dataclass, TypedDict,
  pydantic model or a primitive, which becomes a one-field form);
* ``Annotated[str, Sample("Summarise ...", max_tokens=200)]``: a sampling
  request; a ``str`` parameter gets the reply's text, any other the whole
  CreateMessageResult;
* ``Annotated[list[str], Roots()]``: the client's roots (a ``list[str]``
  parameter gets their URIs, any other the Root objects);
* ``Annotated[T, Resolve(fn)]``: ``fn(ctx)`` (plain or async) computes the
  value and may itself ask (``await ctx.elicit(...)``), for an input that
  depends on an earlier answer.

Rules:

* every `Elicit`, `Sample` and `Roots` input is asked in one round (their
  keys are the parameter names); `Resolve` functions then run in parameter
  order, each round re-running them from the first (they must be free of
  side effects: they ask, they do not act);
* under 2026-07-28 each missing answer ends the request with
  ``input_required`` (basic/patterns/mrtr.mdx) and the answers gathered so
  far travel in the sealed ``requestState``; in a 2025-11-25 session the
  same questions are real requests to the client, awaited. Either way the
  tool's body runs exactly once, after the last answer;
* a declined or cancelled elicitation gives the parameter its default when it
  has one; otherwise the tool does not run and the model gets a tool
  execution error saying the user declined (`Declined`). A parameter typed
  ``Elicited[T]`` instead gets the whole outcome (``.action``, ``.value``),
  so the body decides what a decline means.

The markers are checked at registration: a form type elicitation cannot ask
for is a `SchemaError` then, not at the first call.
"""

from __future__ import annotations

import inspect
import typing
from typing import TYPE_CHECKING, Any, Callable

from ._elicit import ElicitForm, Elicited, form_for
from ._mrtr import ELICIT, ROOTS, SAMPLE
from ._schema import MISSING, SchemaError

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["Input", "Elicit", "Sample", "Roots", "Resolve", "BoundInput", "Declined", "find_inputs", "gather"]


class Input:
    """Base of the input markers."""

    __slots__ = ()


class Elicit(Input):
    """Ask the user to fill a form derived from the parameter's type (client/elicitation.mdx)."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        if type(message) is not str or not message:
            raise ValueError("Elicit needs the message shown to the user")
        self.message = message

    def __repr__(self) -> str:
        return f"Elicit({self.message!r})"


class Sample(Input):
    """Ask the client's model (client/sampling.mdx); other CreateMessageRequest fields by wire name."""

    __slots__ = ("messages", "max_tokens", "system_prompt", "options")

    def __init__(
        self, messages: str | list[dict[str, Any]], *, max_tokens: int, system_prompt: str | None = None, **options: Any
    ) -> None:
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        self.messages = messages
        self.max_tokens = max_tokens
        self.system_prompt = system_prompt
        self.options = options

    def params(self) -> dict[str, Any]:
        """The ``sampling/createMessage`` params (``messages``, ``maxTokens``, ``systemPrompt``, options)."""
        params: dict[str, Any] = {"messages": self.messages, "maxTokens": self.max_tokens, **self.options}
        if self.system_prompt is not None:
            params["systemPrompt"] = self.system_prompt
        return params


class Roots(Input):
    """The client's roots (client/roots.mdx)."""

    __slots__ = ()


class Resolve(Input):
    """Compute the value with ``fn(ctx)`` (plain or async), which may ask the client itself."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Context], Any]) -> None:
        if not callable(fn):
            raise TypeError(f"Resolve needs a function of the Context, not {fn!r}")
        self.fn = fn


class Declined(Exception):
    """The user declined or cancelled an elicitation a required input needed."""

    def __init__(self, name: str, action: str) -> None:
        super().__init__(
            f"The user chose to {action} the question for {name!r}, which the tool needs; the tool did not run."
        )
        self.name = name
        self.action = action


class BoundInput:
    """One declared input of one tool: the parameter, its marker, its type and its default."""

    __slots__ = ("name", "marker", "hint", "default", "form", "whole")

    def __init__(self, name: str, marker: Input, hint: Any, default: Any, where: str) -> None:
        self.name = name
        self.marker = marker
        self.hint = hint
        self.default = default
        self.form: ElicitForm[Any] | None = None
        #: ``Elicited[T]``: the parameter gets the whole outcome, decline and cancel included.
        self.whole = typing.get_origin(hint) is Elicited
        if isinstance(marker, Elicit):
            try:
                self.form = form_for(typing.get_args(hint)[0] if self.whole else hint)
            except SchemaError as exc:
                raise SchemaError(f"{where}, parameter {name!r}: {exc}") from None

    @property
    def asked_at_once(self) -> bool:
        return not isinstance(self.marker, Resolve)

    def request(self) -> dict[str, Any]:
        marker = self.marker
        if isinstance(marker, Elicit):
            assert self.form is not None
            return {"method": ELICIT, "params": {"mode": "form", "message": marker.message, "requestedSchema": self.form.schema}}
        if isinstance(marker, Sample):
            return {"method": SAMPLE, "params": marker.params()}
        return {"method": ROOTS, "params": {}}

    def value(self, answer: dict[str, Any]) -> Any:
        marker = self.marker
        if isinstance(marker, Elicit):
            assert self.form is not None
            result = self.form.result(answer)
            if self.whole:
                return result
            if result.action != "accept":
                if self.default is not MISSING:
                    return self.default
                raise Declined(self.name, result.action)
            return result.value
        if isinstance(marker, Sample):
            if self.hint is str:
                content = answer.get("content")
                blocks = content if type(content) is list else [content]
                return "".join(b.get("text", "") for b in blocks if type(b) is dict and b.get("type") == "text")
            return answer
        roots = answer["roots"]
        if self.hint == list[str]:
            return [r.get("uri") for r in roots if type(r) is dict]
        return roots


def find_inputs(fn: Callable[..., Any], where: str) -> list[BoundInput]:
    """The parameters of ``fn`` annotated with an input marker, in order."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolved hints: the schema layer reports them
        return []
    found: list[BoundInput] = []
    for p in inspect.signature(fn).parameters.values():
        hint = hints.get(p.name)
        marker = None
        while typing.get_origin(hint) is typing.Annotated:
            args = typing.get_args(hint)
            marker = next((a for a in args[1:] if isinstance(a, Input)), marker)
            hint = args[0]
        if marker is not None:
            default = MISSING if p.default is p.empty else p.default
            found.append(BoundInput(p.name, marker, hint, default, where))
    return found


async def gather(inputs: list[BoundInput], ctx: Context) -> dict[str, Any]:
    """The values of every declared input; raises `InputRequired` (modern) until all are answered."""
    at_once = {b.name: b.request() for b in inputs if b.asked_at_once}
    answers = await ctx.ask(at_once) if at_once else {}
    values: dict[str, Any] = {}
    for b in inputs:
        if b.asked_at_once:
            values[b.name] = b.value(answers[b.name])
        else:
            assert isinstance(b.marker, Resolve)
            out = b.marker.fn(ctx)
            if inspect.isawaitable(out):
                out = await out
            values[b.name] = out
    return values
