"""A wiremcp server using what 2024-11-05 lacks: a tool annotation, audio and a resource link in a
result, audio in a prompt, a completion, progress with a message. The 2024-11-05 tests (issue 24,
defect 2) check what a session at that revision receives instead."""

import wiremcp
from wiremcp import Content, Context

server = wiremcp.Server("wiremcp-2024")
WAV = b"RIFF\x00\x00\x00\x00WAVE"


@server.tool(annotations={"readOnlyHint": True, "title": "Peek"})
def peek() -> str:
    """An annotated tool."""
    return "peeked"


@server.tool()
def media() -> list[Content]:
    """Text, audio and a resource link."""
    return [wiremcp.text("here:"), wiremcp.audio(WAV, "audio/wav"), wiremcp.resource_link("file:///notes.txt", "notes")]


@server.tool()
async def steps(ctx: Context) -> str:
    """Progress with a message."""
    ctx.report_progress(1, 2, "half way")
    ctx.report_progress(2, 2, "done")
    return "stepped"


@server.prompt()
def listen(language: str) -> list[dict]:  # type: ignore[type-arg]
    """A prompt whose message is audio."""
    return [{"role": "user", "content": {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}}]


@server.complete(prompt="listen", argument="language")
def languages(value: str) -> list[str]:
    return [lang for lang in ("en", "fr") if lang.startswith(value)]
