"""``wiremcp check URL --issuer DIR``: a protected server's token validation, end to end, as a user runs it.

The issuer is the real local one (`wiremcp.testing.issuer.local_issuer`, as
``wiremcp auth dev`` runs it), kept in a state directory with
`wiremcp.auth.dev.save` as ``wiremcp auth dev`` keeps it; ``wiremcp check``
runs as a subprocess and reads it from there. Servers: examples/protected.py
over HTTP trusting that issuer (clean), and tests/check/fixtures_rules/
broken_http.py with ``BROKEN=auth-unsigned`` (it accepts an ``alg: none``
token).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from _servers import free_port, serving_http, uvicorn_app
from test_check_wire import DESKTOP_URL, ROOT, check, report

pytest.importorskip("jwt")
pytest.importorskip("uvicorn")
pytest.importorskip("aiohttp")

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parent / "fixtures_rules"
TOKEN_RULES = ["security-auth-audience", "security-auth-expired", "security-auth-signature", "security-auth-unsigned"]


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str]]:
    """A running local issuer and the state directory it is kept in."""
    from wiremcp.auth.dev import save
    from wiremcp.testing.issuer import local_issuer

    state = tmp_path_factory.mktemp("issuer")
    with local_issuer() as running:
        save(running.issuer, state)
        yield running, str(state)


def test_the_protected_example_passes_every_check_with_the_issuer(issuer: tuple[Any, str]) -> None:
    running, state = issuer
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    args = [sys.executable, "-m", "wiremcp", "run", str(ROOT / "examples" / "protected.py"), "--http", "--port", str(port)]
    with serving_http(args, port, {**running.env(url), "PYTHONPATH": str(ROOT / "src")}):
        done = check("--json", "--issuer", state, url)
    out = report(done)
    assert done.returncode == 0 and {f["rule"] for f in out["findings"]} == DESKTOP_URL, out["findings"]
    assert set(TOKEN_RULES + ["security-auth-challenge"]) <= set(out["rules"]), out["rules"]
    assert out["eras"] == ["modern", "legacy"]  # the wire probes carried a good token


def test_a_server_that_accepts_an_unsigned_token_is_named(issuer: tuple[Any, str]) -> None:
    running, state = issuer
    with uvicorn_app("broken_http:app", FIXTURES, {"BROKEN": "auth-unsigned", "CHECK_ISSUER": running.url}, url_env="CHECK_URL") as url:
        done = check("--json", "--issuer", state, "--only", ",".join(TOKEN_RULES), url)
    out = report(done)
    assert done.returncode == 1, out
    found = [f for f in out["findings"] if f["rule"] != "check-not-run"]
    assert [f["rule"] for f in found] == ["security-auth-unsigned"], out["findings"]
    assert "alg: none" in found[0]["message"] and "accepted with 200" in found[0]["message"]


def test_without_an_issuer_the_token_rules_are_not_run_with_a_hint(issuer: tuple[Any, str]) -> None:
    running, _ = issuer
    with uvicorn_app("broken_http:app", FIXTURES, {"BROKEN": "", "CHECK_ISSUER": running.url}, url_env="CHECK_URL") as url:
        token = running.token("mcp", resource=url)
        done = check("--json", "--auth", "-H", f"Authorization: Bearer {token}", "--only", ",".join(TOKEN_RULES), url)
    out = report(done)
    assert done.returncode == 0
    not_run = sorted(f["message"] for f in out["findings"] if f["rule"] == "check-not-run" and f["message"].startswith("security-auth-"))
    assert [m.split(":")[0] for m in not_run] == TOKEN_RULES and all("--issuer DIR" in m for m in not_run), not_run
    assert not set(TOKEN_RULES) & set(out["rules"])


#: the HTTP security probes a protected server refuses without a token (then they are check-not-run)
BEHIND_AUTH = ["security-cors-credentials", "security-cors-reflects-origin", "security-host-check", "security-origin-check",
               "security-session-id-charset", "security-session-id-strength"]


def protected(issuer_url: str, port: int) -> tuple[list[str], dict[str, str], str]:
    """How to serve examples/protected.py on ``port`` trusting ``issuer_url``: its argv, environment and URL."""
    url = f"http://127.0.0.1:{port}/mcp"
    args = [sys.executable, "-m", "wiremcp", "run", str(ROOT / "examples" / "protected.py"), "--http", "--port", str(port)]
    return args, {"WIREMCP_AUTH_ISSUER": issuer_url, "WIREMCP_AUTH_RESOURCE": url, "PYTHONPATH": str(ROOT / "src")}, url


def test_with_auth_and_the_users_authorization_header_every_probe_runs(issuer: tuple[Any, str]) -> None:
    running, _ = issuer
    port = free_port()
    args, env, url = protected(running.url, port)
    with serving_http(args, port, env):
        token = running.token("mcp", resource=url)
        done = check("--json", "--auth", "-H", f"Authorization: Bearer {token}", url)
    out = report(done)
    assert done.returncode == 0, out["findings"]
    # only the token rules wait for an issuer; Host, Origin, CORS and session ids were probed with the header given
    not_run = sorted(f["message"].split(":")[0] for f in out["findings"] if f["rule"] == "check-not-run")
    assert not_run == TOKEN_RULES, out["findings"]
    assert {f["rule"] for f in out["findings"]} - {"check-not-run"} == DESKTOP_URL, out["findings"]
    assert set(BEHIND_AUTH + ["security-auth-challenge", "security-auth-resource-metadata"]) <= set(out["rules"]), out["rules"]
    assert out["eras"] == ["modern", "legacy"]


def test_auth_dev_uses_the_issuer_wiremcp_auth_dev_keeps(tmp_path: Path) -> None:
    state = {"XDG_STATE_HOME": str(tmp_path), "HOME": str(tmp_path)}
    port, issuer_port = free_port(), free_port()
    args, env, url = protected(f"http://127.0.0.1:{issuer_port}", port)
    before = check("--auth-dev", url, env=state)  # no issuer has run for this user yet
    assert before.returncode == 2 and "start one with: wiremcp auth dev" in before.stderr, before.stderr
    dev = [sys.executable, "-m", "wiremcp", "auth", "dev", "--port", str(issuer_port), "--resource", url]
    with serving_http(dev, issuer_port, {**state, "PYTHONPATH": str(ROOT / "src")}), serving_http(args, port, env):
        assert (tmp_path / "wiremcp" / "dev-issuer" / "issuer.json").is_file()
        done = check("--json", "--auth-dev", url, env=state)
    out = report(done)
    assert done.returncode == 0 and {f["rule"] for f in out["findings"]} == DESKTOP_URL, out["findings"]
    assert set(TOKEN_RULES + BEHIND_AUTH + ["security-auth-challenge"]) <= set(out["rules"]), out["rules"]
    assert out["eras"] == ["modern", "legacy"]  # the wire probes carried a good token of the kept issuer


def test_an_issuer_not_kept_is_an_options_error(tmp_path: Path) -> None:
    done = check("--issuer", str(tmp_path), "http://127.0.0.1:9/mcp")
    assert done.returncode == 2 and "no issuer is kept in" in done.stderr and "wiremcp auth dev" in done.stderr
    done = check("--issuer", str(tmp_path), "examples/echo.py")
    assert done.returncode == 2 and "--issuer goes with a URL target" in done.stderr
