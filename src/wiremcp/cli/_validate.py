"""``wiremcp validate FILE``: check a capture, line by line, with the rules ``tap`` applies live.

FILE is a capture written by ``wiremcp tap`` (one record per line: ``t``,
``dir``, ``msg``, ``raw``, ``problems``) or a plain JSONL file of envelopes
(``-`` reads stdin). Rules it keeps:

* The conversation is checked again from scratch with `WireChecker` (the
  problems recorded in a capture are not trusted, so a capture from an older
  wiremcp is judged by today's rules); records tap wrote at exit
  (``"msg": null`` without ``raw``) are skipped, since `finish` finds the
  same requests again. What those records say of the end is kept: when
  the client closed first (``"closedFirst": "client"``), a
  ``subscriptions/listen`` it left open was hung up on, not left
  unanswered, as ``tap`` judges it (a ``hung-up`` note, no problem).
* In a plain JSONL file a message has no recorded direction: requests and
  notifications go the way their method goes (a server-side method is
  ``s2c``, anything else ``c2s``), a response the opposite way of the request
  it answers.
* Every problem is printed as ``FILE:LINE: code: message``; a problem found
  at the end (a request never answered) names the line of the request.
  Exit status: 0 when there is none, 1 when there is any, 2 when FILE
  cannot be read.
* The last line, on stderr, says how much was checked: ``FILE: 42 messages,
  no problems`` for a clean capture (never silence: silence looked like
  nothing was read), ``N problems found`` otherwise.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Iterator, TextIO

import orjson

from ._output import FAILED, OK, fail
from ._wirecheck import HUNG_UP_STREAMS, Direction, Problem, WireChecker, problem, sent_by_server

__all__ = ["add_arguments", "handle", "validate_file", "validate_lines"]


def add_arguments(p: argparse.ArgumentParser, command: str) -> None:
    """The argument of ``wiremcp validate``."""
    p.add_argument("file", help="the capture; - reads stdin")


def handle(args: argparse.Namespace, tail: list[str] | None) -> int:
    """``wiremcp validate FILE``."""
    return validate_file(args.file)


def validate_lines(lines: Iterator[bytes], seen: list[int] | None = None) -> Iterator[tuple[int, Problem]]:
    """``(line number, problem)`` for each problem of the capture, in order.

    ``seen``, when given, gets the number of messages checked appended once the capture is read.
    """
    messages = 0
    checker = WireChecker()
    requests_from: dict[tuple[Direction, bool, Any], int] = {}
    sent: dict[tuple[bool, Any], Direction] = {}
    closed_first: Direction | None = None  # from the records tap wrote at exit
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        messages += 1
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            checked = checker.check_line("s2c", line)
            for found in checked["problems"]:
                yield number, found
            continue
        if type(value) is dict and "dir" in value and "msg" in value and "jsonrpc" not in value:
            direction = value["dir"]
            if direction not in ("c2s", "s2c"):
                yield number, problem("bad-record", f'"dir" must be "c2s" or "s2c", not {orjson.dumps(direction).decode()[:40]}')
                continue
            if value["msg"] is None:
                if type(value.get("raw")) is not str:
                    messages -= 1  # tap's record of the end, not a message
                if value.get("closedFirst") in ("client", "server"):
                    closed_first = "c2s" if value["closedFirst"] == "client" else "s2c"
                raw = value.get("raw")
                if type(raw) is str:
                    for found in checker.check_line(direction, raw.encode()).get("problems", []):
                        yield number, found
                continue  # a record written at exit: finish() finds it again
            msg = value["msg"]
        else:
            msg = value
            direction = _guess(msg, sent)
        if type(msg) is dict and "method" in msg and "id" in msg:
            key = (type(msg["id"]) is str, msg["id"])
            sent[key] = direction
            requests_from[(direction, *key)] = number
        for found in checker.check_message(direction, msg):
            yield number, found
    if seen is not None:
        seen.append(messages)
    inflight = checker.inflight()
    for (sender, request_id, method), (_direction, found) in zip(inflight, checker.finish()):
        if method in HUNG_UP_STREAMS and sender == closed_first:
            continue  # its sender hung up on the stream (tap's `hung-up` note): no violation
        yield requests_from.get((sender, type(request_id) is str, request_id), 0), found


def _guess(msg: Any, sent: dict[tuple[bool, Any], Direction]) -> Direction:
    if type(msg) is not dict:
        return "s2c"
    if "method" in msg:
        return "s2c" if sent_by_server(msg.get("method")) else "c2s"
    key = (type(msg.get("id")) is str, msg.get("id"))
    return "c2s" if sent.get(key) == "s2c" else "s2c"


def validate_file(path: str, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as handle:
                data = handle.read()
    except OSError as exc:
        return fail("validate", f"cannot read {path}: {exc.strerror}")
    count = 0
    seen: list[int] = []
    for number, found in validate_lines(iter(data.split(b"\n")), seen):
        count += 1
        print(f"{path}:{number}: {found['code']}: {found['message']}", file=out)
    if count:
        print(f"{count} problem{'s' if count != 1 else ''} found", file=sys.stderr)
        return FAILED
    messages = seen[0] if seen else 0
    print(f"{path}: {messages} message{'s' if messages != 1 else ''}, no problems", file=sys.stderr)
    return OK
