"""How the client commands (``inspect``, ``call``, ``read``, ``prompt``, ``task``) reach a server.

Rules:

* TARGET is an ``http(s)://`` URL, a Python file or module as ``wiremcp
  run`` takes it (served with ``wiremcp run`` over stdio, `_target`), or,
  after ``--``, any command that speaks MCP on stdio (a lone ``.py`` word
  there is still a server file); `split_target` takes it off the command's
  words, `client_for` builds the `Client`;
* a URL takes no further words, and ``--header`` wants ``NAME:VALUE``: a
  `UsageError` otherwise; so is a URL without the ``[http]`` extra's aiohttp
  (`url_problem`: one line with the install command, not a traceback);
* ``--auth`` on a URL: OAuth 2.1 with the tokens ``wiremcp login`` keeps,
  else a login in the browser whose URL is also said on stderr
  (`announcing_browser`); the first request then waits at least 300 s;
* a connection that could not be made or broke is said as a person says it
  (`unreachable`: ``cannot connect to URL: connection refused``), never as
  the repr of the transport's exception;
* `run_client` runs a command's coroutine: the output and stderr are made
  harmless for a terminal (`_terminal`), a `UsageError` is one line and
  status 2, Ctrl-C is status 130; `close_auth` closes the OAuth client.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from typing import Any, Callable, Coroutine, TextIO

from ..client import Client, ConnectionClosed, NotSent
from ._output import INTERRUPTED, Style, UsageError, fail, missing_extra
from ._target import is_server_target
from ._terminal import for_terminal

__all__ = [
    "add_connection_options",
    "announcing_browser",
    "client_for",
    "close_auth",
    "run_client",
    "split_target",
    "unreachable",
    "url_problem",
]


def add_connection_options(p: argparse.ArgumentParser) -> None:
    """The options every client command has, before its own ``--auth``."""
    p.add_argument("--wire", action="store_true", help="print every envelope sent and received, with timing")
    p.add_argument("--no-color", action="store_true", help="never colour the output")
    p.add_argument("--era", choices=["auto", "modern", "legacy"], default="auto", help="protocol era (default: probe)")
    p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="per-request timeout (default: 30)")
    p.add_argument("-H", "--header", action="append", default=[], metavar="NAME:VALUE", help="extra HTTP header, repeatable")


def announcing_browser(err: TextIO) -> Callable[[str], object]:
    """A browser opener for `LoopbackRedirect` that first says the URL on ``err`` (for a machine with no browser)."""

    def open_browser(url: str) -> object:
        import webbrowser  # on first use: only a login opens a browser

        print(f"Opening the browser to log in. If it does not open, visit:\n  {url}", file=err, flush=True)
        return webbrowser.open(url)

    return open_browser


def split_target(words: list[str], tail: list[str] | None) -> tuple[list[str], list[str]]:
    """``(target, rest)``: the target is the stdio command after ``--``, else the first word."""
    if tail is not None:
        return tail, words
    if not words:
        raise UsageError("no TARGET given")
    return [words[0]], words[1:]


def client_for(
    target: list[str], args: argparse.Namespace, on_wire: Any, answers: Any = None, command: bool = False,
    on_stderr: Any = None, **extra: Any
) -> Client:
    """The client for TARGET; ``command``: it came after ``--`` (a command line, unless a lone ``.py``).

    ``on_stderr`` is given to a stdio client (see `_probe_stderr`)."""
    options: dict[str, Any] = {"era": args.era, "timeout": args.timeout, "name": "wiremcp-inspect", "on_wire": on_wire, **extra}
    if answers is not None:
        options["elicitation"] = answers
    if getattr(args, "tasks", False):  # call and task: take part in tasks (cli/_task.py)
        options["tasks"] = True
    if not target:
        raise UsageError("no TARGET: give a URL, a server .py file, or -- followed by a command")
    first = target[0]
    problem = url_problem(target)
    if problem is not None:
        raise UsageError(problem)
    if first.startswith(("http://", "https://")):
        if len(target) > 1:
            raise UsageError("a URL target takes no further words")
        headers = _headers(args.header)
        auth = _auth(args, options)
        return Client.http(first, headers=headers, auth=auth, **options)
    if on_stderr is not None:
        options["on_stderr"] = on_stderr
    if len(target) == 1 and (first.endswith(".py") if command else is_server_target(first)):
        return Client.stdio(sys.executable, ["-m", "wiremcp", "run", first], **options)
    return Client.stdio(first, target[1:], **options)


def url_problem(target: list[str]) -> str | None:
    """Why TARGET, a URL, cannot be reached from this install (no aiohttp: the ``[http]`` extra), else None."""
    if not target or not target[0].startswith(("http://", "https://")):
        return None
    return missing_extra("a URL target", "aiohttp")


def unreachable(exc: BaseException, url: str) -> str | None:
    """``cannot connect to URL: REASON`` (or ``the connection to URL broke: REASON``) when
    ``exc`` is a connection the transport could not make (`NotSent`) or lost (`ConnectionClosed`)
    for a reason the system gave (refused, unknown host, timeout, TLS), else None.

    The one place the CLI turns the transport's connection errors into a line: the reason
    is read from the exceptions ``exc`` was raised from (aiohttp's, then the OS's). Only for a
    URL: a stdio server that cannot start says it better (``cannot start 'cmd': ...``)."""
    if not isinstance(exc, ConnectionClosed) or not url.startswith(("http://", "https://")):
        return None
    causes: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and cause not in causes and len(causes) < 10:
        causes.append(cause)
        cause = cause.__cause__ or cause.__context__
    reason = _reason(causes[1:], url)
    if reason is None:
        return None
    return f"cannot connect to {url}: {reason}" if isinstance(exc, NotSent) else f"the connection to {url} broke: {reason}"


def _reason(causes: list[BaseException], url: str) -> str | None:
    """The most telling reason among ``causes`` (the transport's exception and what it was raised from)."""
    import socket
    import ssl
    from urllib.parse import urlsplit

    for exc in causes:  # the most specific first, wherever it is in the chain
        if isinstance(exc, ssl.SSLCertVerificationError):
            return f"its TLS certificate is not trusted ({exc.verify_message})"
        if isinstance(exc, socket.gaierror):
            return f"no such host {urlsplit(url).hostname!r} ({exc.strerror})"
        if isinstance(exc, ConnectionRefusedError):
            return "connection refused (is the server running, on that port?)"
        if isinstance(exc, ConnectionResetError):
            return "the server reset the connection"
    for exc in causes:
        if isinstance(exc, ssl.SSLError):
            return f"TLS failed ({exc.reason or exc})"
        if isinstance(exc, TimeoutError):
            return "the connection timed out"
        if isinstance(exc, OSError) and exc.strerror:
            return exc.strerror[:1].lower() + exc.strerror[1:]
    return None


def _headers(items: list[str]) -> dict[str, str]:
    headers = {}
    for item in items:
        name, sep, value = item.partition(":")
        if not sep:
            raise UsageError(f"--header wants NAME:VALUE, not {item!r}")
        headers[name.strip()] = value.strip()
    return headers


def _auth(args: argparse.Namespace, options: dict[str, Any]) -> Any:
    """With ``--auth``: the `OAuthClient` of ``wiremcp login``'s store (and a longer first timeout); else None."""
    if not args.auth:
        return None
    from ..auth import FileTokenStore, LoopbackRedirect, OAuthClient  # on first use: OAuth only with --auth

    handler = LoopbackRedirect(open_browser=announcing_browser(sys.stderr))
    options["timeout"] = max(args.timeout, 300.0)  # the first request waits for the login
    return OAuthClient(client_name="wiremcp", redirect_handler=handler, store=FileTokenStore())


async def close_auth(client: Client) -> None:
    """Close the OAuth client of an HTTP target's transport, when it has one."""
    auth = getattr(client.transport, "auth", None)
    if auth is not None:
        await auth.aclose()


def run_client(
    command: str, args: argparse.Namespace, work: Callable[[TextIO, Style], Coroutine[Any, Any, int]], out: TextIO | None
) -> int:
    """Run ``work(out, style)`` on a new event loop, with the rules of the module; its exit status."""
    out = for_terminal(out or sys.stdout)  # a server's text never acts on the terminal (_terminal)
    style = Style.for_stream(out, args.no_color)
    try:
        with contextlib.redirect_stderr(for_terminal(sys.stderr)):
            return asyncio.run(work(out, style))
    except UsageError as exc:
        return fail(command, str(exc))
    except KeyboardInterrupt:
        return INTERRUPTED
