"""A proxy process that speaks 2025-11-25 to its HTTP upstream (tests/transports/test_proxy_routing.py).

    python tests/servers/legacy_upstream_proxy.py UPSTREAM_URL

``wiremcp.proxy(URL, client_options={"era": "legacy"})`` served on
Streamable HTTP on a free port: the upstream's elicitation requests arrive on
the streams of the calls they belong to.
"""

import sys

import wiremcp

wiremcp.run(wiremcp.proxy(sys.argv[1], client_options={"era": "legacy"}), "http", port=0)
