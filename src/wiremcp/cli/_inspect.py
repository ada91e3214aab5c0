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
MCP on stdio. ``--wire`` prints each raw envelope the client sends (→) and
receives (←) with the time since start, coloured on a terminal and plain when
piped. Exit status: 0 on success, 1 when the tool reported an error
(``isError``) or the server answered with an error, 2 for a usage or
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
import asyncio
import os
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

import orjson

from ._target import is_server_target

if TYPE_CHECKING:
    from ._probe_stderr import ProbeStderr

__all__ = ["COMMANDS", "add_parsers", "run_command", "WirePrinter", "Style"]

COMMANDS = ("inspect", "call", "read", "prompt")


class Style:
    """ANSI colour when ``enabled``, plain text otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text

    @classmethod
    def for_stream(cls, out: TextIO, no_color: bool = False) -> Style:
        return cls(not no_color and out.isatty() and "NO_COLOR" not in os.environ)


def pretty(data: bytes | Any) -> str:
    """Indented JSON for display; bytes that are not JSON are shown as they are."""
    if isinstance(data, (bytes, bytearray)):
        try:
            data = orjson.loads(data)
        except orjson.JSONDecodeError:
            return bytes(data).decode("utf-8", errors="replace")
    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()


class WirePrinter:
    """A ``Client(on_wire=...)`` callback printing each envelope with direction and timing."""

    def __init__(self, out: TextIO, style: Style) -> None:
        self.out = out
        self.style = style
        self.start = time.perf_counter()
        self.last_sent_id: Any = None
        self.broken = False

    def __call__(self, direction: str, data: bytes) -> None:
        ms = (time.perf_counter() - self.start) * 1000
        if direction == "send":
            head = self.style("33", f"→ sent     +{ms:8.1f} ms")
            try:
                obj = orjson.loads(data)
                if type(obj) is dict and "id" in obj and "method" in obj:
                    self.last_sent_id = obj["id"]
            except orjson.JSONDecodeError:
                pass
        else:
            colour = "31" if b'"error"' in data[:200] and b'"result"' not in data[:40] else "32"
            head = self.style(colour, f"← received +{ms:8.1f} ms")
        try:
            print(head + "\n" + pretty(data), file=self.out, flush=True)
        except BrokenPipeError:
            # Never raised into the client (its request would be left half sent); the
            # command's next write raises it again and `wiremcp.cli.main` ends quietly.
            self.broken = True


def add_parsers(commands: Any) -> None:
    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--wire", action="store_true", help="print every envelope sent and received, with timing")
        p.add_argument("--no-color", action="store_true", help="never colour the output")
        p.add_argument("--era", choices=["auto", "modern", "legacy"], default="auto", help="protocol era (default: probe)")
        p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="per-request timeout (default: 30)")
        p.add_argument("-H", "--header", action="append", default=[], metavar="NAME:VALUE", help="extra HTTP header, repeatable")
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

    p = commands.add_parser("inspect", help="connect to a server and show what it offers")
    p.add_argument("target", nargs="*", help="URL, server.py[:attr] or package.module[:attr] (or a stdio command after --)")
    common(p)
    web = p.add_argument_group("web inspector (docs/inspector.md; needs the [http] extra)")
    web.add_argument("--web", action="store_true", help="serve the inspector page on 127.0.0.1 (URL with a token on stdout)")
    web.add_argument("--web-port", type=int, default=0, metavar="PORT", help="--web: port (default: a free one)")
    web.add_argument("--open", action="store_true", help="--web: open the page in the default browser")
    p = commands.add_parser("call", help="call a tool: TARGET TOOL [key=value ... | '{json arguments}']")
    p.add_argument(
        "words", nargs="*", metavar="ARG", help="TARGET TOOL [key=value ... | JSON] (TARGET may follow as -- command...)"
    )
    common(p)
    from ._task import add_call_options  # tasks: --detach (cli/_task.py)

    add_call_options(p)
    p = commands.add_parser("read", help="read a resource: TARGET URI")
    p.add_argument("words", nargs="*", metavar="ARG", help="TARGET URI")
    common(p)
    p = commands.add_parser("prompt", help="get a prompt: TARGET NAME [key=value ...]")
    p.add_argument("words", nargs="*", metavar="ARG", help="TARGET NAME [key=value ...]")
    common(p)


class UsageError(Exception):
    pass


def _client_for(
    target: list[str], args: argparse.Namespace, on_wire: Any, answers: Any = None, command: bool = False,
    on_stderr: Any = None, **extra: Any
) -> Any:
    """The client for TARGET; ``command``: it came after ``--`` (a command line, unless a lone ``.py``).

    ``on_stderr`` is given to a stdio client (see `_probe_stderr`)."""
    from ..client import Client

    options: dict[str, Any] = {"era": args.era, "timeout": args.timeout, "name": "wiremcp-inspect", "on_wire": on_wire, **extra}
    if answers is not None:
        options["elicitation"] = answers
    if getattr(args, "tasks", False):  # call and task: take part in tasks (cli/_task.py)
        options["tasks"] = True
    if not target:
        raise UsageError("no TARGET: give a URL, a server .py file, or -- followed by a command")
    first = target[0]
    if first.startswith(("http://", "https://")):
        if len(target) > 1:
            raise UsageError("a URL target takes no further words")
        headers = {}
        for item in args.header:
            name, sep, value = item.partition(":")
            if not sep:
                raise UsageError(f"--header wants NAME:VALUE, not {item!r}")
            headers[name.strip()] = value.strip()
        auth = None
        if args.auth:
            from ..auth import FileTokenStore, LoopbackRedirect, OAuthClient

            from ._login import announcing_browser

            handler = LoopbackRedirect(open_browser=announcing_browser(sys.stderr))
            auth = OAuthClient(client_name="wiremcp", redirect_handler=handler, store=FileTokenStore())
            options["timeout"] = max(args.timeout, 300.0)  # the first request waits for the login
        return Client.http(first, headers=headers, auth=auth, **options)
    if on_stderr is not None:
        options["on_stderr"] = on_stderr
    if len(target) == 1 and (first.endswith(".py") if command else is_server_target(first)):
        return Client.stdio(sys.executable, ["-m", "wiremcp", "run", first], **options)
    return Client.stdio(first, target[1:], **options)


def _split(words: list[str], tail: list[str] | None) -> tuple[list[str], list[str]]:
    """``(target, rest)``: the target is the stdio command after ``--``, else the first word."""
    if tail is not None:
        return tail, words
    if not words:
        raise UsageError("no TARGET given")
    return [words[0]], words[1:]


def run_command(args: argparse.Namespace, tail: list[str] | None, out: TextIO | None = None) -> int:
    import contextlib

    from ._terminal import for_terminal

    out = for_terminal(out or sys.stdout)  # a server's text never acts on the terminal (_terminal)
    style = Style.for_stream(out, args.no_color)
    try:
        if getattr(args, "web", False):
            from ._web import run_inspect

            if tail is None and not args.target:
                raise UsageError("no TARGET: give a URL, a server .py file, or -- followed by a command")
            return run_inspect(args, tail, _client_for)
        with contextlib.redirect_stderr(for_terminal(sys.stderr)):
            return asyncio.run(_run(args, tail, out, style))
    except UsageError as exc:
        print(f"wiremcp {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


async def _run(args: argparse.Namespace, tail: list[str] | None, out: TextIO, style: Style) -> int:
    from ..client import ClientError, RemoteError
    from ..protocol import Era

    from ._answers import AnswerError, Answers
    from ._probe_stderr import ProbeStderr

    wire = WirePrinter(out, style) if args.wire else None
    if args.command == "inspect":
        target = tail if tail is not None else list(args.target)
        rest: list[str] = []
    else:
        target, rest = _split(list(args.words), tail)
    err_style = Style.for_stream(sys.stderr, args.no_color)
    try:
        answers = Answers(args.answer, args.command, dim=lambda text: err_style("2", text))
    except AnswerError as exc:
        raise UsageError(str(exc)) from None
    held = ProbeStderr(wire=args.wire)
    client = _client_for(target, args, wire, answers, command=tail is not None, on_stderr=held.feed)
    failed = False
    try:
        async with client:
            held.settled(probe_fell_back=args.era == "auto" and client.era is Era.LEGACY)
            try:
                if args.command == "inspect":
                    return await _inspect(client, out, style)
                if args.command == "call":
                    return await _call(client, rest, out, style, detach=args.detach)
                if args.command == "read":
                    return await _read(client, rest, out, style)
                return await _prompt(client, rest, out, style)
            except RemoteError as exc:
                hint = await _name_hint(client, args.command, rest, exc)
                print(style("31", f"error {exc.code}: {exc.message}{hint}"), file=out)
                if exc.has_data:
                    print(pretty(exc.data), file=out)
                return 1
    except RemoteError as exc:  # while connecting
        print(style("31", f"error {exc.code}: {exc.message}"), file=out)
        if exc.has_data:
            print(pretty(exc.data), file=out)
        return 1
    except ClientError as exc:
        failed = True
        _report_failure(args, client, exc)
        return 2
    finally:
        auth = getattr(client.transport, "auth", None)
        if auth is not None:
            await auth.aclose()
        if not failed and not args.quiet:
            _show_stderr(held, err_style)


def _report_failure(args: argparse.Namespace, client: Any, exc: Exception) -> None:
    """A connection problem, said once: with the server's stderr unless the message quotes it already."""
    from ..client import HTTPError

    message = str(exc)
    url = getattr(client.transport, "url", "URL")
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


def _show_stderr(held: ProbeStderr, style: Style) -> None:
    """What a stdio server wrote to stderr, after the output (dimmed on a terminal), less what the
    era probe provoked (`_probe_stderr`: one line says so; ``--wire`` shows it)."""
    text = held.shown().rstrip()
    if text:
        print(style("2", text), file=sys.stderr)
    note = held.note()
    if note is not None:
        print(style("2", note), file=sys.stderr)


#: The errors of an unknown name: -32602 (tools/call, prompts/get) and -32002 (resources/read, 2025-11-25).
_NOT_FOUND_CODES = (-32602, -32002)


async def _name_hint(client: Any, command: str, rest: list[str], exc: Exception) -> str:
    """"; did you mean ..." when the name asked for is not one the server lists (else "")."""
    from ..client import ClientError

    from ._words import did_you_mean

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
            names += [t["uriTemplate"] for t in await client.list_resource_templates()]
        else:
            return ""
    except (ClientError, KeyError, TypeError):
        return ""
    if name in names:
        return ""
    return did_you_mean(name, names)


def _heading(out: TextIO, style: Style, text: str) -> None:
    print("\n" + style("1;36", text), file=out)


async def _inspect(client: Any, out: TextIO, style: Style) -> int:
    from ..protocol import Era

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
    return 0


def _type(schema: Any) -> str:
    if type(schema) is not dict:
        return "any"
    kind = schema.get("type")
    if "enum" in schema:
        return "|".join(orjson.dumps(v).decode() for v in schema["enum"])
    if type(kind) is list:
        return "|".join(kind)
    return kind or "any"


async def _call(client: Any, rest: list[str], out: TextIO, style: Style, *, detach: bool = False) -> int:
    from ._words import ArgumentError, did_you_mean, parse_arguments

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
    from ._task import call_tool_live  # the task hook: status changes live, --detach (cli/_task.py)

    result = await call_tool_live(
        client, name, arguments, detach=detach, out=out, style=style,
        on_progress=lambda p, t, m: print(style("2", f"progress {p}/{t or '?'} {m or ''}"), file=sys.stderr),
    )
    if isinstance(result, int):
        return result
    _print_content(result.content, out, style)
    if result.structured_content is not None and not result.text:  # shown when no text block carries it
        print(style("2", "structuredContent:") + "\n" + pretty(result.structured_content), file=out)
    if result.is_error:
        print(style("31", "(the tool reported an error)"), file=out)
        return 1
    return 0


def _print_content(blocks: list[dict[str, Any]], out: TextIO, style: Style) -> None:
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            print(block.get("text", ""), file=out)
        elif kind in ("image", "audio"):
            print(style("2", f"[{kind} {block.get('mimeType', '')}, {len(block.get('data', ''))} base64 chars]"), file=out)
        elif kind == "resource_link":
            print(style("2", f"[link {block.get('uri')}]"), file=out)
        else:
            print(pretty(block), file=out)


async def _read(client: Any, rest: list[str], out: TextIO, style: Style) -> int:
    if len(rest) != 1:
        raise UsageError("read wants exactly one URI")
    result = await client.read_resource(rest[0])
    for item in result.contents:
        if "text" in item:
            print(item["text"], file=out)
        else:
            print(style("2", f"[{item.get('uri')} {item.get('mimeType', '')}, {len(item.get('blob', ''))} base64 chars]"), file=out)
    return 0


async def _prompt(client: Any, rest: list[str], out: TextIO, style: Style) -> int:
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
        content = message.get("content")
        _print_content(content if type(content) is list else [content], out, style)
    return 0
