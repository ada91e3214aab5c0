"""The sealed requestState (wiremcp.protocol.state) against forgeries, and its caller and size bounds.

Spec: basic/patterns/mrtr.mdx (Server Requirements 4-5: the server must
treat requestState as untrusted input and verify its integrity). Every
refusal is -32602 with a message naming requestState.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import time
from dataclasses import dataclass
from typing import Any, Callable

import orjson
import pytest

import wiremcp
from wiremcp import Context
from wiremcp.jsonrpc import INVALID_PARAMS, InvalidParams, Request
from wiremcp.protocol.state import DEFAULT_MAX_STATE_SIZE, StateSealer, request_digest
from wiremcp.server.transport import current_auth

KEY = "k" * 32
DIGEST = request_digest("tools/call", ["greet", {}])
NOW = 1_000_000.0


def sealer(**options: Any) -> StateSealer:
    return StateSealer([KEY], clock=lambda: NOW, **options)


def refused(state: Any, match: str = "requestState", *, by: StateSealer | None = None, principal: str | None = None) -> str:
    with pytest.raises(InvalidParams, match=match) as info:
        (by or sealer()).open(state, DIGEST, principal)
    assert info.value.code == INVALID_PARAMS == -32602
    return info.value.message


def a_state(predicate: Callable[[str, str], bool] = lambda body, tag: True) -> tuple[str, str]:
    """A genuine state split into its payload and tag texts, the first whose texts satisfy ``predicate``."""
    for i in range(1000):
        body, _, tag = sealer().seal(DIGEST, {"answer": i, "pad": "~?>" * (i % 5)}).partition(".")
        if predicate(body, tag):
            return body, tag
    raise AssertionError("no such state")


def test_a_genuine_state_opens() -> None:
    body, tag = a_state()
    assert sealer().open(f"{body}.{tag}", DIGEST) == {"answer": 0, "pad": ""}


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(lambda b, t: f"{b}.", id="empty tag"),
        pytest.param(lambda b, t: b, id="no tag at all"),
        pytest.param(lambda b, t: f".{t}", id="empty payload"),
        pytest.param(lambda b, t: f"{b}.{t[:-1]}", id="tag short by one character"),
        pytest.param(lambda b, t: f"{b}.{t[:-2]}", id="tag short by one byte"),
        pytest.param(lambda b, t: f"{b}.{t[:22]}", id="tag truncated to 16 bytes"),
        pytest.param(lambda b, t: f"{b}.{t[:1]}", id="one tag character"),
        pytest.param(lambda b, t: f"{b}.{t}AAAA", id="tag extended"),
        pytest.param(lambda b, t: f"{b}.{t}=", id="tag padded"),
        pytest.param(lambda b, t: f"{b}=.{t}" if len(b) % 4 else f"{b}====.{t}", id="payload padded"),
        pytest.param(lambda b, t: f"{b}.{t[:10]}\n{t[10:]}", id="newline inside the tag"),
        pytest.param(lambda b, t: f"{b}.{t[:10]}!{t[10:]}", id="stray character in the tag"),
        pytest.param(lambda b, t: f" {b}.{t}", id="leading space"),
        pytest.param(lambda b, t: f"{b}.{t}.{t}", id="two tags"),
    ],
)
def test_forged_encodings_are_refused(forge: Callable[[str, str], str]) -> None:
    """Anything but the payload and the full tag, each in canonical unpadded base64url, is refused."""
    body, tag = a_state()
    message = refused(forge(body, tag))
    assert "altered or not issued here" in message


def _decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@pytest.mark.parametrize("size", [0, 1, 16, 31])
def test_a_truncated_tag_in_canonical_encoding_is_refused(size: int) -> None:
    """The first ``size`` bytes of the genuine tag, well encoded: a prefix comparison would take them."""
    body, tag = a_state()
    prefix = _decode(tag)[:size]
    assert _decode(tag).startswith(prefix)
    refused(f"{body}.{_encode(prefix)}", "altered or not issued here")


def test_the_standard_base64_alphabet_is_not_another_spelling_of_the_tag() -> None:
    body, tag = a_state(lambda b, t: "-" in t or "_" in t)
    refused(f"{body}.{tag.replace('-', '+').replace('_', '/')}", "altered or not issued here")
    body, tag = a_state(lambda b, t: "-" in b or "_" in b)
    refused(f"{body.replace('-', '+').replace('_', '/')}.{tag}", "altered or not issued here")


def test_non_canonical_trailing_bits_are_not_another_spelling() -> None:
    """43 base64 characters carry 258 bits for a 256-bit tag: setting the 2 spare bits must not pass."""
    body, tag = a_state()
    assert len(tag) == 43
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(tag[-1])
    twin = tag[:-1] + alphabet[last | 1]  # the same 32 bytes once the spare bits are dropped
    assert twin != tag and base64.urlsafe_b64decode(twin + "=") == base64.urlsafe_b64decode(tag + "=")
    refused(f"{body}.{twin}", "altered or not issued here")


def test_a_tag_under_another_key_is_refused() -> None:
    other = StateSealer(["x" * 32], clock=lambda: NOW)
    refused(other.seal(DIGEST, {"answer": 1}), "failed verification")
    # The payload of a genuine state with the other key's tag, and the reverse.
    body, tag = a_state()
    _, other_tag = other.seal(DIGEST, {"answer": 0}).partition(".")[::2]
    refused(f"{body}.{other_tag}", "failed verification")


def test_a_payload_changed_under_the_genuine_tag_is_refused() -> None:
    body, tag = a_state()
    payload = orjson.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload["s"] = {"answer": "forged"}
    forged = base64.urlsafe_b64encode(orjson.dumps(payload)).rstrip(b"=").decode()
    refused(f"{forged}.{tag}", "failed verification")


def test_the_tag_is_compared_in_full_and_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The verdict is hmac.compare_digest's over the full 32-byte MAC: a weaker comparison
    (startswith, a prefix, ==) fails this test, as the forgeries above fail a truncating one."""
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)  # the module state.py calls it through
    body, tag = a_state()
    assert sealer().open(f"{body}.{tag}", DIGEST) == {"answer": 0, "pad": ""}
    assert calls and all(len(a) == len(b) == 32 for a, b in calls)
    # Its verdict decides: a comparison that says "different" refuses the genuine state.
    monkeypatch.setattr(hmac, "compare_digest", lambda a, b: False)
    refused(f"{body}.{tag}", "failed verification")


def test_the_caller_is_bound() -> None:
    """A state sealed for one subject opens only for that subject; with none, only with none."""
    s = sealer()
    for_alice = s.seal(DIGEST, {"answer": 1}, principal="alice@example.com")
    assert s.open(for_alice, DIGEST, "alice@example.com") == {"answer": 1}
    refused(for_alice, "different principal", principal="bob@example.com")
    refused(for_alice, "different principal", principal=None)
    anonymous = s.seal(DIGEST, {"answer": 1})
    refused(anonymous, "different principal", principal="alice@example.com")
    # Only a digest of the subject travels through the client.
    body = for_alice.partition(".")[0]
    assert b"alice" not in base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))


def test_what_is_sealed_is_bounded() -> None:
    """Over max_size bytes of answers the server refuses to seal (-32602), instead of issuing a huge state."""
    assert DEFAULT_MAX_STATE_SIZE == 256 * 1024
    s = sealer(max_size=1000)
    fits = {"a": "x" * (1000 - len('{"a":""}'))}
    assert len(orjson.dumps(fits)) == 1000
    state = s.seal(DIGEST, fits)
    assert s.open(state, DIGEST) == fits and len(state) <= s.max_state_length
    with pytest.raises(InvalidParams, match=r"1001 bytes, over this server's requestState limit of 1000 bytes") as info:
        s.seal(DIGEST, {"a": "x" * (1000 - len('{"a":""}') + 1)})
    assert info.value.code == -32602
    # A state longer than any this sealer issues is refused before it is decoded or verified.
    refused("A" * (s.max_state_length + 1), "longer than any this server issues", by=s)
    with pytest.raises(ValueError):
        StateSealer([KEY], max_size=-1)


# -- through the server: the principal a transport sets, and the size limit ----------------


def _server() -> wiremcp.Server:
    server = wiremcp.Server("state-tests", state_keys=[KEY])

    @server.tool()
    async def two_step(ctx: Context) -> str:
        name = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="step1")
        color = await ctx.elicit("Colour?", {"type": "object", "properties": {"color": {"type": "string"}}}, key="step2")
        return f"{name['content']['name']} likes {color['content']['color']}"

    return server


META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
}


@dataclass(frozen=True)
class Token:
    """What an authenticating transport puts in current_auth (the fields of wiremcp.auth.server.AccessToken used here)."""

    subject: str | None
    client_id: str | None = "app"
    issuer: str | None = "https://as.example.com"


def _call(server: wiremcp.Server, token: Token | None, **extra: Any) -> Any:
    async def go() -> Any:
        current_auth.set(token)  # this task's context only, as the HTTP transport does per request
        out = server.handle(Request(1, "tools/call", {"name": "two_step", "arguments": {}, "_meta": META, **extra}))
        return await out if not isinstance(out, dict) else out

    return asyncio.run(go())


def test_the_server_binds_the_authenticated_subject() -> None:
    """A state sealed while serving one authenticated caller opens only for that caller: issuer, subject and client (issue 23)."""
    server = _server()
    alice = Token("alice")
    first = _call(server, alice)
    assert first["resultType"] == "input_required"
    step1 = {"step1": {"action": "accept", "content": {"name": "Ada"}}}
    with pytest.raises(InvalidParams, match="different principal"):
        # the same subject through another OAuth client is another caller
        _call(server, Token("alice", client_id="other-app"), inputResponses=step1, requestState=first["requestState"])
    second = _call(server, alice, inputResponses=step1, requestState=first["requestState"])
    assert second["resultType"] == "input_required"
    step2 = {"step2": {"action": "accept", "content": {"color": "teal"}}}
    thieves = [Token("mallory"), Token("alice", issuer="https://evil.example.com"), Token("alice", client_id="other-app"),
               Token(None, client_id="app"), None]
    for thief in thieves:
        with pytest.raises(InvalidParams, match="different principal"):
            _call(server, thief, inputResponses=step2, requestState=second["requestState"])
    done = _call(server, alice, inputResponses=step2, requestState=second["requestState"])
    assert done["content"][0]["text"] == "Ada likes teal"
    # Unauthenticated (stdio): no caller to bind, and an authenticated retry cannot use it either.
    anonymous = _call(server, None)
    with pytest.raises(InvalidParams, match="different principal"):
        _call(server, alice, inputResponses=step1, requestState=anonymous["requestState"])


def test_the_server_refuses_to_seal_too_much() -> None:
    """4 MB of answers do not come back as a 5 MB state: the retry gets -32602 naming the limit."""
    server = _server()
    first = _call(server, None)
    huge = {"step1": {"action": "accept", "content": {"name": "x" * (DEFAULT_MAX_STATE_SIZE + 1)}}}
    with pytest.raises(InvalidParams, match="over this server's requestState limit of 262144 bytes"):
        _call(server, None, inputResponses=huge, requestState=first["requestState"])


@pytest.mark.slow
def test_too_much_to_seal_is_a_clear_error_over_stdio(spawn: Any) -> None:
    """End to end: a retry carrying 300 KB of answers for a tool that asks again gets -32602 naming
    the limit, instead of an input_required result with a state that size."""
    from conftest import SERVERS, request, wiremcp_cmd

    peer = spawn(*wiremcp_cmd("run", str(SERVERS / "rounds.py")))
    first = peer.ask(request(1, "tools/call", {"name": "two_step", "arguments": {}}, meta=META))["result"]
    assert first["resultType"] == "input_required"
    huge = {"step1": {"action": "accept", "content": {"name": "x" * 300_000}}}
    reply = peer.ask(request(2, "tools/call", {"name": "two_step", "arguments": {}, "inputResponses": huge,
                                               "requestState": first["requestState"]}, meta=META))
    assert reply["id"] == 2 and "result" not in reply
    assert reply["error"]["code"] == -32602
    assert "over this server's requestState limit of 262144 bytes" in reply["error"]["message"]


@pytest.mark.slow
def test_a_state_sealed_for_one_subject_is_refused_to_another_over_http() -> None:
    """End to end over authenticated Streamable HTTP: mallory replays alice's requestState and gets
    -32602; alice's own retry completes."""
    import re
    import subprocess
    import sys

    import httpx
    from conftest import SERVERS

    proc = subprocess.Popen(
        [sys.executable, "-m", "wiremcp", "run", str(SERVERS / "bound_state_http.py"), "--http", "--port", "0"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
    )
    try:
        assert proc.stderr is not None
        url = None
        for _ in range(50):
            found = re.search(r"(http://\S+)", proc.stderr.readline())
            if found:
                url = found.group(1)
                break
        assert url is not None, "the server did not announce its URL"

        def post(token: str, id: int, **extra: Any) -> Any:
            body = {"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "two_step", "arguments": {}, "_meta": META, **extra}}
            headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
                       "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "two_step"}
            for _ in range(100):  # the URL may be announced a moment before the port listens
                try:
                    return httpx.post(url, json=body, headers=headers, timeout=10).json()
                except httpx.ConnectError:
                    time.sleep(0.05)
            raise AssertionError("the server does not listen")

        first = post("t-alice", 1)["result"]
        step1 = {"step1": {"action": "accept", "content": {"v": "Ada"}}}
        second = post("t-alice", 2, inputResponses=step1, requestState=first["requestState"])["result"]
        assert second["resultType"] == "input_required"
        step2 = {"step2": {"action": "accept", "content": {"v": "teal"}}}
        stolen = post("t-mallory", 3, inputResponses=step2, requestState=second["requestState"])
        assert stolen["id"] == 3 and stolen["error"]["code"] == -32602
        assert "requestState was issued to a different principal" in stolen["error"]["message"]
        done = post("t-alice", 4, inputResponses=step2, requestState=second["requestState"])
        assert done["result"]["content"][0]["text"] == "Ada likes teal"
    finally:
        proc.kill()
        proc.wait()
