"""API routes for facts: the same FactService methods as ``fleetmem facts``.

Writes are made as the daemon's user (the loopback API has no per-user identity until API
tokens exist). Errors follow the API's shape: 400 bad input (naming the field), 404 unknown
fact (another workspace's fact included), 409 duplicate / not allowed in its status / a full
limit (with ``existing`` naming the other fact), 429 rate limited (with ``Retry-After``).
Documented in docs/facts.md.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from fleetmem.core.facts import FORGET_ALL_PHRASE, FORGET_ALL_UNTOUCHED, FORGOTTEN
from fleetmem.errors import InvalidInput, NotFound
from fleetmem.service.bootstrap import App
from fleetmem.service.fact_base import local_user
from fleetmem.surfaces import fact_views as fv
from fleetmem.surfaces.http import schemas_facts as sf
from fleetmem.surfaces.http.bodies import json_object
from fleetmem.surfaces.http.schemas import documented
from fleetmem.surfaces.http.tenancy import Facts

_MAX_BODY = 64 * 1024


def routes(app: App) -> APIRouter:
    api = APIRouter()

    @api.get("/api/v1/facts", **documented(sf.FactPage))
    def list_facts(
        facts: Facts,
        status: str | None = None,
        scope: str | None = None,
        pinned: bool | None = None,
        limit: int = Query(50),
        cursor: str | None = None,
    ) -> dict[str, Any]:
        page = facts.list(status=status, scope=scope, pinned=pinned, limit=limit, cursor=cursor)
        return fv.page_view(page)

    @api.get("/api/v1/facts/counts", **documented(sf.FactCounts))
    def counts(facts: Facts) -> dict[str, int]:
        return facts.counts()

    @api.get("/api/v1/facts/search", **documented(sf.FactSearch, 429))
    def search(
        facts: Facts,
        q: str = Query(...),
        status: str | None = None,
        scope: str | None = None,
        limit: int = Query(50),
    ) -> dict[str, Any]:
        return fv.search_view(facts.search(q, status=status, scope=scope, limit=limit))

    @api.get("/api/v1/facts/forget-all", **documented(sf.ForgetAllPreview))
    def forget_all_preview(facts: Facts) -> dict[str, Any]:
        """What Forget all would do, before it is confirmed."""
        return {
            "live": facts.counts()["live"],
            "untouched": FORGET_ALL_UNTOUCHED,
            "confirm": FORGET_ALL_PHRASE,
        }

    @api.post(
        "/api/v1/facts/forget-all", **documented(sf.ForgetAllDone, 409, 429, body=sf.ForgetAllIn)
    )
    async def forget_all(facts: Facts, request: Request) -> dict[str, Any]:
        body = await _json_object(request, {"confirm"})
        result = await run_in_threadpool(
            facts.forget_all, _text(body, "confirm", required=True), actor=local_user()
        )
        return fv.forget_all_view(result)

    @api.get("/api/v1/facts/tidy-up", **documented(sf.TidyUp))
    def tidy_up(facts: Facts, limit: int = Query(50)) -> dict[str, Any]:
        """Proposed merges: pairs of active facts of one scope that say nearly the same."""
        return fv.tidy_view(facts.tidy_up(limit=limit))

    @api.post(
        "/api/v1/facts/tidy-up/keep-both",
        **documented(sf.KeptPair, 404, 409, 429, body=sf.KeepBothIn),
    )
    async def keep_both(facts: Facts, request: Request) -> dict[str, Any]:
        """Keep both facts of a proposed merge: the pair is not proposed again."""
        body = await _json_object(request, {"first", "second"})
        first = _text(body, "first", required=True)
        second = _text(body, "second", required=True)
        row = await run_in_threadpool(lambda: facts.keep_both(first, second, actor=local_user()))
        return fv.kept_pair_view(row)

    @api.get("/api/v1/facts/offered", **documented(sf.OfferedFacts, 404))
    def offered(facts: Facts, run_id: str = Query(...)) -> dict[str, Any]:
        return {
            "run_id": run_id,
            "offered": [fv.exposure_view(e) for e in facts.offered_to_run(run_id)],
        }

    @api.post(
        "/api/v1/facts",
        status_code=201,
        **documented(
            sf.FactWritten, 409, 429, status=201, also={200: sf.FactWritten}, body=sf.FactIn
        ),
    )
    async def add(facts: Facts, request: Request) -> JSONResponse:
        body = await _json_object(
            request, {"body", "kind", "scope", "pin", "source", "idempotency_key"}
        )
        key = _text(body, "idempotency_key")
        if key is None:
            key = request.headers.get("idempotency-key")
        pin = body.get("pin", False)
        if not isinstance(pin, bool):
            raise InvalidInput("pin", pin, "must be true or false")
        result = await run_in_threadpool(
            lambda: facts.add(
                _text(body, "body", required=True),
                kind=_or(_text(body, "kind"), "note"),
                scope=_or(_text(body, "scope"), "workspace"),
                pin=pin,
                source=_text(body, "source"),
                actor=local_user(),
                idempotency_key=key,
            )
        )
        return JSONResponse(fv.write_view(result), status_code=201 if result.created else 200)

    @api.get("/api/v1/facts/{fact_id}", **documented(sf.FactDetail, 404))
    def show(facts: Facts, fact_id: str) -> dict[str, Any]:
        detail = facts.get(fact_id)
        _refuse_forgotten(fact_id, detail.fact.status)
        return fv.detail_view(detail)

    @api.patch(
        "/api/v1/facts/{fact_id}", **documented(sf.FactEdited, 404, 409, 429, body=sf.FactEditIn)
    )
    async def edit(facts: Facts, fact_id: str, request: Request) -> dict[str, Any]:
        body = await _json_object(request, {"body"})
        text = _text(body, "body", required=True)

        def edit_live() -> Any:
            _refuse_forgotten(fact_id, facts.status(fact_id))
            return facts.edit(fact_id, text, actor=local_user())

        return fv.edit_view(await run_in_threadpool(edit_live))

    @api.delete("/api/v1/facts/{fact_id}", **documented(sf.FactForgotten, 404, 409, 429))
    def forget(facts: Facts, fact_id: str) -> dict[str, Any]:
        return fv.forget_view(facts.forget(fact_id, actor=local_user()))

    @api.post("/api/v1/facts/{fact_id}/restore", **documented(sf.Fact, 404, 409, 429))
    def restore(facts: Facts, fact_id: str) -> dict[str, Any]:
        return fv.fact_view(facts.restore(fact_id, actor=local_user()))

    @api.post("/api/v1/facts/{fact_id}/pin", **documented(sf.Fact, 404, 409, 429))
    def pin(facts: Facts, fact_id: str) -> dict[str, Any]:
        return fv.fact_view(facts.pin(fact_id, actor=local_user()))

    @api.delete("/api/v1/facts/{fact_id}/pin", **documented(sf.Fact, 404, 409, 429))
    def unpin(facts: Facts, fact_id: str) -> dict[str, Any]:
        return fv.fact_view(facts.unpin(fact_id, actor=local_user()))

    @api.put("/api/v1/facts/{fact_id}/scope", **documented(sf.Fact, 404, 409, 429, body=sf.ScopeIn))
    async def set_scope(facts: Facts, fact_id: str, request: Request) -> dict[str, Any]:
        """Who the fact is for: every agent, runs in one repository, or one agent."""
        body = await _json_object(request, {"scope"})
        scope = _text(body, "scope", required=True)

        def scope_live() -> Any:
            _refuse_forgotten(fact_id, facts.status(fact_id))
            return facts.set_scope(fact_id, scope, actor=local_user())

        return fv.fact_view(await run_in_threadpool(scope_live))

    @api.post(
        "/api/v1/facts/{fact_id}/review",
        **documented(sf.Fact, 404, 409, 429, body=sf.ReviewIn),
    )
    async def review(facts: Facts, fact_id: str, request: Request) -> dict[str, Any]:
        body = await _json_object(request, {"action", "into"})
        action = _text(body, "action", required=True)
        into = _text(body, "into")
        row = await run_in_threadpool(
            lambda: facts.review(fact_id, action, into=into, actor=local_user())
        )
        return fv.fact_view(row)

    @api.get("/api/v1/facts/{fact_id}/history", **documented(sf.FactHistory, 404))
    def history(facts: Facts, fact_id: str) -> dict[str, Any]:
        _refuse_forgotten(fact_id, facts.status(fact_id))
        return fv.history_view(facts.history(fact_id))

    @api.get("/api/v1/facts/{fact_id}/votes", **documented(sf.FactVotes, 404))
    def votes(facts: Facts, fact_id: str) -> dict[str, Any]:
        _refuse_forgotten(fact_id, facts.status(fact_id))
        return fv.votes_view(facts.votes(fact_id))

    return api


def _or(value: str | None, default: str) -> str:
    """An absent or null field takes its default; an empty string is a value (and refused)."""
    return default if value is None else value


def _refuse_forgotten(fact_id: str, status: str) -> None:
    """A forgotten fact is deleted as far as the API's reads go (404, as HTTP expects after
    a DELETE); only ``POST .../restore`` still reaches it within its 30 days."""
    if status == FORGOTTEN:
        raise NotFound(
            "fact is forgotten; POST /api/v1/facts/{id}/restore brings it back", fact=fact_id
        )


async def _json_object(request: Request, known: set[str]) -> dict[str, Any]:
    return await json_object(request, max_bytes=_MAX_BODY, known=known)


def _text(body: dict[str, Any], key: str, *, required: bool = False) -> Any:
    value = body.get(key)
    if value is None:
        if required:
            raise InvalidInput(key, None, "is required")
        return None
    if not isinstance(value, str):
        raise InvalidInput(key, type(value).__name__, "must be a string")
    return value
