"""``wiremcp install HOST TARGET`` and ``wiremcp uninstall HOST NAME``: a server in a host's configuration.

    wiremcp install claude-desktop examples/echo.py
    wiremcp install claude-code my_pkg.server:app --scope project --env API_KEY=...
    wiremcp install vscode https://example.com/mcp --name example
    wiremcp install mcp-json examples/echo.py          # print the JSON, for any other host
    wiremcp uninstall cursor echo

Rules it keeps (docs/hosts.md):

* Each host's real file at its real place for ``sys.platform`` (`HOSTS`,
  `config_path`); VS Code keys its servers by ``servers``, the others by
  ``mcpServers``. Every other key and server in the file is kept, in order.
* The command written starts the server from any working directory: the
  absolute path of the interpreter wiremcp runs in (or ``--python``), ``-m
  wiremcp run`` and the absolute path of the file; for ``module:attr`` the
  module's directory goes on ``PYTHONPATH`` when it is not installed.
  ``--with PACKAGE`` runs the server through ``uv run --with`` (uv must be on
  PATH; nothing is installed at install time).
* Before writing, it prints the exact command and environment names the host
  will run, and asks on a terminal; ``--yes`` confirms for scripts, and
  without a terminal and without ``--yes`` it refuses (best practices,
  "Local MCP Server Compromise": show the command before it is added).
* Atomic, and never through a link it was not told to follow
  (`_safe_files`): a temporary file in the same folder, fsync, then rename,
  keeping the file's mode without execute bits (0600 for a new file); the
  previous content is kept as ``FILE.bak`` (one backup), a new 0600 file
  created with ``O_EXCL | O_NOFOLLOW`` after a link at that name is removed.
  A configuration file or folder that is a symbolic link is shown and
  written through (to the file it resolves to; the link stays) only when
  the user answers yes, or with ``--follow-symlinks``: ``--yes`` alone
  refuses it (a repository may ship such a link).
  The file is rewritten as JSON with the indentation it had; ``uninstall``
  writes back the backup's bytes when they hold exactly what is left, so an
  install followed by an uninstall gives back the same bytes.
* Idempotent: when the same entry is already there, nothing is written. A
  different server under the same name is refused unless ``--force``.
* A file that is not a JSON object (a JSONC file with comments, say) is
  never rewritten: the error says so.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import urlsplit

from ._output import INTERRUPTED, OK, fail
from ._safe_files import links_to_confirm, read_no_follow, replace_file
from ._target import parse_target

__all__ = ["HOSTS", "Host", "InstallError", "add_arguments", "claude_mcp_add", "handle", "config_path", "server_entry"]


class InstallError(Exception):
    """A problem the user must fix; the message is printed as is, exit status 2 (1 for conflicts)."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


Entry = dict[str, Any]


@dataclass(frozen=True)
class Host:
    name: str
    title: str
    key: str  # the servers object's key in the file
    scopes: tuple[str, ...]  # the first is the default
    stdio: Callable[[str, list[str], dict[str, str]], Entry]
    url: Callable[[str], Entry] | None
    cli: str | None = None  # the host's own command for this, if it has one


def _untyped(command: str, args: list[str], env: dict[str, str]) -> Entry:
    """A stdio entry without a ``type`` key (the hosts that take the command alone)."""
    entry: Entry = {"command": command, "args": args}
    if env:
        entry["env"] = env
    return entry


def _typed(command: str, args: list[str], env: dict[str, str]) -> Entry:
    entry: Entry = {"type": "stdio", "command": command, "args": args}
    if env:
        entry["env"] = env
    return entry


def _claude_code(command: str, args: list[str], env: dict[str, str]) -> Entry:
    return {"type": "stdio", "command": command, "args": args, "env": env}  # as `claude mcp add` writes it


HOSTS: dict[str, Host] = {
    "claude-desktop": Host("claude-desktop", "Claude Desktop", "mcpServers", ("user",), _untyped, None),
    "claude-code": Host(
        "claude-code", "Claude Code", "mcpServers", ("user", "project"), _claude_code,
        lambda url: {"type": "http", "url": url}, "claude mcp add --scope user NAME -- COMMAND ARGS...",
    ),
    "cursor": Host("cursor", "Cursor", "mcpServers", ("user", "project"), _untyped, lambda url: {"url": url}),
    "vscode": Host(
        "vscode", "VS Code", "servers", ("project", "user"), _typed,
        lambda url: {"type": "http", "url": url}, "code --add-mcp '{\"name\":...,\"command\":...}'",
    ),
    "windsurf": Host("windsurf", "Windsurf", "mcpServers", ("user",), _untyped, lambda url: {"serverUrl": url}),
    "mcp-json": Host("mcp-json", "any host (printed)", "mcpServers", ("user",), _untyped, lambda url: {"url": url}),
}


def _appdata(home: Path, environ: Mapping[str, str]) -> Path:
    return Path(environ["APPDATA"]) if environ.get("APPDATA") else home / "AppData" / "Roaming"


def _xdg_config(home: Path, environ: Mapping[str, str]) -> Path:
    value = environ.get("XDG_CONFIG_HOME")
    return Path(value) if value and os.path.isabs(value) else home / ".config"


def config_path(
    host: str,
    scope: str,
    *,
    platform: str | None = None,
    home: Path | None = None,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """The configuration file of ``host`` at ``scope`` on ``platform`` (default: this machine).

    ============== ========= ==================================================================
    host           scope     file (Linux; macOS and Windows below)
    ============== ========= ==================================================================
    claude-desktop user      $XDG_CONFIG_HOME/Claude/claude_desktop_config.json
                             macOS ~/Library/Application Support/Claude/…, Windows %APPDATA%\\Claude\\…
    claude-code    user      ~/.claude.json (every platform)
    claude-code    project   ./.mcp.json
    cursor         user      ~/.cursor/mcp.json (every platform)
    cursor         project   ./.cursor/mcp.json
    vscode         project   ./.vscode/mcp.json
    vscode         user      $XDG_CONFIG_HOME/Code/User/mcp.json
                             macOS ~/Library/Application Support/Code/User/…, Windows %APPDATA%\\Code\\User\\…
    windsurf       user      ~/.codeium/windsurf/mcp_config.json (every platform)
    ============== ========= ==================================================================
    """
    platform = sys.platform if platform is None else platform
    home = Path.home() if home is None else home
    cwd = Path.cwd() if cwd is None else cwd
    environ = os.environ if environ is None else environ
    if scope not in HOSTS[host].scopes:
        raise InstallError(f"{HOSTS[host].title} has no {scope!r} scope (it has: {', '.join(HOSTS[host].scopes)})")

    def app_config(*parts: str) -> Path:
        if platform == "darwin":
            return home.joinpath("Library", "Application Support", *parts)
        if platform == "win32":
            return _appdata(home, environ).joinpath(*parts)
        return _xdg_config(home, environ).joinpath(*parts)

    if host == "claude-desktop":
        return app_config("Claude", "claude_desktop_config.json")
    if host == "claude-code":
        return home / ".claude.json" if scope == "user" else cwd / ".mcp.json"
    if host == "cursor":
        return home / ".cursor" / "mcp.json" if scope == "user" else cwd / ".cursor" / "mcp.json"
    if host == "vscode":
        return app_config("Code", "User", "mcp.json") if scope == "user" else cwd / ".vscode" / "mcp.json"
    if host == "windsurf":
        return home / ".codeium" / "windsurf" / "mcp_config.json"
    raise InstallError(f"{host} has no configuration file: its JSON is printed")


# -- the command ----------------------------------------------------------------------------------


_PROBE = """
import importlib.util, json, os, sys
cwd, module = sys.argv[1], sys.argv[2]
out = {}
try:
    import wiremcp
    out["wiremcp"] = wiremcp.__file__
except ImportError:
    out["wiremcp"] = None
if module:
    sys.path.insert(0, cwd)
    try:
        spec = importlib.util.find_spec(module.split(".")[0])
    except (ImportError, ValueError):
        spec = None
    out["origin"] = None if spec is None else (spec.origin or (list(spec.submodule_search_locations or []) or [None])[0])
print(json.dumps(out))
"""


def _probe(python: str, cwd: Path, module: str) -> dict[str, Any]:
    try:
        done = subprocess.run([python, "-c", _PROBE, str(cwd), module], capture_output=True, text=True, timeout=60)
    except OSError as exc:
        raise InstallError(f"cannot run the interpreter {python}: {exc.strerror}") from None
    if done.returncode != 0:
        raise InstallError(f"the interpreter {python} failed: {done.stderr.strip()[-500:]}")
    probe: dict[str, Any] = json.loads(done.stdout)
    return probe


def server_entry(
    host: Host,
    target: str,
    *,
    env: dict[str, str],
    python: str | None = None,
    with_packages: list[str] | None = None,
    cwd: Path | None = None,
) -> tuple[Entry, list[str] | None]:
    """The host's entry for ``target``, and the argv it will run (None for a URL)."""
    cwd = Path.cwd() if cwd is None else cwd
    if target.startswith(("http://", "https://")):
        if host.url is None:
            raise InstallError(
                f"{host.title} takes only stdio commands in its configuration file; add a remote server "
                "in its Settings (Connectors), or run a local server"
            )
        if env or python or with_packages:
            raise InstallError("--env, --env-file, --python and --with are for local servers, not for a URL")
        return host.url(target), None
    interpreter = os.path.abspath(python) if python else os.path.abspath(sys.executable)
    parsed = parse_target(target)  # the rules every command follows (`_target`)
    spec, attr = parsed.spec, parsed.attr
    env = dict(env)
    is_file = parsed.kind == "file"
    if is_file:
        path = (cwd / spec).resolve() if not os.path.isabs(spec) else Path(spec)
        if not path.is_file():
            raise InstallError(f"no such file: {spec}")
        run_target = str(path) + (f":{attr}" if attr else "")
        probe = _probe(interpreter, cwd, "") if python else {"wiremcp": "(this one)"}
    else:
        probe = _probe(interpreter, cwd, spec)
        origin = probe.get("origin")
        if origin is None:
            raise InstallError(f"cannot find the module {spec!r} (from {cwd}, with {interpreter})")
        if Path(origin).resolve().is_relative_to(cwd.resolve()) and "PYTHONPATH" not in env:
            env["PYTHONPATH"] = str(cwd.resolve())  # found only because of the current folder
        run_target = target
    if probe.get("wiremcp") is None:
        raise InstallError(f"wiremcp is not installed in {interpreter}: pip install wiremcp there, or leave out --python")
    argv = [interpreter, "-m", "wiremcp", "run", run_target]
    if with_packages:
        uv = shutil.which("uv")
        if uv is None:
            raise InstallError(
                "--with needs uv (https://docs.astral.sh/uv/) on PATH: the server is then started with "
                f"'uv run --with PACKAGE' on top of {interpreter}. Install uv, or install the packages "
                f"into that environment yourself ({interpreter} -m pip install ...) and leave out --with"
            )
        argv = [os.path.abspath(uv), "run", "--no-project", "--python", interpreter]
        for package in with_packages:
            argv += ["--with", package]
        argv += ["python", "-m", "wiremcp", "run", run_target]
    return host.stdio(argv[0], argv[1:], env), argv


def default_name(target: str) -> str:
    if target.startswith(("http://", "https://")):
        return (urlsplit(target).hostname or "server").split(".")[0] or "server"
    spec = parse_target(target).spec
    base = os.path.basename(spec)
    if base.endswith(".py"):
        return base[:-3]
    return spec.split(".")[-1] if "." in spec and "/" not in spec else base


def read_env_file(path: str) -> dict[str, str]:
    """``KEY=VALUE`` lines; blank lines and ``#`` comments skipped, one pair of quotes removed."""
    try:
        text = Path(path).read_text("utf-8")
    except OSError as exc:
        raise InstallError(f"cannot read --env-file {path}: {exc.strerror}") from None
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[7:].lstrip()
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise InstallError(f"{path}:{number}: not KEY=VALUE: {line!r}")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[key.strip()] = value
    return out


# -- the file -------------------------------------------------------------------------------------


class ConfigFile:
    """A host's JSON file: read, edited in memory, written back atomically in its own indentation."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.original: bytes | None = None
        self.data: dict[str, Any] = {}
        self.indent: int | str = 2
        self.newline_at_end = True
        try:
            self.original = path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise InstallError(f"cannot read {path}: {exc.strerror}") from None
        if not self.original.strip():
            return
        try:
            data = json.loads(self.original)
        except (ValueError, UnicodeDecodeError) as exc:
            raise InstallError(
                f"{path} is not plain JSON ({exc}); wiremcp does not rewrite it (comments would be lost): "
                "edit it by hand or with the host's own command"
            ) from None
        if type(data) is not dict:
            raise InstallError(f"{path} does not hold a JSON object; not touching it")
        self.data = data
        self.indent = _indent_of(self.original)
        self.newline_at_end = self.original.endswith(b"\n")

    def servers(self, key: str) -> dict[str, Any]:
        servers = self.data.get(key)
        if servers is None:
            return {}
        if type(servers) is not dict:
            raise InstallError(f"{self.path}: {key!r} is not a JSON object; not touching it")
        return servers

    def render(self) -> bytes:
        text = json.dumps(self.data, indent=self.indent, ensure_ascii=False)
        return (text + ("\n" if self.newline_at_end else "")).encode("utf-8")

    def write(self, content: bytes | None) -> None:
        """Replace the file atomically with ``content`` (None: remove it), keeping one private backup."""
        try:
            replace_file(self.path, content, backup=self.original)
        except OSError as exc:
            raise InstallError(f"cannot write {self.path}: {exc.strerror or exc}; nothing changed") from None


def _indent_of(text: bytes) -> int | str:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(b" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith(b"\t") else len(lead)
    return 2


# -- the commands ---------------------------------------------------------------------------------


def add_arguments(p: argparse.ArgumentParser, command: str) -> None:
    """The arguments of ``wiremcp install`` and ``wiremcp uninstall``."""
    hosts = ", ".join(HOSTS)
    if command == "uninstall":
        p.add_argument("host", choices=[h for h in HOSTS if h != "mcp-json"], metavar="HOST", help=hosts)
        p.add_argument("name", help="the server's name in the host")
        p.add_argument("--scope", choices=["user", "project"], help="user or project configuration, where the host has both")
        _confirm_options(p)
        return
    p.add_argument("host", choices=list(HOSTS), metavar="HOST", help=hosts)
    p.add_argument("target", help="a server file (path.py[:attr]), a module:attr, or an http(s) URL")
    p.add_argument("--name", help="the server's name in the host (default: from the target)")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="an environment variable, repeatable")
    p.add_argument("--env-file", metavar="FILE", help="KEY=VALUE lines to add to the environment (--env wins)")
    p.add_argument("--with", dest="with_packages", action="append", default=[], metavar="PACKAGE",
                   help="an extra package the server needs, repeatable: run through 'uv run --with' (needs uv)")
    p.add_argument("--python", metavar="PATH", help="the interpreter to run the server with (default: this one)")
    p.add_argument("--scope", choices=["user", "project"], help="user or project configuration, where the host has both")
    _confirm_options(p)
    p.add_argument("--force", action="store_true", help="replace a different server of the same name")


def _confirm_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dry-run", action="store_true", help="print the change and write nothing")
    p.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation (for scripts)")
    p.add_argument("--follow-symlinks", action="store_true",
                   help="write through a configuration file or folder that is a symbolic link (asked on a terminal; "
                   "refused with --yes alone)")


def handle(args: argparse.Namespace, tail: list[str] | None) -> int:
    """``wiremcp install`` or ``wiremcp uninstall``; the exit status (1 for a conflict, 2 for a problem)."""
    try:
        if args.command == "install":
            return _install(args)
        return _uninstall(args)
    except InstallError as exc:
        return fail(args.command, str(exc), exc.status)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return INTERRUPTED


def _confirm(question: str, args: argparse.Namespace) -> None:
    if args.yes:
        return
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise InstallError("not asking without a terminal: check the command above and run again with --yes")
    answer = input(f"{question} [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        raise InstallError("nothing written", status=1)


def _through_links(path: Path, args: argparse.Namespace) -> Path:
    """``path``, or the file it resolves to when it (or its folder) is a link the user agrees to follow."""
    links = links_to_confirm(path)
    if not links:
        return path
    for link, target in links:
        print(f"{link} is a symbolic link to {target}", file=sys.stderr)
    if not (args.dry_run or args.follow_symlinks):
        if args.yes or not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise InstallError(
                "not writing through a symbolic link without being asked: check where it points, then run "
                "again with --follow-symlinks (or answer on a terminal)"
            )
        answer = input("Write through the symbolic link? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            raise InstallError("nothing written", status=1)
    return Path(os.path.realpath(path))


def _show_command(argv: list[str] | None, entry: Entry) -> str:
    if argv is None:
        return f"  remote server: {entry.get('url') or entry.get('serverUrl')}"
    lines = [f"  command: {shlex.join(argv)}"]
    env = entry.get("env") or {}
    if env:
        lines.append("  environment: " + ", ".join(f"{k}={'…' if k != 'PYTHONPATH' else v}" for k, v in env.items()))
    return "\n".join(lines)


def claude_mcp_add(name: str, scope: str, entry: Entry) -> list[str]:
    """The ``claude mcp add`` command that adds ``entry`` as Claude Code's own CLI would write it."""
    if entry.get("type") == "http":
        return ["claude", "mcp", "add", "--transport", "http", "--scope", scope, name, str(entry["url"])]
    argv = ["claude", "mcp", "add", "--scope", scope]
    env = entry.get("env") or {}
    for key, value in env.items():
        argv += ["--env", f"{key}={value}"]
    command = [str(entry["command"]), *map(str, entry.get("args") or ())]
    # claude's --env takes every value up to the next option: a NAME after it would be read as
    # one more variable (anthropics/claude-code#62332), so with --env the name comes after --
    return [*argv, "--", name, *command] if env else [*argv, name, "--", *command]


def _install(args: argparse.Namespace) -> int:
    host = HOSTS[args.host]
    env = read_env_file(args.env_file) if args.env_file else {}
    for item in args.env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InstallError(f"--env wants KEY=VALUE, not {item!r}")
        env[key] = value
    entry, argv = server_entry(host, args.target, env=env, python=args.python, with_packages=args.with_packages)
    name = args.name or default_name(args.target)
    if not name:
        raise InstallError("give the server a name with --name")
    if host.name == "mcp-json":
        print(json.dumps({host.key: {name: entry}}, indent=2, ensure_ascii=False))
        return OK
    scope = args.scope or host.scopes[0]
    path = _through_links(config_path(host.name, scope), args)
    config = ConfigFile(path)
    servers = config.servers(host.key)
    current = servers.get(name)
    if current == entry:
        print(f"{host.title}: {name!r} is already installed in {path} as shown; nothing to change", file=sys.stderr)
        return OK
    if current is not None and not args.force:
        raise InstallError(
            f"{path} already has a different server named {name!r}:\n  {json.dumps(current)}\n"
            "choose another --name, or replace it with --force",
            status=1,
        )
    print(f"{host.title} ({scope}): {'replace' if current is not None else 'add'} {name!r} in {path}", file=sys.stderr)
    print(_show_command(argv, entry), file=sys.stderr)
    if host.key not in config.data:
        config.data[host.key] = {}
    config.data[host.key][name] = entry
    content = config.render()
    if args.dry_run:
        sys.stdout.write(content.decode("utf-8"))
        if host.name == "claude-code":  # the same change through Claude Code's own command (safe while it runs)
            print(f"or with Claude Code's own command:\n  {shlex.join(claude_mcp_add(name, scope, entry))}", file=sys.stderr)
        print("(dry run: nothing written)", file=sys.stderr)
        return OK
    _confirm("Add this server?", args)
    config.write(content)
    print(f"written; restart {host.title} to load it", file=sys.stderr)
    return OK


def _uninstall(args: argparse.Namespace) -> int:
    host = HOSTS[args.host]
    scope = args.scope or host.scopes[0]
    path = _through_links(config_path(host.name, scope), args)
    config = ConfigFile(path)
    servers = config.servers(host.key)
    if args.name not in servers:
        raise InstallError(f"{path} has no server named {args.name!r}", status=1)
    print(f"{host.title} ({scope}): remove {args.name!r} from {path}:\n  {json.dumps(servers[args.name])}", file=sys.stderr)
    del servers[args.name]
    created_by_us = not os.path.lexists(path.with_name(path.name + ".bak"))
    if not servers:
        del config.data[host.key]
    content: bytes | None = config.render()
    if not config.data and created_by_us:
        content = None  # the file had only this server and wiremcp created it: remove it
    elif (earlier := _backup_bytes(path)) is not None and _same_json(earlier, config.data):
        content = earlier  # what the install replaced, byte for byte (its own formatting)
    if args.dry_run:
        sys.stdout.write(content.decode("utf-8") if content is not None else "(the file would be removed)\n")
        print("(dry run: nothing written)", file=sys.stderr)
        return OK
    _confirm("Remove this server?", args)
    config.write(content)
    print("removed", file=sys.stderr)
    return OK


def _backup_bytes(path: Path) -> bytes | None:
    return read_no_follow(path.with_name(path.name + ".bak"))  # a link there is not our backup


def _same_json(text: bytes, data: dict[str, Any]) -> bool:
    try:
        return bool(json.loads(text) == data)
    except (ValueError, UnicodeDecodeError):
        return False
