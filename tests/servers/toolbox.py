"""A test server for tool definitions, schemas and results (server/tools.mdx).

Holds the conformance suite's content fixtures (FIXTURES.md 2.1:
test_simple_text, test_image_content, test_audio_content,
test_embedded_resource, test_multiple_content_types, test_error_handling;
3.2: json_schema_2020_12_tool, test_x_mcp_header) and one tool per typed
behaviour: structured output, conversions, annotations and icons.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import enum
import io
import uuid
import wave
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict

import wiremcp
from wiremcp import Content, Field, Header, ToolError, ToolResult
from wiremcp.server import ImageContent, audio, embedded_resource, image, resource_link, text

server = wiremcp.Server("toolbox", version="1.0.0")

#: A 1x1 PNG (the conformance reference uses one too).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def _wav() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * 8)
    return out.getvalue()


WAV = _wav()


# -- the conformance content fixtures -----------------------------------------


@server.tool()
def test_simple_text() -> str:
    """Return a simple text response."""
    return "This is a simple text response for testing."


@server.tool()
def test_image_content() -> ImageContent:
    """Return a 1x1 PNG image."""
    return image(PNG, "image/png")


@server.tool()
def test_audio_content() -> Content:
    """Return a short WAV clip."""
    return audio(WAV, "audio/wav")


@server.tool()
def test_embedded_resource() -> Content:
    """Return an embedded text resource."""
    return embedded_resource(
        "test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain"
    )


@server.tool()
def test_multiple_content_types() -> list[Content]:
    """Return text, an image and a JSON resource."""
    return [
        text("Multiple content types test:"),
        image(PNG, "image/png"),
        embedded_resource(
            "test://mixed-content-resource", text='{"test": "data", "value": 123}', mime_type="application/json"
        ),
    ]


@server.tool()
def test_error_handling() -> str:
    """Always fail with a tool execution error."""
    raise ToolError("This tool intentionally returns an error for testing")


JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            "required": ["street", "city"],
        }
    },
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "required": ["name"],
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@server.tool(input_schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(**arguments: Any) -> str:
    """Accept arguments checked by a hand-written JSON Schema 2020-12."""
    return f"contact {arguments['name']} by {arguments.get('contactMethod', 'email')}"


@server.tool()
def test_x_mcp_header(region: Annotated[str, Header("Region"), "Where to run"], query: str) -> str:
    """Mirror `region` into the Mcp-Param-Region header on Streamable HTTP."""
    return f"{region}: {query}"


# -- structured output ----------------------------------------------------------


class Weather(TypedDict):
    """Current weather."""

    temperature: float
    conditions: str
    humidity: NotRequired[int]


@dataclasses.dataclass
class User:
    id: str
    name: str
    email: str


@server.tool()
def get_weather_data(location: Annotated[str, "City name or zip code"]) -> Weather:
    """Get current weather data for a location."""
    return {"temperature": 22.5, "conditions": f"Partly cloudy in {location}", "humidity": 65}


@server.tool()
def list_users(limit: Annotated[int, Field(ge=0, le=10)] = 2) -> list[User]:
    """Return users (a list: wrapped under "result")."""
    people = [User("1", "Alice", "alice@example.com"), User("2", "Bob", "bob@example.com")]
    return people[:limit]


@server.tool()
def count(items: list[str]) -> int:
    """Count the items."""
    return len(items)


@server.tool()
def broken_weather() -> Weather:
    """Returns a value that breaks its own outputSchema."""
    return {"temperature": "hot", "conditions": "sunny"}  # type: ignore[typeddict-item]


@server.tool(structured_output=False)
def plain_dict() -> dict[str, int]:
    """A dict sent as JSON text only."""
    return {"a": 1}


@server.tool(output_schema={"type": "array", "items": {"type": "integer"}})
def squares(n: int) -> Any:
    """An explicit non-object outputSchema (allowed in 2026-07-28)."""
    return [i * i for i in range(n)]


@server.tool(output_schema={"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]})
def total(values: list[int]) -> ToolResult:
    """A ToolResult with its own text and structured content."""
    return ToolResult([text(f"total is {sum(values)}")], structured_content={"total": sum(values)}, meta={"com.example/n": len(values)})


# -- conversions ------------------------------------------------------------------


class Shape(enum.Enum):
    CIRCLE = "circle"
    SQUARE = "square"


@dataclasses.dataclass
class Node:
    value: int
    children: list[Node] = dataclasses.field(default_factory=list)


@server.tool()
def describe(
    shape: Shape,
    size: tuple[int, int],
    tags: set[str],
    when: datetime.date,
    ident: uuid.UUID,
    blob: bytes = b"",
    mode: Literal["fast", "slow"] = "fast",
    scale: Optional[float] = None,
) -> dict[str, Any]:
    """Report the Python types the arguments arrived as."""
    return {
        "shape": type(shape).__name__ + "." + shape.name,
        "size": [type(size).__name__, *size],
        "tags": [type(tags).__name__, *sorted(tags)],
        "when": [type(when).__name__, when.isoformat()],
        "ident": [type(ident).__name__, str(ident)],
        "blob": [type(blob).__name__, blob.decode()],
        "mode": mode,
        "scale": scale,
    }


@server.tool()
def tree_sum(node: Node) -> int:
    """Sum a recursive tree (a dataclass that refers to itself: $defs/$ref)."""
    assert isinstance(node, Node)
    return node.value + sum(tree_sum(child) for child in node.children)


# -- definition extras --------------------------------------------------------------


@server.tool(
    title="Link finder",
    annotations={"title": "Links", "readOnlyHint": True, "openWorldHint": False},
    icons=[{"src": "https://example.com/link.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "light"}],
    meta={"com.example/category": "links"},
)
def find_link(name: str) -> list[Content]:
    """Return a resource link and an annotated image."""
    return [
        resource_link(f"file:///project/{name}", name, mime_type="text/plain", description="A project file"),
        image(PNG, "image/png", annotations={"audience": ["user"], "priority": 0.9}),
    ]


try:
    import pydantic
except ImportError:  # pragma: no cover - pydantic is in the test extra
    pydantic = None

if pydantic is not None:

    class Address(pydantic.BaseModel):
        street: str
        zip: str = pydantic.Field(pattern=r"^[0-9]{5}$", description="Five digits")

    class Person(pydantic.BaseModel):
        name: str
        age: int = pydantic.Field(ge=0)
        address: Address

    @server.tool()
    def register_person(person: Person) -> Person:
        """Validate a person with pydantic and echo it back."""
        assert isinstance(person, Person)
        return person.model_copy(update={"name": person.name.title()})

