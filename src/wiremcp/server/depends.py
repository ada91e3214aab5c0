"""Dependency injection: tool parameters filled by functions (docs/dependencies.md).

``db: Annotated[Pool, Depends(open_pool)]`` in a tool's signature: the
parameter is filled by ``open_pool`` (plain, async, or a generator) and
never appears in the ``inputSchema``. A request-scoped dependency runs once
per call however many times the call asks for it; a lifespan-scoped one (a
generator or context manager: a pool, a client) is opened when the server's
lifespan starts and closed when it ends (`Scope`; the rules are in
`wiremcp.server._depends`).

Each name loads its module on first use, as in `wiremcp.server`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._depends import Depends, Scope
else:
    from ._lazy import lazy_names

    __getattr__, __dir__ = lazy_names(globals(), dict.fromkeys(("Depends", "Scope"), "_depends"))

__all__ = ["Depends", "Scope"]
