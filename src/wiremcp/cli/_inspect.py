"""``wiremcp inspect | call | read | prompt``: a client on the command line.

    wiremcp inspect http://127.0.0.1:8000/mcp
    wiremcp inspect examples/echo.py                      # a server file: run it over stdio
    wiremcp inspect -- npx some-mcp-server --flag         # any stdio command after --
    wiremcp call examples/echo.py echo text=hi            # key=value, typed by the tool's inputSchema
    wiremcp call examples/echo.py echo '{"text": "hi"}'   # or one JSON object
    wiremcp call my_pkg.server:app add a=1 b=2            # a module, as `wiremcp run` takes it
    wiremcp call echo '{"text": "hi"}' -- python server.py
    wiremcp call server.py book --answer '{"date": "2026-01-02"}'   # answers a question the tool asks
    wiremcp read URL file:///notes.txt
    wiremcp prompt URL greet who=Ada
    wiremcp inspect --wire examples/echo.py               # every envelope, with direction and timing
    wiremcp call --auth URL whoami                        # OAuth 2.1 (tokens of `wiremcp login`)
    wiremcp call --detach URL report '{"year": 2026}'     # a task: print its id and exit (cli/_task.py)
    wiremcp inspect --web examples/echo.py                # the web inspector (docs/inspector.md)

TARGET is an ``http(s)://`` URL, a Python file or module as ``wiremcp run``
takes it (``path.py[:attr]``, ``package.module[:attr]``; `_target`), served
with ``wiremcp run`` over stdio, or, after ``--``, any command that speaks
MCP on stdio (`_client`). ``--wire`` prints each raw envelope the client sends (→) and
receives (←) with the time since start, coloured on a terminal and plain when
piped. Exit status (`_output`): 0 on success, 1 when the tool reported an
error (``isError``) or the server answered with an error, 2 for a usage or
connection problem.

Rules:

* ``call`` arguments are ``key=value`` words typed by the tool's
  ``inputSchema``, or one JSON object (`_words`);
* a question the server asks (elicitation) is answered by ``--answer``, in
  order, else by a form on the terminal (`_answers`);
* a name the server does not know (tool, prompt, resource) gets the closest
  names it lists in the error ("did you mean");
* what a stdio server wrote to stderr is shown after the output, on stderr
  (dimmed on a terminal), unless ``--quiet``; when the server failed it is
  shown once, with the failure;
* an HTTP 401/403 names ``--auth`` and ``wiremcp login``;
* on a terminal, what the server sent is shown with its control characters
  as visible escapes (`_terminal`): a name, a description or a result cannot
  move the cursor, set the title or write the clipboard.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

import orjson

from ..client import Client, ClientError, HTTPError, RemoteError
from ..protocol import Era
from ._answers import AnswerError, Answers
from ._client import add_connection_options, client_for, close_auth, run_client, split_target, unreachable
from ._order import inspect_problem, tail_problem
from ._output import (
    OK,
    USAGE,
    Style,
    UsageError,
    WirePrinter,
    fail,
    log_warnings,
    print_content,
    print_remote_error,
    print_tool_result,
)
from ._probe_stderr import ProbeStderr
from ._task import add_call_options, call_tool_live
from ._words import ArgumentError, did_you_mean, parse_arguments

__all__ = ["add_arguments", "handle"]


def add_arguments(p: argparse.ArgumentParser, command: str) -> None:
    """The arguments of ``inspect``, ``call``, ``read`` or ``prompt``."""
    if command == "inspect":
        p.add_argument("target", nargs="*", help="URL, server.py[:attr] or package.module[:attr] (or a stdio command after --)")
    elif command == "call":
        p.add_argument(
            "words", nargs="*", metavar="ARG", help="TARGET TOOL [key=value ... | JSON] (TARGET may follow as -- command...)"
        )
    else:
        p.add_argument("words", nargs="*", metavar="ARG", help="TARGET URI" if command == "read" else "TARGET NAME [key=value ...]")
    add_connection_options(p)
    p.add_argument(
        "--auth", action="store_true",
        help="URL targets: OAuth 2.1 when the server asks: the tokens of `wiremcp login`, else a login in the "
        "browser (docs/auth.md); tokens are kept in $XDG_STATE_HOME/wiremcp/oauth",
    )
    p.add_argument("--oauth", dest="auth", action="store_true", help=argparse.SUPPRESS)  # the first name of --auth
    p.add_argument("-q", "--quiet", action="store_true", help="do not show what a stdio server wrote to stderr")
    p.add_argument(
        "--answer", action="append", default=[], metavar="JSON",
        help="the answer to a question the server asks (elicitation): a JSON object, decline or cancel; "
        "repeatable, one per question in order (default: a form on the terminal)",
    )
    if command == "inspect":
        web = p.add_argument_group("web inspector (docs/inspector.md; needs the [http] extra)")
        web.add_argument("--web", action="store_true", help="serve the inspector page on 127.0.0.1 (URL with a token on stdout)")
        web.add_argument("--web-port", type=int, default=0, metavar="PORT", help="--web: port (default: a free one)")
        web.add_argument("--open", action="store_true", help="--web: open the page in the default browser")
    elif command == "call":
        add_call_options(p)  # tasks: --detach (cli/_task.py)


def handle(args: argparse.Namespace, tail: list[str] | None) -> int:
    """Run ``inspect``, ``call``, ``read`` or ``prompt``; the exit status."""
    log_warnings()
    if args.command == "inspect":
        problem = inspect_problem(list(args.target), tail)
    else:
        problem = tail_problem(args.command, args.given, list(args.words), tail)
    if problem is not None:  # before a server is started
        return fail(args.command, problem)
    if getattr(args, "web", False):
        if tail is None and not args.target:
            return fail(args.command, "no TARGET: give a URL, a server .py file, or -- followed by a command")
        from ._web import run_inspect  # on first use: the web inspector's modules are for --web only

        return run_inspect(args, tail)
    return run_client(args.command, args, lambda out, style: _run(args, tail, out, style), None)


async def _run(args: argparse.Namespace, tail: list[str] | None, out: TextIO, style: Style) -> int:
    wire = WirePrinter(out, style) if args.wire else None
    if args.command == "inspect":
        target = tail if tail is not None else list(args.target)
        rest: list[str] = []
    else:
        target, rest = split_target(list(args.words), tail)
    err_style = Style.for_stream(sys.stderr, args.no_color)
    try:
        answers = Answers(args.answer, args.command, dim=lambda text: err_style("2", text))
    except AnswerError as exc:
        raise UsageError(str(exc)) from None
    probe_stderr = ProbeStderr(wire=args.wire)
    client = client_for(target, args, wire, answers, command=tail is not None, on_stderr=probe_stderr.feed)
    failed = False
    try:
        async with client:
            probe_stderr.era_known(probe_fell_back=args.era == "auto" and client.era is Era.LEGACY)
            try:
                return await _command(args.command, client, rest, out, style, detach=getattr(args, "detach", False))
            except RemoteError as exc:
                return print_remote_error(exc, out, style, await _name_hint(client, args.command, rest, exc))
    except RemoteError as exc:  # while connecting
        return print_remote_error(exc, out, style)
    except ClientError as exc:
        failed = True
        _report_failure(args, client, exc)
        return USAGE
    finally:
        await close_auth(client)
        if not failed and not args.quiet:
            _show_stderr(probe_stderr, err_style)


async def _command(command: str, client: Client, rest: list[str], out: TextIO, style: Style, *, detach: bool) -> int:
    if command == "inspect":
        return await _inspect(client, out, style)
    if command == "call":
        return await _call(client, rest, out, style, detach=detach)
    if command == "read":
        return await _read(client, rest, out, style)
    return await _prompt(client, rest, out, style)


def _report_failure(args: argparse.Namespace, client: Client, exc: Exception) -> None:
    """A connection problem, said once: with the server's stderr unless the message quotes it already."""
    url = getattr(client.transport, "url", "URL")
    message = unreachable(exc, url) or str(exc)
    if isinstance(exc, HTTPError) and exc.status in (401, 403):
        message = message.split("; connect with an auth= hook")[0]  # the library's advice; the CLI's follows
        if not args.auth:
            message += f"\n  use --auth (OAuth 2.1 in the browser), or log in first: wiremcp login {url}"
        else:
            message += f"\n  log in again: wiremcp logout {url}, then wiremcp login {url}"
    stderr_text = getattr(client.transport, "stderr_text", None)
    text = stderr_text().strip() if stderr_text is not None else ""
    if text and getattr(client.transport, "returncode", None) == 2 and text.startswith("wiremcp run: "):
        print(f"wiremcp {args.command}: {text.removeprefix('wiremcp run: ')}", file=sys.stderr)  # our own server: its message is the cause
        return
    print(f"wiremcp {args.command}: {message}", file=sys.stderr)
    if text and text.splitlines()[-1].strip() not in message:
        print("server stderr:\n" + text, file=sys.stderr)


def _show_stderr(probe_stderr: ProbeStderr, style: Style) -> None:
    """What a stdio server wrote to stderr, after the output (dimmed on a terminal), less what the
    era probe provoked (`_probe_stderr`: one line says so; ``--wire`` shows it)."""
    text = probe_stderr.shown().rstrip()
    if text:
        print(style("2", text), file=sys.stderr)
    note = probe_stderr.note()
    if note is not None:
        print(style("2", note), file=sys.stderr)


#: The errors of an unknown name: -32602 (tools/call, prompts/get) and -32002 (resources/read, 2025-11-25).
_NOT_FOUND_CODES = (-32602, -32002)


async def _name_hint(client: Client, command: str, rest: list[str], exc: Exception) -> str:
    """"; did you mean ..." when the name asked for is not one the server lists (else "")."""
    if not rest or getattr(exc, "code", None) not in _NOT_FOUND_CODES:
        return ""
    name = rest[0]
    try:
        if command == "call":
            names = [t["name"] for t in await client.list_tools()]
        elif command == "prompt":
            names = [p["name"] for p in await client.list_prompts()]
        elif command == "read":
            names = [r["uri"] for r in await client.list_resources()]
            # a template that matches the URI already served it (its function said "not found")
            names += [t["uriTemplate"] for t in await client.list_resource_templates() if not _matches(t["uriTemplate"], name)]
        else:
            return ""
    except (ClientError, KeyError, TypeError):
        return ""
    if name in names:
        return ""
    return did_you_mean(name, names)


def _matches(template: str, uri: str) -> bool:
    """Whether the URI template ``template`` (as listed: it may be malformed) matches ``uri``."""
    from ..server import TemplateError, UriTemplate  # the matcher is the server's; loaded for this hint only

    try:
        return UriTemplate(template).match(uri) is not None
    except TemplateError:
        return False


def _heading(out: TextIO, style: Style, text: str) -> None:
    print("\n" + style("1;36", text), file=out)


async def _inspect(client: Client, out: TextIO, style: Style) -> int:
    info = client.server_info or {}
    print(style("1", f"{info.get('name', '?')} {info.get('version', '')}".rstrip()), file=out)
    era = "modern" if client.era is Era.MODERN else "legacy"
    print(f"era: {era}, protocol version {client.protocol_version}", file=out)
    if client.server is not None:
        if client.server.supported_versions:
            print(f"supported versions: {', '.join(client.server.supported_versions)}", file=out)
        if client.server.instructions:
            print(f"instructions: {client.server.instructions}", file=out)
    caps = client.server_capabilities
    print(f"capabilities: {', '.join(sorted(caps)) or '(none)'}", file=out)
    if "tools" in caps:
        tools = await client.list_tools()
        _heading(out, style, f"tools ({len(tools)})")
        for tool in tools:
            props = (tool.get("inputSchema") or {}).get("properties") or {}
            required = set((tool.get("inputSchema") or {}).get("required") or ())
            params = ", ".join(f"{k}{'' if k in required else '?'}: {_type(v)}" for k, v in props.items())
            print(f"  {style('1', tool['name'])}({params})", file=out)
            if tool.get("description"):
                print(f"      {tool['description'].strip().splitlines()[0]}", file=out)
    if "resources" in caps:
        resources = await client.list_resources()
        _heading(out, style, f"resources ({len(resources)})")
        for res in resources:
            print(f"  {res.get('uri')}  {res.get('name', '')}", file=out)
        templates = await client.list_resource_templates()
        if templates:
            _heading(out, style, f"resource templates ({len(templates)})")
            for tpl in templates:
                print(f"  {tpl.get('uriTemplate')}  {tpl.get('name', '')}", file=out)
    if "prompts" in caps:
        prompts = await client.list_prompts()
        _heading(out, style, f"prompts ({len(prompts)})")
        for prompt in prompts:
            args = ", ".join(a.get("name", "?") + ("" if a.get("required") else "?") for a in prompt.get("arguments") or ())
            print(f"  {style('1', prompt['name'])}({args})", file=out)
            if prompt.get("description"):
                print(f"      {prompt['description']}", file=out)
    return OK


def _type(schema: Any) -> str:
    if type(schema) is not dict:
        return "any"
    kind = schema.get("type")
    if "enum" in schema:
        return "|".join(orjson.dumps(v).decode() for v in schema["enum"])
    if type(kind) is list:
        return "|".join(kind)
    return kind or "any"


async def _call(client: Client, rest: list[str], out: TextIO, style: Style, *, detach: bool = False) -> int:
    if not rest:
        raise UsageError("call wants TOOL and optionally key=value arguments or a JSON object")
    name, words = rest[0], rest[1:]
    schema: Any = None
    if words and not (len(words) == 1 and words[0].lstrip().startswith("{")):
        tools = {t["name"]: t for t in await client.list_tools()}  # key=value words are typed by the inputSchema
        if name not in tools:
            raise UsageError(f"the server has no tool {name!r}{did_you_mean(name, tools)}")
        schema = tools[name].get("inputSchema")
    try:
        arguments = parse_arguments(words, schema)
    except ArgumentError as exc:
        raise UsageError(str(exc)) from None
    result = await call_tool_live(  # the task hook: status changes live, --detach (cli/_task.py)
        client, name, arguments, detach=detach, out=out, style=style,
        on_progress=lambda p, t, m: print(style("2", f"progress {p}/{t or '?'} {m or ''}"), file=sys.stderr),
    )
    if isinstance(result, int):
        return result
    return print_tool_result(result, out, style)


async def _read(client: Client, rest: list[str], out: TextIO, style: Style) -> int:
    if len(rest) != 1:
        raise UsageError("read wants exactly one URI")
    result = await client.read_resource(rest[0])
    for item in result.contents:
        if "text" in item:
            print(item["text"], file=out)
        else:
            print(style("2", f"[{item.get('uri')} {item.get('mimeType', '')}, {len(item.get('blob', ''))} base64 chars]"), file=out)
    return OK


async def _prompt(client: Client, rest: list[str], out: TextIO, style: Style) -> int:
    if not rest:
        raise UsageError("prompt wants NAME and optionally key=value arguments")
    arguments = {}
    for item in rest[1:]:
        key, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"prompt arguments are key=value, not {item!r}")
        arguments[key] = value
    result = await client.get_prompt(rest[0], arguments or None)
    if result.description:
        print(style("2", result.description), file=out)
    for message in result.messages:
        print(style("1", f"[{message.get('role')}]"), file=out)
        content: Any = message.get("content")
        print_content(content if type(content) is list else [content], out, style)
    return OK
