"""The OAuth proxy's rules one by one, in process (the browser flow is in test_proxy_flow.py).

The proxy is served through httpx's ASGI transport; codes are planted in its store as its
callback would leave them (the upstream leg is the end-to-end tests' business). Checked:
registration (RFC 7591) refusals, client authentication, the code's bindings (client, redirect
URI, PKCE, resource, single use; a replayed code revokes its grant), refresh rotation with reuse
detection, scope narrowing only, RFC 7009 revocation, and the sealed store (a record moved to
another slot, or read with another key, does not open). A server that does not use the proxy does
not load it.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
import subprocess
import sys
import textwrap
from typing import Any

import pytest

pytest.importorskip("jwt")

import httpx  # noqa: E402

from wiremcp.auth.proxy import OAuthProxy, Upstream  # noqa: E402
from wiremcp.auth.proxy._store import SealedStore  # noqa: E402
from wiremcp.auth.server import JWTVerifier  # noqa: E402
from wiremcp.server.storage import MemoryStore  # noqa: E402

ISSUER = "https://mcp.example.com"
RESOURCE = ISSUER + "/mcp"
REDIRECT = "http://127.0.0.1:7777/callback"
VERIFIER = "v" * 43


def challenge(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def make_proxy(kv: Any = None) -> OAuthProxy:
    upstream = Upstream(
        issuer="https://idp.example.com", authorization_endpoint="https://idp.example.com/auth",
        token_endpoint="https://idp.example.com/token", client_id="proxy", client_secret="s3cret",
        verifier=JWTVerifier(issuer="https://idp.example.com", resource="https://idp.example.com/api"),
    )
    return OAuthProxy(upstream, issuer=ISSUER, resource=RESOURCE, scopes=["read", "write"], store=kv or MemoryStore(),
                      key=b"k" * 32)


class Harness:
    def __init__(self, kv: Any = None) -> None:
        self.proxy = make_proxy(kv)
        transport = httpx.ASGITransport(app=self.proxy)  # type: ignore[arg-type]  # dict vs MutableMapping scopes
        self.http = httpx.AsyncClient(transport=transport, base_url=ISSUER)

    async def register(self, **metadata: Any) -> httpx.Response:
        body = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"], **metadata}
        return await self.http.post("/oauth/register", json=body)

    async def client(self, **metadata: Any) -> dict[str, Any]:
        answer = await self.register(**metadata)
        assert answer.status_code == 201, answer.text
        return dict(answer.json())

    async def plant_code(self, client_id: str, code: str = "the-code", scopes: tuple[str, ...] = ("read", "write")) -> str:
        """A code as the callback leaves it: a new grant for alice, the pending authorization's bindings."""
        pending = {"client_id": client_id, "scopes": list(scopes), "redirect_uri": REDIRECT}
        grant_id = await self.proxy.new_grant("alice", pending, {"access_token": "upstream-secret"})
        record = {"client_id": client_id, "redirect_uri": REDIRECT, "code_challenge": challenge(VERIFIER),
                  "scopes": list(scopes), "resource": RESOURCE, "user": "alice", "grant_id": grant_id}
        await self.proxy.store.put("code", (code,), record, ttl=60)
        return code

    async def token(self, **form: str) -> httpx.Response:
        return await self.http.post("/oauth/token", data=form)

    async def redeem(self, client_id: str, code: str = "the-code", **override: str) -> httpx.Response:
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": VERIFIER,
                "client_id": client_id, "resource": RESOURCE, **override}
        return await self.token(**form)

    async def live(self, access_token: str) -> bool:
        rs = self.proxy.resource_server()
        claims = self.proxy.own_claims(access_token)
        assert claims is not None and rs.resource == RESOURCE
        return await self.proxy.store.get("grant", claims["gid"]) is not None


def run(scenario: Any) -> Any:
    async def go() -> Any:
        harness = Harness()
        try:
            return await scenario(harness)
        finally:
            await harness.http.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("metadata, error", [
    ({"redirect_uris": []}, "invalid_redirect_uri"),
    ({"redirect_uris": ["http://evil.example.com/cb"]}, "invalid_redirect_uri"),  # http off loopback
    ({"redirect_uris": ["https://app.example.com/cb#frag"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri"),
    ({"token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"),
    ({"grant_types": ["client_credentials"]}, "invalid_client_metadata"),
    ({"response_types": ["token"]}, "invalid_client_metadata"),
])
def test_registration_refuses(metadata: dict[str, Any], error: str) -> None:
    async def scenario(h: Harness) -> httpx.Response:
        return await h.register(**metadata)

    answer = run(scenario)
    assert answer.status_code == 400 and answer.json()["error"] == error


def test_a_confidential_client_authenticates_as_registered() -> None:
    async def scenario(h: Harness) -> list[int]:
        client = await h.client(token_endpoint_auth_method="client_secret_basic")
        cid, secret = client["client_id"], client["client_secret"]
        form = {"grant_type": "refresh_token", "refresh_token": "x"}
        no_secret = await h.token(client_id=cid, **form)
        wrong = await h.http.post("/oauth/token", data=form, auth=(cid, secret + "x"))
        post_instead = await h.token(client_id=cid, client_secret=secret, **form)
        right = await h.http.post("/oauth/token", data=form, auth=(cid, secret))
        return [no_secret.status_code, wrong.status_code, post_instead.status_code, right.status_code]

    # authenticated, the unknown refresh token is a 400 invalid_grant; every other way is 401
    assert run(scenario) == [401, 401, 401, 400]


@pytest.mark.parametrize("override, error", [
    ({"code_verifier": "w" * 43}, "invalid_grant"),
    ({"redirect_uri": REDIRECT + "x"}, "invalid_grant"),
    ({"redirect_uri": "http://127.0.0.1:7777/callbacK"}, "invalid_grant"),
    ({"resource": "https://other.example.com/mcp"}, "invalid_target"),
])
def test_a_code_is_bound_to_its_request(override: dict[str, str], error: str) -> None:
    async def scenario(h: Harness) -> httpx.Response:
        client = await h.client()
        await h.plant_code(client["client_id"])
        return await h.redeem(client["client_id"], **override)

    answer = run(scenario)
    assert answer.status_code == 400 and answer.json()["error"] == error


def test_a_code_of_another_client_is_refused_and_spent() -> None:
    async def scenario(h: Harness) -> tuple[int, int]:
        victim, thief = await h.client(), await h.client()
        await h.plant_code(victim["client_id"])
        stolen = await h.redeem(thief["client_id"])
        again = await h.redeem(victim["client_id"])
        return stolen.status_code, again.status_code

    assert run(scenario) == (400, 400)


def test_a_replayed_code_revokes_what_it_gave() -> None:
    async def scenario(h: Harness) -> dict[str, Any]:
        client = await h.client()
        await h.plant_code(client["client_id"])
        first = (await h.redeem(client["client_id"])).json()
        live_before = await h.live(first["access_token"])
        replay = await h.redeem(client["client_id"])
        return {"first": first, "live_before": live_before, "replay": replay.json(),
                "live_after": await h.live(first["access_token"]),
                "refresh": (await h.token(grant_type="refresh_token", refresh_token=first["refresh_token"],
                                          client_id=client["client_id"])).json()}

    seen = run(scenario)
    assert seen["first"]["token_type"] == "Bearer" and seen["first"]["scope"] == "read write"
    assert seen["live_before"] and not seen["live_after"]
    assert seen["replay"]["error"] == "invalid_grant" and seen["refresh"]["error"] == "invalid_grant"


def test_refresh_tokens_rotate_and_a_reused_one_revokes_the_grant() -> None:
    async def scenario(h: Harness) -> dict[str, Any]:
        client = await h.client()
        cid = client["client_id"]
        await h.plant_code(cid)
        first = (await h.redeem(cid)).json()
        narrowed = (await h.token(grant_type="refresh_token", refresh_token=first["refresh_token"], client_id=cid,
                                  scope="read")).json()
        widened = (await h.token(grant_type="refresh_token", refresh_token=narrowed["refresh_token"], client_id=cid,
                                 scope="read write")).json()
        reused = (await h.token(grant_type="refresh_token", refresh_token=first["refresh_token"], client_id=cid)).json()
        after = (await h.token(grant_type="refresh_token", refresh_token=narrowed["refresh_token"], client_id=cid)).json()
        return {"first": first, "narrowed": narrowed, "widened": widened, "reused": reused, "after": after,
                "live": await h.live(narrowed["access_token"])}

    seen = run(scenario)
    assert seen["narrowed"]["scope"] == "read" and seen["narrowed"]["refresh_token"] != seen["first"]["refresh_token"]
    assert seen["widened"]["error"] == "invalid_scope"
    assert seen["reused"]["error"] == "invalid_grant"  # the rotated-out token: reuse detected...
    assert seen["after"]["error"] == "invalid_grant" and not seen["live"]  # ...and the whole grant is gone


def test_revocation_of_a_refresh_or_access_token_ends_the_grant() -> None:
    async def scenario(h: Harness) -> list[Any]:
        client = await h.client()
        cid = client["client_id"]
        out = []
        for which in ("refresh_token", "access_token"):
            await h.plant_code(cid, code=which)
            tokens = (await h.redeem(cid, code=which)).json()
            stranger = await h.client()
            await h.http.post("/oauth/revoke", data={"token": tokens[which], "client_id": stranger["client_id"]})
            kept = await h.live(tokens["access_token"])
            answer = await h.http.post("/oauth/revoke", data={"token": tokens[which], "client_id": cid})
            out.append((kept, answer.status_code, await h.live(tokens["access_token"])))
        return out

    # another client's revocation does nothing; the owner's ends the grant
    assert run(scenario) == [(True, 200, False), (True, 200, False)]


def test_the_authorize_endpoint_never_redirects_to_an_unregistered_uri() -> None:
    async def scenario(h: Harness) -> list[tuple[int, str | None]]:
        client = await h.client()
        base = {"response_type": "code", "client_id": client["client_id"], "code_challenge": challenge(VERIFIER),
                "code_challenge_method": "S256", "state": "s"}
        out = []
        for params in (
            {**base, "redirect_uri": REDIRECT + "/"},  # not registered: a page, no redirect
            {**base, "client_id": "nobody", "redirect_uri": REDIRECT},
            {**base, "redirect_uri": REDIRECT, "code_challenge_method": "plain"},  # registered: the error goes there
            {**base, "redirect_uri": REDIRECT, "scope": "admin"},
            {**base, "redirect_uri": REDIRECT, "resource": "https://other.example.com/mcp"},
        ):
            answer = await h.http.get("/oauth/authorize", params=params)
            out.append((answer.status_code, answer.headers.get("location")))
        return out

    seen = run(scenario)
    assert seen[0] == (400, None) and seen[1] == (400, None)
    for (status, location), error in zip(seen[2:], ("invalid_request", "invalid_scope", "invalid_target")):
        assert status == 303 and location is not None and location.startswith(REDIRECT + "?")
        assert f"error={error}" in location and "state=s" in location and "iss=https%3A%2F%2Fmcp.example.com" in location


def test_the_consent_page_escapes_what_the_client_claims() -> None:
    async def scenario(h: Harness) -> httpx.Response:
        client = await h.client(client_name="<script>alert(1)</script>")
        params = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": REDIRECT,
                  "code_challenge": challenge(VERIFIER), "code_challenge_method": "S256"}
        return await h.http.get("/oauth/authorize", params=params)

    page = run(scenario)
    assert page.status_code == 200 and "<script>" not in page.text and "&lt;script&gt;" in page.text
    assert page.headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "HttpOnly" in page.headers["set-cookie"] and "SameSite=Lax" in page.headers["set-cookie"]
    assert "idp.example.com" in page.text  # where the person will sign in


def test_the_state_and_its_cookie_exist_only_once_consent_is_given() -> None:
    """security_best_practices.mdx: the state tracking cookie is set immediately before going upstream."""

    async def scenario(h: Harness) -> tuple[httpx.Response, httpx.Response]:
        client = await h.client()
        params = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": REDIRECT,
                  "code_challenge": challenge(VERIFIER), "code_challenge_method": "S256"}
        page = await h.http.get("/oauth/authorize", params=params)
        form = dict(re.findall(r'name=(txn|csrf) value="([^"]+)"', page.text))
        approved = await h.http.post("/oauth/consent", data={**form, "decision": "approve"})
        return page, approved

    page, approved = run(scenario)
    shown = page.headers.get_list("set-cookie")
    assert len(shown) == 1 and shown[0].startswith("__Host-wmp_tx_") and "; Secure" in shown[0]
    set_now = approved.headers.get_list("set-cookie")
    assert any(c.startswith("__Host-wmp_st_") and "; Secure" in c for c in set_now)
    location = approved.headers["location"]
    assert approved.status_code == 303 and location.startswith("https://idp.example.com/auth?")
    assert "client_id=proxy" in location and "code_challenge_method=S256" in location and "state=" in location


def test_sealed_records_open_only_in_their_slot_with_their_key() -> None:
    async def scenario() -> list[Any]:
        kv = MemoryStore()
        store, other = SealedStore(kv, b"a" * 32), SealedStore(kv, b"b" * 32)
        await store.put("grant", ("g1",), {"upstream": "secret"}, ttl=None)
        slot = store.slot("grant", "g1")
        raw = await kv.get(slot)
        await kv.set(store.slot("grant", "g2"), raw)  # the sealed value moved to another slot
        return [raw, await store.get("grant", "g1"), await store.get("grant", "g2"), await other.get("grant", "g1"),
                "g1" in slot]

    raw, mine, moved, other_key, named = asyncio.run(scenario())
    assert "secret" not in raw and mine == {"upstream": "secret"}
    assert moved is None and other_key is None and not named


def test_a_server_protected_otherwise_does_not_load_the_proxy() -> None:
    program = textwrap.dedent("""
        import sys
        import wiremcp
        from wiremcp.auth.server import JWTVerifier, ResourceServer
        from wiremcp.transports.http import MCPApp
        rs = ResourceServer(JWTVerifier(issuer="https://a.example.com", resource="https://m.example.com/mcp"),
                            resource="https://m.example.com/mcp", authorization_servers=["https://a.example.com"])
        MCPApp(wiremcp.Server("s", auth=rs))
        print(sorted(m for m in sys.modules if m.startswith("wiremcp.auth.proxy")))
    """)
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_two_workers_on_one_redis_share_clients_codes_grants_and_keys() -> None:
    """Two proxies given the same key on one redis-server: what one issues, the other honours."""
    pytest.importorskip("redis")
    from scale.services import REDIS, RedisServer

    if REDIS is None:
        pytest.fail("redis-server is not installed (.ci/system-packages)")
    from wiremcp.server.storage import RedisStore

    redis_server = RedisServer()

    async def go() -> dict[str, Any]:
        first, second = Harness(RedisStore(redis_server.url)), Harness(RedisStore(redis_server.url))
        try:
            client = await first.client()
            cid = client["client_id"]
            await first.plant_code(cid)
            tokens = (await second.redeem(cid)).json()  # registered and issued by the first, redeemed at the second
            rotated = (await first.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"],
                                         client_id=cid)).json()
            reused = (await second.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"],
                                         client_id=cid)).json()
            return {"jwks": (first.proxy.jwks(), second.proxy.jwks()), "tokens": tokens, "rotated": rotated,
                    "reused": reused, "live": await first.live(rotated["access_token"]),
                    "second_reads": second.proxy.own_claims(rotated["access_token"])}
        finally:
            for h in (first, second):
                await h.http.aclose()
                await h.proxy.store.kv.close()

    try:
        seen = asyncio.run(go())
    finally:
        redis_server.kill()
    assert seen["jwks"][0] == seen["jwks"][1]  # the signing key derives from the shared key
    assert seen["tokens"]["scope"] == "read write" and "refresh_token" in seen["rotated"]
    assert seen["second_reads"] is not None and seen["second_reads"]["sub"] == "alice"
    assert seen["reused"]["error"] == "invalid_grant" and not seen["live"]  # reuse seen across workers
