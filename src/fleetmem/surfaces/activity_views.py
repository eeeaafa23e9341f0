"""The activity feed in words and as JSON, for the web page and the HTTP API alike.

An entry reads "WHO VERB WHAT": "alice edited “Escalate anything over 2,000…”", "research
wrote to Notes — research", "outreach voted for “…”". The API sends the same sentence beside
the entry's data, and the path of the page the entry is about.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from fleetmem.core.contextfiles import FileRef, resolve
from fleetmem.errors import FleetmemError
from fleetmem.service.activity import ActivityEntry, ActivityPage
from fleetmem.surfaces.views import iso

#: Longest quotation of a fact in an entry's sentence.
QUOTE_CHARS = 90

_FACT_VERBS = {
    "create": "taught",
    "import": "imported",
    "propose": "proposed",
    "edit": "edited",
    "forget": "forgot",
    "restore": "restored",
    "pin": "pinned",
    "unpin": "unpinned",
    "review:confirm": "confirmed",
    "review:evidence": "kept as evidence only",
    "review:restrict": "restricted",
    "review:reject": "discarded",
    "review:stale": "marked as stale",
    "merge": "merged",
    "merge_in": "merged another fact into",
    "suspect": "marked as suspect",
    "promote": "promoted",
    "purge": "purged",
    "scope": "changed who gets",
    "keep_both": "kept",
}
_FILE_VERBS = {
    "save": "saved",
    "restore": "restored an earlier revision of",
    "append": "wrote to",
    "mode": "changed when agents load",
    "proposed": "proposed a change to",
    "applied": "applied a proposed change to",
    "dismissed": "dismissed a proposed change to",
}


def who(entry: ActivityEntry, me: str | None = None) -> str:
    """``You`` (the person at this machine, when ``me`` is given), ``fleetmem``, or the name."""
    if entry.actor_kind == "system":
        return "fleetmem"
    if me is not None and entry.actor_kind == "human" and entry.actor == me:
        return "You"
    return entry.actor


def quoted(body: str | None) -> str:
    if body is None:
        return "a fact since purged"
    short = body if len(body) <= QUOTE_CHARS else body[: QUOTE_CHARS - 1].rstrip() + "…"
    return f"“{short}”"


def file_title(ref: str | None) -> str:
    """``Voice``, ``Notes — research``, ``Project notebook — github.com/acme/api``."""
    parsed = parse_ref(ref)
    return parsed.display if parsed is not None else (ref or "a file")


def parse_ref(ref: str | None) -> FileRef | None:
    """The file of an activity row's ``ref`` (``workspace/NAME``, ``agent/AGENT/NAME`` or
    ``project/REPO/NAME``), or None for one this build does not know."""
    if not ref:
        return None
    kind, _, rest = ref.partition("/")
    try:
        if kind == "workspace":
            return FileRef(resolve("workspace", rest))
        if kind == "agent":
            owner, _, name = rest.partition("/")
            return FileRef(resolve("agent", name), owner)
        if kind == "project":
            owner, _, name = rest.rpartition("/")
            return FileRef(resolve("project", name), owner)
    except FleetmemError:
        return None
    return None


def parts(entry: ActivityEntry) -> tuple[str, str]:
    """The verb and its object: ("edited", "“…”"), ("wrote to", "Notes — research")."""
    if entry.source == "vote":
        stance = "for" if entry.action == "vote:support" else "against"
        return f"voted {stance}", quoted(entry.fact_body)
    if entry.source == "file":
        return _FILE_VERBS.get(entry.action, entry.action), file_title(entry.file_ref)
    verb = _FACT_VERBS.get(entry.action, entry.action.replace(":", " "))
    return verb, quoted(entry.fact_body)


def what(entry: ActivityEntry) -> str:
    verb, obj = parts(entry)
    return f"{verb} {obj}"


def change(entry: ActivityEntry) -> str | None:
    """What moved, in words: "now only research", "from active to forgotten"."""
    if entry.source == "vote":
        return "not counted: it had already been shown this fact" if entry.uncounted else None
    detail = entry.detail
    if entry.source == "file":
        if entry.action == "mode" and detail:
            return "every run" if detail == "every_run" else "only when asked for"
        if entry.action in ("save", "append") and entry.revision is not None:
            return f"revision {entry.revision}"
        return detail
    if detail is None:
        return None
    if entry.action == "scope":
        _, _, new = detail.partition("→")
        return f"now for {scope_words(new)}"
    if entry.action == "merge":
        return "into another fact"
    if entry.action == "keep_both":
        return "not merged with a similar fact"
    if "→" in detail:
        old, _, new = detail.partition("→")
        return f"from {old} to {new}"
    return None


def scope_words(scope: str) -> str:
    kind, _, name = scope.partition(":")
    return {"agent": f"only {name}", "project": f"runs in {name}"}.get(kind, "every agent")


def link(entry: ActivityEntry) -> str | None:
    """The page the entry is about: the fact's page, or the file's history (where an agent's
    edit is reverted in one click); None for a fact since purged."""
    if entry.fact_id is not None:
        return None if entry.fact_body is None else f"/memory/facts/{quote(entry.fact_id)}"
    parsed = parse_ref(entry.file_ref)
    if parsed is None:
        return None
    if parsed.kind == "workspace":
        return f"/memory/files/{parsed.name}/history"
    if parsed.kind == "agent":
        return f"/memory/agents/{quote(parsed.owner)}/files/{parsed.name}/history"
    page = "scope-prompt" if parsed.name == "scope_prompt" else "notebook"
    return f"/memory/{page}/history?" + urlencode({"repo": parsed.owner})


def sentence(entry: ActivityEntry, me: str | None = None) -> str:
    more = change(entry)
    return f"{who(entry, me)} {what(entry)}" + (f" ({more})" if more else "")


def entry_view(entry: ActivityEntry) -> dict[str, Any]:
    return {
        "source": entry.source,
        "at": iso(entry.at),
        "actor_kind": entry.actor_kind,
        "actor": entry.actor,
        "run_id": entry.run_id,
        "action": entry.action,
        "fact_id": entry.fact_id,
        "fact_body": entry.fact_body,
        "file": entry.file_ref,
        "revision": entry.revision,
        "detail": entry.detail,
        "counted": entry.uncounted is None if entry.source == "vote" else None,
        "text": sentence(entry),
        "link": link(entry),
    }


def page_view(page: ActivityPage) -> dict[str, Any]:
    return {
        "entries": [entry_view(e) for e in page.entries],
        "next_cursor": page.next_cursor,
    }
