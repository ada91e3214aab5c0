"""docs/deploy.md's nginx configuration is the one tests/scale/test_deploy.py runs (services.NGINX_CONF)."""

from __future__ import annotations

import re

from .services import NGINX_CONF, ROOT


def _directives(text: str) -> set[str]:
    out = set()
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line.endswith(";"):
            out.add(" ".join(line.split()))
    return out


def test_the_documented_location_block_is_the_tested_one():
    doc = (ROOT / "docs" / "deploy.md").read_text()
    blocks = re.findall(r"^```nginx\n(.*?)^```", doc, re.S | re.M)
    documented = re.search(r"location /mcp \{(.*?)\}", blocks[0], re.S)
    tested = re.search(r"location /mcp \{\{(.*?)\}\}", NGINX_CONF, re.S)
    assert documented and tested
    assert _directives(documented.group(1)) == _directives(tested.group(1))
    # the limits of the server block and the upstream's keep-alive too
    for directive in ("large_client_header_buffers 8 64k;", "client_header_timeout 15s;", "client_body_timeout 30s;",
                      "client_max_body_size 16m;", "keepalive 64;"):
        assert directive in _directives(blocks[0]) and directive in _directives(NGINX_CONF)
    # no stickiness in the tested upstream
    upstream = re.search(r"upstream wiremcp \{\{(.*?)\}\}", NGINX_CONF, re.S)
    assert upstream and not re.search(r"\b(ip_hash|hash|sticky)\b", upstream.group(1).split("#")[0] + "".join(
        line.split("#")[0] for line in upstream.group(1).splitlines()))
