"""``wiremcp auth dev`` runs a local authorization server; ``wiremcp auth token`` mints a token from it.

    wiremcp auth dev                                  # http://127.0.0.1:9400, prints the settings and a token
    wiremcp auth token --scope "mcp admin" --subject alice

Rules it keeps:

* development only (`wiremcp.auth.dev`): ``dev`` listens on loopback, and on
  another address only with ``--force-non-loopback``; what it prints says so;
* ``dev`` keeps its key and secret in the per-user state directory
  (``$XDG_STATE_HOME/wiremcp/dev-issuer``, 0700; the file 0600), so tokens
  stay valid across restarts; ``--new-key`` replaces them;
* ``token`` asks the running issuer's token endpoint (client credentials with
  the kept secret, sent only over https or to loopback, never through a proxy
  or a redirect); when nothing listens there it signs with the kept key,
  which the issuer publishes again when it runs. It prints the token alone
  on stdout, for ``$(wiremcp auth token)``; notes go to stderr;
* exit status 0 on success, 1 when the issuer refuses or nothing is kept,
  2 for bad options.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import sys
from typing import Any
from urllib.parse import SplitResult, quote_plus, urlencode, urlsplit

__all__ = ["add_arguments", "handle", "DEFAULT_PORT", "DEFAULT_RESOURCE"]

DEFAULT_PORT = 9400
DEFAULT_RESOURCE = "http://127.0.0.1:8000/mcp"


def add_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """``auth dev`` and ``auth token``."""
    sub = parser.add_subparsers(dest="auth_command", required=True, metavar="SUBCOMMAND")
    dev = sub.add_parser("dev", help="run a local authorization server for development (loopback only)")
    dev.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1; loopback only)")
    dev.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT}; 0 picks a free one)")
    dev.add_argument(
        "--resource", default=DEFAULT_RESOURCE, help=f"the MCP server tokens are for by default (default: {DEFAULT_RESOURCE})"
    )
    dev.add_argument("--new-key", action="store_true", help="replace the kept key and secret (tokens minted before stop working)")
    dev.add_argument(
        "--force-non-loopback", action="store_true", help="listen on a non-loopback --host anyway (anyone reaching it may mint tokens)"
    )
    token = sub.add_parser("token", help="mint an access token from the local issuer; prints it alone")
    token.add_argument("--scope", default="mcp", help='space-separated scopes (default: "mcp")')
    token.add_argument("--subject", default="dev-user", help="the user the token is for (sub; default: dev-user)")
    token.add_argument("--client", default="dev-client", help="the client it was issued to (client_id; default: dev-client)")
    token.add_argument("--resource", help="the MCP server it is for (aud; default: the issuer's --resource)")
    token.add_argument("--issuer", help="the issuer URL (default: the one wiremcp auth dev last ran at)")
    token.add_argument("--lifetime", type=int, default=3600, metavar="SECONDS", help="seconds it is valid (default: 3600)")


def handle(args: argparse.Namespace, tail: list[str] | None) -> int:
    from ..auth.dev import NotLoopback

    try:
        return _dev(args) if args.auth_command == "dev" else _token(args)
    except NotLoopback as exc:
        print(f"wiremcp auth dev: {exc}; pass --force-non-loopback to do it anyway", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"wiremcp auth {args.auth_command}: {exc}", file=sys.stderr)
        return 1


def _dev(args: argparse.Namespace) -> int:
    from ..auth.dev import DevIssuer, bind, load, save, serve, url_of

    sock = bind(args.host, args.port, force=args.force_non_loopback)
    url = url_of(sock, args.host)
    kept = None if args.new_key else load()
    issuer = DevIssuer(url, key=kept.key if kept else None, secret=kept.secret if kept else None, resource=args.resource)
    path = save(issuer)
    token = issuer.mint()
    port = urlsplit(args.resource).port or 8000
    print(
        f"wiremcp auth dev: a local authorization server at {url}, for DEVELOPMENT ONLY\n"
        f"  (its key and secret are kept in {path}; tokens and metadata say development_only)\n\n"
        "Serve a protected server against it, in another terminal:\n"
        f"  WIREMCP_AUTH_ISSUER={url} WIREMCP_AUTH_RESOURCE={args.resource} \\\n"
        f"    wiremcp run examples/protected.py --http --port {port}\n\n"
        f"A token for dev-user through dev-client, scope mcp, for {args.resource}, valid 1 hour:\n"
        f"  {token}\n\n"
        'More tokens: wiremcp auth token --scope "mcp admin" [--subject S] [--client C]\n'
        f'Call a tool: wiremcp call -H "Authorization: Bearer $(wiremcp auth token)" {args.resource} whoami\n'
        "Ctrl-C stops it.",
        flush=True,
    )
    serve(issuer, sock)
    return 0


def _token(args: argparse.Namespace) -> int:
    from ..auth.dev import is_loopback, load

    issuer = load(issuer=args.issuer)
    if issuer is None:
        print("wiremcp auth token: no local issuer has run for this user; start one with: wiremcp auth dev", file=sys.stderr)
        return 1
    target = urlsplit(issuer.issuer)
    if target.scheme != "https" and not is_loopback(target.hostname or ""):
        print(f"wiremcp auth token: {issuer.issuer} is plain http off loopback; the secret is not sent there", file=sys.stderr)
        return 1
    form = {"grant_type": "client_credentials", "scope": args.scope, "subject": args.subject, "lifetime": str(args.lifetime)}
    if args.resource:
        form["resource"] = args.resource
    basic = base64.b64encode(f"{quote_plus(args.client)}:{quote_plus(issuer.secret)}".encode()).decode("ascii")
    try:
        status, answer = _post_form(target, form, basic)
    except ConnectionRefusedError:
        print(f"wiremcp auth token: nothing listens at {issuer.issuer}; signed with its kept key", file=sys.stderr)
        print(issuer.mint(scopes=[args.scope], subject=args.subject, client_id=args.client, resource=args.resource, lifetime=args.lifetime))
        return 0
    token = answer.get("access_token")
    if status != 200 or not isinstance(token, str):
        print(f"wiremcp auth token: the issuer refused ({status}): {answer.get('error')}: {answer.get('error_description')}", file=sys.stderr)
        return 1
    print(token)
    return 0


def _post_form(url: SplitResult, form: dict[str, str], basic: str) -> tuple[int, dict[str, Any]]:
    """POST the token request straight to the issuer: no proxy from the environment, no redirect followed."""
    connection_type = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    connection = connection_type(url.hostname or "", url.port, timeout=10)
    try:
        body = urlencode(form)
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Authorization": f"Basic {basic}"}
        connection.request("POST", url.path.rstrip("/") + "/token", body=body, headers=headers)
        response = connection.getresponse()
        data = response.read(1 << 20)
    finally:
        connection.close()
    try:
        answer = json.loads(data)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ValueError(f"the issuer answered {response.status} without a JSON object")
    return response.status, answer
