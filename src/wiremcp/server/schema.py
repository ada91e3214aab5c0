"""The JSON Schema engine the server validates tool input with, for code that checks values itself.

`compile_validator` compiles a JSON Schema (2020-12, the subset docs/tools.md
lists) once into a check: ``check(value)`` returns the first problem as a
message, or None. `wiremcp tap` checks traffic with it. Declaring a tool's
input needs none of this: annotations, `wiremcp.server.Field` and
`wiremcp.server.Header` do it.

`SchemaWarning` is what registration says of a function whose schema says
less than it could (an untyped parameter, no return annotation), issued when
``WIREMCP_SCHEMA_WARNINGS=1`` is set, as ``wiremcp dev`` does.

Loads the schema engine on first use, as `wiremcp.server` does.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._definition import SchemaWarning
    from ._schema import compile_validator
else:
    from ._lazy import lazy_names

    __getattr__, __dir__ = lazy_names(globals(), {"compile_validator": "_schema", "SchemaWarning": "_definition"})

__all__ = ["compile_validator", "SchemaWarning"]
