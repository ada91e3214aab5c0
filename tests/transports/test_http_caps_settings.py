"""Issue 23, item 7: the HTTP caps' settings, and whom a per-client cap counts.

The end-to-end checks are in tests/scale/test_per_client_caps.py (behind a
real nginx) and the other tests of this folder; here: the ``WIREMCP_*``
variables (an option wins, a bad value names its variable), the command-line
options, and the key of an authenticated request (its principal, whatever
its address).
"""

from __future__ import annotations

import subprocess
from types import SimpleNamespace

import pytest

from conftest import SERVERS, wiremcp_cmd
from wiremcp.server.transport import current_auth
from wiremcp.transports.http import HTTP_ENV, from_environment
from wiremcp.transports.http._client_key import client_key


def test_the_caps_come_from_the_environment_unless_given() -> None:
    env = {"WIREMCP_MAX_LISTENS_PER_CLIENT": "off", "WIREMCP_MAX_SESSIONS_PER_CLIENT": "7",
           "WIREMCP_TRUSTED_PROXIES": "10.0.0.5, 10.1.0.0/16", "WIREMCP_MAX_HEAD_SIZE": "32768"}  # fmt: skip
    got = from_environment({"max_sessions_per_client": 3}, env)
    assert got == {
        "max_sessions_per_client": 3,  # given: wins
        "max_listens_per_client": None,
        "trusted_proxies": ["10.0.0.5", "10.1.0.0/16"],
        "max_head_size": 32768,
    }
    assert from_environment({}, {}) == {}
    assert set(HTTP_ENV) == {"max_sessions", "max_sessions_per_client", "max_listens_per_client",
                             "limit_concurrency", "max_head_size", "trusted_proxies"}  # fmt: skip


@pytest.mark.parametrize("value", ["0", "-3", "lots", ""])
def test_a_bad_value_names_its_variable(value: str) -> None:
    if value == "":
        assert from_environment({}, {"WIREMCP_MAX_SESSIONS": value}) == {}  # empty: unset
        return
    with pytest.raises(ValueError, match="WIREMCP_MAX_SESSIONS="):
        from_environment({}, {"WIREMCP_MAX_SESSIONS": value})


def test_the_cap_options_apply_only_with_http() -> None:
    done = subprocess.run(
        wiremcp_cmd("run", str(SERVERS / "sample.py"), "--max-listens-per-client", "4", "--trusted-proxy", "10.0.0.1"),
        capture_output=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert b"--max-listens-per-client, --trusted-proxy apply only with --http" in done.stderr
    done = subprocess.run(
        wiremcp_cmd("run", str(SERVERS / "sample.py"), "--http", "--max-listens-per-client", "0"),
        capture_output=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and b"'0' is not positive" in done.stderr


def test_an_authenticated_request_is_counted_per_principal_whatever_its_address() -> None:
    def key(address: str, who: object) -> str:
        token = current_auth.set(who)  # type: ignore[arg-type]
        try:
            return client_key({"type": "http", "client": (address, 4000)})
        finally:
            current_auth.reset(token)

    alice = SimpleNamespace(issuer="https://as", subject="alice", client_id="app")
    alice_other_app = SimpleNamespace(issuer="https://as", subject="alice", client_id="cli")
    bob = SimpleNamespace(issuer="https://as", subject="bob", client_id="app")
    assert key("10.0.0.1", alice) == key("10.0.0.2", alice)  # one principal, two addresses: one share
    assert len({key("10.0.0.1", alice), key("10.0.0.1", alice_other_app), key("10.0.0.1", bob)}) == 3
    assert key("10.0.0.1", None) == key("10.0.0.1", None) != key("10.0.0.2", None)
    assert key("10.0.0.1", None) != key("10.0.0.1", alice)


def test_uvicorn_reads_forwarded_addresses_only_from_trusted_proxies_and_bounds_the_head_on_httptools() -> None:
    import importlib.util

    from wiremcp import Server
    from wiremcp.transports.http import MCPApp, uvicorn_config

    app = MCPApp(Server("proxies"))
    plain = uvicorn_config(app)
    assert plain.proxy_headers is False and plain.forwarded_allow_ips == []  # FORWARDED_ALLOW_IPS is not read
    trusted = uvicorn_config(app, trusted_proxies=["10.0.0.10", "10.1.0.0/16"])
    assert trusted.proxy_headers is True and trusted.forwarded_allow_ips == ["10.0.0.10", "10.1.0.0/16"]
    if importlib.util.find_spec("httptools") is not None:
        assert plain.http == "wiremcp.transports.http._head_limit:BoundedHttpToolsProtocol"
    else:
        assert plain.http == "h11"
