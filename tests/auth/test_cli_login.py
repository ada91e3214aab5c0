"""``wiremcp login URL``, ``--auth`` and ``wiremcp logout URL`` against the real authorization server
(oidc-provider, tests/auth/as/) and ``examples/protected.py``, in subprocesses, with a stand-in browser
($BROWSER, fake_browser.py) that follows the authorization URL through the server's login pages to
the loopback redirect listener, as a person who approves would."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("jwt")

from .server._oauth import AuthorizationServer, ProtectedServer, ec_key  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def servers(node: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AuthorizationServer, ProtectedServer]]:
    issuer = AuthorizationServer(node, tmp_path_factory.mktemp("as"), account="carol").start([ec_key("k1")])
    try:
        protected = ProtectedServer(issuer.issuer)
        try:
            yield issuer, protected
        finally:
            protected.stop()
    finally:
        issuer.stop()


def wiremcp(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wiremcp", *argv], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_login_then_auth_then_logout(servers: tuple[AuthorizationServer, ProtectedServer], tmp_path: Path) -> None:
    issuer, protected = servers
    log = tmp_path / "browser.log"
    state = tmp_path / "state"
    env = {
        **os.environ,
        "BROWSER": f"{sys.executable} {ROOT / 'tests' / 'auth' / 'fake_browser.py'} %s",
        "FAKE_BROWSER_LOG": str(log),
        "XDG_STATE_HOME": str(state),
    }

    login = wiremcp("login", protected.url, env=env)
    assert login.returncode == 0, login.stdout + login.stderr
    assert f"logged in to {protected.url}" in login.stdout
    assert f"authorization server: {issuer.issuer}" in login.stdout and "scopes: mcp" in login.stdout
    [opened] = log.read_text().splitlines()
    assert opened.startswith(issuer.issuer + "/auth?") and "code_challenge_method=S256" in opened
    assert "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in opened  # the loopback listener, an ephemeral port
    # tokens at rest: readable by the user only
    directory = state / "wiremcp" / "oauth"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    [stored] = list(directory.iterdir())
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600

    # --auth uses the stored tokens: no browser this time
    called = wiremcp("call", "--auth", "--no-color", protected.url, "whoami", env=env)
    assert called.returncode == 0, called.stdout + called.stderr
    assert '"subject":"carol"' in called.stdout.replace(" ", "")
    assert len(log.read_text().splitlines()) == 1

    # logout revokes them at the authorization server (RFC 7009), then forgets them; the
    # server then refuses a call without --auth
    tokens = json.loads(stored.read_text())["entry"]["tokens"]
    assert issuer.introspect(tokens["refresh_token"], "refresh_token")["active"] is True
    logout = wiremcp("logout", protected.url, env=env)
    assert logout.returncode == 0, logout.stdout + logout.stderr
    assert logout.stdout == f"logged out of {protected.url} (authorization server {issuer.issuer}): tokens revoked\n"
    assert logout.stderr == ""
    assert issuer.introspect(tokens["refresh_token"], "refresh_token") == {"active": False}
    assert list(directory.iterdir()) == []
    again = wiremcp("logout", protected.url, env=env)
    assert again.returncode == 1 and "no tokens kept" in again.stdout
    refused = wiremcp("call", "--no-color", protected.url, "whoami", env=env)
    assert refused.returncode != 0 and "Unauthorized" in refused.stdout + refused.stderr


def test_logout_when_revocation_fails_still_forgets(
    servers: tuple[AuthorizationServer, ProtectedServer], tmp_path: Path
) -> None:
    """The authorization server is gone by logout time: one line says the tokens could not be
    revoked, and they are deleted here all the same."""
    issuer, protected = servers
    log = tmp_path / "browser.log"
    env = {
        **os.environ,
        "BROWSER": f"{sys.executable} {ROOT / 'tests' / 'auth' / 'fake_browser.py'} %s",
        "FAKE_BROWSER_LOG": str(log),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    login = wiremcp("login", protected.url, env=env)
    assert login.returncode == 0, login.stdout + login.stderr
    directory = tmp_path / "state" / "wiremcp" / "oauth"
    [stored] = list(directory.iterdir())
    doc = json.loads(stored.read_text())
    # the same entry, but its authorization server now listens nowhere (a port nothing holds)
    gone = AuthorizationServer(issuer.node, tmp_path).issuer
    from wiremcp.auth import FileTokenStore

    store = FileTokenStore(directory)
    stored.unlink()
    doc["entry"]["client"]["issuer"] = gone
    asyncio.run(store.save(gone, doc["resource"], doc["entry"]))

    logout = wiremcp("logout", protected.url, env=env)
    assert logout.returncode == 0, logout.stdout + logout.stderr
    assert logout.stdout == f"logged out of {protected.url} (authorization server {gone}): tokens forgotten here\n"
    [line] = logout.stderr.splitlines()
    assert line.startswith(f"wiremcp logout: could not revoke the tokens at {gone} (authorization server metadata")
    assert line.endswith("); they were removed here all the same") and "Traceback" not in logout.stderr
    assert list(directory.iterdir()) == []
    assert doc["entry"]["tokens"]["refresh_token"] not in logout.stdout + logout.stderr


def test_login_failure_names_the_step(servers: tuple[AuthorizationServer, ProtectedServer], tmp_path: Path) -> None:
    """A browser that never comes back: the loopback listener times out and says so."""
    _, protected = servers
    env = {**os.environ, "BROWSER": "true", "XDG_STATE_HOME": str(tmp_path / "state")}
    failed = wiremcp("login", "--timeout", "2", protected.url, env=env)
    assert failed.returncode == 2
    assert "no answer on the redirect URI within 2 s" in failed.stderr
    assert "Traceback" not in failed.stderr


def test_login_and_logout_want_an_http_url(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    for command in ("login", "logout"):
        done = wiremcp(command, "file:///etc/passwd", env=env)
        assert done.returncode == 2 and "not an http(s) URL" in done.stderr
