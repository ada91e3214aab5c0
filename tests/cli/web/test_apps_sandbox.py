"""The MCP Apps side of the inspector without a browser: the sandbox proxy's guard, the view CSP, the view-host checks.

apps.mdx, "Sandbox proxy" and "Content Security Policy Enforcement": the
sandbox is another origin (a second loopback port, its own token), framed only
by the inspector page; the view's CSP comes from ``_meta.ui.csp`` with the
restrictive default, and only well-formed origins are pasted into it. Each
envelope the page reports joins the wire as a ``view-host`` record with the
problems the checks find.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import orjson
import pytest

from _servers import raw_request
from inspector_harness import InspectorProcess
from test_app import events_until, fetch, post
from wiremcp.cli._web._sandbox import DEFAULT_VIEW_CSP, view_csp
from wiremcp.cli._web._viewcheck import ViewChecker

pytestmark = pytest.mark.slow

TAIL = "; frame-src 'none'; object-src 'none'; base-uri 'self'; sandbox allow-scripts"


@pytest.fixture(scope="module")
def inspector() -> Iterator[InspectorProcess]:
    process = InspectorProcess.of_test_server()
    try:
        yield process
    finally:
        process.stop()


def sandbox_of(inspector: InspectorProcess) -> tuple[int, str]:
    reply = fetch(inspector, "GET", "api/host")
    assert reply.status == 200
    url = reply.json()["sandbox"]
    assert url.startswith("http://127.0.0.1:") and url.endswith("/sandbox")
    port = int(url.split(":")[2].split("/")[0])
    return port, url.split("/")[3]


def sandbox_fetch(
    port: int, method: str, path: str, *, host: str | None = None, headers: dict[str, str] | None = None, body: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    return raw_request(port, method, path, host or f"127.0.0.1:{port}", headers, body)


# -- the view's CSP -------------------------------------------------------------------------


def test_no_csp_is_the_restrictive_default() -> None:
    built = view_csp(None)
    assert built.policy == DEFAULT_VIEW_CSP + TAIL
    assert "connect-src 'none'" in built.policy and (built.applied, built.dropped) == ({}, [])


def test_declared_origins_go_where_the_spec_puts_them() -> None:
    built = view_csp(
        {
            "connectDomains": ["https://api.example.com", "wss://*.example.com"],
            "resourceDomains": ["https://cdn.example.com"],
            "frameDomains": ["https://player.example.com"],
            "baseUriDomains": ["https://base.example.com"],
        }
    )
    assert built.policy.split("; ") == [
        "default-src 'none'",
        "script-src 'self' 'unsafe-inline' https://cdn.example.com",
        "style-src 'self' 'unsafe-inline' https://cdn.example.com",
        "connect-src 'self' https://api.example.com wss://*.example.com",
        "img-src 'self' data: https://cdn.example.com",
        "font-src 'self' https://cdn.example.com",
        "media-src 'self' data: https://cdn.example.com",
        "frame-src https://player.example.com",
        "object-src 'none'",
        "base-uri https://base.example.com",
        "sandbox allow-scripts",
    ]
    assert built.dropped == []


@pytest.mark.parametrize(
    "origin", ["https://x.example.com; script-src *", "*", "'self'", "https://x.example.com/path", "javascript:alert(1)", 7, "data:"]
)
def test_an_origin_that_is_not_scheme_host_port_is_dropped_and_said(origin: Any) -> None:
    built = view_csp({"connectDomains": ["https://ok.example.com", origin]})
    assert "connect-src 'self' https://ok.example.com;" in built.policy
    assert built.applied == {"connectDomains": ["https://ok.example.com"]}
    assert len(built.dropped) == 1 and "connectDomains" in built.dropped[0]
    assert built.policy.count(";") == 10  # no directive added


def test_a_csp_that_is_not_an_object_or_lists_is_the_default_with_a_reason() -> None:
    assert view_csp("connect-src *").policy == DEFAULT_VIEW_CSP + TAIL
    assert view_csp("connect-src *").dropped
    built = view_csp({"connectDomains": "https://a.example.com"})
    assert "connect-src 'self';" in built.policy and built.dropped == ["connectDomains is not a list of origins: ignored"]


# -- the view-host checks -------------------------------------------------------------------


def check(checker: ViewChecker, direction: str, message: Any, sender: str = "") -> list[str]:
    return [p["code"] for p in checker.check_line(direction, orjson.dumps(message), sender)["problems"]]  # type: ignore[arg-type]


def test_a_well_behaved_conversation_has_no_problem() -> None:
    c = ViewChecker()
    assert check(c, "v2h", {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready", "params": {}}, "sandbox") == []
    assert check(c, "h2v", {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-resource-ready", "params": {"html": "<p>"}}, "sandbox") == []
    init = {"appInfo": {"name": "v", "version": "1"}, "appCapabilities": {}, "protocolVersion": "2026-01-26"}
    assert check(c, "v2h", {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": init}) == []
    result = {
        "protocolVersion": "2026-01-26", "hostInfo": {"name": "h", "version": "1"}, "hostCapabilities": {"serverTools": {}},
        "hostContext": {"theme": "dark", "displayMode": "inline", "containerDimensions": {"width": 400, "maxHeight": 600}, "locale": "en"},
    }
    assert check(c, "h2v", {"jsonrpc": "2.0", "id": 1, "result": result}) == []
    assert check(c, "v2h", {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}}) == []
    assert check(c, "h2v", {"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": {}}}) == []
    assert check(c, "v2h", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "t", "arguments": {}}}) == []
    assert check(c, "h2v", {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "ok"}]}}) == []
    assert check(c, "v2h", {"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"width": 3, "height": 4}}) == []


def test_each_rule_names_its_problem() -> None:
    c = ViewChecker()
    assert check(c, "v2h", "hello") == ["not-an-object"]
    assert check(c, "v2h", {"jsonrpc": "1.0", "id": 9, "method": "ping"}) == ["bad-jsonrpc"]
    assert check(c, "v2h", {"jsonrpc": "2.0", "id": None, "method": "ping"}) == ["null-id"]
    assert check(c, "v2h", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "t"}}) == ["before-initialize"]
    assert check(c, "v2h", {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready", "params": {}}) == ["sandbox-reserved"]
    assert check(c, "v2h", {"jsonrpc": "2.0", "id": 4, "method": "ui/bogus"}) == ["unknown-method"]
    assert check(c, "v2h", {"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": {}}) == ["wrong-direction"]
    assert check(c, "h2v", {"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": {}}}) == [
        "host-before-initialized"
    ]
    assert check(c, "h2v", {"jsonrpc": "2.0", "id": 77, "result": {}}) == ["unknown-id"]
    assert check(c, "v2h", {"jsonrpc": "2.0", "id": 5, "method": "ui/initialize", "params": {"appInfo": 1}}) == ["schema"]
    assert check(c, "h2v", {"jsonrpc": "2.0", "id": 5, "error": {"code": -32602, "message": "bad"}}) == []
    assert check(c, "h2v", {"jsonrpc": "2.0", "id": 5, "error": {"code": -32602, "message": "bad"}}) == ["already-answered"]


def test_the_checker_speaks_of_the_view_and_the_host() -> None:
    c = ViewChecker()
    problems = c.check_line("h2v", b'{"jsonrpc":"2.0","id":1,"result":{}}')["problems"]
    assert "the host replied" in problems[0]["message"] and "the view never sent" in problems[0]["message"]


# -- the sandbox proxy over loopback HTTP ---------------------------------------------------


def test_the_sandbox_is_another_origin_with_its_own_token(inspector: InspectorProcess) -> None:
    port, token = sandbox_of(inspector)
    assert port != inspector.port and token != inspector.token and len(token) >= 40
    page = fetch(inspector, "GET", "")
    assert f"; frame-src http://127.0.0.1:{port}; frame-ancestors 'none';" in page.headers["content-security-policy"]
    status, headers, body = sandbox_fetch(port, "GET", f"/{token}/sandbox")
    assert status == 200 and b'<script src="sandbox.js" defer>' in body and b"<style" not in body and b" style=" not in body
    csp = headers["content-security-policy"]
    assert f"frame-ancestors http://127.0.0.1:{inspector.port} http://localhost:{inspector.port};" in csp
    assert "script-src 'self';" in csp and "connect-src 'self';" in csp and "frame-src 'self';" in csp and "object-src 'none'" in csp
    assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "no-referrer"


def test_the_sandbox_refuses_what_is_not_its_page(inspector: InspectorProcess) -> None:
    port, token = sandbox_of(inspector)
    own = f"http://127.0.0.1:{port}"
    body = orjson.dumps({"html": "<p>hi</p>"})
    json_type = {"Content-Type": "application/json"}
    assert sandbox_fetch(port, "GET", f"/{inspector.token}/sandbox")[0] == 403  # the page's token opens nothing here
    assert sandbox_fetch(port, "GET", f"/{token}/sandbox", host=f"evil.example:{port}")[0] == 403
    assert sandbox_fetch(port, "POST", f"/{token}/views", headers=json_type, body=body)[0] == 403  # no Origin
    page_origin = {"Origin": f"http://127.0.0.1:{inspector.port}", **json_type}
    assert sandbox_fetch(port, "POST", f"/{token}/views", headers=page_origin, body=body)[0] == 403
    assert sandbox_fetch(port, "POST", f"/{token}/views", headers={"Origin": "null", **json_type}, body=body)[0] == 403  # a view
    cross = {"Origin": own, "Sec-Fetch-Site": "cross-site", **json_type}
    assert sandbox_fetch(port, "POST", f"/{token}/views", headers=cross, body=body)[0] == 403
    assert sandbox_fetch(port, "POST", f"/{token}/views", headers={"Origin": own, **json_type}, body=b"[1]")[0] == 400
    assert sandbox_fetch(port, "GET", f"/{token}/views/999999")[0] == 404


def test_a_view_is_served_with_the_csp_built_from_its_metadata(inspector: InspectorProcess) -> None:
    port, token = sandbox_of(inspector)
    sent = {"html": "<!DOCTYPE html><p>view</p>", "csp": {"connectDomains": ["https://api.example.com", "https://x; img-src *"]},
            "permissions": {"camera": {}, "clipboardWrite": {}}}
    headers = {"Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/json"}
    status, _, body = sandbox_fetch(port, "POST", f"/{token}/views", headers=headers, body=orjson.dumps(sent))
    assert status == 200
    answer = json.loads(body)
    assert answer["url"].startswith("views/") and answer["allow"] == "camera; clipboard-write"
    assert answer["applied"] == {"connectDomains": ["https://api.example.com"]} and len(answer["dropped"]) == 1
    status, served, html = sandbox_fetch(port, "GET", f"/{token}/{answer['url']}")
    assert (status, html) == (200, b"<!DOCTYPE html><p>view</p>")
    assert served["content-security-policy"] == answer["csp"] == view_csp(sent["csp"]).policy
    assert "img-src *" not in served["content-security-policy"]
    # the page asks the inspector for the same policy, to show it
    shown = post(inspector, "api/view-csp", {"csp": sent["csp"]}).json()
    assert shown["policy"] == answer["csp"] and shown["dropped"] == answer["dropped"]


@pytest.mark.parametrize(
    "origin", ["https://api.example.com\n", "wss://rt.example.com:8443\n", "https://*.example.com\n", "https://a.example.com\nX-Injected: 1"]
)
def test_a_csp_origin_ending_in_a_newline_is_dropped_by_the_sandbox(inspector: InspectorProcess, origin: str) -> None:
    """Issue 23, defect 6b: the proxy's origin pattern was ``^...$`` with ``match``, and ``$`` matches
    before a final newline: a view's CSP carried a line break into the served header. Over HTTP
    against the real inspector: the origin is dropped and said, the served policy has no line break."""
    port, token = sandbox_of(inspector)
    sent = {"html": "<p>v</p>", "csp": {"connectDomains": ["https://ok.example.com", origin], "resourceDomains": [origin]}}
    headers = {"Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/json"}
    status, _, body = sandbox_fetch(port, "POST", f"/{token}/views", headers=headers, body=orjson.dumps(sent))
    assert status == 200, body
    answer = json.loads(body)
    assert answer["applied"] == {"connectDomains": ["https://ok.example.com"]}
    assert len(answer["dropped"]) == 2 and "\n" not in answer["csp"] and "\r" not in answer["csp"]
    status, served, html = sandbox_fetch(port, "GET", f"/{token}/{answer['url']}")
    assert (status, html) == (200, b"<p>v</p>")
    assert served["content-security-policy"] == answer["csp"] and "x-injected" not in served
    shown = post(inspector, "api/view-csp", {"csp": sent["csp"]}).json()
    assert shown["policy"] == answer["csp"] and len(shown["dropped"]) == 2


def test_view_envelopes_join_the_wire_checked(inspector: InspectorProcess) -> None:
    for bad, why in (
        ({"view": 1, "direction": "v2h", "text": "{}"}, "the body is a non-empty list of envelopes"),
        ([], "the body is a non-empty list of envelopes"),
        ([{"view": 0, "direction": "v2h", "text": "{}"}], "view must be the page's positive integer of the view"),
        ([{"view": 1, "direction": "c2s", "text": "{}"}], "direction must be 'v2h' or 'h2v'"),
        ([{"view": 1, "direction": "v2h", "text": {}}], "text must be the envelope as JSON text"),
        ([{"view": 1, "direction": "v2h", "text": "{}", "sender": "server"}], "sender is 'sandbox' or absent"),
        ([{"view": 1, "direction": "v2h", "text": "{}", "age_ms": -1}], "age_ms is a number of milliseconds, 0 to 600000"),
    ):
        reply = post(inspector, "api/view-wire", bad)
        assert (reply.status, reply.json()) == (400, {"error": why})
    sent = [
        {"view": 41, "direction": "v2h", "text": '{"jsonrpc":"2.0","id":1,"method":"ui/initialize","params":{}}', "age_ms": 5},
        {"view": 41, "direction": "h2v", "text": '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no appInfo"}}'},
    ]
    records = post(inspector, "api/view-wire", sent).json()
    assert [(r["channel"], r["view"], r["direction"], r["sender"], r["receiver"], r["kind"]) for r in records] == [
        ("view-host", 41, "v2h", "view", "host", "request"),
        ("view-host", 41, "h2v", "host", "view", "error"),
    ]
    assert [p["code"] for p in records[0]["problems"]] == ["schema"]
    assert records[1]["elapsed_ms"] is not None

    def seen(events: list[tuple[str, Any]]) -> bool:
        return any(name == "wire" and data["seq"] == records[1]["seq"] for name, data in events)

    streamed = [data for name, data in events_until(inspector, seen) if name == "wire" and data.get("view") == 41]
    assert [r["seq"] for r in streamed] == [r["seq"] for r in records]
