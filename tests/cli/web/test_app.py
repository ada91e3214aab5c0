"""The web inspector over real loopback HTTP, without a browser: the guard, the headers, the API, the stream.

security_best_practices.mdx (local servers and proxies): a page on
127.0.0.1 that can reach a process that starts servers must refuse every
request that is not its own. Each check here is one refusal: a wrong token,
Host, Origin or Sec-Fetch-Site is 403, and every response, 403 included,
carries the strict Content-Security-Policy.
"""

from __future__ import annotations

import http.client
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import orjson
import pytest

from inspector_harness import HERE, InspectorProcess

pytestmark = pytest.mark.slow

#: The page's policy: the one frame source is the sandbox proxy of MCP Apps views (another loopback port).
CSP = re.compile(
    re.escape("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; ")
    + r"frame-src http://127\.0\.0\.1:(\d+); "
    + re.escape("frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
    + "$"
)


@pytest.fixture(scope="module")
def inspector() -> Iterator[InspectorProcess]:
    process = InspectorProcess.of_test_server()
    try:
        yield process
    finally:
        process.stop()


class Reply:
    def __init__(self, response: http.client.HTTPResponse) -> None:
        self.status = response.status
        self.headers = {k.lower(): v for k, v in response.getheaders()}
        self.body = response.read()

    def json(self) -> Any:
        return orjson.loads(self.body)


def fetch(
    inspector: InspectorProcess, method: str, path: str, *, host: str | None = None, headers: dict[str, str] | None = None,
    body: bytes | None = None, token: str | None = None,
) -> Reply:
    connection = http.client.HTTPConnection("127.0.0.1", inspector.port, timeout=30)
    try:
        connection.putrequest(method, f"/{inspector.token if token is None else token}/{path}", skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host or f"127.0.0.1:{inspector.port}")
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        return Reply(connection.getresponse())
    finally:
        connection.close()


def post(inspector: InspectorProcess, path: str, data: Any, **headers: str) -> Reply:
    sent = {"Origin": f"http://127.0.0.1:{inspector.port}", "Content-Type": "application/json", **headers}
    return fetch(inspector, "POST", path, headers=sent, body=orjson.dumps(data))


def assert_strict_headers(reply: Reply) -> None:
    assert CSP.match(reply.headers["content-security-policy"])
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert reply.headers["referrer-policy"] == "no-referrer"
    assert reply.headers["x-frame-options"] == "DENY"
    assert reply.headers["cache-control"] == "no-store"


def test_the_page_and_its_files_are_served_with_the_strict_headers(inspector: InspectorProcess) -> None:
    page = fetch(inspector, "GET", "")
    assert page.status == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
    assert b'<script src="inspector.js" defer></script>' in page.body
    assert_strict_headers(page)
    for name, kind in (("inspector.js", "text/javascript"), ("inspector.css", "text/css"), ("favicon.svg", "image/svg+xml")):
        reply = fetch(inspector, "GET", name)
        assert reply.status == 200 and reply.headers["content-type"].startswith(kind), name
        assert_strict_headers(reply)
    # the URL as printed, and the same page at localhost
    assert inspector.url == f"http://127.0.0.1:{inspector.port}/{inspector.token}/"
    assert fetch(inspector, "GET", "", host=f"localhost:{inspector.port}").status == 200


def test_the_token_is_random_and_long() -> None:
    first, second = InspectorProcess.of_test_server(), InspectorProcess.of_test_server()
    try:
        assert first.token != second.token and len(first.token) >= 40
    finally:
        assert first.stop() == second.stop() == 130  # SIGINT (Ctrl-C): stopped, as `wiremcp inspect` is


@pytest.mark.parametrize(
    "token", ["", "wrong", "x" * 43, "TOKEN-but-one-char-off"], ids=["none", "short", "same-length", "near"]
)
def test_a_wrong_token_is_403(inspector: InspectorProcess, token: str) -> None:
    if token == "TOKEN-but-one-char-off":
        token = inspector.token[:-1] + ("A" if inspector.token[-1] != "A" else "B")
    for path in ("", "inspector.js", "events", "api/state"):
        reply = fetch(inspector, "GET", path, token=token)
        assert reply.status == 403 and reply.body == b"wrong token", path
        assert_strict_headers(reply)
    reply = fetch(
        inspector, "POST", "api/call", token=token, body=b'{"kind": "tool", "name": "echo", "arguments": {"text": "x"}}',
        headers={"Origin": f"http://127.0.0.1:{inspector.port}", "Content-Type": "application/json"},
    )
    assert reply.status == 403 and reply.body == b"wrong token"


@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:{port}", "127.0.0.1", "127.0.0.1:1", "localhost", "[::1]:{port}", "127.0.0.2:{port}", "0.0.0.0:{port}"],
)
def test_a_wrong_host_is_403(inspector: InspectorProcess, host: str) -> None:
    reply = fetch(inspector, "GET", "", host=host.format(port=inspector.port))
    assert reply.status == 403 and reply.body == b"Host must be 127.0.0.1 or localhost with this port"
    assert_strict_headers(reply)


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "null", "http://localhost:{port}", "https://127.0.0.1:{port}", "http://127.0.0.1:1"]
)
def test_a_foreign_origin_is_403(inspector: InspectorProcess, origin: str) -> None:
    origin = origin.format(port=inspector.port)
    assert fetch(inspector, "GET", "api/state", headers={"Origin": origin}).status == 403
    reply = post(inspector, "api/call", {"kind": "tool", "name": "echo", "arguments": {"text": "x"}}, Origin=origin)
    assert reply.status == 403 and reply.body == b"Origin is not this page's"
    # the page's own origin passes
    assert fetch(inspector, "GET", "api/state", headers={"Origin": f"http://127.0.0.1:{inspector.port}"}).status == 200


def test_a_post_without_origin_or_from_another_site_is_403(inspector: InspectorProcess) -> None:
    reply = fetch(inspector, "POST", "api/refresh", body=b"{}", headers={"Content-Type": "application/json"})
    assert reply.status == 403 and reply.body == b"a POST must carry the page's Origin"
    for site in ("cross-site", "same-site"):
        reply = fetch(inspector, "GET", "", headers={"Sec-Fetch-Site": site})
        assert reply.status == 403 and reply.body == b"not a request of this page"
    assert fetch(inspector, "GET", "", headers={"Sec-Fetch-Site": "none"}).status == 200
    assert fetch(inspector, "GET", "api/state", headers={"Sec-Fetch-Site": "same-origin"}).status == 200


def test_malformed_api_requests_get_their_status(inspector: InspectorProcess) -> None:
    origin = {"Origin": f"http://127.0.0.1:{inspector.port}"}
    reply = fetch(inspector, "POST", "api/call", body=b"{}", headers={**origin, "Content-Type": "text/plain"})
    assert reply.status == 415 and reply.json() == {"error": "Content-Type must be application/json"}
    reply = fetch(inspector, "POST", "api/call", body=b"{nope", headers={**origin, "Content-Type": "application/json"})
    assert reply.status == 400 and reply.json()["error"].startswith("the body is not JSON")
    reply = fetch(inspector, "POST", "api/call", body=b" " * ((1 << 20) + 1), headers={**origin, "Content-Type": "application/json"})
    assert reply.status == 413
    assert fetch(inspector, "GET", "api/call").status == 405
    assert fetch(inspector, "POST", "events", body=b"{}", headers={**origin, "Content-Type": "application/json"}).status == 405
    assert fetch(inspector, "GET", "nothing-here").status == 404
    assert fetch(inspector, "GET", "").status == 200  # /TOKEN/ is the page ...
    bare = http.client.HTTPConnection("127.0.0.1", inspector.port, timeout=30)
    bare.request("GET", f"/{inspector.token}", headers={"Host": f"127.0.0.1:{inspector.port}"})
    moved = bare.getresponse()  # ... and /TOKEN sends there
    assert moved.status == 308 and moved.getheader("location") == f"/{inspector.token}/"
    bare.close()


def test_the_page_can_call_but_never_start_a_command(inspector: InspectorProcess) -> None:
    ok = post(inspector, "api/call", {"kind": "tool", "name": "add", "arguments": {"a": 2, "b": 3}}).json()
    assert ok["ok"] is True and ok["result"]["content"] == [{"type": "text", "text": "5"}] and ok["ms"] > 0
    unknown = post(inspector, "api/call", {"kind": "tool", "name": "nope"}).json()
    assert unknown["ok"] is False and unknown["error"]["code"] == -32602
    read = post(inspector, "api/call", {"kind": "resource", "uri": "note://hostile"}).json()
    assert read["result"]["contents"][0]["text"].startswith("<img src=x")
    prompt = post(inspector, "api/call", {"kind": "prompt", "name": "review", "arguments": {"topic": "wires"}}).json()
    assert prompt["result"]["messages"][0]["content"]["text"] == "Please review wires."
    for body, message in (
        ({"kind": "stdio", "command": "touch /tmp/pwned"}, "kind must be 'tool', 'resource' or 'prompt'"),
        ({"kind": "tool"}, "name must be a string"),
        ({"kind": "resource", "name": "x"}, "uri must be a string"),
        ({"kind": "tool", "name": "echo", "arguments": []}, "arguments must be an object"),
        ({"kind": "prompt", "name": "review", "arguments": {"topic": 1}}, "prompt arguments are strings"),
        ([], "kind must be 'tool', 'resource' or 'prompt'"),
    ):
        reply = post(inspector, "api/call", body)
        assert (reply.status, reply.json()) == (400, {"error": message}), body


def test_elicitation_answers_are_checked(inspector: InspectorProcess) -> None:
    reply = post(inspector, "api/elicit", {"id": 999, "action": "accept", "content": {}})
    assert (reply.status, reply.json()) == (404, {"error": "no open elicitation 999"})
    reply = post(inspector, "api/elicit", {"id": "1", "action": "accept"})
    assert (reply.status, reply.json()) == (400, {"error": "id must be the integer of an open elicitation"})


def events_until(inspector: InspectorProcess, stop: Any, timeout: float = 30.0) -> list[tuple[str, Any]]:
    """Read the event stream until ``stop(events)`` holds."""
    connection = http.client.HTTPConnection("127.0.0.1", inspector.port, timeout=timeout)
    connection.request("GET", f"/{inspector.token}/events", headers={"Host": f"127.0.0.1:{inspector.port}"})
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("content-type") == "text/event-stream"
    assert CSP.match(response.getheader("content-security-policy") or "")
    events: list[tuple[str, Any]] = []
    name = None
    try:
        while not stop(events):
            line = response.fp.readline()
            assert line, "the stream ended"
            if line.startswith(b"event: "):
                name = line[7:].strip().decode()
            elif line.startswith(b"data: "):
                events.append((str(name), orjson.loads(line[6:])))
    finally:
        connection.close()
    return events


def test_the_stream_replays_the_state_and_the_wire_then_goes_live(inspector: InspectorProcess) -> None:
    first = events_until(inspector, lambda e: len(e) >= 2)
    assert first[0][0] == "reset" and first[1][0] == "state"
    state = first[1][1]
    assert state["connected"] is True and state["era"] == "modern" and state["serverInfo"] == {"name": "web-test", "version": "2.0.0"}
    assert [t["name"] for t in state["tools"]] == ["echo", "add", "hostile", "greet"]
    history = first[0][1]["history"]
    assert history >= 10  # discover and four lists, both ways

    post(inspector, "api/call", {"kind": "tool", "name": "echo", "arguments": {"text": "on the wire"}})
    events = events_until(
        inspector,
        lambda e: sum(1 for n, d in e if n == "wire" and '"on the wire"' in d["text"]) == 2,
    )
    records = [d for n, d in events if n == "wire"]
    assert [r["seq"] for r in records] == list(range(records[0]["seq"], records[0]["seq"] + len(records)))
    request, response = [r for r in records if '"on the wire"' in r["text"]]
    assert request["channel"] == response["channel"] == "client-server"
    assert (request["direction"], request["sender"], request["receiver"], request["kind"]) == ("c2s", "client", "server", "request")
    assert (response["direction"], response["sender"], response["receiver"], response["kind"]) == ("s2c", "server", "client", "response")
    assert request["method"] == "tools/call" and response["method"] is None and request["id"] == response["id"]
    assert request["elapsed_ms"] is None and response["elapsed_ms"] == pytest.approx(response["t_ms"] - request["t_ms"], abs=0.01)
    assert response["t_ms"] >= request["t_ms"] > 0
    assert orjson.loads(request["text"])["params"]["arguments"] == {"text": "on the wire"}
    assert request["problems"] == [] and response["problems"] == []


def test_the_problems_column_has_the_tap_rules() -> None:
    sloppy = InspectorProcess("--", sys.executable, str(HERE / "sloppy_server.py"))
    try:
        answer = post(sloppy, "api/call", {"kind": "tool", "name": "ping_back"}).json()
        assert answer["ok"] is True and answer["result"]["content"] == [{"type": "text", "text": "pong"}]
        events = events_until(sloppy, lambda e: any(n == "wire" and '"pong"' in d["text"] for n, d in e))
        (flagged,) = [d for n, d in events if n == "wire" and d["problems"]]  # the rest breaks no rule
        assert flagged["direction"] == "s2c" and '"pong"' in flagged["text"]
        assert [p["code"] for p in flagged["problems"]] == ["missing-result-type"]

        # a server that dies: the call says so, and so does the state the page is sent
        died = post(sloppy, "api/call", {"kind": "tool", "name": "die"}).json()
        assert died["ok"] is False and "exit status 3" in died["error"]["message"]
        state = fetch(sloppy, "GET", "api/state").json()
        assert state["connected"] is False and state["error"] == died["error"]["message"]
        assert [t["name"] for t in state["tools"]] == ["ping_back", "die"]  # what it offered stays in view
    finally:
        sloppy.stop()


def test_a_target_that_cannot_start_is_exit_status_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "wiremcp", "inspect", "--web", "--", sys.executable, "-c", "import sys; sys.exit(3)"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("wiremcp inspect: ")
    done = subprocess.run([sys.executable, "-m", "wiremcp", "inspect", "--web"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "no TARGET" in done.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_http_target(tmp_path: Path) -> None:
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "wiremcp", "run", str(HERE / "web_server.py"), "--http", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "the HTTP server did not start"
                time.sleep(0.05)
        inspector = InspectorProcess(f"http://127.0.0.1:{port}/mcp")
        try:
            answer = post(inspector, "api/call", {"kind": "tool", "name": "echo", "arguments": {"text": "over http"}}).json()
            assert answer["ok"] is True and answer["result"]["content"][0]["text"] == "over http"
            events = events_until(inspector, lambda e: sum(1 for n, d in e if n == "wire" and '"over http"' in d["text"]) == 2)
            assert events[1][1]["target"] == f"http://127.0.0.1:{port}/mcp"
            pair = [d for n, d in events if n == "wire" and '"over http"' in d["text"]]
            assert [d["direction"] for d in pair] == ["c2s", "s2c"] and pair[1]["elapsed_ms"] is not None
        finally:
            inspector.stop()
    finally:
        server.terminate()
        server.wait(10)
