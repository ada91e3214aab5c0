"""Words in the wrong order on a client command's line, caught before a server is started.

    wiremcp call --era legacy -- python notes.py search    # the tool after --: the server's command
    wiremcp inspect notes.py search                         # inspect takes one TARGET

Rules:

* everything after ``--`` is the server's command line (`_commands`), so the
  tool (``call``), the URI (``read``) or the prompt's NAME (``prompt``), and
  their arguments, go before ``--``; when nothing is left before it,
  `tail_problem` says so and shows the line in the right order, guessing the
  name as the last word of the command that is not a ``key=value`` or JSON
  argument (never a ``.py`` file, never the command's first word); a TARGET
  with no name after it (``call notes.py``) is said as well;
* ``inspect`` takes one TARGET: a server file or module, or a URL, followed by
  more words is a tool (or URI) meant for ``call`` (``read``): `inspect_problem`
  shows that command. A bare command (``inspect npx some-server``) still runs
  as before.
* Both are found from the words alone: nothing is started, nothing imported.
"""

from __future__ import annotations

import shlex

from ._target import is_server_target

__all__ = ["inspect_problem", "tail_problem"]

#: What each command wants first, after its TARGET.
_NAME = {"call": "TOOL", "read": "URI", "prompt": "NAME"}
_ARGUMENTS = {"call": " [key=value ... | JSON]", "read": "", "prompt": " [key=value ...]"}


def _is_argument(word: str) -> bool:
    return "=" in word or word.lstrip().startswith("{")


def tail_problem(command: str, options: list[str], words: list[str], tail: list[str] | None) -> str | None:
    """Why ``call``/``read``/``prompt`` cannot run: the name is missing before ``--`` (else None).

    ``options``: the words the user gave before ``--``; ``words``: the positional ones among them.
    Without ``--``, a TARGET alone is said too (the server is not started to learn it)."""
    if command not in _NAME:
        return None
    kind = _NAME[command]
    if tail is None:
        if len(words) != 1:
            return None
        return f"{command} wants {kind} after TARGET: wiremcp {command} [OPTIONS] TARGET {kind}{_ARGUMENTS[command]}"
    if words:
        return None
    split = len(tail)
    if command != "read":
        while split > 0 and _is_argument(tail[split - 1]):
            split -= 1
    name_at = split - 1
    right = f"wiremcp {command} [OPTIONS] {kind}{_ARGUMENTS[command]} -- COMMAND..."
    if name_at < 1 or tail[name_at].endswith(".py") or tail[name_at].startswith("-"):
        return f"{command} wants {kind} before --, and the server's command after it: {right}"
    moved = [*options, *tail[name_at:], "--", *tail[:name_at]]
    thing = {"call": "the tool name", "read": "the URI", "prompt": "the prompt name"}[command]
    thing += " and its arguments go" if split < len(tail) else " goes"
    return f"{thing} before --, the server's command after it: {shlex.join(['wiremcp', command, *moved])}"


def inspect_problem(target: list[str], tail: list[str] | None) -> str | None:
    """Why ``inspect TARGET WORDS...`` is not what was meant: words after a server file, module or URL (else None)."""
    if tail is not None or len(target) < 2:
        return None
    first = target[0]
    if not (first.startswith(("http://", "https://")) or is_server_target(first)):
        return None  # a command without --, as before
    rest = target[1:]
    command = "read" if "://" in rest[0] else "call"
    return (
        f"inspect takes one TARGET, not {shlex.join(rest)!r} after it; "
        f"to {'read the resource' if command == 'read' else 'call the tool'}: {shlex.join(['wiremcp', command, *target])}"
    )
