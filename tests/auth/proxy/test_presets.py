"""The provider presets end to end: an oidc-provider upstream shaped like each provider, the proxied
example server (examples/oauth_provider.py) configured from ``WIREMCP_AUTH_*`` settings, headless
Chromium as the person, the wiremcp client calling a tool.

One oidc-provider process (tests/auth/as/shaped.mjs) serves every shape: one pre-registered client
per provider, its tokens shaped like that provider's (GitHub and Google opaque tokens with their user
endpoints, ID tokens and JWT access tokens carrying Entra's ``oid``/``roles``/``groups``, Okta's
``groups``, Keycloak's ``realm_access.roles``, Auth0's namespaced roles and ``permissions``,
WorkOS's ``role``/``permissions``). The presets' endpoints are overridden to point at it; everything
else (which token says who signed in, the subject claim, the roles claims, the client authentication)
is the preset's own. The tool sees the provider's subject, the email, and the scopes the roles map to.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("jwt")

import wiremcp  # noqa: E402
from wiremcp.auth import MemoryTokenStore, OAuthClient  # noqa: E402
from wiremcp.testing.chromium import Chromium, Page  # noqa: E402

from ..server._oauth import AS_DIR, ROOT, _RUNNING, ec_key, free_port  # noqa: E402
from ._harness import STATE_KEY, ChromiumLogin, _stop, approve, open_chromium, sign_in  # noqa: E402

pytestmark = pytest.mark.slow

SECRET = "a-shaped-upstream-client-secret"
ROLE_SCOPES = "notes-admin=notes:read notes:write; notes-reader=notes:read"
PRESETS = ["github", "google", "entra", "auth0", "okta", "keycloak", "workos", "oidc"]


class Shaped:
    """tests/auth/as/shaped.mjs: one client per preset, each with its proxy's port reserved."""

    def __init__(self, node: str, tmp: Path) -> None:
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.resource = f"http://127.0.0.1:{self.port}/api"
        self.proxy_ports = {name: free_port() for name in PRESETS}
        self.run_port = free_port()  # `wiremcp run` serving the okta preset's example
        config = {
            "issuer": self.issuer, "port": self.port, "keys": [ec_key("shaped1")[0]], "resource": self.resource,
            "clients": [{"client_id": name, "client_secret": SECRET, "redirect_uri": f"http://127.0.0.1:{port}/oauth/callback",
                         "more_redirect_uris": [f"http://127.0.0.1:{self.run_port}/oauth/callback"] if name == "okta" else []}
                        for name, port in self.proxy_ports.items()],
        }
        path = tmp / f"shaped-{uuid.uuid4().hex[:6]}.json"
        path.write_text(json.dumps(config))
        self.proc = subprocess.Popen([node, str(AS_DIR / "shaped.mjs"), str(path)], cwd=AS_DIR,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _RUNNING.add(self.proc)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode()
        if not line.startswith("ready"):
            _stop(self.proc)
            raise AssertionError(f"the shaped upstream did not start: {line}")

    def settings(self, preset: str) -> dict[str, str]:
        """The ``WIREMCP_AUTH_*`` settings of ``preset``, its endpoints pointed at this provider."""
        up = self.issuer
        env = {
            "WIREMCP_AUTH_PROVIDER": preset,
            "WIREMCP_AUTH_PROXY_CLIENT_ID": preset,
            "WIREMCP_AUTH_PROXY_CLIENT_SECRET": SECRET,
            "WIREMCP_AUTH_ROLE_SCOPES": {"github": "*=notes:read", "google": "example.com=notes:read notes:write"}.get(
                preset, ROLE_SCOPES),
            "WIREMCP_AUTH_PROXY_UPSTREAM": up,
        }
        if preset != "oidc":  # the generic preset discovers them
            env.update({
                "WIREMCP_AUTH_PROXY_UPSTREAM_AUTHORIZATION_ENDPOINT": up + "/auth",
                "WIREMCP_AUTH_PROXY_UPSTREAM_TOKEN_ENDPOINT": up + "/token",
                "WIREMCP_AUTH_PROXY_UPSTREAM_JWKS_URI": up + "/jwks",
                "WIREMCP_AUTH_PROXY_UPSTREAM_REVOCATION_ENDPOINT": up + "/token/revocation",
            })
        env.update({
            "github": {"WIREMCP_AUTH_PROXY_UPSTREAM_USER_ENDPOINT": up + "/user"},
            "google": {"WIREMCP_AUTH_PROXY_UPSTREAM_USER_ENDPOINT": up + "/v1/userinfo"},
            "entra": {"WIREMCP_AUTH_TENANT": "tenant-1"},
            "auth0": {"WIREMCP_AUTH_DOMAIN": "example.auth0.com", "WIREMCP_AUTH_AUDIENCE": self.resource,
                      "WIREMCP_AUTH_ROLES_CLAIM": "https://mcp.example.com/roles"},
            "okta": {"WIREMCP_AUTH_DOMAIN": "example.okta.com"},
            "keycloak": {"WIREMCP_AUTH_BASE_URL": "https://sso.example.com", "WIREMCP_AUTH_REALM": "mcp"},
            "workos": {"WIREMCP_AUTH_DOMAIN": "example.authkit.app", "WIREMCP_AUTH_AUDIENCE": self.resource},
            "oidc": {"WIREMCP_AUTH_ROLES_CLAIM": "roles"},
        }[preset])
        return env


class Proxied:
    """``examples/oauth_provider.py`` for one preset (`start` it, then `wait` until it serves)."""

    def __init__(self, shaped: Shaped, preset: str, store: Path, *, run: bool = False) -> None:
        port = shaped.run_port if run else shaped.proxy_ports[preset]
        self.url = f"http://127.0.0.1:{port}"
        self.mcp = self.url + "/mcp"
        env = {**os.environ, **shaped.settings(preset), "PYTHONPATH": str(ROOT / "src"), "WIREMCP_AUTH_PROXY_URL": self.url,
               "WIREMCP_AUTH_PROXY_STORE": str(store), "WIREMCP_STATE_KEY": STATE_KEY}
        example = str(ROOT / "examples" / "oauth_provider.py")
        command = ["-m", "wiremcp", "run", example, "--http", "--port", str(port)] if run else [example]
        self.proc = subprocess.Popen([sys.executable, *command], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _RUNNING.add(self.proc)

    def wait(self) -> None:
        deadline = time.monotonic() + 90
        while True:  # polled until it serves: the process gives no other sign
            if self.proc.poll() is not None:
                raise AssertionError("the proxied server exited: " + self.proc.stderr.read().decode())  # type: ignore[union-attr]
            try:
                if httpx.get(self.url + "/.well-known/oauth-authorization-server", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                _stop(self.proc)
                raise AssertionError("the proxied server did not serve within 90 s")
            time.sleep(0.1)

    def stop(self) -> str:
        _stop(self.proc)
        return self.proc.stderr.read().decode() if self.proc.stderr else ""


@pytest.fixture(scope="module")
def shaped(node: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shaped]:
    upstream = Shaped(node, tmp_path_factory.mktemp("shaped"))
    try:
        yield upstream
    finally:
        _stop(upstream.proc)


@pytest.fixture(scope="module")
def servers(shaped: Shaped, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Proxied]]:
    """One proxied example server per preset, started together."""
    tmp = tmp_path_factory.mktemp("proxies")
    started: dict[str, Proxied] = {}
    try:
        for preset in PRESETS:
            started[preset] = Proxied(shaped, preset, tmp / f"{preset}.sqlite3")
        for server in started.values():
            server.wait()
        yield started
    finally:
        for server in started.values():
            server.stop()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Chromium]:
    yield from open_chromium()


def sign_in_and_call(chromium: Chromium, mcp: str, user: str, tools: list[str]) -> dict[str, Any]:
    """The wiremcp client signs in through the proxy as ``user`` and calls ``tools``: their results (or errors)."""
    out: dict[str, Any] = {}

    async def as_user(page: Page) -> None:
        await sign_in(page, user)

    async def go() -> None:
        async with Page(chromium) as page:
            await page.send("Network.clearBrowserCookies")  # one upstream for every preset: no session carried over
            login = ChromiumLogin(page, [approve, as_user])
            auth = OAuthClient(client_name="presets-test", redirect_handler=login, store=MemoryTokenStore())
            try:
                async with wiremcp.Client.http(mcp, auth=auth) as client:
                    for tool in tools:
                        try:
                            out[tool] = (await client.call_tool(tool, {"text": "x"} if tool == "add_note" else {})).structured_content
                        except Exception as exc:  # a refused call is what some tests expect
                            out[tool] = f"error: {exc}"
                    out["token"] = dict(auth._token or {})
            except Exception as exc:
                out["error"] = repr(exc)
            finally:
                await login.aclose()
                await auth.aclose()

    asyncio.run(go())
    return out


BOTH = ["notes:read", "notes:write"]
#: preset -> (the subject the tool sees for alice, roles among those it sees, the scopes granted)
EXPECTED = {
    "github": ("1001", [], ["notes:read"]),  # GitHub's numeric id, not the login; "*" maps every user
    "google": ("google-1001", ["example.com"], BOTH),  # the Workspace domain (hd) mapped
    "entra": ("oid-alice", ["notes-admin", "group-alice"], BOTH),  # oid, not the pairwise sub
    "auth0": ("alice", ["notes-admin", "perm:notes-admin"], BOTH),  # namespaced claim + API permissions
    "okta": ("alice", ["notes-admin"], BOTH),
    "keycloak": ("alice", ["notes-admin", "offline_access"], BOTH),
    "workos": ("alice", ["notes-admin", "perm:notes-admin"], BOTH),
    "oidc": ("alice", ["notes-admin"], BOTH),
}


@pytest.mark.parametrize("preset", PRESETS)
def test_the_preset_maps_the_providers_identity(preset: str, servers: dict[str, Proxied], chromium: Chromium) -> None:
    seen = sign_in_and_call(chromium, servers[preset].mcp, "alice", ["whoami"])
    assert "error" not in seen, seen
    subject, roles, scopes = EXPECTED[preset]
    who = seen["whoami"]
    assert who["subject"] == subject and who["email"] == "alice@example.com", who
    assert set(roles) <= set(who["roles"]), who
    assert who["scopes"] == scopes, who
    # the upstream tokens stayed in the proxy: the client holds only the proxy's own, for the granted scopes
    granted = seen["token"]["scope"]
    assert seen["token"]["access_token"].count(".") == 2
    assert sorted(granted.split() if isinstance(granted, str) else granted) == scopes


@pytest.mark.parametrize("preset", ["entra", "okta"])
def test_roles_narrow_the_scopes(preset: str, servers: dict[str, Proxied], chromium: Chromium) -> None:
    """bob's role maps to notes:read only: notes:write is not granted (the client asked for both); carol has
    no role that maps to anything: the sign-in ends with access_denied."""
    bob = sign_in_and_call(chromium, servers[preset].mcp, "bob", ["whoami"])
    carol = sign_in_and_call(chromium, servers[preset].mcp, "carol", ["whoami"])
    assert bob["whoami"]["scopes"] == ["notes:read"] and bob["whoami"]["roles"][0] == "notes-reader", bob
    assert bob["token"]["scope"] in ("notes:read", ["notes:read"]), bob
    assert "access_denied" in carol.get("error", ""), carol


def test_wiremcp_run_serves_the_proxy_with_the_server(shaped: Shaped, chromium: Chromium, tmp_path: Path) -> None:
    """``wiremcp run examples/oauth_provider.py --http``: the Server's ``auth=proxy.resource_server()`` brings
    the proxy's routes to the served app, so the same settings work without ``proxy.asgi``."""
    server = Proxied(shaped, "okta", tmp_path / "run.sqlite3", run=True)
    try:
        server.wait()
        seen = sign_in_and_call(chromium, server.mcp, "bob", ["whoami"])
    finally:
        server.stop()
    assert seen["whoami"]["subject"] == "bob" and seen["whoami"]["scopes"] == ["notes:read"], seen
