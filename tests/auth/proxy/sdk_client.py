"""The official MCP SDK's client (run under a peer's Python, tests/peers.py) signing in through the proxy.

    python sdk_client.py MCP_URL

Its OAuthClientProvider registers itself (RFC 7591) with a loopback redirect URI served here;
the authorization URL is printed as ``AUTHORIZE <url>`` for the test to open in a browser. Once
the code arrives, it calls ``whoami``, waits for its token to run out, calls ``whoami`` again (the
SDK refreshes first) and prints ``RESULT <json>``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from urllib.parse import parse_qs, urlsplit

from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def main(url: str) -> None:
    answer: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = (await reader.readline()).decode("latin-1").split()
        while (await reader.readline()) not in (b"\r\n", b"\n", b""):
            pass
        target = line[1] if len(line) >= 2 else ""
        if target.startswith("/callback") and not answer.done():
            answer.set_result({k: v[0] for k, v in parse_qs(urlsplit(target).query).items()})
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 9\r\nConnection: close\r\n\r\n<p id=ok>")
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    redirect_uri = f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}/callback"

    async def on_redirect(authorization_url: str) -> None:
        print("AUTHORIZE", authorization_url, flush=True)

    async def on_callback() -> tuple[str, str | None]:
        params = await answer
        return params["code"], params.get("state")

    storage = Memory()
    metadata = OAuthClientMetadata(
        client_name="official-sdk", redirect_uris=[redirect_uri], grant_types=["authorization_code", "refresh_token"],
        response_types=["code"], token_endpoint_auth_method="none",
    )
    provider = OAuthClientProvider(url, metadata, storage, redirect_handler=on_redirect, callback_handler=on_callback)
    out: dict[str, object] = {}
    async with streamablehttp_client(url, auth=provider) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            out["first"] = (await session.call_tool("whoami", {})).structuredContent
            assert storage.tokens is not None
            out["refresh_token"] = storage.tokens.refresh_token
            # the token runs out (the test's server gives a few seconds): the SDK refreshes it first
            await asyncio.sleep((storage.tokens.expires_in or 0) + 1)
            out["second"] = (await session.call_tool("whoami", {})).structuredContent
    assert storage.client is not None and storage.tokens is not None
    out["client_id"] = storage.client.client_id
    out["refresh_token_after"] = storage.tokens.refresh_token
    out["access_token"] = storage.tokens.access_token
    listener.close()
    print("RESULT", json.dumps(out), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
