"""MkDocs hooks: what the site generates at build time, so that nothing generated is pasted.

Rules this module keeps:

- The pages in docs/ stay plain Markdown that reads on a code host. What the
  build adds is announced there by an HTML comment, invisible on the code host:

  * a ```` ```bash ```` block followed by ``<!-- wire -->``: the block runs (bash,
    in the repository root, with this Python's ``wiremcp`` first on ``PATH``)
    and its output, the real envelopes, is shown under it. A command that fails
    fails the build: a capture is never stale and never pasted;
  * ``<!-- include: PATH -->``: the file PATH of the repository, as a code block
    (the tutorials show the very examples tests/tutorials/ run);
  * ``<!-- generated: NAME -->``: a section written by `generate` below (the
    CLI reference from the argument parsers, the conformance results from the
    record of a conformance run, the benchmark table from bench/README.md).

- A link from docs/ to a file of the repository outside docs/ (``../examples/x.py``)
  keeps working on the code host; on the site it points at a copy of that file
  published under ``repo/`` (bench/README.md maps to the benchmarks page). A
  link to a file that does not exist is a warning, and the strict build fails.
"""

from __future__ import annotations

import json
import logging
import os
import posixpath
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
log = logging.getLogger("mkdocs.hooks.wiremcp")

#: Where copies of repository files linked from the docs are published.
REPO_PREFIX = "repo"
#: Files outside docs/ that have a page of their own on the site.
MAPPED = {"bench/README.md": "reference/benchmarks.md", "README.md": "index.md"}

WIRE = re.compile(r"^```bash\n(?P<cmd>(?:[^`]|`(?!``))*?)^```\n<!-- wire -->\n", re.S | re.M)
INCLUDE = re.compile(r"^<!-- include: (?P<path>\S+) -->\n", re.M)
GENERATED = re.compile(r"^<!-- generated: (?P<name>[\w-]+) -->\n", re.M)
LINK = re.compile(r"\]\((?P<target>[^)\s#]+)(?P<anchor>#[^)\s]*)?\)")
LANGUAGES = {".py": "python", ".json": "json", ".toml": "toml", ".sh": "bash", ".conf": "nginx", ".yml": "yaml"}


def _outside_target(page_src: str, target: str) -> str | None:
    """The repository path a relative link of a page leads to when it leaves docs/, else None."""
    if "://" in target or target.startswith(("/", "mailto:")):
        return None
    joined = posixpath.normpath(posixpath.join("docs", posixpath.dirname(page_src), target))
    if joined.startswith("docs/") or joined == "docs":
        return None
    return joined


def _outside_links() -> set[str]:
    found: set[str] = set()
    for doc in DOCS.rglob("*.md"):
        src = doc.relative_to(DOCS).as_posix()
        for match in LINK.finditer(doc.read_text()):
            path = _outside_target(src, match["target"])
            if path is not None and path not in MAPPED and (ROOT / path).is_file():
                found.add(path)
    return found


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for path in sorted(_outside_links()):
        files.append(File.generated(config, f"{REPO_PREFIX}/{path}", abs_src_path=str(ROOT / path)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    src = page.file.src_uri
    markdown = WIRE.sub(lambda m: _capture(m, src), markdown)
    markdown = INCLUDE.sub(lambda m: _include(m["path"], src), markdown)
    markdown = GENERATED.sub(lambda m: generate(m["name"], src) + "\n", markdown)
    return LINK.sub(lambda m: _relink(m, src), markdown)


def _relink(match: re.Match[str], src: str) -> str:
    target, anchor = match["target"], match["anchor"] or ""
    path = _outside_target(src, target)
    if path is None:
        return match.group(0)
    if not (ROOT / path).exists():
        log.warning("%s: the link %s leads to %s, which is not in the repository", src, target, path)
        return match.group(0)
    site_path = MAPPED.get(path, f"{REPO_PREFIX}/{path}")
    if (ROOT / path).is_dir():
        log.warning("%s: the link %s leads to a folder; link a file", src, target)
        return match.group(0)
    return f"]({posixpath.relpath(site_path, posixpath.dirname(src) or '.')}{anchor})"


def _env() -> dict[str, str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", "PYTHONPATH": str(ROOT / "src")}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


_captures: dict[str, str] = {}


def _capture(match: re.Match[str], src: str) -> str:
    command = match["cmd"]
    if command not in _captures:
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )
        output = done.stdout + done.stderr
        if done.returncode != 0:
            log.warning("%s: the capture `%s` exited with %d:\n%s", src, command.strip(), done.returncode, output)
        _captures[command] = output
    output = _captures[command].rstrip("\n")
    return f"```bash\n{command}```\n\n```text\n{output}\n```\n"


def _include(path: str, src: str) -> str:
    file = ROOT / path
    if not file.is_file():
        log.warning("%s: include of %s, which is not in the repository", src, path)
        return ""
    language = LANGUAGES.get(file.suffix, "text")
    return f'```{language} title="{path}"\n{file.read_text().rstrip()}\n```\n'


def generate(name: str, src: str) -> str:
    """The Markdown of one generated section (``<!-- generated: NAME -->``)."""
    makers = {"cli": _cli, "conformance": _conformance, "benchmarks": _benchmarks, "settings": _settings, "errors": _errors}
    if name not in makers:
        log.warning("%s: no generator named %s", src, name)
        return ""
    return makers[name]()


def _cli() -> str:
    """Every command's ``--help``, as the argument parsers print it."""
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        from cli_reference import commands
    finally:
        sys.path.pop(0)
    from concurrent.futures import ThreadPoolExecutor

    def helps(words: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "wiremcp", *words, "--help"], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=60
        )

    every = commands()
    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(helps, every))
    parts = []
    for words, done in zip(every, runs):
        if done.returncode != 0:
            log.warning("reference/cli.md: `wiremcp %s --help` exited with %d: %s", " ".join(words), done.returncode, done.stderr)
        title = " ".join(["wiremcp", *words])
        parts.append(f"## `{title}`\n\n```text\n{done.stdout.rstrip()}\n```\n")
    return "\n".join(parts)


CONFORMANCE_RECORD = DOCS / "reference" / "conformance.json"


def _conformance() -> str:
    """The table of the last conformance run (docs/reference/conformance.json, written by
    ``python docs/hooks/conformance.py``; tests/test_site.py checks it is current)."""
    record: dict[str, Any] = json.loads(CONFORMANCE_RECORD.read_text())
    lines = [
        f"Suite: `@modelcontextprotocol/conformance` {record['suite']}, run on {record['date']} "
        f"at commit `{record['commit']}`.",
        "",
    ]
    for leg in record["legs"]:
        lines += [f"### {leg['side']} {leg['revision']}: {leg['passed']}/{leg['total']} scored scenarios passed", ""]
        lines += ["| scenario | scored | status | checks passed |", "| --- | --- | --- | ---: |"]
        for s in leg["scenarios"]:
            note = f" ({s['reason']})" if s.get("reason") else ""
            lines.append(f"| `{s['name']}` | {'yes' if s['scored'] else 'no'} | {s['status']}{note} | {s.get('checks', '')} |")
        lines.append("")
    return "\n".join(lines)


def _benchmarks() -> str:
    """bench/README.md, the method and the latest table, with its title one level down."""
    text = (ROOT / "bench" / "README.md").read_text()
    text = re.sub(r"^# .*\n", "", text, count=1)
    return text


def _settings() -> str:
    """The table of wiremcp/server/_settings.py's docstring, checked against its ``ENV`` mapping."""
    from wiremcp.server import _settings as settings

    doc = (settings.__doc__ or "").splitlines()
    border = next(line for line in doc if line.startswith("===="))
    spans = [(m.start(), m.end()) for m in re.finditer(r"=+", border)]
    spans[-1] = (spans[-1][0], 10_000)
    rows = [line for line in doc if line.startswith("``")]
    lines = ["| `Server(...)` argument | environment variable | default | what it sets |", "| --- | --- | --- | --- |"]
    seen = set()
    for row in rows:
        cells = [row[start:end].strip() for start, end in spans]
        argument, variable = cells[0].strip("`"), cells[1].strip("`")
        if settings.ENV.get(argument) != variable:
            log.warning("reference/settings.md: %s / %s is not in wiremcp.server._settings.ENV", argument, variable)
        seen.add(argument)
        lines.append("| " + " | ".join(cell.replace("``", "`") for cell in cells) + " |")
    for argument in sorted(set(settings.ENV) - seen):
        log.warning("reference/settings.md: the setting %s is missing from the table of _settings.py", argument)
    return "\n".join(lines) + "\n"


def _errors() -> str:
    """Every error code wiremcp sends, with its name and the HTTP status it travels with."""
    from wiremcp import jsonrpc
    from wiremcp.protocol import errors
    from wiremcp.server import transport
    from wiremcp.transports.http import STATUS_BY_CODE

    codes = [
        (jsonrpc.PARSE_ERROR, "PARSE_ERROR", "`wiremcp.jsonrpc`", "the bytes are not one JSON text"),
        (jsonrpc.INVALID_REQUEST, "INVALID_REQUEST", "`wiremcp.jsonrpc`", "JSON, but not a valid JSON-RPC 2.0 request (or a batch, or too big, or too deep)"),
        (jsonrpc.METHOD_NOT_FOUND, "METHOD_NOT_FOUND", "`wiremcp.jsonrpc`", "no such method in this revision"),
        (jsonrpc.INVALID_PARAMS, "INVALID_PARAMS", "`wiremcp.jsonrpc`", "`params` or `_meta` malformed; unknown tool, prompt or resource; bad cursor; refused `requestState` or answer"),
        (jsonrpc.INTERNAL_ERROR, "INTERNAL_ERROR", "`wiremcp.jsonrpc`", "a resource, prompt or completer failed (tools answer `isError: true` instead)"),
        (transport.SERVER_BUSY, "SERVER_BUSY", "`wiremcp.server.transport`", "a cap of the server is reached; try again later (HTTP 429 when this client holds its share)"),
        (errors.HEADER_MISMATCH, "HEADER_MISMATCH", "`wiremcp.protocol`", "an `Mcp-*` HTTP header disagrees with the body, or is missing"),
        (errors.MISSING_REQUIRED_CLIENT_CAPABILITY, "MISSING_REQUIRED_CLIENT_CAPABILITY", "`wiremcp.protocol`", "the request needs a client capability it did not declare; `data.requiredCapabilities`"),
        (errors.UNSUPPORTED_PROTOCOL_VERSION, "UNSUPPORTED_PROTOCOL_VERSION", "`wiremcp.protocol`", "the revision named is not served; `data.supported`, `data.requested`"),
    ]
    lines = ["| code | name | defined in | HTTP status | when |", "| ---: | --- | --- | ---: | --- |"]
    for code, name, module, when in codes:
        lines.append(f"| {code} | `{name}` | {module} | {STATUS_BY_CODE.get(code, 200)} | {when} |")
    return "\n".join(lines) + "\n"
