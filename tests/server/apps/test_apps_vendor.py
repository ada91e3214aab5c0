"""The vendored MCP Apps SDK files are the pinned release's, unchanged (src/wiremcp/_vendor/ext_apps/README.md)."""

from __future__ import annotations

import hashlib
import importlib.resources

import pytest

from wiremcp.examples.apps import app_sdk_script

PINNED = {
    "app-with-deps.js": "d24b6ae50dbc989539db8287e217f41f0833f2b0a81ac4c6dbde444715ef5cd0",
    "schema.json": "3823abdec2ab00069420812520c20f561428e1bf328c8f61189094f5160e33d9",
    "LICENSE": "0382b0057770ca05e9c350a50aa3b1c1fea84da0bc81d723bf00b9aa841be58a",
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_a_vendored_file_is_the_pinned_one(name: str) -> None:
    data = importlib.resources.files("wiremcp._vendor.ext_apps").joinpath(name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == PINNED[name]


def test_the_readme_states_the_same_checksums() -> None:
    readme = importlib.resources.files("wiremcp._vendor.ext_apps").joinpath("README.md").read_text("utf-8")
    for digest in PINNED.values():
        assert f"`{digest}`" in readme


def test_the_inlined_bundle_exports_the_app_class_and_cannot_end_the_script_early() -> None:
    script = app_sdk_script()
    assert "export{" not in script
    tail = script[script.rindex("const McpApps={") :]
    assert ",App:" in tail or "{App:" in tail
    assert "PostMessageTransport:" in tail
    assert "</script" not in script.lower() and "<!--" not in script
