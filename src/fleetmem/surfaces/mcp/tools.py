"""The seven agent tools: argument schemas, and the JSON each returns.

Bounds are stated in each schema for the model to read, and checked by the services (so the
MCP tools, the CLI and the HTTP API refuse the same inputs with the same messages). Types are
checked by the SDK; either way the error text starts with ``invalid_input:``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp_types import ToolAnnotations
from pydantic import Field

from fleetmem.core.wrapper import LABEL_WITHHELD, is_safe_value
from fleetmem.service.agent_memory import RecallAnswer, ServedBriefing
from fleetmem.service.fact_results import ProposalResult, VoteResult
from fleetmem.service.fencing import REFERENCE_NOTICE, fenced
from fleetmem.service.runs import Caller
from fleetmem.surfaces import files_views
from fleetmem.surfaces.mcp import descriptions
from fleetmem.surfaces.mcp.server import FleetmemMCP

Query = Annotated[
    str,
    Field(
        description="What you are looking for, in plain words (1 to 512 characters).",
        json_schema_extra={"minLength": 1, "maxLength": 512},
    ),
]
Paths = Annotated[
    list[str] | None,
    Field(
        description=(
            "Up to 20 repository-relative paths you are working on; a trailing / means a "
            "directory. Adds the runs that edited them."
        ),
        json_schema_extra={"maxItems": 20},
    ),
]
Limit = Annotated[
    int | None,
    Field(
        description="The most facts and the most episodes to return, 1 to 20 (default 8).",
        json_schema_extra={"minimum": 1, "maximum": 20},
    ),
]
Refresh = Annotated[
    bool,
    Field(description="Recompute the briefing instead of returning this run's stored one."),
]
FactText = Annotated[
    str,
    Field(
        description="The fact: one or two self-contained sentences, at most 500 characters.",
        json_schema_extra={"minLength": 1, "maxLength": 500},
    ),
]
FactKind = Annotated[
    Literal["decision", "lesson", "constraint", "failure", "preference", "reference", "note"]
    | None,
    Field(description="What sort of statement it is (default note)."),
]
FactScope = Annotated[
    Literal["project", "workspace", "agent"] | None,
    Field(
        description=(
            "Who may see it once approved: project (this repository; the default inside one), "
            "workspace (every run) or agent (your own runs)."
        )
    ),
]
Source = Annotated[
    str | None,
    Field(description="For a reference: where it lives (a URL or a path)."),
]
FactId = Annotated[str, Field(description="The fact's id, as shown in recall or a briefing.")]
Stance = Annotated[
    Literal["support", "contradict"],
    Field(description="support: your work confirms it; contradict: your work shows it wrong."),
]
Reason = Annotated[
    str | None,
    Field(
        description="Optional: what you checked, in a sentence (stored with the vote).",
        json_schema_extra={"maxLength": 500},
    ),
]
FileName = Annotated[
    str,
    Field(
        description=(
            "About you, Organization, People, Glossary, Voice or Roster (title or slug, e.g. "
            "glossary)."
        )
    ),
]
NoteText = Annotated[
    str,
    Field(
        description="The note, at most 2,000 characters.",
        json_schema_extra={"minLength": 1, "maxLength": 2000},
    ),
]
NotesText = Annotated[
    str, Field(description="The text to append, or the whole new file for replace.")
]
NotesMode = Annotated[
    Literal["append", "replace"],
    Field(description="append (default) adds to the end; replace needs base_revision."),
]
BaseRevision = Annotated[
    int | None,
    Field(description="For replace: the revision of your Notes file you read.", ge=0),
]

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ADDITIVE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
REPLACING = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)


def register(server: FleetmemMCP) -> list[str]:
    """Add the tools to ``server``; returns their names in listing order."""
    memory = server.app.agent_memory

    async def recall(
        query: Query,
        paths: Paths = None,
        limit: Limit = None,
        ctx: Context[Any, Any] | None = None,
    ) -> str:
        def work(caller: Caller | None, call_id: str) -> RecallAnswer:
            return memory.recall(
                caller,
                query,
                paths=paths or (),
                limit=8 if limit is None else limit,
                call_id=call_id,
            )

        answer = await server.serve_call("recall", ctx, work)
        return answer.text

    async def briefing(refresh: Refresh = False, ctx: Context[Any, Any] | None = None) -> str:
        def work(caller: Caller | None, call_id: str) -> ServedBriefing:
            return memory.briefing(caller, delivery="tool", refresh=refresh, call_id=call_id)

        served = await server.serve_call("briefing", ctx, work)
        return served.text

    async def remember(
        text: FactText,
        kind: FactKind = None,
        scope: FactScope = None,
        source: Source = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        def work(caller: Caller | None, _call_id: str) -> ProposalResult:
            return memory.remember(caller, text, kind=kind, scope=scope, source=source)

        return proposal_answer(await server.serve_call("remember", ctx, work))

    async def vote_fact(
        fact_id: FactId,
        stance: Stance,
        reason: Reason = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        def work(caller: Caller | None, _call_id: str) -> VoteResult:
            return memory.vote(caller, fact_id, stance, reason=reason)

        return vote_answer(await server.serve_call("vote_fact", ctx, work))

    async def read_context_file(
        name: FileName, ctx: Context[Any, Any] | None = None
    ) -> dict[str, Any]:
        read = await server.serve_call(
            "read_context_file", ctx, lambda caller, _id: memory.read_context_file(caller, name)
        )
        out = files_views.read_view(read)
        out["text"] = fenced(read.text, field=read.name)
        out["text_is"] = REFERENCE_NOTICE
        return out

    async def note_project(text: NoteText, ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        view = await server.serve_call(
            "note_project", ctx, lambda caller, _id: memory.note_project(caller, text)
        )
        return {
            "written": True,
            "notebook": view.ref.owner if is_safe_value(view.ref.owner) else LABEL_WITHHELD,
            "revision": view.revision,
            "message": f"Added to the project notebook as revision {view.revision}.",
        }

    async def update_notes(
        text: NotesText,
        mode: NotesMode = "append",
        base_revision: BaseRevision = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        update = await server.serve_call(
            "update_notes",
            ctx,
            lambda caller, _id: memory.update_notes(
                caller, text, mode=mode, base_revision=base_revision
            ),
        )
        out = files_views.notes_update_view(update)
        # The diff and the file's text hold stored text (the Notes file as it was): fenced.
        for key, field in (("diff", "notes-diff"), ("proposed_text", "notes")):
            if isinstance(out.get(key), str):
                out[key] = fenced(out[key], field=field)
        out["text_is"] = REFERENCE_NOTICE
        if update.written:
            out["message"] = f"Your Notes file is now at revision {update.revision}."
        elif update.proposal_id is not None:  # kept for a person to apply (S17)
            out["proposal_id"] = update.proposal_id
        return out

    tools: list[tuple[str, Callable[..., Any], str, ToolAnnotations, str]] = [
        ("recall", recall, descriptions.RECALL, READ_ONLY, "Recall memory"),
        ("briefing", briefing, descriptions.BRIEFING, READ_ONLY, "This run's briefing"),
        ("remember", remember, descriptions.REMEMBER, ADDITIVE, "Propose a fact"),
        ("vote_fact", vote_fact, descriptions.VOTE_FACT, ADDITIVE, "Vote on a fact"),
        (
            "read_context_file",
            read_context_file,
            descriptions.READ_CONTEXT_FILE,
            READ_ONLY,
            "Read a context file",
        ),
        (
            "note_project",
            note_project,
            descriptions.NOTE_PROJECT,
            ADDITIVE,
            "Note in the project notebook",
        ),
        ("update_notes", update_notes, descriptions.UPDATE_NOTES, REPLACING, "Update your Notes"),
    ]
    for name, fn, description, hints, title in tools:
        server.add_tool(
            fn,
            name=name,
            title=title,
            description=description,
            annotations=hints,
            structured_output=False,
        )
    return [name for name, *_ in tools]


def proposal_answer(result: ProposalResult) -> dict[str, Any]:
    """What ``remember`` tells the agent: the fact's id, and that a person must review it."""
    fact = result.fact
    out: dict[str, Any] = {
        "outcome": result.outcome,
        "fact_id": fact.id if fact else None,
        "status": fact.status if fact else None,
        "scope": fact.scope if fact else None,
        "awaiting_review": bool(fact and fact.status == "proposed"),
    }
    if result.outcome == "proposed" and fact is not None:
        out["message"] = (
            f"Proposed as {fact.id}. It awaits review by a person: no run, this one included, "
            "is shown it until it is approved."
        )
    elif result.outcome == "duplicate" and fact is not None:
        out["message"] = f"Already known as {fact.id} ({fact.status}); nothing new was stored."
    else:
        out["message"] = (result.log_line or "Not stored.") + " Your run can continue."
        out["reason"] = result.reason
    # Similar facts by id only: a proposed fact's words are not served before review.
    out["similar_facts"] = [n.fact_id for n in result.near_duplicates]
    return out


_NOT_COUNTED = {
    "exposed": (
        "Recorded, not counted: this run was shown the fact (in its briefing or a recall "
        "answer), so its vote cannot corroborate it."
    ),
    "author_run": "Recorded, not counted: this run proposed the fact itself.",
    "repeat": "Not recorded again: this run already voted on the fact; its first vote stands.",
}


def vote_answer(result: VoteResult) -> dict[str, Any]:
    """What ``vote_fact`` tells the agent: whether the vote counts, and why."""
    vote = result.vote
    reason = "repeat" if result.duplicate else vote.reason
    message = _NOT_COUNTED.get(reason, "Recorded and counted toward the fact's confidence.")
    out: dict[str, Any] = {
        "fact_id": vote.fact_id,
        "stance": vote.stance,
        "counted": vote.counted and not result.duplicate,
        "reason": reason,
        "confidence": round(result.confidence, 2),
        "message": message,
    }
    if result.status_change:
        out["status_change"] = result.status_change
    return out
