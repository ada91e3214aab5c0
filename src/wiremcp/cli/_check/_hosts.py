"""Host compatibility rules of ``wiremcp check`` (``host-``): what Claude Code, Claude Desktop, VS Code and Cursor need.

Rules it keeps:

* `HOSTS` is the one table. Per host: whether it speaks 2026-07-28
  (``server/discover``), the versions its ``initialize`` asks for and so
  takes back, the transports its configuration reaches a server over, how
  it names a server's tools to the model, and the features it was seen
  using. Every fact carries its proof (`Fact`): the test of this repository
  that shows it (``tests/...py::test_name``), or ``documented, not tested
  here`` with the vendor's page named. tests/check/test_hosts.py ties each
  fact to its proof (the test exists; an untested fact names a document).
* A fact not known is not assumed in the server's favour: a host not shown
  to speak 2026-07-28 needs a server that answers ``initialize``.
* The checks are pure (`check_hosts`): given what the run saw (the eras
  spoken, the ``initialize`` result, what the tour listed, the target's
  transport), each host's needs give findings. A host that cannot load or
  use a server is a matter for its user, not a breach of the spec: the era,
  tool-name and features findings are warnings, the transport one a note.
* The rules are declared from the table, one per fact a run can hold the
  server to: ``host-<host>-era`` (modern, legacy), ``host-<host>-transport``
  (transports: the target's transport is one the host's configuration
  takes), ``host-<host>-features`` (features: the server offers some of the
  tools, resources and prompts the host uses), and
  ``host-tool-name-prefix-length`` for the hosts that prefix tool names
  (tool_prefix). The features a host uses while a tool runs (elicitation,
  sampling, progress) are in the table but make no rule: a run sees them
  only in the tools it calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._findings import Finding, Rule, rule

__all__ = ["Fact", "Host", "HOSTS", "check_hosts", "ERA_RULES", "TRANSPORT_RULES", "FEATURE_RULES", "PREFIX_LENGTH", "PRIMITIVES"]

_CC = "tests/interop/test_claude_code.py::"
_INSTALL = "tests/cli/test_install.py::test_urls_where_the_host_takes_them"
#: the longest tool name the model APIs take (Anthropic Messages API: ^[a-zA-Z0-9_-]{1,64}$)
NAME_LIMIT = 64


@dataclass(frozen=True)
class Fact:
    """One thing a host does, and its proof: ``tested`` (``path::test``, ``; ``-separated), else ``documented`` (a vendor page)."""

    value: Any
    tested: str = ""
    documented: str = ""

    @property
    def proof(self) -> str:
        if self.tested:
            return f"{self.tested} ({self.documented})" if self.documented else self.tested
        return f"documented, not tested here: {self.documented}"


@dataclass(frozen=True)
class Host:
    """A host: its id (``claude-code``), its name, and the facts a server must fit."""

    id: str
    name: str
    modern: Fact  # bool: it speaks 2026-07-28 (None: not known, taken as no)
    legacy: Fact  # tuple of the versions its initialize asks for
    transports: Fact  # tuple: "stdio", "http" (how its configuration names a server)
    tool_prefix: Fact  # "mcp__{server}__{tool}", or None when it sends tool names as they are (or it is not known)
    features: Fact  # tuple of the features it was seen using with a server
    untested: str = ""  # why its facts cannot be tested on this machine ("" for a host run by the tests)


_LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26")
_MCP_CLIENTS = "modelcontextprotocol.io/clients (feature support matrix)"
#: an untested host's initialize: the versions current MCP SDK clients ask for, assumed
_ASSUMED = "the versions current MCP SDK clients ask for, assumed; "

HOSTS: tuple[Host, ...] = (
    Host(
        "claude-code", "Claude Code",
        modern=Fact(True, _CC + "test_tap_around_the_server_claude_code_runs_finds_no_violation"),
        legacy=Fact(_LEGACY, _CC + "test_tap_around_the_server_claude_code_runs_finds_no_violation",
                    "the versions: the list in the pinned release's bundle (@anthropic-ai/claude-code 2.1.328)"),
        transports=Fact(("stdio", "http"), _CC + "test_mcp_list_reports_every_server_connected"),
        tool_prefix=Fact("mcp__{server}__{tool}", _CC + "test_print_mode_calls_a_tool_and_the_result_reaches_the_model"),
        features=Fact(("tools", "tool errors", "elicitation", "progress"), "; ".join(_CC + name for name in (
            "test_print_mode_calls_a_tool_and_the_result_reaches_the_model", "test_a_tool_error_reaches_the_model_as_an_error",
            "test_elicitation_reaches_the_host_and_its_answer_the_tool", "test_a_tool_that_takes_a_while_reports_progress_to_the_host",
        ))),
    ),
    Host(
        "claude-desktop", "Claude Desktop",
        modern=Fact(None, documented=_MCP_CLIENTS),
        legacy=Fact(_LEGACY, documented=_ASSUMED + "modelcontextprotocol.io, 'Connect to local MCP servers' (Claude Desktop)"),
        transports=Fact(("stdio",), documented="support.claude.com, 'Getting started with custom connectors using remote MCP' "
                        "(a URL is added under Settings > Connectors, not in claude_desktop_config.json); " + _INSTALL),
        tool_prefix=Fact(None, documented=_MCP_CLIENTS),
        features=Fact(("tools", "resources", "prompts"), documented=_MCP_CLIENTS),
        untested="Claude Desktop has no Linux release, and the tests run on Linux",
    ),
    Host(
        "vscode", "VS Code",
        modern=Fact(None, documented=_MCP_CLIENTS),
        legacy=Fact(_LEGACY, documented=_ASSUMED + "code.visualstudio.com, 'Use MCP servers in VS Code'"),
        transports=Fact(("stdio", "http"), documented="code.visualstudio.com, 'MCP configuration reference'; " + _INSTALL),
        tool_prefix=Fact(None, documented="code.visualstudio.com, 'Use MCP servers in VS Code'"),
        features=Fact(("tools", "resources", "prompts", "elicitation", "sampling"), documented=_MCP_CLIENTS),
        untested="no VS Code here: its MCP client runs inside the editor's chat, which needs a signed-in model provider",
    ),
    Host(
        "cursor", "Cursor",
        modern=Fact(None, documented=_MCP_CLIENTS),
        legacy=Fact(_LEGACY, documented=_ASSUMED + "cursor.com/docs, 'Model Context Protocol (MCP)'"),
        transports=Fact(("stdio", "http"), documented="cursor.com/docs, 'Model Context Protocol (MCP)'; " + _INSTALL),
        tool_prefix=Fact(None, documented="cursor.com/docs, 'Model Context Protocol (MCP)'"),
        features=Fact(("tools", "prompts", "resources", "elicitation"), documented=_MCP_CLIENTS),
        untested="no Cursor here: a proprietary editor whose agent needs a signed-in account",
    ),
)


def _source(host: Host, *facts: Fact) -> str:
    return f"the host table (cli/_check/_hosts.py), {host.name}: " + "; ".join(dict.fromkeys(f.proof for f in facts))


ERA_RULES: dict[str, Rule] = {
    host.id: rule(
        f"host-{host.id}-era", "host", "warning", f"The server speaks an era {host.name} speaks",
        (f"{host.name} " + ("sends server/discover (2026-07-28) and falls back to initialize; " if host.modern.value
                            else "is not known to speak 2026-07-28: it opens with initialize; ")
         + f"its initialize asks for {', '.join(host.legacy.value)} and takes back only a version it knows."),
        _source(host, host.modern, host.legacy),
    )
    for host in HOSTS
}
TRANSPORT_RULES: dict[str, Rule] = {
    host.id: rule(
        f"host-{host.id}-transport", "host", "info", f"{host.name}'s configuration takes the target's transport",
        f"{host.name}'s configuration names a server over {' or '.join(host.transports.value)}.",
        _source(host, host.transports),
    )
    for host in HOSTS
}
#: the primitives a server offers (tools/list, resources/list and resources/templates/list, prompts/list)
PRIMITIVES = ("tools", "resources", "prompts")
FEATURE_RULES: dict[str, Rule] = {
    host.id: rule(
        f"host-{host.id}-features", "host", "warning", f"The server offers something {host.name} uses",
        f"{host.name} uses a server's {', '.join(p for p in PRIMITIVES if p in host.features.value)}.",
        _source(host, host.features),
    )
    for host in HOSTS
}
PREFIX_LENGTH = rule(
    "host-tool-name-prefix-length", "host", "warning", "A tool's name, with the prefix a host gives it, fits in 64",
    "Anthropic Messages API, Tool.name: \"Must match the regex ^[a-zA-Z0-9_-]{1,64}$\"; "
    + "; ".join(f"{h.name} offers a tool to the model as {h.tool_prefix.value}" for h in HOSTS if h.tool_prefix.value),
    "; ".join(f"{h.name}: {h.tool_prefix.proof}" for h in HOSTS if h.tool_prefix.value),
)


def _era_problem(host: Host, spoken: list[str], version: Any) -> str | None:
    if host.modern.value and "modern" in spoken:
        return None
    if "legacy" in spoken and version in host.legacy.value:
        return None
    speaks = "2026-07-28 or " if host.modern.value else ""
    if "legacy" in spoken:
        return f"initialize asked for 2025-11-25 got {version!r}; {host.name} speaks {speaks}{', '.join(host.legacy.value)}"
    return (f"the server does not answer initialize (it speaks {', '.join(spoken) or 'no era'}); "
            f"{host.name} " + ("speaks 2026-07-28 too" if host.modern.value else "is not known to speak 2026-07-28"))


def offered(listed: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The primitives of which the tour listed at least one (by the members of `_eras.tour`'s results)."""
    members = {"tools": ("tools",), "resources": ("resources", "resourceTemplates"), "prompts": ("prompts",)}
    return [p for p in PRIMITIVES if any(listed.get(member) for member in members[p])]


def check_hosts(
    *, spoken: list[str], initialize: dict[str, Any] | None, tools: list[dict[str, Any]], server: str | None = None,
    transport: str | None = None, listed: dict[str, list[dict[str, Any]]] | None = None,
) -> list[Finding]:
    """Each host's needs against what the run saw: the ``spoken`` eras, the ``initialize`` result, the ``tools`` listed.

    ``server``: the server's name in the hosts' configuration (``--server-name``, else what ``wiremcp install``
    names the target); None: its ``serverInfo`` name. ``transport`` (``stdio``, ``http``): the target's, judged
    when given; ``listed``: what the tour listed (`_eras.tour`), the features judged when given."""
    version = (initialize or {}).get("protocolVersion")
    info = (initialize or {}).get("serverInfo")
    name = info.get("name") if type(info) is dict else None
    where = "the server's name"
    if server is None:
        server, where = (name, "the server's name from serverInfo") if type(name) is str else ("server", "a server named 'server'")
    findings: list[Finding] = []
    for host in HOSTS:
        problem = _era_problem(host, spoken, version)
        if problem is not None:
            findings.append(Finding(ERA_RULES[host.id], problem, host.name))
        if host.tool_prefix.value:
            findings += _prefix_findings(host, server, where, tools)
        if transport is not None and transport not in host.transports.value:
            message = (f"the target is reached over {transport}; {host.name}'s configuration takes "
                       f"{' or '.join(host.transports.value)} ({host.transports.proof})")
            findings.append(Finding(TRANSPORT_RULES[host.id], message, host.name))
        if listed is not None:
            findings += _feature_findings(host, offered(listed))
    return findings


def _feature_findings(host: Host, offers: list[str]) -> list[Finding]:
    uses = [p for p in PRIMITIVES if p in host.features.value]
    if set(offers) & set(uses):
        return []
    what = ", ".join(offers) if offers else "no tool, resource or prompt"
    message = (f"the server offers {what}; {host.name} uses a server's {', '.join(uses)} "
               f"(the host table: {host.features.proof})")
    return [Finding(FEATURE_RULES[host.id], message, host.name)]


def _prefix_findings(host: Host, server: str, where: str, tools: list[dict[str, Any]]) -> list[Finding]:
    found = []
    for tool in tools:
        name = tool.get("name")
        if type(name) is not str or len(name) > NAME_LIMIT:
            continue  # a name too long on its own is schema-tool-name-hosts's
        offered = host.tool_prefix.value.format(server=server, tool=name)
        if len(offered) > NAME_LIMIT:
            message = (f"{host.name} offers it as {offered} ({len(offered)} characters, over {NAME_LIMIT}), with {where} "
                       f"{server!r} (--server-name: the name in the host's configuration)")
            found.append(Finding(PREFIX_LENGTH, message, f"tool {name}"))
    return found
