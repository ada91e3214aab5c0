"""Serving the inspector: uvicorn on 127.0.0.1 only, a fresh token per run, for ``inspect`` and ``dev``.

* ``wiremcp inspect --web TARGET``: `run_inspect` connects the client first
  (a target that cannot be reached is exit status 2, as for ``inspect``),
  then serves the page until Ctrl-C. The URL, with its token, is the one
  line printed on stdout.
* ``wiremcp dev --web TARGET``: `WebRunner` runs the inspector on an event
  loop in a thread of the dev process; the client starts ``wiremcp run
  TARGET`` over stdio, and after each change dev calls `WebRunner.restart`,
  which reconnects (a new server process) and sends the page the new lists.

The address is always 127.0.0.1 (no option changes it); the port is
``--web-port`` (default 0: a free one). The token is 32 random bytes
(`secrets.token_urlsafe`).

The inspector is an MCP Apps host (docs/apps.md, "The inspector as a host"):
the client declares ``io.modelcontextprotocol/ui`` (`APPS_CAPABILITIES`),
and a second uvicorn server on another free port of 127.0.0.1 serves the
sandbox proxy (`SandboxApp`, its own token), in the same event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import socket
import sys
import threading
import webbrowser
from typing import Any, Callable

from ...client import Client, ClientError
from .._client import client_for, url_problem
from .._run import address_problem
from .._output import INTERRUPTED, OK, USAGE, fail, install_hint
from ._app import InspectorApp
from ._sandbox import SandboxApp
from ._session import ClientFactory, Inspector

__all__ = ["WebServer", "run_inspect", "WebRunner", "new_token", "APPS_CAPABILITIES"]

HOST = "127.0.0.1"
#: What the inspector's client declares: it renders MCP Apps views (apps.mdx, "Client (Host) Capabilities").
APPS_CAPABILITIES: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}


def new_token() -> str:
    return secrets.token_urlsafe(32)


class WebServer:
    """uvicorn serving an `InspectorApp` on 127.0.0.1; `url` is known once `bind` returned."""

    def __init__(self, inspector: Inspector, port: int = 0, token: str | None = None) -> None:
        import uvicorn

        self.inspector = inspector
        self.sandbox = SandboxApp(new_token())
        self.app = InspectorApp(inspector, token or new_token(), sandbox=self.sandbox)
        self.config = uvicorn.Config(
            self.app, host=HOST, port=port, lifespan="off", log_level="warning", access_log=False,
            timeout_graceful_shutdown=2, ws="none",
        )
        self.server = uvicorn.Server(self.config)
        self.sandbox_config = uvicorn.Config(
            self.sandbox, host=HOST, port=0, lifespan="off", log_level="warning", access_log=False,
            timeout_graceful_shutdown=2, ws="none",
        )
        self.sandbox_server = uvicorn.Server(self.sandbox_config)
        self.sock: socket.socket | None = None
        self.sandbox_sock: socket.socket | None = None

    def bind(self) -> str:
        self.sock = self.config.bind_socket()
        self.sock.listen(self.config.backlog)  # bind_socket does not listen: a page may connect as soon as the URL is out
        self.app.port = self.sandbox.page_port = self.sock.getsockname()[1]
        self.sandbox_sock = self.sandbox_config.bind_socket()
        self.sandbox_sock.listen(self.sandbox_config.backlog)
        self.sandbox.port = self.sandbox_sock.getsockname()[1]
        return self.url

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.app.port}/{self.app.token.decode()}/"

    def launch_url(self) -> str:
        """A URL for a browser's command line: it works once, redirecting to `url` (see `InspectorApp.new_launch`)."""
        token = new_token()
        self.app.new_launch(token)
        return f"http://{HOST}:{self.app.port}/{token}/"

    async def serve(self) -> None:
        assert self.sock is not None and self.sandbox_sock is not None, "bind() first"
        sandbox = asyncio.ensure_future(self.sandbox_server.serve(sockets=[self.sandbox_sock]))
        try:
            await self.server.serve(sockets=[self.sock])
        finally:
            self.sandbox_server.should_exit = True
            await sandbox

    async def stop(self) -> None:
        await self.inspector.aclose()  # ends the event streams, so that uvicorn can finish
        self.server.should_exit = True
        self.sandbox_server.should_exit = True


def run_inspect(args: argparse.Namespace, tail: list[str] | None) -> int:
    """``wiremcp inspect --web``: the client is the one ``inspect`` would use (`_client.client_for`)."""
    import importlib.util

    if importlib.util.find_spec("uvicorn") is None:
        return fail("inspect", f"--web needs uvicorn: {install_hint('http')}")
    target = tail if tail is not None else list(args.target)
    problem = url_problem(target) or address_problem(HOST, args.web_port, "--web-port")
    if problem is not None:
        return fail("inspect", problem)

    def factory(on_wire: Any, elicitation: Any) -> Client:
        return client_for(target, args, on_wire, elicitation=elicitation, command=tail is not None, capabilities=APPS_CAPABILITIES)

    try:
        return asyncio.run(_inspect_main(args, " ".join(target), factory))
    except KeyboardInterrupt:
        return INTERRUPTED


async def _inspect_main(args: argparse.Namespace, target: str, factory: ClientFactory) -> int:
    inspector = Inspector(factory, target=target)
    try:
        await inspector.connect()
    except ClientError as exc:
        print(f"wiremcp inspect: {inspector.state.get('error') or exc}", file=sys.stderr)
        await inspector.aclose()
        return USAGE
    web = WebServer(inspector, args.web_port)
    url = web.bind()
    print(url, flush=True)
    print(f"wiremcp inspect: the inspector of {target} is at {url} (Ctrl-C to stop)", file=sys.stderr, flush=True)
    if getattr(args, "open", False):
        webbrowser.open(web.launch_url())  # never the token itself: a command line is public
    try:
        await web.serve()
    finally:
        await inspector.aclose()
    return OK


def _pass_stderr(data: bytes) -> None:
    try:
        sys.stderr.buffer.write(data)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class WebRunner:
    """``wiremcp dev --web``'s runner: the inspector in a thread, reconnected after each change."""

    watching = False

    def __init__(self, target: str, port: int, env: dict[str, str], say: Callable[[str], None]) -> None:
        self.target = target
        self.port = port
        self.env = env
        self.say = say
        self.loop: asyncio.AbstractEventLoop | None = None
        self.web: WebServer | None = None
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._main, daemon=True, name="dev-web")
        self.failure: BaseException | None = None

    def _factory(self, on_wire: Any, elicitation: Any) -> Client:
        return Client.stdio(
            sys.executable, ["-m", "wiremcp", "run", self.target], env=self.env,
            name="wiremcp-dev-web", on_wire=on_wire, elicitation=elicitation, capabilities=APPS_CAPABILITIES,
            on_stderr=_pass_stderr,  # the server's warnings and a failing tool's traceback, on dev's stderr
        )

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # reported by start()
            self.failure = exc
            self.ready.set()

    async def _serve(self) -> None:
        self.loop = asyncio.get_running_loop()
        inspector = Inspector(self._factory, target=f"wiremcp run {self.target}")
        try:
            await inspector.connect()
        except ClientError as exc:
            self.say(f"the server did not start: {exc}; waiting for a change")
        self.web = WebServer(inspector, self.port)
        url = self.web.bind()
        print(url, flush=True)
        self.say(f"the inspector is at {url}")
        self.ready.set()
        await self.web.serve()

    def start(self) -> None:
        self.thread.start()
        self.ready.wait()
        if self.failure is not None:
            raise self.failure

    def _run(self, coro: Any) -> None:
        if self.loop is None or not self.thread.is_alive():
            coro.close()
            return
        asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def restart(self, why: str) -> None:
        if self.web is not None:
            self._run(self.web.inspector.restart(f"{why} changed"))
            state = self.web.inspector.state
            if state.get("connected"):
                self.say(f"{why} changed; restarted")
            else:
                self.say(f"{why} changed; the server did not start: {state.get('error')}")

    def stop(self) -> None:
        if self.web is not None:
            self._run(self.web.stop())
        self.thread.join(10)

    def finished(self) -> bool:
        return not self.thread.is_alive()
