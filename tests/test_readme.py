"""The README's shell blocks work, in the shell the quick start leaves, as a newcomer runs them.

In a copy of the working tree (the files git tracks or would track, as a fresh
clone has them plus uncommitted edits), one bash script runs the quick start
block, then every later ```` ```bash ```` block in order, in the same shell:
the folder and the environment the quick start leaves (its virtualenv
activated), nothing else. ``PATH`` holds no ``wiremcp`` and no virtualenv
before the quick start (a ``python3`` of this test's interpreter comes first),
so a block that needs what the quick start did not give fails here as it
fails for a reader. A block preceded by ``<!-- not run: REASON -->`` is not
run (the reason says why: it runs for minutes, serves until stopped, installs
extras from the index, or fails until the package is published); each such
marker must name a reason.

A ```` ```text ```` block whose first line is ``$ COMMAND`` is a transcript:
COMMAND runs in the same shell, and each line shown under it must be a line
of its output, in order (a line ``...`` stands for lines left out; timings in
ms may differ).

Python blocks are run by tests/test_docs.py.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BLOCK = re.compile(
    r"^(?:<!-- not run: (?P<reason>[^\n]*?) -->\n)?```(?P<lang>bash|text)\n(?P<body>.*?)^```\n", re.S | re.M
)
TIMING = re.compile(r"\+ *\d+(?:\.\d+)? ms")


def blocks(text: str) -> list[re.Match[str]]:
    return list(BLOCK.finditer(text))


def _copy_of_the_tree(to: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")
    for name in filter(None, listed):
        source, target = ROOT / name, to / name
        if source.is_symlink():  # examples -> src/wiremcp/examples
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(os.readlink(source))
        elif source.is_file():  # a file deleted in the tree but not in the index is left out
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
            target.chmod(source.stat().st_mode)


def _newcomer_env(bin_dir: Path) -> dict[str, str]:
    """A shell with ``python3`` (this interpreter's base Python), no virtualenv, no ``wiremcp`` on PATH."""
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    path = [str(bin_dir)] + [
        entry for entry in os.environ.get("PATH", "").split(os.pathsep)
        if entry and not (Path(entry) / "wiremcp").exists() and not (Path(entry) / "activate").exists()
    ]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env.update(PATH=os.pathsep.join(path), NO_COLOR="1", COLUMNS="100", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def _script(readme: str, outputs: Path) -> tuple[str, list[tuple[int, str, list[str]]]]:
    """The bash script of the README's blocks, and the transcripts to check (index, command, lines shown)."""
    lines = ["set -eo pipefail", "trap 'echo \"README block $BLOCK failed (exit $?)\" >&2' ERR"]
    transcripts = []
    for index, match in enumerate(blocks(readme)):
        body = match["body"]
        if match["reason"] is not None:
            continue
        if match["lang"] == "bash":
            lines += [f"BLOCK={index}", body.rstrip("\n")]
        elif body.startswith("$ "):
            command, *shown = body.rstrip("\n").split("\n")
            transcripts.append((index, command[2:], shown))
            lines += [f"BLOCK={index}", f"{command[2:]} > {shlex.quote(str(outputs / f'{index}.txt'))} 2>&1"]
    return "\n".join(lines) + "\n", transcripts


def test_every_skipped_block_says_why():
    readme = README.read_text()
    assert all(m["reason"].strip() for m in blocks(readme) if m["reason"] is not None)
    quick = [m for m in blocks(readme) if m["lang"] == "bash"][0]
    assert quick["reason"] is None and "activate" in quick["body"], "the quick start is the first bash block, and runs"


def _shown_in(shown: list[str], output: str) -> list[str]:
    """The lines of ``shown`` not found, in order, among the lines of ``output`` (``...`` lines skipped)."""
    got = iter(TIMING.sub("+ <ms>", line).rstrip() for line in output.splitlines())
    missing = []
    for line in shown:
        if line.strip() in ("...", "…"):
            continue
        want = TIMING.sub("+ <ms>", line).rstrip()
        if not any(have == want for have in got):
            missing.append(line)
            break  # the rest cannot be matched in order
    return missing


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_readme_blocks_run_in_the_quick_start_shell(tmp_path):
    clone = tmp_path / "wiremcp"
    _copy_of_the_tree(clone)
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    script, transcripts = _script(README.read_text(), outputs)
    (tmp_path / "readme.sh").write_text(script)
    done = subprocess.run(
        ["bash", str(tmp_path / "readme.sh")], cwd=clone, env=_newcomer_env(tmp_path / "bin"),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=880,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"the README's blocks stopped:\n{output[-4000:]}"
    assert "wiremcp demo" in output  # the quick start's demo ran
    for index, command, shown in transcripts:
        got = (outputs / f"{index}.txt").read_text()
        missing = _shown_in(shown, got)
        assert not missing, f"README block {index}, `{command}`: {missing[0]!r} is not in its output:\n{got[:3000]}"


if __name__ == "__main__":
    for i, m in enumerate(blocks(README.read_text())):
        print(i, m["lang"], "not run: " + m["reason"] if m["reason"] is not None else "runs", m["body"].splitlines()[0][:60])
