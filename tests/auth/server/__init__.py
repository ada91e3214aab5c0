"""The resource server side of MCP authorization, over real HTTP against oidc-provider."""
