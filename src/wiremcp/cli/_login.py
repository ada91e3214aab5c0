"""``wiremcp login URL`` and ``wiremcp logout URL``: OAuth 2.1 tokens for an MCP server, kept on disk.

    wiremcp login https://mcp.example.com/mcp      # log in in the browser; tokens kept for later
    wiremcp call --auth https://mcp.example.com/mcp whoami
    wiremcp logout https://mcp.example.com/mcp     # forget them

Rules it keeps:

* ``login`` always logs in afresh: the entries stored for the server are
  dropped first, then a `Client` connects with an `OAuthClient` whose
  redirect handler is `LoopbackRedirect` (127.0.0.1, an ephemeral port,
  the system browser, ``$BROWSER`` honoured); the server's ``401`` starts
  the flow (docs/auth.md). The authorization URL is printed on stderr too,
  for a machine where no browser opens;
* tokens go to `FileTokenStore()` (``$XDG_STATE_HOME/wiremcp/oauth``,
  directory 0700, files 0600), keyed by issuer and resource, the store
  that ``--auth`` on ``inspect``/``call``/``read``/``prompt`` reads;
* ``logout`` needs no network: it deletes every stored entry whose
  resource is the server's URL or a parent path of it (the entries a
  later ``--auth`` would use for that URL);
* exit status: 0 done, 1 nothing to do (``logout`` with nothing stored,
  ``login`` to a server that asks for no authorization), 2 failure (the
  step that failed is named, never a token).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import webbrowser
from typing import Any, TextIO

__all__ = ["add_parsers", "run_login", "run_logout", "forget", "announcing_browser"]


def add_parsers(commands: Any) -> None:
    p = commands.add_parser("login", help="log in to an OAuth-protected MCP server in the browser; keep the tokens")
    p.add_argument("url", help="the MCP endpoint, http(s)://...")
    p.add_argument(
        "--timeout", type=float, default=300.0, metavar="SECONDS", help="how long to wait for the login (default: 300)"
    )
    p = commands.add_parser("logout", help="forget the tokens kept for an MCP server")
    p.add_argument("url", help="the MCP endpoint, http(s)://...")


async def forget(store: Any, url: str) -> list[tuple[str, str]]:
    """Delete the entries of ``store`` for the server at ``url``; return their (issuer, resource)."""
    from ..auth import resource_matches

    gone = [(issuer, resource) for issuer, resource in await store.keys() if resource_matches(resource, url)]
    for issuer, resource in gone:
        await store.delete(issuer, resource)
    return gone


def _check_url(url: str) -> str | None:
    if not url.startswith(("http://", "https://")):
        return f"{url!r} is not an http(s) URL"
    return None


def announcing_browser(err: TextIO) -> Any:
    def open_browser(url: str) -> object:
        print(f"Opening the browser to log in. If it does not open, visit:\n  {url}", file=err, flush=True)
        return webbrowser.open(url)

    return open_browser


async def _login(url: str, timeout: float, out: TextIO, err: TextIO) -> int:
    from ..auth import AuthError, FileTokenStore, LoopbackRedirect, OAuthClient
    from ..client import Client, ClientError

    store = FileTokenStore()
    await forget(store, url)
    auth = OAuthClient(
        client_name="wiremcp",
        redirect_handler=LoopbackRedirect(timeout=timeout, open_browser=announcing_browser(err)),
        store=store,
    )
    try:
        # the request that meets the 401 carries the whole flow: it waits for the login and a little more
        async with Client.http(url, auth=auth, timeout=timeout + 30, name="wiremcp-login"):
            pass
    except (AuthError, ClientError) as exc:
        print(f"wiremcp login: {exc}", file=err)
        return 2
    finally:
        await auth.aclose()
    if not auth.authorized:
        print(f"{url} did not ask for authorization: nothing to log in to", file=out)
        return 1
    print(f"logged in to {url}", file=out)
    print(f"  authorization server: {auth.issuer}", file=out)
    print(f"  resource: {auth.resource}", file=out)
    print(f"  scopes: {' '.join(auth.granted_scopes) or '(none)'}", file=out)
    print(f"  tokens kept in {store.directory}", file=out)
    return 0


async def _logout(url: str, out: TextIO) -> int:
    from ..auth import FileTokenStore

    store = FileTokenStore()
    gone = await forget(store, url)
    if not gone:
        print(f"no tokens kept for {url}", file=out)
        return 1
    for issuer, resource in gone:
        print(f"logged out of {resource} (authorization server {issuer})", file=out)
    return 0


def run_login(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    problem = _check_url(args.url)
    if problem is not None:
        print(f"wiremcp login: {problem}", file=err)
        return 2
    try:
        return asyncio.run(_login(args.url, args.timeout, out, err))
    except KeyboardInterrupt:
        return 130


def run_logout(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    problem = _check_url(args.url)
    if problem is not None:
        print(f"wiremcp logout: {problem}", file=err)
        return 2
    return asyncio.run(_logout(args.url, out))
