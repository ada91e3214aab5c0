"""Issue 23, item 5: the request head is bounded on the HTTP parser that runs (httptools or h11).

A real ``wiremcp run --http`` subprocess (httptools and uvloop, as the
``[http]`` extra installs them) is sent, on several connections at once, a
request whose one header line never ends. Before the fix the server kept
every byte (4 connections of 128 MiB took its RSS from 96 to 604 MiB); now each
connection is answered 431 and closed once the head passes ``max_head_size``
(64 KiB by default, ``--max-head-size``), and the RSS stays flat.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from conftest import SERVERS, wiremcp_cmd

pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

from test_http import ServerProcess  # noqa: E402

CONNECTIONS = 4
PER_CONNECTION = 32 * 1024 * 1024  # bytes of one header line each connection tries to send
CHUNK = b"a" * (256 * 1024)


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _attack(port: int, outcome: list[bytes], peak: list[int], pid: int) -> None:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sent = 0
    try:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: ")
        while sent < PER_CONNECTION:
            sock.sendall(CHUNK)
            sent += len(CHUNK)
            if sent % (8 * 1024 * 1024) == 0:
                peak.append(_rss(pid))
    except OSError:
        pass  # refused and closed: what the limit does
    try:
        sock.settimeout(10)
        outcome.append(sock.recv(4096))
    except OSError:
        outcome.append(b"")  # the connection was reset (the refusal was lost): closed all the same
    finally:
        sock.close()


def test_an_unterminated_header_line_is_refused_and_the_rss_stays_flat() -> None:
    proc = ServerProcess(
        wiremcp_cmd("run", str(SERVERS / "sample.py"), "--http", "--port", "0"), r"at http://127\.0\.0\.1:(\d+)/mcp"
    )
    try:
        pid = proc.proc.pid
        before = _rss(pid)
        outcomes: list[bytes] = []
        peak: list[int] = [before]
        threads = [
            threading.Thread(target=_attack, args=(proc.port, outcomes, peak, pid)) for _ in range(CONNECTIONS)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        after = max(_rss(pid), *peak)
        growth = after - before
        print(f"RSS {before / 2**20:.0f} MiB before, {after / 2**20:.0f} MiB at most under the attack")
        assert len(outcomes) == CONNECTIONS
        for got in outcomes:
            assert got == b"" or got.startswith((b"HTTP/1.1 431 ", b"HTTP/1.1 400 ")), got[:200]
        assert any(got.startswith((b"HTTP/1.1 431 ", b"HTTP/1.1 400 ")) for got in outcomes), outcomes
        assert growth < 16 * 2**20, f"RSS grew by {growth / 2**20:.0f} MiB"
        # the server still serves
        with socket.create_connection(("127.0.0.1", proc.port), timeout=10) as sock:
            sock.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            assert sock.recv(100).startswith(b"HTTP/1.1 405 ")
    finally:
        proc.stop()
