"""MCP Apps (extensions/apps): the names beyond ``server.ui_resource`` and ``@server.tool(ui=...)``.

A server offers an app with ``server.ui_resource(...)`` and links a tool to
it with ``@server.tool(ui=..., visibility=...)`` (docs/apps.md); these names
are for what goes further: the extension's identifier (`UI_EXTENSION`), the
resource's MIME type (`UI_MIME_TYPE`), the tool ``_meta`` key that links a
resource (`RESOURCE_URI_META_KEY`), the content security policy of a UI
resource (`UiCsp`), who may call a tool (`Visibility`), and whether the
client of the request being served renders apps (`supports_apps`).

Each name loads its module on first use, as in `wiremcp.server`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._apps import RESOURCE_URI_META_KEY, UI_EXTENSION, UI_MIME_TYPE, UiCsp, Visibility, supports_apps
else:
    from ._lazy import lazy_names

    __getattr__, __dir__ = lazy_names(
        globals(),
        dict.fromkeys(
            ("RESOURCE_URI_META_KEY", "UI_EXTENSION", "UI_MIME_TYPE", "UiCsp", "Visibility", "supports_apps"), "_apps"
        ),
    )

__all__ = ["UI_EXTENSION", "UI_MIME_TYPE", "RESOURCE_URI_META_KEY", "UiCsp", "Visibility", "supports_apps"]
