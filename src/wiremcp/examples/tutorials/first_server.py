"""Your first server (docs/tutorials/first-server.md): unit conversions, over stdio.

    wiremcp call examples/tutorials/first_server.py km_to_miles '{"km": 10}'
    wiremcp install claude-desktop examples/tutorials/first_server.py
"""

from __future__ import annotations

from typing import Literal

import wiremcp

server = wiremcp.Server("units", version="1.0.0", instructions="Converts distances and temperatures.")

KM_PER_MILE = 1.609344


@server.tool(inline=True)
def km_to_miles(km: float) -> float:
    """Convert kilometres to miles.

    Args:
        km: the distance in kilometres
    """
    return round(km / KM_PER_MILE, 3)


@server.tool(inline=True)
def temperature(value: float, to: Literal["C", "F"]) -> float:
    """Convert a temperature to Celsius or Fahrenheit.

    Args:
        value: the temperature in the other unit
        to: the unit to convert to
    """
    return round((value - 32) / 1.8 if to == "C" else value * 1.8 + 32, 2)


@server.resource("units://constants", mime_type="text/plain", description="The constants the tools use")
def constants() -> str:
    return f"1 mile = {KM_PER_MILE} km\n0 °C = 32 °F"


if __name__ == "__main__":
    wiremcp.run(server)
