"""``wiremcp inspect | call | read | prompt``: a client on the command line.

    wiremcp inspect http://127.0.0.1:8000/mcp
    wiremcp inspect examples/echo.py                      # a server file: run it over stdio
    wiremcp inspect -- npx some-mcp-server --flag         # any stdio command after --
    wiremcp call examples/echo.py echo '{"text": "hi"}'
    wiremcp call echo '{"text": "hi"}' -- python server.py
    wiremcp read URL file:///notes.txt
    wiremcp prompt URL greet who=Ada
    wiremcp inspect --wire examples/echo.py               # every envelope, with direction and timing
    wiremcp call --auth URL whoami                        # OAuth 2.1 (tokens of `wiremcp login`)
    wiremcp inspect --web examples/echo.py                # the web inspector (docs/inspector.md)

TARGET is an ``http(s)://`` URL, a Python file (served with ``wiremcp run``
over stdio), or, after ``--``, any command that speaks MCP on stdio. ``--wire``
prints each raw envelope the client sends (→) and receives (←) with the time
since start, coloured on a terminal and plain when piped. Exit status: 0 on
success, 1 when the tool reported an error (``isError``) or the server
answered with an error, 2 for a usage or connection problem.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from typing import Any, TextIO

import orjson

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
        print(head + "\n" + pretty(data), file=self.out, flush=True)


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

    p = commands.add_parser("inspect", help="connect to a server and show what it offers")
    p.add_argument("target", nargs="*", help="URL or server.py (or a stdio command after --)")
    common(p)
    web = p.add_argument_group("web inspector (docs/inspector.md; needs the [http] extra)")
    web.add_argument("--web", action="store_true", help="serve the inspector page on 127.0.0.1 (URL with a token on stdout)")
    web.add_argument("--web-port", type=int, default=0, metavar="PORT", help="--web: port (default: a free one)")
    web.add_argument("--open", action="store_true", help="--web: open the page in the default browser")
    p = commands.add_parser("call", help="call a tool: TARGET TOOL ['{json arguments}']")
    p.add_argument("words", nargs="*", metavar="ARG", help="TARGET TOOL [JSON] (TARGET may follow as -- command...)")
    common(p)
    p = commands.add_parser("read", help="read a resource: TARGET URI")
    p.add_argument("words", nargs="*", metavar="ARG", help="TARGET URI")
    common(p)
    p = commands.add_parser("prompt", help="get a prompt: TARGET NAME [key=value ...]")
    p.add_argument("words", nargs="*", metavar="ARG", help="TARGET NAME [key=value ...]")
    common(p)


class UsageError(Exception):
    pass


def _client_for(target: list[str], args: argparse.Namespace, on_wire: Any, **extra: Any) -> Any:
    from ..client import Client

    options: dict[str, Any] = {"era": args.era, "timeout": args.timeout, "name": "wiremcp-inspect", "on_wire": on_wire, **extra}
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
    if len(target) == 1 and first.endswith(".py"):
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
    out = out or sys.stdout
    style = Style.for_stream(out, args.no_color)
    try:
        if getattr(args, "web", False):
            from ._web import run_inspect

            if tail is None and not args.target:
                raise UsageError("no TARGET: give a URL, a server .py file, or -- followed by a command")
            return run_inspect(args, tail, _client_for)
        return asyncio.run(_run(args, tail, out, style))
    except UsageError as exc:
        print(f"wiremcp {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


async def _run(args: argparse.Namespace, tail: list[str] | None, out: TextIO, style: Style) -> int:
    from ..client import ClientError, RemoteError

    wire = WirePrinter(out, style) if args.wire else None
    if args.command == "inspect":
        target = tail if tail is not None else list(args.target)
        rest: list[str] = []
    else:
        target, rest = _split(list(args.words), tail)
    client = _client_for(target, args, wire)
    try:
        async with client:
            if args.command == "inspect":
                return await _inspect(client, out, style)
            if args.command == "call":
                return await _call(client, rest, out, style)
            if args.command == "read":
                return await _read(client, rest, out, style)
            return await _prompt(client, rest, out, style)
    except RemoteError as exc:
        print(style("31", f"error {exc.code}: {exc.message}"), file=out)
        if exc.has_data:
            print(pretty(exc.data), file=out)
        return 1
    except ClientError as exc:
        print(f"wiremcp {args.command}: {exc}", file=sys.stderr)
        stderr_text = getattr(client.transport, "stderr_text", None)
        if stderr_text is not None and stderr_text().strip():
            print("server stderr:\n" + stderr_text().rstrip(), file=sys.stderr)
        return 2
    finally:
        auth = getattr(client.transport, "auth", None)
        if auth is not None:
            await auth.aclose()


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


async def _call(client: Any, rest: list[str], out: TextIO, style: Style) -> int:
    if not rest or len(rest) > 2:
        raise UsageError("call wants TOOL and optionally a JSON object of arguments")
    arguments = None
    if len(rest) == 2:
        try:
            arguments = orjson.loads(rest[1])
        except orjson.JSONDecodeError as exc:
            raise UsageError(f"the arguments are not JSON: {exc}") from None
        if type(arguments) is not dict:
            raise UsageError("the arguments must be a JSON object")
    result = await client.call_tool(
        rest[0], arguments, on_progress=lambda p, t, m: print(style("2", f"progress {p}/{t or '?'} {m or ''}"), file=sys.stderr)
    )
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
