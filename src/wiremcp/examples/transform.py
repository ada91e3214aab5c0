"""Tool transformation: adapt another server's tools without touching their code (docs/transform.md).

    wiremcp run examples/transform.py           # stdio
    wiremcp run examples/transform.py --http    # http://127.0.0.1:8000/mcp

``vendor`` stands for a server we do not control (a package's, or, through
``wiremcp.proxy``, another process): terse argument names, an option the
model should never touch. This server mounts it and serves friendlier tools
derived from its ``fc`` (``vendor_fc`` once mounted).
"""

from __future__ import annotations

from typing import Any, TypedDict

import wiremcp
from wiremcp.server import ToolResult
from wiremcp.server.transform import Arg

vendor = wiremcp.Server("vendor-weather")


@vendor.tool(inline=True)
def fc(loc: str, d: int = 1, units: str = "metric", api_v: int = 1) -> dict[str, Any]:
    """Forecast."""
    temperature = 21 if units == "metric" else 70
    return {"location": loc, "days": d, "units": units, "temperature": temperature, "api": api_v}


server = wiremcp.Server("weather", version="1.0.0")
server.mount(vendor, "vendor")

# Renamed and described arguments, a new default, and one hidden with a fixed value.
server.add_transformed(
    "vendor_fc",
    name="forecast",
    description="The weather forecast for a city.",
    arguments={
        "loc": Arg(rename="city", description="The city, e.g. 'Paris'."),
        "d": Arg(rename="days", description="How many days ahead, 1 to 7.", default=3),
        "api_v": Arg(hide=True, default=2),
    },
)


# The output wrapped: a function of the source's result (a ToolResult) returns the derived tool's.
def one_line(result: ToolResult) -> str:
    data = result.structured_content
    return f"{data['location']}: {data['temperature']} degrees ({data['units']}), {data['days']} day(s) ahead"


server.add_transformed(
    "vendor_fc",
    name="forecast_text",
    description="The forecast for a city, as one line.",
    arguments={"loc": Arg(rename="city"), "units": Arg(hide=True, default="imperial"), "api_v": Arg(hide=True, default=2)},
    output=one_line,
)


class Temperature(TypedDict):
    city: str
    celsius: int


# A typed output function publishes its own outputSchema (checked like any tool's).
def temperature_only(result: ToolResult) -> Temperature:
    data = result.structured_content
    return {"city": data["location"], "celsius": data["temperature"]}


server.add_transformed(
    "vendor_fc",
    name="temperature",
    arguments={"loc": Arg(rename="city"), "d": Arg(hide=True), "units": Arg(hide=True), "api_v": Arg(hide=True, default=2)},
    output=temperature_only,
)

if __name__ == "__main__":
    wiremcp.run(server)
