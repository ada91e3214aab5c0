"""Finding S4: an MCP Apps CSP origin could end in a newline.

`check_origin` matched ``^...$``, and Python's ``$`` also matches before a
final ``\\n``: ``"https://api.example.com\\n"`` was accepted and sent to
hosts in ``_meta.ui.csp``. A host that writes the list into a
``Content-Security-Policy`` header or a ``<meta>`` tag gets a line break
where the spec promises an origin (header splitting in the sandbox proxy
that serves the view). The pattern now ends in ``\\Z``. Over a real
``wiremcp run`` process: the server refuses to start, naming the origin.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from wiremcp import Server

PAGE = "<!doctype html><title>v</title>"


@pytest.mark.parametrize("origin", ["https://api.example.com\n", "wss://rt.example.com:8443\n", "https://*.example.com\n"])
def test_a_csp_origin_ending_in_a_newline_is_refused(origin: str) -> None:
    with pytest.raises(ValueError, match="is not an origin"):
        Server("s").ui_resource("ui://s/v.html", html=PAGE, csp={"connectDomains": [origin]})


def test_wiremcp_run_refuses_a_server_whose_csp_origin_ends_in_a_newline(tmp_path: Path) -> None:
    module = tmp_path / "csp_server.py"
    module.write_text(
        "import wiremcp\n"
        "server = wiremcp.Server('csp')\n"
        f"server.ui_resource('ui://csp/v.html', html={PAGE!r}, csp={{'connectDomains': ['https://api.example.com\\n']}})\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "wiremcp", "run", str(module)], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert "is not an origin" in done.stderr
