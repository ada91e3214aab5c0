"""Types shared by the tests of the schema package (tests/test_schema_*.py).

Module level on purpose: a dataclass that names itself in a string
annotation ("list[Node]") resolves it in its module's globals. No
``from __future__ import annotations``, for the same reason as the tests.
"""

import dataclasses
import enum
from typing import Optional

import jsonschema


def valid_2020_12(schema):
    """Every generated schema must itself be a valid 2020-12 schema."""
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Node:
    value: int
    children: "list[Node]" = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Ping:
    pong: "Optional[Pong]" = None


@dataclasses.dataclass
class Pong:
    ping: Optional[Ping] = None


@dataclasses.dataclass
class IntX:
    x: int


@dataclasses.dataclass
class StrX:
    x: str


@dataclasses.dataclass
class XY:
    x: int
    y: int = 0
