"""``wiremcp login URL`` and ``wiremcp logout URL``: OAuth 2.1 tokens for an MCP server, kept on disk.

    wiremcp login https://mcp.example.com/mcp      # log in in the browser; tokens kept for later
    wiremcp call --auth https://mcp.example.com/mcp whoami
    wiremcp logout https://mcp.example.com/mcp     # revoke them (where the server can) and forget them

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
* ``logout`` takes every stored entry whose resource is the server's URL
  or a parent path of it (the entries a later ``--auth`` would use for that
  URL), revokes its tokens (RFC 7009) where the authorization server offers
  it (``revocation_endpoint``; `OAuthClient.logout`), then deletes it. A
  revocation that fails (refused, unreachable) is said in one line on
  stderr, and the entry is deleted all the same: the exit status is still 0;
* exit status: 0 done, 1 nothing to do (``logout`` with nothing stored,
  ``login`` to a server that asks for no authorization), 2 failure (the
  step that failed is named, never a token).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any, TextIO

from ..client import Client, ClientError
from ._client import announcing_browser, unreachable
from ._output import FAILED, INTERRUPTED, OK, USAGE, log_warnings, missing_extra

__all__ = ["add_arguments", "handle", "run_login", "run_logout", "forget"]


def add_arguments(p: argparse.ArgumentParser, command: str) -> None:
    """The arguments of ``wiremcp login`` and ``wiremcp logout``."""
    p.add_argument("url", help="the MCP endpoint, http(s)://...")
    if command == "login":
        p.add_argument(
            "--timeout", type=float, default=300.0, metavar="SECONDS", help="how long to wait for the login (default: 300)"
        )


def handle(args: argparse.Namespace, tail: list[str] | None) -> int:
    """``wiremcp login URL`` or ``wiremcp logout URL``; the exit status."""
    log_warnings()
    return run_login(args) if args.command == "login" else run_logout(args)


async def forget(store: Any, url: str) -> list[tuple[str, str]]:
    """Delete the entries of ``store`` for the server at ``url``; return their (issuer, resource)."""
    from ..auth import resource_matches  # the [auth] extra: loaded when used, so --help works without it

    gone = [(issuer, resource) for issuer, resource in await store.keys() if resource_matches(resource, url)]
    for issuer, resource in gone:
        await store.delete(issuer, resource)
    return gone


def _check_url(url: str, doing: str) -> str | None:
    if not url.startswith(("http://", "https://")):
        return f"{url!r} is not an http(s) URL"
    return missing_extra(doing, "aiohttp") or missing_extra(doing, "httpx", "auth")


async def _login(url: str, timeout: float, out: TextIO, err: TextIO) -> int:
    from ..auth import AuthError, FileTokenStore, LoopbackRedirect, OAuthClient  # the [auth] extra, as above

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
        print(f"wiremcp login: {unreachable(exc, url) or exc}", file=err)
        return USAGE
    finally:
        await auth.aclose()
    if not auth.authorized:
        print(f"{url} did not ask for authorization: nothing to log in to", file=out)
        return FAILED
    print(f"logged in to {url}", file=out)
    print(f"  authorization server: {auth.issuer}", file=out)
    print(f"  resource: {auth.resource}", file=out)
    print(f"  scopes: {' '.join(auth.granted_scopes) or '(none)'}", file=out)
    print(f"  tokens kept in {store.directory}", file=out)
    return OK


async def _logout(url: str, out: TextIO, err: TextIO) -> int:
    from ..auth import FileTokenStore, OAuthClient  # the [auth] extra, as above

    auth = OAuthClient(client_name="wiremcp", store=FileTokenStore())
    try:
        outcomes = await auth.logout(url)
    finally:
        await auth.aclose()
    if not outcomes:
        print(f"no tokens kept for {url}", file=out)
        return FAILED
    for outcome in outcomes:
        if outcome.revoked:
            how = "tokens revoked"
        elif outcome.offered or outcome.problem is not None:
            how = "tokens forgotten here"
        else:
            how = "tokens forgotten here; the authorization server offers no revocation"
        print(f"logged out of {outcome.resource} (authorization server {outcome.issuer}): {how}", file=out)
        if outcome.problem is not None:
            print(
                f"wiremcp logout: could not revoke the tokens at {outcome.issuer} ({outcome.problem}); "
                "they were removed here all the same",
                file=err,
            )
    return OK


def run_login(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    problem = _check_url(args.url, "logging in")
    if problem is not None:
        print(f"wiremcp login: {problem}", file=err)
        return USAGE
    try:
        return asyncio.run(_login(args.url, args.timeout, out, err))
    except KeyboardInterrupt:
        return INTERRUPTED


def run_logout(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    problem = _check_url(args.url, "logging out")
    if problem is not None:
        print(f"wiremcp logout: {problem}", file=err)
        return USAGE
    try:
        return asyncio.run(_logout(args.url, out, err))
    except KeyboardInterrupt:
        return INTERRUPTED
