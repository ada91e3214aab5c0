"""A stand-in for a browser (used as $BROWSER by tests/auth/test_cli.py): follows the authorization
URL and its redirects, as a person who approves would, and notes that it was opened."""

import os
import sys

import httpx

with open(os.environ["FAKE_BROWSER_LOG"], "a") as log:
    log.write(sys.argv[1] + "\n")
httpx.get(sys.argv[1], follow_redirects=True, timeout=30)
