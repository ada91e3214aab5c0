"""The MCP Apps SDK (``@modelcontextprotocol/ext-apps`` 2.0.4, npm), files copied unchanged; see README.md."""
