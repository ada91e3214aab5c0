"""A real FastAPI app, the upstream of tests/server/test_openapi.py: served by uvicorn on loopback.

Its generated document (``/openapi.json``) is what `from_openapi` reads.
Every kind of parameter is here: path (``/notes/{note_id}``,
``/echo/{word}``), query (``tag``, ``limit``, ``times``, a list ``tags``),
header (``X-Request-Id``), cookie (``session``), a JSON body (a note); an
endpoint that answers any status asked of it (``/fail/{code}``), one that
needs ``Authorization: Bearer s3cret`` (``/secret``, an HTTPBearer security
scheme, so not a parameter), one answering 204 with no body, ``/version``
(a GET without parameters, served as a resource), two redirects (to the
same origin, to another) and one that raises.
"""

from __future__ import annotations

from fastapi import Cookie, Depends, FastAPI, Header, HTTPException, Query, Request, Response
from fastapi.responses import RedirectResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

app = FastAPI(title="Notes API", version="1.2.0")
bearer = HTTPBearer(auto_error=False)
TOKEN = "s3cret"


class NoteIn(BaseModel):
    title: str
    body: str = ""
    tags: list[str] = []


class Note(BaseModel):
    id: int
    title: str
    body: str
    tags: list[str]


class NoteList(BaseModel):
    notes: list[Note]
    count: int


NOTES: dict[int, Note] = {}


@app.post("/notes", operation_id="create_note", response_model=Note, status_code=201, summary="Create a note")
def create_note(note: NoteIn) -> Note:
    created = Note(id=len(NOTES) + 1, **note.model_dump())
    NOTES[created.id] = created
    return created


@app.get("/notes", operation_id="list_notes", response_model=NoteList, summary="List notes", description="Newest last.")
def list_notes(tag: str | None = None, limit: int = Query(10, ge=1, le=100)) -> NoteList:
    found = [n for n in NOTES.values() if tag is None or tag in n.tags][:limit]
    return NoteList(notes=found, count=len(found))


@app.get("/notes/{note_id}", operation_id="get_note", response_model=Note, summary="One note")
def get_note(note_id: int) -> Note:
    if note_id not in NOTES:
        raise HTTPException(404, detail=f"no note {note_id}")
    return NOTES[note_id]


@app.delete("/notes/{note_id}", operation_id="delete_note", status_code=204, summary="Delete a note")
def delete_note(note_id: int) -> Response:
    if NOTES.pop(note_id, None) is None:
        raise HTTPException(404, detail=f"no note {note_id}")
    return Response(status_code=204)


@app.get("/echo/{word}", operation_id="echo", summary="What the request carried")
def echo(
    request: Request,
    word: str,
    times: int = 1,
    tags: list[str] = Query([]),
    x_request_id: str | None = Header(None),
    session: str | None = Cookie(None),
) -> dict[str, object]:
    return {
        "word": word,
        "times": times,
        "tags": tags,
        "request_id": x_request_id,
        "session": session,
        "raw_path": request.scope["raw_path"].decode(),
        "authorization": request.headers.get("authorization"),
    }


@app.get("/fail/{code}", operation_id="fail", summary="Answer with this status")
def fail(code: int) -> dict[str, str]:
    raise HTTPException(code, detail=f"failed on purpose with {code}")


@app.get("/secret", operation_id="secret", summary="Needs the bearer token")
def secret(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> dict[str, str]:
    if credentials is None or credentials.credentials != TOKEN:
        raise HTTPException(401, detail="bad or missing bearer token")
    return {"secret": "the cake is a lie"}


@app.get("/version", operation_id="version", summary="The API version")
def version() -> dict[str, str]:
    return {"version": "1.2.0"}


@app.get("/moved", operation_id="moved", summary="Redirects to /version (same origin: followed)")
def moved() -> RedirectResponse:
    return RedirectResponse("/version", status_code=307)


@app.get("/elsewhere", operation_id="elsewhere", summary="Redirects to another origin (not followed)")
def elsewhere() -> RedirectResponse:
    return RedirectResponse("http://127.0.0.2:9/steal", status_code=307)


@app.get("/boom", operation_id="boom", summary="Raises")
def boom() -> dict[str, str]:
    raise RuntimeError("boom")
