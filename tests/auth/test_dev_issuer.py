"""The local issuer (`wiremcp auth dev`, `wiremcp auth token`, `wiremcp.testing.issuer`), docs/auth.md.

The two commands docs/auth.md gives for running examples/protected.py
against it are read from the page and run as a user would, in a shell
(only the ports are swapped for free ones): the issuer, the protected
server over HTTP, then the page's `wiremcp call` lines with minted tokens,
and a wiremcp client whose token lacks ``admin`` gets 403
``insufficient_scope``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest
from _servers import free_port, wait_listening

pytest.importorskip("jwt")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

import wiremcp  # noqa: E402
from wiremcp.client import RemoteError  # noqa: E402
from wiremcp.auth import ClientCredentialsGrant, OAuthClient  # noqa: E402
from wiremcp.auth.dev import NotLoopback, bind  # noqa: E402
from wiremcp.auth.server import AuthError, JWTVerifier  # noqa: E402
from wiremcp.testing.issuer import LocalIssuer, local_issuer  # noqa: E402
from wiremcp.testing.plugin import local_issuer as local_issuer_fixture  # noqa: E402, F401  # the plugin's fixture

ROOT = Path(__file__).resolve().parents[2]
AUTH_MD = ROOT / "docs" / "auth.md"


def _doc_lines(marker: str, page: Path = AUTH_MD) -> list[str]:
    """The commands of the ```bash block after ``<!-- local-issuer: MARKER`` on ``page`` (``\\`` lines joined)."""
    match = re.search(rf"<!-- local-issuer: {marker}\b[^>]*-->\n```bash\n(.*?)```", page.read_text(), re.S)
    assert match, f"{page.name} has no local-issuer {marker} block"
    text = re.sub(r"\\\n\s*", "", match.group(1))
    return [line for line in text.splitlines() if line.strip()]


@pytest.fixture
def shell_env(tmp_path: Path) -> dict[str, str]:
    """A user's shell: ``wiremcp`` on PATH (this interpreter's), state kept under tmp_path."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "wiremcp"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m wiremcp "$@"\n')
    wrapper.chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }


def _start(line: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        ["bash", "-c", line], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


class _Local:
    """The doc's two commands running: the dev issuer and the server, on free ports."""

    def __init__(self, page: Path, marker: str, env: dict[str, str]) -> None:
        self.page, self.env = page, env
        self.issuer_port, self.server_port = free_port(), free_port()
        dev_line, self.serve_line = _doc_lines(marker, page)
        assert dev_line == "wiremcp auth dev"
        # the issuer's own port and default resource follow its options, as a user with busy ports would pass them
        self.dev_line = f"{dev_line} --port {self.issuer_port} --resource http://127.0.0.1:{self.server_port}/mcp"

    def ports(self, line: str) -> str:
        """``line`` with the doc's ports (9400, 8000) swapped for the free ones."""
        line = line.replace("127.0.0.1:9400", f"127.0.0.1:{self.issuer_port}")
        return line.replace("127.0.0.1:8000", f"127.0.0.1:{self.server_port}").replace("--port 8000", f"--port {self.server_port}")

    def run(self, line: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["bash", "-c", self.ports(line)], cwd=ROOT, env=self.env, capture_output=True, timeout=60)

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        dev = _start(self.dev_line, self.env)
        server = None
        try:
            wait_listening(self.issuer_port, dev)
            server = _start(self.ports(self.serve_line), self.env)
            wait_listening(self.server_port, server)
            yield
        finally:
            if server is not None:
                _stop(server)
            _stop(dev)


@pytest.mark.slow
def test_the_two_commands_of_the_docs_run_examples_protected(shell_env: dict[str, str], tmp_path: Path) -> None:
    local = _Local(AUTH_MD, "serve", shell_env)
    assert "examples/protected.py" in local.serve_line
    with local.serving():
        state = tmp_path / "state" / "wiremcp" / "dev-issuer"
        assert stat.S_IMODE(state.stat().st_mode) == 0o700
        assert stat.S_IMODE((state / "issuer.json").stat().st_mode) == 0o600

        whoami_line, admin_line = _doc_lines("call")
        done = local.run(whoami_line)
        assert done.returncode == 0, done.stderr
        assert b'"subject":"dev-user"' in done.stdout.replace(b" ", b""), done.stdout
        assert b'"client_id":"dev-client"' in done.stdout.replace(b" ", b"")
        done = local.run(admin_line)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == b"hi"

        # a token without `admin`: the wiremcp client gets 403 insufficient_scope from admin_echo
        minted = subprocess.run(["wiremcp", "auth", "token"], env=shell_env, capture_output=True, timeout=60)
        assert minted.returncode == 0 and minted.stderr == b"", minted.stderr  # from the running issuer, no note
        token = minted.stdout.decode().strip()
        refused = subprocess.run(["wiremcp", "auth", "token", "--lifetime", "999999"], env=shell_env, capture_output=True, timeout=60)
        assert refused.returncode == 1 and refused.stdout == b""
        assert b"the issuer refused (400): invalid_request: lifetime is 1..86400 seconds" in refused.stderr

        async def call() -> None:
            url = f"http://127.0.0.1:{local.server_port}/mcp"
            async with wiremcp.Client.http(url, headers={"Authorization": f"Bearer {token}"}) as client:
                assert (await client.call_tool("whoami", {})).structured_content["scopes"] == ["mcp"]
                with pytest.raises(RemoteError) as refused:
                    await client.call_tool("admin_echo", {"text": "hi"})
            assert refused.value.http_status == 403
            assert "insufficient scope" in str(refused.value)

        asyncio.run(call())

    # the issuer stopped: `auth token` signs with the kept key, and says so
    offline = subprocess.run(["wiremcp", "auth", "token", "--scope", "mcp"], env=shell_env, capture_output=True, timeout=60)
    assert offline.returncode == 0
    assert b"signed with its kept key" in offline.stderr
    header = offline.stdout.split(b".")[0]
    assert b"at+jwt" in base64.urlsafe_b64decode(header + b"=" * (-len(header) % 4))


@pytest.mark.slow
def test_the_tutorial_runs_locally_as_it_says(shell_env: dict[str, str]) -> None:
    tutorial = ROOT / "docs" / "tutorials" / "remote-auth.md"
    local = _Local(tutorial, "tutorial-serve", shell_env)
    assert "examples/tutorials/remote_auth.py" in local.serve_line
    with local.serving():
        reader, writer = _doc_lines("tutorial-call", tutorial)
        done = local.run(reader)
        assert (done.returncode, done.stdout.strip()) == (0, b"dev-user"), done.stderr
        done = local.run(writer)
        assert (done.returncode, done.stdout.strip()) == (0, b"added"), done.stderr


def test_a_non_loopback_address_is_refused_unless_forced(shell_env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "wiremcp", "auth", "dev", "--host", "0.0.0.0", "--port", "0"],
        env=shell_env, capture_output=True, timeout=60,
    )
    assert done.returncode == 2
    assert b"loopback only" in done.stderr and b"--force-non-loopback" in done.stderr
    with pytest.raises(NotLoopback):
        bind("0.0.0.0", 0)
    bind("0.0.0.0", 0, force=True).close()


def test_auth_token_without_an_issuer_says_how_to_start_one(shell_env: dict[str, str], tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "wiremcp", "auth", "token"], env=shell_env, capture_output=True, timeout=60)
    assert done.returncode == 1
    assert b"start one with: wiremcp auth dev" in done.stderr
    # a kept issuer: its secret never goes to a plain-http issuer off loopback
    from wiremcp.auth.dev import DevIssuer, save

    save(DevIssuer("http://127.0.0.1:9"), tmp_path / "state" / "wiremcp" / "dev-issuer")
    remote = subprocess.run(
        [sys.executable, "-m", "wiremcp", "auth", "token", "--issuer", "http://192.0.2.1:9400"],
        env=shell_env, capture_output=True, timeout=60,
    )
    assert remote.returncode == 1 and b"the secret is not sent there" in remote.stderr


def test_local_issuer_tokens_verify_through_discovery() -> None:
    asyncio.run(_verify_through_discovery())


async def _verify_through_discovery() -> None:
    resource = "http://127.0.0.1:8000/mcp"
    with local_issuer(resource=resource) as issuer:
        verifier = JWTVerifier(issuer=issuer.url, resource=resource)
        try:
            verified = await verifier.verify(issuer.token("mcp admin", subject="alice", client_id="c1"), url=resource)
            assert (verified.subject, verified.client_id, verified.scopes) == ("alice", "c1", {"mcp", "admin"})
            assert verified.claims["development_only"] is True
            with pytest.raises(AuthError) as wrong:
                await verifier.verify(issuer.token(resource="http://127.0.0.1:9/other"), url=resource)
            assert wrong.value.reason == "wrong_audience"
        finally:
            await verifier.aclose()
        assert issuer.env() == {"WIREMCP_AUTH_ISSUER": issuer.url, "WIREMCP_AUTH_RESOURCE": resource}


def test_the_token_endpoint() -> None:
    with local_issuer(resource="http://127.0.0.1:8000/mcp") as issuer, httpx.Client(base_url=issuer.url) as http:
        metadata = http.get("/.well-known/oauth-authorization-server").json()
        assert metadata["issuer"] == issuer.url and metadata["development_only"] is True
        assert metadata["token_endpoint"] == issuer.url + "/token"
        keys = http.get("/jwks").json()["keys"]
        assert len(keys) == 1 and "d" not in keys[0] and keys[0]["alg"] == "ES256"

        form = {"grant_type": "client_credentials", "scope": "mcp admin", "subject": "bob"}
        good = http.post("/token", data=form, auth=("my-client", issuer.secret))
        assert good.status_code == 200 and good.headers["cache-control"] == "no-store"
        assert good.json()["scope"] == "mcp admin" and good.json()["token_type"] == "Bearer"
        posted = http.post("/token", data={**form, "client_id": "c", "client_secret": issuer.secret})
        assert posted.status_code == 200

        wrong = http.post("/token", data=form, auth=("my-client", "not-the-secret"))
        assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
        assert wrong.headers["www-authenticate"].startswith("Basic")
        assert http.post("/token", data=form).status_code == 401  # no credentials at all
        grant = http.post("/token", data={**form, "grant_type": "password"}, auth=("c", issuer.secret))
        assert grant.status_code == 400 and grant.json()["error"] == "unsupported_grant_type"
        twice = http.post("/token", content=b"grant_type=client_credentials&scope=a&scope=b", auth=("c", issuer.secret),
                          headers={"content-type": "application/x-www-form-urlencoded"})
        assert twice.status_code == 400 and twice.json()["error"] == "invalid_request"
        assert http.post("/token", data={**form, "scope": 'bad"scope'}, auth=("c", issuer.secret)).status_code == 400
        assert http.post("/token", content=b"x" * 70000, headers={"content-type": "application/x-www-form-urlencoded"}).status_code == 413
        assert http.get("/token").status_code == 405
        assert http.get("/authorize").status_code == 404


def test_the_plugin_fixture_serves_a_real_issuer(local_issuer_fixture: LocalIssuer) -> None:
    issuer = local_issuer_fixture
    metadata = httpx.get(issuer.url + "/.well-known/oauth-authorization-server").json()
    assert metadata["issuer"] == issuer.url
    token = issuer.token(["mcp", "admin"], resource="http://127.0.0.1:1/mcp")
    assert issuer.env("http://127.0.0.1:1/mcp")["WIREMCP_AUTH_ISSUER"] == issuer.url
    assert token.count(".") == 2


def test_the_kept_issuer_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    from wiremcp.auth.dev import DevIssuer, load, save

    folder = tmp_path / "dev-issuer"
    assert load(folder) is None
    issuer = DevIssuer("http://127.0.0.1:9400", resource="http://127.0.0.1:8000/mcp")
    path = save(issuer, folder)
    kept = load(folder)
    assert kept is not None
    assert (kept.issuer, kept.kid, kept.secret, kept.resource) == (issuer.issuer, issuer.kid, issuer.secret, issuer.resource)
    assert load(folder, issuer="http://127.0.0.1:9500").issuer == "http://127.0.0.1:9500"  # same key, another URL
    folder.chmod(0o755)
    save(issuer, folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700  # set again on every save
    path.chmod(0o644)
    with pytest.raises(PermissionError, match="readable by others"):
        load(folder)


@pytest.mark.slow
def test_oauth_client_credentials_find_the_local_issuer_by_themselves() -> None:
    """No token handed over: OAuthClient follows the 401 to the server's metadata, discovers the local
    issuer and asks its token endpoint (client credentials), as it would ask any authorization server."""
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with local_issuer(resource=resource) as issuer:
        args = [sys.executable, "-m", "wiremcp", "run", "examples/protected.py", "--http", "--port", str(port)]
        proc = subprocess.Popen(args, cwd=ROOT, env={**os.environ, **issuer.env()}, stderr=subprocess.PIPE)
        try:
            wait_listening(port, proc)

            async def main() -> None:
                auth = OAuthClient(grant=ClientCredentialsGrant("reporting-service", client_secret=issuer.secret))
                try:
                    async with wiremcp.Client.http(resource, auth=auth) as client:
                        who = (await client.call_tool("whoami", {})).structured_content
                finally:
                    await auth.aclose()
                assert who == {"subject": "reporting-service", "client_id": "reporting-service", "scopes": ["mcp"]}

            asyncio.run(main())
        finally:
            proc.terminate()
            proc.wait(10)
