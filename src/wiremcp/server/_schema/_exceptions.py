"""The one exception of the schema package.

`SchemaError` is raised at registration, never per call: for a type hint that
cannot be expressed as JSON Schema, and for a schema the validator cannot
compile. It is both a `TypeError` (a bad hint) and a `ValueError` (a bad
schema), so callers that catch either keep working.
"""

from __future__ import annotations

__all__ = ["SchemaError"]


class SchemaError(TypeError, ValueError):
    """A type hint that cannot be expressed as JSON Schema, or a schema we cannot compile."""


SchemaError.__module__ = "wiremcp.server"  # its public home: a traceback names it so
