"""A proxy in front of examples/transform.py whose upstream tools are transformed (tests/server/test_transform.py).

The proxy's upstream is another process (``wiremcp run examples/transform.py``
on stdio): the derived tools' schemas come from the upstream's list, calls
go upstream under the source's name.
"""

from pathlib import Path

import wiremcp
from wiremcp.server import ToolResult
from wiremcp.server.transform import Arg

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "transform.py"

server = wiremcp.proxy(str(EXAMPLE))


def shout(result: ToolResult) -> str:
    return str(result.structured_content["location"]).upper()


# Derived from the upstream's own derived tool, renamed again; the source is taken off the list.
server.add_transformed(
    "forecast",
    name="weather",
    description="Weather, via the proxy.",
    arguments={"city": Arg(rename="place", description="Where."), "days": Arg(hide=True, default=5)},
    replace=True,
)
# Derived from an upstream tool that is also served under its own name, output wrapped.
server.add_transformed("vendor_fc", name="where", arguments={"loc": Arg(rename="city")}, output=shout)
