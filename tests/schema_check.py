"""Check results against the MCP 2026-07-28 ``schema.json``, and run requests in-process.

    from schema_check import check, handle, wire_error
    result = handle(server, "resources/read", {"uri": "test://a"})   # awaits if needed
    check("ReadResourceResult", result)      # raises AssertionError naming the problem
    error = wire_error(server, "resources/read", {"uri": "nope"})    # the reply's error object

Each definition is validated with jsonschema (draft 2020-12) against the
whole schema, so ``$ref``s resolve; validators are built once per name.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
from typing import Any

import jsonschema
import orjson

from conftest import META, SPEC
from wiremcp.jsonrpc import Request
from wiremcp.server import Server
from wiremcp.server._reply import reply_failed

SCHEMA_FILE = SPEC / "schema" / "2026-07-28" / "schema.json"


@functools.cache
def _schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text())  # type: ignore[no-any-return]


@functools.cache
def validator(name: str) -> jsonschema.protocols.Validator:
    schema = _schema()
    if name not in schema["$defs"]:
        raise KeyError(f"schema.json has no definition {name!r}")
    root = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}
    cls = jsonschema.validators.validator_for(root)
    return cls(root, format_checker=cls.FORMAT_CHECKER)


def check(name: str, instance: Any) -> Any:
    """Assert ``instance`` is a valid ``name`` (a ``$defs`` entry); returns it."""
    errors = sorted(validator(name).iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        detail = "; ".join(f"at {list(e.absolute_path)}: {e.message}" for e in errors[:5])
        raise AssertionError(f"not a valid {name}: {detail}")
    return instance


# -- in-process calls ------------------------------------------------------------


async def _wait(pending: Any) -> Any:
    return await pending


def handle(server: Server, method: str, params: dict[str, Any] | None = None, *, meta: dict[str, Any] | None = None, id: Any = 1) -> Any:
    """``server.handle`` for one request, awaited when it returns an awaitable."""
    out = server.handle(Request(id, method, {**(params or {}), "_meta": META if meta is None else meta}))
    if inspect.isawaitable(out):
        out = asyncio.run(_wait(out))
    return out


def wire_error(server: Server, method: str, params: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
    """The ``error`` object of the reply the transports would send (through `_reply`)."""
    try:
        result = handle(server, method, params, **options)
    except BaseException as exc:  # what the transports do: _reply decides the wire error
        line, _ = reply_failed(options.get("id", 1), exc)
        return orjson.loads(line)["error"]  # type: ignore[no-any-return]
    raise AssertionError(f"expected an error, got the result {result!r}")
