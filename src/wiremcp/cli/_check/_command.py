"""``wiremcp check TARGET``: the command's arguments, its target, its reports and its exit status.

TARGET is a URL (Streamable HTTP), a Python server file or module (served
with ``wiremcp run`` over stdio, as the client commands take it), or after
``--`` any command that speaks MCP on stdio.

Exit status: 0 no finding of severity error (warnings fail only with
``--strict``); 1 findings that fail; 2 the target could not be reached, or
the options are wrong (an unknown rule in ``--only``/``--skip`` is named,
with the rules it is close to).
"""

from __future__ import annotations

import argparse
import difflib
import sys
from typing import Callable

import orjson

from .. import _output
from .._output import FAILED, OK, USAGE, OptionsError, fail

__all__ = ["add_arguments", "handle"]


def add_arguments(p: argparse.ArgumentParser, command: str) -> None:
    """The arguments of ``wiremcp check``."""
    p.add_argument("target", nargs="?", metavar="TARGET", help="a URL, a server .py file or module; or -- COMMAND ARGS... (stdio)")
    p.add_argument("--era", choices=["modern", "legacy", "both"], default="both", help="the eras to check, where the server speaks them (default: both)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--junit", metavar="FILE", help="also write the report as JUnit XML (a testcase per rule)")
    p.add_argument("--sarif", metavar="FILE", help="also write the report as SARIF 2.1.0")
    p.add_argument("--only", metavar="RULE[,RULE]", action="append", default=[], help="run only these rules")
    p.add_argument("--skip", metavar="RULE[,RULE]", action="append", default=[], help="do not run these rules")
    p.add_argument("--strict", action="store_true", help="warnings fail too (exit status 1)")
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS", help="how long each probe waits for an answer (default: 10)")
    p.add_argument("--auth", action="store_true", help="the HTTP server is protected: check its 401 challenge and metadata")
    p.add_argument(
        "--issuer", metavar="DIR",
        help="(implies --auth) the state directory of a `wiremcp auth dev` issuer the server trusts: its tokens test the "
        "server's token validation (audience, expiry, signature, alg none), and one good token carries the other probes",
    )
    p.add_argument("--auth-dev", action="store_true", help="as --issuer, with the issuer `wiremcp auth dev` keeps for this user")
    p.add_argument(
        "--call", metavar="TOOL[=JSON_ARGS]", action="append", default=[],
        help="also call TOOL (with these arguments) to check its result against its outputSchema; repeatable. "
        "Without it only tools annotated readOnlyHint: true are called, with no arguments",
    )
    p.add_argument(
        "--server-name", metavar="NAME",
        help="the server's name in the hosts' configuration, which prefixes its tools' names (mcp__NAME__TOOL); "
        "default: the name `wiremcp install` gives TARGET, else the server's serverInfo name",
    )
    p.add_argument("--pin", metavar="FILE", help="record each tool's definition in FILE; on later runs, report what changed")
    p.add_argument("-H", "--header", action="append", default=[], metavar="NAME:VALUE", help="extra HTTP header, repeatable")
    p.add_argument("--no-color", action="store_true", help="never colour the output")


def _rules(words: list[str], known: list[str]) -> set[str]:
    """The rule ids of ``--only``/``--skip`` (comma-separated, repeatable); an unknown one is an `OptionsError`."""
    out: set[str] = set()
    for word in words:
        for rid in filter(None, (w.strip() for w in word.split(","))):
            if rid not in known:
                close = difflib.get_close_matches(rid, known, n=3, cutoff=0.5)
                hint = f"; did you mean {', '.join(close)}?" if close else "; the rules are listed in docs/check.md"
                raise OptionsError(f"unknown rule {rid!r}{hint}")
            out.add(rid)
    return out


def _selector(args: argparse.Namespace, known: list[str]) -> Callable[[str], bool]:
    only, skip = _rules(args.only, known), _rules(args.skip, known)
    return lambda rid: (not only or rid in only) and rid not in skip


def _target(args: argparse.Namespace, tail: list[str] | None) -> object:
    from .._client import _headers, url_problem
    from .._target import is_server_target
    from ._context import Target

    if tail is not None and args.target is not None:
        raise OptionsError("give TARGET or -- COMMAND, not both")
    words = tail if tail is not None else ([args.target] if args.target else [])
    if not words:
        raise OptionsError("no TARGET: give a URL, a server .py file or module, or -- followed by a command")
    problem = url_problem(words)
    if problem is not None:
        raise _output.UsageError(problem)
    first, label = words[0], " ".join(words)
    for given, name in ((args.header, "--header"), (args.auth, "--auth"), (args.issuer, "--issuer"), (args.auth_dev, "--auth-dev")):
        if given and not first.startswith(("http://", "https://")):
            raise OptionsError(f"{name} goes with a URL target")
    if first.startswith(("http://", "https://")):
        return Target(url=first, headers=_headers(args.header), timeout=args.timeout, label=label)
    if len(words) == 1 and (first.endswith(".py") if tail is not None else is_server_target(first)):
        words = [sys.executable, "-m", "wiremcp", "run", first]
    return Target(argv=list(words), timeout=args.timeout, label=label)


def _install_name(target: str | None) -> str | None:
    """The name ``wiremcp install`` gives TARGET (a file, module or URL; None after ``--``)."""
    if target is None:
        return None
    from .._install import default_name

    try:
        return default_name(target)
    except (ValueError, OSError):
        return None


def _calls(words: list[str]) -> dict[str, dict[str, object]]:
    """The tools of ``--call TOOL[=JSON_ARGS]`` and their arguments; a malformed one is an `OptionsError`."""
    from ._calls import parse_call

    calls: dict[str, dict[str, object]] = {}
    for word in words:
        try:
            name, arguments = parse_call(word)
        except ValueError as exc:
            raise OptionsError(str(exc)) from None
        if name in calls:
            raise OptionsError(f"--call {name} is given twice")
        calls[name] = arguments
    return calls


def _issuer(args: argparse.Namespace) -> object:
    """The `DevIssuer` of ``--issuer DIR`` or ``--auth-dev``, or None; one that is not kept there is an `OptionsError`."""
    if args.issuer is None and not args.auth_dev:
        return None
    if args.issuer is not None and args.auth_dev:
        raise OptionsError("give --issuer DIR or --auth-dev, not both")
    try:
        from ...auth.dev import load, state_file
    except ImportError as exc:
        raise OptionsError(f"--issuer and --auth-dev need wiremcp[auth] ({exc})") from None
    try:
        issuer = load(args.issuer)
    except (OSError, ValueError, KeyError) as exc:
        raise OptionsError(f"cannot read the issuer kept in {state_file(args.issuer)}: {exc}") from None
    if issuer is None:
        raise OptionsError(f"no issuer is kept in {state_file(args.issuer)}; start one with: wiremcp auth dev")
    return issuer


def handle(args: argparse.Namespace, tail: list[str] | None) -> int:
    """``wiremcp check TARGET``."""
    from . import _report, _runner
    from ._conn import Unreachable
    from ._extra import load_rules
    from ._findings import RULES

    load_rules()

    if args.timeout <= 0:
        raise OptionsError("--timeout must be more than 0 seconds")
    selected = _selector(args, sorted(RULES))
    try:
        target = _target(args, tail)
        issuer = _issuer(args)
        options = {"auth": args.auth or issuer is not None, "pin": args.pin, "issuer": issuer, "calls": _calls(args.call),
                   "server_name": args.server_name or _install_name(args.target)}
        report = _runner.run_sync(target, args.era, selected, options)  # type: ignore[arg-type]
    except _output.UsageError as exc:
        return fail("check", str(exc))
    except Unreachable as exc:
        return fail("check", str(exc))
    except KeyboardInterrupt:
        return _output.INTERRUPTED
    if args.junit and not _write(args.junit, _report.junit(report)):
        return USAGE
    if args.sarif and not _write(args.sarif, orjson.dumps(_report.sarif(report), option=orjson.OPT_INDENT_2)):
        return USAGE
    if args.json:
        print(orjson.dumps(_report.as_json(report), option=orjson.OPT_INDENT_2).decode())
    else:
        from .._terminal import for_terminal

        out = for_terminal(sys.stdout)
        _report.human(report, out, _output.Style.for_stream(out, args.no_color))
    tally = _report.counts(report)
    return FAILED if tally["error"] or (args.strict and tally["warning"]) else OK


def _write(path: str, data: bytes) -> bool:
    try:
        with open(path, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        fail("check", f"cannot write {path}: {exc.strerror}")
        return False
    return True
