"""Helpers shared by the OpenAPI tests: send a schemathesis case through the in-process
client, and the control token the daemon keeps in its home."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import schemathesis
from fastapi.testclient import TestClient
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)


@schemathesis.check
def bad_input_names_its_field(ctx: Any, response: Any, case: schemathesis.Case) -> None:
    """A 400 or 422 says which field (or parameter) was wrong, as the API promises."""
    if response.status_code in (400, 422):
        error = response.json().get("error") or {}
        if not error.get("field"):
            raise AssertionError(f"{response.status_code} without a field: {error}")


#: What every answer must satisfy: no 5xx, a documented status, content type and body, and
#: bad input refused with the field it concerns.
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    bad_input_names_its_field,
]
#: The request parts schemathesis prepares that the in-process client takes.
_PASSED = {"headers", "params", "json", "data", "content", "files"}


def auth_headers(home: Path) -> dict[str, str]:
    """``Authorization: Bearer`` with the home's control token, once the daemon made one."""
    token_file = home / "control.token"
    if not token_file.exists():
        return {}
    return {"Authorization": f"Bearer {token_file.read_text(encoding='utf-8').strip()}"}


def send(client: TestClient, case: schemathesis.Case, headers: dict[str, str]) -> httpx.Response:
    request: dict[str, Any] = case.as_transport_kwargs(
        base_url=str(client.base_url), headers=headers
    )
    if isinstance(request.get("data"), str | bytes):  # a raw body: httpx calls it content
        request["content"] = request.pop("data")
    return client.request(
        request.pop("method"),
        request.pop("url"),
        **{k: v for k, v in request.items() if k in _PASSED},
    )
