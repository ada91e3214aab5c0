"""OAuth tests: tests/auth/server (resource server) against a real authorization server (tests/auth/as)."""
