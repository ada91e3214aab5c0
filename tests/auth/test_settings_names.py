"""One naming scheme for authorization settings: ``WIREMCP_AUTH_*`` (issue 26 item 4; docs/auth.md).

Every ``WIREMCP_*`` name in the README, docs/, the examples and the package
that names an authorization setting (an issuer, a resource or audience, keys,
scopes, leeway, tokens, client credentials) starts with ``WIREMCP_AUTH_``, and
every ``WIREMCP_AUTH_*`` name a page or example mentions is read by Python
code somewhere in the package (an example or the library), so the docs name
no setting that nothing reads.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "wiremcp"
NAME = re.compile(r"\bWIREMCP_[A-Z0-9_]*[A-Z0-9]\b")
#: Words that make a setting an authorization setting.
AUTH_WORDS = re.compile(r"ISSUER|RESOURCE|AUDIENCE|JWKS|SCOPE|LEEWAY|TOKEN|INTROSPECT|CLIENT_ID|CLIENT_SECRET|OAUTH|DPOP")


def _files() -> list[Path]:
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted(PACKAGE.rglob("*.py")),  # the examples (examples/ is src/wiremcp/examples) and the library
    ]


def _mentions() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in _files():
        for name in NAME.findall(path.read_text(encoding="utf-8")):
            found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def test_authorization_settings_are_named_wiremcp_auth() -> None:
    stray = {
        name: sorted(where)
        for name, where in _mentions().items()
        if AUTH_WORDS.search(name[len("WIREMCP_"):]) and not name.startswith("WIREMCP_AUTH_")
    }
    assert stray == {}, f"authorization settings outside the WIREMCP_AUTH_* scheme: {stray}"


def test_every_wiremcp_auth_setting_mentioned_is_read() -> None:
    read = set()
    for path in PACKAGE.rglob("*.py"):
        read.update(re.findall(r"""["'](WIREMCP_AUTH_[A-Z0-9_]+)["']""", path.read_text(encoding="utf-8")))
    named = {name for name in _mentions() if name.startswith("WIREMCP_AUTH_")}
    assert named, "no WIREMCP_AUTH_* setting is mentioned anywhere"
    assert named - read == set(), f"mentioned but read by no code: {sorted(named - read)}"
