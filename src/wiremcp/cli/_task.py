"""``wiremcp task get|cancel|watch TARGET ID``, and the task hook of ``wiremcp call``.

    wiremcp call --detach http://127.0.0.1:8000/mcp report '{"year": 2026}'   # prints the task id
    wiremcp task watch http://127.0.0.1:8000/mcp 786512e2-...                 # status changes, then the result
    wiremcp task get http://127.0.0.1:8000/mcp 786512e2-...                   # the task as JSON
    wiremcp task cancel http://127.0.0.1:8000/mcp 786512e2-...

TARGET is what ``wiremcp call`` takes (a URL, a server ``.py`` file, or a
stdio command after ``--``); a task outlives a connection only where the
server keeps it (an HTTP server, or a stdio server with a durable task
store). The client declares the tasks extension (2026-07-28 servers) and
augments tool calls the way 2025-11-25 servers allow (`wiremcp.TaskHandle`).

What the commands print: ``wiremcp call`` shows each status change of a
task on stderr (``task ID: STATUS - message``) and the tool's result on
stdout as usual; with ``--detach`` it prints the task id on stdout and
exits 0 as soon as the server has created the task (a tool the server runs
at once just prints its result). ``task get`` prints the task object as
JSON; ``task cancel`` asks the server to cancel (cancellation is
cooperative: the task may still complete) and prints what the server then
reports; ``task watch`` follows the task like ``call``, answering its
input requests, then prints its result. Exit status (`_output`): 0 on success; 1 when
the tool reported an error, the task failed or was cancelled, or the server
answered with an error; 2 for a usage or connection problem.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, TextIO

from ..client import CallToolResult, Client, ClientError, RemoteError, TaskCancelled, TaskHandle, TaskState
from ._client import add_connection_options, client_for, close_auth, run_client, split_target, unreachable
from ._output import (
    FAILED,
    OK,
    Style,
    UsageError,
    WirePrinter,
    fail,
    log_warnings,
    pretty,
    print_remote_error,
    print_tool_result,
)

__all__ = ["add_arguments", "handle", "add_call_options", "call_tool_live", "ACTIONS"]

ACTIONS = ("get", "cancel", "watch")


def add_call_options(parser: argparse.ArgumentParser) -> None:
    """The task options of ``wiremcp call``."""
    parser.add_argument(
        "--detach", action="store_true",
        help="when the server runs the call as a task, print the task id and exit 0 (follow it with `wiremcp task`)",
    )
    parser.set_defaults(tasks=True)


def add_arguments(p: argparse.ArgumentParser, command: str) -> None:
    """The actions of ``wiremcp task``, each with its arguments."""
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    helps = {
        "get": "show the task as JSON",
        "cancel": "ask the server to cancel the task",
        "watch": "follow the task (status changes on stderr), then print its result",
    }
    for action in ACTIONS:
        a = actions.add_parser(action, help=helps[action])
        a.add_argument("words", nargs="*", metavar="ARG", help="TARGET ID (TARGET may follow as -- command...)")
        add_connection_options(a)
        a.add_argument("--auth", action="store_true", help="URL targets: OAuth 2.1, as for `wiremcp call --auth`")
        if action == "watch":
            a.add_argument("--listen", action="store_true", help="wait for status notifications instead of polling (2026-07-28)")
        a.set_defaults(tasks=True, listen=False)


def handle(args: argparse.Namespace, tail: list[str] | None) -> int:
    """Run ``wiremcp task ACTION``; the exit status."""
    log_warnings()
    return run_client("task", args, lambda out, style: _run(args, tail, out, style), None)


def _describe(state: TaskState) -> str:
    text = f"task {state.id}: {state.status}"
    if state.status_message:
        text += f" - {state.status_message}"
    return text


async def follow(handle: TaskHandle, err: TextIO, style: Style, *, listen: bool = False) -> CallToolResult:
    """Print each new state of ``handle`` on ``err``, then return the tool's result."""
    colours = {"completed": "32", "failed": "31", "cancelled": "33", "input_required": "35"}
    async for state in handle.watch(listen=listen):
        print(style(colours.get(state.status, "2"), _describe(state)), file=err, flush=True)
    return await handle.result()


async def call_tool_live(
    client: Client,
    name: str,
    arguments: dict[str, Any] | None,
    *,
    on_progress: Callable[[Any, Any, Any], None] | None,
    detach: bool,
    out: TextIO,
    style: Style,
    err: TextIO | None = None,
) -> CallToolResult | int:
    """``wiremcp call``'s tools/call: the result, following a task live, or the exit status to end with.

    0 when detached (the task id is printed on ``out``), 1 when the task was cancelled.
    """
    err = err if err is not None else sys.stderr
    outcome = await client.call_tool(name, arguments, task=True, on_progress=on_progress)
    if not isinstance(outcome, TaskHandle):
        return outcome
    if detach:
        if outcome.state is not None:
            print(style("2", _describe(outcome.state)), file=err, flush=True)
        print(outcome.id, file=out, flush=True)
        return OK
    try:
        return await follow(outcome, err, style)
    except TaskCancelled as exc:
        print(style("33", str(exc)), file=out)
        return FAILED


async def _run(args: argparse.Namespace, tail: list[str] | None, out: TextIO, style: Style) -> int:
    action = args.action
    target, rest = split_target(list(args.words), tail)
    if len(rest) != 1:
        raise UsageError(f"task {action} wants TARGET and one task ID")
    client = client_for(target, args, WirePrinter(out, style) if args.wire else None, command=tail is not None)
    try:
        async with client:
            return await _act(action, client.task(rest[0]), args, out, style)
    except RemoteError as exc:
        return print_remote_error(exc, out, style)
    except ClientError as exc:
        return fail("task", unreachable(exc, getattr(client.transport, "url", target[0])) or str(exc))
    finally:
        await close_auth(client)


async def _act(action: str, task: TaskHandle, args: argparse.Namespace, out: TextIO, style: Style) -> int:
    if action == "get":
        state = await task.refresh()
        print(pretty(dict(state.raw)), file=out)
        return OK
    if action == "cancel":
        await task.cancel()
        state = task.state if task.state is not None else await task.refresh()
        print(_describe(state), file=out)
        return OK
    try:
        result = await follow(task, sys.stderr, Style.for_stream(sys.stderr, args.no_color), listen=args.listen)
    except TaskCancelled as exc:
        print(style("33", str(exc)), file=out)
        return FAILED
    return print_tool_result(result, out, style)
