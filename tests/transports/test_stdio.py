"""The stdio server end to end: a real `wiremcp run` subprocess, raw lines on its pipes.

Spec: basic/transports/stdio.mdx, basic/index.mdx (Messages, _meta, Error
Codes), basic/versioning.mdx, server/discover.mdx, server/tools.mdx,
basic/patterns/cancellation.mdx, basic/patterns/progress.mdx,
server/utilities/logging.mdx.
"""

from __future__ import annotations

import time

import orjson
import pytest

from conftest import META, SERVERS, call, request, wiremcp_cmd
from wiremcp.server import DEFAULT_LIST_TTL_MS

pytestmark = pytest.mark.slow


# -- the happy path ----------------------------------------------------------


def test_discover(sample):
    """server/discover.mdx: supportedVersions, capabilities, serverInfo in _meta, caching hints."""
    reply = sample.ask(request("d-1", "server/discover"))
    assert reply["id"] == "d-1" and reply["jsonrpc"] == "2.0"
    result = reply["result"]
    assert result["resultType"] == "complete"
    assert "2026-07-28" in result["supportedVersions"]
    assert result["capabilities"]["tools"] == {"listChanged": True}
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "sample", "version": "9.9.9"}
    assert result["ttlMs"] == DEFAULT_LIST_TTL_MS == 60_000  # the server's default list_ttl_ms (server/_settings.py)
    assert result["cacheScope"] == "public"


def test_tools_list_is_deterministic_and_schema_from_hints(sample):
    """server/tools.mdx, Listing Tools: deterministic order, inputSchema from type hints."""
    first = sample.ask(request(1, "tools/list"))["result"]
    second = sample.ask(request(2, "tools/list"))["result"]
    assert first == second
    names = [t["name"] for t in first["tools"]]
    assert names[:3] == ["echo", "add", "slow"]
    add = next(t for t in first["tools"] if t["name"] == "add")
    assert add["description"] == "Add two integers."
    assert add["inputSchema"] == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 1}},
        "required": ["a"],
        "additionalProperties": False,
    }
    steps = next(t for t in first["tools"] if t["name"] == "steps")
    assert "ctx" not in steps["inputSchema"]["properties"]  # the injected Context is not an argument
    pick = next(t for t in first["tools"] if t["name"] == "pick")
    assert pick["inputSchema"]["properties"]["color"] == {"enum": ["red", "green"], "type": "string"}
    assert pick["inputSchema"]["properties"]["size"]["type"] == ["integer", "null"]
    assert first["ttlMs"] == DEFAULT_LIST_TTL_MS and first["cacheScope"] == "public"
    assert "nextCursor" not in first


def test_tools_call(sample):
    reply = sample.ask(call(7, "echo", {"text": "héllo\nwörld \u2028"}))
    assert reply == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": "héllo\nwörld \u2028"}],
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "sample", "version": "9.9.9"}},
        },
    }
    assert sample.ask(call("s", "add", {"a": 2, "b": 40}))["result"]["content"][0]["text"] == "42"


def test_string_and_integer_ids_are_echoed(sample):
    """basic/index.mdx, Requests: ids are strings or integers, echoed by the reply."""
    for id_ in ("abc", "", 0, -5, 2**53 + 1, "🙂"):
        assert sample.ask(call(id_, "echo", {"text": "x"}))["id"] == id_


def test_meta_is_visible_to_the_tool(sample):
    reply = sample.ask(call(1, "whoami", {}, traceparent="00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"))
    seen = orjson.loads(reply["result"]["content"][0]["text"])
    assert seen["protocolVersion"] == "2026-07-28"
    assert seen["clientInfo"] == {"name": "tests", "version": "0"}
    assert seen["trace"] == {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"}


# -- tool errors are results, protocol errors are errors (server/tools.mdx, Error Handling)


def test_failing_tool_is_a_result_with_is_error(sample):
    result = sample.ask(call(1, "fail", {"message": "the date must be in the future"}))["result"]
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "the date must be in the future"}]
    result = sample.ask(call(2, "crash"))["result"]
    # issue 16, error masking: the tool is named, the exception's text stays in the server's log
    assert result["isError"] is True and "'crash'" in result["content"][0]["text"]
    assert "boom" not in result["content"][0]["text"]


@pytest.mark.parametrize(
    "arguments, fragment",
    [
        ({}, "'a' is required"),
        ({"a": "1"}, "'a' must be integer, not a string"),
        ({"a": 1, "c": 2}, "'c' is not an accepted argument"),
        ({"a": True}, "'a' must be integer, not a boolean"),
    ],
)
def test_invalid_arguments_are_tool_execution_errors(sample, arguments, fragment):
    result = sample.ask(call(1, "add", arguments))["result"]
    assert result["isError"] is True
    assert fragment in result["content"][0]["text"]


def test_literal_arguments_are_checked(sample):
    result = sample.ask(call(1, "pick", {"color": "blue"}))["result"]
    assert result["isError"] is True and 'one of "red", "green"' in result["content"][0]["text"]
    assert sample.ask(call(2, "pick", {"color": "red", "size": None}))["result"]["content"][0]["text"] == "red:None"


def test_unknown_tool_is_invalid_params(sample):
    reply = sample.ask(call(3, "nope"))
    assert reply["id"] == 3
    assert reply["error"]["code"] == -32602
    assert reply["error"]["message"] == "Unknown tool: nope"


@pytest.mark.parametrize(
    "params, fragment",
    [
        ({"arguments": {}}, "'name'"),
        ({"name": 5}, "'name'"),
        ({"name": "echo", "arguments": [1]}, "'arguments' must be an object"),
    ],
)
def test_malformed_tools_call_params(sample, params, fragment):
    reply = sample.ask(request(4, "tools/call", params))
    assert reply["error"]["code"] == -32602 and fragment in reply["error"]["message"]


# -- per-request _meta (basic/index.mdx, Per-request protocol fields) --------


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"_meta": None},
        {"_meta": {}},
        {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}},
        {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
        {"_meta": {"io.modelcontextprotocol/protocolVersion": 20260728, "io.modelcontextprotocol/clientCapabilities": {}}},
        {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": []}},
        {"_meta": "2026-07-28"},
        {"_meta": {**META, "io.modelcontextprotocol/logLevel": "loud"}},
        {"_meta": {**META, "progressToken": 1.5}},
        {"_meta": {**META, "io.modelcontextprotocol/clientInfo": "me"}},
    ],
)
def test_missing_or_malformed_meta_is_invalid_params(sample, params):
    message = {"jsonrpc": "2.0", "id": 11, "method": "tools/list"}
    if params is not None:
        message["params"] = params
    reply = sample.ask(message)
    assert reply["id"] == 11
    assert reply["error"]["code"] == -32602, reply
    assert reply["error"]["message"].startswith("Invalid params")


def test_client_info_is_optional(sample):
    meta = {k: v for k, v in META.items() if k != "io.modelcontextprotocol/clientInfo"}
    assert sample.ask(request(1, "tools/list", meta=meta))["result"]["tools"]


def test_unsupported_version(sample):
    """basic/versioning.mdx, Protocol Version Negotiation: -32022 with supported and requested."""
    reply = sample.ask(request(5, "tools/list", meta={**META, "io.modelcontextprotocol/protocolVersion": "1900-01-01"}))
    assert reply["id"] == 5
    assert reply["error"]["code"] == -32022
    assert reply["error"]["data"] == {"supported": ["2026-07-28"], "requested": "1900-01-01"}


@pytest.mark.parametrize("method", ["unknown/method", "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "rpc.discover"])
def test_unknown_and_removed_methods(sample, method):
    reply = sample.ask(request(6, method))
    assert reply["id"] == 6 and reply["error"]["code"] == -32601
    if method == "initialize":  # versioning.mdx: name the versions we support
        assert "2026-07-28" in reply["error"]["message"]
        assert reply["error"]["data"]["supported"] == ["2026-07-28"]


# -- the envelope: malformed lines always get a reply ------------------------


BAD_LINES = [
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"', -32700, None),
    (b"not json at all", -32700, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/list"} trailing', -32700, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"x"}{"jsonrpc":"2.0","id":2,"method":"x"}', -32700, None),
    (b"\xef\xbb\xbf{}", -32700, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"\xff"}', -32700, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"\\ud800"}', -32700, None),
    (b'{"jsonrpc":"2.0","id":NaN,"method":"x"}', -32700, None),
    (b"[" * 5000 + b"]" * 5000, -32600, None),
    (b'{"a":' * 200 + b"1" + b"}" * 200, -32600, None),
    (b'{"jsonrpc":"1.0","id":9,"method":"tools/list"}', -32600, 9),
    (b'{"jsonrpc":2.0,"id":9,"method":"tools/list"}', -32600, 9),
    (b'{"id":9,"method":"tools/list"}', -32600, 9),
    (b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":[1],"method":"tools/list"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":9,"method":5}', -32600, 9),
    (b'{"jsonrpc":"2.0","id":9,"method":"tools/list","params":[1,2]}', -32600, 9),
    (b'{"jsonrpc":"2.0","id":9,"method":"tools/list","params":"x"}', -32600, 9),
    (b'{"jsonrpc":"2.0","id":9}', -32600, None),
    (b'"just a string"', -32600, None),
    (b"42", -32600, None),
    (b"[]", -32600, None),
]


@pytest.mark.parametrize("line, code, reply_id", BAD_LINES)
def test_bad_lines_get_exactly_one_error_reply(sample, line, code, reply_id):
    sample.send_raw(line + b"\n")
    reply = sample.recv()
    assert reply["jsonrpc"] == "2.0"
    if reply_id is None:  # MCP's schema has no null id: an unreadable id is left out
        assert "id" not in reply
    else:
        assert reply["id"] == reply_id
    assert reply["error"]["code"] == code
    assert isinstance(reply["error"]["message"], str) and len(reply["error"]["message"]) > 10
    # ... and the server keeps serving.
    assert sample.ask(call("after", "echo", {"text": "still here"}))["result"]["content"][0]["text"] == "still here"


def test_a_batch_is_refused_whole(sample):
    """MCP has no batches: one -32600 reply without an id (unreadable), and nothing inside runs."""
    batch = [call(1, "echo", {"text": "a"}), call(2, "echo", {"text": "b"})]
    reply = sample.ask(batch)
    assert "id" not in reply and reply["error"]["code"] == -32600
    assert "batch" in reply["error"]["message"]
    sample.expect_nothing_more()
    sample.finish_quietly()  # nothing of the batch ran, not even later


def test_oversized_line_is_refused_without_killing_the_server(spawn):
    peer = spawn(*wiremcp_cmd("run", str(SERVERS / "sample.py"), "--max-message-size", "1000"))
    big = call(1, "echo", {"text": "x" * 5000})
    peer.send(big)
    reply = peer.recv()
    assert "id" not in reply and reply["error"]["code"] == -32600
    assert "limit is 1000" in reply["error"]["message"]
    assert peer.ask(call(2, "echo", {"text": "ok"}))["result"]["content"][0]["text"] == "ok"


def test_one_megabyte_payload_round_trips(sample):
    text = "y" * 1_000_000
    assert sample.ask(call(1, "echo", {"text": text}))["result"]["content"][0]["text"] == text


def test_blank_lines_are_skipped(sample):
    sample.send_raw(b"\n  \r\n\t\n")
    sample.expect_nothing_more()
    assert sample.ask(call(1, "echo", {"text": "x"}))["id"] == 1


def test_crlf_line_endings_are_accepted(sample):
    sample.send_raw(orjson.dumps(call(1, "echo", {"text": "x"})) + b"\r\n")
    assert sample.recv()["id"] == 1


def test_message_split_across_writes(sample):
    line = orjson.dumps(call(1, "echo", {"text": "split"})) + b"\n"
    for i in range(0, len(line), 7):
        sample.send_raw(line[i : i + 7])
        time.sleep(0.001)
    assert sample.recv()["result"]["content"][0]["text"] == "split"


# -- notifications and responses from the client ----------------------------


def test_notifications_get_no_reply(sample):
    sample.send({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {"x": 1}})
    sample.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}})
    sample.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": None}})
    sample.send({"jsonrpc": "2.0", "method": "notifications/cancelled"})
    sample.expect_nothing_more()
    assert sample.ask(call(1, "echo", {"text": "x"}))["id"] == 1
    sample.finish_quietly()


def test_a_response_from_the_client_is_logged_not_answered(sample):
    sample.send({"jsonrpc": "2.0", "id": 99, "result": {}})
    sample.expect_nothing_more()
    assert sample.ask(call(1, "echo", {"text": "x"}))["id"] == 1
    code, rest, err = sample.finish()
    assert code == 0 and rest == b""
    assert "ignored a response (id 99)" in err


def test_duplicate_in_flight_id_is_refused(sample):
    sample.send(call(1, "slow", {"seconds": 0.5, "label": "first"}))
    sample.send(call(1, "echo", {"text": "second"}))
    reply = sample.recv()
    assert reply["id"] == 1 and reply["error"]["code"] == -32600 and "already in flight" in reply["error"]["message"]
    assert sample.recv()["result"]["content"][0]["text"] == "first"


# -- concurrency, cancellation, draining -------------------------------------


def test_slow_tool_does_not_block_the_next_request(sample):
    sample.send(call("slow", "slow", {"seconds": 2.0}))
    # Order, not a stopwatch: served one at a time, "slow" would be answered first.
    fast = sample.ask(call("fast", "echo", {"text": "quick"}))
    assert fast["id"] == "fast"
    assert sample.recv()["id"] == "slow"


def test_replies_go_out_in_completion_order(sample):
    for i, delay in enumerate([0.6, 0.3, 0.0]):
        sample.send(call(i, "slow", {"seconds": delay, "label": str(i)}))
    assert [sample.recv()["id"] for _ in range(3)] == [2, 1, 0]


def test_cancellation_stops_the_request_and_suppresses_its_reply(sample):
    """stdio.mdx, Cancellation: the server MUST NOT send any further messages for it."""
    sample.send(call("c", "slow", {"seconds": 1.0}))
    # A synchronisation point instead of a pause: once "started" is answered, "c" has been read and is running.
    assert sample.ask(call("started", "echo", {"text": "x"}))["id"] == "started"
    sample.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "c", "reason": "user"}})
    assert sample.ask(call("next", "echo", {"text": "x"}))["id"] == "next"
    sample.expect_nothing_more()
    # End of input drains what is in flight (shutdown_grace 5 s > the 1 s tool): a reply for "c" would show here.
    err = sample.finish_quietly()
    assert err == ""  # the default log level (WARNING) says nothing about a cancellation


def test_eof_drains_in_flight_requests(sample):
    """stdio.mdx, Shutdown: on end of input, in-flight requests finish and replies are flushed."""
    sample.send(call(1, "slow", {"seconds": 0.5, "label": "late"}))
    sample.send(call(2, "echo", {"text": "early"}))
    code, rest, _ = sample.finish()
    lines = [orjson.loads(line) for line in rest.splitlines()]
    assert code == 0
    assert [m["id"] for m in lines] == [2, 1]
    assert lines[1]["result"]["content"][0]["text"] == "late"


def test_unterminated_last_line_is_still_answered(sample):
    sample.send_raw(orjson.dumps(call(1, "echo", {"text": "no newline"})))
    code, rest, _ = sample.finish()
    assert code == 0 and orjson.loads(rest)["result"]["content"][0]["text"] == "no newline"


def test_print_in_a_tool_goes_to_stderr(sample):
    """stdio.mdx: nothing but MCP messages on stdout; logs go to stderr."""
    assert sample.ask(call(1, "shout", {"text": "hi"}))["result"]["content"][0]["text"] == "HI"
    code, rest, err = sample.finish()
    assert rest == b""
    assert "this must not reach stdout" in err and "stderr marker" in err


def test_many_pipelined_requests_each_get_one_reply(sample):
    import threading

    n = 2000
    payload = b"".join(orjson.dumps(call(i, "echo", {"text": str(i)})) + b"\n" for i in range(n))
    # Write from a thread: the server stops reading while its replies are not read (back-pressure).
    writer = threading.Thread(target=sample.send_raw, args=(payload,))
    writer.start()
    seen = [sample.recv()["id"] for _ in range(n)]
    writer.join()
    assert sorted(seen) == list(range(n))
    sample.expect_nothing_more()


def test_cancel_arriving_with_its_request_in_one_read(sample):
    """A request cancelled before its task first runs still leaves nothing behind."""
    # 2 s: shorter than shutdown_grace (5 s), so a request left running would be answered at end of input.
    both = orjson.dumps(call("c", "slow", {"seconds": 2})) + b"\n"
    both += orjson.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "c"}}) + b"\n"
    sample.send_raw(both)
    sample.expect_nothing_more()
    err = sample.finish_quietly()
    assert "never awaited" not in err


# -- progress and logging notifications --------------------------------------


def test_progress_notifications_precede_the_result(sample):
    """patterns/progress.mdx: notifications/progress for a request with a progressToken."""
    sample.send(call(1, "steps", {"count": 3}, progressToken="tok"))
    messages = [sample.recv() for _ in range(4)]
    notes, final = messages[:3], messages[3]
    assert [n["method"] for n in notes] == ["notifications/progress"] * 3
    assert [n["params"]["progress"] for n in notes] == [1, 2, 3]
    assert all(n["params"]["progressToken"] == "tok" and n["params"]["total"] == 3 for n in notes)
    assert all("id" not in n for n in notes)
    assert final["id"] == 1 and final["result"]["content"][0]["text"] == "done"


def test_no_progress_without_a_token(sample):
    assert sample.ask(call(1, "steps", {"count": 2}))["id"] == 1


def test_log_messages_only_at_or_above_the_requested_level(sample):
    """server/utilities/logging.mdx: only for requests that set logLevel, filtered by it."""
    assert sample.ask(call(1, "chatty", {"level": "info"}))["result"]["content"][0]["text"] == ""
    sample.send(call(2, "chatty", {"level": "info"}, **{"io.modelcontextprotocol/logLevel": "warning"}))
    notes = [sample.recv(), sample.recv()]
    assert [n["params"]["level"] for n in notes] == ["warning", "error"]
    assert all(n["method"] == "notifications/message" and n["params"]["logger"] == "chatty" for n in notes)
    assert sample.recv()["result"]["content"][0]["text"] == "warning,error"


# -- the CLI ------------------------------------------------------------------


def test_run_reports_a_bad_target(spawn, tmp_path):
    empty = tmp_path / "nothing.py"
    empty.write_text("x = 1\n")
    peer = spawn(*wiremcp_cmd("run", str(empty)))
    code, out, err = peer.finish()
    assert code == 2 and out == b"" and "defines no wiremcp.Server" in err


def test_run_a_module_by_name(spawn):
    peer = spawn(*wiremcp_cmd("run", "wiremcp.examples.echo:server"))
    assert peer.ask(call(1, "echo", {"text": "mod"}))["result"]["content"][0]["text"] == "mod"


def test_example_runs_as_a_script(spawn):
    import sys

    peer = spawn(sys.executable, "examples/echo.py")
    assert peer.ask(call(1, "echo", {"text": "script"}))["result"]["content"][0]["text"] == "script"


def test_stdin_from_a_regular_file(tmp_path):
    import subprocess
    import sys

    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b"".join(orjson.dumps(call(i, "echo", {"text": str(i)})) + b"\n" for i in range(3)))
    out = tmp_path / "out.jsonl"
    with requests.open("rb") as stdin, out.open("wb") as stdout:
        code = subprocess.run(
            [sys.executable, "-m", "wiremcp", "run", "examples/echo.py"], stdin=stdin, stdout=stdout, timeout=20, cwd=SERVERS.parent.parent
        ).returncode
    assert code == 0
    assert [orjson.loads(line)["id"] for line in out.read_bytes().splitlines()] == [0, 1, 2]


def test_demo_runs(spawn):
    peer = spawn(*wiremcp_cmd("demo", "--no-color"))
    code, out, err = peer.finish()
    text = out.decode()
    assert code == 0, err
    assert '"method": "server/discover"' in text
    assert '"code": -32602' in text and '"code": -32700' in text
    assert "no reply" in text


def test_stdin_from_dev_null_exits_at_once():
    """stdio.mdx, Shutdown: end of input (here: /dev/null, a device that cannot be polled) ends the server."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "wiremcp", "run", "examples/echo.py"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=20,
        cwd=SERVERS.parent.parent,
    )
    assert done.returncode == 0 and done.stdout == b""
