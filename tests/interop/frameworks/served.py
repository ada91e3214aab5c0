"""The server of the framework matrix: examples/everything.py as it is, plus one tool, ``protocol_era``.

``protocol_era`` answers the protocol version the request it serves belongs to,
so a client framework that does not expose what it negotiated still lets the
matrix record the era it spoke (the compatibility table's "era" column). Every
other tool, resource and prompt is the example's own. Served with
``wiremcp run tests/interop/frameworks/served.py`` (stdio or ``--http``), with
the repository's root on ``PYTHONPATH``.
"""

from __future__ import annotations

from examples.everything import server
from wiremcp import Context


@server.tool()
def protocol_era(ctx: Context) -> str:
    """The protocol version of this request."""
    return ctx.protocol_version


__all__ = ["server"]
