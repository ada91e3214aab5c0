"""Answering a server's elicitation on the command line: ``--answer JSON``, or a form on the terminal.

client/elicitation.mdx: the server asks for input (an MRTR input request,
or ``elicitation/create`` in the legacy era) with a message and a
``requestedSchema`` of flat fields; the answer is ``accept`` with
``content``, ``decline`` or ``cancel``.

Rules:

* Each elicitation takes the next ``--answer``, in order (one per round):
  a JSON object accepts with that object as ``content``; ``decline`` or
  ``cancel`` (bare, or as a JSON string) answers so, and so does an object
  ``{"action": ..., "content": ...}`` of those two keys only; an empty
  answer declines.
* With no ``--answer`` left and stdin a terminal, a form on stderr: the
  server's message, then one prompt per field with its title, description,
  type or format, choices (``enum``, ``oneOf`` titles, multi-select
  ``items``) and default. Enter takes the default (an optional field
  without one is left out); Enter on a required field without a default
  declines; Ctrl-D (end of input) cancels. A value that does not fit its
  type is asked again, with the reason.
* With no ``--answer`` left and no terminal, the request is cancelled.
* Every decline and cancel is said on stderr, with why (a user must not
  wonder why a tool said "cancelled"). Only form mode is declared (the
  client capability ``elicitation.form``); a URL-mode request is shown and
  declined.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, TextIO

import orjson

from ._words import ArgumentError, convert

__all__ = ["AnswerError", "Answers", "parse_answer"]

_ACTIONS = ("accept", "decline", "cancel")
_PAST = {"decline": "declined", "cancel": "cancelled"}


class AnswerError(ValueError):
    """An ``--answer`` that is not an answer; the message is for the user."""


class _EndOfInput(Exception):
    """Ctrl-D at a prompt."""


def parse_answer(text: str) -> dict[str, Any]:
    """The elicitation result an ``--answer`` word stands for."""
    word = text.strip()
    if not word:
        return {"action": "decline"}
    if word in ("decline", "cancel"):
        return {"action": word}
    try:
        value = orjson.loads(word)
    except orjson.JSONDecodeError as exc:
        raise AnswerError(f"--answer wants a JSON object, decline or cancel, not {text!r} ({exc})") from None
    if value in ("decline", "cancel"):
        return {"action": value}
    if type(value) is not dict:
        raise AnswerError(f"--answer wants a JSON object, decline or cancel, not {text!r}")
    if value.get("action") in _ACTIONS and set(value) <= {"action", "content"}:
        if value["action"] == "accept" and type(value.get("content")) is not dict:
            raise AnswerError("--answer: an accept needs a content object")
        result: dict[str, Any] = value
        return result
    return {"action": "accept", "content": value}


class Answers:
    """The ``elicitation`` callback of the CLI's `Client` (see the module docs)."""

    def __init__(
        self,
        answers: list[str],
        command: str,
        *,
        stdin: TextIO | None = None,
        stderr: TextIO | None = None,
        dim: Callable[[str], str] = lambda text: text,
    ) -> None:
        self.pending = [parse_answer(a) for a in answers]  # checked before anything is started
        self.command = command
        self.stdin = stdin or sys.stdin
        self.stderr = stderr or sys.stderr
        self.dim = dim
        self.asked = 0

    def _say(self, text: str) -> None:
        print(f"wiremcp {self.command}: {text}", file=self.stderr, flush=True)

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked += 1
        message = str(params.get("message") or "")
        if params.get("mode") == "url":
            self._say(f"the server asks you to open {params.get('url')!r} ({message}); URL elicitation is not supported here: declined")
            return {"action": "decline"}
        if self.pending:
            answer = self.pending.pop(0)
            if answer["action"] != "accept":
                self._say(f"{_PAST[answer['action']]} the server's question {message!r} (--answer)")
            return answer
        if not self.stdin.isatty():
            self._say(
                f"the server asks: {message!r}; no --answer was left and stdin is not a terminal: cancelled "
                "(give --answer JSON, once per question)"
            )
            return {"action": "cancel"}
        try:
            return self._form(message, params.get("requestedSchema"))
        except _EndOfInput:
            print(file=self.stderr)
            self._say("cancelled (end of input)")
            return {"action": "cancel"}

    # -- the form on the terminal -------------------------------------------------

    def _read(self, prompt: str) -> str:
        self.stderr.write(prompt)
        self.stderr.flush()
        line = self.stdin.readline()
        if not line:
            raise _EndOfInput
        return line.rstrip("\r\n")

    def _form(self, message: str, schema: Any) -> dict[str, Any]:
        print(f"The server asks: {message}", file=self.stderr)
        print(self.dim("  (Enter takes the [default]; Enter on a required field declines; Ctrl-D cancels)"), file=self.stderr)
        properties = schema.get("properties") if type(schema) is dict else None
        required = set(schema.get("required") or ()) if type(schema) is dict else set()
        content: dict[str, Any] = {}
        for key, field in (properties or {}).items():
            field = field if type(field) is dict else {}
            self._show(key, field, key in required)
            while True:
                text = self._read("  > ")
                if not text.strip():
                    if "default" in field:
                        content[key] = field["default"]
                    elif key in required:
                        self._say(f"declined (no answer for the required field {key!r})")
                        return {"action": "decline"}
                    break
                try:
                    content[key] = _value(key, text.strip(), field)
                    break
                except ArgumentError as exc:
                    print(f"  {exc}; again:", file=self.stderr)
        return {"action": "accept", "content": content}

    def _show(self, key: str, field: dict[str, Any], required: bool) -> None:
        title = field.get("title") if type(field.get("title")) is str else key
        head = f"{title} ({key})" if title != key else key
        kind = field.get("format") or field.get("type") or "any"
        line = f"{head}{'' if required else ', optional'} [{kind}]"
        if "default" in field:
            line += f" [default: {_shown(field['default'])}]"
        print(line, file=self.stderr)
        if type(field.get("description")) is str:
            print(self.dim(f"    {field['description']}"), file=self.stderr)
        choices = _choices(field)
        if choices:
            print("    choices: " + ", ".join(f"{n}) {label}" for n, (_, label) in enumerate(choices, 1)), file=self.stderr)
            if field.get("type") == "array":
                print(self.dim("    (several: separate them with commas)"), file=self.stderr)


def _shown(value: Any) -> str:
    return value if type(value) is str else orjson.dumps(value).decode()


def _choices(field: dict[str, Any]) -> list[tuple[Any, str]]:
    """``(value, label)`` of a single-select (enum, oneOf) or multi-select (items.enum, items.anyOf) field."""
    items = field.get("items")
    source: dict[str, Any] = items if field.get("type") == "array" and type(items) is dict else field
    if type(source.get("enum")) is list:
        names = field.get("enumNames") if type(field.get("enumNames")) is list else None
        return [(v, f"{names[i]} ({_shown(v)})" if names and i < len(names) else _shown(v)) for i, v in enumerate(source["enum"])]
    options = source.get("oneOf") or source.get("anyOf")
    if type(options) is list:
        return [
            (o["const"], f"{o['title']} ({_shown(o['const'])})" if type(o.get("title")) is str else _shown(o["const"]))
            for o in options
            if type(o) is dict and "const" in o
        ]
    return []


def _pick(key: str, text: str, choices: list[tuple[Any, str]]) -> Any:
    for value, label in choices:
        if text == _shown(value) or text == label or text.lower() == label.split(" (")[0].lower():
            return value
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1][0]
    raise ArgumentError(f"{key} is one of " + ", ".join(label for _, label in choices) + f", not {text!r}")


def _value(key: str, text: str, field: dict[str, Any]) -> Any:
    choices = _choices(field)
    if field.get("type") == "array":
        if choices:
            return [_pick(key, part.strip(), choices) for part in text.split(",") if part.strip()]
        return convert(key, text, field)
    if choices:
        return _pick(key, text, choices)
    return convert(key, text, field)
