"""Reading request bodies: bounded, strict JSON, one policy for every /api/v1 route.

A body is read at most ``max_bytes`` plus one byte, so an oversized request is refused
without holding it in memory, then parsed by :func:`fleetmem.core.strictjson.loads` with
the network policy: a leading byte order mark is refused, and so are NaN, infinities, lone
surrogates, repeated keys and nesting past the limit. Every refusal is an
:class:`~fleetmem.errors.InvalidInput` (HTTP 400) naming the field; nothing was stored.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request

from fleetmem.core import strictjson
from fleetmem.errors import InvalidInput

#: The default bound of a JSON body (strict JSON's own); routes that take bigger documents
#: name their own.
MAX_BODY_BYTES = strictjson.MAX_BYTES


async def read_body(request: Request, max_bytes: int = MAX_BODY_BYTES) -> bytes:
    """The raw body, refused as soon as it passes ``max_bytes``."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise _too_large(int(declared), max_bytes)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise _too_large(size, max_bytes)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(size: int, limit: int) -> InvalidInput:
    return InvalidInput(
        "<body>", f"<{size:,} bytes>", f"is larger than the limit of {limit:,} bytes"
    )


async def json_object(
    request: Request,
    *,
    max_bytes: int = MAX_BODY_BYTES,
    known: set[str] | frozenset[str] | None = None,
) -> dict[str, Any]:
    """The body as a JSON object (an empty body is ``{}``); with ``known``, any other key is
    refused naming it."""
    raw = await read_body(request, max_bytes)
    if not raw.strip():
        return {}
    data = strictjson.loads(raw, max_bytes=max_bytes)
    if not isinstance(data, dict):
        raise InvalidInput("<body>", type(data).__name__, "must be a JSON object")
    if known is not None:
        for key in data:
            if key not in known:
                raise InvalidInput(key, "<not shown>", "is not a known field")
    return data


def whole_number(value: Any) -> Any:
    """``value`` with a whole-number float (``13.0``) as the integer it spells: JSON does not
    tell 13 from 13.0, and JSON Schema calls both integers. Anything else is left as it is
    for the caller's own check."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
