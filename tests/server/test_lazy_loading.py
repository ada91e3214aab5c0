"""What a server of tools alone loads at start-up, and that every other feature still loads when used.

bench/README.md, "Cold start": `wiremcp run` answering its first ``tools/call``
is measured against a bare orjson loop, so a server that registers tools
only must not import the modules of the features it does not use
(resources, prompts, completion, composition, middleware, legacy sessions,
subscriptions, tasks, declared inputs, the content TypedDicts). Those load
on first use: a public name through the package's ``__getattr__``, a
registry when something is registered in it. Checked in a fresh process,
since this one has imported everything.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import orjson
import pytest

import wiremcp
import wiremcp.server
import wiremcp.server.apps
import wiremcp.server.forward
import wiremcp.server.schema
import wiremcp.server.depends
import wiremcp.server.openapi
import wiremcp.server.storage
import wiremcp.server.tasks
import wiremcp.server.transform
import wiremcp.server.transport
from wiremcp.cli._target import Target, parse_target
from wiremcp.server import Tool

#: Modules a server of inline tools never needs before its first reply.
LAZY = (
    "wiremcp.server._resources",
    "wiremcp.server._prompts",
    "wiremcp.server._completion",
    "wiremcp.server._uri_template",
    "wiremcp.server._mount",
    "wiremcp.server._forward",
    "wiremcp.server._middleware",
    "wiremcp.server.middleware",  # the ready-made middleware (issue 27): only when imported
    "wiremcp.server._telemetry",
    "wiremcp.server._legacy",
    "wiremcp.server._legacy_2024",
    "wiremcp.server._subscriptions",
    "wiremcp.server._handlers_listen",
    "wiremcp.server._definition",
    "wiremcp.server._connection",
    "wiremcp.server._call",
    "wiremcp.server._outgoing",
    "wiremcp.server._content",
    "wiremcp.server._inputs",
    "wiremcp.server._elicit",
    "wiremcp.server._tasks",
    "wiremcp.server._transform",  # tool transformation (issue 27): only for server.add_transformed
    "wiremcp.server.transform",
    "wiremcp.server._depends",  # dependency injection (issue 27): only once Depends is imported
    "wiremcp.server.depends",
    "wiremcp.server._visibility",  # tags are data; only visibility rules (enable, disable, include_tags) load it
    "wiremcp.server.openapi",  # servers from OpenAPI documents and FastAPI apps (issue 27): only when imported
    "wiremcp.server._openapi",
    "wiremcp.server._openapi_doc",
    "wiremcp.server._openapi_asgi",
    "wiremcp.server._state",  # state (issue 27): only for server.storage or ctx.session_state
    "wiremcp.server._storage",
    "wiremcp.server._storage_sqlite",
    "wiremcp.server._storage_redis",
    "wiremcp.server.storage",
    "wiremcp.auth.proxy",  # the OAuth proxy (issue 26): only for a server that imports it
)

_PROGRAM = textwrap.dedent(
    """
    import sys

    import orjson

    import wiremcp

    server = wiremcp.Server("echo", version="1.0.0")

    @server.tool(inline=True)
    def echo(text: str) -> str:
        '''Return the text unchanged.'''
        return text

    server.check_ready()
    capabilities = server.capabilities()  # server/discover's: asking makes no registry
    loaded = sorted(name for name in sys.modules if name.startswith("wiremcp."))
    sys.stdout.write(orjson.dumps({"loaded": loaded, "capabilities": capabilities}).decode())
    """
)


def _run(program: str) -> dict:
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, check=True, timeout=60)
    return orjson.loads(out.stdout)


@pytest.mark.slow
def test_a_server_of_tools_loads_none_of_the_other_features():
    seen = _run(_PROGRAM)
    assert [name for name in LAZY if name in seen["loaded"]] == []
    assert seen["capabilities"] == {"tools": {"listChanged": True}}


@pytest.mark.slow
def test_each_feature_loads_its_module_when_used():
    program = _PROGRAM.replace(
        "server.check_ready()",
        textwrap.dedent(
            """
            @server.resource("file:///a.txt")
            def a() -> str:
                return "a"

            @server.prompt()
            def greet(name: str) -> str:
                return f"hello {name}"

            @server.complete(prompt="greet", argument="name")
            def names(value: str) -> list[str]:
                return ["ada"]

            server.check_ready()
            """
        ),
    )
    seen = _run(program)
    for name in ("wiremcp.server._resources", "wiremcp.server._prompts", "wiremcp.server._completion"):
        assert name in seen["loaded"]
    assert seen["capabilities"] == {
        "tools": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "prompts": {"listChanged": True},
        "completions": {},
    }


#: What the stdio front (`serve_before_loop`) may not load to answer a fused call: the legacy era
#: (sessions, the server's requests to the peer), the event loop, what only errors need.
FRONT_LAZY = (
    "asyncio",
    "wiremcp.server._legacy",
    "wiremcp.server._legacy_2024",
    "wiremcp.server._outgoing",
    "wiremcp.server._handlers_listen",
    "wiremcp.server._subscriptions",
    "wiremcp.server._definition",
)

_FRONT = textwrap.dedent(
    """
    import sys

    import orjson

    import wiremcp
    from wiremcp.transports.stdio import serve_before_loop

    server = wiremcp.Server("echo", version="1.0.0")

    @server.tool(inline=True)
    def echo(text: str) -> str:
        return text

    left = serve_before_loop(server)  # one fused call on stdin, then its end
    sys.stdout.write(orjson.dumps({"left": left, "loaded": sorted(sys.modules)}).decode())
    """
)


@pytest.mark.slow
def test_the_stdio_front_answers_a_fused_call_without_the_legacy_era():
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    }
    params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": meta}
    line = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    out = subprocess.run([sys.executable, "-c", _FRONT], input=line + b"\n", capture_output=True, check=True, timeout=60)
    reply, _, rest = out.stdout.partition(b"\n")
    assert orjson.loads(reply)["result"]["content"] == [{"type": "text", "text": "hi"}]
    seen = orjson.loads(rest)
    assert seen["left"] is None  # end of input: every line was served before the event loop
    assert [name for name in FRONT_LAZY if name in seen["loaded"]] == []


NAMESPACES = [
    wiremcp,
    wiremcp.server,
    wiremcp.server.transport,
    wiremcp.server.tasks,
    wiremcp.server.apps,
    wiremcp.server.forward,
    wiremcp.server.schema,
    wiremcp.server.transform,
    wiremcp.server.depends,
    wiremcp.server.openapi,
]


@pytest.mark.parametrize("module", NAMESPACES, ids=[m.__name__ for m in NAMESPACES])
def test_every_public_name_resolves(module):
    for name in module.__all__:
        assert getattr(module, name) is not None, name
        assert name in dir(module)
    with pytest.raises(AttributeError):
        module.NoSuchName  # noqa: B018


def test_lazy_names_are_the_defining_modules_objects():
    from wiremcp.server import _content, _context, _failures, _legacy, _resources

    assert wiremcp.text is _content.text is wiremcp.server.text
    assert wiremcp.Context is _context.Context
    assert wiremcp.server.Resource is _resources.Resource
    # moved to _failures (a server's start loads no legacy session); still importable from _legacy
    assert wiremcp.server.ClientRequestFailed is _failures.ClientRequestFailed is _legacy.ClientRequestFailed


def test_a_tool_name_with_a_trailing_newline_warns(caplog):
    """tools.mdx, Tool Names: 1 to 128 of [A-Za-z0-9_.-]; a newline is none of them."""
    with caplog.at_level(logging.WARNING, "wiremcp.server"):
        Tool(lambda: "", name="name\n")
    assert "Tool Names" in caplog.text


def test_a_meta_key_with_a_trailing_newline_is_refused():
    """basic/index.mdx, _meta: the key's name ends in a letter or digit."""
    with pytest.raises(ValueError, match="malformed"):
        Tool(lambda: "", name="t", meta={"com.example/key\n": 1})
    assert Tool(lambda: "", name="t", meta={"com.example/key": 1}).definition["_meta"] == {"com.example/key": 1}


def test_a_docstring_without_args_is_the_whole_description():
    def f(x: str) -> str:
        """First line.



        After three blank lines: ratio 1:2 is no Args header."""
        return x

    assert Tool(f).definition["description"] == "First line.\n\nAfter three blank lines: ratio 1:2 is no Args header."


def test_a_target_is_an_immutable_value():
    target = parse_target("pkg.module:app")
    assert target == Target("module", "pkg.module", "app")
    assert hash(target) == hash(Target("module", "pkg.module", "app"))
    assert target != Target("module", "pkg.module")
    assert str(target) == "pkg.module:app"
    assert repr(target) == "Target(kind='module', spec='pkg.module', attr='app')"
    with pytest.raises(AttributeError):
        target.spec = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del target.attr
