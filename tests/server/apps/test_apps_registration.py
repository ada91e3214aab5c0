"""MCP Apps on the server, in process: registration, its errors, listing, visibility, negotiation.

From extensions/apps/apps.mdx: UI resources (``ui://``, ``text/html;profile=mcp-app``,
``_meta.ui``), tool linkage (``_meta.ui.resourceUri``, ``visibility``), and the
``io.modelcontextprotocol/ui`` extension (extensions/overview.mdx). What wiremcp
sends is checked against the reference SDK's own schema (the vendored
``@modelcontextprotocol/ext-apps`` ``schema.json``). The same over real
transports is in test_apps_wire.py.
"""

from __future__ import annotations

import asyncio
import importlib.resources
import inspect
import json
import sys
from pathlib import Path
from typing import Any, Awaitable

import jsonschema
import pytest

from conftest import META
from wiremcp import Server
from wiremcp.jsonrpc import JSONRPCError, Request
from wiremcp.server.apps import RESOURCE_URI_META_KEY, UI_EXTENSION, UI_MIME_TYPE

APPS_META = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": {UI_EXTENSION: {"mimeTypes": [UI_MIME_TYPE]}}}}
PAGE = "<!DOCTYPE html><html><body>hi</body></html>"


def ext_apps_schema(name: str) -> jsonschema.protocols.Validator:
    """A validator for one definition of the reference SDK's schema.json."""
    doc = json.loads(importlib.resources.files("wiremcp._vendor.ext_apps").joinpath("schema.json").read_text("utf-8"))
    return jsonschema.Draft202012Validator({**doc, "$ref": f"#/$defs/{name}"})


def ask(server: Server, method: str, meta: dict[str, Any] = META, **params: Any) -> dict[str, Any]:
    out = server.handle(Request(1, method, {**params, "_meta": meta}))
    if inspect.isawaitable(out):  # a plain `def` tool runs in a worker thread

        async def wait(pending: Awaitable[dict[str, Any]]) -> dict[str, Any]:
            return await pending

        out = asyncio.run(wait(out))
    assert isinstance(out, dict)
    return out


def refused(server: Server, method: str, meta: dict[str, Any] = META, **params: Any) -> JSONRPCError:
    with pytest.raises(JSONRPCError) as caught:
        server.handle(Request(1, method, {**params, "_meta": meta}))
    return caught.value


def serve(server: Server) -> None:
    """Enter the server's lifespan, as every transport does before it serves."""

    async def main() -> None:
        async with server.lifespan:
            pass

    asyncio.run(main())


def weather() -> Server:
    server = Server("weather", version="1.0.0")
    server.ui_resource(
        "ui://weather/dashboard.html",
        html=PAGE,
        name="weather_dashboard",
        description="Interactive weather dashboard view",
        csp={"connectDomains": ["https://api.openweathermap.org"], "resourceDomains": ["https://*.jsdelivr.net"]},
        permissions=["geolocation", "clipboardWrite"],
        domain="a904794854a047f6.claudemcpcontent.com",
        prefers_border=True,
    )

    @server.tool(ui="ui://weather/dashboard.html")
    def get_weather(location: str) -> str:
        """Get current weather for a location."""
        return f"Sunny in {location}"

    @server.tool(ui="ui://weather/dashboard.html", visibility="app")
    def refresh_dashboard() -> str:
        """Refresh dashboard data."""
        return "refreshed"

    @server.tool(visibility=["model"])
    def forecast() -> str:
        return "rain"

    return server


UI_META = {
    "csp": {"connectDomains": ["https://api.openweathermap.org"], "resourceDomains": ["https://*.jsdelivr.net"]},
    "permissions": {"geolocation": {}, "clipboardWrite": {}},
    "domain": "a904794854a047f6.claudemcpcontent.com",
    "prefersBorder": True,
}


# -- UI resources ----------------------------------------------------------------------


def test_a_ui_resource_is_listed_with_the_apps_mime_type_and_its_ui_meta() -> None:
    (entry,) = ask(weather(), "resources/list")["resources"]
    assert entry == {
        "uri": "ui://weather/dashboard.html",
        "name": "weather_dashboard",
        "description": "Interactive weather dashboard view",
        "mimeType": "text/html;profile=mcp-app",
        "size": len(PAGE.encode()),
        "_meta": {"ui": UI_META},
    }
    assert list(ext_apps_schema("McpUiResourceMeta").iter_errors(entry["_meta"]["ui"])) == []


def test_reading_a_ui_resource_gives_the_html_with_its_ui_meta() -> None:
    result = ask(weather(), "resources/read", uri="ui://weather/dashboard.html")
    assert result["contents"] == [
        {"uri": "ui://weather/dashboard.html", "mimeType": UI_MIME_TYPE, "text": PAGE, "_meta": {"ui": UI_META}}
    ]


def test_a_ui_resource_without_settings_has_no_meta() -> None:
    server = Server("s")
    server.ui_resource("ui://s/v.html", html=PAGE)
    (entry,) = ask(server, "resources/list")["resources"]
    assert "_meta" not in entry and entry["name"] == "ui://s/v.html"
    assert ask(server, "resources/read", uri="ui://s/v.html")["contents"] == [
        {"uri": "ui://s/v.html", "mimeType": UI_MIME_TYPE, "text": PAGE}
    ]


def test_the_html_comes_from_a_file(tmp_path: Path) -> None:
    page = tmp_path / "view.html"
    page.write_text("<!DOCTYPE html><p>from a file</p>", encoding="utf-8")
    server = Server("s")
    server.ui_resource("ui://s/file.html", file=page)
    page.write_text("changed later", encoding="utf-8")  # read once, at registration
    assert ask(server, "resources/read", uri="ui://s/file.html")["contents"][0]["text"] == "<!DOCTYPE html><p>from a file</p>"


def test_the_html_comes_from_a_package_resource(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "viewpkg_apps_test"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "view.html").write_text("<!DOCTYPE html><p>packaged</p>", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "viewpkg_apps_test", raising=False)
    server = Server("s")
    server.ui_resource("ui://s/pkg.html", package=("viewpkg_apps_test", "view.html"))
    assert ask(server, "resources/read", uri="ui://s/pkg.html")["contents"][0]["text"] == "<!DOCTYPE html><p>packaged</p>"


# -- tools ---------------------------------------------------------------------------


def test_ui_writes_the_resource_uri_and_visibility_into_the_tool_meta() -> None:
    tools = {t["name"]: t for t in ask(weather(), "tools/list", APPS_META)["tools"]}
    assert tools["get_weather"]["_meta"] == {
        "ui": {"resourceUri": "ui://weather/dashboard.html"},
        RESOURCE_URI_META_KEY: "ui://weather/dashboard.html",
    }
    assert tools["refresh_dashboard"]["_meta"]["ui"] == {"resourceUri": "ui://weather/dashboard.html", "visibility": ["app"]}
    assert tools["forecast"]["_meta"] == {"ui": {"visibility": ["model"]}}
    check = ext_apps_schema("McpUiToolMeta")
    for tool in tools.values():
        assert list(check.iter_errors(tool["_meta"]["ui"])) == [], tool


def test_visibility_both_is_written_in_the_spec_order() -> None:
    server = Server("s")

    @server.tool(visibility=("app", "model"))
    def both() -> str:
        return ""

    assert server.tools["both"].definition["_meta"] == {"ui": {"visibility": ["model", "app"]}}
    assert not server.tools["both"].app_only


def test_a_hand_written_meta_ui_is_checked_and_understood() -> None:
    server = Server("s")
    server.ui_resource("ui://s/v.html", html=PAGE)

    @server.tool(meta={"ui": {"resourceUri": "ui://s/v.html", "visibility": ["app"]}})
    def helper() -> str:
        return ""

    tool = server.tools["helper"]
    assert tool.ui_uri == "ui://s/v.html" and tool.app_only
    assert server.capabilities()["extensions"] == {UI_EXTENSION: {}}


# -- negotiation and visibility ------------------------------------------------------


def test_the_extension_is_declared_in_discover_and_in_the_legacy_initialize_result() -> None:
    server = weather()
    assert ask(server, "server/discover")["capabilities"]["extensions"] == {UI_EXTENSION: {}}
    # apps.mdx negotiates MCP Apps in `initialize` ("Client<>Server Capability Negotiation").
    assert server.legacy_capabilities()["extensions"] == {UI_EXTENSION: {}}


def test_a_server_without_apps_declares_nothing() -> None:
    server = Server("plain")

    @server.tool
    def echo(text: str) -> str:
        return text

    server.resource("file:///a.txt")(lambda: "a")
    assert "extensions" not in server.capabilities()
    assert "extensions" not in server.legacy_capabilities()


def test_an_apps_host_sees_every_tool_with_its_ui_meta() -> None:
    names = [t["name"] for t in ask(weather(), "tools/list", APPS_META)["tools"]]
    assert names == ["get_weather", "refresh_dashboard", "forecast"]


@pytest.mark.parametrize(
    "caps",
    [
        {},
        {"extensions": {}},
        {"extensions": {"com.example/other": {}}},
        {"extensions": {UI_EXTENSION: {"mimeTypes": ["text/uri-list"]}}},  # our views are HTML
        {"extensions": {UI_EXTENSION: {}}},  # mimeTypes is required
        {"extensions": {UI_EXTENSION: {"mimeTypes": UI_MIME_TYPE}}},  # not an array
        {"extensions": {UI_EXTENSION: True}},  # not an object: not declared
        {"extensions": [UI_EXTENSION]},
    ],
    ids=["none", "empty", "other", "other-mime", "no-mime-types", "mime-string", "not-object", "list"],
)
def test_a_client_without_apps_gets_no_app_only_tool(caps: dict[str, Any]) -> None:
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": caps}
    server = weather()
    tools = ask(server, "tools/list", meta)["tools"]
    assert [t["name"] for t in tools] == ["get_weather", "forecast"]
    # the model-visible tool keeps its _meta.ui (the host ignores it) and still answers in text
    assert tools[0]["_meta"]["ui"] == {"resourceUri": "ui://weather/dashboard.html"}
    assert ask(server, "tools/call", meta, name="get_weather", arguments={"location": "Paris"})["content"] == [
        {"type": "text", "text": "Sunny in Paris"}
    ]
    error = refused(server, "tools/call", meta, name="refresh_dashboard", arguments={})
    assert (error.code, error.message, error.data) == (-32602, "Unknown tool: refresh_dashboard", {"name": "refresh_dashboard"})


def test_an_apps_host_may_call_an_app_only_tool() -> None:
    out = ask(weather(), "tools/call", APPS_META, name="refresh_dashboard", arguments={})
    assert out["content"] == [{"type": "text", "text": "refreshed"}]


def test_negotiation_is_per_request() -> None:
    server = weather()
    assert len(ask(server, "tools/list", APPS_META)["tools"]) == 3
    assert len(ask(server, "tools/list", META)["tools"]) == 2  # an earlier declaration counts for nothing
    assert len(ask(server, "tools/list", APPS_META)["tools"]) == 3


def test_the_filtered_list_follows_registration() -> None:
    server = weather()
    assert len(ask(server, "tools/list")["tools"]) == 2
    server.remove_tool("get_weather")
    assert [t["name"] for t in ask(server, "tools/list")["tools"]] == ["forecast"]

    @server.tool(visibility="app")
    def more() -> str:
        return ""

    assert [t["name"] for t in ask(server, "tools/list")["tools"]] == ["forecast"]
    assert [t["name"] for t in ask(server, "tools/list", APPS_META)["tools"]] == ["refresh_dashboard", "forecast", "more"]


def test_a_mounted_apps_server_makes_its_parent_declare_the_extension() -> None:
    parent = Server("parent")
    parent.mount(weather(), "wx")
    assert parent.capabilities()["extensions"] == {UI_EXTENSION: {}}
    assert [t["name"] for t in ask(parent, "tools/list")["tools"]] == ["wx_get_weather", "wx_forecast"]
    assert len(ask(parent, "tools/list", APPS_META)["tools"]) == 3
    serve(parent)  # the links resolve: resource URIs are kept by mounting


# -- the link check when serving -----------------------------------------------------


def test_a_tool_linked_to_a_missing_resource_is_refused_when_serving() -> None:
    server = Server("broken")

    @server.tool(ui="ui://broken/missing.html")
    def show() -> str:
        return "text"

    ask(server, "tools/list")  # registration itself accepts it: the resource may come later
    with pytest.raises(ValueError, match=r"tool 'show' shows 'ui://broken/missing.html', but no resource is registered"):
        serve(server)
    assert not server.lifespan.running


def test_registration_order_does_not_matter() -> None:
    server = Server("s")

    @server.tool(ui="ui://s/later.html")
    def show() -> str:
        return "text"

    server.ui_resource("ui://s/later.html", html=PAGE)
    serve(server)


def test_a_resource_registered_with_server_resource_satisfies_the_link() -> None:
    server = Server("s")
    server.resource("ui://s/plain.html", mime_type=UI_MIME_TYPE)(lambda: PAGE)

    @server.tool(ui="ui://s/plain.html")
    def show() -> str:
        return "text"

    serve(server)


# -- registration errors ---------------------------------------------------------------


@pytest.mark.parametrize(
    "uri, message",
    [
        ("https://example.com/view.html", "is not a UI resource URI"),
        ("ui://", "is not a UI resource URI"),
        ("UI://x/view.html", "is not a UI resource URI"),
        ("ui://x/{id}.html", "is a URI template"),
        ("ui://x/my view.html", "holds whitespace"),
    ],
)
def test_a_ui_resource_uri_must_be_ui_scheme(uri: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Server("s").ui_resource(uri, html=PAGE)


def test_a_tool_ui_uri_must_be_ui_scheme() -> None:
    server = Server("s")
    with pytest.raises(ValueError, match=r"tool 'show', ui=: 'file:///view.html' is not a UI resource URI"):

        @server.tool(ui="file:///view.html")
        def show() -> str:
            return ""

    assert "show" not in server.tools


@pytest.mark.parametrize(
    "origin",
    [
        "api.example.com",  # no scheme
        "https://api.example.com/path",  # a path
        "https://api.example.com/",
        "ftp://files.example.com",
        "*",
        "'self'",
        "https://*",
        "https://a.com; script-src *",  # CSP injection
        "https://exa mple.com",
        "https://example.com:0",
        "https://example.com:70000",
        "https://*.*.example.com",
        "",
    ],
)
def test_an_invalid_csp_origin_is_refused(origin: str) -> None:
    with pytest.raises(ValueError, match=r"csp connectDomains: .* is not an origin|outside 1-65535"):
        Server("s").ui_resource("ui://s/v.html", html=PAGE, csp={"connectDomains": [origin]})


@pytest.mark.parametrize(
    "origin",
    ["https://api.example.com", "https://*.example.com", "wss://rt.example.com:8443", "http://localhost:3000",
     "http://127.0.0.1:*", "https://[::1]:8443", "ws://x"],
)
def test_valid_csp_origins_are_kept(origin: str) -> None:
    server = Server("s")
    server.ui_resource("ui://s/v.html", html=PAGE, csp={"frameDomains": [origin], "baseUriDomains": [origin]})
    assert server.resources["ui://s/v.html"].definition["_meta"]["ui"]["csp"] == {
        "frameDomains": [origin],
        "baseUriDomains": [origin],
    }


@pytest.mark.parametrize(
    "options, error, message",
    [
        ({"csp": {"connectDomain": ["https://a.com"]}}, ValueError, "unknown csp key 'connectDomain'"),
        ({"csp": {"connectDomains": "https://a.com"}}, TypeError, "is a list of origins"),
        ({"csp": ["https://a.com"]}, TypeError, "csp is a dict"),
        ({"permissions": ["camera", "usb"]}, ValueError, "unknown permission 'usb'"),
        ({"permissions": "camera"}, TypeError, "permissions is a list of names"),
        ({"permissions": {"camera": True}}, ValueError, "takes an empty object"),
        ({"domain": ""}, ValueError, "domain is the host-specific origin"),
        ({"domain": "a.com; b"}, ValueError, "domain is the host-specific origin"),
        ({"prefers_border": "yes"}, TypeError, "prefers_border is True or False"),
        ({"meta": {"ui": {"prefersBorder": True}}}, ValueError, "rather than meta="),
    ],
)
def test_invalid_ui_resource_settings_are_refused(options: dict[str, Any], error: type[Exception], message: str) -> None:
    server = Server("s")
    with pytest.raises(error, match=message):
        server.ui_resource("ui://s/v.html", html=PAGE, **options)
    assert not server.resources and "extensions" not in server.capabilities()


def test_the_html_is_given_exactly_once(tmp_path: Path) -> None:
    server = Server("s")
    with pytest.raises(TypeError, match="give the HTML once.*got none"):
        server.ui_resource("ui://s/v.html")
    with pytest.raises(TypeError, match="give the HTML once.*got html, file"):
        server.ui_resource("ui://s/v.html", html=PAGE, file=tmp_path / "x.html")
    with pytest.raises(ValueError, match="cannot read the HTML file"):
        server.ui_resource("ui://s/v.html", file=tmp_path / "missing.html")
    with pytest.raises(ValueError, match="cannot read 'nope.html' from the package 'wiremcp'"):
        server.ui_resource("ui://s/v.html", package=("wiremcp", "nope.html"))
    with pytest.raises(ValueError, match="cannot read 'x.html' from the package 'no_such_package_here'"):
        server.ui_resource("ui://s/v.html", package=("no_such_package_here", "x.html"))
    with pytest.raises(ValueError, match="the HTML is empty"):
        server.ui_resource("ui://s/v.html", html="  \n")
    with pytest.raises(TypeError, match="html is the document as a str"):
        server.ui_resource("ui://s/v.html", html=b"<html>")  # type: ignore[arg-type]  # the error under test


def test_html_that_is_not_a_document_is_kept_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("s")
    server.ui_resource("ui://s/v.html", html="<p>a fragment</p>")
    assert "does not start with <!DOCTYPE html>" in caplog.text


def test_a_duplicate_ui_resource_is_refused() -> None:
    server = Server("s")
    server.ui_resource("ui://s/v.html", html=PAGE)
    with pytest.raises(ValueError, match="already registered"):
        server.ui_resource("ui://s/v.html", html=PAGE)


@pytest.mark.parametrize(
    "visibility, error, message",
    [
        ([], ValueError, "an empty visibility hides the tool"),
        (["user"], ValueError, "visibility 'user' is not 'model' or 'app'"),
        ("agent", ValueError, "visibility 'agent' is not 'model' or 'app'"),
        (["app", "app"], ValueError, "names a value twice"),
        (3, TypeError, "visibility is 'model', 'app' or a list"),
    ],
)
def test_invalid_visibility_is_refused(visibility: Any, error: type[Exception], message: str) -> None:
    server = Server("s")
    with pytest.raises(error, match=message):
        server.tool(visibility=visibility)(lambda: "")
    assert not server.tools


@pytest.mark.parametrize(
    "options, message",
    [
        ({"ui": "ui://s/v.html", "meta": {"ui": {"resourceUri": "ui://s/v.html"}}}, "give the UI metadata once"),
        ({"meta": {"ui": {"resourceUri": "https://x"}}}, "is not a UI resource URI"),
        ({"meta": {"ui": {"resourceUri": "ui://s/v.html", "csp": {}}}}, "unknown _meta.ui keys"),
        ({"ui": "ui://s/v.html", "meta": {RESOURCE_URI_META_KEY: "ui://s/other.html"}}, "contradicts ui="),
    ],
)
def test_conflicting_tool_ui_metadata_is_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Server("s").tool(**options)(lambda: "")
