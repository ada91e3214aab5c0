"""``wiremcp check TARGET``: an active conformance and security audit of any MCP server.

The package's modules: `_findings` (the rule and finding types every check
returns, and the registry of rules), the probes that produce findings, and
the reports that print them. See docs/check.md.
"""
