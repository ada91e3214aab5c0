"""The long fuzz run: ``python -m tests.fuzz TARGET [--seconds N] [--runs N] [--seed N]``.

Run from the repository root. TARGET is one of `TARGETS` (or ``all``, each
in turn for N seconds). With atheris installed (``pip install atheris``; the
``test`` extra has it on Linux), the ``wiremcp`` package is instrumented
before it is imported and libFuzzer drives the target's Hypothesis strategy
through ``fuzz_one_input``, keeping the inputs that reach new code; crashes
are written as ``crash-*`` files in the current directory and the run stops
at the first one; ``python -m tests.fuzz TARGET crash-...`` replays one. Without atheris, random buffers go through the same
``fuzz_one_input`` for N seconds (no coverage feedback).

``--corpus DIR`` keeps atheris's corpus between runs. ``--runs`` and
``--seed`` make a run reproducible (the test suite's atheris smoke test uses
them). Exit status: 0 when no failure was found.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import time
from typing import Any, Callable

#: target name -> (module, Hypothesis test function)
TARGETS = {
    "decoder": ("test_decoder", "fuzz_decoder"),
    "stdio": ("test_stdio_lines", "fuzz_stdio_lines"),
    "asgi": ("test_asgi", "fuzz_asgi"),
    "uri-template": ("test_uri_template", "fuzz_parse_expand_match"),
    "uri-round-trip": ("test_uri_template", "fuzz_round_trip"),
    "tool-arguments": ("test_tool_arguments", "fuzz_tool_arguments"),
}


def _load(name: str) -> Callable[[bytes], Any]:
    # The servers log every refused input; at thousands of inputs a second that is all the run would do.
    logging.getLogger("wiremcp").setLevel(logging.CRITICAL)
    module_name, function = TARGETS[name]
    module = importlib.import_module(f"{__package__}.{module_name}")
    test = getattr(module, function)
    fuzz_one_input: Callable[[bytes], Any] = test.hypothesis.fuzz_one_input
    return fuzz_one_input


def _with_atheris(name: str, args: argparse.Namespace) -> int:
    import atheris  # type: ignore[import-untyped]  # atheris ships no type information

    with atheris.instrument_imports(include=["wiremcp"]):
        import wiremcp  # noqa: F401  (instrumented here, before any target imports it)
        target = _load(name)
    argv = [sys.argv[0], f"-max_total_time={int(args.seconds)}", "-rss_limit_mb=4096", "-timeout=30", "-max_len=8192"]
    if args.runs is not None:
        argv.append(f"-runs={args.runs}")
    if args.seed is not None:
        argv.append(f"-seed={args.seed}")
    if args.replay:
        argv += args.replay  # libFuzzer runs the given inputs once and stops
    elif args.corpus:
        os.makedirs(args.corpus, exist_ok=True)
        argv.append(args.corpus)
    atheris.Setup(argv, target)
    atheris.Fuzz()  # exits the process: 0, or 1 with the crashing input saved
    return 0


def _without_atheris(name: str, args: argparse.Namespace) -> int:
    import random

    target = _load(name)
    for path in args.replay:
        with open(path, "rb") as f:
            target(f.read())
    if args.replay:
        return 0
    rng = random.Random(args.seed)
    deadline = time.monotonic() + args.seconds
    runs = 0
    while time.monotonic() < deadline and (args.runs is None or runs < args.runs):
        target(rng.randbytes(rng.choice((16, 64, 256, 1024, 4096))))
        runs += 1
    print(f"{name}: {runs} inputs in {args.seconds:.0f}s, no failure (random buffers, no coverage feedback)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=[*TARGETS, "all"])
    parser.add_argument("replay", nargs="*", help="crash-* files to run once each (atheris), instead of fuzzing")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to run (per target for 'all')")
    parser.add_argument("--runs", type=int, default=None, help="stop after this many inputs")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--corpus", default=None, help="a directory for atheris's corpus")
    parser.add_argument("--no-atheris", action="store_true", help="random buffers even when atheris is there")
    args = parser.parse_args(argv)
    try:
        import atheris  # noqa: F401
    except ImportError:
        use_atheris = False
    else:
        use_atheris = not args.no_atheris
    if args.target == "all":
        # atheris.Fuzz never returns: one subprocess per target.
        import subprocess

        status = 0
        for name in TARGETS:
            cmd = [sys.executable, "-m", __package__ or "tests.fuzz", name, "--seconds", str(args.seconds)]
            for flag, value in (("--runs", args.runs), ("--seed", args.seed)):
                if value is not None:
                    cmd += [flag, str(value)]
            if args.no_atheris:
                cmd.append("--no-atheris")
            if args.corpus:
                cmd += ["--corpus", os.path.join(args.corpus, name)]
            print("$", " ".join(cmd), flush=True)
            root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
            status |= subprocess.call(cmd, env={**os.environ, "PYTHONPATH": path})
        return status
    if use_atheris:
        return _with_atheris(args.target, args)
    return _without_atheris(args.target, args)


if __name__ == "__main__":
    sys.exit(main())
