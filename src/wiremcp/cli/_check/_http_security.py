"""Security probes of an MCP server over HTTP: DNS rebinding, session ids, CORS, and with ``--auth`` its tokens.

The runner calls `check_http_security(url, auth=..., issuer=..., headers=...)`; each probe
is also an ``async def probe(url, session) -> list[Finding]`` on an aiohttp
session (the ``http`` extra's client) that the runner may call alone.

Rules it keeps:

* Every probe sends a *control* first: the same request with nothing
  foreign in it (an ``initialize``, else a modern ``server/discover``). A
  probe whose control is refused (401 without a token, 5xx) proves nothing:
  it is a `CHECK_NOT_RUN` finding naming the rule, never a pass.
* The foreign name is ``rebind.wiremcp-check.example`` (a reserved TLD,
  RFC 2606) with the server's port, as a rebinding page would send it.
* A session opened by a probe is closed again (``DELETE`` with its id).
* Tokens (``--auth`` with a local issuer the server trusts, a
  `wiremcp.auth.dev.DevIssuer`: ``wiremcp auth dev`` or
  `wiremcp.testing.issuer.local_issuer(...).issuer`) differ from a good one
  in one respect each: the audience, the expiry, the signature (another key,
  same ``kid``), none at all (``alg: none``). The good one must be accepted
  first; then each of the others must get 401.
* The other probes send the user's headers (``-H``): an ``Authorization``
  among them carries them past a protected server's 401 without an issuer;
  without one, an issuer's good token does.
* Findings carry the exchanges as sent and received (request line, the
  headers that matter, the body's first 300 characters).
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import aiohttp

from ._findings import CHECK_NOT_RUN, Finding, Rule, rule

if TYPE_CHECKING:
    from ...auth.dev import DevIssuer

__all__ = [
    "check_http_security",
    "check_dns_rebinding",
    "check_session_ids",
    "check_cors",
    "check_auth",
    "token_for",
    "FOREIGN_HOST",
]

_HTTP = "basic/transports/streamable-http.mdx (2026-07-28), Security & Endpoint; basic/transports.mdx (2025-11-25)"
_AUTHZ = "basic/authorization/index.mdx (2026-07-28)"

ORIGIN_CHECK = rule(
    "security-origin-check", "security", "error", "A foreign Origin is refused with 403",
    "Servers MUST validate the `Origin` header on all incoming connections to prevent DNS rebinding attacks. "
    "If the `Origin` header is present and invalid, servers MUST respond with HTTP 403 Forbidden.",
    _HTTP,
)
HOST_CHECK = rule(
    "security-host-check", "security", "warning", "A foreign Host is refused",
    "Without these protections, attackers could use DNS rebinding to interact with local MCP servers from remote "
    "websites. (After rebinding, a page's same-origin GET carries no Origin; only its Host names the attacker.)",
    _HTTP + "; security_best_practices.mdx, Local MCP Server Compromise (DNS rebinding)",
)
SESSION_ID_CHARSET = rule(
    "security-session-id-charset", "security", "error", "A session id is visible ASCII only",
    "The session ID MUST only contain visible ASCII characters (ranging from 0x21 to 0x7E).",
    "basic/transports.mdx (2025-11-25), Session Management",
)
SESSION_ID_STRENGTH = rule(
    "security-session-id-strength", "security", "warning", "Session ids are unique and unguessable",
    "The session ID SHOULD be globally unique and cryptographically secure (e.g., a securely generated UUID, a "
    "JWT, or a cryptographic hash).",
    "basic/transports.mdx (2025-11-25), Session Management; security_best_practices.mdx, Session Hijacking",
)
CORS_CREDENTIALS = rule(
    "security-cors-credentials", "security", "warning", "CORS never grants every origin with credentials",
    "Access-Control-Allow-Origin: * together with Access-Control-Allow-Credentials: true is a misconfiguration "
    "(the Fetch standard refuses it): the server meant to let any site send credentials.",
    "WHATWG Fetch, CORS protocol and credentials; " + _HTTP,
)
CORS_REFLECTS = rule(
    "security-cors-reflects-origin", "security", "error", "CORS does not grant an arbitrary origin",
    "Servers MUST validate the `Origin` header on all incoming connections to prevent DNS rebinding attacks. "
    "(A preflight answered with the asking origin lets any web page call the server and read its replies.)",
    _HTTP + "; WHATWG Fetch, CORS protocol",
)
AUTH_CHALLENGE = rule(
    "security-auth-challenge", "security", "error", "A request without a token gets 401 and a Bearer challenge",
    "When authorization is required and not yet proven by the client, servers MUST respond with HTTP 401 "
    "Unauthorized. ... Include the resource metadata URL in the `WWW-Authenticate` HTTP header under "
    "`resource_metadata` when returning `401 Unauthorized` responses",
    _AUTHZ + ", Error Handling; authorization-server-discovery.mdx; RFC 6750 section 3",
)
AUTH_METADATA = rule(
    "security-auth-resource-metadata", "security", "error", "The protected resource metadata is served",
    "MCP servers MUST implement the OAuth 2.0 Protected Resource Metadata (RFC9728) ... The Protected Resource "
    "Metadata document returned by the MCP server MUST include the `authorization_servers` field containing at "
    "least one authorization server.",
    "basic/authorization/authorization-server-discovery.mdx (2026-07-28); RFC 9728 sections 3 and 5.1",
)
_TOKEN_QUOTE = (
    "MCP servers MUST validate that access tokens were issued specifically for them as the intended audience, "
    "according to RFC 8707 Section 2. ... Invalid or expired tokens MUST receive a HTTP 401 response."
)
AUTH_AUDIENCE = rule(
    "security-auth-audience", "security", "error", "A token for another audience is refused with 401",
    _TOKEN_QUOTE, _AUTHZ + ", Token Handling; security-considerations.mdx, Token Audience Binding",
)
AUTH_EXPIRED = rule(
    "security-auth-expired", "security", "error", "An expired token is refused with 401", _TOKEN_QUOTE,
    _AUTHZ + ", Token Handling; OAuth 2.1 section 5.2",
)
AUTH_UNSIGNED = rule(
    "security-auth-unsigned", "security", "error", "An unsigned token (alg: none) is refused with 401", _TOKEN_QUOTE,
    _AUTHZ + ", Token Handling; RFC 8725 section 3.1 (algorithm verification); RFC 9068 section 4",
)
AUTH_SIGNATURE = rule(
    "security-auth-signature", "security", "error", "A token signed by another key is refused with 401", _TOKEN_QUOTE,
    _AUTHZ + ", Token Handling; RFC 9068 section 4 (validate the signature)",
)

FOREIGN_HOST = "rebind.wiremcp-check.example"
#: Bits a session id should carry at least, estimated from its length and alphabet.
MIN_SESSION_BITS = 128
_SESSIONS = 3  # sessions opened to compare their ids
_TIMEOUT = 15.0
_BASE = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
_CLIENT = {"name": "wiremcp-check", "version": "0"}
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": _CLIENT},
}
DISCOVER = {
    "jsonrpc": "2.0", "id": 1, "method": "server/discover",
    "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": _CLIENT,
    }},
}
_DISCOVER_HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
_SHOWN = ("host", "origin", "authorization", "mcp-session-id", "www-authenticate", "location", "content-type")


# -- exchanges -------------------------------------------------------------------


@dataclass
class Exchange:
    """One request and its response, as the findings show them."""

    status: int
    headers: dict[str, str]  # names in lower case
    body: str
    lines: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def _request_lines(method: str, url: str, headers: dict[str, str], body: dict[str, Any] | None) -> list[str]:
    parts = urlsplit(url)
    lines = [f">>> {method} {parts.path or '/'}{'?' + parts.query if parts.query else ''}"]
    for name, value in headers.items():
        if name.lower() in _SHOWN or name.lower().startswith("access-control"):
            shown = value if name.lower() != "authorization" else value[:24] + ("..." if len(value) > 24 else "")
            lines.append(f">>> {name}: {shown}")
    if body is not None:
        lines.append(">>> " + json.dumps(body)[:300])
    return lines


async def _send(
    session: aiohttp.ClientSession, method: str, url: str, headers: dict[str, str] | None = None,
    body: dict[str, Any] | None = None,
) -> Exchange:
    """One exchange; the body read is at most 64 KiB and waits at most a few seconds (an SSE stream may stay open)."""
    sent = {**(_BASE if body is not None else {}), **(headers or {})}
    data = json.dumps(body).encode() if body is not None else None
    timeout = aiohttp.ClientTimeout(total=_TIMEOUT)
    async with session.request(method, url, headers=sent, data=data, allow_redirects=False, timeout=timeout) as response:
        try:
            raw = await asyncio.wait_for(response.content.read(65536), 5)
        except (asyncio.TimeoutError, aiohttp.ClientError):
            raw = b""
        got = {k.lower(): v for k, v in response.headers.items()}
    text = raw.decode("utf-8", "replace")
    lines = _request_lines(method, url, sent, body) + [f"<<< {response.status} {response.reason or ''}".rstrip()]
    lines += [f"<<< {k}: {v}" for k, v in got.items() if k in _SHOWN or k.startswith("access-control")]
    if text:
        lines.append("<<< " + text[:300])
    return Exchange(response.status, got, text, tuple(lines))


async def _release(session: aiohttp.ClientSession, url: str, exchange: Exchange, headers: dict[str, str] | None = None) -> None:
    """Close the legacy session an exchange opened, if it did; best effort."""
    sid = exchange.headers.get("mcp-session-id")
    if sid and sid.isascii() and sid.isprintable():
        try:
            async with session.delete(url, headers={**(headers or {}), "Mcp-Session-Id": sid}, timeout=aiohttp.ClientTimeout(total=5)):
                pass
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError):
            pass


async def _control(session: aiohttp.ClientSession, url: str) -> tuple[dict[str, Any], dict[str, str], Exchange]:
    """A request this server accepts: ``initialize``, else ``server/discover`` (its body, headers and exchange)."""
    first = await _send(session, "POST", url, {}, INITIALIZE)
    await _release(session, url, first)
    if first.ok:
        return INITIALIZE, {}, first
    second = await _send(session, "POST", url, _DISCOVER_HEADERS, DISCOVER)
    if second.ok:
        return DISCOVER, _DISCOVER_HEADERS, second
    return INITIALIZE, {}, first


def _not_run(rules: tuple[Rule, ...], why: str, url: str, exchange: Exchange | None = None) -> list[Finding]:
    lines = exchange.lines if exchange else ()
    return [Finding(CHECK_NOT_RUN, f"{r.id}: {why}", url, lines) for r in rules]


def _foreign(url: str) -> tuple[str, str]:
    """The Host and Origin a rebinding page on the server's port sends."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{FOREIGN_HOST}:{port}", f"{parts.scheme}://{FOREIGN_HOST}:{port}"


# -- DNS rebinding -------------------------------------------------------------------


async def check_dns_rebinding(url: str, session: aiohttp.ClientSession) -> list[Finding]:
    """A foreign ``Host`` must be refused (any 4xx), a foreign ``Origin`` with 403."""
    body, headers, control = await _control(session, url)
    if not control.ok:
        return _not_run((HOST_CHECK, ORIGIN_CHECK), f"the control request got {control.status}", url, control)
    host, origin = _foreign(url)
    findings: list[Finding] = []
    by_host = await _send(session, "POST", url, {**headers, "Host": host}, body)
    await _release(session, url, by_host)
    if by_host.ok or by_host.status >= 500:
        findings.append(Finding(HOST_CHECK, f"Host {host} was answered {by_host.status}, not refused", url, by_host.lines))
    by_origin = await _send(session, "POST", url, {**headers, "Origin": origin}, body)
    await _release(session, url, by_origin)
    if by_origin.status != 403:
        what = "accepted" if by_origin.ok else "refused"
        findings.append(Finding(ORIGIN_CHECK, f"Origin {origin} was {what} with {by_origin.status}, not 403", url, by_origin.lines))
    return findings


# -- session ids ---------------------------------------------------------------------


def _alphabet_bits(ids: list[str]) -> float:
    """log2 of the alphabet the ids are drawn from, by the classes of characters seen."""
    seen = set("".join(ids))
    size = 0
    if seen & set("0123456789"):
        size += 10
    lower, upper = {c for c in seen if "a" <= c <= "z"}, {c for c in seen if "A" <= c <= "Z"}
    hexish = lower <= set("abcdef") and upper <= set("ABCDEF") and not (lower and upper)
    if hexish and (lower or upper):
        size += 6
    else:
        size += 26 * ((1 if lower else 0) + (1 if upper else 0))
    size += len(seen - set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    return math.log2(size) if size > 1 else 0.0


def _common_affixes(ids: list[str]) -> tuple[int, int]:
    prefix = 0
    while all(len(i) > prefix for i in ids) and len({i[prefix] for i in ids}) == 1:
        prefix += 1
    suffix = 0
    while all(len(i) - prefix > suffix for i in ids) and len({i[-1 - suffix] for i in ids}) == 1:
        suffix += 1
    return prefix, suffix


def session_id_problems(ids: list[str]) -> list[str]:
    """Why these ids (of sessions opened one after another) are guessable; empty when they look strong."""
    if len(set(ids)) < len(ids):
        return [f"two sessions got the same id {ids[0]!r}"]
    prefix, suffix = _common_affixes(ids)
    middles = [i[prefix:len(i) - suffix] for i in ids]
    problems = []
    numbers = [int(m, 16 if any(c in "abcdefABCDEF" for c in "".join(middles)) else 10) for m in middles
               if m and all(c in "0123456789abcdefABCDEF" for c in m) and len(m) <= 12]
    if len(numbers) == len(ids) and max(numbers) - min(numbers) < 1000:
        problems.append(f"the ids are sequential: {', '.join(repr(i) for i in ids)}")
    # a shared affix of one character is as likely chance as design: only longer ones are taken off
    varying = [i[prefix if prefix > 1 else 0:len(i) - (suffix if suffix > 1 else 0)] for i in ids]
    bits = min(len(m) for m in varying) * _alphabet_bits(varying)
    if bits < MIN_SESSION_BITS:
        problems.append(f"about {bits:.0f} bits each ({min(len(m) for m in varying)} varying characters), "
                        f"fewer than {MIN_SESSION_BITS}: {ids[0]!r}")
    return problems


async def check_session_ids(url: str, session: aiohttp.ClientSession) -> list[Finding]:
    """Open a few legacy sessions: their ``Mcp-Session-Id`` is visible ASCII, unique and hard to guess."""
    exchanges = []
    for _ in range(_SESSIONS):
        exchange = await _send(session, "POST", url, {}, INITIALIZE)
        exchanges.append(exchange)
        if not exchange.ok or "mcp-session-id" not in exchange.headers:
            break
    for exchange in exchanges:
        await _release(session, url, exchange)
    given = [e for e in exchanges if e.ok and "mcp-session-id" in e.headers]
    if len(given) < _SESSIONS:
        why = "the server gives no Mcp-Session-Id (stateless, or modern only)" if exchanges[-1].ok else (
            f"initialize got {exchanges[-1].status}")
        return _not_run((SESSION_ID_CHARSET, SESSION_ID_STRENGTH), why, url, exchanges[-1])
    ids = [e.headers["mcp-session-id"] for e in given]
    lines = tuple(line for e in given for line in (e.lines[0], *(x for x in e.lines if x.startswith("<<< mcp-session-id"))))
    findings = []
    bad = [i for i in ids if not i or any(not 0x21 <= ord(c) <= 0x7E for c in i)]
    if bad:
        findings.append(Finding(SESSION_ID_CHARSET, f"session id {bad[0]!r} has characters outside 0x21-0x7E", url, lines))
    problems = session_id_problems(ids)
    if problems:
        findings.append(Finding(SESSION_ID_STRENGTH, "; ".join(problems), url, lines))
    return findings


# -- CORS ------------------------------------------------------------------------------


async def check_cors(url: str, session: aiohttp.ClientSession) -> list[Finding]:
    """A preflight from a foreign origin: neither granted to it by name nor to ``*`` with credentials."""
    _, origin = _foreign(url)
    preflight = await _send(session, "OPTIONS", url, {
        "Origin": origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type, mcp-session-id, mcp-protocol-version, authorization",
    })
    allowed = preflight.headers.get("access-control-allow-origin", "").strip()
    credentials = preflight.headers.get("access-control-allow-credentials", "").strip().lower() == "true"
    findings = []
    if allowed == origin:
        also = " and with credentials" if credentials else ""
        findings.append(Finding(CORS_REFLECTS, f"the preflight from {origin} was granted to it{also}", url, preflight.lines))
    if allowed == "*" and credentials:
        findings.append(Finding(CORS_CREDENTIALS, "the preflight grants '*' with credentials", url, preflight.lines))
    return findings


# -- authorization ---------------------------------------------------------------------


async def _metadata(session: aiohttp.ClientSession, url: str, advertised: str | None) -> tuple[dict[str, Any] | None, list[str], tuple[str, ...]]:
    """The protected resource metadata (RFC 9728) and where it was looked for; None when none is served."""
    from ...auth import prm_urls

    tried: list[str] = []
    lines: tuple[str, ...] = ()
    for where in ([advertised] if advertised else []) + prm_urls(url):
        if where in tried:
            continue
        tried.append(where)
        got = await _send(session, "GET", where, {"Accept": "application/json"})
        lines += got.lines
        if got.status == 200:
            try:
                doc = json.loads(got.body)
            except ValueError:
                continue
            if type(doc) is dict:
                return doc, tried, lines
    return None, tried, lines


def _metadata_problem(doc: dict[str, Any], url: str) -> str | None:
    from ...auth import resource_matches

    servers = doc.get("authorization_servers")
    if type(servers) is not list or not servers or not all(type(s) is str for s in servers):
        return f"authorization_servers is {json.dumps(servers)[:80]}, not a list of at least one issuer URL"
    resource = doc.get("resource")
    if type(resource) is not str or not resource_matches(resource, url):
        return f"resource {json.dumps(resource)[:80]} does not identify {url}"
    return None


async def _challenge_and_metadata(url: str, session: aiohttp.ClientSession) -> tuple[list[Finding], dict[str, Any] | None, list[str]]:
    """The 401 challenge and the metadata: findings, the metadata (or None) and the scopes the challenge asks."""
    from ...auth import bearer_challenge

    findings: list[Finding] = []
    bare = await _send(session, "POST", url, {}, INITIALIZE)
    await _release(session, url, bare)
    challenge = bearer_challenge(bare.headers.get("www-authenticate"))
    if bare.status != 401:
        findings.append(Finding(AUTH_CHALLENGE, f"a request without a token got {bare.status}, not 401", url, bare.lines))
    elif challenge is None:
        findings.append(Finding(AUTH_CHALLENGE, "the 401 has no WWW-Authenticate Bearer challenge", url, bare.lines))
    advertised = challenge.resource_metadata if challenge else None
    doc, tried, lines = await _metadata(session, url, advertised)
    if doc is None:
        findings.append(Finding(AUTH_METADATA, f"no metadata at {', '.join(tried)}", url, lines))
    elif problem := _metadata_problem(doc, url):
        findings.append(Finding(AUTH_METADATA, problem, url, lines))
    # a challenge without resource_metadata is fine when the well-known URL serves it: either is enough
    scopes = (challenge.scope if challenge else None) or _scopes(doc)
    return findings, doc, scopes


def _scopes(doc: dict[str, Any] | None) -> list[str]:
    supported = doc.get("scopes_supported") if doc else None
    return [s for s in supported if type(s) is str][:1] if type(supported) is list and supported else ["mcp"]


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).rstrip(b"=").decode()


def _bad_tokens(issuer: DevIssuer, good: str) -> list[tuple[Rule, str, str]]:
    """Tokens that differ from ``good`` in one respect each: (rule, what it is, the token)."""
    import jwt

    from ...auth import generate_key, sign_jwt

    claims = {k: v for k, v in jwt.decode(good, options={"verify_signature": False}).items() if k not in ("iat", "exp", "jti")}
    header = {"typ": "at+jwt", "kid": issuer.kid}
    now = int(time.time())
    other = issuer.mint(scopes=str(claims.get("scope", "mcp")).split(), resource="https://other-resource.wiremcp-check.example/mcp")
    expired = sign_jwt(issuer.key, {**claims, "iat": now - 7200, "exp": now - 3600}, algorithm=issuer.algorithm, headers=header)
    forged = sign_jwt(generate_key(), claims, algorithm="ES256", headers=header)
    unsigned = _b64({"alg": "none", **header}) + "." + _b64({**claims, "iat": now, "exp": now + 300}) + "."
    return [
        (AUTH_AUDIENCE, "a token for https://other-resource.wiremcp-check.example/mcp", other),
        (AUTH_EXPIRED, "a token expired an hour ago", expired),
        (AUTH_SIGNATURE, "a token signed by another key under the issuer's kid", forged),
        (AUTH_UNSIGNED, "an unsigned token (alg: none)", unsigned),
    ]


async def check_tokens(url: str, session: aiohttp.ClientSession, issuer: DevIssuer, audience: str, scopes: list[str]) -> tuple[list[Finding], str | None]:
    """A good token is accepted; each bad one gets 401. Returns the findings and the good token (None if refused)."""
    rules = (AUTH_AUDIENCE, AUTH_EXPIRED, AUTH_SIGNATURE, AUTH_UNSIGNED)
    good = issuer.mint(scopes=scopes, resource=audience)
    accepted = await _send(session, "POST", url, {"Authorization": f"Bearer {good}"}, INITIALIZE)
    await _release(session, url, accepted, {"Authorization": f"Bearer {good}"})
    if accepted.status in (401, 403) or accepted.status >= 500:
        why = f"a good token of {issuer.issuer} for {audience} got {accepted.status}: does the server trust this issuer?"
        return _not_run(rules, why, url, accepted), None
    findings = []
    for checked, what, token in _bad_tokens(issuer, good):
        got = await _send(session, "POST", url, {"Authorization": f"Bearer {token}"}, INITIALIZE)
        await _release(session, url, got, {"Authorization": f"Bearer {token}"})
        if got.status != 401:
            verdict = "accepted" if got.ok else "refused"
            findings.append(Finding(checked, f"{what} was {verdict} with {got.status}, not 401", url, got.lines))
    return findings, good


async def check_auth(url: str, session: aiohttp.ClientSession, issuer: DevIssuer | None = None) -> tuple[list[Finding], str | None]:
    """The 401 challenge, the metadata, and with ``issuer`` its tokens; the findings and a good token, if one was accepted."""
    findings, doc, scopes = await _challenge_and_metadata(url, session)
    if issuer is None:
        return findings, None
    resource = doc.get("resource") if doc else None
    audience = resource if type(resource) is str else url
    more, good = await check_tokens(url, session, issuer, audience, scopes)
    return findings + more, good


async def token_for(url: str, issuer: DevIssuer) -> str:
    """A good token of ``issuer`` for the server at ``url``: for the resource and every scope its metadata names."""
    resource, scopes = url, ["mcp"]
    try:
        async with aiohttp.ClientSession() as session:
            doc, _, _ = await _metadata(session, url, None)
    except (ImportError, aiohttp.ClientError, asyncio.TimeoutError):
        doc = None
    if doc is not None:
        if type(doc.get("resource")) is str:
            resource = doc["resource"]
        supported = doc.get("scopes_supported")
        if type(supported) is list and supported and all(type(s) is str for s in supported):
            scopes = supported
    return issuer.mint(scopes=scopes, resource=resource)


# -- entry -------------------------------------------------------------------------------


async def check_http_security(
    url: str, *, auth: bool, issuer: DevIssuer | None = None, headers: dict[str, str] | None = None
) -> list[Finding]:
    """Every HTTP security probe of the server at ``url`` (its MCP endpoint).

    ``auth``: the server is protected: check its challenge and metadata and,
    with ``issuer`` (one the server trusts), its token validation. ``headers``
    (the user's ``-H``) go with every probe but those of the challenge and the
    tokens; the probes carry the user's ``Authorization`` if given, else a
    good token of ``issuer``.
    """
    findings: list[Finding] = []
    token: str | None = None
    async with aiohttp.ClientSession() as session:
        if auth:
            try:
                found, token = await check_auth(url, session, issuer)
                findings += found
            except (ImportError, aiohttp.ClientError, asyncio.TimeoutError) as exc:
                rules = (AUTH_CHALLENGE, AUTH_METADATA) + ((AUTH_AUDIENCE, AUTH_EXPIRED, AUTH_SIGNATURE, AUTH_UNSIGNED) if issuer else ())
                why = f"needs wiremcp[auth] ({exc})" if isinstance(exc, ImportError) else f"{type(exc).__name__}: {exc}"
                findings += _not_run(rules, why, url)
    sent = dict(headers or {})
    if token and not any(name.lower() == "authorization" for name in sent):
        sent["Authorization"] = f"Bearer {token}"
    async with aiohttp.ClientSession(headers=sent or None) as session:
        probes = (
            (check_dns_rebinding, (HOST_CHECK, ORIGIN_CHECK)),
            (check_cors, (CORS_REFLECTS, CORS_CREDENTIALS)),
            (check_session_ids, (SESSION_ID_CHARSET, SESSION_ID_STRENGTH)),
        )
        for probe, rules in probes:
            try:
                findings += await probe(url, session)
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                findings += _not_run(rules, f"{type(exc).__name__}: {exc}", url)
    return findings
