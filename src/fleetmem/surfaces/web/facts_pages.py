"""Memory ▸ Facts: the list, search by meaning, add, edit in place, forget with undo, pin, the
review queue, Forget all, and one fact's page (seed 003 §6.1 to §6.4; seed 004's review).

Every form works without JavaScript (post, then a redirect back to the list). The page's own
script posts the same forms asking for JSON and swaps in the ``/memory/facts/_list`` fragment.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from fleetmem.core.facts import (
    FORGET_ALL_PHRASE,
    FORGET_ALL_UNTOUCHED,
    KEPT,
    MAX_BODY_CHARS,
    MEMORY_FULL,
    PROPOSED,
    REVIEW_ACTIONS,
    UNDO_WINDOW_S,
)
from fleetmem.embed.health import EmbedderHealth, describe_embedder
from fleetmem.errors import FleetmemError, InvalidInput
from fleetmem.service.fact_base import local_user
from fleetmem.service.records.facts import Fact
from fleetmem.service.usage import runs_using
from fleetmem.surfaces import fact_views
from fleetmem.surfaces.web.base import (
    Web,
    WebRoute,
    back_to,
    call,
    redirect,
    wants_json,
    with_query,
)
from fleetmem.surfaces.web.render import render

PAGE_SIZE = 50
VIEWS: dict[str, tuple[str | None, bool | None]] = {
    # view -> (status for the service, pinned)
    "all": (None, None),
    "pinned": (None, True),
    "proposed": (PROPOSED, None),
    "forgotten": ("forgotten", None),
}
VIEW_COUNT = {"all": "live", "pinned": "pinned", "proposed": "proposed", "forgotten": "forgotten"}
STATUS_LABELS = {
    "proposed": "Proposed",
    "active": "Active",
    "evidence": "Evidence only",
    "restricted": "Restricted",
    "stale": "Stale",
    "suspect": "Suspect",
    "rejected": "Rejected",
    "merged": "Merged",
    "forgotten": "Forgotten",
}
REVIEW_LABELS = {
    "confirm": "Confirm",
    "evidence": "Evidence only",
    "restrict": "Restrict",
    "reject": "Reject",
    "stale": "Mark stale",
}
DONE = {
    "added": "Remembered. Every run started from now on can use it.",
    "saved": "Saved. Runs started from now on use the new wording.",
    "restored": "Restored. Agents can use it again from their next run.",
    "pinned": "Pinned: it goes into every run, ahead of recalled facts.",
    "unpinned": "Unpinned.",
    "reviewed": "Review recorded.",
    "scoped": "Scope changed. Runs started from now on see it there.",
    "forgot_all": "Every fact is forgotten. Agents start learning again immediately.",
}
HEADINGS = {
    "all": "All facts",
    "pinned": "Pinned: in every run, ahead of recalled facts",
    "proposed": "Proposed: waiting for your review",
    "forgotten": "Forgotten: restorable for 30 days",
}
TIDY_WHY = {
    "meaning": "These say nearly the same thing.",
    "words": "These use nearly the same words.",
}
TIDY_DONE = {
    "merged": "Merged. The fact you kept carries where both came from.",
    "kept": "Kept both. This pair will not be proposed again unless one of them is reworded.",
}
STARTER_PROMPT = (
    "Four things you keep getting wrong: … Store each one, then read it back so I can check "
    "the wording you used."
)
UNDO_TOAST = "Forgotten. Agents stop using it from their next run."


def in_flight_line(count: int) -> str:
    """Seed 003 S3: runs already holding the previous wording keep it."""
    if count <= 0:
        return ""
    verb = "holds" if count == 1 else "hold"
    return f"{count:,} run{'' if count == 1 else 's'} in flight still {verb} the previous version."


def origin_label(row: Fact, me: str) -> str:
    if row.origin == "human":
        return "You" if row.author == me else row.author
    if row.origin == "tidy-up":
        return "Tidy-up"
    return row.author


def scope_label(scope: str) -> str | None:
    if scope == "workspace":
        return None
    kind, _, name = scope.partition(":")
    return f"only {name}" if kind == "agent" else f"in {name}"


def scope_choice_label(scope: str) -> str:
    """How the scope picker names a scope: "every agent", "only research", "runs in REPO"."""
    kind, _, name = scope.partition(":")
    return {"agent": f"only {name}", "project": f"runs in {name}"}.get(kind, "every agent")


def fact_item(row: Fact, used: int, me: str, now: float) -> dict[str, Any]:
    return {
        "id": row.id,
        "body": row.body,
        "kind": row.kind,
        "status": row.status,
        "status_label": STATUS_LABELS.get(row.status, row.status),
        "pinned": row.pinned,
        "origin": row.origin,
        "who": origin_label(row, me),
        "author": row.author,
        "run_id": row.run_id,
        "scope": row.scope,
        "scope_label": scope_label(row.scope),
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "forgotten_at": row.forgotten_at,
        "restorable": row.status == "forgotten",
        "used": used,
        "reviewable": [a for a in REVIEW_LABELS if row.status in REVIEW_ACTIONS[a][0]],
        "can_pin": row.status == "active",
        "editable": row.status not in ("forgotten", "rejected", "merged"),
        "now": now,
    }


def word_only_note(health: EmbedderHealth) -> dict[str, str]:
    """Why a search fell back to exact words, and where to look: the cause, never a guess.

    Off by configuration, a local model that cannot load, and a remote model that did not
    answer are three different fixes; none of them is "add an AI provider".
    """
    if health.state == "off":
        return {
            "text": "meaning-based search is turned off ([model_api] embedding_model is empty).",
            "link": "Turn it on →",
        }
    if health.state == "degraded":
        fix = f" Fix: {health.fix}." if health.fix else ""
        return {
            "text": f"the offline embedder {health.model} cannot run: {health.reason}.{fix}",
            "link": "Details →",
        }
    return {
        "text": f"the embedding model {health.model} did not answer this search.",
        "link": "Details →",
    }


def list_context(web: Web, params: dict[str, str]) -> dict[str, Any]:
    """Everything the facts list shows for a query string (the page and its fragment)."""
    facts = web.app.facts
    view = params.get("view") or "all"
    if view not in VIEWS:
        raise InvalidInput("view", view, "must be one of " + ", ".join(VIEWS))
    status, pinned = VIEWS[view]
    query = (params.get("q") or "").strip()
    me = local_user().name
    now = time.time()
    degraded = None
    scores: dict[str, dict[str, Any]] = {}
    next_cursor = None
    order = params.get("order") or "newest"
    if query:
        result = facts.search(query, status=status)
        degraded = result.degraded
        hits = [h for h in result.hits if pinned is None or h.fact.pinned == pinned]
        rows = [h.fact for h in hits]
        scores = {
            h.fact.id: {"score": h.score, "matched": list(h.matched), "similarity": h.similarity}
            for h in hits
        }
        counts = facts.counts()
    elif order == "oldest":
        rows, counts = _oldest(web, status, pinned)
    else:
        page = facts.list(
            status=status, pinned=pinned, limit=PAGE_SIZE, cursor=params.get("cursor") or None
        )
        rows, counts, next_cursor = list(page.items), dict(page.counts), page.next_cursor
    used = runs_using(facts, [r.id for r in rows])
    kept = sum(counts.get(s, 0) for s in KEPT)
    return {
        "view": view,
        "query": query,
        "order": order,
        "items": [fact_item(r, used.get(r.id, 0), me, now) for r in rows],
        "scores": scores,
        "degraded": degraded,
        "search_note": word_only_note(describe_embedder(web.app.embedder, probe=False))
        if degraded
        else None,
        "counts": counts,
        "total": counts.get(VIEW_COUNT[view], 0),
        "next_cursor": next_cursor,
        "cursor": params.get("cursor") or "",
        "over_cap": kept >= facts.limits.kept,
        "memory_full": MEMORY_FULL,
        "kept": kept,
        "edit": params.get("edit") or "",
        "starter_prompt": STARTER_PROMPT,
        "self_url": with_query(
            "/memory/facts",
            view=None if view == "all" else view,
            q=query,
            order=None if order == "newest" else order,
        ),
        "done_code": params.get("done") or "",
        "headings": HEADINGS,
    }


def _oldest(web: Web, status: str | None, pinned: bool | None) -> tuple[list[Fact], Any]:
    """The oldest page: the list is newest first, so walk it to its end (at most 2,200 rows)."""
    rows: list[Fact] = []
    cursor = None
    while True:
        page = web.app.facts.list(status=status, pinned=pinned, limit=500, cursor=cursor)
        rows.extend(page.items)
        cursor = page.next_cursor
        if cursor is None:
            return list(reversed(rows))[:PAGE_SIZE], dict(page.counts)


def agent_choices(web: Web) -> list[str]:
    return list(web.app.files.listing().agents)


def scope_choices(web: Web, current: str) -> list[dict[str, Any]]:
    """Who a fact can be for: every agent, each known agent, runs in each known repository
    (the fact's own scope always among them)."""
    listing = web.app.files.listing()
    scopes = [
        "workspace",
        *(f"agent:{a}" for a in listing.agents),
        *(f"project:{r}" for r in listing.notebooks),
    ]
    if current not in scopes:
        scopes.append(current)
    return [{"value": s, "label": scope_choice_label(s), "current": s == current} for s in scopes]


def routes(web: Web) -> APIRouter:
    router = APIRouter(route_class=WebRoute, include_in_schema=False)

    def page_context(request: Request) -> dict[str, Any]:
        params = dict(request.query_params)
        ctx = list_context(web, params)
        undo = params.get("undo")
        toast = None
        if undo:
            try:
                row = web.app.facts.get(undo).fact
            except FleetmemError:  # an unknown id just shows no toast
                row = None
            if row is not None and row.status == "forgotten" and row.forgotten_at is not None:
                left = row.forgotten_at + UNDO_WINDOW_S - time.time()
                if left > 0:
                    toast = {"id": row.id, "text": UNDO_TOAST, "seconds": round(left)}
        done = params.get("done") or ""
        ctx.update(
            toast=toast,
            done=DONE.get(done, ""),
            done_code=done,
            in_flight=in_flight_line(_int(params.get("inflight"))),
            focus=params.get("focus") or "",
            add_open=params.get("add") == "1",
            add_body=params.get("body") or "",
            add_error="",
            agents=agent_choices(web),
            max_chars=MAX_BODY_CHARS,
            forget_all={
                "phrase": FORGET_ALL_PHRASE,
                "untouched": FORGET_ALL_UNTOUCHED,
                "kept": ctx["kept"],
                "proposed": ctx["counts"].get("proposed", 0),
            },
        )
        return ctx

    @router.get("/memory")
    @router.get("/memory/facts")
    def facts_page(request: Request) -> Response:
        session = web.session(request)
        ctx = page_context(request)
        return web.page(request, session, "facts.html", "facts:" + ctx["view"], ctx)

    @router.get("/memory/facts/_list")
    def facts_fragment(request: Request) -> Response:
        session = web.session(request)
        ctx = list_context(web, dict(request.query_params))
        ctx.update(csrf=session.csrf, focus="")
        return render(request, "facts_list.html", ctx)

    @router.post("/memory/facts")
    async def add(request: Request) -> Response:
        _, form = await web.form(request)
        result = await call(
            lambda: web.app.facts.add(
                form.get("body", ""),
                kind=form.get("kind") or "note",
                scope=form.get("scope") or "workspace",
                pin=form.get("pin") == "1",
                actor=local_user(),
            )
        )
        if wants_json(request):
            return JSONResponse(fact_views.write_view(result), status_code=201)
        return redirect(back_to(request, "/memory/facts", done="added", focus=result.fact.id))

    @router.post("/memory/facts/{fact_id}/edit")
    async def edit(fact_id: str, request: Request) -> Response:
        _, form = await web.form(request)
        result = await call(
            lambda: web.app.facts.edit(fact_id, form.get("body", ""), actor=local_user())
        )
        if wants_json(request):
            out = fact_views.edit_view(result)
            out["in_flight_line"] = in_flight_line(result.runs_in_flight)
            return JSONResponse(out)
        url = back_to(
            request, "/memory/facts", done="saved", inflight=result.runs_in_flight, focus=fact_id
        )
        return redirect(url)

    @router.post("/memory/facts/{fact_id}/forget")
    async def forget(fact_id: str, request: Request) -> Response:
        await web.form(request)
        result = await call(lambda: web.app.facts.forget(fact_id, actor=local_user()))
        if wants_json(request):
            out = fact_views.forget_view(result)
            out["toast"] = UNDO_TOAST
            out["seconds"] = UNDO_WINDOW_S
            return JSONResponse(out)
        return redirect(back_to(request, "/memory/facts", undo=fact_id))

    @router.post("/memory/facts/{fact_id}/restore")
    async def restore(fact_id: str, request: Request) -> Response:
        await web.form(request)
        row = await call(lambda: web.app.facts.restore(fact_id, actor=local_user()))
        if wants_json(request):
            return JSONResponse({"fact": fact_views.fact_view(row)})
        return redirect(back_to(request, "/memory/facts", done="restored", focus=fact_id))

    @router.post("/memory/facts/{fact_id}/pin")
    async def pin(fact_id: str, request: Request) -> Response:
        _, form = await web.form(request)
        if form.get("pinned") == "0":
            row = await call(lambda: web.app.facts.unpin(fact_id, actor=local_user()))
        else:
            row = await call(lambda: web.app.facts.pin(fact_id, actor=local_user()))
        if wants_json(request):
            return JSONResponse({"fact": fact_views.fact_view(row)})
        code = "pinned" if row.pinned else "unpinned"
        return redirect(back_to(request, "/memory/facts", done=code, focus=fact_id))

    @router.post("/memory/facts/{fact_id}/review")
    async def review(fact_id: str, request: Request) -> Response:
        _, form = await web.form(request)
        into = (form.get("into_id") or form.get("into") or "").strip() or None
        action = form.get("action", "")
        row = await call(
            lambda: web.app.facts.review(fact_id, action, into=into, actor=local_user())
        )
        if wants_json(request):
            return JSONResponse({"fact": fact_views.fact_view(row)})
        return redirect(back_to(request, "/memory/facts", done="reviewed"))

    @router.post("/memory/facts/{fact_id}/scope")
    async def set_scope(fact_id: str, request: Request) -> Response:
        _, form = await web.form(request)
        other = (form.get("agent") or "").strip()
        scope = f"agent:{other}" if other else form.get("scope", "")
        row = await call(lambda: web.app.facts.set_scope(fact_id, scope, actor=local_user()))
        if wants_json(request):
            return JSONResponse({"fact": fact_views.fact_view(row)})
        return redirect(back_to(request, f"/memory/facts/{fact_id}", done="scoped"))

    @router.get("/memory/facts/tidy-up")
    def tidy_up_page(request: Request) -> Response:
        session = web.session(request)
        tidy = web.app.facts.tidy_up()
        me, now = local_user().name, time.time()
        ids = [r.id for p in tidy.pairs for r in (p.keep, p.fold)]
        used = runs_using(web.app.facts, ids) if ids else {}
        ctx = {
            "pairs": [
                {
                    "keep": fact_item(p.keep, used.get(p.keep.id, 0), me, now),
                    "fold": fact_item(p.fold, used.get(p.fold.id, 0), me, now),
                    "why": TIDY_WHY[p.matched],
                }
                for p in tidy.pairs
            ],
            "total": tidy.total,
            "words_note": word_only_note(describe_embedder(web.app.embedder, probe=False))
            if tidy.degraded is not None
            else None,
            "done": TIDY_DONE.get(request.query_params.get("done") or "", ""),
        }
        return web.page(request, session, "tidy_up.html", "facts:tidy", ctx)

    @router.post("/memory/facts/tidy-up/merge")
    async def tidy_merge(request: Request) -> Response:
        _, form = await web.form(request)
        fold, keep = form.get("fold", ""), form.get("keep", "")
        row = await call(lambda: web.app.facts.review(fold, "merge", into=keep, actor=local_user()))
        if wants_json(request):
            return JSONResponse({"fact": fact_views.fact_view(row)})
        return redirect("/memory/facts/tidy-up?done=merged")

    @router.post("/memory/facts/tidy-up/keep-both")
    async def tidy_keep_both(request: Request) -> Response:
        _, form = await web.form(request)
        first, second = form.get("first", ""), form.get("second", "")
        row = await call(lambda: web.app.facts.keep_both(first, second, actor=local_user()))
        if wants_json(request):
            return JSONResponse(fact_views.kept_pair_view(row))
        return redirect("/memory/facts/tidy-up?done=kept")

    @router.get("/memory/facts/forget-all")
    def forget_all_page(request: Request) -> Response:
        session = web.session(request)
        counts = web.app.facts.counts()
        ctx = {
            "phrase": FORGET_ALL_PHRASE,
            "untouched": FORGET_ALL_UNTOUCHED,
            "kept": sum(counts.get(s, 0) for s in KEPT),
            "proposed": counts.get("proposed", 0),
            "error": "",
        }
        return web.page(request, session, "forget_all.html", "facts:all", ctx)

    @router.post("/memory/facts/forget-all")
    async def forget_all(request: Request) -> Response:
        _, form = await web.form(request)
        result = await call(
            lambda: web.app.facts.forget_all(form.get("confirm", ""), actor=local_user())
        )
        if wants_json(request):
            return JSONResponse(fact_views.forget_all_view(result))
        return redirect(f"/memory/facts?done=forgot_all&n={result.forgotten}")

    @router.get("/memory/facts/{fact_id}")
    def fact_page(fact_id: str, request: Request) -> Response:
        session = web.session(request)
        detail = web.app.facts.get(fact_id)
        row = detail.fact
        history = web.app.facts.history(fact_id)
        votes = web.app.facts.votes(fact_id)
        candidates = []
        if row.status in REVIEW_ACTIONS["merge"][0]:
            found = web.app.facts.search(row.body[:512], scope=row.scope, status="all")
            candidates = [
                h.fact for h in found.hits if h.fact.id != row.id and h.fact.status in KEPT
            ][:5]
        used = runs_using(web.app.facts, [row.id])[row.id]
        ctx = {
            "fact": fact_item(row, used, local_user().name, time.time()),
            "detail": detail,
            "provenance": [
                fact_views.provenance_line(p.origin, p.author, p.run_id) for p in detail.provenance
            ],
            "history": history.entries,
            "votes": votes,
            "candidates": candidates,
            "in_flight": in_flight_line(detail.runs_in_flight),
            "edit_open": request.query_params.get("edit") in ("1", row.id),
            "scope_choices": scope_choices(web, row.scope),
            "done": DONE.get(request.query_params.get("done") or "", ""),
            "max_chars": MAX_BODY_CHARS,
        }
        return web.page(request, session, "fact.html", "facts:all", ctx)

    return router


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0
