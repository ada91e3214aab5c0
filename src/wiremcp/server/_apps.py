"""MCP Apps, the server side: ``ui://`` resources, tools linked to them, visibility, negotiation.

The extension is ``io.modelcontextprotocol/ui`` (extensions/apps/apps.mdx,
SEP-1865). A server offers it by registering a UI resource
(``server.ui_resource``) or a tool with ``ui=`` or ``visibility=``
(extensions/overview.mdx: extensions are off until the developer opts in);
a mounted server's declaration carries over to its parent.
Rules kept here:

* **UI resources.** The URI starts with ``ui://`` and names one static
  resource (no ``{...}`` template: a tool links to an exact, predeclared
  URI). The MIME type is ``text/html;profile=mcp-app``. The HTML comes from
  a string, a file or a package resource, and is read once, at
  registration (a missing file is an error there, not at the first read).
  ``_meta.ui`` (``csp``, ``permissions``, ``domain``, ``prefersBorder``) is
  checked at registration and sent twice, as the reference SDK does: on the
  ``resources/list`` entry (for hosts that review templates at connection
  time) and on the ``resources/read`` contents item (which hosts read to
  build the iframe's CSP);
* **CSP origins** (``connectDomains``, ``resourceDomains``, ``frameDomains``,
  ``baseUriDomains``) are ``scheme://host[:port]`` with a scheme of http,
  https, ws or wss and an optional ``*.`` wildcard subdomain. Anything else
  (a path, a quote, a ``;``, a bare ``*``, ``'self'``) is refused at
  registration: hosts paste these strings into a CSP header, so a stray
  ``;`` would add a directive of the server's choosing;
* **Tools.** ``ui="ui://..."`` writes ``_meta.ui.resourceUri`` (and the
  deprecated flat ``_meta["ui/resourceUri"]``, as the reference SDK's
  ``registerAppTool`` does, for hosts that read only that key);
  ``visibility`` writes ``_meta.ui.visibility``, a non-empty subset of
  ``["model", "app"]`` (omitted: both, the spec's default). A ``ui=`` URI
  that is not ``ui://`` is refused at registration; a link to a resource
  that is not registered is refused when the server starts serving
  (`check_links`, run by the lifespan), since tools and resources may be
  registered in any order;
* **Negotiation** goes through the shared mechanism (`Server.declare_extension`,
  `Server.negotiated`): registering a UI resource or a tool with UI metadata
  declares ``capabilities.extensions["io.modelcontextprotocol/ui"] = {}``,
  in ``server/discover`` and, unlike other extensions, in a 2025-11-25
  ``initialize`` result too (apps.mdx negotiates Apps in ``initialize``;
  `Server.legacy_capabilities` keeps it). A request's client supports Apps
  when its capabilities (the request's ``_meta`` under 2026-07-28, the
  session's ``initialize`` under 2025-11-25) declare the extension with
  ``mimeTypes`` containing ``text/html;profile=mcp-app``; settings that are
  malformed count as not declared (the core protocol is the fallback);
* **Visibility.** An Apps host gets every tool with its ``_meta.ui``: the
  spec makes keeping ``["app"]`` tools out of the model's tool list the
  host's duty ("Host MUST NOT include tools in the agent's tool list..."),
  and the host needs them listed to let its views call them. A client
  without Apps has no view to call them and does not know the rule, so the
  server applies it for it: app-only tools are left out of its
  ``tools/list``, and its ``tools/call`` of one is answered as an unknown
  tool (-32602), the tool being one it was never shown. Tools visible to the
  model are listed to everyone, ``_meta.ui`` included: a host without Apps
  ignores it and uses the tool's text result (the fallback the spec asks
  for: "Tools MUST return meaningful content array even when UI is
  available");
* UI resources are listed to every client (the spec allows leaving them out
  of ``resources/list``; listing them keeps every template enumerable and
  auditable).
"""

from __future__ import annotations

import logging
import os
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal, Mapping, TypedDict

from ..protocol.extensions import client_extensions
from ..protocol.meta import RequestMeta

if TYPE_CHECKING:
    from ._server import Server

__all__ = [
    "UI_EXTENSION",
    "UI_MIME_TYPE",
    "RESOURCE_URI_META_KEY",
    "UiCsp",
    "Visibility",
    "ui_resource_meta",
    "ui_html",
    "tool_ui_meta",
    "supports_apps",
    "is_app_only",
    "ModelTools",
    "check_links",
    "ui_resource_parts",
]

log = logging.getLogger("wiremcp.server")

#: The extension identifier (apps.mdx, "Extension Identifier").
UI_EXTENSION = "io.modelcontextprotocol/ui"
#: The MIME type of an HTML view (apps.mdx, "UI Resource Format").
UI_MIME_TYPE = "text/html;profile=mcp-app"
#: The deprecated flat tool ``_meta`` key, still written for hosts that read only it.
RESOURCE_URI_META_KEY = "ui/resourceUri"

Visibility = Literal["model", "app"]
_VISIBILITY: tuple[Visibility, ...] = ("model", "app")
_CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
_PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")
_RESOURCE_META_KEYS = ("csp", "permissions", "domain", "prefersBorder")

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
#: An origin a view may reach (compiled by `re` on first use, its cache: only a view's CSP needs it).
_ORIGIN = rf"^(?:https?|wss?)://(?:(?:\*\.)?{_LABEL}(?:\.{_LABEL})*|\[[0-9A-Fa-f:.]+\])(?::(?P<port>[0-9]{{1,5}}|\*))?\Z"


class UiCsp(TypedDict, total=False):
    """The origins a view may reach (apps.mdx, ``McpUiResourceCsp``); each omitted list means none."""

    connectDomains: list[str]
    resourceDomains: list[str]
    frameDomains: list[str]
    baseUriDomains: list[str]


def check_ui_uri(uri: Any, where: str) -> str:
    """``uri`` when it is a ``ui://`` URI naming one resource; `ValueError` otherwise."""
    if type(uri) is not str or not uri.startswith("ui://") or len(uri) == len("ui://"):
        raise ValueError(
            f"{where}: {uri!r} is not a UI resource URI; MCP Apps views live at ui:// URIs "
            "(ui://weather/dashboard.html; extensions/apps, 'UI Resource Format')"
        )
    if "{" in uri or "}" in uri:
        raise ValueError(f"{where}: {uri!r} is a URI template; a UI resource is one predeclared URI, without {{...}}")
    if any(c.isspace() for c in uri):
        raise ValueError(f"{where}: {uri!r} holds whitespace; a URI does not")
    return uri


def check_origin(origin: Any, where: str) -> str:
    """One CSP origin, ``scheme://host[:port]``; `ValueError` naming the problem."""
    if type(origin) is not str:
        raise TypeError(f"{where}: an origin is a string such as 'https://api.example.com', not {origin!r}")
    found = re.match(_ORIGIN, origin)
    if not found:
        raise ValueError(
            f"{where}: {origin!r} is not an origin; write scheme://host[:port] with a scheme of https, http, "
            "wss or ws, and nothing after it (https://api.example.com, https://*.example.com, wss://rt.example.com:8443)"
        )
    port = found.group("port")
    if port is not None and port != "*" and not 0 < int(port) < 65536:
        raise ValueError(f"{where}: {origin!r} has port {port}, outside 1-65535")
    return origin


def _csp(csp: Any, where: str) -> dict[str, list[str]]:
    if not isinstance(csp, Mapping):
        raise TypeError(f"{where}: csp is a dict of origin lists ({', '.join(_CSP_KEYS)})")
    out: dict[str, list[str]] = {}
    for key, origins in csp.items():
        if key not in _CSP_KEYS:
            raise ValueError(f"{where}: unknown csp key {key!r}; the keys are {', '.join(_CSP_KEYS)}")
        if isinstance(origins, str) or not isinstance(origins, Iterable):
            raise TypeError(f"{where}: csp {key} is a list of origins, not {origins!r}")
        out[key] = [check_origin(o, f"{where}: csp {key}") for o in origins]
    return out


def _permissions(permissions: Any, where: str) -> dict[str, dict[str, Any]]:
    if isinstance(permissions, Mapping):
        names = list(permissions)
        for name, value in permissions.items():
            if value != {}:
                raise ValueError(f"{where}: permission {name!r} takes an empty object {{}}, not {value!r}")
    elif isinstance(permissions, str) or not isinstance(permissions, Iterable):
        raise TypeError(f"{where}: permissions is a list of names ({', '.join(_PERMISSIONS)})")
    else:
        names = list(permissions)
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        if name not in _PERMISSIONS:
            raise ValueError(f"{where}: unknown permission {name!r}; the permissions are {', '.join(_PERMISSIONS)}")
        out[name] = {}
    return out


def ui_resource_meta(
    *,
    csp: UiCsp | Mapping[str, Iterable[str]] | None = None,
    permissions: Iterable[str] | Mapping[str, Any] | None = None,
    domain: str | None = None,
    prefers_border: bool | None = None,
    where: str = "UI resource",
) -> dict[str, Any]:
    """A checked ``_meta.ui`` for a UI resource (apps.mdx, ``UIResourceMeta``); empty when nothing is set."""
    ui: dict[str, Any] = {}
    if csp is not None:
        ui["csp"] = _csp(csp, where)
    if permissions is not None:
        ui["permissions"] = _permissions(permissions, where)
    if domain is not None:
        if type(domain) is not str or not domain or any(c.isspace() or c in "\"';," for c in domain):
            raise ValueError(
                f"{where}: domain is the host-specific origin for the view, a non-empty string without "
                f"spaces or quotes (a904794854a047f6.claudemcpcontent.com), not {domain!r}"
            )
        ui["domain"] = domain
    if prefers_border is not None:
        if type(prefers_border) is not bool:
            raise TypeError(f"{where}: prefers_border is True or False, not {prefers_border!r}")
        ui["prefersBorder"] = prefers_border
    return ui


def ui_html(
    *, html: str | None, file: str | os.PathLike[str] | None, package: tuple[str, str] | None, where: str
) -> str:
    """The view's HTML from exactly one source: a string, a file, or ``(package, resource name)``."""
    given = [name for name, value in (("html", html), ("file", file), ("package", package)) if value is not None]
    if len(given) != 1:
        raise TypeError(
            f"{where}: give the HTML once, as html=\"<!DOCTYPE html>...\", file=\"view.html\" or "
            f"package=(\"my_pkg.views\", \"view.html\"); got {', '.join(given) or 'none'}"
        )
    if html is not None:
        if type(html) is not str:
            raise TypeError(f"{where}: html is the document as a str, not {type(html).__name__}")
        text = html
    elif file is not None:
        try:
            from pathlib import Path  # on first use: file= only

            text = Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{where}: cannot read the HTML file {str(file)!r}: {exc}") from None
    else:
        assert package is not None
        if (
            not isinstance(package, tuple)
            or len(package) != 2
            or not all(type(part) is str and part for part in package)
        ):
            raise TypeError(f"{where}: package is (\"my_pkg.views\", \"view.html\"), a package and a file in it")
        try:
            import importlib.resources  # on first use: costly at start-up, needed only for package=

            text = importlib.resources.files(package[0]).joinpath(package[1]).read_text(encoding="utf-8")
        except (OSError, ImportError, UnicodeDecodeError) as exc:
            raise ValueError(f"{where}: cannot read {package[1]!r} from the package {package[0]!r}: {exc}") from None
    if not text.strip():
        raise ValueError(f"{where}: the HTML is empty; a view is an HTML5 document")
    if not text.lstrip()[:15].lower().startswith("<!doctype html"):
        log.warning("%s: the HTML does not start with <!DOCTYPE html>; views MUST be HTML5 documents", where)
    return text


def _visibility(visibility: Any, where: str) -> list[Visibility]:
    values = [visibility] if isinstance(visibility, str) else visibility
    if not isinstance(values, Iterable):
        raise TypeError(f"{where}: visibility is 'model', 'app' or a list of them, not {visibility!r}")
    chosen = list(values)
    for v in chosen:
        if v not in _VISIBILITY:
            raise ValueError(f"{where}: visibility {v!r} is not 'model' or 'app'")
    if not chosen:
        raise ValueError(f"{where}: an empty visibility hides the tool from the model and the app alike")
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"{where}: visibility {chosen!r} names a value twice")
    return [v for v in _VISIBILITY if v in chosen]


def tool_ui_meta(
    meta: dict[str, Any] | None, ui: str | None, visibility: Any, where: str
) -> dict[str, Any] | None:
    """The tool's ``_meta`` with its UI keys written and checked (``ui=``/``visibility=`` or a given ``_meta.ui``)."""
    given = meta.get("ui") if meta else None
    if ui is None and visibility is None:
        if given is None:
            return meta
        if not isinstance(given, dict):
            raise TypeError(f"{where}: _meta 'ui' is an object (resourceUri, visibility)")
        unknown = set(given) - {"resourceUri", "visibility"}
        if unknown:
            raise ValueError(f"{where}: unknown _meta.ui keys {sorted(unknown)}; a tool's are resourceUri, visibility")
        ui, visibility = given.get("resourceUri"), given.get("visibility")
        if ui is None and visibility is None:
            return meta
    elif given is not None:
        raise ValueError(f"{where}: give the UI metadata once, as ui=/visibility= or as meta={{'ui': ...}}")
    out = dict(meta or {})
    block: dict[str, Any] = {}
    if ui is not None:
        block["resourceUri"] = check_ui_uri(ui, f"{where}, ui=")
        flat = out.get(RESOURCE_URI_META_KEY)
        if flat is not None and flat != ui:
            raise ValueError(f"{where}: _meta[{RESOURCE_URI_META_KEY!r}] = {flat!r} contradicts ui={ui!r}")
        out[RESOURCE_URI_META_KEY] = ui
    if visibility is not None:
        block["visibility"] = _visibility(visibility, where)
    out["ui"] = block
    return out


def is_app_only(definition: Mapping[str, Any]) -> bool:
    """Whether a tool definition's ``_meta.ui.visibility`` leaves out the model."""
    meta = definition.get("_meta")
    if type(meta) is not dict:
        return False
    ui = meta.get("ui")
    if type(ui) is not dict:
        return False
    visibility = ui.get("visibility")
    return visibility is not None and "model" not in visibility


def supports_apps(server: Server, meta: RequestMeta) -> bool:
    """Whether MCP Apps applies to this request: negotiated, with ``text/html;profile=mcp-app`` among its MIME types.

    Negotiation is the shared one (`Server.negotiated`, `wiremcp.protocol.extensions`):
    per request, and settings that are not an object count as not declared.
    ``mimeTypes`` is required; without our MIME type the host cannot show our views.
    """
    if not server.negotiated(meta, UI_EXTENSION):
        return False
    mime_types = client_extensions(meta.client_capabilities)[UI_EXTENSION].get("mimeTypes")
    return type(mime_types) is list and UI_MIME_TYPE in mime_types


class ModelTools:
    """``tools/list`` for a client without Apps: the definitions without app-only tools, cached per list."""

    __slots__ = ("_source", "_view")

    def __init__(self) -> None:
        self._source: list[dict[str, Any]] | None = None
        self._view: list[dict[str, Any]] = []

    def view(self, defs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``defs`` itself when no tool in it is app-only, else a filtered copy (computed once per ``defs``)."""
        if defs is not self._source:
            shown = [d for d in defs if not is_app_only(d)]
            self._view = defs if len(shown) == len(defs) else shown
            self._source = defs
        return self._view


def check_links(server: Server) -> None:
    """Refuse to serve a tool linked to a ``ui://`` resource the server does not have (apps.mdx: it MUST exist)."""
    linked = [t for t in server.tools.values() if t.ui_uri is not None]
    if not linked:
        return  # (a server without views does not make its resource registry: see `Server._resources`)
    resources = server.resources
    missing = [f"tool {t.name!r} shows {t.ui_uri!r}" for t in linked if t.ui_uri not in resources]
    if missing:
        raise ValueError(
            f"server {server.name!r}: {'; '.join(missing)}, but no resource is registered at that URI "
            "(a tool's UI resource MUST exist on the server); register it with "
            "server.ui_resource(uri, html=...) or fix the tool's ui="
        )


def ui_resource_parts(
    uri: str,
    *,
    html: str | None,
    file: str | os.PathLike[str] | None,
    package: tuple[str, str] | None,
    csp: UiCsp | Mapping[str, Iterable[str]] | None,
    permissions: Iterable[str] | Mapping[str, Any] | None,
    domain: str | None,
    prefers_border: bool | None,
    meta: dict[str, Any] | None,
) -> tuple[Callable[[], dict[str, Any]], dict[str, Any] | None, int]:
    """What `Server.ui_resource` registers: the read function, the resource's ``_meta``, the HTML's size in bytes."""
    where = f"UI resource {uri!r}"
    check_ui_uri(uri, where)
    ui = ui_resource_meta(csp=csp, permissions=permissions, domain=domain, prefers_border=prefers_border, where=where)
    if meta is not None and not isinstance(meta, dict):
        raise TypeError(f"{where}: meta must be a dict")
    if meta and "ui" in meta:
        raise ValueError(f"{where}: give csp=, permissions=, domain=, prefers_border= rather than meta={{'ui': ...}}")
    text = ui_html(html=html, file=file, package=package, where=where)
    item: dict[str, Any] = {"uri": uri, "mimeType": UI_MIME_TYPE, "text": text}
    out_meta = dict(meta) if meta else None
    if ui:
        item["_meta"] = {"ui": ui}
        out_meta = {**(out_meta or {}), "ui": ui}

    def read() -> dict[str, Any]:
        return item

    return read, out_meta, len(text.encode("utf-8"))
