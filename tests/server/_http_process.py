"""``wiremcp run FILE --http --port 0`` as a subprocess on loopback: its URL once it is up (tests of issue 27)."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from conftest import ROOT, wiremcp_cmd


class HTTPServer:
    """A server process serving Streamable HTTP on loopback, stderr in a file; ``url`` once it listens."""

    def __init__(self, path: str, env: dict[str, str] | None = None) -> None:
        self.log_path = Path(tempfile.mkstemp(prefix="wiremcp-http-", suffix=".log")[1])
        self._log = open(self.log_path, "wb")
        args = wiremcp_cmd("run", path, "--http", "--port", "0", "--log-level", "INFO")
        self.proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log, cwd=ROOT,
            env={**os.environ, **(env or {})},
        )
        deadline = time.monotonic() + 30
        while True:
            found = re.search(r"at http://127\.0\.0\.1:(\d+)/mcp", self.log_path.read_text(errors="replace"))
            if found:
                self.url = f"http://127.0.0.1:{found.group(1)}/mcp"
                return
            if time.monotonic() > deadline or self.proc.poll() is not None:
                log = self.log_path.read_text(errors="replace")
                self.stop()
                raise AssertionError(f"the server did not start:\n{log}")
            time.sleep(0.02)

    def stop(self) -> int:
        """Stop it (SIGTERM: the lifespan exits) and return its exit status."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        self.log_path.unlink(missing_ok=True)
        return self.proc.returncode
