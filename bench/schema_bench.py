"""The tools/call hot path of the schema layer: check the arguments, then convert them.

    python bench/schema_bench.py            # best of 40 short rounds per figure, ~10 s
    python bench/schema_bench.py --rounds 10

Each case registers a tool with `wiremcp.server.Tool` (its inputSchema,
compiled check and argument converter are built from the type hints, as
``@server.tool`` does) and times what a call does before the function runs:
the compiled check of the arguments and, when the tool has one, the converter
to the declared Python types. A second column times the whole ``Tool.call``
(check, convert, run a trivial function, build the result).

The cases:

* ``3 fields``: ``search(query: str, limit: int = 10, cursor: str | None = None)``;
* ``union``: ``place(at: Point | int)`` called with a point (a dataclass
  member of a union: the converter has to decide which member it is);
* ``optional dc``: ``resize(box: Box | None)`` with a box;
* ``nested dc``: ``ship(order: Order)``, a dataclass holding a dataclass and
  a list of dataclasses.

To compare two versions of the code, run the script with ``PYTHONPATH``
pointing at the other version's ``src`` (it prints which ``wiremcp`` it
imported).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
import timeit
from typing import Any, Callable, Optional, Union

import wiremcp
from wiremcp.server import Tool


@dataclasses.dataclass
class Point:
    x: int
    y: int


@dataclasses.dataclass
class Box:
    w: int
    h: int
    label: str = ""


@dataclasses.dataclass
class Address:
    street: str
    city: str
    zip: Optional[str] = None


@dataclasses.dataclass
class Line:
    sku: str
    quantity: int = 1


@dataclasses.dataclass
class Order:
    id: str
    ship_to: Address
    lines: list[Line]
    gift: bool = False


def search(query: str, limit: int = 10, cursor: Optional[str] = None) -> str:
    return query


def place(at: Union[Point, int]) -> str:
    return "ok"


def resize(box: Optional[Box]) -> str:
    return "ok"


def ship(order: Order) -> str:
    return "ok"


CASES: list[tuple[str, Callable[..., Any], dict[str, Any]]] = [
    ("3 fields", search, {"query": "mcp schema", "limit": 5, "cursor": None}),
    ("union", place, {"at": {"x": 1, "y": 2}}),
    ("optional dc", resize, {"box": {"w": 3, "h": 4, "label": "b"}}),
    (
        "nested dc",
        ship,
        {
            "order": {
                "id": "o-1",
                "ship_to": {"street": "1 Main St", "city": "Springfield", "zip": "12345"},
                "lines": [{"sku": "ABC-1", "quantity": 2}, {"sku": "XYZ-9"}],
                "gift": True,
            }
        },
    ),
]


def _best(fn: Callable[[], Any], rounds: int) -> float:
    """Best time per call in ns over ``rounds`` rounds of about 20 ms each.

    Timed in this thread's CPU time, not wall time: on a shared machine a
    round that loses the core to another process would otherwise count that
    process's time. The minimum of many short rounds is what the code costs.
    """
    timer = timeit.Timer(fn, timer=time.thread_time)
    number, _ = timer.autorange()  # at least 0.2 s
    number = max(1, number // 10)
    return min(timer.repeat(rounds, number)) / number * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    print(f"wiremcp from {wiremcp.__file__}")
    print("| case | check + convert (ns) | Tool.call (ns) |")
    print("| --- | ---: | ---: |")
    for name, fn, arguments in CASES:
        tool = Tool(fn)
        check = tool._check
        convert = tool._convert
        assert check(arguments) is None, check(arguments)
        if convert is None:

            def hot() -> Any:
                return check(arguments)

        else:

            def hot() -> Any:
                if check(arguments) is None:
                    return convert(arguments)
                return None

        result = tool.call(arguments, None)
        assert isinstance(result, dict) and not result.get("isError"), result
        call = tool.call
        print(f"| {name} | {_best(hot, args.rounds):,.0f} | {_best(lambda: call(arguments, None), args.rounds):,.0f} |")


if __name__ == "__main__":
    main()
