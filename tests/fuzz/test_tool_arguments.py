"""Fuzz the tool argument validator: ``tools/call`` with arbitrary ``arguments``.

Tools with typed parameters (scalars, Literal, enums, constrained numbers,
lists, dicts, TypedDicts, dataclasses, tuples, optionals; the fuzz server in
`_server` and the typed tools of tests/servers/toolbox.py) are called through
`Server.handle` with arguments that are anything JSON: a valid call returns a
result, an invalid one raises `InvalidParams` (-32602) (server/tools.mdx,
"Error Handling": unknown tool or invalid arguments); nothing else, never an
internal error (-32603), which would mean the validator let through a value
the tool could not take, or failed itself.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import wiremcp
from wiremcp.jsonrpc import JSONRPCError, Request

from ._budget import fuzz_settings, run_for
from ._server import build
from .strategies import META_MODERN, json_values


def _toolbox() -> wiremcp.Server:
    path = Path(__file__).resolve().parent.parent / "servers" / "toolbox.py"
    spec = importlib.util.spec_from_file_location("fuzz_toolbox", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    server: wiremcp.Server = module.server
    return server


#: Toolbox tools that fail on purpose whatever their arguments (they test error replies),
#: and one whose work grows with its argument (``squares(n)`` builds n squares: the
#: long run found n = 2**63, a MemoryError, which is the tool's doing, not the validator's).
FAIL_ON_PURPOSE = {"broken_weather", "test_error_handling", "squares"}

SERVERS = [build(), _toolbox()]
CASES = [
    (server, name, list(tool.definition["inputSchema"].get("properties", {})))
    for server in SERVERS
    for name, tool in server.tools.items()
    if name not in FAIL_ON_PURPOSE
]


#: Values near what the tools ask for, and anything else.
_argument_values = st.one_of(
        json_values,
    st.sampled_from([0, 1, -1, 2**63, 1.5, -0.0, 1e308, "", "red", "x" * 20, True, None, [], {}, [1, "a"],
                     {"x": 1, "y": 2}, {"start": 1, "end": 2}, ["a", "b"], {"a": 1}, [3, "z"]]),
)


@st.composite
def calls(draw: st.DrawFn) -> tuple[wiremcp.Server, str, Any]:
    server, name, properties = draw(st.sampled_from(CASES))
    keys = st.sampled_from([*properties, "extra"]) if properties else st.text(max_size=5)
    arguments = draw(st.one_of(
        st.dictionaries(keys, _argument_values, max_size=len(properties) + 1),
        json_values,
        st.none(),
    ))
    return server, name, arguments


async def _call(server: wiremcp.Server, name: str, arguments: Any) -> Any:
    params: dict[str, Any] = {"name": name, "_meta": META_MODERN}
    if arguments is not None:
        params["arguments"] = arguments
    out = server.handle(Request(1, "tools/call", params))
    if type(out) is not dict:
        out = await out  # type: ignore[misc]
    return out


@fuzz_settings(400)
@given(call=calls())
def fuzz_tool_arguments(call: tuple[wiremcp.Server, str, Any]) -> None:
    server, name, arguments = call
    try:
        result = asyncio.run(_call(server, name, arguments))
    except JSONRPCError as exc:
        assert exc.code == -32602, (name, arguments, exc.code, exc.message)
        return
    assert type(result) is dict and "content" in result, (name, arguments, result)


def test_tool_arguments() -> None:
    run_for(fuzz_tool_arguments)
