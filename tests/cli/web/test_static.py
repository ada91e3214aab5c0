"""The page's files: server text only ever as text, nothing from elsewhere, and all of them in the wheel.

The browser tests show hostile text rendered as text; these checks keep the
JavaScript from growing a way to parse markup, and the HTML from needing an
inline script or style the CSP would (rightly) block.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
STATIC = ROOT / "src" / "wiremcp" / "cli" / "_web" / "static"
JS = (STATIC / "inspector.js").read_text()
APPS_JS = (STATIC / "apps.js").read_text()
SANDBOX_JS = (STATIC / "sandbox.js").read_text()
HTML = (STATIC / "index.html").read_text()


def code_of(js: str) -> str:
    """The JavaScript without its // comments (which may name what the code must not do)."""
    return "\n".join(line.split("//", 1)[0] if line.lstrip().startswith("//") else line for line in js.splitlines())


@pytest.mark.parametrize(
    "sink", ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "DOMParser",
             "createContextualFragment", "srcdoc", "javascript:", "setAttribute(\"on", "setTimeout(\"", "location ="]
)
def test_the_script_has_no_way_to_parse_markup(sink: str) -> None:
    for script in (JS, APPS_JS, SANDBOX_JS):
        assert sink not in code_of(script)


def test_the_checker_sees_comments_apart_from_code() -> None:
    assert "innerHTML" not in code_of("// never innerHTML\nconst a = 1;")
    assert "innerHTML" in code_of("node.innerHTML = x;")


def test_the_page_has_no_inline_script_or_style_and_loads_nothing_from_elsewhere() -> None:
    assert re.findall(r"<script\b[^>]*>", HTML) == ['<script src="apps.js" defer>', '<script src="inspector.js" defer>']
    assert "<style" not in HTML and " style=" not in HTML and re.search(r"\son[a-z]+=", HTML) is None
    for name in ("index.html", "inspector.js", "inspector.css", "apps.js", "sandbox.js"):
        assert re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", (STATIC / name).read_text(), re.I) is None, name
    # every URL the script asks for is relative: under the token path it was served from
    assert set(re.findall(r"""(?:fetch|post|EventSource)\(\s*"([^"]+)\"""", JS)) == {"api/call", "api/elicit", "api/refresh", "events"}
    assert set(re.findall(r"""(?:fetch|post)\(\s*"([^"]+)\"""", APPS_JS)) == {"api/host", "api/call", "api/view-csp", "api/view-wire"}
    assert set(re.findall(r"""(?:fetch|post)\(\s*"([^"]+)\"""", SANDBOX_JS)) == {"views"}


def test_messages_go_only_to_the_origin_they_are_meant_for() -> None:
    # the page posts only to the sandbox's origin, and the sandbox only to the page's; "*" only toward the view,
    # whose origin is opaque (sandbox="allow-scripts")
    assert re.findall(r"postMessage\([^)]*\)", code_of(APPS_JS)) == ["postMessage(message, sandboxOrigin)", "postMessage(ready, sandboxOrigin)"]
    assert re.findall(r"postMessage\([^)]*\)", code_of(SANDBOX_JS)) == ["postMessage(message, hostOrigin)", 'postMessage(event.data, "*")']
    assert "event.origin !== sandboxOrigin" in APPS_JS and "event.origin !== hostOrigin" in SANDBOX_JS


def test_every_static_file_is_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["wiremcp.cli._web"]
    files = sorted(p.relative_to(STATIC.parent).as_posix() for p in STATIC.iterdir())
    assert files == [
        "static/apps.js", "static/favicon.svg", "static/index.html", "static/inspector.css", "static/inspector.js", "static/sandbox.js"
    ]
    for name in files:
        assert any(fnmatch.fnmatch(name, pattern) for pattern in patterns), name
