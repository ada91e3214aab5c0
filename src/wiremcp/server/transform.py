"""Tool transformation: a tool derived from another (docs/transform.md).

``server.add_transformed(source, name=..., arguments={"q": Arg(rename="query")}, output=fn)``
serves a new tool made from ``source`` (a tool of this server, a mounted
server's, or a proxied upstream's): its arguments renamed, described,
hidden with a fixed value or given a default (`Arg`), its description
replaced, its output wrapped by a function of the source's `ToolResult`.
The options are one `TransformOptions`; the derived tool is a
`TransformedTool` (the rules are in `wiremcp.server._transform`).

Each name loads its module on first use, as in `wiremcp.server`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._options import TransformOptions
    from ._transform import Arg, Output, TransformedTool
else:
    from ._lazy import lazy_names

    __getattr__, __dir__ = lazy_names(
        globals(), {**dict.fromkeys(("Arg", "Output", "TransformedTool"), "_transform"), "TransformOptions": "_options"}
    )

__all__ = ["Arg", "TransformOptions", "TransformedTool", "Output"]
