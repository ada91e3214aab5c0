"""Combine a first mutmut run with re-runs of some of its mutants, and print the score per module.

    cd WORKDIR && python -m mutmut results --all true > first.txt      # each run's results
    python tests/mutation/combine.py first.txt rerun.txt [rerun2.txt ...]

A later file's result replaces an earlier one for the same mutant, except
"not checked" (a re-run leaves the mutants it was not given unchecked). The
score is killed (timeouts included) / (killed + survived + no test) over the
checked mutants, as in docs/testing-hardening.md; the table is Markdown.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path


def read(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if ": " in line:
            name, status = line.strip().rsplit(": ", 1)
            out[name] = status
    return out


def module(name: str) -> str:
    head = name.split(".x", 1)[0] if ".x" in name else name
    return head


def main(paths: list[str]) -> None:
    merged: dict[str, str] = {}
    for path in paths:
        for name, status in read(Path(path)).items():
            if status != "not checked" or name not in merged:
                merged[name] = status
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for name, status in merged.items():
        per[module(name)][status] += 1
        per["all"][status] += 1
    print("| module | mutants | killed (timeouts) | survived | no test | not checked | score |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for mod in sorted(per, key=lambda m: (m == "all", m)):
        c = per[mod]
        killed = c["killed"] + c["timeout"]
        checked = killed + c["survived"] + c["no tests"]
        score = f"{100 * killed / checked:.1f}%" if checked else "-"
        print(f"| {mod.replace('wiremcp.', '')} | {sum(c.values()):,} | {killed:,} ({c['timeout']}) | {c['survived']} "
              f"| {c['no tests']} | {c['not checked']:,} | {score} |")


if __name__ == "__main__":
    main(sys.argv[1:])
