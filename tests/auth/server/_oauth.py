"""Helpers: a real authorization server (oidc-provider, tests/auth/as/) and the protected example server.

`AuthorizationServer` starts ``node tests/auth/as/server.mjs`` on a free
loopback port with a key set the test generates (so that tests can also
forge tokens with the issuer's own keys, or rotate them), and gets tokens
from it with the client_credentials grant and a resource indicator
(RFC 8707), optionally DPoP-bound (RFC 9449). It also registers clients
dynamically and logs in a fixed account without a person (the authorization
code flow of tests/auth/test_full_loop.py; see server.mjs). The node packages are
installed with ``npm ci`` on first use (the ``node`` fixture of tests/auth/conftest.py).

An interrupted run (Ctrl-C, or SIGINT sent to pytest alone) leaves no ``node`` behind:
a process interrupted while it starts is ended there (`start`), a second Ctrl-C during
`stop` does not cut it short (SIGKILL follows), and whatever is still running when the
interpreter exits is killed at exit (`_kill_left`: a fixture interrupted before its
``finally`` was entered never calls `stop`). server.mjs closes its open connections when
it stops, so a client's keep-alive connection does not keep it running.
"""

from __future__ import annotations

import atexit
import base64
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

jwt = pytest.importorskip("jwt")
from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: E402
from jwt.algorithms import ECAlgorithm, RSAAlgorithm  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
AS_DIR = ROOT / "tests" / "auth" / "as"

CLIENT_SECRET = "a-test-secret-of-decent-length"
#: client id -> (allowed scopes, token lifetime in seconds)
CLIENTS = {"reader": ("mcp", 300), "admin": ("mcp admin", 300), "short": ("mcp", 4), "outsider": ("admin", 300)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ec_key(kid: str) -> tuple[dict[str, Any], Any]:
    """A fresh P-256 signing key: (private JWK with kid, the key object)."""
    key = ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(ECAlgorithm.to_jwk(key))
    jwk.update(kid=kid, use="sig", alg="ES256")
    return jwk, key


def rsa_key(kid: str) -> tuple[dict[str, Any], Any]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(RSAAlgorithm.to_jwk(key))
    jwk.update(kid=kid, use="sig", alg="RS256")
    return jwk, key


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class DPoPKey:
    """A client's DPoP key pair, making proofs (RFC 9449 section 4.2)."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.public_jwk = json.loads(ECAlgorithm.to_jwk(self.key.public_key()))

    def proof(self, method: str, url: str, token: str | None = None, *, iat: float | None = None, **extra: Any) -> str:
        claims: dict[str, Any] = {"jti": uuid.uuid4().hex, "htm": method, "htu": url, "iat": int(iat or time.time())}
        if token is not None:
            claims["ath"] = b64(hashlib.sha256(token.encode()).digest())
        claims.update(extra)
        return jwt.encode(claims, self.key, algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": self.public_jwk})


#: The node processes started and not yet stopped, killed at exit if still running (`_kill_left`).
_RUNNING: set[subprocess.Popen[bytes]] = set()


def _kill_left() -> None:
    for proc in list(_RUNNING):
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _RUNNING.discard(proc)


atexit.register(_kill_left)


class AuthorizationServer:
    """One oidc-provider process (see the module docs)."""

    def __init__(
        self, node: str, tmp: Path, *, port: int | None = None, alg: str = "ES256", account: str = "alice", dynamic_ttl: int = 300,
        dpop_nonce: bool = False,
    ) -> None:
        self.dpop_nonce = dpop_nonce
        self.node = node
        self.account = account
        self.dynamic_ttl = dynamic_ttl
        self.tmp = tmp
        self.port = port or free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.alg = alg
        self.keys: list[tuple[dict[str, Any], Any]] = []
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, keys: list[tuple[dict[str, Any], Any]]) -> AuthorizationServer:
        self.keys = keys
        config = {
            "issuer": self.issuer,
            "port": self.port,
            "alg": self.alg,
            "account": self.account,
            "dynamic_ttl": self.dynamic_ttl,
            "dpop_nonce": self.dpop_nonce,
            "keys": [jwk for jwk, _ in keys],
            "clients": [
                {"client_id": cid, "client_secret": CLIENT_SECRET, "scope": scope, "ttl": ttl}
                for cid, (scope, ttl) in CLIENTS.items()
            ],
        }
        path = self.tmp / f"as-{self.port}-{uuid.uuid4().hex[:6]}.json"
        path.write_text(json.dumps(config))
        self.proc = proc = subprocess.Popen(
            [self.node, str(AS_DIR / "server.mjs"), str(path)],
            cwd=AS_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        _RUNNING.add(proc)
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().decode()
        except BaseException:  # Ctrl-C while it starts: the fixture never yields, so no finally stops it
            self.stop()
            raise
        if not line.startswith("ready"):
            proc.kill()
            pytest.fail(f"the authorization server did not start: {line}{proc.stderr.read().decode()}")  # type: ignore[union-attr]
        return self

    def stop(self) -> None:
        proc = self.proc
        if proc is not None:
            try:
                proc.terminate()
                proc.wait(10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass
            finally:  # also after a second Ctrl-C during the wait
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                _RUNNING.discard(proc)
                for stream in (proc.stdout, proc.stderr):
                    if stream is not None:
                        stream.close()
                self.proc = None

    def token_response(
        self, client: str, resource: str, scope: str | None = None, *, dpop: DPoPKey | None = None
    ) -> dict[str, Any]:
        form = {"grant_type": "client_credentials", "resource": resource}
        if scope is not None:
            form["scope"] = scope
        headers = {}
        url = f"{self.issuer}/token"
        if dpop is not None:
            headers["DPoP"] = dpop.proof("POST", url)
        got = httpx.post(url, data=form, auth=(client, CLIENT_SECRET), headers=headers, timeout=10)
        assert got.status_code == 200, got.text
        return got.json()  # type: ignore[no-any-return]

    def token(self, client: str, resource: str, scope: str | None = None, *, dpop: DPoPKey | None = None) -> str:
        return str(self.token_response(client, resource, scope, dpop=dpop)["access_token"])

    def user_token(self, resource: str, scope: str, *, client_id: str | None = None) -> tuple[str, str]:
        """An access token for the fixed account (``alice``) through a new client: (token, client id).

        The client registers itself (RFC 7591), then runs the authorization
        code grant with PKCE and ``resource`` (RFC 8707); the login is the
        server's browserless interaction (server.mjs), followed with plain
        GETs and cookies. Two calls give two clients of the same user;
        ``client_id`` logs in again through a client registered before.
        """
        redirect = "http://127.0.0.1:9/callback"
        if client_id is None:
            reg = httpx.post(f"{self.issuer}/reg", json={
                "client_name": "app", "redirect_uris": [redirect], "grant_types": ["authorization_code"],
                "response_types": ["code"], "token_endpoint_auth_method": "none", "scope": "mcp admin",
            }, timeout=10)
            assert reg.status_code == 201, reg.text
            client_id = reg.json()["client_id"]
        verifier = b64(os.urandom(32))
        query = {
            "response_type": "code", "client_id": client_id, "redirect_uri": redirect, "scope": scope, "resource": resource,
            "code_challenge": b64(hashlib.sha256(verifier.encode()).digest()), "code_challenge_method": "S256", "state": "s",
        }
        with httpx.Client(timeout=10) as browser:
            url = str(httpx.URL(f"{self.issuer}/auth", params=query))
            for _ in range(10):
                got = browser.get(url)
                location = got.headers.get("location")
                assert got.is_redirect and location, got.text
                url = str(httpx.URL(url).join(location))
                if url.startswith(redirect):
                    break
            code = httpx.URL(url).params["code"]
        token = httpx.post(f"{self.issuer}/token", data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirect, "client_id": client_id,
            "code_verifier": verifier, "resource": resource,
        }, timeout=10)
        assert token.status_code == 200, token.text
        return str(token.json()["access_token"]), client_id

    def introspect(self, token: str, hint: str) -> dict[str, Any]:
        """RFC 7662 introspection of ``token`` by the confidential client ``reader``."""
        got = httpx.post(
            f"{self.issuer}/token/introspection", data={"token": token, "token_type_hint": hint},
            auth=("reader", CLIENT_SECRET), timeout=10,
        )
        assert got.status_code == 200, got.text
        return got.json()  # type: ignore[no-any-return]

    def stats(self) -> dict[str, Any]:
        """What server.mjs counted (``use_dpop_nonce`` refusals)."""
        return httpx.get(f"{self.issuer}/test/stats", timeout=10).json()  # type: ignore[no-any-return]

    def forge(self, claims: dict[str, Any], *, kid: str | None = None, headers: dict[str, Any] | None = None) -> str:
        """A token signed with one of the issuer's own keys (the first, or ``kid``)."""
        jwk, key = next((k for k in self.keys if kid is None or k[0]["kid"] == kid))
        now = int(time.time())
        body = {"iss": self.issuer, "iat": now, "exp": now + 300, "sub": "forged", "client_id": "forged", **claims}
        return jwt.encode(body, key, algorithm=jwk["alg"], headers={"kid": jwk["kid"], "typ": "at+jwt", **(headers or {})})


class ProtectedServer:
    """``wiremcp run examples/protected.py --http`` with its issuer and resource from the environment."""

    def __init__(
        self, issuer: str, *, leeway: float | None = None, script: str = "examples/protected.py", env: dict[str, str] | None = None
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        env = {**os.environ, **(env or {}), "WIREMCP_AUTH_ISSUER": issuer, "WIREMCP_AUTH_RESOURCE": self.url}
        if leeway is not None:
            env["WIREMCP_AUTH_LEEWAY"] = str(leeway)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wiremcp", "run", script, "--http", "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
        self.proc.kill()
        pytest.fail(f"the protected server did not start: {self.proc.stderr.read().decode()}")  # type: ignore[union-attr]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            self.proc.kill()
        if self.proc.stderr is not None:
            self.proc.stderr.close()

    def post(self, body: dict[str, Any], *, token: str | None = None, scheme: str = "Bearer", headers: dict[str, str] | None = None) -> httpx.Response:
        hdrs = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        if token is not None:
            hdrs["authorization"] = f"{scheme} {token}"
        params = body.get("params") or {}
        if body.get("method"):
            hdrs["mcp-protocol-version"] = "2026-07-28"
            hdrs["mcp-method"] = body["method"]
            if body["method"] == "tools/call":
                hdrs["mcp-name"] = params["name"]
        hdrs.update(headers or {})
        return httpx.post(self.url, content=json.dumps(body), headers=hdrs, timeout=10)

    def call(self, tool: str, arguments: dict[str, Any] | None = None, **kw: Any) -> httpx.Response:
        return self.post(request("tools/call", {"name": tool, "arguments": arguments or {}}), **kw)


def request(method: str, params: dict[str, Any] | None = None, id: int = 1) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": {**(params or {}), "_meta": meta}}


def challenge(response: httpx.Response) -> dict[str, str]:
    """The auth-params of a response's ``WWW-Authenticate`` (one challenge), plus its scheme."""
    value = response.headers["www-authenticate"]
    scheme, _, rest = value.partition(" ")
    params = {"scheme": scheme}
    import re

    for name, quoted in re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', rest):
        params[name] = quoted.replace('\\"', '"').replace("\\\\", "\\")
    return params
