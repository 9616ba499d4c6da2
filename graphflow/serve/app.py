"""The Starlette application of ``graphflow serve`` around a :class:`Service`.

Every answer is JSON. A bad request gets a 4xx status and ``{"error": "<one line>"}``:
400 malformed JSON or the wrong endpoint for the model's kind, 404 unknown node ids or
paths, 405 wrong method, 413 a body over ``max_bytes`` (checked on ``Content-Length`` and
while reading) or too many items, 422 a well-formed payload with wrong content (feature
width, missing keys, non-numeric features).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from graphflow.serve.kg import KgService
from graphflow.serve.service import RequestError, Service

MAX_BYTES = 8 << 20
"""Default request body limit: 8 MiB."""


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message, "status": status}, status_code=status)


async def read_json(request: Request, max_bytes: int) -> Any:
    """The request's JSON body, refusing more than ``max_bytes`` before parsing."""
    length = request.headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise RequestError(400, "Content-Length is not a number")
        if int(length) > max_bytes:
            raise RequestError(413, f"request body of {int(length):,} bytes; at most "
                                    f"{max_bytes:,}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise RequestError(413, f"request body over {max_bytes:,} bytes")
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks) or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RequestError(400, f"malformed JSON: {exc}") from None


def create_app(service: Service | KgService, *, max_bytes: int = MAX_BYTES) -> Starlette:
    """The ASGI application serving ``service`` (a knowledge-graph service: ``/health``,
    ``/model`` and ``POST /complete``)."""

    def post(handler: Callable[[Any], dict[str, Any]]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> JSONResponse:
            try:
                body = await read_json(request, max_bytes)
                return JSONResponse(await run_in_threadpool(handler, body))
            except RequestError as exc:
                return error(exc.status, str(exc))
        return endpoint

    async def health(request: Request) -> JSONResponse:
        return JSONResponse(service.health())

    async def model(request: Request) -> JSONResponse:
        return JSONResponse(service.model())

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        status = getattr(exc, "status_code", 500)
        if status == 404:
            return error(404, f"no endpoint {request.url.path}; endpoints: "
                              f"{', '.join(service.model()['endpoints'])}")
        if status == 405:
            return error(405, f"{request.method} is not allowed on {request.url.path}")
        return error(status, str(getattr(exc, "detail", exc)))

    async def server_error(request: Request, exc: Exception) -> JSONResponse:
        return error(500, f"internal error: {type(exc).__name__}: {exc}")

    routes = [Route("/health", health, methods=["GET"]),
              Route("/model", model, methods=["GET"])]
    if isinstance(service, KgService):  # a knowledge-graph bundle: queries of names
        routes.append(Route("/complete", post(service.complete), methods=["POST"]))
    else:
        routes += [
            Route("/predict/nodes", post(service.predict_nodes), methods=["POST"]),
            Route("/predict/subgraph", post(service.predict_subgraph), methods=["POST"]),
            Route("/score/pairs", post(service.score_pairs), methods=["POST"]),
            Route("/predict/graphs", post(service.predict_graphs), methods=["POST"]),
            Route("/predict/graphs/new", post(service.predict_new_graphs), methods=["POST"])]
    return Starlette(routes=routes, exception_handlers={HTTPException: http_error,
                                                        Exception: server_error})
