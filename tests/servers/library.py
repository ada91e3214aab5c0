"""A test server with resources, templates, prompts and completers.

The ``test_*`` / ``test://`` names are the conformance suite's fixtures
(conformance/FIXTURES.md sections 2.2, 2.3, 2.4); the others exercise the
rest of the API. ``page_size=2`` so every list paginates.
"""

from __future__ import annotations

import base64
import json
from typing import Annotated, Literal

import wiremcp
from wiremcp import Context, JSONRPCError

server = wiremcp.Server("library", version="1.2.3", page_size=2)

#: A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

LOGS = {
    "app.log": "line 1\nline 2\nline 3\n",
    "error.log": "oops\n",
    "access.log": "GET /\n",
}


# -- resources -----------------------------------------------------------------


@server.resource("test://static-text", name="static-text", title="Static text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", mime_type="image/png", size=len(PNG))
def static_binary() -> bytes:
    """A static binary resource (a 1x1 PNG)."""
    return PNG


@server.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
def watched() -> str:
    """A resource clients may subscribe to."""
    return "Watched resource content."


@server.resource(
    "test://private-note",
    name="private-note",
    mime_type="text/plain",
    ttl_ms=0,
    cache_scope="private",
    annotations={"audience": ["user"], "priority": 0.5},
)
def private_note(ctx: Context) -> str:
    """Per-caller content: never shared between callers, immediately stale."""
    who = (ctx.client_info or {}).get("name", "someone")
    return f"A note for {who}."


@server.resource("test://broken", name="broken")
def broken() -> str:
    """Always fails with an unexpected exception."""
    raise RuntimeError("secret internal detail")


@server.resource("test://forbidden", name="forbidden")
def forbidden() -> str:
    """Always fails with a deliberate protocol error."""
    raise JSONRPCError("Not allowed to read this", {"reason": "policy"}, code=-32001)


@server.resource("test://template/{id}/data", name="template-data", mime_type="application/json")
def template_data(id: str) -> str:
    """JSON data for an id."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@server.resource("file:///logs/{name}{?lines}", name="logs", mime_type="text/plain", ttl_ms=5_000)
async def log_file(name: str, lines: int | None = None) -> str | None:
    """A log file; ``lines`` keeps only the first lines."""
    content = LOGS.get(name)
    if content is None:
        return None  # no such log: resource not found
    if lines is not None:
        content = "".join(content.splitlines(keepends=True)[:lines])
    return content


@server.resource("test://dir/{+path}", name="directory")
def directory(path: str) -> list[object]:
    """A directory: one text and one binary item."""
    return [
        {"uri": f"test://dir/{path}/readme.txt", "mimeType": "text/plain", "text": f"Readme of {path}"},
        {"uri": f"test://dir/{path}/logo.png", "mimeType": "image/png", "blob": PNG},
    ]


@server.resource("test://numbers/{n}", name="numbers")
def number(n: int) -> str:
    """A number and its square (``n`` must be an integer)."""
    return f"{n} squared is {n * n}"


# -- prompts -------------------------------------------------------------------


@server.prompt()
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt()
def test_prompt_with_arguments(
    arg1: Annotated[str, "First test argument"], arg2: Annotated[str, "Second test argument"]
) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt()
def test_prompt_with_embedded_resource(resourceUri: Annotated[str, "URI of the resource to embed"]) -> list[object]:
    """A prompt that embeds a resource."""
    return [
        wiremcp.user(
            wiremcp.embedded_resource(resourceUri, text="Embedded resource content for testing.", mime_type="text/plain")
        ),
        wiremcp.user("Please process the embedded resource above."),
    ]


@server.prompt()
def test_prompt_with_image() -> list[object]:
    """A prompt with an image."""
    return [wiremcp.user(wiremcp.image(PNG, "image/png")), wiremcp.user("Please analyze the image above.")]


@server.prompt(title="Code review")
async def code_review(
    code: Annotated[str, "The code to review"],
    language: Annotated[Literal["python", "rust", "go"], "Its language"] = "python",
) -> dict[str, object]:
    """Ask for a review of some code."""
    return {
        "description": f"Review of {language} code",
        "messages": [
            wiremcp.user(f"Please review this {language} code:\n{code}"),
            wiremcp.assistant("Sure. Let me read it."),
        ],
    }


@server.prompt()
def scaffold(language: str, framework: str, ctx: Context) -> str:
    """Start a project."""
    return f"Create a {language} project with {framework} (request {ctx.request_id})."


# -- completion ----------------------------------------------------------------

FRAMEWORKS = {"python": ["flask", "fastapi", "django"], "rust": ["axum", "actix-web", "rocket"]}


@server.complete(prompt="test_prompt_with_arguments", argument="arg1")
def arg1_values(value: str) -> list[str]:
    return [v for v in ("test-alpha", "test-beta", "other") if v.startswith(value)]


@server.complete(prompt="scaffold", argument="language")
def languages(value: str) -> list[str]:
    return [v for v in FRAMEWORKS if v.startswith(value)]


@server.complete(prompt="scaffold", argument="framework")
def frameworks(value: str, language: str = "") -> list[str]:
    """Frameworks for the language chosen already (context.arguments)."""
    return [v for v in FRAMEWORKS.get(language, []) if v.startswith(value)]


@server.complete(template="file:///logs/{name}{?lines}", argument="name")
async def log_names(value: str) -> list[str]:
    return sorted(n for n in LOGS if n.startswith(value))


@server.complete(template="test://numbers/{n}", argument="n")
def numbers(value: str) -> list[str]:
    """250 numbers: more than one response may carry."""
    return [str(i) for i in range(250) if str(i).startswith(value)]
