#!/usr/bin/env bash
# Create bench/.venv-official with the official MCP Python SDK, for comparison
# runs only. The official SDK is never a runtime dependency of wiremcp.
#
#   bash bench/setup_official.sh            # create or update
#   MCP_VERSION=2.3.0 bash bench/setup_official.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv-official"
python="${PYTHON:-python3}"
mcp_version="${MCP_VERSION:-2.3.0}"

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "mcp==$mcp_version" "uvicorn[standard]"
"$venv/bin/python" -c 'import importlib.metadata as m; print("official SDK ready: mcp", m.version("mcp"), "uvicorn", m.version("uvicorn"))'
