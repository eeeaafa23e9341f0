"""JSON shapes of facts, shared by the CLI's ``--json`` output and the HTTP API.

Documented in docs/facts.md; fields are only ever added. Times are RFC 3339 UTC.
"""

from __future__ import annotations

from typing import Any

from fleetmem.core.facts import Tally
from fleetmem.service.fact_results import (
    EditResult,
    FactDetail,
    FactPage,
    FactRecall,
    FactsBlock,
    ForgetAllResult,
    ForgetResult,
    History,
    NearDuplicate,
    ProposalResult,
    SearchResult,
    VoteResult,
    VoteSummary,
    WriteResult,
)
from fleetmem.service.fact_tidy import TidyUp
from fleetmem.service.records.facts import Fact, FactExposure, FactProvenance, FactVote, KeptApart
from fleetmem.surfaces.views import iso


def fact_view(row: Fact) -> dict[str, Any]:
    return {
        "id": row.id,
        "body": row.body,
        "kind": row.kind,
        "scope": row.scope,
        "status": row.status,
        "pinned": row.pinned,
        "origin": row.origin,
        "author": row.author,
        "run_id": row.run_id,
        "conversation": row.conversation,
        "source": row.source,
        "revision": row.revision,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
        "confirmed_at": iso(row.confirmed_at),
        "forgotten_at": iso(row.forgotten_at),
        "merged_into": row.merged_into,
    }


def provenance_line(origin: str, author: str, run_id: str | None) -> str:
    """Where a fact came from, as the list shows it (seed 003 FR-17, S14)."""
    if origin == "agent":
        return f"Proposed by {author} during run {run_id}" if run_id else f"Proposed by {author}"
    if origin == "tidy-up":
        return "Tidy-up"
    return f"{author} (you)" if origin == "human" else author


def _tally(t: Tally) -> dict[str, int]:
    return {"runs": t.runs, "agents": t.agents, "repos": t.repos}


def _near(items: tuple[NearDuplicate, ...]) -> list[dict[str, Any]]:
    return [{"id": n.fact_id, "similarity": n.similarity, "body": n.body} for n in items]


def _provenance(p: FactProvenance) -> dict[str, Any]:
    return {
        "origin": p.origin,
        "author": p.author,
        "run_id": p.run_id,
        "conversation": p.conversation,
        "merged_from": p.merged_from,
        "at": iso(p.at),
    }


def write_view(result: WriteResult) -> dict[str, Any]:
    return {
        "fact": fact_view(result.fact),
        "created": result.created,
        "near_duplicates": _near(result.near_duplicates),
    }


def proposal_view(result: ProposalResult) -> dict[str, Any]:
    return {
        "outcome": result.outcome,
        "fact": None if result.fact is None else fact_view(result.fact),
        "reason": result.reason,
        "log_line": result.log_line,
        "near_duplicates": _near(result.near_duplicates),
    }


def detail_view(detail: FactDetail) -> dict[str, Any]:
    out = fact_view(detail.fact)
    out["provenance"] = [_provenance(p) for p in detail.provenance]
    out["confidence"] = detail.confidence
    out["support"] = _tally(detail.support)
    out["contradict"] = _tally(detail.contradict)
    out["runs_in_flight"] = detail.runs_in_flight
    return out


def page_view(page: FactPage) -> dict[str, Any]:
    return {
        "facts": [fact_view(r) for r in page.items],
        "next_cursor": page.next_cursor,
        "counts": dict(page.counts),
    }


def search_view(result: SearchResult) -> dict[str, Any]:
    return {
        "query": result.query,
        "degraded": result.degraded,
        "pending_vectors": result.pending_vectors,
        "hits": [
            {
                "fact": fact_view(h.fact),
                "score": h.score,
                "similarity": None if h.similarity is None else round(h.similarity, 4),
                "matched": list(h.matched),
            }
            for h in result.hits
        ],
    }


def edit_view(result: EditResult) -> dict[str, Any]:
    return {
        "fact": fact_view(result.fact),
        "changed": result.changed,
        "runs_in_flight": result.runs_in_flight,
    }


def forget_view(result: ForgetResult) -> dict[str, Any]:
    return {
        "fact": fact_view(result.fact),
        "already_forgotten": result.already_forgotten,
        "undo_until": iso(result.undo_until),
        "restorable_until": iso(result.restorable_until),
    }


def forget_all_view(result: ForgetAllResult) -> dict[str, Any]:
    return {
        "forgotten": result.forgotten,
        "untouched": result.untouched,
        "restorable_until": iso(result.restorable_until),
    }


def history_view(history: History) -> dict[str, Any]:
    return {
        "fact_id": history.fact_id,
        "entries": [
            {
                "seq": e.change.seq,
                "action": e.change.action,
                "actor_kind": e.change.actor_kind,
                "actor": e.change.actor,
                "run_id": e.change.run_id,
                "at": iso(e.change.at),
                "before": None if e.change.before is None else dict(e.change.before),
                "after": None if e.change.after is None else dict(e.change.after),
                "body_before": e.body_before,
                "body_after": e.body_after,
            }
            for e in history.entries
        ],
    }


def vote_view(v: FactVote) -> dict[str, Any]:
    return {
        "run_id": v.run_id,
        "agent": v.agent,
        "repo": v.repo,
        "stance": v.stance,
        "revision": v.revision,
        "counted": v.counted,
        "reason": v.reason,
        "note": v.note,
        "at": iso(v.at),
    }


def votes_view(summary: VoteSummary) -> dict[str, Any]:
    return {
        "confidence": summary.confidence,
        "support": _tally(summary.support),
        "contradict": _tally(summary.contradict),
        "votes": [vote_view(v) for v in summary.votes],
    }


def vote_result_view(result: VoteResult) -> dict[str, Any]:
    return {
        "vote": vote_view(result.vote),
        "duplicate": result.duplicate,
        "confidence": result.confidence,
        "status_change": result.status_change,
    }


def exposure_view(e: FactExposure) -> dict[str, Any]:
    return {
        "run_id": e.run_id,
        "fact_id": e.fact_id,
        "revision": e.revision,
        "surface": e.surface,
        "served_as": e.served_as,
        "call_id": e.call_id,
        "agent": e.agent,
        "repo": e.repo,
        "at": iso(e.at),
    }


def block_view(block: FactsBlock | None) -> dict[str, Any] | None:
    if block is None:
        return None
    return {
        "status": block.status,
        "text": block.text,
        "tokens": block.tokens,
        "pinned": block.pinned,
        "recalled": block.recalled,
        "dropped": block.dropped,
        "nothing_matched": block.nothing_matched,
        "degraded": block.degraded,
        "withheld": block.withheld,
        "facts": [
            {"id": i.fact_id, "revision": i.revision, "pinned": i.pinned, "score": i.score}
            for i in block.items
        ],
    }


def recall_view(result: FactRecall) -> dict[str, Any]:
    return {
        "degraded": result.degraded,
        "withheld": result.withheld,
        "items": [
            {
                "fact": fact_view(i.fact),
                "score": i.score,
                "confidence": i.confidence,
                "served_as": i.served_as,
            }
            for i in result.items
        ],
    }


def tidy_view(tidy: TidyUp) -> dict[str, Any]:
    return {
        "pairs": [
            {
                "keep": fact_view(p.keep),
                "fold": fact_view(p.fold),
                "similarity": p.similarity,
                "matched": p.matched,
            }
            for p in tidy.pairs
        ],
        "total": tidy.total,
        "degraded": tidy.degraded,
    }


def kept_pair_view(row: KeptApart) -> dict[str, Any]:
    return {"first": row.first_id, "second": row.second_id, "at": iso(row.at)}
