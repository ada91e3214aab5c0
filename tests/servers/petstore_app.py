"""A small local implementation of a few Swagger Petstore 3.0 routes (tests/servers/openapi/petstore.json).

Served by uvicorn for tests/server/test_openapi.py, under ``/api/v3`` as the
document's ``servers`` says: ``POST /pet``, ``GET /pet/{petId}``,
``GET /pet/findByStatus``, ``DELETE /pet/{petId}`` and ``GET /store/inventory``
(which needs the ``api_key`` header ``special-key``). Plain Starlette, in memory.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route

PETS: dict[int, dict[str, object]] = {}


async def add_pet(request: Request) -> Response:
    pet = await request.json()
    if not isinstance(pet, dict) or "name" not in pet or "photoUrls" not in pet:
        return PlainTextResponse("Invalid input", status_code=400)
    pet["id"] = max(PETS, default=0) + 1
    PETS[pet["id"]] = pet
    return JSONResponse(pet)


async def pet_by_id(request: Request) -> Response:
    pet_id = int(request.path_params["petId"])
    if request.method == "DELETE":
        if PETS.pop(pet_id, None) is None:
            return PlainTextResponse("Pet not found", status_code=404)
        return PlainTextResponse("Pet deleted")
    if pet_id not in PETS:
        return PlainTextResponse("Pet not found", status_code=404)
    return JSONResponse(PETS[pet_id])


async def find_by_status(request: Request) -> Response:
    status = request.query_params.get("status", "available")
    return JSONResponse([p for p in PETS.values() if p.get("status") == status])


async def inventory(request: Request) -> Response:
    if request.headers.get("api_key") != "special-key":
        return PlainTextResponse("api_key missing or wrong", status_code=401)
    counts: dict[str, int] = {}
    for pet in PETS.values():
        counts[str(pet.get("status"))] = counts.get(str(pet.get("status")), 0) + 1
    return JSONResponse(counts)


app = Starlette(
    routes=[
        Mount(
            "/api/v3",
            routes=[
                Route("/pet", add_pet, methods=["POST"]),
                Route("/pet/findByStatus", find_by_status, methods=["GET"]),
                Route("/pet/{petId:int}", pet_by_id, methods=["GET", "DELETE"]),
                Route("/store/inventory", inventory, methods=["GET"]),
            ],
        )
    ]
)
