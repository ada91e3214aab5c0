"""Run by the official `mcp` SDK's interpreter: connect to a stdio server command, list tools, call one.

    official_client.py TOOL JSON_ARGUMENTS -- COMMAND ARGS...

Prints one JSON line: the tool names and the text of the call's first content block.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    cut = sys.argv.index("--")
    tool, arguments = sys.argv[1], json.loads(sys.argv[2])
    command = sys.argv[cut + 1 :]
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            result = await session.call_tool(tool, arguments)
            print(json.dumps({"tools": [t.name for t in tools.tools], "text": result.content[0].text}))


asyncio.run(main())
