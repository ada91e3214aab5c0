"""Mutation testing of the core modules with mutmut (a documented run, not part of CI: it is long).

    .venv/bin/pip install mutmut==3.8.1     # not a dependency of any extra (3.x: 2.x has no --max-children)
    .venv/bin/python tests/mutation/run.py jsonrpc [--workdir DIR] [--max-children N]
    .venv/bin/python tests/mutation/run.py protocol
    .venv/bin/python tests/mutation/run.py client
    .venv/bin/python tests/mutation/run.py auth-client
    .venv/bin/python tests/mutation/run.py auth-server

Each target names the modules to mutate and the smallest set of in-process
tests that covers them (`TARGETS`). The repository's ``src`` and ``tests``
are copied into a work directory (default: a new temporary one) whose
pyproject.toml gets the ``[tool.mutmut]`` section for that target, so nothing
in the checkout changes; mutmut then runs there and ``mutmut results`` lists
the survivors. The script prints the score: killed / (killed + survived),
with timeouts counted as killed and mutants no test reaches listed apart.
``--names FILE`` runs only the mutants named in FILE (one a line): to re-run
the survivors of a run with the tests added since, in a fresh ``--workdir``
(the tests are copied when a work directory is prepared).
tests/mutation/combine.py merges a run with its re-runs into the table per
module; docs/testing-hardening.md records the scores and what became of the
survivors.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

#: target -> (paths to mutate, tests that cover them, in process)
TARGETS: dict[str, tuple[list[str], list[str]]] = {
    "jsonrpc": (["src/wiremcp/jsonrpc/"], ["tests/jsonrpc/", "tests/mutation/"]),
    "protocol": (
        ["src/wiremcp/protocol/"],
        ["tests/protocol/", "tests/client/test_protocol.py", "tests/client/test_client_rules.py",
         "tests/server/test_mrtr.py", "tests/server/test_schema_headers.py", "tests/server/test_tools.py",
         "tests/server/test_resources.py", "tests/server/test_prompts.py", "tests/server/test_completion.py",
         "tests/server/test_server_connection.py", "tests/transports/test_header_verdicts.py",
         "tests/server/tasks/test_tasks_extensions.py", "tests/mutation/"],
    ),
    # auth/ in two parts: the OAuth client (its tests run against in-process authorization
    # servers, tests/auth/fakeas.py) and the resource server (auth/server/). The resource server's
    # own tests (tests/auth/server/) start the real oidc-provider, a Node process per mutant run:
    # too slow here, so its target runs the in-process suite that covers the same rules.
    "auth-client": (
        ["src/wiremcp/auth/_*.py"],
        ["tests/auth/test_challenge.py", "tests/auth/test_discovery.py", "tests/auth/test_flow.py",
         "tests/auth/test_fetch_resend.py", "tests/auth/test_jose.py", "tests/auth/test_pkce.py", "tests/auth/test_redirect.py",
         "tests/auth/test_ssrf.py", "tests/auth/test_storage.py", "tests/auth/test_mutation_killers.py",
         "tests/auth/test_mutation_killers_flow.py"],
    ),
    "auth-server": (
        ["src/wiremcp/auth/server/"],
        ["tests/auth/test_mutation_killers_server.py"],
    ),
    "client": (
        ["src/wiremcp/client/_protocol.py", "src/wiremcp/client/_inbox.py", "src/wiremcp/client/_eras.py",
         "src/wiremcp/client/_mrtr.py", "src/wiremcp/client/_cache.py"],
        ["tests/client/test_protocol.py", "tests/client/test_client_rules.py", "tests/client/test_client_memory.py",
         "tests/client/tasks/test_client_tasks_protocol.py", "tests/mutation/"],
    ),
}


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def prepare(target: str, workdir: Path) -> None:
    paths, tests = TARGETS[target]
    for name in ("src", "tests", "examples"):
        shutil.copytree(ROOT / name, workdir / name, ignore=shutil.ignore_patterns("__pycache__", "mutants"))
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    pyproject += (
        "\n[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        f"only_mutate = {_toml_list([p + '*' if p.endswith('/') else p for p in paths])}\n"
        f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q"]\n'
        'also_copy = ["examples"]\n'
    )
    (workdir / "pyproject.toml").write_text(pyproject, encoding="utf-8")


def score(workdir: Path) -> dict[str, int]:
    out = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=workdir, capture_output=True, text=True
    )
    counts: dict[str, int] = {}
    for line in out.stdout.splitlines():
        if ":" in line:
            status = line.rsplit(":", 1)[1].strip()
            counts[status] = counts.get(status, 0) + 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=sorted(TARGETS))
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument("--names", type=Path, default=None,
                        help="a file of mutant names, one a line: run only these (a re-run of survivors in a fresh --workdir)")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix=f"wiremcp-mutmut-{args.target}-"))
    if not (workdir / "pyproject.toml").exists():
        workdir.mkdir(parents=True, exist_ok=True)
        prepare(args.target, workdir)
    env = {**os.environ, "PYTHONPATH": ""}
    print(f"mutmut in {workdir}", flush=True)
    names = args.names.read_text(encoding="utf-8").split() if args.names is not None else []
    status = subprocess.call(
        [sys.executable, "-m", "mutmut", "run", "--max-children", str(args.max_children), *names], cwd=workdir, env=env
    )
    counts = score(workdir)
    killed = counts.get("killed", 0) + counts.get("timeout", 0)
    survived = counts.get("survived", 0)
    total = killed + survived
    print(json.dumps({"target": args.target, "counts": counts,
                      "score": round(killed / total, 3) if total else None}, indent=1))
    print(f"survivors: cd {workdir} && {sys.executable} -m mutmut results; ... -m mutmut show NAME")
    return status


if __name__ == "__main__":
    sys.exit(main())
