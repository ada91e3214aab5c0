"""The HTTP security probes of wiremcp check (cli/_check/_http_security.py), over real HTTP on loopback.

Broken servers: tests/check/fixtures_rules/broken_http.py under uvicorn,
each with the defences ``BROKEN`` names taken out (a fixture per rule: the
flags of one server break rules that do not mask each other). Good servers:
the same app with nothing taken out, ``wiremcp run examples/echo.py --http``
and ``examples/protected.py`` trusting a real local issuer.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from _servers import free_port, serving_http, uvicorn_app, wiremcp_http

pytest.importorskip("aiohttp")
pytest.importorskip("uvicorn")

from wiremcp.cli._check._findings import Finding  # noqa: E402
from wiremcp.cli._check._http_security import check_http_security, session_id_problems  # noqa: E402

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parent / "fixtures_rules"
ROOT = Path(__file__).resolve().parents[2]


def run(url: str, *, auth: bool = False, issuer: Any = None) -> list[Finding]:
    return asyncio.run(check_http_security(url, auth=auth, issuer=issuer))


def ids(findings: list[Finding]) -> list[str]:
    return sorted(f.rule.id for f in findings)


def broken(flags: str, **env: str) -> Any:
    return uvicorn_app("broken_http:app", FIXTURES, {"BROKEN": flags, **env}, url_env="CHECK_URL")


def test_the_fixture_with_every_defence_passes_clean() -> None:
    with broken("") as url:
        assert run(url) == []


def test_wiremcp_over_http_passes_clean() -> None:
    with wiremcp_http(str(ROOT / "examples" / "echo.py")) as url:
        assert run(url) == []


@pytest.mark.parametrize(
    "flags, expected",
    [
        ("host,origin,cors-reflect,session-seq",
         ["security-cors-reflects-origin", "security-host-check", "security-origin-check", "security-session-id-strength"]),
        ("origin-400,cors-star,session-charset", ["security-cors-credentials", "security-origin-check", "security-session-id-charset"]),
    ],
)
def test_each_broken_defence_is_named(flags: str, expected: list[str]) -> None:
    with broken(flags) as url:
        got = run(url)
    assert ids(got) == expected, [f.message for f in got]
    for finding in got:
        assert finding.subject == url and finding.envelopes, finding
        assert any(line.startswith(">>> ") for line in finding.envelopes) and any(line.startswith("<<< ") for line in finding.envelopes)
    messages = {f.rule.id: f.message for f in got}
    if "origin" in flags.split(","):
        assert "accepted with 200, not 403" in messages["security-origin-check"]
        assert "sequential" in messages["security-session-id-strength"]
        assert "with credentials" in messages["security-cors-reflects-origin"]
    else:
        assert "refused with 400, not 403" in messages["security-origin-check"]


def test_session_id_strength_is_judged_on_length_alphabet_and_sequence() -> None:
    import secrets
    import uuid

    assert session_id_problems([str(uuid.uuid4()) for _ in range(3)]) == []
    assert session_id_problems([secrets.token_hex(16) for _ in range(3)]) == []
    assert session_id_problems([secrets.token_urlsafe(32) for _ in range(3)]) == []
    assert "sequential" in session_id_problems(["a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6-0007", "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6-0008"])[0]
    assert "bits" in session_id_problems([secrets.token_hex(8) for _ in range(3)])[0]
    assert "same id" in session_id_problems(["x" * 40, "x" * 40])[0]


# -- with --auth -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def issuer() -> Any:
    pytest.importorskip("jwt")
    from wiremcp.testing.issuer import local_issuer

    with local_issuer() as running:
        yield running


@pytest.mark.parametrize(
    "flags, expected",
    [
        ("", []),
        ("auth-audience,auth-expired,auth-signature,auth-unsigned",
         ["security-auth-audience", "security-auth-expired", "security-auth-signature", "security-auth-unsigned"]),
        ("auth-no-challenge,auth-no-metadata", ["security-auth-challenge", "security-auth-resource-metadata"]),
    ],
)
def test_a_protected_server_is_checked_with_tokens_of_a_local_issuer(issuer: Any, flags: str, expected: list[str]) -> None:
    with broken(flags, CHECK_ISSUER=issuer.url) as url:
        got = run(url, auth=True, issuer=issuer.issuer)
    assert ids(got) == expected, [f.message for f in got]
    for finding in got:
        if finding.rule.id != "security-auth-resource-metadata":
            assert any("Authorization: Bearer" in line for line in finding.envelopes) or "challenge" in finding.rule.id


def test_without_a_token_the_probes_behind_auth_are_reported_not_run(issuer: Any) -> None:
    with broken("", CHECK_ISSUER=issuer.url) as url:
        got = run(url, auth=True, issuer=None)
    assert {f.rule.id for f in got} == {"check-not-run"}
    assert sorted(f.message.split(":")[0] for f in got) == [
        "security-host-check", "security-origin-check", "security-session-id-charset", "security-session-id-strength",
    ]


def test_wiremcp_protected_example_passes_every_auth_check(issuer: Any) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    args = [sys.executable, "-m", "wiremcp", "run", str(ROOT / "examples" / "protected.py"), "--http", "--host", "127.0.0.1", "--port", str(port)]
    with serving_http(args, port, issuer.env(url)):
        got = run(url, auth=True, issuer=issuer.issuer)
    assert got == [], [(f.rule.id, f.message) for f in got]


def test_a_server_that_does_not_answer_is_reported_not_run() -> None:
    got = run(f"http://127.0.0.1:{free_port()}/mcp")  # nothing listens there
    assert {f.rule.id for f in got} == {"check-not-run"} and len(got) == 6
    assert all("ClientConnectorError" in f.message for f in got)
