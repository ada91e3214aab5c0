"""Tools with x-mcp-header annotations, valid and invalid (server/tools.mdx, x-mcp-header)."""

import wiremcp

server = wiremcp.Server("headers", version="1")

REGION = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "flag": {"type": "boolean", "x-mcp-header": "Flag"},
        "query": {"type": "string"},
    },
    "required": ["region"],
}


@server.tool(input_schema=REGION)
def valid_tool(region: str, count: int = 0, flag: bool = False, query: str = "") -> str:
    """Echo the arguments the server received."""
    return f"{region}|{count}|{flag}|{query}"


