"""A FastAPI app served as an MCP server, without writing a tool (docs/openapi.md).

    wiremcp run examples/openapi_server.py           # stdio
    wiremcp run examples/openapi_server.py --http    # http://127.0.0.1:8000/mcp

``app`` stands for an API you already have. `from_fastapi` reads its
OpenAPI document (``app.openapi()``) and calls it in-process: each
operation is a tool named by its ``operationId``, with the parameters and
the JSON body as arguments; the route map makes ``GET /books/{book_id}`` a
resource template instead. For an API in another process, or anyone's,
`from_openapi(document, base_url=...)` does the same over HTTP.
"""

from __future__ import annotations

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

from wiremcp.server.openapi import RouteMap, from_fastapi

app = FastAPI(title="Bookshelf", version="1.0.0")


class NewBook(BaseModel):
    title: str
    author: str


class Book(NewBook):
    id: int


BOOKS: dict[int, Book] = {1: Book(id=1, title="Dune", author="Frank Herbert")}


@app.get("/books", operation_id="list_books", summary="List the books, optionally by one author")
def list_books(author: str | None = None) -> list[Book]:
    return [b for b in BOOKS.values() if author is None or b.author == author]


@app.post("/books", operation_id="add_book", summary="Add a book", status_code=201)
def add_book(book: NewBook) -> Book:
    added = Book(id=max(BOOKS) + 1, **book.model_dump())
    BOOKS[added.id] = added
    return added


@app.get("/books/{book_id}", operation_id="get_book", summary="One book")
def get_book(book_id: int) -> Book:
    if book_id not in BOOKS:
        raise HTTPException(404, detail=f"no book {book_id}")
    return BOOKS[book_id]


server = from_fastapi(
    app,
    route_maps=[RouteMap(methods=["GET"], pattern=r"^/books/\{book_id\}$", kind="template")],
    uri_prefix="books://shelf",
)
