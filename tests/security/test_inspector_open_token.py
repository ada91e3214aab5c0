"""Finding S7: ``wiremcp inspect --web --open`` put the inspector's token on the browser's command line.

``webbrowser.open(url)`` starts the browser (or ``xdg-open``) with the URL as
an argument, and every local account can read a process's arguments in
``/proc/PID/cmdline`` for as long as it runs. With the token, another user
could call the inspected server's tools as you: the token is the only thing
between them and the loopback port (security_best_practices.mdx, "Local MCP
Server Compromise"; the 2025 MCP Inspector proxy flaw). Now ``--open`` hands
the browser a launch URL whose token works once, as a redirect to the page,
and is spent by its first use. Over real processes: ``wiremcp inspect
--web --open`` with ``$BROWSER`` set to a script that records its
arguments, then loopback HTTP.
"""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

TEST_SERVER = str(Path(__file__).resolve().parents[1] / "cli" / "web" / "web_server.py")

RECORDER = """
import sys
with open(sys.argv[1], "a") as out:
    out.write(sys.argv[2] + "\\n")
"""


def _get(port: int, path: str) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}", "Sec-Fetch-Site": "none"})
    reply = conn.getresponse()
    reply.read()
    conn.close()
    return reply


def test_open_never_puts_the_token_on_a_command_line(tmp_path: Path) -> None:
    recorder, seen = tmp_path / "browser.py", tmp_path / "argv.txt"
    recorder.write_text(RECORDER)
    env = {**os.environ, "BROWSER": f"{sys.executable} {recorder} {seen} %s"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiremcp", "inspect", "--web", "--open", "--", sys.executable, TEST_SERVER],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        port = int(url.split(":")[2].split("/")[0])
        token = url.rstrip("/").rsplit("/", 1)[1]
        deadline = time.monotonic() + 30  # bounds a failure only: the browser is started right after the URL is printed
        while not (seen.exists() and seen.read_text().endswith("\n")) and time.monotonic() < deadline:
            time.sleep(0.05)
        launched = seen.read_text().strip()
        assert launched.startswith(f"http://127.0.0.1:{port}/")
        assert token not in launched  # what other users can read is not the token
        launch_path = launched.removeprefix(f"http://127.0.0.1:{port}")

        first = _get(port, launch_path)  # the browser's first request: sent on to the page
        assert first.status == 303
        assert first.getheader("Location") == f"/{token}/"
        assert first.getheader("Referrer-Policy") == "no-referrer"
        assert _get(port, f"/{token}/").status == 200

        again = _get(port, launch_path)  # whoever reads the command line later: nothing
        assert again.status == 403
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.communicate()
