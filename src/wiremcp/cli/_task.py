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
input requests, then prints its result. Exit status: 0 on success; 1 when
the tool reported an error, the task failed or was cancelled, or the server
answered with an error; 2 for a usage or connection problem.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any, Callable, TextIO

if TYPE_CHECKING:
    from ..client import CallToolResult, Client, TaskHandle, TaskState
    from ._inspect import Style

__all__ = ["add_parser", "add_call_options", "call_tool_live", "run_task", "ACTIONS"]

ACTIONS = ("get", "cancel", "watch")


def add_call_options(parser: argparse.ArgumentParser) -> None:
    """The task options of ``wiremcp call``."""
    parser.add_argument(
        "--detach", action="store_true",
        help="when the server runs the call as a task, print the task id and exit 0 (follow it with `wiremcp task`)",
    )
    parser.set_defaults(tasks=True)


def add_parser(commands: Any) -> None:
    p = commands.add_parser("task", help="follow a task a server runs: task get|cancel|watch TARGET ID")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    helps = {
        "get": "show the task as JSON",
        "cancel": "ask the server to cancel the task",
        "watch": "follow the task (status changes on stderr), then print its result",
    }
    for action in ACTIONS:
        a = actions.add_parser(action, help=helps[action])
        a.add_argument("words", nargs="*", metavar="ARG", help="TARGET ID (TARGET may follow as -- command...)")
        a.add_argument("--wire", action="store_true", help="print every envelope sent and received, with timing")
        a.add_argument("--no-color", action="store_true", help="never colour the output")
        a.add_argument("--era", choices=["auto", "modern", "legacy"], default="auto", help="protocol era (default: probe)")
        a.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="per-request timeout (default: 30)")
        a.add_argument("-H", "--header", action="append", default=[], metavar="NAME:VALUE", help="extra HTTP header, repeatable")
        a.add_argument("--auth", action="store_true", help="URL targets: OAuth 2.1, as for `wiremcp call --auth`")
        if action == "watch":
            a.add_argument("--listen", action="store_true", help="wait for status notifications instead of polling (2026-07-28)")
        a.set_defaults(tasks=True, listen=False)


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
    from ..client import TaskCancelled, TaskHandle

    err = err if err is not None else sys.stderr
    outcome = await client.call_tool(name, arguments, task=True, on_progress=on_progress)
    if not isinstance(outcome, TaskHandle):
        return outcome
    if detach:
        if outcome.state is not None:
            print(style("2", _describe(outcome.state)), file=err, flush=True)
        print(outcome.id, file=out, flush=True)
        return 0
    try:
        return await follow(outcome, err, style)
    except TaskCancelled as exc:
        print(style("33", str(exc)), file=out)
        return 1


def run_task(args: argparse.Namespace, tail: list[str] | None, out: TextIO | None = None) -> int:
    import contextlib

    from ._inspect import Style, UsageError
    from ._terminal import for_terminal

    out = for_terminal(out or sys.stdout)  # a server's text never acts on the terminal (_terminal)
    style = Style.for_stream(out, args.no_color)
    try:
        with contextlib.redirect_stderr(for_terminal(sys.stderr)):
            return asyncio.run(_run(args, tail, out, style))
    except UsageError as exc:
        print(f"wiremcp task: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


async def _run(args: argparse.Namespace, tail: list[str] | None, out: TextIO, style: Style) -> int:
    from ..client import ClientError, RemoteError, TaskCancelled
    from ._inspect import Style, UsageError, WirePrinter, _client_for, _print_content, _split, pretty

    action = args.action
    target, rest = _split(list(args.words), tail)
    if len(rest) != 1:
        raise UsageError(f"task {action} wants TARGET and one task ID")
    task_id = rest[0]
    client = _client_for(target, args, WirePrinter(out, style) if args.wire else None, command=tail is not None)
    try:
        async with client:
            handle = client.task(task_id)
            if action == "get":
                state = await handle.refresh()
                print(pretty(dict(state.raw)), file=out)
                return 0
            if action == "cancel":
                await handle.cancel()
                state = handle.state if handle.state is not None else await handle.refresh()
                print(_describe(state), file=out)
                return 0
            try:
                result = await follow(handle, sys.stderr, Style.for_stream(sys.stderr, args.no_color), listen=args.listen)
            except TaskCancelled as exc:
                print(style("33", str(exc)), file=out)
                return 1
            _print_content(result.content, out, style)
            if result.structured_content is not None and not result.text:
                print(style("2", "structuredContent:") + "\n" + pretty(result.structured_content), file=out)
            if result.is_error:
                print(style("31", "(the tool reported an error)"), file=out)
                return 1
            return 0
    except RemoteError as exc:
        print(style("31", f"error {exc.code}: {exc.message}"), file=out)
        if exc.has_data:
            print(pretty(exc.data), file=out)
        return 1
    except ClientError as exc:
        print(f"wiremcp task: {exc}", file=sys.stderr)
        return 2
    finally:
        auth = getattr(client.transport, "auth", None)
        if auth is not None:
            await auth.aclose()
