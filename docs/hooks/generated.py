"""The generated sections of the docs, committed as plain Markdown: ``python tests/test_docs_generated.py`` rewrites them.

Rules this module keeps:

- A page of docs/ reads on a code host as it reads on the site: what is
  generated is written into the page between two HTML comments (invisible on
  the code host) and committed; tests/test_docs_generated.py fails when a
  section differs from what this module makes now. Three kinds of section:

  * ``<!-- include: PATH -->`` ... ``<!-- /include -->``: the file PATH of
    the repository, as a code block (the tutorials show the very examples
    tests/tutorials/ run);
  * ``<!-- generated: NAME -->`` ... ``<!-- /generated -->``: a section
    written by `generate` (the CLI reference from the argument parsers, the
    conformance results from the record of a conformance run, the settings and
    error tables from the code);
  * a ```` ```bash ```` block followed by ``<!-- wire -->`` ...
    ``<!-- /wire -->``: the output of the block, run by bash in the
    repository root with this Python's ``wiremcp`` first on ``PATH``: the
    real envelopes. A command that fails is an error, never a section.
    A third-party server is shown as a reader runs it, ``npx -y
    PACKAGE@VERSION``; the capture runs the peer of tests/peers.py pinned to
    that version instead (`local`), built on first use like every peer (one
    that cannot be built fails the section, never skips it), and writes its
    path back as the ``npx`` command.

- To add a section, write its opening and closing comments with nothing
  between them (for a capture: the ``bash`` block, then ``<!-- wire -->`` and
  ``<!-- /wire -->``) and run ``python tests/test_docs_generated.py``.
- What differs from run to run in a capture (a task id, a time stamp, a
  sealed ``requestState``, a timing in ms) is masked by `normalize` before
  two versions are compared; everything else must be equal.
- Only bench/README.md is not copied (``<!-- generated: benchmarks -->`` stays
  empty and the site build fills it in, docs/hooks/site.py): a figure lives in
  one place, and a code host reader follows the page's link to it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

WIRE = re.compile(
    r"^```bash\n(?P<cmd>(?:[^`]|`(?!``))*?)^```\n<!-- wire -->\n(?P<body>.*?)^<!-- /wire -->\n", re.S | re.M
)
INCLUDE = re.compile(r"^<!-- include: (?P<path>\S+) -->\n(?P<body>.*?)^<!-- /include -->\n", re.S | re.M)
GENERATED = re.compile(r"^<!-- generated: (?P<name>[\w-]+) -->\n(?P<body>.*?)^<!-- /generated -->\n", re.S | re.M)
LANGUAGES = {".py": "python", ".json": "json", ".toml": "toml", ".sh": "bash", ".conf": "nginx", ".yml": "yaml"}
#: Sections filled in by the site build only (docs/hooks/site.py), never committed.
SITE_ONLY = ("benchmarks",)

#: What changes between two runs of the same capture, and what it reads as once masked.
VOLATILE = (
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?"), "<time>"),
    (re.compile(r'"requestState": "[^"]*"'), '"requestState": "<sealed>"'),
    (re.compile(r"\+ *\d+(?:\.\d+)? ms"), "+ <ms>"),
)


class SectionError(Exception):
    """A section cannot be made: a missing file, an unknown generator, a command that failed."""


def normalize(text: str) -> str:
    """``text`` with what differs between two runs of a capture masked (`VOLATILE`)."""
    for pattern, mask in VOLATILE:
        text = pattern.sub(mask, text)
    return text


def pages() -> list[Path]:
    """Every Markdown page of docs/ (the hooks are not pages)."""
    return sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.relative_to(DOCS).parts)


def _fence(text: str, info: str) -> str:
    """``text`` as a fenced block whose fence is longer than any run of backticks in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}\n"


def env() -> dict[str, str]:
    """The environment commands run in: this tree's wiremcp, this Python's ``wiremcp`` first on PATH, fixed width."""
    environ = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", "PYTHONPATH": str(ROOT / "src")}
    environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + environ.get("PATH", "")
    return environ


#: A third-party server as a reader runs it from the npm registry (`local` maps it to its peer).
NPX = re.compile(r"\bnpx -y (?P<spec>(?:@[\w.-]+/)?[\w.-]+@[\w.-]+)")


def _peers() -> Any:
    """tests/peers.py, where the peers are pinned and built."""
    spec = importlib.util.spec_from_file_location("wiremcp_docs_peers", ROOT / "tests" / "peers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def local(command: str) -> tuple[str, dict[str, str]]:
    """``command`` with each ``npx -y PACKAGE@VERSION`` made the executable of the peer pinned to it
    (tests/peers.py, built on first use), and each such path mapped back to the ``npx`` words it stands for."""
    back: dict[str, str] = {}

    def peer(match: re.Match[str]) -> str:
        spec = match["spec"]
        peers = _peers()
        names = [name for name, pins in peers.NODE_PEERS.items() if pins == (spec,)]
        if not names:
            raise SectionError(f"a capture runs `npx -y {spec}`, which no peer of tests/peers.py (NODE_PEERS) pins")
        package = spec.rpartition("@")[0]
        modules = peers.node_peer(names[0]) / "node_modules"
        bins = json.loads((modules / package / "package.json").read_text()).get("bin")
        default = package.rpartition("/")[2]  # npx runs the bin named after the package, or its only one
        name = next(iter(bins)) if isinstance(bins, dict) and len(bins) == 1 else default
        path = str(modules / ".bin" / name)
        back[path] = match[0]
        return shlex.quote(path)

    return NPX.sub(peer, command), back


def capture(command: str) -> str:
    """The section under a ``<!-- wire -->`` block: what ``command`` prints, as a text block."""
    run, back = local(command)
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", run],
        cwd=ROOT, env=env(), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    output = (done.stdout + done.stderr).rstrip("\n")
    for path, words in back.items():
        output = output.replace(path, words)
    if done.returncode != 0:
        raise SectionError(f"the capture `{command.strip()}` exited with {done.returncode}:\n{output}")
    return _fence(output, "text")


def include(path: str) -> str:
    """The section of ``<!-- include: PATH -->``: the file, as a code block titled with its path."""
    file = ROOT / path
    if not file.is_file():
        raise SectionError(f"include of {path}, which is not in the repository")
    language = LANGUAGES.get(file.suffix, "text")
    return _fence(file.read_text().rstrip("\n"), f'{language} title="{path}"')


def generate(name: str) -> str:
    """The Markdown of one generated section (``<!-- generated: NAME -->``)."""
    makers: dict[str, Callable[[], str]] = {
        "cli": cli, "conformance": conformance, "settings": settings, "errors": errors, "benchmarks": lambda: "",
        "check-rules": check_rules, "check-hosts": check_hosts,
    }
    if name not in makers:
        raise SectionError(f"no generator named {name}")
    return makers[name]()


def rewrite(text: str) -> str:
    """``text`` with every section made anew (a page with no section comes back unchanged)."""
    commands = [m["cmd"] for m in WIRE.finditer(text)]
    with ThreadPoolExecutor(4) as pool:
        outputs = dict(zip(commands, pool.map(capture, commands)))
    text = WIRE.sub(lambda m: f"```bash\n{m['cmd']}```\n<!-- wire -->\n{outputs[m['cmd']]}<!-- /wire -->\n", text)
    text = INCLUDE.sub(lambda m: f"<!-- include: {m['path']} -->\n{include(m['path'])}<!-- /include -->\n", text)
    return GENERATED.sub(lambda m: f"<!-- generated: {m['name']} -->\n{generate(m['name'])}<!-- /generated -->\n", text)


# -- the generators --------------------------------------------------------------------------------


def check_rules() -> str:
    """The rules of ``wiremcp check``: id, severity, title and source, by group (from the registry of rules)."""
    from wiremcp.cli._check import _runner  # noqa: F401  (declares the wire rules)
    from wiremcp.cli._check._extra import load_rules
    from wiremcp.cli._check._findings import RULES

    load_rules()
    lines = ["| rule | severity | what it checks | where the rule is |", "|---|---|---|---|"]
    order = ("wire", "schema", "host", "security", "check")
    for found in sorted(RULES.values(), key=lambda r: (order.index(r.group), r.id)):
        title, source = (text.replace("|", "\\|") for text in (found.title, found.source))
        lines.append(f"| `{found.id}` | {found.severity} | {title} | {source} |")
    return "\n".join(lines) + "\n"


def check_hosts() -> str:
    """The host table of ``wiremcp check`` (cli/_check/_hosts.py): what each host speaks and takes, and its proof."""
    from wiremcp.cli._check._hosts import ERA_RULES, FEATURE_RULES, HOSTS, PREFIX_LENGTH, PRIMITIVES, TRANSPORT_RULES

    def cell(value: object) -> str:
        if value is None:
            return "not known"
        if value is True:
            return "yes"
        return ", ".join(value) if isinstance(value, tuple) else f"`{value}`"

    fields = ("modern", "legacy", "transports", "tool_prefix", "features")
    lines = ["| host | speaks 2026-07-28 | initialize asks for | transports | tool names | features |", "|---|---|---|---|---|---|"]
    labels = dict(zip(fields, ("2026-07-28", "initialize", "transports", "tool names", "features")))
    proofs = []
    for host in HOSTS:
        lines.append(f"| {host.name} | " + " | ".join(cell(getattr(host, f).value) for f in fields) + " |")
        by_proof: dict[str, list[str]] = {}
        for f in fields:
            by_proof.setdefault(getattr(host, f).proof, []).append(labels[f])
        proofs.append(f"- {host.name}" + (f" (not tested here: {host.untested}):" if host.untested else ":"))
        proofs += [f"  - {', '.join(what)}: {proof}" for proof, what in by_proof.items()]
    rules = [
        "- 2026-07-28, initialize: " + ", ".join(f"`{r.id}`" for r in ERA_RULES.values()),
        "- transports: " + ", ".join(f"`{r.id}`" for r in TRANSPORT_RULES.values()) + " (notes)",
        f"- tool names: `{PREFIX_LENGTH.id}`",
        "- features: " + ", ".join(f"`{r.id}`" for r in FEATURE_RULES.values())
        + f" (the {', '.join(PRIMITIVES)} the server offers; the others, used while a tool runs, make no rule)",
    ]
    return ("\n".join(lines) + "\n\nThe rule that holds a server to each column:\n\n" + "\n".join(rules)
            + "\n\nWhat proves each cell:\n\n" + "\n".join(proofs) + "\n")


def cli() -> str:
    """Every command's ``--help``, as ``wiremcp COMMAND --help`` prints it (the commands read from the parser)."""
    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        from cli_reference import commands
    finally:
        sys.path.pop(0)

    def helps(words: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "wiremcp", *words, "--help"], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=60
        )

    every = commands()
    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(helps, every))
    parts = []
    for words, done in zip(every, runs):
        if done.returncode != 0:
            raise SectionError(f"`wiremcp {' '.join(words)} --help` exited with {done.returncode}: {done.stderr}")
        title = " ".join(["wiremcp", *words])
        parts.append(f"## `{title}`\n\n{_fence(done.stdout.rstrip(), 'text')}")
    return "\n".join(parts)


CONFORMANCE_RECORD = DOCS / "reference" / "conformance.json"


def conformance() -> str:
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


def benchmarks() -> str:
    """bench/README.md, the method and the latest table, without its title (the site build only)."""
    return re.sub(r"^# .*\n", "", (ROOT / "bench" / "README.md").read_text(), count=1)


def settings() -> str:
    """The table of wiremcp/server/_settings.py's docstring, checked against its ``ENV`` mapping."""
    from wiremcp.server import _settings as module

    doc = (module.__doc__ or "").splitlines()
    border = next(line for line in doc if line.startswith("===="))
    spans = [(m.start(), m.end()) for m in re.finditer(r"=+", border)]
    spans[-1] = (spans[-1][0], 10_000)
    rows = [line for line in doc if line.startswith("``")]
    lines = ["| `Server(...)` argument | environment variable | default | what it sets |", "| --- | --- | --- | --- |"]
    seen = set()
    for row in rows:
        cells = [row[start:end].strip() for start, end in spans]
        argument, variable = cells[0].strip("`"), cells[1].strip("`")
        if module.ENV.get(argument) != variable:
            raise SectionError(f"reference/settings.md: {argument} / {variable} is not in wiremcp.server._settings.ENV")
        seen.add(argument)
        lines.append("| " + " | ".join(cell.replace("``", "`") for cell in cells) + " |")
    missing = sorted(set(module.ENV) - seen)
    if missing:
        raise SectionError(f"reference/settings.md: the settings {missing} are missing from the table of _settings.py")
    return "\n".join(lines) + "\n"


def errors() -> str:
    """Every error code wiremcp sends, with its name and the HTTP status it travels with."""
    from wiremcp import jsonrpc
    from wiremcp.protocol import errors as protocol_errors
    from wiremcp.server import transport
    from wiremcp.transports.http import STATUS_BY_CODE

    codes = [
        (jsonrpc.PARSE_ERROR, "PARSE_ERROR", "`wiremcp.jsonrpc`", "the bytes are not one JSON text"),
        (jsonrpc.INVALID_REQUEST, "INVALID_REQUEST", "`wiremcp.jsonrpc`", "JSON, but not a valid JSON-RPC 2.0 request (or a batch, or too big, or too deep)"),
        (jsonrpc.METHOD_NOT_FOUND, "METHOD_NOT_FOUND", "`wiremcp.jsonrpc`", "no such method in this revision"),
        (jsonrpc.INVALID_PARAMS, "INVALID_PARAMS", "`wiremcp.jsonrpc`", "`params` or `_meta` malformed; unknown tool, prompt or resource; bad cursor; refused `requestState` or answer"),
        (jsonrpc.INTERNAL_ERROR, "INTERNAL_ERROR", "`wiremcp.jsonrpc`", "a resource, prompt or completer failed (tools answer `isError: true` instead)"),
        (transport.SERVER_BUSY, "SERVER_BUSY", "`wiremcp.server.transport`", "a cap of the server is reached; try again later (HTTP 429 when this client holds its share)"),
        (protocol_errors.HEADER_MISMATCH, "HEADER_MISMATCH", "`wiremcp.protocol`", "an `Mcp-*` HTTP header disagrees with the body, or is missing"),
        (protocol_errors.MISSING_REQUIRED_CLIENT_CAPABILITY, "MISSING_REQUIRED_CLIENT_CAPABILITY", "`wiremcp.protocol`", "the request needs a client capability it did not declare; `data.requiredCapabilities`"),
        (protocol_errors.UNSUPPORTED_PROTOCOL_VERSION, "UNSUPPORTED_PROTOCOL_VERSION", "`wiremcp.protocol`", "the revision named is not served; `data.supported`, `data.requested`"),
    ]
    lines = ["| code | name | defined in | HTTP status | when |", "| ---: | --- | --- | ---: | --- |"]
    for code, name, module, when in codes:
        lines.append(f"| {code} | `{name}` | {module} | {STATUS_BY_CODE.get(code, 200)} | {when} |")
    return "\n".join(lines) + "\n"
