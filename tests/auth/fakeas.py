"""An in-process authorization server and protected resource metadata for the OAuth client tests.

It answers through ``httpx.MockTransport`` (the OAuth client's own HTTP
client is injected), records every request, and can be told to misbehave the
ways the spec says a client must notice. End-to-end runs against real
servers over loopback are the conformance scenarios (tests/test_conformance.py).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from wiremcp.auth._pkce import code_challenge

BASE = "http://localhost:9"
SERVER_URL = BASE + "/mcp"


@dataclass
class FakeAS:
    issuer: str = "http://localhost:7"
    resource: str = SERVER_URL
    prm_scopes: list[str] | None = None
    as_scopes: list[str] | None = None
    iss_supported: bool | None = True
    iss_mode: str = "correct"  # correct | omit | wrong | slash
    state_mode: str = "echo"  # echo | wrong
    pkce_methods: list[str] | None = field(default_factory=lambda: ["S256"])
    metadata_issuer: str | None = None
    dpop_algs: list[str] | None = None
    dpop_nonce: str | None = None
    refresh_token: str | None = None
    expires_in: int = 3600
    cimd: bool = False
    registration: bool = True
    auth_methods: list[str] = field(default_factory=lambda: ["none"])
    token_error: str | None = None
    requests: list[httpx.Request] = field(default_factory=list)
    authorizations: list[dict[str, str]] = field(default_factory=list)
    token_forms: list[dict[str, str]] = field(default_factory=list)
    registrations: list[dict[str, Any]] = field(default_factory=list)
    client_id: str = "client-1"
    _challenge: str | None = None
    _tokens: int = 0

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        url = str(request.url)
        path = request.url.path
        origin = f"{request.url.scheme}://{request.url.netloc.decode()}"
        if origin == BASE and path == "/.well-known/oauth-protected-resource/mcp":
            doc: dict[str, Any] = {"resource": self.resource, "authorization_servers": [self.issuer]}
            if self.prm_scopes is not None:
                doc["scopes_supported"] = self.prm_scopes
            return httpx.Response(200, json=doc)
        if origin != self.issuer.rstrip("/") and not url.startswith(self.issuer):
            return httpx.Response(404, json={"error": "not_found"})
        if path == "/.well-known/oauth-authorization-server":
            meta: dict[str, Any] = {
                "issuer": self.metadata_issuer or self.issuer,
                "authorization_endpoint": self.issuer + "/authorize",
                "token_endpoint": self.issuer + "/token",
                "response_types_supported": ["code"],
                "token_endpoint_auth_methods_supported": self.auth_methods,
            }
            if self.registration:
                meta["registration_endpoint"] = self.issuer + "/register"
            if self.pkce_methods is not None:
                meta["code_challenge_methods_supported"] = self.pkce_methods
            if self.iss_supported is not None:
                meta["authorization_response_iss_parameter_supported"] = self.iss_supported
            if self.as_scopes is not None:
                meta["scopes_supported"] = self.as_scopes
            if self.dpop_algs is not None:
                meta["dpop_signing_alg_values_supported"] = self.dpop_algs
            if self.cimd:
                meta["client_id_metadata_document_supported"] = True
            return httpx.Response(200, json=meta)
        if path == "/register":
            body = json.loads(request.content)
            self.registrations.append(body)
            return httpx.Response(201, json={"client_id": self.client_id, "redirect_uris": body.get("redirect_uris", [])})
        if path == "/authorize":
            q = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
            self.authorizations.append(q)
            self._challenge = q.get("code_challenge")
            params = {"code": "the-code"}
            if self.state_mode == "echo":
                params["state"] = q["state"]
            else:
                params["state"] = "forged"
            iss = {"correct": self.issuer, "wrong": "https://evil.example.com", "slash": self.issuer + "/"}.get(self.iss_mode)
            if iss is not None:
                params["iss"] = iss
            return httpx.Response(302, headers={"Location": q["redirect_uri"] + "?" + urlencode(params)})
        if path == "/token":
            form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
            auth = request.headers.get("authorization")
            if auth and auth.startswith("Basic "):
                form["_basic"] = base64.b64decode(auth[6:]).decode()
            if "dpop" in request.headers:
                form["_dpop"] = request.headers["dpop"]
            self.token_forms.append(form)
            if self.dpop_nonce is not None and "dpop" in request.headers:
                import jwt

                if jwt.decode(request.headers["dpop"], options={"verify_signature": False}).get("nonce") != self.dpop_nonce:
                    return httpx.Response(400, headers={"DPoP-Nonce": self.dpop_nonce}, json={"error": "use_dpop_nonce"})
            if self.token_error is not None:
                return httpx.Response(400, json={"error": self.token_error, "error_description": "no"})
            if form.get("grant_type") == "authorization_code":
                assert code_challenge(form["code_verifier"]) == self._challenge
            self._tokens += 1
            doc = {"access_token": f"token-{self._tokens}", "token_type": "DPoP" if "dpop" in request.headers else "Bearer"}
            doc["expires_in"] = self.expires_in
            if self.refresh_token is not None:
                doc["refresh_token"] = self.refresh_token
            return httpx.Response(200, json=doc)
        return httpx.Response(404, json={"error": "not_found"})


def challenge(**params: str) -> dict[str, str]:
    value = "Bearer " + ", ".join(f'{k}="{v}"' for k, v in params.items())
    return {"www-authenticate": value}
