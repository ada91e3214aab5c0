"""A server whose tool shows a UI resource it never registers: `wiremcp run` must refuse to serve it."""

import wiremcp

server = wiremcp.Server("broken")
server.ui_resource("ui://broken/present.html", html="<!DOCTYPE html><p>here</p>")


@server.tool(ui="ui://broken/missing.html")
def show_weather() -> str:
    """Sunny (a text result: the view never loads)."""
    return "Sunny"
