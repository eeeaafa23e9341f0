"""The /api/v1 contract as OpenAPI: error shapes and the helper each route declares itself with.

The handlers parse their JSON bodies themselves (so a bad body is a 400 naming the field, in
the API's own error shape), which leaves FastAPI nothing to infer a request schema from; and
they return plain dicts built by the shared view functions. :func:`documented` gives a route
its request body schema and its response models for the OpenAPI document only: the handlers'
behaviour is unchanged, and ``tests/surfaces/test_schemathesis.py`` checks what the server
really sends against these declarations.

Response models forbid unknown fields on purpose: when a view gains a field, the property
run fails until the model here says so, so the document cannot silently fall behind.
"""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, ConfigDict, Field

from fleetmem.core.redact import VISIBLE_EXCEPT

#: Text with at least one character that is neither whitespace nor removed at the ingress
#: boundary (a query or a fact body of blanks and zero-width spaces is empty once cleaned).
#: The class holds the removed characters themselves; JSON escapes them in the document, and
#: any regex engine reads them.
VISIBLE_TEXT = "[^\\s" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in VISIBLE_EXCEPT) + "]"

#: Where the document is served besides FastAPI's own ``/openapi.json``.
OPENAPI_PATH = "/api/v1/openapi.json"

#: Schemas the request bodies refer to, added to ``components.schemas`` when the document is
#: built (FastAPI only collects the models of responses and typed parameters itself).
_BODY_COMPONENTS: dict[str, dict[str, Any]] = {}
_REF = "#/components/schemas/{model}"


class Strict(BaseModel):
    """A response object whose every field is declared."""

    model_config = ConfigDict(extra="forbid")


class Open(BaseModel):
    """An object whose keys are data (counts by name, a provider's self-description)."""

    model_config = ConfigDict(extra="allow")


class ErrorDetail(Open):
    """Extra keys appear on some errors: a stale save's revisions, for instance."""

    code: str = Field(description="stable, machine-readable: invalid_input, unknown_fact, ...")
    message: str = Field(description="names the field and the value where there is one")
    summary: str | None = Field(
        None, description="the same for a person: no internal parameters (the web UI shows it)"
    )
    field: str | None = Field(None, description="the request field at fault")
    existing: str | None = Field(None, description="the fact a duplicate or conflict points at")
    retry_after: float | None = Field(None, description="seconds to wait (429 only)")


class ErrorResponse(Strict):
    error: ErrorDetail


_ERROR_TEXT: dict[int, str] = {
    400: "Bad input: the message names the field and the value; nothing was stored",
    401: "No API token, or an unknown one (send Authorization: Bearer <token>)",
    403: "The token's tier may not do this, or the run token is not attributed",
    404: "No such object in this workspace",
    409: "Conflict: a duplicate, a state that does not allow this, or a full limit",
    413: "The request body is too large",
    422: "A path or query parameter has the wrong type",
    429: "Rate limited: retry after the Retry-After header's seconds",
    503: "The store is busy or unavailable",
}

#: Every /api/v1 operation may answer these: bad parameters, missing or weak credentials, a
#: locked store.
COMMON_ERRORS = (400, 401, 403, 422, 503)


def documented(
    ok: type[BaseModel] | None,
    *errors: int,
    status: int = 200,
    also: dict[int, type[BaseModel]] | None = None,
    body: type[BaseModel] | dict[str, Any] | None = None,
    body_required: bool = True,
    summary: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments for a route decorator declaring its contract.

    ``ok`` is the model of the ``status`` answer; ``errors`` the error statuses beyond
    :data:`COMMON_ERRORS`; ``also`` other success statuses (200 for a duplicate POST, say) or
    error statuses with their own shape; ``body`` the JSON request body (a model, or a JSON
    schema of its own).
    """
    responses: dict[int | str, dict[str, Any]] = {}
    if ok is not None:
        responses[status] = {"model": ok, "description": "Success"}
    for code, model in (also or {}).items():
        responses[code] = {"model": model, "description": _ERROR_TEXT.get(code, "Success")}
    for code in sorted({*COMMON_ERRORS, *errors}):
        responses.setdefault(code, {"model": ErrorResponse, "description": _ERROR_TEXT[code]})
    out: dict[str, Any] = {"response_model": None, "responses": responses}
    if summary:
        out["summary"] = summary
    if body is not None:
        out["openapi_extra"] = {
            "requestBody": {
                "required": body_required,
                "content": {"application/json": {"schema": _body_schema(body)}},
            }
        }
    return out


def _body_schema(body: type[BaseModel] | dict[str, Any]) -> dict[str, Any]:
    if isinstance(body, dict):
        return body
    schema = body.model_json_schema(ref_template=_REF)
    for name, sub in schema.pop("$defs", {}).items():
        _BODY_COMPONENTS[name] = sub
    _BODY_COMPONENTS[body.__name__] = schema
    return {"$ref": _REF.format(model=body.__name__)}


def run_record_schema() -> dict[str, Any]:
    """The run-record JSON schema (docs/run-record.md), its ``$defs`` moved to components."""
    text = resources.files("fleetmem.schemas").joinpath("run-record.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    defs: dict[str, Any] = schema.pop("$defs", {})
    for key in ("$schema", "$id"):
        schema.pop(key, None)

    def prefixed(name: str) -> str:
        return f"RunRecord_{name}"

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: rewrite(v) for k, v in node.items()}
            ref = out.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                out["$ref"] = _REF.format(model=prefixed(ref.removeprefix("#/$defs/")))
            return out
        if isinstance(node, list):
            return [rewrite(v) for v in node]
        return node

    # The record's own schema checks the shape of a time; the service also reads it as a
    # real date (no 2026-02-30), which JSON Schema says with its date-time format.
    if "timestamp" in defs:
        defs["moment"] = {**defs["timestamp"], "format": "date-time"}
        for key in ("started_at", "ended_at"):
            if schema.get("properties", {}).get(key) == {"$ref": "#/$defs/timestamp"}:
                schema["properties"][key] = {"$ref": "#/$defs/moment"}
    for name, sub in defs.items():
        _BODY_COMPONENTS[prefixed(name)] = rewrite(sub)
    _BODY_COMPONENTS["RunRecord"] = rewrite(schema)
    return {"$ref": _REF.format(model="RunRecord")}


def install_openapi(api: FastAPI) -> None:
    """Build the document once with the request-body components merged in, and serve it at
    :data:`OPENAPI_PATH` as well as FastAPI's ``/openapi.json``."""

    def build() -> dict[str, Any]:
        if api.openapi_schema is None:
            document = get_openapi(
                title=api.title,
                version=api.version,
                description="fleetmem's JSON API. Errors are "
                '`{"error": {"code", "message", "field"}}`; see docs/http-api.md.',
                routes=api.routes,
            )
            schemas = document.setdefault("components", {}).setdefault("schemas", {})
            for name, schema in _BODY_COMPONENTS.items():
                schemas.setdefault(name, copy.deepcopy(schema))
            document["components"].setdefault("securitySchemes", {})["bearer"] = {
                "type": "http",
                "scheme": "bearer",
                "description": "an API token (control.token in $FLEETMEM_HOME, or minted)",
            }
            document["security"] = [{"bearer": []}]
            from fleetmem.surfaces.http.contract import constrain

            constrain(document)
            api.openapi_schema = document
        return api.openapi_schema

    api.openapi = build  # type: ignore[method-assign]

    @api.get(OPENAPI_PATH, include_in_schema=False)
    def openapi_document() -> dict[str, Any]:
        return build()


def validation_error(exc: Any) -> dict[str, Any]:
    """FastAPI's own parameter errors (a query ``limit`` that is not a number, say), in the
    API's error shape: the first problem, naming its field and value."""
    problems = exc.errors() if hasattr(exc, "errors") else []
    first = problems[0] if problems else {}
    loc = [str(p) for p in first.get("loc", ()) if p not in ("query", "path", "body", "header")]
    field = ".".join(loc) or "<request>"
    value = first.get("input")
    shown = "missing" if first.get("type") == "missing" else json.dumps(value, default=str)[:60]
    reason = str(first.get("msg", "is not valid"))
    return {
        "error": {
            "code": "invalid_input",
            "message": f"{field} = {shown}: {reason}",
            "field": field,
        }
    }
